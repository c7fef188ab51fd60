//! Byte classes from RFC 9110 section 5.6, and SIMD scans over them.
//!
//! The scans test sixteen bytes per step with `wide`'s safe vector types
//! (SSE2 on x86-64, NEON on AArch64, scalar elsewhere): a field value or a
//! target costs a few instructions per sixteen bytes, with no `unsafe` here.

use wide::u8x16;

/// `tchar`: the bytes allowed in methods, field names and transfer codings.
// `const`, not `static`: each use site gets the table PC-relative, where a
// `static` used from another crate is reached through the GOT on every byte.
const TOKEN: [bool; 256] = {
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

/// Index of the first byte at or after `from` that is not a token
/// character, or `bytes.len()`. Tokens are short (methods, field names), so
/// a table walk beats loading vectors (measured).
#[inline]
pub(crate) fn token_end(bytes: &[u8], from: usize) -> usize {
    let mut at = from;
    while let Some(&[a, b, c, d]) = bytes.get(at..at + 4) {
        if !(is_token(a) & is_token(b) & is_token(c) & is_token(d)) {
            break;
        }
        at += 4;
    }
    let rest = bytes.get(at..).unwrap_or_default();
    at + rest
        .iter()
        .position(|&b| !is_token(b))
        .unwrap_or(rest.len())
}

/// Whether `bytes` is a non-empty token.
pub(crate) fn is_token_str(bytes: &[u8]) -> bool {
    !bytes.is_empty() && bytes.iter().all(|&b| is_token(b))
}

/// Whether `bytes` equals `lower` ignoring ASCII case, for `lower` made of
/// lowercase letters, digits and `-`, and `bytes` from a validated head
/// (no control characters): then OR-ing in 0x20 folds case exactly, as no
/// other byte a head can hold lands on one of those.
#[inline]
pub(crate) fn eq_folded(bytes: &[u8], lower: &[u8]) -> bool {
    let n = bytes.len();
    if n != lower.len() {
        return false;
    }
    // Eight (or four) bytes a step; the last step overlaps the one before.
    // `lower` has 0x20 set in every byte already.
    if n >= 8 {
        let word = |s: &[u8], at: usize| s[at..at + 8].try_into().map_or(0, u64::from_le_bytes);
        let fold = 0x2020_2020_2020_2020;
        // A plain loop: the iterator chain this was stayed out of line.
        let mut at = 0;
        while at + 8 < n {
            if word(bytes, at) | fold != word(lower, at) {
                return false;
            }
            at += 8;
        }
        return word(bytes, n - 8) | fold == word(lower, n - 8);
    }
    if n >= 4 {
        let word = |s: &[u8], at: usize| s[at..at + 4].try_into().map_or(0, u32::from_le_bytes);
        let fold = 0x2020_2020;
        return word(bytes, 0) | fold == word(lower, 0)
            && word(bytes, n - 4) | fold == word(lower, n - 4);
    }
    bytes.iter().zip(lower).all(|(&b, &l)| b | 0x20 == l)
}

/// Whether `b` may appear in a field value: visible ASCII, SP, HTAB or obs-text.
#[inline]
pub(crate) fn is_value_byte(b: u8) -> bool {
    b == b'\t' || (b >= 0x20 && b != 0x7f)
}

/// `unreserved` (RFC 3986 section 2.3): the bytes a percent-encoder leaves as they are.
const UNRESERVED: [bool; 256] = {
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

/// Whether `value` is a `Host` field value (RFC 9112 section 3.2): `uri-host [":" port]`,
/// the host a reg-name or IPv4 address (unreserved, sub-delims, percent-escapes) or an IP
/// literal in brackets (checked as its characters, not its grammar), the port digits.
/// Empty is valid: a target without an authority has an empty `Host`.
pub(crate) fn is_host(value: &[u8]) -> bool {
    let sub_delim = |b: u8| {
        matches!(
            b,
            b'!' | b'$' | b'&' | b'\'' | b'(' | b')' | b'*' | b'+' | b',' | b';' | b'='
        )
    };
    let port = |rest: &[u8]| match rest {
        [] => true,
        [b':', digits @ ..] => digits.iter().all(u8::is_ascii_digit),
        _ => false,
    };
    if let [b'[', literal @ ..] = value {
        let Some(end) = literal.iter().position(|&b| b == b']') else {
            return false;
        };
        let inside = &literal[..end];
        return !inside.is_empty()
            && inside
                .iter()
                .all(|&b| is_unreserved(b) || sub_delim(b) || b == b':')
            && port(&literal[end + 1..]);
    }
    let mut at = 0;
    while let Some(&b) = value.get(at) {
        match b {
            b':' => break,
            b'%' => {
                let escaped = value
                    .get(at + 1..at + 3)
                    .is_some_and(|hex| hex.iter().all(|&d| hex_digit(d).is_some()));
                if !escaped {
                    return false;
                }
                at += 3;
            }
            b if is_unreserved(b) || sub_delim(b) => at += 1,
            _ => return false,
        }
    }
    port(&value[at..])
}

/// The value of each hex digit; 16 for every other byte.
const HEX: [u8; 256] = {
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

/// The first `needle` in `bytes`: `memchr` for long spans; for short ones
/// (the few bytes a small read adds, a short path), where `memchr`'s setup
/// costs more than it saves, four bytes a step in a register. Four-byte
/// loads also match the stores a small read's copy made, so they are
/// forwarded from them, where a wider load spanning older bytes would wait.
#[inline]
pub(crate) fn find(needle: u8, bytes: &[u8]) -> Option<usize> {
    if bytes.len() >= 16 {
        return memchr::memchr(needle, bytes);
    }
    let spread = u32::from(needle) * 0x0101_0101;
    let mut at = 0;
    while let Some(&[a, b, c, d]) = bytes.get(at..at + 4) {
        // A byte equal to `needle` is a zero byte of `x`; the lowest set
        // bit of `zeros` marks the first (higher ones may be false).
        let x = u32::from_le_bytes([a, b, c, d]) ^ spread;
        let zeros = x.wrapping_sub(0x0101_0101) & !x & 0x8080_8080;
        if zeros != 0 {
            return Some(at + zeros.trailing_zeros() as usize / 8);
        }
        at += 4;
    }
    let tail = bytes.get(at..).unwrap_or_default();
    tail.iter().position(|&b| b == needle).map(|i| at + i)
}

/// The sixteen bytes at `at`, if there are that many.
#[inline(always)]
fn block(bytes: &[u8], at: usize) -> Option<u8x16> {
    let chunk: [u8; 16] = bytes.get(at..at + 16)?.try_into().ok()?;
    Some(u8x16::from(chunk))
}

/// Index of the first byte at or after `from` in a lane `stop16` marks, or
/// `bytes.len()`: sixteen bytes per step. `stop16` must mark NUL, which pads
/// a buffer shorter than one block.
#[inline(always)]
fn scan(bytes: &[u8], from: usize, stop16: impl Fn(u8x16) -> u8x16) -> usize {
    let mut at = from;
    while let Some(v) = block(bytes, at) {
        let mask = stop16(v).move_mask();
        if mask != 0 {
            return at + mask.trailing_zeros() as usize;
        }
        at += 16;
    }
    // The last few bytes: the block that ends with the buffer, overlapping
    // what was already scanned, its mask shifted past those lanes. (Copying
    // them into a padded block instead stalls on store forwarding.)
    if at >= bytes.len() {
        return bytes.len();
    }
    if let Some(base) = bytes.len().checked_sub(16) {
        let v = block(bytes, base).unwrap_or_default();
        let mask = (stop16(v).move_mask() as u32) >> (at - base);
        return if mask == 0 {
            bytes.len()
        } else {
            at + mask.trailing_zeros() as usize
        };
    }
    // A buffer shorter than one block: pad it.
    let mut padded = [0; 16];
    padded[..bytes.len()].copy_from_slice(bytes);
    let mask = (stop16(u8x16::from(padded)).move_mask() as u32) >> at;
    at + (mask.trailing_zeros() as usize).min(bytes.len() - at)
}

/// Index of the first byte at or after `from` that cannot be in a request
/// target (anything but `0x21..=0x7e`, and `#`: a fragment is never sent),
/// or `bytes.len()`.
#[inline]
pub(crate) fn target_end(bytes: &[u8], from: usize) -> usize {
    scan(bytes, from, |v| {
        v.min(u8x16::splat(0x20)).cmp_eq(v)
            | v.max(u8x16::splat(0x7f)).cmp_eq(v)
            | v.cmp_eq(u8x16::splat(b'#'))
    })
}

/// Index of the first byte at or after `from` that is a control character
/// (below SP, or DEL), or `bytes.len()`. HTAB counts as a control here; the
/// caller decides whether to step over it.
#[inline]
pub(crate) fn value_end(bytes: &[u8], from: usize) -> usize {
    scan(bytes, from, |v| {
        v.min(u8x16::splat(0x1f)).cmp_eq(v) | v.cmp_eq(u8x16::splat(0x7f))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn find_agrees_with_position_for_every_length_byte_and_place() {
        for len in 0..40 {
            for needle in [b'\n', 0, 0x80, 0xff, 0x0a ^ 0x01] {
                for at in 0..len {
                    for other in [b'a', needle ^ 0x01, needle.wrapping_sub(1), 0x80] {
                        if other == needle {
                            continue;
                        }
                        let mut bytes = vec![other; len];
                        bytes[at] = needle;
                        // A second match later must not hide the first.
                        if at + 2 < len {
                            bytes[len - 1] = needle;
                        }
                        assert_eq!(
                            find(needle, &bytes),
                            Some(at),
                            "{len} {needle} {at} {other}"
                        );
                    }
                }
                let none = vec![needle.wrapping_add(1); len];
                assert_eq!(find(needle, &none), None);
            }
        }
    }

    #[test]
    fn simd_scans_agree_with_bytewise_scans_at_every_offset() {
        for bad in 0u8..=255 {
            for at in 0..40 {
                let mut bytes = vec![b'a'; 40];
                bytes[at] = bad;
                let target_ok = (0x21..=0x7e).contains(&bad) && bad != b'#';
                assert_eq!(target_end(&bytes, 0), if target_ok { 40 } else { at });
                let value_ok = bad >= 0x20 && bad != 0x7f;
                assert_eq!(value_end(&bytes, 0), if value_ok { 40 } else { at });
                assert_eq!(token_end(&bytes, 0), if is_token(bad) { 40 } else { at });
                // Short inputs take the padded last block.
                for len in at + 1..at + 17 {
                    let short = &bytes[..len.min(40)];
                    let want = if value_ok { short.len() } else { at };
                    assert_eq!(value_end(short, 0), want);
                }
            }
        }
    }

    #[test]
    fn token_end_agrees_with_a_bytewise_walk_on_names() {
        // Every byte in every place of a name of letters, `-`, digits and
        // other token bytes, from several starts (four-byte steps and tail).
        let name = b"Accept-Language-x-B3-Trace.Id_9ab-Sec-Fetch-Dest~Zz-";
        let reference = |bytes: &[u8], from: usize| {
            from + bytes[from..]
                .iter()
                .position(|&b| !is_token(b))
                .unwrap_or(bytes.len() - from)
        };
        for len in [0, 1, 4, 15, 16, 17, 31, 32, 33, name.len()] {
            for bad in 0u8..=255 {
                for at in 0..len {
                    let mut bytes = name[..len].to_vec();
                    bytes[at] = bad;
                    for from in [0, 1, 5, 16].into_iter().filter(|&f| f <= len) {
                        let want = reference(&bytes, from);
                        assert_eq!(token_end(&bytes, from), want, "{bytes:?} from {from}");
                    }
                }
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
    fn folding_matches_eq_ignore_ascii_case_on_head_bytes() {
        for lower in [
            &b"content-length"[..],
            b"100-continue",
            b"keep-alive",
            b"host",
            b"upgrade",
            b"te",
            b"transfer-encoding",
        ] {
            for b in (0u8..=0xff).filter(|&b| is_value_byte(b)) {
                for i in 0..lower.len() {
                    let mut bytes = lower.to_vec();
                    bytes[i] = b;
                    assert_eq!(eq_folded(&bytes, lower), bytes.eq_ignore_ascii_case(lower));
                }
            }
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
