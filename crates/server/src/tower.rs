//! Runs a `tower::Service` — an axum `Router`, say — as a [`Handler`].
//!
//! The bridge costs what the ecosystem types cost: the head is copied into
//! an `http::Request` (a `HeaderMap` and its strings) and the body into a
//! [`TowerBody`], whole, or (with [`TowerHandler::streaming`], over HTTP/2) as
//! it arrives. The response's body is taken as it is when its size is known
//! (one `Bytes`, usually uncopied), and streamed (chunked, with its trailers)
//! when not.

use std::fmt;
use std::future::poll_fn;
use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::{Bytes, BytesMut};
use futures_core::{ready, Stream};
use http_body::{Body as HttpBody, Frame, SizeHint};
use ringwire_http1::encode::FieldBlock;
use tower_service::Service;

use crate::{Body, BodyFrame, Handler, Protocol, Request, RequestBody, Response};

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
    /// Request bodies read as they arrive, up to this much over HTTP/1.1.
    streaming: Option<usize>,
}

impl<S> TowerHandler<S> {
    /// Serves `service`; a request body reaches it whole (up to
    /// [`ServerConfig::max_buffered_body`](crate::ServerConfig::max_buffered_body)).
    pub fn new(service: S) -> Self {
        TowerHandler {
            service,
            streaming: None,
        }
    }

    /// Serves `service`, handing it request bodies as they arrive over HTTP/2, of any size
    /// and for as long as it reads (a gRPC service's streaming calls, tonic's among them);
    /// an HTTP/1.1 body is read whole first, up to `max_http1_body` bytes (else `413`).
    pub fn streaming(service: S, max_http1_body: usize) -> Self {
        TowerHandler {
            service,
            streaming: Some(max_http1_body),
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
        self.streaming.is_some()
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
        let body = match (request.body_stream(), request.body_reader()) {
            (Some(arriving), _) => Inner::Arriving(arriving),
            (None, Some(mut reader)) => {
                let limit = self.streaming.unwrap_or_default();
                match reader.to_vec(limit).await {
                    Ok(whole) => Inner::whole(whole.into()),
                    Err(e) if e.kind() == io::ErrorKind::FileTooLarge => return Response::new(413),
                    Err(_) => return Response::new(400),
                }
            }
            (None, None) => Inner::whole(Bytes::copy_from_slice(request.body())),
        };
        let request = head.map(|()| TowerBody(body));
        let mut service = self.service.clone();
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
