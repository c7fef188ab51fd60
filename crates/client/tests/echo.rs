//! A server that answers as it reads: a Python echo (plain and TLS) that sends its `200`
//! head at once, without `100 Continue`, then each piece of the body back as it arrives,
//! with small socket buffers of its own. A client that sent the whole body before reading
//! would wait forever once both directions filled; the clients receive the answer into the
//! ring while they wait for room, and send a body held back for `100 Continue` once a
//! success came instead (as curl does). Past the ring's bound the exchange fails with an
//! error that says so, rather than waiting.

use std::io::Write as _;
use std::process::Child;
use std::time::Duration;

mod common;

use common::{Leaf, Ready};
use ringwire_client::{blocking, tokio as async_client, ClientConfig, Error, RequestBuffer, Url};

const ECHO: &str = r#"
import socket, ssl, sys
cert, key = sys.argv[1], sys.argv[2]
srv = socket.socket()
srv.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 64 << 10)
srv.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 64 << 10)
srv.bind(("127.0.0.1", 0))
srv.listen(8)
print(srv.getsockname()[1], flush=True)
context = None
if cert != "-":
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
while True:
    conn, _ = srv.accept()
    try:
        if context:
            conn = context.wrap_socket(conn, server_side=True)
        conn.settimeout(30)
        data = b""
        while b"\r\n\r\n" not in data:
            data += conn.recv(65536)
        head, rest = data.split(b"\r\n\r\n", 1)
        length = next(int(l.split(b":")[1]) for l in head.split(b"\r\n")
                      if l.lower().startswith(b"content-length:"))
        conn.sendall(b"HTTP/1.1 200 OK\r\ncontent-length: %d\r\nconnection: close\r\n\r\n" % length)
        conn.sendall(rest)
        got = len(rest)
        while got < length:
            chunk = conn.recv(65536)
            if not chunk:
                break
            got += len(chunk)
            conn.sendall(chunk)
        conn.close()
    except (OSError, ssl.SSLError):
        pass
"#;

/// The Python echo, over TLS with `cert` and `key` if given; stopped when dropped.
struct Echo {
    child: Child,
    port: u16,
}

impl Echo {
    fn start(tls: Option<(&std::path::Path, &std::path::Path)>) -> Echo {
        let (cert, key) = tls.map_or(("-".into(), "-".into()), |(c, k)| {
            (c.display().to_string(), k.display().to_string())
        });
        let (child, port) = ringwire_testkit::python_listening(ECHO, &[&cert, &key]);
        Echo { child, port }
    }
}

impl Drop for Echo {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// More than the sockets' buffers hold between the two, less than the ring's bound below.
const LEN: usize = 24 << 20;

/// A body that is not all one byte (an echo that reorders would show).
fn body(len: usize) -> Vec<u8> {
    (0..len).map(|i| (i % 251) as u8).collect()
}

/// How the request's body goes.
#[derive(Debug, Clone, Copy)]
enum Source {
    /// From memory, with the head (`send`).
    Memory,
    /// From memory, held back for `100 Continue`, which never comes.
    Expecting,
    /// From a reader, piece by piece (`send_streamed`).
    Reader,
    /// From a file (`send_file`: `sendfile` over plain TCP).
    File,
}

struct Setup {
    dir: std::path::PathBuf,
    ca: Vec<u8>,
}

impl Setup {
    fn new(name: &str) -> Setup {
        let dir = std::env::temp_dir().join(format!("ringwire-echo-{}-{name}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("dir");
        let localhost = Leaf {
            file: "localhost",
            host: "localhost",
            expired: false,
        };
        let ca = common::certificates(&dir, &[localhost]);
        Setup { dir, ca }
    }

    fn echo(&self, tls: bool) -> (Echo, Url) {
        let (cert, key) = (
            self.dir.join("localhost.pem"),
            self.dir.join("localhost.key"),
        );
        let echo = Echo::start(tls.then_some((&cert, &key)));
        let scheme = if tls {
            "https://localhost"
        } else {
            "http://127.0.0.1"
        };
        let url = Url::parse(&format!("{scheme}:{}/echo", echo.port)).expect("url");
        (echo, url)
    }

    fn tls(&self) -> ringwire_tls::ClientConfig {
        ringwire_tls::ClientConfig::default()
            .without_system_roots()
            .add_root_pem(&self.ca)
    }
}

impl Drop for Setup {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn config(max_ring: usize) -> ClientConfig {
    let mut config = ClientConfig {
        // A client that waits on a full socket fails here instead of hanging the test.
        request_timeout: Some(Duration::from_secs(30)),
        ..ClientConfig::default()
    };
    config.rx.max_capacity = max_ring;
    config
}

/// Sends `sent` to an echo as `source` says, with the blocking or the async client: the
/// status and the body that came back.
fn exchange(
    setup: &Setup,
    tls: bool,
    blocking: bool,
    source: Source,
    sent: &[u8],
    max_ring: usize,
) -> Result<(u16, Vec<u8>), Error> {
    let (_echo, url) = setup.echo(tls);
    let file_path = setup.dir.join(format!("body-{tls}-{blocking}"));
    std::fs::File::create(&file_path)
        .and_then(|mut f| f.write_all(sent))
        .expect("body file");
    let file = std::fs::File::open(&file_path).expect("open");
    let mut buffer = RequestBuffer::new().expect("buffer");
    let len = Some(sent.len() as u64);
    if blocking {
        let client = blocking::Client::with_tls(config(max_ring), setup.tls());
        let head = buffer.request("PUT", &url)?;
        let mut response = match source {
            Source::Memory | Source::Expecting => {
                let headers = head.headers()?;
                let headers = match source {
                    Source::Expecting => headers.expect_continue(),
                    _ => headers,
                };
                let request = headers.body(sent)?;
                client.send(&mut buffer, &request)?
            }
            Source::Reader => {
                let request = head.headers()?.body_stream(len)?;
                client.send_streamed(&mut buffer, &request, sent)?
            }
            Source::File => {
                let request = head.headers()?.body_stream(len)?;
                client.send_file(&mut buffer, &request, &file)?
            }
        };
        Ok((response.status(), response.bytes()?))
    } else {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("runtime");
        runtime.block_on(async {
            let client = async_client::Client::with_tls(config(max_ring), setup.tls());
            let head = buffer.request("PUT", &url)?;
            let mut response = match source {
                Source::Memory | Source::Expecting => {
                    let headers = head.headers()?;
                    let headers = match source {
                        Source::Expecting => headers.expect_continue(),
                        _ => headers,
                    };
                    let request = headers.body(sent)?;
                    client.send(&mut buffer, &request).await?
                }
                Source::Reader => {
                    let request = head.headers()?.body_stream(len)?;
                    client
                        .send_streamed(&mut buffer, &request, Ready(sent))
                        .await?
                }
                Source::File => {
                    let request = head.headers()?.body_stream(len)?;
                    client.send_file(&mut buffer, &request, &file).await?
                }
            };
            Ok((response.status(), response.bytes().await?))
        })
    }
}

#[test]
fn an_echo_of_every_body_comes_back_whole() {
    let setup = Setup::new("whole");
    let sent = body(LEN);
    for tls in [false, true] {
        for blocking in [true, false] {
            for source in [
                Source::Memory,
                Source::Expecting,
                Source::Reader,
                Source::File,
            ] {
                let (status, echoed) = exchange(&setup, tls, blocking, source, &sent, 64 << 20)
                    .unwrap_or_else(|e| panic!("tls {tls}, blocking {blocking}, {source:?}: {e}"));
                assert_eq!(status, 200);
                assert!(
                    echoed == sent,
                    "tls {tls}, blocking {blocking}, {source:?}: {} bytes came back",
                    echoed.len()
                );
            }
        }
    }
}

#[test]
fn an_echo_past_the_rings_bound_fails_at_once() {
    let setup = Setup::new("bound");
    let sent = body(LEN);
    for (tls, blocking) in [(false, true), (true, true), (false, false), (true, false)] {
        let began = std::time::Instant::now();
        let failed = exchange(&setup, tls, blocking, Source::Reader, &sent, 1 << 20);
        assert!(
            matches!(failed, Err(Error::AnsweredWhileSending { limit }) if limit == 1 << 20),
            "tls {tls}, blocking {blocking}: {failed:?}"
        );
        assert!(began.elapsed() < Duration::from_secs(20));
    }
}
