//! A server behind a proxy that speaks the PROXY protocol: HAProxy (Debian's
//! `/usr/sbin/haproxy`) sending versions 1 and 2 in front of curl, curl's own
//! `--haproxy-protocol` over HTTP/1.1, HTTP/2 and TLS, and raw headers the tests
//! write (addresses no local client has, a header in pieces, refusals).

mod common;

use std::io::{Read as _, Write as _};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use ringwire_server::{Handler, Request, Response, ServerConfig};

/// Answers with the client's address as the server sees it.
struct Peer;

impl Handler for Peer {
    async fn call(&self, request: &Request<'_>) -> Response {
        let peer = request
            .peer()
            .map_or_else(|| "-".to_owned(), |p| p.to_string());
        Response::text(peer)
    }
}

fn proxied_config() -> ServerConfig {
    ServerConfig {
        proxy_protocol: true,
        ..ServerConfig::new("127.0.0.1:0".parse().expect("addr"))
    }
}

/// Writes `pieces` (a pause between them) and reads until the server closes.
fn exchange(addr: SocketAddr, pieces: &[&[u8]]) -> String {
    let mut stream = TcpStream::connect(addr).expect("connect");
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .expect("timeout");
    for (i, piece) in pieces.iter().enumerate() {
        if i > 0 {
            std::thread::sleep(Duration::from_millis(30));
        }
        stream.write_all(piece).expect("write");
    }
    let mut out = Vec::new();
    let _ = stream.read_to_end(&mut out);
    String::from_utf8_lossy(&out).into_owned()
}

const REQUEST: &[u8] = b"GET / HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n";

fn v2(command: u8, family: u8, block: &[u8]) -> Vec<u8> {
    let mut header = b"\r\n\r\n\0\r\nQUIT\n".to_vec();
    header.extend_from_slice(&[0x20 | command, family]);
    header.extend_from_slice(&u16::try_from(block.len()).expect("len").to_be_bytes());
    header.extend_from_slice(block);
    header
}

#[test]
fn the_headers_address_is_the_peer() {
    let addr = common::start(proxied_config(), Peer);
    // Version 1, the request in the same write (pipelined behind the header).
    let mut bytes = b"PROXY TCP4 203.0.113.7 192.0.2.1 56324 443\r\n".to_vec();
    bytes.extend_from_slice(REQUEST);
    let answer = exchange(addr, &[&bytes]);
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    assert!(answer.ends_with("\r\n\r\n203.0.113.7:56324"), "{answer}");

    // Version 2 over IPv6 with a TLV, in pieces: inside the signature, inside the
    // addresses, then the request.
    let mut block = "2001:db8::7"
        .parse::<std::net::Ipv6Addr>()
        .expect("v6")
        .octets()
        .to_vec();
    block.extend_from_slice(&std::net::Ipv6Addr::LOCALHOST.octets());
    block.extend_from_slice(&[0x1f, 0x90, 0x01, 0xbb]);
    block.extend_from_slice(b"\x02\x00\x0bexample.com");
    let header = v2(1, 0x21, &block);
    let answer = exchange(
        addr,
        &[&header[..7], &header[7..30], &header[30..], REQUEST],
    );
    assert!(answer.ends_with("\r\n\r\n[2001:db8::7]:8080"), "{answer}");

    // A health check's LOCAL header, and UNKNOWN: the socket's own peer stands.
    for header in [v2(0, 0x00, &[]), b"PROXY UNKNOWN\r\n".to_vec()] {
        let mut stream = TcpStream::connect(addr).expect("connect");
        let local = stream.local_addr().expect("local");
        stream.write_all(&header).expect("header");
        stream.write_all(REQUEST).expect("request");
        let mut out = String::new();
        let _ = stream.read_to_string(&mut out);
        assert!(out.ends_with(&format!("\r\n\r\n{local}")), "{out}");
    }
}

#[test]
fn a_connection_without_a_valid_header_is_closed_unanswered() {
    let addr = common::start(proxied_config(), Peer);
    for bytes in [
        REQUEST.to_vec(),
        b"PROXY TCP4 203.0.113.7 192.0.2.1 56324 443\nGET / HTTP/1.1\r\n\r\n".to_vec(),
        b"PROXY TCP4 ::1 ::1 1 2\r\nGET / HTTP/1.1\r\n\r\n".to_vec(),
        [v2(1, 0x12, &[0; 12]), REQUEST.to_vec()].concat(),
    ] {
        let answer = exchange(addr, &[&bytes]);
        assert_eq!(answer, "", "{:?}", String::from_utf8_lossy(&bytes));
    }
    // A header that never ends is cut off by the head's time limit.
    let config = ServerConfig {
        timeouts: ringwire_server::Timeouts {
            head: Duration::from_millis(300),
            ..ringwire_server::Timeouts::default()
        },
        ..proxied_config()
    };
    let addr = common::start(config, Peer);
    let began = Instant::now();
    assert_eq!(exchange(addr, &[b"PROXY TCP4 1.2.3.4"]), "");
    assert!(began.elapsed() < Duration::from_secs(5));
}

#[test]
fn curl_with_haproxy_protocol_over_http1_http2_and_tls() {
    let addr = common::start(proxied_config(), Peer);
    let url = format!("http://{addr}/");
    for http in ["--http1.1", "--http2-prior-knowledge"] {
        let out = common::curl_text(&[http, "--haproxy-protocol", "-w", " %{local_port}", &url]);
        let (peer, port) = out.split_once(' ').expect("peer and port");
        assert_eq!(peer, format!("127.0.0.1:{port}"), "{http}");
    }
    // Without the header, curl's request is not answered.
    let plain = Command::new("curl")
        .args(["-sS", "--max-time", "10", &url])
        .output()
        .expect("curl");
    assert!(!plain.status.success() && plain.stdout.is_empty());

    let tls = common::start_tls(
        proxied_config(),
        Peer,
        common::acceptor(&[b"h2", b"http/1.1"]),
    );
    let url = format!("https://localhost:{}/", tls.port());
    let resolve = format!("localhost:{}:127.0.0.1", tls.port());
    for http in ["--http1.1", "--http2"] {
        let out = common::curl_text(&[
            http,
            "-k",
            "--resolve",
            &resolve,
            "--haproxy-protocol",
            "-w",
            " %{local_port}",
            &url,
        ]);
        let (peer, port) = out.split_once(' ').expect("peer and port");
        assert_eq!(peer, format!("127.0.0.1:{port}"), "TLS {http}");
    }
}

const HAPROXY: &str = "/usr/sbin/haproxy";

/// HAProxy in TCP mode in front of `server`, sending `send_proxy` (`send-proxy` or
/// `send-proxy-v2`); stopped when dropped.
struct Haproxy {
    child: Child,
    addr: SocketAddr,
    dir: std::path::PathBuf,
}

impl Haproxy {
    fn start(server: SocketAddr, send_proxy: &str) -> Haproxy {
        let port = TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("a free port")
            .port();
        let addr: SocketAddr = format!("127.0.0.1:{port}").parse().expect("addr");
        let dir =
            std::env::temp_dir().join(format!("ringwire-haproxy-{}-{port}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("dir");
        let config = format!(
            "defaults\n  mode tcp\n  timeout connect 5s\n  timeout client 30s\n  timeout server 30s\n\
             frontend front\n  bind {addr}\n  default_backend back\n\
             backend back\n  server ringwire {server} {send_proxy}\n"
        );
        let path = dir.join("haproxy.cfg");
        std::fs::write(&path, config).expect("config");
        let child = Command::new(HAPROXY)
            .arg("-db")
            .arg("-f")
            .arg(&path)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("haproxy is installed (.ci/run installs it)");
        let deadline = Instant::now() + Duration::from_secs(10);
        while TcpStream::connect(addr).is_err() {
            assert!(Instant::now() < deadline, "haproxy did not start listening");
            std::thread::sleep(Duration::from_millis(20));
        }
        Haproxy { child, addr, dir }
    }
}

impl Drop for Haproxy {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

#[test]
fn behind_haproxy_the_client_is_curl_not_haproxy() {
    let server = common::start(proxied_config(), Peer);
    for send_proxy in ["send-proxy", "send-proxy-v2"] {
        let haproxy = Haproxy::start(server, send_proxy);
        let url = format!("http://{}/", haproxy.addr);
        for http in ["--http1.1", "--http2-prior-knowledge"] {
            let out = common::curl_text(&[http, "-w", " %{local_port}", &url]);
            // HAProxy's own connection to the server has a port of its own: the one
            // answered is curl's.
            let (peer, port) = out.split_once(' ').expect("peer and port");
            assert_eq!(peer, format!("127.0.0.1:{port}"), "{send_proxy} {http}");
        }
    }
}
