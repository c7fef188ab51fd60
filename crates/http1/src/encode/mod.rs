//! Encoders that write heads and chunk framing into a caller's buffer.
//!
//! The buffer is usually a send-ring reservation. Nothing here allocates:
//! when the buffer is too small an encoder fails with
//! [`EncodeError::BufferFull`], saying how many bytes the whole message
//! needs at least, and the caller reserves more and starts over.
//!
//! Every name, value, method, target and reason phrase is validated before
//! it is written, so a caller cannot be talked into sending CR or LF
//! (response splitting, request smuggling) by the data it forwards.

mod buf;
mod chunked;
mod date;
mod fields;
mod head;
mod query;
mod reason;

use std::fmt;

pub use chunked::{chunk_header, encode_chunk, last_chunk, CHUNK_END};
pub use date::DateCache;
pub use fields::FieldBlock;
pub use head::{QueryWriter, RequestWriter, ResponseWriter};
pub use query::percent_encode;
pub use reason::reason_phrase;

/// Why an encoder wrote nothing.
///
/// A failed call leaves what earlier calls wrote in place, so a writer that
/// met an invalid field can go on; after `BufferFull` the caller starts the
/// message again in a larger buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum EncodeError {
    /// The buffer is too small.
    BufferFull {
        /// A lower bound on the length of the whole encoded output, counted
        /// from the start of the buffer.
        needed: usize,
    },
    /// A field name that is empty or holds a byte that is not a token character.
    InvalidHeaderName,
    /// A field value holding a control character (CR, LF, NUL, ...) or
    /// starting or ending with whitespace, which a receiver would strip.
    InvalidHeaderValue,
    /// A method that is empty or holds a byte that is not a token character.
    InvalidMethod,
    /// A request target that is empty, holds a byte outside visible ASCII or
    /// a `#`, or (for a query parameter) is not in origin or absolute form.
    InvalidPath,
    /// A status code outside `100..=999`.
    InvalidStatus,
    /// A reason phrase holding a control character.
    InvalidReason,
    /// A chunk of zero bytes, which would end the body.
    EmptyChunk,
    /// Both `Content-Length` and `Transfer-Encoding` in one head, or two
    /// `Content-Length` values that differ.
    ConflictingFraming,
    /// A `Content-Length` value that is not decimal digits fitting a `u64`.
    InvalidContentLength,
    /// A trailer field that must not be one (RFC 9110 section 6.5.1): framing,
    /// routing or connection control (`Content-Length`, `Transfer-Encoding`,
    /// `Host`, `Trailer`, `Connection`, ...).
    ForbiddenTrailer,
    /// A framing field in a [`FieldBlock`]: the head's writer adds those.
    FramingInBlock,
}

impl fmt::Display for EncodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let what = match self {
            EncodeError::BufferFull { needed } => {
                return write!(f, "buffer too small: at least {needed} bytes needed")
            }
            EncodeError::InvalidHeaderName => "invalid field name",
            EncodeError::InvalidHeaderValue => {
                "field value with a control character or surrounding whitespace"
            }
            EncodeError::InvalidMethod => "invalid method",
            EncodeError::InvalidPath => "invalid request target",
            EncodeError::InvalidStatus => "status code outside 100..=999",
            EncodeError::InvalidReason => "control character in reason phrase",
            EncodeError::EmptyChunk => "empty chunk",
            EncodeError::ConflictingFraming => {
                "conflicting framing (Content-Length and Transfer-Encoding, or two lengths)"
            }
            EncodeError::InvalidContentLength => {
                "Content-Length value that is not a decimal length"
            }
            EncodeError::ForbiddenTrailer => "a field that may not be sent as a trailer",
            EncodeError::FramingInBlock => "a framing field in a field block",
        };
        f.write_str(what)
    }
}

impl std::error::Error for EncodeError {}

/// Uppercase hex digits, for percent-escapes and chunk sizes alike.
const HEX: &[u8; 16] = b"0123456789ABCDEF";

/// `n` in base `RADIX` (10 or 16), formatted into `out` without allocating.
/// The radix is a constant so that each division is a multiply or a shift
/// (a `div` by a variable took 10 ns for a three-digit length).
#[inline]
fn digits<const RADIX: u64>(mut n: u64, out: &mut [u8; 20]) -> &[u8] {
    let mut at = out.len();
    loop {
        at -= 1;
        // The remainder is below 16.
        out[at] = HEX[(n % RADIX) as usize];
        n /= RADIX;
        if n == 0 {
            return &out[at..];
        }
    }
}

/// `n` in decimal, formatted into `out` without allocating: for a
/// `content-length` written by other means than this module's encoders.
#[inline]
pub fn decimal(n: u64, out: &mut [u8; 20]) -> &[u8] {
    digits::<10>(n, out)
}

/// Checks an encoder against every buffer size: each one short of the
/// output fails with a `needed` that is larger than the buffer yet no larger
/// than the output; the exact size and a larger one give `expected`.
#[cfg(test)]
fn assert_every_size(expected: &[u8], encode: impl Fn(&mut [u8]) -> Result<usize, EncodeError>) {
    for size in 0..expected.len() {
        let mut buf = vec![0; size];
        match encode(&mut buf) {
            Err(EncodeError::BufferFull { needed }) => {
                assert!(needed > size, "size {size}: needed {needed}");
                assert!(needed <= expected.len(), "size {size}: needed {needed}");
            }
            other => panic!("size {size}: {other:?}"),
        }
    }
    for size in [expected.len(), expected.len() + 7] {
        let mut buf = vec![0; size];
        let n = encode(&mut buf).expect("fits");
        assert_eq!(
            String::from_utf8_lossy(&buf[..n]),
            String::from_utf8_lossy(expected)
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn digits_in_both_radixes() {
        let mut out = [0; 20];
        assert_eq!(digits::<10>(0, &mut out), b"0");
        assert_eq!(digits::<10>(1234, &mut out), b"1234");
        assert_eq!(digits::<10>(u64::MAX, &mut out), b"18446744073709551615");
        assert_eq!(digits::<16>(0xbeef, &mut out), b"BEEF");
        assert_eq!(digits::<16>(u64::MAX, &mut out), b"FFFFFFFFFFFFFFFF");
    }

    #[test]
    fn errors_display() {
        let full = EncodeError::BufferFull { needed: 42 };
        assert_eq!(
            full.to_string(),
            "buffer too small: at least 42 bytes needed"
        );
        assert_eq!(EncodeError::InvalidMethod.to_string(), "invalid method");
    }
}
