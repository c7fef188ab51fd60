//! Parse errors: each names the status a server answers with and whether the
//! connection can carry another message.

use std::fmt;

/// Bytes that can never become a valid HTTP/1.1 message.
///
/// "Not enough bytes yet" is never an error (see [`Status::Partial`]).
/// Every variant knows the status code a server sends for it
/// ([`status`](Error::status)) and whether the connection must close
/// afterwards ([`must_close`](Error::must_close)). A client that meets one of
/// these in a response closes the connection.
///
/// [`Status::Partial`]: ringwire_wire::Status::Partial
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Error {
    /// A line ended in LF without the CR that RFC 9112 requires.
    BareLf,
    /// A CR not followed by LF.
    BareCr,
    /// The method is empty or holds a byte that is not a token character.
    InvalidMethod,
    /// The request target is empty, holds a byte outside visible ASCII or a `#`, or has a
    /// form its method may not use (authority form is CONNECT's, `*` is OPTIONS's).
    InvalidTarget,
    /// The request target is longer than [`Limits::max_target_len`](crate::Limits).
    TargetTooLong {
        /// The configured limit in bytes.
        limit: usize,
    },
    /// The version is not of the form `HTTP/d.d`, or the request or status
    /// line is malformed around it.
    InvalidVersion,
    /// A well-formed version other than HTTP/1.0 and HTTP/1.1.
    UnsupportedVersion,
    /// The status code of a response is not three digits from 100 to 999.
    InvalidStatus,
    /// The reason phrase of a response holds a control character.
    InvalidReason,
    /// A header line starts with whitespace (obsolete line folding).
    ObsFold,
    /// Whitespace between a field name and its colon (RFC 9112 section 5.1).
    WhitespaceBeforeColon,
    /// A field name is empty, lacks its colon, or holds a non-token byte.
    InvalidHeaderName,
    /// A field value holds a control character.
    InvalidHeaderValue,
    /// More header fields than [`Limits::max_headers`](crate::Limits).
    TooManyHeaders {
        /// The configured limit in fields.
        limit: usize,
    },
    /// The head (or the trailer section) is longer than
    /// [`Limits::max_head_len`](crate::Limits).
    HeadTooLarge {
        /// The configured limit in bytes.
        limit: usize,
    },
    /// An HTTP/1.1 request without a `Host` field, any request with more than one, or
    /// with a value that is not a host and port.
    InvalidHost,
    /// A `Content-Length` value is not a decimal number that fits in 64 bits.
    InvalidContentLength,
    /// Several `Content-Length` values that differ.
    ConflictingContentLength,
    /// A request with both `Content-Length` and `Transfer-Encoding`
    /// (a request smuggling vector, RFC 9112 section 6.1).
    ContentLengthWithTransferEncoding,
    /// `Transfer-Encoding` whose final coding is not `chunked`, or that
    /// applies `chunked` twice: the request body length is unknowable.
    ChunkedNotFinal,
    /// A transfer coding other than `chunked` (RFC 9112 section 6.1).
    UnsupportedTransferCoding,
    /// `Transfer-Encoding` in an HTTP/1.0 request, whose framing such a
    /// client cannot have meant.
    TransferEncodingInHttp10,
    /// The body is longer than [`Limits::max_body_len`](crate::Limits).
    BodyTooLarge {
        /// The configured limit in bytes.
        limit: u64,
    },
    /// A chunk-size line that is not hexadecimal, overflows 64 bits, or is
    /// malformed around its extensions.
    InvalidChunkSize,
    /// Chunk extensions longer than [`Limits::max_chunk_ext_len`](crate::Limits).
    ChunkExtensionTooLong {
        /// The configured limit in bytes.
        limit: usize,
    },
    /// Chunk data not followed by CRLF.
    InvalidChunkEnd,
    /// The connection closed before the body was complete.
    UnexpectedEof,
}

impl Error {
    /// The status code a server answers with.
    #[must_use]
    pub fn status(&self) -> u16 {
        match self {
            Error::TargetTooLong { .. } => 414,
            Error::UnsupportedVersion => 505,
            Error::TooManyHeaders { .. } | Error::HeadTooLarge { .. } => 431,
            Error::UnsupportedTransferCoding => 501,
            Error::BodyTooLarge { .. } => 413,
            _ => 400,
        }
    }

    /// The reason phrase that goes with [`status`](Error::status).
    #[must_use]
    pub fn reason(&self) -> &'static str {
        match self.status() {
            413 => "Content Too Large",
            414 => "URI Too Long",
            431 => "Request Header Fields Too Large",
            501 => "Not Implemented",
            505 => "HTTP Version Not Supported",
            _ => "Bad Request",
        }
    }

    /// Whether the connection must close after the error response.
    ///
    /// Always `true` today: once a head or body is malformed, where the next
    /// message starts is unknowable, and guessing is how requests get
    /// smuggled. The method exists so callers do not hard-code that choice.
    #[must_use]
    pub fn must_close(&self) -> bool {
        true
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let what = match self {
            Error::BareLf => "line ends in LF without CR",
            Error::BareCr => "CR not followed by LF",
            Error::InvalidMethod => "invalid method",
            Error::InvalidTarget => "invalid request target",
            Error::TargetTooLong { limit } => {
                return write!(f, "request target longer than {limit} bytes")
            }
            Error::InvalidVersion => "malformed HTTP version",
            Error::UnsupportedVersion => "HTTP version other than 1.0 and 1.1",
            Error::InvalidStatus => "invalid status code",
            Error::InvalidReason => "control character in reason phrase",
            Error::ObsFold => "obsolete line folding in header",
            Error::WhitespaceBeforeColon => "whitespace between field name and colon",
            Error::InvalidHeaderName => "invalid field name",
            Error::InvalidHeaderValue => "control character in field value",
            Error::TooManyHeaders { limit } => return write!(f, "more than {limit} header fields"),
            Error::HeadTooLarge { limit } => return write!(f, "head longer than {limit} bytes"),
            Error::InvalidHost => "missing, repeated or invalid Host field",
            Error::InvalidContentLength => "invalid Content-Length",
            Error::ConflictingContentLength => "conflicting Content-Length values",
            Error::ContentLengthWithTransferEncoding => "both Content-Length and Transfer-Encoding",
            Error::ChunkedNotFinal => "chunked is not the final transfer coding exactly once",
            Error::UnsupportedTransferCoding => "unsupported transfer coding",
            Error::TransferEncodingInHttp10 => "Transfer-Encoding in an HTTP/1.0 request",
            Error::BodyTooLarge { limit } => return write!(f, "body longer than {limit} bytes"),
            Error::InvalidChunkSize => "invalid chunk size line",
            Error::ChunkExtensionTooLong { limit } => {
                return write!(f, "chunk extensions longer than {limit} bytes")
            }
            Error::InvalidChunkEnd => "chunk data not followed by CRLF",
            Error::UnexpectedEof => "connection closed before the end of the body",
        };
        f.write_str(what)
    }
}

impl std::error::Error for Error {}
