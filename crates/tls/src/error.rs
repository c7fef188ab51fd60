//! What can go wrong, by what the user should do about it.

use std::fmt;
use std::io;

use ringwire_ring::RingError;

/// A TLS failure.
#[derive(Debug)]
#[non_exhaustive]
pub enum TlsError {
    /// The socket failed.
    Io(io::Error),
    /// A certificate, key or setting could not be used.
    Config(String),
    /// The peer's certificate has expired.
    Expired,
    /// The peer's certificate is not valid yet (or the local clock is behind).
    NotYetValid,
    /// The peer's certificate is not for the name that was asked for.
    HostnameMismatch,
    /// The peer's certificate was not issued by a trusted authority
    /// (self-signed, or by a CA that is not among the trusted roots).
    UnknownCa,
    /// The peer's certificate was refused for another reason.
    BadCertificate(String),
    /// No TLS version both sides accept.
    ProtocolVersion,
    /// The peer's bytes are not TLS records at all: most likely plain
    /// HTTP on the other end (`https://` to an `http://` port, or the
    /// other way round).
    NotTls,
    /// The client offered only application protocols (ALPN) the server
    /// does not speak.
    NoAlpnOverlap,
    /// The server wants a certificate from the client, which has none to
    /// send: TLS 1.3's `certificate_required` alert (after the client's
    /// handshake is done, so the first read reports it), or TLS 1.2's
    /// `bad_certificate`, or its `handshake_failure` once the server's
    /// hello was accepted.
    ClientCertificateRequired,
    /// The handshake failed otherwise (the peer's alert, a malformed record).
    Handshake(String),
    /// The session failed after the handshake.
    Protocol(String),
    /// The peer closed the connection without `close_notify`: what came
    /// before may be cut short.
    Truncated,
    /// A ciphertext ring could not grow.
    Ring(RingError),
}

impl fmt::Display for TlsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TlsError::Io(e) => write!(f, "TLS: {e}"),
            TlsError::Config(what) => write!(f, "TLS configuration: {what}"),
            TlsError::Expired => f.write_str("the peer's certificate has expired"),
            TlsError::NotYetValid => f.write_str("the peer's certificate is not valid yet"),
            TlsError::HostnameMismatch => {
                f.write_str("the peer's certificate is not valid for this host name")
            }
            TlsError::UnknownCa => {
                f.write_str("the peer's certificate is not signed by a trusted authority")
            }
            TlsError::BadCertificate(why) => write!(f, "the peer's certificate was refused: {why}"),
            TlsError::ProtocolVersion => f.write_str("no TLS version both sides accept"),
            TlsError::NotTls => f.write_str("the peer does not speak TLS (is it plain http?)"),
            TlsError::NoAlpnOverlap => {
                f.write_str("no application protocol (ALPN) both sides speak")
            }
            TlsError::ClientCertificateRequired => {
                f.write_str("the server requires a client certificate")
            }
            TlsError::Handshake(why) => write!(f, "TLS handshake failed: {why}"),
            TlsError::Protocol(why) => write!(f, "TLS session failed: {why}"),
            TlsError::Truncated => {
                f.write_str("the peer closed the connection without close_notify")
            }
            TlsError::Ring(e) => write!(f, "TLS ciphertext ring: {e}"),
        }
    }
}

impl std::error::Error for TlsError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            TlsError::Io(e) => Some(e),
            TlsError::Ring(e) => Some(e),
            _ => None,
        }
    }
}

impl From<io::Error> for TlsError {
    fn from(e: io::Error) -> Self {
        TlsError::Io(e)
    }
}

impl From<RingError> for TlsError {
    fn from(e: RingError) -> Self {
        TlsError::Ring(e)
    }
}

impl From<TlsError> for io::Error {
    fn from(e: TlsError) -> Self {
        match e {
            TlsError::Io(e) => e,
            TlsError::Truncated => io::Error::new(io::ErrorKind::UnexpectedEof, e),
            e => io::Error::new(io::ErrorKind::InvalidData, e),
        }
    }
}
