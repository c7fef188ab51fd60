//! What pooled connections hold once idle: a second after their last exchange, a sweep
//! (run as the pool is next used, for any origin) gives back their rings' pages and TLS
//! buffers. One test, so that no other test's memory moves the process's RSS meanwhile.

mod common;

use std::time::Duration;

use ringwire_client::{blocking, tokio as async_client, ClientConfig, RequestBuffer, Url};
use serde::Deserialize;

/// 700 KB of JSON: one string, read with it borrowed.
static LARGE: std::sync::LazyLock<String> =
    std::sync::LazyLock::new(|| format!(r#"{{"blob":"{}"}}"#, "a".repeat(700_000)));

struct Large;

impl ringwire_server::Handler for Large {
    async fn call(&self, _: &ringwire_server::Request<'_>) -> ringwire_server::Response {
        ringwire_server::Response::new(200).body(LARGE.as_bytes())
    }
}

struct Small;

impl ringwire_server::Handler for Small {
    async fn call(&self, _: &ringwire_server::Request<'_>) -> ringwire_server::Response {
        ringwire_server::Response::new(200).body("ok")
    }
}

#[derive(Deserialize)]
struct Blob<'a> {
    blob: &'a str,
}

/// Resident memory of this process, in bytes.
fn rss() -> usize {
    let statm = std::fs::read_to_string("/proc/self/statm").unwrap();
    let pages: usize = statm.split(' ').nth(1).unwrap().parse().unwrap();
    pages * 4096
}

/// Past the cooling period (1 s), with time for the sweep's once-a-second gate.
fn idle_a_while() {
    std::thread::sleep(Duration::from_millis(1100));
}

#[test]
fn idle_pooled_connections_give_their_memory_back() {
    std::sync::LazyLock::force(&LARGE);
    let other = Url::parse(&format!("http://{}/", common::ringwire(Small))).unwrap();

    // A receive ring grown to hold a large answer whole (`Response::json` in place).
    let large = Url::parse(&format!("http://{}/large", common::ringwire(Large))).unwrap();
    let client = blocking::Client::default();
    let mut buffer = RequestBuffer::new().unwrap();
    let mut get = |url: &Url| {
        let request = buffer.request("GET", url).unwrap().headers().unwrap();
        let request = request.finish().unwrap();
        let mut response = client.send(&mut buffer, &request).unwrap();
        if url == &large {
            let blob: Blob<'_> = response.json().unwrap();
            assert_eq!(blob.blob.len(), 700_000);
        } else {
            response.bytes().unwrap();
        }
    };
    get(&large);
    idle_a_while();
    let pooled = rss();
    // Using the pool for another origin sweeps it: the large answer's pages go.
    get(&other);
    let swept = rss();
    let given_back = pooled.saturating_sub(swept);
    eprintln!("grown ring: {given_back} bytes given back");
    assert!(given_back > 256 << 10, "{given_back} bytes given back");
    // The connection stays pooled, and carries the next large answer.
    assert_eq!(client.idle_connections(&large), 1);
    get(&large);
    assert_eq!(client.idle_connections(&large), 1);

    // Many HTTPS connections, each answered once and pooled: their TLS buffers and rings.
    const CONNECTIONS: usize = 100;
    let (addr, cert) = common::ringwire_tls(Small);
    let url = Url::parse(&format!("https://localhost:{}/", addr.port())).unwrap();
    let config = ClientConfig {
        max_idle_per_host: CONNECTIONS,
        ..ClientConfig::default()
    };
    let tls = ringwire_tls::ClientConfig::default().add_root_pem(&cert);
    let client =
        async_client::Client::with_tls(config, tls).resolve("localhost", addr.port(), addr.ip());
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let fetch = |url: &Url| {
        let client = &client;
        let url = url.clone();
        async move {
            let mut buffer = RequestBuffer::new().unwrap();
            let request = buffer.request("GET", &url).unwrap().headers().unwrap();
            let request = request.finish().unwrap();
            let mut response = client.send(&mut buffer, &request).await.unwrap();
            assert_eq!(response.bytes().await.unwrap(), b"ok");
        }
    };
    runtime.block_on(async {
        let all = (0..CONNECTIONS).map(|_| fetch(&url));
        futures_util::future::join_all(all).await;
    });
    assert_eq!(client.idle_connections(&url), CONNECTIONS);
    // The server's side of them idles as well, in this process: its warm period (1 s) is
    // let pass first, so that what moves next is the client's.
    idle_a_while();
    let pooled = rss();
    runtime.block_on(fetch(&other));
    let swept = rss();
    let per_connection = pooled.saturating_sub(swept) / CONNECTIONS;
    eprintln!("HTTPS: {per_connection} bytes given back per idle connection");
    assert!(
        per_connection > 8 << 10,
        "{per_connection} bytes per connection"
    );
    // Still pooled, and usable.
    assert_eq!(client.idle_connections(&url), CONNECTIONS);
    runtime.block_on(fetch(&url));
}
