//! Body framing (RFC 9112 section 6): how long a body is, and decoding it.

mod chunked;
mod decoder;
mod trailers;

pub use decoder::{BodyDecoder, Decoded};

/// How a message's body is delimited, decided from its head.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BodyKind {
    /// No body: a request without framing fields, a response to HEAD, a 1xx,
    /// 204 or 304 response, or a length of zero.
    Empty,
    /// Exactly this many bytes follow the head.
    Length(u64),
    /// `Transfer-Encoding: chunked`.
    Chunked,
    /// The body runs until the peer closes the connection (responses only).
    CloseDelimited,
}
