//! Shared by the race servers: command-line arguments and the two answers.
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
