//! HTTP/2 connections: `ringwire-http2`'s state machine between the rings and the handler.
//!
//! A connection becomes HTTP/2 when TLS negotiated `h2` (ALPN) or when a cleartext one
//! starts with the HTTP/2 preface (prior knowledge, as `curl --http2-prior-knowledge`,
//! h2load and gRPC clients connect). Frames are read from the receive ring in place;
//! request bodies are copied out of `DATA` frames into a buffer per stream (bounded by
//! [`ServerConfig::max_buffered_body`]) and the handler runs once the request is whole, or,
//! for a handler that [streams bodies](Handler::streams_body), runs from the head on and
//! reads the body as it comes (the client's window given back as it reads), seeing the
//! same [`Request`] an HTTP/1.1 request gives: its head is rebuilt as an
//! HTTP/1.1 head (`:authority` as `host`, cookies joined) and parsed by the same parser,
//! so routes, middleware and static files work unchanged.
//!
//! The streams of a connection run concurrently in its task: each whole request's handler
//! is a future of its own (owning the request), and every response body is produced a
//! piece at a time as the client's flow-control windows drain it (at most [`BODY_QUEUE`]
//! waiting per stream), while the connection goes on reading frames. A slow handler or
//! an endless stream (server-sent events) holds up no other stream.
//!
//! Slow clients are timed stream by stream ([`Pacer`]): a body arriving slower than the
//! minimum rate is answered `408` (or, read by its handler as it comes, fails with a
//! timeout), and a header block trickled past the head limit ends the connection.

use std::cell::Cell;
use std::collections::VecDeque;
use std::future::{poll_fn, Future};
use std::net::SocketAddr;
use std::pin::{pin, Pin};
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::{Bytes, BytesMut};
use foldhash::{HashMap, HashMapExt};
use futures_util::future::{AbortHandle, Abortable, FutureExt as _};
use futures_util::stream::{FuturesUnordered, StreamExt as _};
use ringwire_http1::{Limits, RequestParser, Status};
use ringwire_http2::frame::{kind, FrameHeader, StreamId, HEADER_LEN, PREFACE};
use ringwire_http2::{Connection, ErrorCode, Event};
use ringwire_io::tokio::{AsyncRecvTransport, AsyncSendTransport};
use ringwire_io::{Ring, RingPool, TransportError};

mod bodies;

pub(crate) use bodies::BODY_QUEUE;
use bodies::{Bodies, Source};

use crate::body_reader::{Inflow, RequestBody, Settling};
use crate::conn::{Close, Shared};
use crate::informational;
use crate::pace::Pacer;
use crate::timeout::{Phase, Shutdown, Timer};
use crate::tunnel;
use crate::{Body, Handler, Protocol, Request, Response, ServerConfig, Socket};

type Rx<'s> = AsyncRecvTransport<&'s Socket>;
type Tx<'s> = AsyncSendTransport<&'s Socket>;

/// Whether `data` (the first bytes of a connection) is, or may become, the HTTP/2 preface.
pub(crate) fn is_preface(data: &[u8]) -> bool {
    let n = data.len().min(PREFACE.len());
    n > 0 && data[..n] == PREFACE[..n]
}

/// A request still arriving, then in its handler's hands; its buffers and parser are kept
/// for the connection's next request once it is answered. Boxed wherever it goes (map,
/// handler future, answer, spares): 320 bytes copied at each of those moves were a tenth of
/// the connection's time.
#[derive(Debug)]
struct Incoming {
    /// The request's head as an HTTP/1.1 head.
    head: Vec<u8>,
    /// Parses `head` for the handler's view.
    parser: RequestParser,
    body: Vec<u8>,
    /// The body passed `max_buffered_body`: answered 413 once it is whole.
    too_large: bool,
    /// A `HEAD` request: the answer's fields, not its body.
    head_only: bool,
    /// An extended `CONNECT` (RFC 8441): answered with an upgrade, its stream is a tunnel.
    extended_connect: bool,
    /// `head` parsed, or the status that answers it.
    verdict: Result<(), u16>,
    /// The body on its way, for a handler that streams it (it runs before the body ends).
    inflow: Option<Arc<Inflow>>,
}

/// A request body's room kept for the next request at most; a larger one is given back.
const KEPT_BODY: usize = 64 << 10;

impl Incoming {
    fn new(limits: Limits) -> Incoming {
        Incoming {
            head: Vec::new(),
            parser: RequestParser::new(limits),
            body: Vec::new(),
            too_large: false,
            head_only: false,
            extended_connect: false,
            verdict: Ok(()),
            inflow: None,
        }
    }

    /// Parses `head` for the handler, noting the error status if it is not a valid one.
    fn parse(&mut self) {
        self.verdict = match self.parser.parse(&self.head) {
            Ok(Status::Complete(..)) => Ok(()),
            Ok(Status::Partial { .. }) => Err(400),
            Err(e) => Err(e.status()),
        };
        if self.verdict.is_err() {
            // The parser is left midway: the next request gets a fresh one.
            self.parser = RequestParser::new(*self.parser.limits());
        }
    }

    /// Made ready for the next request.
    fn clear(&mut self) {
        self.body.clear();
        if self.body.capacity() > KEPT_BODY {
            self.body = Vec::new();
        }
        self.too_large = false;
        self.inflow = None;
    }
}

/// What a connection knows of its streams besides the protocol's state.
#[derive(Debug)]
struct Streams {
    /// Requests still arriving.
    incoming: HashMap<StreamId, Box<Incoming>>,
    /// Requests whole and waiting for the handler, in the order they completed.
    whole: VecDeque<StreamId>,
    /// Streams answered 413 whose bodies still come: bytes thrown away so far.
    refused: HashMap<StreamId, usize>,
    /// The peer sent `GOAWAY`.
    peer_left: bool,
    /// Handlers running, by stream: a stream the client resets has its handler dropped.
    running: HashMap<StreamId, AbortHandle>,
    /// The bodies of requests whose handlers stream them, while those handlers run.
    inflows: HashMap<StreamId, Arc<Inflow>>,
    /// Where those bodies list themselves as they are read (window to give back).
    settling: Arc<Settling>,
    /// The last bodies taken from `settling`, kept for the next.
    listed: Vec<StreamId>,
    /// How many handlers may run at once: the streams that may be open.
    max_running: usize,
    /// Answered requests' buffers and parsers, for the next ones.
    #[allow(
        clippy::vec_box,
        reason = "a spare's box moves on into `incoming` and the handler: boxed once, here"
    )]
    spare: Vec<Box<Incoming>>,
    limits: Limits,
    /// The clocks of the bodies arriving (and refused bodies thrown away as they come).
    pacer: Pacer,
}

impl Streams {
    /// Gives back what the maps grew to, for a quiet connection.
    fn shrink(&mut self) {
        self.incoming.shrink_to_fit();
        self.whole.shrink_to_fit();
        self.refused.shrink_to_fit();
        self.running.shrink_to_fit();
        self.inflows.shrink_to_fit();
        self.listed = Vec::new();
        self.spare = Vec::new();
        self.pacer.shrink();
    }

    /// Handlers that hold no stream slot: those waiting for the bodies they stream, which
    /// only reading more frames brings.
    fn streaming(&self) -> usize {
        self.inflows.len()
    }

    /// `id`'s handler answered. A body it streamed and left unread (and that no
    /// [`RequestBody`](crate::RequestBody) reads on) has its window given back, and the
    /// rest is read and thrown away as a refused one is. One a `RequestBody` reads on is
    /// no longer timed: the answer has begun, and the exchange is the application's
    /// conversation (a gRPC bidirectional call's client may be quiet for long).
    fn answered(&mut self, id: StreamId, conn: &mut Connection) {
        self.running.remove(&id);
        match self.inflows.get(&id) {
            Some(inflow) if !inflow.held() => self.let_go(id, conn),
            Some(_) => self.pacer.stop(id),
            None => {}
        }
    }

    /// Gives back the window of what the handlers read of the bodies they stream, and lets
    /// go of the bodies whose handlers answered and whose last [`RequestBody`](crate::RequestBody)
    /// is gone: those listed since the last call.
    fn settle(&mut self, conn: &mut Connection) {
        let mut listed = std::mem::take(&mut self.listed);
        self.settling.take(&mut listed);
        for &id in &listed {
            let Some(inflow) = self.inflows.get(&id) else {
                continue;
            };
            conn.release(id, inflow.take_read());
            if !inflow.held() && !self.running.contains_key(&id) {
                self.let_go(id, conn);
            }
        }
        self.listed = listed;
    }

    fn let_go(&mut self, id: StreamId, conn: &mut Connection) {
        if let Some(inflow) = self.inflows.remove(&id) {
            conn.release(id, inflow.drop_unread());
            if !inflow.ended() {
                self.refuse(id);
            }
        }
    }

    /// The rest of `id`'s body is read and thrown away as it comes, at the minimum rate.
    fn refuse(&mut self, id: StreamId) {
        self.refused.insert(id, 0);
        self.pacer.start(id);
    }

    /// `id`'s body came slower than the minimum rate. One still gathered is answered `408`
    /// and the stream reset (`NO_ERROR`: the answer is whole, the client may stop sending);
    /// a handler reading one as it comes gets a timeout error, and the rest is thrown away
    /// (at the minimum rate too); a refused one being thrown away is reset.
    fn too_slow(&mut self, id: StreamId, conn: &mut Connection, bodies: &mut Bodies) {
        if let Some(request) = self.incoming.remove(&id) {
            self.recycle(request);
            respond(conn, id, false, Response::new(408), bodies);
            conn.reset_stream(id, ErrorCode::NO_ERROR);
        } else if let Some(inflow) = self.inflows.remove(&id) {
            inflow.time_out();
            conn.release(id, inflow.drop_unread());
            self.refuse(id);
        } else if self.refused.remove(&id).is_some() {
            conn.reset_stream(id, ErrorCode::NO_ERROR);
        }
    }

    /// A request answered: its buffers serve the next one.
    fn recycle(&mut self, mut request: Box<Incoming>) {
        request.clear();
        self.spare.push(request);
    }
}

impl Drop for Streams {
    /// The connection ended: a body a [`RequestBody`](crate::RequestBody) still reads is
    /// cut off (its reader gets an error, not a wait that never ends).
    fn drop(&mut self) {
        for inflow in self.inflows.values() {
            inflow.cut();
        }
    }
}

/// How much of a refused body is read and thrown away before the stream is reset. Not
/// reset at once: curl 7.88 reports a reset after a whole answer as a failure.
const DISCARD_MAX: usize = 16 << 20;

/// Serves an HTTP/2 connection until it ends.
///
/// Frames go out from the connection's own buffer, so the send ring goes back to its pool
/// at once; the receive ring goes back too while the connection is quiet (after
/// [`Timeouts::warm`](crate::Timeouts)), and one is taken again when the client sends.
pub(crate) async fn serve<H: Handler>(
    stream: &Socket,
    rx: &mut Rx<'_>,
    tx: &mut Tx<'_>,
    timer: &mut Timer,
    shared: &Shared<H>,
    h2: ringwire_http2::Config,
    client: Option<SocketAddr>,
) -> Result<Close, TransportError> {
    let (handler, config) = (&shared.handler, &*shared.config);
    if tx.pending() == 0 {
        drop(std::mem::replace(tx.ring_mut(), Ring::empty()));
    }
    let mut conn = Connection::server(h2);
    let mut streams = Streams {
        incoming: HashMap::new(),
        whole: VecDeque::new(),
        refused: HashMap::new(),
        peer_left: false,
        running: HashMap::new(),
        inflows: HashMap::new(),
        settling: Arc::default(),
        listed: Vec::new(),
        max_running: h2.max_concurrent_streams as usize,
        spare: Vec::new(),
        limits: config.limits,
        pacer: Pacer::new(&config.timeouts),
    };
    // Informational heads handlers send, before their final answers.
    let informational = informational::Queue::default();
    // Handlers still working after their first poll.
    let mut running = FuturesUnordered::new();
    // Boxes for handlers' futures, kept from request to request.
    let mut slots = Vec::new();
    let mut bodies = Bodies::new();
    // What file bodies are read into, a piece at a time (see `read_piece`).
    let mut arena = BytesMut::new();
    // The rings' pages were given back since the connection went quiet.
    let mut released = false;
    // Signalled as handlers read the bodies they stream: window to give back.
    let settling = Arc::clone(&streams.settling);
    // Wakes the loop when a body's window or a frame's time is over; made the first time.
    let mut pace_timer = pin!(None::<tokio::time::Sleep>);
    let tunnels = Tunnels {
        rx: &shared.rx,
        tx: &shared.tx,
        shutdown: timer.shutdown(),
        socket: stream,
        keepalive: config.timeouts.upgraded_keepalive,
        probed: Cell::new(false),
    };
    loop {
        // No more handlers at once than streams may be open: a client that resets each
        // stream as soon as it opened it (CVE-2023-44487) is read no further meanwhile.
        let busy = running.len().saturating_sub(streams.streaming()) >= streams.max_running;
        if !busy {
            if let Err(error) = receive(&mut conn, rx, config, &mut streams, handler) {
                log::debug!("HTTP/2 connection error: {error}");
                return close(tx, &mut conn).await;
            }
        }
        while let Some(id) = streams.whole.pop_front() {
            if let Some(request) = streams.incoming.remove(&id) {
                // Most handlers answer at their first poll: then nothing is allocated.
                let mut slot = slots.pop().unwrap_or_else(|| Box::pin(None));
                slot.set(Some(answer(
                    id,
                    request,
                    (stream, client),
                    handler,
                    &informational,
                )));
                match poll_fn(|cx| Poll::Ready(poll_slot(&mut slot, cx))).await {
                    Poll::Ready(answered) => {
                        slots.push(slot);
                        informational.send_all(&mut conn);
                        conclude(&mut conn, &mut streams, &mut bodies, answered, &tunnels);
                    }
                    Poll::Pending => {
                        let (abort, registration) = AbortHandle::new_pair();
                        streams.running.insert(id, abort);
                        running.push(Abortable::new(Parked(Some(slot)), registration));
                    }
                }
            }
        }
        send(tx, &mut conn).await?;
        // Shutdown: GOAWAY (once), then what runs is finished before the close.
        let stopping = timer.is_stopped();
        if stopping {
            conn.go_away();
            send(tx, &mut conn).await?;
        }
        let done = running.is_empty() && bodies.is_empty() && !conn.is_busy();
        if (streams.peer_left || stopping) && done {
            return close(tx, &mut conn).await;
        }
        let quiet = conn.open_streams() == 0 && rx.data().is_empty();
        released &= quiet;
        let front = Front::of(rx.data());
        streams
            .pacer
            .frame_begun(front == Front::Begun || conn.in_header_block());
        let due = streams.pacer.due(std::time::Instant::now);
        if let Some(due) = due.map(tokio::time::Instant::from_std) {
            match pace_timer.as_mut().as_pin_mut() {
                Some(sleep) if sleep.deadline() == due => {}
                Some(sleep) => sleep.reset(due),
                None => pace_timer.set(Some(tokio::time::sleep_until(due))),
            }
        }
        timer.enter(if !running.is_empty() || streams.pacer.is_active() {
            // Bodies arriving and frames begun are timed by the pacer, stream by stream.
            Phase::Handler
        } else if !bodies.is_empty() {
            // Produced as the handler's stream or the client's window allows (an event
            // stream may be quiet for long): untimed, as HTTP/1.1's streamed bodies.
            Phase::Writing
        } else if !quiet {
            // Answers wait for the client's window alone: one that never grants it is
            // let go after the idle limit.
            Phase::Idle
        } else if released || config.timeouts.warm.is_zero() {
            Phase::Idle
        } else {
            // Kept warm for a moment, as an HTTP/1.1 connection is between requests.
            Phase::Warm
        });
        let want = rx.data().len() + 1;
        tokio::select! {
            Some(answered) = running.next(), if !running.is_empty() => {
                // Every answer ready by now goes out in the same write.
                let mut next = Some(answered);
                while let Some(answered) = next {
                    // (An aborted handler's stream was reset: nothing to send.)
                    if let Ok((answered, slot)) = answered {
                        slots.push(slot);
                        informational.send_all(&mut conn);
                        conclude(&mut conn, &mut streams, &mut bodies, answered, &tunnels);
                    }
                    next = running.next().now_or_never().flatten();
                }
            }
            piece = bodies.produce(&mut arena, &conn), if !bodies.is_empty() => {
                // Every piece ready by now goes out in the same write, up to a bound: a
                // file behind an open window is always ready.
                let mut next = Some(piece);
                while let Some((id, piece)) = next {
                    bodies.take_piece(&mut conn, id, piece);
                    next = (conn.pending() < BODY_QUEUE)
                        .then(|| bodies.produce_now(&mut arena, &conn))
                        .flatten();
                }
            }
            () = settling.listed(), if !streams.inflows.is_empty() => streams.settle(&mut conn),
            // Only a handler still running can queue a head (one that answered at its first
            // poll had its heads sent before its answer).
            () = informational.queued(), if !running.is_empty() => informational.send_all(&mut conn),
            () = poll_fn(|cx| pace_timer.as_mut().as_pin_mut().map_or(Poll::Pending, |t| t.poll(cx))),
                if due.is_some() => {
                let now = std::time::Instant::now();
                if front == Front::Whole {
                    // A frame waits whole and unread: this side is not reading (its handlers
                    // all busy, or the client not taking the answers), so no clock runs.
                    streams.pacer.restart(now);
                } else {
                    let partial = match front {
                        Front::Data(id, n) => Some((id, n)),
                        _ => None,
                    };
                    let expired = streams.pacer.expire(now, partial);
                    for id in expired.bodies {
                        streams.too_slow(id, &mut conn, &mut bodies);
                    }
                    if expired.frame {
                        // A frame (a header block, say) trickled past the head limit.
                        conn.go_away();
                        return close(tx, &mut conn).await;
                    }
                }
            }
            filled = fill(rx, &shared.rx, stream, want), if !busy => if filled? == 0 {
                return Ok(Close::Now);
            },
            () = timer.over(), if !stopping => {
                if timer.is_stopped() {
                    // Shutdown: said and done at the top of the loop.
                } else if timer.phase() == Phase::Warm {
                    // Quiet since the last answer: the receive ring goes back to its pool
                    // (its pages released there), the connection waits on in `Idle`.
                    drop(std::mem::replace(rx.ring_mut(), Ring::empty()));
                    if let Err(e) = stream.release_idle_memory() {
                        log::debug!("releasing an idle TLS session's pages: {e}");
                    }
                    // And what the buffers grew to (a large answer's bytes, say).
                    conn.shrink();
                    streams.shrink();
                    slots = Vec::new();
                    bodies.shrink();
                    arena = BytesMut::new();
                    released = true;
                } else {
                    // A limit passed (the idle one, say): goodbye.
                    conn.go_away();
                    return close(tx, &mut conn).await;
                }
            }
        }
    }
}

/// Receives into the connection's ring; one given back while the connection was quiet is
/// taken again from `pool` once the client sends.
async fn fill(
    rx: &mut Rx<'_>,
    pool: &RingPool,
    stream: &Socket,
    want: usize,
) -> Result<usize, TransportError> {
    if rx.ring().capacity() == 0 {
        poll_fn(|cx| crate::socket::poll_read_ready(stream, cx)).await?;
        *rx.ring_mut() = pool.take()?;
    }
    rx.fill(want).await
}

/// Handles every whole frame buffered, noting requests as they become whole (or, for a
/// handler that streams bodies, as their heads come).
fn receive<H: Handler>(
    conn: &mut Connection,
    rx: &mut Rx<'_>,
    config: &ServerConfig,
    streams: &mut Streams,
    handler: &H,
) -> Result<(), ringwire_http2::Error> {
    let Streams {
        incoming,
        whole,
        refused,
        peer_left,
        running,
        inflows,
        settling,
        listed: _,
        max_running,
        spare,
        limits,
        pacer,
    } = streams;
    // Whole requests wait for a handler only up to the limit; the rest stays unread.
    while (whole.len() + running.len()).saturating_sub(inflows.len()) < *max_running {
        let (used, event) = conn.recv(rx.data())?;
        let (mut release, mut reset) = (None, None);
        match event {
            None => {}
            Some(Event::Request {
                stream,
                head,
                end_stream,
            }) => {
                let mut request = spare
                    .pop()
                    .unwrap_or_else(|| Box::new(Incoming::new(*limits)));
                request.head_only = head.method == b"HEAD";
                request.extended_connect = head.protocol.is_some();
                head.write_http1(&mut request.head);
                request.parse();
                // A tunnel's body is the protocol's bytes: read as they come, whatever the
                // handler says of bodies.
                let streamed = !end_stream
                    && request.verdict.is_ok()
                    && (request.extended_connect
                        || handler.streams_body(&request.parser.head().view(&request.head)));
                if streamed {
                    let inflow = Arc::new(Inflow::new(stream, Arc::clone(settling)));
                    inflows.insert(stream, Arc::clone(&inflow));
                    request.inflow = Some(inflow);
                }
                incoming.insert(stream, request);
                if end_stream || streamed {
                    whole.push_back(stream);
                }
                if !end_stream {
                    pacer.start(stream);
                }
            }
            Some(Event::Data {
                stream,
                data,
                end_stream,
            }) => {
                if end_stream {
                    pacer.stop(stream);
                } else {
                    pacer.received(stream, data.len());
                }
                if let Some(inflow) = inflows.get(&stream) {
                    inflow.push(data, end_stream);
                } else if let Some(request) = incoming.get_mut(&stream).filter(|r| !r.too_large) {
                    if request.body.len() + data.len() > config.max_buffered_body {
                        // Answered at once; the rest of the body is thrown away.
                        request.too_large = true;
                        request.body = Vec::new();
                        whole.push_back(stream);
                        if !end_stream {
                            refused.insert(stream, 0);
                        }
                    } else {
                        request.body.extend_from_slice(data);
                        if end_stream {
                            whole.push_back(stream);
                        }
                    }
                } else if let Some(discarded) = refused.get_mut(&stream) {
                    *discarded += data.len();
                    if end_stream || *discarded > DISCARD_MAX {
                        refused.remove(&stream);
                        pacer.stop(stream);
                        reset = Some(stream);
                    }
                }
                // A streamed body's window comes back as its handler reads it.
                if !inflows.contains_key(&stream) {
                    release = Some((stream, data.len()));
                }
            }
            Some(Event::Trailers { stream, .. }) => {
                pacer.stop(stream);
                match inflows.get(&stream) {
                    Some(inflow) => inflow.push(&[], true),
                    None => whole.push_back(stream),
                }
            }
            Some(Event::Reset { stream, .. }) => {
                pacer.stop(stream);
                if let Some(inflow) = inflows.remove(&stream) {
                    inflow.cut();
                }
                incoming.remove(&stream);
                refused.remove(&stream);
                if let Some(handler) = running.remove(&stream) {
                    handler.abort();
                }
            }
            Some(Event::GoAway { .. }) => *peer_left = true,
            Some(_) => {}
        }
        if let Some((stream, n)) = release {
            conn.release(stream, n);
        }
        if let Some(stream) = reset {
            // A no-op for a stream that ended: both sides are done.
            conn.reset_stream(stream, ErrorCode::NO_ERROR);
        }
        if used == 0 {
            return Ok(());
        }
        rx.consume(used);
    }
    Ok(())
}

/// The handler's answer to a whole request, with the stream it goes on and whether it
/// answers a `HEAD`, and the request back. Owns the request, which the handler borrows
/// while it runs.
async fn answer<H: Handler>(
    id: StreamId,
    request: Box<Incoming>,
    (stream, client): (&Socket, Option<SocketAddr>),
    handler: &H,
    informational: &informational::Queue,
) -> Answered {
    let response = match request.verdict {
        _ if request.too_large => Response::new(413),
        Ok(()) => {
            let head = request.parser.head().view(&request.head);
            let sink = informational.of(id);
            let mut plain = Request::new(head, &request.body)
                .on(stream, client)
                .over_http2()
                .with_informational(&sink);
            if request.extended_connect {
                plain = plain.as_extended_connect();
            }
            match &request.inflow {
                Some(inflow) => handler.call(&plain.with_inflow(inflow)).await,
                None => handler.call(&plain).await,
            }
        }
        Err(status) => Response::new(status),
    };
    (id, request.head_only, response, request)
}

/// What a handler's answer is: its stream, whether it answers a `HEAD`, the answer, and the
/// request back.
type Answered = (StreamId, bool, Response, Box<Incoming>);

/// What a tunnel (an extended `CONNECT` answered with an upgrade) is made with.
struct Tunnels<'a> {
    rx: &'a RingPool,
    tx: &'a RingPool,
    shutdown: Shutdown,
    /// The connection, and the keepalive it gets with its first tunnel: a connection
    /// whose streams are all tunnels is untimed, as an HTTP/1.1 upgrade is, so the
    /// kernel's probes end one whose peer vanished.
    socket: &'a Socket,
    keepalive: Duration,
    probed: Cell<bool>,
}

/// Sends a handler's answer (its head, and its body or where the body comes from), and
/// keeps its request's buffers for the next. An upgrade answering an extended `CONNECT`
/// becomes a `200` whose stream carries the new protocol ([`tunnel`](crate::tunnel)); any
/// other success answering one, a `501`.
fn conclude(
    conn: &mut Connection,
    streams: &mut Streams,
    bodies: &mut Bodies,
    (id, head_only, mut response, request): Answered,
    tunnels: &Tunnels<'_>,
) {
    let status = response.wire_status(Protocol::Http2, request.extended_connect);
    let upgrade = response.take_upgrade();
    // Held before the stream is settled, which lets go of a body no one reads.
    let inbound = request
        .inflow
        .as_ref()
        .filter(|_| upgrade.is_some() && status == 200)
        .map(|inflow| RequestBody::new(Arc::clone(inflow)));
    streams.answered(id, conn);
    streams.recycle(request);
    if let Some(on_upgrade) = upgrade {
        let rings = || {
            let rx = tunnels.rx.take();
            rx.and_then(|rx| tunnels.tx.take().map(|tx| (rx, tx)))
        };
        response = match inbound.map(|inbound| (inbound, rings())) {
            Some((inbound, Ok(rings))) => {
                if !tunnels.probed.replace(true) {
                    if let Err(e) =
                        crate::socket::keepalive(tunnels.socket.get_ref(), tunnels.keepalive)
                    {
                        log::debug!("keepalive on an HTTP/2 connection with a tunnel: {e}");
                    }
                }
                let shutdown = tunnels.shutdown.clone();
                let body = tunnel::open(inbound, rings, shutdown, on_upgrade);
                let mut ok = response.status_code(200).body(body);
                ok.remove_header("upgrade");
                ok.remove_header("connection");
                ok
            }
            Some((_, Err(e))) => {
                log::warn!("no rings for an HTTP/2 tunnel: {e}");
                Response::new(503)
            }
            None => {
                // HTTP/2 has no `Upgrade` (RFC 9113 section 8.6) but extended `CONNECT`.
                log::warn!("an upgrade answer to an HTTP/2 request other than extended CONNECT: answering 500");
                Response::new(500)
            }
        };
    } else if status != response.status() {
        log::debug!(
            "an extended CONNECT answered {} without an upgrade: answering {status}",
            response.status()
        );
        response = Response::new(status);
    }
    respond(conn, id, head_only, response, bodies);
}

/// A handler's future in a box that outlives it: emptied (the future dropped in place)
/// when it is done, and filled with the next request's.
type Slot<F> = Pin<Box<Option<F>>>;

/// Polls the future in `slot`: its output once it is done, the slot emptied.
fn poll_slot<F: Future>(slot: &mut Slot<F>, cx: &mut Context<'_>) -> Poll<F::Output> {
    let Some(future) = slot.as_mut().as_pin_mut() else {
        return Poll::Pending;
    };
    let output = std::task::ready!(future.poll(cx));
    slot.set(None);
    Poll::Ready(output)
}

/// A handler that did not answer at its first poll, run among the connection's others;
/// its slot comes back with the answer (taken once: polled again, it stays pending).
struct Parked<F>(Option<Slot<F>>);

impl<F: Future> Future for Parked<F> {
    type Output = (F::Output, Slot<F>);

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let parked = self.get_mut();
        // The box moves, the future in it stays where it is.
        let Some(mut slot) = parked.0.take() else {
            return Poll::Pending;
        };
        match poll_slot(&mut slot, cx) {
            Poll::Ready(output) => Poll::Ready((output, slot)),
            Poll::Pending => {
                parked.0 = Some(slot);
                Poll::Pending
            }
        }
    }
}

/// Sends `response`'s head on stream `id`, and its body, or notes where the body comes
/// from in `bodies`.
fn respond(
    conn: &mut Connection,
    id: StreamId,
    head_only: bool,
    mut response: Response,
    bodies: &mut Bodies,
) {
    let status = response.status();
    let body = response.take_body();
    let bodiless = matches!(status, 100..=199 | 204 | 304);
    let mut text = [0; 20];
    let length = body
        .len()
        .filter(|_| !bodiless)
        .map(|n| ringwire_http1::encode::decimal(n as u64, &mut text));
    let date = crate::date::date();
    let fields = std::iter::once((&b"date"[..], &date[..]))
        .chain(
            response
                .headers()
                .map(|(name, value)| (name.as_bytes(), value)),
        )
        .chain(length.map(|n| (&b"content-length"[..], n)));
    let empty = bodiless || head_only || body.is_empty();
    // Refused only when the client reset the stream meanwhile.
    if conn.send_response(id, status, fields, empty).is_err() || empty {
        return;
    }
    let whole = match body {
        Body::Empty => return,
        Body::Static(bytes) => Bytes::from_static(bytes),
        Body::Bytes(bytes) => bytes,
        // Produced a piece at a time as the windows drain.
        Body::File(file) => {
            bodies.insert(id, Source::File(file, 0));
            return;
        }
        Body::Stream(stream) => {
            bodies.insert(id, Source::Stream(Box::pin(stream)));
            return;
        }
    };
    // In memory: queued whole (refused only when the client reset the stream meanwhile).
    let _ = conn.send_data(id, whole, true);
}

/// What waits at the front of the receive ring once every frame that could be handled was.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Front {
    /// Nothing.
    Empty,
    /// A whole frame, left unread: the connection is not reading for now.
    Whole,
    /// Part of a `DATA` frame on a stream: how many of its payload's bytes came.
    Data(StreamId, usize),
    /// Part of any other frame (or of the preface).
    Begun,
}

impl Front {
    fn of(data: &[u8]) -> Front {
        match FrameHeader::parse(data) {
            _ if data.is_empty() => Front::Empty,
            None => Front::Begun,
            Some(head) if data.len() >= HEADER_LEN + head.len as usize => Front::Whole,
            Some(head) if head.kind == kind::DATA => {
                Front::Data(head.stream, data.len() - HEADER_LEN)
            }
            Some(_) => Front::Begun,
        }
    }
}

/// Sends the connection's last frames (its `GOAWAY`) and shuts our side down.
async fn close(tx: &mut Tx<'_>, conn: &mut Connection) -> Result<Close, TransportError> {
    send(tx, conn).await?;
    tx.shutdown_write().await?;
    Ok(Close::Linger)
}

/// Writes what the connection has to send, from its buffer and from the bodies' own bytes
/// (no copy into the send ring), up to [`RUNS`] runs per write.
async fn send(tx: &mut Tx<'_>, conn: &mut Connection) -> Result<(), TransportError> {
    loop {
        let mut runs: [&[u8]; RUNS] = [&[]; RUNS];
        let filled = conn.transmit_vectored(&mut runs);
        if filled == 0 {
            return Ok(());
        }
        let n = runs[..filled].iter().map(|run| run.len()).sum();
        tx.send_vectored(&runs[..filled]).await?;
        conn.advance(n);
    }
}

/// Runs of bytes per vectored write: a frame header and its piece are two, so 32 carry 16
/// frames (256 KiB of 16 KiB frames). The array lives in the connection's future while a
/// write waits, so every connection pays for it, idle or not: 64 runs made an idle HTTP/2
/// connection 1 KiB larger than none, 32 half that; 16 cost 64 KiB answers 17% more CPU.
const RUNS: usize = 32;
