//! An HTTP/1.1 server on ringwire's rings.
//!
//! Each accepted socket gets a tokio task running one connection loop: bytes
//! are received straight into the connection's receive ring, the request head
//! is parsed in place by [`ringwire_http1::RequestParser`], and the handler
//! sees it as zero-copy views into the ring. Responses are encoded into the
//! send ring; large bodies go out with one gathered write, uncopied, file
//! bodies ([`Body::File`]) with `sendfile`, streamed ones
//! ([`Body::Stream`]) chunked as they are produced, ended if need be by
//! trailer fields ([`BodyFrame::Trailers`]: gRPC's status, over HTTP/2).
//!
//! - [`Server`] binds, accepts and shuts down gracefully
//!   ([`Server::run`], [`Server::run_until`]), on one multi-threaded runtime
//!   or a runtime per core sharing the port with `SO_REUSEPORT`
//!   ([`Threading`]).
//! - [`Handler`] is the application: a [`Request`] in, a [`Response`] out.
//!   An `async fn` becomes one with [`handler_fn`]; a [`Router`] picks one
//!   by method and path, with path parameters; [`middleware`] adds an access
//!   log and brotli/zstd/gzip; [`TowerHandler`] runs a `tower::Service` (an axum
//!   `Router`) unchanged.
//! - [`files`] serves a directory ([`files::StaticFiles`]) or a fixed set
//!   of embedded pages ([`files::EmbeddedSite`]); files are sent with
//!   `sendfile` from a short-lived open-file cache, with `ETag`,
//!   `Last-Modified`, conditional requests and single byte ranges.
//! - [`Response::upgrade`] answers `101` and hands the connection, with
//!   every byte read past the request, to another protocol ([`Upgraded`]).
//!
//! Keep-alive, pipelining (one send per batch of buffered requests),
//! `Expect: 100-continue` and strict error answers (400, 413, 414, 431, 501,
//! 505, each followed by a close) are handled by the loop. A connection that
//! keeps asking keeps its rings between requests for a moment
//! ([`Timeouts::warm`]), so its requests cost no allocation and no pool
//! traffic; one that goes quiet gives them back and idles in about a
//! kilobyte.
//!
//! Slow clients are cut off by one sweeper thread per runtime, not a timer per
//! request ([`Timeouts`]): a request head must arrive whole within a fixed
//! time, keep-alive connections idle out, request bodies must keep a minimum
//! rate, and a client that stops taking its answers is dropped.
//!
//! Request bodies are buffered whole before the handler runs, up to
//! [`ServerConfig::max_buffered_body`]: a `Content-Length` body is a slice of
//! the receive ring right behind the head (no copy); a chunked body is decoded
//! into a per-connection buffer that is reused across requests (one copy). A
//! handler that [streams bodies](Handler::streams_body) reads them as they
//! arrive instead, through a [`BodyReader`], of any size (copied out, or looked at in
//! place with [`BodyReader::with_chunk`]); over HTTP/2 also after
//! the handler has answered, through a [`RequestBody`] (a bidirectional gRPC
//! call).

#![forbid(unsafe_code)]

mod body_reader;
mod clock;
mod config;
mod conn;
pub mod cookie;
mod date;
pub mod events;
pub mod files;
mod h2;
mod handler;
mod informational;
mod listen;
pub mod middleware;
pub mod multipart;
mod pace;
pub mod proxy_protocol;
mod request;
mod response;
pub mod router;
mod sendfile;
mod server;
mod socket;
mod timeout;
#[cfg(feature = "tower")]
mod tower;
mod tunnel;
mod upgrade;
#[cfg(feature = "ws")]
pub mod ws;

pub use body_reader::{BodyReader, RequestBody};
pub use config::ServerConfig;
pub use handler::{
    handler_fn, streaming, with_state, FnHandler, Handler, HandlerFn, StatefulFn, Streaming,
    WithState,
};
pub use informational::InformationalError;
pub use request::{Protocol, Request};
pub use response::{Body, BodyClosed, BodyFrame, BodySender, BodyStream, FileBody, Response};
pub use router::Router;
pub use server::{Server, Threading};
pub use socket::Socket;
pub use timeout::{Shutdown, Timeouts};
#[cfg(feature = "tower")]
pub use tower::{TowerBody, TowerHandler};
pub use tunnel::Tunnel;
pub use upgrade::{UpgradeFuture, Upgraded, UpgradedStream};
