//! Sizes and backing choice for a ring.

/// Which memory a ring lives in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Backing {
    /// Mirrored where the platform allows it; otherwise (or when the kernel refuses another
    /// mapping) a heap ring, with a logged warning in the refused case.
    #[default]
    Auto,
    /// Mirrored or an error: for callers that would rather fail than compact.
    Mirrored,
    /// Always the heap ring (compacts instead of mirroring).
    Heap,
}

/// How big a ring starts, how big it may grow, and what backs it.
///
/// Sizes are rounded up to a power of two and to at least one page when the ring is built.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RingConfig {
    /// Initial capacity in bytes.
    pub capacity: usize,
    /// Growth bound: asking for a span larger than this is [`crate::RingError::TooLarge`].
    pub max_capacity: usize,
    /// Memory backing.
    pub backing: Backing,
}

impl RingConfig {
    /// Generic default: 1 MiB, growing up to 64 MiB.
    pub const DEFAULT_CAPACITY: usize = 1 << 20;
    /// Default growth bound.
    pub const DEFAULT_MAX_CAPACITY: usize = 64 << 20;

    /// A config with the given initial capacity and a growth bound of at least that much.
    pub fn with_capacity(capacity: usize) -> Self {
        Self {
            capacity,
            max_capacity: capacity.max(Self::DEFAULT_MAX_CAPACITY),
            backing: Backing::Auto,
        }
    }

    /// Sets the growth bound.
    pub fn max_capacity(mut self, max: usize) -> Self {
        self.max_capacity = max;
        self
    }

    /// Sets the backing.
    pub fn backing(mut self, backing: Backing) -> Self {
        self.backing = backing;
        self
    }

    /// The capacity and bound the ring will really use: powers of two, page multiples,
    /// and `capacity <= max_capacity`.
    pub(crate) fn normalized(&self) -> (usize, usize) {
        let page = crate::page_size();
        let round = |n: usize| n.max(page).next_power_of_two();
        let capacity = round(self.capacity);
        (capacity, round(self.max_capacity).max(capacity))
    }
}

impl Default for RingConfig {
    fn default() -> Self {
        Self::with_capacity(Self::DEFAULT_CAPACITY)
    }
}
