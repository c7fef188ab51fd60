//! Shared by the race servers: command-line arguments and the two answers
//! (and hyper's service for them, used by its HTTP/1.1 and HTTP/2 servers).
//!
//! Every server binary runs as `race-NAME [ADDR] [WWW]` (defaults
//! `127.0.0.1:8080` and `bench/race/www`) and serves:
//! - `GET /plaintext`: `Hello, World!` (13 bytes), `content-type: text/plain`;
//! - `GET /index.html`: the 151-byte file `WWW/index.html`.
//!
//! Each uses one worker thread: the race pins the whole process to one core.

#![forbid(unsafe_code)]

use std::net::SocketAddr;
use std::path::PathBuf;

use bytes::Bytes;
use http_body_util::Full;
use hyper::header::{HeaderValue, CONTENT_TYPE};
use hyper::{Request, Response, StatusCode};

/// The plaintext answer's body.
pub const PLAINTEXT: &str = "Hello, World!";

/// The address and the directory holding `index.html`, from the command line.
pub fn args() -> (SocketAddr, PathBuf) {
    let mut args = std::env::args().skip(1);
    let addr = args
        .next()
        .unwrap_or_else(|| "127.0.0.1:8080".to_owned())
        .parse()
        .expect("ADDR must be an address such as 127.0.0.1:8080");
    let www = args
        .next()
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/www")));
    assert!(
        www.join("index.html").is_file(),
        "{}/index.html is missing",
        www.display()
    );
    (addr, www)
}

/// The certificate chain and key (PEM) to serve HTTPS with, read from the
/// files `RACE_TLS_CERT` and `RACE_TLS_KEY` name; `None` for plain HTTP.
pub fn tls_files() -> Option<(Vec<u8>, Vec<u8>)> {
    let cert = std::env::var_os("RACE_TLS_CERT")?;
    let key = std::env::var_os("RACE_TLS_KEY")?;
    let read = |path| std::fs::read(&path).unwrap_or_else(|e| panic!("{path:?}: {e}"));
    Some((read(cert), read(key)))
}

/// hyper's answer to `request`, HTTP/1.1 or HTTP/2 alike: `/plaintext` from a
/// static slice, `/index.html` from `index` (the file read once at start; a
/// `Bytes` clone, no copy), 404 otherwise. hyper has no file server: this is
/// the fastest a hyper user would write, so the peer is not handicapped by a
/// per-request `open`.
pub fn hyper_answer<B>(request: &Request<B>, index: &Bytes) -> Response<Full<Bytes>> {
    let (body, kind) = match request.uri().path() {
        "/plaintext" => (Bytes::from_static(PLAINTEXT.as_bytes()), "text/plain"),
        "/index.html" => (index.clone(), "text/html"),
        _ => {
            let mut response = Response::new(Full::new(Bytes::new()));
            *response.status_mut() = StatusCode::NOT_FOUND;
            return response;
        }
    };
    let mut response = Response::new(Full::new(body));
    response
        .headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static(kind));
    response
}
