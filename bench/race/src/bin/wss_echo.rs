//! WebSocket echo over TLS on loopback (issue 7): ringwire (server and
//! client on ringwire-tls's OpenSSL backend) against tokio-tungstenite
//! over tokio-rustls (rustls's default provider, aws-lc-rs), each library
//! talking to its own server. A client sends a binary message and waits
//! for its echo, `N` times; rounds alternate between the libraries and the
//! median is reported, with the process's CPU time per message over the
//! round (only that library's server and client run during it).
//!
//! `cargo run --release --manifest-path bench/race/Cargo.toml --bin wss-echo`

use std::sync::Arc;
use std::time::Instant;

use futures_util::{SinkExt as _, StreamExt as _, TryStreamExt as _};
use ringwire_io::tokio::{AsyncRecvTransport, AsyncSendTransport};
use ringwire_io::TransportConfig;
use ringwire_server::{ws, Router, Server, ServerConfig, Threading};
use ringwire_tls::{TlsAcceptor, TlsConnector, TlsStream};
use ringwire_ws::socket::WebSocket;
use ringwire_ws::{Limits, Message};
use rustls::pki_types::pem::PemObject as _;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName};
use tokio::net::{TcpListener, TcpStream};
use tokio_tungstenite::tungstenite;

const SIZES: [usize; 2] = [40, 128];
const N: usize = 20_000;
const ROUNDS: usize = 7;

fn main() {
    let (cert, key) = ringwire_tls::self_signed(&["localhost"]).expect("certificate");
    let ringwire_port = ringwire_server(&cert, &key);
    let tungstenite_port = tungstenite_server(&cert, &key);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    runtime.block_on(async {
        let tls = ringwire_tls::ClientConfig::default()
            .without_system_roots()
            .add_root_pem(&cert)
            .alpn(&[b"http/1.1"]);
        let connector = TlsConnector::new(&tls).expect("connector");
        let tcp = TcpStream::connect(("127.0.0.1", ringwire_port)).await.unwrap();
        tcp.set_nodelay(true).unwrap();
        let stream: TlsStream<TcpStream> = connector.connect("localhost", tcp).await.unwrap();
        let config = TransportConfig::new(64 << 10, 16 << 20);
        let rx = AsyncRecvTransport::new(config, &stream).unwrap();
        let tx = AsyncSendTransport::new(config, &stream).unwrap();
        let (mut ours, _) =
            WebSocket::connect(rx, tx, "localhost", "/echo", &[], None, Limits::default())
                .await
                .expect("ringwire handshake");
        let mut theirs = tungstenite_client(&cert, tungstenite_port).await;

        println!("| message | library | median msg/s | CPU µs/msg (client + server) |");
        println!("|---|---|---:|---:|");
        for size in SIZES {
            let payload: Vec<u8> = (0..size).map(|i| (i % 251) as u8).collect();
            let mut results = [Vec::new(), Vec::new()];
            for round in 0..=ROUNDS {
                let (cpu, start) = (cpu_seconds(), Instant::now());
                for _ in 0..N {
                    ours.send(&Message::Binary(&payload)).await.unwrap();
                    match ours.recv().await {
                        Some(Ok((Message::Binary(echo), _))) => assert_eq!(echo.len(), size),
                        other => panic!("ringwire: {other:?}"),
                    }
                }
                let ringwire = (start.elapsed().as_secs_f64(), cpu_seconds() - cpu);
                let (cpu, start) = (cpu_seconds(), Instant::now());
                for _ in 0..N {
                    theirs
                        .send(tungstenite::Message::binary(payload.clone()))
                        .await
                        .unwrap();
                    let echo = theirs.next().await.unwrap().unwrap();
                    assert_eq!(echo.len(), size);
                }
                let tungstenite = (start.elapsed().as_secs_f64(), cpu_seconds() - cpu);
                // Round 0 warms up.
                if round > 0 {
                    results[0].push(ringwire);
                    results[1].push(tungstenite);
                }
            }
            for (name, runs) in ["ringwire (OpenSSL)", "tokio-tungstenite (rustls)"]
                .iter()
                .zip(&mut results)
            {
                runs.sort_by(|a, b| a.0.total_cmp(&b.0));
                let (wall, cpu) = runs[runs.len() / 2];
                println!(
                    "| {size} B | {name} | {:.0} | {:.2} |",
                    N as f64 / wall,
                    cpu * 1e6 / N as f64
                );
            }
        }
    });
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

/// ringwire's echo (`ringwire_server::ws::echo`) over HTTPS, on a thread of
/// its own; returns the port.
fn ringwire_server(cert: &[u8], key: &[u8]) -> u16 {
    let config = ServerConfig {
        threading: Threading::PerCore(1),
        ..ServerConfig::new("127.0.0.1:0".parse().unwrap())
    };
    let tls = ringwire_tls::ServerConfig::from_pem(cert, key)
        .unwrap()
        .alpn(&[b"http/1.1"]);
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

fn rustls_provider() -> Arc<rustls::crypto::CryptoProvider> {
    // Named: ringwire-tls compiles rustls's `ring` provider in as well.
    Arc::new(rustls::crypto::aws_lc_rs::default_provider())
}

/// tokio-tungstenite's echo as its README writes it (`forward` of the
/// data messages) behind tokio-rustls, on a current-thread runtime of its own.
fn tungstenite_server(cert: &[u8], key: &[u8]) -> u16 {
    let chain = CertificateDer::pem_slice_iter(cert)
        .collect::<Result<Vec<_>, _>>()
        .unwrap();
    let key = PrivateKeyDer::from_pem_slice(key).unwrap();
    let config = rustls::ServerConfig::builder_with_provider(rustls_provider())
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(chain, key)
        .unwrap();
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
                    let data = read.try_filter(|m| std::future::ready(m.is_binary() || m.is_text()));
                    let _ = data.forward(write).await;
                });
            }
        });
    });
    port
}

type TungsteniteClient =
    tokio_tungstenite::WebSocketStream<tokio_rustls::client::TlsStream<TcpStream>>;

async fn tungstenite_client(cert: &[u8], port: u16) -> TungsteniteClient {
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
    let (ws, _) = tokio_tungstenite::client_async("wss://localhost/echo", tls)
        .await
        .unwrap();
    ws
}
