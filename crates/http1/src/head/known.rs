//! The fields whose meaning the codec itself needs (framing and connection
//! management), noted once while the head is parsed so nothing rescans it.

use super::{Span, Version};
use crate::chars::eq_folded;
use crate::Error;

/// What `Transfer-Encoding` said, across all of its field lines.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Codings {
    pub(crate) present: bool,
    /// `chunked` appeared at all.
    pub(crate) chunked_seen: bool,
    /// `chunked` was the last coding seen.
    pub(crate) chunked_last: bool,
    /// `chunked` appeared more than once (RFC 9112 section 6.1 forbids it).
    pub(crate) chunked_twice: bool,
    /// A coding other than `chunked` appeared.
    pub(crate) other: bool,
}

/// Connection tokens (RFC 9112 section 9.6) the codec acts on.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Tokens {
    pub(crate) close: bool,
    pub(crate) keep_alive: bool,
    pub(crate) upgrade: bool,
}

impl Tokens {
    /// Whether the connection persists after this message (RFC 9112
    /// section 9.3): HTTP/1.1 unless `close`, HTTP/1.0 only with `keep-alive`.
    #[inline]
    pub(crate) fn persistent(&self, version: Version) -> bool {
        match version {
            Version::Http11 => !self.close,
            Version::Http10 => self.keep_alive && !self.close,
        }
    }
}

#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Known {
    pub(crate) content_length: Option<u64>,
    pub(crate) codings: Codings,
    pub(crate) connection: Tokens,
    pub(crate) expect_continue: bool,
    pub(crate) upgrade: Option<Span>,
    pub(crate) hosts: u32,
    /// The last `Host` value, checked once the head is whole.
    pub(crate) host: Option<Span>,
}

impl Known {
    /// Notes one field; fails on values that break the framing rules.
    #[inline]
    pub(crate) fn observe(&mut self, name: &[u8], value: &[u8], span: Span) -> Result<(), Error> {
        // Dispatch on length and first letter: most fields match none of
        // these, and most that share a length differ in the first letter.
        let first = name.first().map_or(0, u8::to_ascii_lowercase);
        match (name.len(), first) {
            (4, b'h') | (6, b'e') | (7, b'u') | (10, b'c') | (14, b'c') | (17, b't') => {}
            _ => return Ok(()),
        }
        match name.len() {
            4 if eq_folded(name, b"host") => {
                self.hosts += 1;
                self.host = Some(span);
            }
            6 if eq_folded(name, b"expect") => {
                self.expect_continue |= eq_folded(value, b"100-continue");
            }
            7 if eq_folded(name, b"upgrade") => self.upgrade = Some(span),
            10 if eq_folded(name, b"connection") => {
                if eq_folded(value, b"keep-alive") {
                    // The common case, without splitting a list.
                    self.connection.keep_alive = true;
                    return Ok(());
                }
                for token in list(value) {
                    let t = &mut self.connection;
                    t.close |= eq_folded(token, b"close");
                    t.keep_alive |= eq_folded(token, b"keep-alive");
                    t.upgrade |= eq_folded(token, b"upgrade");
                }
            }
            14 if eq_folded(name, b"content-length") => {
                // RFC 9110 section 8.6: a list of identical values may stand
                // for one; anything else is unframeable.
                for element in value.split(|&b| b == b',') {
                    let n = parse_length(trim(element)).ok_or(Error::InvalidContentLength)?;
                    match self.content_length {
                        Some(seen) if seen != n => return Err(Error::ConflictingContentLength),
                        _ => self.content_length = Some(n),
                    }
                }
            }
            17 if eq_folded(name, b"transfer-encoding") => {
                let c = &mut self.codings;
                c.present = true;
                for coding in list(value) {
                    // Parameters (`;q=1`) do not change which coding it is.
                    let name = trim(coding.split(|&b| b == b';').next().unwrap_or_default());
                    if eq_folded(name, b"chunked") {
                        c.chunked_twice |= c.chunked_seen;
                        c.chunked_seen = true;
                        c.chunked_last = true;
                    } else {
                        c.chunked_last = false;
                        c.other = true;
                    }
                }
            }
            _ => {}
        }
        Ok(())
    }
}

/// The non-empty elements of a comma-separated list (RFC 9110 section 5.6.1).
fn list(value: &[u8]) -> impl Iterator<Item = &[u8]> {
    value
        .split(|&b| b == b',')
        .map(trim)
        .filter(|e| !e.is_empty())
}

fn trim(mut s: &[u8]) -> &[u8] {
    while let [b' ' | b'\t', rest @ ..] = s {
        s = rest;
    }
    while let [rest @ .., b' ' | b'\t'] = s {
        s = rest;
    }
    s
}

/// `1*DIGIT` that fits in a `u64`.
fn parse_length(digits: &[u8]) -> Option<u64> {
    if digits.is_empty() {
        return None;
    }
    digits.iter().try_fold(0u64, |n, &d| {
        if d.is_ascii_digit() {
            n.checked_mul(10)?.checked_add(u64::from(d - b'0'))
        } else {
            None
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn known(fields: &[(&str, &str)]) -> Result<Known, Error> {
        let mut k = Known::default();
        for (name, value) in fields {
            k.observe(name.as_bytes(), value.as_bytes(), Span::default())?;
        }
        Ok(k)
    }

    #[test]
    fn content_length_lists_must_agree() {
        assert_eq!(
            known(&[("Content-Length", "5, 5")]).unwrap().content_length,
            Some(5)
        );
        let both = known(&[("content-length", "5"), ("CONTENT-LENGTH", "5")]);
        assert_eq!(both.unwrap().content_length, Some(5));
        let differ = known(&[("content-length", "5"), ("content-length", "6")]);
        assert_eq!(differ.unwrap_err(), Error::ConflictingContentLength);
        for bad in ["", "-1", "+5", "5 5", "0x5", "18446744073709551616", "5,"] {
            let err = known(&[("content-length", bad)]).unwrap_err();
            assert_eq!(err, Error::InvalidContentLength, "{bad:?}");
        }
        let max = known(&[("content-length", "18446744073709551615")]).unwrap();
        assert_eq!(max.content_length, Some(u64::MAX));
    }

    #[test]
    fn transfer_codings_are_tracked_in_order() {
        let c = |v: &[(&str, &str)]| known(v).unwrap().codings;
        let chunked = c(&[("Transfer-Encoding", "chunked")]);
        assert!(chunked.chunked_last && !chunked.other && !chunked.chunked_twice);
        let gzip_chunked = c(&[
            ("transfer-encoding", "gzip"),
            ("transfer-encoding", "Chunked"),
        ]);
        assert!(gzip_chunked.chunked_last && gzip_chunked.other);
        let late = c(&[("transfer-encoding", "chunked, gzip")]);
        assert!(!late.chunked_last && !late.chunked_twice);
        assert!(c(&[("transfer-encoding", "chunked,chunked")]).chunked_twice);
        let empty = c(&[("transfer-encoding", " , ")]);
        assert!(empty.present && !empty.chunked_last);
    }

    #[test]
    fn connection_tokens_are_case_insensitive_list_members() {
        let k = known(&[
            ("Connection", "Keep-Alive, UPGRADE"),
            ("connection", "x,close"),
        ])
        .unwrap();
        assert_eq!(
            k.connection,
            Tokens {
                close: true,
                keep_alive: true,
                upgrade: true
            }
        );
        assert!(!known(&[("connection", "closed")]).unwrap().connection.close);
    }
}
