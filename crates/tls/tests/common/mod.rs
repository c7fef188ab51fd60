//! What the TLS tests share: certificates made by rcgen, and both ends of a
//! handshake over loopback TCP.

// Each test file uses its own part of this.
#![allow(dead_code)]

use std::time::Duration;

use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, KeyPair};
use ringwire_io::TransportConfig;
use ringwire_tls::{
    Backend, ClientConfig, ServerConfig, TlsAcceptor, TlsConnector, TlsError, TlsStream,
};
use tokio::net::{TcpListener, TcpStream};

pub(crate) const BACKENDS: [Backend; 2] = [Backend::OpenSsl, Backend::Rustls];

/// A CA, and PEM certificates it signed.
pub(crate) struct Pki {
    pub(crate) ca_pem: Vec<u8>,
    ca: rcgen::Certificate,
    ca_key: KeyPair,
}

impl Pki {
    pub(crate) fn new() -> Pki {
        Pki::named("ringwire test CA")
    }

    /// A CA of its own name.
    pub(crate) fn named(name: &str) -> Pki {
        let mut params = CertificateParams::new(Vec::<String>::new()).unwrap();
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        params.distinguished_name.push(DnType::CommonName, name);
        let ca_key = KeyPair::generate().unwrap();
        let ca = params.self_signed(&ca_key).unwrap();
        Pki {
            ca_pem: ca.pem().into_bytes(),
            ca,
            ca_key,
        }
    }

    /// A leaf for `names`, expired if asked: (chain PEM, key PEM).
    /// A leaf for `names`, valid for `validity` days since the Unix epoch (`None`: now).
    pub(crate) fn leaf(&self, names: &[&str], validity: Option<(i64, i64)>) -> (Vec<u8>, Vec<u8>) {
        let names: Vec<String> = names.iter().map(|n| (*n).to_owned()).collect();
        let mut params = CertificateParams::new(names.clone()).unwrap();
        params
            .distinguished_name
            .push(DnType::CommonName, names[0].as_str());
        if let Some((from, to)) = validity {
            params.not_before = time::OffsetDateTime::UNIX_EPOCH + time::Duration::days(from);
            params.not_after = time::OffsetDateTime::UNIX_EPOCH + time::Duration::days(to);
        }
        let key = KeyPair::generate().unwrap();
        let cert = params.signed_by(&key, &self.ca, &self.ca_key).unwrap();
        (cert.pem().into_bytes(), key.serialize_pem().into_bytes())
    }

    pub(crate) fn server(&self, backend: Backend) -> ServerConfig {
        let (chain, key) = self.leaf(&["localhost", "127.0.0.1"], None);
        ServerConfig::from_pem(&chain, &key)
            .unwrap()
            .backend(backend)
            .alpn(&[b"http/1.1"])
    }

    pub(crate) fn client(&self, backend: Backend) -> ClientConfig {
        ClientConfig::default()
            .without_system_roots()
            .add_root_pem(&self.ca_pem)
            .backend(backend)
            .alpn(&[b"http/1.1"])
    }
}

/// Both ends of one handshake over loopback.
pub(crate) async fn handshake(
    server: &ServerConfig,
    client: &ClientConfig,
    name: &str,
) -> (
    Result<TlsStream<TcpStream>, TlsError>,
    Result<TlsStream<TcpStream>, TlsError>,
) {
    handshake_with(&TlsAcceptor::new(server).unwrap(), client, name).await
}

/// Both ends of one handshake over loopback, the server's by (a clone of) `acceptor`.
pub(crate) async fn handshake_with(
    acceptor: &TlsAcceptor,
    client: &ClientConfig,
    name: &str,
) -> (
    Result<TlsStream<TcpStream>, TlsError>,
    Result<TlsStream<TcpStream>, TlsError>,
) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let acceptor = acceptor.clone();
    let connector = TlsConnector::new(client).unwrap();
    let accepting = tokio::spawn(async move {
        let (tcp, _) = listener.accept().await.unwrap();
        acceptor.accept(tcp).await
    });
    let tcp = TcpStream::connect(addr).await.unwrap();
    let client = connector.connect(name, tcp).await;
    let server = tokio::time::timeout(Duration::from_secs(10), accepting)
        .await
        .expect("the server's handshake ended")
        .unwrap();
    (server, client)
}

pub(crate) fn transport() -> TransportConfig {
    TransportConfig::new(16 << 10, 1 << 20)
}
