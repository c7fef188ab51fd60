//! A connection's byte stream: TCP or a Unix socket, plain or under TLS.
//!
//! One type rather than a type parameter, so that handlers, upgrade
//! callbacks and WebSockets name one type whatever the listener. A TLS
//! session decrypts straight into the span the receive transport offers it
//! (the ring's free span), as `recv` does for plain TCP.

use std::io;
use std::task::{Context, Poll};
use std::time::Duration;

use ringwire_io::tokio::AsyncNetStream;

use crate::Timeouts;

/// An accepted connection's stream, as the receive and send transports,
/// [`Upgraded`](crate::Upgraded) and [`ws`](crate::ws) sockets see it.
pub type Socket = ringwire_tls::MaybeTls<AsyncNetStream>;

/// Ready when a read may make progress: the socket is readable, or a
/// TLS session holds bytes it has not tried to decrypt yet (its handshake
/// may have received the client's first request with its last flight).
pub(crate) fn poll_read_ready(socket: &Socket, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
    if !socket.is_starved() {
        return Poll::Ready(Ok(()));
    }
    socket.get_ref().poll_read_ready(cx)
}

/// Has the kernel probe a TCP `socket` once it is quiet for `idle`
/// ([`Timeouts::upgraded_keepalive`]), and end it when the probes, or data
/// sent, go unacknowledged for as long again as the probes take. (A Unix
/// socket's peer cannot vanish unnoticed: its end closes with its process.)
#[cfg(target_os = "linux")]
pub(crate) fn keepalive(socket: &AsyncNetStream, idle: Duration) -> io::Result<()> {
    use rustix::net::sockopt;

    let Some(tcp) = socket.as_tcp() else {
        return Ok(());
    };
    if idle == Duration::MAX {
        return Ok(());
    }
    let probing = Timeouts::KEEPALIVE_INTERVAL * Timeouts::KEEPALIVE_PROBES;
    // The kernel takes whole seconds, up to 32,767 of them, and milliseconds as a u32.
    let idle = idle.clamp(Duration::from_secs(1), Duration::from_secs(32_767));
    let unacknowledged = u32::try_from((idle + probing).as_millis()).unwrap_or(u32::MAX);
    sockopt::set_socket_keepalive(tcp, true)?;
    sockopt::set_tcp_keepidle(tcp, idle)?;
    sockopt::set_tcp_keepintvl(tcp, Timeouts::KEEPALIVE_INTERVAL)?;
    sockopt::set_tcp_keepcnt(tcp, Timeouts::KEEPALIVE_PROBES)?;
    // Keepalive probes only a connection with nothing in flight; a peer gone
    // while data waits for its acknowledgement is caught by this instead.
    sockopt::set_tcp_user_timeout(tcp, unacknowledged)?;
    Ok(())
}

/// Elsewhere the kernel's defaults stand.
#[cfg(not(target_os = "linux"))]
pub(crate) fn keepalive(_: &AsyncNetStream, _: Duration) -> io::Result<()> {
    Ok(())
}
