//! Clients that misbehave: ones that reset mid-request, and ones that stop
//! reading their answers. The server stays bounded, drops them, and goes on
//! serving everyone else.

mod common;

use std::io::{ErrorKind, Read as _, Write as _};
use std::net::{SocketAddr, TcpStream};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::thread;
use std::time::{Duration, Instant};

use common::{curl_text, start};
use ringwire_server::{Body, Handler, Request, Response, ServerConfig};

/// 64 KiB for `/big`, 8 MiB for `/huge`, `ok` otherwise.
struct Sizes;

static BIG: [u8; 64 << 10] = [b'b'; 64 << 10];

impl Handler for Sizes {
    async fn call(&self, request: &Request<'_>) -> Response {
        match request.target().path() {
            b"/big" => Response::new(200).body(Body::Static(&BIG)),
            b"/huge" => Response::new(200).body(vec![b'h'; 8 << 20]),
            _ => Response::text("ok"),
        }
    }
}

/// Closes `stream` with a reset rather than a FIN.
fn reset(stream: TcpStream) {
    socket2::SockRef::from(&stream)
        .set_linger(Some(Duration::ZERO))
        .expect("linger");
    drop(stream);
}

fn still_serves(addr: SocketAddr) {
    assert_eq!(curl_text(&[&format!("http://{addr}/")]), "ok");
}

#[test]
fn clients_that_reset_mid_request_are_dropped_quietly() {
    let addr = start(ServerConfig::default(), Sizes);
    for partial in [
        &b"GET /big HTTP/1.1\r\nHost: x\r\nAcc"[..],
        b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\nonly some",
        b"POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n10\r\nabc",
    ] {
        let mut stream = TcpStream::connect(addr).expect("connect");
        stream.write_all(partial).expect("write");
        thread::sleep(Duration::from_millis(50));
        reset(stream);
        still_serves(addr);
    }
    // Reset while an 8 MiB answer is on its way out.
    let mut stream = TcpStream::connect(addr).expect("connect");
    stream
        .write_all(b"GET /huge HTTP/1.1\r\nHost: x\r\n\r\n")
        .expect("write");
    let mut first = [0; 4096];
    let n = stream.read(&mut first).expect("read");
    assert!(first[..n].starts_with(b"HTTP/1.1 200 OK\r\n"));
    reset(stream);
    still_serves(addr);
}

#[test]
fn a_client_that_stops_reading_is_held_then_dropped() {
    let mut config = ServerConfig::default();
    config.timeouts.send_stall = Duration::from_secs(1);
    let addr = start(config, Sizes);
    // Pipelined requests for 64 KiB answers, never read.
    let mut stream = TcpStream::connect(addr).expect("connect");
    stream.set_nonblocking(true).expect("nonblocking");
    let request = b"GET /big HTTP/1.1\r\nHost: x\r\n\r\n";
    let written = AtomicUsize::new(0);
    let start = Instant::now();
    let mut blocked_since: Option<Instant> = None;
    let dropped = loop {
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "the server never dropped the stalled client"
        );
        match stream.write(request) {
            Ok(n) => {
                written.fetch_add(n, Ordering::Relaxed);
                blocked_since = None;
            }
            Err(e) if e.kind() == ErrorKind::WouldBlock => {
                // The server stopped reading: its answers are stuck.
                blocked_since.get_or_insert_with(Instant::now);
                thread::sleep(Duration::from_millis(10));
            }
            Err(e) => break e,
        }
        if let Some(since) = blocked_since {
            if since.elapsed() > Duration::from_millis(500) {
                // Meanwhile everyone else is served.
                still_serves(addr);
            }
        }
    };
    let written = written.into_inner();
    println!(
        "a stalled client got {written} bytes of requests in ({} answers' worth) before {dropped}",
        written / request.len()
    );
    assert!(
        matches!(
            dropped.kind(),
            ErrorKind::ConnectionReset | ErrorKind::BrokenPipe
        ),
        "{dropped}"
    );
    // The server read only what its buffers and the kernel's hold: not the
    // client's whole stream (it would have taken gigabytes by now).
    assert!(
        written < 64 << 20,
        "{written} bytes accepted from a client that reads nothing"
    );
    still_serves(addr);
}
