//! One echo server per library, each on its own current-thread tokio runtime
//! in a thread of its own (nexus-web, which is blocking, on a thread per
//! connection), as each library's examples run it: binary and text messages
//! come back as they came, with default settings and no permessage-deflate.
//! Every accepted socket has `TCP_NODELAY`, as ringwire's server sets it.
//! Each server's threads carry its name, so [`Running::cpu_time`] can add up the CPU
//! time the server alone spent (the clients run on other threads).

use std::future::Future;
use std::net::SocketAddr;
use std::thread;
use std::time::Duration;

use fastwebsockets::{FragmentCollector, OpCode, Role, WebSocket};
use futures_util::{SinkExt as _, StreamExt as _, TryStreamExt as _};
use ringwire_server::{ws, Router, Server, ServerConfig, Threading};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::{TcpListener, TcpStream};

/// Starts a server on a loopback port of its own, its threads named by the
/// argument, and returns the address.
type Start = fn(&'static str) -> SocketAddr;

/// The servers compared, by name.
pub(crate) const SERVERS: [(&str, Start); 9] = [
    ("ringwire", ringwire),
    ("ringwire-ws, bare", ringwire_bare),
    ("tokio-tungstenite", tungstenite),
    ("fastwebsockets", fastwebsockets),
    ("sockudo-ws", sockudo),
    ("nexus-web", nexus),
    ("tokio-tungstenite, forward", tungstenite_forward),
    ("sockudo-ws, forward", sockudo_forward),
    ("hyper + tokio-tungstenite, HTTP/2", hyper_tungstenite),
];

/// A running server: where it listens, and the name its threads carry.
#[derive(Clone, Copy)]
pub(crate) struct Running {
    pub(crate) addr: SocketAddr,
    thread: &'static str,
}

impl Running {
    /// CPU time the server's threads have used so far, from the scheduler's
    /// own accounting (`/proc/self/task/*/schedstat`, in nanoseconds).
    #[allow(
        dead_code,
        reason = "the bench uses it; ws_memory, which shares this file, does not"
    )]
    pub(crate) fn cpu_time(&self) -> Duration {
        let mut total = 0;
        let tasks = std::fs::read_dir("/proc/self/task").expect("/proc/self/task");
        for task in tasks.flatten() {
            let path = task.path();
            let comm = std::fs::read_to_string(path.join("comm")).unwrap_or_default();
            if comm.trim_end() != self.thread {
                continue;
            }
            let ran = std::fs::read_to_string(path.join("schedstat")).unwrap_or_default();
            total += ran
                .split(' ')
                .next()
                .and_then(|n| n.parse::<u64>().ok())
                .unwrap_or(0);
        }
        Duration::from_nanos(total)
    }
}

/// Starts the server named `name` (one of [`SERVERS`]).
pub(crate) fn start(name: &str) -> Option<Running> {
    let (i, (_, start)) = SERVERS.iter().enumerate().find(|(_, (n, _))| *n == name)?;
    // Thread names are cut to 15 bytes by the kernel; these stay short and distinct.
    let thread = [
        "srv-0", "srv-1", "srv-2", "srv-3", "srv-4", "srv-5", "srv-6", "srv-7", "srv-8",
    ][i];
    Some(Running {
        addr: start(thread),
        thread,
    })
}

/// Runs what `serve` makes on a current-thread runtime in a new thread named
/// `thread`.
fn on_own_runtime<F: Future<Output = ()> + 'static>(
    thread: &'static str,
    serve: impl FnOnce() -> F + Send + 'static,
) {
    thread::Builder::new()
        .name(thread.into())
        .spawn(move || {
            tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("runtime")
                .block_on(serve());
        })
        .expect("server thread");
}

/// A loopback listener, bound before its runtime starts so that its address
/// is known at once.
fn listener() -> (std::net::TcpListener, SocketAddr) {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    listener.set_nonblocking(true).expect("nonblocking");
    let addr = listener.local_addr().expect("addr");
    (listener, addr)
}

/// Accepts connections and runs `connection` on each, spawned.
async fn accept_each<F>(listener: std::net::TcpListener, connection: impl Fn(TcpStream) -> F)
where
    F: Future<Output = ()> + Send + 'static,
{
    let listener = TcpListener::from_std(listener).expect("listener");
    loop {
        let (stream, _) = listener.accept().await.expect("accept");
        stream.set_nodelay(true).expect("nodelay");
        tokio::spawn(connection(stream));
    }
}

/// ringwire's server with its `/ws/echo` handler on `/`, one listener.
fn ringwire(thread: &'static str) -> SocketAddr {
    let mut config = ServerConfig::new("127.0.0.1:0".parse().expect("addr"));
    config.threading = Threading::Shared(1);
    let server = Server::bind(config).expect("bind");
    let addr = server.local_addr();
    on_own_runtime(thread, move || async move {
        server
            .serve(Router::new().get("/", ws::echo))
            .await
            .expect("serve");
    });
    addr
}

/// ringwire-ws's tokio socket on the same bare accept loop as the peers
/// below (no HTTP server around it): what the WebSocket layer costs alone.
fn ringwire_bare(thread: &'static str) -> SocketAddr {
    use ringwire_io::tokio::{AsyncRecvTransport, AsyncSendTransport};
    use ringwire_io::TransportConfig;
    use ringwire_ws::{Connection, Limits, Message};

    let (listener, addr) = listener();
    on_own_runtime(thread, move || {
        accept_each(listener, |mut stream| async move {
            answer_upgrade(&mut stream).await;
            let stream = std::sync::Arc::new(stream);
            let config = TransportConfig::new(64 << 10, 32 << 20);
            let mut ws = ringwire_ws::socket::WebSocket::from_parts(
                AsyncRecvTransport::new(config, std::sync::Arc::clone(&stream)).expect("rx"),
                AsyncSendTransport::new(config, stream).expect("tx"),
                Connection::new(ringwire_ws::Role::Server, Limits::default(), None).expect("conn"),
            );
            // Queued as `ws::echo` queues: the socket sends them when it
            // next waits for the peer, one write for a read's worth.
            while let Some(Ok((message, mut reply))) = ws.recv().await {
                if matches!(message, Message::Binary(_) | Message::Text(_))
                    && reply.queue(&message).await.is_err()
                {
                    break;
                }
            }
        })
    });
    addr
}

/// tokio-tungstenite's `accept_async`, default configuration.
fn tungstenite(thread: &'static str) -> SocketAddr {
    let (listener, addr) = listener();
    on_own_runtime(thread, move || {
        accept_each(listener, |stream| async move {
            let mut ws = tokio_tungstenite::accept_async(stream)
                .await
                .expect("handshake");
            while let Some(Ok(message)) = ws.next().await {
                if (message.is_binary() || message.is_text()) && ws.send(message).await.is_err() {
                    break;
                }
            }
        })
    });
    addr
}

/// hyper's HTTP/2 server with extended `CONNECT` on (RFC 8441), each stream's upgrade
/// (`hyper::upgrade::on`) run as a tokio-tungstenite socket on a task of its own, as hyper's
/// users write WebSockets over HTTP/2; HTTP/2 only (no HTTP/1.1 upgrade).
fn hyper_tungstenite(thread: &'static str) -> SocketAddr {
    use hyper_util::rt::{TokioExecutor, TokioIo};
    use tokio_tungstenite::tungstenite::protocol::Role;

    let (listener, addr) = listener();
    on_own_runtime(thread, move || {
        accept_each(listener, |stream| async move {
            let service = hyper::service::service_fn(
                |mut request: hyper::Request<hyper::body::Incoming>| async move {
                    let upgrade = hyper::upgrade::on(&mut request);
                    tokio::spawn(async move {
                        let Ok(upgraded) = upgrade.await else {
                            return;
                        };
                        let io = TokioIo::new(upgraded);
                        let mut ws = tokio_tungstenite::WebSocketStream::from_raw_socket(
                            io,
                            Role::Server,
                            None,
                        )
                        .await;
                        while let Some(Ok(message)) = ws.next().await {
                            if (message.is_binary() || message.is_text())
                                && ws.send(message).await.is_err()
                            {
                                break;
                            }
                        }
                    });
                    let empty = http_body_util::Empty::<bytes::Bytes>::new();
                    Ok::<_, std::convert::Infallible>(hyper::Response::new(empty))
                },
            );
            let mut http2 = hyper::server::conn::http2::Builder::new(TokioExecutor::new());
            http2.enable_connect_protocol();
            let _ = http2.serve_connection(TokioIo::new(stream), service).await;
        })
    });
    addr
}

/// tokio-tungstenite as its `echo-server` example writes it: the data
/// messages `forward`ed from the read half to the write half, which feeds
/// the sink while messages are ready and flushes when the stream waits
/// (one write for a read's worth of messages).
fn tungstenite_forward(thread: &'static str) -> SocketAddr {
    let (listener, addr) = listener();
    on_own_runtime(thread, move || {
        accept_each(listener, |stream| async move {
            let ws = tokio_tungstenite::accept_async(stream)
                .await
                .expect("handshake");
            let (write, read) = ws.split();
            let data = read.try_filter(|m| std::future::ready(m.is_binary() || m.is_text()));
            let _ = data.forward(write).await;
        })
    });
    addr
}

/// fastwebsockets as in its `echo_server` example (a `FragmentCollector`,
/// unconstrained by tokio's budget), default settings. The upgrade is
/// answered on the raw `TcpStream` rather than through hyper, which only
/// spares fastwebsockets hyper's boxed stream.
fn fastwebsockets(thread: &'static str) -> SocketAddr {
    let (listener, addr) = listener();
    on_own_runtime(thread, move || {
        accept_each(listener, |mut stream| async move {
            answer_upgrade(&mut stream).await;
            let mut ws = FragmentCollector::new(WebSocket::after_handshake(stream, Role::Server));
            tokio::task::unconstrained(async move {
                while let Ok(frame) = ws.read_frame().await {
                    match frame.opcode {
                        OpCode::Close => break,
                        OpCode::Text | OpCode::Binary => {}
                        _ => continue,
                    }
                    if ws.write_frame(frame).await.is_err() {
                        break;
                    }
                }
            })
            .await;
        })
    });
    addr
}

/// sockudo-ws as in its `simple_echo` example: its `server_handshake` on
/// the raw stream, then `WebSocketStream::server` with the default `Config`.
fn sockudo(thread: &'static str) -> SocketAddr {
    use sockudo_ws::Message;

    let (listener, addr) = listener();
    on_own_runtime(thread, move || {
        accept_each(listener, |stream| async move {
            let mut ws = sockudo_accept(stream).await;
            while let Some(Ok(message)) = ws.next().await {
                if matches!(message, Message::Text(_) | Message::Binary(_))
                    && ws.send(message).await.is_err()
                {
                    break;
                }
            }
        })
    });
    addr
}

/// sockudo-ws with its stream `forward`ed into its sink, as for
/// tokio-tungstenite above: messages ready together go into its cork
/// buffer and out in one flush.
fn sockudo_forward(thread: &'static str) -> SocketAddr {
    use sockudo_ws::Message;

    let (listener, addr) = listener();
    on_own_runtime(thread, move || {
        accept_each(listener, |stream| async move {
            // futures' split (the sink first), not sockudo-ws's own.
            let (write, read) = futures_util::StreamExt::split(sockudo_accept(stream).await);
            let data = read.try_filter(|m| {
                std::future::ready(matches!(m, Message::Text(_) | Message::Binary(_)))
            });
            let _ = data.forward(write).await;
        })
    });
    addr
}

/// sockudo-ws's `server_handshake` on the raw stream, then
/// `WebSocketStream::server` with the default `Config`.
async fn sockudo_accept(mut stream: TcpStream) -> sockudo_ws::WebSocketStream<TcpStream> {
    let done = sockudo_ws::handshake::server_handshake(&mut stream)
        .await
        .expect("handshake");
    assert!(
        done.leftover.is_none_or(|b| b.is_empty()),
        "no frame before the 101"
    );
    sockudo_ws::WebSocketStream::server(stream, sockudo_ws::Config::default())
}

/// nexus-web's blocking `Client::accept`, a thread per connection, default
/// builder but for the write buffer ([`NEXUS_WRITE_BUFFER`]). Its messages borrow the reader, so each is copied
/// into a reused buffer before it is sent back.
fn nexus(thread: &'static str) -> SocketAddr {
    use nexus_web::ws::{ClientBuilder, Message};

    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = listener.local_addr().expect("addr");
    let named = || thread::Builder::new().name(thread.into());
    named()
        .spawn(move || {
            for stream in listener.incoming() {
                let stream = stream.expect("accept");
                stream.set_nodelay(true).expect("nodelay");
                named()
                    .spawn(move || {
                        let mut ws = ClientBuilder::new()
                            .write_buffer_capacity(NEXUS_WRITE_BUFFER)
                            .accept(stream)
                            .expect("handshake");
                        let (mut binary, mut text) = (Vec::new(), String::new());
                        loop {
                            let sent = match ws.recv() {
                                Ok(Some(Message::Binary(bytes))) => {
                                    binary.clear();
                                    binary.extend_from_slice(bytes);
                                    ws.send_binary(&binary)
                                }
                                Ok(Some(Message::Text(message))) => {
                                    text.clear();
                                    text.push_str(message);
                                    ws.send_text(&text)
                                }
                                Ok(Some(_)) => Ok(()),
                                Ok(None) | Err(_) => return,
                            };
                            if sent.is_err() {
                                return;
                            }
                        }
                    })
                    .expect("connection thread");
            }
        })
        .expect("accept thread");
    addr
}

/// nexus-web's write buffer: it panics on a frame larger than the buffer
/// (its default, 64 KiB, cannot hold a 64 KiB message and its header), so
/// it holds the largest message sent here, 16 MiB.
pub(crate) const NEXUS_WRITE_BUFFER: usize = (16 << 20) + (64 << 10);

/// Reads an upgrade request and answers `101` (the client sends nothing
/// more until it has the answer).
async fn answer_upgrade(stream: &mut TcpStream) {
    let head = read_head(stream).await;
    let mut fields = [httparse::EMPTY_HEADER; 32];
    let mut request = httparse::Request::new(&mut fields);
    request.parse(&head).expect("request head");
    let key = request
        .headers
        .iter()
        .find(|h| h.name.eq_ignore_ascii_case("sec-websocket-key"))
        .expect("sec-websocket-key")
        .value;
    let accept = ringwire_ws::handshake::accept_key(key);
    let answer = format!(
        "HTTP/1.1 101 Switching Protocols\r\nupgrade: websocket\r\nconnection: Upgrade\r\n\
         sec-websocket-accept: {accept}\r\n\r\n"
    );
    stream.write_all(answer.as_bytes()).await.expect("101");
}

/// Bytes up to the end of an HTTP head.
pub(crate) async fn read_head(stream: &mut TcpStream) -> Vec<u8> {
    let mut head = Vec::new();
    while !head.ends_with(b"\r\n\r\n") {
        let mut byte = [0];
        stream.read_exact(&mut byte).await.expect("head");
        head.push(byte[0]);
    }
    head
}
