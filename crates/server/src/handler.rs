//! The application side: requests in, responses out.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use crate::{Request, Response};

/// The application: answers each request with a response.
///
/// One handler serves every connection, concurrently, so it is shared
/// (`Sync`) and its futures may move between worker threads (`Send`).
/// Implement it on a type, or write an `async fn` and wrap it with
/// [`handler_fn`].
pub trait Handler: Send + Sync + 'static {
    /// Answers `request`. The request borrows the connection's receive ring,
    /// so it is valid only until the returned future completes.
    fn call<'a>(&'a self, request: &'a Request<'a>) -> impl Future<Output = Response> + Send + 'a;

    /// Whether this handler reads the body of `request` (given as its head)
    /// as it arrives, through [`Request::body_reader`], instead of getting
    /// it buffered whole in [`Request::body`]. For uploads larger than
    /// [`ServerConfig::max_buffered_body`](crate::ServerConfig::max_buffered_body)
    /// or consumed as a stream. Default: no.
    fn streams_body(&self, request: &ringwire_http1::Request<'_>) -> bool {
        let _ = request;
        false
    }
}

impl<H: Handler> Handler for Arc<H> {
    fn call<'a>(&'a self, request: &'a Request<'a>) -> impl Future<Output = Response> + Send + 'a {
        (**self).call(request)
    }

    fn streams_body(&self, request: &ringwire_http1::Request<'_>) -> bool {
        (**self).streams_body(request)
    }
}

/// `handler`, reading request bodies as they arrive
/// ([`Handler::streams_body`] always true): wrap a [`handler_fn`] that
/// uses [`Request::body_reader`].
pub fn streaming<H: Handler>(handler: H) -> Streaming<H> {
    Streaming(handler)
}

/// The [`Handler`] [`streaming`] makes.
#[derive(Debug, Clone, Copy)]
pub struct Streaming<H>(H);

impl<H: Handler> Handler for Streaming<H> {
    fn call<'a>(&'a self, request: &'a Request<'a>) -> impl Future<Output = Response> + Send + 'a {
        self.0.call(request)
    }

    fn streams_body(&self, _: &ringwire_http1::Request<'_>) -> bool {
        true
    }
}

/// An `async fn(&Request<'_>) -> Response`, for any lifetime of the request.
///
/// Implemented for every such function; it names the future each lifetime
/// gives, which a plain `Fn` bound cannot.
pub trait HandlerFn<'a>: Send + Sync + 'static {
    /// The function's future for requests that live for `'a`.
    type Future: Future<Output = Response> + Send + 'a;

    /// Calls the function.
    fn call(&self, request: &'a Request<'a>) -> Self::Future;
}

impl<'a, F, Fut> HandlerFn<'a> for F
where
    F: Fn(&'a Request<'a>) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Response> + Send + 'a,
{
    type Future = Fut;

    fn call(&self, request: &'a Request<'a>) -> Fut {
        self(request)
    }
}

/// A [`Handler`] from an `async fn`:
///
/// ```
/// use ringwire_server::{handler_fn, Request, Response};
///
/// async fn hello(request: &Request<'_>) -> Response {
///     Response::text(format!("hello, {}\n", request.target().path().len()))
/// }
///
/// let handler = handler_fn(hello);
/// # let _ = handler;
/// ```
pub fn handler_fn<F>(f: F) -> FnHandler<F>
where
    F: for<'a> HandlerFn<'a>,
{
    FnHandler(f)
}

/// The [`Handler`] [`handler_fn`] makes.
#[derive(Debug, Clone, Copy)]
pub struct FnHandler<F>(F);

impl<F> Handler for FnHandler<F>
where
    F: for<'a> HandlerFn<'a>,
{
    fn call<'a>(&'a self, request: &'a Request<'a>) -> impl Future<Output = Response> + Send + 'a {
        HandlerFn::call(&self.0, request)
    }
}

/// A boxed future, as a type-erased handler returns.
pub(crate) type BoxFuture<'a> = Pin<Box<dyn Future<Output = Response> + Send + 'a>>;

/// A [`Handler`] behind a pointer, so that handlers of different types can
/// share one table (a router's routes). Each call boxes its future: one
/// allocation per request, as in axum.
pub(crate) trait DynHandler: Send + Sync + 'static {
    fn call_boxed<'a>(&'a self, request: &'a Request<'a>) -> BoxFuture<'a>;

    fn streams_body_dyn(&self, request: &ringwire_http1::Request<'_>) -> bool;
}

impl<H: Handler> DynHandler for H {
    fn call_boxed<'a>(&'a self, request: &'a Request<'a>) -> BoxFuture<'a> {
        Box::pin(self.call(request))
    }

    fn streams_body_dyn(&self, request: &ringwire_http1::Request<'_>) -> bool {
        self.streams_body(request)
    }
}
