//! The write cursor every encoder shares: all-or-nothing writes into the
//! caller's buffer, and field lines validated before they are written.

use std::fmt;

use super::EncodeError;
use crate::chars::{is_token_str, is_value_byte};

/// A cursor over the caller's buffer.
///
/// `tail` counts bytes still to come whatever the caller adds (the end of
/// the request line, the empty line that ends a head), so the `needed` of a
/// `BufferFull` is a tighter lower bound and the caller retries less often.
pub(super) struct HeadBuf<'b> {
    buf: &'b mut [u8],
    len: usize,
    tail: usize,
    /// The framing field written, if any. Sending both kinds, or lengths
    /// that differ, invites request smuggling.
    framing: Option<Framing>,
}

/// A body's framing, as a head's fields declare it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Framing {
    /// `Content-Length` with this value.
    Length(u64),
    /// `Transfer-Encoding`.
    Coded,
}

impl<'b> HeadBuf<'b> {
    pub(super) fn new(buf: &'b mut [u8], tail: usize) -> Self {
        HeadBuf {
            buf,
            len: 0,
            tail,
            framing: None,
        }
    }

    /// Bytes written so far.
    pub(super) fn len(&self) -> usize {
        self.len
    }

    pub(super) fn set_tail(&mut self, tail: usize) {
        self.tail = tail;
    }

    /// Claims the next `n` bytes, or fails without claiming any.
    pub(super) fn take(&mut self, n: usize) -> Result<&mut [u8], EncodeError> {
        let end = self.len.saturating_add(n);
        let Some(out) = self.buf.get_mut(self.len..end) else {
            return Err(EncodeError::BufferFull {
                needed: end.saturating_add(self.tail),
            });
        };
        self.len = end;
        Ok(out)
    }

    /// Writes `parts` one after another, all of them or none.
    pub(super) fn put(&mut self, parts: &[&[u8]]) -> Result<(), EncodeError> {
        let n = parts
            .iter()
            .fold(0, |n: usize, p| n.saturating_add(p.len()));
        let mut out = self.take(n)?;
        for part in parts {
            let (head, rest) = out.split_at_mut(part.len());
            head.copy_from_slice(part);
            out = rest;
        }
        Ok(())
    }

    /// Writes `name: value` CRLF after validating both.
    pub(super) fn field(&mut self, name: &str, value: &[u8]) -> Result<(), EncodeError> {
        check_field(name, value)?;
        let framing = match name.len() {
            14 if name.eq_ignore_ascii_case("content-length") => {
                Some(Framing::Length(content_length(value)?))
            }
            17 if name.eq_ignore_ascii_case("transfer-encoding") => Some(Framing::Coded),
            _ => None,
        };
        self.put_field(framing, name, value)
    }

    /// Writes the body's framing field, `content-length: digits` (`value`
    /// the digits of that length) or `transfer-encoding: chunked`: fixed
    /// names and values known valid, so only the conflict check of
    /// [`field`](Self::field) is left (this runs for nearly every response).
    pub(super) fn framing(&mut self, framing: Framing, value: &[u8]) -> Result<(), EncodeError> {
        let name = match framing {
            Framing::Coded => "transfer-encoding",
            Framing::Length(_) => "content-length",
        };
        self.put_field(Some(framing), name, value)
    }

    fn put_field(
        &mut self,
        framing: Option<Framing>,
        name: &str,
        value: &[u8],
    ) -> Result<(), EncodeError> {
        if let (Some(new), Some(old)) = (framing, self.framing) {
            // The same length twice is one framing (so are codings listed over
            // two fields); a length against codings, or another length, is not.
            if new != old {
                return Err(EncodeError::ConflictingFraming);
            }
        }
        self.put(&[name.as_bytes(), b": ", value, b"\r\n"])?;
        self.framing = framing.or(self.framing);
        Ok(())
    }

    /// Writes the empty line that ends a head or trailer section; returns the
    /// length of everything written.
    pub(super) fn finish(mut self) -> Result<usize, EncodeError> {
        self.tail = 0;
        self.put(&[b"\r\n"])?;
        Ok(self.len)
    }
}

impl fmt::Debug for HeadBuf<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // The buffer may be a large reservation: show what was written.
        let written = self.buf.get(..self.len).unwrap_or_default();
        f.debug_struct("HeadBuf")
            .field("written", &String::from_utf8_lossy(written))
            .field("capacity", &self.buf.len())
            .finish()
    }
}

/// A `Content-Length` value: decimal digits (RFC 9110 section 8.6), as a
/// receiver will parse them.
fn content_length(value: &[u8]) -> Result<u64, EncodeError> {
    let digits = !value.is_empty() && value.iter().all(u8::is_ascii_digit);
    std::str::from_utf8(value)
        .ok()
        .filter(|_| digits)
        .and_then(|text| text.parse().ok())
        .ok_or(EncodeError::InvalidContentLength)
}

/// Checks a field line (RFC 9110 section 5): the name a token, the value
/// free of control characters other than HTAB and without the leading or
/// trailing whitespace a receiver strips, so what arrives is what was sent.
pub(super) fn check_field(name: &str, value: &[u8]) -> Result<(), EncodeError> {
    if !is_token_str(name.as_bytes()) {
        return Err(EncodeError::InvalidHeaderName);
    }
    let blank = |b: Option<&u8>| matches!(b, Some(b' ' | b'\t'));
    // Without short-circuiting, so that the check compiles to vector code:
    // values are checked on every response a server writes.
    let valid = value.iter().fold(true, |ok, &b| ok & is_value_byte(b));
    if blank(value.first()) || blank(value.last()) || !valid {
        return Err(EncodeError::InvalidHeaderValue);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn put_is_all_or_nothing() {
        let mut buf = [0; 8];
        let mut out = HeadBuf::new(&mut buf, 2);
        out.put(&[b"abc", b"de"]).unwrap();
        assert_eq!(
            out.put(&[b"fg", b"hi"]),
            Err(EncodeError::BufferFull { needed: 11 })
        );
        assert_eq!(out.len(), 5);
        out.put(&[b"f", b"gh"]).unwrap();
        assert_eq!(&buf, b"abcdefgh");
    }

    #[test]
    fn length_and_chunked_framing_exclude_each_other() {
        let mut buf = [0; 64];
        let mut out = HeadBuf::new(&mut buf, 0);
        out.field("Content-Length", b"5").unwrap();
        out.field("content-length", b"5").unwrap();
        assert_eq!(
            out.field("Transfer-Encoding", b"chunked"),
            Err(EncodeError::ConflictingFraming)
        );
        assert_eq!(
            out.field("Content-Length", b"6"),
            Err(EncodeError::ConflictingFraming),
            "two lengths that differ"
        );
    }

    #[test]
    fn content_length_values_are_digits() {
        let mut buf = [0; 64];
        let mut out = HeadBuf::new(&mut buf, 0);
        for bad in [
            &b""[..],
            b"-1",
            b"+5",
            b"5 5",
            b"0x10",
            b"1,1",
            b"99999999999999999999",
        ] {
            assert_eq!(
                out.field("content-length", bad),
                Err(EncodeError::InvalidContentLength),
                "{bad:?}"
            );
        }
        out.field("content-length", b"007").unwrap();
    }

    #[test]
    fn one_framing_field_kind_per_head() {
        let mut buf = [0; 128];
        let mut out = HeadBuf::new(&mut buf, 2);
        out.framing(Framing::Length(5), b"5").unwrap();
        out.field("Content-Length", b"5").unwrap();
        let conflict = Err(EncodeError::ConflictingFraming);
        assert_eq!(out.framing(Framing::Coded, b"chunked"), conflict);
        assert_eq!(out.field("TRANSFER-ENCODING", b"chunked"), conflict);
        let mut buf = [0; 128];
        let mut out = HeadBuf::new(&mut buf, 2);
        out.field("transfer-encoding", b"chunked").unwrap();
        assert_eq!(out.framing(Framing::Length(5), b"5"), conflict);
        let n = out.finish().unwrap();
        assert_eq!(&buf[..n], b"transfer-encoding: chunked\r\n\r\n");
    }

    #[test]
    fn fields_are_validated() {
        assert_eq!(check_field("x-ok", b"a \tb\x80"), Ok(()));
        assert_eq!(check_field("x-empty", b""), Ok(()));
        for name in ["", "a b", "a:b", "a\r\nb", "a\0", "é", "a\tb", "(a)"] {
            assert_eq!(
                check_field(name, b"v"),
                Err(EncodeError::InvalidHeaderName),
                "{name:?}"
            );
        }
        let bad: [&[u8]; 9] = [
            b"a\rb",
            b"a\nb",
            b"a\r\nx: y",
            b"a\0",
            b"\x7f",
            b"\x1b[0m",
            b" a",
            b"a\t",
            b" ",
        ];
        for value in bad {
            assert_eq!(
                check_field("x", value),
                Err(EncodeError::InvalidHeaderValue),
                "{value:?}"
            );
        }
    }
}
