//! Request targets (RFC 9112 section 3.2): views over the bytes as received,
//! split and percent-decoded lazily and without allocating.
//!
//! Nothing here normalizes. `.` and `..` segments, `%2F` inside a segment
//! and empty segments come out as sent; resolving them (RFC 3986 section
//! 5.2.4) and deciding whether `/a%2Fb` is `/a/b` are the server's policy.

use std::borrow::Cow;
use std::fmt;
use std::iter::FusedIterator;

use memchr::{memchr, memchr2};

use crate::chars::{find, hex_digit};

/// The four shapes of a request target (RFC 9112 section 3.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TargetForm {
    /// `/path?query`: what requests to an origin server carry.
    Origin,
    /// `scheme://authority/path?query`: requests to a proxy.
    Absolute,
    /// `host:port`: CONNECT.
    Authority,
    /// `*`: a server-wide OPTIONS.
    Asterisk,
}

/// A request target as received, with lazy views of its parts.
///
/// The parser has already checked that every byte is visible ASCII; this
/// type only classifies and splits, and any input is safe to view.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Target<'a> {
    raw: &'a [u8],
}

impl<'a> Target<'a> {
    /// Views `raw`, the target bytes of a request line.
    #[must_use]
    pub fn new(raw: &'a [u8]) -> Self {
        Target { raw }
    }

    /// The target exactly as received.
    #[must_use]
    #[inline]
    pub fn as_bytes(&self) -> &'a [u8] {
        self.raw
    }

    /// Which form the target has, judged from its shape alone: `/…` is
    /// origin form, exactly `*` is asterisk form, `scheme://…` is absolute
    /// form, and anything else is taken for authority form.
    #[must_use]
    #[inline]
    pub fn form(&self) -> TargetForm {
        match self.raw {
            [b'/', ..] => TargetForm::Origin,
            b"*" => TargetForm::Asterisk,
            raw if authority_start(raw).is_some() => TargetForm::Absolute,
            _ => TargetForm::Authority,
        }
    }

    /// The path, still percent-encoded, without query or fragment. In
    /// absolute form the scheme and authority are left out too, and an empty
    /// path reads as `/`. Asterisk form gives `*`; authority form, which
    /// has no path, gives nothing.
    #[must_use]
    #[inline]
    pub fn path(&self) -> &'a [u8] {
        self.split().0
    }

    /// The query, still percent-encoded, without its `?`; `None` when there
    /// is no `?`. A fragment (`#…`), which clients must not send, is cut off.
    #[must_use]
    #[inline]
    pub fn query(&self) -> Option<&'a [u8]> {
        self.split().1
    }

    /// The path percent-decoded (a `+` stays a `+`).
    #[must_use]
    #[inline]
    pub fn decoded_path(&self) -> PercentDecoded<'a> {
        PercentDecoded::new(self.path(), false)
    }

    /// The path segments between slashes, each percent-decoded on demand.
    ///
    /// `/a/b` gives `a`, `b`; `/` gives one empty segment; `//a/` gives
    /// empty, `a`, empty. Segments are not normalized: `.`, `..` and `%2F`
    /// come out as they are (see the [module docs](self)). A path not
    /// starting with `/` (asterisk and authority form) has no segments.
    #[must_use]
    #[inline]
    pub fn segments(&self) -> Segments<'a> {
        Segments {
            rest: self.path().strip_prefix(b"/"),
        }
    }

    /// The query's `key=value` pairs, form-decoded (`+` is a space) on
    /// demand. A pair without `=` has an empty value; empty pairs (`a&&b`)
    /// are skipped.
    #[must_use]
    #[inline]
    pub fn query_pairs(&self) -> QueryPairs<'a> {
        QueryPairs { rest: self.query() }
    }

    #[inline]
    fn split(&self) -> (&'a [u8], Option<&'a [u8]>) {
        let raw = match find(b'#', self.raw) {
            Some(hash) => &self.raw[..hash],
            None => self.raw,
        };
        let rest = match self.form() {
            TargetForm::Origin => raw,
            TargetForm::Asterisk => return (raw, None),
            TargetForm::Authority => return (b"", None),
            TargetForm::Absolute => {
                let after = raw
                    .get(authority_start(raw).unwrap_or(0)..)
                    .unwrap_or_default();
                let path = memchr2(b'/', b'?', after).unwrap_or(after.len());
                &after[path..]
            }
        };
        let (path, query) = match find(b'?', rest) {
            Some(q) => (&rest[..q], Some(&rest[q + 1..])),
            None => (rest, None),
        };
        (if path.is_empty() { b"/" } else { path }, query)
    }
}

impl fmt::Debug for Target<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("Target")
            .field(&String::from_utf8_lossy(self.raw))
            .finish()
    }
}

/// Where the authority starts after `scheme://`, if `raw` begins with one
/// (RFC 3986 section 3.1: a letter, then letters, digits, `+`, `-`, `.`).
#[inline]
fn authority_start(raw: &[u8]) -> Option<usize> {
    let colon = memchr(b':', raw)?;
    let (scheme, rest) = raw.split_at(colon);
    let scheme_ok = scheme.first().is_some_and(u8::is_ascii_alphabetic)
        && scheme
            .iter()
            .all(|&b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'-' | b'.'));
    (scheme_ok && rest.starts_with(b"://")).then_some(colon + 3)
}

/// Iterator over the path segments of a [`Target`].
#[derive(Debug, Clone)]
pub struct Segments<'a> {
    /// What follows the last slash consumed; `None` when done.
    rest: Option<&'a [u8]>,
}

impl<'a> Iterator for Segments<'a> {
    type Item = PercentDecoded<'a>;

    #[inline]
    fn next(&mut self) -> Option<PercentDecoded<'a>> {
        let rest = self.rest?;
        let (segment, next) = split_once(rest, b'/');
        self.rest = next;
        Some(PercentDecoded::new(segment, false))
    }
}

impl FusedIterator for Segments<'_> {}

/// Iterator over the query pairs of a [`Target`].
#[derive(Debug, Clone)]
pub struct QueryPairs<'a> {
    rest: Option<&'a [u8]>,
}

impl<'a> QueryPairs<'a> {
    /// The pairs of `encoded`, a query or an `application/x-www-form-urlencoded` body (an
    /// HTML form's), decoded on demand as [`Target::query_pairs`] decodes a query's.
    #[must_use]
    #[inline]
    pub fn new(encoded: &'a [u8]) -> Self {
        QueryPairs {
            rest: Some(encoded),
        }
    }
}

impl<'a> Iterator for QueryPairs<'a> {
    type Item = (PercentDecoded<'a>, PercentDecoded<'a>);

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        loop {
            let (pair, next) = split_once(self.rest?, b'&');
            self.rest = next;
            if pair.is_empty() {
                continue;
            }
            let (key, value) = split_once(pair, b'=');
            return Some((
                PercentDecoded::new(key, true),
                PercentDecoded::new(value.unwrap_or_default(), true),
            ));
        }
    }
}

impl FusedIterator for QueryPairs<'_> {}

/// What comes before the first `sep`, and what after it if there is one.
#[inline]
fn split_once(bytes: &[u8], sep: u8) -> (&[u8], Option<&[u8]>) {
    match find(sep, bytes) {
        Some(i) => (&bytes[..i], Some(&bytes[i + 1..])),
        None => (bytes, None),
    }
}

/// Percent-encoded bytes, decoded only when read.
///
/// `%` followed by two hex digits (either case) stands for that byte. An
/// escape that is cut short or not hex (`%4`, `%zz`) is no escape: its bytes
/// pass through as they are, so decoding never fails. In query pairs a `+`
/// also stands for a space (HTML form encoding).
#[derive(Clone, Copy)]
pub struct PercentDecoded<'a> {
    raw: &'a [u8],
    plus_as_space: bool,
}

impl<'a> PercentDecoded<'a> {
    fn new(raw: &'a [u8], plus_as_space: bool) -> Self {
        PercentDecoded { raw, plus_as_space }
    }

    /// Percent-encoded path bytes (a `+` stays a `+`), such as the part of a
    /// path a router matched.
    #[must_use]
    #[inline]
    pub fn path(raw: &'a [u8]) -> Self {
        Self::new(raw, false)
    }

    /// The bytes as received, still encoded.
    #[must_use]
    #[inline]
    pub fn raw(&self) -> &'a [u8] {
        self.raw
    }

    /// Whether decoding might change anything: there is a `%` (or a `+`
    /// where it means a space). When `false`, [`raw`](Self::raw) is the
    /// decoded form.
    #[must_use]
    #[inline]
    pub fn is_encoded(&self) -> bool {
        if self.plus_as_space {
            memchr2(b'%', b'+', self.raw).is_some()
        } else {
            memchr(b'%', self.raw).is_some()
        }
    }

    /// The decoded bytes, one at a time.
    #[must_use]
    #[inline]
    pub fn bytes(&self) -> DecodedBytes<'a> {
        DecodedBytes {
            rest: self.raw,
            plus_as_space: self.plus_as_space,
        }
    }

    /// Whether the decoded bytes are those of `s`, without allocating.
    #[must_use]
    #[inline]
    pub fn eq_str(&self, s: &str) -> bool {
        self.bytes().eq(s.bytes())
    }

    /// The decoded bytes, borrowed when nothing is encoded.
    #[must_use]
    #[inline]
    pub fn to_cow(&self) -> Cow<'a, [u8]> {
        if self.is_encoded() {
            Cow::Owned(self.bytes().collect())
        } else {
            Cow::Borrowed(self.raw)
        }
    }

    /// The decoded bytes as UTF-8, borrowed when nothing is encoded.
    ///
    /// # Errors
    ///
    /// The decoded bytes are not UTF-8.
    #[inline]
    pub fn to_str(&self) -> Result<Cow<'a, str>, std::str::Utf8Error> {
        match self.to_cow() {
            Cow::Borrowed(bytes) => std::str::from_utf8(bytes).map(Cow::Borrowed),
            Cow::Owned(bytes) => String::from_utf8(bytes)
                .map(Cow::Owned)
                .map_err(|e| e.utf8_error()),
        }
    }
}

impl fmt::Debug for PercentDecoded<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("PercentDecoded")
            .field(&String::from_utf8_lossy(self.raw))
            .finish()
    }
}

/// The decoded text, with U+FFFD for bytes that are not UTF-8.
impl fmt::Display for PercentDecoded<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for chunk in self.to_cow().utf8_chunks() {
            f.write_str(chunk.valid())?;
            if !chunk.invalid().is_empty() {
                f.write_str("\u{FFFD}")?;
            }
        }
        Ok(())
    }
}

/// Iterator over the decoded bytes of a [`PercentDecoded`].
#[derive(Debug, Clone)]
pub struct DecodedBytes<'a> {
    rest: &'a [u8],
    plus_as_space: bool,
}

impl Iterator for DecodedBytes<'_> {
    type Item = u8;

    #[inline]
    fn next(&mut self) -> Option<u8> {
        let (&b, rest) = self.rest.split_first()?;
        self.rest = rest;
        match b {
            b'%' => {
                if let [hi, lo, rest @ ..] = rest {
                    if let (Some(hi), Some(lo)) = (hex_digit(*hi), hex_digit(*lo)) {
                        self.rest = rest;
                        return Some((hi << 4) | lo);
                    }
                }
                Some(b'%')
            }
            b'+' if self.plus_as_space => Some(b' '),
            _ => Some(b),
        }
    }

    #[inline]
    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.rest.len().div_ceil(3), Some(self.rest.len()))
    }
}

impl FusedIterator for DecodedBytes<'_> {}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::encode::{EncodeError, RequestWriter};
    use crate::Version;
    use proptest::prelude::*;

    fn t(raw: &str) -> Target<'_> {
        Target::new(raw.as_bytes())
    }

    fn text(bytes: Option<&[u8]>) -> Option<&str> {
        bytes.map(|b| std::str::from_utf8(b).unwrap())
    }

    #[test]
    fn forms_paths_and_queries() {
        use TargetForm::*;
        let cases: [(&str, TargetForm, &str, Option<&str>); 17] = [
            ("/", Origin, "/", None),
            ("/a/b?x=1&y", Origin, "/a/b", Some("x=1&y")),
            ("/a?", Origin, "/a", Some("")),
            ("/a?b?c", Origin, "/a", Some("b?c")),
            ("/a#frag", Origin, "/a", None),
            ("/a?q#frag", Origin, "/a", Some("q")),
            ("//a", Origin, "//a", None),
            ("*", Asterisk, "*", None),
            ("http://example.com", Absolute, "/", None),
            ("http://example.com/", Absolute, "/", None),
            ("https://u@h:8443/p/q?x=y", Absolute, "/p/q", Some("x=y")),
            ("HTTP://h?x", Absolute, "/", Some("x")),
            ("svn+ssh://h/r", Absolute, "/r", None),
            ("example.com:443", Authority, "", None),
            ("[::1]:443", Authority, "", None),
            ("1http://h/", Authority, "", None),
            ("**", Authority, "", None),
        ];
        for (raw, form, path, query) in cases {
            let target = t(raw);
            assert_eq!(target.as_bytes(), raw.as_bytes());
            assert_eq!(target.form(), form, "{raw}");
            assert_eq!(text(Some(target.path())), Some(path), "{raw}");
            assert_eq!(text(target.query()), query, "{raw}");
        }
    }

    fn segments(raw: &str) -> Vec<String> {
        t(raw).segments().map(|s| s.to_string()).collect()
    }

    #[test]
    fn segments_are_decoded_but_not_normalized() {
        assert_eq!(segments("/a/b%2Fc/./%2e%2e/"), ["a", "b/c", ".", "..", ""]);
        let raw: Vec<_> = t("/a/b%2Fc/./%2e%2e/")
            .segments()
            .map(|s| s.raw())
            .collect();
        assert_eq!(raw, [&b"a"[..], b"b%2Fc", b".", b"%2e%2e", b""]);
        assert_eq!(segments("//a"), ["", "a"]);
        assert_eq!(segments("/"), [""]);
        assert_eq!(segments("/a+b?c/d"), ["a+b"]);
        assert_eq!(segments("http://h/x/y?z"), ["x", "y"]);
        assert_eq!(segments("http://h"), [""]);
        assert!(segments("*").is_empty());
        assert!(segments("h:443").is_empty());
        assert_eq!(t("/a%20b/c+d").decoded_path().to_string(), "/a b/c+d");
    }

    #[test]
    fn query_pairs_are_form_decoded() {
        let pairs: Vec<(String, String)> = t("/?a=1&b=&c&=d&e=x+y%20z&&f=a=b&")
            .query_pairs()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        let expected = [
            ("a", "1"),
            ("b", ""),
            ("c", ""),
            ("", "d"),
            ("e", "x y z"),
            ("f", "a=b"),
        ];
        let expected: Vec<_> = expected
            .iter()
            .map(|&(k, v)| (k.to_owned(), v.to_owned()))
            .collect();
        assert_eq!(pairs, expected);
        assert_eq!(t("/").query_pairs().count(), 0);
        assert_eq!(t("/?").query_pairs().count(), 0);
        assert_eq!(t("*").query_pairs().count(), 0);
    }

    fn decoded(raw: &str, plus_as_space: bool) -> Vec<u8> {
        PercentDecoded::new(raw.as_bytes(), plus_as_space)
            .bytes()
            .collect()
    }

    #[test]
    fn invalid_escapes_pass_through() {
        assert_eq!(decoded("%41%62%7e%7E", false), b"Ab~~");
        assert_eq!(decoded("%zz", false), b"%zz");
        assert_eq!(decoded("%4", false), b"%4");
        assert_eq!(decoded("%", false), b"%");
        assert_eq!(decoded("%4g%41", false), b"%4gA");
        assert_eq!(decoded("%%41", false), b"%A");
        assert_eq!(decoded("%2541", false), b"%41");
        assert_eq!(decoded("%00%FF", false), [0, 0xff]);
        assert_eq!(decoded("a+b", false), b"a+b");
        assert_eq!(decoded("a+b%2B", true), b"a b+");
        let d = PercentDecoded::new(b"%41%4", false);
        assert_eq!(d.bytes().size_hint(), (2, Some(5)));
        assert_eq!(d.bytes().count(), 3);
    }

    #[test]
    fn comparisons_and_conversions() {
        let plain = PercentDecoded::new(b"abc", true);
        assert!(!plain.is_encoded());
        assert!(plain.eq_str("abc"));
        assert!(!plain.eq_str("ab"));
        assert!(!plain.eq_str("abcd"));
        assert!(matches!(plain.to_cow(), Cow::Borrowed(b"abc")));
        assert!(matches!(plain.to_str(), Ok(Cow::Borrowed("abc"))));

        let encoded = PercentDecoded::new(b"caf%C3%A9+au+lait", true);
        assert!(encoded.is_encoded());
        assert!(encoded.eq_str("café au lait"));
        assert!(!encoded.eq_str("caf%C3%A9+au+lait"));
        assert_eq!(encoded.to_str().unwrap(), "café au lait");
        assert!(matches!(encoded.to_cow(), Cow::Owned(_)));
        assert!(PercentDecoded::new(b"a+b", false).eq_str("a+b"));
        assert!(!PercentDecoded::new(b"a+b", false).is_encoded());

        let bad = PercentDecoded::new(b"a%FFb%C3", false);
        assert!(bad.to_str().is_err());
        assert_eq!(bad.to_string(), "a\u{FFFD}b\u{FFFD}");
        assert_eq!(format!("{bad:?}"), "PercentDecoded(\"a%FFb%C3\")");
        assert_eq!(format!("{:?}", t("/x")), "Target(\"/x\")");
    }

    /// Writes a request line with `pairs` as query parameters after `path`,
    /// growing the buffer as `BufferFull` asks; returns the target.
    fn encode_target(path: &str, pairs: &[(String, String)]) -> Vec<u8> {
        let mut size = 0;
        loop {
            let mut buf = vec![0; size];
            let written = RequestWriter::new(&mut buf, "GET", path).and_then(|mut q| {
                for (key, value) in pairs {
                    q.query(key, value)?;
                }
                q.headers(Version::Http11)?.finish()
            });
            match written {
                Ok(n) => {
                    let line_end = n - b" HTTP/1.1\r\n\r\n".len();
                    return buf[b"GET ".len()..line_end].to_vec();
                }
                Err(EncodeError::BufferFull { needed }) => {
                    assert!(needed > size);
                    size = needed;
                }
                Err(e) => panic!("{e}"),
            }
        }
    }

    proptest! {
        #[test]
        fn query_encoding_round_trips(
            path in prop::sample::select(vec!["/", "/p", "/p?", "/p?pre=1", "http://h/p"]),
            pairs in prop::collection::vec((any::<String>(), any::<String>()), 0..6),
        ) {
            let raw = encode_target(path, &pairs);
            let target = Target::new(&raw);
            prop_assert!(raw.iter().all(|b| (0x21..=0x7e).contains(b)));
            let before = usize::from(path.contains("pre="));
            let decoded: Vec<_> = target.query_pairs().skip(before).collect();
            prop_assert_eq!(decoded.len(), pairs.len());
            for ((key, value), (k, v)) in decoded.iter().zip(&pairs) {
                prop_assert!(key.eq_str(k) && value.eq_str(v));
                prop_assert_eq!(key.bytes().collect::<Vec<_>>(), k.as_bytes());
                prop_assert_eq!(value.to_str().unwrap(), v.as_str());
            }
        }

        #[test]
        fn any_bytes_are_safe_to_view(raw in prop::collection::vec(any::<u8>(), 0..64)) {
            let target = Target::new(&raw);
            let _ = (target.form(), target.path(), target.query());
            for segment in target.segments().chain(Some(target.decoded_path())) {
                let n = segment.bytes().count();
                prop_assert!(n <= segment.raw().len());
                let _ = (segment.to_string(), segment.to_str());
            }
            for (key, value) in target.query_pairs() {
                let _ = (key.to_cow(), value.to_cow());
            }
        }
    }
}
