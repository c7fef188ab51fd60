//! `cursor`: every `Cursor` read, in an order chosen by the input, over a span taken from the
//! input, checked against an independent reference decoder:
//!
//! - a read that fails leaves the position where it was; on `Incomplete` the span is too short
//!   (`at_least > buf.len()`), and fixed-width reads and `take`/`skip` name the exact shortfall;
//! - a success advances by exactly the encoded size and yields the reference value;
//! - `Overflow` exactly where the reference says the encoding is too long or too wide;
//! - a decoded varint re-encoded with `put_uvarint`/`put_varint` (and the `*_len` helpers) gives
//!   the same bytes when the encoding was minimal, and always decodes back to the same value.

#![no_main]

use arbitrary::{Arbitrary, Unstructured};
use libfuzzer_sys::fuzz_target;
use ringwire_wire::{
    put_uvarint, put_varint, uvarint_len, varint_len, Cursor, Incomplete, VarintError,
    MAX_VARINT32_LEN, MAX_VARINT_LEN,
};

#[derive(Debug, Clone, Copy, Arbitrary)]
enum Op {
    U8,
    I8,
    U16,
    U32,
    U64,
    I16,
    I32,
    I64,
    Uvarint,
    Varint,
    Uvarint32,
    Varint32,
    /// `take(n)`; `n` near `usize::MAX` checks the saturating shortfall.
    Take(u16),
    TakeHuge(u8),
    Skip(u16),
}

#[derive(Debug)]
struct Input<'a> {
    ops: Vec<Op>,
    buf: &'a [u8],
}

impl<'a> Arbitrary<'a> for Input<'a> {
    fn arbitrary(u: &mut Unstructured<'a>) -> arbitrary::Result<Self> {
        let n = u.int_in_range(0..=64u8)?;
        let ops = (0..n)
            .map(|_| u.arbitrary())
            .collect::<arbitrary::Result<_>>()?;
        Ok(Input {
            ops,
            buf: u.bytes(u.len())?,
        })
    }
}

/// Reference LEB128: `Ok((value, len))`, `Err(None)` for overflow, `Err(Some(at_least))` when
/// the bytes run out (relative to `bytes`).
fn reference_varint(
    bytes: &[u8],
    max_len: usize,
    bits: u32,
) -> Result<(u64, usize), Option<usize>> {
    let mut value: u128 = 0;
    for i in 0..max_len {
        let Some(&b) = bytes.get(i) else {
            return Err(Some(i + 1));
        };
        value |= u128::from(b & 0x7f) << (7 * i);
        let last = i + 1 == max_len;
        if last && (b & 0x80 != 0 || value >> bits != 0) {
            return Err(None);
        }
        if b & 0x80 == 0 {
            return Ok((value as u64, i + 1));
        }
    }
    unreachable!("the last byte always returns")
}

fn zigzag_decode(u: u64) -> i64 {
    (u >> 1) as i64 ^ -((u & 1) as i64)
}

/// Checks a fixed-width read: `width` bytes big-endian, `value` as the reference reads it.
fn fixed<'b, T: PartialEq + std::fmt::Debug>(
    cursor: &mut Cursor<'b>,
    buf: &[u8],
    width: usize,
    read: impl FnOnce(&mut Cursor<'b>) -> Result<T, Incomplete>,
    reference: impl FnOnce(&[u8]) -> T,
) {
    let pos = cursor.position();
    match read(cursor) {
        Ok(v) => {
            assert!(pos + width <= buf.len());
            assert_eq!(
                cursor.position(),
                pos + width,
                "advance of a {width}-byte read"
            );
            assert_eq!(v, reference(&buf[pos..pos + width]));
        }
        Err(Incomplete { at_least }) => {
            assert!(
                pos + width > buf.len(),
                "Incomplete with {width} of {} left",
                buf.len() - pos
            );
            assert_eq!(cursor.position(), pos, "moved on Incomplete");
            assert_eq!(at_least, pos + width);
            assert!(at_least > buf.len());
        }
    }
}

/// Checks a varint read against the reference; returns the consumed bytes and value on success.
fn varint<'b, T: Copy + std::fmt::Debug>(
    cursor: &mut Cursor<'b>,
    buf: &'b [u8],
    max_len: usize,
    bits: u32,
    read: impl FnOnce(&mut Cursor<'b>) -> Result<T, VarintError>,
) -> Option<(&'b [u8], u64, T)> {
    let pos = cursor.position();
    let want = reference_varint(&buf[pos..], max_len, bits);
    let got = read(cursor);
    match (got, want) {
        (Ok(v), Ok((raw, len))) => {
            assert_eq!(cursor.position(), pos + len, "varint advance");
            Some((&buf[pos..pos + len], raw, v))
        }
        (Err(VarintError::Incomplete(Incomplete { at_least })), Err(Some(need))) => {
            assert_eq!(cursor.position(), pos, "moved on Incomplete");
            assert_eq!(at_least, pos + need);
            assert!(at_least > buf.len());
            None
        }
        (Err(VarintError::Overflow), Err(None)) => {
            assert_eq!(cursor.position(), pos, "moved on Overflow");
            None
        }
        (got, want) => panic!(
            "varint at {pos} ({max_len} bytes, {bits} bits): got {got:?}, reference {want:?}"
        ),
    }
}

/// `put` must re-create `encoded` when it was minimal, and its output must decode to `raw`.
fn round_trip(encoded: &[u8], raw: u64, len: usize, put: impl FnOnce(&mut [u8]) -> usize) {
    let mut out = [0u8; MAX_VARINT_LEN];
    let n = put(&mut out);
    assert_eq!(n, len, "put length vs *_len");
    let minimal = encoded.len() == len;
    if minimal {
        assert_eq!(&out[..n], encoded, "re-encoding of a minimal varint");
    } else {
        // A padded encoding is longer than the canonical one, never shorter.
        assert!(
            encoded.len() > len,
            "encoding shorter than the minimal length"
        );
    }
    assert_eq!(
        reference_varint(&out[..n], MAX_VARINT_LEN, 64),
        Ok((raw, n))
    );
}

fuzz_target!(|input: Input<'_>| {
    let buf = input.buf;
    let mut cursor = Cursor::new(buf);
    for op in input.ops {
        let pos = cursor.position();
        match op {
            Op::U8 => fixed(&mut cursor, buf, 1, Cursor::u8, |b| b[0]),
            Op::I8 => fixed(&mut cursor, buf, 1, Cursor::i8, |b| b[0] as i8),
            Op::U16 => fixed(&mut cursor, buf, 2, Cursor::u16_be, |b| {
                u16::from(b[0]) << 8 | u16::from(b[1])
            }),
            Op::I16 => fixed(&mut cursor, buf, 2, Cursor::i16_be, |b| {
                (u16::from(b[0]) << 8 | u16::from(b[1])) as i16
            }),
            Op::U32 => fixed(&mut cursor, buf, 4, Cursor::u32_be, |b| {
                b.iter().fold(0u32, |acc, &x| acc << 8 | u32::from(x))
            }),
            Op::I32 => fixed(&mut cursor, buf, 4, Cursor::i32_be, |b| {
                b.iter().fold(0u32, |acc, &x| acc << 8 | u32::from(x)) as i32
            }),
            Op::U64 => fixed(&mut cursor, buf, 8, Cursor::u64_be, |b| {
                b.iter().fold(0u64, |acc, &x| acc << 8 | u64::from(x))
            }),
            Op::I64 => fixed(&mut cursor, buf, 8, Cursor::i64_be, |b| {
                b.iter().fold(0u64, |acc, &x| acc << 8 | u64::from(x)) as i64
            }),
            Op::Uvarint => {
                if let Some((enc, raw, v)) =
                    varint(&mut cursor, buf, MAX_VARINT_LEN, 64, Cursor::uvarint)
                {
                    assert_eq!(v, raw);
                    round_trip(enc, raw, uvarint_len(v), |out| put_uvarint(out, v));
                }
            }
            Op::Varint => {
                if let Some((enc, raw, v)) =
                    varint(&mut cursor, buf, MAX_VARINT_LEN, 64, Cursor::varint)
                {
                    assert_eq!(v, zigzag_decode(raw));
                    round_trip(enc, raw, varint_len(v), |out| put_varint(out, v));
                }
            }
            Op::Uvarint32 => {
                if let Some((enc, raw, v)) =
                    varint(&mut cursor, buf, MAX_VARINT32_LEN, 32, Cursor::uvarint32)
                {
                    assert_eq!(u64::from(v), raw);
                    round_trip(enc, raw, uvarint_len(raw), |out| {
                        put_uvarint(out, u64::from(v))
                    });
                }
            }
            Op::Varint32 => {
                if let Some((enc, raw, v)) =
                    varint(&mut cursor, buf, MAX_VARINT32_LEN, 32, Cursor::varint32)
                {
                    assert_eq!(i64::from(v), zigzag_decode(raw));
                    // An i32 widened to i64 encodes to the same bytes as 32-bit zigzag.
                    round_trip(enc, raw, varint_len(i64::from(v)), |out| {
                        put_varint(out, i64::from(v))
                    });
                }
            }
            Op::Take(n) => {
                let n = usize::from(n);
                match cursor.take(n) {
                    Ok(bytes) => {
                        assert_eq!(cursor.position(), pos + n);
                        assert!(
                            std::ptr::eq(bytes, &buf[pos..pos + n]),
                            "take must borrow the span"
                        );
                    }
                    Err(Incomplete { at_least }) => {
                        assert!(pos + n > buf.len());
                        assert_eq!((cursor.position(), at_least), (pos, pos + n));
                    }
                }
            }
            Op::TakeHuge(k) => {
                let n = usize::MAX - usize::from(k);
                let err = cursor
                    .take(n)
                    .expect_err("no span holds usize::MAX - 255 bytes");
                assert_eq!(err.at_least, pos.saturating_add(n));
                assert!(err.at_least > buf.len());
                assert_eq!(cursor.position(), pos);
            }
            Op::Skip(n) => {
                let n = usize::from(n);
                match cursor.skip(n) {
                    Ok(()) => assert_eq!(cursor.position(), pos + n),
                    Err(Incomplete { at_least }) => {
                        assert!(pos + n > buf.len());
                        assert_eq!((cursor.position(), at_least), (pos, pos + n));
                    }
                }
            }
        }
        // Invariants after every read, successful or not.
        let pos = cursor.position();
        assert!(pos <= buf.len());
        assert_eq!(cursor.remaining(), &buf[pos..]);
        assert_eq!(cursor.is_empty(), pos == buf.len());
    }
    assert_eq!(
        cursor.complete(()),
        ringwire_wire::Status::Complete((), cursor.position())
    );
});
