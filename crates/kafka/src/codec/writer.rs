//! Encoding Kafka primitives into a caller-owned span.

use ringwire_wire::{put_uvarint, uvarint_len, MAX_VARINT_LEN};

use crate::EncodeError;

/// Writes Kafka primitives into a span the caller owns (a send-ring reservation).
///
/// Writing past the end is not an error at the call: the writer keeps counting, and
/// [`finish`](Writer::finish) reports the full length needed. A writer over an empty span is
/// therefore how a message is measured before reserving room for it.
///
/// A [`splicing`](Writer::splicing) writer leaves the payload of every
/// [`records`](Writer::records) field out of the span and notes where it belongs, so a driver
/// can send record batches from where they lie (a vectored write) instead of copying them.
#[derive(Debug)]
pub struct Writer<'a> {
    buf: &'a mut [u8],
    /// Bytes written into `buf` (or that would have been).
    pos: usize,
    /// Bytes of the message left out of `buf`: spliced `records` payloads.
    spliced: usize,
    /// Where each spliced payload goes: its offset in `buf`. `None`: nothing is spliced.
    splices: Option<&'a mut Vec<usize>>,
    flexible: bool,
    /// The first field too long for its length prefix; reported by `finish`.
    too_long: Option<EncodeError>,
}

impl<'a> Writer<'a> {
    /// A writer into `buf`; `flexible` selects compact lengths and tagged fields.
    pub fn new(buf: &'a mut [u8], flexible: bool) -> Self {
        Writer {
            buf,
            pos: 0,
            spliced: 0,
            splices: None,
            flexible,
            too_long: None,
        }
    }

    /// A writer into `buf` that leaves `records` payloads out, pushing to `splices` the offset
    /// in `buf` where each one belongs, in the order written.
    pub fn splicing(buf: &'a mut [u8], flexible: bool, splices: &'a mut Vec<usize>) -> Self {
        Writer {
            splices: Some(splices),
            ..Writer::new(buf, flexible)
        }
    }

    /// Whether this message version uses compact encodings and tagged fields.
    #[must_use]
    pub fn is_flexible(&self) -> bool {
        self.flexible
    }

    /// Switches encodings mid-message (the request header's client id is never compact).
    pub(crate) fn set_flexible(&mut self, flexible: bool) {
        self.flexible = flexible;
    }

    /// Length of the message so far (spliced payloads included).
    #[must_use]
    pub fn position(&self) -> usize {
        self.pos + self.spliced
    }

    /// The bytes written into the span (spliced payloads excluded), or the length the span
    /// needs when it was too short.
    pub fn finish(self) -> Result<usize, EncodeError> {
        if let Some(err) = self.too_long {
            return Err(err);
        }
        if self.pos > self.buf.len() {
            return Err(EncodeError::BufferTooSmall { need: self.pos });
        }
        Ok(self.pos)
    }

    /// Overwrites 4 bytes at `at` with `value` (a size prefix filled in afterwards).
    pub(crate) fn patch_i32(&mut self, at: usize, value: i32) {
        if let Some(slot) = self.buf.get_mut(at..at + 4) {
            slot.copy_from_slice(&value.to_be_bytes());
        }
    }

    /// Appends raw bytes.
    pub fn bytes_raw(&mut self, bytes: &[u8]) {
        let end = self.pos + bytes.len();
        if let Some(slot) = self.buf.get_mut(self.pos..end) {
            slot.copy_from_slice(bytes);
        }
        self.pos = end;
    }

    /// Writes an `int8`.
    pub fn i8(&mut self, v: i8) {
        self.bytes_raw(&v.to_be_bytes());
    }

    /// Writes an `int16`.
    pub fn i16(&mut self, v: i16) {
        self.bytes_raw(&v.to_be_bytes());
    }

    /// Writes an `int32`.
    pub fn i32(&mut self, v: i32) {
        self.bytes_raw(&v.to_be_bytes());
    }

    /// Writes an `int64`.
    pub fn i64(&mut self, v: i64) {
        self.bytes_raw(&v.to_be_bytes());
    }

    /// Writes a `boolean`.
    pub fn bool(&mut self, v: bool) {
        self.bytes_raw(&[u8::from(v)]);
    }

    /// Writes a `uuid`.
    pub fn uuid(&mut self, v: &[u8; 16]) {
        self.bytes_raw(v);
    }

    /// Writes an `unsigned_varint`.
    pub fn uvarint(&mut self, v: u64) {
        let mut tmp = [0u8; MAX_VARINT_LEN];
        let n = put_uvarint(&mut tmp, v);
        debug_assert_eq!(n, uvarint_len(v));
        self.bytes_raw(&tmp[..n]);
    }

    /// Writes a length prefix: compact (`len + 1`, 0 for null) or classic (-1 for null).
    fn length(&mut self, what: &'static str, len: Option<usize>, wide: bool) {
        if self.flexible {
            self.uvarint(len.map_or(0, |len| len as u64 + 1));
            return;
        }
        let max = if wide {
            i32::MAX as usize
        } else {
            i16::MAX as usize
        };
        match len {
            None if wide => self.i32(-1),
            None => self.i16(-1),
            Some(len) if len > max => {
                self.too_long
                    .get_or_insert(EncodeError::TooLong { what, len });
            }
            // Both casts are bounded by `max` just above.
            Some(len) if wide => self.i32(len as i32),
            Some(len) => self.i16(len as i16),
        }
    }

    /// Writes a `nullable_string` (or its compact form).
    pub fn nullable_string(&mut self, what: &'static str, v: Option<&str>) {
        self.length(what, v.map(str::len), false);
        if let Some(v) = v {
            self.bytes_raw(v.as_bytes());
        }
    }

    /// Writes a `string` (or `compact_string`).
    pub fn string(&mut self, what: &'static str, v: &str) {
        self.nullable_string(what, Some(v));
    }

    /// Writes `nullable_bytes` (or its compact form).
    pub fn nullable_bytes(&mut self, what: &'static str, v: Option<&[u8]>) {
        self.length(what, v.map(<[u8]>::len), true);
        if let Some(v) = v {
            self.bytes_raw(v);
        }
    }

    /// Writes a `records` field (or its compact form): encoded record batches, spliced when
    /// the writer splices.
    pub fn records(&mut self, what: &'static str, v: &[u8]) {
        self.length(what, Some(v.len()), true);
        match &mut self.splices {
            Some(splices) => {
                splices.push(self.pos);
                self.spliced += v.len();
            }
            None => self.bytes_raw(v),
        }
    }

    /// Writes a (nullable) array's element count.
    pub fn array_len(&mut self, what: &'static str, len: Option<usize>) {
        self.length(what, len, true);
    }

    /// Writes an array, each element with `element`.
    pub fn array<T>(
        &mut self,
        what: &'static str,
        items: &[T],
        mut element: impl FnMut(&mut Self, &T),
    ) {
        self.array_len(what, Some(items.len()));
        for item in items {
            element(self, item);
        }
    }

    /// Writes an empty tagged-field section (flexible versions only).
    pub fn tagged_fields(&mut self) {
        if self.flexible {
            self.uvarint(0);
        }
    }
}
