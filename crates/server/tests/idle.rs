//! Idle keep-alive connections cost a socket and about a kilobyte: no rings,
//! no descriptors besides the socket, no request-loop state. (Idle HTTP/2
//! connections keep theirs, with their pages released.)
//!
//! The server runs in this process; the clients run in a `python3` child, so
//! `/proc/self` shows the server's memory and descriptors alone.

mod common;

use std::io::{BufRead as _, BufReader, Write as _};
use std::net::SocketAddr;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::LazyLock;
use std::thread;
use std::time::Duration;

use common::start;
use ringwire_server::{Body, Handler, Request, Response, ServerConfig};

/// Opens `n` connections one after another, each answered once, reports
/// `ready`, then on `again` sends a second request on each of them (waking
/// every idle connection) and reports `done`; exits when stdin closes.
const CLIENTS: &str = r#"
import socket, sys
n, port = int(sys.argv[1]), int(sys.argv[2])
req = b"GET /idle HTTP/1.1\r\nHost: a\r\n\r\n"

def ask(s):
    s.sendall(req)
    buf = b""
    while True:
        chunk = s.recv(4096)
        if not chunk:
            sys.exit("server closed a connection")
        buf += chunk
        head, sep, body = buf.partition(b"\r\n\r\n")
        if sep:
            lines = head.split(b"\r\n")
            assert lines[0].startswith(b"HTTP/1.1 200"), lines[0]
            length = [int(l.split(b":")[1]) for l in lines[1:]
                      if l.lower().startswith(b"content-length:")][0]
            if len(body) >= length:
                assert body == b"ok", body
                return

conns = []
for _ in range(n):
    s = socket.create_connection(("127.0.0.1", port))
    ask(s)
    conns.append(s)
print("ready", flush=True)
for line in sys.stdin:
    if line.strip() == "again":
        for s in conns:
            ask(s)
        print("done", flush=True)
"#;

/// Answers `ok`, or 1 MiB on `/big`.
struct Ok2;

/// `/big`'s answer: made once, so that answering allocates no body.
static BIG: LazyLock<Vec<u8>> = LazyLock::new(|| vec![7; 1 << 20]);

impl Handler for Ok2 {
    async fn call(&self, request: &Request<'_>) -> Response {
        if request.target().as_bytes() == b"/big" {
            return Response::new(200).body(Body::Static(&BIG));
        }
        Response::text("ok")
    }
}

/// `n` client connections in a child process.
struct Clients {
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: BufReader<ChildStdout>,
}

impl Clients {
    fn open(addr: SocketAddr, n: usize) -> Clients {
        let mut child = Command::new("python3")
            .args(["-c", CLIENTS, &n.to_string(), &addr.port().to_string()])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("python3 is installed");
        let stdin = child.stdin.take();
        let stdout = BufReader::new(child.stdout.take().expect("stdout"));
        let mut clients = Clients {
            child,
            stdin,
            stdout,
        };
        clients.expect("ready");
        clients
    }

    fn expect(&mut self, word: &str) {
        let mut line = String::new();
        self.stdout.read_line(&mut line).expect("clients' stdout");
        assert_eq!(line.trim(), word, "the clients failed (see stderr)");
    }

    /// A second request on every connection, each of which had gone idle.
    fn again(&mut self) {
        let stdin = self.stdin.as_mut().expect("stdin");
        stdin.write_all(b"again\n").expect("write to clients");
        stdin.flush().expect("flush");
        self.expect("done");
    }

    fn close(mut self) {
        drop(self.stdin.take());
        let status = self.child.wait().expect("clients exit");
        assert!(status.success(), "clients: {status}");
    }
}

/// The tests measure this whole process, so they take turns.
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Resident memory in bytes and open descriptors of this process.
fn usage() -> (usize, usize) {
    let status = std::fs::read_to_string("/proc/self/status").expect("/proc/self/status");
    let rss = status
        .lines()
        .find_map(|line| line.strip_prefix("VmRSS:"))
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|kib| kib.parse::<usize>().ok())
        .expect("VmRSS")
        * 1024;
    let fds = std::fs::read_dir("/proc/self/fd")
        .expect("/proc/self/fd")
        .count();
    (rss, fds)
}

/// Opens `n` idle keep-alive connections; returns the growth in resident
/// bytes and descriptors per connection.
fn idle_cost(n: usize) -> (f64, f64) {
    // Connections keep their rings for `warm` after an answer, noticed at
    // the next sweep: short ones, so the test waits less.
    let mut config = ServerConfig::default();
    config.timeouts.warm = Duration::from_millis(100);
    config.timeouts.sweep = Duration::from_millis(100);
    let addr = start(config, Ok2);
    // Warm up: worker threads, allocator arenas, pools, the sweeper.
    Clients::open(addr, 64).close();
    thread::sleep(Duration::from_millis(300));
    let (rss0, fds0) = usage();
    let mut clients = Clients::open(addr, n);
    // The last answers are out; let the connections hand their rings back
    // (warm, then a sweep).
    thread::sleep(Duration::from_millis(500));
    let (rss1, fds1) = usage();
    // Every idle connection still works: each takes rings again, answers,
    // and goes idle again.
    clients.again();
    thread::sleep(Duration::from_millis(500));
    let (rss2, fds2) = usage();
    clients.close();
    let per = |grown: usize| grown as f64 / n as f64;
    let rss = per(rss1.saturating_sub(rss0));
    let fds = per(fds1.saturating_sub(fds0));
    println!(
        "{n} idle keep-alive connections: {:.0} bytes ({:.2} KiB) of RSS and {fds:.3} fds each; \
         after a second request on each: {:.0} bytes and {:.3} fds each",
        rss,
        rss / 1024.0,
        per(rss2.saturating_sub(rss0)),
        per(fds2.saturating_sub(fds0)),
    );
    (rss, fds)
}

/// 10,000 idle keep-alive connections, each answered once, hold no rings: about 1 KiB of
/// RSS and one descriptor each. The issue's figure is this test in release mode: `cargo test
/// --release -p ringwire-server --test idle -- --nocapture`.
#[test]
fn ten_thousand_idle_connections_hold_no_rings() {
    let _turn = SERIAL
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let n = 10_000;
    // The server and the clients (a child process) each need a descriptor per connection.
    assert!(
        common::raise_open_files_limit() > n as u64 + 200,
        "raise the hard open-file limit (ulimit -Hn) above {}",
        n + 200
    );
    let (rss, fds) = idle_cost(n);
    println!(
        "RSS per idle connection at {n}: {:.2} KiB; fds per connection: {fds:.3}",
        rss / 1024.0
    );
    // Debug builds included; a ring per connection would be tens of KiB.
    assert!(rss < 4096.0, "{rss:.0} bytes of RSS per idle connection");
    // One socket each (two rings each would be three descriptors), give or take the
    // pools' few idle rings.
    assert!(
        (0.98..1.05).contains(&fds),
        "{fds:.3} descriptors per idle connection"
    );
}

/// Opens `n` HTTP/2 connections (Python's h2, prior knowledge), each answered once (a GET of
/// the path given, `/idle` by default, its body read and acknowledged), reports `ready`, and
/// holds them until stdin closes.
const H2_CLIENTS: &str = r#"
import socket, sys
import h2.config, h2.connection, h2.events
n, port = int(sys.argv[1]), int(sys.argv[2])
path = sys.argv[3] if len(sys.argv) > 3 else "/idle"
conns = []
for _ in range(n):
    sock = socket.create_connection(("127.0.0.1", port))
    conn = h2.connection.H2Connection(h2.config.H2Configuration(client_side=True))
    conn.initiate_connection()
    conn.send_headers(1, [(":method", "GET"), (":path", path), (":scheme", "http"), (":authority", "a")], end_stream=True)
    sock.sendall(conn.data_to_send())
    ended = False
    while not ended:
        data = sock.recv(65536)
        if not data:
            sys.exit("server closed a connection")
        for event in conn.receive_data(data):
            ended |= isinstance(event, h2.events.StreamEnded)
            if isinstance(event, h2.events.DataReceived):
                conn.acknowledge_received_data(event.flow_controlled_length, event.stream_id)
        sock.sendall(conn.data_to_send())
    conns.append(sock)
print("ready", flush=True)
sys.stdin.read()
"#;

/// Opens `n` HTTP/2 connections to a fresh server, each answered once on `path`, and
/// returns the growth in resident bytes and descriptors per connection while they idle.
/// Has the allocator give back the free memory it keeps (glibc's `malloc_trim`), so that
/// RSS counts what is live: how freed chunks happen to lie in the heap (which the order of
/// allocations decides) is not what these tests measure.
fn trim_heap() {
    #[cfg(target_env = "gnu")]
    // SAFETY: `malloc_trim` only returns free memory to the OS; any thread may call it.
    unsafe {
        libc::malloc_trim(0);
    }
}

fn h2_idle_cost(n: usize, path: &str) -> (f64, f64) {
    ringwire_testkit::ensure_python_module("h2", "h2");
    assert!(common::raise_open_files_limit() > 4 * n as u64 + 200);
    let mut config = ServerConfig::default();
    config.timeouts.warm = Duration::from_millis(100);
    config.timeouts.sweep = Duration::from_millis(100);
    let addr = start(config, Ok2);
    LazyLock::force(&BIG);
    thread::sleep(Duration::from_millis(300));
    trim_heap();
    let (rss0, fds0) = usage();
    let mut child = Command::new("python3")
        .args([
            "-c",
            H2_CLIENTS,
            &n.to_string(),
            &addr.port().to_string(),
            path,
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("python3 is installed");
    let mut ready = String::new();
    BufReader::new(child.stdout.take().expect("stdout"))
        .read_line(&mut ready)
        .expect("the clients' stdout");
    assert_eq!(ready.trim(), "ready", "the clients failed (see stderr)");
    thread::sleep(Duration::from_millis(500));
    trim_heap();
    let (rss1, fds1) = usage();
    drop(child.stdin.take());
    assert!(child.wait().expect("clients exit").success());
    let per = |grown: usize| grown as f64 / n as f64;
    (
        per(rss1.saturating_sub(rss0)),
        per(fds1.saturating_sub(fds0)),
    )
}

/// 1,000 idle HTTP/2 connections, each answered once: the send ring goes back to its pool
/// at once (HTTP/2 sends from the connection's own buffer), the receive ring once the
/// connection has been quiet for `warm`; each keeps its socket, its HPACK state and its
/// loop's state. What one costs is printed.
#[test]
fn idle_http2_connections_give_their_pages_back() {
    let _turn = SERIAL
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let n = 1_000;
    let (rss, fds) = h2_idle_cost(n, "/idle");
    println!("{n} idle HTTP/2 connections: {rss:.0} bytes of RSS and {fds:.3} fds each");
    // About 11.7 KiB here in a debug build (the connection loop's future, of it 512 bytes
    // the runs of one vectored write, which lets bodies go out by reference; 11.1 KiB
    // before that), 14 KiB when the pages stayed. One descriptor, the socket (3 when each
    // kept its rings), and the pools' few rings spread over all.
    assert!(
        rss < 13.0 * 1024.0,
        "{rss:.0} bytes of RSS per idle connection"
    );
    assert!(fds < 1.5, "{fds:.3} descriptors per idle connection");
}

/// HTTP/2 connections that each downloaded 1 MiB give back what their buffers grew to
/// once quiet: about 32 KB each here in a debug build once the allocator has given back
/// what it kept free (without the trim, 43-95 KB, as the order of allocations lays the
/// freed chunks out), about 96 KB when they kept their buffers.
#[test]
fn idle_http2_connections_keep_nothing_of_a_large_answer() {
    let _turn = SERIAL
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let n = 50;
    let (rss, _) = h2_idle_cost(n, "/big");
    println!("{n} idle HTTP/2 connections after 1 MiB each: {rss:.0} bytes of RSS each");
    assert!(
        rss < 48.0 * 1024.0,
        "{rss:.0} bytes of RSS per idle connection"
    );
}
