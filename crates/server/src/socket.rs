//! A connection's byte stream: plain TCP, or TLS over TCP.
//!
//! One type rather than a type parameter, so that handlers, upgrade
//! callbacks and WebSockets name one type whatever the listener. A TLS
//! session decrypts straight into the span the receive transport offers it
//! (the ring's free span), as `recv` does for plain TCP.

use std::io;
use std::task::{Context, Poll};

use tokio::net::TcpStream;

/// An accepted connection's stream, as the receive and send transports,
/// [`Upgraded`](crate::Upgraded) and [`ws`](crate::ws) sockets see it.
pub type Socket = ringwire_tls::MaybeTls<TcpStream>;

/// Ready when a read may make progress: the TCP socket is readable, or a
/// TLS session holds bytes it has not tried to decrypt yet (its handshake
/// may have received the client's first request with its last flight).
pub(crate) fn poll_read_ready(socket: &Socket, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
    if !socket.is_starved() {
        return Poll::Ready(Ok(()));
    }
    socket.get_ref().poll_read_ready(cx)
}
