//! An HTTPS server of several names, a certificate each, chosen by the name the client
//! asks for by SNI: curl verifying each name against its own certificate (over HTTP/1.1
//! and HTTP/2), `openssl s_client` showing which certificate a name gets (a wildcard, an
//! unknown name, none), with both TLS libraries.

mod common;

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::Command;

use ringwire_server::{Handler, Request, Response, ServerConfig};
use ringwire_tls::{Backend, Identity, TlsAcceptor};

/// Answers with the `host` asked for.
struct Host;

impl Handler for Host {
    async fn call(&self, request: &Request<'_>) -> Response {
        let host = request.header("host").unwrap_or_default();
        Response::text(String::from_utf8_lossy(host).into_owned())
    }
}

/// A self-signed certificate for `names`, its PEM written to `dir/file.pem` for clients
/// to trust, and the identity presenting it.
fn certificate(dir: &Path, file: &str, names: &[&str]) -> (PathBuf, Identity) {
    let (cert, key) = ringwire_tls::self_signed(names).expect("certificate");
    let path = dir.join(format!("{file}.pem"));
    std::fs::write(&path, &cert).expect("write");
    (path, Identity::from_pem(&cert, &key).expect("identity"))
}

/// The subject alternative names of the certificate the server at `addr` presents to a
/// client asking for `name` (none: no SNI), as `openssl s_client` receives it.
fn presented(addr: SocketAddr, name: Option<&str>) -> String {
    let sni = match name {
        Some(name) => format!("-servername {name}"),
        None => "-noservername".to_owned(),
    };
    let script = format!(
        "openssl s_client -connect {addr} {sni} </dev/null 2>/dev/null \
         | openssl x509 -noout -ext subjectAltName"
    );
    let out = Command::new("sh")
        .args(["-c", &script])
        .output()
        .expect("sh");
    let text = String::from_utf8_lossy(&out.stdout);
    text.lines().nth(1).unwrap_or_default().trim().to_owned()
}

#[test]
fn each_name_gets_its_certificate() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (a_pem, a) = certificate(dir.path(), "a", &["a.test"]);
    let (b_pem, b) = certificate(dir.path(), "b", &["b.test", "www.b.test"]);
    let (w_pem, w) = certificate(dir.path(), "w", &["*.w.test"]);
    for backend in [Backend::OpenSsl, Backend::Rustls] {
        let config = ringwire_tls::ServerConfig::new(a.clone())
            .add_identity(b.clone())
            .add_identity(w.clone())
            .alpn(&[b"h2", b"http/1.1"])
            .backend(backend);
        let acceptor = TlsAcceptor::new(&config).expect("acceptor");
        let addr = common::start_tls(ServerConfig::default(), Host, acceptor);
        let port = addr.port();

        // curl checks each name against the certificate it gets: only its own passes.
        for (host, pem) in [
            ("a.test", &a_pem),
            ("b.test", &b_pem),
            ("www.b.test", &b_pem),
            ("x.w.test", &w_pem),
        ] {
            for version in ["--http1.1", "--http2"] {
                let resolve = format!("{host}:{port}:127.0.0.1");
                let url = format!("https://{host}:{port}/");
                let cacert = pem.to_str().expect("utf-8");
                let answer =
                    common::curl_text(&[version, "--resolve", &resolve, "--cacert", cacert, &url]);
                assert_eq!(answer, format!("{host}:{port}"), "{backend:?}");
            }
        }

        assert_eq!(
            presented(addr, Some("b.test")),
            "DNS:b.test, DNS:www.b.test"
        );
        assert_eq!(
            presented(addr, Some("B.Test")),
            "DNS:b.test, DNS:www.b.test"
        );
        assert_eq!(presented(addr, Some("deep.x.w.test")), "DNS:a.test");
        assert_eq!(presented(addr, Some("y.w.test")), "DNS:*.w.test");
        // An unknown name, or none, gets the first certificate.
        assert_eq!(presented(addr, Some("c.test")), "DNS:a.test", "{backend:?}");
        assert_eq!(presented(addr, None), "DNS:a.test", "{backend:?}");
    }
}
