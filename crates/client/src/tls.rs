//! What both clients need for `https://`: one TLS connector per client,
//! made on first use (loading the system's roots costs a little, and an
//! `http://`-only client should not pay it).

use std::sync::OnceLock;

use ringwire_tls::{ClientConfig, TlsConnector, TlsError};

use crate::Error;

/// The client's TLS settings and, once needed, its connector.
#[derive(Debug)]
pub(crate) struct Tls {
    config: ClientConfig,
    connector: OnceLock<Result<TlsConnector, String>>,
}

impl Default for Tls {
    /// The system's roots, certificates and host names verified, ALPN
    /// `http/1.1`.
    fn default() -> Self {
        Tls::new(ClientConfig::default())
    }
}

impl Tls {
    pub(crate) fn new(config: ClientConfig) -> Tls {
        Tls {
            config: config.alpn(&[b"http/1.1"]),
            connector: OnceLock::new(),
        }
    }

    /// As [`new`](Self::new), offering `h2` before `http/1.1`.
    pub(crate) fn offering_h2(config: ClientConfig) -> Tls {
        Tls {
            config: config.alpn(&[b"h2", b"http/1.1"]),
            connector: OnceLock::new(),
        }
    }

    pub(crate) fn connector(&self) -> Result<&TlsConnector, Error> {
        self.connector
            .get_or_init(|| TlsConnector::new(&self.config).map_err(|e| e.to_string()))
            .as_ref()
            .map_err(|e| Error::Tls(TlsError::Config(e.clone())))
    }
}
