//! The byte streams a blocking connection runs over.
//!
//! A plain socket (TCP, or a Unix socket), or TLS over it: a TLS stream's
//! `read` decrypts into the span it is given (OpenSSL's `SSL_read_ex`), so it
//! fills the receive ring as directly as `recv` does, and nothing above this
//! enum differs.

use ringwire_io::NetStream;
use ringwire_tls::BlockingTlsStream;
use std::io::{self, IoSlice, Read, Write};

/// A connection's stream: a socket, or `T`, TLS over it (a whole session by
/// default; a blocking WebSocket's halves each take a handle on one).
#[derive(Debug)]
// Public through `ws` (a blocking WebSocket's halves); crate-private without it.
#[cfg_attr(not(feature = "ws"), allow(unreachable_pub))]
pub enum Stream<T = Box<BlockingTlsStream<NetStream>>> {
    /// A plain socket.
    Plain(NetStream),
    /// TLS.
    Tls(T),
}

impl Stream {
    /// The socket underneath: for timeouts and the liveness probe.
    pub(crate) fn socket(&self) -> &NetStream {
        match self {
            Stream::Plain(socket) => socket,
            Stream::Tls(tls) => tls.get_ref(),
        }
    }
}

impl<T: Read> Read for Stream<T> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Stream::Plain(socket) => socket.read(buf),
            Stream::Tls(tls) => tls.read(buf),
        }
    }
}

impl<T: Write> Write for Stream<T> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Stream::Plain(socket) => socket.write(buf),
            Stream::Tls(tls) => tls.write(buf),
        }
    }

    fn write_vectored(&mut self, bufs: &[IoSlice<'_>]) -> io::Result<usize> {
        match self {
            Stream::Plain(socket) => socket.write_vectored(bufs),
            Stream::Tls(tls) => tls.write_vectored(bufs),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match self {
            Stream::Plain(socket) => socket.flush(),
            Stream::Tls(tls) => tls.flush(),
        }
    }
}

#[cfg(feature = "ws")]
impl<T: ringwire_io::ShutdownWrite> ringwire_io::ShutdownWrite for Stream<T> {
    fn shutdown_write(&mut self) -> io::Result<()> {
        match self {
            Stream::Plain(socket) => socket.shutdown_write(),
            Stream::Tls(tls) => tls.shutdown_write(),
        }
    }
}
