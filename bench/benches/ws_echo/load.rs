//! One load generator for every server: `connections` sockets on the bench
//! thread's runtime, each sending the same pre-masked binary frame (or a
//! batch of them, in one write) and reading the echoes back, over and
//! over. The same cheap client in front of every server, so the servers
//! alone differ; many connections and batches keep many messages in
//! flight, which weighs each server's per-message work more than its
//! wake-up path. [`H2Load`] does the same over the streams of one HTTP/2
//! connection.

use std::net::SocketAddr;
use std::sync::Arc;

use bytes::Bytes;
use h2::client::SendRequest;
use h2::{RecvStream, SendStream};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::TcpStream;
use tokio::runtime::Runtime;
use tokio::task::JoinSet;

use crate::clients::upgrade;

/// Connections to one server.
pub(crate) struct Load {
    streams: Vec<TcpStream>,
}

/// A batch of messages as the generator sends it and as the server must
/// echo it.
pub(crate) struct Frames {
    /// Client frames: masked with a fixed key (servers unmask whatever the key).
    sent: Arc<[u8]>,
    /// Server frames: the same payloads, unmasked.
    echoed: Arc<[u8]>,
    /// Messages in the batch.
    depth: usize,
}

impl Frames {
    /// `depth` copies of a binary message of `payload`, sent in one write.
    pub(crate) fn new(payload: &[u8], depth: usize) -> Self {
        let key = [0x37, 0xfa, 0x21, 0x3d];
        let length = |mask: u8| -> Vec<u8> {
            match payload.len() {
                n @ 0..=125 => vec![mask | n as u8],
                n @ 126..=0xffff => [&[mask | 126][..], &(n as u16).to_be_bytes()].concat(),
                n => [&[mask | 127][..], &(n as u64).to_be_bytes()].concat(),
            }
        };
        let mut sent = vec![0x82];
        sent.extend(length(0x80));
        sent.extend(key);
        sent.extend(payload.iter().enumerate().map(|(i, b)| b ^ key[i % 4]));
        let mut echoed = vec![0x82];
        echoed.extend(length(0));
        echoed.extend_from_slice(payload);
        Frames {
            sent: sent.repeat(depth).into(),
            echoed: echoed.repeat(depth).into(),
            depth,
        }
    }
}

impl Load {
    /// Opens `connections` WebSocket connections to `addr`.
    pub(crate) fn connect(runtime: &Runtime, addr: SocketAddr, connections: usize) -> Self {
        let streams = runtime.block_on(async {
            let mut streams = Vec::with_capacity(connections);
            for _ in 0..connections {
                let mut stream = TcpStream::connect(addr).await.expect("connect");
                stream.set_nodelay(true).expect("nodelay");
                upgrade(&mut stream, addr).await;
                streams.push(stream);
            }
            streams
        });
        Load { streams }
    }

    /// `n` messages echoed, in batches of `frames`, spread evenly over the
    /// connections, all running at once; each connection checks its first
    /// batch byte for byte.
    pub(crate) fn echo(&mut self, runtime: &Runtime, frames: &Frames, n: usize) {
        let per_connection = n / self.streams.len() / frames.depth;
        runtime.block_on(tokio::task::unconstrained(async {
            let mut tasks = JoinSet::new();
            for mut stream in self.streams.drain(..) {
                let (sent, echoed) = (Arc::clone(&frames.sent), Arc::clone(&frames.echoed));
                tasks.spawn(async move {
                    let mut echo = vec![0; echoed.len()];
                    for i in 0..per_connection {
                        stream.write_all(&sent).await.expect("send");
                        stream.read_exact(&mut echo).await.expect("echo");
                        assert!(i > 0 || echo[..] == echoed[..], "a wrong echo");
                    }
                    stream
                });
            }
            while let Some(stream) = tasks.join_next().await {
                self.streams.push(stream.expect("a connection task"));
            }
        }));
    }
}

/// WebSockets on the streams of one HTTP/2 connection (RFC 8441's extended `CONNECT`),
/// with the `h2` crate as the client: the same frames as [`Load`]'s, one stream per socket.
pub(crate) struct H2Load {
    sockets: Vec<(SendStream<Bytes>, RecvStream)>,
    /// Sockets opened and left quiet beside those that echo.
    _idle: Vec<(SendStream<Bytes>, RecvStream)>,
    /// Keeps the connection open.
    _client: SendRequest<Bytes>,
}

impl H2Load {
    /// Opens `streams` WebSockets on one HTTP/2 connection (prior knowledge) to `addr`, and
    /// `idle` more that stay quiet.
    pub(crate) fn connect(
        runtime: &Runtime,
        addr: SocketAddr,
        streams: usize,
        idle: usize,
    ) -> Self {
        runtime.block_on(async {
            let tcp = TcpStream::connect(addr).await.expect("connect");
            tcp.set_nodelay(true).expect("nodelay");
            // Windows that never hold the echoes up: the servers' sending is measured.
            let (client, conn) = h2::client::Builder::new()
                .initial_window_size(1 << 20)
                .initial_connection_window_size(16 << 20)
                .handshake(tcp)
                .await
                .expect("HTTP/2 handshake");
            tokio::spawn(async move {
                let _ = conn.await;
            });
            let mut client = client.ready().await.expect("ready");
            // The server's SETTINGS (which allow extended CONNECT) come first.
            while !client.is_extended_connect_protocol_enabled() {
                tokio::task::yield_now().await;
                client = client.ready().await.expect("ready");
            }
            let mut sockets = Vec::with_capacity(streams + idle);
            for _ in 0..streams + idle {
                let mut request = http::Request::builder()
                    .method(http::Method::CONNECT)
                    .uri(format!("http://{addr}/"))
                    .header("sec-websocket-version", "13")
                    .body(())
                    .expect("request");
                request
                    .extensions_mut()
                    .insert(h2::ext::Protocol::from_static("websocket"));
                client = client.ready().await.expect("ready");
                let (response, send) = client.send_request(request, false).expect("CONNECT");
                let response = response.await.expect("an answer");
                assert_eq!(response.status(), 200, "the WebSocket opened");
                sockets.push((send, response.into_body()));
            }
            let idle = sockets.split_off(streams);
            H2Load {
                sockets,
                _idle: idle,
                _client: client,
            }
        })
    }

    /// As [`Load::echo`], a socket per stream.
    pub(crate) fn echo(&mut self, runtime: &Runtime, frames: &Frames, n: usize) {
        let per_socket = n / self.sockets.len() / frames.depth;
        let sent = Bytes::copy_from_slice(&frames.sent);
        runtime.block_on(tokio::task::unconstrained(async {
            let mut tasks = JoinSet::new();
            for (mut send, mut recv) in self.sockets.drain(..) {
                let (sent, echoed) = (sent.clone(), Arc::clone(&frames.echoed));
                tasks.spawn(async move {
                    let mut echo = Vec::with_capacity(echoed.len());
                    for i in 0..per_socket {
                        send.send_data(sent.clone(), false).expect("send");
                        echo.clear();
                        while echo.len() < echoed.len() {
                            let piece = recv.data().await.expect("open").expect("echo");
                            let _ = recv.flow_control().release_capacity(piece.len());
                            echo.extend_from_slice(&piece);
                        }
                        assert!(i > 0 || echo[..] == echoed[..], "a wrong echo");
                    }
                    (send, recv)
                });
            }
            while let Some(socket) = tasks.join_next().await {
                self.sockets.push(socket.expect("a socket task"));
            }
        }));
    }
}
