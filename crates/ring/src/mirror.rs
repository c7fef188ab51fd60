//! The double mapping: one memfd mapped twice into adjacent virtual memory (Linux), and the
//! other OS memory calls the ring makes.
//!
//! All `unsafe` of the mirrored ring lives in this file. The invariant that makes it sound:
//! `base` points at `2 * cap` bytes of readable, writable memory for as long as the `Mirror`
//! lives, and byte `i` and byte `i + cap` are the same physical byte. Callers ask for spans of at
//! most `cap` bytes that start below `cap`, so no span overlaps itself through the mirror.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::ptr::NonNull;

/// One memfd of `cap` bytes mapped at `base` and at `base + cap`.
pub(crate) struct Mirror {
    /// Start of `2 * cap` bytes of mapped memory (see the module invariant).
    base: NonNull<u8>,
    cap: usize,
    /// Kept open so the ring can grow (`ftruncate` and map again) and release pages.
    fd: OwnedFd,
}

// SAFETY: a `Mirror` exclusively owns its mapping; nothing else holds `base`. Moving it to another
// thread moves that ownership, and shared references only read.
unsafe impl Send for Mirror {}
// SAFETY: `&Mirror` hands out only shared slices; mutation needs `&mut Mirror`.
unsafe impl Sync for Mirror {}

impl std::fmt::Debug for Mirror {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Mirror")
            .field("base", &self.base)
            .field("cap", &self.cap)
            .finish()
    }
}

/// Turns a libc return value of -1 into the thread's `errno`.
fn check(ret: libc::c_int) -> io::Result<()> {
    if ret == -1 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

impl Mirror {
    /// Creates a memfd of `cap` bytes (a page multiple) and maps it twice.
    pub(crate) fn new(cap: usize) -> io::Result<Self> {
        // SAFETY: the name is a valid C string; flags are valid for memfd_create.
        let raw = unsafe { libc::memfd_create(c"ringwire".as_ptr(), libc::MFD_CLOEXEC) };
        check(raw)?;
        // SAFETY: memfd_create returned a fresh descriptor that nothing else owns.
        let fd = unsafe { OwnedFd::from_raw_fd(raw) };
        resize(&fd, cap)?;
        let base = map_twice(&fd, cap)?;
        Ok(Self { base, cap, fd })
    }

    /// Capacity of one view.
    #[inline]
    pub(crate) fn capacity(&self) -> usize {
        self.cap
    }

    /// `len` bytes starting at `offset`, read through whichever view the range falls in.
    #[inline]
    pub(crate) fn span(&self, offset: usize, len: usize) -> &[u8] {
        assert!(
            offset < self.cap && len <= self.cap,
            "span outside the mirror"
        );
        // SAFETY: offset + len <= 2 * cap, inside the mapping (module invariant); `&self` keeps
        // the mapping alive and excludes `&mut` access for the slice's lifetime; len <= cap, so
        // the slice does not alias itself through the mirror.
        unsafe { std::slice::from_raw_parts(self.base.as_ptr().add(offset), len) }
    }

    /// Mutable twin of [`Mirror::span`].
    #[inline]
    pub(crate) fn span_mut(&mut self, offset: usize, len: usize) -> &mut [u8] {
        assert!(
            offset < self.cap && len <= self.cap,
            "span outside the mirror"
        );
        // SAFETY: as in `span`; `&mut self` makes this the only live slice into the mapping.
        unsafe { std::slice::from_raw_parts_mut(self.base.as_ptr().add(offset), len) }
    }

    /// Grows to `new_cap` (a larger power of two) keeping `len` bytes that start at `start`.
    /// Returns where that data starts in the new layout.
    ///
    /// The memfd keeps every byte, so growth is: enlarge the file, map it twice at a new address,
    /// and, if the data wrapped, copy the smaller of its two parts so it is contiguous again.
    pub(crate) fn grow(&mut self, new_cap: usize, start: usize, len: usize) -> io::Result<usize> {
        debug_assert!(new_cap >= 2 * self.cap && start < self.cap && len <= self.cap);
        resize(&self.fd, new_cap)?;
        let base = map_twice(&self.fd, new_cap)?;
        let old = std::mem::replace(&mut self.base, base);
        let old_cap = std::mem::replace(&mut self.cap, new_cap);
        unmap(old, old_cap);

        let head = old_cap - start; // bytes from `start` to the old wrap point
        if len <= head {
            return Ok(start);
        }
        let tail = len - head; // bytes that wrapped to offset 0
        let ptr = self.base.as_ptr();
        if tail <= head {
            // Move the wrapped tail to just past the old end: [0, tail) -> [old_cap, old_cap + tail).
            // SAFETY: both ranges lie in the first view of the new mapping (old_cap + tail <=
            // 2 * old_cap <= new_cap) and are disjoint because tail < old_cap.
            unsafe { std::ptr::copy_nonoverlapping(ptr, ptr.add(old_cap), tail) };
            Ok(start)
        } else {
            // Move the head to the end of the new capacity: [start, old_cap) -> [new_cap - head, new_cap).
            // SAFETY: both ranges lie in the first view; new_cap - head >= old_cap since
            // new_cap >= 2 * old_cap, so they are disjoint.
            unsafe { std::ptr::copy_nonoverlapping(ptr.add(start), ptr.add(new_cap - head), head) };
            Ok(new_cap - head)
        }
    }

    /// Gives every page of the ring back to the OS; the contents read as zeros afterwards.
    pub(crate) fn release_pages(&mut self) -> io::Result<()> {
        let len = libc::off_t::try_from(self.cap).map_err(io::Error::other)?;
        let mode = libc::FALLOC_FL_PUNCH_HOLE | libc::FALLOC_FL_KEEP_SIZE;
        // SAFETY: plain syscall on a descriptor we own; no memory is passed.
        check(unsafe { libc::fallocate(self.fd.as_raw_fd(), mode, 0, len) })
    }
}

impl Drop for Mirror {
    fn drop(&mut self) {
        unmap(self.base, self.cap);
    }
}

fn resize(fd: &OwnedFd, len: usize) -> io::Result<()> {
    let len = libc::off_t::try_from(len).map_err(io::Error::other)?;
    // SAFETY: plain syscall on a descriptor we own.
    check(unsafe { libc::ftruncate(fd.as_raw_fd(), len) })
}

/// Reserves `2 * cap` bytes of address space, then maps `fd` over each half.
fn map_twice(fd: &OwnedFd, cap: usize) -> io::Result<NonNull<u8>> {
    let total = cap.checked_mul(2).ok_or(io::ErrorKind::OutOfMemory)?;
    let flags = libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE;
    // SAFETY: asks the kernel for fresh inaccessible address space; touches no existing memory.
    let region = unsafe { libc::mmap(std::ptr::null_mut(), total, libc::PROT_NONE, flags, -1, 0) };
    if region == libc::MAP_FAILED {
        return Err(io::Error::last_os_error());
    }
    let base = NonNull::new(region.cast::<u8>()).ok_or(io::ErrorKind::OutOfMemory)?;
    for half in [0, cap] {
        // SAFETY: MAP_FIXED replaces part of the reservation made above, which only we own.
        let view = unsafe {
            libc::mmap(
                region.cast::<u8>().add(half).cast(),
                cap,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED | libc::MAP_FIXED,
                fd.as_raw_fd(),
                0,
            )
        };
        if view == libc::MAP_FAILED {
            let err = io::Error::last_os_error();
            unmap(base, cap);
            return Err(err);
        }
    }
    // A forked child must not share (and scribble on) a parent's connection buffers.
    // SAFETY: advice on memory we just mapped.
    check(unsafe { libc::madvise(region, total, libc::MADV_DONTFORK) })
        .inspect_err(|_| unmap(base, cap))?;
    Ok(base)
}

/// Gives the whole pages inside a heap buffer back to the OS; they read as zeros afterwards.
///
/// Reallocating instead would cost a page-by-page `memset` whenever the allocator reuses memory.
pub(crate) fn discard_pages(buf: &mut [u8]) -> io::Result<()> {
    let page = crate::page_size();
    let start = (buf.as_mut_ptr() as usize).next_multiple_of(page);
    let end = (buf.as_mut_ptr() as usize + buf.len()) / page * page;
    if end <= start {
        return Ok(());
    }
    // SAFETY: [start, end) lies inside `buf`, which we borrow exclusively; heap memory is private
    // anonymous memory, for which MADV_DONTNEED only replaces the contents with zero pages —
    // valid `u8`s, and the ring is empty, so no reader expects the old bytes.
    check(unsafe { libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_DONTNEED) })
}

/// Unmaps both views of a `cap`-byte mirror at `base`.
fn unmap(base: NonNull<u8>, cap: usize) {
    // SAFETY: `base` came from `map_twice(_, cap)` and no slice into it outlives this call
    // (callers hold `&mut Mirror` or own it in `drop`). munmap only fails for bad arguments.
    let ret = unsafe { libc::munmap(base.as_ptr().cast(), 2 * cap) };
    debug_assert_eq!(ret, 0, "munmap failed: {}", io::Error::last_os_error());
}
