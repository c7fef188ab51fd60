//! Field lines (RFC 9112 section 5): shared by request heads, response heads
//! and chunked trailers.

use crate::chars::{find, token_end, value_end};
use crate::head::{HeaderIndex, Span};
use crate::Error;

/// Where a field-section parse stopped.
pub(crate) enum Fields {
    /// The empty line was found; the section (with it) ends at this offset.
    End(usize),
    /// The bytes run out; the last complete line ends at this offset.
    Partial(usize),
}

/// Parses field lines from `buf[at..]` through the empty line that ends
/// the section, handing each field's offsets to `each`.
///
/// Values are trimmed of surrounding whitespace. Errors name the first
/// rule broken; a line cut off by the end of `buf` is not an error.
#[inline]
pub(crate) fn parse_fields(
    buf: &[u8],
    mut at: usize,
    mut each: impl FnMut(HeaderIndex) -> Result<(), Error>,
) -> Result<Fields, Error> {
    loop {
        let line = at;
        match buf.get(at) {
            None => return Ok(Fields::Partial(line)),
            Some(b'\r') => {
                return match buf.get(at + 1) {
                    Some(b'\n') => Ok(Fields::End(at + 2)),
                    Some(_) => Err(Error::BareCr),
                    None => Ok(Fields::Partial(line)),
                }
            }
            Some(b'\n') => return Err(Error::BareLf),
            Some(b' ' | b'\t') => return Err(Error::ObsFold),
            Some(_) => {}
        }
        let name_start = at;
        at = token_end(buf, at);
        match buf.get(at) {
            None => return Ok(Fields::Partial(line)),
            Some(b':') if at > name_start => {}
            Some(b' ' | b'\t') if at > name_start => return Err(Error::WhitespaceBeforeColon),
            Some(_) => return Err(Error::InvalidHeaderName),
        }
        let name = Span::new(name_start, at);
        at += 1;
        // Usually one space, then the value.
        if buf.get(at) == Some(&b' ') {
            at += 1;
        }
        while matches!(buf.get(at), Some(b' ' | b'\t')) {
            at += 1;
        }
        let value_start = at;
        let value_stop = loop {
            at = value_end(buf, at);
            match buf.get(at) {
                None => return Ok(Fields::Partial(line)),
                Some(b'\t') => at += 1,
                Some(b'\r') => match buf.get(at + 1) {
                    Some(b'\n') => break at,
                    Some(_) => return Err(Error::BareCr),
                    None => return Ok(Fields::Partial(line)),
                },
                Some(b'\n') => return Err(Error::BareLf),
                Some(_) => return Err(Error::InvalidHeaderValue),
            }
        };
        let value = &buf[value_start..value_stop];
        let value_end = match value.last() {
            Some(b' ' | b'\t') => value_start + value.trim_ascii_end().len(),
            _ => value_stop,
        };
        each(HeaderIndex {
            name,
            value: Span::new(value_start, value_end),
        })?;
        at = value_stop + 2;
    }
}

/// A field section parsed as it arrives: each line is validated as soon as
/// its LF is in, by the same [`parse_fields`] a whole section goes through
/// (so the errors do not depend on where reads end), and each byte is
/// searched for that LF once, whatever the split.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct SectionScan {
    /// Bytes already searched.
    searched: usize,
    /// Start of the line not yet complete.
    line: usize,
}

impl SectionScan {
    /// A section whose next line starts at `from`.
    pub(crate) fn at(from: usize) -> Self {
        SectionScan {
            searched: from,
            line: from,
        }
    }

    /// Bytes of `buf` searched so far.
    pub(crate) fn searched(&self) -> usize {
        self.searched
    }

    /// Whether the bytes that arrived since the last call complete no line
    /// (then they count as searched); `false` leaves the work to
    /// [`advance`](Self::advance).
    #[inline]
    pub(crate) fn skip_partial_line(&mut self, buf: &[u8]) -> bool {
        match buf.get(self.searched..) {
            Some(new) if find_lf(new).is_none() => {
                self.searched = buf.len();
                true
            }
            _ => false,
        }
    }

    /// Parses the lines completed since the last call, handing each field to
    /// `each`; returns the offset just past the empty line that ends the
    /// section, once it is in.
    #[inline]
    pub(crate) fn advance(
        &mut self,
        buf: &[u8],
        mut each: impl FnMut(HeaderIndex) -> Result<(), Error>,
    ) -> Result<Option<usize>, Error> {
        while let Some(i) = find_lf(&buf[self.searched..]) {
            let end = self.searched + i + 1;
            let line = self.line;
            self.searched = end;
            self.line = end;
            if let Fields::End(len) = parse_fields(&buf[..end], line, &mut each)? {
                return Ok(Some(len));
            }
        }
        self.searched = buf.len();
        Ok(None)
    }
}

/// The first LF in `bytes`.
#[inline]
pub(crate) fn find_lf(bytes: &[u8]) -> Option<usize> {
    find(b'\n', bytes)
}
