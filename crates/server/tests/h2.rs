//! HTTP/2 against curl (nghttp2): cleartext with prior knowledge and TLS with ALPN.

mod common;

use std::pin::Pin;
use std::process::Command;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, LazyLock};
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use common::{acceptor, curl, curl_text, python, start, start_tls, Echo};
use ringwire_server::{Body, Request, Response, Router, ServerConfig};

/// curl over HTTP/2 without the upgrade dance, and what it printed.
fn h2c(args: &[&str], stdin: &[u8]) -> Vec<u8> {
    let mut all = vec!["--http2-prior-knowledge"];
    all.extend_from_slice(args);
    curl(&all, stdin)
}

#[test]
fn prior_knowledge_speaks_http2() {
    // One URL: curl 7.88 fails to reuse a prior-knowledge connection with any server
    // (nginx too: "Error in the HTTP2 framing layer"); reuse is shown over TLS below.
    let addr = start(ServerConfig::default(), Echo);
    let url = format!("http://{addr}/a?x=1");
    let out = String::from_utf8(h2c(&["-w", "%{http_version}\n", &url], b"")).expect("utf-8");
    assert_eq!(out, "GET /a?x=1 body=0\n2\n");
}

async fn protocol(request: &Request<'_>) -> Response {
    Response::new(200).body(format!("{} {}", request.protocol(), request.version()))
}

#[test]
fn a_handler_is_told_the_protocol_and_sees_an_http11_head() {
    let addr = start(ServerConfig::default(), Router::new().get("/", protocol));
    let url = format!("http://{addr}/");
    assert_eq!(h2c(&[&url], b""), b"HTTP/2 HTTP/1.1");
    assert_eq!(curl(&["--http1.1", &url], b""), b"HTTP/1.1 HTTP/1.1");
    assert_eq!(curl(&["--http1.0", &url], b""), b"HTTP/1.0 HTTP/1.0");
}

#[test]
fn a_body_larger_than_every_window_is_received_whole() {
    // 3 MiB against a 256 KiB stream window and a 1 MiB connection window: the upload
    // goes on only as the server gives the window back.
    let addr = start(ServerConfig::default(), Echo);
    let url = format!("http://{addr}/up");
    let body: Vec<u8> = (0..3 << 20).map(|i: u32| (i % 251) as u8).collect();
    let out = h2c(&["--data-binary", "@-", &url], &body);
    let head = format!("POST /up body={}\n", body.len());
    assert_eq!(&out[..head.len()], head.as_bytes());
    assert!(out[head.len()..] == body[..], "the body came back changed");
}

#[test]
fn a_body_over_the_buffer_limit_is_answered_413() {
    let config = ServerConfig {
        max_buffered_body: 1000,
        ..ServerConfig::default()
    };
    let addr = start(config, Echo);
    let url = format!("http://{addr}/up");
    let out = h2c(
        &[
            "-w",
            "%{http_code}",
            "-o",
            "/dev/null",
            "--data-binary",
            "@-",
            &url,
        ],
        &vec![7; 3 << 20],
    );
    // Answered as soon as the body passed the bound, the rest refused (RST_STREAM
    // NO_ERROR after the answer: curl stops sending and reports the 413).
    assert_eq!(out, b"413");
    let out = h2c(&["--data-binary", "@-", &url], b"small");
    assert_eq!(out, b"POST /up body=5\nsmall");
}

/// Five MiB of `z`, more than a client's first windows.
static BIG: LazyLock<Bytes> = LazyLock::new(|| Bytes::from(vec![b'z'; 5 << 20]));

async fn big(_: &Request<'_>) -> Response {
    Response::new(200)
        .header("X-Mixed-Case", "yes")
        .body(BIG.clone())
}

async fn no_content(_: &Request<'_>) -> Response {
    Response::new(204)
}

/// Two hundred lines, produced by a task as the client takes them.
async fn lines(_: &Request<'_>) -> Response {
    let (tx, body) = Body::channel(4);
    tokio::spawn(async move {
        for i in 0..200 {
            if tx.send(Bytes::from(format!("chunk {i}\n"))).await.is_err() {
                return;
            }
            if i % 50 == 0 {
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
        }
    });
    Response::new(200).body(body)
}

#[test]
fn responses_carry_their_fields_and_large_bodies() {
    let router = Router::new().get("/big", big).get("/none", no_content);
    let addr = start(ServerConfig::default(), router);
    let out = h2c(&["-i", &format!("http://{addr}/none")], b"");
    let text = String::from_utf8(out).expect("utf-8");
    assert!(text.starts_with("HTTP/2 204 \r\n"), "{text}");
    assert!(text.contains("date: "), "{text}");
    let out = h2c(&[&format!("http://{addr}/big")], b"");
    assert!(out[..] == BIG[..], "the body came back changed");
    let head = curl_text(&[
        "--http2-prior-knowledge",
        "-I",
        &format!("http://{addr}/big"),
    ]);
    assert!(head.contains("x-mixed-case: yes\r\n"), "{head}");
    assert!(head.contains("content-length: 5242880\r\n"), "{head}");
}

#[test]
fn a_streamed_body_arrives_in_order() {
    let addr = start(ServerConfig::default(), Router::new().get("/stream", lines));
    let out = String::from_utf8(h2c(&[&format!("http://{addr}/stream")], b"")).expect("utf-8");
    let expected: String = (0..200).map(|i| format!("chunk {i}\n")).collect();
    assert_eq!(out, expected);
}

/// A body whose stream wakes the connection once with nothing to give (as a stream may),
/// then has its one piece 100 ms later.
async fn woken_for_nothing(_: &Request<'_>) -> Response {
    struct Later {
        polls: usize,
        ready: Arc<AtomicBool>,
    }
    impl futures_core::Stream for Later {
        type Item = std::io::Result<Bytes>;
        fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
            self.polls += 1;
            if self.ready.swap(false, Ordering::AcqRel) {
                return Poll::Ready(Some(Ok(Bytes::from_static(b"at last\n"))));
            }
            if self.polls > 2 {
                // The piece was given: the end.
                return Poll::Ready(None);
            }
            if self.polls == 1 {
                let (waker, ready) = (cx.waker().clone(), Arc::clone(&self.ready));
                tokio::spawn(async move {
                    waker.wake_by_ref();
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    ready.store(true, Ordering::Release);
                    waker.wake();
                });
            }
            Poll::Pending
        }
    }
    let later = Later {
        polls: 0,
        ready: Arc::default(),
    };
    Response::new(200).body(Body::stream(later))
}

#[test]
fn a_body_woken_for_nothing_is_polled_again_when_woken_for_something() {
    let addr = start(
        ServerConfig::default(),
        Router::new().get("/later", woken_for_nothing),
    );
    let out = h2c(&["--max-time", "5", &format!("http://{addr}/later")], b"");
    assert_eq!(out, b"at last\n");
}

#[test]
fn tls_negotiates_h2_when_offered_and_http11_when_not() {
    let format = "%{http_version} %{num_connects}\n";
    let h2 = start_tls(
        ServerConfig::default(),
        Echo,
        acceptor(&[b"h2", b"http/1.1"]),
    );
    let (a, b) = (
        format!("https://localhost:{}/a?x=1", h2.port()),
        format!("https://localhost:{}/b", h2.port()),
    );
    let out = curl_text(&["-k", "--http2", "-w", format, &a, &b]);
    assert_eq!(out, "GET /a?x=1 body=0\n2 1\nGET /b body=0\n2 0\n");
    let h1 = start_tls(ServerConfig::default(), Echo, acceptor(&[b"http/1.1"]));
    let out = curl_text(&[
        "-k",
        "--http2",
        "-w",
        format,
        &format!("https://localhost:{}/x", h1.port()),
    ]);
    assert_eq!(out, "GET /x body=0\n1.1 1\n");
}

#[test]
fn without_http2_the_preface_is_a_bad_http11_request() {
    // (`PRI *` is no HTTP/1.1 request line: 400.)
    let config = ServerConfig {
        http2: None,
        ..ServerConfig::default()
    };
    let addr = start(config, Echo);
    let out = common::raw(addr, b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n");
    assert!(out.starts_with("HTTP/1.1 400 "), "{out}");
}

#[test]
fn files_and_ranges_are_read_in_pieces() {
    let dir = tempfile::tempdir().expect("tempdir");
    // Several of the pieces a file is read in, and not a whole number of them.
    let data: Vec<u8> = (0..300_000u32).map(|i| (i % 253) as u8).collect();
    std::fs::write(dir.path().join("data.bin"), &data).expect("write");
    let files = ringwire_server::files::StaticFiles::new(dir.path().to_path_buf()).expect("root");
    let addr = start(ServerConfig::default(), files);
    let url = format!("http://{addr}/data.bin");
    assert!(h2c(&[&url], b"") == data, "the file came back changed");
    let range = h2c(&["-r", "1000-70999", &url], b"");
    assert!(
        range[..] == data[1000..71000],
        "the range came back changed"
    );
}

/// Set by `/fast`, awaited by `/slow`: `/slow` can only finish if `/fast` runs meanwhile.
static FAST_DONE: tokio::sync::Notify = tokio::sync::Notify::const_new();

async fn slow(_: &Request<'_>) -> Response {
    FAST_DONE.notified().await;
    Response::text("slow\n")
}

async fn fast(_: &Request<'_>) -> Response {
    FAST_DONE.notify_one();
    Response::text("fast\n")
}

#[test]
fn streams_of_one_connection_are_answered_concurrently() {
    let router = Router::new().get("/slow", slow).get("/fast", fast);
    let addr = start_tls(
        ServerConfig::default(),
        router,
        acceptor(&[b"h2", b"http/1.1"]),
    );
    let url = |path| format!("https://localhost:{}{path}", addr.port());
    // Both on one connection (-Z multiplexes); /slow first, and it waits for /fast.
    let out = curl_text(&[
        "-k",
        "--http2",
        "-Z",
        "-w",
        "%{num_connects}\n",
        &url("/slow"),
        &url("/fast"),
    ]);
    let mut lines: Vec<&str> = out.lines().collect();
    lines.sort_unstable();
    assert_eq!(lines, ["0", "1", "fast", "slow"], "{out}");
}

/// Handlers of `/hang` running now, and the most that ever ran at once.
static HANGING: AtomicUsize = AtomicUsize::new(0);
static MOST_HANGING: AtomicUsize = AtomicUsize::new(0);

/// Counts itself out of `HANGING` when the handler holding it is dropped.
struct Hanging;

impl Drop for Hanging {
    fn drop(&mut self) {
        HANGING.fetch_sub(1, Ordering::SeqCst);
    }
}

async fn hang(_: &Request<'_>) -> Response {
    let now = HANGING.fetch_add(1, Ordering::SeqCst) + 1;
    MOST_HANGING.fetch_max(now, Ordering::SeqCst);
    let _guard = Hanging;
    std::future::pending().await
}

async fn hanging(_: &Request<'_>) -> Response {
    Response::text(format!("{}\n", HANGING.load(Ordering::SeqCst)))
}

/// Python's h2: `get(path)` asks `path` on a new stream of `conn` over `sock` (made by the
/// script around it, with `head(path)` its request head) and returns the answer's body.
const H2_GET: &str = r#"
def get(path):
    stream = conn.get_next_available_stream_id()
    conn.send_headers(stream, head(path), end_stream=True)
    sock.sendall(conn.data_to_send())
    body = b""
    while True:
        data = sock.recv(65536)
        if not data:
            sys.exit("the server closed the connection")
        for event in conn.receive_data(data):
            if isinstance(event, h2.events.DataReceived) and event.stream_id == stream:
                body += event.data
            elif isinstance(event, h2.events.StreamEnded) and event.stream_id == stream:
                return body.decode()
            elif isinstance(event, h2.events.ConnectionTerminated):
                sys.exit(f"GOAWAY {event.error_code}")
        sock.sendall(conn.data_to_send())
"#;

/// Python's h2 as the client: opens `/hang` on 50 streams, waits, resets them all, then
/// asks `/hanging` twice on the same connection (the second time once the first answer is
/// in: by then the connection has seen every reset) and prints the last answer.
const RESET_CLIENT: [&str; 3] = [
    r#"
import socket, sys, time
import h2.config, h2.connection, h2.events

sock = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
sock.settimeout(10)
conn = h2.connection.H2Connection(h2.config.H2Configuration(client_side=True))
conn.initiate_connection()
head = lambda path: [(":method", "GET"), (":path", path), (":scheme", "http"), (":authority", "x")]
hanging = []
for _ in range(50):
    stream = conn.get_next_available_stream_id()
    conn.send_headers(stream, head("/hang"), end_stream=True)
    hanging.append(stream)
sock.sendall(conn.data_to_send())
time.sleep(0.5)
for stream in hanging:
    conn.reset_stream(stream)

"#,
    H2_GET,
    r#"
get("/hanging")
print(get("/hanging"), end="")
"#,
];

#[test]
fn a_stream_reset_by_the_client_drops_its_handler() {
    ringwire_testkit::ensure_python_module("h2", "h2");
    let router = Router::new().get("/hang", hang).get("/hanging", hanging);
    let addr = start(ServerConfig::default(), router);
    let out = Command::new("python3")
        .args(["-c", &RESET_CLIENT.concat(), &addr.port().to_string()])
        .output()
        .expect("python3 runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let most = MOST_HANGING.load(Ordering::SeqCst);
    assert_eq!(most, 50, "the handlers ran at once");
    // Asked on the same connection, still open: the reset streams' handlers are gone.
    assert_eq!(out.stdout, b"0\n", "handlers of reset streams still run");
}

/// Python's h2: one request, then reads until the server ends the connection; prints the
/// GOAWAY's error code and whether the close followed.
const IDLE_CLIENT: &str = r#"
import socket, sys
import h2.config, h2.connection, h2.events

sock = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
sock.settimeout(10)
conn = h2.connection.H2Connection(h2.config.H2Configuration(client_side=True))
conn.initiate_connection()
conn.send_headers(1, [(":method", "GET"), (":path", "/x"), (":scheme", "http"), (":authority", "x")], end_stream=True)
sock.sendall(conn.data_to_send())
while True:
    data = sock.recv(65536)
    if not data:
        print("closed")
        break
    for event in conn.receive_data(data):
        if isinstance(event, h2.events.ConnectionTerminated):
            print(f"GOAWAY {int(event.error_code)} last {event.last_stream_id}")
    sock.sendall(conn.data_to_send())
"#;

/// A server whose connections may idle 300 ms (checked every 100 ms).
fn short_idle() -> ServerConfig {
    let ms = Duration::from_millis;
    ServerConfig {
        timeouts: ringwire_server::Timeouts {
            idle: ms(300),
            sweep: ms(100),
            ..ringwire_server::Timeouts::default()
        },
        ..ServerConfig::default()
    }
}

#[test]
fn an_idle_connection_is_told_goodbye_and_closed() {
    ringwire_testkit::ensure_python_module("h2", "h2");
    let config = short_idle();
    let addr = start(config, Echo);
    let started = std::time::Instant::now();
    let out = python(IDLE_CLIENT, &[&addr.port().to_string()]);
    assert_eq!(out, "GOAWAY 0 last 1\nclosed\n");
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
}

/// Python's h2: grants no window (SETTINGS_INITIAL_WINDOW_SIZE 0), asks `/big`, and prints
/// the answer's status, how much body came, and how the connection ended.
const NO_WINDOW_CLIENT: &str = r#"
import socket, sys
import h2.config, h2.connection, h2.events, h2.settings

sock = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
sock.settimeout(10)
conn = h2.connection.H2Connection(h2.config.H2Configuration(client_side=True))
conn.initiate_connection()
conn.update_settings({h2.settings.SettingCodes.INITIAL_WINDOW_SIZE: 0})
conn.send_headers(1, [(":method", "GET"), (":path", "/big"), (":scheme", "http"), (":authority", "x")], end_stream=True)
sock.sendall(conn.data_to_send())
body = 0
while True:
    data = sock.recv(65536)
    if not data:
        print(f"body {body}\nclosed")
        break
    for event in conn.receive_data(data):
        if isinstance(event, h2.events.ResponseReceived):
            print(f"status {dict(event.headers)[b':status'].decode()}")
        elif isinstance(event, h2.events.DataReceived):
            body += len(event.data)
        elif isinstance(event, h2.events.ConnectionTerminated):
            print(f"GOAWAY {int(event.error_code)}")
    sock.sendall(conn.data_to_send())
"#;

#[test]
fn a_client_that_grants_no_window_is_let_go_after_the_idle_limit() {
    ringwire_testkit::ensure_python_module("h2", "h2");
    let config = short_idle();
    let addr = start(config, Router::new().get("/big", big));
    let started = std::time::Instant::now();
    let out = python(NO_WINDOW_CLIENT, &[&addr.port().to_string()]);
    assert_eq!(out, "status 200\nGOAWAY 0\nbody 0\nclosed\n");
    // The body-rate limit (5 s by default) used to decide this.
    let took = started.elapsed();
    assert!(took < Duration::from_secs(2), "{took:?}");
}

/// Python's h2 as the client, over TLS (ALPN `h2`) if `tls` is its third argument: asks
/// `/first`, waits past the server's `warm`, asks `/second` on the same connection, and
/// prints both answers.
const QUIET_CLIENT: [&str; 3] = [
    r#"
import socket, ssl, sys, time
import h2.config, h2.connection, h2.events

sock = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
if sys.argv[2] == "tls":
    context = ssl.create_default_context()
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    context.set_alpn_protocols(["h2"])
    sock = context.wrap_socket(sock, server_hostname="localhost")
sock.settimeout(10)
conn = h2.connection.H2Connection(h2.config.H2Configuration(client_side=True))
conn.initiate_connection()

head = lambda path: [(":method", "GET"), (":path", path), (":scheme", "http"), (":authority", "x")]
"#,
    H2_GET,
    r#"
print(get("/first"), end="")
time.sleep(0.4)
print(get("/second"), end="")
"#,
];

/// A connection quiet past `warm` gives its receive ring back to the pool (its send ring
/// went back at once) and takes one again when the client asks anew: plain and over TLS.
#[test]
fn a_connection_quiet_past_warm_answers_again() {
    ringwire_testkit::ensure_python_module("h2", "h2");
    let ms = Duration::from_millis;
    let config = ServerConfig {
        timeouts: ringwire_server::Timeouts {
            warm: ms(50),
            sweep: ms(20),
            ..ringwire_server::Timeouts::default()
        },
        ..ServerConfig::default()
    };
    let plain = start(config, Echo);
    let tls = start_tls(config, Echo, acceptor(&[b"h2", b"http/1.1"]));
    for (addr, mode) in [(plain, "plain"), (tls, "tls")] {
        let out = Command::new("python3")
            .args(["-c", &QUIET_CLIENT.concat(), &addr.port().to_string(), mode])
            .output()
            .expect("python3 runs");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{mode}: {stderr}");
        assert_eq!(
            String::from_utf8_lossy(&out.stdout),
            "GET /first body=0\nGET /second body=0\n",
            "{mode}"
        );
    }
}

async fn cookies(request: &Request<'_>) -> Response {
    let value = |name| {
        request
            .cookie(name)
            .map(|v| String::from_utf8_lossy(v).into_owned())
    };
    Response::new(200).body(format!(
        "{:?} {:?} {:?}",
        value("sid"),
        value("theme"),
        value("no")
    ))
}

/// `Request::cookie` finds a cookie in the fields curl sends, over HTTP/1.1 and HTTP/2
/// (where a client may send each cookie as a field of its own: the connection joins them).
#[test]
fn a_handler_reads_the_cookies_curl_sends() {
    let addr = start(ServerConfig::default(), Router::new().get("/", cookies));
    let url = format!("http://{addr}/");
    let jar = ["-b", "theme=\"dark\";sid=abc; sid=later"];
    let expected = r#"Some("abc") Some("dark") None"#;
    assert_eq!(
        curl_text(&[&jar[..], &["--http1.1", &url]].concat()),
        expected
    );
    assert_eq!(
        String::from_utf8(h2c(&[&jar[..], &[&url]].concat(), b"")).unwrap(),
        expected
    );
}
