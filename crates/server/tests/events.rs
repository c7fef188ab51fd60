//! Server-sent event streams whose producer waits between events: a client that leaves is
//! noticed while the stream waits (not at the producer's next event, which may be hours
//! away), over HTTP/1.1 and HTTP/2, plain and under TLS; a request pipelined behind a
//! stream waits its turn and is answered.

mod common;

use std::io::{Read as _, Write as _};
use std::net::{SocketAddr, TcpStream};
use std::process::Command;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use common::{acceptor, start, start_tls};
use ringwire_server::events::Event;
use ringwire_server::{Request, Response, Router, ServerConfig};

/// The tags of the streams whose producer saw its client leave.
static NOTICED: Mutex<Vec<String>> = Mutex::new(Vec::new());

/// `?tag=T`: one event, then nothing until the client leaves, which is noted as `T`.
async fn lonely(request: &Request<'_>) -> Response {
    let tag = request
        .query("tag")
        .and_then(|t| Some(t.to_str().ok()?.into_owned()));
    let tag = tag.unwrap_or_default();
    let (events, response) = Response::events(4);
    tokio::spawn(async move {
        if events.send(Event::new("hello")).await.is_ok() {
            events.closed().await;
            NOTICED.lock().unwrap().push(tag);
        }
    });
    response
}

/// Two events 200 ms apart, then the end.
async fn pair(_: &Request<'_>) -> Response {
    let (events, response) = Response::events(4);
    tokio::spawn(async move {
        let _ = events.send(Event::new("first")).await;
        tokio::time::sleep(Duration::from_millis(200)).await;
        let _ = events.send(Event::new("second")).await;
    });
    response
}

async fn ping(_: &Request<'_>) -> Response {
    Response::text("pong\n")
}

fn router() -> Router {
    Router::new()
        .get("/lonely", lonely)
        .get("/pair", pair)
        .get("/ping", ping)
}

/// Waits (5 s at most) for the producer of `tag`'s stream to notice its client left.
fn noticed(tag: &str) -> Duration {
    let started = Instant::now();
    while started.elapsed() < Duration::from_secs(5) {
        if NOTICED.lock().unwrap().iter().any(|t| t == tag) {
            return started.elapsed();
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    panic!("the producer of {tag} never learnt its client left");
}

/// curl reads the stream for a second, then gives up and goes.
fn curl_leaves(url: &str, args: &[&str]) {
    let out = Command::new("curl")
        .args(["--silent", "--no-buffer", "--max-time", "1", "--insecure"])
        .args(args)
        .arg(url)
        .output()
        .expect("curl is installed");
    // 28: curl's own timeout, the way it was meant to end.
    assert_eq!(out.status.code(), Some(28), "{out:?}");
    assert_eq!(String::from_utf8_lossy(&out.stdout), "data: hello\n\n");
}

#[test]
fn a_client_that_leaves_is_noticed_while_the_stream_waits() {
    let plain = start(ServerConfig::default(), router());
    let tls = start_tls(
        ServerConfig::default(),
        router(),
        acceptor(&[b"h2", b"http/1.1"]),
    );
    let cases: [(&str, SocketAddr, &str, &[&str]); 4] = [
        ("h1", plain, "http", &["--http1.1"]),
        ("h2c", plain, "http", &["--http2-prior-knowledge"]),
        ("h1-tls", tls, "https", &["--http1.1"]),
        ("h2-tls", tls, "https", &["--http2"]),
    ];
    for (tag, addr, scheme, args) in cases {
        curl_leaves(
            &format!("{scheme}://localhost:{}/lonely?tag={tag}", addr.port()),
            args,
        );
        let after = noticed(tag);
        assert!(after < Duration::from_secs(2), "{tag}: {after:?}");
    }

    // A client that closes its socket without a word.
    let mut socket = TcpStream::connect(plain).unwrap();
    socket
        .write_all(b"GET /lonely?tag=raw HTTP/1.1\r\nhost: x\r\n\r\n")
        .unwrap();
    let mut got = Vec::new();
    let mut buf = [0; 1024];
    while !String::from_utf8_lossy(&got).contains("data: hello") {
        let n = socket.read(&mut buf).unwrap();
        assert_ne!(n, 0, "{}", String::from_utf8_lossy(&got));
        got.extend_from_slice(&buf[..n]);
    }
    drop(socket);
    noticed("raw");
}

#[test]
fn a_request_pipelined_behind_a_stream_is_answered_after_it() {
    let addr = start(ServerConfig::default(), router());
    let mut socket = TcpStream::connect(addr).unwrap();
    socket
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    socket
        .write_all(b"GET /pair HTTP/1.1\r\nhost: x\r\n\r\n")
        .unwrap();
    // The next request comes while the stream waits for its second event: read then, and
    // kept for its turn.
    let mut got = Vec::new();
    let mut buf = [0; 1024];
    while !String::from_utf8_lossy(&got).contains("data: first") {
        let n = socket.read(&mut buf).unwrap();
        assert_ne!(n, 0, "{}", String::from_utf8_lossy(&got));
        got.extend_from_slice(&buf[..n]);
    }
    socket
        .write_all(b"GET /ping HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n")
        .unwrap();
    socket.read_to_end(&mut got).unwrap();
    let got = String::from_utf8(got).unwrap();
    let first = got.find("data: first").expect(&got);
    let second = got.find("data: second").expect(&got);
    let pong = got.find("\r\n\r\npong\n").expect(&got);
    assert!(first < second && second < pong, "{got}");
    assert_eq!(got.matches("HTTP/1.1 200 OK").count(), 2, "{got}");
}
