//! WebSocket on the server: the handshake's answer, then a socket over the
//! connection's own rings.
//!
//! ```no_run
//! use ringwire_server::ws::{self, Message, WsConfig};
//! use ringwire_server::{Request, Response};
//!
//! async fn echo(request: &Request<'_>) -> Response {
//!     ws::accept(request, &WsConfig::default(), |mut socket| {
//!         Box::pin(async move {
//!             while let Some(Ok((message, mut reply))) = socket.recv().await {
//!                 if matches!(message, Message::Text(_) | Message::Binary(_))
//!                     && reply.send(&message).await.is_err()
//!                 {
//!                     break;
//!                 }
//!             }
//!         })
//!     })
//! }
//! ```
//!
//! Messages are read zero-copy: an unfragmented, uncompressed one is a slice
//! of the receive ring, unmasked where it arrived. Pings are answered and the
//! closing handshake completed by the socket itself.

use std::fmt;
use std::io;

use polonius_the_crab::prelude::*;
use ringwire_io::tokio::{AsyncRecvTransport, AsyncSendTransport};
use ringwire_io::TransportError;
use ringwire_ws::handshake::{self, HandshakeError};
use ringwire_ws::{Connection, OpCode, Role, Sender, State, Status};
use tokio::net::TcpStream;

pub use ringwire_ws::{CloseCode, CloseFrame, DeflateConfig, Limits, Message};

use crate::{Request, Response, UpgradeFuture, Upgraded};

/// How [`accept`] sets WebSockets up.
#[derive(Debug, Clone)]
pub struct WsConfig {
    /// Subprotocols in the server's order of preference; the first the
    /// client offers is chosen.
    pub protocols: Vec<&'static str>,
    /// permessage-deflate, when the client offers it (`None`: never).
    pub deflate: Option<DeflateConfig>,
    /// Frame and message size limits (`1009` past them).
    pub limits: Limits,
}

impl Default for WsConfig {
    /// No subprotocol, permessage-deflate accepted, default limits.
    fn default() -> Self {
        WsConfig {
            protocols: Vec::new(),
            deflate: Some(DeflateConfig::default()),
            limits: Limits::default(),
        }
    }
}

/// Answers a WebSocket upgrade request: `101`, after which `on_open` runs
/// with the [`WebSocket`] until its future ends; or, for a request that is
/// not a valid upgrade, the status the handshake names (`400`, `426` with
/// the version this server speaks, ...).
pub fn accept<F>(request: &Request<'_>, config: &WsConfig, on_open: F) -> Response
where
    F: for<'s> FnOnce(WebSocket<'s>) -> UpgradeFuture<'s> + Send + 'static,
{
    let accepted =
        match handshake::accept(request.head(), &config.protocols, config.deflate.as_ref()) {
            Ok(accepted) => accepted,
            Err(e) => return refused(&e),
        };
    let deflate = accepted
        .deflate()
        .map(|params| (params, config.deflate.map_or(1, |d| d.level)));
    let conn = match Connection::new(Role::Server, config.limits, deflate) {
        Ok(conn) => conn,
        Err(e) => {
            log::warn!("websocket: {e}");
            return Response::new(500);
        }
    };
    let protocol = accepted.protocol().map(str::to_owned);
    let mut response = Response::upgrade("websocket", move |up: Upgraded<'_>| {
        on_open(WebSocket {
            rx: up.rx,
            tx: up.tx,
            conn,
            consumed: 0,
        })
    })
    .header("sec-websocket-accept", accept_value(request));
    if let Some(protocol) = protocol {
        response = response.header("sec-websocket-protocol", protocol);
    }
    if let Some(params) = accepted.deflate() {
        response = response.header("sec-websocket-extensions", params.response());
    }
    response
}

/// `Sec-WebSocket-Accept` for the request's key (already checked by the
/// handshake).
fn accept_value(request: &Request<'_>) -> String {
    let key = request.header("sec-websocket-key").unwrap_or_default();
    handshake::accept_key(key.trim_ascii())
}

/// A WebSocket echo endpoint: every text and binary message comes back as
/// it was sent (the demo site's `/ws/echo`; also what Autobahn's fuzzing
/// client expects of a server).
pub async fn echo(request: &Request<'_>) -> Response {
    accept(request, &WsConfig::default(), |mut socket| {
        Box::pin(async move {
            while let Some(received) = socket.recv().await {
                let sent = match received {
                    Ok((message @ (Message::Text(_) | Message::Binary(_)), mut reply)) => {
                        reply.send(&message).await
                    }
                    Ok(_) => Ok(()),
                    Err(e) => Err(e),
                };
                if let Err(e) = sent {
                    log::debug!("websocket echo: {e}");
                    break;
                }
            }
        })
    })
}

fn refused(e: &HandshakeError) -> Response {
    let response = Response::new(e.status()).body(format!("{e}\n"));
    if e.status() == 426 {
        response
            .header("upgrade", "websocket")
            .header("sec-websocket-version", "13")
    } else {
        response
    }
}

/// A WebSocket over an upgraded connection.
pub struct WebSocket<'s> {
    rx: AsyncRecvTransport<&'s TcpStream>,
    tx: AsyncSendTransport<&'s TcpStream>,
    conn: Connection,
    /// Bytes of the last message handed out, consumed before the next read.
    consumed: usize,
}

/// Sends on a [`WebSocket`] while a message read from it is still borrowed
/// (to echo it, say).
pub struct Reply<'w, 's> {
    tx: &'w mut AsyncSendTransport<&'s TcpStream>,
    sender: &'w mut Sender,
}

/// Why a WebSocket stopped.
#[derive(Debug)]
pub enum WsError {
    /// The peer broke the protocol; the close frame with the matching code
    /// was sent.
    Protocol(ringwire_ws::Error),
    /// The connection failed, or a message does not fit the rings.
    Transport(TransportError),
    /// A message could not be encoded (the socket is closing, or a control
    /// frame over 125 bytes).
    Encode(ringwire_ws::EncodeError),
}

impl fmt::Display for WsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            WsError::Protocol(e) => write!(f, "protocol error: {e}"),
            WsError::Transport(e) => write!(f, "transport: {e}"),
            WsError::Encode(e) => write!(f, "cannot send: {e}"),
        }
    }
}

impl std::error::Error for WsError {}

impl From<TransportError> for WsError {
    fn from(e: TransportError) -> Self {
        WsError::Transport(e)
    }
}

impl From<io::Error> for WsError {
    fn from(e: io::Error) -> Self {
        WsError::Transport(e.into())
    }
}

/// Messages larger than this skip the copy into the send ring.
const LARGE: usize = 64 << 10;

type Received<'w, 's> = Option<Result<(Message<'w>, Reply<'w, 's>), WsError>>;

/// One step of reading: what `recv` returns, or what it needs first.
enum Step<'w, 's> {
    Done(Received<'w, 's>),
    /// A frame was taken in without a message (a fragment, or input after
    /// the close): read the next one.
    Again,
    /// This many bytes buffered in all.
    More(usize),
}

impl<'s> WebSocket<'s> {
    /// The next message (pings and closes included, after the socket has
    /// queued its answer), with a [`Reply`] to answer it by; `None` once the
    /// closing handshake is over or the peer is gone.
    pub async fn recv(&mut self) -> Received<'_, 's> {
        let mut this = self;
        loop {
            // A message borrows the ring; the loop that fills the ring must
            // not, which plain borrows cannot express yet.
            let mut at_least = None;
            polonius!(|this| -> Received<'polonius, 's> {
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

    fn step(&mut self) -> Step<'_, 's> {
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
            Err(e) => Step::Done(Some(Err(WsError::Protocol(e)))),
        }
    }

    /// Sends queued pongs and closes.
    async fn flush_replies(&mut self) -> Result<(), WsError> {
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
    pub async fn send(&mut self, message: &Message<'_>) -> Result<(), WsError> {
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
    pub async fn close(&mut self, code: CloseCode, reason: &str) -> Result<(), WsError> {
        self.send(&Message::Close(Some(CloseFrame { code, reason })))
            .await
    }

    /// Where the closing handshake stands.
    pub fn state(&self) -> State {
        self.conn.state()
    }
}

impl Reply<'_, '_> {
    /// Sends a message; large unmasked, uncompressed payloads go out from
    /// where they lie (a gathered write), uncopied.
    ///
    /// # Errors
    ///
    /// The connection failed, or the socket is closing.
    pub async fn send(&mut self, message: &Message<'_>) -> Result<(), WsError> {
        self.flush_replies().await?;
        let need = self.sender.max_encoded_len(message);
        if need <= LARGE {
            let buf = self.tx.reserve(need).await?;
            let n = self.sender.send(message, buf).map_err(WsError::Encode)?;
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
    async fn send_large(&mut self, message: &Message<'_>, need: usize) -> Result<(), WsError> {
        let (opcode, payload) = match message {
            Message::Text(text) => (OpCode::Text, text.as_bytes()),
            Message::Binary(bytes) => (OpCode::Binary, *bytes),
            // Control frames are at most 125 bytes: never large.
            _ => {
                return Err(WsError::Encode(
                    ringwire_ws::EncodeError::ControlFrameTooLong,
                ))
            }
        };
        if self.sender.state() != State::Open {
            return Err(WsError::Encode(ringwire_ws::EncodeError::Closed));
        }
        if need <= payload.len() + ringwire_ws::MAX_HEADER_LEN {
            // Uncompressed: `need` is exact.
            let header = self
                .sender
                .writer_mut()
                .header(opcode, true, payload.len() as u64);
            if header.mask.is_none() {
                let buf = self.tx.reserve(ringwire_ws::MAX_HEADER_LEN).await?;
                let n = header.write(buf).map_err(WsError::Encode)?;
                self.tx.commit(n);
                self.tx.send_vectored(&[payload]).await?;
                return Ok(());
            }
        }
        let mut encoded = vec![0; need];
        let n = self
            .sender
            .send(message, &mut encoded)
            .map_err(WsError::Encode)?;
        self.tx.send_vectored(&[&encoded[..n]]).await?;
        Ok(())
    }

    async fn flush_replies(&mut self) -> Result<(), WsError> {
        if self.sender.wants_transmit() {
            let buf = self
                .tx
                .reserve(2 * ringwire_ws::MAX_HEADER_LEN + 250)
                .await?;
            let n = self.sender.poll_transmit(buf).map_err(WsError::Encode)?;
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

impl fmt::Debug for WebSocket<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WebSocket")
            .field("state", &self.conn.state())
            .finish_non_exhaustive()
    }
}

impl fmt::Debug for Reply<'_, '_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Reply")
            .field("state", &self.sender.state())
            .finish_non_exhaustive()
    }
}
