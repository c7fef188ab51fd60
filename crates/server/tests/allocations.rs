//! The hot path allocates nothing: a keep-alive connection answering one
//! request after another (parse in the ring, handler, encode into the send
//! ring) makes no heap allocation per request.
//!
//! A counting global allocator sees every thread of this process, the
//! client's too, so the client reads and writes with buffers made before
//! counting starts, and the tests take turns.

mod common;

use std::alloc::{GlobalAlloc, Layout, System};
use std::io::{Read as _, Write as _};
use std::net::TcpStream;
use std::sync::atomic::{AtomicUsize, Ordering};

use common::start;
use ringwire_server::{Body, Handler, Request, Response, ServerConfig};

struct Counting;

static ALLOCATIONS: AtomicUsize = AtomicUsize::new(0);

// SAFETY: forwards to the system allocator unchanged; only counts.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: the caller upholds `GlobalAlloc::alloc`'s contract.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` came from `System.alloc` with this layout.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: the caller upholds `GlobalAlloc::realloc`'s contract.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// Held by each test: one counts while no other runs.
static TURN: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn turn() -> std::sync::MutexGuard<'static, ()> {
    TURN.lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// A typical small answer: a header field and a static body.
struct Hello;

impl Handler for Hello {
    async fn call(&self, request: &Request<'_>) -> Response {
        let body: &'static [u8] = if request.target().path() == b"/hello" {
            b"Hello, World!"
        } else {
            b"?"
        };
        Response::new(200)
            .header("content-type", "text/plain")
            .body(Body::Static(body))
    }
}

const REQUEST: &[u8] =
    b"GET /hello HTTP/1.1\r\nHost: localhost\r\nUser-Agent: test\r\nAccept: */*\r\n\r\n";

/// Sends one request and reads its whole answer into `buf`.
fn ask(stream: &mut TcpStream, buf: &mut [u8]) {
    stream.write_all(REQUEST).expect("write");
    let mut have = 0;
    loop {
        let n = stream.read(&mut buf[have..]).expect("read");
        assert!(n > 0, "server closed");
        have += n;
        if buf[..have].ends_with(b"Hello, World!") {
            return;
        }
    }
}

#[test]
fn answering_a_request_allocates_nothing() {
    let _turn = turn();
    let addr = start(ServerConfig::default(), Hello);
    let mut stream = TcpStream::connect(addr).expect("connect");
    stream.set_nodelay(true).expect("nodelay");
    let mut buf = vec![0; 4096];
    // Warm up: the connection's rings, parser and caches, the runtime.
    for _ in 0..200 {
        ask(&mut stream, &mut buf);
    }
    let requests = 2000;
    let before = ALLOCATIONS.load(Ordering::Relaxed);
    for _ in 0..requests {
        ask(&mut stream, &mut buf);
    }
    let allocations = ALLOCATIONS.load(Ordering::Relaxed) - before;
    println!("{allocations} allocations in {requests} requests");
    // Not one per request; a few from the runtime's own bookkeeping (the
    // timeout sweeper's tick) are allowed.
    assert!(
        allocations < requests / 100,
        "{allocations} allocations in {requests} requests"
    );
}

#[test]
fn a_cached_static_file_allocates_nothing() {
    let _turn = turn();
    let dir = tempfile::tempdir().expect("dir");
    std::fs::write(dir.path().join("index.html"), "<h1>Hello, World!</h1>").expect("write");
    let files = ringwire_server::files::StaticFiles::new(dir.path().to_path_buf()).expect("root");
    let addr = start(ServerConfig::default(), files);
    let mut stream = TcpStream::connect(addr).expect("connect");
    stream.set_nodelay(true).expect("nodelay");
    let request = b"GET /index.html HTTP/1.1\r\nHost: localhost\r\n\r\n";
    let mut buf = vec![0; 4096];
    let mut ask = |stream: &mut TcpStream| {
        stream.write_all(request).expect("write");
        let mut have = 0;
        while !buf[..have].ends_with(b"</h1>") {
            let n = stream.read(&mut buf[have..]).expect("read");
            assert!(n > 0, "server closed");
            have += n;
        }
    };
    for _ in 0..200 {
        ask(&mut stream);
    }
    let requests = 2000;
    let before = ALLOCATIONS.load(Ordering::Relaxed);
    for _ in 0..requests {
        ask(&mut stream);
    }
    let allocations = ALLOCATIONS.load(Ordering::Relaxed) - before;
    println!("{allocations} allocations in {requests} file requests");
    // The open-file cache reloads each entry once a second.
    assert!(
        allocations < requests / 100,
        "{allocations} allocations in {requests} requests"
    );
}

/// Asks `/hello` over HTTP/2 on `conn` (a client connection over `stream`)
/// and reads the answer to its end; `buf` holds what is read.
fn ask_h2(conn: &mut ringwire_http2::Connection, stream: &mut TcpStream, buf: &mut Vec<u8>) {
    use ringwire_http2::Event;
    let id = conn
        .send_request(
            b"GET",
            b"http",
            b"localhost",
            b"/hello",
            [(&b"user-agent"[..], &b"test"[..]), (b"accept", b"*/*")],
            true,
        )
        .expect("a stream");
    let mut ended = false;
    while !ended {
        while !conn.transmit().is_empty() {
            stream.write_all(conn.transmit()).expect("write");
            conn.advance(conn.transmit().len());
        }
        let have = buf.len();
        buf.resize(buf.capacity(), 0);
        let read = stream.read(&mut buf[have..]).expect("read");
        assert!(read > 0, "server closed");
        buf.truncate(have + read);
        loop {
            let (used, event) = conn.recv(buf).expect("a valid frame");
            let mut release = None;
            match event {
                Some(Event::Data {
                    stream,
                    data,
                    end_stream,
                }) => {
                    assert_eq!(stream, id);
                    assert_eq!(data, b"Hello, World!");
                    release = Some(data.len());
                    ended |= end_stream;
                }
                Some(Event::Response {
                    status, end_stream, ..
                }) => {
                    assert_eq!(status, 200);
                    ended |= end_stream;
                }
                _ => {}
            }
            if let Some(n) = release {
                conn.release(id, n);
            }
            if used == 0 {
                break;
            }
            buf.drain(..used);
        }
    }
}

#[test]
fn answering_a_request_over_http2_allocates_nothing() {
    let _turn = turn();
    let addr = start(ServerConfig::default(), Hello);
    let mut stream = TcpStream::connect(addr).expect("connect");
    stream.set_nodelay(true).expect("nodelay");
    let mut conn = ringwire_http2::Connection::client(ringwire_http2::Config::default());
    let mut buf = Vec::with_capacity(64 << 10);
    // Warm: past what a connection keeps (its last 128 closed streams).
    for _ in 0..300 {
        ask_h2(&mut conn, &mut stream, &mut buf);
    }
    let requests = 2000;
    let before = ALLOCATIONS.load(Ordering::Relaxed);
    for _ in 0..requests {
        ask_h2(&mut conn, &mut stream, &mut buf);
    }
    let allocations = ALLOCATIONS.load(Ordering::Relaxed) - before;
    println!("{allocations} allocations in {requests} HTTP/2 requests");
    assert!(
        allocations < requests / 100,
        "{allocations} allocations in {requests} requests"
    );
}
