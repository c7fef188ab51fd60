//! Records inside a batch: varint-framed, offsets and timestamps as deltas from the batch's.

use ringwire_wire::Cursor;

use crate::DecodeError;

/// A record header: a UTF-8 key and an optional value, both borrowed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Header<'a> {
    /// Key.
    pub key: &'a str,
    /// Value; `None` is a null value.
    pub value: Option<&'a [u8]>,
}

/// One record, borrowed from the batch (or from the scratch buffer of a compressed batch).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Record<'a> {
    /// Absolute offset.
    pub offset: i64,
    /// Absolute timestamp (the append time for LogAppendTime batches).
    pub timestamp: i64,
    /// Key; `None` is a null key.
    pub key: Option<&'a [u8]>,
    /// Value; `None` is a null value (a tombstone).
    pub value: Option<&'a [u8]>,
    /// Headers, validated when the record was read.
    pub headers: Headers<'a>,
}

/// A record's headers, decoded lazily from bytes that were validated when the record was read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Headers<'a> {
    bytes: &'a [u8],
    count: usize,
}

impl<'a> Headers<'a> {
    /// Number of headers.
    #[must_use]
    pub fn len(&self) -> usize {
        self.count
    }

    /// No headers.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }
}

impl<'a> Iterator for Headers<'a> {
    type Item = Header<'a>;

    fn next(&mut self) -> Option<Header<'a>> {
        if self.count == 0 {
            return None;
        }
        let mut c = Cursor::new(self.bytes);
        // Validated by `read_header` when the record was read; `ok()?` only ends iteration.
        let header = read_header(&mut c).ok()?;
        self.bytes = c.remaining();
        self.count -= 1;
        Some(header)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.count, Some(self.count))
    }
}

/// Decodes a zigzag varint of one or two bytes at the front of `c` (values -8192..8192:
/// nearly every record length, delta and key or value length), or `None` for the cursor's
/// general decoder. Record fields are all varints, and an out-of-line call for each was half
/// the walk's time in a profile.
#[inline(always)]
fn short_varint(c: &mut Cursor<'_>) -> Option<i32> {
    let raw = match *c.remaining() {
        [b0, ..] if b0 < 0x80 => {
            c.take(1).ok()?;
            u32::from(b0)
        }
        [b0, b1, ..] if b1 < 0x80 => {
            c.take(2).ok()?;
            u32::from(b0 & 0x7f) | u32::from(b1) << 7
        }
        _ => return None,
    };
    // Below 2^14, so both casts are lossless.
    Some((raw >> 1) as i32 ^ -((raw & 1) as i32))
}

/// Reads a 32-bit zigzag varint (Kafka `varint`).
#[inline(always)]
fn varint32(c: &mut Cursor<'_>) -> Result<i32, DecodeError> {
    match short_varint(c) {
        Some(v) => Ok(v),
        None => Ok(c.varint32()?),
    }
}

/// Reads a 64-bit zigzag varint (Kafka `varlong`).
#[inline(always)]
fn varint(c: &mut Cursor<'_>) -> Result<i64, DecodeError> {
    match short_varint(c) {
        Some(v) => Ok(v.into()),
        None => Ok(c.varint()?),
    }
}

/// Reads a varint length: -1 is null, below that is invalid.
#[inline(always)]
fn read_len(c: &mut Cursor<'_>, what: &'static str) -> Result<Option<usize>, DecodeError> {
    match varint32(c)? {
        -1 => Ok(None),
        // Non-negative, so the cast is lossless.
        len if len >= 0 => Ok(Some(len as usize)),
        len => Err(DecodeError::InvalidLength {
            what,
            len: len.into(),
        }),
    }
}

#[inline(always)]
fn read_nullable<'a>(
    c: &mut Cursor<'a>,
    what: &'static str,
) -> Result<Option<&'a [u8]>, DecodeError> {
    match read_len(c, what)? {
        Some(len) => Ok(Some(c.take(len)?)),
        None => Ok(None),
    }
}

fn read_header<'a>(c: &mut Cursor<'a>) -> Result<Header<'a>, DecodeError> {
    let key = read_nullable(c, "header key")?.ok_or(DecodeError::InvalidLength {
        what: "header key",
        len: -1,
    })?;
    let key =
        std::str::from_utf8(key).map_err(|_| DecodeError::InvalidUtf8 { what: "header key" })?;
    let value = read_nullable(c, "header value")?;
    Ok(Header { key, value })
}

/// The records of one batch, in order.
#[derive(Debug, Clone)]
pub struct Records<'a> {
    cursor: Cursor<'a>,
    declared: i32,
    read: i32,
    base_offset: i64,
    base_timestamp: i64,
    log_append_time: Option<i64>,
    done: bool,
}

impl<'a> Records<'a> {
    pub(crate) fn new(
        bytes: &'a [u8],
        declared: i32,
        base_offset: i64,
        base_timestamp: i64,
        log_append_time: Option<i64>,
    ) -> Self {
        Records {
            cursor: Cursor::new(bytes),
            declared,
            read: 0,
            base_offset,
            base_timestamp,
            log_append_time,
            done: false,
        }
    }

    fn read(&mut self) -> Result<Record<'a>, DecodeError> {
        let declared = read_len(&mut self.cursor, "record")?.ok_or(DecodeError::InvalidLength {
            what: "record",
            len: -1,
        })?;
        let body = self.cursor.take(declared)?;
        let mut c = Cursor::new(body);
        let _attributes = c.take(1)?;
        let timestamp_delta = varint(&mut c)?;
        let offset_delta = varint32(&mut c)?;
        let key = read_nullable(&mut c, "record key")?;
        let value = read_nullable(&mut c, "record value")?;
        let count = read_len(&mut c, "header count")?.unwrap_or(0);
        let headers_start = c.remaining();
        for _ in 0..count {
            read_header(&mut c)?;
        }
        let headers_len = headers_start.len() - c.remaining().len();
        if !c.is_empty() {
            return Err(DecodeError::RecordLength {
                declared,
                actual: c.position(),
            });
        }
        Ok(Record {
            offset: self.base_offset.wrapping_add(offset_delta.into()),
            timestamp: self
                .log_append_time
                .unwrap_or(self.base_timestamp.wrapping_add(timestamp_delta)),
            key,
            value,
            headers: Headers {
                bytes: &headers_start[..headers_len],
                count,
            },
        })
    }
}

impl<'a> Iterator for Records<'a> {
    type Item = Result<Record<'a>, DecodeError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        if self.read == self.declared || self.cursor.is_empty() {
            self.done = true;
            // Both must run out together: more records than declared, or fewer, is corruption.
            return (self.read != self.declared || !self.cursor.is_empty()).then_some(Err(
                DecodeError::RecordCount {
                    declared: self.declared,
                    // Bytes left over mean at least one record more than declared.
                    found: self.read + i32::from(!self.cursor.is_empty()),
                },
            ));
        }
        let record = self.read();
        self.read += 1;
        self.done = record.is_err();
        Some(record)
    }
}
