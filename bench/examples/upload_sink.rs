//! An upload sink for measuring what `BodyReader::with_chunk` saves: a ringwire server on
//! 127.0.0.1 with two streaming POST routes that compute the same cheap checksum (a wrapping
//! sum of the body's bytes) and answer `len sum`:
//!
//! - `/read`: `BodyReader::read` into a 64 KiB buffer of the handler's own, then the sum over
//!   what it read;
//! - `/in-place`: `BodyReader::with_chunk`, the sum over each piece where it lies (the
//!   receive ring over HTTP/1.1, the stream's buffer over HTTP/2).
//!
//! One thread with a single-threaded runtime (`Threading::PerCore(1)`), so that the process's
//! CPU time (`/proc/PID/stat`, `/proc/PID/schedstat`) is the server's. The port comes from the
//! first argument or `PORT` (default 0, any free one); the bound address is printed.
//! HTTP/1.1 and HTTP/2 with prior knowledge (h2c) both work; `H2_MAX_FRAME` sets the
//! `SETTINGS_MAX_FRAME_SIZE` it advertises (default 16 KiB), which decides whether ringwire's
//! client frames an upload's pieces in place (a piece fits one frame) or copies them.
//!
//! ```sh
//! cargo build --release -p ringwire-bench --example upload_sink
//! taskset -c 0 target/release/examples/upload_sink 8080 &
//! taskset -c 1 curl -s --data-binary @/tmp/1g http://127.0.0.1:8080/in-place
//! ```

use std::net::SocketAddr;

use ringwire_http1::Method;
use ringwire_server::{
    handler_fn, streaming, Request, Response, Router, Server, ServerConfig, Threading,
};

/// The checksum: a wrapping sum of the bytes, cheap so that the body's handling shows. Summed
/// into `u32` over blocks of 64 KiB (no block can overflow one), which the compiler vectorizes
/// far better than widening each byte to `u64`: folding straight into a `u64` took about half
/// the server's CPU in a profile, the copy that `/read` adds about a fourteenth.
fn byte_sum(sum: u64, bytes: &[u8]) -> u64 {
    bytes.chunks(64 << 10).fold(sum, |s, block| {
        s.wrapping_add(u64::from(block.iter().map(|&b| u32::from(b)).sum::<u32>()))
    })
}

/// Reads the body into a 64 KiB buffer of its own.
async fn read(request: &Request<'_>) -> Response {
    let Some(mut body) = request.body_reader() else {
        return Response::text("no body\n");
    };
    let (mut len, mut sum) = (0u64, 0u64);
    let mut buf = vec![0; 64 << 10];
    loop {
        match body.read(&mut buf).await {
            Ok(0) => break,
            Ok(n) => {
                len += n as u64;
                sum = byte_sum(sum, &buf[..n]);
            }
            Err(e) => return Response::new(400).body(format!("{e}\n")),
        }
    }
    Response::text(format!("{len} {sum}\n"))
}

/// The same checksum, each piece of the body taken where it lies.
async fn in_place(request: &Request<'_>) -> Response {
    let Some(mut body) = request.body_reader() else {
        return Response::text("no body\n");
    };
    let (mut len, mut sum) = (0u64, 0u64);
    loop {
        let piece = body.with_chunk(|piece| {
            len += piece.len() as u64;
            sum = byte_sum(sum, piece);
        });
        match piece.await {
            Ok(Some(())) => {}
            Ok(None) => break,
            Err(e) => return Response::new(400).body(format!("{e}\n")),
        }
    }
    Response::text(format!("{len} {sum}\n"))
}

fn main() -> std::io::Result<()> {
    let port: u16 = std::env::args()
        .nth(1)
        .or_else(|| std::env::var("PORT").ok())
        .map_or(0, |p| p.parse().expect("a port number"));
    let mut h2 = ringwire_http2::Config::default();
    if let Ok(frame) = std::env::var("H2_MAX_FRAME") {
        h2.max_frame_size = frame.parse().expect("H2_MAX_FRAME: a frame size in bytes");
    }
    let config = ServerConfig {
        threading: Threading::PerCore(1),
        http2: Some(h2),
        ..ServerConfig::new(SocketAddr::from(([127, 0, 0, 1], port)))
    };
    let server = Server::bind(config)?;
    println!("{}", server.local_addr());
    let app = Router::new()
        .route(Method::Post, "/read", streaming(handler_fn(read)))
        .route(Method::Post, "/in-place", streaming(handler_fn(in_place)));
    server.run(app, std::future::pending())
}
