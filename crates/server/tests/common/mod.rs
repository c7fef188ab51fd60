//! Shared by the integration tests: a server on a loopback port, curl, and
//! raw sockets.

#![allow(dead_code, unreachable_pub)]

use ringwire_ws::handshake::Offer;
use std::io::{Read as _, Write as _};
use std::net::{SocketAddr, TcpStream};
use std::process::{Command, Stdio};
use std::thread;
use std::time::Duration;

use ringwire_server::{Handler, Request, Response, Server, ServerConfig};

/// Raises this process's soft limit on open files to its hard limit (children started later
/// inherit it), as a server under load would: the soft limit, often 1024, is what load tests
/// run into first. The limit now.
pub fn raise_open_files_limit() -> u64 {
    use rustix::process::{getrlimit, setrlimit, Resource};
    let mut limit = getrlimit(Resource::Nofile);
    limit.current = limit.maximum;
    let _ = setrlimit(Resource::Nofile, limit);
    getrlimit(Resource::Nofile).current.unwrap_or(u64::MAX)
}

/// Starts `handler` on 127.0.0.1:0 in a runtime on a background thread.
pub fn start<H: Handler>(config: ServerConfig, handler: H) -> SocketAddr {
    serve(config, handler, None)
}

/// [`start`], serving HTTPS (and WSS) through `acceptor`.
pub fn start_tls<H: Handler>(
    config: ServerConfig,
    handler: H,
    acceptor: ringwire_tls::TlsAcceptor,
) -> SocketAddr {
    serve(config, handler, Some(acceptor))
}

/// Runs `python3 -c script args...`; its standard output, once it has exited with success
/// (its standard error in the panic otherwise).
pub fn python(script: &str, args: &[&str]) -> String {
    let out = Command::new("python3")
        .args(["-c", script])
        .args(args)
        .output()
        .expect("python3 runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "python3 failed: {stderr}");
    String::from_utf8(out.stdout).expect("UTF-8 output")
}

/// A TLS acceptor for localhost (a self-signed certificate) whose ALPN list is `alpn`.
pub fn acceptor(alpn: &[&[u8]]) -> ringwire_tls::TlsAcceptor {
    let (cert, key) = ringwire_tls::self_signed(&["localhost"]).expect("certificate");
    let config = ringwire_tls::ServerConfig::from_pem(&cert, &key)
        .expect("PEM")
        .alpn(alpn);
    ringwire_tls::TlsAcceptor::new(&config).expect("acceptor")
}

fn serve<H: Handler>(
    mut config: ServerConfig,
    handler: H,
    tls: Option<ringwire_tls::TlsAcceptor>,
) -> SocketAddr {
    config.addr = "127.0.0.1:0".parse().expect("addr");
    let mut server = Server::bind(config).expect("bind");
    if let Some(acceptor) = tls {
        server = server.with_tls(acceptor);
    }
    let addr = server.local_addr();
    thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .expect("runtime");
        runtime.block_on(server.serve(handler)).expect("serve");
    });
    addr
}

/// Answers `METHOD target body=N` and a newline, then the body itself.
#[derive(Debug)]
pub struct Echo;

impl Handler for Echo {
    async fn call(&self, request: &Request<'_>) -> Response {
        let mut out = format!(
            "{} {} body={}\n",
            request.method(),
            String::from_utf8_lossy(request.target().as_bytes()),
            request.body().len()
        )
        .into_bytes();
        out.extend_from_slice(request.body());
        Response::new(200)
            .header("content-type", "text/plain")
            .body(out)
    }
}

/// Runs curl; returns stdout. Fails the test when curl fails.
pub fn curl(args: &[&str], stdin: &[u8]) -> Vec<u8> {
    let mut child = Command::new("curl")
        .args(["--silent", "--show-error", "--max-time", "20"])
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("curl is installed");
    let mut input = child.stdin.take().expect("stdin");
    let stdin = stdin.to_vec();
    let writer = thread::spawn(move || {
        let _ = input.write_all(&stdin);
    });
    let out = child.wait_with_output().expect("curl");
    writer.join().expect("stdin writer");
    assert!(
        out.status.success(),
        "curl {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

/// curl's stdout as text.
pub fn curl_text(args: &[&str]) -> String {
    String::from_utf8(curl(args, b"")).expect("utf-8")
}

/// Writes `request` in one write and reads until the server closes.
pub fn raw(addr: SocketAddr, request: &[u8]) -> String {
    let mut stream = TcpStream::connect(addr).expect("connect");
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .expect("timeout");
    stream.write_all(request).expect("write");
    let mut out = Vec::new();
    stream
        .read_to_end(&mut out)
        .expect("read to the server's close");
    String::from_utf8_lossy(&out).into_owned()
}

/// The status codes of the responses in `text`, in order.
pub fn statuses(text: &str) -> Vec<u16> {
    text.match_indices("HTTP/1.1 ")
        .filter_map(|(at, _)| text.get(at + 9..at + 12)?.parse().ok())
        .collect()
}

/// ringwire-ws's async client socket over a new connection to `addr` (`HOST:PORT`), upgraded
/// on `path` with `deflate` offered; its receive ring may grow to `rx_max`. Call from a tokio
/// runtime.
pub async fn ws_client(
    addr: &str,
    path: &str,
    deflate: Option<ringwire_ws::DeflateConfig>,
    rx_max: usize,
) -> (
    ringwire_ws::socket::WebSocket<std::sync::Arc<tokio::net::TcpStream>>,
    ringwire_ws::handshake::Negotiated,
) {
    use ringwire_io::tokio::{AsyncRecvTransport, AsyncSendTransport};

    let stream = tokio::net::TcpStream::connect(addr).await.expect("connect");
    let stream = std::sync::Arc::new(stream);
    let config = ringwire_io::TransportConfig::new(64 << 10, rx_max);
    ringwire_ws::socket::WebSocket::connect(
        AsyncRecvTransport::new(config, std::sync::Arc::clone(&stream)).expect("rx"),
        AsyncSendTransport::new(config, stream).expect("tx"),
        addr,
        path,
        &Offer {
            deflate,
            ..Offer::default()
        },
        ringwire_ws::Limits::default(),
    )
    .await
    .expect("handshake")
}

/// A current-thread tokio runtime for a test's async clients.
pub fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime")
}
