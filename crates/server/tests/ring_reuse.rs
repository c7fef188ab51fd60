//! Rings come from the server's pools and go back to them, an upgraded connection's included:
//! a run of connections reuses the same few mappings instead of making new ones each time.
//! (A test binary of its own, so no other test's rings show in `/proc/self/maps`.)

mod common;

use std::collections::HashSet;
use std::io::{Read as _, Write as _};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

use common::start;
use ringwire_server::{Handler, Request, Response, ServerConfig, Upgraded};

/// `/upgrade` switches to a protocol that answers one byte with `!` and ends; anything
/// else is a plain answer.
struct Ringing;

impl Handler for Ringing {
    async fn call(&self, request: &Request<'_>) -> Response {
        if request.target().path() != b"/upgrade" {
            return Response::text("plain");
        }
        Response::upgrade("bell", |up: Upgraded<'_>| {
            Box::pin(async move {
                let Upgraded { mut rx, mut tx, .. } = up;
                if rx.data().is_empty() && !matches!(rx.fill(1).await, Ok(1..)) {
                    return;
                }
                let _ = tx.write(b"!").await;
                let _ = tx.flush().await;
            })
        })
    }
}

/// The inodes of the ring memfds mapped in this process.
fn ring_inodes() -> HashSet<u64> {
    std::fs::read_to_string("/proc/self/maps")
        .expect("maps")
        .lines()
        .filter(|line| line.contains("/memfd:ringwire"))
        .filter_map(|line| line.split_whitespace().nth(4)?.parse().ok())
        .collect()
}

fn session(addr: SocketAddr, upgrade: bool) {
    let mut s = TcpStream::connect(addr).expect("connect");
    s.set_read_timeout(Some(Duration::from_secs(10)))
        .expect("timeout");
    let request: &[u8] = if upgrade {
        b"GET /upgrade HTTP/1.1\r\nHost: a\r\nConnection: upgrade\r\nUpgrade: bell\r\n\r\nx"
    } else {
        b"GET / HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n"
    };
    s.write_all(request).expect("write");
    let mut answer = Vec::new();
    s.read_to_end(&mut answer).expect("read");
    let text = String::from_utf8_lossy(&answer);
    if upgrade {
        assert!(
            text.starts_with("HTTP/1.1 101") && text.ends_with("\r\n\r\n!"),
            "{text}"
        );
    } else {
        assert!(text.ends_with("plain"), "{text}");
    }
}

#[test]
#[cfg(target_os = "linux")]
fn upgraded_and_plain_connections_reuse_pooled_rings() {
    let addr = start(ServerConfig::default(), Ringing);
    let mut seen = HashSet::new();
    for i in 0..20 {
        session(addr, i % 2 == 0);
        // The server drops the connection's rings just after its last write.
        std::thread::sleep(Duration::from_millis(20));
        seen.extend(ring_inodes());
    }
    // One ring per direction, a second pair at most when a connection arrives before the last
    // one's rings are back; before the upgraded ones went home, each made two new rings.
    assert!(
        (2..=4).contains(&seen.len()),
        "{} ring mappings for 20 connections",
        seen.len()
    );
}
