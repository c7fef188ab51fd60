//! HTTP/1.1: ringwire-http1 against httparse and picohttpparser, and the ring receive path
//! against the classic `BytesMut` + httparse loop. One criterion run gives every group, so the
//! ratios within a group come from one run.
//!
//! - `http1/parse/{short,techempower,browser}`, each with `ringwire`, `httparse`,
//!   `picohttpparser`: one request head (68, 164 and 691 bytes) parsed from a buffer that holds
//!   all of it; every parser reports method, target, version and each header name and value as
//!   slices, all through `black_box` ([`Touch`]). Throughput is the head's bytes.
//! - `http1/recv/{small_whole,1k_whole,1k_64b_chunks,1k_4b_chunks}`, each with `ring` and
//!   `classic`: one request received from the `Chunks` fixture (rewound each iteration) and
//!   parsed, whole or in 64- or 4-byte reads. `small` is the TechEmpower request, `1k` a 1 KiB
//!   browser navigation. `ring`: [`RingRecv`] (mirrored 64 KiB ring, `RequestParser::parse`
//!   after every read, resuming where it stopped). `classic`: [`ClassicRecv`] (read into a
//!   scratch buffer, append to a `BytesMut`, httparse from offset zero after every read,
//!   `advance` past the head). Both report the head to [`Touch`]. `drain_ring` and
//!   `drain_classic` make the same reads (and appends) without parsing: what the reads alone
//!   cost.
//! - `http1/chunked/{16k_chunks,1b_chunks}`, each with `ringwire` and `httparse`: a whole
//!   chunked body decoded from one buffer (1 MiB of payload in 16 KiB chunks; 64 KiB in 1-byte
//!   chunks, `1\r\nX\r\n` each), every piece of payload through `black_box`. Throughput is the
//!   payload's bytes. `ringwire` is `BodyDecoder`; `httparse` is the loop a user of its
//!   `parse_chunk_size` writes (size line, slice the data, check the CRLF).
//!
//! Parsers, receivers and their buffers are built once, outside the timed loop, as a connection
//! keeps them; see `bench/src/http1.rs` for exactly what each keeps.

mod common;

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use ringwire_bench::http1::{
    chunked_body, httparse_chunked, ringwire_chunked, Arrival, ClassicRecv, HttparseParser,
    PicoParser, RingRecv, RingwireParser, Touch, REQ_1K, REQ_BROWSER, REQ_SHORT, REQ_TECHEMPOWER,
};
use ringwire_http1::Limits;
use ringwire_ring::Backing;

fn bench_parse(c: &mut Criterion) {
    for (name, input) in [
        ("short", REQ_SHORT),
        ("techempower", REQ_TECHEMPOWER),
        ("browser", REQ_BROWSER),
    ] {
        let mut group = c.benchmark_group(format!("http1/parse/{name}"));
        group.throughput(Throughput::Bytes(input.len() as u64));

        let mut ringwire = RingwireParser::default();
        assert_eq!(ringwire.parse(input, &mut Touch), Some(input.len()));
        group.bench_function("ringwire", |b| {
            b.iter(|| ringwire.parse(black_box(input), &mut Touch))
        });

        let mut httparse = HttparseParser;
        assert_eq!(httparse.parse(input, &mut Touch), Some(input.len()));
        group.bench_function("httparse", |b| {
            b.iter(|| httparse.parse(black_box(input), &mut Touch))
        });

        let mut pico = PicoParser::default();
        assert_eq!(pico.parse(input, &mut Touch), Some(input.len()));
        group.bench_function("picohttpparser", |b| {
            b.iter(|| pico.parse(black_box(input), &mut Touch))
        });
        group.finish();
    }
}

fn bench_recv(c: &mut Criterion) {
    for (name, input, arrival) in [
        ("small_whole", REQ_TECHEMPOWER, Arrival::Whole),
        ("1k_whole", REQ_1K, Arrival::Whole),
        ("1k_64b_chunks", REQ_1K, Arrival::Chunked(64)),
        ("1k_4b_chunks", REQ_1K, Arrival::Chunked(4)),
    ] {
        let mut group = c.benchmark_group(format!("http1/recv/{name}"));
        group.throughput(Throughput::Bytes(input.len() as u64));

        let mut ring =
            RingRecv::new(arrival.source(input), Backing::Mirrored).expect("ring for the bench");
        assert_eq!(ring.run(&mut Touch).expect("ring path parses"), input.len());
        group.bench_function("ring", |b| b.iter(|| ring.run(&mut Touch)));
        group.bench_function("drain_ring", |b| b.iter(|| ring.drain(input.len())));

        let mut classic = ClassicRecv::new(arrival.source(input));
        assert_eq!(
            classic.run(&mut Touch).expect("classic path parses"),
            input.len()
        );
        group.bench_function("classic", |b| b.iter(|| classic.run(&mut Touch)));
        group.bench_function("drain_classic", |b| b.iter(|| classic.drain(input.len())));
        group.finish();
    }
}

fn bench_chunked(c: &mut Criterion) {
    let limits = Limits::default();
    for (name, payload_len, chunk_len) in [
        ("16k_chunks", 1 << 20, 16 << 10),
        ("1b_chunks", 64 << 10, 1),
    ] {
        let body = chunked_body(payload_len, chunk_len);
        let mut group = c.benchmark_group(format!("http1/chunked/{name}"));
        group.throughput(Throughput::Bytes(payload_len as u64));

        let mut total = 0;
        let n = ringwire_chunked(&body, &limits, |d| total += d.len());
        assert_eq!(
            (n.expect("ringwire decodes"), total),
            (body.len(), payload_len)
        );
        group.bench_function("ringwire", |b| {
            b.iter(|| {
                ringwire_chunked(black_box(&body), &limits, |d| {
                    black_box(d);
                })
            })
        });

        let mut total = 0;
        let n = httparse_chunked(&body, |d| total += d.len());
        assert_eq!((n, total), (Some(body.len()), payload_len));
        group.bench_function("httparse", |b| {
            b.iter(|| {
                httparse_chunked(black_box(&body), |d| {
                    black_box(d);
                })
            })
        });
        group.finish();
    }
}

criterion_group! {
    name = benches;
    config = common::short_criterion();
    targets = bench_parse, bench_recv, bench_chunked
}
criterion_main!(benches);
