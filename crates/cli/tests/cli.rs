//! The `ringwire` binary: serving, and its one-line errors.

use std::io::{BufRead as _, BufReader};
use std::net::TcpListener;
use std::process::{Child, Command, Output, Stdio};
use std::time::Duration;

const BIN: &str = env!("CARGO_BIN_EXE_ringwire");

/// A running `ringwire serve` and the address it printed.
struct Running {
    child: Child,
    addr: String,
}

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn serve(args: &[&str]) -> Running {
    let mut child = Command::new(BIN)
        .arg("serve")
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run ringwire");
    let mut line = String::new();
    BufReader::new(child.stderr.take().expect("stderr"))
        .read_line(&mut line)
        .expect("first line");
    let addr = line
        .trim_end()
        .strip_suffix('/')
        .and_then(|l| l.rsplit_once("http://"))
        .map(|(_, addr)| addr.to_owned())
        .unwrap_or_else(|| panic!("unexpected banner: {line:?}"));
    assert!(line.starts_with("ringwire: serving "), "{line}");
    Running { child, addr }
}

fn curl(url: &str) -> String {
    let out = Command::new("curl")
        .args(["--silent", "--show-error", "--max-time", "10", url])
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

#[test]
fn ringwire_ws_talks_to_ringwire_serve() {
    use std::io::Write as _;

    let server = serve(&["--addr", "127.0.0.1:0"]);
    let mut client = Command::new(BIN)
        .args(["ws", &format!("ws://{}/ws/echo", server.addr)])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run ringwire ws");
    let mut stdin = client.stdin.take().expect("stdin");
    stdin
        .write_all(b"first line\nsecond line\n")
        .expect("write");
    drop(stdin);
    let out = client.wait_with_output().expect("ringwire ws");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "first line\nsecond line\n"
    );
    let refused = run(&["ws", "wss://127.0.0.1:1/"]);
    assert!(!refused.status.success());
    assert_eq!(
        String::from_utf8_lossy(&refused.stderr),
        "ringwire: wss:// needs TLS, which ringwire does not speak yet\n"
    );
}

#[test]
fn serves_a_directory() {
    let dir = std::env::temp_dir().join(format!("ringwire-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("mkdir");
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
