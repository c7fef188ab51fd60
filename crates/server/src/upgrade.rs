//! Switching protocols: after a `101` answer the connection's socket and
//! both rings belong to the new protocol (WebSocket, or any other); over
//! HTTP/2, after a `200` to an extended `CONNECT` (RFC 8441), the stream does.

use std::fmt;
use std::future::Future;
use std::pin::Pin;

use crate::tunnel::Tunnel;
use crate::{Shutdown, Socket};
use ringwire_io::tokio::{AsyncRecvTransport, AsyncSendTransport};

/// The connection after a `101 Switching Protocols`, handed to the
/// [`Response::upgrade`](crate::Response::upgrade) callback.
///
/// The receive ring already holds whatever the client sent after its
/// upgrade request (a client may send its first frames without waiting for
/// the `101`): nothing is lost. The send ring is flushed. The connection
/// closes when the callback's future ends (over HTTP/2, the stream ends).
#[derive(Debug)]
pub struct Upgraded<'s> {
    /// Receives into the connection's ring; its data starts with the first
    /// byte after the upgrade request.
    pub rx: AsyncRecvTransport<UpgradedStream<'s>>,
    /// Sends from the connection's ring.
    pub tx: AsyncSendTransport<UpgradedStream<'s>>,
    /// The server's graceful shutdown: the new protocol's cue to end its
    /// side (the grace drops whatever is still running when it ends).
    pub shutdown: Shutdown,
}

/// What an upgrade callback returns.
pub type UpgradeFuture<'s> = Pin<Box<dyn Future<Output = ()> + Send + 's>>;

/// The callback a `101` response carries.
pub(crate) struct OnUpgrade(
    pub(crate) Box<dyn for<'s> FnOnce(Upgraded<'s>) -> UpgradeFuture<'s> + Send>,
);

impl fmt::Debug for OnUpgrade {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("OnUpgrade")
    }
}

/// What an upgraded protocol reads and writes.
#[derive(Debug)]
pub enum UpgradedStream<'s> {
    /// The connection itself, after HTTP/1.1's `101`.
    Connection(&'s Socket),
    /// One HTTP/2 stream, after a `200` to an extended `CONNECT` (RFC 8441): the
    /// client's `DATA` read as it comes, and what is written sent as `DATA` as its
    /// window allows.
    Http2(Tunnel),
}

impl<'s> UpgradedStream<'s> {
    /// The connection's socket, after HTTP/1.1's `101` (for its options, its peer's
    /// certificate); `None` on an HTTP/2 stream, which shares its connection.
    #[must_use]
    pub fn connection(&self) -> Option<&'s Socket> {
        match self {
            UpgradedStream::Connection(socket) => Some(socket),
            UpgradedStream::Http2(_) => None,
        }
    }
}

ringwire_io::forward_async_stream!(impl['s] UpgradedStream<'s> {
    UpgradedStream::Connection,
    UpgradedStream::Http2,
});
