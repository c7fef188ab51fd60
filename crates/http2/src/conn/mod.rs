//! Either side of a connection: bytes in, events out; messages in, bytes out.
//!
//! One [`Connection`] type plays both roles, chosen at construction:
//! [`Connection::server`] answers requests, [`Connection::client`] sends them. Frame handling,
//! flow control, settings, `GOAWAY` and the error paths are shared; what differs by role is
//! in `server.rs` and `client.rs` (who sends the magic preface, who opens streams, which
//! head a `HEADERS` frame carries).
//!
//! [`Connection::recv`] takes the receive buffer, handles the whole frame at its front and
//! says how many bytes it used, with at most one [`Event`] for the application: a request
//! head (server) or response head (client), a piece of body (a slice of the buffer: never
//! copied), trailers, a reset, the peer going away. Everything else HTTP/2 asks of an
//! endpoint it does by itself, writing the frames into its send buffer
//! ([`Connection::transmit`]): the `SETTINGS` exchange and acknowledgements, `PING` answers,
//! flow-control window updates, resets of streams that break the rules and the `GOAWAY`
//! that ends a connection that does. Body pieces queued by [`Connection::send_data`] of at
//! least [`BY_REFERENCE`] bytes are not copied into that buffer: each goes out from the
//! caller's `Bytes` after its frame header ([`Connection::transmit_vectored`]).
//!
//! Messages go in through [`Connection::send_response`] (server) or
//! [`Connection::send_request`] (client), then [`Connection::send_data`] and
//! [`Connection::send_trailers`] for either; body bytes wait in the stream's queue until the
//! peer's flow-control windows let them out, so the caller never counts windows.

mod client;
mod fields;
mod server;
mod stream;

use std::collections::VecDeque;
use std::fmt;

use bytes::{Buf as _, Bytes};
use foldhash::{HashMap, HashMapExt};

pub use fields::{Fields, RequestHead};

use crate::frame::{self, setting, Frame, FrameHeader, StreamId, HEADER_LEN, PREFACE};
use crate::hpack::{self, DecodeError, Field};
use crate::{Error, ErrorCode, Violation};
use fields::{FieldList, Part};
use stream::{State, Stream};

/// The largest flow-control window (section 6.9.1).
const MAX_WINDOW: i64 = (1 << 31) - 1;
/// The window every stream and the connection start with (section 6.9.2).
const DEFAULT_WINDOW: u32 = 65_535;
/// The frame size every endpoint must accept (section 4.2).
const DEFAULT_FRAME_SIZE: u32 = 16_384;
/// Body pieces of at least this many bytes go out from the caller's `Bytes` (one more
/// run for a vectored write) instead of being copied into the send buffer; shorter ones
/// cost less to copy.
pub const BY_REFERENCE: usize = 4096;
/// The most of the peer's HPACK table our encoder uses, whatever the peer allows.
const MAX_ENCODER_TABLE: usize = 4096;
/// How many closed streams are remembered, to tell a late frame from a protocol error.
const CLOSED_MEMORY: usize = 128;
/// How many emptied send queues are kept for new streams.
const SPARE_QUEUES: usize = 16;
/// The highest stream identifier (section 5.1.1).
const MAX_STREAM_ID: u32 = (1 << 31) - 1;

/// Which side of the connection this endpoint is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Role {
    /// Sends the magic preface, opens the (odd) streams with requests, reads responses.
    Client,
    /// Reads the preface, answers the streams the client opens; opens none itself (no push).
    Server,
}

/// What this endpoint advertises and enforces.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Config {
    /// `SETTINGS_MAX_CONCURRENT_STREAMS`, on a server: streams past it are refused
    /// (`REFUSED_STREAM`). Default 128. A client ignores it: it advertises
    /// `SETTINGS_ENABLE_PUSH` 0 instead, and the server then opens no stream at all.
    pub max_concurrent_streams: u32,
    /// `SETTINGS_INITIAL_WINDOW_SIZE`: how much body (a request's on a server, a response's
    /// on a client) each stream may send before the application
    /// [releases](Connection::release) some. Default 256 KiB; at least 65,535
    /// (a smaller value would bind the peer only once it acknowledged it).
    pub stream_window: u32,
    /// The connection's window, across all streams. Default 1 MiB, at least 65,535.
    pub connection_window: u32,
    /// `SETTINGS_MAX_FRAME_SIZE`: the largest frame accepted. Default 16,384.
    pub max_frame_size: u32,
    /// `SETTINGS_MAX_HEADER_LIST_SIZE`: the largest header list accepted, as section 6.5.2
    /// counts it; also bounds a header block's compressed size. Default 64 KiB.
    pub max_header_list_size: u32,
    /// While more than this many bytes wait in the send buffer, [`Connection::recv`] reads
    /// no further frame: a peer that sends without reading cannot make the buffer grow
    /// without bound (a `PING` flood, say). Default 1 MiB.
    pub max_send_buffer: usize,
    /// `SETTINGS_ENABLE_CONNECT_PROTOCOL`, on a server: requests may be extended `CONNECT`s
    /// (RFC 8441), which open a stream to another protocol (`:protocol`), as WebSocket
    /// over HTTP/2. Default off: a `:protocol` is then malformed.
    pub enable_connect_protocol: bool,
}

impl Default for Config {
    fn default() -> Config {
        Config {
            max_concurrent_streams: 128,
            stream_window: 256 * 1024,
            connection_window: 1024 * 1024,
            max_frame_size: DEFAULT_FRAME_SIZE,
            max_header_list_size: 64 * 1024,
            max_send_buffer: 1024 * 1024,
            enable_connect_protocol: false,
        }
    }
}

/// What [`Connection::recv`] found for the application.
#[derive(Debug)]
#[non_exhaustive]
pub enum Event<'a> {
    /// A request opened `stream` (server).
    Request {
        /// The stream to answer on.
        stream: StreamId,
        /// The head.
        head: RequestHead<'a>,
        /// No body follows.
        end_stream: bool,
    },
    /// A response to the request on `stream` (client): its final head.
    Response {
        /// The stream the request went out on.
        stream: StreamId,
        /// The status, 200 to 999.
        status: u16,
        /// The regular fields.
        fields: Fields<'a>,
        /// No body follows.
        end_stream: bool,
    },
    /// An interim (1xx) response to the request on `stream` (client): `100 Continue`,
    /// `103 Early Hints`. Handed over rather than skipped because what it means (send the
    /// body now, preload these) is the application's to act on; the final
    /// [`Response`](Event::Response) follows.
    Interim {
        /// The stream.
        stream: StreamId,
        /// The status, 100 to 199 (never 101, which HTTP/2 forbids).
        status: u16,
        /// The regular fields.
        fields: Fields<'a>,
    },
    /// A piece of a message's body (a request's on a server, a response's on a client), a
    /// slice of the receive buffer. Once the application
    /// is done with it, [`Connection::release`] lets the peer send as much again.
    Data {
        /// The stream.
        stream: StreamId,
        /// The bytes.
        data: &'a [u8],
        /// The body ends here.
        end_stream: bool,
    },
    /// A message's trailers; the body has ended.
    Trailers {
        /// The stream.
        stream: StreamId,
        /// The fields.
        fields: Fields<'a>,
    },
    /// A stream the application knows is over before its exchange finished: drop its work.
    Reset {
        /// The stream.
        stream: StreamId,
        /// The code sent or received.
        code: ErrorCode,
        /// `None` when the peer reset it; what it did wrong when this side did.
        violation: Option<Violation>,
    },
    /// The peer is closing the connection: it opens no more streams, and those above
    /// `last_stream` went unprocessed.
    GoAway {
        /// The last stream the peer may have processed.
        last_stream: StreamId,
        /// Why.
        code: ErrorCode,
    },
}

/// A message (or part of one) the connection cannot send.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum SendError {
    /// The stream is closed or was reset (by either side), or was never opened.
    NoStream(StreamId),
    /// This side already ended the stream, or already sent its head (a response head on a
    /// stream already answered, or on a client's stream, whose head is the request).
    AlreadySent(StreamId),
    /// The connection failed and sends nothing more.
    ConnectionFailed,
    /// A request on a server connection: only the client opens streams.
    NotClient,
    /// As many streams are open as the server's `SETTINGS_MAX_CONCURRENT_STREAMS` allows:
    /// wait for one to end.
    TooManyStreams,
    /// A `GOAWAY` was sent or received: no new stream may be opened on this connection.
    GoingAway,
    /// Every odd stream identifier is used: a new connection is needed.
    StreamIdsExhausted,
    /// A request head larger than the server's `SETTINGS_MAX_HEADER_LIST_SIZE` (counted as
    /// section 6.5.2 counts it): not sent, as the server would refuse it.
    HeaderListTooLarge {
        /// The server's limit.
        limit: u32,
    },
    /// An informational head whose status is not `1xx`, or is `101`.
    NotInformational(u16),
    /// An extended `CONNECT` to a server that has not said it takes them (RFC 8441
    /// section 3), or whose `SETTINGS` have not come yet.
    NoExtendedConnect,
    /// Body bytes one `DATA` frame cannot carry now
    /// ([`Connection::send_data_in_place`]).
    NoRoom {
        /// The bytes offered.
        len: usize,
        /// What the windows and the peer's frame size take now.
        room: usize,
    },
}

impl fmt::Display for SendError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SendError::NoStream(id) => write!(f, "stream {} is not open", id.get()),
            SendError::AlreadySent(id) => write!(f, "stream {} already has that part", id.get()),
            SendError::ConnectionFailed => f.write_str("the connection has failed"),
            SendError::NotClient => f.write_str("a server connection opens no stream"),
            SendError::TooManyStreams => f.write_str("the peer allows no more streams at once"),
            SendError::GoingAway => f.write_str("the connection is going away"),
            SendError::StreamIdsExhausted => f.write_str("no stream identifier left"),
            SendError::HeaderListTooLarge { limit } => {
                write!(f, "a header list over the peer's limit of {limit} bytes")
            }
            SendError::NotInformational(status) => {
                write!(f, "{status} is not an informational status HTTP/2 can send")
            }
            SendError::NoRoom { len, room } => {
                write!(f, "{len} bytes in one DATA frame where {room} fit now")
            }
            SendError::NoExtendedConnect => {
                f.write_str("the server has not said it takes extended CONNECT")
            }
        }
    }
}

impl std::error::Error for SendError {}

/// Why a stream left the stream table, remembered for a while.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Closed {
    /// Both sides ended it.
    Ended,
    /// This side reset it: frames the peer sent before it knew are dropped quietly.
    ResetHere,
    /// The peer reset it.
    ResetThere,
}

/// What a whole header block was.
#[derive(Debug, Clone, Copy)]
enum Opened {
    Request {
        end_stream: bool,
    },
    Response {
        status: u16,
        end_stream: bool,
    },
    Interim {
        status: u16,
    },
    Trailers,
    /// Trailers that broke the rules: the stream was reset.
    Reset {
        code: ErrorCode,
        violation: Violation,
    },
}

/// What the `HEADERS` frame that starts a header block said: the block may arrive in pieces
/// (`HEADERS` then `CONTINUATION`s).
#[derive(Debug, Clone, Copy)]
struct Block {
    stream: StreamId,
    end_stream: bool,
    /// Its priority made the stream depend on itself: a stream error once the block is
    /// decoded (section 5.3.1).
    self_dependent: bool,
}

/// One side of an HTTP/2 connection, [client](Connection::client) or
/// [server](Connection::server).
#[derive(Debug)]
pub struct Connection {
    role: Role,
    config: Config,
    /// The client's preface arrived (a client expects none: set from the start).
    preface: bool,
    /// Its first `SETTINGS` arrived.
    settings: bool,
    out: Vec<u8>,
    /// How much of `out` went out already.
    sent: usize,
    /// Body pieces sent from where they lie, each spliced into `out` at its offset (right
    /// after its frame header), in order.
    pieces: VecDeque<(usize, Bytes)>,
    /// Their bytes not yet sent.
    piece_bytes: usize,
    decoder: hpack::Decoder,
    encoder: hpack::Encoder,
    /// Scratch for encoded header blocks.
    block_out: Vec<u8>,
    /// Scratch for the fields of a block being encoded: their (lowercased) names and values
    /// one after another, and where each ends.
    fields_out: Vec<u8>,
    field_ends: Vec<(usize, usize)>,
    /// Send queues of closed streams, emptied, for new streams to take (no allocation per
    /// stream once warm).
    spare_queues: Vec<VecDeque<Bytes>>,
    /// Scratch for [`flush_all`](Self::flush_all).
    flush_ids: Vec<u32>,
    /// The peer's settings that shape what we send.
    peer_stream_window: u32,
    peer_max_frame: u32,
    /// `SETTINGS_MAX_CONCURRENT_STREAMS` from the peer: how many streams a client may open.
    /// Unlimited until the server says (section 6.5.2).
    peer_max_streams: u32,
    /// `SETTINGS_MAX_HEADER_LIST_SIZE` from the peer; unlimited until it says.
    peer_max_header_list: u32,
    /// The server welcomes extended `CONNECT`s (RFC 8441).
    peer_extended_connect: bool,
    /// The peer's first `SETTINGS` came.
    peer_settings: bool,
    /// What we may still send on the connection, and what the peer may.
    send_window: i64,
    recv_window: i64,
    unacked: u32,
    streams: HashMap<u32, Stream>,
    closed: VecDeque<(u32, Closed)>,
    /// The highest stream the client opened (whichever side this is: only the client opens).
    last_stream: u32,
    /// A header block not yet ended, and its bytes so far.
    block: Option<Block>,
    block_bytes: Vec<u8>,
    fields: FieldList,
    /// A `GOAWAY` went out naming this last stream: streams above it are ignored.
    going_away: Option<u32>,
    /// A `GOAWAY` came in: no new stream may be opened.
    peer_going_away: bool,
    failed: Option<Error>,
}

impl Connection {
    /// A connection playing `role`, its preface (the client's magic, then `SETTINGS` and the
    /// connection window) already in the send buffer.
    fn new(role: Role, config: Config) -> Connection {
        let stream_window = config
            .stream_window
            .clamp(DEFAULT_WINDOW, MAX_WINDOW as u32);
        let connection_window = config
            .connection_window
            .clamp(DEFAULT_WINDOW, MAX_WINDOW as u32);
        let max_frame_size = config
            .max_frame_size
            .clamp(DEFAULT_FRAME_SIZE, (1 << 24) - 1);
        let config = Config {
            stream_window,
            connection_window,
            max_frame_size,
            ..config
        };
        let mut out = Vec::with_capacity(96);
        // What only one side says: the server how many streams the client may open, the
        // client that the server may open none (no push).
        let role_setting = match role {
            Role::Server => (
                setting::MAX_CONCURRENT_STREAMS,
                config.max_concurrent_streams,
            ),
            Role::Client => {
                out.extend_from_slice(PREFACE);
                (setting::ENABLE_PUSH, 0)
            }
        };
        let settings = [
            role_setting,
            (setting::INITIAL_WINDOW_SIZE, stream_window),
            (setting::MAX_FRAME_SIZE, max_frame_size),
            (setting::MAX_HEADER_LIST_SIZE, config.max_header_list_size),
            (setting::ENABLE_CONNECT_PROTOCOL, 1),
        ];
        let extended = role == Role::Server && config.enable_connect_protocol;
        let settings = &settings[..settings.len() - usize::from(!extended)];
        frame::encode_settings(&mut out, settings);
        if connection_window > DEFAULT_WINDOW {
            frame::encode_window_update(
                &mut out,
                StreamId::ZERO,
                connection_window - DEFAULT_WINDOW,
            );
        }
        Connection {
            role,
            preface: role == Role::Client,
            settings: false,
            out,
            sent: 0,
            pieces: VecDeque::new(),
            piece_bytes: 0,
            decoder: hpack::Decoder::new(4096),
            encoder: hpack::Encoder::new(),
            block_out: Vec::new(),
            fields_out: Vec::new(),
            field_ends: Vec::new(),
            spare_queues: Vec::new(),
            flush_ids: Vec::new(),
            peer_stream_window: DEFAULT_WINDOW,
            peer_max_frame: DEFAULT_FRAME_SIZE,
            peer_max_streams: u32::MAX,
            peer_max_header_list: u32::MAX,
            peer_extended_connect: false,
            peer_settings: false,
            send_window: i64::from(DEFAULT_WINDOW),
            recv_window: i64::from(connection_window),
            unacked: 0,
            streams: HashMap::new(),
            closed: VecDeque::new(),
            last_stream: 0,
            block: None,
            block_bytes: Vec::new(),
            fields: FieldList::default(),
            going_away: None,
            peer_going_away: false,
            failed: None,
            config,
        }
    }

    /// The next run of bytes waiting to be sent: the send buffer up to the next body piece
    /// held by reference, or that piece. Send it, [`advance`](Self::advance), and ask
    /// again until it is empty; or take several runs at once with
    /// [`transmit_vectored`](Self::transmit_vectored).
    #[must_use]
    pub fn transmit(&self) -> &[u8] {
        match self.pieces.front() {
            Some((at, piece)) if *at == self.sent => piece,
            Some((at, _)) => &self.out[self.sent..*at],
            None => &self.out[self.sent..],
        }
    }

    /// Fills `runs` with the runs of bytes waiting to be sent, in order, as many as fit;
    /// returns how many it filled. For one vectored write.
    pub fn transmit_vectored<'a>(&'a self, runs: &mut [&'a [u8]]) -> usize {
        let mut from = self.sent;
        let mut filled = 0;
        let mut pieces = self.pieces.iter().peekable();
        while filled < runs.len() {
            let (run, next) = match pieces.peek() {
                Some((at, piece)) if *at == from => {
                    pieces.next();
                    (&piece[..], from)
                }
                Some((at, _)) => (&self.out[from..*at], *at),
                None => (&self.out[from..], self.out.len()),
            };
            if run.is_empty() {
                break;
            }
            runs[filled] = run;
            filled += 1;
            from = next;
        }
        filled
    }

    /// All the bytes waiting to be sent, pieces held by reference included.
    #[must_use]
    pub fn pending(&self) -> usize {
        self.out.len() - self.sent + self.piece_bytes
    }

    /// Notes that the first `n` bytes waiting to be sent went out, across runs.
    pub fn advance(&mut self, mut n: usize) {
        while n > 0 {
            match self.pieces.front_mut() {
                Some((at, piece)) if *at == self.sent => {
                    let k = n.min(piece.len());
                    piece.advance(k);
                    self.piece_bytes -= k;
                    n -= k;
                    if piece.is_empty() {
                        self.pieces.pop_front();
                    }
                }
                Some((at, _)) => {
                    let k = n.min(*at - self.sent);
                    self.sent += k;
                    n -= k;
                }
                None => {
                    self.sent = (self.sent + n).min(self.out.len());
                    n = 0;
                }
            }
        }
        if self.sent == self.out.len() && self.pieces.is_empty() {
            self.out.clear();
            self.sent = 0;
        }
    }

    /// Gives back what the buffers grew to for past traffic (a large body's bytes in the
    /// send buffer, header scratch, spare send queues), keeping what the protocol needs:
    /// the HPACK tables, the settings, the streams remembered, bytes not yet sent, a header
    /// block half received. For a connection gone quiet.
    pub fn shrink(&mut self) {
        if self.pending() == 0 {
            self.out = Vec::new();
            self.sent = 0;
        }
        self.block_out = Vec::new();
        self.fields_out = Vec::new();
        self.field_ends = Vec::new();
        self.spare_queues = Vec::new();
        self.flush_ids = Vec::new();
        if self.block.is_none() {
            self.block_bytes = Vec::new();
            self.fields = FieldList::default();
        }
        self.streams.shrink_to_fit();
    }

    /// Whether exchanges are still under way: streams are open or bytes wait to be sent.
    #[must_use]
    pub fn is_busy(&self) -> bool {
        !self.streams.is_empty() || self.pending() > 0
    }

    /// Body bytes of `stream` queued and waiting for the peer's flow-control window.
    #[must_use]
    pub fn queued(&self, stream: StreamId) -> usize {
        self.streams.get(&stream.get()).map_or(0, Stream::queued)
    }

    /// How many body bytes [`send_data_now`](Self::send_data_now) would send on `stream`
    /// now: what both flow-control windows allow, nothing while body queued by
    /// [`send_data`](Self::send_data) waits or once the stream's end is sent. A sender
    /// streaming a body reads no more than this from its source, then waits for
    /// `WINDOW_UPDATE`s.
    #[must_use]
    pub fn send_capacity(&self, stream: StreamId) -> usize {
        match self.streams.get(&stream.get()) {
            Some(s)
                if self.failed.is_none()
                    && s.head_sent
                    && s.queue.is_empty()
                    && !s.end_queued
                    && s.state != State::HalfClosedLocal =>
            {
                self.send_window.min(s.send_window).max(0) as usize
            }
            _ => 0,
        }
    }

    /// Whether this side may still send on `stream`: open, its end neither sent nor queued
    /// (whatever the windows allow now: [`send_capacity`](Self::send_capacity)).
    #[must_use]
    pub fn can_send(&self, stream: StreamId) -> bool {
        self.failed.is_none()
            && self
                .streams
                .get(&stream.get())
                .is_some_and(|s| s.head_sent && !s.end_queued && s.state != State::HalfClosedLocal)
    }

    /// Whether the peer (a server) said it takes extended `CONNECT`s (RFC 8441): a client
    /// may then open WebSockets on this connection.
    #[must_use]
    pub fn peer_extended_connect(&self) -> bool {
        self.peer_extended_connect
    }

    /// Whether the peer's `SETTINGS` came: until they do, what it allows beyond the
    /// protocol's defaults (extended `CONNECT`, say) is not known.
    #[must_use]
    pub fn has_peer_settings(&self) -> bool {
        self.peer_settings
    }

    /// The number of open streams.
    #[must_use]
    pub fn open_streams(&self) -> usize {
        self.streams.len()
    }

    /// Whether the peer's `SETTINGS_MAX_CONCURRENT_STREAMS` leaves room for one more
    /// stream now: a client whose requests share the connection waits for a stream to
    /// close when it does not ([`SendError::TooManyStreams`]).
    #[must_use]
    pub fn has_stream_room(&self) -> bool {
        self.streams.len() < self.peer_max_streams as usize
    }

    /// Queues a `PING` carrying `data`, to learn whether the peer is still there: its
    /// acknowledgement is a frame like any other, so whatever arrives next says so.
    pub fn ping(&mut self, data: [u8; 8]) {
        frame::encode_ping(&mut self.out, false, data);
    }

    /// Whether a header block is half received: `HEADERS` came without `END_HEADERS` and
    /// its `CONTINUATION` frames are awaited (no other frame may come meanwhile).
    #[must_use]
    pub fn in_header_block(&self) -> bool {
        self.block.is_some()
    }

    /// Handles the frame (or the preface) at the front of `buf`.
    ///
    /// Returns how many bytes it used, to be consumed from the buffer once the event is
    /// dealt with, and what the application should know. `(0, None)`: send what waits
    /// ([`transmit`](Self::transmit)), and read more. An `Err` is a connection error:
    /// the `GOAWAY` is in the send buffer; send it, then close.
    pub fn recv<'a>(&'a mut self, buf: &'a [u8]) -> Result<(usize, Option<Event<'a>>), Error> {
        if let Some(error) = self.failed {
            return Err(error);
        }
        if self.pending() > self.config.max_send_buffer {
            return Ok((0, None));
        }
        if !self.preface {
            let n = buf.len().min(PREFACE.len());
            if buf[..n] != PREFACE[..n] {
                return Err(self.fail(ErrorCode::PROTOCOL_ERROR, Violation::Preface));
            }
            if n < PREFACE.len() {
                return Ok((0, None));
            }
            self.preface = true;
            return Ok((n, None));
        }
        let Some(header) = FrameHeader::parse(buf) else {
            return Ok((0, None));
        };
        // The peer's first frame is its SETTINGS (section 3.4), checked before the length:
        // what else comes first (an HTTP/1.1 server's answer, say) is no HTTP/2 peer.
        if !self.settings && (header.kind != frame::kind::SETTINGS || header.has(frame::flags::ACK))
        {
            return Err(self.fail(ErrorCode::PROTOCOL_ERROR, Violation::Preface));
        }
        if header.len > self.config.max_frame_size {
            let violation = Violation::FrameTooLarge {
                len: header.len,
                max: self.config.max_frame_size,
            };
            return Err(self.fail(ErrorCode::FRAME_SIZE_ERROR, violation));
        }
        let end = HEADER_LEN + header.len as usize;
        let Some(payload) = buf.get(HEADER_LEN..end) else {
            return Ok((0, None));
        };
        self.settings = true;
        let frame = match Frame::parse(header, payload) {
            Ok(frame) => frame,
            Err(error) => {
                return match error.stream {
                    None => Err(self.fail(error.code, error.violation)),
                    // Section 5.1: on a stream never opened, only HEADERS and PRIORITY
                    // may come, and no RST_STREAM may answer (section 6.4).
                    Some(id) if header.kind == frame::kind::WINDOW_UPDATE && self.is_idle(id) => {
                        let violation = Violation::IdleStream("WINDOW_UPDATE");
                        Err(self.fail(ErrorCode::PROTOCOL_ERROR, violation))
                    }
                    Some(id) if self.block.is_none() => {
                        Ok((end, self.reset(id, error.code, error.violation)))
                    }
                    Some(_) => {
                        Err(self.fail(ErrorCode::PROTOCOL_ERROR, Violation::ExpectedContinuation))
                    }
                };
            }
        };
        let event = self.handle(frame)?;
        Ok((end, event))
    }

    fn handle<'a>(&'a mut self, frame: Frame<'a>) -> Result<Option<Event<'a>>, Error> {
        if let Some(block) = &self.block {
            if !matches!(frame, Frame::Continuation { stream, .. } if stream == block.stream) {
                return Err(self.fail(ErrorCode::PROTOCOL_ERROR, Violation::ExpectedContinuation));
            }
        }
        match frame {
            Frame::Data {
                stream,
                data,
                flow_len,
                end_stream,
            } => self.data(stream, data, flow_len, end_stream),
            Frame::Headers {
                stream,
                fragment,
                end_stream,
                end_headers,
                priority,
            } => {
                if let Some(violation) = self.headers_violation(stream) {
                    return Err(self.fail(ErrorCode::PROTOCOL_ERROR, violation));
                }
                let head = Block {
                    stream,
                    end_stream,
                    self_dependent: priority.is_some_and(|p| p.dependency == stream),
                };
                if end_headers {
                    let opened = self.header_block(head, fragment)?;
                    return Ok(opened.map(|opened| self.opened(stream, opened)));
                }
                self.block = Some(head);
                self.block_bytes.clear();
                self.append_block(fragment)?;
                Ok(None)
            }
            Frame::Continuation {
                fragment,
                end_headers,
                ..
            } => {
                let Some(head) = self.block else {
                    let violation = Violation::UnexpectedContinuation;
                    return Err(self.fail(ErrorCode::PROTOCOL_ERROR, violation));
                };
                self.append_block(fragment)?;
                if !end_headers {
                    return Ok(None);
                }
                self.block = None;
                let bytes = std::mem::take(&mut self.block_bytes);
                let opened = self.header_block(head, &bytes);
                self.block_bytes = bytes;
                Ok(opened?.map(|opened| self.opened(head.stream, opened)))
            }
            Frame::Priority { .. } | Frame::SettingsAck | Frame::Unknown { .. } => Ok(None),
            Frame::RstStream { stream, code } => {
                if self.streams.contains_key(&stream.get()) {
                    // Through `close`, which gives the body bytes the application still holds
                    // back to the connection's window: it can no longer release them.
                    self.close(stream, Closed::ResetThere);
                    return Ok(Some(Event::Reset {
                        stream,
                        code,
                        violation: None,
                    }));
                }
                if self.is_idle(stream) {
                    let violation = Violation::IdleStream("RST_STREAM");
                    return Err(self.fail(ErrorCode::PROTOCOL_ERROR, violation));
                }
                Ok(None)
            }
            Frame::Settings(settings) => {
                for (id, value) in settings.iter() {
                    self.apply_setting(id, value)?;
                }
                self.peer_settings = true;
                frame::encode_settings_ack(&mut self.out);
                self.flush_all();
                Ok(None)
            }
            Frame::PushPromise { .. } => {
                Err(self.fail(ErrorCode::PROTOCOL_ERROR, Violation::PushPromise))
            }
            Frame::Ping { ack, data } => {
                if !ack {
                    frame::encode_ping(&mut self.out, true, data);
                }
                Ok(None)
            }
            Frame::GoAway {
                last_stream, code, ..
            } => {
                self.peer_going_away = true;
                if self.role == Role::Client {
                    self.forget_unprocessed(last_stream);
                }
                Ok(Some(Event::GoAway { last_stream, code }))
            }
            Frame::WindowUpdate { stream, increment } => self.window_update(stream, increment),
        }
    }

    /// The event for a header block that [`header_block`](Self::header_block) accepted.
    fn opened(&self, stream: StreamId, opened: Opened) -> Event<'_> {
        match opened {
            Opened::Request { end_stream } => Event::Request {
                stream,
                head: self.fields.request(),
                end_stream,
            },
            Opened::Response { status, end_stream } => Event::Response {
                stream,
                status,
                fields: self.fields.fields(),
                end_stream,
            },
            Opened::Interim { status } => Event::Interim {
                stream,
                status,
                fields: self.fields.fields(),
            },
            Opened::Trailers => Event::Trailers {
                stream,
                fields: self.fields.fields(),
            },
            Opened::Reset { code, violation } => Event::Reset {
                stream,
                code,
                violation: Some(violation),
            },
        }
    }

    fn append_block(&mut self, fragment: &[u8]) -> Result<(), Error> {
        if self.block_bytes.len() + fragment.len() > self.config.max_header_list_size as usize {
            let violation = Violation::HeaderListTooLarge;
            return Err(self.fail(ErrorCode::ENHANCE_YOUR_CALM, violation));
        }
        self.block_bytes.extend_from_slice(fragment);
        Ok(())
    }

    /// Decodes a whole header block on `id` and decides what it is. Decoded first whatever
    /// becomes of the stream: the peer's encoder counted on it.
    fn header_block(&mut self, head: Block, block: &[u8]) -> Result<Option<Opened>, Error> {
        let Block {
            stream: id,
            end_stream,
            self_dependent,
        } = head;
        // Whether the peer may still send on the stream, and whether its head came already.
        let known = self
            .streams
            .get(&id.get())
            .map(|s| (s.remote_open(), s.head_received));
        let part = match (known, self.role) {
            (Some((true, true)), _) => Part::Trailers,
            (_, Role::Client) => Part::Response,
            (_, Role::Server) => Part::Request,
        };
        let fields = &mut self.fields;
        fields.clear();
        let decoded =
            self.decoder
                .decode(block, self.config.max_header_list_size as usize, |field| {
                    fields.push(field, part)
                });
        if let Err(error) = decoded {
            return Err(match error {
                DecodeError::ListTooLarge { .. } => {
                    self.fail(ErrorCode::ENHANCE_YOUR_CALM, Violation::HeaderListTooLarge)
                }
                _ => self.fail(ErrorCode::COMPRESSION_ERROR, Violation::Compression),
            });
        }
        if self_dependent {
            // Whatever state the stream was in: it is opened (if idle) and reset.
            let (code, violation) = (ErrorCode::PROTOCOL_ERROR, Violation::SelfDependency);
            self.last_stream = self.last_stream.max(id.get());
            self.reset_quietly::<()>(id, code, violation);
            return Ok(known.map(|_| Opened::Reset { code, violation }));
        }
        match known {
            Some((true, true)) => {
                // The body ends here: it must be as long as content-length said.
                let short = self
                    .streams
                    .get(&id.get())
                    .is_some_and(|s| s.content_length.is_some_and(|n| n != s.received));
                let rule = match self.fields.trailers_error() {
                    _ if !end_stream => Some("trailers without END_STREAM"),
                    None if short => Some("a body whose length differs from content-length"),
                    rule => rule,
                };
                if let Some(rule) = rule {
                    return Ok(Some(self.malformed(id, rule)));
                }
                self.remote_ended(id)?;
                Ok(Some(Opened::Trailers))
            }
            // Only a client's streams wait for the peer's head: the response.
            Some((true, false)) => self.response_head(id, end_stream),
            Some((false, _)) => {
                // The application saw the request: it is told, as for DATA on the stream.
                let (code, violation) =
                    (ErrorCode::STREAM_CLOSED, Violation::StreamClosed("HEADERS"));
                self.reset_quietly::<()>(id, code, violation);
                Ok(Some(Opened::Reset { code, violation }))
            }
            None if id.get() <= self.last_stream => match self.closed_as(id) {
                _ if self.ignored(id) => Ok(None),
                Some(Closed::ResetHere) => Ok(None),
                // A client opened every stream up to the last: one it forgot closed too.
                None if self.role == Role::Server => {
                    let violation = Violation::StreamIdReused(id.get());
                    Err(self.fail(ErrorCode::PROTOCOL_ERROR, violation))
                }
                _ => {
                    let violation = Violation::StreamClosed("HEADERS");
                    Err(self.fail(ErrorCode::STREAM_CLOSED, violation))
                }
            },
            // A new stream: only a server gets here, a client having refused `HEADERS` on
            // a stream it did not open (`headers_violation`).
            None => self.request_head(id, end_stream),
        }
    }

    /// Resets `id`, whose message broke `rule`; the application, which knows the stream, is
    /// told.
    fn malformed(&mut self, id: StreamId, rule: &'static str) -> Opened {
        let (code, violation) = (ErrorCode::PROTOCOL_ERROR, Violation::Malformed(rule));
        self.reset_quietly::<()>(id, code, violation);
        Opened::Reset { code, violation }
    }

    /// A new stream `id` in the table, its windows as the settings on both sides say.
    fn open_stream(&mut self, id: StreamId) -> &mut Stream {
        let stream = Stream::new(
            i64::from(self.peer_stream_window),
            i64::from(self.config.stream_window),
            self.spare_queues.pop().unwrap_or_default(),
        );
        self.streams.entry(id.get()).or_insert(stream)
    }

    fn data<'a>(
        &'a mut self,
        id: StreamId,
        data: &'a [u8],
        flow_len: u32,
        end_stream: bool,
    ) -> Result<Option<Event<'a>>, Error> {
        let flow = i64::from(flow_len);
        if flow > self.recv_window {
            return Err(self.fail(ErrorCode::FLOW_CONTROL_ERROR, Violation::WindowExceeded));
        }
        self.recv_window -= flow;
        let Some(stream) = self.streams.get_mut(&id.get()) else {
            // Counted against the connection's window, so given back at once.
            self.give_back(flow_len);
            if self.is_idle(id) {
                let violation = Violation::IdleStream("DATA");
                return Err(self.fail(ErrorCode::PROTOCOL_ERROR, violation));
            }
            if self.ignored(id) || self.closed_as(id) == Some(Closed::ResetHere) {
                return Ok(None);
            }
            let violation = Violation::StreamClosed("DATA");
            return Ok(self.reset_quietly(id, ErrorCode::STREAM_CLOSED, violation));
        };
        if !stream.remote_open() {
            self.give_back(flow_len);
            return Ok(self.stream_error(id, Violation::StreamClosed("DATA")));
        }
        if !stream.head_received {
            self.give_back(flow_len);
            let violation = Violation::Malformed("DATA before the response head");
            return Ok(self.stream_error(id, violation));
        }
        if flow > stream.recv_window {
            self.give_back(flow_len);
            let error = (ErrorCode::FLOW_CONTROL_ERROR, Violation::WindowExceeded);
            return Ok(self.reset(id, error.0, error.1));
        }
        stream.recv_window -= flow;
        stream.received += data.len() as u64;
        // Padding is flow-controlled but never reaches the application: released here.
        let padding = flow_len - data.len() as u32;
        stream.held += data.len() as u32;
        let length_error = match stream.content_length {
            Some(n) if stream.received > n || (end_stream && stream.received != n) => Some(
                Violation::Malformed("a body whose length differs from content-length"),
            ),
            _ => None,
        };
        if padding > 0 {
            self.release_flow(id, padding);
        }
        if let Some(violation) = length_error {
            return Ok(self.stream_error(id, violation));
        }
        if end_stream {
            self.remote_ended(id)?;
        }
        Ok(Some(Event::Data {
            stream: id,
            data,
            end_stream,
        }))
    }

    fn window_update(&mut self, id: StreamId, increment: u32) -> Result<Option<Event<'_>>, Error> {
        let increment = i64::from(increment);
        if id.is_zero() {
            if self.send_window + increment > MAX_WINDOW {
                return Err(self.fail(ErrorCode::FLOW_CONTROL_ERROR, Violation::WindowOverflow));
            }
            self.send_window += increment;
            self.flush_all();
            return Ok(None);
        }
        let Some(stream) = self.streams.get_mut(&id.get()) else {
            if self.is_idle(id) {
                let violation = Violation::IdleStream("WINDOW_UPDATE");
                return Err(self.fail(ErrorCode::PROTOCOL_ERROR, violation));
            }
            return Ok(None);
        };
        if stream.send_window + increment > MAX_WINDOW {
            let error = (ErrorCode::FLOW_CONTROL_ERROR, Violation::WindowOverflow);
            return Ok(self.reset(id, error.0, error.1));
        }
        stream.send_window += increment;
        self.flush(id);
        Ok(None)
    }

    fn apply_setting(&mut self, id: u16, value: u32) -> Result<(), Error> {
        let invalid = Violation::Setting { id, value };
        match id {
            setting::HEADER_TABLE_SIZE => {
                // Any size up to the peer's will do: ours stays small per connection.
                let size = (value as usize).min(MAX_ENCODER_TABLE);
                self.encoder.set_max_table_size(size);
            }
            // A server may only confirm that push is off (section 6.5.2).
            setting::ENABLE_PUSH if value > 1 || (value == 1 && self.role == Role::Client) => {
                return Err(self.fail(ErrorCode::PROTOCOL_ERROR, invalid));
            }
            setting::INITIAL_WINDOW_SIZE => {
                if i64::from(value) > MAX_WINDOW {
                    return Err(self.fail(ErrorCode::FLOW_CONTROL_ERROR, invalid));
                }
                // Section 6.9.2: every stream's window moves by the difference.
                let delta = i64::from(value) - i64::from(self.peer_stream_window);
                if self
                    .streams
                    .values()
                    .any(|s| s.send_window + delta > MAX_WINDOW)
                {
                    return Err(self.fail(ErrorCode::FLOW_CONTROL_ERROR, Violation::WindowOverflow));
                }
                for stream in self.streams.values_mut() {
                    stream.send_window += delta;
                }
                self.peer_stream_window = value;
            }
            setting::MAX_FRAME_SIZE => {
                if !(DEFAULT_FRAME_SIZE..1 << 24).contains(&value) {
                    return Err(self.fail(ErrorCode::PROTOCOL_ERROR, invalid));
                }
                self.peer_max_frame = value;
            }
            // From a server: how many requests may be open. From a client: how many streams
            // the server may push, and it pushes none.
            setting::MAX_CONCURRENT_STREAMS => self.peer_max_streams = value,
            // Advisory (section 6.5.2): a request over it fails here rather than at the peer.
            setting::MAX_HEADER_LIST_SIZE => self.peer_max_header_list = value,
            // RFC 8441 section 3: 0 or 1, and never back to 0 once 1.
            setting::ENABLE_CONNECT_PROTOCOL
                if value > 1 || (value == 0 && self.peer_extended_connect) =>
            {
                return Err(self.fail(ErrorCode::PROTOCOL_ERROR, invalid));
            }
            setting::ENABLE_CONNECT_PROTOCOL => self.peer_extended_connect = value == 1,
            // Unknown settings are ignored.
            _ => {}
        }
        Ok(())
    }

    /// The peer's head on `id` arrived, declaring a body of `length`; `end_stream`: no body.
    fn head_received(
        &mut self,
        id: StreamId,
        length: Option<u64>,
        end_stream: bool,
    ) -> Result<(), Error> {
        if let Some(stream) = self.streams.get_mut(&id.get()) {
            stream.head_received = true;
            stream.content_length = length;
        }
        if end_stream {
            self.remote_ended(id)?;
        }
        Ok(())
    }

    /// The peer ended its side of `id`.
    fn remote_ended(&mut self, id: StreamId) -> Result<(), Error> {
        if let Some(stream) = self.streams.get_mut(&id.get()) {
            match stream.state {
                State::Open => stream.state = State::HalfClosedRemote,
                State::HalfClosedLocal => self.close(id, Closed::Ended),
                State::HalfClosedRemote => {}
            }
        }
        Ok(())
    }

    /// Takes `id` out of the table, giving its unreleased body bytes back to the connection.
    fn close(&mut self, id: StreamId, why: Closed) {
        if let Some(mut stream) = self.streams.remove(&id.get()) {
            self.give_back(stream.held);
            if stream.queue.capacity() > 0 && self.spare_queues.len() < SPARE_QUEUES {
                stream.queue.clear();
                self.spare_queues.push(stream.queue);
            }
        }
        self.remember(id, why);
    }

    fn remember(&mut self, id: StreamId, why: Closed) {
        if self.closed.len() == CLOSED_MEMORY {
            self.closed.pop_front();
        }
        self.closed.push_back((id.get(), why));
    }

    fn closed_as(&self, id: StreamId) -> Option<Closed> {
        self.closed
            .iter()
            .rev()
            .find_map(|&(s, why)| (s == id.get()).then_some(why))
    }

    /// A stream error on a stream the application knows (or not): `RST_STREAM`, and an
    /// event when it knew.
    fn reset(&mut self, id: StreamId, code: ErrorCode, violation: Violation) -> Option<Event<'_>> {
        let known = self.streams.contains_key(&id.get());
        self.reset_quietly::<()>(id, code, violation);
        known.then_some(Event::Reset {
            stream: id,
            code,
            violation: Some(violation),
        })
    }

    fn stream_error(&mut self, id: StreamId, violation: Violation) -> Option<Event<'_>> {
        let code = match violation {
            Violation::StreamClosed(_) => ErrorCode::STREAM_CLOSED,
            _ => ErrorCode::PROTOCOL_ERROR,
        };
        self.reset(id, code, violation)
    }

    /// Resets `id` without telling the application (which never saw it, or is told by
    /// the caller).
    fn reset_quietly<T>(&mut self, id: StreamId, code: ErrorCode, _: Violation) -> Option<T> {
        frame::encode_rst_stream(&mut self.out, id, code);
        self.close(id, Closed::ResetHere);
        None
    }

    /// A connection error: `GOAWAY` queued, nothing more read or sent after it.
    fn fail(&mut self, code: ErrorCode, violation: Violation) -> Error {
        let error = Error { code, violation };
        if self.failed.is_none() {
            let last = self.peer_last_stream();
            let reason = violation.to_string();
            frame::encode_goaway(&mut self.out, last, code, reason.as_bytes());
            self.failed = Some(error);
        }
        error
    }

    /// Bytes the peer used of the connection's window that no stream holds: granted again
    /// (in batches of half a window, to keep `WINDOW_UPDATE`s few).
    fn give_back(&mut self, n: u32) {
        self.unacked += n;
        if self.unacked >= self.config.connection_window / 2 {
            frame::encode_window_update(&mut self.out, StreamId::ZERO, self.unacked);
            self.recv_window += i64::from(self.unacked);
            self.unacked = 0;
        }
    }

    fn release_flow(&mut self, id: StreamId, n: u32) {
        if let Some(stream) = self.streams.get_mut(&id.get()) {
            if stream.remote_open() {
                stream.unacked += n;
                if stream.unacked >= self.config.stream_window / 2 {
                    frame::encode_window_update(&mut self.out, id, stream.unacked);
                    stream.recv_window += i64::from(stream.unacked);
                    stream.unacked = 0;
                }
            }
        }
        self.give_back(n);
    }

    /// The application is done with `n` body bytes of `stream` ([`Event::Data`]): the peer
    /// may send as much again. Bytes of a stream that has closed since were given back then.
    pub fn release(&mut self, stream: StreamId, n: usize) {
        let Some(s) = self.streams.get_mut(&stream.get()) else {
            return;
        };
        let n = u32::try_from(n).unwrap_or(u32::MAX).min(s.held);
        s.held -= n;
        self.release_flow(stream, n);
    }

    /// Queues body bytes on `stream`, sent as the peer's windows allow.
    pub fn send_data(
        &mut self,
        stream: StreamId,
        data: Bytes,
        end_stream: bool,
    ) -> Result<(), SendError> {
        let s = self.sendable(stream)?;
        if !s.head_sent {
            return Err(SendError::NoStream(stream));
        }
        s.queue.push_back(data);
        s.end_queued = end_stream;
        self.flush(stream);
        Ok(())
    }

    /// Sends as much of `data` on `stream` as the flow-control windows allow now, copied
    /// into the send buffer, and ends the stream with its last byte if `end_stream`; returns
    /// how much went. Nothing goes while body queued by [`send_data`](Self::send_data)
    /// waits: the rest is for that queue. A body within the windows costs no allocation.
    pub fn send_data_now(
        &mut self,
        stream: StreamId,
        data: &[u8],
        end_stream: bool,
    ) -> Result<usize, SendError> {
        let max = self.peer_max_frame as usize;
        let s = self.sendable(stream)?;
        if !s.head_sent {
            return Err(SendError::NoStream(stream));
        }
        if !s.queue.is_empty() {
            return Ok(0);
        }
        let stream_window = s.send_window;
        let mut window = self.send_window.min(stream_window).max(0) as usize;
        let mut sent = 0;
        loop {
            let n = (data.len() - sent).min(window).min(max);
            let end = end_stream && sent + n == data.len();
            if n == 0 && !end {
                break;
            }
            frame::encode_data(&mut self.out, stream, &data[sent..sent + n], end);
            sent += n;
            window -= n;
            if end {
                break;
            }
        }
        self.send_window -= sent as i64;
        if let Some(s) = self.streams.get_mut(&stream.get()) {
            s.send_window -= sent as i64;
        }
        if end_stream && sent == data.len() {
            self.local_ended(stream);
        }
        Ok(sent)
    }

    /// The most a `DATA` frame to the peer may carry (its `SETTINGS_MAX_FRAME_SIZE`).
    #[must_use]
    pub fn max_send_frame(&self) -> usize {
        self.peer_max_frame as usize
    }

    /// Counts `len` bytes of `stream`'s body as sent in one `DATA` frame that the caller
    /// writes itself from where the bytes already are (a piece read into a send ring: no
    /// copy into the send buffer), after all that waits to be sent now
    /// ([`pending`](Self::pending)); the frame's header, to write right before them. Ends
    /// the stream with them if `end_stream`.
    ///
    /// # Errors
    ///
    /// As [`send_data_now`](Self::send_data_now); [`SendError::NoRoom`] when one frame
    /// cannot carry them now: more than [`send_capacity`](Self::send_capacity) or
    /// [`max_send_frame`](Self::max_send_frame).
    pub fn send_data_in_place(
        &mut self,
        stream: StreamId,
        len: usize,
        end_stream: bool,
    ) -> Result<[u8; frame::HEADER_LEN], SendError> {
        let room = self.send_capacity(stream).min(self.max_send_frame());
        let s = self.sendable(stream)?;
        if !s.head_sent {
            return Err(SendError::NoStream(stream));
        }
        if len > room {
            return Err(SendError::NoRoom { len, room });
        }
        s.send_window -= len as i64;
        self.send_window -= len as i64;
        if end_stream {
            self.local_ended(stream);
        }
        let flags = if end_stream {
            frame::flags::END_STREAM
        } else {
            0
        };
        Ok(frame::header(len, frame::kind::DATA, flags, stream))
    }

    /// Ends `stream` with trailers, after the body queued so far.
    pub fn send_trailers<'f>(
        &mut self,
        stream: StreamId,
        fields: impl IntoIterator<Item = (&'f [u8], &'f [u8])>,
    ) -> Result<(), SendError> {
        let s = self.sendable(stream)?;
        if !s.head_sent {
            return Err(SendError::NoStream(stream));
        }
        self.encode_block(&[], fields);
        let block = self.block_out.clone();
        let s = self.sendable(stream)?;
        s.trailers = Some(block);
        s.end_queued = true;
        self.flush(stream);
        Ok(())
    }

    /// Resets `stream` with `code` (`CANCEL`, say, when the handler gave up).
    pub fn reset_stream(&mut self, stream: StreamId, code: ErrorCode) {
        if self.streams.contains_key(&stream.get()) {
            frame::encode_rst_stream(&mut self.out, stream, code);
            self.close(stream, Closed::ResetHere);
        }
    }

    /// Starts a graceful shutdown: `GOAWAY` with `NO_ERROR` naming the last stream the peer
    /// opened; the open streams finish. A server ignores streams opened after it; a client
    /// names none (the server opens none) and sends no further request.
    pub fn go_away(&mut self) {
        if self.going_away.is_none() && self.failed.is_none() {
            let last = self.peer_last_stream();
            self.going_away = Some(last.get());
            frame::encode_goaway(&mut self.out, last, ErrorCode::NO_ERROR, b"");
        }
    }

    /// The last stream the peer opened, as a `GOAWAY` names it: the client's last on a
    /// server; none on a client, the server opening no stream.
    fn peer_last_stream(&self) -> StreamId {
        match self.role {
            Role::Server => StreamId::new(self.last_stream),
            Role::Client => StreamId::ZERO,
        }
    }

    /// Why the peer may not send `HEADERS` on `id`, when it may not: the client opens odd
    /// streams on a server; the server answers only the streams a client opened.
    fn headers_violation(&self, id: StreamId) -> Option<Violation> {
        match self.role {
            Role::Server => (!id.is_client()).then_some(Violation::EvenStreamId(id.get())),
            Role::Client => self.is_idle(id).then_some(Violation::IdleStream("HEADERS")),
        }
    }

    /// Whether `id` was never opened: only the client opens streams (odd ids, in order), the
    /// server pushing none, so an even id is idle whatever the highest open one.
    fn is_idle(&self, id: StreamId) -> bool {
        !id.is_client() || id.get() > self.last_stream
    }

    /// Whether the peer opened `id` after our `GOAWAY`: its frames are dropped (section
    /// 6.8), not answered as if it were closed. Only a client opens streams, so only a
    /// server ignores any.
    fn ignored(&self, id: StreamId) -> bool {
        self.role == Role::Server && self.going_away.is_some_and(|last| id.get() > last)
    }

    /// A stream this side may still send on.
    fn sendable(&mut self, id: StreamId) -> Result<&mut Stream, SendError> {
        if self.failed.is_some() {
            return Err(SendError::ConnectionFailed);
        }
        let stream = self
            .streams
            .get_mut(&id.get())
            .ok_or(SendError::NoStream(id))?;
        if stream.end_queued || stream.state == State::HalfClosedLocal {
            return Err(SendError::AlreadySent(id));
        }
        Ok(stream)
    }

    /// Encodes the `pseudo`-header fields, then `fields`, into `block_out`: names
    /// lowercased, connection-specific ones left out.
    fn encode_block<'f>(
        &mut self,
        pseudo: &[(&[u8], &[u8])],
        fields: impl IntoIterator<Item = (&'f [u8], &'f [u8])>,
    ) {
        self.stage_block(pseudo, fields);
        self.encode_staged();
    }

    /// The first half of [`encode_block`](Self::encode_block): the fields gathered, and
    /// their header list size (section 6.5.2) returned, before the encoder's table moves.
    fn stage_block<'f>(
        &mut self,
        pseudo: &[(&[u8], &[u8])],
        fields: impl IntoIterator<Item = (&'f [u8], &'f [u8])>,
    ) -> usize {
        // Copied into scratch kept from block to block, names lowercased, in the order given:
        // the order of fields of the same name is significant (RFC 9110 section 5.3).
        let (out, ends) = (&mut self.fields_out, &mut self.field_ends);
        out.clear();
        ends.clear();
        let mut push = |name: &[u8], value: &[u8]| {
            let start = out.len();
            out.extend_from_slice(name);
            out[start..].make_ascii_lowercase();
            let name_end = out.len();
            out.extend_from_slice(value);
            ends.push((name_end, out.len()));
        };
        for &(name, value) in pseudo {
            push(name, value);
        }
        for (name, value) in fields {
            if !is_connection_specific(name) {
                push(name, value);
            }
        }
        out.len() + 32 * ends.len()
    }

    /// The second half of [`encode_block`](Self::encode_block).
    fn encode_staged(&mut self) {
        let (out, ends) = (&self.fields_out, &self.field_ends);
        let mut start = 0;
        let fields = ends.iter().map(|&(name_end, end)| {
            let field = Field {
                name: &out[start..name_end],
                value: &out[name_end..end],
                sensitive: false,
            };
            start = end;
            field
        });
        self.block_out.clear();
        self.encoder.encode(fields, &mut self.block_out);
    }

    /// Sends the block in `block_out` as the head of `id`.
    fn send_block(&mut self, id: StreamId, end_stream: bool) {
        let max = self.peer_max_frame as usize;
        frame::encode_headers(&mut self.out, id, &self.block_out, end_stream, max);
        if end_stream {
            self.local_ended(id);
        }
    }

    /// This side ended `id`.
    fn local_ended(&mut self, id: StreamId) {
        if let Some(stream) = self.streams.get_mut(&id.get()) {
            match stream.state {
                State::Open => stream.state = State::HalfClosedLocal,
                _ => self.close(id, Closed::Ended),
            }
        }
    }

    /// Sends what the windows let out of every stream's queue.
    fn flush_all(&mut self) {
        // The streams to flush, listed first (flushing needs the whole connection) in
        // scratch kept from call to call: a connection's WINDOW_UPDATE allocates nothing.
        let mut ids = std::mem::take(&mut self.flush_ids);
        ids.extend(
            self.streams
                .iter()
                .filter(|(_, s)| !s.queue.is_empty() || s.end_queued)
                .map(|(&id, _)| id),
        );
        for &id in &ids {
            self.flush(StreamId::new(id));
        }
        ids.clear();
        self.flush_ids = ids;
    }

    /// Sends what the windows let out of `id`'s queue, and the stream's end once it is out.
    fn flush(&mut self, id: StreamId) {
        let max = self.peer_max_frame as usize;
        let Some(stream) = self.streams.get_mut(&id.get()) else {
            return;
        };
        if stream.state == State::HalfClosedLocal {
            return;
        }
        let mut ended = false;
        loop {
            let buffers = stream.queue.len();
            let Some(front) = stream.queue.front_mut() else {
                break;
            };
            let window = self.send_window.min(stream.send_window);
            // An empty last piece carries END_STREAM, unless trailers will.
            let carries_end = buffers == 1 && stream.end_queued && stream.trailers.is_none();
            if front.is_empty() && !carries_end {
                stream.queue.pop_front();
                continue;
            }
            if window <= 0 && !front.is_empty() {
                break;
            }
            let n = front.len().min(window.max(0) as usize).min(max);
            let chunk = front.split_to(n);
            let last = front.is_empty() && buffers == 1;
            let end = last && stream.end_queued && stream.trailers.is_none();
            if n >= BY_REFERENCE {
                let flags = if end { frame::flags::END_STREAM } else { 0 };
                let header = frame::header(n, frame::kind::DATA, flags, id);
                self.out.extend_from_slice(&header);
                self.pieces.push_back((self.out.len(), chunk));
                self.piece_bytes += n;
            } else {
                frame::encode_data(&mut self.out, id, &chunk, end);
            }
            self.send_window -= n as i64;
            stream.send_window -= n as i64;
            if front.is_empty() {
                stream.queue.pop_front();
            }
            if end {
                ended = true;
                break;
            }
        }
        if !ended && stream.queue.is_empty() && stream.end_queued {
            match stream.trailers.take() {
                Some(block) => frame::encode_headers(&mut self.out, id, &block, true, max),
                None => frame::encode_data(&mut self.out, id, &[], true),
            }
            ended = true;
        }
        if ended {
            self.local_ended(id);
        }
    }
}

/// The body length a head declares, unless the head ends the stream with a body still owed.
fn declared_length(length: Option<u64>, end_stream: bool) -> Result<Option<u64>, &'static str> {
    match length {
        Some(n) if end_stream && n > 0 => Err("content-length without a body"),
        _ => Ok(length),
    }
}

/// HTTP/1.1 fields that HTTP/2 forbids (section 8.2.2).
fn is_connection_specific(name: &[u8]) -> bool {
    [
        &b"connection"[..],
        b"keep-alive",
        b"proxy-connection",
        b"transfer-encoding",
        b"upgrade",
    ]
    .iter()
    .any(|n| n.eq_ignore_ascii_case(name))
}
