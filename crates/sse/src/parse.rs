//! Reading events from a body's pieces.

use std::fmt;
use std::ops::Range;

use memchr::memchr2;

use crate::scan::{event_end, Edge};

/// Bounds on what a stream may make the parser hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// The longest event, in bytes from its first line to its blank line.
    pub max_event_len: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_event_len: 1 << 20,
        }
    }
}

/// A stream the parser refuses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ParseError {
    /// An event longer than [`Limits::max_event_len`].
    EventTooLarge {
        /// The bound.
        limit: usize,
    },
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ParseError::EventTooLarge { limit } => {
                write!(f, "an event of more than {limit} bytes")
            }
        }
    }
}

impl std::error::Error for ParseError {}

/// One dispatched event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Message<'a> {
    /// Its type: the `event` field, `message` when it had none.
    pub event: &'a str,
    /// Its `data` lines joined with LF.
    pub data: &'a str,
    /// The last `id` the stream gave, this event's or an earlier one's (empty if none):
    /// what a client reconnecting sends as `Last-Event-ID`.
    pub last_event_id: &'a str,
}

/// What [`Parser::next`] found in a piece.
#[derive(Debug, PartialEq, Eq)]
pub enum Step<'a> {
    /// An event, and how many bytes of the piece it took (those before it included).
    Message(Message<'a>, usize),
    /// No further event in the piece: the rest of it is kept until the next piece.
    Need,
}

/// The event stream's reader. Feed it each piece of the body with [`next`](Self::next) until
/// it answers [`Step::Need`], then the next piece.
#[derive(Debug, Default)]
pub struct Parser {
    limits: Limits,
    /// The start of an event cut at the end of a piece.
    carry: Vec<u8>,
    /// Where the scan of `carry` stopped.
    edge: Edge,
    /// The text of an event that was carried, once whole.
    held: String,
    state: State,
}

/// What lasts from event to event, and what one event's fields put aside.
#[derive(Debug, Default)]
struct State {
    /// Data of several lines, joined.
    joined: String,
    last_id: String,
    retry: Option<u64>,
    /// Past the stream's first event (whose byte order mark is dropped).
    started: bool,
}

/// Where a field's value lies.
#[derive(Debug, Clone, Copy)]
enum Part<'t> {
    In(&'t str),
    /// The joined data lines.
    Joined,
}

/// The fields of one event that is dispatched.
#[derive(Debug, Clone, Copy)]
struct Fields<'t> {
    event: Option<&'t str>,
    data: Part<'t>,
}

impl Parser {
    /// A parser with `limits`.
    #[must_use]
    pub fn new(limits: Limits) -> Self {
        Parser {
            limits,
            ..Parser::default()
        }
    }

    /// The next event that `piece` completes, or [`Step::Need`] once it holds none (its rest
    /// kept for the next piece). An event whole in `piece` is read where it lies; one
    /// started in an earlier piece is joined with what of `piece` ends it.
    ///
    /// # Errors
    ///
    /// An event longer than [`Limits::max_event_len`]; the parser is then to be dropped.
    pub fn next<'a>(&'a mut self, piece: &'a [u8]) -> Result<Step<'a>, ParseError> {
        // What the last call handed out from `held` is no longer borrowed.
        if !self.held.is_empty() {
            let mut bytes = std::mem::take(&mut self.held).into_bytes();
            bytes.clear();
            self.carry = bytes;
        }
        let limit = self.limits.max_event_len;
        let mut used = 0;
        if !self.carry.is_empty() {
            let rest = piece;
            let Some(end) = event_end(rest, &mut self.edge) else {
                self.keep(rest)?;
                return Ok(Step::Need);
            };
            if self.carry.len() + end > limit {
                return Err(ParseError::EventTooLarge { limit });
            }
            self.carry.extend_from_slice(&rest[..end]);
            used = end;
            self.held = match String::from_utf8(std::mem::take(&mut self.carry)) {
                Ok(text) => text,
                Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
            };
            let held = &self.held;
            if let Some((event, data)) = read(held, &mut self.state).map(|f| spans(held, f)) {
                return Ok(Step::Message(self.held_message(event, data), used));
            }
            self.carry = std::mem::take(&mut self.held).into_bytes();
            self.carry.clear();
        }
        loop {
            let rest = &piece[used..];
            let mut edge = Edge::START;
            let Some(end) = event_end(rest, &mut edge) else {
                self.edge = edge;
                self.keep(rest)?;
                return Ok(Step::Need);
            };
            if end > limit {
                return Err(ParseError::EventTooLarge { limit });
            }
            let bytes = &rest[..end];
            used += end;
            let Ok(text) = simdutf8::basic::from_utf8(bytes) else {
                // Rare: read from `held`, where the bytes that are not UTF-8 became U+FFFD.
                let text = String::from_utf8_lossy(bytes).into_owned();
                if let Some((event, data)) = read(&text, &mut self.state).map(|f| spans(&text, f)) {
                    self.held = text;
                    return Ok(Step::Message(self.held_message(event, data), used));
                }
                continue;
            };
            if let Some(fields) = read(text, &mut self.state) {
                let data = match fields.data {
                    Part::In(data) => data,
                    Part::Joined => &self.state.joined,
                };
                let message = Message {
                    event: event_type(fields.event),
                    data,
                    last_event_id: &self.state.last_id,
                };
                return Ok(Step::Message(message, used));
            }
        }
    }

    /// The message of an event read from `held`, its fields at these spans.
    fn held_message(&self, event: Option<Range<usize>>, data: Option<Range<usize>>) -> Message<'_> {
        let at = |span: Range<usize>| self.held.get(span).unwrap_or_default();
        Message {
            event: event_type(event.map(at)),
            data: data.map_or(self.state.joined.as_str(), at),
            last_event_id: &self.state.last_id,
        }
    }

    /// Keeps the start of an event cut at the end of a piece.
    fn keep(&mut self, rest: &[u8]) -> Result<(), ParseError> {
        let limit = self.limits.max_event_len;
        if self.carry.len() + rest.len() > limit {
            return Err(ParseError::EventTooLarge { limit });
        }
        self.carry.extend_from_slice(rest);
        Ok(())
    }

    /// The last `id` the stream gave (empty if none): `Last-Event-ID` for a reconnection.
    #[must_use]
    pub fn last_event_id(&self) -> &str {
        &self.state.last_id
    }

    /// The reconnection time the stream asked for (`retry`), in milliseconds.
    #[must_use]
    pub fn retry(&self) -> Option<u64> {
        self.state.retry
    }

    /// Starts on the stream a reconnection opened: the part of an event the old one cut is
    /// dropped (never dispatched), and the new stream's own byte order mark is skipped; the
    /// last event id and the reconnection time last, as a reconnecting client keeps them.
    pub fn restart(&mut self) {
        self.carry.clear();
        self.held.clear();
        self.edge = Edge::START;
        self.state.started = false;
    }

    /// Whether part of an event is waiting for its end: at the end of the body, that part
    /// is dropped (an event is only dispatched by its blank line).
    #[must_use]
    pub fn is_partial(&self) -> bool {
        !self.carry.is_empty()
    }
}

/// `event`, or `message` when empty or absent.
fn event_type(event: Option<&str>) -> &str {
    event.filter(|e| !e.is_empty()).unwrap_or("message")
}

/// Where `fields`' event type and data (`None`: joined) lie in `whole`, the text they were
/// read from.
fn spans(whole: &str, fields: Fields<'_>) -> (Option<Range<usize>>, Option<Range<usize>>) {
    let span = |part: &str| {
        let start = part.as_ptr() as usize - whole.as_ptr() as usize;
        start..start + part.len()
    };
    let data = match fields.data {
        Part::In(data) => Some(span(data)),
        Part::Joined => None,
    };
    (fields.event.map(span), data)
}

/// Reads one event's lines (its blank line last), keeping in `state` what outlasts it:
/// its fields if it is dispatched (it has a data line).
fn read<'t>(mut text: &'t str, state: &mut State) -> Option<Fields<'t>> {
    if !state.started {
        state.started = true;
        text = text.strip_prefix('\u{feff}').unwrap_or(text);
    }
    let mut event = None;
    let mut data = None;
    let mut rest = text;
    while let Some(eol) = memchr2(b'\r', b'\n', rest.as_bytes()) {
        let line = &rest[..eol];
        let after_cr =
            rest.as_bytes()[eol] == b'\r' && rest.as_bytes().get(eol + 1) == Some(&b'\n');
        rest = &rest[eol + if after_cr { 2 } else { 1 }..];
        if line.is_empty() {
            break;
        }
        let (name, value) = match line.find(':') {
            Some(0) => continue,
            Some(colon) => {
                let value = &line[colon + 1..];
                (&line[..colon], value.strip_prefix(' ').unwrap_or(value))
            }
            // No colon: the line is the name, the value empty (a slice of the line, so that
            // it lies where the line does).
            None => (line, &line[line.len()..]),
        };
        match name {
            "event" => event = Some(value),
            "data" => {
                data = Some(match data {
                    None => Part::In(value),
                    Some(Part::In(first)) => {
                        state.joined.clear();
                        state.joined.push_str(first);
                        state.joined.push('\n');
                        state.joined.push_str(value);
                        Part::Joined
                    }
                    Some(Part::Joined) => {
                        state.joined.push('\n');
                        state.joined.push_str(value);
                        Part::Joined
                    }
                });
            }
            "id" if !value.contains('\0') => {
                state.last_id.clear();
                state.last_id.push_str(value);
            }
            "retry" if !value.is_empty() && value.bytes().all(|b| b.is_ascii_digit()) => {
                // Too many digits for a u64: ignored, as any value that is not a number.
                if let Ok(ms) = value.parse() {
                    state.retry = Some(ms);
                }
            }
            _ => {}
        }
    }
    Some(Fields { event, data: data? })
}

#[cfg(test)]
mod tests {
    use super::*;

    type Got = Vec<(String, String, String)>;

    /// Every event of `pieces` fed in order: (type, data, last id).
    fn feed(parser: &mut Parser, pieces: &[&[u8]]) -> Result<Got, ParseError> {
        let mut got = Vec::new();
        for piece in pieces {
            let mut rest = *piece;
            while let Step::Message(m, used) = parser.next(rest)? {
                got.push((m.event.into(), m.data.into(), m.last_event_id.into()));
                rest = &rest[used..];
            }
        }
        Ok(got)
    }

    /// The events of `stream`, checking that it reads the same whole, cut anywhere in two
    /// or three, and a byte at a time.
    fn events(stream: &[u8]) -> Got {
        let whole = feed(&mut Parser::default(), &[stream]).unwrap();
        let n = stream.len();
        for a in 0..=n {
            for b in a..=n.min(a + 7) {
                let pieces = [&stream[..a], &stream[a..b], &stream[b..]];
                let split = feed(&mut Parser::default(), &pieces).unwrap();
                assert_eq!(
                    split,
                    whole,
                    "{:?} cut at {a} and {b}",
                    String::from_utf8_lossy(stream)
                );
            }
        }
        let bytes: Vec<&[u8]> = stream.chunks(1).collect();
        assert_eq!(feed(&mut Parser::default(), &bytes).unwrap(), whole);
        whole
    }

    fn got(events: &[(&str, &str, &str)]) -> Got {
        events
            .iter()
            .map(|(e, d, i)| ((*e).into(), (*d).into(), (*i).into()))
            .collect()
    }

    #[test]
    fn the_standards_examples() {
        assert_eq!(
            events(b"data: YHOO\ndata: +2\ndata: 10\n\n"),
            got(&[("message", "YHOO\n+2\n10", "")])
        );
        assert_eq!(
            events(
                b": test stream\n\ndata: first event\nid: 1\n\ndata:second event\nid\n\n\
                  data:  third event\n\n"
            ),
            got(&[
                ("message", "first event", "1"),
                ("message", "second event", ""),
                ("message", " third event", ""),
            ])
        );
        // A data line without a colon is empty data; the last event has no blank line.
        assert_eq!(
            events(b"data\n\ndata\ndata\n\ndata:"),
            got(&[("message", "", ""), ("message", "\n", "")])
        );
        assert_eq!(
            events(b"data:test\n\ndata: test\n\n"),
            got(&[("message", "test", ""), ("message", "test", "")])
        );
    }

    #[test]
    fn a_restarted_stream_drops_the_cut_event_and_keeps_id_and_retry() {
        let mut parser = Parser::default();
        let first: &[&[u8]] = &[b"retry: 40\nid: 3\ndata: a\n\ndata: cut sho", b"rt\n"];
        assert_eq!(
            feed(&mut parser, first).unwrap(),
            got(&[("message", "a", "3")])
        );
        assert!(parser.is_partial());
        parser.restart();
        assert!(!parser.is_partial());
        let second: &[&[u8]] = &[b"\xef\xbb\xbfdata: b\n\n"];
        assert_eq!(
            feed(&mut parser, second).unwrap(),
            got(&[("message", "b", "3")])
        );
        assert_eq!((parser.retry(), parser.last_event_id()), (Some(40), "3"));
    }

    #[test]
    fn types_ids_retry_and_what_is_ignored() {
        let mut parser = Parser::default();
        let stream = b"retry: 2500\nevent: add\nid: 7\ndata: {\"n\":1}\nfoo: bar\n\n\
                       event: add\n\nid: 8\0\ndata: x\n\nretry: soon\nevent:\ndata: y\n\n";
        assert_eq!(
            feed(&mut parser, &[stream]).unwrap(),
            got(&[
                ("add", "{\"n\":1}", "7"),
                // No data: nothing dispatched. An id with a NUL is ignored.
                ("message", "x", "7"),
                ("message", "y", "7"),
            ])
        );
        assert_eq!((parser.retry(), parser.last_event_id()), (Some(2500), "7"));
        assert_eq!(events(stream).len(), 3);
    }

    #[test]
    fn line_ends_byte_order_mark_and_bad_utf8() {
        assert_eq!(
            events(b"\xef\xbb\xbfdata: a\r\ndata: b\r\n\r\ndata: c\rdata: d\r\rdata: e\n\n"),
            got(&[
                ("message", "a\nb", ""),
                ("message", "c\nd", ""),
                ("message", "e", "")
            ])
        );
        // Only the stream's first byte order mark is dropped.
        assert_eq!(
            events(b"\xef\xbb\xbfdata: a\n\n\xef\xbb\xbfdata: b\n\n"),
            got(&[("message", "a", "")])
        );
        assert_eq!(
            events(b"event: t\xff\ndata: \xc3\n\ndata: ok\n\n"),
            got(&[("t\u{fffd}", "\u{fffd}", ""), ("message", "ok", "")])
        );
    }

    #[test]
    fn whole_events_are_read_in_place() {
        let mut parser = Parser::default();
        let piece = b"data: one\n\nevent: e\ndata: two\n\ndata: thr";
        let Step::Message(m, used) = parser.next(piece).unwrap() else {
            panic!("one")
        };
        assert!(piece.as_ptr_range().contains(&m.data.as_ptr()));
        assert_eq!((m.data, used), ("one", 11));
        let Step::Message(m, used) = parser.next(&piece[11..]).unwrap() else {
            panic!("two")
        };
        assert!(piece.as_ptr_range().contains(&m.event.as_ptr()));
        assert_eq!((m.event, m.data, used), ("e", "two", 20));
        assert_eq!(parser.next(&piece[31..]).unwrap(), Step::Need);
        assert!(parser.is_partial());
        let Step::Message(m, used) = parser.next(b"ee\n\ndata: four\n\n").unwrap() else {
            panic!("three")
        };
        assert_eq!((m.data, used), ("three", 4));
        assert!(!parser.is_partial());
    }

    #[test]
    fn an_event_over_the_limit_is_refused_whole_or_cut() {
        let limits = Limits { max_event_len: 16 };
        let event = b"data: 0123456789\n\n";
        for cut in 0..event.len() {
            let mut parser = Parser::new(limits);
            let refused = feed(&mut parser, &[&event[..cut], &event[cut..]]);
            assert_eq!(
                refused,
                Err(ParseError::EventTooLarge { limit: 16 }),
                "cut {cut}"
            );
        }
        let mut parser = Parser::new(limits);
        assert_eq!(
            feed(&mut parser, &[b"data: 01234567\n\n"]).unwrap().len(),
            1
        );
        // Nothing ever dispatched still counts: a stream of one endless comment.
        let mut parser = Parser::new(limits);
        let endless = feed(&mut parser, &[b": 0123456789", b"0123456789"]);
        assert_eq!(endless, Err(ParseError::EventTooLarge { limit: 16 }));
    }
}
