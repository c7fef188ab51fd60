//! The frames comparison again, measured interleaved: every round times each path once, in
//! rotating order, and the table shows each path's median over the rounds.
//!
//! Criterion measures one benchmark after another, so on a shared machine a slow minute can land
//! on one path and not its counterpart: differences of a few ns per frame (ring versus its own
//! read-only drain, whole versus chunked) drown in that drift. Interleaving exposes every path to
//! the same drift, which is what the chunking analysis in docs/benchmarks.md needs.
//!
//! Usage: `interleaved [ROUNDS] [BATCH_MS]` (defaults 21 and 4).

#![forbid(unsafe_code)]

use std::hint::black_box;
use std::time::{Duration, Instant};

use ringwire_bench::{frames, ClassicPath, ClassicRead, Delivery, RingPath};
use ringwire_ring::Backing;

/// The paths timed for each configuration, in table order.
const PATHS: [&str; 6] = [
    "ring",
    "drain_ring",
    "classic_copy",
    "drain_copy",
    "classic_direct",
    "drain_direct",
];

type Path<'a> = Box<dyn FnMut() + 'a>;

fn main() {
    let mut args = std::env::args().skip(1);
    let rounds: usize = args.next().map_or(21, |a| a.parse().expect("ROUNDS"));
    let batch = Duration::from_millis(args.next().map_or(4, |a| a.parse().expect("BATCH_MS")));
    let deliveries = [Delivery::Whole, Delivery::Chunked(64), Delivery::Chunked(4)];

    println!("{rounds} rounds, batches of about {batch:?}; medians in ns per stream\n");
    println!(
        "| body | frames | delivery | {} | copy / ring | direct / ring |",
        PATHS.join(" | ")
    );
    println!("|---|---|---|{}---|---|", "---|".repeat(PATHS.len()));
    let mut results = Vec::new();
    for body_len in [64, 4096] {
        for count in [100, 1000] {
            let stream = frames(body_len, count);
            let mut whole = None;
            for delivery in deliveries {
                let medians = measure(&stream, delivery, rounds, batch);
                let ratio = |i: usize| medians[i] / medians[0];
                let cells: Vec<String> = medians.iter().map(|m| format!("{m:.0}")).collect();
                println!(
                    "| {body_len} B | {count} | {} | {} | {:.2}x | {:.2}x |",
                    delivery.name(),
                    cells.join(" | "),
                    ratio(2),
                    ratio(4)
                );
                let whole = *whole.get_or_insert(medians);
                results.push((body_len, count, delivery, medians, whole));
            }
        }
    }

    println!(
        "\nPer frame, chunked minus whole: growth of each path, growth of its drain (the extra \
         reads), and the excess of the first over the second\n"
    );
    println!(
        "| body | frames | delivery | ring growth | ring reads | ring excess | copy growth | copy \
         reads | copy excess | direct growth | direct reads | direct excess |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|");
    for (body_len, count, delivery, m, w) in results {
        if delivery == Delivery::Whole {
            continue;
        }
        let per = |i: usize| (m[i] - w[i]) / count as f64;
        let mut cells = Vec::new();
        for path in [0, 2, 4] {
            let (growth, reads) = (per(path), per(path + 1));
            cells.extend([growth, reads, growth - reads].map(|x| format!("{x:.1}")));
        }
        println!(
            "| {body_len} B | {count} | {} | {} |",
            delivery.name(),
            cells.join(" | ")
        );
    }
}

/// Median ns per stream of each of [`PATHS`] over `rounds` interleaved rounds.
fn measure(stream: &[u8], delivery: Delivery, rounds: usize, batch: Duration) -> [f64; 6] {
    let mut ring = RingPath::new(delivery.source(stream), Backing::Mirrored).expect("ring");
    let mut copy = ClassicPath::new(delivery.source(stream), ClassicRead::Copy);
    let mut direct = ClassicPath::new(delivery.source(stream), ClassicRead::Direct);
    let (mut drain_ring, mut drain_copy, mut drain_direct) = (
        RingPath::new(delivery.source(stream), Backing::Mirrored).expect("ring"),
        ClassicPath::new(delivery.source(stream), ClassicRead::Copy),
        ClassicPath::new(delivery.source(stream), ClassicRead::Direct),
    );
    let mut paths: [Path<'_>; 6] = [
        Box::new(|| {
            ring.run(|body| {
                black_box(body);
            })
            .expect("ring run");
        }),
        Box::new(|| {
            black_box(drain_ring.drain().expect("ring drain"));
        }),
        Box::new(|| {
            copy.run(|body| {
                black_box(body);
            })
            .expect("classic run");
        }),
        Box::new(|| {
            black_box(drain_copy.drain().expect("classic drain"));
        }),
        Box::new(|| {
            direct
                .run(|body| {
                    black_box(body);
                })
                .expect("classic run");
        }),
        Box::new(|| {
            black_box(drain_direct.drain().expect("classic drain"));
        }),
    ];

    // Warm up and size each path's batch so one batch takes about `batch`.
    let iters: Vec<u32> = paths
        .iter_mut()
        .map(|path| {
            let start = Instant::now();
            let mut n = 0u32;
            while start.elapsed() < batch {
                path();
                n += 1;
            }
            n.max(1)
        })
        .collect();

    let mut samples = vec![Vec::with_capacity(rounds); paths.len()];
    for round in 0..rounds {
        for k in 0..paths.len() {
            let i = (k + round) % paths.len();
            let start = Instant::now();
            for _ in 0..iters[i] {
                paths[i]();
            }
            samples[i].push(start.elapsed().as_nanos() as f64 / f64::from(iters[i]));
        }
    }
    samples
        .into_iter()
        .map(|mut s| {
            s.sort_by(f64::total_cmp);
            s[s.len() / 2]
        })
        .collect::<Vec<_>>()
        .try_into()
        .expect("six paths")
}
