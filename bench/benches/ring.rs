//! What a ring costs to make and to keep: create+destroy of 1 MiB and 16 MiB rings, mirrored
//! (memfd + ftruncate + three mmaps + madvise, then munmap + close) and heap (a zeroed
//! allocation, which glibc zero-fills from reused memory once the process has freed a block of
//! that size), and a [`RingPool`] round trip (take, then give: clear + `release_pages`, a
//! `fallocate` hole punch for the mirror, `madvise(MADV_DONTNEED)` for the heap).

mod common;

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion};
use ringwire_ring::{Backing, Ring, RingConfig, RingPool};

const SIZES: [(&str, usize); 2] = [("1MiB", 1 << 20), ("16MiB", 16 << 20)];
const BACKINGS: [(&str, Backing); 2] = [("mirrored", Backing::Mirrored), ("heap", Backing::Heap)];

/// A recv's worth of bytes: what a pooled ring typically held before it went back.
const TOUCH: usize = 64 * 1024;

fn create_destroy(c: &mut Criterion) {
    let mut group = c.benchmark_group("ring-create-destroy");
    for (size_name, size) in SIZES {
        for (backing_name, backing) in BACKINGS {
            let config = RingConfig::with_capacity(size).backing(backing);
            group.bench_function(format!("{backing_name}-{size_name}"), |b| {
                b.iter(|| drop(black_box(Ring::new(config).expect("ring"))))
            });
        }
    }
    group.finish();
}

fn pool(c: &mut Criterion) {
    let mut group = c.benchmark_group("ring-pool");
    for (size_name, size) in SIZES {
        for (backing_name, backing) in BACKINGS {
            let config = RingConfig::with_capacity(size).backing(backing);
            let pool = RingPool::new(config, 4);
            pool.give(pool.take().expect("ring"));
            group.bench_function(format!("take-give-{backing_name}-{size_name}"), |b| {
                b.iter(|| pool.give(black_box(pool.take().expect("pooled ring"))))
            });
            group.bench_function(
                format!("take-touch64K-give-{backing_name}-{size_name}"),
                |b| {
                    b.iter(|| {
                        let mut ring = pool.take().expect("pooled ring");
                        ring.writable()[..TOUCH].fill(0xa5);
                        ring.commit(TOUCH);
                        pool.give(black_box(ring));
                    })
                },
            );
        }
    }
    group.finish();
}

criterion_group! {
    name = benches;
    config = common::short_criterion().sample_size(50);
    targets = create_destroy, pool
}
criterion_main!(benches);
