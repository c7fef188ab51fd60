//! The byte streams a blocking connection runs over.
//!
//! Plain TCP, or TLS over it: a TLS stream's `read` decrypts into the span
//! it is given (OpenSSL's `SSL_read_ex`), so it fills the receive ring as
//! directly as `recv` does, and nothing above this enum differs.

use std::io::{self, IoSlice, Read, Write};
use std::net::TcpStream;

use ringwire_tls::BlockingTlsStream;

/// A connection's stream.
#[derive(Debug)]
pub(crate) enum Stream {
    Tcp(TcpStream),
    Tls(Box<BlockingTlsStream<TcpStream>>),
}

impl Stream {
    /// The socket underneath: for timeouts and the liveness probe.
    pub(crate) fn socket(&self) -> &TcpStream {
        match self {
            Stream::Tcp(tcp) => tcp,
            Stream::Tls(tls) => tls.get_ref(),
        }
    }
}

impl Read for Stream {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Stream::Tcp(tcp) => tcp.read(buf),
            Stream::Tls(tls) => tls.read(buf),
        }
    }
}

impl Write for Stream {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Stream::Tcp(tcp) => tcp.write(buf),
            Stream::Tls(tls) => tls.write(buf),
        }
    }

    fn write_vectored(&mut self, bufs: &[IoSlice<'_>]) -> io::Result<usize> {
        match self {
            Stream::Tcp(tcp) => tcp.write_vectored(bufs),
            Stream::Tls(tls) => tls.write_vectored(bufs),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match self {
            Stream::Tcp(tcp) => tcp.flush(),
            Stream::Tls(tls) => tls.flush(),
        }
    }
}
