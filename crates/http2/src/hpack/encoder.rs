//! Fields in, header blocks out (RFC 7541 sections 2.1, 6).

use super::table::{find_static, Table, ENTRY_OVERHEAD, STATIC_LEN};
use super::{huffman, integer, Field};

/// The table size a peer allows until its `SETTINGS` say otherwise (RFC 9113 section 6.5.2).
const DEFAULT_TABLE_SIZE: usize = 4096;

/// Encodes header blocks for one peer; one per connection and direction.
///
/// Policy, per field:
/// - [`sensitive`](Field::sensitive): a never-indexed literal (section 6.2.3), so that no
///   intermediary adds it to a table either;
/// - a name and value in the static or dynamic table: that index (section 6.1);
/// - otherwise a literal naming the static table's entry, or the dynamic table's, when either
///   has the name; with incremental indexing (section 6.2.1) unless the field is unlikely to
///   repeat (`:path`, `content-length`, `age`, validators and ranges) or would take
///   more than 3/4 of the table (evicting most of it for one field).
///
/// Strings are Huffman-coded when that is shorter. Names are written as given: HTTP/2 wants
/// them lowercase (RFC 9113 section 8.2.1), which is the caller's job.
#[derive(Debug)]
pub struct Encoder {
    table: Table,
    /// Size updates owed since the last block: the smallest size and the last (section 4.2).
    pending: Option<(usize, usize)>,
}

impl Default for Encoder {
    fn default() -> Self {
        Self::new()
    }
}

impl Encoder {
    /// An encoder for a peer whose `SETTINGS_HEADER_TABLE_SIZE` is the default, 4096.
    #[must_use]
    pub fn new() -> Self {
        Encoder {
            table: Table::new(DEFAULT_TABLE_SIZE),
            pending: None,
        }
    }

    /// The peer's `SETTINGS_HEADER_TABLE_SIZE` is now `n`: the next block starts with a
    /// dynamic table size update (the smallest size set since the last block if below the
    /// table's, then the last one, as RFC 7541 section 4.2 asks), and the table never
    /// exceeds `n`.
    pub fn set_max_table_size(&mut self, n: usize) {
        let smallest = match self.pending {
            Some((smallest, _)) => smallest.min(n),
            None => n,
        };
        self.pending = Some((smallest, n));
    }

    /// Appends the encoding of `fields`, in order, to `out` as one header block.
    pub fn encode<'f>(&mut self, fields: impl IntoIterator<Item = Field<'f>>, out: &mut Vec<u8>) {
        if let Some((smallest, last)) = self.pending.take() {
            // The decoder evicts as it reads each update, as the table does here.
            if smallest < self.table.max_size() {
                integer::encode(smallest, 5, 0x20, out);
                self.table.set_max_size(smallest);
            }
            if last != self.table.max_size() {
                integer::encode(last, 5, 0x20, out);
                self.table.set_max_size(last);
            }
        }
        for field in fields {
            self.field(field, out);
        }
    }

    /// An encoder whose table starts at `n` bytes without announcing it, as in RFC 7541 C.6.
    #[cfg(test)]
    pub(super) fn with_table_size(n: usize) -> Self {
        Encoder {
            table: Table::new(n),
            pending: None,
        }
    }

    fn field(&mut self, field: Field<'_>, out: &mut Vec<u8>) {
        let (name, value) = (field.name, field.value);
        let (static_exact, static_name) = find_static(name, value);
        let (dynamic_exact, dynamic_name) = if static_exact.is_some() {
            (None, None)
        } else {
            self.table.find(name, value)
        };
        let dynamic = |i: usize| i + STATIC_LEN + 1;
        if !field.sensitive {
            if let Some(index) = static_exact.or(dynamic_exact.map(dynamic)) {
                integer::encode(index, 7, 0x80, out);
                return;
            }
        }
        // The static index first: it never moves, so it is the one most often repeated.
        let name_index = static_name.or(dynamic_name.map(dynamic)).unwrap_or(0);
        let size = name.len() + value.len() + ENTRY_OVERHEAD;
        if field.sensitive {
            integer::encode(name_index, 4, 0x10, out);
        } else if size <= self.table.max_size() / 4 * 3 && !is_volatile(name) {
            integer::encode(name_index, 6, 0x40, out);
            self.table.insert(name, value);
        } else {
            integer::encode(name_index, 4, 0x00, out);
        }
        if name_index == 0 {
            string(name, out);
        }
        string(value, out);
    }
}

/// Fields whose values rarely repeat on a connection: not worth a table entry.
fn is_volatile(name: &[u8]) -> bool {
    matches!(
        name,
        b":path"
            | b"content-length"
            | b"content-range"
            | b"etag"
            | b"if-modified-since"
            | b"if-none-match"
            | b"if-range"
            | b"last-modified"
            | b"age"
    )
}

/// Appends a string literal (section 5.2), Huffman-coded when that is shorter.
fn string(s: &[u8], out: &mut Vec<u8>) {
    let coded = huffman::encoded_len(s);
    if coded < s.len() {
        integer::encode(coded, 7, 0x80, out);
        huffman::encode(s, out);
    } else {
        integer::encode(s.len(), 7, 0x00, out);
        out.extend_from_slice(s);
    }
}
