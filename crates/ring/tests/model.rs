//! Random operation sequences against a `VecDeque` model, on both backings.

use std::collections::VecDeque;

use proptest::prelude::*;
use ringwire_ring::{Backing, Ring, RingConfig, RingError, MIRROR_SUPPORTED};

#[derive(Debug, Clone)]
enum Op {
    /// Reserve `n`, write a pattern into the first `k <= n` bytes, commit `k`.
    Write {
        n: usize,
        k: usize,
        seed: u8,
    },
    /// Consume up to `n` bytes.
    Consume(usize),
    /// Grow to hold `n` bytes.
    Grow(usize),
    ReleaseIfEmpty,
}

/// Miri interprets every byte comparison: shrink the sizes there, keep the shapes (growth included).
const MAX_OP: usize = if cfg!(miri) { 6_000 } else { 20_000 };

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (0..MAX_OP, 0..MAX_OP, any::<u8>())
            .prop_map(|(n, k, seed)| Op::Write { n, k: k.min(n), seed }),
        3 => (0..MAX_OP).prop_map(Op::Consume),
        1 => (0..2 * MAX_OP).prop_map(Op::Grow),
        1 => Just(Op::ReleaseIfEmpty),
    ]
}

fn check(backing: Backing, ops: &[Op]) -> Result<(), TestCaseError> {
    const MAX: usize = 32 * 1024;
    let mut ring = Ring::new(
        RingConfig::with_capacity(4096)
            .max_capacity(MAX)
            .backing(backing),
    )
    .unwrap();
    let mut model = VecDeque::new();
    for op in ops {
        match *op {
            Op::Write { n, k, seed } => match ring.reserve(n) {
                Ok(span) => {
                    prop_assert!(span.len() >= n);
                    for (i, b) in span[..k].iter_mut().enumerate() {
                        *b = seed.wrapping_add(i as u8);
                    }
                    ring.commit(k);
                    model.extend((0..k).map(|i| seed.wrapping_add(i as u8)));
                }
                Err(RingError::TooLarge { requested, max }) => {
                    prop_assert_eq!(requested, model.len() + n);
                    prop_assert!(requested > max && max == MAX);
                }
                Err(e) => return Err(TestCaseError::fail(e.to_string())),
            },
            Op::Consume(n) => {
                let n = n.min(model.len());
                ring.consume(n);
                model.drain(..n);
            }
            Op::Grow(n) => {
                let grew = ring.ensure_capacity(n);
                prop_assert_eq!(grew.is_ok(), n <= MAX);
                if n <= MAX {
                    prop_assert!(ring.capacity() >= n);
                }
            }
            Op::ReleaseIfEmpty => {
                prop_assert_eq!(ring.release_pages().unwrap(), model.is_empty());
            }
        }
        prop_assert!(ring.capacity().is_power_of_two() && ring.capacity() <= MAX);
        prop_assert_eq!(ring.len(), model.len());
        prop_assert_eq!(ring.free(), ring.capacity() - model.len());
        prop_assert!(ring.readable() == model.iter().copied().collect::<Vec<_>>().as_slice());
    }
    prop_assert_eq!(ring.writable().len(), ring.capacity() - model.len());
    Ok(())
}

proptest! {
    // Under Miri: few cases, and no failure files (Miri isolates the file system).
    #![proptest_config(if cfg!(miri) {
        ProptestConfig { cases: 4, failure_persistence: None, ..ProptestConfig::default() }
    } else {
        ProptestConfig::with_cases(256)
    })]

    #[test]
    fn heap_ring_matches_model(ops in proptest::collection::vec(op(), 1..if cfg!(miri) { 12 } else { 60 })) {
        check(Backing::Heap, &ops)?;
    }

    #[test]
    fn mirrored_ring_matches_model(ops in proptest::collection::vec(op(), 1..if cfg!(miri) { 12 } else { 60 })) {
        if MIRROR_SUPPORTED {
            check(Backing::Mirrored, &ops)?;
        }
    }
}
