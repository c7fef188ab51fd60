//! The HTTP/2 server connection, ringwire-http2 against the h2 crate: one connection's bytes
//! from a client (preface, SETTINGS, the ACK of the server's, then 100 GET requests on streams
//! 1, 3, ..., 199, their header blocks HPACK-coded as a browser's would be, later ones hitting
//! the dynamic table), each request answered `200` with `content-type: text/plain` and a
//! 13-byte body. Per iteration, a new connection: settings exchanged, 100 header blocks
//! decoded and checked, 100 responses encoded and framed, the output drained.
//!
//! - `http2/conn/100_requests/ringwire`: `Connection::server` fed the bytes through `recv`,
//!   `send_response` + `send_data` per request, `transmit` drained.
//! - `http2/conn/100_requests/h2`: `h2::server::handshake` over an in-memory stream that
//!   reads the same bytes (all at once, then nothing more) and drops what is written, driven
//!   on a current-thread tokio runtime: `accept`, `send_response`, `send_data` per request,
//!   then one more poll of the connection to flush. That is how an h2 user (hyper included) drives it; its async machinery is
//!   part of what it costs.

mod common;

use std::cell::Cell;
use std::hint::black_box;
use std::io;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll};

use bytes::Bytes;
use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use ringwire_http2::frame::{self, StreamId, PREFACE};
use ringwire_http2::hpack::{Encoder, Field};
use ringwire_http2::{Config, Connection, Event};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

const REQUESTS: u32 = 100;
const BODY: &[u8] = b"Hello, World!";

/// The client's side of the connection, as bytes.
fn client_bytes() -> Vec<u8> {
    let mut out = PREFACE.to_vec();
    frame::encode_settings(&mut out, &[]);
    frame::encode_settings_ack(&mut out);
    let mut encoder = Encoder::new();
    let mut block = Vec::new();
    for i in 0..REQUESTS {
        let path = format!("/plaintext?page={i}");
        let fields = [
            (":method", "GET"),
            (":scheme", "http"),
            (":authority", "127.0.0.1:8080"),
            (":path", path.as_str()),
            ("accept", "text/plain,text/html;q=0.9,*/*;q=0.8"),
            ("accept-encoding", "gzip, deflate, br"),
            ("accept-language", "en-US,en;q=0.9"),
            ("user-agent", "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36"),
        ];
        block.clear();
        encoder.encode(
            fields.iter().map(|(name, value)| Field {
                name: name.as_bytes(),
                value: value.as_bytes(),
                sensitive: false,
            }),
            &mut block,
        );
        frame::encode_headers(&mut out, StreamId::new(2 * i + 1), &block, true, 16_384);
    }
    out
}

/// Serves the connection in `input` with ringwire-http2; the responses sent, and the bytes
/// written.
fn ringwire(input: &[u8]) -> (u32, usize) {
    let mut conn = Connection::server(Config::default());
    let mut at = 0;
    let (mut answered, mut written) = (0, 0);
    loop {
        let (used, event) = conn.recv(&input[at..]).expect("a valid connection");
        if let Some(Event::Request { stream, head, .. }) = event {
            black_box(head.path);
            let fields = [(&b"content-type"[..], &b"text/plain"[..])];
            conn.send_response(stream, 200, fields, false)
                .expect("open");
            conn.send_data(stream, Bytes::from_static(BODY), true)
                .expect("open");
            answered += 1;
        }
        if used == 0 {
            break;
        }
        at += used;
        while !conn.transmit().is_empty() {
            let out = conn.transmit().len();
            black_box(conn.transmit());
            conn.advance(out);
            written += out;
        }
    }
    (answered, written)
}

/// An in-memory stream: reads `input`, then waits forever; counts and drops what is written.
struct Memory {
    input: &'static [u8],
    written: Rc<Cell<usize>>,
}

impl AsyncRead for Memory {
    fn poll_read(
        mut self: Pin<&mut Self>,
        _: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        if self.input.is_empty() {
            // Not the end: h2 would close at once, before serving what it read.
            return Poll::Pending;
        }
        let n = buf.remaining().min(self.input.len());
        buf.put_slice(&self.input[..n]);
        self.input = &self.input[n..];
        Poll::Ready(Ok(()))
    }
}

impl AsyncWrite for Memory {
    fn poll_write(
        self: Pin<&mut Self>,
        _: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        black_box(buf);
        self.written.set(self.written.get() + buf.len());
        Poll::Ready(Ok(buf.len()))
    }

    fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }
}

/// Serves the connection in `input` with h2; the responses sent, and the bytes written.
async fn h2(input: &'static [u8]) -> (u32, usize) {
    let written = Rc::new(Cell::new(0));
    let io = Memory {
        input,
        written: Rc::clone(&written),
    };
    let mut conn = h2::server::handshake(io).await.expect("handshake");
    let mut answered = 0;
    while answered < REQUESTS {
        let (request, mut respond) = conn.accept().await.expect("a request").expect("valid");
        black_box(request.uri().path());
        let response = http::Response::builder()
            .status(200)
            .header("content-type", "text/plain")
            .body(())
            .expect("response");
        let mut body = respond.send_response(response, false).expect("open");
        body.send_data(Bytes::from_static(BODY), true)
            .expect("open");
        answered += 1;
    }
    // Driven once more, so that every response is written (the input waits from here on).
    tokio::select! {
        biased;
        _ = conn.accept() => unreachable!("no request after the last"),
        () = std::future::ready(()) => {}
    }
    (answered, written.get())
}

fn conn(c: &mut Criterion) {
    let input: &'static [u8] = client_bytes().leak();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("runtime");
    // Both answer every request and write every answer (their encodings differ a little).
    let (ours, theirs) = (ringwire(input), runtime.block_on(h2(input)));
    println!("bytes written: ringwire {}, h2 {}", ours.1, theirs.1);
    assert_eq!((ours.0, theirs.0), (REQUESTS, REQUESTS));
    assert!(
        ours.1.abs_diff(theirs.1) < ours.1 / 4,
        "{ours:?} {theirs:?}"
    );
    let mut group = c.benchmark_group("http2/conn/100_requests");
    group.throughput(Throughput::Elements(u64::from(REQUESTS)));
    group.bench_function("ringwire", |b| b.iter(|| ringwire(black_box(input))));
    group.bench_function("h2", |b| b.iter(|| runtime.block_on(h2(black_box(input)))));
    group.finish();
}

criterion_group! {
    name = benches;
    config = common::short_criterion();
    targets = conn
}
criterion_main!(benches);
