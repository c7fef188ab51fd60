//! The ring against its contracts, on every backing this build has.

use ringwire_ring::{Backing, Ring, RingConfig, RingError, MIRROR_SUPPORTED};

fn backings() -> Vec<Backing> {
    if MIRROR_SUPPORTED {
        vec![Backing::Mirrored, Backing::Heap]
    } else {
        vec![Backing::Heap]
    }
}

fn ring(backing: Backing, cap: usize, max: usize) -> Ring {
    Ring::new(
        RingConfig::with_capacity(cap)
            .max_capacity(max)
            .backing(backing),
    )
    .unwrap()
}

fn write_all(ring: &mut Ring, bytes: &[u8]) {
    ring.reserve(bytes.len()).unwrap()[..bytes.len()].copy_from_slice(bytes);
    ring.commit(bytes.len());
}

#[test]
fn sizes_are_page_multiples_and_powers_of_two() {
    for backing in backings() {
        let r = ring(backing, 5000, 70_000);
        assert!(r.capacity().is_power_of_two());
        assert_eq!(r.capacity() % ringwire_ring::page_size(), 0);
        assert!(r.capacity() >= 5000);
        assert_eq!(r.max_capacity(), 128 * 1024);
        assert_eq!(r.is_mirrored(), backing == Backing::Mirrored);
        assert_eq!(r.free(), r.capacity());
    }
}

/// Every start offset, every length: the readable span is the bytes written, in order.
#[test]
#[cfg_attr(
    miri,
    ignore = "4096 offsets x spans is too slow under Miri; the proptest covers it"
)]
fn wrap_at_every_offset() {
    for backing in backings() {
        let mut r = ring(backing, 4096, 4096);
        let cap = r.capacity();
        let data: Vec<u8> = (0..cap).map(|i| (i * 7 + 3) as u8).collect();
        for offset in 0..cap {
            r.clear();
            // Move the tail to `offset` (the ring resets to 0 when emptied, so keep one byte).
            write_all(&mut r, &vec![0; offset + 1]);
            r.consume(offset);
            let free = r.free();
            write_all(&mut r, &data[..free]);
            r.consume(1);
            assert_eq!(
                r.readable(),
                &data[..free],
                "offset {offset} on {backing:?}"
            );
            assert_eq!(r.writable().len(), 1);
        }
    }
}

/// The double mapping's hazard: a store through the upper view must be seen through the lower
/// one even after the optimiser had the old value in hand. The lower view's first bytes are
/// loaded, the same bytes are then stored through the upper view (a write crossing the wrap
/// point), and loaded again through the lower one. Run in release too (`.ci/run`).
#[test]
fn write_through_upper_view_reads_through_lower() {
    for backing in backings() {
        let mut r = ring(backing, 4096, 4096);
        let cap = r.capacity();
        write_all(&mut r, &vec![0x11; cap - 8]);
        // Offsets 0..56 through the lower view, loaded for real.
        let before: Vec<u8> = std::hint::black_box(r.readable()[..56].to_vec());
        r.consume(cap - 16);
        // Tail at cap - 16 with 8 bytes unread: the write runs from cap - 8 to cap + 56, its
        // last 56 bytes stored through the upper view over offsets 0..56.
        write_all(&mut r, &[0x5A; 64]);
        r.consume(16); // the tail wraps to offset 0: the lower view again
        let after = std::hint::black_box(r.readable());
        assert_eq!(before, [0x11; 56]);
        assert_eq!(after.len(), 56);
        assert!(
            after.iter().all(|&b| b == 0x5A),
            "{backing:?}: {after:02x?}"
        );
    }
}

/// Truncating keeps the first bytes, across the wrap point, and the freed room takes the next
/// writes right after them.
#[test]
fn truncate_keeps_a_prefix_and_frees_the_rest() {
    for backing in backings() {
        for (tail, unread) in [(10, 50), (4000, 300), (0, 4096)] {
            let (mut r, expect) = wrapped(backing, tail, unread);
            r.truncate(expect.len() + 1);
            assert_eq!(r.readable(), &expect[..], "longer: nothing changes");
            let keep = expect.len() / 3;
            r.truncate(keep);
            assert_eq!(r.readable(), &expect[..keep], "{backing:?} {tail} {unread}");
            write_all(&mut r, b"after");
            assert_eq!(r.readable(), &[&expect[..keep], b"after"].concat()[..]);
            r.truncate(0);
            assert!(r.is_empty());
        }
    }
}

/// A ring whose tail sits at `tail` and whose `unread` bytes may cross the wrap point.
fn wrapped(backing: Backing, tail: usize, unread: usize) -> (Ring, Vec<u8>) {
    let mut r = ring(backing, 4096, 1 << 20);
    // Keep one byte unread so the ring does not reset its tail to 0 when emptied.
    write_all(&mut r, &vec![0; tail + 1]);
    r.consume(tail);
    let data: Vec<u8> = (1..unread).map(|i| i as u8 ^ 0x3C).collect();
    write_all(&mut r, &data);
    (r, [&[0][..], &data].concat())
}

#[test]
fn grows_keeping_wrapped_contents() {
    for backing in backings() {
        // Unwrapped, wrapped with the short part at either end, full.
        for (tail, unread) in [(10, 50), (100, 4000), (4000, 4000), (4095, 4096), (0, 4096)] {
            let (mut r, expect) = wrapped(backing, tail, unread);
            let cap = r.capacity();
            assert_eq!(r.readable(), &expect[..]);
            r.ensure_capacity(3 * cap).unwrap();
            assert_eq!(r.capacity(), 4 * cap);
            assert_eq!(
                r.readable(),
                &expect[..],
                "tail {tail}, unread {unread}, {backing:?}"
            );
            // The grown ring fills and wraps correctly too.
            let more: Vec<u8> = (0..r.free()).map(|i| i as u8).collect();
            write_all(&mut r, &more);
            assert_eq!(r.readable(), &[&expect[..], &more].concat()[..]);
            r.consume(expect.len() + 1);
            assert_eq!(r.readable(), &more[1..]);
        }
    }
}

/// `usize::MAX` as the bound means "no bound" (the largest power of two), not an overflow
/// that would leave the ring unable to grow.
#[test]
fn an_unbounded_ring_grows() {
    for backing in backings() {
        let mut r = ring(backing, 4096, usize::MAX);
        write_all(&mut r, b"keep me");
        r.ensure_capacity(1 << 20).unwrap();
        assert_eq!((r.capacity(), r.readable()), (1 << 20, &b"keep me"[..]));
    }
}

#[test]
fn growth_past_the_bound_is_a_typed_error_and_changes_nothing() {
    for backing in backings() {
        let mut r = ring(backing, 4096, 16384);
        write_all(&mut r, b"keep me");
        match r.reserve(20_000) {
            Err(RingError::TooLarge { requested, max }) => {
                assert_eq!((requested, max), (20_007, 16384));
            }
            other => panic!("expected TooLarge, got {other:?}"),
        }
        assert_eq!(r.readable(), b"keep me");
        assert_eq!(r.capacity(), 4096);
        let msg = r.ensure_capacity(1 << 20).unwrap_err().to_string();
        assert!(msg.contains("1048576") && msg.contains("16384"), "{msg}");
        // Up to the bound is fine.
        assert!(r.reserve(16384 - 7).is_ok());
        assert_eq!(r.capacity(), 16384);
    }
}

#[test]
fn a_raised_bound_lets_the_ring_grow_and_is_never_lowered() {
    for backing in backings() {
        let mut r = ring(backing, 4096, 16384);
        write_all(&mut r, b"keep me");
        r.raise_max_capacity(1000);
        assert_eq!(r.max_capacity(), 16384, "never lowered");
        r.raise_max_capacity(40_000);
        assert_eq!(r.max_capacity(), 65536, "rounded up to a power of two");
        r.ensure_capacity(40_000).unwrap();
        assert_eq!((r.capacity(), r.readable()), (65536, &b"keep me"[..]));
        assert!(r.ensure_capacity(65537).is_err());
    }
}

#[test]
fn release_pages_only_when_empty() {
    for backing in backings() {
        let mut r = ring(backing, 1 << 16, 1 << 16);
        write_all(&mut r, &[1; 1000]);
        assert!(!r.release_pages().unwrap());
        assert_eq!(r.readable(), &[1; 1000][..]);
        r.clear();
        assert!(r.release_pages().unwrap());
        write_all(&mut r, b"after");
        assert_eq!(r.readable(), b"after");
    }
}

#[test]
#[should_panic(expected = "commit of")]
fn commit_past_free_panics() {
    let mut r = ring(Backing::Heap, 4096, 4096);
    r.commit(r.capacity() + 1);
}

#[test]
#[should_panic(expected = "consume of")]
fn consume_past_len_panics() {
    let mut r = ring(Backing::Heap, 4096, 4096);
    r.consume(1);
}

#[test]
fn pool_reuses_and_drops_grown_rings() {
    let pool = ringwire_ring::RingPool::new(RingConfig::with_capacity(4096), 2);
    let a = pool.take().unwrap();
    let mut b = pool.take().unwrap();
    let c = pool.take().unwrap();
    b.ensure_capacity(8192).unwrap();
    pool.give(a);
    pool.give(b);
    assert_eq!(pool.idle(), 1, "a grown ring is not pooled");
    pool.give(c);
    let mut d = pool.take().unwrap();
    assert!(d.is_empty());
    write_all(&mut d, b"x");
    pool.give(d);
    pool.give(pool.take().unwrap());
    assert_eq!(pool.idle(), 2);
    pool.give(Ring::new(RingConfig::with_capacity(4096)).unwrap());
    assert_eq!(pool.idle(), 2, "the pool keeps at most `keep`");
}

/// A ring given to a pool is kept only if the pool could have made it: the same capacity,
/// growth bound and backing.
#[test]
fn a_pool_keeps_only_rings_of_its_configuration() {
    let config = RingConfig::with_capacity(4096).max_capacity(16384);
    for backing in backings() {
        let pool = ringwire_ring::RingPool::new(config.backing(backing), 4);
        pool.give(ring(backing, 4096, 1 << 20));
        assert_eq!(pool.idle(), 0, "{backing:?}: another bound is not kept");
        for other in backings().into_iter().filter(|&b| b != backing) {
            pool.give(ring(other, 4096, 16384));
            assert_eq!(pool.idle(), 0, "{backing:?}: {other:?} is not kept");
        }
        pool.give(ring(backing, 4096, 16384));
        assert_eq!(pool.idle(), 1, "{backing:?}");
    }
    let auto = ringwire_ring::RingPool::new(config, 4);
    for backing in backings() {
        auto.give(ring(backing, 4096, 16384));
    }
    assert_eq!(auto.idle(), backings().len(), "Auto takes either backing");
}

#[test]
fn a_pooled_ring_goes_home_when_dropped() {
    let pool = ringwire_ring::RingPool::new(RingConfig::with_capacity(4096), 2);
    let mut a = pool.take().unwrap();
    let b = pool.take().unwrap();
    write_all(&mut a, b"unread");
    let elsewhere = std::thread::spawn(move || drop(a));
    elsewhere.join().unwrap();
    assert_eq!(
        pool.idle(),
        1,
        "dropped on another thread, back in the pool"
    );
    let mut a = pool.take().unwrap();
    assert!(a.is_empty(), "it came back emptied");
    a.ensure_capacity(8192).unwrap();
    drop(a);
    assert_eq!(pool.idle(), 0, "a grown ring is unmapped, not pooled");
    // A ring outliving its pool is simply unmapped.
    drop(pool);
    drop(b);
    // One given to a pool and taken again goes home too.
    let pool = ringwire_ring::RingPool::new(RingConfig::with_capacity(4096), 2);
    pool.give(Ring::new(RingConfig::with_capacity(4096)).unwrap());
    drop(pool.take().unwrap());
    assert_eq!(pool.idle(), 1);
}

/// Bytes changed in place through `readable_mut` across the wrap point read back changed, in order.
#[test]
fn readable_mut_edits_in_place_across_the_wrap() {
    for backing in backings() {
        let mut r = ring(backing, 4096, 4096);
        let cap = r.capacity();
        write_all(&mut r, &vec![0; cap - 3]);
        r.consume(cap - 3);
        let data: Vec<u8> = (0..10u8).collect();
        write_all(&mut r, &data);
        r.readable_mut().iter_mut().for_each(|b| *b ^= 0xa5);
        let expected: Vec<u8> = data.iter().map(|b| b ^ 0xa5).collect();
        assert_eq!(r.readable(), expected.as_slice(), "{backing:?}");
        r.consume(4);
        assert_eq!(r.readable_mut().len(), 6);
        assert_eq!(r.readable(), &expected[4..], "{backing:?}");
    }
}

/// Both views of a mirrored ring are marked `MADV_DONTFORK` (`dc` in the mapping's VmFlags),
/// so a forked child does not share a parent's connection buffers.
#[cfg(target_os = "linux")]
#[test]
fn mirrored_views_are_not_inherited_by_forks() {
    if !MIRROR_SUPPORTED {
        return;
    }
    let mut r = ring(Backing::Mirrored, 4096, 4096);
    let cap = r.capacity();
    let base = r.writable().as_ptr() as usize;
    let end = base + 2 * cap;
    // Each mapping: its address range, then fields, VmFlags last.
    let smaps = std::fs::read_to_string("/proc/self/smaps").unwrap();
    let mut flags_at = Vec::new();
    let mut range = (0, 0);
    for line in smaps.lines() {
        if let Some(span) = address_range(line) {
            range = span;
        } else if let Some(flags) = line.strip_prefix("VmFlags:") {
            if range.0 < end && base < range.1 {
                flags_at.push((range, flags.split_whitespace().any(|f| f == "dc")));
            }
        }
    }
    let covered: usize = flags_at
        .iter()
        .map(|((s, e), _)| e.min(&(base + 2 * cap)) - s.max(&base))
        .sum();
    assert_eq!(covered, 2 * cap, "both views found: {flags_at:x?}");
    assert!(flags_at.iter().all(|&(_, dc)| dc), "{flags_at:x?}");
}

/// The range of an smaps mapping line (`start-end perms ...`).
#[cfg(target_os = "linux")]
fn address_range(line: &str) -> Option<(usize, usize)> {
    let (start, end) = line.split_whitespace().next()?.split_once('-')?;
    Some((
        usize::from_str_radix(start, 16).ok()?,
        usize::from_str_radix(end, 16).ok()?,
    ))
}

#[test]
fn the_empty_ring_reads_nothing_and_refuses_every_byte() {
    let mut ring = Ring::empty();
    assert_eq!(
        (ring.capacity(), ring.max_capacity(), ring.len()),
        (0, 0, 0)
    );
    assert!(ring.readable().is_empty() && ring.readable_mut().is_empty());
    assert!(ring.writable().is_empty());
    assert!(ring.reserve(0).unwrap().is_empty());
    ring.commit(0);
    ring.consume(0);
    ring.truncate(0);
    ring.clear();
    assert!(ring.release_pages().unwrap());
    assert!(matches!(
        ring.reserve(1),
        Err(RingError::TooLarge {
            requested: 1,
            max: 0
        })
    ));
    assert!(ring.ensure_capacity(1).is_err());
    assert_eq!(ring.capacity(), 0, "it never grows");
}
