//! A server on a Unix domain socket: curl's `--unix-socket` over HTTP/1.1, h2c and
//! HTTPS, nginx proxying to it, the peer's credentials, a file sent by `sendfile`, a
//! WebSocket, a PROXY protocol header, both threading models, and the socket file's life (a stale one replaced, a live one or another file
//! refused, removed when the server ends).

mod common;

use std::io::{Read as _, Write as _};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::time::Duration;

use ringwire_server::files::StaticFiles;

use ringwire_server::{ws, Handler, Request, Response, Router, Server, ServerConfig, Threading};

/// Answers with the client's address as the server sees it (`-` for none) and the
/// protocol's version.
struct Peer;

impl Handler for Peer {
    async fn call(&self, request: &Request<'_>) -> Response {
        let peer = request
            .peer()
            .map_or_else(|| "-".to_owned(), |p| p.to_string());
        if request.target().as_bytes() == b"/whoami" {
            let who = request
                .peer_credentials()
                .expect("a Unix peer's credentials");
            return Response::text(format!("{} {} {}", who.pid, who.uid, who.gid));
        }
        Response::text(format!("{peer} {:?}", request.protocol()))
    }
}

/// Serves `handler` on a Unix socket at `path` (through `tls` if given) on a thread of
/// its own, until `stop` is sent or dropped; the thread's result is the server's.
fn start<H: Handler>(
    path: &Path,
    config: ServerConfig,
    handler: H,
    tls: Option<ringwire_tls::TlsAcceptor>,
) -> (
    tokio::sync::oneshot::Sender<()>,
    std::thread::JoinHandle<std::io::Result<()>>,
) {
    let mut server = Server::bind_unix(path, config).expect("bind");
    assert_eq!(server.unix_path(), Some(path));
    if let Some(acceptor) = tls {
        server = server.with_tls(acceptor);
    }
    run(server, handler)
}

/// Runs `server` on a thread of its own, until `stop` is sent or dropped.
fn run<H: Handler>(
    server: Server,
    handler: H,
) -> (
    tokio::sync::oneshot::Sender<()>,
    std::thread::JoinHandle<std::io::Result<()>>,
) {
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let thread = std::thread::spawn(move || {
        server.run(handler, async move {
            let _ = stopped.await;
        })
    });
    (stop, thread)
}

fn config(threading: Threading) -> ServerConfig {
    ServerConfig {
        threading,
        ..ServerConfig::default()
    }
}

fn socket_path(dir: &tempfile::TempDir) -> PathBuf {
    dir.path().join("ringwire.sock")
}

#[test]
fn curl_over_http1_h2c_and_https() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = socket_path(&dir);
    let sock = path.to_str().expect("UTF-8 path");
    let (stop, thread) = start(&path, config(Threading::Shared(2)), Peer, None);
    let http1 = common::curl_text(&["--unix-socket", sock, "http://localhost/"]);
    assert_eq!(http1, "- Http11");
    let h2c = common::curl_text(&[
        "--http2-prior-knowledge",
        "--unix-socket",
        sock,
        "http://localhost/",
    ]);
    assert_eq!(h2c, "- Http2");
    // The kernel's record of who connected: this test's user and group, curl's process.
    let out = std::process::Command::new("curl")
        .args(["-s", "--unix-socket", sock, "http://localhost/whoami"])
        .output()
        .expect("curl");
    let who = String::from_utf8_lossy(&out.stdout).into_owned();
    let ids = format!(
        " {} {}",
        rustix::process::getuid().as_raw(),
        rustix::process::getgid().as_raw()
    );
    assert!(who.ends_with(&ids), "{who} against{ids}");
    let pid: i32 = who.split(' ').next().expect("pid").parse().expect("a pid");
    assert!(
        pid > 0 && pid != i32::try_from(std::process::id()).expect("pid"),
        "{who}"
    );
    // Keep-alive: several requests on one connection (curl says when it reuses one).
    let out = std::process::Command::new("curl")
        .args(["-sv", "--unix-socket", sock])
        .args([
            "http://localhost/a",
            "http://localhost/b",
            "http://localhost/c",
        ])
        .output()
        .expect("curl");
    let log = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        log.matches("Re-using existing connection").count(),
        2,
        "{log}"
    );
    drop(stop);
    thread.join().expect("server thread").expect("served");
    assert!(
        !path.exists(),
        "the socket file is removed when the server ends"
    );

    let acceptor = common::acceptor(&[b"h2", b"http/1.1"]);
    let (stop, thread) = start(&path, config(Threading::PerCore(2)), Peer, Some(acceptor));
    for (version, expected) in [("--http1.1", "- Http11"), ("--http2", "- Http2")] {
        let https =
            common::curl_text(&["-k", version, "--unix-socket", sock, "https://localhost/"]);
        assert_eq!(https, expected);
    }
    drop(stop);
    thread.join().expect("server thread").expect("served");
    assert!(!path.exists());
}

/// Every thread of a thread-per-core server accepts from the one socket: many
/// connections at once are all answered.
#[test]
fn per_core_threads_share_the_socket() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = socket_path(&dir);
    let (stop, thread) = start(&path, config(Threading::PerCore(3)), Peer, None);
    let clients: Vec<_> = (0..24)
        .map(|_| {
            let path = path.clone();
            std::thread::spawn(move || {
                exchange(
                    &path,
                    &[b"GET / HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n"],
                )
            })
        })
        .collect();
    for client in clients {
        let answer = client.join().expect("client");
        assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
        assert!(answer.ends_with("\r\n\r\n- Http11"), "{answer}");
    }
    drop(stop);
    thread.join().expect("server thread").expect("served");
}

/// A file over a plain Unix socket goes by `sendfile`, whole and in ranges.
#[test]
fn files_are_sent_whole_and_in_ranges() {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path().join("site");
    std::fs::create_dir(&root).expect("mkdir");
    let body: Vec<u8> = (0..3u32 << 20)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 24) as u8)
        .collect();
    std::fs::write(root.join("blob.bin"), &body).expect("write");
    let path = socket_path(&dir);
    let sock = path.to_str().expect("UTF-8 path");
    let files = StaticFiles::new(root).expect("root");
    let (stop, _thread) = start(&path, ServerConfig::default(), files, None);
    let whole = common::curl(&["--unix-socket", sock, "http://localhost/blob.bin"], b"");
    assert!(whole == body, "{} bytes came, not the file's", whole.len());
    let range = common::curl(
        &[
            "--unix-socket",
            sock,
            "-r",
            "1000000-1999999",
            "http://localhost/blob.bin",
        ],
        b"",
    );
    assert!(range == body[1_000_000..2_000_000], "the range differs");
    drop(stop);
}

/// A WebSocket upgrade on a Unix socket, the echo route's.
#[test]
fn a_websocket_echoes() {
    use ringwire_io::{RecvTransport, SendTransport, TransportConfig};
    use ringwire_server::ws::{CloseCode, Limits, Message};
    use ringwire_ws::blocking::WebSocket;
    use ringwire_ws::handshake::Offer;

    let dir = tempfile::tempdir().expect("tempdir");
    let path = socket_path(&dir);
    let router = Router::new().get("/ws/echo", ws::echo);
    let (stop, _thread) = start(&path, ServerConfig::default(), router, None);
    let stream = UnixStream::connect(&path).expect("connect");
    let config = TransportConfig::new(64 << 10, 1 << 20);
    let rx = RecvTransport::new(config, &stream).expect("ring");
    let tx = SendTransport::new(config, &stream).expect("ring");
    let (mut socket, _) = WebSocket::connect(
        rx,
        tx,
        "localhost",
        "/ws/echo",
        &Offer::default(),
        Limits::default(),
    )
    .expect("handshake");
    let blob = vec![7u8; 200_000];
    for message in [Message::Text("over a Unix socket"), Message::Binary(&blob)] {
        socket.send(&message).expect("send");
        let (echoed, _) = socket.recv().expect("open").expect("echo");
        assert!(echoed == message, "the echo differs");
    }
    socket.close(CloseCode::NORMAL, "done").expect("close");
    while let Some(received) = socket.recv() {
        received.expect("closing handshake");
    }
    drop(stop);
}

/// Behind a proxy that connects through a Unix socket (HAProxy's `unix@` servers), the
/// PROXY header names the client; a connection without one is closed unanswered.
#[test]
fn a_proxy_protocol_header_names_the_client() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = socket_path(&dir);
    let proxied = ServerConfig {
        proxy_protocol: true,
        ..ServerConfig::default()
    };
    let (stop, _thread) = start(&path, proxied, Peer, None);
    let answer = exchange(
        &path,
        &[b"PROXY TCP4 203.0.113.7 192.0.2.1 56324 80\r\nGET / HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n"],
    );
    assert!(
        answer.ends_with("\r\n\r\n203.0.113.7:56324 Http11"),
        "{answer}"
    );
    let refused = exchange(
        &path,
        &[b"GET / HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n"],
    );
    assert_eq!(refused, "");
    drop(stop);
}

#[test]
fn a_stale_socket_is_replaced_and_a_live_one_refused() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = socket_path(&dir);
    // Live: another process listens there.
    let live = UnixListener::bind(&path).expect("bind");
    let err = Server::bind_unix(&path, ServerConfig::default()).expect_err("in use");
    assert_eq!(err.kind(), std::io::ErrorKind::AddrInUse);
    // Stale: the listener is gone, its file left behind.
    drop(live);
    assert!(path.exists());
    let (stop, thread) = start(&path, ServerConfig::default(), Peer, None);
    let answer = exchange(
        &path,
        &[b"GET / HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n"],
    );
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    // A second server on the same path is refused while the first runs.
    let err = Server::bind_unix(&path, ServerConfig::default()).expect_err("in use");
    assert_eq!(err.kind(), std::io::ErrorKind::AddrInUse);
    drop(stop);
    thread.join().expect("server thread").expect("served");
    assert!(!path.exists());

    // Any other file at the path is left alone.
    std::fs::write(&path, "not a socket").expect("write");
    let err = Server::bind_unix(&path, ServerConfig::default()).expect_err("a file is there");
    assert_eq!(err.kind(), std::io::ErrorKind::AddrInUse);
    assert_eq!(std::fs::read(&path).expect("read"), b"not a socket");

    // A path too long for a socket address says so.
    let long = dir.path().join("x".repeat(120));
    let err = Server::bind_unix(&long, ServerConfig::default()).expect_err("too long");
    assert_eq!(err.kind(), std::io::ErrorKind::InvalidInput);
    assert!(err.to_string().contains("107"), "{err}");
}

/// A socket in Linux's abstract namespace: no file; its name is taken while the server
/// runs (another bind is refused) and free again once it ends; both threading models
/// accept from it.
#[cfg(target_os = "linux")]
#[test]
fn an_abstract_socket_needs_no_file() {
    use std::os::linux::net::SocketAddrExt as _;
    use std::os::unix::net::SocketAddr;

    let name = format!("ringwire-server-test-{}", std::process::id());
    let addr = SocketAddr::from_abstract_name(&name).expect("name");
    for threading in [Threading::Shared(2), Threading::PerCore(2)] {
        let server = Server::bind_unix_abstract(&name, config(threading)).expect("bind");
        assert_eq!(server.unix_path(), None);
        let err = Server::bind_unix_abstract(&name, ServerConfig::default()).expect_err("taken");
        assert_eq!(err.kind(), std::io::ErrorKind::AddrInUse);
        let (stop, thread) = run(server, Peer);
        for _ in 0..6 {
            let stream = UnixStream::connect_addr(&addr).expect("connect");
            let answer = talk(
                stream,
                &[b"GET / HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n"],
            );
            assert!(answer.ends_with("\r\n\r\n- Http11"), "{answer}");
        }
        drop(stop);
        thread.join().expect("server thread").expect("served");
    }
    let long = "x".repeat(108);
    let err = Server::bind_unix_abstract(long, ServerConfig::default()).expect_err("too long");
    assert_eq!(err.kind(), std::io::ErrorKind::InvalidInput);
    assert!(err.to_string().contains("107"), "{err}");
}

/// Writes `pieces` and reads until the server closes.
fn exchange(path: &Path, pieces: &[&[u8]]) -> String {
    talk(UnixStream::connect(path).expect("connect"), pieces)
}

/// Writes `pieces` on `stream` and reads until the server closes.
fn talk(mut stream: UnixStream, pieces: &[&[u8]]) -> String {
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .expect("timeout");
    for piece in pieces {
        stream.write_all(piece).expect("write");
    }
    let mut out = Vec::new();
    let _ = stream.read_to_end(&mut out);
    String::from_utf8_lossy(&out).into_owned()
}

/// nginx in front, as the socket is meant to be used (`upstream { server unix:PATH; }`
/// with keep-alive connections to it): requests, and bodies both ways, go through.
#[test]
fn behind_nginx() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = socket_path(&dir);
    let (stop, _thread) = start(&path, ServerConfig::default(), common::Echo, None);
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port();
    let http = format!(
        "    upstream app {{ server unix:{sock}; keepalive 4; }}
    server {{
        listen 127.0.0.1:{port};
        client_max_body_size 0;
        location / {{
            proxy_pass http://app;
            proxy_http_version 1.1;
            proxy_set_header Connection \"\";
        }}
    }}",
        sock = path.display()
    );
    let nginx = ringwire_testkit::Nginx::start(dir.path(), &http, port, None);
    let url = format!("http://127.0.0.1:{port}/a?b=c");
    for _ in 0..3 {
        assert_eq!(common::curl_text(&[&url]), "GET /a?b=c body=0\n");
    }
    let body: Vec<u8> = (0..300_000u32).map(|i| (i % 251) as u8).collect();
    let echoed = common::curl(&["--data-binary", "@-", &url], &body);
    let mut expected = b"POST /a?b=c body=300000\n".to_vec();
    expected.extend_from_slice(&body);
    assert!(echoed == expected, "{} bytes came back", echoed.len());
    drop(nginx);
    drop(stop);
}
