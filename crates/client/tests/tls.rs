//! `https://` against Python's `http.server` wrapped in `ssl`, with
//! certificates made for the test: a file fetched by both clients, and each
//! certificate failure (unknown CA, wrong host, expired) as its own error.

use std::io::{BufRead as _, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

mod common;

use common::Leaf;
use ringwire_client::{blocking, tokio as async_client, ClientConfig, Error, RequestBuffer, Url};
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

/// A CA and three certificates it signed, in a directory of their own:
/// `good` (localhost), `elsewhere` (another name), `expired` (localhost).
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

    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let body = runtime.block_on(async {
        let client = async_client::Client::with_tls(ClientConfig::default(), certs.trusting());
        let mut buffer = RequestBuffer::new().unwrap();
        let request = buffer
            .request("GET", &url)
            .unwrap()
            .headers()
            .unwrap()
            .finish()
            .unwrap();
        let mut response = client.send(&mut buffer, &request).await.unwrap();
        response.bytes().await.unwrap()
    });
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
