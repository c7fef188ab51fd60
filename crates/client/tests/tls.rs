//! `https://` against Python's `http.server` wrapped in `ssl`, with
//! certificates made for the test: a file fetched by both clients, and each
//! certificate failure (unknown CA, wrong host, expired) as its own error.

use std::io::{BufRead as _, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

mod common;

use common::Leaf;
use ringwire_client::{
    blocking, tokio as async_client, ClientConfig, Error, Http2, RequestBuffer, Url,
};
use ringwire_tls::TlsError;

const SERVER: &str = r#"
import http.server, ssl, sys
cert, key, root = sys.argv[1:4]
handler = lambda *a: http.server.SimpleHTTPRequestHandler(*a, directory=root)
server = http.server.HTTPServer(("127.0.0.1", 0), handler)
context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
context.load_cert_chain(cert, key)
server.socket = context.wrap_socket(server.socket, server_side=True)
print(server.server_address[1], flush=True)
server.serve_forever()
"#;

/// Python serving `dir/root` over TLS with `dir/{name}.pem`; killed when dropped.
struct Python {
    child: Child,
    port: u16,
}

impl Python {
    fn start(dir: &Path, name: &str) -> Python {
        let mut child = Command::new("python3")
            .args(["-c", SERVER])
            .arg(dir.join(format!("{name}.pem")))
            .arg(dir.join(format!("{name}.key")))
            .arg(dir.join("root"))
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("python3 is installed");
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let port = line.trim().parse().expect("the port");
        Python { child, port }
    }

    fn url(&self, host: &str, path: &str) -> Url {
        Url::parse(&format!("https://{host}:{}{path}", self.port)).unwrap()
    }
}

impl Drop for Python {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A CA and four certificates it signed, in a directory of their own:
/// `good` (localhost), `elsewhere` (another name), `expired` (localhost), `client` (a
/// client's, for mutual TLS).
struct Certificates {
    dir: PathBuf,
    ca: Vec<u8>,
}

impl Certificates {
    fn new(name: &str) -> Certificates {
        let dir =
            std::env::temp_dir().join(format!("ringwire-client-tls-{}-{name}", std::process::id()));
        std::fs::create_dir_all(dir.join("root")).unwrap();
        let leaf = |file, host, expired| Leaf {
            file,
            host,
            expired,
        };
        let ca = common::certificates(
            &dir,
            &[
                leaf("good", "localhost", false),
                leaf("elsewhere", "elsewhere.example", false),
                leaf("expired", "localhost", true),
                leaf("client", "client.example", false),
            ],
        );
        Certificates { dir, ca }
    }

    fn trusting(&self) -> ringwire_tls::ClientConfig {
        ringwire_tls::ClientConfig::default()
            .without_system_roots()
            .add_root_pem(&self.ca)
    }
}

impl Drop for Certificates {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn get(client: &blocking::Client, url: &Url) -> Result<Vec<u8>, Error> {
    let mut buffer = RequestBuffer::new().unwrap();
    let request = buffer.request("GET", url)?.headers()?.finish()?;
    let mut response = client.send(&mut buffer, &request)?;
    assert_eq!(response.status(), 200);
    response.bytes()
}

/// [`get`] with the tokio client, on a runtime of its own, trusting what `tls` trusts.
fn async_get(tls: ringwire_tls::ClientConfig, url: &Url) -> Result<Vec<u8>, Error> {
    async_get_with(ClientConfig::default(), tls, url)
}

/// [`async_get`] with a client configured by `config`.
fn async_get_with(
    config: ClientConfig,
    tls: ringwire_tls::ClientConfig,
    url: &Url,
) -> Result<Vec<u8>, Error> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let client = async_client::Client::with_tls(config, tls);
        let mut buffer = RequestBuffer::new().unwrap();
        let request = buffer.request("GET", url)?.headers()?.finish()?;
        let mut response = client.send(&mut buffer, &request).await?;
        response.bytes().await
    })
}

#[test]
fn both_clients_fetch_a_file_from_python_over_tls() {
    let certs = Certificates::new("fetch");
    let file: Vec<u8> = (0..1_000_000u32).map(|i| (i % 253) as u8).collect();
    std::fs::write(certs.dir.join("root/file.bin"), &file).unwrap();
    let python = Python::start(&certs.dir, "good");
    let url = python.url("localhost", "/file.bin");

    let client = blocking::Client::with_tls(ClientConfig::default(), certs.trusting());
    assert!(
        get(&client, &url).unwrap() == file,
        "the blocking client's copy differs"
    );

    let body = async_get(certs.trusting(), &url).unwrap();
    assert!(body == file, "the async client's copy differs");
}

#[test]
fn certificate_failures_are_errors_that_say_which() {
    let certs = Certificates::new("failures");
    let trusting = blocking::Client::with_tls(ClientConfig::default(), certs.trusting());

    let good = Python::start(&certs.dir, "good");
    let stranger = blocking::Client::new(ClientConfig::default());
    let err = get(&stranger, &good.url("localhost", "/")).unwrap_err();
    assert!(matches!(err, Error::Tls(TlsError::UnknownCa)), "{err}");
    // Over an IP address, the name on the certificate does not match.
    let err = get(&trusting, &good.url("127.0.0.1", "/")).unwrap_err();
    assert!(
        matches!(err, Error::Tls(TlsError::HostnameMismatch)),
        "{err}"
    );

    let elsewhere = Python::start(&certs.dir, "elsewhere");
    let err = get(&trusting, &elsewhere.url("localhost", "/")).unwrap_err();
    assert!(
        matches!(err, Error::Tls(TlsError::HostnameMismatch)),
        "{err}"
    );

    let expired = Python::start(&certs.dir, "expired");
    let err = get(&trusting, &expired.url("localhost", "/")).unwrap_err();
    assert!(matches!(err, Error::Tls(TlsError::Expired)), "{err}");
    assert_eq!(err.to_string(), "the peer's certificate has expired");

    // `-k`: no checks at all.
    let insecure = blocking::Client::with_tls(
        ClientConfig::default(),
        ringwire_tls::ClientConfig::default().insecure(true),
    );
    assert!(get(&insecure, &expired.url("127.0.0.1", "/")).is_ok());
}

/// A server for `connections` connections (one at a time) that requires
/// a client certificate, in TLS `version` only, presenting `dir/good.pem`;
/// after each failed handshake it reads until the client closes (5 s at
/// most), so that its alert is not lost to a reset.
fn requiring_client_certificates(
    dir: &Path,
    version: openssl::ssl::SslVersion,
    connections: usize,
) -> u16 {
    use openssl::ssl::{SslAcceptor, SslFiletype, SslMethod, SslVerifyMode};
    let mut builder = SslAcceptor::mozilla_intermediate_v5(SslMethod::tls_server()).unwrap();
    builder
        .set_certificate_chain_file(dir.join("good.pem"))
        .unwrap();
    builder
        .set_private_key_file(dir.join("good.key"), SslFiletype::PEM)
        .unwrap();
    builder.set_verify(SslVerifyMode::PEER | SslVerifyMode::FAIL_IF_NO_PEER_CERT);
    builder.set_min_proto_version(Some(version)).unwrap();
    builder.set_max_proto_version(Some(version)).unwrap();
    let acceptor = builder.build();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for tcp in listener.incoming().take(connections) {
            let tcp = tcp.unwrap();
            tcp.set_read_timeout(Some(std::time::Duration::from_secs(5)))
                .unwrap();
            let mut drain = tcp.try_clone().unwrap();
            assert!(
                acceptor.accept(tcp).is_err(),
                "a client without a certificate"
            );
            let _ = std::io::copy(&mut drain, &mut std::io::sink());
        }
    });
    port
}

/// In TLS 1.2 the handshake fails; in TLS 1.3 the server checks after the
/// client's handshake is done, and the first read of the response fails:
/// either way a TLS error that says what is missing.
#[test]
fn a_server_requiring_a_client_certificate_is_a_tls_error() {
    use openssl::ssl::SslVersion;
    let certs = Certificates::new("client-certificate");
    let backends = [
        ringwire_tls::Backend::OpenSsl,
        ringwire_tls::Backend::Rustls,
    ];
    for version in [SslVersion::TLS1_2, SslVersion::TLS1_3] {
        let port = requiring_client_certificates(&certs.dir, version, backends.len());
        let url = Url::parse(&format!("https://localhost:{port}/")).unwrap();
        for backend in backends {
            let tls = certs.trusting().backend(backend);
            let client = blocking::Client::with_tls(ClientConfig::default(), tls);
            let err = get(&client, &url).unwrap_err();
            assert!(
                matches!(err, Error::Tls(TlsError::ClientCertificateRequired)),
                "{version:?} {backend:?}: {err}"
            );
            assert_eq!(err.to_string(), "the server requires a client certificate");
        }
    }

    // The async client reads its response through another transport.
    let port = requiring_client_certificates(&certs.dir, SslVersion::TLS1_3, 1);
    let url = Url::parse(&format!("https://localhost:{port}/")).unwrap();
    let err = async_get(certs.trusting(), &url);
    assert!(
        matches!(err, Err(Error::Tls(TlsError::ClientCertificateRequired))),
        "{err:?}"
    );
}

/// Answers with the protocol the request came over, then the client certificate (DER) it
/// presented.
struct Whose;

impl ringwire_server::Handler for Whose {
    async fn call(&self, request: &ringwire_server::Request<'_>) -> ringwire_server::Response {
        let mut body = format!("{:?} ", request.protocol()).into_bytes();
        body.extend(request.peer_certificate().unwrap_or_default());
        ringwire_server::Response::new(200).body(body)
    }
}

/// Mutual TLS end to end: both clients, over HTTP/1.1 and HTTP/2, present a certificate to
/// ringwire's server, whose handler sees it; without one they are told the server wants it.
#[test]
fn both_clients_present_a_certificate_the_servers_handler_sees() {
    let certs = Certificates::new("mutual");
    let read = |name: &str| std::fs::read(certs.dir.join(name)).unwrap();
    let server = ringwire_tls::ServerConfig::from_pem(&read("good.pem"), &read("good.key"))
        .unwrap()
        .client_auth(&certs.ca, ringwire_tls::ClientAuth::Required)
        .alpn(&[b"h2", b"http/1.1"]);
    let acceptor = ringwire_tls::TlsAcceptor::new(&server).unwrap();
    let addr = common::serve(Whose, Some(acceptor));
    let url = Url::parse(&format!("https://localhost:{}/", addr.port())).unwrap();
    let identity =
        ringwire_tls::Identity::from_pem(&read("client.pem"), &read("client.key")).unwrap();
    let der = openssl::x509::X509::from_pem(&read("client.pem"))
        .unwrap()
        .to_der()
        .unwrap();
    for (http2, protocol) in [(Http2::Off, "Http11"), (Http2::Negotiate, "Http2")] {
        let config = ClientConfig {
            http2,
            ..ClientConfig::default()
        };
        let expected = [format!("{protocol} ").as_bytes(), &der].concat();
        let tls = certs.trusting().identity(identity.clone());
        let client = blocking::Client::with_tls(config, tls.clone());
        assert_eq!(
            get(&client, &url).unwrap(),
            expected,
            "blocking, {protocol}"
        );
        assert_eq!(
            async_get_with(config, tls, &url).unwrap(),
            expected,
            "tokio, {protocol}"
        );

        let without = blocking::Client::with_tls(config, certs.trusting());
        let err = get(&without, &url).unwrap_err();
        assert!(
            matches!(err, Error::Tls(TlsError::ClientCertificateRequired)),
            "{protocol}: {err}"
        );
    }
}

/// A TLS server (the `good` certificate) for one connection: it reads the request head,
/// then `answer` has the connection. The port.
fn after_the_head(
    certs: &Certificates,
    answer: impl FnOnce(&mut ringwire_tls::BlockingTlsStream<std::net::TcpStream>) + Send + 'static,
) -> u16 {
    let read = |name: &str| std::fs::read(certs.dir.join(name)).unwrap();
    let config =
        ringwire_tls::ServerConfig::from_pem(&read("good.pem"), &read("good.key")).unwrap();
    let acceptor = ringwire_tls::TlsAcceptor::new(&config).unwrap();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        let (tcp, _) = listener.accept().unwrap();
        tcp.set_read_timeout(Some(std::time::Duration::from_secs(5)))
            .unwrap();
        let mut tls = acceptor.accept_blocking(tcp).unwrap();
        let mut head = Vec::new();
        while !head.ends_with(b"\r\n\r\n") {
            let mut byte = [0];
            std::io::Read::read_exact(&mut tls, &mut byte).unwrap();
            head.push(byte[0]);
        }
        answer(&mut tls);
    });
    port
}

/// A server for one connection that answers with 500 of the 1000 bytes
/// its head announces, then closes without `close_notify`.
fn cutting_short(certs: &Certificates) -> u16 {
    after_the_head(certs, |tls| {
        let mut answer = b"HTTP/1.1 200 OK\r\ncontent-length: 1000\r\n\r\n".to_vec();
        answer.extend_from_slice(&[b'x'; 500]);
        std::io::Write::write_all(tls, &answer).unwrap();
        tls.get_ref().shutdown(std::net::Shutdown::Both).unwrap();
    })
}

/// A body cut short reports how much of it came, over TLS as over TCP;
/// the missing `close_notify` is a detail.
#[test]
fn a_body_cut_short_over_tls_says_how_much_came() {
    let certs = Certificates::new("cut-short");
    for backend in [
        ringwire_tls::Backend::OpenSsl,
        ringwire_tls::Backend::Rustls,
    ] {
        let url = Url::parse(&format!("https://localhost:{}/", cutting_short(&certs))).unwrap();
        let client =
            blocking::Client::with_tls(ClientConfig::default(), certs.trusting().backend(backend));
        let err = get(&client, &url).unwrap_err();
        assert!(
            matches!(
                err,
                Error::IncompleteBody {
                    received: 500,
                    expected: Some(1000),
                    without_close_notify: true,
                }
            ),
            "{backend:?}: {err:?}"
        );
        assert_eq!(
            err.to_string(),
            "the body ended after 500 of 1000 bytes (the server closed without TLS close_notify)"
        );
    }

    // The async client reads its body through another transport.
    let url = Url::parse(&format!("https://localhost:{}/", cutting_short(&certs))).unwrap();
    let err = async_get(certs.trusting(), &url);
    assert!(
        matches!(
            err,
            Err(Error::IncompleteBody {
                received: 500,
                without_close_notify: true,
                ..
            })
        ),
        "{err:?}"
    );
}

/// A server that closes without `close_notify` in the middle of its head fails the request
/// as a server closing TCP there does: [`Error::Closed`].
#[test]
fn a_head_cut_short_over_tls_is_closed() {
    let certs = Certificates::new("head-cut");
    let half_a_head = |certs: &Certificates| {
        after_the_head(certs, |tls| {
            std::io::Write::write_all(tls, b"HTTP/1.1 200").unwrap();
            tls.get_ref().shutdown(std::net::Shutdown::Both).unwrap();
        })
    };
    for backend in [
        ringwire_tls::Backend::OpenSsl,
        ringwire_tls::Backend::Rustls,
    ] {
        let url = Url::parse(&format!("https://localhost:{}/", half_a_head(&certs))).unwrap();
        let client =
            blocking::Client::with_tls(ClientConfig::default(), certs.trusting().backend(backend));
        let err = get(&client, &url).unwrap_err();
        assert!(matches!(err, Error::Closed), "{backend:?}: {err:?}");
    }
    let url = Url::parse(&format!("https://localhost:{}/", half_a_head(&certs))).unwrap();
    let err = async_get(certs.trusting(), &url);
    assert!(matches!(err, Err(Error::Closed)), "{err:?}");
}

/// A server for one connection that answers `413` as soon as the head of an upload is in,
/// then closes without reading the body: the client's next writes meet a reset.
fn refusing_uploads(certs: &Certificates) -> u16 {
    after_the_head(certs, |tls| {
        let answer =
            b"HTTP/1.1 413 Content Too Large\r\nconnection: close\r\ncontent-length: 0\r\n\r\n";
        std::io::Write::write_all(tls, answer).unwrap();
        // The body keeps coming while this waits; closing with it unread resets the
        // connection.
        std::thread::sleep(std::time::Duration::from_millis(200));
    })
}

/// An upload refused early over TLS (RFC 9112 section 9.3): the client's writes fail with a
/// reset, and the answer that came before it is what the client returns, not the broken
/// pipe (the TLS stream must not let the ciphertext it could not send stop it reading).
#[test]
fn an_upload_refused_early_over_tls_gets_its_answer() {
    let certs = Certificates::new("refused-upload");
    let body = vec![b'u'; 32 << 20];
    for backend in [
        ringwire_tls::Backend::OpenSsl,
        ringwire_tls::Backend::Rustls,
    ] {
        let url = Url::parse(&format!(
            "https://localhost:{}/up",
            refusing_uploads(&certs)
        ))
        .unwrap();
        let client =
            blocking::Client::with_tls(ClientConfig::default(), certs.trusting().backend(backend));
        let mut buffer = RequestBuffer::new().unwrap();
        let request = buffer
            .request("PUT", &url)
            .unwrap()
            .headers()
            .unwrap()
            .body(&body)
            .unwrap();
        let status = client.send(&mut buffer, &request).map(|r| r.status());
        assert!(matches!(status, Ok(413)), "{backend:?}: {status:?}");
    }

    let url = Url::parse(&format!(
        "https://localhost:{}/up",
        refusing_uploads(&certs)
    ))
    .unwrap();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let status = runtime.block_on(async {
        let client = async_client::Client::with_tls(ClientConfig::default(), certs.trusting());
        let mut buffer = RequestBuffer::new().unwrap();
        let request = buffer.request("PUT", &url)?.headers()?.body(&body)?;
        client.send(&mut buffer, &request).await.map(|r| r.status())
    });
    assert!(matches!(status, Ok(413)), "tokio: {status:?}");
}

/// A host name pinned to an address (curl's `--resolve`): both clients reach a server whose
/// certificate is for `elsewhere.example`, a name no resolver knows, and check it under that
/// name; unpinned, the name does not resolve.
#[test]
fn a_pinned_name_is_reached_and_checked_under_its_name() {
    let certs = Certificates::new("pinned");
    let read = |name: &str| std::fs::read(certs.dir.join(name)).unwrap();
    let server =
        ringwire_tls::ServerConfig::from_pem(&read("elsewhere.pem"), &read("elsewhere.key"))
            .unwrap()
            .alpn(&[b"http/1.1"]);
    let addr = common::serve(
        Whose,
        Some(ringwire_tls::TlsAcceptor::new(&server).unwrap()),
    );
    let url = Url::parse(&format!("https://elsewhere.example:{}/", addr.port())).unwrap();
    let local = "127.0.0.1".parse().unwrap();
    let client = blocking::Client::with_tls(ClientConfig::default(), certs.trusting()).resolve(
        "elsewhere.example",
        addr.port(),
        local,
    );
    assert_eq!(get(&client, &url).unwrap(), b"Http11 ");
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let body = runtime.block_on(async {
        let client = async_client::Client::with_tls(ClientConfig::default(), certs.trusting())
            .resolve("elsewhere.example", addr.port(), local);
        let mut buffer = RequestBuffer::new().unwrap();
        let request = buffer.request("GET", &url)?.headers()?.finish()?;
        let mut response = client.send(&mut buffer, &request).await?;
        response.bytes().await
    });
    assert_eq!(body.unwrap(), b"Http11 ");
    let unpinned = blocking::Client::with_tls(ClientConfig::default(), certs.trusting());
    assert!(matches!(get(&unpinned, &url), Err(Error::Connect { .. })));
}
