//! Handshakes, transfers and failures between real sessions over loopback
//! TCP: OpenSSL and rustls on either side, `openssl s_client` against an
//! acceptor, certificates made by rcgen.

use std::io::{Read as _, Write as _};
use std::process::Stdio;

mod common;

use common::{handshake, handshake_with, transport, Pki, BACKENDS};
use ringwire_io::tokio::{AsyncRecvTransport, AsyncSendTransport, AsyncStream};
use ringwire_io::{Ring, RingConfig};
use ringwire_tls::{
    Backend, ClientAuth, ClientConfig, Identity, ServerConfig, TlsAcceptor, TlsConnector, TlsError,
    TlsStream, Version,
};
use tokio::io::AsyncBufReadExt as _;
use tokio::net::{TcpListener, TcpStream};

/// How the sender hands its bytes to the send transport.
#[derive(Clone, Copy)]
enum Sending {
    /// Copied into the send ring 40 000 bytes at a time.
    Chunks,
    /// As one caller slice (`send_vectored`): the stream is offered all of it at once.
    OneSlice,
}

/// Sends `data` on `from`, receives it on `to` through a ring, and checks it.
async fn transfer(
    from: &TlsStream<TcpStream>,
    to: &TlsStream<TcpStream>,
    data: &[u8],
    how: Sending,
) {
    let mut tx = AsyncSendTransport::new(transport(), from).unwrap();
    let mut rx = AsyncRecvTransport::new(transport(), to).unwrap();
    let sending = async {
        match how {
            Sending::Chunks => {
                for piece in data.chunks(40_000) {
                    tx.write(piece).await.unwrap();
                }
                tx.flush().await.unwrap();
            }
            Sending::OneSlice => tx.send_vectored(&[data]).await.unwrap(),
        }
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
            transfer(&client, &server, &data, Sending::Chunks).await;
            transfer(&server, &client, &data, Sending::Chunks).await;
        }
    }
}

#[tokio::test]
async fn sixteen_mebibytes_each_way_between_the_libraries_across_ring_wraps() {
    let pki = Pki::new();
    // 16 MiB through 16 KiB rings (growing to 1 MiB): the receive ring and
    // both ciphertext rings wrap hundreds of times.
    let data: Vec<u8> = (0..16u32 << 20).map(|i| (i % 253) as u8).collect();
    for (server_side, client_side) in [
        (Backend::OpenSsl, Backend::Rustls),
        (Backend::Rustls, Backend::OpenSsl),
    ] {
        let (server, client) = handshake(
            &pki.server(server_side),
            &pki.client(client_side),
            "localhost",
        )
        .await;
        let (server, client) = (server.unwrap(), client.unwrap());
        transfer(&server, &client, &data, Sending::OneSlice).await;
        transfer(&client, &server, &data, Sending::OneSlice).await;
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
        // Expired (1997), and not valid yet (2106).
        for (days, expired) in [((10_000, 10_001), true), ((50_000, 50_001), false)] {
            let (chain, key) = pki.leaf(&["localhost"], Some(days));
            let server = ServerConfig::from_pem(&chain, &key)
                .unwrap()
                .backend(backend);
            let (_, client) = handshake(&server, &pki.client(backend), "localhost").await;
            let told = match client {
                Err(TlsError::Expired) => expired,
                Err(TlsError::NotYetValid) => !expired,
                _ => false,
            };
            assert!(told, "{backend:?} {days:?}: {client:?}");
        }
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
async fn a_peer_speaking_plain_http_is_told_apart() {
    let pki = Pki::new();
    for backend in BACKENDS {
        // A plain HTTP server: the ClientHello is a bad request to it.
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move {
            let (mut tcp, _) = listener.accept().await.unwrap();
            let mut hello = [0; 512];
            let _ = tokio::io::AsyncReadExt::read(&mut tcp, &mut hello).await;
            let answer =
                b"HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\nconnection: close\r\n\r\n";
            let _ = tokio::io::AsyncWriteExt::write_all(&mut tcp, answer).await;
        });
        let connector = TlsConnector::new(&pki.client(backend)).unwrap();
        let tcp = TcpStream::connect(addr).await.unwrap();
        let client = connector.connect("localhost", tcp).await;
        assert!(
            matches!(client, Err(TlsError::NotTls)),
            "{backend:?}: {client:?}"
        );
        assert_eq!(
            client.err().unwrap().to_string(),
            "the peer does not speak TLS (is it plain http?)"
        );

        // A plain HTTP client of a TLS server.
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let acceptor = TlsAcceptor::new(&pki.server(backend)).unwrap();
        let accepting = tokio::spawn(async move {
            let (tcp, _) = listener.accept().await.unwrap();
            acceptor.accept(tcp).await
        });
        let mut tcp = TcpStream::connect(addr).await.unwrap();
        tokio::io::AsyncWriteExt::write_all(&mut tcp, b"GET / HTTP/1.1\r\nhost: x\r\n\r\n")
            .await
            .unwrap();
        let server = accepting.await.unwrap();
        assert!(
            matches!(server, Err(TlsError::NotTls)),
            "{backend:?}: {server:?}"
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
        let Err(e) = end else {
            panic!("{backend:?}: a close without close_notify: {end:?}");
        };
        assert!(
            e.to_string().contains("without close_notify"),
            "{backend:?}: {e}"
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

#[tokio::test]
async fn openssl_s_client_talks_to_an_acceptor() {
    let pki = Pki::new();
    let dir = std::env::temp_dir().join(format!("ringwire-tls-s_client-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let ca = dir.join("ca.pem");
    std::fs::write(&ca, &pki.ca_pem).unwrap();
    for backend in BACKENDS {
        for version in ["-tls1_2", "-tls1_3"] {
            let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
            let addr = listener.local_addr().unwrap();
            let acceptor = TlsAcceptor::new(&pki.server(backend)).unwrap();
            // Echoes one line after the protocol ALPN chose, then closes
            // with close_notify (which ends s_client).
            let echo = tokio::spawn(async move {
                let (tcp, _) = listener.accept().await.unwrap();
                let tls = acceptor.accept(tcp).await.unwrap();
                let alpn = tls.alpn_protocol().unwrap_or_default();
                let mut rx = AsyncRecvTransport::new(transport(), &tls).unwrap();
                while !rx.data().contains(&b'\n') {
                    assert!(rx.fill(1).await.unwrap() > 0, "end before a line");
                }
                let mut tx = AsyncSendTransport::new(transport(), &tls).unwrap();
                tx.write(&alpn).await.unwrap();
                tx.write(b": ").await.unwrap();
                tx.write(rx.data()).await.unwrap();
                tx.shutdown_write().await.unwrap();
            });
            let mut client = tokio::process::Command::new("openssl")
                .args(["s_client", "-quiet", "-verify_return_error", version])
                .args(["-alpn", "http/1.1", "-servername", "localhost"])
                .arg("-CAfile")
                .arg(&ca)
                .arg("-connect")
                .arg(addr.to_string())
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .kill_on_drop(true)
                .spawn()
                .expect("the openssl command is installed");
            let mut stdin = client.stdin.take().unwrap();
            tokio::io::AsyncWriteExt::write_all(&mut stdin, b"hello ringwire\n")
                .await
                .unwrap();
            let mut line = String::new();
            let mut stdout = tokio::io::BufReader::new(client.stdout.take().unwrap());
            tokio::time::timeout(
                std::time::Duration::from_secs(10),
                stdout.read_line(&mut line),
            )
            .await
            .expect("s_client answered")
            .unwrap();
            echo.await.unwrap();
            let out = client.wait_with_output().await.unwrap();
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert_eq!(
                line, "http/1.1: hello ringwire\n",
                "{backend:?} {version}: {stderr}"
            );
            assert!(out.status.success(), "{backend:?} {version}: {stderr}");
        }
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A second connection from the same connector to the same server name
/// resumes the session the first one received, with either library on either
/// side, though the first ended without `close_notify`; another name does not.
#[tokio::test]
async fn a_reconnect_resumes_the_last_session() {
    let pki = Pki::new();
    for (server_side, client_side) in BACKENDS.into_iter().flat_map(|s| BACKENDS.map(|c| (s, c))) {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let acceptor = TlsAcceptor::new(&pki.server(server_side)).unwrap();
        let connector = TlsConnector::new(&pki.client(client_side)).unwrap();
        for (round, name, resumed) in [
            (1, "localhost", false),
            (2, "localhost", true),
            (3, "127.0.0.1", false),
            (4, "127.0.0.1", true),
        ] {
            let (tcp, accepted) = tokio::join!(TcpStream::connect(addr), listener.accept());
            let (server, client) = tokio::join!(
                acceptor.accept(accepted.unwrap().0),
                connector.connect(name, tcp.unwrap())
            );
            let (server, client) = (server.unwrap(), client.unwrap());
            let case = format!("{server_side:?} server, {client_side:?} client, round {round}");
            assert_eq!(client.is_resumed(), resumed, "{case}");
            assert_eq!(server.is_resumed(), resumed, "{case}");
            // Tickets come after the handshake: the client takes them in
            // with the server's first bytes.
            transfer(&server, &client, b"ticket, please", Sending::Chunks).await;
        }
    }
}

#[tokio::test]
async fn an_idle_session_gives_its_pages_back_and_carries_on() {
    let pki = Pki::new();
    for backend in BACKENDS {
        let (server, client) =
            handshake(&pki.server(backend), &pki.client(backend), "localhost").await;
        let (server, client) = (server.unwrap(), client.unwrap());
        transfer(&client, &server, &[7; 100_000], Sending::Chunks).await;
        assert!(
            server.release_idle_memory().unwrap(),
            "{backend:?}: nothing waits, so the pages go"
        );
        assert!(client.release_idle_memory().unwrap(), "{backend:?}");
        // Released pages read as zeros and are written afresh: both ways still work.
        transfer(&client, &server, &[8; 100_000], Sending::OneSlice).await;
        transfer(&server, &client, &[9; 70_000], Sending::Chunks).await;
    }
}

/// A file of trusted roots that holds no certificate (an HTML page, a key) is refused when
/// the client is made, not taken for an empty list that distrusts every peer.
#[test]
fn roots_without_a_certificate_are_refused() {
    let (_, key) = Pki::new().leaf(&["localhost"], None);
    for backend in BACKENDS {
        for pem in [&b"<html>not found</html>"[..], b"", &key] {
            let config = ClientConfig::default()
                .without_system_roots()
                .add_root_pem(pem)
                .backend(backend);
            let made = TlsConnector::new(&config);
            assert!(
                matches!(made, Err(TlsError::Config(ref why)) if why.contains("no certificate")),
                "{backend:?}: {:?}",
                made.err()
            );
        }
    }
}

/// An encrypted private key is refused with a way out, rather than OpenSSL asking for a
/// pass phrase on the terminal (a server that waits for a keyboard) or rustls finding none.
#[test]
fn an_encrypted_key_is_refused_with_a_way_out() {
    let (chain, key) = Pki::new().leaf(&["localhost"], None);
    let mut openssl = std::process::Command::new("openssl")
        .args(["pkey", "-aes256", "-passout", "pass:secret"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("openssl");
    openssl.stdin.take().unwrap().write_all(&key).unwrap();
    let encrypted = openssl.wait_with_output().unwrap().stdout;
    assert!(encrypted.starts_with(b"-----BEGIN ENCRYPTED PRIVATE KEY-----"));
    let refused = ServerConfig::from_pem(&chain, &encrypted);
    assert!(
        matches!(refused, Err(TlsError::Config(ref why)) if why.contains("encrypted")),
        "{:?}",
        refused.err()
    );
}

/// A blocking server, for one connection, on `backend`, that requires a client certificate
/// signed by `pki`'s CA, in `version` only. After its handshake fails it reads until the
/// client closes (5 s at most), so that its alert is not lost to a reset.
fn requiring_client_certificates(
    pki: &Pki,
    backend: Backend,
    version: Version,
) -> std::net::SocketAddr {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let server = pki
        .server(backend)
        .client_auth(&pki.ca_pem, ClientAuth::Required)
        .versions(version, version);
    let acceptor = TlsAcceptor::new(&server).unwrap();
    std::thread::spawn(move || {
        let (tcp, _) = listener.accept().unwrap();
        tcp.set_read_timeout(Some(std::time::Duration::from_secs(5)))
            .unwrap();
        let mut drain = tcp.try_clone().unwrap();
        assert!(
            acceptor.accept_blocking(tcp).is_err(),
            "a client without a certificate"
        );
        let _ = std::io::copy(&mut drain, &mut std::io::sink());
    });
    addr
}

/// What a client without a certificate makes of a server that requires
/// one: the handshake fails (TLS 1.2), or the first read does (TLS 1.3,
/// where the server checks after the client's handshake is done).
fn refusal(addr: std::net::SocketAddr, client: &ClientConfig) -> TlsError {
    let connector = TlsConnector::new(client).unwrap();
    let tcp = std::net::TcpStream::connect(addr).unwrap();
    tcp.set_read_timeout(Some(std::time::Duration::from_secs(5)))
        .unwrap();
    let mut tls = match connector.connect_blocking("localhost", tcp) {
        Ok(tls) => tls,
        Err(e) => return e,
    };
    tls.write_all(b"GET / HTTP/1.1\r\nhost: localhost\r\n\r\n")
        .unwrap();
    let e = tls.read(&mut [0; 64]).expect_err("a refusal");
    match e.into_inner().map(|e| e.downcast::<TlsError>()) {
        Some(Ok(tls)) => *tls,
        other => panic!("not a TLS error: {other:?}"),
    }
}

#[test]
fn a_server_requiring_a_client_certificate_says_so() {
    let pki = Pki::new();
    for library in BACKENDS {
        for version in [Version::Tls12, Version::Tls13] {
            for backend in BACKENDS {
                // Whether the client checks the server's certificate or not (`-k`).
                let insecure = ClientConfig::default().insecure(true).backend(backend);
                for client in [pki.client(backend), insecure] {
                    let addr = requiring_client_certificates(&pki, library, version);
                    let e = refusal(addr, &client);
                    let case = format!("{library:?} server, {version:?}, {client:?}");
                    assert!(
                        matches!(e, TlsError::ClientCertificateRequired),
                        "{case}: {e:?}"
                    );
                    assert_eq!(e.to_string(), "the server requires a client certificate");
                }
            }
        }
    }
}

/// A `handshake_failure` to the client's hello (no cipher in common) is
/// not taken for a certificate wanted.
#[test]
fn a_handshake_failure_before_the_servers_hello_is_something_else() {
    use openssl::ssl::{SslAcceptor, SslMethod, SslVersion};
    let pki = Pki::new();
    let (chain, key) = pki.leaf(&["localhost"], None);
    for backend in BACKENDS {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let (chain, key) = (chain.clone(), key.clone());
        std::thread::spawn(move || {
            let mut builder =
                SslAcceptor::mozilla_intermediate_v5(SslMethod::tls_server()).unwrap();
            builder
                .set_certificate(&openssl::x509::X509::from_pem(&chain).unwrap())
                .unwrap();
            builder
                .set_private_key(&openssl::pkey::PKey::private_key_from_pem(&key).unwrap())
                .unwrap();
            // Only ciphers no client here offers.
            builder.set_cipher_list("PSK").unwrap();
            builder
                .set_max_proto_version(Some(SslVersion::TLS1_2))
                .unwrap();
            let (tcp, _) = listener.accept().unwrap();
            assert!(builder.build().accept(tcp).is_err());
        });
        let e = refusal(addr, &pki.client(backend));
        assert!(matches!(e, TlsError::Handshake(_)), "{backend:?}: {e:?}");
    }
}

/// The DER of the first certificate in `pem`.
fn der(pem: &[u8]) -> Vec<u8> {
    use rustls::pki_types::pem::PemObject;
    rustls::pki_types::CertificateDer::from_pem_slice(pem)
        .unwrap()
        .to_vec()
}

/// Whether a client's session was refused by its server: at the handshake (TLS 1.2), or at
/// the first read (TLS 1.3, where the server checks after the client's handshake is done).
async fn refused(client: Result<TlsStream<TcpStream>, TlsError>) -> bool {
    let Ok(client) = client else { return true };
    let mut rx = AsyncRecvTransport::new(transport(), client).unwrap();
    tokio::time::timeout(std::time::Duration::from_secs(5), rx.fill(1))
        .await
        .expect("an answer")
        .is_err()
}

/// Mutual TLS, with either library on either side and both versions: the server sees the
/// certificate a client presents, and again when the client resumes; it refuses a client
/// with none or with one another CA signed; `Optional` lets a client without one in.
#[tokio::test]
async fn mutual_tls_between_the_libraries() {
    let pki = Pki::new();
    let stranger = Pki::named("a CA the server does not know");
    let (chain, key) = pki.leaf(&["client.example"], None);
    let identity = Identity::from_pem(&chain, &key).unwrap();
    let (other_chain, other_key) = stranger.leaf(&["client.example"], None);
    let impostor = Identity::from_pem(&other_chain, &other_key).unwrap();
    for (server_side, client_side) in BACKENDS.into_iter().flat_map(|s| BACKENDS.map(|c| (s, c))) {
        for version in [Version::Tls12, Version::Tls13] {
            let case = format!("{server_side:?} server, {client_side:?} client, {version:?}");
            let server_config = |mode| {
                pki.server(server_side)
                    .client_auth(&pki.ca_pem, mode)
                    .versions(version, version)
            };
            let client_config = || pki.client(client_side).versions(version, version);

            let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
            let addr = listener.local_addr().unwrap();
            let acceptor = TlsAcceptor::new(&server_config(ClientAuth::Required)).unwrap();
            let connector = TlsConnector::new(&client_config().identity(identity.clone())).unwrap();
            for resumed in [false, true] {
                let (tcp, accepted) = tokio::join!(TcpStream::connect(addr), listener.accept());
                let (server, client) = tokio::join!(
                    acceptor.accept(accepted.unwrap().0),
                    connector.connect("localhost", tcp.unwrap())
                );
                let (server, client) = (server.unwrap(), client.unwrap());
                assert_eq!(server.is_resumed(), resumed, "{case}");
                assert_eq!(server.peer_certificate(), Some(der(&chain)), "{case}");
                assert!(
                    client.peer_certificate().is_some(),
                    "{case}: the client sees the server's"
                );
                transfer(&server, &client, b"who goes there", Sending::Chunks).await;
            }

            for (without, what) in [
                (client_config(), "none"),
                (client_config().identity(impostor.clone()), "a stranger's"),
            ] {
                let (server, client) =
                    handshake(&server_config(ClientAuth::Required), &without, "localhost").await;
                assert!(server.is_err(), "{case}: {what} let in");
                assert!(refused(client).await, "{case}: {what} not refused");
            }
            let (server, _) = handshake(
                &server_config(ClientAuth::Required),
                &client_config().identity(impostor.clone()),
                "localhost",
            )
            .await;
            assert!(
                matches!(server, Err(TlsError::UnknownCa)),
                "{case}: {server:?}"
            );

            let (server, client) = handshake(
                &server_config(ClientAuth::Optional),
                &client_config(),
                "localhost",
            )
            .await;
            let (server, client) = (server.unwrap(), client.unwrap());
            assert_eq!(server.peer_certificate(), None, "{case}");
            transfer(&server, &client, b"anyone", Sending::Chunks).await;
        }
    }
}

#[test]
fn an_identity_keeps_its_key_out_of_debug_output() {
    let pki = Pki::new();
    let (chain, key) = pki.leaf(&["client.example"], None);
    let identity = Identity::from_pem(&chain, &key).unwrap();
    let shown = format!("{identity:?} {:?}", ServerConfig::new(identity.clone()));
    assert!(!shown.contains("PRIVATE"), "{shown}");
    // Random base64 from the middle of the key, as `Vec<u8>`'s Debug would list it.
    let listed = format!("{:?}", &key[40..56]);
    assert!(!shown.contains(&listed[1..listed.len() - 1]), "{shown}");
    assert!(matches!(
        Identity::from_pem(&key, &key),
        Err(TlsError::Config(_))
    ));
}

#[tokio::test]
async fn a_reload_changes_the_certificate_of_later_handshakes_only() {
    let (old, new) = (Pki::new(), Pki::named("the renewed CA"));
    for backend in BACKENDS {
        let acceptor = TlsAcceptor::new(&old.server(backend)).unwrap();
        let (server, client) = handshake_with(&acceptor, &old.client(backend), "localhost").await;
        let (before_server, before_client) = (server.unwrap(), client.unwrap());

        // A key that is not the certificate's: refused, and the context in use stays.
        let (chain, _) = new.leaf(&["localhost"], None);
        let (_, other_key) = new.leaf(&["localhost"], None);
        let mismatched = ServerConfig::from_pem(&chain, &other_key).map(|c| c.backend(backend));
        if let Ok(mismatched) = mismatched {
            assert!(acceptor.reload(&mismatched).is_err(), "{backend:?}");
        }
        let (_, client) = handshake_with(&acceptor, &old.client(backend), "localhost").await;
        assert!(client.is_ok(), "{backend:?}: {client:?}");

        // Through a clone, as a server holds it: the next handshakes show the new one.
        acceptor.clone().reload(&new.server(backend)).unwrap();
        let (_, client) = handshake_with(&acceptor, &old.client(backend), "localhost").await;
        assert!(
            matches!(client, Err(TlsError::UnknownCa)),
            "{backend:?}: {client:?}"
        );
        let (_, client) = handshake_with(&acceptor, &new.client(backend), "localhost").await;
        assert!(client.is_ok(), "{backend:?}: {client:?}");
        // The connection made before goes on.
        transfer(
            &before_client,
            &before_server,
            b"still here",
            Sending::Chunks,
        )
        .await;
    }
}
