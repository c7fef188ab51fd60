//! What one small `recv` really costs here: 4-byte reads from a Unix socket pair and from a TCP
//! loopback connection whose peer has already written the bytes (so no read waits).
//!
//! The frames benchmarks read from an in-memory fixture whose `read` costs a few ns; this puts
//! the per-read differences they find next to the cost of the system call they stand for.
//!
//! Usage: `recv_syscall` (binds 127.0.0.1 on an ephemeral port; everything stays on loopback).

#![forbid(unsafe_code)]

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
#[cfg(unix)]
use std::os::unix::net::UnixStream;
use std::time::Instant;

/// Reads timed per round.
const READS: usize = 200_000;
/// Bytes written ahead of each timed burst of reads (1024 reads of 4 bytes).
const BURST: usize = 4096;

fn main() -> std::io::Result<()> {
    #[cfg(unix)]
    {
        let (mut tx, mut rx) = UnixStream::pair()?;
        report("unix socket pair", &mut tx, &mut rx)?;
    }

    let listener = TcpListener::bind("127.0.0.1:0")?;
    let mut tx = TcpStream::connect(listener.local_addr()?)?;
    tx.set_nodelay(true)?;
    let (mut rx, _) = listener.accept()?;
    report("tcp loopback", &mut tx, &mut rx)
}

/// Prints the median over 5 rounds of the time per 4-byte `read`.
fn report(name: &str, tx: &mut impl Write, rx: &mut impl Read) -> std::io::Result<()> {
    let mut rounds = Vec::new();
    for _ in 0..5 {
        let (mut nanos, mut reads) = (0u128, 0usize);
        let mut buf = [0u8; 4];
        while reads < READS {
            tx.write_all(&[7; BURST])?;
            let start = Instant::now();
            for _ in 0..BURST / buf.len() {
                rx.read_exact(&mut buf)?;
            }
            nanos += start.elapsed().as_nanos();
            reads += BURST / buf.len();
        }
        rounds.push(nanos as f64 / reads as f64);
    }
    rounds.sort_by(f64::total_cmp);
    println!(
        "{name}: {:.0} ns per 4-byte read (median of 5 rounds)",
        rounds[2]
    );
    Ok(())
}
