//! Zero-copy reader over one contiguous span.

use std::fmt;

use crate::status::Status;
use crate::varint::{self, MAX_VARINT32_LEN, MAX_VARINT_LEN};

/// The span ended before a read could finish: it must hold at least
/// `at_least` bytes (counted from the start of the cursor's span).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Incomplete {
    /// Minimum span length for the failed read to succeed.
    pub at_least: usize,
}

impl fmt::Display for Incomplete {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "input ends early: at least {} bytes needed",
            self.at_least
        )
    }
}

impl std::error::Error for Incomplete {}

/// Why a varint could not be read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VarintError {
    /// The encoding continues past the end of the span.
    Incomplete(Incomplete),
    /// The encoding is longer, or its value wider, than the target integer;
    /// no amount of further input can fix it.
    Overflow,
}

impl From<Incomplete> for VarintError {
    fn from(incomplete: Incomplete) -> Self {
        VarintError::Incomplete(incomplete)
    }
}

impl fmt::Display for VarintError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            VarintError::Incomplete(incomplete) => incomplete.fmt(f),
            VarintError::Overflow => f.write_str("varint overflows its integer type"),
        }
    }
}

impl std::error::Error for VarintError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            VarintError::Incomplete(incomplete) => Some(incomplete),
            VarintError::Overflow => None,
        }
    }
}

/// Zero-copy reader over one contiguous span.
///
/// Reads advance the position; a read that fails leaves it where it was, so
/// a parser may inspect the error and try something else. Slices returned
/// by [`take`](Cursor::take) borrow from the span, not from the cursor.
#[derive(Debug, Clone)]
pub struct Cursor<'a> {
    buf: &'a [u8],
    pos: usize,
}

/// Generates a fixed-width big-endian reader; one macro keeps the eight
/// integer readers identical apart from their type.
macro_rules! read_be {
    ($($(#[$doc:meta])* $name:ident -> $ty:ty;)*) => {$(
        $(#[$doc])*
        #[inline]
        pub fn $name(&mut self) -> Result<$ty, Incomplete> {
            self.array().map(<$ty>::from_be_bytes)
        }
    )*};
}

impl<'a> Cursor<'a> {
    /// Starts reading at the beginning of `buf`.
    #[must_use]
    #[inline]
    pub fn new(buf: &'a [u8]) -> Self {
        Cursor { buf, pos: 0 }
    }

    /// Number of bytes read so far.
    #[must_use]
    pub fn position(&self) -> usize {
        self.pos
    }

    /// The unread part of the span.
    #[must_use]
    #[inline]
    pub fn remaining(&self) -> &'a [u8] {
        &self.buf[self.pos..]
    }

    /// Returns `true` when every byte has been read.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.pos == self.buf.len()
    }

    /// Ends a successful parse: the value plus the bytes read so far.
    #[must_use]
    #[inline]
    pub fn complete<T>(&self, value: T) -> Status<T> {
        Status::Complete(value, self.pos)
    }

    /// Borrows the next `n` bytes without copying.
    #[inline]
    pub fn take(&mut self, n: usize) -> Result<&'a [u8], Incomplete> {
        let rest = self.remaining();
        if n > rest.len() {
            // Saturating: a length read off the wire may be absurd, and the
            // caller should see "needs more than can exist", not a wrap.
            return Err(Incomplete {
                at_least: self.pos.saturating_add(n),
            });
        }
        self.pos += n;
        Ok(&rest[..n])
    }

    /// Steps over the next `n` bytes.
    pub fn skip(&mut self, n: usize) -> Result<(), Incomplete> {
        self.take(n).map(drop)
    }

    /// Reads the next `N` bytes as an array.
    #[inline]
    fn array<const N: usize>(&mut self) -> Result<[u8; N], Incomplete> {
        let bytes = self.take(N)?;
        Ok(bytes.try_into().expect("take returned N bytes"))
    }

    /// Reads one byte.
    pub fn u8(&mut self) -> Result<u8, Incomplete> {
        self.array().map(u8::from_be_bytes)
    }

    /// Reads one byte as a two's-complement integer.
    pub fn i8(&mut self) -> Result<i8, Incomplete> {
        self.array().map(i8::from_be_bytes)
    }

    read_be! {
        /// Reads a big-endian `u16`.
        u16_be -> u16;
        /// Reads a big-endian `u32`.
        u32_be -> u32;
        /// Reads a big-endian `u64`.
        u64_be -> u64;
        /// Reads a big-endian `i16`.
        i16_be -> i16;
        /// Reads a big-endian `i32`.
        i32_be -> i32;
        /// Reads a big-endian `i64`.
        i64_be -> i64;
    }

    /// Reads an unsigned LEB128 value of at most 10 bytes; an encoding
    /// wider than 64 bits is [`VarintError::Overflow`].
    pub fn uvarint(&mut self) -> Result<u64, VarintError> {
        self.varint_raw(MAX_VARINT_LEN, u64::BITS)
    }

    /// Reads a zigzag varint (Kafka `varlong`, protobuf `sint64`).
    pub fn varint(&mut self) -> Result<i64, VarintError> {
        self.uvarint().map(varint::unzigzag)
    }

    /// Reads an unsigned LEB128 value of at most 5 bytes; an encoding
    /// wider than 32 bits is [`VarintError::Overflow`].
    pub fn uvarint32(&mut self) -> Result<u32, VarintError> {
        let v = self.varint_raw(MAX_VARINT32_LEN, u32::BITS)?;
        Ok(u32::try_from(v).expect("decode bounds the value to 32 bits"))
    }

    /// Reads a 32-bit zigzag varint (Kafka `varint`, protobuf `sint32`).
    pub fn varint32(&mut self) -> Result<i32, VarintError> {
        self.uvarint32().map(varint::unzigzag32)
    }

    /// Shared varint path: decodes from the unread bytes, then rebases
    /// `Incomplete` onto the whole span and advances only on success.
    fn varint_raw(&mut self, max_len: usize, bits: u32) -> Result<u64, VarintError> {
        match varint::decode(self.remaining(), max_len, bits) {
            Ok((value, len)) => {
                self.pos += len;
                Ok(value)
            }
            Err(VarintError::Incomplete(Incomplete { at_least })) => Err(Incomplete {
                at_least: self.pos + at_least,
            }
            .into()),
            Err(VarintError::Overflow) => Err(VarintError::Overflow),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    static BYTES: [u8; 9] = [0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09];

    /// Runs `read` on a cursor that has already consumed one byte, over
    /// every prefix of `BYTES`, checking success or the exact shortfall
    /// and that a failed read does not move the cursor.
    fn check<T: PartialEq + std::fmt::Debug>(
        name: &str,
        width: usize,
        read: impl Fn(&mut Cursor<'static>) -> Result<T, Incomplete>,
        expected: T,
    ) {
        for len in 1..=BYTES.len() {
            let mut cursor = Cursor::new(&BYTES[..len]);
            cursor.skip(1).unwrap();
            let result = read(&mut cursor);
            if len > width {
                assert_eq!(result.as_ref(), Ok(&expected), "{name} over {len} bytes");
                assert_eq!(cursor.position(), 1 + width, "{name} position");
            } else {
                let want = Incomplete {
                    at_least: 1 + width,
                };
                assert_eq!(result, Err(want), "{name} over {len} bytes");
                assert_eq!(cursor.position(), 1, "{name} moved on failure");
            }
        }
    }

    #[test]
    fn fixed_width_reads() {
        check("u8", 1, Cursor::u8, 0x02);
        check("i8", 1, Cursor::i8, 0x02);
        check("u16_be", 2, Cursor::u16_be, 0x0203);
        check("i16_be", 2, Cursor::i16_be, 0x0203);
        check("u32_be", 4, Cursor::u32_be, 0x0203_0405);
        check("i32_be", 4, Cursor::i32_be, 0x0203_0405);
        check("u64_be", 8, Cursor::u64_be, 0x0203_0405_0607_0809);
        check("i64_be", 8, Cursor::i64_be, 0x0203_0405_0607_0809);
        check("take(3)", 3, |c| c.take(3), &[2u8, 3, 4][..]);
        check("skip(3)", 3, |c| c.skip(3), ());
        check("take(0)", 0, |c| c.take(0), &[][..]);
    }

    #[test]
    fn signed_reads_are_twos_complement() {
        let ones = [0xffu8; 8];
        type Read = fn(&mut Cursor<'_>) -> i64;
        let table: &[(&str, Read)] = &[
            ("i8", |c| c.i8().unwrap().into()),
            ("i16_be", |c| c.i16_be().unwrap().into()),
            ("i32_be", |c| c.i32_be().unwrap().into()),
            ("i64_be", |c| c.i64_be().unwrap()),
        ];
        for (name, read) in table {
            assert_eq!(read(&mut Cursor::new(&ones)), -1, "{name}");
        }
    }

    #[test]
    fn take_borrows_from_the_span() {
        let buf = b"hello world".to_vec();
        let word = {
            let mut cursor = Cursor::new(&buf);
            cursor.skip(6).unwrap();
            cursor.take(5).unwrap()
        };
        // The slice outlives the cursor and points into `buf`.
        assert_eq!(word, b"world");
        assert!(std::ptr::eq(word.as_ptr(), buf[6..].as_ptr()));
    }

    #[test]
    fn take_saturates_absurd_lengths() {
        let mut cursor = Cursor::new(b"ab");
        cursor.skip(1).unwrap();
        assert_eq!(
            cursor.take(usize::MAX),
            Err(Incomplete {
                at_least: usize::MAX
            })
        );
        assert_eq!(cursor.position(), 1);
    }

    #[test]
    fn accessors() {
        let mut cursor = Cursor::new(b"xyz");
        assert_eq!((cursor.position(), cursor.remaining()), (0, &b"xyz"[..]));
        assert!(!cursor.is_empty());
        cursor.skip(3).unwrap();
        assert!(cursor.is_empty());
        assert_eq!(cursor.remaining(), b"");
        assert_eq!(cursor.complete('v'), Status::Complete('v', 3));
    }

    #[test]
    fn uvarint_table() {
        let overflow = Err(VarintError::Overflow);
        let short = |at_least| Err(VarintError::Incomplete(Incomplete { at_least }));
        let max = [0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01];
        let table: &[(&[u8], Result<u64, VarintError>, usize)] = &[
            (&[], short(2), 1),
            (&[0x00], Ok(0), 2),
            (&[0x7f], Ok(127), 2),
            (&[0x80], short(3), 1),
            (&[0x80, 0x01], Ok(128), 3),
            // Non-minimal encodings are accepted, as protobuf does.
            (&[0x80, 0x00], Ok(0), 3),
            (&max, Ok(u64::MAX), 11),
            (&max[..9], short(11), 1),
            // 10th byte carrying more than the 64th bit.
            (
                &[0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02],
                overflow,
                1,
            ),
            // 11-byte encodings are rejected at the 10th byte.
            (
                &[
                    0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00,
                ],
                overflow,
                1,
            ),
            (
                &[0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80],
                overflow,
                1,
            ),
        ];
        for (i, (bytes, want, pos)) in table.iter().enumerate() {
            // A leading byte checks that positions are rebased on the span.
            let mut buf = vec![0xaa];
            buf.extend_from_slice(bytes);
            let mut cursor = Cursor::new(&buf);
            cursor.skip(1).unwrap();
            assert_eq!(cursor.uvarint(), *want, "row {i}: {bytes:02x?}");
            assert_eq!(cursor.position(), *pos, "row {i}: position");
        }
    }

    #[test]
    fn uvarint32_table() {
        let overflow = Err(VarintError::Overflow);
        let short = |at_least| Err(VarintError::Incomplete(Incomplete { at_least }));
        let table: &[(&[u8], Result<u32, VarintError>, usize)] = &[
            (&[0x01], Ok(1), 1),
            (&[0xff, 0xff, 0xff, 0xff, 0x0f], Ok(u32::MAX), 5),
            (&[0xff, 0xff, 0xff, 0xff], short(5), 0),
            // 5th byte carrying more than 32 bits.
            (&[0xff, 0xff, 0xff, 0xff, 0x10], overflow, 0),
            // 6-byte encoding.
            (&[0x80, 0x80, 0x80, 0x80, 0x80, 0x00], overflow, 0),
        ];
        for (i, (bytes, want, pos)) in table.iter().enumerate() {
            let mut cursor = Cursor::new(bytes);
            assert_eq!(cursor.uvarint32(), *want, "row {i}: {bytes:02x?}");
            assert_eq!(cursor.position(), *pos, "row {i}: position");
        }
    }

    #[test]
    fn signed_varints() {
        let table: &[(&[u8], i64)] = &[
            (&[0x00], 0),
            (&[0x01], -1),
            (&[0x02], 1),
            (&[0x03], -2),
            (&[0xff, 0xff, 0xff, 0xff, 0x0f], i64::from(i32::MIN)),
            (&[0xfe, 0xff, 0xff, 0xff, 0x0f], i64::from(i32::MAX)),
        ];
        for (bytes, want) in table {
            assert_eq!(
                Cursor::new(bytes).varint(),
                Ok(*want),
                "varint {bytes:02x?}"
            );
            let want32 = i32::try_from(*want).unwrap();
            assert_eq!(
                Cursor::new(bytes).varint32(),
                Ok(want32),
                "varint32 {bytes:02x?}"
            );
        }
        let min = [0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01];
        assert_eq!(Cursor::new(&min).varint(), Ok(i64::MIN));
        assert_eq!(Cursor::new(&min).varint32(), Err(VarintError::Overflow));
        assert_eq!(
            Cursor::new(&[0x81]).varint32(),
            Err(VarintError::Incomplete(Incomplete { at_least: 2 }))
        );
    }

    #[test]
    fn errors_display() {
        assert_eq!(
            Incomplete { at_least: 4 }.to_string(),
            "input ends early: at least 4 bytes needed"
        );
        assert_eq!(
            VarintError::Overflow.to_string(),
            "varint overflows its integer type"
        );
        let err: VarintError = Incomplete { at_least: 2 }.into();
        assert!(std::error::Error::source(&err).is_some());
    }
}
