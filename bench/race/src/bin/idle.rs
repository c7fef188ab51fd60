//! Opens COUNT keep-alive connections to ADDR one after another, makes one
//! `GET PATH` on each and reads its whole answer, then prints `ready COUNT`
//! and holds them all open until its standard input closes.
//!
//! `race-idle ADDR [COUNT] [PATH]` (defaults 10000, `/plaintext`). The
//! caller raises `ulimit -n` first and reads the server's memory while this
//! holds the connections.

use std::io::{BufRead as _, Read as _, Write as _};
use std::net::{SocketAddr, TcpStream};
use std::process::ExitCode;

/// Reads one response with a `content-length` body; fails on a close or a
/// status other than 200.
fn read_answer(stream: &mut TcpStream, buf: &mut Vec<u8>) -> std::io::Result<()> {
    buf.clear();
    let mut chunk = [0u8; 4096];
    loop {
        let n = stream.read(&mut chunk)?;
        if n == 0 {
            return Err(std::io::Error::other("the server closed a connection"));
        }
        buf.extend_from_slice(&chunk[..n]);
        let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") else {
            continue;
        };
        let head = String::from_utf8_lossy(&buf[..end]).to_ascii_lowercase();
        if !head.starts_with("http/1.1 200") {
            return Err(std::io::Error::other(format!("answer: {head}")));
        }
        let length: usize = head
            .lines()
            .find_map(|l| l.strip_prefix("content-length:"))
            .and_then(|v| v.trim().parse().ok())
            .ok_or_else(|| std::io::Error::other("no content-length"))?;
        if buf.len() >= end + 4 + length {
            return Ok(());
        }
    }
}

fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    let addr: SocketAddr = match args.next().map(|a| a.parse()) {
        Some(Ok(addr)) => addr,
        _ => {
            eprintln!("usage: race-idle ADDR [COUNT] [PATH]");
            return ExitCode::FAILURE;
        }
    };
    let count: usize = args.next().and_then(|c| c.parse().ok()).unwrap_or(10_000);
    let path = args.next().unwrap_or_else(|| "/plaintext".to_owned());
    let request = format!("GET {path} HTTP/1.1\r\nHost: {addr}\r\n\r\n");
    let mut held = Vec::with_capacity(count);
    let mut buf = Vec::new();
    for i in 0..count {
        let answered = TcpStream::connect(addr).and_then(|mut stream| {
            stream.write_all(request.as_bytes())?;
            read_answer(&mut stream, &mut buf)?;
            Ok(stream)
        });
        match answered {
            Ok(stream) => held.push(stream),
            Err(e) => {
                eprintln!("race-idle: connection {i}: {e}");
                return ExitCode::FAILURE;
            }
        }
    }
    println!("ready {}", held.len());
    let _ = std::io::stdout().flush();
    // Hold until stdin closes, then check that the server kept every one.
    let mut line = String::new();
    while std::io::stdin()
        .lock()
        .read_line(&mut line)
        .map(|n| n > 0)
        .unwrap_or(false)
    {
        line.clear();
    }
    ExitCode::SUCCESS
}
