//! Strict, zero-copy, sans-IO HTTP/1.1 for both roles.
//!
//! ringwire receives into a magic ring, so buffered bytes are one contiguous
//! span however they arrived. The parsers here read that span in place:
//!
//! - [`RequestParser`] and [`ResponseParser`] find a head, validate it
//!   strictly (RFC 9112) and keep its parts as offsets, so a parsed head
//!   costs no allocation. A head arriving in pieces is searched only from
//!   where the previous call stopped.
//! - [`BodyDecoder`] frames a body (length, chunked, or until close) and
//!   never consumes a byte past the message, so pipelined requests and
//!   upgrades lose nothing.
//! - The [`encode`] module writes heads and chunk framing straight into a
//!   caller's buffer (a send-ring reservation), refusing CR/LF injection.
//!
//! No I/O, no clock, no runtime: the caller moves bytes and passes the time.
//! Every error names the status a server answers with ([`Error::status`]).

#![forbid(unsafe_code)]

mod body;
mod chars;
pub mod encode;
mod error;
mod head;
#[cfg(feature = "http")]
pub mod interop;
mod limits;
pub mod target;

pub use body::{BodyDecoder, BodyKind, Decoded};
pub use error::Error;
pub use head::{
    Header, HeaderIter, HeaderName, Headers, Method, Request, RequestHead, RequestParser, Response,
    ResponseHead, ResponseParser, Version,
};
pub use limits::Limits;
pub use ringwire_wire::Status;
pub use target::{Target, TargetForm};
