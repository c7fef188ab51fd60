//! `sse_parse`: server-sent events from arbitrary bytes. Nothing may panic; the stream reads
//! the same (the same events, then the same error if any) whole and cut in three pieces at
//! the points the first two bytes give; no event's type or data holds a CR, and no type a LF;
//! an event read from one piece, without a carry, lies in that piece; a parser restarted
//! after the first cut (a reconnection) reads the rest as a fresh one does, but for the last
//! event id it keeps.

#![no_main]

use libfuzzer_sys::fuzz_target;
use ringwire_sse::{Limits, ParseError, Parser, Step};

/// Small, so that the limit is met.
const LIMITS: Limits = Limits { max_event_len: 512 };

type Events = Vec<(String, String, String)>;

fn read(pieces: &[&[u8]]) -> (Events, Option<ParseError>) {
    read_with(&mut Parser::new(LIMITS), pieces)
}

fn read_with(parser: &mut Parser, pieces: &[&[u8]]) -> (Events, Option<ParseError>) {
    let mut got = Vec::new();
    for piece in pieces {
        let mut rest = *piece;
        loop {
            let carried = parser.is_partial();
            match parser.next(rest) {
                Ok(Step::Message(m, used)) => {
                    assert!(used > 0 && used <= rest.len());
                    assert!(!m.event.contains(['\r', '\n']) && !m.data.contains('\r'));
                    assert!(!m.last_event_id.contains(['\r', '\n', '\0']));
                    if !carried && m.data.len() > 0 && !m.data.contains('\n') {
                        let range = rest.as_ptr_range();
                        let inside = range.contains(&m.data.as_ptr());
                        // In place, unless it had to be made UTF-8.
                        assert!(inside || std::str::from_utf8(&rest[..used]).is_err());
                    }
                    got.push((
                        m.event.to_owned(),
                        m.data.to_owned(),
                        m.last_event_id.to_owned(),
                    ));
                    rest = &rest[used..];
                }
                Ok(Step::Need) => break,
                Err(e) => return (got, Some(e)),
            }
        }
    }
    (got, None)
}

fuzz_target!(|data: &[u8]| {
    let (cuts, stream) = data.split_at(data.len().min(2));
    let at = |i: usize| usize::from(cuts.get(i).copied().unwrap_or(0)).min(stream.len());
    let (a, b) = (at(0).min(at(1)), at(0).max(at(1)));
    let whole = read(&[stream]);
    let split = read(&[&stream[..a], &stream[a..b], &stream[b..]]);
    assert_eq!(whole, split);

    let mut parser = Parser::new(LIMITS);
    read_with(&mut parser, &[&stream[..a]]);
    parser.restart();
    let without_ids = |(events, error): (Events, Option<ParseError>)| {
        let events: Vec<_> = events.into_iter().map(|(e, d, _)| (e, d)).collect();
        (events, error)
    };
    let resumed = without_ids(read_with(&mut parser, &[&stream[a..]]));
    assert_eq!(resumed, without_ids(read(&[&stream[a..]])));
});
