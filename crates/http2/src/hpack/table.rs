//! The static table (RFC 7541 Appendix A) and the dynamic table (sections 2.3.2, 4).

use std::collections::VecDeque;

/// Per-entry overhead in the table size (section 4.1).
pub(super) const ENTRY_OVERHEAD: usize = 32;

/// Entries of the static table; index 1 is `STATIC[0]`.
pub(super) const STATIC_LEN: usize = STATIC.len();

/// RFC 7541 Appendix A, verbatim: index 1 is the first element.
pub(super) const STATIC: [(&[u8], &[u8]); 61] = [
    (b":authority", b""),
    (b":method", b"GET"),
    (b":method", b"POST"),
    (b":path", b"/"),
    (b":path", b"/index.html"),
    (b":scheme", b"http"),
    (b":scheme", b"https"),
    (b":status", b"200"),
    (b":status", b"204"),
    (b":status", b"206"),
    (b":status", b"304"),
    (b":status", b"400"),
    (b":status", b"404"),
    (b":status", b"500"),
    (b"accept-charset", b""),
    (b"accept-encoding", b"gzip, deflate"),
    (b"accept-language", b""),
    (b"accept-ranges", b""),
    (b"accept", b""),
    (b"access-control-allow-origin", b""),
    (b"age", b""),
    (b"allow", b""),
    (b"authorization", b""),
    (b"cache-control", b""),
    (b"content-disposition", b""),
    (b"content-encoding", b""),
    (b"content-language", b""),
    (b"content-length", b""),
    (b"content-location", b""),
    (b"content-range", b""),
    (b"content-type", b""),
    (b"cookie", b""),
    (b"date", b""),
    (b"etag", b""),
    (b"expect", b""),
    (b"expires", b""),
    (b"from", b""),
    (b"host", b""),
    (b"if-match", b""),
    (b"if-modified-since", b""),
    (b"if-none-match", b""),
    (b"if-range", b""),
    (b"if-unmodified-since", b""),
    (b"last-modified", b""),
    (b"link", b""),
    (b"location", b""),
    (b"max-forwards", b""),
    (b"proxy-authenticate", b""),
    (b"proxy-authorization", b""),
    (b"range", b""),
    (b"referer", b""),
    (b"refresh", b""),
    (b"retry-after", b""),
    (b"server", b""),
    (b"set-cookie", b""),
    (b"strict-transport-security", b""),
    (b"transfer-encoding", b""),
    (b"user-agent", b""),
    (b"vary", b""),
    (b"via", b""),
    (b"www-authenticate", b""),
];

/// Static table matches for a field: the index of an entry with the same name and value, and
/// the index of the first entry with the same name.
pub(super) fn find_static(name: &[u8], value: &[u8]) -> (Option<usize>, Option<usize>) {
    // A `match` on the name: one length switch and a few compares, not 61 of them.
    let (first, last) = match name {
        b":authority" => (1, 1),
        b":method" => (2, 3),
        b":path" => (4, 5),
        b":scheme" => (6, 7),
        b":status" => (8, 14),
        b"accept-charset" => (15, 15),
        b"accept-encoding" => (16, 16),
        b"accept-language" => (17, 17),
        b"accept-ranges" => (18, 18),
        b"accept" => (19, 19),
        b"access-control-allow-origin" => (20, 20),
        b"age" => (21, 21),
        b"allow" => (22, 22),
        b"authorization" => (23, 23),
        b"cache-control" => (24, 24),
        b"content-disposition" => (25, 25),
        b"content-encoding" => (26, 26),
        b"content-language" => (27, 27),
        b"content-length" => (28, 28),
        b"content-location" => (29, 29),
        b"content-range" => (30, 30),
        b"content-type" => (31, 31),
        b"cookie" => (32, 32),
        b"date" => (33, 33),
        b"etag" => (34, 34),
        b"expect" => (35, 35),
        b"expires" => (36, 36),
        b"from" => (37, 37),
        b"host" => (38, 38),
        b"if-match" => (39, 39),
        b"if-modified-since" => (40, 40),
        b"if-none-match" => (41, 41),
        b"if-range" => (42, 42),
        b"if-unmodified-since" => (43, 43),
        b"last-modified" => (44, 44),
        b"link" => (45, 45),
        b"location" => (46, 46),
        b"max-forwards" => (47, 47),
        b"proxy-authenticate" => (48, 48),
        b"proxy-authorization" => (49, 49),
        b"range" => (50, 50),
        b"referer" => (51, 51),
        b"refresh" => (52, 52),
        b"retry-after" => (53, 53),
        b"server" => (54, 54),
        b"set-cookie" => (55, 55),
        b"strict-transport-security" => (56, 56),
        b"transfer-encoding" => (57, 57),
        b"user-agent" => (58, 58),
        b"vary" => (59, 59),
        b"via" => (60, 60),
        b"www-authenticate" => (61, 61),
        _ => return (None, None),
    };
    let exact = (first..=last).find(|&i| STATIC[i - 1].1 == value);
    (exact, Some(first))
}

/// The dynamic table: entries' names and values back to back in one buffer, oldest first,
/// plus one small record per entry. No allocation per entry; evicting the oldest entry moves
/// a start offset, and the dead prefix is dropped once it outweighs the live bytes (so each
/// byte is moved at most once on average).
#[derive(Debug, Default)]
pub(super) struct Table {
    /// `bytes[head..]` holds the live entries.
    bytes: Vec<u8>,
    head: usize,
    /// Oldest first: the newest entry (HPACK's lowest dynamic index) is at the back.
    entries: VecDeque<Entry>,
    /// Section 4.1's size: sum of name + value + 32.
    size: usize,
    max_size: usize,
}

#[derive(Debug, Clone, Copy)]
struct Entry {
    /// Offset in `Table::bytes`.
    start: usize,
    name_len: usize,
    value_len: usize,
}

impl Entry {
    fn len(&self) -> usize {
        self.name_len + self.value_len
    }
}

impl Table {
    pub(super) fn new(max_size: usize) -> Self {
        Table {
            max_size,
            ..Table::default()
        }
    }

    /// Number of entries.
    #[cfg(test)]
    pub(super) fn len(&self) -> usize {
        self.entries.len()
    }

    /// Section 4.1's size of the table.
    #[cfg(test)]
    pub(super) fn size(&self) -> usize {
        self.size
    }

    pub(super) fn max_size(&self) -> usize {
        self.max_size
    }

    /// Entry `i`, 0 being the newest (HPACK index 62).
    pub(super) fn get(&self, i: usize) -> Option<(&[u8], &[u8])> {
        let entry = *self.entries.get(self.entries.len().checked_sub(i + 1)?)?;
        let name_end = entry.start + entry.name_len;
        Some((
            &self.bytes[entry.start..name_end],
            &self.bytes[name_end..name_end + entry.value_len],
        ))
    }

    /// Changes the maximum size, evicting as needed (section 4.3).
    pub(super) fn set_max_size(&mut self, max_size: usize) {
        self.max_size = max_size;
        self.evict_to(max_size);
    }

    /// Adds an entry (section 4.4). Returns false if it is larger than the table, which is
    /// then empty.
    pub(super) fn insert(&mut self, name: &[u8], value: &[u8]) -> bool {
        let size = name.len() + value.len() + ENTRY_OVERHEAD;
        if size > self.max_size {
            self.evict_to(0);
            return false;
        }
        self.evict_to(self.max_size - size);
        if self.bytes.len() + name.len() + value.len() > self.bytes.capacity() {
            // Room from the evicted entries first: the buffer grows only with the live ones.
            self.compact();
        }
        let start = self.bytes.len();
        self.bytes.extend_from_slice(name);
        self.bytes.extend_from_slice(value);
        self.entries.push_back(Entry {
            start,
            name_len: name.len(),
            value_len: value.len(),
        });
        self.size += size;
        true
    }

    /// Matches in the table, newest first: the dynamic index (0 = newest) of an entry with
    /// this name and value, else of one with this name.
    pub(super) fn find(&self, name: &[u8], value: &[u8]) -> (Option<usize>, Option<usize>) {
        let mut named = None;
        for (i, entry) in self.entries.iter().rev().enumerate() {
            if entry.name_len != name.len() {
                continue;
            }
            let name_end = entry.start + entry.name_len;
            if &self.bytes[entry.start..name_end] != name {
                continue;
            }
            if &self.bytes[name_end..name_end + entry.value_len] == value {
                return (Some(i), Some(i));
            }
            named.get_or_insert(i);
        }
        (None, named)
    }

    fn evict_to(&mut self, limit: usize) {
        while self.size > limit {
            let Some(entry) = self.entries.pop_front() else {
                break;
            };
            self.size -= entry.len() + ENTRY_OVERHEAD;
            self.head += entry.len();
        }
        let live = self.bytes.len() - self.head;
        if self.head >= live {
            self.compact();
        }
    }

    /// Drops the evicted entries' bytes from the front of the buffer.
    fn compact(&mut self) {
        if self.head > 0 {
            self.bytes.drain(..self.head);
            for entry in &mut self.entries {
                entry.start -= self.head;
            }
            self.head = 0;
        }
    }

    /// Room for a full table, so that filling it allocates nothing more: the entries'
    /// bytes stay within `max_size`, and each entry counts at least 32.
    pub(super) fn reserve_full(&mut self) {
        self.bytes
            .reserve_exact(self.max_size.saturating_sub(self.bytes.len()));
        let entries = self.max_size / ENTRY_OVERHEAD;
        self.entries
            .reserve_exact(entries.saturating_sub(self.entries.len()));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn static_lookup() {
        assert_eq!(find_static(b":method", b"POST"), (Some(3), Some(2)));
        assert_eq!(find_static(b":method", b"PUT"), (None, Some(2)));
        assert_eq!(find_static(b"www-authenticate", b""), (Some(61), Some(61)));
        assert_eq!(find_static(b"x-custom", b""), (None, None));
        for (i, (name, value)) in STATIC.iter().enumerate() {
            let (exact, named) = find_static(name, value);
            assert_eq!(exact, Some(i + 1));
            assert_eq!(STATIC[named.unwrap() - 1].0, *name);
        }
    }

    #[test]
    fn a_reserved_table_fills_and_churns_without_growing() {
        let mut t = Table::new(4096);
        t.reserve_full();
        let (bytes, entries) = (t.bytes.capacity(), t.entries.capacity());
        // A new `date` each second, among fields that stay, as a server's answers bring;
        // and long values, whose bytes (not the 32 counted per entry) fill the table.
        for second in 0..10_000 {
            assert!(t.insert(b"date", format!("Fri, 27 Nov 2026 {second:08}").as_bytes()));
            assert!(t.insert(b"server", b"ringwire"));
            assert!(t.insert(b"x-long", format!("{second:0300}").as_bytes()));
            assert!(t.insert(b"x-n", format!("{}", second % 7).as_bytes()));
        }
        assert_eq!((t.bytes.capacity(), t.entries.capacity()), (bytes, entries));
        assert_eq!(t.get(0), Some((&b"x-n"[..], &b"3"[..])));
    }

    #[test]
    fn eviction() {
        let mut t = Table::new(100);
        assert!(t.insert(b"a", b"1")); // 34
        assert!(t.insert(b"b", b"2")); // 68
        assert!(t.insert(b"c", b"3")); // 102 > 100: "a" goes
        assert_eq!((t.len(), t.size()), (2, 68));
        assert_eq!(t.get(0), Some((&b"c"[..], &b"3"[..])));
        assert_eq!(t.get(1), Some((&b"b"[..], &b"2"[..])));
        assert_eq!(t.get(2), None);
        assert_eq!(t.find(b"b", b"2"), (Some(1), Some(1)));
        assert_eq!(t.find(b"b", b"9"), (None, Some(1)));
        t.set_max_size(40);
        assert_eq!((t.len(), t.size()), (1, 34));
        // Larger than the table: it empties.
        assert!(!t.insert(b"long-name", b"long-value"));
        assert_eq!((t.len(), t.size()), (0, 0));
        // Many inserts: the buffer stays bounded.
        t.set_max_size(4096);
        for i in 0..10_000u32 {
            let v = i.to_string();
            assert!(t.insert(b"k", v.as_bytes()));
            assert_eq!(t.get(0).unwrap().1, v.as_bytes());
        }
        assert!(t.bytes.len() <= 2 * 4096);
    }
}
