//! A stream that is encrypted or not, decided per connection (an HTTP
//! client's `http://` and `https://`, a server with a TLS listener): one
//! type for the code above it.

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

ringwire_io::forward_async_stream!(impl[S: AsyncStream + Send + Sync] MaybeTls<S> { MaybeTls::Plain, MaybeTls::Tls });
