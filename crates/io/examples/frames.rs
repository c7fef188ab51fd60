//! Streams length-prefixed frames over a loopback TCP connection through the ring and prints
//! the rate. A writer thread encodes frames straight into its send ring's reservations; the
//! reader recvs into its receive ring and hands each body to the handler as a borrowed slice.
//!
//! `cargo run --release --example frames [BODY_BYTES] [SECONDS]` (defaults: 64, 3).

use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use ringwire_io::{RecvTransport, SendTransport, TransportConfig};
use ringwire_wire::{run, Control, Finish, LengthPrefixed};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let body: usize = args.next().map_or(Ok(64), |a| a.parse())?;
    let seconds: u64 = args.next().map_or(Ok(3), |a| a.parse())?;

    let listener = TcpListener::bind("127.0.0.1:0")?;
    let addr = listener.local_addr()?;
    let stop = Arc::new(AtomicBool::new(false));
    let writer = {
        let stop = stop.clone();
        std::thread::spawn(move || -> Result<u64, ringwire_io::TransportError> {
            let stream = TcpStream::connect(addr)?;
            stream.set_nodelay(true)?;
            let mut tx = SendTransport::new(TransportConfig::default(), stream)?;
            let mut sent = 0;
            while !stop.load(Ordering::Relaxed) {
                // A batch of frames per flush: the encoder writes into the ring, one send drains it.
                for _ in 0..1024 {
                    let span = tx.reserve(4 + body)?;
                    span[..4].copy_from_slice(&(body as u32).to_be_bytes());
                    span[4..4 + body].fill(sent as u8);
                    tx.commit(4 + body);
                    sent += 1;
                }
                tx.flush()?;
            }
            tx.shutdown_write()?;
            Ok(sent)
        })
    };

    let (stream, _) = listener.accept()?;
    let mut rx = RecvTransport::new(TransportConfig::default(), stream)?;
    println!(
        "streaming {body}-byte frames over {addr} through a {} ring for {seconds} s",
        if rx.ring().is_mirrored() {
            "mirrored"
        } else {
            "heap"
        }
    );
    let (mut frames, mut bytes, mut checksum) = (0u64, 0u64, 0u64);
    let start = Instant::now();
    let deadline = start + Duration::from_secs(seconds);
    let finish = run(&mut rx, &mut LengthPrefixed::default(), |frame| {
        frames += 1;
        bytes += frame.len() as u64 + 4;
        checksum = checksum.wrapping_add(u64::from(frame.first().copied().unwrap_or(0)));
        if frames % 4096 == 0 && Instant::now() >= deadline {
            stop.store(true, Ordering::Relaxed);
        }
        Control::Continue
    })?;
    let elapsed = start.elapsed().as_secs_f64();
    let sent = writer.join().expect("writer thread panicked")?;
    assert_eq!(finish, Finish::Eof);
    assert_eq!(frames, sent, "every frame sent was received");
    println!(
        "{frames} frames in {elapsed:.2} s: {:.0} frames/s, {:.1} MiB/s (checksum {checksum})",
        frames as f64 / elapsed,
        bytes as f64 / elapsed / (1 << 20) as f64
    );
    Ok(())
}
