//! WebSocket over TLS on loopback (issue 7): ringwire (server and client on
//! ringwire-tls, its OpenSSL backend and its rustls one) against
//! tokio-tungstenite over tokio-rustls (rustls's default provider,
//! aws-lc-rs). Two measurements, rounds alternating between the libraries,
//! medians reported:
//!
//! - **Echo**, each library's client against its own server: a binary
//!   message and its echo, `N` times one at a time, then `N` in batches of
//!   100 in flight; CPU is the whole process's over the round (only that
//!   library's server and client run during it).
//! - **Receive stream**, the reference's way (nexus-web's
//!   `perf_throughput`): one server sends `STREAM` messages right after
//!   the upgrade and each client reads them; CPU is the client's thread.
//!
//! `cargo run --release --manifest-path bench/race/Cargo.toml --bin wss-echo`

use ringwire_ws::handshake::Offer;
use std::sync::Arc;
use std::time::Instant;

use futures_util::{SinkExt as _, StreamExt as _, TryStreamExt as _};
use ringwire_io::tokio::{AsyncRecvTransport, AsyncSendTransport};
use ringwire_io::TransportConfig;
use ringwire_server::{ws, Router, Server, ServerConfig, Threading};
use ringwire_tls::{Backend, TlsAcceptor, TlsConnector, TlsStream};
use ringwire_ws::socket::WebSocket;
use ringwire_ws::{Limits, Message};
use rustls::pki_types::pem::PemObject as _;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName};
use tokio::net::{TcpListener, TcpStream};
use tokio_tungstenite::tungstenite;

const SIZES: [usize; 2] = [40, 128];
/// Messages in flight: a strict echo, then batches of 100 (each library's
/// own way: ringwire `queue`s, tokio-tungstenite `feed`s, both then flush
/// once and read the 100 echoes).
const DEPTHS: [usize; 2] = [1, 100];
const N: usize = 20_000;
/// Messages per connection in the receive stream.
const STREAM: usize = 1_000_000;
const ROUNDS: usize = 7;

/// The rows: ringwire on each TLS backend, then tokio-tungstenite.
const LIBRARIES: [&str; 3] = [
    "ringwire (OpenSSL)",
    "ringwire (rustls)",
    "tokio-tungstenite (rustls)",
];
const BACKENDS: [Backend; 2] = [Backend::OpenSsl, Backend::Rustls];

type RingwireClient = WebSocket<Arc<TlsStream<TcpStream>>>;

fn main() {
    let (cert, key) = ringwire_tls::self_signed(&["localhost"]).expect("certificate");
    let ringwire_ports = BACKENDS.map(|backend| ringwire_server(&cert, &key, backend));
    let tungstenite_port = tungstenite_server(&cert, &key);
    let blast_port = blast_server(&cert, &key);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    runtime.block_on(async {
        let mut ours = Vec::new();
        for (port, backend) in ringwire_ports.into_iter().zip(BACKENDS) {
            ours.push(ringwire_client(&cert, port, "/echo", backend).await);
        }
        let mut theirs = tungstenite_client(&cert, tungstenite_port, "/echo").await;

        println!("| in flight | message | library | median msg/s | CPU µs/msg (client + server) |");
        println!("|---:|---|---|---:|---:|");
        for depth in DEPTHS {
            for size in SIZES {
                let payload: Vec<u8> = (0..size).map(|i| (i % 251) as u8).collect();
                let mut results: Results = Default::default();
                for round in 0..=ROUNDS {
                    let mut runs = Vec::new();
                    for socket in &mut ours {
                        runs.push(ringwire_echo(socket, depth, &payload).await);
                    }
                    runs.push(tungstenite_echo(&mut theirs, depth, &payload).await);
                    // Round 0 warms up.
                    if round > 0 {
                        keep(&mut results, runs);
                    }
                }
                report(&mut results, |name, wall, cpu| {
                    let (rate, cpu) = (N as f64 / wall, cpu * 1e6 / N as f64);
                    format!("| {depth} | {size} B | {name} | {rate:.0} | {cpu:.2} |")
                });
            }
        }

        println!();
        println!("| message | library | median msg/s | client CPU ns/msg |");
        println!("|---|---|---:|---:|");
        for size in SIZES {
            let path = format!("/blast?size={size}&n={STREAM}");
            let mut results: Results = Default::default();
            for round in 0..=ROUNDS {
                let mut runs = Vec::new();
                for backend in BACKENDS {
                    let socket = ringwire_client(&cert, blast_port, &path, backend).await;
                    runs.push(ringwire_stream(socket, size).await);
                }
                let socket = tungstenite_client(&cert, blast_port, &path).await;
                runs.push(tungstenite_stream(socket, size).await);
                if round > 0 {
                    keep(&mut results, runs);
                }
            }
            report(&mut results, |name, wall, cpu| {
                let (rate, cpu) = (STREAM as f64 / wall, cpu * 1e9 / STREAM as f64);
                format!("| {size} B | {name} | {rate:.0} | {cpu:.1} |")
            });
        }
    });
}

/// (wall, CPU) seconds of every round, per library in [`LIBRARIES`] order.
type Results = [Vec<(f64, f64)>; 3];

/// Adds one round's runs, one per library.
fn keep(results: &mut Results, runs: Vec<(f64, f64)>) {
    results
        .iter_mut()
        .zip(runs)
        .for_each(|(r, run)| r.push(run));
}

/// Prints `row(library, wall, cpu)` for each library's run of median wall time.
fn report(results: &mut Results, row: impl Fn(&str, f64, f64) -> String) {
    for (name, runs) in LIBRARIES.iter().zip(results) {
        runs.sort_by(|a, b| a.0.total_cmp(&b.0));
        let (wall, cpu) = runs[runs.len() / 2];
        println!("{}", row(name, wall, cpu));
    }
}

/// `N` echoes, `depth` at a time; (wall, process CPU) seconds.
async fn ringwire_echo(socket: &mut RingwireClient, depth: usize, payload: &[u8]) -> (f64, f64) {
    let (cpu, start) = (cpu_seconds(), Instant::now());
    for _ in 0..N / depth {
        for _ in 0..depth {
            socket.queue(&Message::Binary(payload)).await.unwrap();
        }
        socket.flush().await.unwrap();
        for _ in 0..depth {
            match socket.recv().await {
                Some(Ok((Message::Binary(echo), _))) => assert_eq!(echo.len(), payload.len()),
                other => panic!("ringwire: {other:?}"),
            }
        }
    }
    (start.elapsed().as_secs_f64(), cpu_seconds() - cpu)
}

async fn tungstenite_echo(
    socket: &mut TungsteniteClient,
    depth: usize,
    payload: &[u8],
) -> (f64, f64) {
    let (cpu, start) = (cpu_seconds(), Instant::now());
    for _ in 0..N / depth {
        for _ in 0..depth {
            let message = tungstenite::Message::binary(payload.to_vec());
            socket.feed(message).await.unwrap();
        }
        socket.flush().await.unwrap();
        for _ in 0..depth {
            let echo = socket.next().await.unwrap().unwrap();
            assert_eq!(echo.len(), payload.len());
        }
    }
    (start.elapsed().as_secs_f64(), cpu_seconds() - cpu)
}

/// `STREAM` messages from the blast server; (wall, this thread's CPU) seconds.
async fn ringwire_stream(mut socket: RingwireClient, size: usize) -> (f64, f64) {
    let (cpu, start) = (thread_cpu_seconds(), Instant::now());
    for _ in 0..STREAM {
        match socket.recv().await {
            Some(Ok((Message::Binary(m), _))) => assert_eq!(m.len(), size),
            other => panic!("ringwire: {other:?}"),
        }
    }
    (start.elapsed().as_secs_f64(), thread_cpu_seconds() - cpu)
}

async fn tungstenite_stream(mut socket: TungsteniteClient, size: usize) -> (f64, f64) {
    let (cpu, start) = (thread_cpu_seconds(), Instant::now());
    for _ in 0..STREAM {
        let message = socket.next().await.unwrap().unwrap();
        assert_eq!(message.len(), size);
    }
    (start.elapsed().as_secs_f64(), thread_cpu_seconds() - cpu)
}

/// CPU time of the calling thread (the clients' runtime), in seconds.
fn thread_cpu_seconds() -> f64 {
    let stat = std::fs::read_to_string("/proc/thread-self/schedstat").unwrap();
    let ns: u64 = stat.split_whitespace().next().unwrap().parse().unwrap();
    ns as f64 / 1e9
}

/// utime + stime of the whole process, in seconds.
fn cpu_seconds() -> f64 {
    let mut usage = std::mem::MaybeUninit::<libc::rusage>::zeroed();
    // SAFETY: `getrusage` fills the struct it is given; zeroed is a valid start.
    let usage = unsafe {
        libc::getrusage(libc::RUSAGE_SELF, usage.as_mut_ptr());
        usage.assume_init()
    };
    let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    secs(usage.ru_utime) + secs(usage.ru_stime)
}

/// ringwire's echo (`ringwire_server::ws::echo`) over HTTPS on `backend`,
/// on a thread of its own; returns the port.
fn ringwire_server(cert: &[u8], key: &[u8], backend: Backend) -> u16 {
    let config = ServerConfig {
        threading: Threading::PerCore(1),
        ..ServerConfig::new("127.0.0.1:0".parse().unwrap())
    };
    let tls = ringwire_tls::ServerConfig::from_pem(cert, key)
        .unwrap()
        .alpn(&[b"http/1.1"])
        .backend(backend);
    let server = Server::bind(config)
        .unwrap()
        .with_tls(TlsAcceptor::new(&tls).unwrap());
    let port = server.local_addr().port();
    std::thread::spawn(move || {
        server
            .run(Router::new().get("/echo", ws::echo), std::future::pending())
            .unwrap();
    });
    port
}

fn rustls_server_config(cert: &[u8], key: &[u8]) -> rustls::ServerConfig {
    let chain = CertificateDer::pem_slice_iter(cert)
        .collect::<Result<Vec<_>, _>>()
        .unwrap();
    let key = PrivateKeyDer::from_pem_slice(key).unwrap();
    rustls::ServerConfig::builder_with_provider(rustls_provider())
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(chain, key)
        .unwrap()
}

fn rustls_provider() -> Arc<rustls::crypto::CryptoProvider> {
    // Named: ringwire-tls compiles rustls's `ring` provider in as well.
    Arc::new(rustls::crypto::aws_lc_rs::default_provider())
}

/// tokio-tungstenite's echo as its README writes it (`forward` of the
/// data messages) behind tokio-rustls, on a current-thread runtime of its own.
fn tungstenite_server(cert: &[u8], key: &[u8]) -> u16 {
    let config = rustls_server_config(cert, key);
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        runtime.block_on(async move {
            let listener = TcpListener::from_std(listener).unwrap();
            loop {
                let (tcp, _) = listener.accept().await.unwrap();
                tcp.set_nodelay(true).unwrap();
                let acceptor = acceptor.clone();
                tokio::spawn(async move {
                    let tls = acceptor.accept(tcp).await.unwrap();
                    let ws = tokio_tungstenite::accept_async(tls).await.unwrap();
                    let (write, read) = ws.split();
                    let data =
                        read.try_filter(|m| std::future::ready(m.is_binary() || m.is_text()));
                    let _ = data.forward(write).await;
                });
            }
        });
    });
    port
}

/// ringwire's client over ringwire-tls, upgraded on `path`.
async fn ringwire_client(cert: &[u8], port: u16, path: &str, backend: Backend) -> RingwireClient {
    let tls = ringwire_tls::ClientConfig::default()
        .without_system_roots()
        .add_root_pem(cert)
        .alpn(&[b"http/1.1"])
        .backend(backend);
    let connector = TlsConnector::new(&tls).expect("connector");
    let tcp = TcpStream::connect(("127.0.0.1", port)).await.unwrap();
    tcp.set_nodelay(true).unwrap();
    let stream = Arc::new(connector.connect("localhost", tcp).await.unwrap());
    let config = TransportConfig::new(64 << 10, 16 << 20);
    let rx = AsyncRecvTransport::new(config, stream.clone()).unwrap();
    let tx = AsyncSendTransport::new(config, stream).unwrap();
    let (socket, _) = WebSocket::connect(
        rx,
        tx,
        "localhost",
        path,
        &Offer::default(),
        Limits::default(),
    )
    .await
    .expect("ringwire handshake");
    socket
}

type TungsteniteClient =
    tokio_tungstenite::WebSocketStream<tokio_rustls::client::TlsStream<TcpStream>>;

async fn tungstenite_client(cert: &[u8], port: u16, path: &str) -> TungsteniteClient {
    let mut roots = rustls::RootCertStore::empty();
    for ca in CertificateDer::pem_slice_iter(cert) {
        roots.add(ca.unwrap()).unwrap();
    }
    let config = rustls::ClientConfig::builder_with_provider(rustls_provider())
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_root_certificates(roots)
        .with_no_client_auth();
    let connector = tokio_rustls::TlsConnector::from(Arc::new(config));
    let tcp = TcpStream::connect(("127.0.0.1", port)).await.unwrap();
    tcp.set_nodelay(true).unwrap();
    let tls = connector
        .connect(ServerName::try_from("localhost").unwrap(), tcp)
        .await
        .unwrap();
    let (ws, _) = tokio_tungstenite::client_async(format!("wss://localhost{path}"), tls)
        .await
        .unwrap();
    ws
}

/// The reference's way to measure (`perf_throughput` in nexus-web): a
/// server that sends `n` binary messages of `size` bytes (`/blast?size=&n=`)
/// right after the upgrade and keeps the connection until the client
/// drops it. The frames are encrypted (rustls, aws-lc-rs) before the 101
/// goes out, so the clients' timing holds reading, decrypting and parsing
/// only, plus the kernel's copies. A thread per connection.
fn blast_server(cert: &[u8], key: &[u8]) -> u16 {
    let config = Arc::new(rustls_server_config(cert, key));
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for tcp in listener.incoming() {
            let (mut tcp, config) = (tcp.unwrap(), config.clone());
            std::thread::spawn(move || blast(&mut tcp, config));
        }
    });
    port
}

fn blast(tcp: &mut std::net::TcpStream, config: Arc<rustls::ServerConfig>) {
    use std::io::{Read as _, Write as _};
    tcp.set_nodelay(true).unwrap();
    let mut tls = rustls::ServerConnection::new(config).unwrap();
    let mut head = Vec::new();
    while !head.ends_with(b"\r\n\r\n") {
        tls.complete_io(tcp).unwrap();
        let mut buf = [0; 4096];
        match tls.reader().read(&mut buf) {
            Ok(n) => head.extend_from_slice(&buf[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
            Err(e) => panic!("blast: {e}"),
        }
    }
    let head = String::from_utf8(head).unwrap();
    let field = |name: &str| {
        head.lines()
            .find_map(|l| {
                l.split_once(':')
                    .filter(|(n, _)| n.eq_ignore_ascii_case(name))
            })
            .map(|(_, v)| v.trim().to_owned())
            .unwrap()
    };
    let query = head.split_once('?').unwrap().1.split_once(' ').unwrap().0;
    let param = |name: &str| -> usize {
        query
            .split('&')
            .find_map(|kv| kv.strip_prefix(name)?.strip_prefix('='))
            .unwrap()
            .parse()
            .unwrap()
    };
    let (size, n) = (param("size"), param("n"));
    let accept = tungstenite::handshake::derive_accept_key(field("sec-websocket-key").as_bytes());
    let mut plain = format!(
        "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
         Sec-WebSocket-Accept: {accept}\r\n\r\n"
    )
    .into_bytes();
    let header: &[u8] = match u16::try_from(size).unwrap() {
        len @ 0..=125 => &[0x82, len as u8],
        len => &[0x82, 126, (len >> 8) as u8, len as u8],
    };
    for _ in 0..n {
        plain.extend_from_slice(header);
        plain.extend((0..size).map(|i| (i % 251) as u8));
    }
    tls.set_buffer_limit(None);
    tls.writer().write_all(&plain).unwrap();
    let mut wire = Vec::with_capacity(plain.len() + plain.len() / 64);
    while tls.wants_write() {
        tls.write_tls(&mut wire).unwrap();
    }
    tcp.write_all(&wire).unwrap();
    // Until the client goes.
    let _ = tcp.read(&mut [0; 4096]);
}
