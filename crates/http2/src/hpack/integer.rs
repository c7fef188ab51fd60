//! Integers with an N-bit prefix (RFC 7541 section 5.1).

use super::DecodeError;

/// Largest value decoded: every length and index fits, and so does any table size.
const MAX: u64 = u32::MAX as u64;

/// Appends `value` with an `prefix`-bit prefix; `flags` holds the bits above the prefix.
pub(super) fn encode(value: usize, prefix: u32, flags: u8, out: &mut Vec<u8>) {
    let mask = (1usize << prefix) - 1;
    if value < mask {
        // Fits in the prefix: `value < mask <= 0xff`.
        out.push(flags | value as u8);
        return;
    }
    out.push(flags | mask as u8);
    let mut rest = value - mask;
    while rest >= 0x80 {
        out.push(0x80 | (rest & 0x7f) as u8);
        rest >>= 7;
    }
    out.push(rest as u8);
}

/// Reads an integer with a `prefix`-bit prefix at `*pos` and moves past it.
///
/// At most five continuation bytes are read (enough for `u32::MAX` with any prefix), so a
/// run of `0x80` bytes ends in [`DecodeError::IntegerOverflow`], not in a long loop.
pub(super) fn decode(block: &[u8], pos: &mut usize, prefix: u32) -> Result<u64, DecodeError> {
    let mask = ((1u16 << prefix) - 1) as u8;
    let first = *block.get(*pos).ok_or(DecodeError::Truncated)? & mask;
    *pos += 1;
    if first < mask {
        return Ok(u64::from(first));
    }
    let mut value = u64::from(mask);
    let mut shift = 0;
    loop {
        let byte = *block.get(*pos).ok_or(DecodeError::Truncated)?;
        *pos += 1;
        // `shift <= 28`: the sum stays far below u64::MAX.
        value += u64::from(byte & 0x7f) << shift;
        if value > MAX {
            return Err(DecodeError::IntegerOverflow);
        }
        if byte & 0x80 == 0 {
            return Ok(value);
        }
        shift += 7;
        if shift > 28 {
            return Err(DecodeError::IntegerOverflow);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip(value: usize, prefix: u32) {
        let mut out = vec![];
        encode(value, prefix, 0, &mut out);
        let mut pos = 0;
        assert_eq!(decode(&out, &mut pos, prefix), Ok(value as u64));
        assert_eq!(pos, out.len());
    }

    #[test]
    fn rfc_examples() {
        // C.1.1: 10 with a 5-bit prefix.
        let mut out = vec![];
        encode(10, 5, 0, &mut out);
        assert_eq!(out, [0x0a]);
        // C.1.2: 1337 with a 5-bit prefix.
        out.clear();
        encode(1337, 5, 0, &mut out);
        assert_eq!(out, [0x1f, 0x9a, 0x0a]);
        // C.1.3: 42 at an octet boundary.
        out.clear();
        encode(42, 8, 0, &mut out);
        assert_eq!(out, [0x2a]);
    }

    #[test]
    fn round_trips() {
        for prefix in 1..=8 {
            for value in [0, 1, 30, 31, 126, 127, 128, 254, 255, 256, 1337, 1 << 20] {
                round_trip(value, prefix);
            }
            round_trip(u32::MAX as usize, prefix);
        }
    }

    #[test]
    fn bounds() {
        let mut pos = 0;
        // u32::MAX + 1 with an 8-bit prefix.
        let mut out = vec![];
        encode(u32::MAX as usize + 1, 8, 0, &mut out);
        assert_eq!(decode(&out, &mut pos, 8), Err(DecodeError::IntegerOverflow));
        // Endless continuation bytes that add nothing.
        let zeros = [0xff, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00];
        pos = 0;
        assert_eq!(
            decode(&zeros, &mut pos, 8),
            Err(DecodeError::IntegerOverflow)
        );
        pos = 0;
        assert_eq!(
            decode(&[0x1f, 0x9a], &mut pos, 5),
            Err(DecodeError::Truncated)
        );
        pos = 0;
        assert_eq!(decode(&[], &mut pos, 5), Err(DecodeError::Truncated));
    }
}
