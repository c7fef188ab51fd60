//! HTTP/2 load on one connection, in the manner of `h2load`: `depth` streams
//! kept open (as many as the server's `SETTINGS_MAX_CONCURRENT_STREAMS`
//! allows), each one that ends replaced at once, the frames of each round
//! written in one go, the answers read in place from the receive ring and
//! their `DATA` counted, never copied.

use std::path::PathBuf;
use std::time::Instant;

use bytes::Bytes;
use ringwire_client::Origin;
use ringwire_http1::{Limits, RequestParser, Status};
use ringwire_http2::frame::StreamId;
use ringwire_http2::{Config, Connection, ErrorCode, Event, SendError};
use ringwire_io::tokio::{AsyncRecvTransport, AsyncSendTransport};
use ringwire_io::TransportError;
use ringwire_tls::TlsConnector;

use super::guard::Board;
use super::open::OpenError;
use super::pace::Pace;
use super::stats::Stats;
use super::{http, interrupted, next_batch, End, Failure, Socket};

/// What every stream asks, and where.
#[derive(Debug)]
pub(crate) struct Target {
    pub(crate) origin: Origin,
    /// Present for `https://`, offering `h2` alone.
    pub(crate) tls: Option<TlsConnector>,
    /// The Unix socket connections go to, if not the origin.
    pub(crate) unix: Option<PathBuf>,
    request: Request,
    /// Streams in flight per connection.
    pub(crate) depth: usize,
}

/// The request as HTTP/2 sends it: pseudo-header fields, fields, body.
#[derive(Debug)]
struct Request {
    method: Vec<u8>,
    authority: Vec<u8>,
    path: Vec<u8>,
    fields: Vec<(Vec<u8>, Vec<u8>)>,
    body: Bytes,
}

impl Target {
    /// The HTTP/1.1 request `head` (as the request builder wrote it, its
    /// `Host` the authority) and `body`, sent as HTTP/2 to `origin`.
    pub(crate) fn new(
        origin: Origin,
        tls: Option<TlsConnector>,
        head: &[u8],
        body: &[u8],
        depth: usize,
    ) -> Result<Target, String> {
        let mut parser = RequestParser::new(Limits::default());
        let head = match parser.parse(head) {
            Ok(Status::Complete(head, _)) => head,
            Ok(Status::Partial { .. }) => return Err("the request head is incomplete".to_owned()),
            Err(e) => return Err(format!("the request cannot go out as HTTP/2: {e}")),
        };
        let fields = head
            .headers()
            .iter()
            .filter(|h| !h.name.eq_ignore_ascii_case("host"))
            .map(|h| (h.name.as_bytes().to_vec(), h.value.to_vec()))
            .collect();
        let request = Request {
            method: head.method().as_str().as_bytes().to_vec(),
            authority: head.header("host").unwrap_or_default().to_vec(),
            path: head.target().as_bytes().to_vec(),
            fields,
            body: Bytes::copy_from_slice(body),
        };
        Ok(Target {
            origin,
            tls,
            unix: None,
            request,
            depth,
        })
    }
}

/// A connection to the target's origin: over TLS, only if the server
/// chose `h2` by ALPN.
pub(crate) async fn open(target: &Target) -> Result<Socket, OpenError> {
    let socket = http::open(&target.origin, target.tls.as_ref(), target.unix.as_deref()).await?;
    if target.tls.is_some() && socket.alpn_protocol().as_deref() != Some(b"h2") {
        return Err(OpenError::Upgrade(
            "the server did not choose h2 by ALPN".to_owned(),
        ));
    }
    Ok(socket)
}

/// Windows as large as `h2load`'s (`-w 30 -W 30`): the server is never
/// held up by flow control, and window updates are rare.
const WINDOW: u32 = (1 << 30) - 1;

/// An open stream, while it is answered.
#[derive(Debug, Clone, Copy)]
struct Answer {
    stream: StreamId,
    /// When the request went out (or was due, with `--rate`).
    sent: Instant,
    status: u16,
    body: u64,
}

/// Streams on one connection until the run stops or the connection ends: `depth` kept open,
/// each one that ends replaced at once (as h2load's `-m`), its latency counted from when it
/// went out. With `--rate` (one stream at a time), each waits for its turn.
pub(crate) async fn load(
    target: &Target,
    socket: &Socket,
    board: &Board,
    slot: usize,
    pace: &mut Pace,
    stats: &mut Stats,
) -> End {
    // Frames go out from the connection's own buffer.
    let (mut rx, mut tx) = match http::transports(socket) {
        Ok(transports) => transports,
        Err(e) => {
            stats.read_error(&e.to_string());
            return End::Again;
        }
    };
    let mut conn = Connection::client(Config {
        stream_window: WINDOW,
        connection_window: WINDOW,
        ..Config::default()
    });
    let scheme = target.origin.scheme().as_str().as_bytes();
    let mut streams = Streams::new(target.depth);
    loop {
        // Nothing in flight: the next request waits for its turn, and the timeout starts.
        let due = if streams.open.is_empty() {
            match next_batch(board, slot, pace, stats).await {
                Ok(due) => Some(due),
                Err(end) => return end,
            }
        } else if board.stopped() {
            return End::Stop;
        } else {
            None
        };
        let step = async {
            streams.open(&mut conn, &target.request, scheme, due)?;
            send(&mut tx, &mut conn).await.map_err(Failure::Send)?;
            // Read until a stream ends (or is refused): then another may open.
            while !streams.receive(&mut conn, &mut rx, stats)? {
                send(&mut tx, &mut conn).await.map_err(Failure::Send)?;
                if rx.fill(rx.data().len() + 1).await? == 0 {
                    return Err(Failure::Closed);
                }
            }
            Ok(())
        };
        match board.guard(slot, step).await {
            // The timeout counts from the last answer while streams are open.
            Ok(Ok(())) if streams.open.is_empty() => board.disarm(slot),
            Ok(Ok(())) => board.arm(slot),
            Ok(Err(failure)) => return failure.count(stats),
            Err(interrupt) => return interrupted(stats, interrupt),
        }
    }
}

/// The streams open on a connection.
struct Streams {
    depth: usize,
    /// In the order they opened.
    open: Vec<Answer>,
    /// The server sent `GOAWAY`: the streams above this one go unanswered
    /// (and no more open on this connection).
    last: Option<u32>,
}

impl Streams {
    fn new(depth: usize) -> Streams {
        Streams {
            depth,
            open: Vec::with_capacity(depth),
            last: None,
        }
    }

    /// Opens streams until `depth` are, or the server allows no more; the first one
    /// counts from `due` if given.
    fn open(
        &mut self,
        conn: &mut Connection,
        request: &Request,
        scheme: &[u8],
        mut due: Option<Instant>,
    ) -> Result<(), Failure> {
        while self.open.len() < self.depth {
            let fields = request
                .fields
                .iter()
                .map(|(name, value)| (&name[..], &value[..]));
            let empty = request.body.is_empty();
            let opened = conn.send_request(
                &request.method,
                scheme,
                &request.authority,
                &request.path,
                fields,
                empty,
            );
            let stream = match opened {
                Ok(stream) => stream,
                // More open as streams end (or none, after a `GOAWAY`: `receive`
                // says when the connection is done).
                Err(SendError::TooManyStreams | SendError::GoingAway) => return Ok(()),
                Err(e) => return Err(Failure::Protocol(format!("cannot open a stream: {e:?}"))),
            };
            self.open.push(Answer {
                stream,
                sent: due.take().unwrap_or_else(Instant::now),
                status: 0,
                body: 0,
            });
            if !empty {
                // The body is shared, not copied; the window takes it whole.
                let sent = conn.send_data(stream, request.body.clone(), true);
                sent.map_err(|e| Failure::Protocol(format!("cannot send a body: {e:?}")))?;
            }
        }
        Ok(())
    }

    /// Stream `stream`'s answer, if it is open.
    fn answer(&mut self, stream: StreamId) -> Option<&mut Answer> {
        self.open.iter_mut().find(|a| a.stream == stream)
    }

    /// Stream `stream` ended: its answer counts.
    fn end(&mut self, stream: StreamId, stats: &mut Stats) {
        if let Some(at) = self.open.iter().position(|a| a.stream == stream) {
            let answer = self.open.swap_remove(at);
            stats.answer(answer.status, answer.body, answer.sent.elapsed());
        }
    }

    /// Handles every whole frame in the ring; whether a stream may open
    /// (one ended, or was refused).
    fn receive(
        &mut self,
        conn: &mut Connection,
        rx: &mut AsyncRecvTransport<&Socket>,
        stats: &mut Stats,
    ) -> Result<bool, Failure> {
        let open = self.open.len();
        loop {
            let (used, event) = conn
                .recv(rx.data())
                .map_err(|e| Failure::Protocol(e.to_string()))?;
            let mut release = None;
            match event {
                None if used == 0 => break,
                Some(Event::Response {
                    stream,
                    status,
                    end_stream,
                    ..
                }) => {
                    if let Some(answer) = self.answer(stream) {
                        answer.status = status;
                    }
                    if end_stream {
                        self.end(stream, stats);
                    }
                }
                Some(Event::Data {
                    stream,
                    data,
                    end_stream,
                }) => {
                    if let Some(answer) = self.answer(stream) {
                        answer.body += data.len() as u64;
                    }
                    release = Some((stream, data.len()));
                    if end_stream {
                        self.end(stream, stats);
                    }
                }
                Some(Event::Trailers { stream, .. }) => self.end(stream, stats),
                // Opened before the server's `SETTINGS` said how many may be
                // open: asked again once one ends.
                Some(Event::Reset { stream, code, .. }) if code == ErrorCode::REFUSED_STREAM => {
                    self.open.retain(|a| a.stream != stream);
                }
                Some(Event::Reset { stream, code, .. }) => {
                    return Err(Failure::Protocol(format!(
                        "stream {} reset: {code:?}",
                        stream.get()
                    )));
                }
                Some(Event::GoAway { last_stream, code }) if code == ErrorCode::NO_ERROR => {
                    self.last = Some(last_stream.get());
                }
                Some(Event::GoAway { code, .. }) => {
                    return Err(Failure::Protocol(format!("GOAWAY: {code:?}")));
                }
                _ => {}
            }
            if let Some((stream, n)) = release {
                conn.release(stream, n);
            }
            rx.consume(used);
        }
        if let Some(last) = self.last {
            // Those the server may still answer, at or below `last`.
            if self.open.iter().all(|a| a.stream.get() > last) {
                return Err(Failure::Done);
            }
        }
        Ok(self.open.len() < open)
    }
}

/// Writes what the connection has to send.
async fn send(
    tx: &mut AsyncSendTransport<&Socket>,
    conn: &mut Connection,
) -> Result<(), TransportError> {
    // A run at a time: a body piece held by reference is one of its own.
    while !conn.transmit().is_empty() {
        let n = conn.transmit().len();
        tx.send_vectored(&[conn.transmit()]).await?;
        conn.advance(n);
    }
    Ok(())
}
