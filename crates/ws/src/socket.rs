//! A WebSocket over a tokio stream: the sans-IO [`Connection`] driven by
//! `ringwire-io`'s transports (feature `tokio`).
//!
//! Messages are read zero-copy: an unfragmented, uncompressed one is a slice
//! of the receive ring, unmasked where it arrived. Pings are answered and
//! the closing handshake completed by the socket itself. A server gets one
//! from an upgraded connection ([`WebSocket::from_parts`]); a client from
//! [`WebSocket::connect`]. `blocking` (feature `blocking`) has the same API
//! without a runtime.

use std::fmt;
use std::future::{poll_fn, Future};
use std::ops::ControlFlow;
use std::pin::{pin, Pin};
use std::task::Poll;
use std::time::Duration;

use polonius_the_crab::prelude::*;
use ringwire_io::tokio::{AsyncRecvTransport, AsyncSendTransport, AsyncStream};
use ringwire_io::TransportError;

use crate::drive::{
    self, is_keepalive_pong, Answer, Keepalive, Outgoing, Step, Upgrade, KEEPALIVE_PING,
};
use crate::handshake::{Negotiated, Offer};
use crate::{CloseCode, CloseFrame, Connection, Limits, Message, Sender, State};

pub use crate::drive::SocketError;

/// A WebSocket over a tokio stream, on the connection's own rings.
pub struct WebSocket<S> {
    rx: AsyncRecvTransport<S>,
    tx: AsyncSendTransport<S>,
    conn: Connection,
    /// Bytes of the last message handed out, consumed before the next read.
    consumed: usize,
    /// A close to send when a signal comes ([`close_on`](WebSocket::close_on)).
    close_on: Option<CloseOn>,
    /// Pings while the peer is quiet ([`keepalive`](WebSocket::keepalive)).
    keepalive: Option<Keepalive>,
}

/// What ended a wait for the peer.
enum Woke {
    Filled(Result<usize, TransportError>),
    /// The [`close_on`](WebSocket::close_on) signal.
    Signal,
    /// The peer was quiet for the keepalive's interval.
    Quiet,
}

/// A receive ring larger than this grew for a large message: it gives its
/// pages back whenever it is empty and the peer quiet.
const GROWN: usize = 1 << 20;

/// A close to send once `signal` resolves.
struct CloseOn {
    signal: Pin<Box<dyn Future<Output = ()> + Send>>,
    code: CloseCode,
    reason: &'static str,
}

/// Sends on a [`WebSocket`] while a message read from it is still borrowed
/// (to echo it, say).
pub struct Reply<'w, S> {
    tx: &'w mut AsyncSendTransport<S>,
    sender: &'w mut Sender,
}

/// What [`WebSocket::recv`] returns.
type Received<'w, S> = Option<Result<(Message<'w>, Reply<'w, S>), SocketError>>;

impl<S: AsyncStream> WebSocket<S> {
    /// A socket over `rx` and `tx` (an upgraded server connection: `rx`
    /// already holds whatever the client sent after its request).
    ///
    /// The receive ring's growth bound is raised, if need be, to hold the largest frame
    /// `conn`'s limits allow.
    pub fn from_parts(
        mut rx: AsyncRecvTransport<S>,
        tx: AsyncSendTransport<S>,
        conn: Connection,
    ) -> Self {
        drive::fit_frames(rx.ring_mut(), conn.limits());
        WebSocket {
            rx,
            tx,
            conn,
            consumed: 0,
            close_on: None,
            keepalive: None,
        }
    }

    /// Starts the closing handshake with `code` and `reason` once `signal`
    /// resolves (a server shutting down sends `1001 Going Away` so): the
    /// close goes out while [`recv`](Self::recv) waits for the peer, and
    /// `recv` then returns what arrives until the peer's close ends it.
    pub fn close_on(
        &mut self,
        signal: impl Future<Output = ()> + Send + 'static,
        code: CloseCode,
        reason: &'static str,
    ) {
        self.close_on = Some(CloseOn {
            signal: Box::pin(signal),
            code,
            reason,
        });
    }

    /// Pings the peer once it has been quiet for `every`, and fails
    /// [`recv`](Self::recv) with [`SocketError::PeerSilent`] when nothing,
    /// not even the pong, comes for `every` more: a peer that vanished is
    /// noticed, and the pings keep intermediaries that close idle
    /// connections (load balancers, often after 60 s) from closing this one.
    /// `None`, the default: no pings. While on, each wait for the peer sets
    /// a timer (tokio's time driver must be enabled). The pongs that answer
    /// these pings are not handed out by `recv`.
    pub fn keepalive(&mut self, every: Option<Duration>) {
        self.keepalive = every.map(Keepalive::new);
    }

    /// Opens a WebSocket as a client over `rx` and `tx` (one stream's two
    /// halves): sends the upgrade request for `path` on `host` with what `offer`
    /// holds, checks the `101`, and keeps any frames that came with it.
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
        offer: &Offer<'_>,
        limits: Limits,
    ) -> Result<(Self, Negotiated), SocketError> {
        let mut upgrade = Upgrade::new(offer, limits)?;
        let buf = tx.reserve(upgrade.request_len(host, path)).await?;
        let n = upgrade.write_request(host, path, buf)?;
        tx.commit(n);
        tx.flush().await?;
        loop {
            match upgrade.read_response(rx.data())? {
                Answer::Open(conn, negotiated, head_len) => {
                    rx.consume(head_len);
                    return Ok((Self::from_parts(rx, tx, *conn), negotiated));
                }
                Answer::More(at_least) => {
                    if rx.fill(at_least).await? == 0 {
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
    /// most 16 MiB and for at most 2 s, on tokio's timer), so that the close reaches it
    /// rather than a reset.
    ///
    /// Cancel-safe: what has arrived of a frame stays in the ring and the
    /// reader's state, and a dropped call loses nothing, so `recv` can be one
    /// branch of `tokio::select!` beside the application's own channel (a
    /// push service sending what it hears while it waits for its client).
    pub async fn recv(&mut self) -> Received<'_, S> {
        let mut this = self;
        loop {
            // A pong or close queued while the last message was read goes
            // out before the next frame is read: every ping gets its pong.
            // (Checked here, not only inside: no future to poll when none is.)
            if this.conn.sender().wants_transmit() {
                if let Err(e) = this.flush_replies().await {
                    return Some(Err(e));
                }
            }
            // A message borrows the ring; the loop that fills the ring must
            // not, which plain borrows cannot express yet.
            let mut next = Ok(None);
            polonius!(|this| -> Received<'polonius, S> {
                match this.read_step() {
                    ControlFlow::Break(received) => polonius_return!(received),
                    ControlFlow::Continue(more) => next = more,
                }
            });
            if this.conn.sender().wants_transmit() {
                if let Err(e) = this.flush_replies().await {
                    return Some(Err(e));
                }
            }
            let at_least = match next {
                Ok(at_least) => at_least,
                // A protocol error: messages queued before it (answers to
                // the valid ones that came first) and its close still go out.
                Err(e) => {
                    if this.tx.flush().await.is_ok() {
                        this.linger().await;
                    }
                    return Some(Err(e));
                }
            };
            if this.conn.sender().may_close_tcp() {
                // Both closes exchanged: a server closes TCP first, with a half-close
                // the client sees (a TLS stream's `close_notify` first, so the close is
                // not taken for a truncation). Best effort: the handshake is complete.
                let _ = this.tx.shutdown_write().await;
                return None;
            }
            let Some(at_least) = at_least else { continue };
            match this.fill(at_least).await {
                Ok(Some(0)) => return None,
                Ok(_) => {}
                Err(e) => return Some(Err(e)),
            }
        }
    }

    /// After failing the connection: shuts the sending side down and drops what the peer
    /// still sends until it closes (see [`drive::LINGER_BYTES`]), for at most
    /// [`drive::LINGER_TIME`].
    async fn linger(&mut self) {
        let _ = self.tx.shutdown_write().await;
        let drain = async {
            let mut left = drive::LINGER_BYTES;
            while left > 0 {
                let unread = self.rx.data().len();
                self.rx.consume(unread);
                match self.rx.fill(1).await {
                    Ok(0) | Err(_) => return,
                    Ok(n) => left = left.saturating_sub(n),
                }
            }
        };
        let _ = tokio::time::timeout(drive::LINGER_TIME, drain).await;
    }

    /// Receives once, unless the [`close_on`](Self::close_on) signal comes
    /// first: then sends that close instead (`None`: nothing received).
    async fn fill(&mut self, at_least: usize) -> Result<Option<usize>, SocketError> {
        // Queued messages go out before the socket waits for the peer, who
        // may be waiting for them.
        if self.tx.pending() > 0 {
            self.tx.flush().await?;
        }
        // A ring a large message grew keeps its pages while the peer is
        // quiet otherwise (16 MiB of memory for the connection's life after
        // one 16 MiB message).
        let ring = self.rx.ring();
        if ring.capacity() > GROWN && ring.is_empty() {
            match self.rx.try_fill(at_least)? {
                Some(n) => return Ok(Some(n)),
                None => {
                    self.rx.release_pages()?;
                }
            }
        }
        if self.close_on.is_none() && self.keepalive.is_none() {
            return Ok(Some(self.rx.fill(at_least).await?));
        }
        loop {
            match self.wait(at_least).await {
                Woke::Filled(filled) => {
                    if let Some(keepalive) = &mut self.keepalive {
                        keepalive.heard();
                    }
                    return Ok(Some(filled?));
                }
                Woke::Signal => break,
                Woke::Quiet => {
                    let Some(keepalive) = &mut self.keepalive else {
                        continue;
                    };
                    keepalive.quiet()?;
                    // Once a close is out, its answer is what is awaited: no ping.
                    if self.conn.state() == State::Open {
                        self.send(&Message::Ping(KEEPALIVE_PING)).await?;
                    }
                }
            }
        }
        let Some(CloseOn { code, reason, .. }) = self.close_on.take() else {
            return Ok(None);
        };
        if self.conn.state() == State::Open {
            self.close(code, reason).await?;
        }
        Ok(None)
    }

    /// Receives once, unless the [`close_on`](Self::close_on) signal or the
    /// keepalive's interval comes first.
    async fn wait(&mut self, at_least: usize) -> Woke {
        let mut fill = pin!(self.rx.fill(at_least));
        let mut quiet = pin!(self
            .keepalive
            .as_ref()
            .map(|k| tokio::time::sleep(k.every())));
        let close = &mut self.close_on;
        // The others only while the peer is quiet: one poll of each per wait
        // rather than per wake.
        poll_fn(|cx| {
            if let Poll::Ready(filled) = fill.as_mut().poll(cx) {
                return Poll::Ready(Woke::Filled(filled));
            }
            if let Some(close) = close.as_mut() {
                if close.signal.as_mut().poll(cx).is_ready() {
                    return Poll::Ready(Woke::Signal);
                }
            }
            match quiet.as_mut().as_pin_mut().map(|sleep| sleep.poll(cx)) {
                Some(Poll::Ready(())) => Poll::Ready(Woke::Quiet),
                _ => Poll::Pending,
            }
        })
        .await
    }

    /// One [`drive::step`]: what `recv` returns, or how many bytes it needs
    /// first (`None`: none more, read on).
    fn read_step(&mut self) -> ControlFlow<Received<'_, S>, Result<Option<usize>, SocketError>> {
        self.rx.consume(std::mem::take(&mut self.consumed));
        match drive::step(&mut self.conn, self.rx.data_mut(), &mut self.consumed) {
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

    fn reply(&mut self) -> Reply<'_, S> {
        Reply {
            tx: &mut self.tx,
            sender: self.conn.sender(),
        }
    }

    /// Sends queued pongs and closes.
    async fn flush_replies(&mut self) -> Result<(), SocketError> {
        self.reply().flush_replies().await
    }

    /// Sends a message.
    ///
    /// # Errors
    ///
    /// The connection failed, or the socket is closing.
    pub async fn send(&mut self, message: &Message<'_>) -> Result<(), SocketError> {
        self.reply().send(message).await
    }

    /// Encodes a message into the send ring without sending it yet: see
    /// [`Reply::queue`].
    ///
    /// # Errors
    ///
    /// As [`send`](Self::send).
    pub async fn queue(&mut self, message: &Message<'_>) -> Result<(), SocketError> {
        self.reply().queue(message).await
    }

    /// Sends what [`queue`](Self::queue) left in the send ring.
    ///
    /// # Errors
    ///
    /// The connection failed.
    pub async fn flush(&mut self) -> Result<(), SocketError> {
        Ok(self.tx.flush().await?)
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
    pub async fn close(&mut self, code: CloseCode, reason: &str) -> Result<(), SocketError> {
        if self.state() != State::Open {
            return Ok(());
        }
        self.send(&Message::Close(Some(CloseFrame { code, reason })))
            .await
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

impl<S: AsyncStream> Reply<'_, S> {
    /// Sends a message; large unmasked, uncompressed payloads go out from
    /// where they lie (a gathered write), uncopied.
    ///
    /// # Errors
    ///
    /// The connection failed, or the socket is closing.
    pub async fn send(&mut self, message: &Message<'_>) -> Result<(), SocketError> {
        self.queue(message).await?;
        Ok(self.tx.flush().await?)
    }

    /// Encodes a message into the send ring and leaves it there: queued
    /// messages go out together, in one write, on the next
    /// [`send`](Self::send) or [`WebSocket::flush`], when the ring is full,
    /// and at the latest when [`WebSocket::recv`] waits for the peer. An
    /// echo or a fan-out that answers every message of one read makes one
    /// system call for all of them. (Large uncompressed payloads from a
    /// server go out at once, gathered from where they lie.)
    ///
    /// # Errors
    ///
    /// The connection failed, or the socket is closing.
    pub async fn queue(&mut self, message: &Message<'_>) -> Result<(), SocketError> {
        if self.sender.wants_transmit() {
            self.flush_replies().await?;
        }
        match drive::outgoing(self.sender, message)? {
            Outgoing::Ring(need) => {
                let buf = self.tx.reserve(need).await?;
                let n = self.sender.send(message, buf)?;
                self.tx.commit(n);
            }
            Outgoing::Gathered(header, payload) => {
                let buf = self.tx.reserve(crate::MAX_HEADER_LEN).await?;
                let n = header.write(buf)?;
                self.tx.commit(n);
                self.tx.send_vectored(&[payload]).await?;
            }
            Outgoing::Apart(encoded) => self.tx.send_vectored(&[&encoded]).await?,
        }
        Ok(())
    }

    async fn flush_replies(&mut self) -> Result<(), SocketError> {
        if self.sender.wants_transmit() {
            let buf = self.tx.reserve(drive::REPLIES_LEN).await?;
            let n = self.sender.poll_transmit(buf)?;
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
