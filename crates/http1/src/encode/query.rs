//! Percent-encoding of query parameters (RFC 3986 section 2.1).

use super::{EncodeError, HEX};
use crate::chars::is_unreserved;

/// Length of `key=value` once both are percent-encoded.
pub(super) fn pair_len(key: &[u8], value: &[u8]) -> usize {
    encoded_len(key)
        .saturating_add(encoded_len(value))
        .saturating_add(1)
}

/// Writes `key=value` percent-encoded into `out`, which is exactly
/// [`pair_len`] bytes long.
pub(super) fn write_pair(key: &[u8], value: &[u8], out: &mut [u8]) {
    let rest = encode(key, out);
    if let Some((eq, rest)) = rest.split_first_mut() {
        *eq = b'=';
        encode(value, rest);
    }
}

/// Writes `bytes` percent-encoded into `out`, every byte but RFC 3986's unreserved ones
/// as `%XX` (what a path segment or a query component may hold as it is); returns the
/// length written.
///
/// # Errors
///
/// [`BufferFull`](EncodeError::BufferFull) when `out` is shorter than the encoding.
pub fn percent_encode(bytes: &[u8], out: &mut [u8]) -> Result<usize, EncodeError> {
    let needed = encoded_len(bytes);
    let Some(out) = out.get_mut(..needed) else {
        return Err(EncodeError::BufferFull { needed });
    };
    encode(bytes, out);
    Ok(needed)
}

fn encoded_len(bytes: &[u8]) -> usize {
    bytes
        .iter()
        .map(|&b| if is_unreserved(b) { 1 } else { 3 })
        .fold(0, usize::saturating_add)
}

/// Writes `bytes` percent-encoded at the front of `out`; returns the rest.
fn encode<'o>(bytes: &[u8], mut out: &'o mut [u8]) -> &'o mut [u8] {
    for &b in bytes {
        let escape;
        let text: &[u8] = if is_unreserved(b) {
            std::slice::from_ref(&b)
        } else {
            escape = [b'%', HEX[usize::from(b >> 4)], HEX[usize::from(b & 0xf)]];
            &escape
        };
        // `out` was sized by `encoded_len`, so it is never short.
        let Some((head, rest)) = std::mem::take(&mut out).split_at_mut_checked(text.len()) else {
            break;
        };
        head.copy_from_slice(text);
        out = rest;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pair(key: &str, value: &str) -> String {
        let mut out = vec![0; pair_len(key.as_bytes(), value.as_bytes())];
        write_pair(key.as_bytes(), value.as_bytes(), &mut out);
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn percent_encodes_a_segment_into_a_buffer() {
        let mut out = [0; 32];
        let n = percent_encode("a file/ä.bin".as_bytes(), &mut out).unwrap();
        assert_eq!(&out[..n], b"a%20file%2F%C3%A4.bin");
        assert_eq!(
            percent_encode(b"a b", &mut out[..4]),
            Err(EncodeError::BufferFull { needed: 5 })
        );
    }

    #[test]
    fn escapes_all_but_unreserved() {
        assert_eq!(pair("q", "zero copy"), "q=zero%20copy");
        assert_eq!(pair("", ""), "=");
        assert_eq!(pair("a-b._~", "AZaz09"), "a-b._~=AZaz09");
        assert_eq!(pair("k&=", "+%/?#"), "k%26%3D=%2B%25%2F%3F%23");
        assert_eq!(pair("\r\n", "\0\x7f"), "%0D%0A=%00%7F");
        assert_eq!(pair("é", "€"), "%C3%A9=%E2%82%AC");
    }
}
