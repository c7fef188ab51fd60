//! LEB128 varints: encoders for writers, the decoder behind [`Cursor`].
//!
//! [`Cursor`]: crate::Cursor

use crate::cursor::{Incomplete, VarintError};

/// Longest encoding of a 64-bit varint; a writer reserving this many bytes
/// never needs to call [`uvarint_len`] first.
pub const MAX_VARINT_LEN: usize = 10;

/// Longest encoding of a 32-bit varint (Kafka's `varint`, protobuf's `int32`
/// when non-negative).
pub const MAX_VARINT32_LEN: usize = 5;

/// Number of bytes [`put_uvarint`] writes for `v` (1..=10).
#[must_use]
#[inline]
pub fn uvarint_len(v: u64) -> usize {
    // `| 1` makes zero take one byte like every value below 128.
    let significant_bits = 64 - (v | 1).leading_zeros() as usize;
    significant_bits.div_ceil(7)
}

/// Number of bytes [`put_varint`] writes for `v` (1..=10).
#[must_use]
#[inline]
pub fn varint_len(v: i64) -> usize {
    uvarint_len(zigzag(v))
}

/// Writes `v` as unsigned LEB128 at the start of `buf`; returns the number
/// of bytes written.
///
/// # Panics
///
/// If `buf` is shorter than [`uvarint_len`]`(v)`; reserve
/// [`MAX_VARINT_LEN`] bytes to rule that out.
#[inline]
pub fn put_uvarint(buf: &mut [u8], mut v: u64) -> usize {
    let len = uvarint_len(v);
    assert!(
        buf.len() >= len,
        "put_uvarint needs {len} bytes but the buffer holds {}",
        buf.len()
    );
    let (last, body) = buf[..len].split_last_mut().expect("len is at least 1");
    for byte in body {
        // Truncation keeps the low 7 bits we want; the high bit marks "more".
        *byte = v as u8 | 0x80;
        v >>= 7;
    }
    *last = v as u8;
    len
}

/// Writes `v` zigzag-encoded (as Kafka and protobuf `sint` do) at the start
/// of `buf`; returns the number of bytes written.
///
/// An `i32` widened to `i64` encodes to the same bytes as 32-bit zigzag, so
/// this also serves [`Cursor::varint32`](crate::Cursor::varint32) readers.
///
/// # Panics
///
/// If `buf` is shorter than [`varint_len`]`(v)`.
#[inline]
pub fn put_varint(buf: &mut [u8], v: i64) -> usize {
    put_uvarint(buf, zigzag(v))
}

/// Appends `v` zigzag-encoded (as [`put_varint`] writes it) to `out`.
#[inline]
pub fn push_varint(out: &mut Vec<u8>, v: i64) {
    push_uvarint(out, zigzag(v));
}

/// Appends `v` as unsigned LEB128 to `out`. Up to eight bytes are built in a
/// register and stored at once: bytes stored one by one into a scratch array
/// and then copied out as a word stall the copy (its load cannot be
/// forwarded from the byte stores), a quarter of encoding a Kafka record.
#[inline]
pub fn push_uvarint(out: &mut Vec<u8>, mut v: u64) {
    if v < 0x80 {
        out.push(v as u8);
        return;
    }
    let len = uvarint_len(v);
    if len > 8 {
        let mut tmp = [0; MAX_VARINT_LEN];
        let n = put_uvarint(&mut tmp, v);
        out.extend_from_slice(&tmp[..n]);
        return;
    }
    let mut word = 0u64;
    for i in 0..len - 1 {
        word |= u64::from(v as u8 | 0x80) << (8 * i);
        v >>= 7;
    }
    word |= v << (8 * (len - 1));
    let at = out.len();
    out.extend_from_slice(&word.to_le_bytes());
    out.truncate(at + len);
}

/// Maps small magnitudes of either sign to small unsigned values.
#[inline]
fn zigzag(v: i64) -> u64 {
    ((v << 1) ^ (v >> 63)) as u64
}

/// Inverse of [`zigzag`].
pub(crate) fn unzigzag(u: u64) -> i64 {
    (u >> 1) as i64 ^ -((u & 1) as i64)
}

/// Inverse of 32-bit zigzag; `u` must fit in 32 bits.
pub(crate) fn unzigzag32(u: u32) -> i32 {
    (u >> 1) as i32 ^ -((u & 1) as i32)
}

/// Decodes unsigned LEB128 of at most `max_len` bytes whose value must fit in
/// `bits` bits. Returns the value and its encoded length; `Incomplete`
/// positions are relative to `buf`.
pub(crate) fn decode(buf: &[u8], max_len: usize, bits: u32) -> Result<(u64, usize), VarintError> {
    let mut value = 0u64;
    for (i, shift) in (0..max_len).zip((0..).step_by(7)) {
        let Some(&byte) = buf.get(i) else {
            return Err(Incomplete { at_least: i + 1 }.into());
        };
        // The last allowed byte may only carry the bits left over; a set
        // continuation bit there also lands here, so it is rejected as soon
        // as it is visible instead of waiting for an 11th byte.
        if i + 1 == max_len && u32::from(byte) >> (bits - shift) != 0 {
            return Err(VarintError::Overflow);
        }
        value |= u64::from(byte & 0x7f) << shift;
        if byte & 0x80 == 0 {
            return Ok((value, i + 1));
        }
    }
    Err(VarintError::Overflow)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Cursor;
    use proptest::prelude::*;

    #[test]
    fn pushed_varints_match_written_ones() {
        let edges = (0..64).flat_map(|bit| {
            let p = 1i64.wrapping_shl(bit);
            [
                p,
                p.wrapping_sub(1),
                p.wrapping_add(1),
                p.wrapping_neg(),
                i64::MIN,
                i64::MAX,
            ]
        });
        for v in edges.chain(-300..300) {
            let mut want = [0; MAX_VARINT_LEN];
            let n = put_varint(&mut want, v);
            let mut out = vec![7];
            push_varint(&mut out, v);
            assert_eq!(out[1..], want[..n], "{v}");
            assert_eq!(out[0], 7);
            let mut out = Vec::new();
            push_uvarint(&mut out, v as u64);
            let n = put_uvarint(&mut want, v as u64);
            assert_eq!(out, want[..n], "{v} unsigned");
        }
    }

    #[test]
    fn lengths_at_boundaries() {
        let table: &[(u64, usize)] = &[
            (0, 1),
            (127, 1),
            (128, 2),
            (16_383, 2),
            (16_384, 3),
            (u64::from(u32::MAX), 5),
            ((1 << 63) - 1, 9),
            (1 << 63, 10),
            (u64::MAX, 10),
        ];
        for &(v, len) in table {
            assert_eq!(uvarint_len(v), len, "uvarint_len({v})");
            let mut buf = [0u8; MAX_VARINT_LEN];
            assert_eq!(put_uvarint(&mut buf, v), len, "put_uvarint({v})");
        }
    }

    #[test]
    fn known_encodings() {
        let table: &[(u64, &[u8])] = &[
            (0, &[0x00]),
            (1, &[0x01]),
            (300, &[0xac, 0x02]),
            (
                u64::MAX,
                &[0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01],
            ),
        ];
        for &(v, bytes) in table {
            let mut buf = [0u8; MAX_VARINT_LEN];
            let n = put_uvarint(&mut buf, v);
            assert_eq!(&buf[..n], bytes, "encoding of {v}");
        }
    }

    #[test]
    fn zigzag_table() {
        let table: &[(i64, u64)] = &[
            (0, 0),
            (-1, 1),
            (1, 2),
            (-2, 3),
            (i64::MAX, u64::MAX - 1),
            (i64::MIN, u64::MAX),
        ];
        for &(v, z) in table {
            assert_eq!(zigzag(v), z, "zigzag({v})");
            assert_eq!(unzigzag(z), v, "unzigzag({z})");
            assert_eq!(varint_len(v), uvarint_len(z));
        }
        assert_eq!(unzigzag32(u32::MAX), i32::MIN);
        assert_eq!(unzigzag32(u32::MAX - 1), i32::MAX);
    }

    #[test]
    #[should_panic(expected = "put_uvarint needs 2 bytes")]
    fn short_buffer_panics() {
        put_uvarint(&mut [0u8; 1], 128);
    }

    /// Miri runs ~1000x slower; a handful of cases still exercises the code.
    fn config() -> ProptestConfig {
        if cfg!(miri) {
            ProptestConfig {
                cases: 8,
                failure_persistence: None,
                ..ProptestConfig::default()
            }
        } else {
            ProptestConfig::with_cases(1024)
        }
    }

    proptest! {
        #![proptest_config(config())]

        #[test]
        fn uvarint_round_trip(v: u64, tail in proptest::collection::vec(any::<u8>(), 0..4)) {
            let mut buf = vec![0u8; MAX_VARINT_LEN];
            let n = put_uvarint(&mut buf, v);
            prop_assert_eq!(n, uvarint_len(v));
            buf.truncate(n);
            buf.extend_from_slice(&tail);
            let mut cursor = Cursor::new(&buf);
            prop_assert_eq!(cursor.uvarint(), Ok(v));
            prop_assert_eq!(cursor.position(), n);
            // Every strict prefix asks for exactly one more byte.
            for cut in 0..n {
                let mut short = Cursor::new(&buf[..cut]);
                prop_assert_eq!(
                    short.uvarint(),
                    Err(VarintError::Incomplete(Incomplete { at_least: cut + 1 }))
                );
                prop_assert_eq!(short.position(), 0);
            }
        }

        #[test]
        fn varint_round_trip(v: i64) {
            let mut buf = [0u8; MAX_VARINT_LEN];
            let n = put_varint(&mut buf, v);
            prop_assert_eq!(n, varint_len(v));
            let mut cursor = Cursor::new(&buf[..n]);
            prop_assert_eq!(cursor.varint(), Ok(v));
            prop_assert!(cursor.is_empty());
        }

        #[test]
        fn varint32_round_trip(v: i32) {
            let mut buf = [0u8; MAX_VARINT_LEN];
            let n = put_varint(&mut buf, i64::from(v));
            prop_assert!(n <= MAX_VARINT32_LEN);
            let mut cursor = Cursor::new(&buf[..n]);
            prop_assert_eq!(cursor.varint32(), Ok(v));
            prop_assert!(cursor.is_empty());
        }

        #[test]
        fn uvarint32_round_trip(v: u32) {
            let mut buf = [0u8; MAX_VARINT_LEN];
            let n = put_uvarint(&mut buf, u64::from(v));
            prop_assert!(n <= MAX_VARINT32_LEN);
            let mut cursor = Cursor::new(&buf[..n]);
            prop_assert_eq!(cursor.uvarint32(), Ok(v));
            prop_assert!(cursor.is_empty());
        }
    }
}
