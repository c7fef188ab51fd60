//! A stream that is encrypted or not, decided per connection (an HTTP
//! client's `http://` and `https://`, a server with a TLS listener): one
//! type for the code above it.

use std::io::{self, IoSlice};

use ringwire_io::tokio::AsyncStream;

use crate::TlsStream;

/// Plain `S`, or a TLS session over it.
#[derive(Debug)]
pub enum MaybeTls<S> {
    /// No TLS.
    Plain(S),
    /// TLS over `S` (boxed: the session is large, a plain connection need
    /// not carry its size).
    Tls(Box<TlsStream<S>>),
}

impl<S> MaybeTls<S> {
    /// The stream underneath.
    pub fn get_ref(&self) -> &S {
        match self {
            MaybeTls::Plain(s) => s,
            MaybeTls::Tls(tls) => tls.get_ref(),
        }
    }

    /// Whether the connection is encrypted.
    pub fn is_tls(&self) -> bool {
        matches!(self, MaybeTls::Tls(_))
    }

    /// The protocol ALPN settled on, for a TLS connection that negotiated one.
    pub fn alpn_protocol(&self) -> Option<Vec<u8>> {
        match self {
            MaybeTls::Plain(_) => None,
            MaybeTls::Tls(tls) => tls.alpn_protocol(),
        }
    }

    /// The peer's certificate (DER), over TLS: see [`TlsStream::peer_certificate`].
    pub fn peer_certificate(&self) -> Option<Vec<u8>> {
        match self {
            MaybeTls::Plain(_) => None,
            MaybeTls::Tls(tls) => tls.peer_certificate(),
        }
    }

    /// For a connection going idle: gives a TLS session's empty ciphertext
    /// rings' pages back to the OS (see [`TlsStream::release_idle_memory`]).
    ///
    /// # Errors
    ///
    /// The OS refused.
    pub fn release_idle_memory(&self) -> Result<bool, crate::TlsError> {
        match self {
            MaybeTls::Plain(_) => Ok(false),
            MaybeTls::Tls(tls) => tls.release_idle_memory(),
        }
    }

    /// Whether a read can only progress once the stream underneath is
    /// readable (always, for a plain stream; see [`TlsStream::is_starved`]).
    pub fn is_starved(&self) -> bool {
        match self {
            MaybeTls::Plain(_) => true,
            MaybeTls::Tls(tls) => tls.is_starved(),
        }
    }
}

/// Forwards a call to the variant's stream (by the trait's path: tokio's
/// sockets have inherent methods of the same names that would win).
macro_rules! each {
    ($self:ident, $s:ident => $call:expr) => {
        match $self {
            MaybeTls::Plain($s) => $call,
            MaybeTls::Tls(tls) => {
                let $s = &**tls;
                $call
            }
        }
    };
}

impl<S: AsyncStream + Send + Sync> AsyncStream for MaybeTls<S> {
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
