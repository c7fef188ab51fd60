//! Responses: status, header fields and a body.

use std::borrow::Cow;
use std::fmt;
use std::fs::File;
use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use bytes::Bytes;
use futures_core::{ready, Stream};
use futures_util::StreamExt as _;
use ringwire_http1::encode::FieldBlock;
use smallvec::SmallVec;
use tokio::sync::mpsc;

use crate::upgrade::{OnUpgrade, UpgradeFuture, Upgraded};
use crate::Protocol;

/// A response body.
#[derive(Default)]
pub enum Body {
    /// No body (`content-length: 0`).
    #[default]
    Empty,
    /// Bytes that live for the whole program, such as `include_bytes!`.
    Static(&'static [u8]),
    /// Shared, reference-counted bytes.
    Bytes(Bytes),
    /// A range of an open file, sent by the connection with `sendfile`
    /// (the bytes never pass through user space).
    File(FileBody),
    /// Bytes produced while the response is sent, of a length not known in
    /// advance: sent chunked (to HTTP/1.0 clients, delimited by the close),
    /// and possibly ended by trailer fields ([`BodyFrame::Trailers`]).
    Stream(BodyStream),
}

/// A piece of a streamed body: data, or the trailer fields that end it (gRPC's
/// `grpc-status`, a checksum known once the body is out). Trailers go out as HTTP/2's
/// last `HEADERS` frame, or after HTTP/1.1's last chunk; HTTP/1.0 has none, and they are
/// dropped there.
#[derive(Debug, Clone)]
pub enum BodyFrame {
    /// Body bytes.
    Data(Bytes),
    /// Trailer fields: the body ends with them.
    Trailers(FieldBlock),
}

impl Body {
    /// A body sent chunked as `stream` yields it; an error from the stream
    /// ends the connection without the last chunk, so the client sees the
    /// body is cut short.
    pub fn stream<S>(stream: S) -> Body
    where
        S: Stream<Item = io::Result<Bytes>> + Send + 'static,
    {
        Body::frames(stream.map(|data| data.map(BodyFrame::Data)))
    }

    /// A streamed body as [`stream`](Self::stream), whose stream may end it with trailer
    /// fields (anything after those is not read).
    pub fn frames<S>(frames: S) -> Body
    where
        S: Stream<Item = io::Result<BodyFrame>> + Send + 'static,
    {
        Body::Stream(BodyStream::new(Source::Boxed(Box::pin(frames))))
    }

    /// A streamed body fed through a channel holding up to `buffer`
    /// chunks: the handler returns the body and a task sends into it. The
    /// body ends when the sender is dropped, or with [`BodySender::trailers`].
    pub fn channel(buffer: usize) -> (BodySender, Body) {
        let (tx, rx) = mpsc::channel(buffer.max(1));
        (
            BodySender(tx),
            Body::Stream(BodyStream::new(Source::Channel(rx))),
        )
    }

    /// The body's bytes in memory; empty for [`Body::File`] and
    /// [`Body::Stream`], whose bytes are not.
    pub fn as_slice(&self) -> &[u8] {
        match self {
            Body::Empty | Body::File(_) | Body::Stream(_) => &[],
            Body::Static(bytes) => bytes,
            Body::Bytes(bytes) => bytes,
        }
    }

    /// Length in bytes (for [`Body::File`], of its range); `None` for a
    /// [`Body::Stream`].
    pub fn len(&self) -> Option<usize> {
        Some(match self {
            Body::Stream(_) => return None,
            // A file range larger than the address space: only on 32-bit
            // targets, where such a body is refused when it is encoded.
            Body::File(file) => usize::try_from(file.len()).unwrap_or(usize::MAX),
            _ => self.as_slice().len(),
        })
    }

    /// Whether the body is known to have no bytes.
    pub fn is_empty(&self) -> bool {
        self.len() == Some(0)
    }
}

impl fmt::Debug for Body {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kind = match self {
            Body::Empty => "Empty",
            Body::Static(_) => "Static",
            Body::Bytes(_) => "Bytes",
            Body::File(_) => "File",
            Body::Stream(_) => return f.write_str("Body::Stream"),
        };
        write!(f, "Body::{kind}({} bytes)", self.len().unwrap_or_default())
    }
}

impl From<FileBody> for Body {
    fn from(file: FileBody) -> Self {
        Body::File(file)
    }
}

/// `len` bytes of an open file from `offset`: a [`Body::File`].
///
/// The file is shared (`Arc`), so a cache can hand the same descriptor to
/// many responses; it is closed when the last of them is dropped. The
/// length is fixed when the response is made: a file that shrinks while it
/// is being sent ends the connection (its `content-length` cannot be kept).
#[derive(Debug, Clone)]
pub struct FileBody {
    file: Arc<File>,
    offset: u64,
    len: u64,
}

impl FileBody {
    /// `len` bytes of `file` from `offset`.
    pub fn new(file: Arc<File>, offset: u64, len: u64) -> Self {
        FileBody { file, offset, len }
    }

    /// The open file.
    pub fn file(&self) -> &Arc<File> {
        &self.file
    }

    /// Where the range starts.
    pub fn offset(&self) -> u64 {
        self.offset
    }

    /// The range's length in bytes.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// Whether the range is empty.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

/// The same open file (not merely equal contents) and range.
impl PartialEq for FileBody {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.file, &other.file) && self.offset == other.offset && self.len == other.len
    }
}

impl Eq for FileBody {}

impl From<&'static [u8]> for Body {
    fn from(bytes: &'static [u8]) -> Self {
        Body::Static(bytes)
    }
}

impl From<&'static str> for Body {
    fn from(text: &'static str) -> Self {
        Body::Static(text.as_bytes())
    }
}

impl From<Bytes> for Body {
    fn from(bytes: Bytes) -> Self {
        Body::Bytes(bytes)
    }
}

impl From<Vec<u8>> for Body {
    fn from(bytes: Vec<u8>) -> Self {
        Body::Bytes(bytes.into())
    }
}

impl From<String> for Body {
    fn from(text: String) -> Self {
        Body::Bytes(text.into())
    }
}

/// A response: status, header fields and body.
///
/// The server adds `date`, `content-length` and, when it closes the
/// connection, `connection: close`; handlers should not set those.
///
/// ```
/// use ringwire_server::Response;
///
/// let r = Response::new(201).header("location", "/items/7").body("made\n");
/// assert_eq!(r.status(), 201);
/// ```
#[derive(Debug)]
pub struct Response {
    status: u16,
    /// One entry inline (a file's answer is one block; `text` and `html`
    /// set one field); more allocate. A handler's response is moved through
    /// each future between it and the connection, so it is kept within 128
    /// bytes, the most a move copies without a `memcpy` call on x86-64 (a
    /// third inline entry made it 248 bytes, and pipelined static files
    /// took 12% more CPU).
    headers: SmallVec<[Field; 1]>,
    body: Body,
    /// Boxed, for the size above: upgrades are rare.
    upgrade: Option<Box<OnUpgrade>>,
}

/// One field, or a block of fields encoded beforehand.
#[derive(Debug)]
enum Field {
    One(Cow<'static, str>, Bytes),
    Block(FieldBlock),
}

/// A response's header fields, as they are written.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Fields<'r> {
    One(&'r str, &'r [u8]),
    Block(&'r FieldBlock),
}

impl Response {
    /// An empty response with `status`.
    pub fn new(status: u16) -> Self {
        Response {
            status,
            headers: SmallVec::new(),
            body: Body::Empty,
            upgrade: None,
        }
    }

    /// `101 Switching Protocols` to `protocol` (the `upgrade` field; add
    /// the protocol's own fields with [`header`](Self::header)). Once the
    /// answer is sent, `on_upgrade` gets the connection ([`Upgraded`]) and
    /// runs the new protocol until its future ends, when the connection
    /// closes. Only honoured for HTTP/1.1 requests; to an HTTP/1.0 one the
    /// server answers `500` instead, as the handler should not have tried.
    pub fn upgrade<F>(protocol: &'static str, on_upgrade: F) -> Self
    where
        F: for<'s> FnOnce(Upgraded<'s>) -> UpgradeFuture<'s> + Send + 'static,
    {
        let mut response = Response::new(101)
            .header("upgrade", protocol)
            .header("connection", "upgrade");
        response.upgrade = Some(Box::new(OnUpgrade(Box::new(on_upgrade))));
        response
    }

    /// `200`, `text/plain; charset=utf-8`.
    pub fn text(body: impl Into<Body>) -> Self {
        Response::new(200)
            .header("content-type", "text/plain; charset=utf-8")
            .body(body)
    }

    /// `200`, `application/json`: `value` as JSON. One that serde cannot write as JSON (a
    /// map whose keys are not strings, a `Serialize` that failed) is a `500`, logged.
    #[cfg(feature = "json")]
    pub fn json<T: serde::Serialize + ?Sized>(value: &T) -> Self {
        match serde_json::to_vec(value) {
            Ok(body) => Response::new(200)
                .header("content-type", "application/json")
                .body(body),
            Err(e) => {
                log::error!("a handler's answer cannot be written as JSON: {e}");
                Response::new(500)
            }
        }
    }

    /// `200`, `text/html; charset=utf-8`.
    pub fn html(body: impl Into<Body>) -> Self {
        Response::new(200)
            .header("content-type", "text/html; charset=utf-8")
            .body(body)
    }

    /// A redirect to `location` (a path or a URL): `status` is `301` or `308` for a move for
    /// good, `302` or `307` for now (`307` and `308` keep the request's method and body),
    /// `303` to answer a `POST` with a page to `GET`. Another status is a `500`, logged.
    pub fn redirect(status: u16, location: &str) -> Self {
        if !matches!(status, 301..=303 | 307 | 308) {
            log::error!("a handler's redirect has status {status}, not 301-303, 307 or 308");
            return Response::new(500);
        }
        Response::new(status).header("location", location.to_owned())
    }

    /// Sets the status.
    #[must_use]
    pub fn status_code(mut self, status: u16) -> Self {
        self.status = status;
        self
    }

    /// Adds a header field. Names and values are validated when the
    /// response is encoded; an invalid one turns the response into a `500`.
    #[must_use]
    pub fn header(mut self, name: impl Into<Cow<'static, str>>, value: impl Into<Bytes>) -> Self {
        self.headers.push(Field::One(name.into(), value.into()));
        self
    }

    /// Adds a `set-cookie` field for `cookie`. One that cannot be set as it is (see
    /// [`CookieError`](crate::cookie::CookieError); check it first with
    /// [`SetCookie::to_field`](crate::cookie::SetCookie::to_field) when its parts come from
    /// a request) turns the response into a `500`, logged, as an invalid field does.
    #[must_use]
    pub fn cookie(self, cookie: &crate::cookie::SetCookie<'_>) -> Self {
        match cookie.to_field() {
            Ok(field) => self.header("set-cookie", field),
            Err(e) => {
                log::error!("a handler's cookie cannot be set: {e}");
                Response::new(500)
            }
        }
    }

    /// Adds fields encoded and checked once ([`FieldBlock`]), for answers
    /// sent many times: they are written with one copy.
    #[must_use]
    pub fn fields(mut self, block: FieldBlock) -> Self {
        self.headers.push(Field::Block(block));
        self
    }

    /// Sets the body.
    #[must_use]
    pub fn body(mut self, body: impl Into<Body>) -> Self {
        self.body = body.into();
        self
    }

    /// The status code.
    pub fn status(&self) -> u16 {
        self.status
    }

    /// The header fields set by the handler.
    pub fn headers(&self) -> impl Iterator<Item = (&str, &[u8])> {
        self.headers.iter().flat_map(|field| {
            let (one, block) = match field {
                Field::One(n, v) => (Some((n.as_ref(), v.as_ref())), None),
                Field::Block(block) => (None, Some(block.iter())),
            };
            one.into_iter().chain(block.into_iter().flatten())
        })
    }

    /// The fields as the connection writes them: blocks whole.
    pub(crate) fn fields_to_write(&self) -> impl Iterator<Item = Fields<'_>> {
        self.headers.iter().map(|field| match field {
            Field::One(n, v) => Fields::One(n, v),
            Field::Block(block) => Fields::Block(block),
        })
    }

    /// The first value of the field `name` (ASCII case-insensitive).
    pub fn header_value(&self, name: &str) -> Option<&[u8]> {
        self.headers()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v)
    }

    /// The body.
    pub fn body_ref(&self) -> &Body {
        &self.body
    }

    /// Takes the body out, leaving [`Body::Empty`] (middleware that
    /// transforms bodies).
    pub fn take_body(&mut self) -> Body {
        std::mem::take(&mut self.body)
    }

    /// The upgrade callback, if this is a `101` made by
    /// [`upgrade`](Self::upgrade).
    pub(crate) fn take_upgrade(&mut self) -> Option<OnUpgrade> {
        self.upgrade.take().map(|b| *b)
    }

    /// The status the connection answers with, by the protocol's rules on upgrades, for a
    /// request over `protocol` (an extended `CONNECT` if `extended_connect`): an upgrade is
    /// `101` over HTTP/1.1 and `200` on an extended `CONNECT` (RFC 8441), and `500` where
    /// the request cannot take one (HTTP/1.0, HTTP/2's other requests, or not a `101`);
    /// a success that opens no tunnel for an extended `CONNECT` would be taken for one,
    /// so it is `501` (the resource does not speak the protocol asked for).
    pub(crate) fn wire_status(&self, protocol: Protocol, extended_connect: bool) -> u16 {
        let upgrade = self.upgrade.is_some();
        match protocol {
            Protocol::Http2 if extended_connect => match self.status {
                _ if upgrade => 200,
                200..=299 => 501,
                status => status,
            },
            Protocol::Http11 if upgrade && self.status != 101 => 500,
            Protocol::Http10 | Protocol::Http2 if upgrade => 500,
            _ => self.status,
        }
    }

    /// Removes every header field `name` (ASCII case-insensitive).
    pub fn remove_header(&mut self, name: &str) {
        // A block holding `name` is taken apart first (rare: middleware
        // dropping an `etag`, say).
        let holding = self
            .headers
            .iter()
            .enumerate()
            .find_map(|(at, field)| match field {
                Field::Block(b) if b.iter().any(|(n, _)| n.eq_ignore_ascii_case(name)) => {
                    Some((at, b.clone()))
                }
                _ => None,
            });
        if let Some((at, block)) = holding {
            self.headers.remove(at);
            let parts = block
                .iter()
                .map(|(n, v)| Field::One(Cow::Owned(n.to_owned()), Bytes::copy_from_slice(v)));
            self.headers.insert_many(at, parts);
            return self.remove_header(name);
        }
        self.headers
            .retain(|field| !matches!(field, Field::One(n, _) if n.eq_ignore_ascii_case(name)));
    }
}

/// The chunks of a [`Body::Stream`]; once they end, its [`trailers`](Self::trailers).
pub struct BodyStream {
    source: Source,
    /// Set when the source ended with them.
    trailers: Option<FieldBlock>,
}

enum Source {
    Channel(mpsc::Receiver<io::Result<BodyFrame>>),
    Boxed(Pin<Box<dyn Stream<Item = io::Result<BodyFrame>> + Send>>),
    /// Trailers came: nothing more is read.
    Ended,
}

impl BodyStream {
    fn new(source: Source) -> Self {
        BodyStream {
            source,
            trailers: None,
        }
    }

    /// The trailer fields the body ended with, once the stream has ended (taken: a second
    /// call says `None`).
    pub fn trailers(&mut self) -> Option<FieldBlock> {
        self.trailers.take()
    }
}

impl Stream for BodyStream {
    type Item = io::Result<Bytes>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let frame = match &mut self.source {
            Source::Channel(rx) => ready!(rx.poll_recv(cx)),
            Source::Boxed(stream) => ready!(stream.as_mut().poll_next(cx)),
            Source::Ended => None,
        };
        Poll::Ready(match frame {
            Some(Ok(BodyFrame::Data(data))) => Some(Ok(data)),
            Some(Ok(BodyFrame::Trailers(fields))) => {
                self.trailers = Some(fields);
                self.source = Source::Ended;
                None
            }
            Some(Err(e)) => Some(Err(e)),
            None => None,
        })
    }
}

impl fmt::Debug for BodyStream {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("BodyStream")
    }
}

/// Feeds a body made by [`Body::channel`].
#[derive(Debug, Clone)]
pub struct BodySender(mpsc::Sender<io::Result<BodyFrame>>);

/// The response a [`BodySender`] fed is gone (the client left).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BodyClosed;

impl fmt::Display for BodyClosed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("the response body's connection is gone")
    }
}

impl std::error::Error for BodyClosed {}

impl BodySender {
    /// Sends a chunk, waiting while the channel is full (backpressure from
    /// the client).
    ///
    /// # Errors
    ///
    /// The connection is gone: stop producing.
    pub async fn send(&self, chunk: impl Into<Bytes>) -> Result<(), BodyClosed> {
        let frame = BodyFrame::Data(chunk.into());
        self.0.send(Ok(frame)).await.map_err(|_| BodyClosed)
    }

    /// Ends the body with trailer fields.
    ///
    /// # Errors
    ///
    /// The connection is gone.
    pub async fn trailers(self, fields: FieldBlock) -> Result<(), BodyClosed> {
        let frame = BodyFrame::Trailers(fields);
        self.0.send(Ok(frame)).await.map_err(|_| BodyClosed)
    }

    /// Waits until the connection is gone: the client hung up (noticed as soon as it does
    /// while the body waits for its next chunk) or the answer ended otherwise. For a
    /// producer that waits on something else between chunks (a channel, a timer), to stop
    /// then rather than at its next send.
    pub async fn closed(&self) {
        self.0.closed().await;
    }

    /// Ends the body as failed: the connection closes without the last
    /// chunk, so the client knows the body is incomplete.
    pub async fn fail(self, error: io::Error) {
        let _ = self.0.send(Err(error)).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn upgrades_and_extended_connects_answer_as_their_protocols_say() {
        let upgrade = || Response::upgrade("x", |_: Upgraded<'_>| Box::pin(async {}));
        let not_101 = || upgrade().status_code(200);
        let cases = [
            (upgrade(), Protocol::Http11, false, 101),
            (not_101(), Protocol::Http11, false, 500),
            (upgrade(), Protocol::Http10, false, 500),
            (upgrade(), Protocol::Http2, false, 500),
            (upgrade(), Protocol::Http2, true, 200),
            (Response::new(204), Protocol::Http2, true, 501),
            (Response::new(404), Protocol::Http2, true, 404),
            (Response::new(204), Protocol::Http2, false, 204),
            (Response::new(200), Protocol::Http11, false, 200),
        ];
        for (i, (response, protocol, extended_connect, status)) in cases.into_iter().enumerate() {
            assert_eq!(
                response.wire_status(protocol, extended_connect),
                status,
                "case {i}"
            );
        }
    }

    #[test]
    fn field_blocks_read_and_remove_like_single_fields() {
        let block = FieldBlock::new([
            ("content-type", &b"text/html"[..]),
            ("etag", b"\"1\""),
            ("vary", b"accept"),
        ])
        .unwrap();
        let mut response = Response::new(200)
            .header("x-first", "1")
            .fields(block)
            .header("x-last", "2");
        assert_eq!(response.header_value("ETag"), Some(&b"\"1\""[..]));
        response.remove_header("etag");
        let names: Vec<_> = response.headers().map(|(n, _)| n).collect();
        assert_eq!(names, ["x-first", "content-type", "vary", "x-last"]);
        assert_eq!(response.header_value("vary"), Some(&b"accept"[..]));
    }

    #[test]
    fn a_response_moves_with_inline_copies() {
        assert!(size_of::<Response>() <= 128, "{}", size_of::<Response>());
    }
}
