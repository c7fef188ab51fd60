//! Both clients on a Unix socket whose listener's queue is full: a connect waits for room
//! (as a blocking `connect(2)` does) within the connect timeout, instead of failing at once.

use std::io::{Read, Write};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use ringwire_client::{blocking, tokio as async_client, ClientConfig, Error, Phase};
use ringwire_client::{RequestBuffer, Url};
use socket2::{Domain, SockAddr, Socket, Type};

/// A listener at `path` that accepts nothing until asked, and the connections that fill its
/// queue (a further nonblocking connect is refused with `EAGAIN`).
fn full_listener(path: &Path) -> (UnixListener, Vec<Socket>) {
    let socket = Socket::new(Domain::UNIX, Type::STREAM, None).unwrap();
    socket.bind(&SockAddr::unix(path).unwrap()).unwrap();
    socket.listen(0).unwrap();
    let mut queued = Vec::new();
    loop {
        let filler = Socket::new(Domain::UNIX, Type::STREAM, None).unwrap();
        filler.set_nonblocking(true).unwrap();
        match filler.connect(&SockAddr::unix(path).unwrap()) {
            Ok(()) => queued.push(filler),
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => break,
            Err(e) => panic!("filling the queue: {e}"),
        }
        assert!(queued.len() < 64, "the queue never filled");
    }
    (socket.into(), queued)
}

/// Answers every connection `listener` accepts, from `after` on, with one short response.
fn serve_after(listener: UnixListener, after: Duration) {
    std::thread::spawn(move || {
        std::thread::sleep(after);
        for conn in listener.incoming() {
            let Ok(conn) = conn else { return };
            std::thread::spawn(move || answer(conn));
        }
    });
}

fn answer(mut conn: UnixStream) {
    let mut head = Vec::new();
    let mut byte = [0; 1];
    while !head.ends_with(b"\r\n\r\n") {
        match conn.read(&mut byte) {
            Ok(1) => head.push(byte[0]),
            _ => return,
        }
    }
    let _ = conn.write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok");
}

fn socket_path(dir: &tempfile::TempDir) -> PathBuf {
    dir.path().join("queue.sock")
}

fn config(connect: Duration) -> ClientConfig {
    ClientConfig {
        connect_timeout: Some(connect),
        ..ClientConfig::default()
    }
}

fn blocking_get(path: &Path, connect: Duration) -> Result<Vec<u8>, Error> {
    let client = blocking::Client::new(config(connect)).unix_socket(path);
    let mut buffer = RequestBuffer::new().unwrap();
    let url = Url::parse("http://localhost/").unwrap();
    let request = buffer.request("GET", &url)?.headers()?.finish()?;
    let mut response = client.send(&mut buffer, &request)?;
    response.bytes()
}

fn tokio_get(path: &Path, connect: Duration) -> Result<Vec<u8>, Error> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let client = async_client::Client::new(config(connect)).unix_socket(path);
        let mut buffer = RequestBuffer::new().unwrap();
        let url = Url::parse("http://localhost/").unwrap();
        let request = buffer.request("GET", &url)?.headers()?.finish()?;
        let mut response = client.send(&mut buffer, &request).await?;
        response.bytes().await
    })
}

type Get = fn(&Path, Duration) -> Result<Vec<u8>, Error>;

#[test]
fn a_full_queue_is_waited_on_until_the_connect_timeout() {
    for (name, get) in [("blocking", blocking_get as Get), ("tokio", tokio_get)] {
        let dir = tempfile::tempdir().unwrap();
        let path = socket_path(&dir);
        let (_listener, _queued) = full_listener(&path);
        let started = Instant::now();
        let err = get(&path, Duration::from_millis(300)).unwrap_err();
        let waited = started.elapsed();
        assert!(
            matches!(err, Error::Timeout(Phase::Connect)),
            "{name}: {err:?}"
        );
        assert!(
            waited >= Duration::from_millis(250) && waited < Duration::from_secs(5),
            "{name}: gave up after {waited:?}"
        );
    }
}

#[test]
fn a_full_queue_that_drains_lets_the_request_through() {
    for (name, get) in [("blocking", blocking_get as Get), ("tokio", tokio_get)] {
        let dir = tempfile::tempdir().unwrap();
        let path = socket_path(&dir);
        let (listener, _queued) = full_listener(&path);
        serve_after(listener, Duration::from_millis(200));
        let started = Instant::now();
        let body = get(&path, Duration::from_secs(10)).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(body, b"ok", "{name}");
        assert!(
            started.elapsed() >= Duration::from_millis(150),
            "{name}: the queue was not full"
        );
    }
}
