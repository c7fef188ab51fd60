//! Each library's client: sends a binary message and waits for its echo,
//! `n` times, checking each echo's length (the tests check contents). The
//! async clients run on the bench thread's current-thread runtime, outside
//! tokio's cooperative budget (as fastwebsockets' examples run), all alike.

use ringwire_ws::handshake::Offer;
use std::net::SocketAddr;

use bytes::Bytes;
use futures_util::{SinkExt as _, StreamExt as _};
use ringwire_io::tokio::{AsyncRecvTransport, AsyncSendTransport, AsyncStream};
use ringwire_io::{Duplex, TransportConfig};
use ringwire_ws::{Limits, Message};
use tokio::io::AsyncWriteExt as _;
use tokio::net::TcpStream;
use tokio::runtime::Runtime;

use crate::servers::{read_head, NEXUS_WRITE_BUFFER};

/// One library's client on one connection.
pub(crate) trait Client {
    /// `n` round trips of `payload` (which the client may mask in place).
    fn echo(&mut self, runtime: &Runtime, payload: &mut [u8], n: usize);
}

/// A connection that lives as long as the bench.
fn tokio_stream(runtime: &Runtime, addr: SocketAddr) -> TcpStream {
    runtime.block_on(async {
        let stream = TcpStream::connect(addr).await.expect("connect");
        stream.set_nodelay(true).expect("nodelay");
        stream
    })
}

/// Rings as large as the largest message needs (ringwire's default too).
fn config() -> TransportConfig {
    TransportConfig::new(64 << 10, 16 << 20)
}

/// ringwire-ws's tokio socket.
pub(crate) struct Ringwire(ringwire_ws::socket::WebSocket<&'static TcpStream>);

impl Ringwire {
    pub(crate) fn connect(runtime: &Runtime, addr: SocketAddr) -> Self {
        let stream: &'static TcpStream = Box::leak(Box::new(tokio_stream(runtime, addr)));
        let host = addr.to_string();
        runtime.block_on(async {
            let (socket, _) = ringwire_ws::socket::WebSocket::connect(
                AsyncRecvTransport::new(config(), stream).expect("rx"),
                AsyncSendTransport::new(config(), stream).expect("tx"),
                &host,
                "/",
                &Offer::default(),
                Limits::default(),
            )
            .await
            .expect("handshake");
            Ringwire(socket)
        })
    }
}

impl Client for Ringwire {
    fn echo(&mut self, runtime: &Runtime, payload: &mut [u8], n: usize) {
        ringwire_echo(&mut self.0, runtime, payload, n);
    }
}

/// `n` round trips on ringwire-ws's tokio socket, over whatever stream it runs on.
fn ringwire_echo(
    socket: &mut ringwire_ws::socket::WebSocket<impl AsyncStream>,
    runtime: &Runtime,
    payload: &[u8],
    n: usize,
) {
    runtime.block_on(tokio::task::unconstrained(async {
        for _ in 0..n {
            socket.send(&Message::Binary(payload)).await.expect("send");
            match socket.recv().await {
                Some(Ok((Message::Binary(echo), _))) => assert_eq!(echo.len(), payload.len()),
                other => panic!("ringwire: {other:?}"),
            }
        }
    }));
}

/// ringwire-client's WebSocket on a stream of an HTTP/2 connection (RFC 8441, prior
/// knowledge), as `Http2Connection::websocket` opens it; the connection's task runs on
/// the same runtime.
pub(crate) struct RingwireHttp2(ringwire_client::ws::Http2WebSocket);

impl RingwireHttp2 {
    pub(crate) fn connect(runtime: &Runtime, addr: SocketAddr) -> Self {
        let client = ringwire_client::tokio::Client::new(ringwire_client::ClientConfig {
            http2: ringwire_client::Http2::PriorKnowledge,
            ..ringwire_client::ClientConfig::default()
        });
        let base = ringwire_client::Url::parse(&format!("http://{addr}/")).expect("url");
        let url = ringwire_client::ws::WsUrl::parse(&format!("ws://{addr}/")).expect("url");
        let options = ringwire_client::ws::WsOptions {
            deflate: None,
            transport: config(),
            ..ringwire_client::ws::WsOptions::default()
        };
        runtime.block_on(async {
            let conn = client.http2_connection(&base).await.expect("connection");
            let (socket, _) = conn
                .websocket(&url, &options)
                .await
                .expect("extended CONNECT");
            RingwireHttp2(socket)
        })
    }
}

impl Client for RingwireHttp2 {
    fn echo(&mut self, runtime: &Runtime, payload: &mut [u8], n: usize) {
        ringwire_echo(&mut self.0, runtime, payload, n);
    }
}

/// ringwire-ws's blocking socket (no runtime).
pub(crate) struct RingwireBlocking(
    ringwire_ws::blocking::WebSocket<&'static std::net::TcpStream, &'static std::net::TcpStream>,
);

impl RingwireBlocking {
    pub(crate) fn connect(addr: SocketAddr) -> Self {
        let stream = std::net::TcpStream::connect(addr).expect("connect");
        stream.set_nodelay(true).expect("nodelay");
        let stream: &'static std::net::TcpStream = Box::leak(Box::new(stream));
        let Duplex { rx, tx } = Duplex::tcp(config(), stream).expect("rings");
        let host = addr.to_string();
        let (socket, _) = ringwire_ws::blocking::WebSocket::connect(
            rx,
            tx,
            &host,
            "/",
            &Offer::default(),
            Limits::default(),
        )
        .expect("handshake");
        RingwireBlocking(socket)
    }
}

impl Client for RingwireBlocking {
    fn echo(&mut self, _: &Runtime, payload: &mut [u8], n: usize) {
        for _ in 0..n {
            self.0.send(&Message::Binary(payload)).expect("send");
            match self.0.recv() {
                Some(Ok((Message::Binary(echo), _))) => assert_eq!(echo.len(), payload.len()),
                other => panic!("ringwire blocking: {other:?}"),
            }
        }
    }
}

/// Asks for a WebSocket on `stream` by hand and reads the `101`.
pub(crate) async fn upgrade(stream: &mut TcpStream, addr: SocketAddr) {
    let request = format!(
        "GET / HTTP/1.1\r\nhost: {addr}\r\nupgrade: websocket\r\nconnection: Upgrade\r\n\
         sec-websocket-key: dGhlIHNhbXBsZSBub25jZQ==\r\nsec-websocket-version: 13\r\n\r\n"
    );
    stream
        .write_all(request.as_bytes())
        .await
        .expect("upgrade request");
    let head = read_head(stream).await;
    assert!(head.starts_with(b"HTTP/1.1 101"), "upgrade refused");
}

/// tokio-tungstenite's `client_async`, default configuration. The message
/// is built once per call; each send clones its `Bytes` (a reference count).
pub(crate) struct Tungstenite(tokio_tungstenite::WebSocketStream<TcpStream>);

impl Tungstenite {
    pub(crate) fn connect(runtime: &Runtime, addr: SocketAddr) -> Self {
        let stream = tokio_stream(runtime, addr);
        runtime.block_on(async {
            let (ws, _) = tokio_tungstenite::client_async(format!("ws://{addr}/"), stream)
                .await
                .expect("handshake");
            Tungstenite(ws)
        })
    }
}

impl Client for Tungstenite {
    fn echo(&mut self, runtime: &Runtime, payload: &mut [u8], n: usize) {
        use tokio_tungstenite::tungstenite::Message as T;

        let ws = &mut self.0;
        let message = T::Binary(Bytes::copy_from_slice(payload));
        runtime.block_on(tokio::task::unconstrained(async {
            for _ in 0..n {
                ws.send(message.clone()).await.expect("send");
                match ws.next().await {
                    Some(Ok(T::Binary(echo))) => assert_eq!(echo.len(), payload.len()),
                    other => panic!("tungstenite: {other:?}"),
                }
            }
        }));
    }
}

/// fastwebsockets, default settings (`auto_apply_mask`: it masks the
/// borrowed payload in place, no copy). The upgrade is written by hand on
/// the raw stream, as its server's is.
pub(crate) struct FastWebSockets(fastwebsockets::WebSocket<TcpStream>);

impl FastWebSockets {
    pub(crate) fn connect(runtime: &Runtime, addr: SocketAddr) -> Self {
        let mut stream = tokio_stream(runtime, addr);
        runtime.block_on(upgrade(&mut stream, addr));
        FastWebSockets(fastwebsockets::WebSocket::after_handshake(
            stream,
            fastwebsockets::Role::Client,
        ))
    }
}

impl Client for FastWebSockets {
    fn echo(&mut self, runtime: &Runtime, payload: &mut [u8], n: usize) {
        use fastwebsockets::{Frame, OpCode, Payload};

        let ws = &mut self.0;
        let len = payload.len();
        runtime.block_on(tokio::task::unconstrained(async {
            for _ in 0..n {
                ws.write_frame(Frame::binary(Payload::BorrowedMut(&mut *payload)))
                    .await
                    .expect("send");
                let frame = ws.read_frame().await.expect("echo");
                assert!(frame.opcode == OpCode::Binary && frame.payload.len() == len);
            }
        }));
    }
}

/// sockudo-ws: its `client_handshake` on the raw stream, then
/// `WebSocketStream::client` with the default `Config`.
pub(crate) struct Sockudo(sockudo_ws::WebSocketStream<TcpStream>);

impl Sockudo {
    pub(crate) fn connect(runtime: &Runtime, addr: SocketAddr) -> Self {
        use sockudo_ws::{handshake, Config, WebSocketStream};

        let mut stream = tokio_stream(runtime, addr);
        runtime.block_on(async {
            handshake::client_handshake(&mut stream, &addr.to_string(), "/", None)
                .await
                .expect("handshake");
        });
        Sockudo(WebSocketStream::client(stream, Config::default()))
    }
}

impl Client for Sockudo {
    fn echo(&mut self, runtime: &Runtime, payload: &mut [u8], n: usize) {
        use sockudo_ws::Message as S;

        let ws = &mut self.0;
        let message = S::Binary(Bytes::copy_from_slice(payload));
        runtime.block_on(tokio::task::unconstrained(async {
            for _ in 0..n {
                ws.send(message.clone()).await.expect("send");
                match ws.next().await {
                    Some(Ok(S::Binary(echo))) => assert_eq!(echo.len(), payload.len()),
                    other => panic!("sockudo-ws: {other:?}"),
                }
            }
        }));
    }
}

/// nexus-web's blocking client, default builder with Nagle off and the
/// write buffer of [`NEXUS_WRITE_BUFFER`].
pub(crate) struct Nexus(nexus_web::ws::Client<std::net::TcpStream>);

impl Nexus {
    pub(crate) fn connect(addr: SocketAddr) -> Self {
        let ws = nexus_web::ws::Client::builder()
            .disable_nagle()
            .write_buffer_capacity(NEXUS_WRITE_BUFFER)
            .connect(&format!("ws://{addr}/"))
            .expect("handshake");
        Nexus(ws)
    }
}

impl Client for Nexus {
    fn echo(&mut self, _: &Runtime, payload: &mut [u8], n: usize) {
        use nexus_web::ws::Message as N;

        for _ in 0..n {
            self.0.send_binary(payload).expect("send");
            match self.0.recv() {
                Ok(Some(N::Binary(echo))) => assert_eq!(echo.len(), payload.len()),
                other => panic!("nexus-web: {other:?}"),
            }
        }
    }
}
