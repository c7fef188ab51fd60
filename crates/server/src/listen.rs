//! Listening sockets: one, or several sharing a port for thread-per-core.

use std::io;
use std::net::{SocketAddr, TcpListener};

/// `n` nonblocking listeners on `addr`. With more than one, each has
/// `SO_REUSEPORT` set, so the kernel spreads incoming connections across
/// them (by a hash of the addresses).
///
/// A port another process holds is an error either way, even when that
/// process set `SO_REUSEPORT` too (another ringwire): the port is first
/// bound without it, which fails if anyone holds it, and released.
pub(crate) fn bind(addr: SocketAddr, n: usize) -> io::Result<Vec<TcpListener>> {
    if n <= 1 {
        let alone = TcpListener::bind(addr)?;
        alone.set_nonblocking(true)?;
        return Ok(vec![alone]);
    }
    // Port 0 asks for a free port, which nobody else holds; probing it
    // and letting go would let another socket take it in between.
    if addr.port() != 0 {
        drop(TcpListener::bind(addr)?);
    }
    let first = reuseport(addr)?;
    let addr = first.local_addr()?;
    let mut listeners = vec![first];
    for _ in 1..n {
        listeners.push(reuseport(addr)?);
    }
    Ok(listeners)
}

/// The kernel's cap (`net.core.somaxconn`) applies to larger backlogs.
#[cfg(target_os = "linux")]
const BACKLOG: i32 = 4096;

#[cfg(target_os = "linux")]
fn reuseport(addr: SocketAddr) -> io::Result<TcpListener> {
    use rustix::net::{sockopt, AddressFamily, SocketFlags, SocketType};

    let family = match addr {
        SocketAddr::V4(_) => AddressFamily::INET,
        SocketAddr::V6(_) => AddressFamily::INET6,
    };
    let socket = rustix::net::socket_with(
        family,
        SocketType::STREAM,
        SocketFlags::NONBLOCK | SocketFlags::CLOEXEC,
        None,
    )?;
    sockopt::set_socket_reuseaddr(&socket, true)?;
    sockopt::set_socket_reuseport(&socket, true)?;
    rustix::net::bind(&socket, &addr)?;
    rustix::net::listen(&socket, BACKLOG)?;
    Ok(TcpListener::from(socket))
}

/// Without `SO_REUSEPORT` only one listener can hold the port.
#[cfg(not(target_os = "linux"))]
fn reuseport(addr: SocketAddr) -> io::Result<TcpListener> {
    let _ = addr;
    Err(io::Error::new(
        io::ErrorKind::Unsupported,
        "several listeners on one port need SO_REUSEPORT (Linux)",
    ))
}
