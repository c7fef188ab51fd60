//! Decoding Kafka primitives from a complete frame, borrowing strings and bytes from it.

use ringwire_wire::{Cursor, Limit};

use crate::DecodeError;

/// Reads Kafka primitives out of one complete response body. Running out of bytes is
/// [`DecodeError::Truncated`]: the frame is whole, so missing bytes will never come.
#[derive(Debug, Clone)]
pub struct Reader<'a> {
    cursor: Cursor<'a>,
    flexible: bool,
}

impl<'a> Reader<'a> {
    /// A reader over `buf`; `flexible` selects compact lengths and tagged fields.
    #[must_use]
    pub fn new(buf: &'a [u8], flexible: bool) -> Self {
        Reader {
            cursor: Cursor::new(buf),
            flexible,
        }
    }

    /// Whether this message version uses compact encodings and tagged fields.
    #[must_use]
    pub fn is_flexible(&self) -> bool {
        self.flexible
    }

    /// Bytes read so far.
    #[must_use]
    pub fn position(&self) -> usize {
        self.cursor.position()
    }

    /// The unread bytes.
    #[must_use]
    pub fn remaining(&self) -> &'a [u8] {
        self.cursor.remaining()
    }

    /// Reads an `int8`.
    pub fn i8(&mut self) -> Result<i8, DecodeError> {
        Ok(self.cursor.i8()?)
    }

    /// Reads an `int16`.
    pub fn i16(&mut self) -> Result<i16, DecodeError> {
        Ok(self.cursor.i16_be()?)
    }

    /// Reads an `int32`.
    pub fn i32(&mut self) -> Result<i32, DecodeError> {
        Ok(self.cursor.i32_be()?)
    }

    /// Reads an `int64`.
    pub fn i64(&mut self) -> Result<i64, DecodeError> {
        Ok(self.cursor.i64_be()?)
    }

    /// Reads a `boolean`: exactly 0 or 1.
    pub fn bool(&mut self) -> Result<bool, DecodeError> {
        match self.cursor.u8()? {
            0 => Ok(false),
            1 => Ok(true),
            _ => Err(DecodeError::InvalidBool),
        }
    }

    /// Reads a `uuid` (16 bytes).
    pub fn uuid(&mut self) -> Result<[u8; 16], DecodeError> {
        let bytes = self.cursor.take(16)?;
        Ok(bytes.try_into().expect("take returned 16 bytes"))
    }

    /// Reads an `unsigned_varint`.
    pub fn uvarint(&mut self) -> Result<u32, DecodeError> {
        Ok(self.cursor.uvarint32()?)
    }

    /// Reads a length that may be null (-1): `int16`/`int32` classic, or a compact
    /// `unsigned_varint` holding length + 1 (0 is null).
    fn length(&mut self, what: &'static str, wide: bool) -> Result<Option<usize>, DecodeError> {
        let len = if self.flexible {
            i64::from(self.uvarint()?) - 1
        } else if wide {
            i64::from(self.i32()?)
        } else {
            i64::from(self.i16()?)
        };
        match len {
            -1 => Ok(None),
            len if len < -1 => Err(DecodeError::InvalidLength { what, len }),
            // Non-negative and at most u32::MAX, so it fits usize on the 64-bit targets
            // ringwire supports; saturating keeps 32-bit targets panic-free.
            len => Ok(Some(usize::try_from(len).unwrap_or(usize::MAX))),
        }
    }

    /// Reads a `nullable_string` (or `compact_nullable_string`).
    pub fn nullable_string(&mut self, what: &'static str) -> Result<Option<&'a str>, DecodeError> {
        let Some(len) = self.length(what, false)? else {
            return Ok(None);
        };
        let bytes = self.cursor.take(len)?;
        std::str::from_utf8(bytes)
            .map(Some)
            .map_err(|_| DecodeError::InvalidUtf8 { what })
    }

    /// Reads a `string` (or `compact_string`): null is an error.
    pub fn string(&mut self, what: &'static str) -> Result<&'a str, DecodeError> {
        self.nullable_string(what)?
            .ok_or(DecodeError::InvalidLength { what, len: -1 })
    }

    /// Reads `nullable_bytes` or `records` (or their compact forms), borrowed.
    pub fn nullable_bytes(&mut self, what: &'static str) -> Result<Option<&'a [u8]>, DecodeError> {
        match self.length(what, true)? {
            Some(len) => Ok(Some(self.cursor.take(len)?)),
            None => Ok(None),
        }
    }

    /// Reads an array's element count; null (-1) is `None`. Every element takes at least one
    /// byte, so a count above the unread length is refused before anything is allocated.
    pub fn array_len(&mut self, what: &'static str) -> Result<Option<usize>, DecodeError> {
        let Some(len) = self.length(what, true)? else {
            return Ok(None);
        };
        Limit::new(what, self.remaining().len()).check(len)?;
        Ok(Some(len))
    }

    /// Reads a nullable array, decoding each element with `element`.
    pub fn nullable_array<T>(
        &mut self,
        what: &'static str,
        mut element: impl FnMut(&mut Self) -> Result<T, DecodeError>,
    ) -> Result<Option<Vec<T>>, DecodeError> {
        let Some(len) = self.array_len(what)? else {
            return Ok(None);
        };
        let mut items = Vec::with_capacity(len);
        for _ in 0..len {
            items.push(element(self)?);
        }
        Ok(Some(items))
    }

    /// Reads an array where null means empty.
    pub fn array<T>(
        &mut self,
        what: &'static str,
        element: impl FnMut(&mut Self) -> Result<T, DecodeError>,
    ) -> Result<Vec<T>, DecodeError> {
        Ok(self.nullable_array(what, element)?.unwrap_or_default())
    }

    /// Skips the tagged-field section that ends every structure of a flexible version (no-op
    /// otherwise). No tag this crate decodes carries data it needs, so all are skipped.
    pub fn tagged_fields(&mut self) -> Result<(), DecodeError> {
        if !self.flexible {
            return Ok(());
        }
        let count = self.uvarint()?;
        Limit::new("tagged field count", self.remaining().len())
            .check(usize::try_from(count).unwrap_or(usize::MAX))?;
        for _ in 0..count {
            let _tag = self.uvarint()?;
            let size = self.uvarint()?;
            self.cursor
                .skip(usize::try_from(size).unwrap_or(usize::MAX))?;
        }
        Ok(())
    }
}
