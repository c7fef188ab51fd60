//! One connection: parse, buffer the body, call the handler, answer; repeat.
//!
//! Every receive races the connection's [`Timer`]: the sweeper
//! (`timeout.rs`) fires it when the head, idle or body-rate limit passes.
//!
//! A connection holds rings only while it has unread bytes or unsent output.
//! Before its first request and between requests it owns the socket, its
//! timer and a few pointers: it waits for the socket to become readable with
//! no ring, then takes a receive and a send ring from the server's pools
//! ([`Shared`]), serves every request that arrived (pipelined ones included),
//! flushes, and gives both rings back (to be released by the pools) once nothing is
//! unread. The request loop, with its parser and chunked-body buffer, lives
//! in a boxed future that is freed while the connection idles.

use std::future::{poll_fn, Future};
use std::net::SocketAddr;
use std::ops::Deref;
use std::pin::pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::task::Poll;
use std::time::Duration;

use futures_core::Stream;

use ringwire_http1::encode::{chunk_header, EncodeError, ResponseWriter, CHUNK_END};
use ringwire_http1::{BodyDecoder, BodyKind, Decoded, Method, RequestParser, Status, Version};
use ringwire_io::tokio::AsyncNetStream;
use ringwire_io::tokio::{AsyncRecvTransport, AsyncSendTransport, AsyncStream as _};
use ringwire_io::{RingPool, TransportError};
use tokio::sync::Notify;

use crate::body_reader::{BodyReader, End, Pump};
use crate::date::write_date;
use crate::informational::{self, Sink};
use crate::middleware::access_log;
use crate::proxy_protocol::{self, Proxied};
use crate::response::Fields;
use crate::timeout::{Phase, Timer};
use crate::upgrade::OnUpgrade;
use crate::{
    Body, BodyStream, Handler, Protocol, Request, Response, ServerConfig, Socket, Upgraded,
    UpgradedStream,
};

/// Bodies up to this size are copied into the send ring behind their head;
/// larger ones go out in one gathered write straight from the response.
const COPY_BODY_MAX: usize = 16 << 10;

/// How long, and how much, a closing connection keeps reading what the
/// client still sends, so the kernel does not reset the connection (and
/// destroy the last response) while unread bytes are queued.
const LINGER_TIME: Duration = Duration::from_secs(2);
const LINGER_BYTES: usize = 16 << 20;

type Tx<'s> = AsyncSendTransport<&'s Socket>;
type Rx<'s> = AsyncRecvTransport<&'s Socket>;

/// How the request loop ended.
pub(crate) enum Close {
    /// The peer is gone or nothing more is expected: drop the socket.
    Now,
    /// Our write side is shut down; drain the peer's remaining bytes first.
    Linger,
    /// Nothing unread, nothing unsent: the rings go back to the pools until
    /// the socket is readable again.
    Idle,
    /// A `101` went out: the connection belongs to the upgrade callback.
    Upgraded,
}

/// What every connection of one server shares: the handler, the settings,
/// the ring pools, one per direction, and the count of live connections.
/// (One pointer in each connection's task for all of them. Shutdown reaches
/// the connections through their timers: see [`Sweeper::stop`].)
///
/// [`Sweeper::stop`]: crate::timeout::Sweeper::stop
#[derive(Debug)]
pub(crate) struct Shared<H> {
    pub(crate) handler: H,
    pub(crate) config: Arc<ServerConfig>,
    /// Receive rings (an idle HTTP/2 connection gives its back, and takes one again).
    pub(crate) rx: RingPool,
    pub(crate) tx: RingPool,
    live: AtomicUsize,
    /// Notified when `live` drops to zero.
    all_closed: Notify,
}

impl<H> Shared<H> {
    pub(crate) fn new(handler: H, config: Arc<ServerConfig>) -> Shared<H> {
        Shared {
            handler,
            rx: RingPool::new(config.transport.rx, config.pooled_rings),
            tx: RingPool::new(config.transport.tx, config.pooled_rings),
            config,
            live: AtomicUsize::new(0),
            all_closed: Notify::new(),
        }
    }

    /// Connections not yet ended.
    pub(crate) fn live(&self) -> usize {
        self.live.load(Ordering::SeqCst)
    }

    /// Resolves once every connection has ended.
    pub(crate) async fn all_closed(&self) {
        loop {
            // Created before the check: the last connection's
            // `notify_waiters` wakes it even before its first poll.
            let notified = self.all_closed.notified();
            if self.live() == 0 {
                return;
            }
            notified.await;
        }
    }
}

/// A connection's share of [`Shared`], counted live until dropped (the
/// task ended, panicked or was dropped). Counting in the handle the task
/// holds anyway costs the task nothing; a `JoinSet` entry per connection
/// would cost 64–80 bytes.
#[derive(Debug)]
pub(crate) struct Live<H>(Arc<Shared<H>>);

impl<H> Live<H> {
    pub(crate) fn new(shared: &Arc<Shared<H>>) -> Live<H> {
        shared.live.fetch_add(1, Ordering::SeqCst);
        Live(Arc::clone(shared))
    }
}

impl<H> Deref for Live<H> {
    type Target = Shared<H>;

    fn deref(&self) -> &Shared<H> {
        &self.0
    }
}

impl<H> Drop for Live<H> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            log::error!("a connection task panicked");
        }
        if self.0.live.fetch_sub(1, Ordering::SeqCst) == 1 {
            self.0.all_closed.notify_waiters();
        }
    }
}

/// What a connection keeps of its client's address: nothing (`()`: the socket's peer is
/// the client, asked when wanted), or the address a PROXY protocol header named. A type
/// rather than an `Option`, so that connections without the header, the idle task's
/// budget counted to the byte, carry nothing for it.
pub(crate) trait ClientAddr: Copy + Send + Sync + 'static {
    fn get(self) -> Option<SocketAddr>;
}

impl ClientAddr for () {
    fn get(self) -> Option<SocketAddr> {
        None
    }
}

impl ClientAddr for SocketAddr {
    fn get(self) -> Option<SocketAddr> {
        Some(self)
    }
}

/// Serves one accepted connection until it closes. Never panics on input;
/// I/O errors (a reset mid-request) end the connection quietly.
///
/// Before the first request and between requests the connection waits,
/// holding no ring, for the socket to become readable; then it serves what
/// arrived on rings from the pools. What this loop keeps across that wait is
/// an idle connection's whole task, so it is kept small (the loop is inlined
/// here rather than behind references).
// Not an `async fn`: see the comment on the block.
#[allow(clippy::manual_async_fn)]
pub(crate) fn serve<H: Handler, C: ClientAddr>(
    stream: Socket,
    mut timer: Timer,
    shared: Live<H>,
    client: C,
) -> impl Future<Output = ()> + Send {
    // An `async` block rather than an `async fn`: the fn would keep its
    // arguments twice in the future (once as arguments, once moved into
    // locals), 80 bytes of every idle task.
    async move {
        if let Some(Err(e)) = stream.get_ref().as_tcp().map(|tcp| tcp.set_nodelay(true)) {
            log::debug!("set_nodelay: {e}");
        }
        let end = loop {
            if timer.is_stopped() {
                break Ok(Close::Now);
            }
            // Readable, or the timer fired (expiry or shutdown). By hand
            // rather than `select!`: the idle task is this future, and every
            // byte counts (tokio rounds tasks up to 128 bytes).
            // `poll_read_ready` keeps one waker in the socket's registration
            // rather than a waiter node in this future; the timer's one
            // notification serves both expiry and shutdown.
            // (Matched at once on the block: a binding would be kept in the
            // future across the lease, and arms inside the block keep its
            // references beside the wait; 8 bytes either way.)
            #[allow(clippy::blocks_in_conditions)]
            match {
                let (stream, timer) = (&stream, &timer);
                let mut notified = pin!(timer.notified());
                poll_fn(move |cx| loop {
                    // The notification was created before this check, so a
                    // stop or an expiry after it still wakes this task.
                    if timer.is_over() {
                        return Poll::Ready(None);
                    }
                    if let Poll::Ready(ready) = crate::socket::poll_read_ready(stream, cx) {
                        return Poll::Ready(Some(ready));
                    }
                    if notified.as_mut().poll(cx).is_pending() {
                        return Poll::Pending;
                    }
                    notified.set(timer.notified());
                })
                .await
            } {
                Some(Ok(())) => {}
                Some(Err(e)) => break Err(TransportError::from(e)),
                None => {
                    if !timer.is_stopped() {
                        log::debug!("closing a connection that sent nothing in time");
                    }
                    break Ok(Close::Now);
                }
            }
            // Boxed, so that the request loop's state is only allocated while
            // the connection has something to do.
            match Box::pin(lease(&stream, &mut timer, &shared, client.get())).await {
                Ok(Close::Idle) => {}
                end => break end,
            }
        };
        match end {
            // Boxed: its timer and buffer need not be part of every idle task.
            Ok(Close::Linger) => {
                Box::pin(linger(stream.get_ref())).await;
            }
            Ok(Close::Now | Close::Idle | Close::Upgraded) => {}
            Err(e) => log::debug!(
                "connection from {:?}: {e}",
                client.get().or_else(|| stream.get_ref().peer_addr())
            ),
        }
    }
}

/// Serves a connection that starts with a TLS handshake, which must end
/// within the request head's time limit. (Its own task shape, so that
/// plain connections' idle tasks do not carry the handshake's state.)
pub(crate) async fn serve_tls<H: Handler, C: ClientAddr>(
    socket: AsyncNetStream,
    acceptor: ringwire_tls::TlsAcceptor,
    timer: Timer,
    shared: Live<H>,
    client: C,
) {
    let mut first = [0];
    let peeked = tokio::select! {
        peeked = socket.peek(&mut first) => peeked,
        () = timer.over() => return,
    };
    match peeked {
        Ok(0) | Err(_) => return,
        // A TLS connection starts with a handshake record.
        Ok(_) if first[0] == TLS_HANDSHAKE => {}
        Ok(_) => return plain_to_tls_port(&socket).await,
    }
    let accepted = tokio::select! {
        accepted = acceptor.accept(socket) => accepted,
        () = timer.over() => return,
    };
    match accepted {
        Ok(tls) => serve(Socket::Tls(Box::new(tls)), timer, shared, client).await,
        Err(e) => log::debug!("TLS handshake: {e}"),
    }
}

/// Starts serving a connection that begins with a PROXY protocol header (then a TLS
/// handshake by `acceptor`, if one is given), which must arrive within the request
/// head's time limit. One without it, or with a malformed one, is closed unanswered:
/// what follows cannot be taken for the client's. Once the header is read, the
/// connection goes on in a task of its own, sized for what it keeps (the client's
/// address, not this wait), and its timer's slot takes that task for a forced
/// shutdown; this one ends.
pub(crate) async fn serve_proxied<H: Handler>(
    socket: AsyncNetStream,
    acceptor: Option<ringwire_tls::TlsAcceptor>,
    timer: Timer,
    shared: Live<H>,
) {
    let header = tokio::select! {
        header = read_proxy_header(&socket) => header,
        () = timer.over() => return,
    };
    let proxied = match header {
        Ok(proxied) => proxied,
        Err(e) => {
            log::debug!("connection from {:?}: {e}", socket.peer_addr());
            return;
        }
    };
    let slot = timer.task_slot();
    let task = match (proxied.source(), acceptor) {
        (Some(client), Some(acceptor)) => {
            tokio::spawn(serve_tls(socket, acceptor, timer, shared, client))
        }
        (None, Some(acceptor)) => tokio::spawn(serve_tls(socket, acceptor, timer, shared, ())),
        (Some(client), None) => tokio::spawn(serve(Socket::Plain(socket), timer, shared, client)),
        (None, None) => tokio::spawn(serve(Socket::Plain(socket), timer, shared, ())),
    };
    slot.fill(task.abort_handle());
}

/// Reads a PROXY protocol header from `socket`, and not a byte of what follows: what has
/// arrived is peeked at, and only what the parser took is read.
async fn read_proxy_header(socket: &AsyncNetStream) -> std::io::Result<Proxied> {
    use std::io::{Error, ErrorKind};

    let mut header = vec![0; proxy_protocol::V2_MAX_LEN];
    // Bytes of the header read so far.
    let mut taken = 0;
    loop {
        let peeked = socket.peek(&mut header[taken..]).await?;
        if peeked == 0 {
            return Err(ErrorKind::UnexpectedEof.into());
        }
        let seen = taken + peeked;
        let parsed = proxy_protocol::parse(&header[..seen]);
        match parsed.map_err(|e| Error::new(ErrorKind::InvalidData, e))? {
            Status::Complete(proxied, len) => {
                read_exact(socket, &mut header[taken..len]).await?;
                return Ok(proxied);
            }
            // All of it is the header's (it is longer): taken, so that the next peek
            // waits for more.
            Status::Partial { .. } => {
                read_exact(socket, &mut header[taken..seen]).await?;
                taken = seen;
            }
        }
    }
}

/// Reads exactly `buf.len()` bytes, already seen by a peek.
async fn read_exact(socket: &AsyncNetStream, mut buf: &mut [u8]) -> std::io::Result<()> {
    while !buf.is_empty() {
        socket.readable().await?;
        match socket.try_read(buf) {
            Ok(0) => return Err(std::io::ErrorKind::UnexpectedEof.into()),
            Ok(n) => buf = &mut buf[n..],
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// The content type of a TLS handshake record, the first byte a TLS client sends.
const TLS_HANDSHAKE: u8 = 0x16;

/// Answers a client that speaks plain HTTP to the HTTPS port, as nginx does, instead of a
/// handshake failure it would show as a reset or as garbage.
async fn plain_to_tls_port(socket: &AsyncNetStream) {
    const ANSWER: &[u8] = b"HTTP/1.1 400 Bad Request\r\nconnection: close\r\n\
        content-type: text/plain\r\ncontent-length: 43\r\n\r\n\
        This port speaks HTTPS: use https:// here.\n";
    // One small write into an empty socket buffer: it goes at once or not at all.
    if socket.writable().await.is_ok() && socket.try_write(ANSWER).is_ok() {
        let _ = socket.shutdown_write();
        linger(socket).await;
    }
}

/// Takes a ring per direction, serves requests until the connection idles
/// or ends, and gives the rings back (emptied; the pools release their pages).
async fn lease<H: Handler>(
    stream: &Socket,
    timer: &mut Timer,
    shared: &Shared<H>,
    client: Option<SocketAddr>,
) -> Result<Close, TransportError> {
    let mut rx = AsyncRecvTransport::with_ring(shared.rx.take()?, stream);
    let mut tx = AsyncSendTransport::with_ring(shared.tx.take()?, stream);
    let stall = shared.config.timeouts.send_stall;
    tx.set_stall_limit((stall != Duration::MAX).then_some(stall));
    let mut upgrade = None;
    let link = (stream, client);
    let end = requests(link, &mut rx, &mut tx, timer, shared, &mut upgrade).await;
    if let (Ok(Close::Upgraded), Some(OnUpgrade(on_upgrade))) = (&end, upgrade) {
        // The new protocol runs untimed (its own limits are its business)
        // until its future ends; shutdown's grace bounds it, and the kernel's
        // keepalive a peer that vanished.
        if let Err(e) =
            crate::socket::keepalive(stream.get_ref(), shared.config.timeouts.upgraded_keepalive)
        {
            log::debug!("keepalive on an upgraded connection: {e}");
        }
        let shutdown = timer.shutdown();
        let (rx, tx) = (rx.into_parts().0, tx.into_parts().0);
        let mut tx = AsyncSendTransport::with_ring(tx, UpgradedStream::Connection(stream));
        tx.set_stall_limit((stall != Duration::MAX).then_some(stall));
        let rx = AsyncRecvTransport::with_ring(rx, UpgradedStream::Connection(stream));
        on_upgrade(Upgraded { rx, tx, shutdown }).await;
        // Ended as a refused request is: our side shut down, then the peer's last bytes
        // drained, or the kernel would answer them with a reset that destroys what the
        // protocol sent last (a WebSocket's close frame after an error). Best effort: the
        // protocol may have shut it down already, or the peer may be gone.
        let _ = shutdown_write(stream).await;
        return Ok(Close::Linger);
    }
    // Dropped, the rings go back to their pools (an upgraded connection's
    // when the new protocol drops them).
    drop((rx, tx));
    if let Ok(Close::Idle) = end {
        // A TLS session's ciphertext rings are its own, not the pools':
        // their pages go back here instead.
        if let Err(e) = stream.release_idle_memory() {
            log::debug!("releasing an idle TLS session's pages: {e}");
        }
    }
    end
}

/// Parses and answers requests until nothing is unread or unsent
/// ([`Close::Idle`]) or the connection must end.
async fn requests<H: Handler>(
    (stream, client): (&Socket, Option<SocketAddr>),
    rx: &mut Rx<'_>,
    tx: &mut Tx<'_>,
    timer: &mut Timer,
    shared: &Shared<H>,
    upgrade: &mut Option<OnUpgrade>,
) -> Result<Close, TransportError> {
    let (handler, config) = (&shared.handler, &*shared.config);
    if let Some(h2) = config.http2 {
        if stream.alpn_protocol().as_deref() == Some(b"h2") {
            return crate::h2::serve(stream, rx, tx, timer, shared, h2, client).await;
        }
    }
    let mut parser = RequestParser::new(config.limits);
    // Heads of streamed requests are copied here, reused across the requests
    // of one lease (freed while the connection idles).
    let mut head_copy = Vec::new();
    loop {
        // The head, parsed in place in the receive ring.
        let head_len = loop {
            match parser.parse(rx.data()) {
                Ok(Status::Complete(_, n)) => break n,
                Ok(Status::Partial { at_least }) => {
                    // One send per batch: answers to pipelined requests wait
                    // here until every buffered request is answered.
                    if tx.pending() > 0 {
                        tx.flush().await?;
                    }
                    let idle = rx.data().is_empty();
                    if timer.phase() == Phase::Writing {
                        // Answered: the next request's clock starts now.
                        let again = timer.answered_again();
                        timer.enter(if !idle {
                            Phase::Head
                        } else if again && !config.timeouts.warm.is_zero() {
                            Phase::Warm
                        } else {
                            Phase::Idle
                        });
                    }
                    let filled = if idle {
                        if timer.is_stopped() {
                            return Ok(Close::Now);
                        }
                        // Take what already arrived. If nothing did, keep
                        // the rings while `Warm` (a busy client's next
                        // request costs no pool traffic), then hand them
                        // back and wait in `serve` without them.
                        match rx.try_fill(at_least)? {
                            Some(filled) => filled,
                            None if timer.phase() != Phase::Warm => return Ok(Close::Idle),
                            None => tokio::select! {
                                filled = rx.fill(at_least) => match filled {
                                    Ok(n) => n,
                                    Err(e) => return refused(tx, client, e, HEAD_TOO_LARGE).await,
                                },
                                () = timer.over() => {
                                    timer.enter(Phase::Idle);
                                    return Ok(Close::Idle);
                                }
                            },
                        }
                    } else {
                        tokio::select! {
                            filled = rx.fill(at_least) => match filled {
                                Ok(n) => n,
                                Err(e) => return refused(tx, client, e, HEAD_TOO_LARGE).await,
                            },
                            _ = timer.expired() => return fail(tx, client, 408, "Request Timeout").await,
                        }
                    };
                    if filled == 0 {
                        // End of stream, between requests or mid-head.
                        return Ok(Close::Now);
                    }
                    if matches!(timer.phase(), Phase::Idle | Phase::Warm) {
                        // The head's absolute limit runs from its first byte.
                        timer.enter(Phase::Head);
                    }
                }
                Err(_) if config.http2.is_some() && crate::h2::is_preface(rx.data()) => {
                    let h2 = config.http2.unwrap_or_default();
                    return crate::h2::serve(stream, rx, tx, timer, shared, h2, client).await;
                }
                Err(e) => return fail(tx, client, e.status(), e.reason()).await,
            }
        };
        let request = parser.head().view(rx.data());
        let kind = request.body();
        let is_head = request.method() == Method::Head;
        let http10 = request.version() == Version::Http10;
        let expects_continue = request.expects_continue();
        let mut keep_alive = request.keep_alive();

        let streams = kind != BodyKind::Empty && handler.streams_body(&request);
        let (mut response, total) = if streams {
            // The head moves out of the ring (one small copy) so that the
            // ring can take the body while the handler reads it.
            if expects_continue {
                continue_100(tx).await?;
            }
            head_copy.clear();
            head_copy.extend_from_slice(&rx.data()[..head_len]);
            rx.consume(head_len);
            timer.enter(Phase::Body);
            let decoder = BodyDecoder::new(kind, &config.limits);
            let pump = Mutex::new(Pump::new(rx, stream, timer, decoder));
            let sink = informational::Http1::new(tx);
            let response = {
                let request = Request::new(parser.head().view(&head_copy), &[])
                    .on(stream, client)
                    .with_reader(BodyReader::new(&pump));
                handler.call(&informing(request, &sink, http10)).await
            };
            // A body not read to its end cannot be skipped safely: close.
            let end = pump
                .into_inner()
                .unwrap_or_else(PoisonError::into_inner)
                .end();
            keep_alive &= end == End::Done;
            (response, 0)
        } else {
            // The whole body: `total` is the head plus the body's framed bytes.
            // `total`: the head and the body's bytes in the ring; for a chunked body,
            // where its dechunked payload (from `head_len`) ends.
            let (total, dechunked_end) = match kind {
                BodyKind::Empty => (head_len, None),
                BodyKind::Length(n) => {
                    let Some(total) = usize::try_from(n)
                        .ok()
                        .filter(|&n| n <= config.max_buffered_body)
                        .map(|n| head_len + n)
                    else {
                        return fail(tx, client, 413, "Content Too Large").await;
                    };
                    if rx.data().len() < total && expects_continue {
                        continue_100(tx).await?;
                    }
                    if rx.data().len() < total {
                        timer.enter(Phase::Body);
                    }
                    while rx.data().len() < total {
                        if let Err(stop) = more_body(rx, total, timer, head_len, 0).await? {
                            return stopped(tx, client, stop).await;
                        }
                    }
                    (total, None)
                }
                BodyKind::Chunked => {
                    if expects_continue {
                        continue_100(tx).await?;
                    }
                    timer.enter(Phase::Body);
                    let mut decoder = BodyDecoder::new(kind, &config.limits);
                    // Dechunked in place: each chunk's payload moves down to just after
                    // the head (which stays: the parsed view points into it) and the body
                    // so far, and before each read the undecoded rest closes up behind it,
                    // so the ring holds the head, the body and one read's framing at most.
                    let mut at = head_len;
                    let mut end = head_len;
                    // Framing bytes compacted away, still counted as progress.
                    let mut dropped = 0;
                    loop {
                        let (consumed, more) = match decoder.decode(&rx.data()[at..]) {
                            Ok(Decoded::Data { data, consumed }) => {
                                let len = data.len();
                                if end - head_len + len > config.max_buffered_body {
                                    return fail(tx, client, 413, "Content Too Large").await;
                                }
                                let from = at + consumed - len;
                                rx.data_mut().copy_within(from..from + len, end);
                                end += len;
                                (consumed, false)
                            }
                            Ok(Decoded::Partial { consumed }) => (consumed, true),
                            Ok(Decoded::Done { consumed, .. }) => {
                                at += consumed;
                                break;
                            }
                            Err(e) => return fail(tx, client, e.status(), e.reason()).await,
                        };
                        at += consumed;
                        if more {
                            let buffered = rx.data().len();
                            rx.data_mut().copy_within(at..buffered, end);
                            rx.truncate(end + buffered - at);
                            dropped += at - end;
                            at = end;
                            let want = rx.data().len() + 1;
                            let received = more_body(rx, want, timer, head_len, dropped).await?;
                            if let Err(stop) = received {
                                return stopped(tx, client, stop).await;
                            }
                        }
                    }
                    (at, Some(end))
                }
                // Requests are never close-delimited; the parser does not say so.
                BodyKind::CloseDelimited => return fail(tx, client, 400, "Bad Request").await,
            };

            timer.enter(Phase::Handler);
            let sink = informational::Http1::new(tx);
            let response = {
                let data = rx.data();
                let body = &data[head_len..dechunked_end.unwrap_or(total)];
                let request = Request::new(parser.head().view(data), body).on(stream, client);
                handler.call(&informing(request, &sink, http10)).await
            };
            (response, total)
        };
        let protocol = if http10 {
            Protocol::Http10
        } else {
            Protocol::Http11
        };
        let refused = response.wire_status(protocol, false) != response.status();
        if let Some(on_upgrade) = response.take_upgrade() {
            if refused {
                log::warn!("an upgrade answer to an HTTP/1.0 request, or not a 101: answering 500");
                return answer_and_close(tx, 500, "Internal Server Error").await;
            }
            timer.enter(Phase::Writing);
            let framing = Framing {
                keep_alive: true,
                http10: false,
                is_head: false,
            };
            write_response(tx, rx, &mut response, framing).await?;
            tx.flush().await?;
            // What follows the request is the new protocol's.
            rx.consume(total);
            timer.enter(Phase::Handler);
            *upgrade = Some(on_upgrade);
            return Ok(Close::Upgraded);
        }
        // A shutdown that began while the handler ran closes after this answer.
        keep_alive &= !timer.is_stopped();
        let framing = Framing {
            keep_alive,
            http10,
            is_head,
        };
        timer.enter(Phase::Writing);
        let keep_alive = write_response(tx, rx, &mut response, framing).await?;
        rx.consume(total);
        if !keep_alive {
            tx.shutdown_write().await?;
            return Ok(Close::Linger);
        }
    }
}

/// `request`, its informational heads sent through `sink`, unless the client speaks
/// HTTP/1.0, which knows none.
fn informing<'a>(request: Request<'a>, sink: &'a dyn Sink, http10: bool) -> Request<'a> {
    if http10 {
        request
    } else {
        request.with_informational(sink)
    }
}

/// Receives more of a body; `None` when the sweeper found it too slow.
async fn fill_body(
    rx: &mut Rx<'_>,
    at_least: usize,
    timer: &Timer,
) -> Result<Option<usize>, TransportError> {
    tokio::select! {
        filled = rx.fill(at_least) => filled.map(Some),
        _ = timer.expired() => Ok(None),
    }
}

/// Why a body stopped arriving before its end.
enum Stop {
    /// The peer closed: nothing to answer.
    Eof,
    /// Answer this status, then close.
    Status(u16, &'static str),
}

/// Receives more of a body (`at_least` bytes buffered in all), marking
/// progress for the body-rate limit: the body's bytes as they came on the
/// wire, `dropped` of them (a chunked body's framing) no longer in the ring.
async fn more_body(
    rx: &mut Rx<'_>,
    at_least: usize,
    timer: &Timer,
    head_len: usize,
    dropped: usize,
) -> Result<Result<(), Stop>, TransportError> {
    match fill_body(rx, at_least, timer).await {
        Ok(Some(0)) => Ok(Err(Stop::Eof)),
        Ok(Some(_)) => {
            timer.progress(rx.data().len() + dropped - head_len);
            Ok(Ok(()))
        }
        Ok(None) => Ok(Err(Stop::Status(408, "Request Timeout"))),
        Err(e) => match ring_refusal(&e, BODY_TOO_LARGE) {
            Some(status) => Ok(Err(Stop::Status(status.0, status.1))),
            None => Err(e),
        },
    }
}

/// The answers to a receive ring that cannot take what a request needs.
const HEAD_TOO_LARGE: (u16, &str) = (431, "Request Header Fields Too Large");
const BODY_TOO_LARGE: (u16, &str) = (413, "Content Too Large");

/// The status for a receive that failed because the ring could not take it: `too_large`
/// past its bound, 503 when the system refused it the memory (not the client's fault).
/// `None`: the connection itself failed.
fn ring_refusal(e: &TransportError, too_large: (u16, &'static str)) -> Option<(u16, &'static str)> {
    match e {
        e if e.is_too_large() => Some(too_large),
        TransportError::Ring(_) => Some((503, "Service Unavailable")),
        _ => None,
    }
}

/// Answers a receive the ring refused ([`ring_refusal`]) and closes, or passes a
/// connection failure on.
async fn refused(
    tx: &mut Tx<'_>,
    client: Option<SocketAddr>,
    e: TransportError,
    too_large: (u16, &'static str),
) -> Result<Close, TransportError> {
    match ring_refusal(&e, too_large) {
        Some((status, reason)) => fail(tx, client, status, reason).await,
        None => Err(e),
    }
}

/// Ends a connection whose body stopped early.
async fn stopped(
    tx: &mut Tx<'_>,
    client: Option<SocketAddr>,
    stop: Stop,
) -> Result<Close, TransportError> {
    match stop {
        Stop::Eof => Ok(Close::Now),
        Stop::Status(status, reason) => fail(tx, client, status, reason).await,
    }
}

/// Room for a head without fields of the handler's: status line, date, framing.
const ERROR_HEAD: usize = 160;

/// Connection facts that shape the response head.
#[derive(Clone, Copy)]
struct Framing {
    keep_alive: bool,
    http10: bool,
    is_head: bool,
}

/// Queues `response` (and its body, or sends a large body at once).
/// Returns whether the connection stays open: a streamed body to an
/// HTTP/1.0 client ends with the connection.
async fn write_response(
    tx: &mut Tx<'_>,
    rx: &mut Rx<'_>,
    // By reference: a `Response` is a few hundred bytes, and moving it into
    // this future's state was a measurable copy per pipelined request.
    response: &mut Response,
    mut framing: Framing,
) -> Result<bool, TransportError> {
    let status = response.status();
    let bodiless = matches!(status, 100..=199 | 204 | 304);
    if framing.http10 && !bodiless && response.body_ref().len().is_none() {
        framing.keep_alive = false;
    }
    let need = ERROR_HEAD
        + response
            .fields_to_write()
            .map(|field| match field {
                Fields::One(n, v) => n.len() + v.len() + 4,
                Fields::Block(block) => block.as_bytes().len(),
            })
            .sum::<usize>();
    // A head the send ring cannot hold (its bound set too low for the handler's fields) is
    // answered like one that cannot be encoded: a 500, and the connection goes on.
    let fits = need <= tx.ring().max_capacity();
    let buf = tx.reserve(if fits { need } else { ERROR_HEAD }).await?;
    let encoded = match fits {
        true => encode_head(buf, response, framing, bodiless).map_err(|e| e.to_string()),
        false => Err(format!(
            "its head needs {need} bytes, past the send ring's bound"
        )),
    };
    let (n, send_body) = match encoded {
        Ok(n) => (n, !bodiless && !framing.is_head),
        Err(why) => {
            log::warn!("handler's {status} response cannot be sent: {why}");
            let error = Response::new(500);
            (
                encode_head(buf, &error, framing, false).map_err(encode_bug)?,
                false,
            )
        }
    };
    tx.commit(n);
    match response.take_body() {
        _ if !send_body => {}
        // The head and any pipelined answers before it, then `sendfile`.
        Body::File(file) if !file.is_empty() => crate::sendfile::send_file(tx, &file).await?,
        Body::Stream(stream) => send_stream(tx, rx, stream, !framing.http10).await?,
        body => {
            let body = body.as_slice();
            if body.len() > COPY_BODY_MAX {
                tx.send_vectored(&[body]).await?;
            } else if !body.is_empty() {
                tx.write(body).await?;
            }
        }
    }
    Ok(framing.keep_alive)
}

/// Sends a streamed body as it is produced: chunked, or as it is (HTTP/1.0,
/// delimited by the close). Queued bytes go out whenever the stream has to
/// wait, so a slow producer's chunks are not held back; while it waits, a
/// client that hangs up ends the answer at once, so its producer learns it
/// then (`BodySender::closed`), not at its next chunk (an event stream's
/// may be hours away).
async fn send_stream(
    tx: &mut Tx<'_>,
    rx: &mut Rx<'_>,
    stream: BodyStream,
    chunked: bool,
) -> Result<(), TransportError> {
    let mut stream = pin!(stream);
    loop {
        let next = match poll_fn(|cx| Poll::Ready(stream.as_mut().poll_next(cx))).await {
            Poll::Ready(next) => next,
            Poll::Pending => {
                tx.flush().await?;
                tokio::select! {
                    next = poll_fn(|cx| stream.as_mut().poll_next(cx)) => next,
                    gone = hung_up(rx) => return Err(gone),
                }
            }
        };
        let data = match next {
            Some(Ok(data)) => data,
            // Cut short: what was produced goes out, then the connection
            // ends without the last chunk.
            Some(Err(e)) => {
                tx.flush().await?;
                return Err(TransportError::Io(e));
            }
            None => break,
        };
        if data.is_empty() {
            continue;
        }
        if chunked {
            let buf = tx.reserve(20).await?;
            let n = chunk_header(data.len(), buf).map_err(encode_bug)?;
            tx.commit(n);
        }
        if data.len() > COPY_BODY_MAX {
            tx.send_vectored(&[&data]).await?;
        } else {
            tx.write(&data).await?;
        }
        if chunked {
            tx.write(CHUNK_END).await?;
        }
    }
    if chunked {
        // The last chunk, with the trailer section (RFC 9112 section 7.1.2).
        tx.write(b"0\r\n").await?;
        if let Some(trailers) = stream.trailers() {
            tx.write(trailers.as_bytes()).await?;
        }
        tx.write(b"\r\n").await?;
    }
    Ok(())
}

/// Reads what the client sends while its answer waits (pipelined requests stay in the ring
/// for their turn) until it hangs up: the error the answer ends with. Once the ring is full
/// it stops reading, and waits no more on the client.
async fn hung_up(rx: &mut Rx<'_>) -> TransportError {
    loop {
        let unread = rx.data().len();
        if unread >= rx.ring().capacity() {
            return std::future::pending().await;
        }
        match rx.fill(unread + 1).await {
            Ok(0) => return TransportError::Io(std::io::ErrorKind::ConnectionAborted.into()),
            Ok(_) => {}
            Err(e) => return e,
        }
    }
}

fn encode_head(
    buf: &mut [u8],
    response: &Response,
    framing: Framing,
    bodiless: bool,
) -> Result<usize, EncodeError> {
    let mut head = ResponseWriter::new(buf, Version::Http11, response.status(), None)?;
    write_date(&mut head)?;
    for field in response.fields_to_write() {
        match field {
            Fields::One(name, value) => head.header(name, value)?,
            Fields::Block(block) => head.fields(block)?,
        };
    }
    if !bodiless {
        match response.body_ref().len() {
            Some(len) => head.content_length(len as u64)?,
            None if framing.http10 => &mut head,
            None => head.chunked()?,
        };
    }
    if !framing.keep_alive {
        head.header("connection", "close")?;
    } else if framing.http10 {
        head.header("connection", "keep-alive")?;
    }
    head.finish()
}

/// A fixed response head failed to encode: a bug, reported as an I/O error.
fn encode_bug(e: EncodeError) -> TransportError {
    TransportError::Io(std::io::Error::other(e))
}

async fn continue_100(tx: &mut Tx<'_>) -> Result<(), TransportError> {
    tx.write(b"HTTP/1.1 100 Continue\r\n\r\n").await?;
    tx.flush().await
}

/// Answers an unreadable or refused request from `client` (if a PROXY protocol header
/// named it) after any earlier pipelined answers, and closes.
async fn fail(
    tx: &mut Tx<'_>,
    client: Option<SocketAddr>,
    status: u16,
    reason: &str,
) -> Result<Close, TransportError> {
    // In the access log too: no handler (nor its `AccessLog`) saw this request.
    if log::log_enabled!(target: access_log::TARGET, log::Level::Info) {
        let peer = client.or_else(|| tx.get_ref().get_ref().peer_addr());
        let peer = peer.map_or_else(|| "-".to_owned(), |p| p.to_string());
        log::info!(target: access_log::TARGET, "{peer} \"-\" {status} 0 -");
    }
    answer_and_close(tx, status, reason).await
}

/// Answers `status` with no body and closes (what follows the request is not read).
async fn answer_and_close(
    tx: &mut Tx<'_>,
    status: u16,
    reason: &str,
) -> Result<Close, TransportError> {
    log::debug!("answering {status} {reason} and closing");
    let buf = tx.reserve(160).await?;
    let encode = |buf: &mut [u8]| {
        let mut head = ResponseWriter::new(buf, Version::Http11, status, Some(reason))?;
        write_date(&mut head)?;
        head.header("connection", "close")?;
        head.content_length(0)?;
        head.finish()
    };
    let n = encode(buf).map_err(encode_bug)?;
    tx.commit(n);
    tx.shutdown_write().await?;
    Ok(Close::Linger)
}

/// Half-closes `stream` (a TLS session's `close_notify` first), waiting for room to send.
async fn shutdown_write(stream: &Socket) -> std::io::Result<()> {
    loop {
        match stream.shutdown_write() {
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => stream.writable().await?,
            done => return done,
        }
    }
}

/// After shutting down our side, reads and drops what the peer still sends
/// until it closes (bounded in time and bytes).
async fn linger(stream: &AsyncNetStream) {
    let drain = async {
        // On the heap: a buffer in the future would make every
        // connection's task, idle ones included, 8 KiB larger.
        let mut scratch = vec![0; 8192];
        let mut left = LINGER_BYTES;
        while left > 0 {
            if stream.readable().await.is_err() {
                return;
            }
            match stream.try_read(&mut scratch) {
                Ok(0) => return,
                Ok(n) => left = left.saturating_sub(n),
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
                Err(_) => return,
            }
        }
    };
    let _ = tokio::time::timeout(LINGER_TIME, drain).await;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::timeout::Sweeper;

    struct Nothing;

    impl Handler for Nothing {
        async fn call(&self, _request: &Request<'_>) -> Response {
            Response::new(204)
        }
    }

    /// An idle connection's task is this future plus tokio's 96 bytes of
    /// header, scheduler and trailer (and the stage's 8), rounded up to 128:
    /// at most 152 bytes keeps it at 256 (optimized; debug builds lay the
    /// future out a little larger).
    #[tokio::test]
    async fn a_connection_task_is_small() {
        let config = ServerConfig::new("127.0.0.1:0".parse().expect("addr"));
        let listener = tokio::net::TcpListener::bind(config.addr)
            .await
            .expect("bind");
        let client = tokio::net::TcpStream::connect(listener.local_addr().expect("addr"))
            .await
            .expect("connect");
        let sweeper = Sweeper::start(config.timeouts).expect("sweeper thread");
        let shared = Arc::new(Shared::new(Nothing, Arc::new(config)));
        let future = serve(
            Socket::Plain(client.into()),
            sweeper.register(),
            Live::new(&shared),
            (),
        );
        let size = std::mem::size_of_val(&future);
        println!("connection future: {size} bytes");
        let max = if cfg!(debug_assertions) { 168 } else { 152 };
        assert!(size <= max, "connection future: {size} bytes");
        // Behind a proxy a connection keeps its client's address: larger, and only there.
        let other = tokio::net::TcpStream::connect(listener.local_addr().expect("addr"))
            .await
            .expect("connect");
        let peer = other.peer_addr().expect("peer");
        let proxied = serve(
            Socket::Plain(other.into()),
            sweeper.register(),
            Live::new(&shared),
            peer,
        );
        println!("behind a proxy: {} bytes", std::mem::size_of_val(&proxied));
        // Never polled: the connections end at once, counted out.
        tokio::spawn(future).abort();
        tokio::spawn(proxied).abort();
        tokio::task::yield_now().await;
        shared.all_closed().await;
    }
}
