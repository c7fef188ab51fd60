//! Reuse of rings across connections, so accepting one does not pay for memfd + mmap.

use std::fmt;
use std::sync::{Arc, Mutex, MutexGuard};

use crate::{Backing, Ring, RingConfig, RingError};

/// A bounded stack of idle rings of one configuration.
///
/// A ring taken from the pool goes back to it when dropped, wherever that happens (a protocol
/// that took over a connection's rings need not know about the pool); [`give`](Self::give)
/// adopts any other ring made to the pool's configuration. Rings come back empty. The
/// [`WARM`](Self::WARM) most recently returned keep their pages, so that the next connections
/// write into memory already there (releasing a ring's pages and faulting them in again was a
/// fifth of a short connection's cost); deeper ones give them back, so a pooled ring beyond
/// those costs address space and a descriptor but no memory. A ring that grew past the
/// configured capacity is unmapped instead of kept: one large message must not pin its memory
/// for every later connection.
#[derive(Debug)]
pub struct RingPool {
    shelf: Arc<Shelf>,
}

/// What a pool and the rings it lent out share.
pub(crate) struct Shelf {
    config: RingConfig,
    keep: usize,
    /// Idle rings, the most recently returned last; each has no home of its own while here,
    /// so nothing cycles.
    idle: Mutex<Vec<Idle>>,
}

/// An idle ring, and whether it may still hold touched pages.
struct Idle {
    ring: Ring,
    paged: bool,
}

impl RingPool {
    /// How many of the most recently returned idle rings keep their pages: a few rings' worth
    /// of memory per pool (at most their capacity each), whatever the number of connections.
    pub const WARM: usize = 8;

    /// A pool that hands out rings built from `config` and keeps at most `keep` idle ones.
    pub fn new(config: RingConfig, keep: usize) -> Self {
        Self {
            shelf: Arc::new(Shelf {
                config,
                keep,
                idle: Mutex::new(Vec::with_capacity(keep)),
            }),
        }
    }

    /// An idle ring, or a new one; it comes back when dropped.
    pub fn take(&self) -> Result<Ring, RingError> {
        // Not under the lock: making a ring takes system calls.
        let idle = self.shelf.lock().pop();
        let ring = match idle {
            Some(idle) => idle.ring,
            None => Ring::new(self.shelf.config)?,
        };
        Ok(ring.homed(Arc::clone(&self.shelf)))
    }

    /// Returns a ring now (one from anywhere): it is emptied and kept if there is room (its
    /// pages released once [`WARM`](Self::WARM) others came back after it).
    pub fn give(&self, ring: Ring) {
        self.shelf.put(ring.unhomed());
    }

    /// Idle rings held right now.
    pub fn idle(&self) -> usize {
        self.shelf.lock().len()
    }
}

impl Shelf {
    /// Keeps `ring` (which has no home) if it is what the pool would make and there is room.
    pub(crate) fn put(&self, mut ring: Ring) {
        ring.clear();
        if !self.fits(&ring) {
            return;
        }
        // From the start, as a fresh ring: the next connection writes where this one did.
        ring.rewind();
        let mut idle = self.lock();
        if idle.len() >= self.keep {
            return;
        }
        idle.push(Idle { ring, paged: true });
        // The ring this one pushed out of the warm top gives its pages back (once).
        if let Some(cold) = idle
            .len()
            .checked_sub(RingPool::WARM + 1)
            .map(|at| &mut idle[at])
        {
            if cold.paged {
                // On an error the pages stay: tried again when it next leaves the top.
                cold.paged = cold.ring.release_pages().is_err();
            }
        }
    }

    /// Whether `ring` could have come from this pool: its capacity (not grown), its growth
    /// bound, and its backing (mirrored or heap, as `Auto` allows either), so a ring handed
    /// out later behaves as the pool's configuration promises.
    fn fits(&self, ring: &Ring) -> bool {
        let (cap, max) = self.config.normalized();
        let backing = match self.config.backing {
            Backing::Auto => true,
            Backing::Mirrored => ring.is_mirrored(),
            Backing::Heap => !ring.is_mirrored(),
        };
        ring.capacity() == cap && ring.max_capacity() == max && backing
    }

    fn lock(&self) -> MutexGuard<'_, Vec<Idle>> {
        // A panic elsewhere while holding the lock leaves the Vec valid; keep using it.
        self.idle
            .lock()
            .unwrap_or_else(|poison| poison.into_inner())
    }
}

impl fmt::Debug for Shelf {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Shelf")
            .field("config", &self.config)
            .field("keep", &self.keep)
            .finish_non_exhaustive()
    }
}
