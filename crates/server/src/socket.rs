//! A connection's byte stream: plain TCP, or TLS over TCP.
//!
//! One enum rather than a type parameter, so that handlers, upgrade
//! callbacks and WebSockets name one type whatever the listener. A TLS
//! session decrypts straight into the span the receive transport offers it
//! (the ring's free span), as `recv` does for plain TCP.

use std::io::{self, IoSlice};
use std::task::{Context, Poll};

use ringwire_io::tokio::AsyncStream;
use tokio::net::TcpStream;

/// An accepted connection's stream, as the receive and send transports,
/// [`Upgraded`](crate::Upgraded) and [`ws`](crate::ws) sockets see it.
#[derive(Debug)]
pub enum Socket {
    /// Plain TCP.
    Tcp(TcpStream),
    /// TLS over TCP (boxed: the session is large, and a plain connection's
    /// idle task should not carry its size).
    #[cfg(feature = "tls")]
    Tls(Box<ringwire_tls::TlsStream<TcpStream>>),
}

impl Socket {
    /// The TCP socket underneath.
    pub fn tcp(&self) -> &TcpStream {
        match self {
            Socket::Tcp(tcp) => tcp,
            #[cfg(feature = "tls")]
            Socket::Tls(tls) => tls.get_ref(),
        }
    }

    /// Whether the connection is encrypted.
    pub fn is_tls(&self) -> bool {
        !matches!(self, Socket::Tcp(_))
    }

    /// The protocol ALPN settled on, for a TLS connection that negotiated one.
    pub fn alpn_protocol(&self) -> Option<Vec<u8>> {
        match self {
            Socket::Tcp(_) => None,
            #[cfg(feature = "tls")]
            Socket::Tls(tls) => tls.alpn_protocol(),
        }
    }

    /// Ready when a read may make progress: the TCP socket is readable, or
    /// a TLS session holds bytes it has not tried to decrypt yet.
    pub(crate) fn poll_read_ready(&self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        #[cfg(feature = "tls")]
        if let Socket::Tls(tls) = self {
            if !tls.is_starved() {
                return Poll::Ready(Ok(()));
            }
        }
        self.tcp().poll_read_ready(cx)
    }
}

/// Forwards each call to the variant's stream.
macro_rules! each {
    ($self:ident, $s:ident => $call:expr) => {
        match $self {
            Socket::Tcp($s) => $call,
            #[cfg(feature = "tls")]
            Socket::Tls(tls) => {
                let $s = &**tls;
                $call
            }
        }
    };
}

impl AsyncStream for Socket {
    async fn readable(&self) -> io::Result<()> {
        each!(self, s => AsyncStream::readable(s).await)
    }
    fn try_read(&self, buf: &mut [u8]) -> io::Result<usize> {
        each!(self, s => AsyncStream::try_read(s, buf))
    }
    async fn writable(&self) -> io::Result<()> {
        each!(self, s => AsyncStream::writable(s).await)
    }
    fn try_write(&self, buf: &[u8]) -> io::Result<usize> {
        each!(self, s => AsyncStream::try_write(s, buf))
    }
    fn try_write_vectored(&self, bufs: &[IoSlice<'_>]) -> io::Result<usize> {
        each!(self, s => AsyncStream::try_write_vectored(s, bufs))
    }
    fn try_write_more(&self, buf: &[u8]) -> io::Result<usize> {
        each!(self, s => AsyncStream::try_write_more(s, buf))
    }
    fn try_flush(&self) -> io::Result<()> {
        each!(self, s => AsyncStream::try_flush(s))
    }
    fn shutdown_write(&self) -> io::Result<()> {
        each!(self, s => AsyncStream::shutdown_write(s))
    }
}
