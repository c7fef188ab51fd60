//! Request bodies read as they arrive, of any size, by handlers that ask.

mod common;

use std::io::{Read as _, Write as _};
use std::net::TcpStream;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use common::{acceptor, curl, python, raw, start, start_tls};
use ringwire_http1::Method;
use ringwire_server::{handler_fn, streaming, Request, Response, Router, ServerConfig, Timeouts};

/// Reads the body in 4 KiB steps; answers its length and a checksum.
async fn sum(request: &Request<'_>) -> Response {
    let Some(mut body) = request.body_reader() else {
        return Response::text("no body\n");
    };
    let (mut len, mut sum) = (0u64, 0u64);
    let mut buf = [0; 4096];
    loop {
        match body.read(&mut buf).await {
            Ok(0) => break,
            Ok(n) => {
                len += n as u64;
                sum = buf[..n]
                    .iter()
                    .fold(sum, |s, &b| s.wrapping_mul(31).wrapping_add(u64::from(b)));
            }
            Err(e) => return Response::new(400).body(format!("{e}\n")),
        }
    }
    Response::text(format!("len={len} sum={sum}\n"))
}

/// The same as [`sum`], the body taken where it lies, a piece at a time
/// ([`BodyReader::with_chunk`](ringwire_server::BodyReader::with_chunk)).
async fn sum_in_place(request: &Request<'_>) -> Response {
    let Some(mut body) = request.body_reader() else {
        return Response::text("no body\n");
    };
    let (mut len, mut sum) = (0u64, 0u64);
    loop {
        let piece = body.with_chunk(|piece| {
            len += piece.len() as u64;
            sum = piece
                .iter()
                .fold(sum, |s, &b| s.wrapping_mul(31).wrapping_add(u64::from(b)));
        });
        match piece.await {
            Ok(Some(())) => {}
            Ok(None) => break,
            Err(e) => return Response::new(400).body(format!("{e}\n")),
        }
    }
    Response::text(format!("len={len} sum={sum}\n"))
}

/// Answers at once without reading the body.
async fn ignore(_: &Request<'_>) -> Response {
    Response::text("ignored\n")
}

/// Reads the first few bytes of the body, and answers a moment later (the client has sent
/// a window's worth meanwhile), leaving the rest.
async fn peek(request: &Request<'_>) -> Response {
    let mut first = [0; 4];
    match request.body_reader() {
        Some(mut body) => match body.read(&mut first).await {
            Ok(n) => {
                tokio::time::sleep(Duration::from_millis(100)).await;
                Response::text(format!("{}\n", String::from_utf8_lossy(&first[..n])))
            }
            Err(e) => Response::new(400).body(format!("{e}\n")),
        },
        None => Response::text("no body\n"),
    }
}

fn expected(data: &[u8]) -> String {
    let sum = data
        .iter()
        .fold(0u64, |s, &b| s.wrapping_mul(31).wrapping_add(u64::from(b)));
    format!("len={} sum={sum}\n", data.len())
}

fn app() -> Router {
    Router::new()
        .route(Method::Post, "/sum", streaming(handler_fn(sum)))
        .route(
            Method::Post,
            "/in-place",
            streaming(handler_fn(sum_in_place)),
        )
        .route(Method::Post, "/ignore", streaming(handler_fn(ignore)))
        .route(Method::Post, "/peek", streaming(handler_fn(peek)))
        .route(
            Method::Post,
            "/peek-later",
            streaming(handler_fn(peek_later)),
        )
}

/// Answers at once; a task reads the first bytes of the HTTP/2 body after the answer, then
/// lets the rest go.
async fn peek_later(request: &Request<'_>) -> Response {
    let Some(mut body) = request.body_stream() else {
        return Response::text("HTTP/2 only\n");
    };
    tokio::spawn(async move {
        let mut first = [0; 4];
        let _ = body.read(&mut first).await;
        tokio::time::sleep(Duration::from_millis(100)).await;
    });
    Response::text("later\n")
}

#[test]
fn uploads_larger_than_the_buffer_bound_stream_through() {
    let config = ServerConfig {
        max_buffered_body: 64 << 10,
        ..ServerConfig::default()
    };
    let addr = start(config, app());
    let data: Vec<u8> = (0..20_000_000u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 24) as u8)
        .collect();
    for path in ["/sum", "/in-place"] {
        let url = format!("http://{addr}{path}");
        // Content-Length, then chunked (curl sends stdin chunked with -T -).
        let out = curl(&["--data-binary", "@-", &url], &data);
        assert_eq!(String::from_utf8_lossy(&out), expected(&data), "{path}");
        let out = curl(&["-T", "-", "-X", "POST", &url], &data);
        assert_eq!(String::from_utf8_lossy(&out), expected(&data), "{path}");
    }
}

/// Over HTTP/2 too: the body comes in `DATA` frames and the window is given back as the
/// handler reads (two uploads on one TLS connection, as a browser sends them).
#[test]
fn uploads_stream_through_over_http2() {
    let config = ServerConfig {
        max_buffered_body: 64 << 10,
        ..ServerConfig::default()
    };
    // 16 times the stream's window, 4 times the connection's.
    let data: Vec<u8> = (0..4_000_000u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 24) as u8)
        .collect();
    let addr = start(config, app());
    for path in ["/sum", "/in-place"] {
        let url = format!("http://{addr}{path}");
        let args = ["--http2-prior-knowledge", "--data-binary", "@-", &url];
        assert_eq!(
            String::from_utf8_lossy(&curl(&args, &data)),
            expected(&data),
            "{path}"
        );
    }
    let addr = start_tls(config, app(), acceptor(&[b"h2", b"http/1.1"]));
    let url = format!("https://localhost:{}/sum", addr.port());
    let format = "%{http_version} %{num_connects}\n";
    let args = [
        "-k",
        "--http2",
        "-w",
        format,
        "--data-binary",
        "@-",
        &url,
        &url,
    ];
    let out = String::from_utf8_lossy(&curl(&args, &data)).into_owned();
    let one = expected(&data);
    assert_eq!(out, format!("{one}2 1\n{one}2 0\n"));
}

/// Python's h2 uploads 4 MB to a handler that reads a few bytes and answers: the answer
/// comes at once, the rest of the body is taken and thrown away (its window given back,
/// what had arrived for the handler included), and the connection serves the next request. (curl 7.88 stops uploading once the answer is
/// in, so it cannot show this.)
const UNREAD_UPLOAD: &str = r#"
import socket, sys
import h2.connection, h2.events
host, port = sys.argv[1].rsplit(":", 1)
sock = socket.create_connection((host, int(port)), timeout=10)
conn = h2.connection.H2Connection()
conn.initiate_connection()

def request(path, body):
    sid = conn.get_next_available_stream_id()
    conn.send_headers(sid, [(":method", "POST"), (":path", path), (":scheme", "http"),
                            (":authority", "x"), ("content-length", str(len(body)))])
    sent, answer, ended = 0, b"", False
    while not (ended and sent == len(body)):
        room = min(conn.local_flow_control_window(sid), conn.max_outbound_frame_size)
        if sent < len(body) and room > 0:
            n = min(room, len(body) - sent)
            conn.send_data(sid, body[sent:sent + n], end_stream=sent + n == len(body))
            sent += n
        else:
            sock.sendall(conn.data_to_send())
            for event in conn.receive_data(sock.recv(1 << 16)):
                if isinstance(event, h2.events.DataReceived):
                    answer += event.data
                    conn.acknowledge_received_data(len(event.data), sid)
                ended |= isinstance(event, h2.events.StreamEnded) and event.stream_id == sid
        sock.sendall(conn.data_to_send())
    return answer.decode()

print(request(sys.argv[2], b"x" * 4_000_000), end="")
print(request("/sum", b"abc"), end="")
"#;

#[test]
fn an_unread_http2_body_is_thrown_away_and_the_connection_goes_on() {
    ringwire_testkit::ensure_python_module("h2", "h2");
    let addr = start(ServerConfig::default(), app());
    let out = python(UNREAD_UPLOAD, &[&addr.to_string(), "/peek"]);
    assert_eq!(out, format!("xxxx\n{}", expected(b"abc")));
}

/// The same when the body outlives the handler's call: once its last reader lets it go, the
/// rest is thrown away as it comes (the client's windows given back).
#[test]
fn an_http2_body_let_go_after_the_answer_is_thrown_away_and_the_connection_goes_on() {
    ringwire_testkit::ensure_python_module("h2", "h2");
    let addr = start(ServerConfig::default(), app());
    let out = python(UNREAD_UPLOAD, &[&addr.to_string(), "/peek-later"]);
    assert_eq!(out, format!("later\n{}", expected(b"abc")));
}

/// How the reads of `hold`'s task ended: 1 at the body's end, 2 cut off.
static HELD_BODY_END: AtomicUsize = AtomicUsize::new(0);

/// Answers at once; a task goes on reading the HTTP/2 body after the answer.
async fn hold(request: &Request<'_>) -> Response {
    let Some(mut body) = request.body_stream() else {
        return Response::text("HTTP/2 only\n");
    };
    tokio::spawn(async move {
        let mut buf = [0; 1024];
        let end = loop {
            match body.read(&mut buf).await {
                Ok(0) => break 1,
                Ok(_) => {}
                Err(_) => break 2,
            }
        };
        HELD_BODY_END.store(end, Ordering::SeqCst);
    });
    Response::text("held\n")
}

/// Python's h2 starts an upload, reads the answer, and hangs up with the body unfinished.
const HANG_UP: &str = r#"
import socket, sys
import h2.connection, h2.events
host, port = sys.argv[1].rsplit(":", 1)
sock = socket.create_connection((host, int(port)), timeout=10)
conn = h2.connection.H2Connection()
conn.initiate_connection()
conn.send_headers(1, [(":method", "POST"), (":path", "/hold"), (":scheme", "http"),
                      (":authority", "x")])
conn.send_data(1, b"the start of it")
sock.sendall(conn.data_to_send())
answer = b""
while not answer.endswith(b"\n"):
    for event in conn.receive_data(sock.recv(1 << 16)):
        if isinstance(event, h2.events.DataReceived):
            answer += event.data
print(answer.decode(), end="")
sock.close()
"#;

/// A body a task reads after the handler answered ends in an error for that task when the
/// client goes away, rather than a wait that never ends.
#[test]
fn a_held_http2_body_is_cut_off_when_the_connection_ends() {
    ringwire_testkit::ensure_python_module("h2", "h2");
    let router = Router::new().route(Method::Post, "/hold", streaming(handler_fn(hold)));
    let addr = start(ServerConfig::default(), router);
    assert_eq!(python(HANG_UP, &[&addr.to_string()]), "held\n");
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    while HELD_BODY_END.load(Ordering::SeqCst) == 0 && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
    }
    assert_eq!(
        HELD_BODY_END.load(Ordering::SeqCst),
        2,
        "1: ended, 0: still waiting"
    );
}

#[test]
fn one_byte_chunks_and_keep_alive_after_a_read_body() {
    let addr = start(ServerConfig::default(), app());
    let body: Vec<u8> = (0..3000u32).map(|i| b'a' + (i % 26) as u8).collect();
    let chunked = |path: &str| {
        let head = format!("POST {path} HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n");
        let mut request = head.into_bytes();
        for b in &body {
            request.extend_from_slice(b"1\r\n");
            request.push(*b);
            request.extend_from_slice(b"\r\n");
        }
        request.extend_from_slice(b"0\r\n\r\n");
        request
    };
    // Twice on one connection (read into a buffer, then in place), then a close.
    let mut all = chunked("/sum");
    all.extend_from_slice(&chunked("/in-place"));
    all.extend_from_slice(
        b"POST /sum HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\nConnection: close\r\n\r\nabc",
    );
    let out = raw(addr, &all);
    let answer = expected(&body);
    assert_eq!(out.matches(&answer).count(), 2, "{out}");
    assert!(out.ends_with(&expected(b"abc")), "{out}");
    assert_eq!(out.matches("HTTP/1.1 200 OK").count(), 3, "{out}");
}

#[test]
fn an_unread_body_ends_the_connection_after_the_answer() {
    let addr = start(ServerConfig::default(), app());
    let mut s = TcpStream::connect(addr).expect("connect");
    s.set_read_timeout(Some(Duration::from_secs(10)))
        .expect("timeout");
    s.write_all(b"POST /ignore HTTP/1.1\r\nHost: a\r\nContent-Length: 100000\r\n\r\npartial")
        .expect("write");
    let mut out = Vec::new();
    let _ = s.read_to_end(&mut out);
    let out = String::from_utf8_lossy(&out);
    assert!(out.starts_with("HTTP/1.1 200 OK\r\n"), "{out}");
    assert!(out.contains("\r\nconnection: close\r\n"), "{out}");
    assert!(out.ends_with("ignored\n"), "{out}");
}

#[test]
fn a_trickled_streamed_body_times_out() {
    let timeouts = Timeouts {
        body_min_rate: 1000,
        body_window: Duration::from_millis(500),
        sweep: Duration::from_millis(100),
        ..Timeouts::default()
    };
    let config = ServerConfig {
        timeouts,
        ..ServerConfig::default()
    };
    let addr = start(config, app());
    let mut s = TcpStream::connect(addr).expect("connect");
    s.set_read_timeout(Some(Duration::from_secs(10)))
        .expect("timeout");
    s.write_all(b"POST /sum HTTP/1.1\r\nHost: a\r\nContent-Length: 100000\r\n\r\nab")
        .expect("write");
    let mut out = Vec::new();
    let _ = s.read_to_end(&mut out);
    let out = String::from_utf8_lossy(&out);
    assert!(out.starts_with("HTTP/1.1 400 "), "{out}");
    assert!(out.ends_with("request body too slow\n"), "{out}");
}
