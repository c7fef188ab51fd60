//! The `ringwire` binary: serving over HTTP and HTTPS (against curl and
//! `openssl s_client`), and its one-line errors.

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Duration;

mod common;

use common::{serve, BIN};

/// A certificate authority and a certificate it signed for localhost and
/// 127.0.0.1, made with the openssl command in `dir`: `ca.pem`,
/// `cert.pem`, `key.pem`; and a client's, from a CA of its own: `client-ca.pem`,
/// `client.pem`, `client.key`, and both of those in `client-both.pem`.
fn certificates(dir: &Path) {
    let script = r#"
        set -e
        openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 \
            -subj /CN=ringwire-test-ca -keyout ca.key -out ca.pem
        openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
            -subj /CN=localhost -keyout key.pem -out cert.csr
        printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\n' >ext.cnf
        openssl x509 -req -in cert.csr -CA ca.pem -CAkey ca.key -CAcreateserial \
            -days 2 -extfile ext.cnf -out cert.pem
        openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 \
            -subj /CN=ringwire-test-client-ca -keyout client-ca.key -out client-ca.pem
        openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
            -subj /CN=ringwire-test-client -keyout client.key -out client.csr
        printf 'extendedKeyUsage=clientAuth\n' >client-ext.cnf
        openssl x509 -req -in client.csr -CA client-ca.pem -CAkey client-ca.key \
            -CAcreateserial -days 2 -extfile client-ext.cnf -out client.pem
        cat client.pem client.key >client-both.pem
    "#;
    let out = Command::new("sh")
        .args(["-c", script])
        .current_dir(dir)
        .output()
        .expect("run openssl");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// `ringwire serve` over HTTPS on a free port, one thread, with the certificate
/// [`certificates`] made in `dir`, and `extra` arguments.
fn serve_https(dir: &Path, extra: &[&str]) -> common::Running {
    let (cert, key) = (dir.join("cert.pem"), dir.join("key.pem"));
    let tls = [
        "--addr",
        "127.0.0.1:0",
        "--threads",
        "1",
        "--tls-cert",
        cert.to_str().expect("utf-8"),
        "--tls-key",
        key.to_str().expect("utf-8"),
    ];
    serve(&[&tls[..], extra].concat())
}

/// A directory of its own for one test.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("ringwire-cli-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("mkdir");
    dir
}

fn curl(url: &str) -> String {
    curl_with(&[], url)
}

fn curl_with(options: &[&str], url: &str) -> String {
    let out = Command::new("curl")
        .args(["--silent", "--show-error", "--max-time", "10"])
        .args(options)
        .arg(url)
        .output()
        .expect("curl is installed");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("utf-8")
}

fn run(args: &[&str]) -> Output {
    let mut child = Command::new(BIN)
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run ringwire");
    // A failure is immediate; a wrongly successful start would hang.
    for _ in 0..100 {
        if child.try_wait().expect("wait").is_some() {
            return child.wait_with_output().expect("output");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let _ = child.kill();
    panic!("ringwire {args:?} kept running");
}

#[test]
fn serves_the_demo_site_on_a_free_port() {
    let server = serve(&["--addr", "127.0.0.1:0"]);
    assert!(!server.addr.ends_with(":0"), "{}", server.addr);
    let page = curl(&format!("http://{}/", server.addr));
    assert!(page.contains("<title>ringwire</title>"), "{page}");
    assert!(page.contains("href=\"/hello\""), "{page}");
    let hello = curl(&format!("http://{}/hello", server.addr));
    assert_eq!(hello, "Hello from ringwire!\n");

    // The clock of `/events` goes on after the id a reconnecting client names.
    let out = Command::new("curl")
        .args(["--silent", "--no-buffer", "--max-time", "1.5"])
        .args(["-H", "last-event-id: 41"])
        .arg(format!("http://{}/events", server.addr))
        .output()
        .expect("curl is installed");
    let events = String::from_utf8_lossy(&out.stdout);
    assert!(
        events.starts_with("retry: 1000\ndata: hello\n\nevent: tick\nid: 42\ndata: 42\n"),
        "{events}"
    );
}

/// `--unix PATH`: the demo site on a Unix socket, for curl's `--unix-socket`; the file is
/// gone once the server stops, and a second server on a live socket is refused.
#[test]
fn serves_on_a_unix_socket() {
    let dir = scratch("unix");
    let path = dir.join("site.sock");
    let sock = path.to_str().expect("utf-8");
    let server = serve(&["--unix", sock, "--unix-mode", "600"]);
    assert_eq!(server.addr, format!("unix:{sock}"));
    let mode = std::os::unix::fs::PermissionsExt::mode(
        &std::fs::metadata(&path).expect("socket file").permissions(),
    );
    assert_eq!(mode & 0o7777, 0o600);
    let hello = curl_with(&["--unix-socket", sock], "http://localhost/hello");
    assert_eq!(hello, "Hello from ringwire!\n");
    let second = run(&["serve", "--unix", sock]);
    assert_eq!(second.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&second.stderr),
        format!("ringwire: cannot listen on unix:{sock}: address already in use\n")
    );
    drop(server);
    assert!(
        !path.exists(),
        "the socket file is removed when the server stops"
    );
    let bad = run(&["serve", "--unix", sock, "--unix-mode", "rw"]);
    assert_eq!(bad.status.code(), Some(2), "a usage error");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Binds a listening socket (TCP on a free port, Unix at the path given, or Unix in the
/// abstract namespace under that name), prints its
/// port, waits for a line on stdin, then runs `ringwire serve` on it as systemd's socket
/// activation does: descriptor 3, `LISTEN_FDS=1`, `LISTEN_PID` its own.
const ACTIVATOR: &str = r#"
import os, socket, sys
kind, binary = sys.argv[1], sys.argv[2]
if kind == "tcp":
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
elif kind == "abstract":
    s = socket.socket(socket.AF_UNIX)
    s.bind("\0" + sys.argv[3])
    port = 0
else:
    s = socket.socket(socket.AF_UNIX)
    s.bind(sys.argv[3])
    port = 0
s.listen(64)
print(port, flush=True)
sys.stdin.readline()
if s.fileno() != 3:
    os.dup2(s.fileno(), 3)
os.set_inheritable(3, True)
os.environ["LISTEN_FDS"] = "1"
os.environ["LISTEN_PID"] = str(os.getpid())
os.execv(binary, [binary, "serve", "--addr", "127.0.0.1:1"])
"#;

/// Socket activation: `ringwire serve` serves the listening socket it is passed (TCP, or
/// Unix by path or abstract name, in place of `--addr`), so a connection that arrived before the server started is
/// answered; a Unix socket's file is left to its owner.
#[test]
fn serves_a_socket_systemd_passes() {
    use std::io::{BufRead as _, BufReader, Read as _, Write as _};

    let dir = scratch("activation");
    let path = dir.join("passed.sock");
    let name = format!("ringwire-test-{}", std::process::id());
    for kind in ["tcp", "unix", "abstract"] {
        let place = if kind == "abstract" {
            name.clone()
        } else {
            path.display().to_string()
        };
        let mut child = Command::new("python3")
            .args(["-c", ACTIVATOR, kind, BIN, &place])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("python3");
        let mut stdout = BufReader::new(child.stdout.take().expect("stdout"));
        let mut port = String::new();
        stdout.read_line(&mut port).expect("port");
        let port: u16 = port.trim().parse().expect("a port");
        let request = b"GET /hello HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n";
        // Connected and sent before any server runs: it waits in the socket's queue.
        let mut early: Box<dyn ReadWrite> = match kind {
            "tcp" => Box::new(std::net::TcpStream::connect(("127.0.0.1", port)).expect("connect")),
            "unix" => Box::new(std::os::unix::net::UnixStream::connect(&path).expect("connect")),
            _ => {
                use std::os::linux::net::SocketAddrExt as _;
                let addr = std::os::unix::net::SocketAddr::from_abstract_name(&name).expect("name");
                Box::new(std::os::unix::net::UnixStream::connect_addr(&addr).expect("connect"))
            }
        };
        early.write_all(request).expect("request");
        let mut stdin = child.stdin.take().expect("stdin");
        stdin.write_all(b"go\n").expect("start the server");
        let mut stderr = BufReader::new(child.stderr.take().expect("stderr"));
        let mut banner = String::new();
        stderr.read_line(&mut banner).expect("banner");
        let expected = match kind {
            "tcp" => format!("on http://127.0.0.1:{port}/\n"),
            "unix" => format!("on unix:{place} (http://localhost/ there)\n"),
            _ => format!("on unix:@{name} (http://localhost/ there)\n"),
        };
        assert!(banner.ends_with(&expected), "{banner:?}");
        let server = common::Running {
            child,
            addr: String::new(),
        };
        let mut answer = String::new();
        early.read_to_string(&mut answer).expect("answer");
        assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
        assert!(answer.ends_with("Hello from ringwire!\n"), "{answer}");
        // Ours closed first: the server lingers for a peer's last bytes.
        drop(early);
        drop(server);
    }
    assert!(
        path.exists(),
        "the passed socket's file is its owner's to remove"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// A socket's two directions, for tests that take either family.
trait ReadWrite: std::io::Read + std::io::Write {}
impl<T: std::io::Read + std::io::Write> ReadWrite for T {}

/// `--header` adds its fields to every answer (a file's, a 404, over HTTP/2 too), in place
/// of the site's own of the same name; a malformed or framing one is refused at start.
#[test]
fn serve_adds_the_header_flags_fields_to_every_answer() {
    let dir = scratch("header");
    std::fs::write(dir.join("a.txt"), "hello\n").expect("write");
    let server = serve(&[
        "--addr",
        "127.0.0.1:0",
        dir.to_str().expect("utf-8"),
        "--header",
        "Access-Control-Allow-Origin: *",
        "-H",
        "ETag: \"pinned\"",
    ]);
    for (options, path) in [
        (&["-i"][..], "/a.txt"),
        (&["-i"][..], "/missing"),
        (&["-i", "--http2-prior-knowledge"][..], "/a.txt"),
    ] {
        let head = curl_with(options, &format!("http://{}{path}", server.addr)).to_lowercase();
        assert_eq!(
            head.matches("access-control-allow-origin: *\r\n").count(),
            1,
            "{head}"
        );
        assert_eq!(head.matches("etag: ").count(), 1, "{head}");
        assert!(head.contains("etag: \"pinned\"\r\n"), "{head}");
    }
    for bad in ["Bad Name: x", "Content-Length: 5", "no colon"] {
        let out = run(&["serve", "--addr", "127.0.0.1:0", "--header", bad]);
        assert!(!out.status.success());
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.starts_with("ringwire: --header"), "{err}");
    }
    std::fs::remove_dir_all(&dir).expect("rm");
}

/// `--proxy-protocol`: the client a PROXY header names is the one answered and logged; a
/// connection without one is closed unanswered.
#[test]
fn serve_behind_a_proxy_logs_the_client_it_names() {
    use std::io::{BufRead as _, Read as _, Write as _};

    let (server, mut stderr) =
        common::serve_logging(&["--addr", "127.0.0.1:0", "--proxy-protocol", "--log"]);
    let exchange = |bytes: &[u8]| {
        let mut stream = std::net::TcpStream::connect(&server.addr).expect("connect");
        stream.write_all(bytes).expect("write");
        let mut answer = String::new();
        let _ = stream.read_to_string(&mut answer);
        answer
    };
    let answer = exchange(
        b"PROXY TCP4 203.0.113.9 192.0.2.1 4711 80\r\n\
          GET /hello HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n",
    );
    assert!(answer.ends_with("Hello from ringwire!\n"), "{answer}");
    let mut line = String::new();
    stderr.read_line(&mut line).expect("an access log line");
    assert!(
        line.starts_with("203.0.113.9:4711 \"GET /hello HTTP/1.1\" 200 "),
        "{line}"
    );
    assert_eq!(exchange(b"GET /hello HTTP/1.1\r\nhost: x\r\n\r\n"), "");
}

#[test]
fn the_demo_site_echoes_websocket_messages() {
    use tungstenite::Message;

    let server = serve(&["--addr", "127.0.0.1:0"]);
    let page = curl(&format!("http://{}/ws.html", server.addr));
    assert!(page.contains("/ws/echo"), "{page}");
    let (mut socket, _) =
        tungstenite::connect(format!("ws://{}/ws/echo", server.addr)).expect("handshake");
    socket.send(Message::text("over the ring")).expect("send");
    assert_eq!(socket.read().expect("read"), Message::text("over the ring"));
    socket.close(None).expect("close");
}

/// SIGTERM stops `ringwire serve` gracefully: a WebSocket gets `1001 Going Away`, an idle
/// keep-alive connection is closed, and once the closing handshake is answered the process
/// exits with success, well within the grace period. (Its stderr pipe is closed by then, as
/// a supervisor's may be: the goodbye line must not panic.)
#[test]
fn sigterm_stops_serve_gracefully() {
    use std::io::{Read as _, Write as _};
    use tungstenite::Message;

    let mut server = serve(&["--addr", "127.0.0.1:0"]);
    let mut idle = std::net::TcpStream::connect(&server.addr).expect("connect");
    idle.set_read_timeout(Some(Duration::from_secs(10)))
        .expect("timeout");
    idle.write_all(b"GET /hello HTTP/1.1\r\nHost: a\r\n\r\n")
        .expect("request");
    let mut answer = [0; 4096];
    let n = idle.read(&mut answer).expect("answer");
    assert!(
        answer[..n].starts_with(b"HTTP/1.1 200"),
        "{:?}",
        &answer[..n]
    );
    let (mut socket, _) =
        tungstenite::connect(format!("ws://{}/ws/echo", server.addr)).expect("handshake");
    socket.send(Message::text("before")).expect("send");
    assert_eq!(socket.read().expect("echo"), Message::text("before"));

    let started = std::time::Instant::now();
    assert!(server.terminate());
    let closed = loop {
        match socket.read() {
            Ok(Message::Close(frame)) => break frame.map(|f| u16::from(f.code)),
            Ok(_) => {}
            Err(e) => panic!("no close frame: {e}"),
        }
    };
    assert_eq!(closed, Some(1001));
    // tungstenite queued the answering close: send it, ending the closing handshake.
    let _ = socket.flush();
    assert_eq!(idle.read(&mut answer).expect("end of stream"), 0);
    let status = loop {
        if let Some(status) = server.child.try_wait().expect("wait") {
            break status;
        }
        // Well before the 5 s grace would abort what is left.
        assert!(started.elapsed() < Duration::from_secs(3), "still running");
        std::thread::sleep(Duration::from_millis(20));
    };
    assert!(status.success(), "{status}");
}

#[test]
fn ringwire_ws_talks_to_ringwire_serve() {
    let server = serve(&["--addr", "127.0.0.1:0"]);
    let url = format!("ws://{}/ws/echo", server.addr);
    echo_lines(&[&url]);
    // With fields of the caller's; one the handshake writes itself is one line.
    echo_lines(&[
        "-H",
        "Authorization: Bearer t0ken",
        "-H",
        "Origin: http://localhost",
        &url,
    ]);
    let refused = run(&["ws", "-H", "Upgrade: h2c", &url]);
    assert_eq!(refused.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&refused.stderr),
        "ringwire: the upgrade header is set by the client, not by hand\n"
    );
    // On a stream of an HTTP/2 connection (prior knowledge), as the server allows.
    echo_lines(&["--http2", &url]);
}

/// `ringwire ws --http2` over TLS (`h2` by ALPN); a server that speaks HTTP/1.1 only is
/// told apart.
#[test]
fn ringwire_ws_over_http2() {
    let server = serve(&["--addr", "127.0.0.1:0", "--self-signed"]);
    let port = server.addr.rsplit_once(':').expect("port").1;
    echo_lines(&["-k", "--http2", &format!("wss://localhost:{port}/ws/echo")]);
    let old = serve(&["--addr", "127.0.0.1:0", "--no-http2"]);
    let refused = run(&["ws", "--http2", &format!("ws://{}/ws/echo", old.addr)]);
    assert_eq!(refused.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&refused.stderr),
        "ringwire: HTTP/2 PROTOCOL_ERROR: the connection did not start with the HTTP/2 preface\n"
    );
}

#[test]
fn ringwire_ws_talks_to_ringwire_serve_over_wss() {
    let server = serve(&["--addr", "127.0.0.1:0", "--self-signed"]);
    let port = server.addr.rsplit_once(':').expect("port").1;
    let url = format!("wss://localhost:{port}/ws/echo");
    echo_lines(&["-k", &url]);
    let refused = run(&["ws", &url]);
    assert!(!refused.status.success());
    assert_eq!(
        String::from_utf8_lossy(&refused.stderr),
        "ringwire: the peer's certificate is not signed by a trusted authority\n"
    );
}

/// After the closing handshake over WSS the server ends TLS with `close_notify`, so a
/// client (Python's `ssl`, which tells the two apart) sees a clean end, not a truncation.
#[test]
fn a_wss_connection_ends_with_close_notify() {
    const CLIENT: &str = r#"
import os, socket, ssl, sys
ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
ctx.check_hostname = False
ctx.verify_mode = ssl.CERT_NONE
s = ctx.wrap_socket(socket.create_connection(("127.0.0.1", int(sys.argv[1]))), server_hostname="localhost", suppress_ragged_eofs=False)
s.sendall(b"GET /ws/echo HTTP/1.1\r\nHost: localhost\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
          b"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n")
head = b""
while b"\r\n\r\n" not in head:
    head += s.recv(4096)
assert head.startswith(b"HTTP/1.1 101"), head
mask = os.urandom(4)
s.sendall(b"\x88\x82" + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(b"\x03\xe8")))
try:
    while s.recv(4096):
        pass
    print("clean")
except ssl.SSLEOFError:
    print("truncated")
"#;
    let server = serve(&["--addr", "127.0.0.1:0", "--self-signed"]);
    let port = server.addr.rsplit_once(':').expect("port").1;
    let out = Command::new("python3")
        .args(["-c", CLIENT, port])
        .output()
        .expect("python3");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(String::from_utf8_lossy(&out.stdout), "clean\n");
}

/// A server that completes the upgrade and then never answers: `ringwire ws` gives up on
/// the closing handshake after its timeout and says so, instead of waiting forever.
#[test]
fn ringwire_ws_does_not_wait_forever_for_the_close() {
    use std::io::Write as _;

    let (hold, stop) = std::sync::mpsc::channel::<()>();
    let (addr, peer) = ws_peer(move |_| {
        // Silence, the connection held open.
        let _ = stop.recv();
    });
    let started = std::time::Instant::now();
    let mut client = Command::new(BIN)
        .args(["ws", &format!("ws://{addr}/")])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run ringwire ws");
    client
        .stdin
        .take()
        .expect("stdin")
        .write_all(b"anyone there?\n")
        .expect("write");
    let out = client.wait_with_output().expect("ringwire ws");
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "{:?}",
        started.elapsed()
    );
    assert!(!out.status.success());
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "ringwire: the server did not answer the close within 5 s\n"
    );
    drop(hold);
    peer.join().expect("peer");
}

/// `--keepalive`: a server that never answers is pinged, then given up on, with a message
/// that says so, while stdin is still open.
#[test]
fn ringwire_ws_keepalive_notices_a_silent_server() {
    let (hold, stop) = std::sync::mpsc::channel::<()>();
    let (addr, peer) = ws_peer(move |_| {
        let _ = stop.recv();
    });
    let started = std::time::Instant::now();
    let out = ws_with_stdin_open(&["--keepalive", "0.2", &format!("ws://{addr}/")]);
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "{:?}",
        started.elapsed()
    );
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("sent nothing for 400ms"), "{stderr}");
    drop(hold);
    peer.join().expect("peer");
}

/// `--max-message`: a message past it ends the session with 1009, named as such.
#[test]
fn ringwire_ws_max_message_refuses_a_larger_one() {
    use std::io::Write as _;

    let (addr, peer) = ws_peer(|mut stream| {
        let mut frame = vec![0x81, 20];
        frame.extend_from_slice(b"twenty bytes of text");
        let _ = stream.write_all(&frame);
        std::thread::sleep(Duration::from_millis(500));
    });
    let out = ws_with_stdin_open(&["--max-message", "10", &format!("ws://{addr}/")]);
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("message too big (1009)"), "{stderr}");
    peer.join().expect("peer");
}

/// `ringwire ws ARGS` run to its own end, its stdin held open meanwhile.
fn ws_with_stdin_open(args: &[&str]) -> std::process::Output {
    let mut client = Command::new(BIN)
        .arg("ws")
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run ringwire ws");
    let stdin = client.stdin.take();
    let out = client.wait_with_output().expect("ringwire ws");
    drop(stdin);
    out
}

/// A WebSocket server for one connection: it answers the upgrade, then runs `then`.
fn ws_peer(
    then: impl FnOnce(&std::net::TcpStream) + Send + 'static,
) -> (std::net::SocketAddr, std::thread::JoinHandle<()>) {
    let (addr, peer, _head) = ws_peer_with("", then);
    (addr, peer)
}

/// [`ws_peer`] whose `101` carries `fields` (whole lines, CRLF included) too; the upgrade
/// request's head comes out of the receiver.
fn ws_peer_with(
    fields: &'static str,
    then: impl FnOnce(&std::net::TcpStream) + Send + 'static,
) -> (
    std::net::SocketAddr,
    std::thread::JoinHandle<()>,
    std::sync::mpsc::Receiver<String>,
) {
    use std::io::{BufRead as _, BufReader, Write as _};

    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = listener.local_addr().expect("addr");
    let (heads, head) = std::sync::mpsc::channel();
    let peer = std::thread::spawn(move || {
        let (stream, _) = listener.accept().expect("accept");
        let mut reader = BufReader::new(&stream);
        let mut key = String::new();
        let mut line = String::new();
        let mut request = String::new();
        while reader.read_line(&mut line).expect("head") > 2 {
            match line.split_once(':') {
                Some((name, value)) if name.eq_ignore_ascii_case("sec-websocket-key") => {
                    key = value.trim().to_owned();
                }
                _ => {}
            }
            request.push_str(&line);
            line.clear();
        }
        let _ = heads.send(request);
        let accept = tungstenite::handshake::derive_accept_key(key.as_bytes());
        (&stream)
            .write_all(
                format!(
                    "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n\
                     Connection: Upgrade\r\nSec-WebSocket-Accept: {accept}\r\n{fields}\r\n"
                )
                .as_bytes(),
            )
            .expect("101");
        then(&stream);
    });
    (addr, peer, head)
}

/// `--cookie-jar` keeps what the upgrade's `101` sets, `--cookie FILE` sends it with the
/// next upgrade, and `--cookie NAME=VALUE` is sent as it is, as curl's -c and -b.
#[test]
fn ringwire_ws_keeps_and_sends_cookies() {
    use std::io::Write as _;

    // Closes at once with 1000, so each session ends cleanly.
    let close = |mut stream: &std::net::TcpStream| {
        stream.write_all(b"\x88\x02\x03\xe8").expect("close");
        let _ = std::io::Read::read(&mut stream, &mut [0; 64]);
    };
    let dir = std::env::temp_dir().join(format!("ringwire-ws-cookies-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let jar = dir.join("jar.txt");
    let jar = jar.to_str().unwrap();

    let (addr, peer, _) = ws_peer_with("Set-Cookie: session=abc123; Path=/\r\n", close);
    let url = format!("ws://{addr}/ws");
    let out = ws_session(&["--cookie-jar", jar, &url], b"");
    assert!(out.status.success(), "{out:?}");
    peer.join().unwrap();
    let saved = std::fs::read_to_string(jar).unwrap();
    assert!(saved.contains("\tsession\tabc123"), "{saved}");

    let (addr, peer, head) = ws_peer_with("", close);
    let out = ws_session(&["--cookie", jar, &format!("ws://{addr}/ws")], b"");
    assert!(out.status.success(), "{out:?}");
    peer.join().unwrap();
    let head = head.recv().unwrap().to_ascii_lowercase();
    assert!(head.contains("\r\ncookie: session=abc123\r\n"), "{head}");

    let (addr, peer, head) = ws_peer_with("", close);
    let out = ws_session(&["--cookie", "a=1; b=2", &format!("ws://{addr}/ws")], b"");
    assert!(out.status.success(), "{out:?}");
    peer.join().unwrap();
    let head = head.recv().unwrap().to_ascii_lowercase();
    assert!(head.contains("\r\ncookie: a=1; b=2\r\n"), "{head}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A server that ends the session while stdin stays open: `ringwire ws` exits at once
/// (it does not wait for the user's next line), and says how the session ended unless
/// the server closed it normally.
#[test]
fn ringwire_ws_exits_when_the_server_ends_the_session() {
    use std::io::{Read as _, Write as _};

    let cases: [(&[u8], &str); 3] = [
        // Close 1000, then the client's answer read to its end.
        (b"\x88\x02\x03\xe8", ""),
        // Close 4001 "bye".
        (
            b"\x88\x05\x0f\xa1bye",
            "ringwire: the server closed the connection with 4001: bye\n",
        ),
        // A message, then the connection dropped without a close frame.
        (
            b"\x81\x02hi",
            "ringwire: the connection ended without a close frame (1006)\n",
        ),
    ];
    for (frames, error) in cases {
        let (addr, peer) = ws_peer(move |mut stream| {
            stream.write_all(frames).expect("frames");
            if frames[0] == 0x88 {
                let _ = stream.read_to_end(&mut Vec::new());
            }
        });
        let started = std::time::Instant::now();
        let mut client = Command::new(BIN)
            .args(["ws", &format!("ws://{addr}/")])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("run ringwire ws");
        // Held open (not closed by `wait_with_output`) until the client is gone, which
        // must be soon: past 10 s it is killed and the test fails.
        let stdin = client.stdin.take();
        while client.try_wait().expect("wait").is_none() {
            if started.elapsed() > Duration::from_secs(10) {
                let _ = client.kill();
                panic!("ringwire ws still runs 10 s after the server ended the session");
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let out = client.wait_with_output().expect("ringwire ws");
        drop(stdin);
        assert_eq!(String::from_utf8_lossy(&out.stderr), error);
        assert_eq!(out.status.success(), error.is_empty());
        peer.join().expect("peer");
    }
}

/// `ringwire ws ARGS` sends two lines and prints them back from the echo.
fn echo_lines(args: &[&str]) {
    let out = ws_session(args, b"first line\nsecond line\n");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "first line\nsecond line\n"
    );
}

/// `ringwire ws ARGS` with `input` on stdin, run to its end.
fn ws_session(args: &[&str], input: &[u8]) -> Output {
    use std::io::Write as _;

    let mut client = Command::new(BIN)
        .arg("ws")
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run ringwire ws");
    let mut stdin = client.stdin.take().expect("stdin");
    stdin.write_all(input).expect("write");
    drop(stdin);
    client.wait_with_output().expect("ringwire ws")
}

/// With `--binary` any bytes go out, and binary messages come back as they were sent;
/// without it, a line that is not UTF-8 stops the session with a clear error.
#[test]
fn ringwire_ws_sends_and_prints_binary_messages() {
    let server = serve(&["--addr", "127.0.0.1:0"]);
    let url = format!("ws://{}/ws/echo", server.addr);
    let input = b"\x00\xff\x01raw\r\n\n\xfe\n";
    let out = ws_session(&["--binary", &url], input);
    assert!(out.status.success(), "{out:?}");
    assert_eq!(out.stdout, input);

    let out = ws_session(&[&url], b"fine\n\xff\xfe\n");
    assert!(!out.status.success());
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "ringwire: stdin line 2 is not UTF-8 (send it with --binary)\n"
    );
}

/// A URL without its scheme is refused naming the schemes `ringwire ws` takes.
#[test]
fn ringwire_ws_names_its_schemes() {
    let out = run(&["ws", "127.0.0.1:1/ws/echo"]);
    assert!(!out.status.success());
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "ringwire: invalid URL \"127.0.0.1:1/ws/echo\": no ws:// or wss:// in front\n"
    );
}

/// `--self-signed` leaves its certificate for clients while it runs, and takes it away when
/// it stops.
#[test]
fn the_self_signed_certificate_file_goes_with_the_server() {
    let mut server = serve(&["--addr", "127.0.0.1:0", "--self-signed"]);
    let file = std::env::temp_dir().join(format!("ringwire-self-signed-{}.pem", server.addr));
    let pem = std::fs::read_to_string(&file).expect("the certificate's file");
    assert!(pem.starts_with("-----BEGIN CERTIFICATE-----"), "{pem}");
    assert!(server.terminate());
    assert!(server.child.wait().expect("wait").success());
    assert!(!file.exists(), "{} left behind", file.display());
}

#[test]
fn serves_a_directory() {
    let dir = scratch("dir");
    std::fs::write(dir.join("f.txt"), "file\n").expect("write");
    let server = serve(&[
        dir.to_str().expect("utf-8"),
        "--addr",
        "127.0.0.1:0",
        "--threads",
        "1",
    ]);
    assert_eq!(curl(&format!("http://{}/f.txt", server.addr)), "file\n");
    drop(server);
    let _ = std::fs::remove_dir_all(&dir);
}

/// Dotfiles (`.env`, `.git/`) are not found unless `--dotfiles` asks for them.
#[test]
fn serves_dotfiles_only_when_asked() {
    let dir = scratch("dotfiles");
    std::fs::write(dir.join(".env"), "TOKEN=x\n").expect("write");
    let root = dir.to_str().expect("utf-8");
    let args = ["--addr", "127.0.0.1:0", "--threads", "1"];
    let hiding = serve(&[&[root][..], &args].concat());
    let status = ["--output", "/dev/null", "--write-out", "%{http_code}"];
    assert_eq!(
        curl_with(&status, &format!("http://{}/.env", hiding.addr)),
        "404"
    );
    let serving = serve(&[&[root, "--dotfiles"][..], &args].concat());
    assert_eq!(curl(&format!("http://{}/.env", serving.addr)), "TOKEN=x\n");
    drop((hiding, serving));
    let _ = std::fs::remove_dir_all(&dir);
}

/// The demo site has no dotfiles: the flag without a directory is a mistake.
#[test]
fn dotfiles_needs_a_directory() {
    let out = run(&["serve", "--dotfiles", "--addr", "127.0.0.1:0"]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("<DIR|--root <DIR>>"), "{stderr}");
}

#[test]
fn a_second_server_on_the_same_port_fails_with_one_line() {
    let port = TcpListener::bind("127.0.0.1:0")
        .expect("bind")
        .local_addr()
        .expect("addr")
        .port();
    let addr = format!("127.0.0.1:{port}");
    let _first = serve(&["--addr", &addr]);
    let second = run(&["serve", "--addr", &addr]);
    assert_eq!(second.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&second.stderr),
        format!("ringwire: cannot listen on {addr}: address already in use\n")
    );
}

#[test]
fn a_missing_directory_fails_with_one_line() {
    let out = run(&["serve", "/no/such/ringwire/dir", "--addr", "127.0.0.1:0"]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "ringwire: cannot serve /no/such/ringwire/dir: no such directory\n"
    );
}

/// Repeated `--tls-cert`/`--tls-key` pairs: each name gets its certificate by SNI (curl
/// checks it against the test CA), the first goes to other names; unpaired flags are refused.
#[test]
fn serves_several_names_a_certificate_each() {
    let dir = scratch("sni");
    certificates(&dir);
    let script = r#"
        set -e
        openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
            -subj /CN=other.test -keyout other.key -out other.csr
        printf 'subjectAltName=DNS:other.test\n' >other.cnf
        openssl x509 -req -in other.csr -CA ca.pem -CAkey ca.key -CAcreateserial \
            -days 2 -extfile other.cnf -out other.pem
    "#;
    let made = Command::new("sh")
        .args(["-c", script])
        .current_dir(&dir)
        .status();
    assert!(made.expect("openssl").success());
    let path = |name: &str| dir.join(name).to_str().expect("utf-8").to_owned();
    let (other, other_key) = (path("other.pem"), path("other.key"));
    let server = serve_https(&dir, &["--tls-cert", &other, "--tls-key", &other_key]);
    let port = server.addr.rsplit_once(':').expect("port").1;
    let ca = path("ca.pem");
    for host in ["localhost", "other.test"] {
        let resolve = format!("{host}:{port}:127.0.0.1");
        let url = format!("https://{host}:{port}/hello");
        let hello = curl_with(&["--cacert", &ca, "--resolve", &resolve], &url);
        assert_eq!(hello, "Hello from ringwire!\n", "{host}");
    }
    let unpaired = run(&[
        "serve",
        "--addr",
        "127.0.0.1:0",
        "--tls-cert",
        &other,
        "--tls-key",
        &other_key,
        "--tls-cert",
        &other,
    ]);
    assert_eq!(unpaired.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&unpaired.stderr),
        "ringwire: each --tls-cert goes with a --tls-key, in the same order\n"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn serves_https_to_curl_with_a_certificate_it_trusts() {
    let dir = scratch("https");
    certificates(&dir);
    // 1 MiB: a file larger than the ring, sent through it encrypted.
    let big: Vec<u8> = (0..1u32 << 20).map(|i| (i * 7 % 251) as u8).collect();
    std::fs::write(dir.join("big.bin"), &big).expect("write");
    let ca = dir.join("ca.pem");
    let server = serve_https(&dir, &[dir.to_str().expect("utf-8")]);
    let port = server.addr.rsplit_once(':').expect("port").1;
    let url = format!("https://localhost:{port}/big.bin");
    let ca = ca.to_str().expect("utf-8");
    let out = dir.join("got.bin");
    curl_with(&["--cacert", ca, "-o", out.to_str().expect("utf-8")], &url);
    assert!(
        std::fs::read(&out).expect("read") == big,
        "the file differs"
    );
    // Keep-alive over one session: two requests, one connection.
    let twice = Command::new("curl")
        .args(["--silent", "--max-time", "10", "--cacert", ca])
        .args([
            "-w",
            "%{num_connects} ",
            "-o",
            "/dev/null",
            "-o",
            "/dev/null",
        ])
        .args([&url, &url])
        .output()
        .expect("curl");
    assert_eq!(String::from_utf8_lossy(&twice.stdout), "1 0 ");
    // Without the CA, curl refuses the certificate (exit 60).
    let refused = Command::new("curl")
        .args(["--silent", "--max-time", "10", &url])
        .status()
        .expect("curl");
    assert_eq!(refused.code(), Some(60));
    drop(server);
    let _ = std::fs::remove_dir_all(&dir);
}

/// Mutual TLS: `serve --tls-client-ca` lets in curl and `ringwire get` presenting a
/// certificate that CA signed (its key beside it or in the same file), over HTTP/1.1 and
/// HTTP/2, and refuses them without one.
#[test]
fn serve_with_a_client_ca_wants_a_client_certificate() {
    let dir = scratch("mutual-tls");
    certificates(&dir);
    let path = |name: &str| dir.join(name).to_str().expect("utf-8").to_owned();
    let (ca, client_ca) = (path("ca.pem"), path("client-ca.pem"));
    let server = serve_https(&dir, &["--tls-client-ca", &client_ca]);
    let port = server.addr.rsplit_once(':').expect("port").1;
    let url = format!("https://localhost:{port}/hello");
    let client = ["--cert", &path("client.pem"), "--key", &path("client.key")];
    for version in ["--http1.1", "--http2"] {
        let options = [&["--cacert", &ca, version][..], &client].concat();
        assert_eq!(curl_with(&options, &url), "Hello from ringwire!\n");
    }
    let refused = Command::new("curl")
        .args(["--silent", "--max-time", "10", "--cacert", &ca, &url])
        .status()
        .expect("curl");
    assert!(!refused.success(), "curl without a certificate let in");

    let get = |cert: &[&str]| {
        Command::new(BIN)
            .args(["get", "--cacert", &ca])
            .args(cert)
            .arg(&url)
            .output()
            .expect("run ringwire get")
    };
    for cert in [&client[..], &["-E", &path("client-both.pem")]] {
        let out = get(cert);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(out.stdout, b"Hello from ringwire!\n");
    }
    let out = get(&[]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "ringwire: the server requires a client certificate\n"
    );
    drop(server);

    let out = run(&[
        "serve",
        "--addr",
        "127.0.0.1:0",
        "--tls-client-ca",
        &client_ca,
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("--tls-client-ca needs HTTPS"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn openssl_s_client_negotiates_http_1_1_and_gets_an_answer() {
    let dir = scratch("s_client");
    certificates(&dir);
    let server = serve_https(&dir, &[]);
    for version in ["-tls1_2", "-tls1_3"] {
        let mut client = Command::new("openssl")
            .args([
                "s_client",
                "-connect",
                &server.addr,
                "-servername",
                "localhost",
            ])
            .args([
                "-alpn",
                "http/1.1",
                "-verify_return_error",
                "-ign_eof",
                version,
                "-CAfile",
            ])
            .arg(dir.join("ca.pem"))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("run openssl s_client");
        std::io::Write::write_all(
            client.stdin.as_mut().expect("stdin"),
            b"GET /hello HTTP/1.1\r\nhost: localhost\r\nconnection: close\r\n\r\n",
        )
        .expect("send");
        let out = client.wait_with_output().expect("s_client");
        let out = String::from_utf8_lossy(&out.stdout);
        assert!(out.contains("ALPN protocol: http/1.1"), "{version}: {out}");
        assert!(
            out.contains("Verify return code: 0 (ok)"),
            "{version}: {out}"
        );
        assert!(out.contains("HTTP/1.1 200 OK"), "{version}: {out}");
        assert!(out.contains("Hello from ringwire!"), "{version}: {out}");
    }
    drop(server);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn serves_https_with_a_self_signed_certificate() {
    let server = serve(&["--addr", "127.0.0.1:0", "--threads", "1", "--self-signed"]);
    let port = server.addr.rsplit_once(':').expect("port").1;
    let body = curl_with(&["--insecure"], &format!("https://localhost:{port}/hello"));
    assert_eq!(body, "Hello from ringwire!\n");
    // Plain HTTP to the HTTPS port is told to use HTTPS (as nginx does, not a failed
    // handshake), with a clean end, and the server goes on.
    let plain = curl_with(
        &["--write-out", "%{http_code}"],
        &format!("http://127.0.0.1:{port}/hello"),
    );
    assert_eq!(plain, "This port speaks HTTPS: use https:// here.\n400");
    let again = curl_with(&["--insecure"], &format!("https://127.0.0.1:{port}/hello"));
    assert_eq!(again, "Hello from ringwire!\n");
}

#[test]
fn serves_http2_unless_told_not_to() {
    let version = &["--insecure", "--http2", "--write-out", " %{http_version}"][..];
    for (flags, expected) in [(&[][..], "2"), (&["--no-http2"][..], "1.1")] {
        let mut args = vec!["--addr", "127.0.0.1:0", "--threads", "1", "--self-signed"];
        args.extend_from_slice(flags);
        let server = serve(&args);
        let port = server.addr.rsplit_once(':').expect("port").1;
        let tls = curl_with(version, &format!("https://localhost:{port}/hello"));
        assert_eq!(
            tls,
            format!("Hello from ringwire!\n {expected}"),
            "{flags:?}"
        );
    }
    let server = serve(&["--addr", "127.0.0.1:0", "--threads", "1"]);
    let h2c = ["--http2-prior-knowledge", "--write-out", " %{http_version}"];
    let out = curl_with(&h2c, &format!("http://{}/hello", server.addr));
    assert_eq!(out, "Hello from ringwire!\n 2");
}

#[test]
fn serves_https_with_rustls_too() {
    let server = serve(&[
        "--addr",
        "127.0.0.1:0",
        "--threads",
        "1",
        "--self-signed",
        "--tls-library",
        "rustls",
    ]);
    let port = server.addr.rsplit_once(':').expect("port").1;
    let body = curl_with(&["--insecure"], &format!("https://localhost:{port}/hello"));
    assert_eq!(body, "Hello from ringwire!\n");
    // ringwire's own client on rustls as well.
    let url = format!("https://127.0.0.1:{port}/hello");
    let got = run(&["get", "-k", "--tls-library", "rustls", &url]);
    assert!(
        got.status.success(),
        "{}",
        String::from_utf8_lossy(&got.stderr)
    );
    assert_eq!(got.stdout, b"Hello from ringwire!\n");
}

#[test]
fn sighup_reads_a_renewed_certificate_for_the_connections_that_follow() {
    let (old, new, live) = (scratch("hup-old"), scratch("hup-new"), scratch("hup-live"));
    certificates(&old);
    certificates(&new);
    let install = |from: &Path| {
        for file in ["cert.pem", "key.pem"] {
            std::fs::copy(from.join(file), live.join(file)).expect("copy");
        }
    };
    install(&old);
    let server = serve_https(&live, &[]);
    let port = server.addr.rsplit_once(':').expect("port").1;
    let resolve = format!("localhost:{port}:127.0.0.1");
    let url = format!("https://localhost:{port}/hello");
    let trusting = |dir: &Path| {
        let ca = dir.join("ca.pem");
        Command::new("curl")
            .args([
                "--silent",
                "--max-time",
                "5",
                "--resolve",
                &resolve,
                "--cacert",
            ])
            .arg(ca)
            .arg(&url)
            .output()
            .expect("curl is installed")
            .status
            .success()
    };
    let hangup = || {
        let pid = server.child.id().to_string();
        let sent = Command::new("kill").args(["-HUP", &pid]).status();
        assert!(sent.expect("kill").success());
    };
    assert!(trusting(&old));
    assert!(!trusting(&new));

    // A key that will not do: the certificate in use stays, and so does the server.
    std::fs::write(live.join("key.pem"), "not a key\n").expect("write");
    hangup();
    std::thread::sleep(Duration::from_millis(300));
    assert!(trusting(&old));

    install(&new);
    hangup();
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while !trusting(&new) {
        assert!(std::time::Instant::now() < deadline, "never reloaded");
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(!trusting(&old));
    assert!(server.terminate());
    for dir in [old, new, live] {
        let _ = std::fs::remove_dir_all(dir);
    }
}
