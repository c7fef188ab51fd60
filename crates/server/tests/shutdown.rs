//! Graceful shutdown: stop accepting, close idle connections, finish
//! requests in flight, say goodbye on WebSockets.

use std::io::{Read as _, Write as _};
use std::net::TcpStream;
use std::thread;
use std::time::{Duration, Instant};

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
