//! `ring_ops`: an arbitrary sequence of ring operations on a mirrored or heap `Ring`, checked
//! after every step against a `VecDeque<u8>` model and a model of the capacity:
//! `len`, `free`, `capacity`, `readable()` contents, the `writable()` span length, and
//! `RingError::TooLarge` exactly when the bytes needed exceed the growth bound (with nothing
//! changed when it is returned).
//!
//! Sizes stay at or below 64 KiB (initial capacity 4..=64 KiB, bound 64 KiB) so a run is fast.

#![no_main]

use std::collections::VecDeque;

use arbitrary::{Arbitrary, Unstructured};
use libfuzzer_sys::fuzz_target;
use ringwire_ring::{Backing, Ring, RingConfig, RingError};

const MAX_CAPACITY: usize = 64 << 10;
/// Largest size an operation names; above the bound so `TooLarge` is reachable from empty.
const MAX_OP: usize = 80 << 10;

#[derive(Debug, Arbitrary)]
enum Op {
    /// `reserve(n)`, write a pattern into the first `k % (n + 1)` bytes, commit them.
    Reserve {
        n: u32,
        k: u32,
    },
    /// `writable()` without reserving, write and commit `k % (free + 1)` bytes.
    Write {
        k: u32,
    },
    /// `reserve(n)` and commit nothing (growth only).
    ReserveOnly {
        n: u32,
    },
    /// `consume(n % (len + 1))`.
    Consume {
        n: u32,
    },
    /// `ensure_capacity(n)`.
    EnsureCapacity {
        n: u32,
    },
    ReleasePages,
    Clear,
}

#[derive(Debug)]
struct Input {
    heap: bool,
    capacity: usize,
    ops: Vec<Op>,
}

impl<'a> Arbitrary<'a> for Input {
    fn arbitrary(u: &mut Unstructured<'a>) -> arbitrary::Result<Self> {
        Ok(Input {
            heap: u.arbitrary()?,
            // 4 KiB << 0..=4: 4, 8, 16, 32 or 64 KiB (the page size may round it up).
            capacity: (4 << 10) << u.int_in_range(0..=4u8)?,
            ops: u.arbitrary_iter()?.collect::<arbitrary::Result<_>>()?,
        })
    }
}

/// Sizes the ops name: half of them small (`0..256`, where wrap-around and compaction happen
/// step by step), the rest anywhere in `0..=MAX_OP`.
fn size(n: u32) -> usize {
    let v = (n >> 1) as usize;
    if n & 1 == 0 {
        v % 256
    } else {
        v % (MAX_OP + 1)
    }
}

struct Checker {
    ring: Ring,
    model: VecDeque<u8>,
    /// Expected capacity.
    cap: usize,
    max: usize,
    /// Count of bytes written so far; the pattern byte is a hash of it, so a byte that lands at
    /// the wrong offset (even a multiple of 256 away) shows up as a content mismatch.
    next: u32,
}

impl Checker {
    /// The capacity `ensure_capacity(total)` must leave, or `None` for `TooLarge`.
    fn grown(&self, total: usize) -> Option<usize> {
        if total <= self.cap {
            Some(self.cap)
        } else if total > self.max {
            None
        } else {
            Some(total.next_power_of_two().max(2 * self.cap))
        }
    }

    fn apply(&mut self, op: &Op) {
        match *op {
            Op::Reserve { n, k } => self.reserve(size(n), Some(k)),
            Op::ReserveOnly { n } => self.reserve(size(n), None),
            Op::Write { k } => {
                let free = self.cap - self.model.len();
                let k = k as usize % (free + 1);
                let span = self.ring.writable();
                assert_eq!(span.len(), free, "writable length");
                fill(&mut self.model, &mut self.next, span, k);
                self.ring.commit(k);
            }
            Op::Consume { n } => {
                let n = n as usize % (self.model.len() + 1);
                self.ring.consume(n);
                self.model.drain(..n);
            }
            Op::EnsureCapacity { n } => {
                let total = size(n);
                let result = self.ring.ensure_capacity(total);
                match self.grown(total) {
                    Some(cap) => {
                        result.expect("ensure_capacity within the bound");
                        self.cap = cap;
                    }
                    None => expect_too_large(result, total, self.max),
                }
            }
            Op::ReleasePages => {
                let released = self.ring.release_pages().expect("release_pages");
                assert_eq!(released, self.model.is_empty(), "release_pages result");
            }
            Op::Clear => {
                self.ring.clear();
                self.model.clear();
            }
        }
    }

    /// `reserve(n)`; with `Some(k)`, writes and commits `k % (n + 1)` bytes of the span.
    fn reserve(&mut self, n: usize, k: Option<u32>) {
        let total = self.model.len() + n;
        let expected = self.grown(total);
        match (self.ring.reserve(n), expected) {
            (Ok(span), Some(cap)) => {
                self.cap = cap;
                assert_eq!(span.len(), cap - self.model.len(), "reserve span length");
                assert!(span.len() >= n);
                if let Some(k) = k {
                    let k = k as usize % (n + 1);
                    fill(&mut self.model, &mut self.next, span, k);
                    self.ring.commit(k);
                }
            }
            (result, Some(_)) => panic!("reserve({n}) with {total} <= max: {result:?}"),
            (result, None) => expect_too_large(result.map(drop), total, self.max),
        }
    }

    fn check(&self, step: usize) {
        let ring = &self.ring;
        assert_eq!(ring.len(), self.model.len(), "len after step {step}");
        assert_eq!(ring.is_empty(), self.model.is_empty());
        assert_eq!(ring.capacity(), self.cap, "capacity after step {step}");
        assert_eq!(
            ring.free(),
            self.cap - self.model.len(),
            "free after step {step}"
        );
        assert_eq!(ring.max_capacity(), self.max);
        let (a, b) = self.model.as_slices();
        let readable = ring.readable();
        assert_eq!(readable.len(), a.len() + b.len());
        assert!(
            readable[..a.len()] == *a && readable[a.len()..] == *b,
            "readable contents differ after step {step}"
        );
    }
}

/// Writes `k` pattern bytes at the front of `span`, appending them to the model too.
fn fill(model: &mut VecDeque<u8>, next: &mut u32, span: &mut [u8], k: usize) {
    for byte in &mut span[..k] {
        let value = (next.wrapping_mul(0x9e37_79b1) >> 24) as u8;
        *byte = value;
        model.push_back(value);
        *next = next.wrapping_add(1);
    }
}

fn expect_too_large(result: Result<(), RingError>, total: usize, want_max: usize) {
    match result {
        Err(RingError::TooLarge { requested, max }) => {
            assert_eq!((requested, max), (total, want_max), "TooLarge fields");
        }
        other => panic!("needing {total} with max {want_max}: want TooLarge, got {other:?}"),
    }
}

fuzz_target!(|input: Input| {
    let backing = if input.heap {
        Backing::Heap
    } else {
        Backing::Mirrored
    };
    let config = RingConfig::with_capacity(input.capacity)
        .max_capacity(MAX_CAPACITY)
        .backing(backing);
    let ring = Ring::new(config).expect("ring");
    assert_eq!(ring.is_mirrored(), !input.heap);
    let cap = ring.capacity();
    assert!(
        cap.is_power_of_two()
            && cap >= input.capacity
            && cap.is_multiple_of(ringwire_ring::page_size())
    );
    let max = ring.max_capacity();
    assert_eq!(max, MAX_CAPACITY.max(cap));
    let mut checker = Checker {
        ring,
        model: VecDeque::new(),
        cap,
        max,
        next: 0,
    };
    checker.check(0);
    for (step, op) in input.ops.iter().enumerate() {
        checker.apply(op);
        checker.check(step + 1);
    }
});
