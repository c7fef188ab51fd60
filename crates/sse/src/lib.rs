//! Server-sent events (the WHATWG HTML standard's `text/event-stream`), without I/O.
//!
//! [`Parser`] reads events from a response body's pieces as they come: an event that lies
//! whole in one piece is handed out in place (its name and single-line data borrow the piece),
//! only the bytes of an event cut between pieces are carried, and they are joined with just
//! what completes it. [`Event`] writes one for a streamed body.
//!
//! The stream's grammar, as browsers read it: lines end with CRLF, LF or CR; a blank line
//! dispatches the event gathered so far; `:` starts a comment; `event`, `data`, `id` and
//! `retry` are the fields, anything else is ignored; data lines are joined with LF; the last
//! event id lasts until another replaces it; an event with no data line is not dispatched;
//! bytes that are not UTF-8 become U+FFFD; a leading byte order mark is skipped.

mod encode;
mod parse;
mod scan;

pub use encode::{comment, EncodeError, Event};
pub use parse::{Limits, Message, ParseError, Parser, Step};

/// The media type of an event stream.
pub const CONTENT_TYPE: &str = "text/event-stream";
