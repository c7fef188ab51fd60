//! Length-prefixed frames: a 4-byte big-endian length, then the body.

use std::fmt;

use crate::cursor::Cursor;
use crate::limits::{Limit, LimitExceeded};
use crate::parse::Parse;
use crate::status::Status;

/// Default bound on a frame body, in bytes.
pub const DEFAULT_MAX_FRAME_LEN: usize = 16 * 1024 * 1024;

/// The name of a [`LengthPrefixed`] parser's limit, as its errors report it.
pub const FRAME_LENGTH: &str = "frame length";

/// Parser for frames made of a 4-byte big-endian body length followed by
/// the body, which is returned borrowed from the buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LengthPrefixed {
    max_len: Limit,
}

impl LengthPrefixed {
    /// A parser rejecting bodies longer than `max_len` bytes.
    #[must_use]
    pub const fn new(max_len: usize) -> Self {
        LengthPrefixed {
            max_len: Limit::new(FRAME_LENGTH, max_len),
        }
    }

    /// The body length bound.
    #[must_use]
    pub fn max_len(&self) -> Limit {
        self.max_len
    }
}

impl Default for LengthPrefixed {
    /// Bounded by [`DEFAULT_MAX_FRAME_LEN`].
    fn default() -> Self {
        LengthPrefixed::new(DEFAULT_MAX_FRAME_LEN)
    }
}

impl Parse for LengthPrefixed {
    type Output<'a> = &'a [u8];
    type Error = FrameError;

    #[inline]
    fn parse<'a>(&mut self, buf: &'a [u8]) -> Result<Status<&'a [u8]>, FrameError> {
        let mut cursor = Cursor::new(buf);
        let len = match cursor.u32_be() {
            Ok(len) => len,
            Err(incomplete) => return Ok(incomplete.into()),
        };
        // A length that does not even fit in usize is certainly too long.
        let len = usize::try_from(len).unwrap_or(usize::MAX);
        // Checked before the body arrives so a hostile length cannot make
        // the source buffer grow towards it.
        self.max_len.check(len)?;
        match cursor.take(len) {
            Ok(body) => Ok(cursor.complete(body)),
            Err(incomplete) => Ok(incomplete.into()),
        }
    }
}

/// Why a frame can never be parsed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FrameError {
    /// The length prefix exceeds the parser's limit.
    TooLong(LimitExceeded),
}

impl From<LimitExceeded> for FrameError {
    fn from(exceeded: LimitExceeded) -> Self {
        FrameError::TooLong(exceeded)
    }
}

impl fmt::Display for FrameError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FrameError::TooLong(exceeded) => exceeded.fmt(f),
        }
    }
}

impl std::error::Error for FrameError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            FrameError::TooLong(exceeded) => Some(exceeded),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(body: &[u8]) -> Vec<u8> {
        let mut out = u32::try_from(body.len()).unwrap().to_be_bytes().to_vec();
        out.extend_from_slice(body);
        out
    }

    #[test]
    fn every_prefix_reports_the_exact_need() {
        let bytes = frame(b"hello");
        let mut parser = LengthPrefixed::default();
        for cut in 0..bytes.len() {
            let want = if cut < 4 { 4 } else { 9 };
            assert_eq!(
                parser.parse(&bytes[..cut]),
                Ok(Status::Partial { at_least: want }),
                "cut {cut}"
            );
        }
        assert_eq!(parser.parse(&bytes), Ok(Status::Complete(&b"hello"[..], 9)));
    }

    #[test]
    fn trailing_bytes_are_left_alone() {
        let mut bytes = frame(b"");
        bytes.extend_from_slice(&frame(b"next"));
        let mut parser = LengthPrefixed::new(4);
        assert_eq!(parser.parse(&bytes), Ok(Status::Complete(&b""[..], 4)));
    }

    #[test]
    fn too_long_is_reported_from_the_prefix_alone() {
        let mut parser = LengthPrefixed::new(8);
        assert_eq!(parser.max_len().max, 8);
        assert_eq!(
            parser.parse(&[0, 0, 0, 9]),
            Err(FrameError::TooLong(LimitExceeded {
                name: "frame length",
                len: 9,
                max: 8
            }))
        );
        assert!(parser.parse(&[0, 0, 0, 8]).unwrap().is_partial());
        let err = parser.parse(&[0xff; 4]).unwrap_err();
        assert_eq!(
            err.to_string(),
            "frame length of 4294967295 bytes exceeds the limit of 8"
        );
        assert!(std::error::Error::source(&err).is_some());
    }
}
