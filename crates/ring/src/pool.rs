//! Reuse of rings across connections, so accepting one does not pay for memfd + mmap.

use std::sync::Mutex;

use crate::{Ring, RingConfig, RingError};

/// A bounded stack of idle rings of one configuration.
///
/// Rings come back empty with their pages released, so a pooled ring costs address space and a
/// descriptor but no memory. A ring that grew past the configured capacity is dropped on return
/// rather than kept: one large message must not pin its memory for every later connection.
#[derive(Debug)]
pub struct RingPool {
    config: RingConfig,
    keep: usize,
    idle: Mutex<Vec<Ring>>,
}

impl RingPool {
    /// A pool that hands out rings built from `config` and keeps at most `keep` idle ones.
    pub fn new(config: RingConfig, keep: usize) -> Self {
        Self {
            config,
            keep,
            idle: Mutex::new(Vec::with_capacity(keep)),
        }
    }

    /// An idle ring, or a new one.
    pub fn take(&self) -> Result<Ring, RingError> {
        match self.lock().pop() {
            Some(ring) => Ok(ring),
            None => Ring::new(self.config),
        }
    }

    /// Returns a ring: it is emptied, its pages released, and kept if there is room.
    pub fn give(&self, mut ring: Ring) {
        let (cap, _) = self.config.normalized();
        ring.clear();
        if ring.capacity() != cap || ring.release_pages().is_err() {
            return;
        }
        let mut idle = self.lock();
        if idle.len() < self.keep {
            idle.push(ring);
        }
    }

    /// Idle rings held right now.
    pub fn idle(&self) -> usize {
        self.lock().len()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<Ring>> {
        // A panic elsewhere while holding the lock leaves the Vec valid; keep using it.
        self.idle
            .lock()
            .unwrap_or_else(|poison| poison.into_inner())
    }
}
