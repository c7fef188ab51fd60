//! What both clients need for `https://`: TLS connectors made on first use
//! (loading the system's roots costs a little, and an `http://`-only client
//! should not pay it).

use std::sync::OnceLock;

use ringwire_tls::{ClientConfig, TlsConnector, TlsError};

use crate::Error;

/// The client's TLS settings and, once needed, its connectors: one offering
/// `http/1.1` alone by ALPN, one offering `h2` first.
#[derive(Debug)]
pub(crate) struct Tls {
    config: ClientConfig,
    http1: OnceLock<Result<TlsConnector, String>>,
    h2: OnceLock<Result<TlsConnector, String>>,
}

impl Tls {
    pub(crate) fn new(config: ClientConfig) -> Tls {
        Tls {
            config,
            http1: OnceLock::new(),
            h2: OnceLock::new(),
        }
    }

    /// The connector offering `h2` before `http/1.1` if `h2`, else
    /// `http/1.1` alone (for a WebSocket, which needs HTTP/1.1's upgrade).
    pub(crate) fn connector(&self, h2: bool) -> Result<&TlsConnector, Error> {
        let (made, alpn): (_, &[&[u8]]) = if h2 {
            (&self.h2, &[b"h2", b"http/1.1"])
        } else {
            (&self.http1, &[b"http/1.1"])
        };
        made.get_or_init(|| {
            TlsConnector::new(&self.config.clone().alpn(alpn)).map_err(|e| e.to_string())
        })
        .as_ref()
        .map_err(|e| Error::Tls(TlsError::Config(e.clone())))
    }
}
