//! What a ring's bytes live in: the mirror, or a heap buffer that compacts instead.

use std::io;

#[cfg(all(target_os = "linux", not(miri)))]
use crate::mirror::Mirror;

#[derive(Debug)]
pub(crate) enum Storage {
    #[cfg(all(target_os = "linux", not(miri)))]
    Mirror(Mirror),
    Heap(Box<[u8]>),
}

impl Storage {
    #[cfg(all(target_os = "linux", not(miri)))]
    pub(crate) fn mirror(cap: usize) -> io::Result<Self> {
        Mirror::new(cap).map(Self::Mirror)
    }

    #[cfg(not(all(target_os = "linux", not(miri))))]
    pub(crate) fn mirror(_cap: usize) -> io::Result<Self> {
        Err(io::ErrorKind::Unsupported.into())
    }

    /// Zeroed heap memory (resident from the start when the allocator reuses freed memory).
    pub(crate) fn heap(cap: usize) -> Self {
        Self::Heap(vec![0; cap].into_boxed_slice())
    }

    #[inline]
    pub(crate) fn is_mirrored(&self) -> bool {
        !matches!(self, Self::Heap(_))
    }

    #[inline]
    pub(crate) fn capacity(&self) -> usize {
        match self {
            #[cfg(all(target_os = "linux", not(miri)))]
            Self::Mirror(m) => m.capacity(),
            Self::Heap(b) => b.len(),
        }
    }

    /// `len` bytes from `offset`; a heap caller keeps `offset + len <= capacity` by compacting.
    #[inline]
    pub(crate) fn span(&self, offset: usize, len: usize) -> &[u8] {
        match self {
            #[cfg(all(target_os = "linux", not(miri)))]
            Self::Mirror(m) => m.span(offset, len),
            Self::Heap(b) => &b[offset..offset + len],
        }
    }

    #[inline]
    pub(crate) fn span_mut(&mut self, offset: usize, len: usize) -> &mut [u8] {
        match self {
            #[cfg(all(target_os = "linux", not(miri)))]
            Self::Mirror(m) => m.span_mut(offset, len),
            Self::Heap(b) => &mut b[offset..offset + len],
        }
    }

    /// Moves the `len` bytes at `start` to offset 0 (heap only: a mirror never needs it).
    /// Returns the new start.
    #[inline]
    pub(crate) fn compact(&mut self, start: usize, len: usize) -> usize {
        if let Self::Heap(b) = self {
            b.copy_within(start..start + len, 0);
            return 0;
        }
        start
    }

    /// Grows to `new_cap`, keeping `len` bytes at `start`; returns their new start.
    pub(crate) fn grow(&mut self, new_cap: usize, start: usize, len: usize) -> io::Result<usize> {
        match self {
            #[cfg(all(target_os = "linux", not(miri)))]
            Self::Mirror(m) => m.grow(new_cap, start, len),
            Self::Heap(b) => {
                let mut bigger = vec![0; new_cap].into_boxed_slice();
                bigger[..len].copy_from_slice(&b[start..start + len]);
                *b = bigger;
                Ok(0)
            }
        }
    }

    /// Returns touched pages to the OS. Only called on an empty ring: contents are lost.
    pub(crate) fn release_pages(&mut self) -> io::Result<()> {
        match self {
            #[cfg(all(target_os = "linux", not(miri)))]
            Self::Mirror(m) => m.release_pages(),
            #[cfg(all(target_os = "linux", not(miri)))]
            Self::Heap(b) => crate::mirror::discard_pages(b),
            // Without an OS call to drop pages, swapping in a fresh buffer is the next best.
            #[cfg(not(all(target_os = "linux", not(miri))))]
            Self::Heap(b) => {
                *b = vec![0; b.len()].into_boxed_slice();
                Ok(())
            }
        }
    }
}
