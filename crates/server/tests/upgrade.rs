//! `101 Switching Protocols`: the connection passes to the new protocol with
//! every byte the client sent after its request.

mod common;

use std::io::{Read as _, Write as _};
use std::net::TcpStream;
use std::time::Duration;

use common::start;
use ringwire_server::{Handler, Request, Response, ServerConfig, Upgraded};

/// Upgrades to a protocol that echoes every byte back when asked to (and
/// `/always` even when not, as a careless handler might).
struct EchoProtocol;

impl Handler for EchoProtocol {
    async fn call(&self, request: &Request<'_>) -> Response {
        let asked = request.upgrade() == Some(&b"echo"[..]);
        if !asked && request.target().path() != b"/always" {
            return Response::new(426).header("upgrade", "echo");
        }
        Response::upgrade("echo", |up: Upgraded<'_>| Box::pin(echo(up)))
    }
}

async fn echo(Upgraded { mut rx, mut tx, .. }: Upgraded<'_>) {
    loop {
        if rx.data().is_empty() {
            match rx.fill(1).await {
                Ok(0) | Err(_) => return,
                Ok(_) => {}
            }
        }
        let n = rx.data().len();
        if tx.write(rx.data()).await.is_err() || tx.flush().await.is_err() {
            return;
        }
        rx.consume(n);
    }
}

fn read_some(s: &mut TcpStream, want: usize) -> Vec<u8> {
    let mut out = Vec::new();
    let mut buf = [0; 4096];
    while out.len() < want {
        let n = s.read(&mut buf).expect("read");
        assert!(n > 0, "closed after {:?}", String::from_utf8_lossy(&out));
        out.extend_from_slice(&buf[..n]);
    }
    out
}

#[test]
fn bytes_after_the_upgrade_request_reach_the_new_protocol() {
    let addr = start(ServerConfig::default(), EchoProtocol);
    let mut s = TcpStream::connect(addr).expect("connect");
    s.set_read_timeout(Some(Duration::from_secs(10)))
        .expect("timeout");
    // The first bytes of the new protocol in the same write as the request.
    s.write_all(
        b"GET /echo HTTP/1.1\r\nHost: a\r\nConnection: upgrade\r\nUpgrade: echo\r\n\r\nearly",
    )
    .expect("write");
    let head = "HTTP/1.1 101 Switching Protocols\r\n";
    let got = read_some(&mut s, 1);
    let mut got = got;
    while !got.ends_with(b"early") {
        got.extend(read_some(&mut s, 1));
    }
    let text = String::from_utf8_lossy(&got);
    assert!(text.starts_with(head), "{text}");
    assert!(
        text.contains("\r\nupgrade: echo\r\nconnection: upgrade\r\n"),
        "{text}"
    );
    assert!(!text.contains("content-length"), "{text}");
    assert!(text.ends_with("\r\n\r\nearly"), "{text}");
    s.write_all(b"and later").expect("write");
    assert_eq!(read_some(&mut s, 9), b"and later");
}

#[test]
fn an_upgrade_to_http10_is_refused() {
    let addr = start(ServerConfig::default(), EchoProtocol);
    let out = common::raw(
        addr,
        b"GET /always HTTP/1.0\r\nConnection: upgrade\r\nUpgrade: echo\r\n\r\n",
    );
    assert!(out.starts_with("HTTP/1.1 500 "), "{out}");
}

/// Upgrades to a protocol that writes back its socket's keepalive settings.
struct KeepaliveProbe;

impl Handler for KeepaliveProbe {
    async fn call(&self, _: &Request<'_>) -> Response {
        Response::upgrade("probe", |up: Upgraded<'_>| {
            Box::pin(async move {
                let Upgraded { mut tx, .. } = up;
                let socket = tx.get_ref().connection().expect("an HTTP/1.1 connection");
                let tcp = socket.get_ref();
                let settings = format!(
                    "{:?} {:?} {:?} {:?} {:?}",
                    rustix::net::sockopt::socket_keepalive(tcp),
                    rustix::net::sockopt::tcp_keepidle(tcp),
                    rustix::net::sockopt::tcp_keepintvl(tcp),
                    rustix::net::sockopt::tcp_keepcnt(tcp),
                    rustix::net::sockopt::tcp_user_timeout(tcp),
                );
                let _ = tx.write(settings.as_bytes()).await;
                let _ = tx.flush().await;
            })
        })
    }
}

/// An upgraded connection has no time limit of the server's: the kernel's keepalive,
/// as `upgraded_keepalive` sets it, ends one whose peer vanished.
#[cfg(target_os = "linux")]
#[test]
fn an_upgraded_connection_is_kept_alive_by_the_kernel() {
    let mut config = ServerConfig::default();
    config.timeouts.upgraded_keepalive = Duration::from_secs(45);
    let addr = start(config, KeepaliveProbe);
    let mut s = TcpStream::connect(addr).expect("connect");
    s.set_read_timeout(Some(Duration::from_secs(10)))
        .expect("timeout");
    s.write_all(b"GET / HTTP/1.1\r\nHost: a\r\nConnection: upgrade\r\nUpgrade: probe\r\n\r\n")
        .expect("write");
    let mut answer = String::new();
    s.read_to_string(&mut answer).expect("read");
    let settings = answer.split("\r\n\r\n").nth(1).unwrap_or_default();
    // Probes after 45 s of quiet, every 10 s, six of them: 105 s for data unacknowledged too.
    assert_eq!(
        settings, "Ok(true) Ok(45s) Ok(10s) Ok(6) Ok(105000)",
        "{answer}"
    );
}
