//! Runs a `tower::Service` — an axum `Router`, say — as a [`Handler`].
//!
//! The bridge costs what the ecosystem types cost: the head is copied into
//! an `http::Request` (a `HeaderMap` and its strings) and the body into a
//! [`TowerBody`], whole, or (with [`TowerHandler::streaming`]) as it
//! arrives. The response's body is taken as it is when its size is known
//! (one `Bytes`, usually uncopied), and streamed (chunked, with its trailers)
//! when not.
//!
//! An HTTP/2 body arriving goes to the service as the connection reads it. An HTTP/1.1
//! one is read from the connection by the handler's call itself, alongside the service
//! (the connection writes nothing until the call returns): into the same kind of buffer
//! an HTTP/2 stream's body fills, kept a few pieces ahead of the service's reading; once
//! the service has answered, whatever of the body it still holds (an echo, say) is read
//! to its end, up to `HELD_AFTER_ANSWER` bytes (past that its reader gets an error),
//! before the answer goes out.

use std::fmt;
use std::future::{poll_fn, Future};
use std::io;
use std::pin::{pin, Pin};
use std::sync::Arc;
use std::task::{Context, Poll};

use bytes::{Bytes, BytesMut};
use futures_core::{ready, Stream};
use futures_util::future::{select, Either};
use http_body::{Body as HttpBody, Frame, SizeHint};
use ringwire_http1::encode::FieldBlock;
use ringwire_http2::frame::StreamId;
use tower_service::Service;

use crate::body_reader::{Inflow, Settling};
use crate::{Body, BodyFrame, BodyReader, Handler, Protocol, Request, RequestBody, Response};

/// A [`Handler`] that forwards every request to a `tower::Service`:
///
/// ```no_run
/// use axum::routing::get;
/// use ringwire_server::{Server, ServerConfig, TowerHandler};
///
/// let app = axum::Router::new().route("/", get(|| async { "hello from axum\n" }));
/// let server = Server::bind(ServerConfig::default())?;
/// server.run(TowerHandler::new(app), std::future::pending())?;
/// # Ok::<(), std::io::Error>(())
/// ```
///
/// The service is cloned per request, as hyper does; axum's `Router` is a
/// pointer. A service error, or a request the `http` types cannot hold,
/// is answered with `500`.
#[derive(Debug, Clone)]
pub struct TowerHandler<S> {
    service: S,
    /// Request bodies go to the service as they arrive.
    streaming: bool,
}

impl<S> TowerHandler<S> {
    /// Serves `service`; a request body reaches it whole (up to
    /// [`ServerConfig::max_buffered_body`](crate::ServerConfig::max_buffered_body)).
    pub fn new(service: S) -> Self {
        TowerHandler {
            service,
            streaming: false,
        }
    }

    /// Serves `service`, handing it request bodies as they arrive, of any size: an upload
    /// streamed to disk, a gRPC service's streaming calls (tonic's among them). The
    /// service's own limits apply (axum's `DefaultBodyLimit` to its extractors). Over HTTP/2
    /// the body can be read for as long as the stream lasts, the answer under way. Over
    /// HTTP/1.1 the connection writes nothing until the service has answered: the body is
    /// read alongside the service, a little ahead of it, and whatever of it the service
    /// still holds once it has answered (an echo, say) is read to its end first, up to
    /// 8 MiB (past that, its reader gets an error).
    pub fn streaming(service: S) -> Self {
        TowerHandler {
            service,
            streaming: true,
        }
    }
}

/// A request body as a [`TowerHandler`]'s service gets it: whole, or read as it arrives.
#[derive(Debug)]
pub struct TowerBody(Inner);

#[derive(Debug)]
enum Inner {
    /// The bytes, until they are taken; `None` for an empty body.
    Whole(Option<Bytes>),
    Arriving(RequestBody),
}

impl Inner {
    fn whole(bytes: Bytes) -> Inner {
        Inner::Whole((!bytes.is_empty()).then_some(bytes))
    }
}

impl HttpBody for TowerBody {
    type Data = Bytes;
    type Error = io::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, io::Error>>> {
        match &mut self.0 {
            Inner::Whole(bytes) => Poll::Ready(bytes.take().map(|b| Ok(Frame::data(b)))),
            Inner::Arriving(body) => Pin::new(body)
                .poll_next(cx)
                .map(|piece| piece.map(|data| data.map(Frame::data))),
        }
    }

    fn is_end_stream(&self) -> bool {
        matches!(self.0, Inner::Whole(None))
    }

    fn size_hint(&self) -> SizeHint {
        match &self.0 {
            Inner::Whole(bytes) => {
                SizeHint::with_exact(bytes.as_ref().map_or(0, |b| b.len() as u64))
            }
            Inner::Arriving(_) => SizeHint::default(),
        }
    }
}

impl<S, B> Handler for TowerHandler<S>
where
    S: Service<http::Request<TowerBody>, Response = http::Response<B>>
        + Clone
        + Send
        + Sync
        + 'static,
    S::Future: Send,
    S::Error: fmt::Display,
    B: HttpBody<Data = Bytes> + Send + 'static,
    B::Error: fmt::Display,
{
    fn streams_body(&self, _: &ringwire_http1::Request<'_>) -> bool {
        self.streaming
    }

    async fn call(&self, request: &Request<'_>) -> Response {
        let mut head = match request.head().to_http() {
            Ok(head) => head,
            Err(e) => {
                log::warn!("request not representable as http::Request: {e}");
                return Response::new(500);
            }
        };
        if request.protocol() == Protocol::Http2 {
            *head.version_mut() = http::Version::HTTP_2;
        }
        let (body, pump) = match (request.body_stream(), request.body_reader()) {
            (Some(arriving), _) => (Inner::Arriving(arriving), None),
            (None, Some(reader)) => {
                let pump = Pump::new(reader);
                (
                    Inner::Arriving(RequestBody::new(Arc::clone(&pump.inflow))),
                    Some(pump),
                )
            }
            (None, None) => (Inner::whole(Bytes::copy_from_slice(request.body())), None),
        };
        let answer = answer(self.service.clone(), head.map(|()| TowerBody(body)));
        match pump {
            None => answer.await,
            Some(pump) => pump.alongside(answer).await,
        }
    }
}

/// The service's answer to `request`, as a [`Response`].
async fn answer<S, B>(mut service: S, request: http::Request<TowerBody>) -> Response
where
    S: Service<http::Request<TowerBody>, Response = http::Response<B>>,
    S::Error: fmt::Display,
    B: HttpBody<Data = Bytes> + Send + 'static,
    B::Error: fmt::Display,
{
    if let Err(e) = poll_fn(|cx| service.poll_ready(cx)).await {
        log::warn!("service not ready: {e}");
        return Response::new(500);
    }
    let response = match service.call(request).await {
        Ok(response) => response,
        Err(e) => {
            log::warn!("service failed: {e}");
            return Response::new(500);
        }
    };
    from_http(response).await
}

/// How far an HTTP/1.1 body is read ahead of the service's reading.
const AHEAD: usize = 64 << 10;

/// How much of an HTTP/1.1 body the service still holds once it has answered is read
/// before the answer goes out (as much as the server buffers of a body by default).
const HELD_AFTER_ANSWER: usize = crate::ServerConfig::DEFAULT_MAX_BUFFERED_BODY;

/// How much of an HTTP/1.1 body is read from the connection at a time.
const PIECE: usize = 16 << 10;

/// Reads an HTTP/1.1 body from the connection into the buffer the service's
/// [`TowerBody`] reads (an [`Inflow`], as an HTTP/2 stream's body fills).
struct Pump<'a> {
    reader: BodyReader<'a>,
    inflow: Arc<Inflow>,
    /// Where the body lists itself as the service reads (or lets it go).
    settling: Arc<Settling>,
    /// What `settling` listed (the one body), kept for the next time.
    listed: Vec<StreamId>,
    /// Read from the connection and not yet by the service.
    waiting: usize,
}

impl<'a> Pump<'a> {
    fn new(reader: BodyReader<'a>) -> Self {
        let settling = Arc::<Settling>::default();
        Pump {
            reader,
            inflow: Arc::new(Inflow::new(StreamId::ZERO, Arc::clone(&settling))),
            settling,
            listed: Vec::new(),
            waiting: 0,
        }
    }

    /// Pumps while `answer` runs; then the rest of the body the service still holds, up to
    /// [`HELD_AFTER_ANSWER`] (past that its reader gets an error). The answer, once both
    /// are done.
    async fn alongside(mut self, answer: impl Future<Output = Response>) -> Response {
        let answer = pin!(answer);
        let response = {
            let pumping = pin!(self.pump(AHEAD, true));
            match select(answer, pumping).await {
                Either::Left((response, _)) => response,
                Either::Right(((), answer)) => return answer.await,
            }
        };
        self.pump(HELD_AFTER_ANSWER, false).await;
        if !self.inflow.ended() {
            // Over the bound (or let go, with no one left to tell).
            self.inflow.fail(io::ErrorKind::FileTooLarge);
        }
        response
    }

    /// Reads the body into the buffer, at most `ahead` bytes ahead of the service (waiting
    /// for it to read more if `wait`, else stopping there), until the body ends or fails,
    /// or the service lets it go.
    async fn pump(&mut self, ahead: usize, wait: bool) {
        let mut piece = Vec::new();
        loop {
            self.settling.take(&mut self.listed);
            self.waiting -= self.inflow.take_read();
            if !self.inflow.held() {
                return;
            }
            if self.waiting >= ahead {
                if !wait {
                    return;
                }
                self.settling.listed().await;
                continue;
            }
            if piece.is_empty() {
                piece = vec![0; PIECE];
            }
            let room = piece.len().min(ahead - self.waiting);
            match self.reader.read(&mut piece[..room]).await {
                Ok(0) => return self.inflow.push(&[], true),
                Ok(n) => {
                    self.inflow.push(&piece[..n], false);
                    self.waiting += n;
                }
                Err(e) => return self.inflow.fail(e.kind()),
            }
        }
    }
}

/// Fields the connection writes itself, from the body and its own state.
fn set_by_connection(name: &http::HeaderName) -> bool {
    use http::header::{CONNECTION, CONTENT_LENGTH, DATE, TRANSFER_ENCODING};
    [CONTENT_LENGTH, TRANSFER_ENCODING, CONNECTION, DATE].contains(name)
}

async fn from_http<B>(response: http::Response<B>) -> Response
where
    B: HttpBody<Data = Bytes> + Send + 'static,
    B::Error: fmt::Display,
{
    let (parts, body) = response.into_parts();
    let mut out = Response::new(parts.status.as_u16());
    for (name, value) in &parts.headers {
        if !set_by_connection(name) {
            out = out.header(
                name.as_str().to_owned(),
                Bytes::copy_from_slice(value.as_bytes()),
            );
        }
    }
    let body = match body.size_hint().exact() {
        Some(0) => Body::Empty,
        Some(_) => match collect(body).await {
            Ok(bytes) => Body::Bytes(bytes),
            Err(e) => {
                log::warn!("response body failed: {e}");
                return Response::new(500);
            }
        },
        None => Body::frames(Frames(Box::pin(body))),
    };
    out.body(body)
}

/// The data of a body of known size: its one frame as it is, or the
/// frames joined.
async fn collect<B>(body: B) -> Result<Bytes, B::Error>
where
    B: HttpBody<Data = Bytes>,
{
    let mut body = std::pin::pin!(body);
    let mut first: Option<Bytes> = None;
    let mut joined = BytesMut::new();
    while let Some(frame) = poll_fn(|cx| body.as_mut().poll_frame(cx)).await {
        let Ok(data) = frame?.into_data() else {
            continue; // trailers: HTTP/1.1 sends none for a sized body
        };
        match first.take() {
            None if joined.is_empty() => first = Some(data),
            None => joined.extend_from_slice(&data),
            Some(earlier) => {
                joined.extend_from_slice(&earlier);
                joined.extend_from_slice(&data);
            }
        }
    }
    Ok(first.unwrap_or_else(|| joined.freeze()))
}

/// An `http_body::Body` as a stream of its frames: data, and trailers (gRPC's status).
struct Frames<B>(Pin<Box<B>>);

impl<B> Stream for Frames<B>
where
    B: HttpBody<Data = Bytes>,
    B::Error: fmt::Display,
{
    type Item = io::Result<BodyFrame>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        loop {
            let frame = match ready!(self.0.as_mut().poll_frame(cx)) {
                Some(Ok(frame)) => frame,
                Some(Err(e)) => return Poll::Ready(Some(Err(io::Error::other(e.to_string())))),
                None => return Poll::Ready(None),
            };
            let trailers = match frame.into_data() {
                Ok(data) => return Poll::Ready(Some(Ok(BodyFrame::Data(data)))),
                Err(frame) => match frame.into_trailers() {
                    Ok(trailers) => trailers,
                    Err(_) => continue, // a kind of frame this does not know
                },
            };
            let fields = trailers.iter().map(|(n, v)| (n.as_str(), v.as_bytes()));
            let block = FieldBlock::new(fields)
                .map(BodyFrame::Trailers)
                .map_err(|e| io::Error::other(format!("trailers: {e}")));
            return Poll::Ready(Some(block));
        }
    }
}
