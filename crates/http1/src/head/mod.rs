//! Message heads: request and status lines, field lines, and the facts the
//! framing rules need, kept as offsets into the caller's buffer.

mod fields;
mod known;
mod request;
mod response;

pub(crate) use fields::{find_lf, parse_fields, Fields, SectionScan};
pub(crate) use known::Known;
pub use request::{Method, Request, RequestHead, RequestParser};
pub use response::{Response, ResponseHead, ResponseParser};

use std::fmt;

use crate::{Error, Limits};

/// A byte range of the buffer a head was parsed from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct Span {
    start: u32,
    end: u32,
}

impl Span {
    /// Heads are bounded by [`Limits::max_head_len`](crate::Limits), far
    /// below 4 GiB, so offsets fit in 32 bits and an index stays 16 bytes.
    #[inline]
    pub(crate) fn new(start: usize, end: usize) -> Self {
        debug_assert!(start <= end && end <= u32::MAX as usize);
        Span {
            start: start as u32,
            end: end as u32,
        }
    }

    #[inline]
    pub(crate) fn of<'a>(&self, buf: &'a [u8]) -> &'a [u8] {
        &buf[self.start as usize..self.end as usize]
    }
}

/// One field's name and value, as offsets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct HeaderIndex {
    pub(crate) name: Span,
    pub(crate) value: Span,
}

/// The field section of a head: the index of its fields and what the codec
/// itself needs from them. Reused across messages, so warm parsers do not
/// allocate.
#[derive(Debug, Clone, Default)]
pub(crate) struct HeadFields {
    pub(crate) index: Vec<HeaderIndex>,
    pub(crate) known: Known,
}

impl HeadFields {
    #[inline]
    pub(crate) fn with_capacity(limits: &Limits) -> Self {
        HeadFields {
            index: Vec::with_capacity(limits.max_headers.min(32)),
            known: Known::default(),
        }
    }

    /// Parses the field lines from `at` through the empty line, within
    /// `limits`, starting a fresh index.
    #[inline]
    pub(crate) fn parse(
        &mut self,
        buf: &[u8],
        at: usize,
        limits: &Limits,
    ) -> Result<Fields, Error> {
        self.index.clear();
        self.known = Known::default();
        let fields = parse_fields(buf, at, |h| self.record(buf, h, limits))?;
        match fields {
            Fields::End(len) => Self::bounded(len, limits).map(Fields::End),
            partial => Ok(partial),
        }
    }

    /// Goes on with a section that arrives in pieces: indexes the lines
    /// `scan` completes; the section's length once its empty line is in.
    #[inline]
    pub(crate) fn resume(
        &mut self,
        scan: &mut SectionScan,
        buf: &[u8],
        limits: &Limits,
    ) -> Result<Option<usize>, Error> {
        match scan.advance(buf, |h| self.record(buf, h, limits))? {
            Some(len) => Self::bounded(len, limits).map(Some),
            None => Ok(None),
        }
    }

    #[inline]
    fn record(&mut self, buf: &[u8], h: HeaderIndex, limits: &Limits) -> Result<(), Error> {
        let limit = limits.max_headers;
        if self.index.len() == limit {
            return Err(Error::TooManyHeaders { limit });
        }
        self.known
            .observe(h.name.of(buf), h.value.of(buf), h.value)?;
        self.index.push(h);
        Ok(())
    }

    fn bounded(len: usize, limits: &Limits) -> Result<usize, Error> {
        if len > limits.max_head_len {
            return Err(Error::HeadTooLarge {
                limit: limits.max_head_len,
            });
        }
        Ok(len)
    }
}

/// The protocol version of a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Version {
    /// HTTP/1.0: connections close unless `Connection: keep-alive`.
    Http10,
    /// HTTP/1.1: connections persist unless `Connection: close`.
    Http11,
}

impl Version {
    /// The version as it appears on the wire.
    #[must_use]
    #[inline]
    pub fn as_str(self) -> &'static str {
        match self {
            Version::Http10 => "HTTP/1.0",
            Version::Http11 => "HTTP/1.1",
        }
    }

    /// Judges the first bytes of a version as they arrive: once all eight
    /// are here, as [`parse`](Version::parse) does (so the error never
    /// depends on where a read ended); before, only that they can still
    /// become `HTTP/d.d`.
    #[inline]
    pub(crate) fn check_prefix(bytes: &[u8]) -> Result<(), crate::Error> {
        if let Some(version) = bytes.get(..8) {
            return Version::parse(version).map(drop);
        }
        let fits = bytes.iter().enumerate().all(|(k, &b)| match k {
            0..=4 => b == b"HTTP/"[k],
            6 => b == b'.',
            _ => b.is_ascii_digit(),
        });
        if fits {
            Ok(())
        } else {
            Err(crate::Error::InvalidVersion)
        }
    }

    /// Parses the eight bytes of `HTTP/d.d`.
    #[inline]
    pub(crate) fn parse(bytes: &[u8]) -> Result<Version, crate::Error> {
        match bytes {
            b"HTTP/1.1" => Ok(Version::Http11),
            b"HTTP/1.0" => Ok(Version::Http10),
            [b'H', b'T', b'T', b'P', b'/', major, b'.', minor]
                if major.is_ascii_digit() && minor.is_ascii_digit() =>
            {
                Err(crate::Error::UnsupportedVersion)
            }
            _ => Err(crate::Error::InvalidVersion),
        }
    }
}

impl fmt::Display for Version {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A field name as received. Names are tokens, so always ASCII; compare
/// them with [`eq_ignore_ascii_case`](HeaderName::eq_ignore_ascii_case),
/// as field names are case-insensitive.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct HeaderName<'a>(&'a [u8]);

impl<'a> HeaderName<'a> {
    /// The name's bytes.
    #[inline]
    #[must_use]
    pub fn as_bytes(&self) -> &'a [u8] {
        self.0
    }

    /// The name as a string (checked again here, as safe code must; the
    /// parser itself never pays for it).
    #[must_use]
    #[inline]
    pub fn as_str(&self) -> &'a str {
        std::str::from_utf8(self.0).unwrap_or_default()
    }

    /// Whether this is the field `name`, ignoring ASCII case.
    #[inline]
    #[must_use]
    pub fn eq_ignore_ascii_case(&self, name: &str) -> bool {
        self.0.eq_ignore_ascii_case(name.as_bytes())
    }
}

impl fmt::Display for HeaderName<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl fmt::Debug for HeaderName<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

/// One header field, borrowed from the buffer it was parsed from.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Header<'a> {
    /// The field name as sent.
    pub name: HeaderName<'a>,
    /// The value without surrounding whitespace; may hold obs-text bytes.
    pub value: &'a [u8],
}

impl fmt::Debug for Header<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Header")
            .field("name", &self.name)
            .field("value", &String::from_utf8_lossy(self.value))
            .finish()
    }
}

/// The header fields of a head, or the trailer fields of a chunked body, in
/// the order received.
#[derive(Clone, Copy)]
pub struct Headers<'a> {
    buf: &'a [u8],
    index: &'a [HeaderIndex],
}

impl<'a> Headers<'a> {
    pub(crate) fn new(buf: &'a [u8], index: &'a [HeaderIndex]) -> Self {
        Headers { buf, index }
    }

    /// Number of fields.
    #[must_use]
    #[inline]
    pub fn len(&self) -> usize {
        self.index.len()
    }

    /// Whether there are no fields.
    #[must_use]
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.index.is_empty()
    }

    /// The field at position `i`.
    #[must_use]
    #[inline]
    pub fn at(&self, i: usize) -> Option<Header<'a>> {
        self.index.get(i).map(|h| self.header(h))
    }

    /// The value of the first field named `name` (ASCII case-insensitive).
    #[must_use]
    #[inline]
    pub fn get(&self, name: &str) -> Option<&'a [u8]> {
        self.get_all(name).next()
    }

    /// The values of every field named `name` (ASCII case-insensitive).
    #[inline]
    pub fn get_all<'n>(&self, name: &'n str) -> impl Iterator<Item = &'a [u8]> + 'n
    where
        'a: 'n,
    {
        self.iter()
            .filter(move |h| h.name.eq_ignore_ascii_case(name))
            .map(|h| h.value)
    }

    /// Every field, in order.
    #[must_use]
    #[inline]
    pub fn iter(&self) -> HeaderIter<'a> {
        HeaderIter {
            buf: self.buf,
            index: self.index.iter(),
        }
    }

    #[inline]
    fn header(&self, h: &HeaderIndex) -> Header<'a> {
        header(self.buf, h)
    }
}

#[inline]
fn header<'a>(buf: &'a [u8], h: &HeaderIndex) -> Header<'a> {
    Header {
        name: HeaderName(h.name.of(buf)),
        value: h.value.of(buf),
    }
}

/// Iterator over [`Headers`].
#[derive(Debug, Clone)]
pub struct HeaderIter<'a> {
    buf: &'a [u8],
    index: std::slice::Iter<'a, HeaderIndex>,
}

impl<'a> Iterator for HeaderIter<'a> {
    type Item = Header<'a>;

    #[inline]
    fn next(&mut self) -> Option<Header<'a>> {
        self.index.next().map(|h| header(self.buf, h))
    }

    #[inline]
    fn size_hint(&self) -> (usize, Option<usize>) {
        self.index.size_hint()
    }
}

impl ExactSizeIterator for HeaderIter<'_> {}

impl fmt::Debug for Headers<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl<'a> IntoIterator for Headers<'a> {
    type Item = Header<'a>;
    type IntoIter = HeaderIter<'a>;
    #[inline]
    fn into_iter(self) -> HeaderIter<'a> {
        self.iter()
    }
}
