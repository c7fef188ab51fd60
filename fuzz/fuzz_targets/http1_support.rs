//! Shared by the `http1_*` targets: the setup byte (delivery and limits), a driver that reads a
//! stream of messages as a server or client would, and owned summaries of what the codec said,
//! so two deliveries of one stream can be compared outcome for outcome.
//!
//! The setup byte:
//!
//! | bits | meaning                                                                        |
//! |------|--------------------------------------------------------------------------------|
//! | 7    | small limits ([`small_limits`]), so every limit is reachable in a few KiB       |
//! | 6    | 0: the stream split once, at `v * len / 63`; 1: pieces of `v + 1` bytes         |
//! | 0-5  | `v`                                                                            |

#![allow(dead_code)] // each target uses part of this

use ringwire_http1::{BodyDecoder, BodyKind, Decoded, Error, Headers, Limits, Status};

/// Limits small enough that fuzz inputs (4 KiB by default) cross every one of them.
pub fn small_limits() -> Limits {
    Limits {
        max_head_len: 256,
        max_headers: 8,
        max_target_len: 32,
        max_body_len: 512,
        max_chunk_ext_len: 16,
    }
}

/// The limits and the piecewise delivery the setup byte asks for.
pub fn setup(byte: u8, stream: &[u8]) -> (Limits, Vec<&[u8]>) {
    let limits = if byte & 0x80 != 0 {
        small_limits()
    } else {
        Limits::default()
    };
    let v = usize::from(byte & 0x3f);
    let pieces = if byte & 0x40 != 0 {
        stream.chunks(v + 1).collect()
    } else {
        let (a, b) = stream.split_at(v * stream.len() / 63);
        vec![a, b]
    };
    (limits, pieces)
}

/// Owned bytes that print as an escaped string.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct Text(pub Vec<u8>);

impl Text {
    pub fn of(bytes: &[u8]) -> Self {
        Text(bytes.to_vec())
    }
}

impl std::fmt::Debug for Text {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "\"{}\"", self.0.escape_ascii())
    }
}

/// An owned field section: names and values as parsed.
pub type Fields = Vec<(String, Text)>;

/// Copies `headers`, checking what every field the codec hands out must satisfy: the name is a
/// non-empty token; the value holds no control byte but HTAB (so no CR, LF or NUL) and is
/// trimmed of surrounding whitespace.
pub fn fields(headers: Headers<'_>) -> Fields {
    headers
        .iter()
        .map(|h| {
            let name = h.name.as_bytes();
            assert!(
                !name.is_empty() && name.iter().all(|&b| is_tchar(b)),
                "field name {:?} is not a token",
                h.name
            );
            assert!(
                h.value
                    .iter()
                    .all(|&b| b == b'\t' || (b >= 0x20 && b != 0x7f)),
                "control byte in the value of {}: {:?}",
                h.name,
                h.value
            );
            assert!(
                !h.value.starts_with(b" ")
                    && !h.value.starts_with(b"\t")
                    && !h.value.ends_with(b" ")
                    && !h.value.ends_with(b"\t"),
                "untrimmed value of {}: {:?}",
                h.name,
                h.value
            );
            (h.name.as_str().to_owned(), Text::of(h.value))
        })
        .collect()
}

/// `tchar` (RFC 9110 section 5.6.2), written out independently of the codec's table.
pub fn is_tchar(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}

/// What the reader does once a message (head and body) is through.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum After {
    /// Read the next message from the same connection.
    Next,
    /// Stop reading: the connection closes (or leaves HTTP: a tunnel, an upgrade).
    Stop,
}

/// A parsed head as the driver needs it: an owned summary to compare, where the body starts,
/// how it is framed, and what follows the message.
pub struct Parsed<H> {
    pub head: H,
    pub len: usize,
    pub body: BodyKind,
    pub after: After,
}

/// One thing the codec reported, in stream order.
#[derive(Debug, PartialEq, Eq)]
pub enum Event<H> {
    Head(H),
    /// A whole body, however many `Data` pieces it came in.
    Body(Text),
    Trailers(Fields),
}

/// How reading the stream ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum End {
    /// The input ended between messages.
    Clean,
    /// A message said to stop reading (`After::Stop`).
    Stopped,
    /// The input ended inside a head.
    TruncatedHead,
    /// The head parser refused the bytes.
    BadHead(Error),
    /// The body decoder refused the bytes, or `finish_eof` a body cut short.
    BadBody(Error),
}

#[derive(Debug, PartialEq, Eq)]
pub struct Outcome<H> {
    pub events: Vec<Event<H>>,
    /// Body bytes of a message the stream ended or failed in.
    pub unfinished_body: Text,
    pub end: End,
}

enum State {
    Head,
    Body {
        decoder: BodyDecoder,
        after: After,
        data: Text,
    },
}

/// Reads `pieces` as one connection's bytes arriving in that order: appends each to a buffer,
/// parses heads with `parse` and bodies with a [`BodyDecoder`], dropping what each call
/// consumed, until the input ends, a message says stop, or an error.
pub fn read<H>(
    pieces: &[&[u8]],
    limits: &Limits,
    mut parse: impl FnMut(&[u8]) -> Result<Status<Parsed<H>>, Error>,
) -> Outcome<H> {
    let mut events = Vec::new();
    let mut buf: Vec<u8> = Vec::new();
    let mut state = State::Head;
    let finish = |events, unfinished_body, end| Outcome {
        events,
        unfinished_body,
        end,
    };
    for piece in pieces {
        buf.extend_from_slice(piece);
        loop {
            match &mut state {
                State::Head => match parse(&buf) {
                    Err(e) => return finish(events, Text::default(), End::BadHead(e)),
                    Ok(Status::Partial { at_least }) => {
                        assert!(at_least > buf.len(), "Partial {at_least} of {}", buf.len());
                        break;
                    }
                    Ok(Status::Complete(parsed, len)) => {
                        assert_eq!(len, parsed.len);
                        assert!(len <= buf.len(), "head of {len} in {} bytes", buf.len());
                        events.push(Event::Head(parsed.head));
                        buf.drain(..len);
                        if parsed.body == BodyKind::Empty {
                            if parsed.after == After::Stop {
                                return finish(events, Text::default(), End::Stopped);
                            }
                            continue;
                        }
                        state = State::Body {
                            decoder: BodyDecoder::new(parsed.body, limits),
                            after: parsed.after,
                            data: Text::default(),
                        };
                    }
                },
                State::Body {
                    decoder,
                    after,
                    data,
                } => match decode(decoder, &buf, data) {
                    Err(e) => return finish(events, std::mem::take(data), End::BadBody(e)),
                    Ok(Step::More(consumed)) => {
                        buf.drain(..consumed);
                        if consumed == 0 {
                            break;
                        }
                    }
                    Ok(Step::Done(consumed, trailers)) => {
                        buf.drain(..consumed);
                        let chunked = decoder.kind() == BodyKind::Chunked;
                        events.push(Event::Body(std::mem::take(data)));
                        if chunked {
                            events.push(Event::Trailers(trailers));
                        }
                        if *after == After::Stop {
                            return finish(events, Text::default(), End::Stopped);
                        }
                        state = State::Head;
                    }
                },
            }
        }
    }
    match state {
        State::Head if buf.is_empty() => finish(events, Text::default(), End::Clean),
        State::Head => finish(events, Text::default(), End::TruncatedHead),
        State::Body {
            mut decoder,
            after,
            data,
        } => match decoder.finish_eof() {
            Err(e) => finish(events, data, End::BadBody(e)),
            Ok(()) => {
                // Only a close-delimited body ends at EOF, and nothing follows it.
                assert_eq!(decoder.kind(), BodyKind::CloseDelimited);
                assert!(buf.is_empty());
                events.push(Event::Body(data));
                let end = match after {
                    After::Stop => End::Stopped,
                    After::Next => End::Clean,
                };
                finish(events, Text::default(), end)
            }
        },
    }
}

pub enum Step {
    /// More bytes are needed after dropping this many (possibly none).
    More(usize),
    /// The body is complete after dropping this many; then its trailers.
    Done(usize, Fields),
}

/// One `decode` call on `buf`, appending body bytes to `data` and checking what every call must
/// satisfy: nothing consumed beyond `buf`, `Data` never empty and the last bytes consumed, and a
/// finished decoder that stays finished and accounts for every body byte.
pub fn decode(decoder: &mut BodyDecoder, buf: &[u8], data: &mut Text) -> Result<Step, Error> {
    let kind = decoder.kind();
    let step = match decoder.decode(buf)? {
        Decoded::Data { data: d, consumed } => {
            assert!(!d.is_empty(), "empty Data");
            assert!(
                consumed <= buf.len(),
                "consumed {consumed} of {}",
                buf.len()
            );
            assert!(d.len() <= consumed);
            // The data is the buffer itself, right before the end of what is consumed.
            assert_eq!(
                d.as_ptr_range(),
                buf[consumed - d.len()..consumed].as_ptr_range()
            );
            data.0.extend_from_slice(d);
            Step::More(consumed)
        }
        Decoded::Partial { consumed } => {
            assert!(
                consumed <= buf.len(),
                "consumed {consumed} of {}",
                buf.len()
            );
            Step::More(consumed)
        }
        Decoded::Done { consumed, trailers } => {
            assert!(
                consumed <= buf.len(),
                "consumed {consumed} of {}",
                buf.len()
            );
            assert!(kind == BodyKind::Chunked || trailers.is_empty());
            Step::Done(consumed, fields(trailers))
        }
    };
    if let Step::Done(..) = step {
        assert!(decoder.is_done());
        assert_eq!(decoder.delivered(), data.0.len() as u64);
        assert!(matches!(
            decoder.decode(&buf[..0]),
            Ok(Decoded::Done { consumed: 0, trailers }) if trailers.is_empty()
        ));
        assert_eq!(decoder.finish_eof(), Ok(()));
    }
    Ok(step)
}

/// The two deliveries of one stream must agree on everything, but for two differences that
/// are by design:
///
/// 1. A head that arrives in pieces has each field line judged when its LF is in (the whole
///    stream's first pass also judges a line still cut off by the end of the buffer). So a
///    malformed line that never ends fails whole but is merely truncated in pieces
///    (`TruncatedHead`), and one that runs past the head limit before its LF fails whole with
///    its own error but in pieces with `HeadTooLarge` (431 rather than 400). A head refused
///    whole is never accepted in pieces, and everything before it must agree.
/// 2. A close-delimited body over the limit fails as soon as one call is given more bytes than
///    the limit still allows, without handing out the allowed part first: how much of the body
///    came out before the (same) error depends on the pieces.
pub fn assert_agree<H: std::fmt::Debug + PartialEq>(whole: &Outcome<H>, split: &Outcome<H>) {
    let same_until_end =
        whole.events == split.events && whole.unfinished_body == split.unfinished_body;
    let lazy_head = matches!(
        (&whole.end, &split.end),
        (
            End::BadHead(_),
            End::TruncatedHead | End::BadHead(Error::HeadTooLarge { .. })
        )
    );
    if same_until_end && lazy_head {
        return;
    }
    if let End::BadBody(Error::BodyTooLarge { .. }) = whole.end {
        if whole.events == split.events && whole.end == split.end {
            let (a, b) = (&whole.unfinished_body.0, &split.unfinished_body.0);
            assert!(
                a.starts_with(b) || b.starts_with(a),
                "body bytes differ before the error"
            );
            return;
        }
    }
    assert_eq!(whole, split, "whole stream vs. pieces");
}

/// `RINGWIRE_FUZZ_DEBUG=1` prints each input's outcome (for triage, and for checking that the
/// seeds reach what they aim at).
pub fn debug() -> bool {
    static DEBUG: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *DEBUG.get_or_init(|| std::env::var_os("RINGWIRE_FUZZ_DEBUG").is_some())
}
