//! A ring pool's memory: the few rings returned last keep their pages for the connections that
//! follow at once; the rest give them back. (A test binary of its own: it reads this process's
//! resident shared memory, which other tests would move.)
#![cfg(all(target_os = "linux", not(miri)))]

use ringwire_ring::{Backing, Ring, RingConfig, RingPool};

/// Resident shared memory of this process (memfd pages are shared memory), in KiB.
fn rss_shmem_kib() -> usize {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let line = status.lines().find(|l| l.starts_with("RssShmem:")).unwrap();
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}

#[test]
fn the_last_rings_returned_stay_warm_and_the_rest_give_their_pages_back() {
    const RINGS: usize = 24;
    const TOUCH: usize = 1 << 20;
    const MIB: usize = 1024;
    let pool = RingPool::new(
        RingConfig::with_capacity(TOUCH).backing(Backing::Mirrored),
        64,
    );
    let before = rss_shmem_kib();
    let mut rings: Vec<Ring> = (0..RINGS).map(|_| pool.take().unwrap()).collect();
    for ring in &mut rings {
        let span = ring.reserve(TOUCH).unwrap();
        span.fill(1);
        ring.commit(TOUCH);
        ring.consume(TOUCH / 2);
    }
    let touched = rss_shmem_kib() - before;
    assert!(touched >= RINGS * MIB * 9 / 10, "touched {touched} KiB");
    drop(rings);
    assert_eq!(pool.idle(), RINGS);
    let pooled = rss_shmem_kib() - before;
    let warm = RingPool::WARM * MIB;
    assert!(
        pooled >= warm * 9 / 10 && pooled <= warm + MIB,
        "{RINGS} rings pooled hold {pooled} KiB: {} warm ones should",
        RingPool::WARM
    );
    // The warm ones come out first, from their first byte, and writing into them costs no
    // new memory.
    let mut again: Vec<Ring> = (0..RingPool::WARM).map(|_| pool.take().unwrap()).collect();
    for ring in &mut again {
        assert!(ring.is_empty());
        let span = ring.reserve(TOUCH).unwrap();
        span.fill(2);
        ring.commit(TOUCH);
        assert!(ring.readable().iter().all(|&b| b == 2));
    }
    let rewritten = rss_shmem_kib() - before;
    assert!(
        rewritten <= warm + MIB,
        "writing into warm rings took memory: {pooled} -> {rewritten} KiB"
    );
}
