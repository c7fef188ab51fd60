//! Field lines (RFC 9112 section 5): shared by request heads, response heads
//! and chunked trailers.

use crate::chars::{token_end, value_end};
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

/// Resumable search for the end of a field section in bytes that arrive
/// piecewise: each byte is looked at once, whatever the split.
///
/// Only line ends are examined (with SIMD `memchr`); a bare LF fails here at
/// once, everything else is left to [`parse_fields`] when the section is
/// whole.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct SectionScan {
    /// Bytes already searched.
    searched: usize,
    /// Start of the line being searched.
    line: usize,
}

impl SectionScan {
    /// A search whose first line starts at `from`.
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

    /// Searches the bytes that arrived since the last call; returns the
    /// offset just past the empty line that ends the section, if present.
    #[inline]
    pub(crate) fn find_end(&mut self, buf: &[u8]) -> Result<Option<usize>, Error> {
        while let Some(i) = find_lf(&buf[self.searched..]) {
            let lf = self.searched + i;
            if lf == 0 || buf[lf - 1] != b'\r' {
                return Err(Error::BareLf);
            }
            self.searched = lf + 1;
            if lf - 1 == self.line {
                return Ok(Some(lf + 1));
            }
            self.line = lf + 1;
        }
        self.searched = buf.len();
        Ok(None)
    }
}

/// The first LF in `bytes`: `memchr` for long spans; a plain loop for the
/// few bytes a small read adds, where `memchr`'s setup costs more than it saves.
#[inline]
fn find_lf(bytes: &[u8]) -> Option<usize> {
    if bytes.len() < 16 {
        bytes.iter().position(|&b| b == b'\n')
    } else {
        memchr::memchr(b'\n', bytes)
    }
}
