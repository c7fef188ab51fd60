//! Idle rings cost address space, not memory: untouched pages are never resident, and touched
//! pages go back to the OS when an empty ring releases them.
#![cfg(all(target_os = "linux", not(miri)))]

use ringwire_ring::{Backing, Ring, RingConfig};

/// A `/proc/self/status` memory line, in KiB.
fn status_kib(field: &str) -> usize {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let line = status.lines().find(|l| l.starts_with(field)).unwrap();
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}

/// Resident shared memory of this process (memfd pages are shared memory), in KiB.
fn rss_shmem_kib() -> usize {
    status_kib("RssShmem:")
}

#[test]
fn heap_ring_releases_its_pages_too() {
    const TOUCH: usize = 32 << 20;
    let mut ring = Ring::new(RingConfig::with_capacity(TOUCH).backing(Backing::Heap)).unwrap();
    let span = ring.reserve(TOUCH).unwrap();
    span.fill(1);
    ring.commit(TOUCH);
    let touched = status_kib("RssAnon:");
    ring.clear();
    assert!(ring.release_pages().unwrap());
    let released = status_kib("RssAnon:");
    assert!(
        touched - released >= TOUCH / 1024 * 9 / 10,
        "{touched} KiB -> {released} KiB"
    );
    // The ring works as before.
    let span = ring.reserve(3).unwrap();
    span[..3].copy_from_slice(b"new");
    ring.commit(3);
    assert_eq!(ring.readable(), b"new");
}

#[test]
fn touched_pages_are_released_and_untouched_ones_never_count() {
    const RINGS: usize = 64;
    const TOUCH: usize = 1 << 20;
    let config = RingConfig::with_capacity(16 << 20).backing(Backing::Mirrored);
    let before = rss_shmem_kib();
    let mut rings: Vec<Ring> = (0..RINGS).map(|_| Ring::new(config).unwrap()).collect();
    let created = rss_shmem_kib();
    assert!(
        created - before < 1024,
        "untouched rings are resident: {} KiB",
        created - before
    );

    for ring in &mut rings {
        let span = ring.reserve(TOUCH).unwrap();
        span[..TOUCH].fill(1);
        ring.commit(TOUCH);
    }
    let touched = rss_shmem_kib();
    assert!(
        touched - before >= RINGS * TOUCH / 1024 * 9 / 10,
        "touch not seen: {} KiB",
        touched - before
    );

    for ring in &mut rings {
        ring.clear();
        assert!(ring.release_pages().unwrap());
    }
    let released = rss_shmem_kib();
    assert!(
        released - before < 1024,
        "released rings stay resident: {} KiB",
        released - before
    );
}
