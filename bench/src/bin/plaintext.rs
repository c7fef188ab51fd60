//! One HTTP/1.1 answer (`200`, `Hello, World!`) on one thread, over either I/O driver:
//! `--driver uring` (ringwire-io's io_uring driver: every socket's receive and send in one
//! `io_uring_enter` per turn) or `--driver tokio` (readiness on a current-thread runtime, one
//! task per connection, as `ringwire-server` runs). The codec and the answer are the same code,
//! so a load run against each (`bench/scripts/drivers.sh`) measures the driver alone.
//!
//! `plaintext --driver uring|tokio [--addr 127.0.0.1:18090]`: serves until killed. A request
//! with a body is answered and the connection closed, its body unread (the load sends none);
//! a malformed one gets `400` and the close.

use std::net::TcpListener;
use std::time::SystemTime;

use ringwire_http1::encode::{DateCache, ResponseWriter};
use ringwire_http1::{BodyKind, Limits, RequestParser, Status, Version};
use ringwire_io::{Ring, TransportConfig};

const BODY: &[u8] = b"Hello, World!";

/// Rings of 16 KiB, as the server's defaults for HTTP/1.1 start.
fn config() -> TransportConfig {
    TransportConfig::new(16 << 10, 1 << 20)
}

fn main() {
    let mut args = std::env::args().skip(1);
    let (mut driver, mut addr) = (String::from("uring"), String::from("127.0.0.1:18090"));
    while let Some(arg) = args.next() {
        let value = args.next().unwrap_or_else(|| usage());
        match arg.as_str() {
            "--driver" => driver = value,
            "--addr" => addr = value,
            _ => usage(),
        }
    }
    let listener = TcpListener::bind(&addr).unwrap_or_else(|e| fail(&format!("{addr}: {e}")));
    println!("{driver} http://{addr}/plaintext");
    let result = match driver.as_str() {
        "uring" => uring::serve(listener),
        "tokio" => tokio::serve(listener),
        _ => usage(),
    };
    if let Err(e) = result {
        fail(&e.to_string());
    }
}

fn usage() -> ! {
    fail("usage: plaintext [--driver uring|tokio] [--addr HOST:PORT]")
}

fn fail(message: &str) -> ! {
    eprintln!("plaintext: {message}");
    std::process::exit(2)
}

/// Answers every whole request at the front of `rx` into `tx`. Returns the bytes of `rx` used,
/// and whether the connection is to close after what `tx` holds.
fn answer(parser: &mut RequestParser, date: &DateCache, rx: &[u8], tx: &mut Ring) -> (usize, bool) {
    let mut used = 0;
    loop {
        let (keep_alive, len) = match parser.parse(&rx[used..]) {
            Ok(Status::Complete(request, len)) => {
                let bodiless = matches!(request.body(), BodyKind::Empty);
                (request.keep_alive() && bodiless, len)
            }
            Ok(Status::Partial { .. }) => return (used, false),
            Err(_) => {
                respond(date, tx, 400, b"");
                return (rx.len(), true);
            }
        };
        used += len;
        respond(date, tx, 200, BODY);
        if !keep_alive {
            return (used, true);
        }
    }
}

fn respond(date: &DateCache, tx: &mut Ring, status: u16, body: &[u8]) {
    let room = tx.reserve(256 + body.len()).expect("room for one answer");
    let mut head = ResponseWriter::new(room, Version::Http11, status, None).expect("a status");
    head.date(date).expect("room");
    head.header("server", "ringwire").expect("room");
    head.header("content-type", "text/plain").expect("room");
    head.content_length(body.len() as u64).expect("room");
    let len = head.finish().expect("room");
    room[len..len + body.len()].copy_from_slice(body);
    tx.commit(len + body.len());
}

mod uring {
    use super::*;
    use ringwire_io::uring::{Conn, Driver, Event};

    pub(super) fn serve(listener: TcpListener) -> Result<(), Box<dyn std::error::Error>> {
        let mut driver = Driver::new(1024, config())?;
        driver.listen(listener)?;
        // Each connection's parser, and whether it closes once its last answer is out.
        let mut parsers: Vec<(RequestParser, bool)> = Vec::new();
        let mut date = DateCache::new();
        loop {
            driver.wait(None)?;
            date.update(SystemTime::now());
            while let Some(event) = driver.next_event() {
                let conn = match event {
                    Event::Accepted(conn) => {
                        let socket = driver.socket(conn).expect("open");
                        set_nodelay(socket);
                        let fresh = || (RequestParser::new(Limits::default()), false);
                        if parsers.len() <= conn.index() {
                            parsers.resize_with(conn.index() + 1, fresh);
                        }
                        parsers[conn.index()] = fresh();
                        conn
                    }
                    Event::Received(conn, 0) | Event::Failed(conn, ..) => {
                        driver.close(conn)?;
                        continue;
                    }
                    Event::Received(conn, _) | Event::Sent(conn) => conn,
                    Event::AcceptFailed(e) => return Err(e.into()),
                    // It connects to nothing.
                    Event::Connected(_) | Event::Closed { .. } => continue,
                };
                let (parser, closing) = &mut parsers[conn.index()];
                turn(&mut driver, conn, parser, closing, &date)?;
            }
        }
    }

    /// Whatever a connection can do now that a transfer came back: answer what it holds
    /// (unless a send holds the send ring), send, and receive again.
    fn turn(
        driver: &mut Driver,
        conn: Conn,
        parser: &mut RequestParser,
        closing: &mut bool,
        date: &DateCache,
    ) -> Result<(), Box<dyn std::error::Error>> {
        let rings = driver.rings(conn).expect("open");
        let (Some(rx), Some(tx)) = (rings.rx, rings.tx) else {
            return Ok(());
        };
        if *closing {
            // Its last answer went out.
            return Ok(driver.close(conn)?);
        }
        let (used, close) = answer(parser, date, rx.readable(), tx);
        rx.consume(used);
        let pending = !tx.is_empty();
        *closing = close;
        if pending {
            driver.send(conn)?;
        }
        if !close {
            driver.recv(conn, 1)?;
        } else if !pending {
            driver.close(conn)?;
        }
        Ok(())
    }

    fn set_nodelay(socket: std::os::fd::BorrowedFd<'_>) {
        // A socket2 view of the descriptor, only to set the option.
        let socket = socket2::SockRef::from(&socket);
        socket.set_tcp_nodelay(true).expect("TCP_NODELAY");
    }
}

mod tokio {
    use super::*;
    use ringwire_io::tokio::{AsyncRecvTransport, AsyncSendTransport};

    pub(super) fn serve(listener: TcpListener) -> Result<(), Box<dyn std::error::Error>> {
        listener.set_nonblocking(true)?;
        let runtime = ::tokio::runtime::Builder::new_current_thread()
            .enable_io()
            .build()?;
        runtime.block_on(async {
            let listener = ::tokio::net::TcpListener::from_std(listener)?;
            loop {
                let (socket, _) = listener.accept().await?;
                socket.set_nodelay(true)?;
                ::tokio::spawn(async move {
                    let _ = connection(socket).await;
                });
            }
        })
    }

    async fn connection(
        socket: ::tokio::net::TcpStream,
    ) -> Result<(), ringwire_io::TransportError> {
        let mut rx = AsyncRecvTransport::new(config(), &socket)?;
        let mut tx = AsyncSendTransport::new(config(), &socket)?;
        let mut parser = RequestParser::new(Limits::default());
        let mut date = DateCache::new();
        loop {
            if rx.fill(1).await? == 0 {
                return Ok(());
            }
            date.update(SystemTime::now());
            let (used, close) = answer(&mut parser, &date, rx.data(), tx.ring_mut());
            rx.consume(used);
            tx.flush().await?;
            if close {
                return Ok(());
            }
        }
    }
}
