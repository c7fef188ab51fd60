//! HPACK: header blocks decoded and encoded, ringwire-http2 against the `hpack` crate (h2's
//! HPACK is private to h2, even with its `unstable` feature, so it is not here).
//!
//! Inputs: a browser's request (15 fields, as a browser sends for a script: pseudo-fields,
//! user agent, client hints, fetch metadata, cookie) and a server's response (12 fields).
//! Each has two blocks, as on a connection: the first with an empty dynamic table, the second
//! (another path, a later date) hitting the entries the first added. The blocks are ringwire's
//! encoding (Huffman-coded where shorter), which both decoders read; both are checked to give
//! the same fields before timing.
//!
//! - `hpack/decode/{request,response}/{first,second}/*`: one block into a decoder holding the
//!   table state before it (set up outside the timing); each field's length to `black_box`.
//!   `ringwire`: `Decoder::decode` (raw strings borrowed from the block, Huffman ones decoded
//!   into its scratch); `hpack`: `Decoder::decode_with_cb` (its borrowing API).
//! - `hpack/encode/{request,response}/*`: both blocks, from a fresh encoder, into a reused
//!   `Vec`. The `hpack` crate never Huffman-codes, so its blocks are larger but cheaper to
//!   write; its sizes are printed next to ours.

mod common;

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, BatchSize, Criterion};
use ringwire_http2::hpack::{Decoder, Encoder, Field};

type List = [(&'static str, &'static str)];

const REQUEST: [&List; 2] = [
    &[
        (":method", "GET"),
        (":authority", "www.example.com"),
        (":scheme", "https"),
        (":path", "/static/js/app.3f9c2b1e.js"),
        ("sec-ch-ua", "\"Chromium\";v=\"131\", \"Not_A Brand\";v=\"24\""),
        ("sec-ch-ua-mobile", "?0"),
        ("user-agent", "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36"),
        ("sec-ch-ua-platform", "\"Linux\""),
        ("accept", "*/*"),
        ("sec-fetch-site", "same-origin"),
        ("sec-fetch-mode", "no-cors"),
        ("sec-fetch-dest", "script"),
        ("referer", "https://www.example.com/"),
        ("accept-encoding", "gzip, deflate, br, zstd"),
        ("accept-language", "en-US,en;q=0.9"),
    ],
    &[
        (":method", "GET"),
        (":authority", "www.example.com"),
        (":scheme", "https"),
        (":path", "/static/css/main.8a41d7c2.css"),
        ("sec-ch-ua", "\"Chromium\";v=\"131\", \"Not_A Brand\";v=\"24\""),
        ("sec-ch-ua-mobile", "?0"),
        ("user-agent", "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36"),
        ("sec-ch-ua-platform", "\"Linux\""),
        ("accept", "text/css,*/*;q=0.1"),
        ("sec-fetch-site", "same-origin"),
        ("sec-fetch-mode", "no-cors"),
        ("sec-fetch-dest", "style"),
        ("referer", "https://www.example.com/"),
        ("accept-encoding", "gzip, deflate, br, zstd"),
        ("accept-language", "en-US,en;q=0.9"),
    ],
];

const RESPONSE: [&List; 2] = [
    &[
        (":status", "200"),
        ("date", "Thu, 26 Nov 2026 14:22:45 GMT"),
        ("content-type", "application/javascript; charset=utf-8"),
        ("content-length", "48213"),
        ("cache-control", "public, max-age=31536000, immutable"),
        ("etag", "\"5f2b-18c9a3e4f10\""),
        ("last-modified", "Tue, 24 Nov 2026 09:12:03 GMT"),
        ("content-encoding", "br"),
        ("vary", "accept-encoding"),
        ("server", "ringwire"),
        (
            "strict-transport-security",
            "max-age=63072000; includeSubDomains",
        ),
        ("x-content-type-options", "nosniff"),
    ],
    &[
        (":status", "200"),
        ("date", "Thu, 26 Nov 2026 14:22:46 GMT"),
        ("content-type", "text/css; charset=utf-8"),
        ("content-length", "9120"),
        ("cache-control", "public, max-age=31536000, immutable"),
        ("etag", "\"23a0-18c9a3e4f2c\""),
        ("last-modified", "Tue, 24 Nov 2026 09:12:03 GMT"),
        ("content-encoding", "br"),
        ("vary", "accept-encoding"),
        ("server", "ringwire"),
        (
            "strict-transport-security",
            "max-age=63072000; includeSubDomains",
        ),
        ("x-content-type-options", "nosniff"),
    ],
];

fn fields(list: &List) -> impl Iterator<Item = Field<'static>> + '_ {
    list.iter().map(|(name, value)| Field {
        name: name.as_bytes(),
        value: value.as_bytes(),
        sensitive: false,
    })
}

fn pairs(list: &List) -> impl Iterator<Item = (&'static [u8], &'static [u8])> + '_ {
    list.iter().map(|(n, v)| (n.as_bytes(), v.as_bytes()))
}

fn ours(decoder: &mut Decoder, block: &[u8]) -> Vec<(Vec<u8>, Vec<u8>)> {
    let mut out = vec![];
    decoder
        .decode(block, usize::MAX, |f| {
            out.push((f.name.to_vec(), f.value.to_vec()))
        })
        .unwrap();
    out
}

fn bench_one(c: &mut Criterion, what: &str, lists: [&List; 2]) {
    let mut encoder = Encoder::new();
    let blocks: Vec<Vec<u8>> = lists
        .iter()
        .map(|list| {
            let mut out = vec![];
            encoder.encode(fields(list), &mut out);
            out
        })
        .collect();

    // Both decoders agree with the input.
    let mut d = Decoder::new(4096);
    let mut theirs = hpack::Decoder::new();
    for (list, block) in lists.iter().zip(&blocks) {
        let want: Vec<_> = pairs(list).map(|(n, v)| (n.to_vec(), v.to_vec())).collect();
        assert_eq!(ours(&mut d, block), want);
        assert_eq!(theirs.decode(block).unwrap(), want);
    }

    let mut group = c.benchmark_group(format!("hpack/decode/{what}"));
    for (i, step) in ["first", "second"].into_iter().enumerate() {
        let block = &blocks[i];
        group.bench_function(format!("{step}/ringwire"), |b| {
            b.iter_batched_ref(
                || {
                    let mut d = Decoder::new(4096);
                    for earlier in &blocks[..i] {
                        ours(&mut d, earlier);
                    }
                    d
                },
                |d| {
                    d.decode(black_box(block), 64 << 10, |f| {
                        black_box(f.name.len() + f.value.len());
                    })
                    .unwrap();
                },
                BatchSize::SmallInput,
            );
        });
        group.bench_function(format!("{step}/hpack"), |b| {
            b.iter_batched_ref(
                || {
                    let mut d = hpack::Decoder::new();
                    for earlier in &blocks[..i] {
                        d.decode(earlier).unwrap();
                    }
                    d
                },
                |d| {
                    d.decode_with_cb(black_box(block), |name, value| {
                        black_box(name.len() + value.len());
                    })
                    .unwrap();
                },
                BatchSize::SmallInput,
            );
        });
    }
    group.finish();

    let mut theirs = hpack::Encoder::new();
    let their_len: usize = lists
        .iter()
        .map(|list| theirs.encode(pairs(list)).len())
        .sum();
    let our_len: usize = blocks.iter().map(Vec::len).sum();
    println!("hpack/encode/{what}: both blocks, ringwire {our_len} bytes, hpack {their_len} bytes");

    let mut group = c.benchmark_group(format!("hpack/encode/{what}"));
    let mut out = Vec::with_capacity(4096);
    group.bench_function("ringwire", |b| {
        b.iter(|| {
            let mut encoder = Encoder::new();
            for list in lists {
                out.clear();
                encoder.encode(fields(black_box(list)), &mut out);
                black_box(&out);
            }
        });
    });
    group.bench_function("hpack", |b| {
        b.iter(|| {
            let mut encoder = hpack::Encoder::new();
            for list in lists {
                out.clear();
                encoder
                    .encode_into(pairs(black_box(list)), &mut out)
                    .unwrap();
                black_box(&out);
            }
        });
    });
    group.finish();
}

fn bench_hpack(c: &mut Criterion) {
    bench_one(c, "request", REQUEST);
    bench_one(c, "response", RESPONSE);
}

criterion_group! {
    name = benches;
    config = common::short_criterion();
    targets = bench_hpack
}
criterion_main!(benches);
