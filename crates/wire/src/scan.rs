//! Resumable delimiter search over a buffer that grows between calls.

use memchr::memmem::Finder;

/// The delimiter, with the fastest search for its length.
// The size gap is accepted: a Scan lives inside its parser and is built
// once, while boxing the Finder would add an indirection to every search.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone)]
enum Needle {
    Byte(u8),
    Bytes(Finder<'static>),
}

/// Resumable search for one delimiter in a buffer that grows between calls.
///
/// Text protocols (HTTP headers, line-based commands) look for a delimiter
/// in a message that arrives piecewise. Searching the whole buffer on every
/// arrival is quadratic; a `Scan` remembers how far it got and only
/// re-examines the last `needle.len() - 1` bytes, which might start a
/// delimiter split across arrivals.
///
/// Between calls the haystack must keep its old bytes at the same offsets
/// and may only grow; after dropping bytes from its front, call
/// [`reset`](Scan::reset).
#[derive(Debug, Clone)]
pub struct Scan {
    needle: Needle,
    /// Haystack length already searched: no match starts before
    /// `next - (needle.len() - 1)`.
    next: usize,
    /// Bytes handed to the search since creation, for cost accounting.
    scanned: usize,
}

impl Scan {
    /// Prepares a search for `needle`, copying it so the `Scan` owns it.
    ///
    /// # Panics
    ///
    /// If `needle` is empty: it would match everywhere, which is always a
    /// caller bug.
    #[must_use]
    pub fn new(needle: &[u8]) -> Self {
        let needle = match needle {
            [] => panic!("Scan needle must not be empty"),
            [byte] => Needle::Byte(*byte),
            _ => Needle::Bytes(Finder::new(needle).into_owned()),
        };
        Scan {
            needle,
            next: 0,
            scanned: 0,
        }
    }

    /// The delimiter being searched for.
    #[must_use]
    pub fn needle(&self) -> &[u8] {
        match &self.needle {
            Needle::Byte(byte) => std::slice::from_ref(byte),
            Needle::Bytes(finder) => finder.needle(),
        }
    }

    /// Finds the first delimiter in `haystack`, returning the index of its
    /// first byte. Bytes searched by earlier calls are not searched again.
    ///
    /// On a miss the progress is kept; on a hit the `Scan` resets itself,
    /// ready for the next message.
    pub fn find(&mut self, haystack: &[u8]) -> Option<usize> {
        let overlap = self.needle().len() - 1;
        let start = self.next.saturating_sub(overlap).min(haystack.len());
        let window = &haystack[start..];
        let hit = match &self.needle {
            Needle::Byte(byte) => memchr::memchr(*byte, window),
            Needle::Bytes(finder) => finder.find(window),
        };
        match hit {
            Some(offset) => {
                self.scanned = self.scanned.saturating_add(offset + overlap + 1);
                self.next = 0;
                Some(start + offset)
            }
            None => {
                self.scanned = self.scanned.saturating_add(window.len());
                self.next = haystack.len();
                None
            }
        }
    }

    /// Forgets the progress, e.g. after the haystack lost bytes at its front.
    pub fn reset(&mut self) {
        self.next = 0;
    }

    /// Total bytes handed to the search since this `Scan` was created
    /// (not cleared by hits or [`reset`](Scan::reset)); lets tests and
    /// benchmarks check that growing input is not rescanned.
    #[must_use]
    pub fn scanned(&self) -> usize {
        self.scanned
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[should_panic(expected = "must not be empty")]
    fn empty_needle_panics() {
        let _ = Scan::new(b"");
    }

    #[test]
    fn needle_is_kept() {
        assert_eq!(Scan::new(b"\n").needle(), b"\n");
        assert_eq!(Scan::new(b"\r\n\r\n").needle(), b"\r\n\r\n");
    }

    /// A delimiter split across two arrivals at every possible point, for
    /// single- and multi-byte needles, is found at the right index.
    #[test]
    fn finds_delimiter_split_at_every_position() {
        for needle in [&b"\n"[..], b"\r\n", b"\r\n\r\n", b"--boundary--"] {
            let mut message = b"GET / HTTP/1.1\r\nHost: x\r".to_vec();
            let at = message.len();
            message.extend_from_slice(needle);
            message.extend_from_slice(b"body");
            for cut in 0..=message.len() {
                let mut scan = Scan::new(needle);
                let first = scan.find(&message[..cut]);
                let found = first.or_else(|| scan.find(&message));
                let reference = message
                    .windows(needle.len())
                    .position(|w| w == needle)
                    .unwrap();
                assert!(reference <= at);
                assert_eq!(found, Some(reference), "needle {needle:?} cut at {cut}");
            }
        }
    }

    #[test]
    fn hit_resets_for_the_next_message() {
        let mut scan = Scan::new(b"\r\n");
        assert_eq!(scan.find(b"abc\r"), None);
        assert_eq!(scan.find(b"abc\r\nde"), Some(3));
        // The caller consumed "abc\r\n"; a fresh search starts at 0.
        assert_eq!(scan.find(b"de\r\n"), Some(2));
    }

    #[test]
    fn reset_forgets_progress() {
        let mut scan = Scan::new(b"ab");
        assert_eq!(scan.find(b"xxxx"), None);
        scan.reset();
        // Same length but new contents (front was consumed and refilled).
        assert_eq!(scan.find(b"abxx"), Some(0));
    }

    #[test]
    fn shrunk_haystack_does_not_panic() {
        let mut scan = Scan::new(b"ab");
        assert_eq!(scan.find(b"xxxxxx"), None);
        assert_eq!(scan.find(b"xx"), None);
    }

    /// Growing a 4096-byte buffer one byte per call must cost O(n) searched
    /// bytes, not the O(n^2) of searching from the start each time.
    #[test]
    fn growth_by_one_byte_is_linear() {
        const N: usize = 4096;
        for needle in [&b"\n"[..], b"\r\n\r\n"] {
            let mut data = vec![b'a'; N];
            data[N - needle.len()..].copy_from_slice(needle);
            let mut scan = Scan::new(needle);
            let mut found = None;
            for len in 1..=N {
                found = scan.find(&data[..len]);
                if found.is_some() {
                    assert_eq!(len, N);
                }
            }
            assert_eq!(found, Some(N - needle.len()));
            // Each call re-examines at most needle.len() - 1 old bytes.
            let bound = N + (N - 1) * (needle.len() - 1);
            assert!(
                scan.scanned() <= bound,
                "needle {needle:?}: scanned {} > {bound}",
                scan.scanned()
            );
            // Quadratic rescanning would be about N^2 / 2.
            assert!(scan.scanned() < N * N / 100);
        }
    }
}
