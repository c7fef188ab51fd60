//! `ringwire bench` end to end: its counts checked against servers that
//! count for themselves (Python's `http.server`, Python's `h2`, a
//! tungstenite echo server), statuses, closes, timeouts, refusals, HTTPS,
//! HTTP/2 and WSS.

use std::io::Read as _;
use std::net::TcpListener;
use std::process::{Command, Output, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

mod common;

use common::{python, serve, BIN};
use ringwire_testkit::ensure_python_module;

/// Counts every request but `/count`, which answers the count. `/hit`
/// answers 200 "ok" when the request is a POST of `payload` (400
/// otherwise); `/slow` answers after 50 ms; `/close` answers and closes the connection.
const COUNTING_SERVER: &str = r#"
import http.server, threading, time
count = 0
lock = threading.Lock()
class H(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def log_message(self, *args):
        pass
    def answer(self, status, body, close=False):
        self.send_response(status)
        self.send_header("Content-Length", str(len(body)))
        if close:
            self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(body)
    def handle_one(self):
        global count
        if self.path == "/count":
            with lock:
                return self.answer(200, str(count).encode())
        with lock:
            count += 1
        length = int(self.headers.get("Content-Length", "0"))
        body = self.rfile.read(length)
        if self.path == "/hit":
            good = self.command == "POST" and body == b"payload"
            self.answer(200 if good else 400, b"ok" if good else b"bad")
        elif self.path == "/slow":
            time.sleep(0.05)
            self.answer(200, b"late")
        elif self.path == "/close":
            self.answer(200, b"bye", close=True)
        else:
            self.answer(404, b"")
    do_GET = do_POST = handle_one
srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
srv.handle_error = lambda request, address: None  # resets when a run ends
print(srv.server_address[1], flush=True)
srv.serve_forever()
"#;

/// How long a run of a second or less may take before its test fails: a
/// bench that hangs fails the test instead of hanging it.
const WATCHDOG: Duration = Duration::from_secs(5);

fn bench(args: &[&str]) -> Output {
    bench_within(Duration::from_secs(30), args)
}

fn bench_within(limit: Duration, args: &[&str]) -> Output {
    within(limit, Command::new(BIN).arg("bench").args(args))
}

/// Runs `command` to its end, as `output()` does, but kills it (by its pid)
/// and fails the test once `limit` has passed.
fn within(limit: Duration, command: &mut Command) -> Output {
    let mut child = command
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run ringwire bench");
    let stdout = drain(child.stdout.take().expect("stdout"));
    let stderr = drain(child.stderr.take().expect("stderr"));
    let deadline = Instant::now() + limit;
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait for ringwire bench") {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{command:?} still running after {limit:?}: killed");
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    Output {
        status,
        stdout: stdout.join().expect("stdout"),
        stderr: stderr.join().expect("stderr"),
    }
}

/// Reads `pipe` to its end on a thread of its own, as it comes: a full pipe
/// would stall the child.
fn drain<R: std::io::Read + Send + 'static>(mut pipe: R) -> std::thread::JoinHandle<Vec<u8>> {
    std::thread::spawn(move || {
        let mut bytes = Vec::new();
        let _ = pipe.read_to_end(&mut bytes);
        bytes
    })
}

/// The report's numbers: `(label, first number after it)`.
fn number(out: &Output, label: &str) -> u64 {
    let text = String::from_utf8_lossy(&out.stdout);
    text.lines()
        .find_map(|l| l.trim().strip_prefix(label))
        .and_then(|rest| {
            rest.split_whitespace()
                .next()?
                .trim_end_matches(',')
                .parse()
                .ok()
        })
        .unwrap_or_else(|| panic!("no {label:?} in:\n{text}"))
}

fn report(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// The `errors` line of a report that has none.
const NO_ERRORS: &str = "errors     connect 0, read 0, protocol 0, timeout 0";

#[test]
fn counts_what_the_server_counted() {
    let server = python(COUNTING_SERVER);
    let url = format!("http://{}/hit", server.addr);
    let out = bench(&["-c", "4", "-p", "4", "-D", "1", "-d", "payload", &url]);
    assert!(out.status.success(), "{}", report(&out));
    let answered = number(&out, "requests");
    assert!(answered > 0, "{}", report(&out));
    assert_eq!(number(&out, "statuses   2xx"), answered, "{}", report(&out));
    assert!(report(&out).contains(NO_ERRORS), "{}", report(&out));

    assert_counted(answered, &["get", &format!("http://{}/count", server.addr)]);
}

/// Checks that the count `ringwire` with `get_count` (its `/count`) prints
/// is the bench's `answered`: every answer was counted once, and the
/// batches cut off at the end of the run (4 connections, 4 in flight) may
/// have been counted unanswered.
fn assert_counted(answered: u64, get_count: &[&str]) {
    let count = Command::new(BIN)
        .args(get_count)
        .output()
        .expect("run ringwire get");
    let counted: u64 = String::from_utf8_lossy(&count.stdout)
        .parse()
        .expect("a count");
    assert!(
        (answered..=answered + 16).contains(&counted),
        "bench says {answered}, the server counted {counted}"
    );
}

#[test]
fn reports_as_json_for_scripts() {
    let server = python(COUNTING_SERVER);
    let url = format!("http://{}/nowhere", server.addr);
    let out = bench(&["--json", "-c", "2", "-p", "2", "-D", "0.5", &url]);
    assert!(out.status.success(), "{}", report(&out));
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).expect("one JSON object");
    let answered = json["answered"].as_u64().expect("answered");
    assert!(answered > 0, "{json}");
    assert_eq!(json["statuses"]["4xx"].as_u64(), Some(answered), "{json}");
    assert_eq!(json["errors"]["read"].as_u64(), Some(0), "{json}");
    assert_eq!(json["pipeline"].as_u64(), Some(2), "{json}");
    assert_eq!(json["url"].as_str(), Some(url.as_str()));
    let p50 = json["latency_us"]["p50"].as_f64().expect("p50");
    assert!(p50 > 0.0 && p50 <= json["latency_us"]["max"].as_f64().unwrap());
    // Microseconds to the nanosecond, without float noise (2392.0640000000003).
    for (name, value) in json["latency_us"].as_object().expect("latencies") {
        let text = value.to_string();
        let decimals = text.split_once('.').map_or(0, |(_, f)| f.len());
        assert!(decimals <= 3, "latency {name} {text} in {json}");
    }
}

#[test]
fn reconnects_when_the_server_closes_after_each_answer() {
    let server = python(COUNTING_SERVER);
    let url = format!("http://{}/close", server.addr);
    let out = bench(&["-c", "2", "-p", "3", "-D", "1", &url]);
    assert!(out.status.success(), "{}", report(&out));
    let answered = number(&out, "requests");
    // One answer per connection: the other two of each batch never come
    // (and the run may end before a connection's first answer).
    let connects = number(&out, "connects");
    assert!(
        (answered..=answered + 2).contains(&connects),
        "{}",
        report(&out)
    );
    assert!(report(&out).contains(&format!("after an answer: {answered})")));
}

#[test]
fn statuses_are_counted_by_class() {
    let server = serve(&["--addr", "127.0.0.1:0"]);
    let out = bench(&[
        "-c",
        "2",
        "-D",
        "0.5",
        &format!("http://{}/nowhere", server.addr),
    ]);
    assert!(out.status.success(), "{}", report(&out));
    assert_eq!(
        number(&out, "statuses   4xx"),
        number(&out, "requests"),
        "{}",
        report(&out)
    );
}

#[test]
fn loads_https_with_two_threads() {
    let server = serve(&["--addr", "127.0.0.1:0", "--self-signed"]);
    let url = format!("https://{}/hello", server.addr);
    let out = bench(&["-k", "-c", "4", "-t", "2", "-p", "2", "-D", "1", &url]);
    assert!(out.status.success(), "{}", report(&out));
    let answered = number(&out, "requests");
    assert!(answered > 0);
    assert_eq!(number(&out, "statuses   2xx"), answered, "{}", report(&out));
    assert!(report(&out).contains(NO_ERRORS), "{}", report(&out));
    assert!(report(&out).contains("2 threads"), "{}", report(&out));
}

#[test]
fn a_silent_server_times_out_and_the_run_fails() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    // Accepts, reads, never answers.
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { return };
            std::thread::spawn(move || {
                let mut sink = [0; 1024];
                while matches!(stream.read(&mut sink), Ok(n) if n > 0) {}
            });
        }
    });
    let out = bench(&[
        "-c",
        "2",
        "-D",
        "1",
        "--timeout",
        "0.2",
        &format!("http://{addr}/"),
    ]);
    assert!(!out.status.success(), "{}", report(&out));
    assert!(number(&out, "errors     connect 0, read 0, protocol 0, timeout") >= 2);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.starts_with("ringwire: nothing was answered: ")
            && stderr.ends_with(" requests timed out (--timeout 0.2s)\n"),
        "{stderr}"
    );
}

#[test]
fn a_refused_port_fails_with_one_line() {
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let out = bench(&["-c", "1", "-D", "0.3", &format!("http://127.0.0.1:{port}/")]);
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        stderr.trim_end(),
        format!("ringwire: nothing was answered: cannot connect to 127.0.0.1:{port}: Connection refused"),
    );
    assert!(number(&out, "errors     connect") > 0);
}

/// A port nothing listens on (the kernel refuses connections to it).
fn refused_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

#[test]
fn a_connection_refused_again_and_again_is_one_connect_error() {
    let port = refused_port();
    let url = format!("http://127.0.0.1:{port}/");
    let out = bench_within(WATCHDOG, &["-c", "3", "-D", "0.5", &url]);
    assert!(!out.status.success(), "{}", report(&out));
    // Tried after 10, 20, 40, 80, 160 ms...: a handful of tries each (every 10 ms would be
    // some 50), 3 connections that never opened.
    assert_eq!(number(&out, "errors     connect"), 3, "{}", report(&out));
    let tries = number(&out, "failed     3 connections in");
    assert!((3..=3 * 8).contains(&tries), "{}", report(&out));
    let cause = format!("{tries} tries: cannot connect to 127.0.0.1:{port}: Connection refused");
    assert_eq!(report(&out).matches(&cause).count(), 1, "{}", report(&out));

    let out = bench_within(WATCHDOG, &["--json", "-c", "3", "-D", "0.3", &url]);
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).expect("one JSON object");
    assert_eq!(json["errors"]["connect"].as_u64(), Some(3), "{json}");
    let failures = json["failures"].as_array().expect("failures");
    assert_eq!(failures.len(), 1, "{json}");
    assert_eq!(failures[0]["connections"].as_u64(), Some(3), "{json}");
    assert!(failures[0]["tries"].as_u64() >= Some(3), "{json}");
}

/// Listens with a backlog of 0 and never accepts: the kernel completes one
/// connection's handshake and leaves the others' unanswered.
const UNACCEPTING_SERVER: &str = r#"
import socket, time
s = socket.socket()
s.bind(("127.0.0.1", 0))
s.listen(0)
print(s.getsockname()[1], flush=True)
time.sleep(60)
"#;

#[test]
fn connections_still_connecting_at_the_end_are_counted() {
    let server = python(UNACCEPTING_SERVER);
    let url = format!("http://{}/", server.addr);
    let out = bench_within(WATCHDOG, &["-c", "8", "-D", "0.5", "--timeout", "5", &url]);
    assert!(!out.status.success(), "{}", report(&out));
    let ends = "at the end 8 connections:";
    let open = number(&out, ends);
    let connecting = number(&out, &format!("{ends} {open} open,"));
    assert!(open <= 2 && open + connecting == 8, "{}", report(&out));
    let line = format!("{ends} {open} open, {connecting} still connecting, 0 retrying");
    assert!(report(&out).contains(&line), "{}", report(&out));
    assert_eq!(number(&out, "connects"), open, "{}", report(&out));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr).trim_end(),
        format!(
            "ringwire: nothing was answered: {connecting} of 8 connections still connecting at the end"
        )
    );
}

/// `ringwire bench args` in a shell that first runs `ulimit`, with `limit`.
fn bench_with_ulimit(limit: &str, args: &[&str]) -> Output {
    let script = format!("ulimit {limit} && exec \"$0\" bench \"$@\"");
    within(
        WATCHDOG,
        Command::new("sh").args(["-c", &script, BIN]).args(args),
    )
}

#[test]
fn connections_past_the_open_files_limit_are_reported_once() {
    let server = serve(&["--addr", "127.0.0.1:0"]);
    let url = format!("http://{}/hello", server.addr);
    // Soft and hard: no raising it.
    let out = bench_with_ulimit("-n 64", &["-c", "100", "-D", "0.5", &url]);
    assert!(out.status.success(), "{}", report(&out));
    let never = number(&out, "unopened  ");
    assert!((1..100).contains(&never), "{}", report(&out));
    let line = format!(
        "unopened   {never} of 100 connections never opened: out of file descriptors, \
         64 open files at most (ulimit -n, the hard limit)"
    );
    assert_eq!(report(&out).matches(&line).count(), 1, "{}", report(&out));
    assert_eq!(number(&out, "connects"), 100 - never, "{}", report(&out));
    assert_eq!(
        number(&out, "errors     connect"),
        never,
        "{}",
        report(&out)
    );
    let failed = format!("failed     {never} connections in ");
    assert!(report(&out).contains(&failed), "{}", report(&out));

    // A soft limit below the hard one is raised first.
    let out = bench_with_ulimit("-Sn 64", &["-c", "100", "-D", "0.5", &url]);
    assert!(out.status.success(), "{}", report(&out));
    assert!(
        report(&out).contains("at the end 100 connections: 100 open,"),
        "{}",
        report(&out)
    );
    assert!(!report(&out).contains("unopened"), "{}", report(&out));
}

/// A tungstenite echo server, a thread per connection, counting the
/// binary messages it echoed.
fn tungstenite_echo() -> (String, Arc<AtomicU64>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    let count = Arc::new(AtomicU64::new(0));
    let counted = Arc::clone(&count);
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(stream) = stream else { return };
            let count = Arc::clone(&counted);
            std::thread::spawn(move || {
                let Ok(mut ws) = tungstenite::accept(stream) else {
                    return;
                };
                while let Ok(message) = ws.read() {
                    if message.is_binary() {
                        count.fetch_add(1, Ordering::SeqCst);
                        if ws.send(message).is_err() {
                            return;
                        }
                    }
                }
            });
        }
    });
    (addr, count)
}

#[test]
fn counts_the_echoes_a_tungstenite_server_counted() {
    let (addr, count) = tungstenite_echo();
    let out = bench(&[
        "-c",
        "2",
        "-p",
        "4",
        "--size",
        "100",
        "-D",
        "1",
        &format!("ws://{addr}/"),
    ]);
    assert!(out.status.success(), "{}", report(&out));
    let echoed = number(&out, "messages");
    assert!(echoed > 0, "{}", report(&out));
    assert!(report(&out).contains(NO_ERRORS), "{}", report(&out));
    assert!(!report(&out).contains("statuses"), "{}", report(&out));
    // Echoed messages were counted once; the batches cut off at the end of
    // the run (2 connections, 4 in flight) may have been counted unechoed.
    let counted = count.load(Ordering::SeqCst);
    assert!(
        (echoed..=echoed + 8).contains(&counted),
        "bench says {echoed}, the server counted {counted}"
    );
}

#[test]
fn loads_ringwire_serves_websocket_echo_over_tls_with_compression() {
    let server = serve(&["--addr", "127.0.0.1:0", "--self-signed"]);
    let url = format!("wss://{}/ws/echo", server.addr);
    let out = bench(&[
        "-k",
        "--deflate",
        "-c",
        "4",
        "-t",
        "2",
        "-p",
        "2",
        "--size",
        "1000",
        "-D",
        "1",
        &url,
    ]);
    assert!(out.status.success(), "{}", report(&out));
    assert!(number(&out, "messages") > 0, "{}", report(&out));
    assert!(report(&out).contains(NO_ERRORS), "{}", report(&out));
}

#[test]
fn a_refused_upgrade_is_a_protocol_error() {
    let server = serve(&["--addr", "127.0.0.1:0"]);
    let url = format!("ws://{}/not-a-websocket", server.addr);
    let out = bench(&["-c", "1", "-D", "0.3", &url]);
    assert!(!out.status.success(), "{}", report(&out));
    assert!(number(&out, "errors     connect 0, read 0, protocol") > 0);
    assert!(
        report(&out).contains("first      handshake: "),
        "{}",
        report(&out)
    );
}

/// A server that answers every request 404 and closes, counting the
/// connections it accepted.
fn not_found_server() -> (String, Arc<AtomicU64>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    let count = Arc::new(AtomicU64::new(0));
    let counted = Arc::clone(&count);
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { return };
            counted.fetch_add(1, Ordering::SeqCst);
            std::thread::spawn(move || {
                let mut head = Vec::new();
                let mut buf = [0; 1024];
                while !head.windows(4).any(|w| w == b"\r\n\r\n") {
                    match stream.read(&mut buf) {
                        Ok(n) if n > 0 => head.extend_from_slice(&buf[..n]),
                        _ => return,
                    }
                }
                let answer =
                    "HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\nconnection: close\r\n\r\n";
                let _ = std::io::Write::write_all(&mut stream, answer.as_bytes());
            });
        }
    });
    (addr, count)
}

#[test]
fn a_refused_upgrade_is_tried_again_after_a_pause_and_reported_once() {
    let (addr, accepted) = not_found_server();
    let url = format!("ws://{addr}/");
    let out = bench_within(WATCHDOG, &["-c", "2", "-D", "1", &url]);
    assert!(!out.status.success(), "{}", report(&out));
    // Pauses of 10, 20, 40 ms... between tries: under ten a connection in the second, where
    // a retry at once made thousands.
    let accepted = accepted.load(Ordering::SeqCst);
    assert!((2..=2 * 10).contains(&accepted), "{accepted} tries");
    // Each connection counted once, the cause with its status once.
    assert_eq!(
        number(&out, "errors     connect 0, read 0, protocol"),
        2,
        "{}",
        report(&out)
    );
    let tries = number(&out, "failed     2 connections in");
    // Those the run ended while they waited for their answer were not
    // counted by the bench.
    assert!((tries..=tries + 2).contains(&accepted), "{}", report(&out));
    let cause = "tries: handshake: WebSocket handshake: upgrade refused with status 404";
    assert_eq!(report(&out).matches(cause).count(), 1, "{}", report(&out));
}

/// The report's median latency, in milliseconds.
fn p50_ms(out: &Output) -> f64 {
    let text = String::from_utf8_lossy(&out.stdout);
    let line = text
        .lines()
        .find_map(|l| l.trim().strip_prefix("latency    p50 "))
        .unwrap_or_else(|| panic!("no latency in:\n{text}"));
    let mut words = line.split([' ', ',']);
    let value: f64 = words.next().and_then(|v| v.parse().ok()).expect("a number");
    match words.next() {
        Some("ms") => value,
        Some("µs") => value / 1000.0,
        unit => panic!("unit {unit:?} in {line}"),
    }
}

#[test]
fn a_rate_is_kept_and_says_how_long_requests_waited_for_a_slow_server() {
    let server = serve(&["--addr", "127.0.0.1:0"]);
    let url = format!("http://{}/hello", server.addr);
    let out = bench(&["-c", "2", "--rate", "200", "-D", "1", &url]);
    assert!(out.status.success(), "{}", report(&out));
    let answered = number(&out, "requests");
    assert!((160..=205).contains(&answered), "{}", report(&out));
    assert!(report(&out).contains("200 per second"), "{}", report(&out));

    // A send due later than the timeout is not a timeout: one a second on
    // each of two connections, the second's schedule half a second behind.
    let out = bench(&[
        "-c",
        "2",
        "--rate",
        "2",
        "--timeout",
        "0.3",
        "-D",
        "1.2",
        &url,
    ]);
    assert!(out.status.success(), "{}", report(&out));
    assert!(report(&out).contains(NO_ERRORS), "{}", report(&out));
    assert!(
        (2..=3).contains(&number(&out, "requests")),
        "{}",
        report(&out)
    );

    // 100 requests a second are due, 20 can be answered: each waits for
    // the ones before it, and the latency says so (not just the 50 ms).
    let slow = python(COUNTING_SERVER);
    let url = format!("http://{}/slow", slow.addr);
    let out = bench(&["-c", "1", "--rate", "100", "-D", "1", &url]);
    assert!(out.status.success(), "{}", report(&out));
    assert!(number(&out, "requests") <= 21, "{}", report(&out));
    assert!(p50_ms(&out) > 150.0, "{}", report(&out));

    let out = bench(&["-c", "1", "--rate", "100", "-p", "2", "-D", "1", &url]);
    assert!(!out.status.success());
    assert_eq!(
        String::from_utf8_lossy(&out.stderr).trim_end(),
        "ringwire: --rate sends one request at a time: leave out --pipeline"
    );
}

/// The counting server over HTTP/2 with prior knowledge, on Python's `h2`:
/// `/count` answers the count of the other requests, `/hit` 200 "ok" for a
/// POST of `payload` (400 otherwise), `/goaway` answers and, at the third
/// request of its connection, says `GOAWAY` (no error, that stream the
/// last) and closes; `/hold` leaves the first of its connection unanswered.
/// The first stream of each connection (but `/count`'s) is refused
/// (`REFUSED_STREAM`, uncounted): the client asks again.
const COUNTING_H2_SERVER: &str = r#"
import socket, threading
import h2.config, h2.connection, h2.errors, h2.events
count = 0
lock = threading.Lock()
def serve(sock):
    conn = h2.connection.H2Connection(h2.config.H2Configuration(client_side=False, header_encoding="utf-8"))
    conn.initiate_connection()
    sock.sendall(conn.data_to_send())
    requests, answered, refused, held = {}, 0, False, False
    global count
    while True:
        try:
            data = sock.recv(65536)
        except OSError:
            break
        if not data:
            break
        for event in conn.receive_data(data):
            if isinstance(event, h2.events.RequestReceived):
                head = dict(event.headers)
                requests[event.stream_id] = [head[":method"], head[":path"], b""]
            elif isinstance(event, h2.events.DataReceived):
                requests[event.stream_id][2] += event.data
                conn.acknowledge_received_data(event.flow_controlled_length, event.stream_id)
            elif isinstance(event, h2.events.StreamEnded):
                method, path, body = requests.pop(event.stream_id)
                if not refused and path != "/count":
                    refused = True
                    conn.reset_stream(event.stream_id, error_code=h2.errors.ErrorCodes.REFUSED_STREAM)
                    continue
                if path == "/hold" and not held:
                    held = True
                    continue
                if path == "/count":
                    with lock:
                        status, answer = 200, str(count).encode()
                else:
                    with lock:
                        count += 1
                    good = path != "/hit" or (method == "POST" and body == b"payload")
                    status, answer = (200, b"ok") if good else (400, b"bad")
                conn.send_headers(event.stream_id, [(":status", str(status)), ("content-length", str(len(answer)))])
                conn.send_data(event.stream_id, answer, end_stream=True)
                answered += 1
                if path == "/goaway" and answered == 3:
                    conn.close_connection(last_stream_id=event.stream_id)
                    sock.sendall(conn.data_to_send())
                    sock.close()
                    return
        sock.sendall(conn.data_to_send())
    sock.close()
listener = socket.socket()
listener.bind(("127.0.0.1", 0))
listener.listen(64)
print(listener.getsockname()[1], flush=True)
while True:
    sock, _ = listener.accept()
    threading.Thread(target=serve, args=(sock,), daemon=True).start()
"#;

fn h2_server() -> common::Running {
    ensure_python_module("h2", "h2");
    python(COUNTING_H2_SERVER)
}

#[test]
fn counts_what_an_http2_server_counted() {
    let server = h2_server();
    let url = format!("http://{}/hit", server.addr);
    let out = bench(&[
        "--http2", "-c", "4", "-p", "4", "-D", "1", "-d", "payload", &url,
    ]);
    assert!(out.status.success(), "{}", report(&out));
    assert!(report(&out).contains("(HTTP/2)"), "{}", report(&out));
    let answered = number(&out, "requests");
    // Not stuck on the refused streams.
    assert!(answered > 100, "{}", report(&out));
    assert_eq!(number(&out, "statuses   2xx"), answered, "{}", report(&out));
    assert!(report(&out).contains(NO_ERRORS), "{}", report(&out));

    let count = format!("http://{}/count", server.addr);
    assert_counted(answered, &["get", "--http2-prior-knowledge", &count]);
}

#[test]
fn an_http2_goaway_is_a_close_and_the_connection_opens_again() {
    let server = h2_server();
    let url = format!("http://{}/goaway", server.addr);
    // Two streams at a time: the third request's GOAWAY leaves the fourth
    // unanswered.
    let out = bench(&["--http2", "-c", "1", "-p", "2", "-D", "1", &url]);
    assert!(out.status.success(), "{}", report(&out));
    let answered = number(&out, "requests");
    let connects = number(&out, "connects");
    assert!(connects > 2, "{}", report(&out));
    // Three answers a connection, the last connection's perhaps fewer.
    assert!(
        (3 * (connects - 1)..=3 * connects).contains(&answered),
        "{}",
        report(&out)
    );
    // Each connection closed after its GOAWAY, the last perhaps not yet.
    let closes = (connects - 1..=connects)
        .map(|n| format!("closed by the server after an answer: {n})"))
        .any(|said| report(&out).contains(&said));
    assert!(closes, "{}", report(&out));
    assert!(report(&out).contains(NO_ERRORS), "{}", report(&out));
}

/// As h2load's `-m`: a stream that ends is replaced at once, so one the
/// server never answers holds up none of the others.
#[test]
fn an_http2_stream_left_unanswered_holds_up_no_other() {
    let server = h2_server();
    let url = format!("http://{}/hold", server.addr);
    let out = bench(&["--http2", "-c", "1", "-p", "2", "-D", "1", &url]);
    assert!(out.status.success(), "{}", report(&out));
    assert!(number(&out, "requests") > 100, "{}", report(&out));
    assert!(report(&out).contains(NO_ERRORS), "{}", report(&out));
}

#[test]
fn loads_http2_over_tls_with_more_streams_than_the_server_allows() {
    // ringwire's server allows 128 streams at once: the first 200 go out
    // before its SETTINGS say so (it reads no further while 128 are open),
    // and later batches open 128, the rest as streams end.
    let server = serve(&["--addr", "127.0.0.1:0", "--self-signed"]);
    let url = format!("https://{}/hello", server.addr);
    let out = bench(&["--http2", "-k", "-c", "2", "-p", "200", "-D", "1", &url]);
    assert!(out.status.success(), "{}", report(&out));
    let answered = number(&out, "requests");
    assert!(answered >= 200, "{}", report(&out));
    assert_eq!(number(&out, "statuses   2xx"), answered, "{}", report(&out));
    assert!(report(&out).contains(NO_ERRORS), "{}", report(&out));
}

#[test]
fn a_server_that_does_not_choose_http2_fails_the_run() {
    let server = serve(&["--addr", "127.0.0.1:0", "--self-signed", "--no-http2"]);
    let url = format!("https://{}/hello", server.addr);
    let out = bench(&["--http2", "-k", "-c", "1", "-D", "0.5", &url]);
    assert!(!out.status.success(), "{}", report(&out));
    // The handshake fails: it offered h2 alone.
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("ALPN"), "{}", report(&out));
}

/// `--unix-socket`: HTTP/1.1, HTTP/2 and WebSocket load on `ringwire serve --unix`, the
/// URL's host only naming `host`.
#[test]
fn loads_a_server_on_a_unix_socket() {
    let dir = std::env::temp_dir().join(format!("ringwire-bench-unix-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("mkdir");
    let path = dir.join("site.sock");
    let sock = path.to_str().expect("utf-8");
    let _server = serve(&["--unix", sock]);
    for args in [
        &["-c", "4", "-p", "4", "http://localhost/hello"][..],
        &["--http2", "-c", "2", "-p", "8", "http://localhost/hello"],
        &["-c", "2", "-p", "4", "ws://localhost/ws/echo"],
    ] {
        let out = bench(&[&["--unix-socket", sock, "-D", "0.5"], args].concat());
        assert!(out.status.success(), "{args:?}: {}", report(&out));
        assert!(report(&out).contains(NO_ERRORS), "{}", report(&out));
        if args[0] == "-c" && args[4].starts_with("ws:") {
            assert!(number(&out, "messages") > 0, "{}", report(&out));
        } else {
            let answered = number(&out, "requests");
            assert!(answered > 0, "{}", report(&out));
            assert_eq!(number(&out, "statuses   2xx"), answered, "{}", report(&out));
        }
    }
    let refused = bench(&[
        "--unix-socket",
        &format!("{sock}.none"),
        "-c",
        "1",
        "-D",
        "0.3",
        "http://localhost/",
    ]);
    assert!(
        report(&refused).contains(&format!("cannot connect to unix:{sock}.none")),
        "{}",
        report(&refused)
    );
    let _ = std::fs::remove_dir_all(&dir);
}
