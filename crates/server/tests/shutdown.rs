//! Graceful shutdown: stop accepting, close idle connections, finish
//! requests in flight, say goodbye on WebSockets.

use std::io::{Read as _, Write as _};
use std::net::TcpStream;
use std::thread;
use std::time::{Duration, Instant};

mod common;

use ringwire_server::{ws, Handler, Request, Response, Router, Server, ServerConfig};

#[derive(Debug)]
struct Slow;

impl Handler for Slow {
    async fn call(&self, request: &Request<'_>) -> Response {
        match request.target().path() {
            b"/slow" => tokio::time::sleep(Duration::from_millis(400)).await,
            b"/forever" => tokio::time::sleep(Duration::from_secs(60)).await,
            _ => {}
        }
        Response::text("done\n")
    }
}

/// Runs `handler` on its own runtime until `stop` is sent; the thread ends
/// when the server has shut down.
fn serve_until_stopped(
    config: ServerConfig,
    handler: impl Handler,
) -> (
    std::net::SocketAddr,
    tokio::sync::oneshot::Sender<()>,
    thread::JoinHandle<()>,
) {
    let server = Server::bind(config).expect("bind");
    let addr = server.local_addr();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let serving = thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .expect("runtime");
        runtime
            .block_on(server.run_until(handler, async {
                let _ = stopped.await;
            }))
            .expect("serve");
    });
    (addr, stop, serving)
}

#[test]
fn shutdown_closes_idle_connections_and_finishes_requests_in_flight() {
    let config = ServerConfig::new("127.0.0.1:0".parse().expect("addr"));
    let (addr, stop, serving) = serve_until_stopped(config, Slow);

    let connect = || {
        let s = TcpStream::connect(addr).expect("connect");
        s.set_read_timeout(Some(Duration::from_secs(10)))
            .expect("timeout");
        s
    };
    // An idle keep-alive connection, after one answered request.
    let mut idle = connect();
    idle.write_all(b"GET / HTTP/1.1\r\nHost: a\r\n\r\n")
        .expect("write");
    let mut buf = [0; 1024];
    let n = idle.read(&mut buf).expect("read");
    assert!(buf[..n].ends_with(b"done\n"));
    // A request in flight.
    let mut busy = connect();
    busy.write_all(b"GET /slow HTTP/1.1\r\nHost: a\r\n\r\n")
        .expect("write");
    thread::sleep(Duration::from_millis(100));

    let began = Instant::now();
    stop.send(()).expect("stop");
    let mut rest = Vec::new();
    idle.read_to_end(&mut rest).expect("idle closes");
    assert!(rest.is_empty());
    let mut answer = String::new();
    busy.read_to_string(&mut answer).expect("busy finishes");
    assert!(answer.starts_with("HTTP/1.1 200 OK\r\n"), "{answer}");
    assert!(answer.contains("connection: close\r\n"), "{answer}");
    assert!(answer.ends_with("done\n"), "{answer}");
    // Closing lets the server's lingering close end at once.
    drop((idle, busy));
    serving.join().expect("server thread");
    assert!(
        began.elapsed() < Duration::from_secs(1),
        "{:?}",
        began.elapsed()
    );
    assert!(TcpStream::connect(addr).is_err(), "no longer accepting");
}

#[test]
fn connections_still_busy_after_the_grace_are_dropped() {
    let mut config = ServerConfig::new("127.0.0.1:0".parse().expect("addr"));
    config.shutdown_grace = Duration::from_millis(300);
    let (addr, stop, serving) = serve_until_stopped(config, Slow);

    let mut stuck = TcpStream::connect(addr).expect("connect");
    stuck
        .set_read_timeout(Some(Duration::from_secs(10)))
        .expect("timeout");
    stuck
        .write_all(b"GET /forever HTTP/1.1\r\nHost: a\r\n\r\n")
        .expect("write");
    thread::sleep(Duration::from_millis(100));

    let began = Instant::now();
    stop.send(()).expect("stop");
    // The server returns once the grace is over and the connection is gone.
    serving.join().expect("server thread");
    let took = began.elapsed();
    assert!(
        took >= Duration::from_millis(250) && took < Duration::from_secs(2),
        "{took:?}"
    );
    // Dropped unanswered: the client sees the close (or a reset).
    let mut rest = Vec::new();
    match stuck.read_to_end(&mut rest) {
        Ok(_) => assert!(rest.is_empty(), "{rest:?}"),
        Err(e) => assert_ne!(e.kind(), std::io::ErrorKind::WouldBlock, "{e}"),
    }
}

#[test]
fn shutdown_closes_websockets_with_going_away() {
    use tungstenite::protocol::frame::coding::CloseCode;
    use tungstenite::Message as T;

    // A grace far longer than the test may take: the socket must end by
    // its closing handshake, not by the grace running out.
    let mut config = ServerConfig::new("127.0.0.1:0".parse().expect("addr"));
    config.shutdown_grace = Duration::from_secs(30);
    let (addr, stop, serving) =
        serve_until_stopped(config, Router::new().get("/ws/echo", ws::echo));

    let (mut socket, _) = tungstenite::connect(format!("ws://{addr}/ws/echo")).expect("handshake");
    socket.send(T::text("before")).expect("send");
    assert_eq!(socket.read().expect("echo"), T::text("before"));

    let began = Instant::now();
    stop.send(()).expect("stop");
    match socket.read().expect("close") {
        T::Close(Some(frame)) => {
            assert_eq!(frame.code, CloseCode::Away);
            assert_eq!(frame.reason, "server shutting down");
        }
        other => panic!("expected a close, got {other:?}"),
    }
    // tungstenite answers the close; the server then closes TCP.
    match socket.read() {
        Err(tungstenite::Error::ConnectionClosed) => {}
        Ok(other) => panic!("after the close: {other:?}"),
        Err(e) => panic!("closing: {e}"),
    }
    serving.join().expect("server thread");
    assert!(
        began.elapsed() < Duration::from_secs(5),
        "{:?}",
        began.elapsed()
    );
}

/// `/slow` on stream 1 over HTTP/2 (no request with `idle`), then what the server sends
/// until it closes, as lines:
/// the GOAWAY, the answer's body, the close. Frames are read with Python h2's own frame and
/// HPACK layers (hyperframe, hpack): its connection state machine ends everything at a
/// GOAWAY, where RFC 9113 lets the streams below its last id finish.
const H2_CLIENT: &str = r#"
import socket, sys
import hpack, hyperframe.frame as f

sock = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
sock.settimeout(10)
head = hpack.Encoder().encode([(":method", "GET"), (":path", "/slow"), (":scheme", "http"), (":authority", "a")])
request = f.HeadersFrame(1, head)
request.flags.add("END_HEADERS")
request.flags.add("END_STREAM")
start = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + f.SettingsFrame(0).serialize()
sock.sendall(start if sys.argv[2:] == ["idle"] else start + request.serialize())
print("sent", flush=True)
buf = b""
while True:
    data = sock.recv(65536)
    if not data:
        print("closed")
        break
    buf += data
    while len(buf) >= 9:
        frame, length = f.Frame.parse_frame_header(memoryview(buf[:9]))
        if len(buf) < 9 + length:
            break
        frame.parse_body(memoryview(buf[9:9 + length]))
        buf = buf[9 + length:]
        if isinstance(frame, f.GoAwayFrame):
            print(f"GOAWAY {frame.error_code} last {frame.last_stream_id}")
        elif isinstance(frame, f.DataFrame) and frame.data:
            print(f"body {frame.data.decode().strip()}")
"#;

#[test]
fn shutdown_says_goaway_on_http2_and_finishes_the_stream_in_flight() {
    use std::io::BufRead as _;
    use std::process::{Command, Stdio};

    ringwire_testkit::ensure_python_module("h2", "h2");
    let config = ServerConfig::new("127.0.0.1:0".parse().expect("addr"));
    let (addr, stop, serving) = serve_until_stopped(config, Slow);
    let client = |args: &[&str]| {
        let mut child = Command::new("python3")
            .args(["-c", H2_CLIENT, &addr.port().to_string()])
            .args(args)
            .stdout(Stdio::piped())
            .spawn()
            .expect("python3 runs");
        let mut out = std::io::BufReader::new(child.stdout.take().expect("stdout"));
        let mut line = String::new();
        out.read_line(&mut line).expect("read");
        assert_eq!(line, "sent\n");
        (child, out)
    };
    let (mut busy, mut busy_out) = client(&[]);
    let (mut idle, mut idle_out) = client(&["idle"]);
    thread::sleep(Duration::from_millis(100));
    let began = Instant::now();
    stop.send(()).expect("stop");
    // The idle connection: goodbye (no stream taken) and the close, at once.
    let mut rest = String::new();
    idle_out.read_to_string(&mut rest).expect("read");
    assert_eq!(rest, "GOAWAY 0 last 0\nclosed\n");
    assert!(
        began.elapsed() < Duration::from_millis(300),
        "{:?}",
        began.elapsed()
    );
    assert!(idle.wait().expect("python3").success());
    // The busy one: goodbye (stream 1 is the last the server takes), the answer when it is
    // ready, then the close.
    let mut rest = String::new();
    busy_out.read_to_string(&mut rest).expect("read");
    assert!(busy.wait().expect("python3").success());
    assert_eq!(rest, "GOAWAY 0 last 1\nbody done\nclosed\n");
    assert!(
        began.elapsed() < Duration::from_secs(3),
        "{:?}",
        began.elapsed()
    );
    serving.join().expect("server thread");
}
