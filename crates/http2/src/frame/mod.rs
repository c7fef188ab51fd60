//! Frames (RFC 9113 sections 4 and 6): parsed in place from the receive buffer, written into a
//! send buffer.
//!
//! [`FrameHeader::parse`] reads the fixed nine bytes; once the whole payload is buffered,
//! [`Frame::parse`] checks it against its type's rules and hands out its parts as slices of
//! it. Checks that need the connection's state (stream states, windows, limits) are the
//! connection's.

mod encode;
mod parse;

pub use encode::{
    encode_data, encode_goaway, encode_header, encode_headers, encode_ping, encode_rst_stream,
    encode_settings, encode_settings_ack, encode_window_update, header,
};
pub use parse::FrameError;

use crate::ErrorCode;

/// The length of a frame header.
pub const HEADER_LEN: usize = 9;

/// The connection preface a client sends first (section 3.4).
pub const PREFACE: &[u8; 24] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";

/// A stream identifier: 31 bits, 0 for the connection itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct StreamId(u32);

impl StreamId {
    /// The connection's own "stream".
    pub const ZERO: StreamId = StreamId(0);

    /// The identifier `id`, its reserved high bit cleared.
    #[must_use]
    pub const fn new(id: u32) -> StreamId {
        StreamId(id & 0x7fff_ffff)
    }

    /// The number.
    #[must_use]
    pub const fn get(self) -> u32 {
        self.0
    }

    /// Whether this is stream 0.
    #[must_use]
    pub const fn is_zero(self) -> bool {
        self.0 == 0
    }

    /// Whether a client opened this stream (odd numbers).
    #[must_use]
    pub const fn is_client(self) -> bool {
        self.0 & 1 == 1
    }
}

/// Frame type codes (section 6).
pub mod kind {
    /// `DATA`.
    pub const DATA: u8 = 0x0;
    /// `HEADERS`.
    pub const HEADERS: u8 = 0x1;
    /// `PRIORITY`.
    pub const PRIORITY: u8 = 0x2;
    /// `RST_STREAM`.
    pub const RST_STREAM: u8 = 0x3;
    /// `SETTINGS`.
    pub const SETTINGS: u8 = 0x4;
    /// `PUSH_PROMISE`.
    pub const PUSH_PROMISE: u8 = 0x5;
    /// `PING`.
    pub const PING: u8 = 0x6;
    /// `GOAWAY`.
    pub const GOAWAY: u8 = 0x7;
    /// `WINDOW_UPDATE`.
    pub const WINDOW_UPDATE: u8 = 0x8;
    /// `CONTINUATION`.
    pub const CONTINUATION: u8 = 0x9;
}

/// Frame flags (section 6); each means something only on some frame types.
pub mod flags {
    /// `DATA`, `HEADERS`: the sender's last frame on the stream.
    pub const END_STREAM: u8 = 0x1;
    /// `SETTINGS`, `PING`: an acknowledgement.
    pub const ACK: u8 = 0x1;
    /// `HEADERS`, `PUSH_PROMISE`, `CONTINUATION`: the header block ends here.
    pub const END_HEADERS: u8 = 0x4;
    /// `DATA`, `HEADERS`, `PUSH_PROMISE`: a pad length byte and padding.
    pub const PADDED: u8 = 0x8;
    /// `HEADERS`: a priority (dependency and weight) before the header block.
    pub const PRIORITY: u8 = 0x20;
}

/// Setting identifiers (section 6.5.2).
pub mod setting {
    /// `SETTINGS_HEADER_TABLE_SIZE`.
    pub const HEADER_TABLE_SIZE: u16 = 0x1;
    /// `SETTINGS_ENABLE_PUSH`.
    pub const ENABLE_PUSH: u16 = 0x2;
    /// `SETTINGS_MAX_CONCURRENT_STREAMS`.
    pub const MAX_CONCURRENT_STREAMS: u16 = 0x3;
    /// `SETTINGS_INITIAL_WINDOW_SIZE`.
    pub const INITIAL_WINDOW_SIZE: u16 = 0x4;
    /// `SETTINGS_MAX_FRAME_SIZE`.
    pub const MAX_FRAME_SIZE: u16 = 0x5;
    /// `SETTINGS_MAX_HEADER_LIST_SIZE`.
    pub const MAX_HEADER_LIST_SIZE: u16 = 0x6;
    /// `SETTINGS_ENABLE_CONNECT_PROTOCOL` (RFC 8441): extended `CONNECT` is welcome.
    pub const ENABLE_CONNECT_PROTOCOL: u16 = 0x8;
}

/// The nine bytes in front of every frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FrameHeader {
    /// Payload length (24 bits).
    pub len: u32,
    /// Frame type ([`kind`]).
    pub kind: u8,
    /// Flags ([`flags`]).
    pub flags: u8,
    /// The stream the frame belongs to.
    pub stream: StreamId,
}

impl FrameHeader {
    /// The header at the front of `buf`, or `None` while fewer than nine bytes are buffered.
    #[must_use]
    pub fn parse(buf: &[u8]) -> Option<FrameHeader> {
        let head: &[u8; HEADER_LEN] = buf.get(..HEADER_LEN)?.try_into().ok()?;
        Some(FrameHeader {
            len: u32::from_be_bytes([0, head[0], head[1], head[2]]),
            kind: head[3],
            flags: head[4],
            stream: StreamId::new(u32::from_be_bytes([head[5], head[6], head[7], head[8]])),
        })
    }

    /// Whether `flag` is set.
    #[must_use]
    pub fn has(&self, flag: u8) -> bool {
        self.flags & flag != 0
    }
}

/// A stream's priority as `HEADERS` and `PRIORITY` carry it (section 5.3.2, deprecated by RFC
/// 9113 but still parsed to be checked and skipped).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Priority {
    /// The stream this one depends on.
    pub dependency: StreamId,
    /// Whether the dependency is exclusive.
    pub exclusive: bool,
    /// The weight, 1-256, minus one.
    pub weight: u8,
}

/// One parsed frame, its variable parts borrowed from the buffer it was parsed from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Frame<'a> {
    /// `DATA`: body bytes, padding removed.
    Data {
        /// The stream.
        stream: StreamId,
        /// The body bytes.
        data: &'a [u8],
        /// The whole payload's length, padding included: what flow control counts.
        flow_len: u32,
        /// The sender's last frame on the stream.
        end_stream: bool,
    },
    /// `HEADERS`: the start of a header block.
    Headers {
        /// The stream.
        stream: StreamId,
        /// The header block fragment, padding and priority removed.
        fragment: &'a [u8],
        /// The sender's last frame on the stream (after the block's `CONTINUATION`s).
        end_stream: bool,
        /// The block is whole in this frame.
        end_headers: bool,
        /// The priority, when the frame carries one. Not checked: one naming `stream` itself
        /// is a stream error (section 5.3.1) for the receiver to raise once it has decoded
        /// the header block.
        priority: Option<Priority>,
    },
    /// `PRIORITY`.
    Priority {
        /// The stream.
        stream: StreamId,
        /// Its new priority.
        priority: Priority,
    },
    /// `RST_STREAM`: the stream is over.
    RstStream {
        /// The stream.
        stream: StreamId,
        /// Why.
        code: ErrorCode,
    },
    /// `SETTINGS` with parameters (possibly none).
    Settings(Settings<'a>),
    /// `SETTINGS` with the `ACK` flag.
    SettingsAck,
    /// `PUSH_PROMISE` (a server's; a server receiving one fails the connection, and so does
    /// a client, which disables push).
    PushPromise {
        /// The stream the promise is made on.
        stream: StreamId,
    },
    /// `PING`.
    Ping {
        /// An acknowledgement of our ping.
        ack: bool,
        /// The opaque data to echo.
        data: [u8; 8],
    },
    /// `GOAWAY`: the peer is closing the connection.
    GoAway {
        /// The last stream the peer processed or may process.
        last_stream: StreamId,
        /// Why.
        code: ErrorCode,
        /// Diagnostic data.
        debug: &'a [u8],
    },
    /// `WINDOW_UPDATE`.
    WindowUpdate {
        /// The stream, or 0 for the connection's window.
        stream: StreamId,
        /// How much the window grows (1 to 2^31 - 1).
        increment: u32,
    },
    /// `CONTINUATION`: more of a header block.
    Continuation {
        /// The stream.
        stream: StreamId,
        /// The fragment.
        fragment: &'a [u8],
        /// The block ends here.
        end_headers: bool,
    },
    /// A frame type this crate does not know: ignored (section 5.5), unless it interrupts a
    /// header block.
    Unknown {
        /// Its type code.
        kind: u8,
    },
}

/// The parameters of a `SETTINGS` frame, six bytes each.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Settings<'a>(&'a [u8]);

impl<'a> Settings<'a> {
    /// Each parameter in order: identifier and value. Unknown identifiers included (the
    /// receiver ignores them).
    pub fn iter(&self) -> impl Iterator<Item = (u16, u32)> + 'a {
        self.0.chunks_exact(6).map(|p| {
            (
                u16::from_be_bytes([p[0], p[1]]),
                u32::from_be_bytes([p[2], p[3], p[4], p[5]]),
            )
        })
    }
}
