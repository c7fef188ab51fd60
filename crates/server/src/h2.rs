//! HTTP/2 connections: `ringwire-http2`'s state machine between the rings and the handler.
//!
//! A connection becomes HTTP/2 when TLS negotiated `h2` (ALPN) or when a cleartext one
//! starts with the HTTP/2 preface (prior knowledge, as `curl --http2-prior-knowledge`,
//! h2load and gRPC clients connect). Frames are read from the receive ring in place;
//! request bodies are copied out of `DATA` frames into a buffer per stream (bounded by
//! [`ServerConfig::max_buffered_body`]) and the handler runs once the request is whole,
//! seeing the same [`Request`] an HTTP/1.1 request gives: its head is rebuilt as an
//! HTTP/1.1 head (`:authority` as `host`, cookies joined) and parsed by the same parser,
//! so routes, middleware and static files work unchanged.
//!
//! Handlers run one at a time per connection, in the order their requests completed;
//! response bodies go out as the client's flow-control windows allow while the
//! connection goes on reading.

use std::collections::{HashMap, VecDeque};
use std::future::poll_fn;
use std::os::unix::fs::FileExt as _;
use std::pin::pin;

use bytes::Bytes;
use futures_core::Stream as _;
use ringwire_http1::{RequestParser, Status};
use ringwire_http2::frame::{StreamId, PREFACE};
use ringwire_http2::{Connection, ErrorCode, Event, RequestHead};
use ringwire_io::tokio::{AsyncRecvTransport, AsyncSendTransport};
use ringwire_io::TransportError;

use crate::conn::Close;
use crate::response::Fields;
use crate::timeout::{Phase, Timer};
use crate::{Body, Handler, Request, Response, ServerConfig, Socket};

type Rx<'s> = AsyncRecvTransport<&'s Socket>;
type Tx<'s> = AsyncSendTransport<&'s Socket>;

/// How much of one response body waits in the connection at most before the handler's
/// stream is asked for more.
const STREAM_QUEUE: usize = 256 << 10;

/// Whether `data` (the first bytes of a connection) is, or may become, the HTTP/2 preface.
pub(crate) fn is_preface(data: &[u8]) -> bool {
    let n = data.len().min(PREFACE.len());
    n > 0 && data[..n] == PREFACE[..n]
}

/// A request still arriving.
#[derive(Debug, Default)]
struct Incoming {
    /// The request's head as an HTTP/1.1 head.
    head: Vec<u8>,
    body: Vec<u8>,
    /// The body passed `max_buffered_body`: answered 413 once it is whole.
    too_large: bool,
}

/// Serves an HTTP/2 connection until it ends.
pub(crate) async fn serve<H: Handler>(
    stream: &Socket,
    rx: &mut Rx<'_>,
    tx: &mut Tx<'_>,
    timer: &mut Timer,
    handler: &H,
    config: &ServerConfig,
    h2: ringwire_http2::Config,
) -> Result<Close, TransportError> {
    let mut conn = Connection::server(h2);
    let mut incoming: HashMap<StreamId, Incoming> = HashMap::new();
    let mut whole: VecDeque<StreamId> = VecDeque::new();
    let mut parser = RequestParser::new(config.limits);
    let mut peer_left = false;
    loop {
        if let Err(error) = receive(
            &mut conn,
            rx,
            timer,
            config,
            &mut incoming,
            &mut whole,
            &mut peer_left,
        ) {
            log::debug!("HTTP/2 connection error: {error}");
            return close(tx, &mut conn).await;
        }
        while let Some(id) = whole.pop_front() {
            let Some(request) = incoming.remove(&id) else {
                continue;
            };
            timer.enter(Phase::Handler);
            let response = answer(&mut parser, stream, handler, &request).await;
            respond(
                &mut conn,
                rx,
                tx,
                timer,
                config,
                id,
                response,
                &mut incoming,
                &mut whole,
                &mut peer_left,
            )
            .await?;
        }
        send(tx, &mut conn).await?;
        if timer.is_stopped() {
            conn.go_away();
        }
        if (peer_left || timer.is_stopped()) && !conn.is_busy() {
            return close(tx, &mut conn).await;
        }
        timer.enter(if conn.open_streams() == 0 {
            Phase::Idle
        } else {
            Phase::Body
        });
        let want = rx.data().len() + 1;
        tokio::select! {
            filled = rx.fill(want) => if filled? == 0 {
                return Ok(Close::Now);
            },
            _ = timer.expired() => {
                conn.go_away();
                return close(tx, &mut conn).await;
            }
        }
    }
}

/// Handles every whole frame buffered, noting requests as they become whole.
fn receive(
    conn: &mut Connection,
    rx: &mut Rx<'_>,
    timer: &Timer,
    config: &ServerConfig,
    incoming: &mut HashMap<StreamId, Incoming>,
    whole: &mut VecDeque<StreamId>,
    peer_left: &mut bool,
) -> Result<(), ringwire_http2::Error> {
    loop {
        let (used, event) = conn.recv(rx.data())?;
        let mut release = None;
        match event {
            None => {}
            Some(Event::Request {
                stream,
                head,
                end_stream,
            }) => {
                let mut request = Incoming::default();
                http1_head(&head, &mut request.head);
                incoming.insert(stream, request);
                if end_stream {
                    whole.push_back(stream);
                }
            }
            Some(Event::Data {
                stream,
                data,
                end_stream,
            }) => {
                timer.progress(data.len());
                if let Some(request) = incoming.get_mut(&stream) {
                    if request.body.len() + data.len() > config.max_buffered_body {
                        request.too_large = true;
                        request.body = Vec::new();
                    } else if !request.too_large {
                        request.body.extend_from_slice(data);
                    }
                    if end_stream {
                        whole.push_back(stream);
                    }
                }
                release = Some((stream, data.len()));
            }
            Some(Event::Trailers { stream, .. }) => whole.push_back(stream),
            Some(Event::Reset { stream, .. }) => {
                incoming.remove(&stream);
            }
            Some(Event::GoAway { .. }) => *peer_left = true,
            Some(_) => {}
        }
        if let Some((stream, n)) = release {
            conn.release(stream, n);
        }
        if used == 0 {
            return Ok(());
        }
        rx.consume(used);
    }
}

/// Rebuilds `head` as an HTTP/1.1 request head in `out`.
fn http1_head(head: &RequestHead<'_>, out: &mut Vec<u8>) {
    out.clear();
    out.extend_from_slice(head.method);
    out.push(b' ');
    out.extend_from_slice(if head.method == b"CONNECT" {
        head.authority.unwrap_or_default()
    } else {
        head.path
    });
    out.extend_from_slice(b" HTTP/1.1\r\n");
    if let Some(authority) = head.authority.filter(|_| head.fields.get("host").is_none()) {
        field(out, b"host", authority);
    }
    // Section 8.2.3: cookies may come as separate fields; HTTP/1.1 has one.
    let mut cookies = head.fields.iter().filter(|(name, _)| *name == b"cookie");
    if let Some((_, first)) = cookies.next() {
        out.extend_from_slice(b"cookie: ");
        out.extend_from_slice(first);
        for (_, value) in cookies {
            out.extend_from_slice(b"; ");
            out.extend_from_slice(value);
        }
        out.extend_from_slice(b"\r\n");
    }
    for (name, value) in head.fields.iter().filter(|(name, _)| *name != b"cookie") {
        field(out, name, value);
    }
    out.extend_from_slice(b"\r\n");
}

fn field(out: &mut Vec<u8>, name: &[u8], value: &[u8]) {
    out.extend_from_slice(name);
    out.extend_from_slice(b": ");
    out.extend_from_slice(value);
    out.extend_from_slice(b"\r\n");
}

/// The handler's answer to a whole request.
async fn answer<H: Handler>(
    parser: &mut RequestParser,
    stream: &Socket,
    handler: &H,
    request: &Incoming,
) -> Response {
    if request.too_large {
        return Response::new(413);
    }
    match parser.parse(&request.head) {
        Ok(Status::Complete(head, _)) => {
            let request = Request::new(head, &request.body).on(stream);
            handler.call(&request).await
        }
        Ok(Status::Partial { .. }) => Response::new(400),
        Err(e) => Response::new(e.status()),
    }
}

/// Sends `response` on stream `id`.
#[allow(clippy::too_many_arguments)]
async fn respond(
    conn: &mut Connection,
    rx: &mut Rx<'_>,
    tx: &mut Tx<'_>,
    timer: &mut Timer,
    config: &ServerConfig,
    id: StreamId,
    mut response: Response,
    incoming: &mut HashMap<StreamId, Incoming>,
    whole: &mut VecDeque<StreamId>,
    peer_left: &mut bool,
) -> Result<(), TransportError> {
    if response.take_upgrade().is_some() {
        // HTTP/2 has no `Upgrade` (RFC 9113 section 8.6).
        log::warn!("an upgrade answer to an HTTP/2 request: answering 500");
        response = Response::new(500);
    }
    let status = response.status();
    let body = response.take_body();
    let bodiless = matches!(status, 100..=199 | 204 | 304);
    let length = body.len().filter(|_| !bodiless).map(|n| n.to_string());
    let date = crate::date::date();
    let mut fields: Vec<(&[u8], &[u8])> = vec![(b"date", &date)];
    for field in response.fields_to_write() {
        match field {
            Fields::One(name, value) => fields.push((name.as_bytes(), value)),
            Fields::Block(block) => fields.extend(block.iter().map(|(n, v)| (n.as_bytes(), v))),
        }
    }
    if let Some(length) = &length {
        fields.push((b"content-length", length.as_bytes()));
    }
    let empty = bodiless || body.is_empty();
    if conn.send_response(id, status, fields, empty).is_err() || empty {
        return Ok(());
    }
    timer.enter(Phase::Writing);
    let _ = match body {
        Body::Empty => Ok(()),
        Body::Static(bytes) => conn.send_data(id, Bytes::from_static(bytes), true),
        Body::Bytes(bytes) => conn.send_data(id, bytes, true),
        Body::File(file) => {
            let mut bytes = vec![0; file.len() as usize];
            match file.file().read_exact_at(&mut bytes, file.offset()) {
                Ok(()) => conn.send_data(id, bytes.into(), true),
                Err(e) => {
                    log::warn!("reading a file body: {e}");
                    conn.reset_stream(id, ErrorCode::INTERNAL_ERROR);
                    Ok(())
                }
            }
        }
        Body::Stream(stream) => {
            let mut stream = pin!(stream);
            loop {
                // Only so much waits for the client's window: then the client is heard
                // (its window updates) before more is produced.
                while conn.queued(id) > STREAM_QUEUE {
                    send(tx, conn).await?;
                    let want = rx.data().len() + 1;
                    if rx.fill(want).await? == 0 {
                        return Err(TransportError::Io(std::io::ErrorKind::UnexpectedEof.into()));
                    }
                    if let Err(e) = receive(conn, rx, timer, config, incoming, whole, peer_left) {
                        log::debug!("HTTP/2 connection error: {e}");
                        return Ok(());
                    }
                }
                match poll_fn(|cx| stream.as_mut().poll_next(cx)).await {
                    Some(Ok(data)) => {
                        if conn.send_data(id, data, false).is_err() {
                            break;
                        }
                        send(tx, conn).await?;
                    }
                    Some(Err(e)) => {
                        log::debug!("a streamed body failed: {e}");
                        conn.reset_stream(id, ErrorCode::INTERNAL_ERROR);
                        break;
                    }
                    None => {
                        break conn
                            .send_data(id, Bytes::new(), true)
                            .map(drop)
                            .unwrap_or(())
                    }
                }
            }
            Ok(())
        }
    };
    Ok(())
}

/// Sends the connection's last frames (its `GOAWAY`) and shuts our side down.
async fn close(tx: &mut Tx<'_>, conn: &mut Connection) -> Result<Close, TransportError> {
    send(tx, conn).await?;
    tx.shutdown_write().await?;
    Ok(Close::Linger)
}

/// Writes what the connection has to send.
async fn send(tx: &mut Tx<'_>, conn: &mut Connection) -> Result<(), TransportError> {
    while !conn.transmit().is_empty() {
        let out = conn.transmit();
        let n = out.len();
        tx.write(out).await?;
        conn.advance(n);
    }
    tx.flush().await
}
