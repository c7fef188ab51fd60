//! The connection state machine (sans-IO): bytes in, messages out, automatic replies queued.

use ringwire_wire::Status;

use crate::close::CloseFrame;
use crate::deflate::DeflateParams;
use crate::error::{EncodeError, Error};
use crate::frame::{MAX_CONTROL_PAYLOAD, MAX_HEADER_LEN};
use crate::limits::Limits;
use crate::message::Message;
use crate::read::Reader;
use crate::write::Writer;
use crate::Role;

/// Longest control frame: header plus 125 bytes.
const MAX_CONTROL_FRAME: usize = MAX_HEADER_LEN + MAX_CONTROL_PAYLOAD;

/// An encoded control frame waiting for `poll_transmit`.
type Queued = Option<([u8; MAX_CONTROL_FRAME], usize)>;

/// Where the closing handshake stands (RFC 6455 section 7).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum State {
    /// Messages flow both ways.
    Open,
    /// This endpoint sent a close frame and waits for the peer's.
    CloseSent,
    /// The peer's close frame arrived; the echo is queued.
    CloseReceived,
    /// Both close frames are exchanged (or the connection failed and its close is queued):
    /// once [`poll_transmit`](Sender::poll_transmit) has drained, close TCP.
    Closed,
}

/// One WebSocket connection, sans-IO (the quinn-proto shape).
///
/// - **Bytes in:** [`handle_read`](Connection::handle_read) with the receive ring's readable
///   span; it answers like [`Reader::read`]. A ping queues a pong (only the latest is kept, as
///   RFC 6455 section 5.5.3 allows), a close queues the echo of its code, and a protocol error
///   queues a close with the error's code: the error is returned once, later input is ignored.
/// - **Commands:** [`send`](Sender::send) writes messages, and a close to start the closing
///   handshake, into the caller's buffer (a send-ring reservation).
/// - **Bytes out:** [`poll_transmit`](Sender::poll_transmit) drains queued control frames;
///   call it after every read, before sending more, so a pong or close goes out first.
/// - **Close TCP** when [`may_close_tcp`](Sender::may_close_tcp) says so: the server at once,
///   the client after the server closed (or a timeout), per RFC 6455 section 7.1.1.
///
/// A message may borrow the reader's buffer; to answer it while it is alive (an echo),
/// [`split`](Connection::split) the connection and read through the [`Receiver`].
#[derive(Debug)]
pub struct Connection {
    receiver: Receiver,
    sender: Sender,
}

/// The receiving half: frames in, messages out.
#[derive(Debug)]
pub struct Receiver {
    reader: Reader,
}

/// The sending half: messages, queued replies and the closing handshake.
#[derive(Debug)]
pub struct Sender {
    writer: Writer,
    state: State,
    /// At most one pong and one close wait to be sent.
    pong: Queued,
    close: Queued,
}

impl Connection {
    /// A connection for `role`, after a handshake that negotiated `deflate` (if any; with the
    /// zlib level for what this end sends).
    ///
    /// # Errors
    ///
    /// A client whose OS random source failed (mask keys need a secure seed).
    pub fn new(
        role: Role,
        limits: Limits,
        deflate: Option<(&DeflateParams, u32)>,
    ) -> Result<Self, getrandom::Error> {
        let mut writer = Writer::new(role)?;
        if let Some((params, level)) = deflate {
            writer = writer.with_deflate(params, level);
        }
        Ok(Self {
            receiver: Receiver {
                reader: Reader::new(role, limits, deflate.map(|(p, _)| p)),
            },
            sender: Sender {
                writer,
                state: State::Open,
                pong: None,
                close: None,
            },
        })
    }

    /// Both halves, so a message read through one can be answered through the other.
    #[inline]
    pub fn split(&mut self) -> (&mut Receiver, &mut Sender) {
        (&mut self.receiver, &mut self.sender)
    }

    /// The sending half.
    #[inline]
    pub fn sender(&mut self) -> &mut Sender {
        &mut self.sender
    }

    /// Reads from the front of `buf`: [`Receiver::handle_read`].
    #[inline]
    pub fn handle_read<'a>(
        &'a mut self,
        buf: &'a mut [u8],
    ) -> Result<Status<Option<Message<'a>>>, Error> {
        self.receiver.handle_read(buf, &mut self.sender)
    }

    /// The closing handshake's progress.
    #[must_use]
    pub fn state(&self) -> State {
        self.sender.state
    }

    /// The bounds on what the peer may send.
    #[must_use]
    pub fn limits(&self) -> &Limits {
        self.receiver.reader.limits()
    }
}

impl Receiver {
    /// Reads from the front of `buf` (see [`Reader::read`]) and queues the replies pings and
    /// closes call for in `sender`. After the connection closed, input is consumed and ignored.
    pub fn handle_read<'a>(
        &'a mut self,
        buf: &'a mut [u8],
        sender: &mut Sender,
    ) -> Result<Status<Option<Message<'a>>>, Error> {
        if matches!(sender.state, State::Closed | State::CloseReceived) {
            return Ok(if buf.is_empty() {
                Status::Partial { at_least: 1 }
            } else {
                Status::Complete(None, buf.len())
            });
        }
        let status = match self.reader.read(buf) {
            Ok(status) => status,
            Err(err) => return Err(Self::failed(err, sender)),
        };
        match status {
            Status::Complete(Some(Message::Ping(payload)), _) if sender.state == State::Open => {
                let mut frame = [0; MAX_CONTROL_FRAME];
                // A ping payload is at most 125 bytes, so this cannot fail.
                if let Ok(n) = sender.writer.write(&Message::Pong(payload), &mut frame) {
                    sender.pong = Some((frame, n));
                }
            }
            Status::Complete(Some(Message::Close(close)), _) => {
                if sender.state == State::Open {
                    // Echo the code (not the reason), or send no code if none came.
                    sender.queue_close(close.map(|c| CloseFrame {
                        code: c.code,
                        reason: "",
                    }));
                    sender.pong = None;
                    sender.state = State::CloseReceived;
                } else {
                    sender.state = State::Closed;
                }
            }
            _ => {}
        }
        Ok(status)
    }

    /// The commonest frame, when it is at the front of `buf`: a whole, unfragmented data
    /// frame with no reply to queue for it, unmasked in place. Whether it is text and where
    /// its payload lies (it ends the frame); nothing is borrowed, so that the caller can
    /// build the message in registers ([`data_message`](Self::data_message)) or fall back
    /// to [`handle_read`](Self::handle_read).
    #[cfg(any(feature = "blocking", feature = "tokio"))]
    #[inline]
    pub(crate) fn whole_data_frame(
        &mut self,
        buf: &mut [u8],
        sender: &Sender,
    ) -> Option<(bool, std::ops::Range<usize>)> {
        if sender.state != State::Open {
            return None;
        }
        self.reader.whole_single_frame(buf)
    }

    /// The message of a frame [`whole_data_frame`](Self::whole_data_frame) found; a text
    /// payload that is not UTF-8 fails the connection.
    #[cfg(any(feature = "blocking", feature = "tokio"))]
    #[inline]
    pub(crate) fn data_message<'a>(
        &self,
        payload: &'a [u8],
        text: bool,
        sender: &mut Sender,
    ) -> Result<Message<'a>, Error> {
        if !text {
            return Ok(Message::Binary(payload));
        }
        match simdutf8::basic::from_utf8(payload) {
            Ok(text) => Ok(Message::Text(text)),
            Err(_) => Err(Self::failed(self.reader.fail_utf8(), sender)),
        }
    }

    /// A protocol error: the close its code calls for is queued, and the connection is over.
    fn failed(err: Error, sender: &mut Sender) -> Error {
        if sender.state == State::Open {
            sender.queue_close(Some(CloseFrame {
                code: err.close_code(),
                reason: "",
            }));
        }
        sender.state = State::Closed;
        err
    }
}

impl Sender {
    /// The closing handshake's progress.
    #[must_use]
    pub fn state(&self) -> State {
        self.state
    }

    /// The writer, to set a fragment size or write headers for `writev`.
    pub fn writer_mut(&mut self) -> &mut Writer {
        &mut self.writer
    }

    fn queue_close(&mut self, close: Option<CloseFrame<'_>>) {
        let mut frame = [0; MAX_CONTROL_FRAME];
        // The code is one this crate received (so valid) or chose, with no reason.
        if let Ok(n) = self.writer.write(&Message::Close(close), &mut frame) {
            self.close = Some((frame, n));
        }
    }

    /// Writes queued control frames (pong first, then close) into `out`; returns the bytes
    /// written, 0 when nothing is queued.
    ///
    /// # Errors
    ///
    /// [`BufferFull`](EncodeError::BufferFull) when `out` cannot take the next frame.
    pub fn poll_transmit(&mut self, out: &mut [u8]) -> Result<usize, EncodeError> {
        let mut at = 0;
        for slot in [&mut self.pong, &mut self.close] {
            if let Some((frame, n)) = slot {
                let Some(dst) = out.get_mut(at..at + *n) else {
                    return if at > 0 {
                        Ok(at)
                    } else {
                        Err(EncodeError::BufferFull { needed: *n })
                    };
                };
                dst.copy_from_slice(&frame[..*n]);
                at += *n;
                *slot = None;
            }
        }
        if at > 0 && self.state == State::CloseReceived && self.close.is_none() {
            self.state = State::Closed;
        }
        Ok(at)
    }

    /// Whether frames are queued for [`poll_transmit`](Sender::poll_transmit).
    #[must_use]
    #[inline]
    pub fn wants_transmit(&self) -> bool {
        self.pong.is_some() || self.close.is_some()
    }

    /// An upper bound on the bytes [`send`](Sender::send) needs for `message`.
    #[must_use]
    pub fn max_encoded_len(&self, message: &Message<'_>) -> usize {
        self.writer.max_encoded_len(message)
    }

    /// Writes a message into `out`; returns the bytes written. A close starts the closing
    /// handshake: keep reading until the peer's close arrives.
    ///
    /// # Errors
    ///
    /// [`Closed`](EncodeError::Closed) once this endpoint's close is sent or queued, and the
    /// errors of [`Writer::write`].
    pub fn send(&mut self, message: &Message<'_>, out: &mut [u8]) -> Result<usize, EncodeError> {
        if self.state != State::Open {
            return Err(EncodeError::Closed);
        }
        let n = self.writer.write(message, out)?;
        if let Message::Close(_) = message {
            self.state = State::CloseSent;
        }
        Ok(n)
    }

    /// Whether this endpoint should close the TCP connection now: the handshake is over and
    /// nothing is queued. A server closes first; a client may too if the server does not.
    #[must_use]
    #[inline]
    pub fn may_close_tcp(&self) -> bool {
        self.state == State::Closed && !self.wants_transmit()
    }
}
