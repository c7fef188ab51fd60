//! Protocol errors: each names the close code the endpoint sends before closing.

use std::fmt;

use crate::close::CloseCode;

/// Bytes from the peer that break RFC 6455 or RFC 7692, or exceed a limit.
///
/// "Not enough bytes yet" is never an error. Every variant is the peer's fault and fails the
/// connection: send a close frame with [`close_code`](Error::close_code), then close.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Error {
    /// RSV2 or RSV3 set, or RSV1 without permessage-deflate, on a control frame or on a
    /// continuation frame (section 5.2; RFC 7692 section 6).
    ReservedBits,
    /// An opcode RFC 6455 reserves (3-7, 11-15).
    ReservedOpcode(u8),
    /// A 64-bit payload length with its most significant bit set.
    InvalidLength,
    /// A client frame without a mask (section 5.1).
    UnmaskedFrame,
    /// A server frame with a mask (section 5.1).
    MaskedFrame,
    /// A control frame longer than 125 bytes (section 5.5).
    ControlFrameTooLong,
    /// A control frame without FIN (section 5.5).
    FragmentedControlFrame,
    /// A continuation frame with no message to continue.
    UnexpectedContinuation,
    /// A text or binary frame while a fragmented message is unfinished.
    ExpectedContinuation,
    /// A close frame whose payload is one byte (section 5.5.1).
    InvalidClosePayload,
    /// A close code that may not appear on the wire (section 7.4).
    InvalidCloseCode(u16),
    /// A text message or close reason that is not UTF-8 (section 8.1).
    InvalidUtf8,
    /// A compressed message that does not inflate (RFC 7692 section 7.2.2).
    InvalidCompressedData,
    /// A frame payload longer than [`Limits::max_frame_len`](crate::Limits).
    FrameTooLarge {
        /// The configured limit in bytes.
        limit: u64,
    },
    /// A message (assembled, or inflated) longer than
    /// [`Limits::max_message_len`](crate::Limits).
    MessageTooLarge {
        /// The configured limit in bytes.
        limit: u64,
    },
}

impl Error {
    /// The code of the close frame to send before closing the connection.
    #[must_use]
    pub fn close_code(&self) -> CloseCode {
        match self {
            Error::InvalidUtf8 | Error::InvalidCompressedData => CloseCode::INVALID_DATA,
            Error::FrameTooLarge { .. } | Error::MessageTooLarge { .. } => CloseCode::TOO_BIG,
            _ => CloseCode::PROTOCOL_ERROR,
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let what = match self {
            Error::ReservedBits => "reserved bits set",
            Error::ReservedOpcode(op) => return write!(f, "reserved opcode {op:#x}"),
            Error::InvalidLength => "64-bit payload length with the high bit set",
            Error::UnmaskedFrame => "unmasked frame from a client",
            Error::MaskedFrame => "masked frame from a server",
            Error::ControlFrameTooLong => "control frame longer than 125 bytes",
            Error::FragmentedControlFrame => "fragmented control frame",
            Error::UnexpectedContinuation => "continuation frame without a message to continue",
            Error::ExpectedContinuation => "new message inside a fragmented message",
            Error::InvalidClosePayload => "close frame with a one-byte payload",
            Error::InvalidCloseCode(code) => return write!(f, "invalid close code {code}"),
            Error::InvalidUtf8 => "text that is not UTF-8",
            Error::InvalidCompressedData => "compressed message that does not inflate",
            Error::FrameTooLarge { limit } => {
                return write!(f, "a frame past the limit of {limit} bytes (max_frame_len)")
            }
            Error::MessageTooLarge { limit } => {
                return write!(
                    f,
                    "a message past the limit of {limit} bytes (max_message_len)"
                )
            }
        };
        f.write_str(what)
    }
}

impl std::error::Error for Error {}

/// Why a writer wrote nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum EncodeError {
    /// The buffer is too small: `needed` bytes (counted from its start) would do.
    BufferFull {
        /// Bytes the output needs.
        needed: usize,
    },
    /// A ping, pong or close payload longer than 125 bytes.
    ControlFrameTooLong,
    /// A close code that may not be sent (1005, 1006, 1015, or outside the valid ranges).
    InvalidCloseCode(u16),
    /// The connection has sent its close frame: nothing may follow it.
    Closed,
}

impl fmt::Display for EncodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EncodeError::BufferFull { needed } => {
                write!(f, "buffer too small: {needed} bytes needed")
            }
            EncodeError::ControlFrameTooLong => {
                f.write_str("control payload longer than 125 bytes")
            }
            EncodeError::InvalidCloseCode(code) => write!(f, "close code {code} may not be sent"),
            EncodeError::Closed => f.write_str("close frame already sent"),
        }
    }
}

impl std::error::Error for EncodeError {}
