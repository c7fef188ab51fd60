//! The trailer section of a chunked body (RFC 9112 section 7.1.2).

use crate::head::{HeaderIndex, SectionScan};
use crate::{Error, Headers, Limits};

/// Finds and indexes a trailer section, bounded like a head.
#[derive(Debug)]
pub(super) struct Trailers {
    /// The section parsed line by line as it arrives, in offsets from its
    /// start: it stays at the front of the caller's buffer until whole.
    scan: SectionScan,
    /// Allocated on the first trailer field, not for the common empty section.
    index: Vec<HeaderIndex>,
    max_len: usize,
    max_fields: usize,
}

impl Trailers {
    pub(super) fn new(limits: &Limits) -> Self {
        Trailers {
            scan: SectionScan::at(0),
            index: Vec::new(),
            max_len: limits.max_head_len,
            max_fields: limits.max_headers,
        }
    }

    /// Looks for the whole section at the front of `buf`; returns its length
    /// and fields once the empty line that ends it has arrived.
    #[inline]
    pub(super) fn section<'a>(
        &'a mut self,
        buf: &'a [u8],
    ) -> Result<Option<(usize, Headers<'a>)>, Error> {
        if buf.len() < self.scan.searched() {
            // The caller dropped bytes it was not told to: start afresh
            // rather than index out of bounds.
            self.scan = SectionScan::at(0);
            self.index.clear();
        }
        // A section must end within the limit, so searching further is waste
        // however much the caller has buffered.
        let window = &buf[..buf.len().min(self.max_len)];
        let (index, limit) = (&mut self.index, self.max_fields);
        let found = self.scan.advance(window, |field| {
            if index.len() == limit {
                return Err(Error::TooManyHeaders { limit });
            }
            index.push(field);
            Ok(())
        })?;
        let Some(len) = found else {
            if buf.len() > self.max_len {
                return Err(Error::HeadTooLarge {
                    limit: self.max_len,
                });
            }
            return Ok(None);
        };
        let section = &buf[..len];
        Ok(Some((len, Headers::new(section, &self.index))))
    }
}
