//! Parses one request head in a loop: a target for profilers (`perf`,
//! `valgrind --tool=callgrind`) that shows the parser and nothing else.
//!
//! `cargo run --release -p ringwire-http1 --example parse_loop -- [ITERATIONS] [HEAD_FILE]`

use std::hint::black_box;

use ringwire_http1::{RequestParser, Status};

const PLAINTEXT: &[u8] = b"GET /plaintext HTTP/1.1\r\nHost: localhost\r\nAccept: text/plain,text/html;q=0.9,application/xhtml+xml;q=0.9,application/xml;q=0.8,*/*;q=0.7\r\nConnection: keep-alive\r\n\r\n";

fn main() {
    let iterations: u64 = std::env::args()
        .nth(1)
        .and_then(|n| n.parse().ok())
        .unwrap_or(10_000_000);
    // Any other head to profile: its file as the second argument.
    let file = std::env::args()
        .nth(2)
        .map(|path| std::fs::read(path).expect("readable head"));
    let request = file.as_deref().unwrap_or(PLAINTEXT);
    let mut parser = RequestParser::default();
    let start = std::time::Instant::now();
    let mut fields = 0;
    for _ in 0..iterations {
        if let Ok(Status::Complete(request, _)) = parser.parse(black_box(request)) {
            fields += request.headers().len();
        }
    }
    let per = start.elapsed().as_nanos() as f64 / iterations as f64;
    println!("{per:.1} ns per head ({fields} fields)");
}
