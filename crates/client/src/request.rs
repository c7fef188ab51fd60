//! Requests encoded straight into a send ring, through a typestate:
//! method and URL, then query parameters, then header fields, then the body.
//!
//! The head is written by `ringwire_http1`'s [`RequestWriter`] into the
//! ring's free span; a body written in place goes right after the room kept
//! for the head, and a caller's slice is not copied at all: the connection
//! sends head and body with one `writev`. Nothing is committed to the ring,
//! so the next request reuses the same (already faulted-in) pages.
//!
//! The builder borrows the buffer only while it writes. The finished
//! [`Request`] names where its bytes lie, and a client reads them from the
//! buffer when it sends: `client.send(&mut buffer, &request)`. Starting
//! another request in the same buffer makes the first one stale, which
//! sending reports ([`Error::StaleRequest`]) rather than sending the wrong
//! bytes.

use std::io;
use std::sync::atomic::{AtomicU64, Ordering};

use ringwire_http1::encode::{EncodeError, QueryWriter, RequestWriter};
use ringwire_http1::{Method, Version};
use ringwire_ring::{Ring, RingConfig};

use crate::decompress::ACCEPTED;
use crate::{Error, Url};

/// The send ring requests are encoded into; reusable, one request at a time.
///
/// ```no_run
/// use ringwire_client::{blocking::Client, RequestBuffer, Url};
///
/// let url = Url::parse("http://127.0.0.1:8080/orders")?;
/// let mut buffer = RequestBuffer::new()?;
/// let request = buffer
///     .request("POST", &url)?
///     .query("dry_run", "yes")?
///     .headers()?
///     .header("content-type", "application/json")?
///     .body(br#"{"qty":1}"#)?;
/// let client = Client::default();
/// let mut response = client.send(&mut buffer, &request)?;
/// println!("{} {}", response.status(), response.text()?);
/// # Ok::<(), ringwire_client::Error>(())
/// ```
#[derive(Debug)]
pub struct RequestBuffer {
    ring: Ring,
    max_head_len: usize,
    /// Renewed by every request started and every growth, from a counter
    /// shared by all buffers, so a [`Request`] whose bytes were overwritten,
    /// or that names another buffer, is never sent.
    generation: u64,
}

/// The next [`RequestBuffer::generation`].
fn next_generation() -> u64 {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

impl RequestBuffer {
    /// 8 KiB for a request head, as most servers accept at most that much.
    pub const DEFAULT_MAX_HEAD_LEN: usize = 8 << 10;
    /// A 64 KiB ring: the head and up to 56 KiB of body written in place.
    pub const DEFAULT_RING: RingConfig = RingConfig {
        capacity: 64 << 10,
        max_capacity: 64 << 20,
        backing: ringwire_ring::Backing::Auto,
    };

    /// A buffer with the default ring and head limit.
    ///
    /// # Errors
    ///
    /// The OS refused the ring's mappings.
    pub fn new() -> Result<Self, Error> {
        Self::with_config(Self::DEFAULT_RING, Self::DEFAULT_MAX_HEAD_LEN)
    }

    /// A buffer over a ring as `ring` says, keeping `max_head_len` bytes
    /// for each head.
    ///
    /// # Errors
    ///
    /// The OS refused the ring's mappings, or the ring cannot grow to hold
    /// `max_head_len`.
    pub fn with_config(ring: RingConfig, max_head_len: usize) -> Result<Self, Error> {
        let mut ring = Ring::new(ring)?;
        ring.ensure_capacity(max_head_len)?;
        Ok(RequestBuffer {
            ring,
            max_head_len,
            generation: 0,
        })
    }

    /// Grows the ring so a body of `len` bytes can be written in place after
    /// the head ([`HeaderBuilder::body_fixed`], [`HeaderBuilder::body_with`]).
    ///
    /// # Errors
    ///
    /// Past the ring's growth bound.
    pub fn reserve(&mut self, len: usize) -> Result<(), Error> {
        let total = self.max_head_len.saturating_add(len);
        if total > self.ring.capacity() {
            self.generation = next_generation();
            self.ring.ensure_capacity(total)?;
        }
        Ok(())
    }

    /// Starts a request: writes `method SP target` and hands over the query.
    ///
    /// # Errors
    ///
    /// [`Error::Encode`] for a method that is not a token.
    pub fn request<'w, 'a>(
        &'w mut self,
        method: &'a str,
        url: &'a Url,
    ) -> Result<QueryBuilder<'w, 'a>, Error> {
        self.generation = next_generation();
        let span = self.ring.writable();
        let room = self.max_head_len.min(span.len());
        let (head, rest) = span.split_at_mut(room);
        let writer = RequestWriter::new(head, method, url.target()).map_err(|e| encode(e, room))?;
        Ok(QueryBuilder {
            writer,
            parts: Parts {
                rest,
                room,
                method,
                url,
                generation: self.generation,
            },
        })
    }

    /// The head and body of `request`, from this buffer or the request.
    ///
    /// # Errors
    ///
    /// [`Error::StaleRequest`] when another request was started in this
    /// buffer since (or it grew), or `request` came from another buffer.
    pub fn bytes<'s>(&'s mut self, request: &Request<'s>) -> Result<(&'s [u8], &'s [u8]), Error> {
        let in_ring =
            matches!(request.head, Head::Ring(_)) || matches!(request.body, Body::Ring { .. });
        if in_ring && request.generation != self.generation {
            return Err(Error::StaleRequest);
        }
        let span: &'s [u8] = self.ring.writable();
        let head = match request.head {
            Head::Ring(len) => span.get(..len),
            Head::Owned(head) => Some(head),
        };
        let body = match request.body {
            Body::Slice(body) => Some(body),
            Body::Ring { start, len } => span.get(start..start + len),
            Body::Stream { .. } => Some(&[][..]),
        };
        head.zip(body).ok_or(Error::StaleRequest)
    }

    /// The ring's free span after the room kept for the head, where a streamed body is
    /// read from its source piece by piece (the head before it stays as it was).
    pub(crate) fn scratch(&mut self) -> &mut [u8] {
        let span = self.ring.writable();
        let room = self.max_head_len.min(span.len());
        &mut span[room..]
    }
}

/// What every state carries besides its writer.
#[derive(Debug)]
struct Parts<'w, 'a> {
    /// The ring's free bytes after the room kept for the head.
    rest: &'w mut [u8],
    room: usize,
    method: &'a str,
    url: &'a Url,
    generation: u64,
}

/// Appends percent-encoded query parameters to the target.
#[derive(Debug)]
pub struct QueryBuilder<'w, 'a> {
    writer: QueryWriter<'w>,
    parts: Parts<'w, 'a>,
}

impl<'w, 'a> QueryBuilder<'w, 'a> {
    /// Appends `key=value`, both percent-encoded (a space is `%20`).
    ///
    /// # Errors
    ///
    /// [`Error::RequestHeadTooLarge`].
    pub fn query(mut self, key: &str, value: &str) -> Result<Self, Error> {
        self.writer
            .query(key, value)
            .map_err(|e| encode(e, self.parts.room))?;
        Ok(self)
    }

    /// Ends the request line and writes `host` (the URL's authority);
    /// header fields follow.
    ///
    /// # Errors
    ///
    /// [`Error::RequestHeadTooLarge`].
    pub fn headers(self) -> Result<HeaderBuilder<'w, 'a>, Error> {
        let authority = self.parts.url.authority();
        self.headers_with_host(authority)
    }

    /// [`headers`](Self::headers), with `host` in place of the URL's
    /// authority: a virtual host asked of the server the URL names (as
    /// `curl -H 'Host: ...'`). A redirect to another origin gets that
    /// origin's authority instead.
    ///
    /// # Errors
    ///
    /// [`Error::Encode`] for a value with CR, LF or another control
    /// character; [`Error::RequestHeadTooLarge`].
    pub fn headers_with_host(self, host: &str) -> Result<HeaderBuilder<'w, 'a>, Error> {
        let room = self.parts.room;
        let mut writer = self
            .writer
            .headers(Version::Http11)
            .map_err(|e| encode(e, room))?;
        // First after the request line, as RFC 9112 section 3.2 asks.
        writer.header("host", host).map_err(|e| encode(e, room))?;
        Ok(HeaderBuilder {
            writer,
            parts: self.parts,
            expect_continue: false,
            decompress: false,
            offers_encodings: false,
            typed: false,
        })
    }
}

/// Writes header fields, then the body, which ends the request.
#[derive(Debug)]
pub struct HeaderBuilder<'w, 'a> {
    writer: RequestWriter<'w>,
    parts: Parts<'w, 'a>,
    /// Whether the body waits for the server's `100 Continue`.
    expect_continue: bool,
    /// Whether the response body is to be decoded.
    decompress: bool,
    /// Whether the caller wrote an `accept-encoding` field.
    offers_encodings: bool,
    /// Whether the caller wrote a `content-type` field.
    typed: bool,
}

impl<'w, 'a> HeaderBuilder<'w, 'a> {
    /// Writes a field line.
    ///
    /// # Errors
    ///
    /// [`Error::ManagedHeader`] for `host` (see
    /// [`QueryBuilder::headers_with_host`]), `content-length` and
    /// `transfer-encoding`; [`Error::Encode`] for a name that is not a token
    /// or a value with CR, LF or another control character;
    /// [`Error::RequestHeadTooLarge`].
    pub fn header(mut self, name: &str, value: impl AsRef<[u8]>) -> Result<Self, Error> {
        for managed in ["host", "content-length", "transfer-encoding"] {
            if name.eq_ignore_ascii_case(managed) {
                return Err(Error::ManagedHeader(managed));
            }
        }
        self.writer
            .header(name, value)
            .map_err(|e| encode(e, self.parts.room))?;
        self.offers_encodings |= name.eq_ignore_ascii_case("accept-encoding");
        self.typed |= name.eq_ignore_ascii_case("content-type");
        Ok(self)
    }

    /// Holds the body back until the server asks for it (`Expect:
    /// 100-continue`, RFC 9110 section 10.1.1), as curl does for uploads
    /// over 1 MiB: the head goes first, the body after the server's `100
    /// Continue`, or after
    /// [`ClientConfig::expect_continue_timeout`](crate::ClientConfig::expect_continue_timeout)
    /// without an answer. A server that answers first (a `401`, a `413`, a
    /// redirect) is spared the upload: its answer is the response, and the
    /// connection closes, as the server still waits for the body the head
    /// announced. A request without a body (or with an empty one) sends no
    /// expectation.
    ///
    /// An `expect` field written with [`header`](Self::header) is sent as
    /// it is, the body right after the head.
    #[must_use]
    pub fn expect_continue(mut self) -> Self {
        self.expect_continue = true;
        self
    }

    /// Asks for the response compressed and has its body decoded as it is
    /// read, as `curl --compressed` does: the head offers
    /// `accept-encoding: gzip, deflate, br, zstd`, and a body whose
    /// `content-encoding` is `gzip` (or `x-gzip`), `deflate` (zlib-wrapped,
    /// or bare as browsers also accept it), `br` or `zstd` (a window of at
    /// most 8 MiB) comes out of `chunk`, `bytes` and `text` decoded
    /// ([`blocking::Response::chunk`](crate::blocking::Response::chunk),
    /// [`tokio::Response::chunk`](crate::tokio::Response::chunk)), up to
    /// [`ClientConfig::max_decoded_body_len`](crate::ClientConfig::max_decoded_body_len).
    /// It is asked per request because the offer is part of the head this
    /// builder writes.
    ///
    /// Left as it came: a body with no coding, with one the client does not
    /// know, or with several stacked (`gzip, br`), and a `206`'s range (a
    /// part of the encoded bytes); the response's `decoding()` says which
    /// it is. The head stays the server's: its `content-encoding`, and a
    /// `content-length` of the encoded bytes. Data that is not of its
    /// coding is [`Error::Decompress`], and the connection is closed.
    ///
    /// An `accept-encoding` field written with [`header`](Self::header)
    /// goes instead of the offer; what comes back is decoded all the same.
    /// Without this call nothing is decoded: the body is handed out in
    /// place in the receive ring, and nothing is allocated for decoding.
    #[must_use]
    pub fn decompress(mut self) -> Self {
        self.decompress = true;
        self
    }

    /// Ends the head without a body (`content-length: 0` for the methods
    /// that usually carry one, so servers need not wait for it).
    ///
    /// # Errors
    ///
    /// [`Error::RequestHeadTooLarge`].
    pub fn finish(mut self) -> Result<Request<'a>, Error> {
        if matches!(self.parts.method, "POST" | "PUT" | "PATCH") {
            self.framing(0)?;
        }
        self.end(Body::Slice(&[]))
    }

    /// Ends the head with `content-length` for `body`, which is sent from
    /// where it lies, after the head, in the same `writev`.
    ///
    /// # Errors
    ///
    /// [`Error::RequestHeadTooLarge`].
    pub fn body(mut self, body: &'a [u8]) -> Result<Request<'a>, Error> {
        self.framing(body.len() as u64)?;
        self.end(Body::Slice(body))
    }

    /// A body of `len` bytes that `fill` writes in place, in the send ring.
    ///
    /// # Errors
    ///
    /// [`Error::BodyExceedsSendRing`] when `len` is more than the ring has
    /// free after the head (see [`RequestBuffer::reserve`]);
    /// [`Error::RequestHeadTooLarge`].
    pub fn body_fixed(
        mut self,
        len: usize,
        fill: impl FnOnce(&mut [u8]),
    ) -> Result<Request<'a>, Error> {
        let room = self.parts.rest.len();
        let Some(body) = self.parts.rest.get_mut(..len) else {
            return Err(Error::BodyExceedsSendRing { len, room });
        };
        fill(body);
        self.framing(len as u64)?;
        let start = self.parts.room;
        self.end(Body::Ring { start, len })
    }

    /// A body that `write` serialises into the send ring through
    /// [`io::Write`] (`serde_json::to_writer`, `write!`), measured after.
    ///
    /// # Errors
    ///
    /// [`Error::BodyExceedsSendRing`] when the body outgrows the ring's
    /// free span; [`Error::Io`] for an error `write` returns;
    /// [`Error::RequestHeadTooLarge`].
    pub fn body_with(
        mut self,
        write: impl FnOnce(&mut BodyWriter<'_>) -> io::Result<()>,
    ) -> Result<Request<'a>, Error> {
        let room = self.parts.rest.len();
        let mut writer = BodyWriter {
            buf: self.parts.rest,
            len: 0,
            overflow: false,
        };
        let written = write(&mut writer);
        if writer.overflow {
            return Err(Error::BodyExceedsSendRing {
                len: writer.len,
                room,
            });
        }
        written.map_err(Error::Io)?;
        let len = writer.len;
        self.parts.rest = writer.buf;
        self.framing(len as u64)?;
        let start = self.parts.room;
        self.end(Body::Ring { start, len })
    }

    /// `value` as a JSON body, serialised straight into the send ring (as
    /// [`body_with`](Self::body_with) writes), with `content-type:
    /// application/json` unless a `content-type` was written.
    ///
    /// # Errors
    ///
    /// [`Error::Json`] when `value` cannot be written as JSON; as
    /// [`body_with`](Self::body_with) otherwise.
    #[cfg(feature = "json")]
    pub fn json<T: serde::Serialize + ?Sized>(self, value: &T) -> Result<Request<'a>, Error> {
        let typed = match self.typed {
            true => self,
            false => self.header("content-type", "application/json")?,
        };
        let mut refused = None;
        let written = typed.body_with(|w| {
            serde_json::to_writer(w, value).map_err(|e| {
                let io = io::Error::other("not JSON");
                refused = Some(e);
                io
            })
        });
        match (written, refused) {
            // A write past the ring is the ring's error, said by `body_with`.
            (Err(Error::Io(_)), Some(e)) => Err(Error::Json(e)),
            (written, _) => written,
        }
    }

    /// A body read from a source as it is sent
    /// ([`blocking::Client::send_streamed`](crate::blocking::Client::send_streamed),
    /// [`tokio::Client::send_streamed`](crate::tokio::Client::send_streamed)): `len` bytes
    /// with `content-length`, or, when the length is not known, as much as the source
    /// gives, sent chunked (HTTP/2: in `DATA` frames) until it ends. Each piece is read into
    /// the send ring's free span after the head and sent from there, so a body of any
    /// size goes through a buffer of the ring's size ([`RequestBuffer::reserve`] for
    /// larger pieces).
    ///
    /// Such a request goes twice only if its source can give the body again: a file sent
    /// with `send_file` is read again from where it started; any other source is retried
    /// on a fresh connection only while nothing was read from it, and a redirect that
    /// would send its body again (`307`, `308`; a `417` to its expectation) is not
    /// followed but answered.
    ///
    /// # Errors
    ///
    /// [`Error::RequestHeadTooLarge`].
    pub fn body_stream(mut self, len: Option<u64>) -> Result<StreamedRequest<'a>, Error> {
        let room = self.parts.room;
        match len {
            Some(len) => self.framing(len)?,
            None => {
                if self.expect_continue {
                    self.writer
                        .header("expect", "100-continue")
                        .map_err(|e| encode(e, room))?;
                }
                self.writer.chunked().map_err(|e| encode(e, room))?;
            }
        }
        self.end(Body::Stream { len }).map(StreamedRequest)
    }

    /// A `multipart/form-data` body (RFC 7578) of `form`'s parts, written into the send ring,
    /// with its `content-type` (a fresh boundary, found in no part).
    ///
    /// # Errors
    ///
    /// [`Error::Form`] for a part that cannot be sent; as
    /// [`body_with`](Self::body_with) (a form larger than the send ring's free span:
    /// [`RequestBuffer::reserve`] first).
    pub fn form(self, form: &crate::Form<'_>) -> Result<Request<'a>, Error> {
        let boundary = form.boundary().map_err(Error::Form)?;
        self.header("content-type", crate::Form::content_type(&boundary))?
            .body_with(|w| form.write(&boundary, w))
    }

    /// A `multipart/form-data` body of `form`'s parts read as it is sent (files added by
    /// [`Form::file_from`](crate::Form::file_from) read from their files: a form of any
    /// size), with its `content-type` and `content-length`: the request, and the body to
    /// send it with (`send_streamed`).
    ///
    /// ```no_run
    /// use ringwire_client::{blocking::Client, Form, RequestBuffer, Url};
    ///
    /// let url = Url::parse("http://127.0.0.1:8080/upload")?;
    /// let video = std::fs::File::open("talk.mp4").map_err(ringwire_client::Error::Io)?;
    /// let form = Form::new()
    ///     .text("title", "Rings")
    ///     .file_from("video", "talk.mp4", Some("video/mp4"), &video)
    ///     .map_err(ringwire_client::Error::Io)?;
    /// let mut buffer = RequestBuffer::new()?;
    /// let (request, body) = buffer.request("POST", &url)?.headers()?.form_stream(&form)?;
    /// let client = Client::default();
    /// let response = client.send_streamed(&mut buffer, &request, body)?;
    /// println!("{}", response.status());
    /// # Ok::<(), ringwire_client::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::Form`] for a part that cannot be sent; [`Error::RequestHeadTooLarge`].
    pub fn form_stream<'f>(
        self,
        form: &crate::Form<'f>,
    ) -> Result<(StreamedRequest<'a>, crate::FormReader<'f>), Error> {
        let boundary = form.boundary().map_err(Error::Form)?;
        let body = form.reader(&boundary);
        let request = self
            .header("content-type", crate::Form::content_type(&boundary))?
            .body_stream(Some(body.total_len()))?;
        Ok((request, body))
    }

    /// Writes `content-length: len`, after `expect: 100-continue` when it
    /// was asked for and there is a body to hold back (RFC 9110 section
    /// 10.1.1 has a client send it only with content).
    fn framing(&mut self, len: u64) -> Result<(), Error> {
        let room = self.parts.room;
        if self.expect_continue && len > 0 {
            self.writer
                .header("expect", "100-continue")
                .map_err(|e| encode(e, room))?;
        }
        self.writer
            .content_length(len)
            .map_err(|e| encode(e, room))?;
        Ok(())
    }

    fn end(mut self, body: Body<'a>) -> Result<Request<'a>, Error> {
        let room = self.parts.room;
        if self.decompress && !self.offers_encodings {
            self.writer
                .header("accept-encoding", ACCEPTED)
                .map_err(|e| encode(e, room))?;
        }
        let head_len = self.writer.finish().map_err(|e| encode(e, room))?;
        Ok(Request {
            method: self.parts.method,
            url: self.parts.url,
            head: Head::Ring(head_len),
            body,
            expect_continue: self.expect_continue && body.has_content(),
            decompress: self.decompress,
            generation: self.parts.generation,
        })
    }
}

/// The body of [`HeaderBuilder::body_with`]: an [`io::Write`] into the
/// send ring's free span.
#[derive(Debug)]
pub struct BodyWriter<'b> {
    buf: &'b mut [u8],
    len: usize,
    /// Set when a write did not fit, so the error names the real cause
    /// whatever the serialiser makes of the `WriteZero`.
    overflow: bool,
}

impl io::Write for BodyWriter<'_> {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        let end = self.len.saturating_add(bytes.len());
        let Some(free) = self.buf.get_mut(self.len..end) else {
            self.overflow = true;
            self.len = end;
            return Err(io::Error::from(io::ErrorKind::WriteZero));
        };
        free.copy_from_slice(bytes);
        self.len = end;
        Ok(bytes.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// Where a request's head lies: in the send ring, or (for a redirect the
/// client rewrote) in a buffer of its own.
#[derive(Debug, Clone, Copy)]
enum Head<'a> {
    /// The first `len` bytes of the ring's free span.
    Ring(usize),
    Owned(&'a [u8]),
}

/// Where a request's body lies.
#[derive(Debug, Clone, Copy)]
enum Body<'a> {
    /// The caller's bytes (or none).
    Slice(&'a [u8]),
    /// Written in place, at `start` of the ring's free span.
    Ring { start: usize, len: usize },
    /// Read from a source as it is sent: `len` bytes, or chunked until it ends.
    Stream { len: Option<u64> },
}

impl Body<'_> {
    /// Whether there is a body to hold back for `100 Continue`.
    fn has_content(&self) -> bool {
        match self {
            Body::Slice(body) => !body.is_empty(),
            Body::Ring { len, .. } => *len > 0,
            Body::Stream { len } => *len != Some(0),
        }
    }
}

/// An encoded request, ready to send with the [`RequestBuffer`] it was
/// written into; it can be sent again (and is, to follow a redirect).
#[derive(Debug, Clone, Copy)]
pub struct Request<'a> {
    method: &'a str,
    url: &'a Url,
    head: Head<'a>,
    body: Body<'a>,
    /// Whether the head says `expect: 100-continue` and the body waits.
    expect_continue: bool,
    /// Whether the response body is decoded.
    decompress: bool,
    generation: u64,
}

impl<'a> Request<'a> {
    /// The same request with a head encoded elsewhere (a redirect); one
    /// that keeps its body keeps waiting for `100 Continue` if it did.
    pub(crate) fn rewritten<'b>(
        &self,
        method: &'b str,
        url: &'b Url,
        head: &'b [u8],
        keep_body: bool,
        keep_expectation: bool,
    ) -> Request<'b>
    where
        'a: 'b,
    {
        Request {
            method,
            url,
            head: Head::Owned(head),
            body: if keep_body {
                self.body
            } else {
                Body::Slice(&[])
            },
            expect_continue: keep_body && keep_expectation && self.expect_continue,
            decompress: self.decompress,
            generation: self.generation,
        }
    }

    /// The method.
    #[must_use]
    pub fn method(&self) -> &'a str {
        self.method
    }

    /// The URL.
    #[must_use]
    pub fn url(&self) -> &'a Url {
        self.url
    }

    /// The method as the response parser needs it (only HEAD and CONNECT
    /// change how a response is framed).
    pub(crate) fn parse_method(&self) -> Method<'a> {
        Method::from(self.method)
    }

    /// Whether the body waits for the server's `100 Continue`
    /// ([`HeaderBuilder::expect_continue`], with a body to hold back).
    #[must_use]
    pub fn expects_continue(&self) -> bool {
        self.expect_continue
    }

    /// Whether the response body is decoded
    /// ([`HeaderBuilder::decompress`]).
    #[must_use]
    pub fn decompresses(&self) -> bool {
        self.decompress
    }

    /// The length of a body streamed from a source: `Some(None)` when it is sent chunked;
    /// `None` when the body is not streamed.
    pub(crate) fn streamed(&self) -> Option<Option<u64>> {
        match self.body {
            Body::Stream { len } => Some(len),
            Body::Slice(_) | Body::Ring { .. } => None,
        }
    }

    /// Whether sending it twice does no more than sending it once
    /// (RFC 9110 section 9.2.2): only those are retried on a fresh
    /// connection when a pooled one turns out closed.
    pub(crate) fn is_idempotent(&self) -> bool {
        matches!(
            self.method,
            "GET" | "HEAD" | "PUT" | "DELETE" | "OPTIONS" | "TRACE"
        )
    }
}

/// A request whose body is read from a source as it is sent
/// ([`HeaderBuilder::body_stream`]); like a [`Request`], it names bytes in its
/// [`RequestBuffer`].
#[derive(Debug, Clone, Copy)]
pub struct StreamedRequest<'a>(Request<'a>);

impl<'a> StreamedRequest<'a> {
    /// The method.
    #[must_use]
    pub fn method(&self) -> &'a str {
        self.0.method
    }

    /// The URL.
    #[must_use]
    pub fn url(&self) -> &'a Url {
        self.0.url
    }

    /// The body's length, `None` when it is sent chunked.
    #[must_use]
    pub fn body_len(&self) -> Option<u64> {
        match self.0.body {
            Body::Stream { len } => len,
            Body::Slice(_) | Body::Ring { .. } => None,
        }
    }

    /// The request as the exchange sends it.
    pub(crate) fn request(&self) -> &Request<'a> {
        &self.0
    }
}

/// An encoder error in the builder's terms.
fn encode(e: EncodeError, room: usize) -> Error {
    match e {
        EncodeError::BufferFull { .. } => Error::RequestHeadTooLarge { limit: room },
        other => Error::Encode(other),
    }
}

#[cfg(test)]
mod tests {
    use std::io::Write as _;

    use super::*;

    fn url() -> Url {
        Url::parse("http://example.com:8080/api/v1?fixed=1").unwrap()
    }

    fn sent(buffer: &mut RequestBuffer, request: &Request<'_>) -> String {
        let (head, body) = buffer.bytes(request).unwrap();
        format!(
            "{}{}",
            String::from_utf8_lossy(head),
            String::from_utf8_lossy(body)
        )
    }

    #[test]
    fn every_body_kind() {
        let url = url();
        let mut buffer = RequestBuffer::new().unwrap();
        let req = buffer
            .request("GET", &url)
            .unwrap()
            .query("q", "zero copy&more")
            .unwrap()
            .headers()
            .unwrap()
            .header("accept", "*/*")
            .unwrap()
            .finish()
            .unwrap();
        assert_eq!(
            sent(&mut buffer, &req),
            "GET /api/v1?fixed=1&q=zero%20copy%26more HTTP/1.1\r\nhost: example.com:8080\r\naccept: */*\r\n\r\n"
        );

        let json = br#"{"a":1}"#;
        let req = buffer
            .request("POST", &url)
            .unwrap()
            .headers()
            .unwrap()
            .body(json)
            .unwrap();
        assert!(sent(&mut buffer, &req).ends_with("content-length: 7\r\n\r\n{\"a\":1}"));

        let req = buffer
            .request("PUT", &url)
            .unwrap()
            .headers()
            .unwrap()
            .body_fixed(4, |buf| buf.copy_from_slice(b"abcd"))
            .unwrap();
        assert!(sent(&mut buffer, &req).ends_with("content-length: 4\r\n\r\nabcd"));

        let req = buffer
            .request("PATCH", &url)
            .unwrap()
            .headers()
            .unwrap()
            .body_with(|w| write!(w, "n={}", 42))
            .unwrap();
        assert!(sent(&mut buffer, &req).ends_with("content-length: 4\r\n\r\nn=42"));

        let req = buffer
            .request("POST", &url)
            .unwrap()
            .headers()
            .unwrap()
            .finish()
            .unwrap();
        assert!(sent(&mut buffer, &req).ends_with("content-length: 0\r\n\r\n"));
    }

    #[test]
    fn expect_continue_only_with_a_body() {
        let url = url();
        let mut buffer = RequestBuffer::new().unwrap();
        let req = buffer
            .request("PUT", &url)
            .unwrap()
            .headers()
            .unwrap()
            .expect_continue()
            .body(b"abc")
            .unwrap();
        assert!(req.expects_continue());
        assert!(sent(&mut buffer, &req)
            .ends_with("\r\nexpect: 100-continue\r\ncontent-length: 3\r\n\r\nabc"));

        // No content, no expectation (RFC 9110 section 10.1.1).
        let empty = buffer
            .request("POST", &url)
            .unwrap()
            .headers()
            .unwrap()
            .expect_continue()
            .body(b"")
            .unwrap();
        assert!(!empty.expects_continue());
        assert!(!sent(&mut buffer, &empty).contains("expect"));
        let none = buffer
            .request("POST", &url)
            .unwrap()
            .headers()
            .unwrap()
            .expect_continue()
            .finish()
            .unwrap();
        assert!(!none.expects_continue());
        assert!(!sent(&mut buffer, &none).contains("expect"));
    }

    #[test]
    fn decompress_offers_the_codings_unless_the_caller_does() {
        let url = url();
        let mut buffer = RequestBuffer::new().unwrap();
        let plain = buffer
            .request("GET", &url)
            .unwrap()
            .headers()
            .unwrap()
            .finish()
            .unwrap();
        assert!(!plain.decompresses());
        assert!(!sent(&mut buffer, &plain).contains("accept-encoding"));

        let offered = buffer
            .request("GET", &url)
            .unwrap()
            .headers()
            .unwrap()
            .decompress()
            .finish()
            .unwrap();
        assert!(offered.decompresses());
        assert!(sent(&mut buffer, &offered)
            .ends_with("\r\naccept-encoding: gzip, deflate, br, zstd\r\n\r\n"));

        let own = buffer
            .request("POST", &url)
            .unwrap()
            .headers()
            .unwrap()
            .decompress()
            .header("Accept-Encoding", "br")
            .unwrap()
            .body(b"x")
            .unwrap();
        assert!(own.decompresses());
        let head = sent(&mut buffer, &own);
        assert!(head.contains("\r\nAccept-Encoding: br\r\n"), "{head}");
        assert!(!head.contains("gzip"), "{head}");
    }

    #[test]
    fn misuse_and_limits_are_typed() {
        let url = url();
        let mut buffer =
            RequestBuffer::with_config(RingConfig::with_capacity(4096).max_capacity(4096), 64)
                .unwrap();
        let stale = buffer
            .request("GET", &url)
            .unwrap()
            .headers()
            .unwrap()
            .finish()
            .unwrap();
        let fresh = buffer
            .request("GET", &url)
            .unwrap()
            .headers()
            .unwrap()
            .finish()
            .unwrap();
        assert!(matches!(buffer.bytes(&stale), Err(Error::StaleRequest)));
        assert!(buffer.bytes(&fresh).is_ok());
        let mut other = RequestBuffer::new().unwrap();
        assert!(matches!(other.bytes(&fresh), Err(Error::StaleRequest)));

        let big = buffer
            .request("GET", &url)
            .unwrap()
            .headers()
            .unwrap()
            .header("x", "y".repeat(64));
        assert!(matches!(big, Err(Error::RequestHeadTooLarge { limit: 64 })));
        let injected = buffer
            .request("GET", &url)
            .unwrap()
            .headers()
            .unwrap()
            .header("x", "a\r\nb: c");
        assert!(matches!(
            injected,
            Err(Error::Encode(EncodeError::InvalidHeaderValue))
        ));
        let managed = buffer
            .request("GET", &url)
            .unwrap()
            .headers()
            .unwrap()
            .header("Host", "h");
        assert!(matches!(managed, Err(Error::ManagedHeader("host"))));
        let virtual_host = buffer
            .request("GET", &url)
            .unwrap()
            .headers_with_host("other.example")
            .unwrap()
            .finish()
            .unwrap();
        assert_eq!(
            sent(&mut buffer, &virtual_host),
            "GET /api/v1?fixed=1 HTTP/1.1\r\nhost: other.example\r\n\r\n"
        );
        let injected_host = buffer
            .request("GET", &url)
            .unwrap()
            .headers_with_host("a\r\nb: c");
        assert!(matches!(
            injected_host,
            Err(Error::Encode(EncodeError::InvalidHeaderValue))
        ));
        let too_big = buffer
            .request("PUT", &url)
            .unwrap()
            .headers()
            .unwrap()
            .body_fixed(5000, |_| {});
        assert!(matches!(
            too_big,
            Err(Error::BodyExceedsSendRing { len: 5000, .. })
        ));
        let overflow = buffer
            .request("PUT", &url)
            .unwrap()
            .headers()
            .unwrap()
            .body_with(|w| w.write_all(&[0; 5000]));
        assert!(matches!(overflow, Err(Error::BodyExceedsSendRing { .. })));
        assert!(matches!(buffer.reserve(1 << 20), Err(Error::Ring(_))));

        assert!(matches!(
            buffer.request("GE T", &url),
            Err(Error::Encode(EncodeError::InvalidMethod))
        ));
    }
}
