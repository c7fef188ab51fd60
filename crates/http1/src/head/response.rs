//! Response heads (client role): status line, fields, and response framing.

use std::fmt;

use ringwire_wire::Status;

use super::{find_lf, Fields, HeadFields, Headers, Method, SectionScan, Span, Version};
use crate::chars::value_end;
use crate::{BodyKind, Error, Limits};

/// A parsed response head as offsets into the buffer it was parsed from.
#[derive(Debug, Clone, Default)]
pub struct ResponseHead {
    version: Option<Version>,
    status: u16,
    reason: Span,
    fields: HeadFields,
    body: Option<BodyKind>,
    len: usize,
}

impl ResponseHead {
    /// Views this head over `buf`, which must start with the bytes it was
    /// parsed from.
    #[must_use]
    #[inline]
    pub fn view<'a>(&'a self, buf: &'a [u8]) -> Response<'a> {
        Response { buf, head: self }
    }

    /// Length of the head in bytes: where the body starts.
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

/// A response head borrowed from the buffer it was parsed from.
#[derive(Clone, Copy)]
pub struct Response<'a> {
    buf: &'a [u8],
    head: &'a ResponseHead,
}

impl<'a> Response<'a> {
    /// The protocol version.
    #[must_use]
    #[inline]
    pub fn version(&self) -> Version {
        self.head.version.unwrap_or(Version::Http11)
    }

    /// The status code, 100 to 999.
    #[must_use]
    #[inline]
    pub fn status(&self) -> u16 {
        self.head.status
    }

    /// The reason phrase (possibly empty; carries no meaning).
    #[must_use]
    #[inline]
    pub fn reason(&self) -> &'a [u8] {
        self.head.reason.of(self.buf)
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

    /// How the body is framed, given the request it answers.
    #[must_use]
    #[inline]
    pub fn body(&self) -> BodyKind {
        self.head.body.unwrap_or(BodyKind::Empty)
    }

    /// Whether this is an interim (1xx) response other than `101`: the
    /// final response follows on the same connection.
    #[must_use]
    #[inline]
    pub fn is_interim(&self) -> bool {
        (100..200).contains(&self.status()) && self.status() != 101
    }

    /// The protocol the server switched to with `101 Switching Protocols`;
    /// the bytes past [`head_len`](Response::head_len) belong to it.
    #[must_use]
    #[inline]
    pub fn upgrade(&self) -> Option<&'a [u8]> {
        match self.status() {
            101 => Some(
                self.head
                    .fields
                    .known
                    .upgrade
                    .map_or(&b""[..], |s| s.of(self.buf)),
            ),
            _ => None,
        }
    }

    /// Whether the connection may carry another request: not after a
    /// close-delimited body, an HTTP/1.0 response without
    /// `Connection: keep-alive`, `Connection: close`, or framing that
    /// needed `Transfer-Encoding` to override `Content-Length`.
    #[must_use]
    #[inline]
    pub fn keep_alive(&self) -> bool {
        let known = &self.head.fields.known;
        let persistent = known.connection.persistent(self.version());
        let suspect = known.codings.present
            && (known.content_length.is_some() || self.version() == Version::Http10);
        persistent && !suspect && self.body() != BodyKind::CloseDelimited
    }

    /// Length of the head in bytes: where the body starts.
    #[must_use]
    #[inline]
    pub fn head_len(&self) -> usize {
        self.head.len
    }
}

impl fmt::Debug for Response<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Response")
            .field("version", &self.version())
            .field("status", &self.status())
            .field("reason", &String::from_utf8_lossy(self.reason()))
            .field("headers", &self.headers())
            .field("body", &self.body())
            .finish()
    }
}

/// Parses response heads from the front of a buffer that grows between
/// calls, resuming as [`RequestParser`](crate::RequestParser) does.
///
/// An interim `1xx` response (other than 101) parses as a message of its
/// own: consume it and parse again for the final response.
#[derive(Debug, Clone)]
pub struct ResponseParser {
    limits: Limits,
    head: ResponseHead,
    /// Progress on a message that arrives in pieces.
    resume: Option<Resume>,
}

#[derive(Debug, Clone, Copy)]
enum Resume {
    /// Searching for the end of a status line whose version and code were
    /// already judged.
    Line { searched: usize },
    /// Parsing field lines as they complete.
    Fields(SectionScan),
}

impl Default for ResponseParser {
    fn default() -> Self {
        ResponseParser::new(Limits::default())
    }
}

impl ResponseParser {
    /// A parser enforcing `limits`.
    #[must_use]
    pub fn new(limits: Limits) -> Self {
        ResponseParser {
            limits,
            head: ResponseHead {
                fields: HeadFields::with_capacity(&limits),
                ..ResponseHead::default()
            },
            resume: None,
        }
    }

    /// The last head parsed completely.
    #[must_use]
    #[inline]
    pub fn head(&self) -> &ResponseHead {
        &self.head
    }

    /// Parses the head of the response to a `method` request from the
    /// front of `buf`.
    ///
    /// # Errors
    ///
    /// Bytes that can never be a valid head, or a head over the limits.
    #[inline]
    pub fn parse<'a>(
        &'a mut self,
        buf: &'a [u8],
        method: Method<'_>,
    ) -> Result<Status<Response<'a>>, Error> {
        let complete = match &mut self.resume {
            Some(Resume::Line { searched }) if buf.len() >= *searched => {
                match find_lf(&buf[*searched..]) {
                    None => {
                        *searched = buf.len();
                        None
                    }
                    Some(_) => self.parse_head(buf, method)?,
                }
            }
            Some(Resume::Fields(scan)) if buf.len() >= scan.searched() => {
                match self.head.fields.resume(scan, buf, &self.limits)? {
                    None => None,
                    Some(len) => Some(self.finish(len, method)?),
                }
            }
            // A fresh message (or a buffer that shrank, which is misuse).
            _ => self.parse_head(buf, method)?,
        };
        match complete {
            Some(len) => {
                self.resume = None;
                self.head.len = len;
                Ok(Status::Complete(self.head.view(buf), len))
            }
            None => {
                if buf.len() > self.limits.max_head_len {
                    return Err(Error::HeadTooLarge {
                        limit: self.limits.max_head_len,
                    });
                }
                Ok(Status::Partial {
                    at_least: buf.len() + 1,
                })
            }
        }
    }

    /// Replaces each obsolete line fold (CRLF then SP or HTAB) in the field
    /// lines of the head at the front of `buf` with two spaces, in place,
    /// as RFC 9112 section 5.2 has a user agent do, and forgets the parse
    /// in progress: after [`Error::ObsFold`], parse `buf` again. Offsets do
    /// not move. `false` when there was none to replace (a fold right
    /// after the status line stays an error), so a caller looping on
    /// `ObsFold` stops.
    ///
    /// Kept out of [`parse`](Self::parse), whose strict pass is shared with
    /// requests: only a caller that owns the bytes pays for this.
    #[cold]
    pub fn unfold(&mut self, buf: &mut [u8]) -> bool {
        self.resume = None;
        let Some(status_end) = find_lf(buf) else {
            return false;
        };
        let mut unfolded = false;
        let mut at = status_end + 1;
        while let Some(lf) = find_lf(&buf[at..]).map(|n| at + n) {
            if buf[at] == b'\r' && lf == at + 1 {
                break; // The empty line: the head ends here.
            }
            if buf[lf - 1] == b'\r' && matches!(buf.get(lf + 1), Some(b' ' | b'\t')) {
                buf[lf - 1] = b' ';
                buf[lf] = b' ';
                unfolded = true;
            }
            at = lf + 1;
        }
        unfolded
    }

    /// One full pass over `buf`: the head's length when it is all there;
    /// otherwise arms the resumable parse.
    #[inline]
    fn parse_head(&mut self, buf: &[u8], method: Method<'_>) -> Result<Option<usize>, Error> {
        let Some(fields_at) = parse_status_line(buf, &mut self.head)? else {
            // Until the version and code are here, fresh attempts (twelve
            // bytes at most) judge them; then only new bytes are searched.
            self.resume = (buf.len() >= 12).then_some(Resume::Line {
                searched: buf.len(),
            });
            return Ok(None);
        };
        match self.head.fields.parse(buf, fields_at, &self.limits)? {
            Fields::End(len) => self.finish(len, method).map(Some),
            Fields::Partial(at) => {
                self.resume = Some(Resume::Fields(SectionScan::at(at)));
                Ok(None)
            }
        }
    }

    /// Framing, which needs the whole head.
    #[inline]
    fn finish(&mut self, len: usize, method: Method<'_>) -> Result<usize, Error> {
        self.head.body = Some(response_body(&self.head, method, &self.limits)?);
        Ok(len)
    }
}

/// Parses `version SP status [SP reason] CRLF` into `head`; returns where
/// the fields start, or `None` when the line is cut off.
///
/// The space and reason after the code may be missing: servers in the wild
/// send `HTTP/1.1 200\r\n`, and the reason carries no meaning.
#[inline]
fn parse_status_line(buf: &[u8], head: &mut ResponseHead) -> Result<Option<usize>, Error> {
    let Some(line) = buf.get(..12) else {
        return status_prefix(buf).map(|()| None);
    };
    head.version = Some(Version::parse(&line[..8])?);
    let code = &line[9..12];
    if line[8] != b' ' || !code.iter().all(u8::is_ascii_digit) || code[0] == b'0' {
        return Err(if line[8] == b' ' {
            Error::InvalidStatus
        } else {
            Error::InvalidVersion
        });
    }
    head.status = code.iter().fold(0, |n, &d| n * 10 + u16::from(d - b'0'));
    let mut at = 12;
    let reason_start = match buf.get(at) {
        None => return Ok(None),
        Some(b' ') => at + 1,
        Some(b'\r') => at,
        Some(b'\n') => return Err(Error::BareLf),
        Some(_) => return Err(Error::InvalidStatus),
    };
    at = reason_start;
    loop {
        at = value_end(buf, at);
        match buf.get(at) {
            None => return Ok(None),
            Some(b'\t') => at += 1,
            Some(b'\r') => match buf.get(at + 1) {
                None => return Ok(None),
                Some(b'\n') => break,
                Some(_) => return Err(Error::BareCr),
            },
            Some(b'\n') => return Err(Error::BareLf),
            Some(_) => return Err(Error::InvalidReason),
        }
    }
    head.reason = Span::new(reason_start, at);
    Ok(Some(at + 2))
}

/// Checks the first bytes of `HTTP/d.d SP ddd` that have arrived.
#[inline]
fn status_prefix(partial: &[u8]) -> Result<(), Error> {
    Version::check_prefix(partial)?;
    for (k, &b) in partial.iter().enumerate().skip(8) {
        let ok = match k {
            8 => b == b' ',
            _ => b.is_ascii_digit() && (k > 9 || b != b'0'),
        };
        if !ok {
            return Err(if k == 8 {
                Error::InvalidVersion
            } else {
                Error::InvalidStatus
            });
        }
    }
    Ok(())
}

/// Response framing (RFC 9112 section 6.3), in the RFC's order.
#[inline]
fn response_body(
    head: &ResponseHead,
    method: Method<'_>,
    limits: &Limits,
) -> Result<BodyKind, Error> {
    let status = head.status;
    let known = &head.fields.known;
    if method == Method::Head || (100..200).contains(&status) || status == 204 || status == 304 {
        return Ok(BodyKind::Empty);
    }
    if method == Method::Connect && (200..300).contains(&status) {
        // A tunnel: the bytes after the head are the tunnelled stream.
        return Ok(BodyKind::Empty);
    }
    if known.codings.present {
        // Transfer-Encoding overrides Content-Length; keep_alive() refuses
        // to reuse such a connection.
        return Ok(
            if known.codings.chunked_last && !known.codings.chunked_twice {
                BodyKind::Chunked
            } else {
                BodyKind::CloseDelimited
            },
        );
    }
    match known.content_length {
        None => Ok(BodyKind::CloseDelimited),
        Some(0) => Ok(BodyKind::Empty),
        Some(n) if n > limits.max_body_len => Err(Error::BodyTooLarge {
            limit: limits.max_body_len,
        }),
        Some(n) => Ok(BodyKind::Length(n)),
    }
}
