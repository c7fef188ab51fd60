//! The byte streams a blocking connection runs over.
//!
//! Plain TCP today. `https://` adds a variant here: a TLS stream whose
//! `read` decrypts into the span it is given (OpenSSL's `SSL_read_ex`)
//! fills the receive ring as directly as `recv` does, and nothing above
//! this enum changes.

use std::io::{self, IoSlice, Read, Write};
use std::net::TcpStream;

/// A connection's stream.
#[derive(Debug)]
pub(crate) enum Stream {
    Tcp(TcpStream),
}

impl Stream {
    /// The socket underneath: for timeouts and the liveness probe.
    pub(crate) fn socket(&self) -> &TcpStream {
        match self {
            Stream::Tcp(tcp) => tcp,
        }
    }
}

impl Read for Stream {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Stream::Tcp(tcp) => tcp.read(buf),
        }
    }
}

impl Write for Stream {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Stream::Tcp(tcp) => tcp.write(buf),
        }
    }

    fn write_vectored(&mut self, bufs: &[IoSlice<'_>]) -> io::Result<usize> {
        match self {
            Stream::Tcp(tcp) => tcp.write_vectored(bufs),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match self {
            Stream::Tcp(tcp) => tcp.flush(),
        }
    }
}
