//! The client's hot path allocates nothing once warm: a request encoded
//! into the send ring, sent on a pooled connection, its response parsed and
//! its body read in the receive ring, the connection pooled again; over
//! plain TCP and over TLS, and over HTTP/2; bodies streamed from a source or a file too.
//!
//! The counting allocator counts only on threads that ask it to, so the
//! server running in this process (on its own threads) is not counted.

mod common;

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use common::Echo;
use ringwire_client::{blocking, tokio as async_client, ClientConfig, Http2, RequestBuffer, Url};

struct Counting;

thread_local! {
    /// Allocations on this thread while counting; `None` when not counting.
    static COUNT: Cell<Option<usize>> = const { Cell::new(None) };
}

fn count() {
    COUNT.with(|c| c.set(c.get().map(|n| n + 1)));
}

// SAFETY: forwards to the system allocator unchanged; only counts.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count();
        // SAFETY: the caller upholds `GlobalAlloc::alloc`'s contract.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` came from `System.alloc` with this layout.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count();
        // SAFETY: the caller upholds `GlobalAlloc::realloc`'s contract.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// A runtime on this thread, so that every task it runs is counted.
fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

/// Allocations `f` makes on this thread.
fn allocations(f: impl FnOnce()) -> usize {
    COUNT.with(|c| c.set(Some(0)));
    f();
    COUNT.with(|c| c.replace(None)).unwrap_or_default()
}

const BODY: &[u8] =
    br#"{"symbol":"RING","side":"buy","qty":100,"price":"12.50","client_id":"c-000001"}"#;

#[test]
fn blocking_requests_allocate_nothing_once_warm() {
    let addr = common::ringwire(Echo);
    let url = Url::parse(&format!("http://{addr}/orders")).unwrap();
    blocking_round_trips(&blocking::Client::default(), &url);
}

#[test]
fn blocking_https_requests_allocate_nothing_once_warm() {
    let (addr, cert) = common::ringwire_tls(Echo);
    let url = Url::parse(&format!("https://localhost:{}/orders", addr.port())).unwrap();
    let tls = ringwire_tls::ClientConfig::default().add_root_pem(&cert);
    blocking_round_trips(
        &blocking::Client::with_tls(ClientConfig::default(), tls),
        &url,
    );
}

#[test]
fn blocking_h2_requests_allocate_nothing_once_warm() {
    let addr = common::ringwire(Echo);
    let url = Url::parse(&format!("http://{addr}/orders")).unwrap();
    let config = ClientConfig {
        http2: Http2::PriorKnowledge,
        ..ClientConfig::default()
    };
    blocking_round_trips(&blocking::Client::new(config), &url);
}

fn blocking_round_trips(client: &blocking::Client, url: &Url) {
    let mut buffer = RequestBuffer::new().unwrap();
    let mut round_trip = || {
        let request = buffer
            .request("POST", url)
            .unwrap()
            .query("dry_run", "yes")
            .unwrap()
            .headers()
            .unwrap()
            .header("content-type", "application/json")
            .unwrap()
            .header("accept", "application/json")
            .unwrap()
            .body(BODY)
            .unwrap();
        let mut response = client.send(&mut buffer, &request).unwrap();
        assert_eq!(response.status(), 200);
        let mut len = 0;
        while let Some(chunk) = response.chunk().unwrap() {
            len += chunk.len();
        }
        assert!(len > BODY.len());
    };
    // Warm: past the bounds of what a connection keeps (an HTTP/2 one
    // remembers its last 128 closed streams).
    for _ in 0..200 {
        round_trip();
    }
    assert_eq!(allocations(|| (0..100).for_each(|_| round_trip())), 0);
    assert_eq!(client.idle_connections(url), 1);
}

#[test]
fn blocking_streamed_bodies_allocate_nothing_once_warm() {
    let addr = common::ringwire(Echo);
    let url = Url::parse(&format!("http://{addr}/orders")).unwrap();
    streamed_round_trips(&blocking::Client::default(), &url);
    let config = ClientConfig {
        http2: Http2::PriorKnowledge,
        ..ClientConfig::default()
    };
    streamed_round_trips(&blocking::Client::new(config), &url);
}

/// Bodies read from sources as they are sent: of known length, chunked, and from a file
/// (by `sendfile` over HTTP/1.1).
fn streamed_round_trips(client: &blocking::Client, url: &Url) {
    use std::io::{Seek as _, SeekFrom};
    let path = std::env::temp_dir().join(format!("ringwire-alloc-{}", std::process::id()));
    std::fs::write(&path, BODY).unwrap();
    let mut file = std::fs::File::open(&path).unwrap();
    let mut buffer = RequestBuffer::new().unwrap();
    let mut round_trip = |kind: usize| {
        let head = buffer.request("POST", url).unwrap().headers().unwrap();
        let len = (kind != 1).then_some(BODY.len() as u64);
        let request = head.body_stream(len).unwrap();
        let mut response = if kind == 2 {
            file.seek(SeekFrom::Start(0)).unwrap();
            client.send_file(&mut buffer, &request, &file).unwrap()
        } else {
            client.send_streamed(&mut buffer, &request, BODY).unwrap()
        };
        assert_eq!(response.status(), 200);
        let mut len = 0;
        while let Some(chunk) = response.chunk().unwrap() {
            len += chunk.len();
        }
        assert!(len > BODY.len());
    };
    for kind in (0..3).cycle().take(300) {
        round_trip(kind);
    }
    let counted = allocations(|| (0..3).cycle().take(99).for_each(&mut round_trip));
    assert_eq!(counted, 0);
    assert_eq!(client.idle_connections(url), 1);
    std::fs::remove_file(&path).unwrap();
}

#[test]
fn async_requests_allocate_nothing_once_warm() {
    let addr = common::ringwire(Echo);
    let url = Url::parse(&format!("http://{addr}/orders")).unwrap();
    let client = async_client::Client::default();
    async_round_trips(&client, &url);
    assert_eq!(client.idle_connections(&url), 1);
}

#[test]
fn async_https_requests_allocate_nothing_once_warm() {
    let (addr, cert) = common::ringwire_tls(Echo);
    let url = Url::parse(&format!("https://localhost:{}/orders", addr.port())).unwrap();
    let tls = ringwire_tls::ClientConfig::default().add_root_pem(&cert);
    let client = async_client::Client::with_tls(ClientConfig::default(), tls);
    async_round_trips(&client, &url);
    assert_eq!(client.idle_connections(&url), 1);
}

#[test]
fn async_h2_requests_allocate_nothing_once_warm() {
    let addr = common::ringwire(Echo);
    let url = Url::parse(&format!("http://{addr}/orders")).unwrap();
    // On the origin's shared connection (a connection a round would allocate)...
    let config = ClientConfig {
        http2: Http2::PriorKnowledge,
        ..ClientConfig::default()
    };
    let client = async_client::Client::new(config);
    async_round_trips(&client, &url);
    assert_eq!(client.idle_connections(&url), 0);
    // ... and each on a connection of its own.
    let config = ClientConfig {
        http2_multiplex: false,
        ..config
    };
    let client = async_client::Client::new(config);
    async_round_trips(&client, &url);
    assert_eq!(client.idle_connections(&url), 1);
}

/// Allocations on this thread over 100 rounds of `round`, after 200 to warm up (as the
/// blocking test).
async fn counted_rounds(mut round: impl AsyncFnMut()) -> Option<usize> {
    let mut counted = None;
    for i in 0..300 {
        if i == 200 {
            COUNT.with(|c| c.set(Some(0)));
        }
        round().await;
        if i == 299 {
            counted = COUNT.with(|c| c.replace(None));
        }
    }
    counted
}

/// The JSON order, written into `buffer`.
fn order<'a>(buffer: &mut RequestBuffer, url: &'a Url) -> ringwire_client::Request<'a> {
    buffer
        .request("POST", url)
        .unwrap()
        .headers()
        .unwrap()
        .header("content-type", "application/json")
        .unwrap()
        .body(BODY)
        .unwrap()
}

/// Rounds of [`order`] sent by `client` allocate nothing once warm.
fn async_round_trips(client: &async_client::Client, url: &Url) {
    let runtime = runtime();
    let mut buffer = RequestBuffer::new().unwrap();
    // One `block_on` for all of it: tokio boxes a large future it is given.
    let counted = runtime.block_on(counted_rounds(async || {
        let request = order(&mut buffer, url);
        let mut response = client.send(&mut buffer, &request).await.unwrap();
        assert_eq!(response.status(), 200);
        while response.chunk().await.unwrap().is_some() {}
    }));
    assert_eq!(counted, Some(0));
}

/// JSON answers (feature `json`).
#[cfg(feature = "json")]
mod json {
    use super::*;

    /// A JSON answer, as a REST API sends it: with a `content-length`.
    struct Quote;

    impl ringwire_server::Handler for Quote {
        async fn call(&self, _: &ringwire_server::Request<'_>) -> ringwire_server::Response {
            ringwire_server::Response::new(200)
                .header("content-type", "application/json")
                .body(BODY)
        }
    }

    /// [`BODY`] read with its strings borrowed.
    #[derive(serde::Deserialize)]
    struct Order<'a> {
        symbol: &'a str,
        side: &'a str,
        qty: u32,
        price: &'a str,
        client_id: &'a str,
    }

    fn check(order: &Order<'_>) {
        assert_eq!(
            (
                order.symbol,
                order.side,
                order.qty,
                order.price,
                order.client_id
            ),
            ("RING", "buy", 100, "12.50", "c-000001")
        );
    }

    #[test]
    fn json_answers_are_read_in_place_with_no_allocation_once_warm() {
        let addr = common::ringwire(Quote);
        let url = Url::parse(&format!("http://{addr}/quote")).unwrap();
        let client = blocking::Client::default();
        let mut buffer = RequestBuffer::new().unwrap();
        let mut round_trip = || {
            let request = buffer.request("GET", &url).unwrap().headers().unwrap();
            let request = request.finish().unwrap();
            let mut response = client.send(&mut buffer, &request).unwrap();
            check(&response.json::<Order<'_>>().unwrap());
        };
        for _ in 0..200 {
            round_trip();
        }
        assert_eq!(allocations(|| (0..100).for_each(|_| round_trip())), 0);
        // Each response, dropped after its JSON was read, gave its connection back.
        assert_eq!(client.idle_connections(&url), 1);

        let client = async_client::Client::default();
        let runtime = runtime();
        let counted = runtime.block_on(async {
            let mut counted = None;
            for round in 0..300 {
                if round == 200 {
                    COUNT.with(|c| c.set(Some(0)));
                }
                let request = buffer.request("GET", &url).unwrap().headers().unwrap();
                let request = request.finish().unwrap();
                let mut response = client.send(&mut buffer, &request).await.unwrap();
                check(&response.json::<Order<'_>>().await.unwrap());
                drop(response);
                if round == 299 {
                    counted = COUNT.with(|c| c.replace(None));
                }
            }
            counted
        });
        assert_eq!(counted, Some(0));
        assert_eq!(client.idle_connections(&url), 1);
    }
}

/// A shared HTTP/2 connection too: the request's task and the connection's (on the same
/// runtime thread, so both are counted) allocate nothing per exchange once warm.
#[test]
fn shared_h2_requests_allocate_nothing_once_warm() {
    let addr = common::ringwire(Echo);
    let url = Url::parse(&format!("http://{addr}/orders")).unwrap();
    let runtime = runtime();
    let mut buffer = RequestBuffer::new().unwrap();
    let client = async_client::Client::default();
    let counted = runtime.block_on(async {
        let conn = client.http2_connection(&url).await.unwrap();
        counted_rounds(async || {
            let request = order(&mut buffer, &url);
            let mut response = conn.send(&mut buffer, &request).await.unwrap();
            assert_eq!(response.status(), 200);
            while response.chunk().await.unwrap().is_some() {}
        })
        .await
    });
    assert_eq!(counted, Some(0));
}

/// A body larger than the server's windows, sent on the shared connection the client keeps
/// for the origin, goes out of the send ring as they open: not copied aside to wait.
#[test]
fn large_bodies_on_a_shared_connection_allocate_nothing_once_warm() {
    const LEN: usize = 1 << 20;
    let addr = common::ringwire(common::Sum);
    let url = Url::parse(&format!("http://{addr}/upload")).unwrap();
    let runtime = runtime();
    let mut buffer = RequestBuffer::new().unwrap();
    buffer.reserve(LEN).unwrap();
    let body = vec![7; LEN];
    let config = ClientConfig {
        http2: Http2::PriorKnowledge,
        ..ClientConfig::default()
    };
    let client = async_client::Client::new(config);
    let (expected, mut answer) = (common::summed(&body), Vec::with_capacity(64));
    let counted = runtime.block_on(counted_rounds(async || {
        let request = buffer.request("POST", &url).unwrap().headers().unwrap();
        let request = request.body(&body).unwrap();
        let mut response = client.send(&mut buffer, &request).await.unwrap();
        answer.clear();
        while let Some(piece) = response.chunk().await.unwrap() {
            answer.extend_from_slice(piece);
        }
        assert_eq!(answer, expected.as_bytes());
    }));
    assert_eq!(counted, Some(0));
    assert_eq!(client.idle_connections(&url), 0, "on the shared connection");
}
