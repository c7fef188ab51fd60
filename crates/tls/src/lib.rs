//! TLS as a stage between rings.
//!
//! A session sits between a ciphertext ring pair (what the socket delivered,
//! what it must send) and the plaintext spans of the protocol's transports.
//! [`TlsStream`] wraps a tokio stream and is an
//! [`AsyncStream`](ringwire_io::tokio::AsyncStream) itself, so the receive
//! and send transports, the HTTP server and client and WebSockets run over
//! it unchanged; [`BlockingTlsStream`] does the same for blocking streams.
//!
//! Two libraries, one interface ([`Backend`]):
//! - **OpenSSL** (the system's libssl, default): the receive transport
//!   hands its ring's free span to `SSL_read_ex`, which decrypts the record
//!   straight into it. Ciphertext is copied once, from the ciphertext ring
//!   into libssl's record buffer (its BIO model); plaintext is not copied by
//!   ringwire at all. Encryption writes records into the ciphertext send
//!   ring, which goes to the socket as it is.
//! - **rustls** (pure Rust): ciphertext is copied into rustls's buffer,
//!   decrypted in place there, and the plaintext copied into the receive
//!   ring: one copy more than OpenSSL on the receive path. Plaintext to
//!   send is copied into rustls, encrypted, and the records written to the
//!   ciphertext ring.
//!
//! Clients verify certificates and host names by default against the
//! system's roots (plus any added); mutual TLS (a server asking for client
//! certificates, [`ServerConfig::client_auth`]; a client presenting one,
//! [`ClientConfig::identity`]); a server of several names with a certificate each, chosen
//! by the client's SNI ([`ServerConfig::add_identity`]); ALPN, SNI, TLS 1.2 and 1.3 on both
//! sides; `close_notify` on shutdown, and a peer that closes without it is
//! an error ([`TlsError::Truncated`]), not an end of stream.

mod blocking;
mod config;
mod error;
mod ffi;
mod insecure;
mod maybe;
mod resume;
mod session;
mod sni;
mod stream;
mod wire;

pub use blocking::{BlockingTlsStream, TlsHalf};
pub use config::{self_signed, Backend, ClientAuth, ClientConfig, Identity, ServerConfig, Version};
pub use error::TlsError;
pub use maybe::MaybeTls;
pub use stream::{TlsAcceptor, TlsConnector, TlsStream};
