//! A WebSocket over blocking std I/O (feature `blocking`): the sans-IO
//! [`Connection`] driven by `ringwire-io`'s [`RecvTransport`] and
//! [`SendTransport`], for programs without an async runtime. The same API
//! as the tokio [`socket`](crate::socket), minus `async`.
//!
//! ```no_run
//! use std::net::TcpStream;
//!
//! use ringwire_io::{Duplex, TransportConfig};
//! use ringwire_ws::blocking::WebSocket;
//! use ringwire_ws::{DeflateConfig, Limits, Message};
//! use ringwire_ws::handshake::Offer;
//!
//! let stream = TcpStream::connect("127.0.0.1:8080")?;
//! let Duplex { rx, tx } = Duplex::tcp(TransportConfig::new(64 << 10, 32 << 20), &stream)?;
//! let (mut socket, _) = WebSocket::connect(
//!     rx, tx, "127.0.0.1:8080", "/ws/echo",
//!     &Offer { deflate: Some(DeflateConfig::default()), ..Offer::default() },
//!     Limits::default(),
//! )?;
//! socket.send(&Message::Text("hello"))?;
//! if let Some(Ok((message, _reply))) = socket.recv() {
//!     assert_eq!(message, Message::Text("hello"));
//! }
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::fmt;
use std::io::{Read, Write};
use std::ops::ControlFlow;

use polonius_the_crab::prelude::*;
use ringwire_io::{RecvTransport, SendTransport, ShutdownWrite};

use crate::drive::{
    self, is_keepalive_pong, Answer, Keepalive, Outgoing, Step, Upgrade, KEEPALIVE_PING,
};
use crate::handshake::{Negotiated, Offer};
use crate::{CloseCode, CloseFrame, Connection, Limits, Message, Sender, State};

pub use crate::drive::SocketError;

/// A WebSocket over a blocking stream's two halves, on its own rings.
pub struct WebSocket<R, W> {
    rx: RecvTransport<R>,
    tx: SendTransport<W>,
    conn: Connection,
    /// Bytes of the last message handed out, consumed before the next read.
    consumed: usize,
    /// Pings while the peer is quiet ([`keepalive`](WebSocket::keepalive)).
    keepalive: Option<Keepalive>,
}

/// Sends on a [`WebSocket`] while a message read from it is still borrowed
/// (to echo it, say).
pub struct Reply<'w, W> {
    tx: &'w mut SendTransport<W>,
    sender: &'w mut Sender,
}

/// What [`WebSocket::recv`] returns.
type Received<'w, W> = Option<Result<(Message<'w>, Reply<'w, W>), SocketError>>;

impl<R: Read, W: Write + ShutdownWrite> WebSocket<R, W> {
    /// A socket over `rx` and `tx` after a handshake done elsewhere (`rx`
    /// may already hold frames).
    ///
    /// The receive ring's growth bound is raised, if need be, to hold the largest frame
    /// `conn`'s limits allow.
    pub fn from_parts(mut rx: RecvTransport<R>, tx: SendTransport<W>, conn: Connection) -> Self {
        drive::fit_frames(rx.ring_mut(), conn.limits());
        WebSocket {
            rx,
            tx,
            conn,
            consumed: 0,
            keepalive: None,
        }
    }

    /// Pings the peer once a read has waited `every` for it, and fails [`recv`](Self::recv)
    /// with [`SocketError::PeerSilent`] when the next wait, after the ping, ends the same way:
    /// as the tokio socket's [`keepalive`](crate::socket::WebSocket::keepalive). A blocking
    /// socket has no timer: the wait is the stream's read timeout, which the caller sets to
    /// `every` (`TcpStream::set_read_timeout`; `ringwire-client`'s blocking WebSockets do it
    /// for their `keepalive` option). `None`, the default: no pings, and a read that times
    /// out is an error. The pongs that answer these pings are not handed out by `recv`.
    pub fn keepalive(&mut self, every: Option<std::time::Duration>) {
        self.keepalive = every.map(Keepalive::new);
    }

    /// Opens a WebSocket as a client over `rx` and `tx` (one stream's two
    /// halves, as [`Duplex::tcp`](ringwire_io::Duplex::tcp) makes them):
    /// sends the upgrade request for `path` on `host` with what `offer` holds,
    /// checks the `101`, and keeps any frames that came with it.
    ///
    /// # Errors
    ///
    /// The connection failed, the answer is not a valid `101`
    /// ([`SocketError::Handshake`]), or the OS random source failed.
    pub fn connect(
        mut rx: RecvTransport<R>,
        mut tx: SendTransport<W>,
        host: &str,
        path: &str,
        offer: &Offer<'_>,
        limits: Limits,
    ) -> Result<(Self, Negotiated), SocketError> {
        let mut upgrade = Upgrade::new(offer, limits)?;
        let buf = tx.reserve(upgrade.request_len(host, path))?;
        let n = upgrade.write_request(host, path, buf)?;
        tx.commit(n);
        tx.flush()?;
        loop {
            match upgrade.read_response(rx.data())? {
                Answer::Open(conn, negotiated, head_len) => {
                    rx.consume(head_len);
                    return Ok((Self::from_parts(rx, tx, *conn), negotiated));
                }
                Answer::More(at_least) => {
                    if rx.fill(at_least)? == 0 {
                        return Err(drive::eof_in_upgrade());
                    }
                }
            }
        }
    }

    /// The next message (pings and closes included, after the socket has
    /// queued its answer), with a [`Reply`] to answer it by; `None` once the
    /// closing handshake is over or the peer is gone.
    ///
    /// A peer that breaks the protocol is sent the close its error calls for, and the error
    /// comes back once that peer has closed too (what it still sends read and dropped, at
    /// most 16 MiB; each read waits as long as the stream's read timeout lets it), so that
    /// the close reaches it rather than a reset.
    // Inline and small, the rest out of line in `advance`: a message whole
    // in the ring comes back in registers, not through a stack copy the
    // caller's reads would stall on.
    #[inline]
    pub fn recv(&mut self) -> Received<'_, W> {
        let mut this = self;
        loop {
            // A pong or close queued while the last message was read goes
            // out before the next frame is read: every ping gets its pong.
            if this.conn.sender().wants_transmit() {
                if let Err(e) = this.reply().flush_replies() {
                    return Some(Err(e));
                }
            }
            // A message borrows the ring; the loop that fills the ring must
            // not, which plain borrows cannot express yet.
            let mut next = Ok(None);
            polonius!(|this| -> Received<'polonius, W> {
                match this.read_step() {
                    ControlFlow::Break(received) => polonius_return!(received),
                    ControlFlow::Continue(more) => next = more,
                }
            });
            if let ControlFlow::Break(end) = this.advance(next) {
                return end.map(Err);
            }
        }
    }

    /// After a step without a message: the replies it queued go out, then
    /// the ring is refilled. `Break` ends [`recv`](Self::recv) (`None`: the
    /// connection is over).
    #[inline(never)]
    fn advance(
        &mut self,
        next: Result<Option<usize>, SocketError>,
    ) -> ControlFlow<Option<SocketError>> {
        if let Err(e) = self.reply().flush_replies() {
            return ControlFlow::Break(Some(e));
        }
        let at_least = match next {
            Ok(at_least) => at_least,
            // A protocol error: messages queued before it (and its close) still go out.
            Err(e) => {
                if self.tx.flush().is_ok() {
                    self.linger();
                }
                return ControlFlow::Break(Some(e));
            }
        };
        if self.conn.sender().may_close_tcp() {
            // Both closes exchanged: a server closes TCP first, with a half-close the
            // client sees (a TLS stream's `close_notify` first). Best effort: the
            // handshake is complete.
            let _ = self.tx.shutdown_write();
            return ControlFlow::Break(None);
        }
        let Some(at_least) = at_least else {
            return ControlFlow::Continue(());
        };
        // Queued messages go out before waiting for the peer.
        if self.tx.pending() > 0 {
            if let Err(e) = self.tx.flush() {
                return ControlFlow::Break(Some(e.into()));
            }
        }
        match self.rx.fill(at_least) {
            Ok(0) => ControlFlow::Break(None),
            Ok(_) => {
                if let Some(keepalive) = &mut self.keepalive {
                    keepalive.heard();
                }
                ControlFlow::Continue(())
            }
            Err(e) if e.is_timeout() && self.keepalive.is_some() => match self.quiet() {
                Ok(()) => ControlFlow::Continue(()),
                Err(e) => ControlFlow::Break(Some(e)),
            },
            Err(e) => ControlFlow::Break(Some(e.into())),
        }
    }

    /// After failing the connection: shuts the sending side down and drops what the peer
    /// still sends until it closes (see [`drive::LINGER_BYTES`]). A read waits as long as the
    /// stream's read timeout lets it.
    fn linger(&mut self) {
        let _ = self.tx.shutdown_write();
        let mut left = drive::LINGER_BYTES;
        while left > 0 {
            let unread = self.rx.data().len();
            self.rx.consume(unread);
            match self.rx.fill(1) {
                Ok(0) | Err(_) => return,
                Ok(n) => left = left.saturating_sub(n),
            }
        }
    }

    /// A read waited the keepalive's interval in vain: a ping goes out, or the peer is
    /// given up when it was pinged already.
    fn quiet(&mut self) -> Result<(), SocketError> {
        if let Some(keepalive) = &mut self.keepalive {
            keepalive.quiet()?;
        }
        // Once a close is out, its answer is what is awaited: no ping.
        if self.conn.state() == State::Open {
            self.send(&Message::Ping(KEEPALIVE_PING))?;
        }
        Ok(())
    }

    /// One [`drive::step`]: what `recv` returns, or how many bytes it needs
    /// first (`None`: none more, read on).
    #[inline]
    fn read_step(&mut self) -> ControlFlow<Received<'_, W>, Result<Option<usize>, SocketError>> {
        self.rx.consume(std::mem::take(&mut self.consumed));
        let data = self.rx.ring_mut().readable_mut();
        match drive::step(&mut self.conn, data, &mut self.consumed) {
            // The answer to the keepalive's own ping is not the caller's.
            Step::Message(message, _) if is_keepalive_pong(&message, self.keepalive.as_ref()) => {
                ControlFlow::Continue(Ok(None))
            }
            Step::Message(message, sender) => ControlFlow::Break(Some(Ok((
                message,
                Reply {
                    tx: &mut self.tx,
                    sender,
                },
            )))),
            Step::Again => ControlFlow::Continue(Ok(None)),
            Step::More(n) => ControlFlow::Continue(Ok(Some(n))),
            // Ended by the caller once replies are flushed: see `may_close_tcp` there.
            Step::Closed => ControlFlow::Continue(Ok(None)),
            // Returned once what is queued (and the close the error calls
            // for) has gone out: see `recv`.
            Step::Failed(e) => ControlFlow::Continue(Err(e)),
        }
    }

    fn reply(&mut self) -> Reply<'_, W> {
        Reply {
            tx: &mut self.tx,
            sender: self.conn.sender(),
        }
    }

    /// Sends a message.
    ///
    /// # Errors
    ///
    /// The connection failed, or the socket is closing.
    pub fn send(&mut self, message: &Message<'_>) -> Result<(), SocketError> {
        self.reply().send(message)
    }

    /// Encodes a message into the send ring without sending it yet, as the
    /// async socket's [`queue`](crate::socket::WebSocket::queue).
    ///
    /// # Errors
    ///
    /// As [`send`](Self::send).
    pub fn queue(&mut self, message: &Message<'_>) -> Result<(), SocketError> {
        self.reply().queue(message)
    }

    /// Sends what [`queue`](Self::queue) left in the send ring.
    ///
    /// # Errors
    ///
    /// The connection failed.
    pub fn flush(&mut self) -> Result<(), SocketError> {
        Ok(self.tx.flush()?)
    }

    /// Starts the closing handshake with `code` and `reason`; keep calling
    /// [`recv`](Self::recv) until it returns `None` for the peer's answer.
    /// Once the handshake is under way (this endpoint's close sent, or the
    /// peer's received and answered) there is nothing to start: `Ok`, and
    /// nothing is sent.
    ///
    /// # Errors
    ///
    /// As [`send`](Self::send).
    pub fn close(&mut self, code: CloseCode, reason: &str) -> Result<(), SocketError> {
        if self.state() != State::Open {
            return Ok(());
        }
        self.send(&Message::Close(Some(CloseFrame { code, reason })))
    }

    /// Where the closing handshake stands.
    pub fn state(&self) -> State {
        self.conn.state()
    }

    /// Sends data messages longer than `size` as frames of at most `size` payload bytes
    /// (`None`, the default: one frame per message), for peers that take large messages
    /// frame by frame.
    pub fn set_fragment_size(&mut self, size: Option<std::num::NonZeroUsize>) {
        self.conn.sender().writer_mut().set_fragment_size(size);
    }
}

impl<W: Write + ShutdownWrite> Reply<'_, W> {
    /// Sends a message; large unmasked, uncompressed payloads go out from
    /// where they lie (a gathered write), uncopied.
    ///
    /// # Errors
    ///
    /// The connection failed, or the socket is closing.
    pub fn send(&mut self, message: &Message<'_>) -> Result<(), SocketError> {
        self.queue(message)?;
        Ok(self.tx.flush()?)
    }

    /// Encodes a message into the send ring and leaves it there, as the
    /// async socket's [`Reply::queue`](crate::socket::Reply::queue).
    ///
    /// # Errors
    ///
    /// The connection failed, or the socket is closing.
    pub fn queue(&mut self, message: &Message<'_>) -> Result<(), SocketError> {
        self.flush_replies()?;
        match drive::outgoing(self.sender, message)? {
            Outgoing::Ring(need) => {
                let buf = self.tx.reserve(need)?;
                let n = self.sender.send(message, buf)?;
                self.tx.commit(n);
            }
            Outgoing::Gathered(header, payload) => {
                let buf = self.tx.reserve(crate::MAX_HEADER_LEN)?;
                let n = header.write(buf)?;
                self.tx.commit(n);
                self.tx.send_vectored(&[payload])?;
            }
            Outgoing::Apart(encoded) => self.tx.send_vectored(&[&encoded])?,
        }
        Ok(())
    }

    fn flush_replies(&mut self) -> Result<(), SocketError> {
        if self.sender.wants_transmit() {
            let buf = self.tx.reserve(drive::REPLIES_LEN)?;
            let n = self.sender.poll_transmit(buf)?;
            self.tx.commit(n);
            self.tx.flush()?;
        }
        Ok(())
    }

    /// Where the closing handshake stands.
    pub fn state(&self) -> State {
        self.sender.state()
    }
}

impl<R, W> fmt::Debug for WebSocket<R, W> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WebSocket")
            .field("state", &self.conn.state())
            .finish_non_exhaustive()
    }
}

impl<W> fmt::Debug for Reply<'_, W> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Reply")
            .field("state", &self.sender.state())
            .finish_non_exhaustive()
    }
}
