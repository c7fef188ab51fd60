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
        // A size past the largest power of two (`usize::MAX` for "no bound") rounds down to
        // it, rather than overflowing; the ring's double mapping must still fit an `isize`.
        let largest = 1 << (usize::BITS - 2);
        let round = |n: usize| {
            n.max(page)
                .checked_next_power_of_two()
                .unwrap_or(largest)
                .min(largest)
        };
        let capacity = round(self.capacity);
        (capacity, round(self.max_capacity).max(capacity))
    }
}

impl Default for RingConfig {
    fn default() -> Self {
        Self::with_capacity(Self::DEFAULT_CAPACITY)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_round_up_to_powers_of_two_and_huge_ones_saturate() {
        let page = crate::page_size();
        let config = RingConfig::with_capacity(page + 1).max_capacity(3 * page);
        assert_eq!(config.normalized(), (2 * page, 4 * page));
        let largest = 1 << (usize::BITS - 2);
        for huge in [usize::MAX, usize::MAX / 2 + 2, largest + 1] {
            let config = RingConfig::with_capacity(page).max_capacity(huge);
            assert_eq!(config.normalized(), (page, largest), "{huge:#x}");
        }
    }
}
