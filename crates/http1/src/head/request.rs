//! Request heads (server role): request line, fields, and request framing.

use std::fmt;

use ringwire_wire::Status;

use super::{Fields, HeadFields, Headers, Known, SectionScan, Span, Version};
use crate::chars::{is_host, target_end, token_end};
use crate::target::{Target, TargetForm};
use crate::{BodyKind, Error, Limits};

/// A request method: the common ones by name, any other token as sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Method<'a> {
    /// `GET`
    Get,
    /// `HEAD`: its response has no body.
    Head,
    /// `POST`
    Post,
    /// `PUT`
    Put,
    /// `DELETE`
    Delete,
    /// `CONNECT`: a 2xx response turns the connection into a tunnel.
    Connect,
    /// `OPTIONS`
    Options,
    /// `TRACE`
    Trace,
    /// `PATCH`
    Patch,
    /// Any other token (methods are case-sensitive).
    Other(&'a str),
}

impl<'a> Method<'a> {
    /// Names a method from its token; `bytes` must be a valid token.
    #[inline]
    pub(crate) fn from_token(bytes: &'a [u8]) -> Self {
        match bytes {
            b"GET" => Method::Get,
            b"HEAD" => Method::Head,
            b"POST" => Method::Post,
            b"PUT" => Method::Put,
            b"DELETE" => Method::Delete,
            b"CONNECT" => Method::Connect,
            b"OPTIONS" => Method::Options,
            b"TRACE" => Method::Trace,
            b"PATCH" => Method::Patch,
            // Tokens are ASCII.
            other => Method::Other(std::str::from_utf8(other).unwrap_or_default()),
        }
    }

    /// The method as it appears on the wire.
    #[must_use]
    #[inline]
    pub fn as_str(&self) -> &'a str {
        match self {
            Method::Get => "GET",
            Method::Head => "HEAD",
            Method::Post => "POST",
            Method::Put => "PUT",
            Method::Delete => "DELETE",
            Method::Connect => "CONNECT",
            Method::Options => "OPTIONS",
            Method::Trace => "TRACE",
            Method::Patch => "PATCH",
            Method::Other(token) => token,
        }
    }
}

impl<'a> From<&'a str> for Method<'a> {
    /// Names the method a request line would carry (a client's, say, to tell
    /// [`ResponseParser`](crate::ResponseParser) what it asked).
    fn from(method: &'a str) -> Self {
        Method::from_token(method.as_bytes())
    }
}

impl fmt::Display for Method<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A parsed request head as offsets into the buffer it was parsed from.
///
/// Owned and allocation-free once warm (the field index is reused), so a
/// server can keep it across awaits and view it again with
/// [`view`](RequestHead::view) while the bytes stay in the ring.
#[derive(Debug, Clone, Default)]
pub struct RequestHead {
    method: Span,
    target: Span,
    version: Option<Version>,
    fields: HeadFields,
    body: Option<BodyKind>,
    len: usize,
}

impl RequestHead {
    /// Views this head over `buf`, which must start with the bytes it was
    /// parsed from.
    #[must_use]
    #[inline]
    pub fn view<'a>(&'a self, buf: &'a [u8]) -> Request<'a> {
        Request { buf, head: self }
    }

    /// Length of the head in bytes, final CRLF (and any empty lines before
    /// the request line) included: where the body starts.
    #[must_use]
    #[inline]
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether no head has been parsed.
    #[must_use]
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

/// A request head borrowed from the buffer it was parsed from.
#[derive(Clone, Copy)]
pub struct Request<'a> {
    buf: &'a [u8],
    head: &'a RequestHead,
}

impl<'a> Request<'a> {
    /// The method.
    #[must_use]
    #[inline]
    pub fn method(&self) -> Method<'a> {
        Method::from_token(self.head.method.of(self.buf))
    }

    /// The request target, with lazy path and query decoding.
    #[must_use]
    #[inline]
    pub fn target(&self) -> Target<'a> {
        Target::new(self.head.target.of(self.buf))
    }

    /// The protocol version.
    #[must_use]
    #[inline]
    pub fn version(&self) -> Version {
        self.head.version.unwrap_or(Version::Http11)
    }

    /// The header fields in the order received.
    #[must_use]
    #[inline]
    pub fn headers(&self) -> Headers<'a> {
        Headers::new(self.buf, &self.head.fields.index)
    }

    /// The value of the first field named `name` (ASCII case-insensitive).
    #[must_use]
    #[inline]
    pub fn header(&self, name: &str) -> Option<&'a [u8]> {
        self.headers().get(name)
    }

    /// How the body is framed. Requests never run until close.
    #[must_use]
    #[inline]
    pub fn body(&self) -> BodyKind {
        self.head.body.unwrap_or(BodyKind::Empty)
    }

    /// Whether the connection may carry another request after this one's
    /// response (RFC 9112 section 9.3): HTTP/1.1 unless `Connection: close`,
    /// HTTP/1.0 only with `Connection: keep-alive`.
    #[must_use]
    #[inline]
    pub fn keep_alive(&self) -> bool {
        self.head.fields.known.connection.persistent(self.version())
    }

    /// Whether the client sent `Expect: 100-continue` and waits for a
    /// `100 Continue` before sending the body. Ignored for HTTP/1.0, whose
    /// clients cannot know the interim response (RFC 9110 section 10.1.1).
    #[must_use]
    #[inline]
    pub fn expects_continue(&self) -> bool {
        self.head.fields.known.expect_continue
            && self.version() == Version::Http11
            && self.body() != BodyKind::Empty
    }

    /// The protocols the client asks to switch to (`Upgrade`, with
    /// `upgrade` among the `Connection` tokens). After a `101` response the
    /// bytes past [`head_len`](Request::head_len) belong to the new protocol.
    #[must_use]
    #[inline]
    pub fn upgrade(&self) -> Option<&'a [u8]> {
        let known = &self.head.fields.known;
        match (known.connection.upgrade, known.upgrade) {
            (true, Some(span)) if self.version() == Version::Http11 => Some(span.of(self.buf)),
            _ => None,
        }
    }

    /// Length of the head in bytes: where the body starts.
    #[must_use]
    #[inline]
    pub fn head_len(&self) -> usize {
        self.head.len
    }

    /// The head's offsets, to keep and [`view`](RequestHead::view) later.
    #[must_use]
    #[inline]
    pub fn head(&self) -> &'a RequestHead {
        self.head
    }
}

impl fmt::Debug for Request<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Request")
            .field("method", &self.method())
            .field("target", &String::from_utf8_lossy(self.target().as_bytes()))
            .field("version", &self.version())
            .field("headers", &self.headers())
            .field("body", &self.body())
            .finish()
    }
}

/// Parses request heads from the front of a buffer that grows between calls.
///
/// The first call for a message tries a full one-pass parse. If the head is
/// not all there, later calls pick up where the last one stopped: the request
/// line is validated piece by piece (so garbage fails at once), then the new
/// bytes are searched for line ends and each field line is parsed, by the
/// same code as a whole head, once its LF is in. A head delivered in tiny
/// pieces is never rescanned, and its errors do not depend on the split.
///
/// Between calls for one message the buffer must keep its bytes and may only
/// grow. After `Complete(request, n)` the caller consumes `n` head bytes
/// (and later the body); the next call starts a new message.
#[derive(Debug, Clone)]
pub struct RequestParser {
    limits: Limits,
    head: RequestHead,
    /// Progress on a message that arrives in pieces.
    resume: Option<Resume>,
    /// The last `Host` value found valid: a connection's requests name the same host, so
    /// each is compared with it rather than checked again.
    valid_host: KnownHost,
}

/// A short `Host` value already checked (longer ones are checked every time).
#[derive(Debug, Clone, Copy, Default)]
struct KnownHost {
    len: u8,
    bytes: [u8; 32],
}

/// Whether `a` is the start of `b`, compared a word at a time (no `memcmp` call for a
/// few bytes).
#[inline]
fn same(a: &[u8], b: &[u8]) -> bool {
    let Some(b) = b.get(..a.len()) else {
        return false;
    };
    let word = |w: &[u8]| u64::from_ne_bytes(w.try_into().unwrap_or_default());
    let (words_a, words_b) = (a.chunks_exact(8), b.chunks_exact(8));
    let mut rest = words_a.remainder().iter().zip(words_b.remainder());
    words_a.zip(words_b).all(|(x, y)| word(x) == word(y)) && rest.all(|(x, y)| x == y)
}

impl KnownHost {
    /// Whether `value` is a valid `Host` value, remembering it if it is new and short.
    #[inline]
    fn check(&mut self, value: &[u8]) -> bool {
        if value.len() == usize::from(self.len) && same(value, &self.bytes) {
            return true;
        }
        let valid = is_host(value);
        if valid && value.len() <= self.bytes.len() {
            self.bytes[..value.len()].copy_from_slice(value);
            self.len = value.len() as u8;
        }
        valid
    }
}

#[derive(Debug, Clone, Copy)]
enum Resume {
    /// Validating the request line.
    Line(Line),
    /// Parsing field lines as their LF arrives.
    Fields(SectionScan),
}

impl Default for RequestParser {
    fn default() -> Self {
        RequestParser::new(Limits::default())
    }
}

impl RequestParser {
    /// A parser enforcing `limits`.
    #[must_use]
    pub fn new(limits: Limits) -> Self {
        RequestParser {
            limits,
            head: RequestHead {
                fields: HeadFields::with_capacity(&limits),
                ..RequestHead::default()
            },
            resume: None,
            valid_host: KnownHost::default(),
        }
    }

    /// The limits in force.
    #[must_use]
    pub fn limits(&self) -> &Limits {
        &self.limits
    }

    /// The last head parsed completely.
    #[must_use]
    #[inline]
    pub fn head(&self) -> &RequestHead {
        &self.head
    }

    /// Parses a request head from the front of `buf`.
    ///
    /// # Errors
    ///
    /// Bytes that can never be a valid head, or a head over the limits.
    #[inline]
    pub fn parse<'a>(&'a mut self, buf: &'a [u8]) -> Result<Status<Request<'a>>, Error> {
        // The common call while a head trickles in: no line ended in the new
        // bytes. Answered here, without the full parser's frame.
        if let Some(Resume::Fields(scan)) = &mut self.resume {
            if scan.skip_partial_line(buf) {
                return self.partial(buf);
            }
        }
        match self.advance(buf)? {
            Some(len) => {
                self.resume = None;
                self.head.len = len;
                Ok(Status::Complete(self.head.view(buf), len))
            }
            None => self.partial(buf),
        }
    }

    /// Everything but the trickle case, out of line so that case stays cheap.
    #[inline(never)]
    fn advance(&mut self, buf: &[u8]) -> Result<Option<usize>, Error> {
        match self.resume {
            None => self.parse_head(buf),
            Some(_) => self.resume(buf),
        }
    }

    /// `Partial`, unless the head already runs past its limit.
    #[inline]
    fn partial<'a>(&self, buf: &[u8]) -> Result<Status<Request<'a>>, Error> {
        if buf.len() > self.limits.max_head_len {
            return Err(Error::HeadTooLarge {
                limit: self.limits.max_head_len,
            });
        }
        Ok(Status::Partial {
            at_least: buf.len() + 1,
        })
    }

    /// Continues a message that arrived in pieces, looking at new bytes only.
    #[inline]
    fn resume(&mut self, buf: &[u8]) -> Result<Option<usize>, Error> {
        match &mut self.resume {
            Some(Resume::Line(line)) => match line.parse(buf, &self.limits)? {
                None => Ok(None),
                // The line is whole: one pass over what is here, which
                // finishes the head or goes on line by line from its end.
                Some(_) => self.parse_head(buf),
            },
            Some(Resume::Fields(scan)) if buf.len() >= scan.searched() => {
                match self.head.fields.resume(scan, buf, &self.limits)? {
                    None => Ok(None),
                    Some(len) => self.finish(buf, len).map(Some),
                }
            }
            _ => {
                debug_assert!(false, "the buffer shrank between calls");
                self.parse_head(buf)
            }
        }
    }

    /// One full pass over `buf`: the head's length when it is all there;
    /// otherwise arms [`resume`](Self::resume) to go on from where it stopped.
    #[inline]
    fn parse_head(&mut self, buf: &[u8]) -> Result<Option<usize>, Error> {
        let mut line = Line::default();
        let Some(fields_at) = line.parse(buf, &self.limits)? else {
            self.resume = Some(Resume::Line(line));
            return Ok(None);
        };
        line.record(buf, &mut self.head)?;
        match self.head.fields.parse(buf, fields_at, &self.limits)? {
            Fields::End(len) => self.finish(buf, len).map(Some),
            Fields::Partial(resume) => {
                self.resume = Some(Resume::Fields(SectionScan::at(resume)));
                Ok(None)
            }
        }
    }

    /// The checks that need the whole head: Host, and the body's framing.
    #[inline]
    fn finish(&mut self, buf: &[u8], len: usize) -> Result<usize, Error> {
        let head = &mut self.head;
        let version = head.version.unwrap_or(Version::Http11);
        // RFC 9112 section 3.2: one Host in HTTP/1.1, never two, never an invalid one.
        let known = &head.fields.known;
        let hosts_allowed = if version == Version::Http11 {
            1..=1
        } else {
            0..=1
        };
        let host_valid = known.host.is_none_or(|h| self.valid_host.check(h.of(buf)));
        if !hosts_allowed.contains(&known.hosts) || !host_valid {
            return Err(Error::InvalidHost);
        }
        head.body = Some(request_body(version, &head.fields.known, &self.limits)?);
        Ok(len)
    }
}

/// A request line (`method SP target SP version CRLF`) validated as far as
/// it has arrived, so a line in pieces is never rescanned.
#[derive(Debug, Clone, Copy, Default)]
struct Line {
    /// Start of the method, after any empty lines before it.
    start: usize,
    /// Bytes validated so far.
    at: usize,
    /// The space after the method, once seen.
    method_end: Option<usize>,
    /// The space after the target, once seen.
    target_end: Option<usize>,
}

impl Line {
    /// Validates the bytes that arrived since the last call; returns where
    /// the fields start once the line is whole.
    #[inline(always)]
    fn parse(&mut self, buf: &[u8], limits: &Limits) -> Result<Option<usize>, Error> {
        if self.method_end.is_none() {
            if self.at == self.start {
                // RFC 9112 section 2.2: ignore empty lines before the request line.
                while buf[self.start..].starts_with(b"\r\n") {
                    self.start += 2;
                }
                self.at = self.start;
            }
            self.at = if buf.get(self.at..self.at + 4) == Some(b"GET ") {
                self.at + 3
            } else {
                token_end(buf, self.at)
            };
            match buf.get(self.at) {
                None => return Ok(None),
                Some(b'\r') if self.at == self.start && self.at + 1 == buf.len() => {
                    return Ok(None)
                }
                Some(b' ') if self.at > self.start => self.method_end = Some(self.at),
                Some(_) => return Err(Error::InvalidMethod),
            }
            self.at += 1;
        }
        if self.target_end.is_none() {
            let start = self.method_end.unwrap_or_default() + 1;
            self.at = target_end(buf, self.at);
            if self.at - start > limits.max_target_len {
                return Err(Error::TargetTooLong {
                    limit: limits.max_target_len,
                });
            }
            match buf.get(self.at) {
                None => return Ok(None),
                Some(b' ') if self.at > start => {
                    // Origin form by anything but CONNECT (7 bytes) is the rule.
                    if buf[start] != b'/' || start - 1 - self.start == 7 {
                        check_form(&buf[self.start..start - 1], &buf[start..self.at])?;
                    }
                    self.target_end = Some(self.at);
                }
                // `GET /` alone is HTTP/0.9, which has no version to support.
                Some(b'\r' | b'\n') if self.at > start => return Err(Error::InvalidVersion),
                Some(_) => return Err(Error::InvalidTarget),
            }
            self.at += 1;
        }
        // The version and CRLF: ten bytes at most, judged as they arrive.
        let version = &buf[self.at..buf.len().min(self.at + 10)];
        if let Some(word) = version.get(..8).and_then(|v| v.try_into().ok()) {
            // The usual lines, compared as one word and a pair.
            let word = u64::from_le_bytes(word);
            let known = word == u64::from_le_bytes(*b"HTTP/1.1")
                || word == u64::from_le_bytes(*b"HTTP/1.0");
            if known && version.get(8..) == Some(b"\r\n") {
                return Ok(Some(self.at + 10));
            }
        }
        Version::check_prefix(version)?;
        match version.get(8..) {
            None | Some(b"" | b"\r" | b"\r\n") => {}
            Some([b'\n', ..]) => return Err(Error::BareLf),
            Some([b'\r', _]) => return Err(Error::BareCr),
            Some(_) => return Err(Error::InvalidVersion),
        }
        Ok((version.len() == 10).then_some(self.at + 10))
    }

    /// Stores the parts of a whole line into `head`.
    #[inline]
    fn record(&self, buf: &[u8], head: &mut RequestHead) -> Result<(), Error> {
        let (Some(method_end), Some(target_end)) = (self.method_end, self.target_end) else {
            return Err(Error::InvalidVersion);
        };
        head.method = Span::new(self.start, method_end);
        head.target = Span::new(method_end + 1, target_end);
        head.version = Some(Version::parse(&buf[target_end + 1..target_end + 9])?);
        Ok(())
    }
}

/// Whether `target`'s form is one `method` may use (RFC 9112 section 3.2): authority form
/// is CONNECT's alone, asterisk form OPTIONS's; origin and absolute form any other's.
#[cold]
fn check_form(method: &[u8], target: &[u8]) -> Result<(), Error> {
    let fits = match Target::new(target).form() {
        TargetForm::Origin | TargetForm::Absolute => method != b"CONNECT",
        TargetForm::Authority => method == b"CONNECT",
        TargetForm::Asterisk => method == b"OPTIONS",
    };
    if fits {
        Ok(())
    } else {
        Err(Error::InvalidTarget)
    }
}

/// Request framing (RFC 9112 section 6.3), strict where the RFC allows a
/// choice: anything ambiguous is refused rather than guessed.
#[inline]
fn request_body(version: Version, known: &Known, limits: &Limits) -> Result<BodyKind, Error> {
    let codings = known.codings;
    if codings.present {
        if version == Version::Http10 {
            return Err(Error::TransferEncodingInHttp10);
        }
        if known.content_length.is_some() {
            return Err(Error::ContentLengthWithTransferEncoding);
        }
        if !codings.chunked_last || codings.chunked_twice {
            return Err(Error::ChunkedNotFinal);
        }
        if codings.other {
            return Err(Error::UnsupportedTransferCoding);
        }
        return Ok(BodyKind::Chunked);
    }
    match known.content_length {
        None | Some(0) => Ok(BodyKind::Empty),
        Some(n) if n > limits.max_body_len => Err(Error::BodyTooLarge {
            limit: limits.max_body_len,
        }),
        Some(n) => Ok(BodyKind::Length(n)),
    }
}
