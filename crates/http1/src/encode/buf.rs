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
    /// Which framing field was written: `Content-Length` (false) or
    /// `Transfer-Encoding` (true). Sending both invites request smuggling.
    framing: Option<bool>,
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
            14 if name.eq_ignore_ascii_case("content-length") => Some(false),
            17 if name.eq_ignore_ascii_case("transfer-encoding") => Some(true),
            _ => None,
        };
        self.put_field(framing, name, value)
    }

    /// Writes the body's framing field, `content-length: digits` or
    /// `transfer-encoding: chunked`: fixed names and values known valid, so
    /// only the conflict check of [`field`](Self::field) is left (this runs
    /// for nearly every response).
    pub(super) fn framing(&mut self, chunked: bool, value: &[u8]) -> Result<(), EncodeError> {
        let name = if chunked {
            "transfer-encoding"
        } else {
            "content-length"
        };
        self.put_field(Some(chunked), name, value)
    }

    fn put_field(
        &mut self,
        framing: Option<bool>,
        name: &str,
        value: &[u8],
    ) -> Result<(), EncodeError> {
        if let (Some(new), Some(old)) = (framing, self.framing) {
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
    }

    #[test]
    fn one_framing_field_kind_per_head() {
        let mut buf = [0; 128];
        let mut out = HeadBuf::new(&mut buf, 2);
        out.framing(false, b"5").unwrap();
        out.field("Content-Length", b"5").unwrap();
        let conflict = Err(EncodeError::ConflictingFraming);
        assert_eq!(out.framing(true, b"chunked"), conflict);
        assert_eq!(out.field("TRANSFER-ENCODING", b"chunked"), conflict);
        let mut buf = [0; 128];
        let mut out = HeadBuf::new(&mut buf, 2);
        out.field("transfer-encoding", b"chunked").unwrap();
        assert_eq!(out.framing(false, b"5"), conflict);
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
