//! Content codings: a 1 MiB JSON answer compressed at the server `Compress` middleware's
//! settings (gzip level 6, brotli quality 5, zstd level 3), and decoded by the client.
//!
//! - `decompress/encode/{gzip,br,zstd}`: the whole body compressed once, what `Compress` pays
//!   for a body it has not cached; the compressed sizes are printed before timing.
//! - `decompress/encode_small/{gzip,br,zstd}`: the same for an API-sized answer, its first
//!   16 records (2 KiB), what `Compress` pays for each dynamic answer it compresses.
//! - `decompress/answer/{fresh,repeated}`: the `Compress` middleware answering a browser's
//!   `accept-encoding: gzip, deflate, br, zstd` with such a JSON body: a new one each time
//!   (a request counter in it), which it compresses for that answer alone, or the same one
//!   every time, whose compressed form it keeps. The coding each gets is printed first.
//! - `decompress/decode/{gzip,br,zstd}/{ringwire,whole}`: the compressed body decoded.
//!   `ringwire`: the client's `Decoder`, fed 16 KiB pieces as the receive ring hands them out
//!   and handing out each 32 KiB of output to `black_box`, as `Response::chunk` does. `whole`:
//!   the coding's own reader into one `Vec` (`read_to_end`), as a client that collects a body
//!   decodes it. Both are checked to give the body back before timing.

mod common;

use std::hint::black_box;
use std::io::{Read as _, Write as _};
use std::sync::atomic::{AtomicU64, Ordering};

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use ringwire_client::{Decoder, Encoding};

/// What the ring hands the decoder per read.
const PIECE: usize = 16 << 10;

/// A JSON array of `records` records, about 1 MiB for 7,000.
fn body(records: usize) -> Vec<u8> {
    let mut out = b"[".to_vec();
    for i in 0..records {
        let comma = if i == 0 { "" } else { "," };
        write!(
            out,
            "{comma}{{\"id\":{i},\"user\":\"user{}\",\"email\":\"user{}@example.com\",\"score\":{},\"active\":{},\"tags\":[\"a{}\",\"b{}\"]}}",
            i % 977,
            i % 977,
            (i * 7919) % 10_000,
            i % 3 == 0,
            i % 13,
            i % 29
        )
        .unwrap();
    }
    out.push(b']');
    out
}

/// `data` as the server's `Compress` sends it.
fn encode(encoding: Encoding, data: &[u8]) -> Vec<u8> {
    use ringwire_server::middleware::Encoding as Server;
    match encoding {
        Encoding::Gzip => Server::Gzip,
        Encoding::Brotli => Server::Brotli,
        Encoding::Zstd => Server::Zstd,
        other => unreachable!("{other}"),
    }
    .encode(data)
}

/// `packed` through the client's decoder; the decoded length.
fn ringwire(encoding: Encoding, packed: &[u8], mut check: impl FnMut(&[u8])) -> usize {
    let mut decoder = Decoder::new(encoding, u64::MAX);
    let mut total = 0;
    for mut input in packed.chunks(PIECE) {
        loop {
            let used = decoder.feed(input).unwrap();
            total += decoder.output().len();
            check(decoder.output());
            match used {
                Some(n) => input = &input[n..],
                None => break,
            }
        }
    }
    decoder.finish().unwrap();
    total
}

fn whole(encoding: Encoding, packed: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    match encoding {
        Encoding::Gzip => {
            flate2::read::GzDecoder::new(packed)
                .read_to_end(&mut out)
                .unwrap();
        }
        Encoding::Brotli => {
            brotli_decompressor::Decompressor::new(packed, 4096)
                .read_to_end(&mut out)
                .unwrap();
        }
        Encoding::Zstd => {
            zstd::stream::read::Decoder::with_buffer(packed)
                .unwrap()
                .read_to_end(&mut out)
                .unwrap();
        }
        other => unreachable!("{other}"),
    }
    out
}

fn codings(c: &mut Criterion) {
    let data = body(7_000);
    let codings = [Encoding::Gzip, Encoding::Brotli, Encoding::Zstd];
    for (group, data) in [
        ("decompress/encode", &data),
        ("decompress/encode_small", &body(16)),
    ] {
        let mut encode_group = c.benchmark_group(group);
        encode_group.throughput(Throughput::Bytes(data.len() as u64));
        for encoding in codings {
            let packed = encode(encoding, data);
            println!(
                "{encoding}: {} bytes to {} ({:.1}%)",
                data.len(),
                packed.len(),
                100.0 * packed.len() as f64 / data.len() as f64
            );
            encode_group.bench_function(encoding.token(), |b| {
                b.iter(|| encode(encoding, black_box(data)))
            });
        }
        encode_group.finish();
    }

    answers(c, &body(16));

    let mut decode_group = c.benchmark_group("decompress/decode");
    decode_group.throughput(Throughput::Bytes(data.len() as u64));
    for encoding in codings {
        let packed = encode(encoding, &data);
        let mut again = Vec::new();
        ringwire(encoding, &packed, |piece| again.extend_from_slice(piece));
        assert!(
            again == data && whole(encoding, &packed) == data,
            "{encoding}"
        );
        let name = encoding.token();
        decode_group.bench_function(format!("{name}/ringwire"), |b| {
            b.iter(|| ringwire(encoding, black_box(&packed), |piece| _ = black_box(piece)))
        });
        decode_group.bench_function(format!("{name}/whole"), |b| {
            b.iter(|| whole(encoding, black_box(&packed)))
        });
    }
    decode_group.finish();
}

/// Answers a JSON array: `template`, or with `fresh`, a new one each time (a record with
/// the count of answers put first).
struct Json {
    template: Vec<u8>,
    fresh: bool,
    answered: AtomicU64,
}

impl ringwire_server::Handler for Json {
    async fn call(&self, _: &ringwire_server::Request<'_>) -> ringwire_server::Response {
        let mut body = Vec::with_capacity(self.template.len() + 32);
        if self.fresh {
            let n = self.answered.fetch_add(1, Ordering::Relaxed);
            write!(body, "[{{\"n\":{n}}},").unwrap();
            body.extend_from_slice(&self.template[1..]);
        } else {
            body.extend_from_slice(&self.template);
        }
        ringwire_server::Response::new(200)
            .header("content-type", "application/json")
            .body(body)
    }
}

/// The `Compress` middleware's answers to a browser, with `data` as the body.
fn answers(c: &mut Criterion, data: &[u8]) {
    use ringwire_http1::{Limits, RequestParser, Status};
    use ringwire_server::middleware::Compress;
    use ringwire_server::{Handler as _, Request};

    const HEAD: &[u8] =
        b"GET /api HTTP/1.1\r\nhost: a\r\naccept-encoding: gzip, deflate, br, zstd\r\n\r\n";
    let mut parser = RequestParser::new(Limits::default());
    let Ok(Status::Complete(head, _)) = parser.parse(HEAD) else {
        unreachable!("a valid head");
    };
    let request = Request::new(head, b"");
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let mut group = c.benchmark_group("decompress/answer");
    group.throughput(Throughput::Bytes(data.len() as u64));
    for (name, fresh) in [("fresh", true), ("repeated", false)] {
        let compress = Compress::new(Json {
            template: data.to_vec(),
            fresh,
            answered: AtomicU64::new(0),
        });
        let answer = || runtime.block_on(compress.call(&request));
        for _ in 0..3 {
            let response = answer();
            let coding = response
                .header_value("content-encoding")
                .unwrap_or_default();
            let size = response.body_ref().as_slice().len();
            println!("{name}: {} ({size} bytes)", String::from_utf8_lossy(coding));
        }
        group.bench_function(name, |b| b.iter(|| black_box(answer())));
    }
    group.finish();
}

criterion_group! {
    name = benches;
    config = common::short_criterion();
    targets = codings
}
criterion_main!(benches);
