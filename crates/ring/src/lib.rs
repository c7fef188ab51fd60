//! The magic ring: a power-of-two byte buffer whose readable and writable spans are always one
//! contiguous slice, so parsers never see a wrap point and the receive path never copies.
//!
//! On Linux the ring is one memfd mapped twice into adjacent virtual memory: byte `i` and byte
//! `i + capacity` are the same physical byte, so any span of up to `capacity` bytes starting
//! anywhere in the first view is contiguous. Elsewhere, and under Miri, a heap ring offers the
//! same API and moves unread bytes to the front instead.
//!
//! Contracts (see ARCHITECTURE.md):
//! - no slice handed out is longer than the capacity, and no two live slices exist when one is
//!   mutable (the borrow checker enforces it), so the compiler's no-alias assumption holds even
//!   though two addresses name one byte; `commit` and `consume` are compiler fences as well;
//! - growth is bounded: past [`RingConfig::max_capacity`] a typed [`RingError::TooLarge`], never
//!   a wait that cannot end;
//! - an idle ring can give its pages back ([`Ring::release_pages`]); mappings are not inherited by
//!   `fork`; a refused mapping falls back to the heap ring with a warning.
//!
//! A slice read from the ring is valid until the tail moves past it, and the compiler holds
//! every caller to that: bytes read, then used after `consume` or after more bytes were written,
//! do not compile (E0502: the ring is still borrowed by the slice).
//!
//! ```compile_fail,E0502
//! # use ringwire_ring::{Ring, RingConfig};
//! let mut ring = Ring::new(RingConfig::with_capacity(4096)).unwrap();
//! ring.writable()[..5].copy_from_slice(b"hello");
//! ring.commit(5);
//! let hello = ring.readable();
//! ring.consume(5); // the tail moves past `hello`...
//! assert_eq!(hello, b"hello"); // ...so this use is refused
//! ```
//!
//! ```compile_fail,E0502
//! # use ringwire_ring::{Ring, RingConfig};
//! # let mut ring = Ring::new(RingConfig::with_capacity(4096)).unwrap();
//! # ring.writable()[..5].copy_from_slice(b"hello");
//! # ring.commit(5);
//! let hello = ring.readable();
//! ring.writable()[0] = b'j'; // writing may wrap onto bytes a reader still holds
//! assert_eq!(hello, b"hello");
//! ```
//!
//! The same steps in the order the rules allow compile and run:
//!
//! ```
//! # use ringwire_ring::{Ring, RingConfig};
//! let mut ring = Ring::new(RingConfig::with_capacity(4096)).unwrap();
//! ring.writable()[..5].copy_from_slice(b"hello");
//! ring.commit(5);
//! let hello = ring.readable();
//! assert_eq!(hello, b"hello");
//! ring.consume(5);
//! ring.writable()[0] = b'j';
//! ```

mod config;
mod error;
#[cfg(all(target_os = "linux", not(miri)))]
mod mirror;
mod pool;
mod ring;
mod storage;

pub use config::{Backing, RingConfig};
pub use error::RingError;
pub use pool::RingPool;
pub use ring::Ring;

/// Whether this build can double-map (Linux, not Miri).
pub const MIRROR_SUPPORTED: bool = cfg!(all(target_os = "linux", not(miri)));

/// The OS page size: ring capacities are multiples of it.
pub fn page_size() -> usize {
    #[cfg(all(unix, not(miri)))]
    {
        // SAFETY: sysconf has no memory-safety preconditions.
        let size = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
        usize::try_from(size).unwrap_or(4096)
    }
    #[cfg(not(all(unix, not(miri))))]
    {
        4096
    }
}
