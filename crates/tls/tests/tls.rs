//! Handshakes, transfers and failures between real sessions over loopback
//! TCP: OpenSSL and rustls on either side, certificates made by rcgen.

use std::io::{Read as _, Write as _};
use std::time::Duration;

use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, KeyPair};
use ringwire_io::tokio::{AsyncRecvTransport, AsyncSendTransport, AsyncStream};
use ringwire_io::{Ring, RingConfig, TransportConfig};
use ringwire_tls::{
    Backend, ClientConfig, ServerConfig, TlsAcceptor, TlsConnector, TlsError, TlsStream, Version,
};
use tokio::net::{TcpListener, TcpStream};

const BACKENDS: [Backend; 2] = [Backend::OpenSsl, Backend::Rustls];

/// A CA, and PEM certificates it signed.
struct Pki {
    ca_pem: Vec<u8>,
    ca: rcgen::Certificate,
    ca_key: KeyPair,
}

impl Pki {
    fn new() -> Pki {
        let mut params = CertificateParams::new(Vec::<String>::new()).unwrap();
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        params
            .distinguished_name
            .push(DnType::CommonName, "ringwire test CA");
        let ca_key = KeyPair::generate().unwrap();
        let ca = params.self_signed(&ca_key).unwrap();
        Pki {
            ca_pem: ca.pem().into_bytes(),
            ca,
            ca_key,
        }
    }

    /// A leaf for `names`, expired if asked: (chain PEM, key PEM).
    fn leaf(&self, names: &[&str], expired: bool) -> (Vec<u8>, Vec<u8>) {
        let names: Vec<String> = names.iter().map(|n| (*n).to_owned()).collect();
        let mut params = CertificateParams::new(names.clone()).unwrap();
        params
            .distinguished_name
            .push(DnType::CommonName, names[0].as_str());
        if expired {
            params.not_before = time::OffsetDateTime::UNIX_EPOCH + time::Duration::days(10_000);
            params.not_after = time::OffsetDateTime::UNIX_EPOCH + time::Duration::days(10_001);
        }
        let key = KeyPair::generate().unwrap();
        let cert = params.signed_by(&key, &self.ca, &self.ca_key).unwrap();
        (cert.pem().into_bytes(), key.serialize_pem().into_bytes())
    }

    fn server(&self, backend: Backend) -> ServerConfig {
        let (chain, key) = self.leaf(&["localhost", "127.0.0.1"], false);
        ServerConfig::from_pem(&chain, &key)
            .unwrap()
            .backend(backend)
            .alpn(&[b"http/1.1"])
    }

    fn client(&self, backend: Backend) -> ClientConfig {
        ClientConfig::default()
            .without_system_roots()
            .add_root_pem(&self.ca_pem)
            .backend(backend)
            .alpn(&[b"http/1.1"])
    }
}

/// Both ends of one handshake over loopback.
async fn handshake(
    server: &ServerConfig,
    client: &ClientConfig,
    name: &str,
) -> (
    Result<TlsStream<TcpStream>, TlsError>,
    Result<TlsStream<TcpStream>, TlsError>,
) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let acceptor = TlsAcceptor::new(server).unwrap();
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

fn transport() -> TransportConfig {
    TransportConfig::new(16 << 10, 1 << 20)
}

/// Sends `data` on `from`, receives it on `to` through a ring, and checks it.
async fn transfer(from: &TlsStream<TcpStream>, to: &TlsStream<TcpStream>, data: &[u8]) {
    let mut tx = AsyncSendTransport::new(transport(), from).unwrap();
    let mut rx = AsyncRecvTransport::new(transport(), to).unwrap();
    let sending = async {
        for piece in data.chunks(40_000) {
            tx.write(piece).await.unwrap();
        }
        tx.flush().await.unwrap();
    };
    let receiving = async {
        let mut got = 0;
        while got < data.len() {
            let n = rx.fill(1).await.unwrap();
            assert!(n > 0, "end of stream after {got} bytes");
            let chunk = rx.data();
            assert_eq!(chunk, &data[got..got + chunk.len()], "at {got}");
            got += chunk.len();
            let len = chunk.len();
            rx.consume(len);
        }
    };
    tokio::join!(sending, receiving);
}

#[tokio::test]
async fn every_pairing_of_libraries_talks_and_agrees_on_alpn() {
    let pki = Pki::new();
    let data: Vec<u8> = (0..3_000_000u32).map(|i| (i % 251) as u8).collect();
    for server_side in BACKENDS {
        for client_side in BACKENDS {
            let (server, client) = handshake(
                &pki.server(server_side),
                &pki.client(client_side),
                "localhost",
            )
            .await;
            let (server, client) = (server.unwrap(), client.unwrap());
            assert_eq!(server.alpn_protocol().as_deref(), Some(&b"http/1.1"[..]));
            assert_eq!(client.alpn_protocol().as_deref(), Some(&b"http/1.1"[..]));
            transfer(&client, &server, &data).await;
            transfer(&server, &client, &data).await;
        }
    }
}

#[tokio::test]
async fn decrypted_bytes_land_inside_the_ring_across_its_wrap() {
    let pki = Pki::new();
    let (server, client) = handshake(
        &pki.server(Backend::OpenSsl),
        &pki.client(Backend::OpenSsl),
        "localhost",
    )
    .await;
    let (server, client) = (server.unwrap(), client.unwrap());
    let mut ring = Ring::new(RingConfig::with_capacity(64 << 10)).unwrap();
    // Move the ring's head near its end, so that the free span wraps.
    let capacity = ring.capacity();
    ring.reserve(capacity - 100).unwrap();
    ring.commit(capacity - 100);
    ring.consume(capacity - 100);
    let message = vec![0xa5u8; 1000];
    let mut tx = AsyncSendTransport::new(transport(), &server).unwrap();
    tx.write(&message).await.unwrap();
    tx.flush().await.unwrap();
    let mut got = 0;
    while got < message.len() {
        let span = ring.writable();
        let span_range = span.as_ptr_range();
        let n = match client.try_read(span) {
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                client.readable().await.unwrap();
                continue;
            }
            Err(e) => panic!("{e}"),
        };
        ring.commit(n);
        got += n;
        // The plaintext is where the span was: the ring's own memory.
        let data = ring.readable();
        let start = data[data.len() - n..].as_ptr();
        assert!(span_range.contains(&start), "decrypted outside the span");
        assert_eq!(start, span_range.start);
    }
    assert!(ring.readable().iter().all(|&b| b == 0xa5));
    // The 1000 bytes run across the wrap point: 100 before it, 900 after.
    assert_eq!(ring.len(), 1000);
}

#[tokio::test]
async fn certificate_failures_are_told_apart() {
    let pki = Pki::new();
    for backend in BACKENDS {
        // Wrong host.
        let (_, client) =
            handshake(&pki.server(backend), &pki.client(backend), "other.example").await;
        assert!(
            matches!(client, Err(TlsError::HostnameMismatch)),
            "{backend:?}: {client:?}"
        );
        // Expired.
        let (chain, key) = pki.leaf(&["localhost"], true);
        let expired = ServerConfig::from_pem(&chain, &key)
            .unwrap()
            .backend(backend);
        let (_, client) = handshake(&expired, &pki.client(backend), "localhost").await;
        assert!(
            matches!(client, Err(TlsError::Expired)),
            "{backend:?}: {client:?}"
        );
        // A CA the client does not trust.
        let stranger = ClientConfig::default()
            .without_system_roots()
            .backend(backend);
        let (_, client) = handshake(&pki.server(backend), &stranger, "localhost").await;
        assert!(
            matches!(client, Err(TlsError::UnknownCa)),
            "{backend:?}: {client:?}"
        );
        // ... unless told to skip the checks.
        let insecure = ClientConfig::default().insecure(true).backend(backend);
        let (server, client) = handshake(&pki.server(backend), &insecure, "wrong.example").await;
        assert!(server.is_ok() && client.is_ok(), "{backend:?}");
    }
}

#[tokio::test]
async fn version_and_alpn_mismatches_are_told_apart() {
    let pki = Pki::new();
    for backend in BACKENDS {
        let server = pki.server(backend).versions(Version::Tls13, Version::Tls13);
        let client = pki.client(backend).versions(Version::Tls12, Version::Tls12);
        let (server_side, client_side) = handshake(&server, &client, "localhost").await;
        assert!(
            matches!(client_side, Err(TlsError::ProtocolVersion)),
            "{backend:?}: {client_side:?}"
        );
        assert!(
            matches!(server_side, Err(TlsError::ProtocolVersion)),
            "{backend:?}: {server_side:?}"
        );
        let client = pki.client(backend).alpn(&[b"h2"]);
        let (server_side, _) = handshake(&pki.server(backend), &client, "localhost").await;
        assert!(
            matches!(server_side, Err(TlsError::NoAlpnOverlap)),
            "{backend:?}: {server_side:?}"
        );
    }
}

#[tokio::test]
async fn close_notify_ends_the_stream_and_a_bare_close_is_truncation() {
    let pki = Pki::new();
    for backend in BACKENDS {
        let (server, client) =
            handshake(&pki.server(backend), &pki.client(backend), "localhost").await;
        let (server, client) = (server.unwrap(), client.unwrap());
        let mut tx = AsyncSendTransport::new(transport(), &server).unwrap();
        tx.write(b"bye").await.unwrap();
        tx.shutdown_write().await.unwrap();
        let mut rx = AsyncRecvTransport::new(transport(), &client).unwrap();
        assert_eq!(rx.fill(3).await.unwrap(), 3);
        assert_eq!(
            rx.fill(4).await.unwrap(),
            0,
            "{backend:?}: close_notify is the end"
        );

        let (server, client) =
            handshake(&pki.server(backend), &pki.client(backend), "localhost").await;
        let (server, client) = (server.unwrap(), client.unwrap());
        server.get_ref().shutdown_write().unwrap();
        let mut rx = AsyncRecvTransport::new(transport(), &client).unwrap();
        let end = rx.fill(1).await;
        assert!(
            end.is_err(),
            "{backend:?}: a close without close_notify: {end:?}"
        );
    }
}

#[test]
fn a_blocking_client_talks_to_a_blocking_server() {
    let pki = Pki::new();
    for backend in BACKENDS {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let acceptor = TlsAcceptor::new(&pki.server(backend)).unwrap();
        let server = std::thread::spawn(move || {
            let (tcp, _) = listener.accept().unwrap();
            let mut tls = acceptor.accept_blocking(tcp).unwrap();
            let mut buf = [0; 5];
            tls.read_exact(&mut buf).unwrap();
            tls.write_all(&buf).unwrap();
            tls.close().unwrap();
        });
        let connector = TlsConnector::new(&pki.client(backend)).unwrap();
        let tcp = std::net::TcpStream::connect(addr).unwrap();
        let mut tls = connector.connect_blocking("localhost", tcp).unwrap();
        tls.write_all(b"hello").unwrap();
        let mut back = Vec::new();
        tls.read_to_end(&mut back).unwrap();
        assert_eq!(back, b"hello");
        server.join().unwrap();
    }
}
