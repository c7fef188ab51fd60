//! Ring path versus classic path on length-prefixed frames.
//!
//! One criterion group per (body size, frame count, delivery), named
//! `frames-{body}B-x{count}-{delivery}`, each with:
//!
//! - `ring_mirror`: [`RingPath`] on a mirrored 64 KiB ring. Per `read`: make room (a capacity
//!   check), `read` into the ring's free span, commit. Per frame: `LengthPrefixed` reads the
//!   4-byte head and returns the body as `&[u8]` borrowed from the ring; the handler gets it;
//!   the ring's tail moves past it. Nothing allocated or copied after the `read`.
//! - `ring_heap`: the same on the heap ring, which moves the unread partial frame to the front
//!   of its buffer before each `read` (the cost the mirror exists to avoid).
//! - `classic_copy`: [`ClassicPath`] with [`ClassicRead::Copy`]. Per `read`: `read` into a
//!   64 KiB scratch buffer, `extend_from_slice` into a reused `BytesMut`. Per frame, as
//!   tokio-util's `LengthDelimitedCodec`: `advance(4)` past the head, `reserve` for the body if
//!   short, `split_to(len)`, `freeze()` into a `Bytes` for the handler, which drops it.
//! - `classic_direct`: the same with [`ClassicRead::Direct`]: `read` straight into zeroed space
//!   at the end of the `BytesMut` (no scratch copy; one amortized `memset` instead).
//! - `drain_ring`, `drain_classic_copy`, `drain_classic_direct`: the same `read` loops without
//!   parsing (everything received is dropped at once): the cost of the `recv` calls alone, to
//!   subtract when asking whether per-frame cost grows with chunking.
//!
//! Every path reads the same [`ringwire_io::Chunks`] fixture (which copies into the caller's
//! buffer, like `recv`), rewound each iteration; receivers are built once outside the timed
//! loop, as a connection builds them once. Reads ask for at most 64 KiB on every path.

mod common;

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use ringwire_bench::{frames, ClassicPath, ClassicRead, Delivery, RingPath};
use ringwire_ring::Backing;

fn bench_frames(c: &mut Criterion) {
    let deliveries = [Delivery::Whole, Delivery::Chunked(64), Delivery::Chunked(4)];
    for body_len in [64, 4096] {
        for count in [100, 1000] {
            let stream = frames(body_len, count);
            for delivery in deliveries {
                let name = format!("frames-{body_len}B-x{count}-{}", delivery.name());
                let mut group = c.benchmark_group(name);
                group.throughput(Throughput::Elements(count as u64));

                for (id, backing) in [
                    ("ring_mirror", Backing::Mirrored),
                    ("ring_heap", Backing::Heap),
                ] {
                    let mut ring = RingPath::new(delivery.source(&stream), backing)
                        .expect("ring for the benchmark");
                    assert_eq!(ring.run(|_| {}).expect("ring path parses"), count);
                    group.bench_function(id, |b| {
                        b.iter(|| {
                            ring.run(|body| {
                                black_box(body);
                            })
                        })
                    });
                    if backing == Backing::Mirrored {
                        group.bench_function("drain_ring", |b| b.iter(|| ring.drain()));
                    }
                }

                for (id, drain_id, read) in [
                    ("classic_copy", "drain_classic_copy", ClassicRead::Copy),
                    (
                        "classic_direct",
                        "drain_classic_direct",
                        ClassicRead::Direct,
                    ),
                ] {
                    let mut classic = ClassicPath::new(delivery.source(&stream), read);
                    assert_eq!(classic.run(|_| {}).expect("classic path parses"), count);
                    group.bench_function(id, |b| {
                        b.iter(|| {
                            classic.run(|body| {
                                black_box(body);
                            })
                        })
                    });
                    group.bench_function(drain_id, |b| b.iter(|| classic.drain()));
                }
                group.finish();
            }
        }
    }
}

criterion_group! {
    name = benches;
    config = common::short_criterion();
    targets = bench_frames
}
criterion_main!(benches);
