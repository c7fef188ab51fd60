//! Slow clients over HTTP/2, against Python's h2: each request body is held to the minimum
//! rate on its own stream (one flowing does not keep a silent one alive), a handler reading
//! a body as it comes gets a timeout error, and a header block trickled past the head limit
//! ends the connection; and at scale, 800 trickled uploads cut stream by stream while a
//! normal client keeps its rate. The limits are short (0.5-1 s windows), so the file runs in
//! seconds.

mod common;

use std::ops::Range;
use std::time::Duration;

use common::{python, start, Echo};
use ringwire_http1::Method;
use ringwire_server::{handler_fn, streaming, Request, Response, Router, ServerConfig, Timeouts};

/// The load test runs alone (it measures a rate); the others only sleep and may overlap.
static SERIAL: std::sync::RwLock<()> = std::sync::RwLock::new(());

/// At least 1000 B/s over each 500 ms window; a frame begun must be whole within 800 ms.
fn config() -> ServerConfig {
    let ms = Duration::from_millis;
    ServerConfig {
        timeouts: Timeouts {
            head: ms(800),
            body_min_rate: 1000,
            body_window: ms(500),
            sweep: ms(50),
            ..Timeouts::default()
        },
        ..ServerConfig::default()
    }
}

/// Python's h2 as the client. `run` takes uploads `(stream, path, pieces, size, gap)`: each
/// opens a `POST` and sends `pieces` pieces of `size` bytes `gap` seconds apart (ending the
/// body with the last, and stopping once answered), all at once; then it waits until every
/// stream has ended and `linger` seconds more, and prints each stream's status, first line
/// of body and reset code, with the milliseconds from the start at which its answer came.
const CLIENT: &str = r#"
import select, socket, sys, time
import h2.config, h2.connection, h2.events

sock = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
conn = h2.connection.H2Connection(h2.config.H2Configuration(client_side=True))
conn.initiate_connection()
sock.sendall(conn.data_to_send())
began = time.monotonic()
streams = {}

def head(method, path):
    return [(":method", method), (":path", path), (":scheme", "http"), (":authority", "x")]

def pump(timeout):
    if select.select([sock], [], [], max(timeout, 0))[0]:
        data = sock.recv(65536)
        if not data:
            print("closed")
            sys.exit(0)
        for e in conn.receive_data(data):
            s = streams.get(getattr(e, "stream_id", None))
            if isinstance(e, h2.events.ResponseReceived):
                s["status"] = dict(e.headers)[b":status"].decode()
                s["at"] = int((time.monotonic() - began) * 1000)
            elif isinstance(e, h2.events.DataReceived):
                s["body"] += e.data
                conn.acknowledge_received_data(e.flow_controlled_length, e.stream_id)
            elif isinstance(e, h2.events.StreamEnded):
                s["ended"] = True
            elif isinstance(e, h2.events.StreamReset):
                s["reset"] = int(e.error_code)
                s["ended"] = True
            elif isinstance(e, h2.events.ConnectionTerminated):
                print(f"GOAWAY {int(e.error_code)}")
        sock.sendall(conn.data_to_send())

def run(*uploads, linger=0.2):
    for (stream, path, pieces, size, gap) in uploads:
        streams[stream] = {"status": None, "body": b"", "ended": False, "sent": 0,
                           "plan": (pieces, size, gap), "next": time.monotonic()}
        conn.send_headers(stream, head("POST", path))
    sock.sendall(conn.data_to_send())
    deadline = time.monotonic() + 10
    while not all(s["ended"] for s in streams.values()) and time.monotonic() < deadline:
        now = time.monotonic()
        for stream, s in streams.items():
            pieces, size, gap = s["plan"]
            if s["status"] or s["ended"] or s["sent"] == pieces or now < s["next"]:
                continue
            s["sent"] += 1
            s["next"] = now + gap
            conn.send_data(stream, b"k" * size, end_stream=s["sent"] == pieces)
        sock.sendall(conn.data_to_send())
        waits = [s["next"] for s in streams.values() if not s["status"] and s["sent"] < s["plan"][0]]
        pump(min(waits, default=now + 0.1) - time.monotonic())
    end = time.monotonic() + linger
    while time.monotonic() < end:
        pump(end - time.monotonic())
    for stream, s in sorted(streams.items()):
        body = s["body"].decode().splitlines()[0] if s["body"] else ""
        print(f"{stream}: {s['status']} {body!r} reset {s.get('reset')} at {s.get('at')}")
        del streams[stream]
"#;

/// What [`CLIENT`] printed after running `steps`, the times taken off the lines (and
/// checked to be in `times`' ranges of milliseconds, in order).
fn client(addr: std::net::SocketAddr, steps: &str, times: &[Range<u64>]) -> String {
    ringwire_testkit::ensure_python_module("h2", "h2");
    let out = python(&format!("{CLIENT}\n{steps}"), &[&addr.port().to_string()]);
    untimed(&out, times)
}

/// `out` without the ` at N` ending its timed lines, each N checked to be in its range of
/// `times`.
fn untimed(out: &str, times: &[Range<u64>]) -> String {
    let mut lines = String::new();
    let mut at = Vec::new();
    for line in out.lines() {
        let line = match line.rsplit_once(" at ") {
            Some((line, ms)) => {
                at.push(ms.parse::<u64>().expect("milliseconds"));
                line
            }
            None => line,
        };
        lines.push_str(line);
        lines.push('\n');
    }
    assert!(
        at.len() == times.len() && at.iter().zip(times).all(|(t, range)| range.contains(t)),
        "{out}"
    );
    lines
}

/// When a window's end is seen: 500 ms after the head, and some slack for a busy machine.
const FIRST_WINDOW: Range<u64> = 500..800;

#[test]
fn a_body_below_the_minimum_rate_is_answered_408_and_the_connection_goes_on() {
    let _shared = SERIAL.read().unwrap_or_else(|e| e.into_inner());
    let addr = start(config(), Echo);
    // 10 bytes every 100 ms is 100 B/s: answered 408 at the end of the first window, the
    // stream reset (the client may stop sending); the next request is served.
    let out = client(
        addr,
        "run((1, '/slow', 100, 10, 0.1))\n\
         run((3, '/after', 1, 5, 0))",
        &[FIRST_WINDOW, 500..1100],
    );
    assert_eq!(
        out,
        "1: 408 '' reset 0\n\
         3: 200 'POST /after body=5' reset None\n"
    );
}

#[test]
fn a_silent_body_is_cut_while_another_flows_on_the_same_connection() {
    let _shared = SERIAL.read().unwrap_or_else(|e| e.into_inner());
    let addr = start(config(), Echo);
    // Stream 1 sends 500 B every 200 ms (2500 B/s) for 1.2 s; stream 3 sends nothing after
    // its head. Timed together, stream 1 would keep stream 3 alive.
    let steps = "run((1, '/flows', 6, 500, 0.2), (3, '/silent', 2, 5, 60))";
    let out = client(addr, steps, &[1000..1300, FIRST_WINDOW]);
    // Stream 3's first piece goes with its head; its second would go after a minute.
    assert_eq!(
        out,
        "1: 200 'POST /flows body=3000' reset None\n\
         3: 408 '' reset 0\n"
    );
}

#[test]
fn a_body_fast_enough_is_served_whole() {
    let _shared = SERIAL.read().unwrap_or_else(|e| e.into_inner());
    let addr = start(config(), Echo);
    // 1000 bytes every 200 ms is 5000 B/s.
    let answered = 600..900;
    let out = client(addr, "run((1, '/up', 4, 1000, 0.2))", &[answered]);
    assert_eq!(out, "1: 200 'POST /up body=4000' reset None\n");
}

/// Reads the body as it comes; answers 408 with the error if the read fails.
async fn read_all(request: &Request<'_>) -> Response {
    let Some(mut body) = request.body_reader() else {
        return Response::new(400);
    };
    match body.to_vec(1 << 20).await {
        Ok(all) => Response::new(200).body(format!("read {}", all.len())),
        Err(e) => Response::new(408).body(format!("{:?}: {e}", e.kind())),
    }
}

#[test]
fn a_handler_reading_a_slow_body_gets_a_timeout_error() {
    let _shared = SERIAL.read().unwrap_or_else(|e| e.into_inner());
    let router = Router::new().route(Method::Post, "/read", streaming(handler_fn(read_all)));
    let addr = start(config(), router);
    let steps = "run((1, '/read', 100, 10, 0.1), (3, '/read', 2, 600, 0.4), linger=1)";
    let out = client(addr, steps, &[FIRST_WINDOW, 400..700]);
    // Stream 1's handler answers the error; what follows of its body would be thrown away
    // for a window more, but the client sends no more, and the stream is reset.
    assert_eq!(
        out,
        "1: 408 'TimedOut: request body too slow' reset 0\n\
         3: 200 'read 1200' reset None\n"
    );
}

/// Python's h2 sets the connection up; then a request's header block is sent as a
/// `HEADERS` frame without `END_HEADERS` and `CONTINUATION`s, a byte of the block each,
/// `gap` seconds apart. Prints whether it was answered, or the `GOAWAY` and when the server
/// closed (milliseconds from the first byte).
const TRICKLED_BLOCK: &str = r#"
import select, socket, struct, sys, time
import h2.config, h2.connection, hpack

sock = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
conn = h2.connection.H2Connection(h2.config.H2Configuration(client_side=True))
conn.initiate_connection()
sock.sendall(conn.data_to_send())
gap = float(sys.argv[2])
block = hpack.Encoder().encode([(":method", "GET"), (":path", "/x" * 20), (":scheme", "http"), (":authority", "x")])

def frame(kind, flags, payload):
    return struct.pack(">I", len(payload))[1:] + bytes([kind, flags]) + struct.pack(">I", 1) + payload

began = time.monotonic()
sock.sendall(frame(1, 1, block[:1]))  # HEADERS with END_STREAM, not END_HEADERS
sent, got = 1, b""
while True:
    if select.select([sock], [], [], gap if sent < len(block) else 10)[0]:
        try:
            data = sock.recv(65536)
        except ConnectionResetError:
            data = b""
        if not data:
            print(f"closed at {int((time.monotonic() - began) * 1000)}")
            break
        got += data
        while len(got) >= 9 and len(got) >= 9 + int.from_bytes(got[:3], "big"):
            length, kind = int.from_bytes(got[:3], "big"), got[3]
            if kind == 7:  # GOAWAY: last stream, error code
                print(f"GOAWAY {int.from_bytes(got[13:17], 'big')}")
            elif kind == 1:  # HEADERS: the answer
                print("answered")
                sys.exit(0)
            got = got[9 + length:]
    elif sent < len(block):
        last = sent == len(block) - 1
        try:
            sock.sendall(frame(9, 4 if last else 0, block[sent:sent + 1]))  # CONTINUATION
        except OSError:
            pass
        sent += 1
    else:
        sys.exit("no answer")
"#;

#[test]
fn a_header_block_trickled_past_the_head_limit_ends_the_connection() {
    let _shared = SERIAL.read().unwrap_or_else(|e| e.into_inner());
    ringwire_testkit::ensure_python_module("h2", "h2");
    let addr = start(config(), Echo);
    let port = addr.port().to_string();
    // A byte every 100 ms: the 800 ms head limit passes before the block is whole.
    let out = python(TRICKLED_BLOCK, &[&port, "0.1"]);
    let closed = 800..1200;
    assert_eq!(untimed(&out, &[closed]), "GOAWAY 0\nclosed\n");
    // A byte every millisecond: whole in time, and answered.
    let out = python(TRICKLED_BLOCK, &[&port, "0.001"]);
    assert_eq!(out, "answered\n");
}

/// An HTTP/2 client on a socket, on `ringwire-http2`'s sans-IO connection: what the attack
/// and the normal client below speak.
struct H2 {
    sock: std::net::TcpStream,
    conn: ringwire_http2::Connection,
    received: Vec<u8>,
}

/// What came for a stream.
enum Seen {
    Status(u16),
    /// The stream's answer is whole (or the stream was reset).
    Ended,
}

impl H2 {
    fn connect(addr: std::net::SocketAddr, blocking: bool) -> H2 {
        let sock = std::net::TcpStream::connect(addr).expect("connect");
        sock.set_nonblocking(!blocking).expect("blocking mode");
        sock.set_nodelay(true).expect("nodelay");
        let mut h2 = H2 {
            sock,
            conn: ringwire_http2::Connection::client(ringwire_http2::Config::default()),
            received: Vec::new(),
        };
        h2.flush();
        h2
    }

    fn open(&mut self, method: &str, end_stream: bool) -> ringwire_http2::frame::StreamId {
        let (method, path) = (method.as_bytes(), &b"/up"[..]);
        let none: [(&[u8], &[u8]); 0] = [];
        let stream = self
            .conn
            .send_request(method, b"http", b"x", path, none, end_stream);
        let stream = stream.expect("a stream");
        self.flush();
        stream
    }

    fn flush(&mut self) {
        use std::io::Write as _;
        while !self.conn.transmit().is_empty() {
            match self.sock.write(self.conn.transmit()) {
                Ok(n) => self.conn.advance(n),
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => return,
                Err(_) => return,
            }
        }
    }

    /// Reads what the socket has (waiting for it if blocking), handing `seen` what came for
    /// each stream; false once the server closed.
    fn pump(&mut self, seen: &mut impl FnMut(ringwire_http2::frame::StreamId, Seen)) -> bool {
        use std::io::Read as _;
        let mut buf = [0; 16 << 10];
        let open = match self.sock.read(&mut buf) {
            Ok(0) => false,
            Ok(n) => {
                self.received.extend_from_slice(&buf[..n]);
                true
            }
            Err(e) => e.kind() == std::io::ErrorKind::WouldBlock,
        };
        let mut at = 0;
        loop {
            let Ok((used, event)) = self.conn.recv(&self.received[at..]) else {
                return false;
            };
            match event {
                Some(ringwire_http2::Event::Response {
                    stream,
                    status,
                    end_stream,
                    ..
                }) => {
                    seen(stream, Seen::Status(status));
                    if end_stream {
                        seen(stream, Seen::Ended);
                    }
                }
                Some(ringwire_http2::Event::Data {
                    stream,
                    data,
                    end_stream,
                }) => {
                    let n = data.len();
                    if end_stream {
                        seen(stream, Seen::Ended);
                    }
                    self.conn.release(stream, n);
                }
                Some(ringwire_http2::Event::Reset { stream, .. }) => seen(stream, Seen::Ended),
                _ => {}
            }
            if used == 0 {
                break;
            }
            at += used;
        }
        self.received.drain(..at);
        self.flush();
        open
    }
}

/// Sequential GETs on one HTTP/2 connection for `window`: how many were answered.
fn normal_h2_client(addr: std::net::SocketAddr, window: Duration) -> u64 {
    let mut h2 = H2::connect(addr, true);
    let began = std::time::Instant::now();
    let mut count = 0;
    while began.elapsed() < window {
        let stream = h2.open("GET", true);
        let mut done = false;
        while !done {
            assert!(h2.pump(&mut |s, seen| done |= s == stream && matches!(seen, Seen::Ended)));
        }
        count += 1;
    }
    count
}

/// What the attack saw.
#[derive(Debug, Default)]
struct Attack {
    /// Streams answered 408.
    answered_408: usize,
    /// Connections the server closed.
    closed: usize,
    /// The longest a stream lived before its answer, or until the end.
    longest: Duration,
}

/// `connections` connections of `streams` uploads each, every upload sending one more byte
/// of its body every `every` (far under the minimum rate); an upload answered is replaced
/// by a new one on its connection, a connection closed by a new connection, until `stop`.
fn slow_uploads(
    addr: std::net::SocketAddr,
    (connections, streams): (usize, usize),
    every: Duration,
    stop: &std::sync::atomic::AtomicBool,
) -> Attack {
    use std::collections::HashMap;
    use std::time::Instant;
    struct Conn {
        h2: H2,
        /// Each upload's start and next byte's time.
        uploads: HashMap<ringwire_http2::frame::StreamId, (Instant, Instant)>,
    }
    let open = |streams: usize| {
        let mut h2 = H2::connect(addr, false);
        let now = Instant::now();
        let uploads = (0..streams)
            .map(|_| (h2.open("POST", false), (now, now + every)))
            .collect();
        Conn { h2, uploads }
    };
    let mut attack = Attack::default();
    let mut conns: Vec<Conn> = (0..connections).map(|_| open(streams)).collect();
    while !stop.load(std::sync::atomic::Ordering::Relaxed) {
        let now = Instant::now();
        for c in &mut conns {
            let mut answered = Vec::new();
            let open_still = c.h2.pump(&mut |stream, seen| {
                if let Seen::Status(status) = seen {
                    answered.push((stream, status));
                }
            });
            for (stream, status) in answered {
                if let Some((born, _)) = c.uploads.remove(&stream) {
                    attack.longest = attack.longest.max(now - born);
                    attack.answered_408 += usize::from(status == 408);
                    let fresh = c.h2.open("POST", false);
                    c.uploads.insert(fresh, (now, now + every));
                }
            }
            if !open_still {
                attack.closed += 1;
                *c = open(streams);
                continue;
            }
            for (&stream, (_, next)) in &mut c.uploads {
                if now >= *next {
                    let _ = c.h2.conn.send_data_now(stream, b"x", false);
                    *next = now + every;
                }
            }
            c.h2.flush();
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let now = Instant::now();
    for c in &conns {
        for (born, _) in c.uploads.values() {
            attack.longest = attack.longest.max(now - *born);
        }
    }
    attack
}

/// Slow uploads over HTTP/2 at scale: 800 streams on 100 connections, each trickling its
/// body at 5 B/s, are answered 408 stream by stream near the end of their first window,
/// while a normal client on a connection of its own keeps its rate.
#[test]
fn slow_uploads_are_cut_stream_by_stream_and_a_normal_client_keeps_its_rate() {
    let _alone = SERIAL.write().unwrap_or_else(|e| e.into_inner());
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;
    const CONNECTIONS: usize = 100;
    const STREAMS: usize = 8;
    let ms = Duration::from_millis;
    let config = ServerConfig {
        timeouts: Timeouts {
            body_min_rate: 1024,
            body_window: ms(1000),
            sweep: ms(100),
            ..Timeouts::default()
        },
        ..ServerConfig::default()
    };
    let addr = start(config, Echo);
    let window = Duration::from_secs(4);
    let _warm = normal_h2_client(addr, ms(300));
    // As the HTTP/1.1 Slowloris test: a second round only if the first misses the rate.
    let mut rates = Vec::new();
    for _round in 0..2 {
        let before = normal_h2_client(addr, window / 2);
        let stop = Arc::new(AtomicBool::new(false));
        let attacker = {
            let stop = Arc::clone(&stop);
            std::thread::spawn(move || slow_uploads(addr, (CONNECTIONS, STREAMS), ms(200), &stop))
        };
        std::thread::sleep(ms(500));
        let attacked = normal_h2_client(addr, window);
        stop.store(true, Ordering::Relaxed);
        let attack = attacker.join().expect("attacker");
        let baseline = before + normal_h2_client(addr, window / 2);
        eprintln!("baseline {baseline} requests, under attack {attacked}; {attack:?}");

        // Every first-generation upload was answered during the ~4.5 s attack, each 408,
        // each near its first window's end (1 s; 2 s allows for a loaded machine), and no
        // connection was closed for it.
        assert!(attack.answered_408 >= CONNECTIONS * STREAMS, "{attack:?}");
        assert_eq!(attack.closed, 0, "{attack:?}");
        assert!(attack.longest <= ms(2000), "{attack:?}");

        rates.push((attacked, baseline));
        if attacked * 10 >= baseline * 9 {
            return;
        }
    }
    panic!("normal client slowed down under attack in both rounds (attacked, baseline): {rates:?}");
}
