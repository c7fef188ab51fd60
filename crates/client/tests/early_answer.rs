//! A streamed body and an answer that comes before it is all sent (RFC 9112 section 9.5):
//! a refusal stops the upload, a success lets it finish. Against a Python server (plain
//! and TLS 1.3, whose session tickets arrive unasked while the body goes out) that answers
//! right after the head and then reads everything the client sends, counting it.

use std::io::{BufRead as _, BufReader, Read};
use std::process::{Child, Command, Stdio};

mod common;

use common::{Leaf, Ready};
use ringwire_client::{blocking, tokio as async_client, ClientConfig, RequestBuffer, Url};

/// The peer: answers `STATUS` right after the request head, reads to the end of the
/// stream, then prints how many body bytes came.
const EARLY: &str = r#"
import socket, ssl, sys
status, cert, key = sys.argv[1], sys.argv[2], sys.argv[3]
srv = socket.socket()
srv.bind(("127.0.0.1", 0))
srv.listen(1)
print(srv.getsockname()[1], flush=True)
conn, _ = srv.accept()
if cert != "-":
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    conn = context.wrap_socket(conn, server_side=True)
conn.settimeout(10)
data = b""
while b"\r\n\r\n" not in data:
    data += conn.recv(65536)
got = len(data.split(b"\r\n\r\n", 1)[1])
conn.sendall(("HTTP/1.1 %s\r\ncontent-length: 2\r\nconnection: close\r\n\r\nok" % status).encode())
try:
    while True:
        chunk = conn.recv(1 << 20)
        if not chunk:
            break
        got += len(chunk)
except (OSError, ssl.SSLError):
    pass
print(got, flush=True)
"#;

/// The Python peer, answering `status`; over TLS with `cert` and `key` if given.
struct Early {
    child: Child,
    out: BufReader<std::process::ChildStdout>,
    port: u16,
}

impl Early {
    fn start(status: &str, tls: Option<(&std::path::Path, &std::path::Path)>) -> Early {
        let (cert, key) = tls.map_or(("-".into(), "-".into()), |(c, k)| {
            (c.display().to_string(), k.display().to_string())
        });
        let mut child = Command::new("python3")
            .args(["-c", EARLY, status, &cert, &key])
            .stdout(Stdio::piped())
            .spawn()
            .expect("python3 is installed");
        let mut out = BufReader::new(child.stdout.take().unwrap());
        let port = Early::line(&mut out).parse().unwrap();
        Early { child, out, port }
    }

    fn line(out: &mut BufReader<std::process::ChildStdout>) -> String {
        let mut line = String::new();
        out.read_line(&mut line).unwrap();
        line.trim().to_owned()
    }

    /// The body bytes that came, once the client closed.
    fn received(mut self) -> usize {
        Early::line(&mut self.out).parse().unwrap()
    }
}

impl Drop for Early {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// 64 MiB of body, from memory.
const LEN: usize = 64 << 20;

struct Zeros(usize);

impl Read for Zeros {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = buf.len().min(self.0);
        buf[..n].fill(0);
        self.0 -= n;
        Ok(n)
    }
}

/// Sends `LEN` bytes to a peer answering `status`, with the blocking or the async client:
/// the status and body got, and how much of the body the peer received.
fn upload(status: &str, tls: bool, blocking: bool) -> (u16, Vec<u8>, usize) {
    let code = &status[..3];
    let dir = std::env::temp_dir().join(format!(
        "ringwire-early-{}-{code}-{tls}-{blocking}",
        std::process::id()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    let ca = certificates(&dir);
    let (cert, key) = (dir.join("localhost.pem"), dir.join("localhost.key"));
    let peer = Early::start(status, tls.then_some((&cert, &key)));
    let scheme = if tls {
        "https://localhost"
    } else {
        "http://127.0.0.1"
    };
    let url = Url::parse(&format!("{scheme}:{}/up", peer.port)).unwrap();
    let tls_config = ringwire_tls::ClientConfig::default()
        .without_system_roots()
        .add_root_pem(&ca);
    let mut buffer = RequestBuffer::new().unwrap();
    let head = buffer.request("PUT", &url).unwrap().headers().unwrap();
    let request = head.body_stream(Some(LEN as u64)).unwrap();
    let (status, body) = if blocking {
        let client = blocking::Client::with_tls(ClientConfig::default(), tls_config);
        let mut response = client
            .send_streamed(&mut buffer, &request, Zeros(LEN))
            .unwrap();
        (response.status(), response.bytes().unwrap())
    } else {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        runtime.block_on(async {
            let client = async_client::Client::with_tls(ClientConfig::default(), tls_config);
            let mut response = client
                .send_streamed(&mut buffer, &request, Ready(Zeros(LEN)))
                .await
                .unwrap();
            (response.status(), response.bytes().await.unwrap())
        })
    };
    let received = peer.received();
    std::fs::remove_dir_all(&dir).unwrap();
    (status, body, received)
}

fn certificates(dir: &std::path::Path) -> Vec<u8> {
    let localhost = Leaf {
        file: "localhost",
        host: "localhost",
        expired: false,
    };
    common::certificates(dir, &[localhost])
}

#[test]
fn a_refusal_stops_the_upload() {
    for (tls, blocking) in [(false, true), (true, true), (false, false), (true, false)] {
        let (status, body, received) = upload("413 Content Too Large", tls, blocking);
        assert_eq!(
            (status, &body[..]),
            (413, &b"ok"[..]),
            "tls {tls} blocking {blocking}"
        );
        // A look every MiB sent, and what the socket buffers held.
        assert!(
            received < LEN / 4,
            "tls {tls} blocking {blocking}: {received} bytes went after the refusal"
        );
    }
}

#[test]
fn a_success_lets_the_upload_finish() {
    for (tls, blocking) in [(false, true), (true, true), (false, false), (true, false)] {
        let (status, body, received) = upload("200 OK", tls, blocking);
        assert_eq!(
            (status, &body[..]),
            (200, &b"ok"[..]),
            "tls {tls} blocking {blocking}"
        );
        assert_eq!(received, LEN, "tls {tls} blocking {blocking}");
    }
}
