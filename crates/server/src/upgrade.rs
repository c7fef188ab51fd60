//! Switching protocols: after a `101` answer the connection's socket and
//! both rings belong to the new protocol (WebSocket, or any other).

use std::fmt;
use std::future::Future;
use std::pin::Pin;

use crate::{Shutdown, Socket};
use ringwire_io::tokio::{AsyncRecvTransport, AsyncSendTransport};

/// The connection after a `101 Switching Protocols`, handed to the
/// [`Response::upgrade`](crate::Response::upgrade) callback.
///
/// The receive ring already holds whatever the client sent after its
/// upgrade request (a client may send its first frames without waiting for
/// the `101`): nothing is lost. The send ring is flushed. The connection
/// closes when the callback's future ends.
#[derive(Debug)]
pub struct Upgraded<'s> {
    /// Receives into the connection's ring; its data starts with the first
    /// byte after the upgrade request.
    pub rx: AsyncRecvTransport<&'s Socket>,
    /// Sends from the connection's ring.
    pub tx: AsyncSendTransport<&'s Socket>,
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
