//! A WebSocket over a tokio stream: the sans-IO [`Connection`] driven by
//! `ringwire-io`'s transports (feature `tokio`).
//!
//! Messages are read zero-copy: an unfragmented, uncompressed one is a slice
//! of the receive ring, unmasked where it arrived. Pings are answered and
//! the closing handshake completed by the socket itself. A server gets one
//! from an upgraded connection ([`WebSocket::from_parts`]); a client from
//! [`WebSocket::connect`].

use std::fmt;
use std::io;

use polonius_the_crab::prelude::*;
use ringwire_http1::{Method, ResponseParser, Status as HeadStatus};
use ringwire_io::tokio::{AsyncRecvTransport, AsyncSendTransport, AsyncStream};
use ringwire_io::TransportError;

use crate::handshake::{ClientHandshake, HandshakeError, Negotiated};
use crate::{
    CloseCode, CloseFrame, Connection, DeflateConfig, Limits, Message, OpCode, Role, Sender, State,
    Status,
};

/// A WebSocket over a tokio stream, on the connection's own rings.
pub struct WebSocket<S> {
    rx: AsyncRecvTransport<S>,
    tx: AsyncSendTransport<S>,
    conn: Connection,
    /// Bytes of the last message handed out, consumed before the next read.
    consumed: usize,
}

/// Sends on a [`WebSocket`] while a message read from it is still borrowed
/// (to echo it, say).
pub struct Reply<'w, S> {
    tx: &'w mut AsyncSendTransport<S>,
    sender: &'w mut Sender,
}

impl<S: AsyncStream> WebSocket<S> {
    /// A socket over `rx` and `tx` (an upgraded server connection: `rx`
    /// already holds whatever the client sent after its request).
    pub fn from_parts(
        rx: AsyncRecvTransport<S>,
        tx: AsyncSendTransport<S>,
        conn: Connection,
    ) -> Self {
        WebSocket {
            rx,
            tx,
            conn,
            consumed: 0,
        }
    }

    /// Opens a WebSocket as a client over `rx` and `tx` (one stream's two
    /// halves): sends the upgrade request for `path` on `host`, checks the
    /// `101`, and keeps any frames that came with it.
    ///
    /// # Errors
    ///
    /// The connection failed, the answer is not a valid `101`
    /// ([`SocketError::Handshake`]), or the OS random source failed.
    pub async fn connect(
        mut rx: AsyncRecvTransport<S>,
        mut tx: AsyncSendTransport<S>,
        host: &str,
        path: &str,
        protocols: &[&str],
        deflate: Option<DeflateConfig>,
        limits: Limits,
    ) -> Result<(Self, Negotiated), SocketError> {
        let handshake = ClientHandshake::new(protocols, deflate).map_err(io::Error::other)?;
        let buf = tx.reserve(512 + host.len() + path.len()).await?;
        let n = handshake
            .write_request(host, path, buf)
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e.to_string()))?;
        tx.commit(n);
        tx.flush().await?;
        let mut parser = ResponseParser::default();
        let (negotiated, head_len) = loop {
            match parser.parse(rx.data(), Method::Get) {
                Ok(HeadStatus::Complete(response, n)) => {
                    break (
                        handshake
                            .verify(&response)
                            .map_err(SocketError::Handshake)?,
                        n,
                    );
                }
                Ok(HeadStatus::Partial { at_least }) => {
                    if rx.fill(at_least).await? == 0 {
                        return Err(io::Error::from(io::ErrorKind::UnexpectedEof).into());
                    }
                }
                Err(e) => {
                    return Err(io::Error::new(io::ErrorKind::InvalidData, e.to_string()).into());
                }
            }
        };
        rx.consume(head_len);
        let level = deflate.map_or(1, |d| d.level);
        let conn = Connection::new(
            Role::Client,
            limits,
            negotiated.deflate.as_ref().map(|p| (p, level)),
        )
        .map_err(io::Error::other)?;
        Ok((Self::from_parts(rx, tx, conn), negotiated))
    }
}

/// Why a WebSocket stopped.
#[derive(Debug)]
pub enum SocketError {
    /// The peer broke the protocol; the close frame with the matching code
    /// was sent.
    Protocol(crate::Error),
    /// The connection failed, or a message does not fit the rings.
    Transport(TransportError),
    /// A message could not be encoded (the socket is closing, or a control
    /// frame over 125 bytes).
    Encode(crate::EncodeError),
    /// The server's answer to a client's upgrade request was refused.
    Handshake(HandshakeError),
}

impl fmt::Display for SocketError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SocketError::Protocol(e) => write!(f, "protocol error: {e}"),
            SocketError::Transport(e) => write!(f, "transport: {e}"),
            SocketError::Encode(e) => write!(f, "cannot send: {e}"),
            SocketError::Handshake(e) => write!(f, "handshake: {e}"),
        }
    }
}

impl std::error::Error for SocketError {}

impl From<TransportError> for SocketError {
    fn from(e: TransportError) -> Self {
        SocketError::Transport(e)
    }
}

impl From<io::Error> for SocketError {
    fn from(e: io::Error) -> Self {
        SocketError::Transport(e.into())
    }
}

/// Messages larger than this skip the copy into the send ring.
const LARGE: usize = 64 << 10;

type Received<'w, S> = Option<Result<(Message<'w>, Reply<'w, S>), SocketError>>;

/// One step of reading: what `recv` returns, or what it needs first.
enum Step<'w, S> {
    Done(Received<'w, S>),
    /// A frame was taken in without a message (a fragment, or input after
    /// the close): read the next one.
    Again,
    /// This many bytes buffered in all.
    More(usize),
}

impl<S: AsyncStream> WebSocket<S> {
    /// The next message (pings and closes included, after the socket has
    /// queued its answer), with a [`Reply`] to answer it by; `None` once the
    /// closing handshake is over or the peer is gone.
    pub async fn recv(&mut self) -> Received<'_, S> {
        let mut this = self;
        loop {
            // A pong or close queued while the last message was read goes
            // out before the next frame is read: every ping gets its pong.
            if let Err(e) = this.flush_replies().await {
                return Some(Err(e));
            }
            // A message borrows the ring; the loop that fills the ring must
            // not, which plain borrows cannot express yet.
            let mut at_least = None;
            polonius!(|this| -> Received<'polonius, S> {
                match this.step() {
                    Step::Done(received) => polonius_return!(received),
                    Step::Again => {}
                    Step::More(n) => at_least = Some(n),
                }
            });
            if let Err(e) = this.flush_replies().await {
                return Some(Err(e));
            }
            if this.conn.sender().may_close_tcp() {
                // Both closes exchanged: a server closes TCP first.
                return None;
            }
            let Some(at_least) = at_least else { continue };
            match this.rx.fill(at_least).await {
                Ok(0) => return None,
                Ok(_) => {}
                Err(e) => return Some(Err(e.into())),
            }
        }
    }

    fn step(&mut self) -> Step<'_, S> {
        self.rx.consume(std::mem::take(&mut self.consumed));
        let (receiver, sender) = self.conn.split();
        if sender.may_close_tcp() {
            return Step::Done(None);
        }
        match receiver.handle_read(self.rx.data_mut(), sender) {
            Ok(Status::Complete(message, n)) => {
                self.consumed = n;
                match message {
                    Some(message) => Step::Done(Some(Ok((
                        message,
                        Reply {
                            tx: &mut self.tx,
                            sender,
                        },
                    )))),
                    None => Step::Again,
                }
            }
            Ok(Status::Partial { at_least }) => Step::More(at_least),
            Err(e) => Step::Done(Some(Err(SocketError::Protocol(e)))),
        }
    }

    /// Sends queued pongs and closes.
    async fn flush_replies(&mut self) -> Result<(), SocketError> {
        Reply {
            tx: &mut self.tx,
            sender: self.conn.sender(),
        }
        .flush_replies()
        .await
    }

    /// Sends a message.
    ///
    /// # Errors
    ///
    /// The connection failed, or the socket is closing.
    pub async fn send(&mut self, message: &Message<'_>) -> Result<(), SocketError> {
        Reply {
            tx: &mut self.tx,
            sender: self.conn.sender(),
        }
        .send(message)
        .await
    }

    /// Starts the closing handshake with `code` and `reason`; keep calling
    /// [`recv`](Self::recv) until it returns `None` for the peer's answer.
    ///
    /// # Errors
    ///
    /// As [`send`](Self::send).
    pub async fn close(&mut self, code: CloseCode, reason: &str) -> Result<(), SocketError> {
        self.send(&Message::Close(Some(CloseFrame { code, reason })))
            .await
    }

    /// Where the closing handshake stands.
    pub fn state(&self) -> State {
        self.conn.state()
    }
}

impl<S: AsyncStream> Reply<'_, S> {
    /// Sends a message; large unmasked, uncompressed payloads go out from
    /// where they lie (a gathered write), uncopied.
    ///
    /// # Errors
    ///
    /// The connection failed, or the socket is closing.
    pub async fn send(&mut self, message: &Message<'_>) -> Result<(), SocketError> {
        self.flush_replies().await?;
        let need = self.sender.max_encoded_len(message);
        if need <= LARGE {
            let buf = self.tx.reserve(need).await?;
            let n = self
                .sender
                .send(message, buf)
                .map_err(SocketError::Encode)?;
            self.tx.commit(n);
        } else {
            self.send_large(message, need).await?;
        }
        self.tx.flush().await?;
        Ok(())
    }

    /// A message too large to copy into the send ring: an uncompressed one
    /// goes out as a header in the ring and its payload from where it lies
    /// (a server does not mask); a compressed one is encoded into a buffer
    /// of its own first.
    async fn send_large(&mut self, message: &Message<'_>, need: usize) -> Result<(), SocketError> {
        let (opcode, payload) = match message {
            Message::Text(text) => (OpCode::Text, text.as_bytes()),
            Message::Binary(bytes) => (OpCode::Binary, *bytes),
            // Control frames are at most 125 bytes: never large.
            _ => return Err(SocketError::Encode(crate::EncodeError::ControlFrameTooLong)),
        };
        if self.sender.state() != State::Open {
            return Err(SocketError::Encode(crate::EncodeError::Closed));
        }
        if need <= payload.len() + crate::MAX_HEADER_LEN {
            // Uncompressed: `need` is exact.
            let header = self
                .sender
                .writer_mut()
                .header(opcode, true, payload.len() as u64);
            if header.mask.is_none() {
                let buf = self.tx.reserve(crate::MAX_HEADER_LEN).await?;
                let n = header.write(buf).map_err(SocketError::Encode)?;
                self.tx.commit(n);
                self.tx.send_vectored(&[payload]).await?;
                return Ok(());
            }
        }
        let mut encoded = vec![0; need];
        let n = self
            .sender
            .send(message, &mut encoded)
            .map_err(SocketError::Encode)?;
        self.tx.send_vectored(&[&encoded[..n]]).await?;
        Ok(())
    }

    async fn flush_replies(&mut self) -> Result<(), SocketError> {
        if self.sender.wants_transmit() {
            let buf = self.tx.reserve(2 * crate::MAX_HEADER_LEN + 250).await?;
            let n = self
                .sender
                .poll_transmit(buf)
                .map_err(SocketError::Encode)?;
            self.tx.commit(n);
            self.tx.flush().await?;
        }
        Ok(())
    }

    /// Where the closing handshake stands.
    pub fn state(&self) -> State {
        self.sender.state()
    }
}

impl<S> fmt::Debug for WebSocket<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WebSocket")
            .field("state", &self.conn.state())
            .finish_non_exhaustive()
    }
}

impl<S> fmt::Debug for Reply<'_, S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Reply")
            .field("state", &self.sender.state())
            .finish_non_exhaustive()
    }
}
