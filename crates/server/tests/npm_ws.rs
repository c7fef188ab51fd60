//! The npm `ws` package (Node's most used WebSocket library) against
//! ringwire both ways: as a client of the server's `/ws/echo`, and as an
//! echo server for ringwire's client socket. Text and binary messages from
//! 0 B to 16 MiB, with and without permessage-deflate, checked byte for
//! byte. The scripts are in `tests/npm/`; `ws` is installed from the npm
//! registry into a cache outside the repository when missing.

mod common;

use std::io::{BufRead as _, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;

use ringwire_server::ws::{self, CloseCode, DeflateConfig, Message};
use ringwire_server::{Router, ServerConfig};

const SCRIPTS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/npm");

/// The version the scripts are written against.
const WS: &str = "ws@8";

/// `node_modules` holding `ws`, installed on first use (once per run).
fn node_modules() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let cache = std::env::var_os("HOME")
            .map_or_else(std::env::temp_dir, PathBuf::from)
            .join(".cache/ringwire-npm");
        let modules = cache.join("node_modules");
        if !modules.join("ws/package.json").exists() {
            std::fs::create_dir_all(&cache).expect("npm cache dir");
            let installed = Command::new("npm")
                .args(["install", "--no-audit", "--no-fund", "--silent", "--prefix"])
                .arg(&cache)
                .arg(WS)
                .status();
            assert!(
                installed.is_ok_and(|s| s.success()),
                "installing npm's ws failed (node and npm are needed)"
            );
        }
        modules
    })
}

fn node(script: &str, args: &[&str]) -> Command {
    let mut command = Command::new("node");
    command
        .env("NODE_PATH", node_modules())
        .arg(Path::new(SCRIPTS).join(script))
        .args(args);
    command
}

/// npm `ws` as a client of `/ws/echo`; returns what it printed.
fn npm_client(mode: &str) -> String {
    let addr = common::start(
        ServerConfig::default(),
        Router::new().get("/ws/echo", ws::echo),
    );
    let out = node("client.js", &[&format!("ws://{addr}/ws/echo"), mode])
        .output()
        .expect("node runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("utf-8")
}

#[test]
fn npm_ws_client_echoes_up_to_16_mib_with_deflate() {
    assert_eq!(npm_client("deflate").trim(), "ok permessage-deflate");
}

#[test]
fn npm_ws_client_echoes_up_to_16_mib_without_deflate() {
    assert_eq!(npm_client("plain").trim(), "ok");
}

/// An npm `ws` echo server, killed on drop.
struct NpmServer(Child);

impl NpmServer {
    fn start(mode: &str) -> (Self, String) {
        let mut child = node("server.js", &[mode])
            .stdout(Stdio::piped())
            .spawn()
            .expect("node runs");
        let mut port = String::new();
        BufReader::new(child.stdout.take().expect("stdout"))
            .read_line(&mut port)
            .expect("port");
        (NpmServer(child), format!("127.0.0.1:{}", port.trim()))
    }
}

impl Drop for NpmServer {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The lengths `tests/npm/messages.js` uses: each frame-length encoding's
/// edges, then 1 MiB and 16 MiB.
const SIZES: [usize; 10] = [0, 1, 125, 126, 127, 65535, 65536, 65537, 1 << 20, 16 << 20];

/// `size` bytes of UTF-8 mixing 1- to 4-byte characters, padded with ASCII.
fn text(size: usize) -> String {
    const PATTERN: &str = "ringwire é ✓ 𝄞 ";
    let mut text = PATTERN.repeat(size / PATTERN.len());
    text.extend(std::iter::repeat_n('a', size % PATTERN.len()));
    text
}

/// `size` bytes of xorshift noise (incompressible).
fn binary(size: usize) -> Vec<u8> {
    let mut x = 0x9e37_79b9_u32 ^ size as u32;
    (0..size)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            x as u8
        })
        .collect()
}

fn client_against_npm_server(deflate: Option<DeflateConfig>) {
    let (_server, addr) = NpmServer::start(if deflate.is_some() {
        "deflate"
    } else {
        "plain"
    });
    common::runtime().block_on(async {
        // A 16 MiB frame and its header must fit the receive ring whole.
        let (mut socket, negotiated) = common::ws_client(&addr, "/", deflate, 32 << 20).await;
        assert_eq!(negotiated.deflate.is_some(), deflate.is_some());
        for size in SIZES {
            let (text, binary) = (text(size), binary(size));
            for message in [Message::Text(&text), Message::Binary(&binary)] {
                socket.send(&message).await.expect("send");
                let (echoed, _) = socket.recv().await.expect("open").expect("echo");
                assert!(echoed == message, "{size} B: the echo differs");
            }
        }
        socket
            .close(CloseCode::NORMAL, "done")
            .await
            .expect("close");
        while let Some(received) = socket.recv().await {
            received.expect("closing handshake");
        }
    });
}

#[test]
fn the_client_socket_against_an_npm_ws_server_with_deflate() {
    client_against_npm_server(Some(DeflateConfig::default()));
}

#[test]
fn the_client_socket_against_an_npm_ws_server_without_deflate() {
    client_against_npm_server(None);
}
