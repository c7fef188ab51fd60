//! An HTTP/1.1 server on ringwire's rings.
//!
//! Each accepted socket gets a tokio task running one connection loop: bytes
//! are received straight into the connection's receive ring, the request head
//! is parsed in place by [`ringwire_http1::RequestParser`], and the handler
//! sees it as zero-copy views into the ring. Responses are encoded into the
//! send ring; large bodies go out with one gathered write, uncopied, and
//! file bodies ([`Body::File`]) with `sendfile`.
//!
//! - [`Server`] binds, accepts and shuts down gracefully
//!   ([`Server::run_until`]).
//! - [`Handler`] is the application: a [`Request`] in, a [`Response`] out.
//! - [`files`] serves a directory ([`files::StaticFiles`]) or a fixed set
//!   of embedded pages ([`files::EmbeddedSite`]); files are sent with
//!   `sendfile` from a short-lived open-file cache, with `ETag`,
//!   `Last-Modified`, conditional requests and single byte ranges.
//!
//! Keep-alive, pipelining (one send per batch of buffered requests),
//! `Expect: 100-continue` and strict error answers (400, 413, 414, 431, 501,
//! 505, each followed by a close) are handled by the loop.
//!
//! Slow clients are cut off by one sweeper task per server, not a timer per
//! request ([`Timeouts`]): a request head must arrive whole within a fixed
//! time, keep-alive connections idle out, and request bodies must keep a
//! minimum rate; each limit answers `408` (or closes silently when nothing of
//! a request arrived).
//!
//! Request bodies are buffered whole before the handler runs, up to
//! [`ServerConfig::max_buffered_body`]: a `Content-Length` body is a slice of
//! the receive ring right behind the head (no copy); a chunked body is decoded
//! into a per-connection buffer that is reused across requests (one copy).
//! Streaming bodies are future work.

#![forbid(unsafe_code)]

mod config;
mod conn;
mod date;
pub mod files;
mod handler;
mod listen;
pub mod middleware;
mod request;
mod response;
pub mod router;
mod sendfile;
mod server;
mod timeout;
#[cfg(feature = "tower")]
mod tower;
mod upgrade;

pub use config::ServerConfig;
pub use handler::{handler_fn, FnHandler, Handler, HandlerFn};
pub use request::Request;
pub use response::{Body, BodyClosed, BodySender, BodyStream, FileBody, Response};
pub use router::Router;
pub use server::{Server, Threading};
pub use timeout::Timeouts;
#[cfg(feature = "tower")]
pub use tower::TowerHandler;
pub use upgrade::{UpgradeFuture, Upgraded};
