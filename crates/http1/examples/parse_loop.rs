//! Parses one request head in a loop: a target for profilers (`perf`,
//! `valgrind --tool=callgrind`) that shows the parser and nothing else.
//!
//! `cargo run --release -p ringwire-http1 --example parse_loop -- [ITERATIONS] [short|plaintext|1k]`

use std::hint::black_box;

use ringwire_http1::{RequestParser, Status};

const SHORT: &[u8] =
    b"GET / HTTP/1.0\r\nHost: example.com\r\nCookie: session=60; user_id=1\r\n\r\n";
const ONE_K: &[u8] = b"GET /app/dashboard/projects/4711/issues?state=open&sort=updated&direction=desc&page=2 HTTP/1.1\r\n\
Host: tracker.example.com\r\n\
Connection: keep-alive\r\n\
sec-ch-ua: \"Chromium\";v=\"124\", \"Google Chrome\";v=\"124\", \"Not-A.Brand\";v=\"99\"\r\n\
sec-ch-ua-mobile: ?0\r\n\
sec-ch-ua-platform: \"Linux\"\r\n\
Upgrade-Insecure-Requests: 1\r\n\
User-Agent: Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36\r\n\
Accept: text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,image/apng,*/*;q=0.8,application/signed-exchange;v=b3;q=0.7\r\n\
Sec-Fetch-Site: same-origin\r\n\
Sec-Fetch-Mode: navigate\r\n\
Sec-Fetch-User: ?1\r\n\
Sec-Fetch-Dest: document\r\n\
Referer: https://tracker.example.com/app/dashboard/projects/4711\r\n\
Accept-Encoding: gzip, deflate, br, zstd\r\n\
Accept-Language: en-US,en;q=0.9,de;q=0.8\r\n\
Priority: u=0, i\r\n\
Cookie: _ga=GA1.1.1234567890.1711000000; _ga_ABCDEF1234=GS1.1.1711000000.3.1.1711003600.0.0.0; session=eyJ1c2VyIjo0MiwiZXhwIjoxNzExMDA3MjAwfQ.c2lnbmF0dXJl; csrftoken=q1w2e3r4t5y6u7i8o9p\r\n\r\n";

/// Header slots for httparse and picohttpparser: more than any input here has, as a server
/// would size them (ringwire allows [`Limits::DEFAULT_MAX_HEADERS`]).
const PLAINTEXT: &[u8] = b"GET /plaintext HTTP/1.1\r\nHost: localhost\r\nAccept: text/plain,text/html;q=0.9,application/xhtml+xml;q=0.9,application/xml;q=0.8,*/*;q=0.7\r\nConnection: keep-alive\r\n\r\n";

fn main() {
    let iterations: u64 = std::env::args()
        .nth(1)
        .and_then(|n| n.parse().ok())
        .unwrap_or(10_000_000);
    let request = match std::env::args().nth(2).as_deref() {
        Some("short") => SHORT,
        Some("1k") => ONE_K,
        _ => PLAINTEXT,
    };
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
