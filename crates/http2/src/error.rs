//! Error codes (RFC 9113 section 7) and the violations that lead to them.

use std::fmt;

/// An HTTP/2 error code, as carried by `RST_STREAM` and `GOAWAY`.
///
/// Codes this crate does not know are kept as they are (section 7: "unknown or unsupported
/// error codes MUST NOT trigger any special behavior").
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct ErrorCode(pub u32);

impl ErrorCode {
    /// Graceful shutdown, or a stream ended early for no fault.
    pub const NO_ERROR: ErrorCode = ErrorCode(0x0);
    /// A violation with no more specific code.
    pub const PROTOCOL_ERROR: ErrorCode = ErrorCode(0x1);
    /// The endpoint failed for its own reasons.
    pub const INTERNAL_ERROR: ErrorCode = ErrorCode(0x2);
    /// A flow-control window was overrun or overflowed.
    pub const FLOW_CONTROL_ERROR: ErrorCode = ErrorCode(0x3);
    /// `SETTINGS` went unacknowledged.
    pub const SETTINGS_TIMEOUT: ErrorCode = ErrorCode(0x4);
    /// A frame arrived for a stream already half-closed or closed.
    pub const STREAM_CLOSED: ErrorCode = ErrorCode(0x5);
    /// A frame had an invalid size.
    pub const FRAME_SIZE_ERROR: ErrorCode = ErrorCode(0x6);
    /// The stream was refused before any processing.
    pub const REFUSED_STREAM: ErrorCode = ErrorCode(0x7);
    /// The stream is no longer needed.
    pub const CANCEL: ErrorCode = ErrorCode(0x8);
    /// The HPACK state cannot be kept.
    pub const COMPRESSION_ERROR: ErrorCode = ErrorCode(0x9);
    /// A `CONNECT` tunnel failed.
    pub const CONNECT_ERROR: ErrorCode = ErrorCode(0xa);
    /// The peer is generating excessive load.
    pub const ENHANCE_YOUR_CALM: ErrorCode = ErrorCode(0xb);
    /// The transport does not meet minimum security requirements.
    pub const INADEQUATE_SECURITY: ErrorCode = ErrorCode(0xc);
    /// The request must be retried over HTTP/1.1.
    pub const HTTP_1_1_REQUIRED: ErrorCode = ErrorCode(0xd);

    /// The code's name in RFC 9113, or `None` for an unknown code.
    #[must_use]
    pub fn name(self) -> Option<&'static str> {
        const NAMES: [&str; 14] = [
            "NO_ERROR",
            "PROTOCOL_ERROR",
            "INTERNAL_ERROR",
            "FLOW_CONTROL_ERROR",
            "SETTINGS_TIMEOUT",
            "STREAM_CLOSED",
            "FRAME_SIZE_ERROR",
            "REFUSED_STREAM",
            "CANCEL",
            "COMPRESSION_ERROR",
            "CONNECT_ERROR",
            "ENHANCE_YOUR_CALM",
            "INADEQUATE_SECURITY",
            "HTTP_1_1_REQUIRED",
        ];
        NAMES.get(self.0 as usize).copied()
    }
}

impl fmt::Debug for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.name() {
            Some(name) => f.write_str(name),
            None => write!(f, "error code {:#x}", self.0),
        }
    }
}

/// What the peer did wrong: the reason behind an [`ErrorCode`], for logs and tests.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Violation {
    /// The connection did not start with the peer's preface (section 3.4): the client's
    /// magic and `SETTINGS`, or the server's `SETTINGS`.
    Preface,
    /// A frame longer than the `SETTINGS_MAX_FRAME_SIZE` this endpoint advertised.
    FrameTooLarge {
        /// The frame's length.
        len: u32,
        /// The advertised maximum.
        max: u32,
    },
    /// A frame of this type must name a stream and named stream 0.
    StreamZero(&'static str),
    /// A frame of this type belongs to the connection and named a stream.
    NotStreamZero(&'static str),
    /// A frame whose length its type does not allow.
    Length(&'static str, u32),
    /// A pad length as long as the payload or longer.
    Padding,
    /// A stream made dependent on itself (section 5.3.1).
    SelfDependency,
    /// A `SETTINGS` value out of its range (section 6.5.2).
    Setting {
        /// The setting's identifier.
        id: u16,
        /// The value sent.
        value: u32,
    },
    /// A `WINDOW_UPDATE` of zero.
    ZeroIncrement,
    /// A window raised past 2^31 - 1 (section 6.9.1).
    WindowOverflow,
    /// More `DATA` than the window this endpoint granted.
    WindowExceeded,
    /// A frame other than `CONTINUATION` in the middle of a header block.
    ExpectedContinuation,
    /// A `CONTINUATION` with no header block to continue.
    UnexpectedContinuation,
    /// A stream opened by the client with an even number (to a server).
    EvenStreamId(u32),
    /// A new stream numbered below one already opened (section 5.1.1).
    StreamIdReused(u32),
    /// A frame of this type on a stream that was never opened.
    IdleStream(&'static str),
    /// A frame of this type on a stream the peer already ended or reset.
    StreamClosed(&'static str),
    /// A `PUSH_PROMISE`: from a client, which never may (section 8.4), or from a server the
    /// client told not to push (`SETTINGS_ENABLE_PUSH` 0, section 6.5.2).
    PushPromise,
    /// More concurrent streams than `SETTINGS_MAX_CONCURRENT_STREAMS`.
    TooManyStreams,
    /// A header block that HPACK cannot decode.
    Compression,
    /// A header block longer than `SETTINGS_MAX_HEADER_LIST_SIZE` allows.
    HeaderListTooLarge,
    /// A malformed request, response or trailers (section 8.1.1): the field or rule it broke.
    Malformed(&'static str),
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Violation::Preface => {
                f.write_str("the connection did not start with the HTTP/2 preface")
            }
            Violation::FrameTooLarge { len, max } => {
                write!(f, "a {len}-byte frame, over the {max}-byte maximum")
            }
            Violation::StreamZero(kind) => write!(f, "{kind} on stream 0"),
            Violation::NotStreamZero(kind) => write!(f, "{kind} on a stream other than 0"),
            Violation::Length(kind, len) => write!(f, "{kind} of {len} bytes"),
            Violation::Padding => f.write_str("padding as long as the frame"),
            Violation::SelfDependency => f.write_str("a stream depending on itself"),
            Violation::Setting { id, value } => write!(f, "setting {id:#x} set to {value}"),
            Violation::ZeroIncrement => f.write_str("WINDOW_UPDATE of zero"),
            Violation::WindowOverflow => f.write_str("a flow-control window past 2^31-1"),
            Violation::WindowExceeded => f.write_str("DATA beyond the flow-control window"),
            Violation::ExpectedContinuation => {
                f.write_str("a frame other than CONTINUATION inside a header block")
            }
            Violation::UnexpectedContinuation => {
                f.write_str("CONTINUATION without a header block to continue")
            }
            Violation::EvenStreamId(id) => write!(f, "a client stream with even id {id}"),
            Violation::StreamIdReused(id) => write!(f, "stream {id} opened after a higher one"),
            Violation::IdleStream(kind) => write!(f, "{kind} on an idle stream"),
            Violation::StreamClosed(kind) => write!(f, "{kind} on a closed stream"),
            Violation::PushPromise => f.write_str("PUSH_PROMISE where push is disabled"),
            Violation::TooManyStreams => f.write_str("more streams than allowed at once"),
            Violation::Compression => f.write_str("a header block HPACK cannot decode"),
            Violation::HeaderListTooLarge => f.write_str("a header list over the limit"),
            Violation::Malformed(what) => write!(f, "malformed message: {what}"),
        }
    }
}

/// A connection error (section 5.4.1): the connection is over. The `GOAWAY` that says so is
/// already queued for sending.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Error {
    /// The code sent in the `GOAWAY`.
    pub code: ErrorCode,
    /// What the peer did.
    pub violation: Violation,
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "HTTP/2 {}: {}", self.code, self.violation)
    }
}

impl std::error::Error for Error {}
