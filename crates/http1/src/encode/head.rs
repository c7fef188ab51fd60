//! Request and response head writers.
//!
//! Both share [`HeadBuf`]; a request goes through a typestate (request line,
//! then query parameters, then fields) so nothing can be appended to the
//! target once fields have started.

use super::buf::{Framing, HeadBuf};
use super::query::{pair_len, write_pair};
use super::{digits, reason_phrase, DateCache, EncodeError, FieldBlock};
use crate::chars::{is_token_str, is_value_byte, target_end};
use crate::target::{Target, TargetForm};
use crate::Version;

/// The empty line that ends every head.
const END: usize = b"\r\n".len();
/// `SP HTTP/1.x CRLF`, after the target of a request line.
const REQUEST_LINE_END: usize = b" HTTP/1.1\r\n".len();

/// The field-line methods both head writers share.
macro_rules! field_methods {
    () => {
        /// Writes a field line.
        ///
        /// # Errors
        ///
        /// [`InvalidHeaderName`](EncodeError::InvalidHeaderName) unless `name`
        /// is a token; [`InvalidHeaderValue`](EncodeError::InvalidHeaderValue)
        /// for a control character other than HTAB in `value`, or whitespace at
        /// either end of it; [`ConflictingFraming`](EncodeError::ConflictingFraming)
        /// for `Content-Length` beside `Transfer-Encoding`;
        /// [`BufferFull`](EncodeError::BufferFull).
        pub fn header(
            &mut self,
            name: &str,
            value: impl AsRef<[u8]>,
        ) -> Result<&mut Self, EncodeError> {
            self.head.field(name, value.as_ref())?;
            Ok(self)
        }

        /// Writes `content-length: len`.
        ///
        /// # Errors
        ///
        /// [`ConflictingFraming`](EncodeError::ConflictingFraming) after
        /// [`chunked`](Self::chunked); [`BufferFull`](EncodeError::BufferFull).
        pub fn content_length(&mut self, len: u64) -> Result<&mut Self, EncodeError> {
            let mut text = [0; 20];
            self.head
                .framing(Framing::Length(len), digits::<10>(len, &mut text))?;
            Ok(self)
        }

        /// Writes `transfer-encoding: chunked`; frame the body with
        /// [`chunk_header`](super::chunk_header) and [`last_chunk`](super::last_chunk).
        ///
        /// # Errors
        ///
        /// [`ConflictingFraming`](EncodeError::ConflictingFraming) after
        /// [`content_length`](Self::content_length);
        /// [`BufferFull`](EncodeError::BufferFull).
        pub fn chunked(&mut self) -> Result<&mut Self, EncodeError> {
            self.head.framing(Framing::Coded, b"chunked")?;
            Ok(self)
        }

        /// Ends the head with an empty line; returns its length in bytes.
        ///
        /// # Errors
        ///
        /// [`BufferFull`](EncodeError::BufferFull).
        pub fn finish(self) -> Result<usize, EncodeError> {
            self.head.finish()
        }
    };
}

/// Writes a response head: status line, fields, empty line.
///
/// ```
/// use ringwire_http1::{encode::ResponseWriter, Version};
///
/// let mut buf = [0; 64];
/// let mut head = ResponseWriter::new(&mut buf, Version::Http11, 200, None)?;
/// head.header("server", "ringwire")?.content_length(2)?;
/// let n = head.finish()?;
/// assert_eq!(
///     &buf[..n],
///     b"HTTP/1.1 200 OK\r\nserver: ringwire\r\ncontent-length: 2\r\n\r\n"
/// );
/// # Ok::<(), ringwire_http1::encode::EncodeError>(())
/// ```
#[derive(Debug)]
pub struct ResponseWriter<'b> {
    head: HeadBuf<'b>,
}

impl<'b> ResponseWriter<'b> {
    /// Writes the status line. Without a `reason`, the standard phrase for
    /// `status` is used ([`reason_phrase`]), or none for an unknown code.
    ///
    /// # Errors
    ///
    /// [`InvalidStatus`](EncodeError::InvalidStatus) outside `100..=999`,
    /// [`InvalidReason`](EncodeError::InvalidReason) for a control character
    /// in `reason`, or [`BufferFull`](EncodeError::BufferFull).
    pub fn new(
        buf: &'b mut [u8],
        version: Version,
        status: u16,
        reason: Option<&str>,
    ) -> Result<Self, EncodeError> {
        if !(100..=999).contains(&status) {
            return Err(EncodeError::InvalidStatus);
        }
        let reason = reason.unwrap_or_else(|| reason_phrase(status).unwrap_or_default());
        if !reason.bytes().all(is_value_byte) {
            return Err(EncodeError::InvalidReason);
        }
        let mut code = [0; 20];
        let code = digits::<10>(u64::from(status), &mut code);
        let mut head = HeadBuf::new(buf, END);
        // The SP before the reason stays even when the reason is empty
        // (RFC 9112 section 4).
        let line: [&[u8]; 6] = [
            version.as_str().as_bytes(),
            b" ",
            code,
            b" ",
            reason.as_bytes(),
            b"\r\n",
        ];
        head.put(&line)?;
        Ok(ResponseWriter { head })
    }

    /// Writes `date: ` and the cached IMF-fixdate.
    ///
    /// # Errors
    ///
    /// [`BufferFull`](EncodeError::BufferFull).
    pub fn date(&mut self, date: &DateCache) -> Result<&mut Self, EncodeError> {
        self.head.put(&[b"date: ", date.get(), b"\r\n"])?;
        Ok(self)
    }

    /// Writes fields encoded and checked beforehand, with one copy.
    ///
    /// # Errors
    ///
    /// [`BufferFull`](EncodeError::BufferFull).
    pub fn fields(&mut self, block: &FieldBlock) -> Result<&mut Self, EncodeError> {
        self.head.put(&[block.as_bytes()])?;
        Ok(self)
    }

    field_methods!();
}

/// Writes the request line up to the query, then hands over a [`QueryWriter`].
///
/// ```
/// use ringwire_http1::{encode::RequestWriter, Version};
///
/// let mut buf = [0; 64];
/// let mut query = RequestWriter::new(&mut buf, "GET", "/search")?;
/// query.query("q", "zero copy")?;
/// let mut head = query.headers(Version::Http11)?;
/// head.header("host", "example.com")?;
/// let n = head.finish()?;
/// assert_eq!(
///     &buf[..n],
///     b"GET /search?q=zero%20copy HTTP/1.1\r\nhost: example.com\r\n\r\n"
/// );
/// # Ok::<(), ringwire_http1::encode::EncodeError>(())
/// ```
#[derive(Debug)]
pub struct RequestWriter<'b> {
    head: HeadBuf<'b>,
}

impl<'b> RequestWriter<'b> {
    /// Writes `method SP path`, where `path` is already percent-encoded and
    /// goes out as it is: origin form (`/a?b`), absolute form
    /// (`http://host/a`), authority form (`host:443`, for CONNECT) or `*`.
    ///
    /// # Errors
    ///
    /// [`InvalidMethod`](EncodeError::InvalidMethod) unless `method` is a
    /// token; [`InvalidPath`](EncodeError::InvalidPath) if `path` is empty or
    /// holds a byte outside `0x21..=0x7e` or a `#` (fragments are never
    /// sent); [`BufferFull`](EncodeError::BufferFull).
    #[allow(clippy::new_ret_no_self)] // The typestate starts at the query.
    pub fn new(
        buf: &'b mut [u8],
        method: &str,
        path: &str,
    ) -> Result<QueryWriter<'b>, EncodeError> {
        if !is_token_str(method.as_bytes()) {
            return Err(EncodeError::InvalidMethod);
        }
        let target = path.as_bytes();
        if target.is_empty() || target_end(target, 0) != target.len() || target.contains(&b'#') {
            return Err(EncodeError::InvalidPath);
        }
        let sep: Option<&[u8]> = match Target::new(target).form() {
            TargetForm::Origin | TargetForm::Absolute if !target.contains(&b'?') => Some(b"?"),
            // Parameters join the query the target already has.
            TargetForm::Origin | TargetForm::Absolute if target.ends_with(b"?") => Some(b""),
            TargetForm::Origin | TargetForm::Absolute => Some(b"&"),
            // `*` and `host:port` cannot carry a query.
            TargetForm::Authority | TargetForm::Asterisk => None,
        };
        let mut head = HeadBuf::new(buf, REQUEST_LINE_END + END);
        head.put(&[method.as_bytes(), b" ", target])?;
        Ok(QueryWriter { head, sep })
    }

    field_methods!();
}

/// Appends percent-encoded query parameters to the request target, then
/// ends the request line with [`headers`](QueryWriter::headers).
#[derive(Debug)]
pub struct QueryWriter<'b> {
    head: HeadBuf<'b>,
    /// What goes before the next parameter: `?`, `&`, or nothing after a
    /// target ending in `?`; `None` when the target cannot take a query.
    sep: Option<&'static [u8]>,
}

impl<'b> QueryWriter<'b> {
    /// Appends `key=value`, both percent-encoded: `A-Z a-z 0-9 - . _ ~` stay,
    /// every other byte becomes `%XX` (a space too, never `+`, so the result
    /// means the same to form decoders and to plain percent-decoders).
    ///
    /// # Errors
    ///
    /// [`InvalidPath`](EncodeError::InvalidPath) after an authority-form or
    /// `*` target; [`BufferFull`](EncodeError::BufferFull).
    pub fn query(&mut self, key: &str, value: &str) -> Result<&mut Self, EncodeError> {
        let (key, value) = (key.as_bytes(), value.as_bytes());
        let sep = self.sep.ok_or(EncodeError::InvalidPath)?;
        let out = self.head.take(sep.len() + pair_len(key, value))?;
        let (first, rest) = out.split_at_mut(sep.len());
        first.copy_from_slice(sep);
        write_pair(key, value, rest);
        self.sep = Some(b"&");
        Ok(self)
    }

    /// Ends the request line with the version, so fields can follow.
    ///
    /// # Errors
    ///
    /// [`BufferFull`](EncodeError::BufferFull).
    pub fn headers(mut self, version: Version) -> Result<RequestWriter<'b>, EncodeError> {
        self.head.set_tail(END);
        self.head
            .put(&[b" ", version.as_str().as_bytes(), b"\r\n"])?;
        Ok(RequestWriter { head: self.head })
    }
}

#[cfg(test)]
mod tests {
    use super::super::assert_every_size;
    use super::*;
    use proptest::prelude::*;

    fn response(
        buf: &mut [u8],
        status: u16,
        reason: Option<&str>,
        fields: &[(&str, &str)],
    ) -> Result<usize, EncodeError> {
        let mut head = ResponseWriter::new(buf, Version::Http11, status, reason)?;
        for (name, value) in fields {
            head.header(name, value)?;
        }
        head.finish()
    }

    fn request(
        buf: &mut [u8],
        method: &str,
        path: &str,
        query: &[(&str, &str)],
    ) -> Result<usize, EncodeError> {
        let mut q = RequestWriter::new(buf, method, path)?;
        for (key, value) in query {
            q.query(key, value)?;
        }
        let mut head = q.headers(Version::Http11)?;
        head.header("host", "h")?;
        head.finish()
    }

    #[test]
    fn status_lines() {
        let cases: [(u16, Option<&str>, &str); 7] = [
            (200, None, "HTTP/1.1 200 OK\r\n\r\n"),
            (404, None, "HTTP/1.1 404 Not Found\r\n\r\n"),
            (103, None, "HTTP/1.1 103 Early Hints\r\n\r\n"),
            (599, None, "HTTP/1.1 599 \r\n\r\n"),
            (999, Some("Custom"), "HTTP/1.1 999 Custom\r\n\r\n"),
            (200, Some(""), "HTTP/1.1 200 \r\n\r\n"),
            (
                200,
                Some("All\tgood \u{e9}"),
                "HTTP/1.1 200 All\tgood \u{e9}\r\n\r\n",
            ),
        ];
        for (status, reason, expected) in cases {
            assert_every_size(expected.as_bytes(), |buf| {
                response(buf, status, reason, &[])
            });
        }
        let mut buf = [0; 32];
        let head = ResponseWriter::new(&mut buf, Version::Http10, 100, None).unwrap();
        let n = head.finish().unwrap();
        assert_eq!(&buf[..n], b"HTTP/1.0 100 Continue\r\n\r\n");
    }

    #[test]
    fn every_field_kind() {
        let mut date = DateCache::new();
        date.update(std::time::UNIX_EPOCH + std::time::Duration::from_secs(784_111_777));
        let expected = b"HTTP/1.1 200 OK\r\nserver: ringwire\r\nx-bytes: \x80\xff\r\n\
            date: Sun, 06 Nov 1994 08:49:37 GMT\r\ncontent-length: 18446744073709551615\r\n\r\n";
        assert_every_size(expected, |buf| {
            let mut head = ResponseWriter::new(buf, Version::Http11, 200, None)?;
            head.header("server", "ringwire")?
                .header("x-bytes", [0x80, 0xff])?
                .date(&date)?
                .content_length(u64::MAX)?;
            assert_eq!(head.chunked().err(), Some(EncodeError::ConflictingFraming));
            head.finish()
        });
    }

    /// Method, target, query parameters, expected head.
    type RequestCase = (
        &'static str,
        &'static str,
        &'static [(&'static str, &'static str)],
        &'static str,
    );

    #[test]
    fn request_lines_and_queries() {
        let cases: [RequestCase; 8] = [
            ("GET", "/", &[], "GET / HTTP/1.1\r\nhost: h\r\n\r\n"),
            (
                "GET",
                "/s",
                &[("q", "a b"), ("x", "")],
                "GET /s?q=a%20b&x= HTTP/1.1\r\nhost: h\r\n\r\n",
            ),
            (
                "GET",
                "/s?a=1",
                &[("b", "2")],
                "GET /s?a=1&b=2 HTTP/1.1\r\nhost: h\r\n\r\n",
            ),
            (
                "GET",
                "/s?",
                &[("b", "2"), ("c", "&")],
                "GET /s?b=2&c=%26 HTTP/1.1\r\nhost: h\r\n\r\n",
            ),
            (
                "PURGE",
                "/a%20b",
                &[],
                "PURGE /a%20b HTTP/1.1\r\nhost: h\r\n\r\n",
            ),
            (
                "GET",
                "http://h/p",
                &[("k", "v")],
                "GET http://h/p?k=v HTTP/1.1\r\nhost: h\r\n\r\n",
            ),
            ("OPTIONS", "*", &[], "OPTIONS * HTTP/1.1\r\nhost: h\r\n\r\n"),
            (
                "CONNECT",
                "h:443",
                &[],
                "CONNECT h:443 HTTP/1.1\r\nhost: h\r\n\r\n",
            ),
        ];
        for (method, path, query, expected) in cases {
            assert_every_size(expected.as_bytes(), |buf| request(buf, method, path, query));
        }
        let mut buf = [0; 128];
        let mut head = RequestWriter::new(&mut buf, "POST", "/up")
            .unwrap()
            .headers(Version::Http10)
            .unwrap();
        head.chunked().unwrap();
        let n = head.finish().unwrap();
        assert_eq!(
            &buf[..n],
            b"POST /up HTTP/1.0\r\ntransfer-encoding: chunked\r\n\r\n"
        );
    }

    #[test]
    fn no_query_on_asterisk_or_authority_form() {
        for (method, path) in [("OPTIONS", "*"), ("CONNECT", "h:443")] {
            let mut buf = [0; 64];
            let mut q = RequestWriter::new(&mut buf, method, path).unwrap();
            assert_eq!(q.query("a", "b").err(), Some(EncodeError::InvalidPath));
        }
    }

    #[test]
    fn injection_is_refused() {
        let mut buf = [0; 256];
        let smuggle = "x\r\nContent-Length: 5";
        for reason in ["OK\r\nSet-Cookie: a=b", "OK\n", "OK\r", "OK\0", "\x7f"] {
            let err = ResponseWriter::new(&mut buf, Version::Http11, 200, Some(reason)).err();
            assert_eq!(err, Some(EncodeError::InvalidReason), "{reason:?}");
        }
        for status in [0, 99, 1000, u16::MAX] {
            let err = ResponseWriter::new(&mut buf, Version::Http11, status, None).err();
            assert_eq!(err, Some(EncodeError::InvalidStatus), "{status}");
        }
        for name in ["", "a b", "a:", "a\r\nb", "a\0", "x-\u{e9}"] {
            let err = response(&mut buf, 200, None, &[(name, "v")]);
            assert_eq!(err, Err(EncodeError::InvalidHeaderName), "{name:?}");
        }
        for value in [smuggle, "a\nb", "a\rb", "a\0b", "a\x01", " a", "a "] {
            let err = response(&mut buf, 200, None, &[("x", value)]);
            assert_eq!(err, Err(EncodeError::InvalidHeaderValue), "{value:?}");
            let err = RequestWriter::new(&mut buf, "GET", "/")
                .and_then(|q| q.headers(Version::Http11))
                .and_then(|mut head| head.header("x", value).map(drop));
            assert_eq!(err, Err(EncodeError::InvalidHeaderValue), "{value:?}");
        }
        for method in ["", "GET /x", "GE\rT", "GET\n", "G\0", "GET\t"] {
            let err = request(&mut buf, method, "/", &[]);
            assert_eq!(err, Err(EncodeError::InvalidMethod), "{method:?}");
        }
        for path in [
            "",
            "/a b",
            "/a\r\nx: y",
            "/a\n",
            "/\0",
            "/\x7f",
            "/\u{e9}",
            "/a#frag",
            "/\t",
        ] {
            let err = request(&mut buf, "GET", path, &[]);
            assert_eq!(err, Err(EncodeError::InvalidPath), "{path:?}");
        }
        // Query parameters are escaped, never refused.
        let n = request(&mut buf, "GET", "/", &[("a\r\n", "b c\0")]).unwrap();
        assert!(buf[..n].starts_with(b"GET /?a%0D%0A=b%20c%00 HTTP/1.1\r\n"));
    }

    #[test]
    fn validation_wins_over_a_full_buffer() {
        let err = ResponseWriter::new(&mut [], Version::Http11, 200, Some("\n")).err();
        assert_eq!(err, Some(EncodeError::InvalidReason));
        let err = RequestWriter::new(&mut [], "GET", "/\n").err();
        assert_eq!(err, Some(EncodeError::InvalidPath));
        let mut buf = [0; 19];
        let mut head = ResponseWriter::new(&mut buf, Version::Http11, 200, None).unwrap();
        assert_eq!(
            head.header("x", "\n").err(),
            Some(EncodeError::InvalidHeaderValue)
        );
        // A refused field leaves the writer usable.
        assert_eq!(head.finish(), Ok(19));
    }

    #[test]
    fn heads_parse_back_with_httparse() {
        let mut buf = [0; 256];
        let n = request(&mut buf, "GET", "/a", &[("k", "v w")]).unwrap();
        let mut fields = [httparse::EMPTY_HEADER; 4];
        let mut req = httparse::Request::new(&mut fields);
        assert_eq!(req.parse(&buf[..n]), Ok(httparse::Status::Complete(n)));
        assert_eq!(req.path, Some("/a?k=v%20w"));
        assert_eq!(req.headers[0].value, b"h");

        let n = response(&mut buf, 418, None, &[("a", "b\tc")]).unwrap();
        let mut fields = [httparse::EMPTY_HEADER; 4];
        let mut res = httparse::Response::new(&mut fields);
        assert_eq!(res.parse(&buf[..n]), Ok(httparse::Status::Complete(n)));
        assert_eq!((res.code, res.reason), (Some(418), Some("I'm a teapot")));
        assert_eq!(res.headers[0].value, b"b\tc");
    }

    proptest! {
        #[test]
        fn whatever_is_accepted_parses_back(
            status in 0u16..1100,
            reason in proptest::option::of(".{0,8}"),
            fields in prop::collection::vec(("[!-~]{0,6}", prop::collection::vec(any::<u8>(), 0..8)), 0..4),
            size in 0usize..160,
        ) {
            let mut buf = vec![0; size];
            let written = ResponseWriter::new(&mut buf, Version::Http11, status, reason.as_deref())
                .and_then(|mut head| {
                    for (name, value) in &fields {
                        head.header(name, value)?;
                    }
                    head.finish()
                });
            let Ok(n) = written else {
                return Ok(());
            };
            let mut parsed = [httparse::EMPTY_HEADER; 4];
            let mut res = httparse::Response::new(&mut parsed);
            prop_assert_eq!(res.parse(&buf[..n]), Ok(httparse::Status::Complete(n)));
            prop_assert_eq!(res.code, Some(status));
            prop_assert_eq!(res.headers.len(), fields.len());
            for (got, (name, value)) in res.headers.iter().zip(&fields) {
                prop_assert_eq!(got.name, name.as_str());
                prop_assert_eq!(got.value, value.as_slice());
            }
        }

        #[test]
        fn requests_never_panic(
            method in "[!-~ ]{0,6}",
            path in "[!-~ ]{0,6}",
            key in any::<String>(),
            size in 0usize..64,
        ) {
            let mut buf = vec![0; size];
            if let Ok(n) = request(&mut buf, &method, &path, &[(&key, "v")]) {
                let mut parsed = [httparse::EMPTY_HEADER; 1];
                let mut req = httparse::Request::new(&mut parsed);
                prop_assert_eq!(req.parse(&buf[..n]), Ok(httparse::Status::Complete(n)));
                prop_assert_eq!(req.method, Some(method.as_str()));
            }
        }
    }
}
