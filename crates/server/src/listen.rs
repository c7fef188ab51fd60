//! Listening sockets: TCP (one, or several sharing a port for thread-per-core)
//! or a Unix domain socket.

use std::io;
use std::net::{SocketAddr, TcpListener};
use std::os::fd::OwnedFd;
use std::os::unix::fs::MetadataExt;
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::task::{Context, Poll};

use ringwire_io::tokio::AsyncNetStream;
use rustix::net::SocketAddrUnix;

/// A bound listening socket, not yet on a runtime.
#[derive(Debug)]
pub(crate) enum Listener {
    Tcp(TcpListener),
    Unix(UnixListener),
}

impl Listener {
    /// The listener on the current runtime.
    pub(crate) fn into_tokio(self) -> io::Result<Accepting> {
        Ok(match self {
            Listener::Tcp(tcp) => Accepting::Tcp(tokio::net::TcpListener::from_std(tcp)?),
            Listener::Unix(unix) => Accepting::Unix(tokio::net::UnixListener::from_std(unix)?),
        })
    }
}

/// A listener on a runtime.
#[derive(Debug)]
pub(crate) enum Accepting {
    Tcp(tokio::net::TcpListener),
    Unix(tokio::net::UnixListener),
}

impl Accepting {
    pub(crate) fn poll_accept(&self, cx: &mut Context<'_>) -> Poll<io::Result<AsyncNetStream>> {
        match self {
            Accepting::Tcp(tcp) => tcp.poll_accept(cx).map_ok(|(s, _)| s.into()),
            Accepting::Unix(unix) => unix.poll_accept(cx).map_ok(|(s, _)| s.into()),
        }
    }
}

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

/// `n` listeners on a Unix socket created at `path` ([`shared`] handles on one socket),
/// and the socket's file, removed when dropped.
///
/// A stale file at `path` (a socket nobody listens on, left by a process that
/// ended without removing it) is replaced; a live socket or any other file is an
/// error, "address in use".
pub(crate) fn bind_unix(path: &Path, n: usize) -> io::Result<(Vec<Listener>, SocketFile)> {
    remove_stale(path)?;
    let addr = SocketAddrUnix::new(path).map_err(|_| too_long(path.as_os_str().len(), "path"))?;
    let socket = bound_unix(&addr)?;
    let file = SocketFile::new(path)?;
    rustix::net::listen(&socket, BACKLOG)?;
    Ok((shared(Listener::Unix(socket.into()), n)?, file))
}

/// `n` listeners on a Unix socket named `name` in Linux's abstract namespace (no file:
/// the name goes when the socket closes; anyone in the network namespace may connect).
/// A name in use is "address in use".
#[cfg(target_os = "linux")]
pub(crate) fn bind_abstract(name: &[u8], n: usize) -> io::Result<Vec<Listener>> {
    let addr = SocketAddrUnix::new_abstract_name(name).map_err(|_| too_long(name.len(), "name"))?;
    let socket = bound_unix(&addr)?;
    rustix::net::listen(&socket, BACKLOG)?;
    shared(Listener::Unix(socket.into()), n)
}

/// A nonblocking Unix stream socket bound to `addr`.
fn bound_unix(addr: &SocketAddrUnix) -> io::Result<OwnedFd> {
    use rustix::net::{AddressFamily, SocketFlags, SocketType};

    let socket = rustix::net::socket_with(
        AddressFamily::UNIX,
        SocketType::STREAM,
        SocketFlags::NONBLOCK | SocketFlags::CLOEXEC,
        None,
    )?;
    rustix::net::bind(&socket, addr)?;
    Ok(socket)
}

/// A Unix socket address's `what` of `len` bytes, past the 107 it holds.
fn too_long(len: usize, what: &str) -> io::Error {
    let why = format!("{len} bytes: a Unix socket's {what} holds at most 107");
    io::Error::new(io::ErrorKind::InvalidInput, why)
}

/// `n` handles on `listener`, nonblocking: every thread's runtime waits on its own, and
/// the first to accept takes the connection.
pub(crate) fn shared(listener: Listener, n: usize) -> io::Result<Vec<Listener>> {
    let mut listeners = Vec::with_capacity(n.max(1));
    for _ in 1..n {
        listeners.push(match &listener {
            Listener::Tcp(tcp) => Listener::Tcp(tcp.try_clone()?),
            Listener::Unix(unix) => Listener::Unix(unix.try_clone()?),
        });
    }
    match &listener {
        Listener::Tcp(tcp) => tcp.set_nonblocking(true)?,
        Listener::Unix(unix) => unix.set_nonblocking(true)?,
    }
    listeners.push(listener);
    Ok(listeners)
}

/// Removes the socket file at `path` if nothing listens on it.
fn remove_stale(path: &Path) -> io::Result<()> {
    use std::os::unix::fs::FileTypeExt;

    let Ok(meta) = std::fs::symlink_metadata(path) else {
        return Ok(());
    };
    if !meta.file_type().is_socket() {
        return Err(io::ErrorKind::AddrInUse.into());
    }
    match UnixStream::connect(path) {
        Ok(_) => Err(io::ErrorKind::AddrInUse.into()),
        Err(e) if e.kind() == io::ErrorKind::ConnectionRefused => std::fs::remove_file(path),
        Err(e) => Err(e),
    }
}

/// A Unix socket's file, removed when dropped, if it is still the one bound (another
/// server may have replaced it since).
#[derive(Debug)]
pub(crate) struct SocketFile {
    path: PathBuf,
    dev: u64,
    ino: u64,
}

impl SocketFile {
    fn new(path: &Path) -> io::Result<SocketFile> {
        let meta = std::fs::symlink_metadata(path)?;
        Ok(SocketFile {
            path: path.to_owned(),
            dev: meta.dev(),
            ino: meta.ino(),
        })
    }

    pub(crate) fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for SocketFile {
    fn drop(&mut self) {
        let same = std::fs::symlink_metadata(&self.path)
            .is_ok_and(|meta| (meta.dev(), meta.ino()) == (self.dev, self.ino));
        if same {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

/// The kernel's cap (`net.core.somaxconn`) applies to larger backlogs.
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
