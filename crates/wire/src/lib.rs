//! Zero-copy cursor and resumable parse primitives over ring spans.
//!
//! ringwire receives into a "magic ring" buffer, so buffered bytes are
//! always one contiguous span. Parsers in this crate read typed values and
//! borrowed slices straight out of that span, under this contract:
//!
//! - **Partial is success.** A message that has not fully arrived yields
//!   `Ok(`[`Status::Partial`]` { at_least })`, where `at_least` is a lower
//!   bound on the buffered length needed to make progress. The driver
//!   ([`run`], [`run_async`]) then asks its [`Source`] for that many bytes.
//! - **Errors are final.** `Err` is reserved for bytes that can never
//!   become valid, however much more arrives; it is reported as soon as the
//!   offending bytes are visible.
//! - **Resume, never rescan.** Parsers may be called again with the same
//!   bytes plus more. Searches for delimiters use [`Scan`], which only
//!   re-examines the few bytes a split delimiter could occupy.
//! - **Named limits.** Every size taken from the wire is checked against a
//!   [`Limit`] before anything is buffered for it, and a violation
//!   ([`LimitExceeded`]) names the limit it broke.
//!
//! The crate performs no I/O; `ringwire-io` implements [`Source`] and
//! [`AsyncSource`] over sockets.
//!
//! ```
//! use ringwire_wire::{run, Control, Finish, LengthPrefixed, Source};
//!
//! /// A source over an in-memory stream, delivered all at once.
//! struct Memory { bytes: Vec<u8>, start: usize }
//!
//! impl Source for Memory {
//!     type Error = std::convert::Infallible;
//!     fn data(&self) -> &[u8] { &self.bytes[self.start..] }
//!     fn consume(&mut self, n: usize) { self.start += n; }
//!     fn fill(&mut self, _at_least: usize) -> Result<usize, Self::Error> { Ok(0) }
//! }
//!
//! let mut src = Memory { bytes: b"\0\0\0\x02hi\0\0\0\x03you".to_vec(), start: 0 };
//! let mut bodies = Vec::new();
//! let finish = run(&mut src, &mut LengthPrefixed::default(), |body: &[u8]| {
//!     bodies.push(body.to_vec());
//!     Control::Continue
//! });
//! assert_eq!(finish, Ok(Finish::Eof));
//! assert_eq!(bodies, [&b"hi"[..], b"you"]);
//! ```

#![forbid(unsafe_code)]

mod cursor;
mod frame;
mod limits;
mod parse;
mod scan;
mod status;
mod varint;

pub use cursor::{Cursor, Incomplete, VarintError};
pub use frame::{FrameError, LengthPrefixed, DEFAULT_MAX_FRAME_LEN, FRAME_LENGTH};
pub use limits::{Limit, LimitExceeded};
pub use parse::{run, run_async, AsyncSource, Control, Finish, Parse, RunError, Source};
pub use scan::Scan;
pub use status::Status;
pub use varint::{
    push_uvarint, push_varint, put_uvarint, put_varint, uvarint_len, varint_len, MAX_VARINT32_LEN,
    MAX_VARINT_LEN,
};
