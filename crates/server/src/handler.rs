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

/// An `async fn(&Request<'_>, &S) -> Response`: a handler that reads state of the
/// application's (a database pool, a cache, settings), for any lifetime of the request.
/// A closure cannot be one (its future would borrow the request, which a closure's return
/// type cannot say); an `async fn` item is, as with [`HandlerFn`].
pub trait StatefulFn<'a, S: 'a>: Send + Sync + 'static {
    /// The function's future for requests that live for `'a`.
    type Future: Future<Output = Response> + Send + 'a;

    /// Calls the function.
    fn call(&self, request: &'a Request<'a>, state: &'a S) -> Self::Future;
}

impl<'a, S: 'a, F, Fut> StatefulFn<'a, S> for F
where
    F: Fn(&'a Request<'a>, &'a S) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Response> + Send + 'a,
{
    type Future = Fut;

    fn call(&self, request: &'a Request<'a>, state: &'a S) -> Fut {
        self(request, state)
    }
}

/// A [`Handler`] that calls `f` with each request and `state`, which it keeps: share it
/// between routes as an `Arc`.
///
/// ```
/// use std::sync::atomic::{AtomicU64, Ordering};
/// use std::sync::Arc;
///
/// use ringwire_http1::Method;
/// use ringwire_server::{with_state, Request, Response, Router};
///
/// struct App {
///     hits: AtomicU64,
/// }
///
/// async fn hit(_: &Request<'_>, app: &Arc<App>) -> Response {
///     let n = app.hits.fetch_add(1, Ordering::Relaxed) + 1;
///     Response::text(format!("hit {n}\n"))
/// }
///
/// async fn hits(_: &Request<'_>, app: &Arc<App>) -> Response {
///     Response::text(format!("{}\n", app.hits.load(Ordering::Relaxed)))
/// }
///
/// let app = Arc::new(App { hits: AtomicU64::new(0) });
/// let router = Router::new()
///     .route(Method::Post, "/hit", with_state(Arc::clone(&app), hit))
///     .route(Method::Get, "/hits", with_state(app, hits));
/// # let _ = router;
/// ```
pub fn with_state<S, F>(state: S, f: F) -> WithState<S, F>
where
    S: Send + Sync + 'static,
    F: for<'a> StatefulFn<'a, S>,
{
    WithState { state, f }
}

/// The [`Handler`] [`with_state`] makes.
#[derive(Debug, Clone)]
pub struct WithState<S, F> {
    state: S,
    f: F,
}

impl<S, F> Handler for WithState<S, F>
where
    S: Send + Sync + 'static,
    F: for<'a> StatefulFn<'a, S>,
{
    fn call<'a>(&'a self, request: &'a Request<'a>) -> impl Future<Output = Response> + Send + 'a {
        StatefulFn::call(&self.f, request, &self.state)
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
