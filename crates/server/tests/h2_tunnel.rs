//! Protocols on HTTP/2 streams (RFC 8441's extended `CONNECT`), with the `h2` crate
//! (hyper's HTTP/2) as the client: WebSocket messages echoed through the stream both ways,
//! larger than every flow-control window; a raw upgrade's bytes; a reset that ends the
//! protocol; and the answers that are not tunnels.

mod common;

use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use bytes::{Bytes, BytesMut};
use common::start;
use h2::client::SendRequest;
use h2::{RecvStream, SendStream};
use ringwire_server::{ws, Request, Response, Router, ServerConfig, Upgraded};

/// How many raw `echo` sessions have ended.
static ENDED: AtomicUsize = AtomicUsize::new(0);

fn router() -> Router {
    Router::new()
        .get("/ws/echo", ws::echo)
        .get("/echo", echo_protocol)
        .get("/plain", |_: &Request<'_>| async {
            Response::text("plain")
        })
}

/// Upgrades to a protocol that sends every byte back.
async fn echo_protocol(_: &Request<'_>) -> Response {
    Response::upgrade("echo", |Upgraded { mut rx, mut tx, .. }: Upgraded<'_>| {
        Box::pin(async move {
            while let Ok(n) = rx.fill(1).await {
                if n == 0 {
                    break;
                }
                let len = rx.data().len();
                if tx.write(rx.data()).await.is_err() || tx.flush().await.is_err() {
                    break;
                }
                rx.consume(len);
            }
            ENDED.fetch_add(1, Ordering::SeqCst);
        })
    })
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime")
}

/// An HTTP/2 connection (prior knowledge) whose server's settings have arrived, and whether
/// they allow extended `CONNECT`.
async fn handshake(addr: SocketAddr) -> (SendRequest<Bytes>, bool) {
    let tcp = tokio::net::TcpStream::connect(addr).await.expect("connect");
    handshake_over(tcp, addr).await
}

/// [`handshake`] over `tcp`, connected to `addr`.
async fn handshake_over(
    tcp: tokio::net::TcpStream,
    addr: SocketAddr,
) -> (SendRequest<Bytes>, bool) {
    let (client, conn) = h2::client::handshake(tcp).await.expect("handshake");
    tokio::spawn(async move {
        let _ = conn.await;
    });
    // A first exchange: the server's SETTINGS came before its answer.
    let (status, _) = exchange(&client, get(addr, "/plain")).await;
    assert_eq!(status, 200);
    let extended = client.is_extended_connect_protocol_enabled();
    (client, extended)
}

/// A connection whose server allows extended `CONNECT`.
async fn connect(addr: SocketAddr) -> SendRequest<Bytes> {
    let (client, extended) = handshake(addr).await;
    assert!(extended);
    client
}

fn get(addr: SocketAddr, path: &str) -> http::Request<()> {
    http::Request::get(format!("http://{addr}{path}"))
        .body(())
        .expect("request")
}

fn extended_connect(addr: SocketAddr, path: &str, protocol: &'static str) -> http::Request<()> {
    let mut request = http::Request::builder()
        .method(http::Method::CONNECT)
        .uri(format!("http://{addr}{path}"))
        .header("sec-websocket-version", "13")
        .body(())
        .expect("request");
    request
        .extensions_mut()
        .insert(h2::ext::Protocol::from_static(protocol));
    request
}

/// Sends `request` (its stream left open) and waits for the head: the status, the stream
/// both ways and the head's fields.
async fn open(
    client: &SendRequest<Bytes>,
    request: http::Request<()>,
) -> (http::Response<RecvStream>, SendStream<Bytes>) {
    let mut client = client.clone().ready().await.expect("ready");
    let (response, send) = client.send_request(request, false).expect("send");
    let response = tokio::time::timeout(Duration::from_secs(10), response)
        .await
        .expect("an answer within 10 s")
        .expect("an answer");
    (response, send)
}

/// A whole exchange without a request body: the status and the response's body.
async fn exchange(client: &SendRequest<Bytes>, request: http::Request<()>) -> (u16, Vec<u8>) {
    let mut client = client.clone().ready().await.expect("ready");
    let (response, _) = client.send_request(request, true).expect("send");
    let response = tokio::time::timeout(Duration::from_secs(10), response)
        .await
        .expect("an answer within 10 s")
        .expect("an answer");
    let status = response.status().as_u16();
    let mut recv = response.into_body();
    let mut got = Vec::new();
    while let Some(piece) = recv.data().await {
        let piece = piece.expect("body");
        recv.flow_control()
            .release_capacity(piece.len())
            .expect("release");
        got.extend_from_slice(&piece);
    }
    (status, got)
}

/// A client frame: final, masked.
fn masked(opcode: u8, payload: &[u8]) -> Bytes {
    let mask = [0x37, 0xfa, 0x21, 0x3d];
    let mut frame = vec![0x80 | opcode];
    match payload.len() {
        n @ 0..=125 => frame.push(0x80 | n as u8),
        n @ 126..=0xffff => {
            frame.push(0x80 | 126);
            frame.extend_from_slice(&(n as u16).to_be_bytes());
        }
        n => {
            frame.push(0x80 | 127);
            frame.extend_from_slice(&(n as u64).to_be_bytes());
        }
    }
    frame.extend_from_slice(&mask);
    frame.extend(payload.iter().enumerate().map(|(i, b)| b ^ mask[i % 4]));
    Bytes::from(frame)
}

/// Reads one whole server frame (unmasked) from `recv`, keeping what follows in `buf`:
/// its first byte and its payload.
async fn frame(recv: &mut RecvStream, buf: &mut BytesMut) -> (u8, Vec<u8>) {
    loop {
        if let Some((head, len)) = parse(buf) {
            if buf.len() >= head + len {
                let first = buf[0];
                let whole = buf.split_to(head + len);
                return (first, whole[head..].to_vec());
            }
        }
        let piece = tokio::time::timeout(Duration::from_secs(10), recv.data())
            .await
            .expect("a frame within 10 s")
            .expect("the stream goes on")
            .expect("data");
        recv.flow_control()
            .release_capacity(piece.len())
            .expect("release");
        buf.extend_from_slice(&piece);
    }
}

/// A server frame's header length and payload length, once the header is whole.
fn parse(buf: &[u8]) -> Option<(usize, usize)> {
    let second = *buf.get(1)?;
    assert_eq!(second & 0x80, 0, "a server frame is not masked");
    match second & 0x7f {
        126 => Some((
            4,
            u16::from_be_bytes(buf.get(2..4)?.try_into().ok()?).into(),
        )),
        127 => Some((
            10,
            u64::from_be_bytes(buf.get(2..10)?.try_into().ok()?) as usize,
        )),
        n => Some((2, n.into())),
    }
}

#[test]
fn a_websocket_on_a_stream_echoes_messages_larger_than_every_window() {
    let addr = start(ServerConfig::default(), router());
    runtime().block_on(async {
        let client = connect(addr).await;
        let (response, mut send) =
            open(&client, extended_connect(addr, "/ws/echo", "websocket")).await;
        assert_eq!(response.status(), 200);
        assert!(response.headers().get("sec-websocket-accept").is_none());
        let mut recv = response.into_body();
        let mut buf = BytesMut::new();
        // 3 MiB: past the server's stream window (256 KiB) and connection window (1 MiB),
        // and the client's (64 KiB): both sides give window back as they read.
        let big: Vec<u8> = (0..3u32 << 20).map(|i| (i % 251) as u8).collect();
        for (opcode, payload) in [(1, &b"hello"[..]), (2, &big[..]), (1, &b""[..])] {
            send.send_data(masked(opcode, payload), false)
                .expect("send");
            let (first, echoed) = frame(&mut recv, &mut buf).await;
            assert_eq!(first, 0x80 | opcode);
            assert!(
                echoed == payload,
                "{} bytes came back changed",
                payload.len()
            );
        }
        // The closing handshake: the server answers, then ends the stream.
        send.send_data(masked(8, &1000u16.to_be_bytes()), true)
            .expect("close");
        let (first, code) = frame(&mut recv, &mut buf).await;
        assert_eq!((first, &code[..]), (0x88, &1000u16.to_be_bytes()[..]));
        // Nothing more but the end (perhaps in an empty DATA frame).
        loop {
            let next = tokio::time::timeout(Duration::from_secs(10), recv.data()).await;
            match next.expect("the end within 10 s") {
                None => break,
                Some(piece) => assert!(piece.expect("data").is_empty(), "bytes after the close"),
            }
        }
        // The connection carries on.
        let (status, body) = exchange(&client, get(addr, "/plain")).await;
        assert_eq!((status, &body[..]), (200, &b"plain"[..]));
    });
}

#[test]
fn several_websockets_share_a_connection() {
    let addr = start(ServerConfig::default(), router());
    runtime().block_on(async {
        let client = connect(addr).await;
        let mut sockets = Vec::new();
        for _ in 0..8 {
            let (response, send) =
                open(&client, extended_connect(addr, "/ws/echo", "websocket")).await;
            assert_eq!(response.status(), 200);
            sockets.push((send, response.into_body(), BytesMut::new()));
        }
        for round in 0..3 {
            for (i, (send, ..)) in sockets.iter_mut().enumerate() {
                let text = format!("socket {i} round {round}");
                send.send_data(masked(1, text.as_bytes()), false)
                    .expect("send");
            }
            for (i, (_, recv, buf)) in sockets.iter_mut().enumerate() {
                let (_, echoed) = frame(recv, buf).await;
                assert_eq!(echoed, format!("socket {i} round {round}").as_bytes());
            }
        }
    });
}

#[test]
fn any_upgrade_runs_on_a_stream_and_a_reset_ends_it() {
    let addr = start(ServerConfig::default(), router());
    runtime().block_on(async {
        let client = connect(addr).await;
        let (response, mut send) = open(&client, extended_connect(addr, "/echo", "echo")).await;
        assert_eq!(response.status(), 200);
        assert!(response.headers().get("upgrade").is_none());
        let mut recv = response.into_body();
        send.send_data(Bytes::from_static(b"ping"), false)
            .expect("send");
        let piece = recv.data().await.expect("an echo").expect("data");
        assert_eq!(&piece[..], b"ping");
        let before = ENDED.load(Ordering::SeqCst);
        send.send_reset(h2::Reason::CANCEL);
        let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
        while ENDED.load(Ordering::SeqCst) == before {
            assert!(
                tokio::time::Instant::now() < deadline,
                "the protocol ran on after a reset"
            );
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    });
}

#[test]
fn requests_that_open_no_tunnel_get_their_answers() {
    let addr = start(ServerConfig::default(), router());
    runtime().block_on(async {
        let client = connect(addr).await;
        // No route: the handler's 404.
        let (status, _) = exchange(&client, extended_connect(addr, "/nowhere", "websocket")).await;
        assert_eq!(status, 404);
        // A WebSocket request of a version this server does not speak.
        let mut old = extended_connect(addr, "/ws/echo", "websocket");
        old.headers_mut()
            .insert("sec-websocket-version", "8".parse().expect("value"));
        let (status, _) = exchange(&client, old).await;
        assert_eq!(status, 426);
        // A success that is no upgrade: it would pass for an open tunnel.
        let (status, _) = exchange(&client, extended_connect(addr, "/plain", "websocket")).await;
        assert_eq!(status, 501);
        // An upgrade answer to a request that is no extended CONNECT: HTTP/2 has no `101`.
        let (status, _) = exchange(&client, get(addr, "/echo")).await;
        assert_eq!(status, 500);
    });
}

#[test]
fn a_server_configured_without_it_refuses_extended_connect() {
    let config = ServerConfig {
        http2: Some(ringwire_http2::Config::default()),
        ..ServerConfig::default()
    };
    let addr = start(config, router());
    runtime().block_on(async {
        let (_, extended) = handshake(addr).await;
        assert!(!extended);
    });
}

/// What `/proc/net/tcp` calls a keepalive timer ("tr" 2: the socket's own timer pending).
#[cfg(target_os = "linux")]
const KEEPALIVE_TIMER: u8 = 2;

/// The timer the kernel runs on the server's end of the connection from `client` to
/// `server` (IPv4), and in how many seconds it fires, from `/proc/net/tcp`.
#[cfg(target_os = "linux")]
fn server_end_timer(server: SocketAddr, client: SocketAddr) -> Option<(u8, f64)> {
    let hex = |addr: SocketAddr| match addr {
        SocketAddr::V4(a) => format!(
            "{:08X}:{:04X}",
            u32::from_le_bytes(a.ip().octets()),
            a.port()
        ),
        SocketAddr::V6(_) => unreachable!("the test server listens on IPv4"),
    };
    let (local, remote) = (hex(server), hex(client));
    let table = std::fs::read_to_string("/proc/net/tcp").expect("/proc/net/tcp");
    table.lines().skip(1).find_map(|line| {
        let fields: Vec<&str> = line.split_whitespace().collect();
        if fields.get(1) != Some(&local.as_str()) || fields.get(2) != Some(&remote.as_str()) {
            return None;
        }
        // "tr:tm->when": the timer's kind, and its expiry in clock ticks (USER_HZ, 100).
        let (kind, when) = fields.get(5)?.split_once(':')?;
        let kind = u8::from_str_radix(kind, 16).ok()?;
        let when = u64::from_str_radix(when, 16).ok()?;
        Some((kind, when as f64 / 100.0))
    })
}

/// A connection whose streams are tunnels runs untimed, as an upgraded HTTP/1.1 one does:
/// once it carries one, the kernel's keepalive (as `upgraded_keepalive` sets it) ends it
/// if the peer vanished.
#[cfg(target_os = "linux")]
#[test]
fn a_connection_with_a_tunnel_is_kept_alive_by_the_kernel() {
    let mut config = ServerConfig::default();
    config.timeouts.upgraded_keepalive = Duration::from_secs(45);
    let addr = start(config, router());
    runtime().block_on(async {
        let tcp = tokio::net::TcpStream::connect(addr).await.expect("connect");
        let client_end = tcp.local_addr().expect("the client's address");
        let (client, _) = handshake_over(tcp, addr).await;
        let before = server_end_timer(addr, client_end).expect("the server's end");
        assert_ne!(before.0, KEEPALIVE_TIMER, "probed before any tunnel");
        let (response, mut send) = open(&client, extended_connect(addr, "/echo", "echo")).await;
        assert_eq!(response.status(), 200);
        let mut recv = response.into_body();
        send.send_data(Bytes::from_static(b"ping"), false)
            .expect("send");
        let piece = recv.data().await.expect("an echo").expect("data");
        assert_eq!(&piece[..], b"ping");
        // Until the echo is acknowledged, its retransmission timer shows instead (1).
        let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
        let (kind, due) = loop {
            let timer = server_end_timer(addr, client_end).expect("the server's end");
            if timer.0 == KEEPALIVE_TIMER || tokio::time::Instant::now() > deadline {
                break timer;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        };
        assert_eq!(kind, KEEPALIVE_TIMER, "no keepalive once a tunnel runs");
        assert!(
            (40.0..=45.0).contains(&due),
            "probes in {due} s, not after 45 s of quiet"
        );
    });
}
