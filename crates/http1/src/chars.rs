//! Byte classes from RFC 9110 section 5.6, and word-at-a-time scans over them.
//!
//! The scans read eight bytes per step as one `u64` (SWAR): the checks are
//! branch-free bit tricks, so long targets and field values cost about one
//! step per eight bytes without any `unsafe` or platform intrinsics.

/// `tchar`: the bytes allowed in methods, field names and transfer codings.
static TOKEN: [bool; 256] = {
    let mut table = [false; 256];
    let mut b = 0;
    while b < 256 {
        let c = b as u8;
        table[b] = c.is_ascii_alphanumeric()
            || matches!(
                c,
                b'!' | b'#'
                    | b'$'
                    | b'%'
                    | b'&'
                    | b'\''
                    | b'*'
                    | b'+'
                    | b'-'
                    | b'.'
                    | b'^'
                    | b'_'
                    | b'`'
                    | b'|'
                    | b'~'
            );
        b += 1;
    }
    table
};

/// Whether `b` may appear in a token (method, field name, coding).
#[inline]
pub(crate) fn is_token(b: u8) -> bool {
    TOKEN[b as usize]
}

/// Whether `bytes` is a non-empty token.
pub(crate) fn is_token_str(bytes: &[u8]) -> bool {
    !bytes.is_empty() && bytes.iter().all(|&b| is_token(b))
}

/// Whether `b` may appear in a field value: visible ASCII, SP, HTAB or obs-text.
#[inline]
pub(crate) fn is_value_byte(b: u8) -> bool {
    b == b'\t' || (b >= 0x20 && b != 0x7f)
}

/// `unreserved` (RFC 3986 section 2.3): the bytes a percent-encoder leaves as they are.
static UNRESERVED: [bool; 256] = {
    let mut table = [false; 256];
    let mut b = 0;
    while b < 256 {
        let c = b as u8;
        table[b] = c.is_ascii_alphanumeric() || matches!(c, b'-' | b'.' | b'_' | b'~');
        b += 1;
    }
    table
};

/// Whether `b` is sent unescaped in a percent-encoded query key or value.
#[inline]
pub(crate) fn is_unreserved(b: u8) -> bool {
    UNRESERVED[b as usize]
}

/// The value of each hex digit; 16 for every other byte.
static HEX: [u8; 256] = {
    let mut table = [16; 256];
    let mut b = 0;
    while b < 256 {
        table[b] = match b as u8 {
            c @ b'0'..=b'9' => c - b'0',
            c @ b'a'..=b'f' => c - b'a' + 10,
            c @ b'A'..=b'F' => c - b'A' + 10,
            _ => 16,
        };
        b += 1;
    }
    table
};

/// The value of a hex digit (either case), for chunk sizes and percent-escapes.
#[inline]
pub(crate) fn hex_digit(b: u8) -> Option<u8> {
    match HEX[usize::from(b)] {
        16 => None,
        d => Some(d),
    }
}

const LO: u64 = 0x0101_0101_0101_0101;
const HI: u64 = 0x8080_8080_8080_8080;

/// Nonzero when some byte of `x` is below `n` (`n <= 128`).
#[inline]
fn has_less(x: u64, n: u8) -> u64 {
    x.wrapping_sub(LO * u64::from(n)) & !x & HI
}

/// Nonzero when some byte of `x` equals `b`.
#[inline]
fn has_byte(x: u64, b: u8) -> u64 {
    let y = x ^ (LO * u64::from(b));
    y.wrapping_sub(LO) & !y & HI
}

#[inline]
fn word(bytes: &[u8], at: usize) -> Option<u64> {
    let chunk = bytes.get(at..at + 8)?;
    Some(u64::from_le_bytes(chunk.try_into().ok()?))
}

/// Index of the first byte at or after `from` that cannot be in a request
/// target (anything but `0x21..=0x7e`), or `bytes.len()`.
#[inline]
pub(crate) fn target_end(bytes: &[u8], mut from: usize) -> usize {
    while let Some(x) = word(bytes, from) {
        if has_less(x, 0x21) | has_byte(x, 0x7f) | (x & HI) != 0 {
            break;
        }
        from += 8;
    }
    from + bytes[from..]
        .iter()
        .position(|&b| !(0x21..=0x7e).contains(&b))
        .unwrap_or(bytes.len() - from)
}

/// Index of the first byte at or after `from` that is a control character
/// (below SP, or DEL), or `bytes.len()`. HTAB counts as a control here; the
/// caller decides whether to step over it.
#[inline]
pub(crate) fn value_end(bytes: &[u8], mut from: usize) -> usize {
    while let Some(x) = word(bytes, from) {
        if has_less(x, 0x20) | has_byte(x, 0x7f) != 0 {
            break;
        }
        from += 8;
    }
    from + bytes[from..]
        .iter()
        .position(|&b| b < 0x20 || b == 0x7f)
        .unwrap_or(bytes.len() - from)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn swar_scans_agree_with_bytewise_scans_at_every_offset() {
        for bad in 0u8..=255 {
            for at in 0..20 {
                let mut bytes = vec![b'a'; 20];
                bytes[at] = bad;
                let target_ok = (0x21..=0x7e).contains(&bad);
                assert_eq!(target_end(&bytes, 0), if target_ok { 20 } else { at });
                let value_ok = bad >= 0x20 && bad != 0x7f;
                assert_eq!(value_end(&bytes, 0), if value_ok { 20 } else { at });
            }
        }
    }

    #[test]
    fn unreserved_class_matches_rfc_3986() {
        let unreserved = b"-._~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
        for b in 0u8..=255 {
            assert_eq!(is_unreserved(b), unreserved.contains(&b), "byte {b:#x}");
        }
    }

    #[test]
    fn hex_digits_match_to_digit() {
        for b in 0u8..=255 {
            let want = char::from(b).to_digit(16).map(|d| d as u8);
            assert_eq!(hex_digit(b), want, "byte {b:#x}");
        }
    }

    #[test]
    fn token_class_matches_rfc_9110() {
        let tchar =
            b"!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
        for b in 0u8..=255 {
            assert_eq!(is_token(b), tchar.contains(&b), "byte {b:#x}");
        }
        assert!(is_token_str(b"GET"));
        assert!(!is_token_str(b""));
        assert!(!is_token_str(b"GE T"));
    }
}
