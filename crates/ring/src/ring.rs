//! The ring: a tail (`start`) and a fill level over [`Storage`], with bounded growth.

use std::sync::atomic::{compiler_fence, Ordering};
use std::sync::Arc;

use crate::config::{Backing, RingConfig};
use crate::error::RingError;
use crate::pool::Shelf;
use crate::storage::Storage;

/// A byte ring whose readable and writable spans are each one contiguous slice.
///
/// Writers call [`Ring::writable`] (or [`Ring::reserve`]), fill a prefix, then [`Ring::commit`]
/// it; readers look at [`Ring::readable`] and [`Ring::consume`] what they are done with. A slice
/// borrowed from the ring lives until the next `&mut` call, so the borrow checker rules out
/// reading bytes after the tail moved past them.
///
/// On Linux the ring is mirrored (see the crate docs); elsewhere, under Miri, or when the kernel
/// refuses another mapping, it lives on the heap and moves unread bytes to the front before
/// handing out a writable span.
#[derive(Debug)]
pub struct Ring {
    storage: Storage,
    /// Offset of the first unread byte; always `< capacity`.
    start: usize,
    /// Unread bytes.
    len: usize,
    /// Growth bound (a power of two, `>= capacity`).
    max: usize,
    /// The pool it goes back to when dropped, if it came from one.
    home: Option<Arc<Shelf>>,
}

impl Ring {
    /// Builds a ring as `config` says. Only [`Backing::Mirrored`] fails (when the OS refuses);
    /// [`Backing::Auto`] falls back to the heap with a warning instead.
    pub fn new(config: RingConfig) -> Result<Self, RingError> {
        let (cap, max) = config.normalized();
        let storage = match config.backing {
            Backing::Heap => Storage::heap(cap),
            Backing::Mirrored => Storage::mirror(cap).map_err(RingError::Os)?,
            Backing::Auto if !crate::MIRROR_SUPPORTED => Storage::heap(cap),
            Backing::Auto => Storage::mirror(cap).unwrap_or_else(|e| {
                log::warn!(
                    "ringwire: mirrored ring of {cap} bytes refused ({e}); using a heap ring, \
                     which copies to compact (raise the fd limit or vm.max_map_count)"
                );
                Storage::heap(cap)
            }),
        };
        Ok(Self {
            storage,
            start: 0,
            len: 0,
            max,
            home: None,
        })
    }

    /// A ring of no capacity that maps and allocates nothing, and cannot grow: a placeholder
    /// for a transport whose ring went back to its pool while its connection idles. It reads
    /// as empty; a write of any byte is [`RingError::TooLarge`].
    #[must_use]
    pub fn empty() -> Self {
        Self {
            storage: Storage::Heap(Box::default()),
            start: 0,
            len: 0,
            max: 0,
            home: None,
        }
    }

    /// This ring, to go back to `shelf` when dropped.
    pub(crate) fn homed(mut self, shelf: Arc<Shelf>) -> Self {
        self.home = Some(shelf);
        self
    }

    /// This ring, to be unmapped when dropped.
    pub(crate) fn unhomed(mut self) -> Self {
        self.home = None;
        self
    }

    /// Bytes the ring holds without growing.
    #[inline]
    pub fn capacity(&self) -> usize {
        self.storage.capacity()
    }

    /// The growth bound.
    pub fn max_capacity(&self) -> usize {
        self.max
    }

    /// Unread bytes.
    #[inline]
    pub fn len(&self) -> usize {
        self.len
    }

    /// True when nothing is unread.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Free bytes (the length of [`Ring::writable`]).
    #[inline]
    pub fn free(&self) -> usize {
        self.capacity() - self.len
    }

    /// True for the double-mapped ring, false for the heap ring.
    #[inline]
    pub fn is_mirrored(&self) -> bool {
        self.storage.is_mirrored()
    }

    /// All unread bytes as one slice, whatever the wrap.
    #[inline]
    pub fn readable(&self) -> &[u8] {
        self.storage.span(self.start, self.len)
    }

    /// All unread bytes as one mutable slice, for decoders that transform in place (a WebSocket
    /// reader unmasks payloads where they arrived). Same span and aliasing rules as
    /// [`Ring::readable`]: at most the capacity, so it never overlaps itself through the mirror.
    #[inline]
    pub fn readable_mut(&mut self) -> &mut [u8] {
        self.storage.span_mut(self.start, self.len)
    }

    /// All free bytes as one slice, whatever the wrap. Write a prefix, then [`Ring::commit`] it.
    #[inline]
    pub fn writable(&mut self) -> &mut [u8] {
        if self.start != 0 && !self.is_mirrored() {
            self.start = self.storage.compact(self.start, self.len);
        }
        // (Wrapping: the empty ring's capacity is 0, and its offset 0.)
        let mask = self.capacity().wrapping_sub(1);
        let (offset, free) = ((self.start + self.len) & mask, self.free());
        self.storage.span_mut(offset, free)
    }

    /// A writable span of at least `n` bytes, growing the ring if it must.
    pub fn reserve(&mut self, n: usize) -> Result<&mut [u8], RingError> {
        let needed = self.len.checked_add(n).ok_or(RingError::TooLarge {
            requested: usize::MAX,
            max: self.max,
        })?;
        self.ensure_capacity(needed)?;
        Ok(self.writable())
    }

    /// Raises the growth bound to at least `max` (rounded up as [`RingConfig`] rounds it);
    /// never lowers it. For a protocol whose own limits say how much must fit whole (a
    /// WebSocket frame), so that one setting rules. A pool takes back only rings of its own
    /// bound: a raised ring is unmapped when dropped.
    pub fn raise_max_capacity(&mut self, max: usize) {
        let (_, max) = RingConfig::with_capacity(self.capacity())
            .max_capacity(max)
            .normalized();
        self.max = self.max.max(max);
    }

    /// Makes the capacity at least `total` bytes (unread data included), growing to the next
    /// power of two. Past the bound: [`RingError::TooLarge`] naming `total`; nothing changes.
    #[inline]
    pub fn ensure_capacity(&mut self, total: usize) -> Result<(), RingError> {
        if total <= self.capacity() {
            return Ok(());
        }
        self.grow(total)
    }

    /// The rare half of [`Ring::ensure_capacity`], kept out of line so the check inlines.
    #[cold]
    fn grow(&mut self, total: usize) -> Result<(), RingError> {
        if total > self.max {
            return Err(RingError::TooLarge {
                requested: total,
                max: self.max,
            });
        }
        let new_cap = total.next_power_of_two().max(2 * self.capacity());
        self.start = self
            .storage
            .grow(new_cap, self.start, self.len)
            .map_err(RingError::Os)?;
        compiler_fence(Ordering::SeqCst);
        Ok(())
    }

    /// Marks the first `n` bytes of the last writable span as written.
    ///
    /// # Panics
    /// If `n` exceeds [`Ring::free`]: that would expose bytes nobody wrote.
    #[inline]
    pub fn commit(&mut self, n: usize) {
        assert!(
            n <= self.free(),
            "commit of {n} bytes with {} free",
            self.free()
        );
        // The writer may have stored through the upper view bytes that the next reader loads
        // through the lower one; keep the compiler from carrying values across.
        compiler_fence(Ordering::SeqCst);
        self.len += n;
    }

    /// Drops the first `n` unread bytes.
    ///
    /// # Panics
    /// If `n` exceeds [`Ring::len`].
    #[inline]
    pub fn consume(&mut self, n: usize) {
        assert!(
            n <= self.len,
            "consume of {n} bytes with {} unread",
            self.len
        );
        compiler_fence(Ordering::SeqCst);
        self.len -= n;
        // Resetting an empty ring to offset 0 keeps the heap ring from compacting and keeps a
        // quiet connection's writes on the same few pages.
        self.start = if self.len == 0 {
            0
        } else {
            (self.start + n) & self.capacity().wrapping_sub(1)
        };
    }

    /// Keeps the first `len` unread bytes and forgets the rest, as if they had never been
    /// committed: for a decoder that compacts what it decoded in place (a chunked body), so
    /// the room its framing took is free again. Nothing changes if `len >= self.len()`.
    #[inline]
    pub fn truncate(&mut self, len: usize) {
        if len >= self.len {
            return;
        }
        compiler_fence(Ordering::SeqCst);
        self.len = len;
        if len == 0 {
            self.start = 0;
        }
    }

    /// Forgets every unread byte.
    pub fn clear(&mut self) {
        self.consume(self.len);
    }

    /// Starts an empty ring over from its first byte, as a new one would (a pooled ring that
    /// keeps its pages: the next user writes into the pages already touched).
    pub(crate) fn rewind(&mut self) {
        if self.is_empty() {
            self.start = 0;
        }
    }

    /// Gives an empty ring's touched pages back to the OS (the idle-connection case). Does
    /// nothing and returns `false` while bytes are unread.
    pub fn release_pages(&mut self) -> Result<bool, RingError> {
        if !self.is_empty() {
            return Ok(false);
        }
        self.storage.release_pages().map_err(RingError::Os)?;
        self.start = 0;
        Ok(true)
    }
}

impl Drop for Ring {
    /// A ring from a pool goes back to it (its storage moves into a fresh `Ring` value, this one
    /// keeping an empty heap slice, which frees nothing).
    fn drop(&mut self) {
        if let Some(shelf) = self.home.take() {
            let storage = std::mem::replace(&mut self.storage, Storage::Heap(Box::default()));
            shelf.put(Ring {
                storage,
                start: self.start,
                len: self.len,
                max: self.max,
                home: None,
            });
        }
    }
}
