//! TLS handshakes over loopback TCP, client and ringwire's OpenSSL acceptor in
//! one current-thread runtime (so a figure is both ends' work): a full
//! handshake (a connector that has no session yet) against a resumed one (a
//! connector that kept the session its last connection received), for each
//! client library; and the same against a server that picks its certificate by SNI
//! among nine. Each connection reads the server's first byte, which also
//! takes in the session tickets that TLS 1.3 sends after the handshake, then
//! ends without `close_notify`, as a pooled connection usually does.
//!
//! ```sh
//! cargo bench -p ringwire-bench --bench tls_handshake
//! ```

mod common;

use std::net::SocketAddr;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, BatchSize, Criterion};
use ringwire_io::tokio::{AsyncRecvTransport, AsyncSendTransport};
use ringwire_io::TransportConfig;
use ringwire_tls::{
    self_signed, Backend, ClientConfig, Identity, ServerConfig, TlsAcceptor, TlsConnector,
};
use tokio::net::{TcpListener, TcpStream};
use tokio::runtime::Runtime;

fn rings() -> TransportConfig {
    TransportConfig::new(16 << 10, 16 << 10)
}

/// Accepts connections on `runtime`, says one byte on each, holds it until
/// the client goes.
fn serve(runtime: &Runtime, acceptor: TlsAcceptor) -> SocketAddr {
    let listener = runtime
        .block_on(TcpListener::bind("127.0.0.1:0"))
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    runtime.spawn(async move {
        loop {
            let (tcp, _) = listener.accept().await.expect("accept");
            tcp.set_nodelay(true).expect("nodelay");
            let acceptor = acceptor.clone();
            tokio::spawn(async move {
                let Ok(tls) = acceptor.accept(tcp).await else {
                    return;
                };
                let mut tx = AsyncSendTransport::new(rings(), &tls).expect("tx");
                tx.write(b"!").await.expect("write");
                tx.flush().await.expect("flush");
                let mut rx = AsyncRecvTransport::new(rings(), &tls).expect("rx");
                while matches!(rx.fill(1).await, Ok(n) if n > 0) {}
            });
        }
    });
    addr
}

/// One connection: TCP, the handshake, the server's first byte. Returns
/// whether the handshake resumed a session.
async fn connect(connector: &TlsConnector, addr: SocketAddr) -> bool {
    let tcp = TcpStream::connect(addr).await.expect("connect");
    tcp.set_nodelay(true).expect("nodelay");
    let tls = connector
        .connect("localhost", tcp)
        .await
        .expect("handshake");
    let mut rx = AsyncRecvTransport::new(rings(), &tls).expect("rx");
    assert_eq!(rx.fill(1).await.expect("read"), 1);
    tls.is_resumed()
}

fn bench_handshake(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let (cert, key) = self_signed(&["localhost"]).expect("certificate");
    let server = ServerConfig::from_pem(&cert, &key).expect("server config");
    let plain = serve(&runtime, TlsAcceptor::new(&server).expect("acceptor"));
    // The same certificate, one of nine the server picks from by SNI (`localhost` is not
    // the default one): what choosing costs.
    let (other, other_key) = self_signed(&["default.test"]).expect("certificate");
    let mut several = ServerConfig::from_pem(&other, &other_key).expect("server config");
    for i in 0..7 {
        let (cert, key) = self_signed(&[&format!("site{i}.test")]).expect("certificate");
        several = several.add_identity(Identity::from_pem(&cert, &key).expect("identity"));
    }
    let several = several.add_identity(Identity::from_pem(&cert, &key).expect("identity"));
    let by_sni = serve(&runtime, TlsAcceptor::new(&several).expect("acceptor"));
    let mut group = c.benchmark_group("tls/handshake");
    for (server, addr) in [("", plain), (", picked by SNI", by_sni)] {
        for backend in [Backend::OpenSsl, Backend::Rustls] {
            let config = ClientConfig::default()
                .without_system_roots()
                .add_root_pem(&cert)
                .backend(backend);
            let fresh = || TlsConnector::new(&config).expect("connector");
            group.bench_function(format!("{backend:?}/full{server}"), |b| {
                b.iter_batched(
                    fresh,
                    |connector| assert!(!runtime.block_on(connect(&connector, addr))),
                    BatchSize::SmallInput,
                );
            });
            let connector = fresh();
            runtime.block_on(connect(&connector, addr));
            group.bench_function(format!("{backend:?}/resumed{server}"), |b| {
                b.iter(|| assert!(runtime.block_on(connect(&connector, addr))));
            });
        }
    }
    group.finish();
}

criterion_group! {
    name = benches;
    config = common::short_criterion().measurement_time(Duration::from_secs(3));
    targets = bench_handshake
}
criterion_main!(benches);
