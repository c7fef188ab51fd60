//! Header blocks in, fields out (RFC 7541 sections 3, 6).

use super::table::{Table, ENTRY_OVERHEAD, STATIC, STATIC_LEN};
use super::{huffman, integer, DecodeError, Field};

/// The scratch room [`Decoder::reserve_table`] gives at once: a field's name and value,
/// as long as most fields are.
const FIELD_ROOM: usize = 256;

/// Decodes header blocks from one peer; one per connection and direction.
///
/// Fields are handed to a callback as slices: of the block itself for plain literal strings,
/// of the dynamic table or of a scratch buffer otherwise. Nothing is copied per field unless
/// it has to be (Huffman-decoded strings, names copied from the table for a new entry).
#[derive(Debug)]
pub struct Decoder {
    table: Table,
    /// Our `SETTINGS_HEADER_TABLE_SIZE`: the bound on size updates.
    max_table_size: usize,
    /// We lowered the bound below the table's size: the next block must start with an update.
    update_owed: bool,
    /// Huffman-decoded strings of the current field.
    scratch: Vec<u8>,
}

/// Where a decoded string lies until it is handed out.
#[derive(Clone, Copy)]
enum Str {
    Block(usize, usize),
    Scratch(usize, usize),
    Static(&'static [u8]),
}

impl Str {
    fn get<'a>(self, block: &'a [u8], scratch: &'a [u8]) -> &'a [u8] {
        match self {
            Str::Block(start, end) => &block[start..end],
            Str::Scratch(start, end) => &scratch[start..end],
            Str::Static(s) => s,
        }
    }
}

impl Decoder {
    /// A decoder whose peer may use a dynamic table of up to `max_table_size` bytes: the
    /// `SETTINGS_HEADER_TABLE_SIZE` this endpoint advertises (4096 unless it says otherwise).
    /// A dynamic table size update above it is an error.
    ///
    /// The table starts at that size. In HTTP/2 the peer assumes 4096 until it has our
    /// `SETTINGS`, so a connection starts with `new(4096)` and calls
    /// [`set_max_table_size`](Self::set_max_table_size) once they are acknowledged.
    #[must_use]
    pub fn new(max_table_size: usize) -> Self {
        Decoder {
            table: Table::new(max_table_size),
            max_table_size,
            update_owed: false,
            scratch: Vec::new(),
        }
    }

    /// Gives the dynamic table its whole room now (our own bound, `max_table_size`), and
    /// the scratch buffer room for a usual field, so that filling them later allocates
    /// nothing: a field that names an entry of the table copies that name into the scratch
    /// before its value (a new `date` naming the last one), which a warm-up with only
    /// the first `date` would not have seen.
    pub fn reserve_table(&mut self) {
        self.table.reserve_full();
        self.scratch.reserve(FIELD_ROOM);
    }

    #[cfg(test)]
    pub(super) fn scratch_capacity(&self) -> usize {
        self.scratch.capacity()
    }

    /// Changes the bound on the peer's table size, once the `SETTINGS` frame that announces
    /// it is acknowledged. When it drops below the table's current size, the next block must
    /// start with a size update within the new bound (RFC 7541 section 4.2).
    pub fn set_max_table_size(&mut self, n: usize) {
        self.max_table_size = n;
        if n < self.table.max_size() {
            self.update_owed = true;
        }
    }

    /// Decodes one complete header block (the payloads of a `HEADERS` or `PUSH_PROMISE`
    /// frame and its `CONTINUATION` frames, joined by the caller), calling `field` for each
    /// field in order.
    ///
    /// Literal strings that are not Huffman-coded are slices of `block` (zero copy); others
    /// are slices of the decoder's own storage, valid during the call. `max_list_size` bounds
    /// the decoded list as RFC 9113 section 6.5.2 counts it (name length + value length + 32
    /// per field): past it, [`DecodeError::ListTooLarge`], before the field that crosses it is
    /// handed out. It also bounds the decoder's scratch storage.
    ///
    /// # Errors
    ///
    /// Any [`DecodeError`]. Fields before the faulty one have been handed out. After an error
    /// the dynamic table is undefined: the caller must close the connection with a connection
    /// error of type `COMPRESSION_ERROR` (RFC 9113 section 4.3).
    pub fn decode(
        &mut self,
        block: &[u8],
        max_list_size: usize,
        mut field: impl FnMut(Field<'_>),
    ) -> Result<(), DecodeError> {
        let mut pos = 0;
        let mut list_size = 0usize;
        // Size updates are allowed until the first field (section 4.2).
        let mut at_start = true;
        while let Some(&first) = block.get(pos) {
            if first & 0xe0 == 0x20 {
                // Dynamic table size update (section 6.3).
                if !at_start {
                    return Err(DecodeError::TableSizeUpdateNotAtStart);
                }
                let asked = integer::decode(block, &mut pos, 5)?;
                if asked > self.max_table_size as u64 {
                    return Err(DecodeError::TableSizeUpdateTooLarge {
                        asked,
                        max: self.max_table_size as u64,
                    });
                }
                // `asked <= max_table_size`, a usize.
                self.table.set_max_size(asked as usize);
                self.update_owed = false;
                continue;
            }
            if self.update_owed {
                return Err(DecodeError::TableSizeUpdateMissing);
            }
            at_start = false;
            let limit = || DecodeError::ListTooLarge {
                limit: max_list_size as u64,
            };

            if first & 0x80 != 0 {
                // Indexed field (section 6.1).
                let index = integer::decode(block, &mut pos, 7)?;
                let (name, value) = entry(&self.table, index)?;
                list_size = add_field(list_size, name, value, max_list_size).ok_or_else(limit)?;
                field(Field {
                    name,
                    value,
                    sensitive: false,
                });
                continue;
            }

            // Literal field (section 6.2): with incremental indexing (01), without indexing
            // (0000) or never indexed (0001).
            let (prefix, indexing, sensitive) = if first & 0x40 != 0 {
                (6, true, false)
            } else {
                (4, false, first & 0x10 != 0)
            };
            self.scratch.clear();
            // The scratch holds at most the rest of the budget: a larger field fails anyway.
            let budget = max_list_size.saturating_sub(list_size.saturating_add(ENTRY_OVERHEAD));
            let index = integer::decode(block, &mut pos, prefix)?;
            let name = if index == 0 {
                self.string(block, &mut pos, budget, max_list_size)?
            } else {
                let (name, _) = entry(&self.table, index)?;
                if index as usize <= STATIC_LEN {
                    Str::Static(STATIC[index as usize - 1].0)
                } else {
                    // Copied: inserting the new entry may evict the one it names.
                    self.scratch.extend_from_slice(name);
                    Str::Scratch(0, name.len())
                }
            };
            let value = self.string(block, &mut pos, budget, max_list_size)?;
            let (name, value) = (
                name.get(block, &self.scratch),
                value.get(block, &self.scratch),
            );
            list_size = add_field(list_size, name, value, max_list_size).ok_or_else(limit)?;
            if indexing && self.table.insert(name, value) {
                // Hand out the table's copy: the scratch is reused by the next field.
                if let Some((name, value)) = self.table.get(0) {
                    field(Field {
                        name,
                        value,
                        sensitive,
                    });
                }
            } else {
                field(Field {
                    name,
                    value,
                    sensitive,
                });
            }
        }
        Ok(())
    }

    /// Reads a string literal (section 5.2) at `*pos`; a Huffman-coded one is decoded into
    /// the scratch buffer, which may not grow past `budget` bytes (else the list passes
    /// `max_list_size`).
    fn string(
        &mut self,
        block: &[u8],
        pos: &mut usize,
        budget: usize,
        max_list_size: usize,
    ) -> Result<Str, DecodeError> {
        let huffman = block.get(*pos).ok_or(DecodeError::Truncated)? & 0x80 != 0;
        let len = integer::decode(block, pos, 7)? as usize;
        let start = *pos;
        let end = start
            .checked_add(len)
            .filter(|&end| end <= block.len())
            .ok_or(DecodeError::Truncated)?;
        *pos = end;
        if !huffman {
            return Ok(Str::Block(start, end));
        }
        let from = self.scratch.len();
        // The scratch holds only this field's strings, so its length is a lower bound of the
        // field's share of the list.
        huffman::decode(&block[start..end], &mut self.scratch, budget).map_err(|e| match e {
            huffman::Error::Invalid => DecodeError::InvalidHuffman,
            huffman::Error::TooLong => DecodeError::ListTooLarge {
                limit: max_list_size as u64,
            },
        })?;
        Ok(Str::Scratch(from, self.scratch.len()))
    }

    #[cfg(test)]
    pub(super) fn table(&self) -> &Table {
        &self.table
    }
}

/// The entry at HPACK index `index` (section 2.3.3).
fn entry(table: &Table, index: u64) -> Result<(&[u8], &[u8]), DecodeError> {
    let i = index as usize;
    match i {
        1..=STATIC_LEN => Ok(STATIC[i - 1]),
        _ => i
            .checked_sub(STATIC_LEN + 1)
            .and_then(|i| table.get(i))
            .ok_or(DecodeError::InvalidIndex(index)),
    }
}

/// The list size with one more field, if within `max`.
fn add_field(list_size: usize, name: &[u8], value: &[u8], max: usize) -> Option<usize> {
    let size = list_size
        .saturating_add(name.len() + value.len())
        .saturating_add(ENTRY_OVERHEAD);
    (size <= max).then_some(size)
}
