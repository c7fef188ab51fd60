//! WebSocket upgrades on the server against real clients: tungstenite
//! (Rust), Python's `websockets` and ringwire-ws's blocking client (with
//! permessage-deflate). npm's `ws` is in `npm_ws.rs`.

mod common;

use ringwire_ws::handshake::Offer;
use std::net::SocketAddr;
use std::process::Command;

use common::{python, start};
use ringwire_server::ws;
use ringwire_server::{Router, ServerConfig};

fn server() -> SocketAddr {
    start(
        ServerConfig::default(),
        Router::new().get("/ws/echo", ws::echo),
    )
}

#[test]
fn tungstenite_echoes_text_binary_and_pings() {
    use tungstenite::Message as T;

    let addr = server();
    let (mut socket, response) =
        tungstenite::connect(format!("ws://{addr}/ws/echo")).expect("handshake");
    assert_eq!(response.status(), 101);
    socket.send(T::text("hello")).expect("send");
    assert_eq!(socket.read().expect("read"), T::text("hello"));
    let big: Vec<u8> = (0..1_000_000u32).map(|i| (i % 251) as u8).collect();
    socket.send(T::binary(big.clone())).expect("send");
    assert_eq!(socket.read().expect("read"), T::binary(big));
    socket
        .send(T::Ping(b"are you there".to_vec().into()))
        .expect("ping");
    assert_eq!(
        socket.read().expect("read"),
        T::Pong(b"are you there".to_vec().into())
    );
    socket.close(None).expect("close");
    // The server answers the close, then the connection ends.
    loop {
        match socket.read() {
            Ok(T::Close(_)) => {}
            Ok(other) => panic!("after close: {other:?}"),
            Err(tungstenite::Error::ConnectionClosed) => break,
            Err(e) => panic!("closing: {e}"),
        }
    }
}

/// A message that grows the receive ring past 1 MiB: the ring gives its pages back
/// while the client is quiet, and what comes after (small, then large again) is intact.
#[test]
fn messages_after_a_large_one_survive_the_ring_giving_its_pages_back() {
    use tungstenite::Message as T;

    let addr = server();
    let (mut socket, _) = tungstenite::connect(format!("ws://{addr}/ws/echo")).expect("handshake");
    let large = |seed: u32| -> Vec<u8> {
        (0..3_000_000u32)
            .map(|i| ((i ^ seed) % 253) as u8)
            .collect()
    };
    for message in [
        T::binary(large(1)),
        T::text("small"),
        T::binary(large(2)),
        T::binary(vec![5; 70_000]),
    ] {
        socket.send(message.clone()).expect("send");
        // Quiet long enough for the server to wait (and release) before the next.
        assert_eq!(socket.read().expect("echo"), message);
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

#[test]
fn a_plain_request_to_a_websocket_route_is_refused() {
    let addr = server();
    let out = common::curl_text(&[
        "-s",
        "-o",
        "/dev/null",
        "-w",
        "%{http_code}",
        &format!("http://{addr}/ws/echo"),
    ]);
    assert_eq!(out, "426");
}

const PYTHON_CLIENT: &str = r#"
import asyncio, sys
from websockets.asyncio.client import connect

async def main(url):
    async with connect(url, max_size=None) as ws:
        ext = ws.response.headers.get("Sec-WebSocket-Extensions", "")
        assert "permessage-deflate" in ext, ext
        text = "ringwire " * 50000
        await ws.send(text)
        assert await ws.recv() == text
        blob = bytes(range(256)) * 4096
        await ws.send(blob)
        assert await ws.recv() == blob
        for i in range(100):
            await ws.send(f"message {i}")
        for i in range(100):
            assert await ws.recv() == f"message {i}"
    print("ok")

asyncio.run(main(sys.argv[1]))
"#;

#[test]
fn python_websockets_with_compression() {
    ringwire_testkit::ensure_python_module("websockets", "websockets");
    let addr = server();
    assert_eq!(
        python(PYTHON_CLIENT, &[&format!("ws://{addr}/ws/echo")]),
        "ok\n"
    );
}

const PYTHON_SERVER: &str = r#"
import asyncio
from websockets.asyncio.server import serve

async def echo(ws):
    async for message in ws:
        await ws.send(message)

async def main():
    async with serve(echo, "127.0.0.1", 0, max_size=None) as server:
        print(server.sockets[0].getsockname()[1], flush=True)
        await asyncio.sleep(30)

asyncio.run(main())
"#;

/// ringwire's client socket (with permessage-deflate) against Python's
/// websockets server.
#[test]
fn the_client_socket_against_python_websockets() {
    use std::io::{BufRead as _, BufReader};

    use ringwire_server::ws::{CloseCode, DeflateConfig, Message};

    ringwire_testkit::ensure_python_module("websockets", "websockets");
    let mut child = Command::new("python3")
        .args(["-c", PYTHON_SERVER])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("python3 runs");
    let mut port = String::new();
    BufReader::new(child.stdout.take().expect("stdout"))
        .read_line(&mut port)
        .expect("port");
    let addr = format!("127.0.0.1:{}", port.trim());
    common::runtime().block_on(async {
        let (mut socket, negotiated) =
            common::ws_client(&addr, "/", Some(DeflateConfig::default()), 16 << 20).await;
        assert!(negotiated.deflate.is_some(), "permessage-deflate agreed");
        let text = "compressible ".repeat(20_000);
        let blob: Vec<u8> = (0..300_000u32).map(|i| (i % 253) as u8).collect();
        for message in [
            Message::Text(&text),
            Message::Binary(&blob),
            Message::Text("short"),
        ] {
            socket.send(&message).await.expect("send");
            let (echoed, _) = socket.recv().await.expect("open").expect("echo");
            assert_eq!(echoed, message);
        }
        socket
            .close(CloseCode::NORMAL, "done")
            .await
            .expect("close");
        while let Some(received) = socket.recv().await {
            received.expect("closing handshake");
        }
    });
    let _ = child.kill();
    let _ = child.wait();
}

/// ringwire-ws's blocking client socket (feature `blocking`) against the
/// server, with permessage-deflate, up to a 16 MiB message.
#[test]
fn the_blocking_client_socket_with_compression() {
    use ringwire_io::{Duplex, TransportConfig};
    use ringwire_server::ws::{CloseCode, DeflateConfig, Limits, Message};
    use ringwire_ws::blocking::WebSocket;

    let addr = server().to_string();
    let stream = std::net::TcpStream::connect(&addr).expect("connect");
    let Duplex { rx, tx } =
        Duplex::tcp(TransportConfig::new(64 << 10, 32 << 20), &stream).expect("rings");
    let (mut socket, negotiated) = WebSocket::connect(
        rx,
        tx,
        &addr,
        "/ws/echo",
        &Offer {
            deflate: Some(DeflateConfig::default()),
            ..Offer::default()
        },
        Limits::default(),
    )
    .expect("handshake");
    assert!(negotiated.deflate.is_some(), "permessage-deflate agreed");
    let text = "compressible ".repeat(80_000);
    let blob: Vec<u8> = (0..16u32 << 20)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 24) as u8)
        .collect();
    for message in [
        Message::Text(&text),
        Message::Binary(&blob),
        Message::Binary(&blob[..300_000]),
        Message::Text(""),
        Message::Text("short"),
    ] {
        socket.send(&message).expect("send");
        let (echoed, _) = socket.recv().expect("open").expect("echo");
        assert!(echoed == message, "the echo differs");
    }
    socket.send(&Message::Ping(b"there?")).expect("ping");
    assert_eq!(
        socket.recv().expect("open").expect("pong").0,
        Message::Pong(b"there?")
    );
    socket.close(CloseCode::NORMAL, "done").expect("close");
    while let Some(received) = socket.recv() {
        received.expect("closing handshake");
    }
}

/// The blocking client socket over TLS (`BlockingTlsStream::split` gives the receive and
/// send transports their halves) against the server's WSS: echoes, then the closing
/// handshake, ended with `close_notify` both ways.
#[test]
fn the_blocking_client_socket_over_wss() {
    use ringwire_io::{RecvTransport, SendTransport, TransportConfig};
    use ringwire_server::ws::{CloseCode, Limits, Message};
    use ringwire_ws::blocking::WebSocket;

    let (cert, key) = ringwire_tls::self_signed(&["localhost"]).expect("certificate");
    let config = ringwire_tls::ServerConfig::from_pem(&cert, &key)
        .expect("PEM")
        .alpn(&[b"http/1.1"]);
    let acceptor = ringwire_tls::TlsAcceptor::new(&config).expect("acceptor");
    let addr = common::start_tls(
        ServerConfig::default(),
        Router::new().get("/ws/echo", ws::echo),
        acceptor,
    );
    let client = ringwire_tls::ClientConfig::default()
        .add_root_pem(&cert)
        .alpn(&[b"http/1.1"]);
    let connector = ringwire_tls::TlsConnector::new(&client).expect("connector");
    let tcp = std::net::TcpStream::connect(addr).expect("connect");
    let tls = connector.connect_blocking("localhost", tcp).expect("TLS");
    let (read, write) = tls.split();
    let config = TransportConfig::new(64 << 10, 32 << 20);
    let (mut socket, _) = WebSocket::connect(
        RecvTransport::new(config, read).expect("ring"),
        SendTransport::new(config, write).expect("ring"),
        "localhost",
        "/ws/echo",
        &Offer::default(),
        Limits::default(),
    )
    .expect("handshake");
    let big = vec![7u8; 1 << 20];
    for message in [Message::Text("over TLS"), Message::Binary(&big)] {
        socket.send(&message).expect("send");
        let (echoed, _) = socket.recv().expect("open").expect("echo");
        assert!(echoed == message, "the echo differs");
    }
    socket.close(CloseCode::NORMAL, "done").expect("close");
    while let Some(received) = socket.recv() {
        received.expect("closing handshake");
    }
}

/// Queued messages: the client queues a thousand without flushing, then reads; `recv` sends
/// the queue before it waits, the server's echo queues its answers the same way, and every
/// echo comes back in order. (Without the flush before waiting both ends would wait forever;
/// the timeout turns that into a failure.)
#[test]
fn queued_messages_go_out_before_the_socket_waits() {
    use ringwire_server::ws::Message;

    let addr = server().to_string();
    common::runtime().block_on(async {
        let (mut socket, _) = common::ws_client(&addr, "/ws/echo", None, 16 << 20).await;
        let n = 1000;
        let round = async {
            for i in 0..n {
                let text = format!("message {i}");
                socket.queue(&Message::Text(&text)).await.expect("queue");
            }
            for i in 0..n {
                let (echoed, _) = socket.recv().await.expect("open").expect("echo");
                assert_eq!(echoed, Message::Text(&format!("message {i}")));
            }
        };
        tokio::time::timeout(std::time::Duration::from_secs(10), round)
            .await
            .expect("queued messages never went out");
        socket.send(&Message::Text("last")).await.expect("send");
        let (echoed, _) = socket.recv().await.expect("open").expect("echo");
        assert_eq!(echoed, Message::Text("last"));
    });
}

/// A client failed for a frame past the limit while more of it is still on its way: the
/// server's `1009` close reaches it, followed by a clean end, not a reset that may destroy
/// the close (the server drains what is left before it closes the socket).
#[test]
fn a_close_after_an_error_is_not_destroyed_by_a_reset() {
    use std::io::{Read as _, Write as _};
    use std::net::Shutdown;

    let mut stream = raw_upgrade(server(), "/ws/echo");
    // A masked binary frame of 1 GiB (past every default limit), and 4 MiB of it: more
    // than the server reads before it fails the connection. It drains the rest rather
    // than reset the connection (which fails this write, and may destroy the close).
    let mut frame = vec![0x82, 0xff];
    frame.extend_from_slice(&(1u64 << 30).to_be_bytes());
    frame.extend_from_slice(&[1, 2, 3, 4]);
    frame.resize(4 << 20, 0x55);
    stream.write_all(&frame).expect("drained, not reset");
    stream.shutdown(Shutdown::Write).expect("half-close");
    let mut answer = Vec::new();
    stream.read_to_end(&mut answer).expect("a clean end");
    // A close frame (any reason) whose code is 1009, and nothing after it.
    assert_eq!(answer[0], 0x88, "{answer:?}");
    assert_eq!(usize::from(answer[1]) + 2, answer.len(), "{answer:?}");
    assert_eq!(answer[2..4], 1009u16.to_be_bytes(), "{answer:?}");
}

/// A raw socket upgraded to a WebSocket at `path` (no extension offered), read timeout 20 s.
fn raw_upgrade(addr: SocketAddr, path: &str) -> std::net::TcpStream {
    use std::io::{Read as _, Write as _};

    let mut stream = std::net::TcpStream::connect(addr).expect("connect");
    stream
        .set_read_timeout(Some(std::time::Duration::from_secs(20)))
        .expect("timeout");
    let request = format!(
        "GET {path} HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
         Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
    );
    stream.write_all(request.as_bytes()).expect("upgrade");
    let mut head = Vec::new();
    let mut byte = [0];
    while !head.ends_with(b"\r\n\r\n") {
        stream.read_exact(&mut byte).expect("101");
        head.push(byte[0]);
    }
    assert!(head.starts_with(b"HTTP/1.1 101"), "{head:?}");
    stream
}

/// A chat room: each socket waits for its client's messages and for what the room says at
/// once (`tokio::select!` over `recv` and a broadcast channel), the shape of every push
/// service. `recv` is cancel-safe: dropped while a frame is half received, it loses
/// nothing, and the next call finishes the frame.
mod chat {
    use std::future::Future;
    use std::io::{Read as _, Write as _};
    use std::time::Duration;

    use ringwire_http1::Method;
    use ringwire_server::ws::{self, Message, WebSocket, WsConfig};
    use ringwire_server::{Handler, Request, Response, Router, ServerConfig};
    use tokio::sync::broadcast::{self, error::RecvError};

    struct Room(broadcast::Sender<String>);

    impl Handler for Room {
        fn call<'a>(
            &'a self,
            request: &'a Request<'a>,
        ) -> impl Future<Output = Response> + Send + 'a {
            let room = self.0.clone();
            async move {
                ws::accept(request, &WsConfig::default(), move |socket| {
                    Box::pin(member(socket, room))
                })
            }
        }
    }

    async fn member(mut socket: WebSocket<'_>, room: broadcast::Sender<String>) {
        let mut heard = room.subscribe();
        loop {
            tokio::select! {
                received = socket.recv() => match received {
                    Some(Ok((Message::Text(text), _))) => {
                        let _ = room.send(text.to_owned());
                    }
                    Some(Ok(_)) => {}
                    Some(Err(_)) | None => break,
                },
                said = heard.recv() => match said {
                    Ok(text) => {
                        if socket.send(&Message::Text(&text)).await.is_err() {
                            break;
                        }
                    }
                    Err(RecvError::Lagged(_)) => {}
                    Err(RecvError::Closed) => break,
                },
            }
        }
    }

    /// One unmasked text frame from the server, read off a raw socket.
    fn read_text(stream: &mut std::net::TcpStream) -> String {
        let mut head = [0; 2];
        stream.read_exact(&mut head).expect("frame head");
        assert_eq!(head[0], 0x81, "a whole text frame");
        let mut payload = vec![0; usize::from(head[1])];
        stream.read_exact(&mut payload).expect("payload");
        String::from_utf8(payload).unwrap()
    }

    #[test]
    fn messages_pushed_while_a_frame_is_half_received() {
        use tungstenite::Message as T;

        let (room, _) = broadcast::channel(16);
        let addr = super::common::start(
            ServerConfig::default(),
            Router::new().route(Method::Get, "/chat", Room(room)),
        );
        let mut b = super::raw_upgrade(addr, "/chat");
        let (mut a, _) = tungstenite::connect(format!("ws://{addr}/chat")).expect("handshake");

        // Half of b's frame: head, mask and three bytes of "hello from b".
        let text = b"hello from b";
        let mask = [7, 1, 9, 3];
        let mut frame = vec![0x81, 0x80 | text.len() as u8];
        frame.extend_from_slice(&mask);
        frame.extend(text.iter().enumerate().map(|(i, b)| b ^ mask[i % 4]));
        b.write_all(&frame[..9]).expect("first half");
        std::thread::sleep(Duration::from_millis(100));
        // a speaks: b's socket leaves its `recv` (the half frame in its ring) to push it.
        a.send(T::text("from a")).expect("send");
        assert_eq!(read_text(&mut b), "from a");
        assert_eq!(a.read().expect("own echo"), T::text("from a"));
        // The rest of b's frame: the frame is whole, and the room hears it.
        b.write_all(&frame[9..]).expect("second half");
        assert_eq!(read_text(&mut b), "hello from b");
        assert_eq!(a.read().expect("b's message"), T::text("hello from b"));
    }
}

/// A route whose sockets ping a quiet client every 100 ms.
async fn pinging(request: &ringwire_server::Request<'_>) -> ringwire_server::Response {
    let config = ws::WsConfig {
        keepalive: Some(std::time::Duration::from_millis(100)),
        ..ws::WsConfig::default()
    };
    ws::accept(request, &config, |mut socket| {
        Box::pin(async move { while let Some(Ok(_)) = socket.recv().await {} })
    })
}

/// `WsConfig::keepalive`: a client that stays quiet is pinged, and one that does not
/// answer is let go (the connection ends) after two intervals.
#[test]
fn a_client_that_answers_no_ping_is_let_go() {
    use std::io::Read as _;
    use std::time::{Duration, Instant};

    let addr = start(
        ServerConfig::default(),
        Router::new().get("/pinging", pinging),
    );
    let started = Instant::now();
    let mut stream = raw_upgrade(addr, "/pinging");
    let mut head = [0; 2];
    stream.read_exact(&mut head).expect("a ping");
    assert_eq!(head[0], 0x89, "a ping frame, unmasked: {head:?}");
    let mut payload = vec![0; usize::from(head[1])];
    stream.read_exact(&mut payload).expect("its payload");
    // No pong: the server ends the connection.
    let mut rest = Vec::new();
    stream.read_to_end(&mut rest).expect("a clean end");
    let waited = started.elapsed();
    assert!(
        waited >= Duration::from_millis(200) && waited < Duration::from_secs(5),
        "{waited:?}"
    );
}
