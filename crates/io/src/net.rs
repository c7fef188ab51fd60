//! A connected socket of either family a server listens on or a client dials: TCP, or a
//! Unix domain socket (a local server behind nginx, a daemon's API socket). One type, so
//! that what runs over a connection (transports, TLS, upgrades) names one type whatever
//! the address; each call is a match on the family and the socket's own call.

use std::io::{self, IoSlice, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpStream};
use std::os::fd::{AsFd, BorrowedFd};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::time::Duration;

use socket2::{Domain, SockAddr, Socket, Type};

use crate::ShutdownWrite;
use NetStream::{Tcp, Unix};

/// A blocking connected socket: TCP or Unix.
#[derive(Debug)]
pub enum NetStream {
    /// TCP.
    Tcp(TcpStream),
    /// A Unix domain stream socket.
    Unix(UnixStream),
}

/// The accessors both socket enums have ([`NetStream`] and the tokio one), over their
/// `Tcp` and `Unix` variants.
macro_rules! family_accessors {
    ($tcp:ty) => {
        /// The peer's address: a TCP peer's; `None` for a Unix socket, whose peer has none
        /// worth reporting (usually unnamed).
        pub fn peer_addr(&self) -> Option<SocketAddr> {
            match self {
                Self::Tcp(tcp) => tcp.peer_addr().ok(),
                Self::Unix(_) => None,
            }
        }

        /// The TCP socket, if it is one (for TCP-only options).
        pub fn as_tcp(&self) -> Option<&$tcp> {
            match self {
                Self::Tcp(tcp) => Some(tcp),
                Self::Unix(_) => None,
            }
        }

        /// A Unix socket's peer: its process, user and group (a system call each time);
        /// `None` over TCP.
        pub fn peer_credentials(&self) -> Option<PeerCredentials> {
            match self {
                Self::Tcp(_) => None,
                Self::Unix(unix) => peer_credentials(unix),
            }
        }
    };
}

/// Calls `$call` on the socket, whichever its family (with the enum's variants in scope).
macro_rules! each {
    ($self:expr, $s:ident => $call:expr) => {
        match $self {
            Tcp($s) => $call,
            Unix($s) => $call,
        }
    };
}

impl NetStream {
    /// A connection to the Unix socket at `path`. A listener whose queue is full keeps the
    /// connect waiting for room, as a blocking `connect(2)` does, for at most `limit`;
    /// past it an error of kind `TimedOut`.
    pub fn connect_unix(path: &Path, limit: Option<Duration>) -> io::Result<NetStream> {
        let socket = Socket::new(Domain::UNIX, Type::STREAM, None)?;
        let addr = SockAddr::unix(path)?;
        // A Unix connect waits for room as long as the send timeout allows (a nonblocking
        // one, or one polled for completion, fails with `EAGAIN` at once instead).
        socket.set_write_timeout(limit.map(|l| l.max(Duration::from_millis(1))))?;
        loop {
            match socket.connect(&addr) {
                Ok(()) => break,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    return Err(io::ErrorKind::TimedOut.into())
                }
                Err(e) => return Err(e),
            }
        }
        socket.set_write_timeout(None)?;
        Ok(Self::Unix(socket.into()))
    }

    family_accessors!(TcpStream);

    /// See [`TcpStream::set_read_timeout`].
    pub fn set_read_timeout(&self, limit: Option<Duration>) -> io::Result<()> {
        each!(self, s => s.set_read_timeout(limit))
    }

    /// See [`TcpStream::set_write_timeout`].
    pub fn set_write_timeout(&self, limit: Option<Duration>) -> io::Result<()> {
        each!(self, s => s.set_write_timeout(limit))
    }

    /// See [`TcpStream::set_nonblocking`].
    pub fn set_nonblocking(&self, nonblocking: bool) -> io::Result<()> {
        each!(self, s => s.set_nonblocking(nonblocking))
    }

    /// Another handle on the same socket.
    pub fn try_clone(&self) -> io::Result<NetStream> {
        Ok(match self {
            Self::Tcp(tcp) => Self::Tcp(tcp.try_clone()?),
            Self::Unix(unix) => Self::Unix(unix.try_clone()?),
        })
    }
}

impl From<TcpStream> for NetStream {
    fn from(tcp: TcpStream) -> Self {
        Self::Tcp(tcp)
    }
}

impl From<UnixStream> for NetStream {
    fn from(unix: UnixStream) -> Self {
        Self::Unix(unix)
    }
}

impl AsFd for NetStream {
    fn as_fd(&self) -> BorrowedFd<'_> {
        each!(self, s => s.as_fd())
    }
}

impl Read for NetStream {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        each!(self, s => s.read(buf))
    }
}

impl Read for &NetStream {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        each!(*self, s => (&*s).read(buf))
    }
}

impl Write for NetStream {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        each!(self, s => s.write(buf))
    }
    fn write_vectored(&mut self, bufs: &[IoSlice<'_>]) -> io::Result<usize> {
        each!(self, s => s.write_vectored(bufs))
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl Write for &NetStream {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        each!(*self, s => (&*s).write(buf))
    }
    fn write_vectored(&mut self, bufs: &[IoSlice<'_>]) -> io::Result<usize> {
        each!(*self, s => (&*s).write_vectored(bufs))
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl ShutdownWrite for NetStream {
    fn shutdown_write(&mut self) -> io::Result<()> {
        each!(self, s => s.shutdown(Shutdown::Write))
    }
}

impl ShutdownWrite for &NetStream {
    fn shutdown_write(&mut self) -> io::Result<()> {
        each!(*self, s => s.shutdown(Shutdown::Write))
    }
}

/// Who is at the other end of a Unix socket, as the kernel recorded it when the peer
/// connected (`SO_PEERCRED`): a local server can let in by user without a password.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PeerCredentials {
    /// The peer's process.
    pub pid: i32,
    /// Its effective user.
    pub uid: u32,
    /// Its effective group.
    pub gid: u32,
}

/// The credentials of the peer of the Unix socket `socket` (Linux).
#[cfg(target_os = "linux")]
fn peer_credentials(socket: impl AsFd) -> Option<PeerCredentials> {
    let cred = rustix::net::sockopt::socket_peercred(socket).ok()?;
    Some(PeerCredentials {
        pid: cred.pid.as_raw_nonzero().get(),
        uid: cred.uid.as_raw(),
        gid: cred.gid.as_raw(),
    })
}

/// The path that names `name` in Linux's abstract Unix socket namespace, for
/// [`NetStream::connect_unix`], `AsyncNetStream::connect_unix` and tokio's own connects:
/// `name` after a NUL byte, as the socket address has it.
#[cfg(target_os = "linux")]
pub fn abstract_unix_path(name: &[u8]) -> PathBuf {
    use std::os::unix::ffi::OsStrExt;

    let mut path = Vec::with_capacity(name.len() + 1);
    path.push(0);
    path.extend_from_slice(name);
    PathBuf::from(std::ffi::OsStr::from_bytes(&path))
}

/// A Unix socket's path as people write it: an abstract name (its path starts with a
/// NUL byte, [`abstract_unix_path`]) as `@name`, as `ss -x` shows it.
pub fn unix_socket_name(path: &Path) -> String {
    use std::os::unix::ffi::OsStrExt;

    match path.as_os_str().as_bytes() {
        [0, name @ ..] => format!("@{}", String::from_utf8_lossy(name)),
        _ => path.display().to_string(),
    }
}

/// Elsewhere, none are known.
#[cfg(not(target_os = "linux"))]
fn peer_credentials(_: impl AsFd) -> Option<PeerCredentials> {
    None
}

#[cfg(feature = "tokio")]
pub use self::tokio::AsyncNetStream;

#[cfg(feature = "tokio")]
mod tokio {
    use std::io;
    use std::net::SocketAddr;
    use std::os::fd::{AsFd, BorrowedFd};
    use std::path::Path;
    use std::task::{Context, Poll};
    use std::time::Duration;

    use ::tokio::io::Interest;
    use ::tokio::net::{TcpStream, UnixStream};

    use super::{peer_credentials, PeerCredentials};
    use crate::tokio::AsyncStream;
    use AsyncNetStream::{Tcp, Unix};

    /// A tokio connected socket: TCP or Unix.
    #[derive(Debug)]
    pub enum AsyncNetStream {
        /// TCP.
        Tcp(TcpStream),
        /// A Unix domain stream socket. (Boxed, so that the enum needs no tag of its own:
        /// it is as large as a `TcpStream`, which a server keeps per idle connection.)
        Unix(Box<UnixStream>),
    }

    impl AsyncNetStream {
        /// A connection to the Unix socket at `path`. A listener whose queue is full keeps
        /// the connect waiting for room (tried again, at most 50 ms apart), as a blocking
        /// `connect(2)` does: bound it with a timeout.
        pub async fn connect_unix(path: &Path) -> io::Result<AsyncNetStream> {
            let mut pause = Duration::from_millis(1);
            loop {
                // A nonblocking connect fails with `EAGAIN` when the queue is full, and
                // nothing can be polled for room in it.
                match UnixStream::connect(path).await {
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                        ::tokio::time::sleep(pause).await;
                        pause = (pause * 2).min(Duration::from_millis(50));
                    }
                    connected => return connected.map(Self::from),
                }
            }
        }

        family_accessors!(TcpStream);

        /// Ready when the socket is readable.
        pub fn poll_read_ready(&self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
            each!(self, s => s.poll_read_ready(cx))
        }

        /// Runs `f` (a system call on the socket) if the socket is ready for `interest`,
        /// clearing the readiness if `f` reports `WouldBlock`.
        pub fn try_io<R>(
            &self,
            interest: Interest,
            f: impl FnOnce() -> io::Result<R>,
        ) -> io::Result<R> {
            each!(self, s => s.try_io(interest, f))
        }

        /// Copies what has arrived into `buf` (waiting for something) and leaves it
        /// there for the next read: 0 is end of stream.
        pub async fn peek(&self, buf: &mut [u8]) -> io::Result<usize> {
            loop {
                self.readable().await?;
                let peeked = self.try_io(Interest::READABLE, || {
                    rustix::net::recv(self, &mut *buf, rustix::net::RecvFlags::PEEK)
                        .map(|(n, _)| n)
                        .map_err(io::Error::from)
                });
                match peeked {
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                    done => return done,
                }
            }
        }
    }

    impl From<TcpStream> for AsyncNetStream {
        fn from(tcp: TcpStream) -> Self {
            Self::Tcp(tcp)
        }
    }

    impl From<UnixStream> for AsyncNetStream {
        fn from(unix: UnixStream) -> Self {
            Self::Unix(Box::new(unix))
        }
    }

    impl AsFd for AsyncNetStream {
        fn as_fd(&self) -> BorrowedFd<'_> {
            each!(self, s => s.as_fd())
        }
    }

    crate::forward_async_stream!(impl[] AsyncNetStream { AsyncNetStream::Tcp, AsyncNetStream::Unix });
}

#[cfg(test)]
mod tests {
    use std::os::unix::net::UnixListener;

    use super::NetStream;

    /// A connect waits for room in a full queue until its limit, then times out; and once
    /// connected, the socket's peer is this process.
    #[test]
    fn a_unix_connect_waits_within_its_limit_and_knows_its_peer() {
        let dir = std::env::temp_dir().join(format!("ringwire-io-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("net.sock");
        let _ = std::fs::remove_file(&path);
        let listener = UnixListener::bind(&path).unwrap();
        let limit = Some(std::time::Duration::from_millis(50));
        let first = NetStream::connect_unix(&path, limit).unwrap();
        #[cfg(target_os = "linux")]
        assert_eq!(
            first.peer_credentials().map(|c| c.pid),
            Some(i32::try_from(std::process::id()).unwrap())
        );
        // Nobody accepts: the queue (128 by default) fills, and a connect then waits.
        let mut queued = vec![first];
        let timed_out = loop {
            match NetStream::connect_unix(&path, limit) {
                Ok(stream) => queued.push(stream),
                Err(e) => break e,
            }
            assert!(queued.len() < 10_000, "the queue never filled");
        };
        assert_eq!(timed_out.kind(), std::io::ErrorKind::TimedOut);
        drop(listener);
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// A server keeps one per idle connection: the family costs no tag.
    #[cfg(feature = "tokio")]
    #[test]
    fn an_async_socket_is_as_large_as_a_tcp_stream() {
        use super::AsyncNetStream;

        assert_eq!(
            std::mem::size_of::<AsyncNetStream>(),
            std::mem::size_of::<tokio::net::TcpStream>()
        );
    }
}
