//! Memory of a WebSocket echo server around one 16 MiB message: each
//! library's server (`benches/ws_echo/servers.rs`) runs in a child process
//! of its own; this process is the client (ringwire's blocking one) and
//! reads the child's `VmRSS` and `VmHWM` (peak RSS) from `/proc`: after a
//! small echo, after the 16 MiB echo, a second later, and after the
//! connection closed.
//!
//! ```sh
//! cargo run --release -p ringwire-bench --example ws_memory
//! ```

#[path = "../benches/ws_echo/servers.rs"]
mod servers;

use ringwire_ws::handshake::Offer;
use std::io::{BufRead as _, BufReader};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use ringwire_io::{Duplex, TransportConfig};
use ringwire_ws::blocking::WebSocket;
use ringwire_ws::{CloseCode, Limits, Message};

const MESSAGE: usize = 16 << 20;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if let [_, serve, name] = &args[..] {
        if serve == "serve" {
            let addr = servers::start(name).expect("a server of that name").addr;
            println!("{addr}");
            loop {
                std::thread::park();
            }
        }
    }
    println!(
        "| server | RSS idle | peak RSS (VmHWM) | RSS after the echo | 1 s later | after close |"
    );
    println!("|---|---|---|---|---|---|");
    for (name, _) in servers::SERVERS {
        let child = Server::spawn(name);
        let stream = TcpStream::connect(&child.addr).expect("connect");
        let Duplex { rx, tx } =
            Duplex::tcp(TransportConfig::new(64 << 10, 32 << 20), &stream).expect("rings");
        let (mut socket, _) = WebSocket::connect(
            rx,
            tx,
            &child.addr,
            "/",
            &Offer::default(),
            Limits::default(),
        )
        .expect("handshake");
        echo(&mut socket, &[7; 1024]);
        let idle = child.memory();
        let big: Vec<u8> = (0..MESSAGE).map(|i| (i % 251) as u8).collect();
        echo(&mut socket, &big);
        let after = child.memory();
        std::thread::sleep(Duration::from_secs(1));
        let later = child.memory();
        socket.close(CloseCode::NORMAL, "").expect("close");
        while socket.recv().is_some() {}
        drop(socket);
        drop(stream);
        std::thread::sleep(Duration::from_secs(1));
        let closed = child.memory();
        println!(
            "| {name} | {:.1} MiB | {:.1} MiB | {:.1} MiB | {:.1} MiB | {:.1} MiB |",
            mib(idle.rss),
            mib(after.peak),
            mib(after.rss),
            mib(later.rss),
            mib(closed.rss),
        );
    }
}

fn echo(socket: &mut WebSocket<&TcpStream, &TcpStream>, payload: &[u8]) {
    socket.send(&Message::Binary(payload)).expect("send");
    match socket.recv() {
        Some(Ok((Message::Binary(echo), _))) => assert!(echo == payload, "the echo differs"),
        other => panic!("{other:?}"),
    }
}

fn mib(kib: u64) -> f64 {
    kib as f64 / 1024.0
}

/// A server in a child process, killed on drop.
struct Server {
    child: Child,
    addr: String,
}

/// RSS now and at its peak, in KiB.
struct Memory {
    rss: u64,
    peak: u64,
}

impl Server {
    fn spawn(name: &str) -> Self {
        let mut child = Command::new(std::env::current_exe().expect("this program"))
            .args(["serve", name])
            .stdout(Stdio::piped())
            .spawn()
            .expect("spawn");
        let mut addr = String::new();
        BufReader::new(child.stdout.take().expect("stdout"))
            .read_line(&mut addr)
            .expect("address");
        Server {
            child,
            addr: addr.trim().to_owned(),
        }
    }

    fn memory(&self) -> Memory {
        let status =
            std::fs::read_to_string(format!("/proc/{}/status", self.child.id())).expect("status");
        let field = |name: &str| {
            status
                .lines()
                .find_map(|line| line.strip_prefix(name))
                .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse().ok())
                .expect("a VmRSS and a VmHWM line")
        };
        Memory {
            rss: field("VmRSS:"),
            peak: field("VmHWM:"),
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
