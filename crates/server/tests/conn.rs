//! The connection loop against curl and raw sockets over loopback.

mod common;

use common::{curl, curl_text, python, raw, start, statuses, Echo};
use ringwire_server::ServerConfig;

#[test]
fn keep_alive_serves_two_urls_on_one_connection() {
    let addr = start(ServerConfig::default(), Echo);
    let a = format!("http://{addr}/a?x=1");
    let b = format!("http://{addr}/b");
    let out = curl_text(&["-w", "%{num_connects}\n", &a, &b]);
    assert_eq!(out, "GET /a?x=1 body=0\n1\nGET /b body=0\n0\n");
}

#[test]
fn http10_gets_an_answer_and_a_close() {
    let addr = start(ServerConfig::default(), Echo);
    let url = format!("http://{addr}/old");
    let out = curl_text(&["--http1.0", "-i", &url]);
    assert!(out.starts_with("HTTP/1.1 200 OK\r\n"), "{out}");
    assert!(out.contains("connection: close\r\n"), "{out}");
    assert!(out.ends_with("\r\n\r\nGET /old body=0\n"), "{out}");
    // HTTP/1.0 with keep-alive stays open: two requests, one connection.
    let out = curl_text(&[
        "--http1.0",
        "-H",
        "Connection: keep-alive",
        "-w",
        "%{num_connects}\n",
        &url,
        &url,
    ]);
    assert_eq!(out, "GET /old body=0\n1\nGET /old body=0\n0\n");
}

#[test]
fn posts_with_length_and_chunked_bodies_are_echoed() {
    let addr = start(ServerConfig::default(), Echo);
    let url = format!("http://{addr}/up");
    let body: Vec<u8> = (0..100_000u32).map(|i| (i % 251) as u8).collect();
    let mut expected = b"POST /up body=100000\n".to_vec();
    expected.extend_from_slice(&body);
    let length = curl(&["--data-binary", "@-", &url], &body);
    assert_eq!(length, expected);
    let chunked = curl(
        &[
            "-H",
            "Transfer-Encoding: chunked",
            "--data-binary",
            "@-",
            &url,
        ],
        &body,
    );
    assert_eq!(chunked, expected);
}

#[test]
fn large_body_waits_for_100_continue() {
    let addr = start(ServerConfig::default(), Echo);
    let url = format!("http://{addr}/big");
    // curl sends `Expect: 100-continue` for bodies over 1 MiB.
    let body = vec![b'y'; 2 << 20];
    let out = curl(
        &["--expect100-timeout", "30", "--data-binary", "@-", &url],
        &body,
    );
    let head = format!("POST /big body={}\n", body.len());
    assert_eq!(&out[..head.len()], head.as_bytes());
    assert_eq!(out.len(), head.len() + body.len());
    // The same with a chunked body.
    let out = curl(
        &[
            "--expect100-timeout",
            "30",
            "-H",
            "Transfer-Encoding: chunked",
            "-H",
            "Expect: 100-continue",
            "--data-binary",
            "@-",
            &url,
        ],
        &body,
    );
    assert_eq!(out.len(), head.len() + body.len());
}

#[test]
fn pipelined_requests_are_answered_in_order_then_close() {
    let addr = start(ServerConfig::default(), Echo);
    let out = raw(
        addr,
        b"GET /1 HTTP/1.1\r\nHost: a\r\n\r\n\
          POST /2 HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\nhello\
          POST /3 HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n\
          GET /4 HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n\
          GET /5 HTTP/1.1\r\nHost: a\r\n\r\n",
    );
    assert_eq!(statuses(&out), [200, 200, 200, 200], "{out}");
    let bodies: Vec<_> = [
        "GET /1 body=0\n",
        "POST /2 body=5\nhello",
        "POST /3 body=5\nabcde",
        "GET /4 body=0\n",
    ]
    .iter()
    .map(|b| out.find(b).unwrap_or_else(|| panic!("{b:?} in {out}")))
    .collect();
    assert!(bodies.windows(2).all(|w| w[0] < w[1]), "{out}");
    assert!(
        !out.contains("/5"),
        "nothing after Connection: close: {out}"
    );
    assert_eq!(out.matches("connection: close").count(), 1, "{out}");
}

#[test]
fn malformed_requests_get_their_status_then_a_close() {
    let addr = start(ServerConfig::default(), Echo);
    let long_target = format!("GET /{} HTTP/1.1\r\nHost: a\r\n\r\n", "a".repeat(9000));
    let long_head = format!(
        "GET / HTTP/1.1\r\nHost: a\r\nX-Big: {}\r\n\r\n",
        "b".repeat(70_000)
    );
    let cases: [(&[u8], u16); 6] = [
        (b"GET / HTTP/1.1\r\nHost: a\r\nno colon here\r\n\r\n", 400),
        (b"GET / HTTP/1.1\r\n\r\n", 400),
        (b"GET / HTTP/2.0\r\nHost: a\r\n\r\n", 505),
        (
            b"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip, chunked\r\n\r\n",
            501,
        ),
        (long_head.as_bytes(), 431),
        (long_target.as_bytes(), 414),
    ];
    for (request, status) in cases {
        let out = raw(addr, request);
        assert_eq!(statuses(&out), [status], "{out}");
        assert!(out.contains("connection: close\r\n"), "{out}");
        assert!(out.ends_with("content-length: 0\r\n\r\n"), "{out}");
    }
}

#[test]
fn garbage_after_a_valid_request_is_answered_after_it() {
    let addr = start(ServerConfig::default(), Echo);
    let out = raw(
        addr,
        b"GET /ok HTTP/1.1\r\nHost: a\r\n\r\n\x01\x02garbage\r\n\r\n",
    );
    assert_eq!(statuses(&out), [200, 400], "{out}");
    assert!(out.contains("GET /ok body=0\n"), "{out}");
}

#[test]
fn bodies_over_the_buffer_bound_get_413() {
    let config = ServerConfig {
        max_buffered_body: 1024,
        ..ServerConfig::default()
    };
    let addr = start(config, Echo);
    let out = raw(
        addr,
        b"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 5000\r\n\r\n",
    );
    assert_eq!(statuses(&out), [413], "{out}");
    let mut chunked = b"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n".to_vec();
    for _ in 0..3 {
        chunked.extend_from_slice(b"200\r\n");
        chunked.extend_from_slice(&[b'z'; 0x200]);
        chunked.extend_from_slice(b"\r\n");
    }
    chunked.extend_from_slice(b"0\r\n\r\n");
    let out = raw(addr, &chunked);
    assert_eq!(statuses(&out), [413], "{out}");
    // Within the bound is fine.
    let out = raw(
        addr,
        b"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\nConnection: close\r\n\r\nabc",
    );
    assert_eq!(statuses(&out), [200], "{out}");
}

#[test]
fn curl_sees_413_for_a_large_upload() {
    let config = ServerConfig {
        max_buffered_body: 1 << 20,
        ..ServerConfig::default()
    };
    let addr = start(config, Echo);
    let url = format!("http://{addr}/big");
    let body = vec![b'q'; 2 << 20];
    let out = curl(
        &[
            "-o",
            "/dev/null",
            "-w",
            "%{http_code}",
            "--data-binary",
            "@-",
            &url,
        ],
        &body,
    );
    assert_eq!(out, b"413");
}

/// Python's `http.client` on one keep-alive connection: GET, POST with a
/// length, POST chunked, HEAD, then an HTTP/1.0-style close.
const PYTHON_CLIENT: &str = r#"
import http.client, sys
c = http.client.HTTPConnection("127.0.0.1", int(sys.argv[1]), timeout=10)

def ask(method, path, **kw):
    c.request(method, path, **kw)
    r = c.getresponse()
    return r, r.read()

r, body = ask("GET", "/a?x=1")
assert (r.status, body) == (200, b"GET /a?x=1 body=0\n"), (r.status, body)
assert r.getheader("content-type") == "text/plain"
sock = c.sock
r, body = ask("POST", "/p", body=b"hello")
assert body == b"POST /p body=5\nhello", body
r, body = ask("POST", "/c", body=iter([b"ab", b"", b"cd"]), encode_chunked=True)
assert body == b"POST /c body=4\nabcd", body
r, body = ask("HEAD", "/h")
assert r.status == 200 and body == b"" and r.getheader("content-length") == "15", r.getheaders()
assert c.sock is sock, "the connection was not kept alive"
r, body = ask("GET", "/last", headers={"Connection": "close"})
assert body == b"GET /last body=0\n" and r.getheader("connection") == "close"
assert r.will_close
print("ok")
"#;

#[test]
fn python_http_client_keeps_alive_and_streams_bodies() {
    let addr = start(ServerConfig::default(), Echo);
    assert_eq!(python(PYTHON_CLIENT, &[&addr.port().to_string()]), "ok\n");
}

/// A handler's response head larger than the send ring may grow is answered with a 500 (not
/// a silent close), and the connection serves the next request.
#[test]
fn a_response_head_past_the_send_ring_bound_is_a_500() {
    use std::io::{Read as _, Write as _};

    let mut config = ServerConfig::default();
    config.transport.tx = config.transport.tx.max_capacity(64 * 1024);
    let addr = start(config, HugeHead);
    let mut stream = std::net::TcpStream::connect(addr).unwrap();
    stream
        .set_read_timeout(Some(std::time::Duration::from_secs(10)))
        .unwrap();
    stream
        .write_all(b"GET /huge HTTP/1.1\r\nHost: a\r\n\r\nGET /small HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n")
        .unwrap();
    let mut out = Vec::new();
    stream.read_to_end(&mut out).unwrap();
    let out = String::from_utf8_lossy(&out);
    assert_eq!(statuses(&out), [500, 200], "{out}");
    assert!(out.ends_with("\r\n\r\nok"), "{out}");
}

/// Answers `/huge` with a 200 KiB field, anything else with `ok`.
struct HugeHead;

impl ringwire_server::Handler for HugeHead {
    async fn call(&self, request: &ringwire_server::Request<'_>) -> ringwire_server::Response {
        let response = ringwire_server::Response::new(200).body("ok");
        match request.target().as_bytes() {
            b"/huge" => response.header("x-huge", "a".repeat(200 * 1024)),
            _ => response,
        }
    }
}

/// A chunked body in 1-byte chunks: six bytes on the wire per byte of body, so its framing
/// alone would outgrow the receive ring's bound. The body is dechunked in place and the
/// framing's room reused, so it is answered like any other body of its size (413 before),
/// and the pipelined request after it is served.
#[test]
fn a_body_in_one_byte_chunks_fits_where_its_framing_would_not() {
    use std::io::{Read as _, Write as _};

    let mut config = ServerConfig {
        max_buffered_body: 1 << 20,
        ..ServerConfig::default()
    };
    config.transport.rx = config.transport.rx.max_capacity(2 << 20);
    let addr = start(config, Echo);
    let body: Vec<u8> = (0..1 << 20).map(|i| b'a' + (i % 26) as u8).collect();
    let mut request =
        b"POST /up HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n".to_vec();
    for &b in &body {
        request.extend_from_slice(b"1\r\n");
        request.push(b);
        request.extend_from_slice(b"\r\n");
    }
    request
        .extend_from_slice(b"0\r\n\r\nGET /next HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n");
    assert!(request.len() > 3 << 20);
    let mut stream = std::net::TcpStream::connect(addr).unwrap();
    stream
        .set_read_timeout(Some(std::time::Duration::from_secs(30)))
        .unwrap();
    let mut writer = stream.try_clone().unwrap();
    let sending = std::thread::spawn(move || writer.write_all(&request));
    let mut out = Vec::new();
    stream.read_to_end(&mut out).unwrap();
    sending.join().unwrap().unwrap();
    let out = String::from_utf8_lossy(&out);
    assert_eq!(statuses(&out), [200, 200], "{}", &out[..out.len().min(300)]);
    let echoed = format!(
        "POST /up body={}\n{}",
        body.len(),
        String::from_utf8_lossy(&body)
    );
    assert!(out.contains(&echoed), "the body came back changed");
    assert!(
        out.ends_with("GET /next body=0\n"),
        "{}",
        &out[out.len() - 100..]
    );
}

/// A head the receive ring cannot hold (its bound set below the head limit) is answered 431
/// and closed, not dropped silently.
#[test]
fn a_head_past_the_receive_ring_bound_is_a_431() {
    let mut config = ServerConfig::default();
    config.limits.max_head_len = 256 << 10;
    config.transport.rx = config.transport.rx.max_capacity(32 << 10);
    let addr = start(config, Echo);
    let mut request = b"GET / HTTP/1.1\r\nHost: a\r\n".to_vec();
    // 48 KiB in 50 fields: within the head's limits, past the ring's 32 KiB.
    for i in 0..50 {
        request.extend_from_slice(format!("x-field-{i}: {}\r\n", "v".repeat(1000)).as_bytes());
    }
    request.extend_from_slice(b"\r\n");
    let out = raw(addr, &request);
    assert_eq!(statuses(&out), [431], "{out}");
}
