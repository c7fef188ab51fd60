//! `multipart/form-data` bodies read by the server: ringwire's reader against multer (the
//! reader axum's `Multipart` uses), on the same bytes, each field's data handed to
//! `black_box` and checked before timing.
//!
//! - `multipart/form/*`: a form of 16 text fields (about 1.7 KiB), the per-field cost.
//! - `multipart/upload/*`: two text fields and a 4 MiB file of bytes that are not text (CR,
//!   LF and dashes among them), the data rate.
//!
//! Paths: `ringwire_whole` reads a body already buffered (`Fields`, what
//! `Request::multipart` gives); `ringwire_pieces` feeds `Multipart` 64 KiB pieces as a
//! handler reading its body as it arrives would, keeping the bytes it was not told to
//! consume; `multer` gets the same 64 KiB pieces as a stream of `Bytes` (what a body
//! stream gives it) and reads every field's chunks, on a current-thread runtime.

mod common;

use std::hint::black_box;

use bytes::Bytes;
use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use ringwire_server::multipart::{Event, Fields, Limits, Multipart};

const BOUNDARY: &str = "------------------------d74496d66958873e";
const PIECE: usize = 64 << 10;

fn body(fields: &[(&str, Option<&str>, &[u8])]) -> Vec<u8> {
    let mut out = Vec::new();
    for (name, file, data) in fields {
        out.extend_from_slice(format!("--{BOUNDARY}\r\n").as_bytes());
        match file {
            Some(file) => out.extend_from_slice(
                format!(
                    "Content-Disposition: form-data; name=\"{name}\"; filename=\"{file}\"\r\n\
                     Content-Type: application/octet-stream\r\n\r\n"
                )
                .as_bytes(),
            ),
            None => out.extend_from_slice(
                format!("Content-Disposition: form-data; name=\"{name}\"\r\n\r\n").as_bytes(),
            ),
        }
        out.extend_from_slice(data);
        out.extend_from_slice(b"\r\n");
    }
    out.extend_from_slice(format!("--{BOUNDARY}--\r\n").as_bytes());
    out
}

/// Bytes of every field's data, by `Fields`.
fn ringwire_whole(content_type: &[u8], body: &[u8]) -> usize {
    let mut total = 0;
    for field in Fields::new(content_type, body, Limits::default()).unwrap() {
        let field = field.unwrap();
        black_box(field.head.name);
        total += black_box(field.data).len();
    }
    total
}

/// The same, by `Multipart::feed` given `PIECE`s where they lie, as `Multipart::read` gives
/// it what `BodyReader::with_chunk` lends.
fn ringwire_pieces(content_type: &[u8], body: &[u8], carry: &mut Vec<u8>) -> usize {
    let mut reader = Multipart::new(content_type, Limits::default()).unwrap();
    carry.clear();
    let mut total = 0;
    let mut count = |event: Event<'_>| match event {
        Event::Part(head) => {
            black_box(head.name);
        }
        Event::Data(data) => total += black_box(data).len(),
        Event::End => {}
    };
    let mut pieces = body.chunks(PIECE).peekable();
    while let Some(piece) = pieces.next() {
        let eof = pieces.peek().is_none();
        if reader.feed(carry, piece, eof, &mut count).unwrap() {
            break;
        }
    }
    total
}

/// The same, by multer over a stream of `pieces`.
fn multer(runtime: &tokio::runtime::Runtime, pieces: &[Bytes]) -> usize {
    runtime.block_on(async {
        let stream = futures_util::stream::iter(
            pieces
                .iter()
                .cloned()
                .map(Ok::<_, std::convert::Infallible>),
        );
        let mut multipart = multer::Multipart::new(stream, BOUNDARY);
        let mut total = 0;
        while let Some(mut field) = multipart.next_field().await.unwrap() {
            black_box(field.name());
            while let Some(chunk) = field.chunk().await.unwrap() {
                total += black_box(chunk).len();
            }
        }
        total
    })
}

fn readers(c: &mut Criterion) {
    let content_type = format!("multipart/form-data; boundary={BOUNDARY}");
    let content_type = content_type.as_bytes();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let names: Vec<String> = (0..16).map(|i| format!("field{i}")).collect();
    let values: Vec<String> = (0..16).map(|i| format!("value {i} ").repeat(4)).collect();
    let form: Vec<(&str, Option<&str>, &[u8])> = names
        .iter()
        .zip(&values)
        .map(|(n, v)| (n.as_str(), None, v.as_bytes()))
        .collect();
    let file: Vec<u8> = (0..4u32 << 20)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect();
    let upload: Vec<(&str, Option<&str>, &[u8])> = vec![
        ("title", None, b"a file"),
        ("upload", Some("data.bin"), &file),
        ("note", None, b"the end"),
    ];
    let mut group = c.benchmark_group("multipart");
    for (name, fields) in [("form", form), ("upload", upload)] {
        let body = body(&fields);
        let data: usize = fields.iter().map(|(_, _, d)| d.len()).sum();
        let pieces: Vec<Bytes> = body.chunks(PIECE).map(Bytes::copy_from_slice).collect();
        let mut pending = Vec::with_capacity(2 * PIECE);
        assert_eq!(ringwire_whole(content_type, &body), data);
        assert_eq!(ringwire_pieces(content_type, &body, &mut pending), data);
        assert_eq!(multer(&runtime, &pieces), data);
        group.throughput(Throughput::Bytes(body.len() as u64));
        group.bench_function(format!("{name}/ringwire_whole"), |b| {
            b.iter(|| ringwire_whole(content_type, black_box(&body)));
        });
        group.bench_function(format!("{name}/ringwire_pieces"), |b| {
            b.iter(|| ringwire_pieces(content_type, black_box(&body), &mut pending));
        });
        group.bench_function(format!("{name}/multer"), |b| {
            b.iter(|| multer(&runtime, black_box(&pieces)));
        });
    }
    group.finish();
}

criterion_group! {
    name = benches;
    config = common::short_criterion();
    targets = readers
}
criterion_main!(benches);
