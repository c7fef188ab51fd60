//! The application side: requests in, responses out.

use std::borrow::Cow;
use std::fmt;
use std::fs::File;
use std::future::Future;
use std::ops::Deref;
use std::sync::Arc;

use bytes::Bytes;

/// The application: answers each request with a response.
///
/// One handler serves every connection, concurrently, so it is shared
/// (`Sync`) and its futures may move between worker threads (`Send`).
pub trait Handler: Send + Sync + 'static {
    /// Answers `request`. The request borrows the connection's receive ring,
    /// so it is valid only until the returned future completes.
    fn call<'a>(&'a self, request: &'a Request<'a>) -> impl Future<Output = Response> + Send + 'a;
}

/// A request as a handler sees it: the head, parsed in place in the receive
/// ring, and the whole body.
///
/// Derefs to [`ringwire_http1::Request`] for the method, target, version and
/// headers. Note that [`Request::body`] here is the body's bytes, while
/// `request.head().body()` is how it was framed.
#[derive(Debug, Clone, Copy)]
pub struct Request<'a> {
    head: ringwire_http1::Request<'a>,
    body: &'a [u8],
}

impl<'a> Request<'a> {
    /// A request from a parsed head and its buffered body (for tests and
    /// other drivers).
    pub fn new(head: ringwire_http1::Request<'a>, body: &'a [u8]) -> Self {
        Request { head, body }
    }

    /// The parsed head (method, target, headers), zero-copy.
    pub fn head(&self) -> &ringwire_http1::Request<'a> {
        &self.head
    }

    /// The whole request body, dechunked; empty when there is none.
    ///
    /// A `Content-Length` body is a slice of the receive ring; a chunked one
    /// was decoded into a buffer the connection reuses.
    pub fn body(&self) -> &'a [u8] {
        self.body
    }
}

impl<'a> Deref for Request<'a> {
    type Target = ringwire_http1::Request<'a>;

    fn deref(&self) -> &Self::Target {
        &self.head
    }
}

/// A response body.
#[derive(Clone, Default, PartialEq, Eq)]
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
}

impl Body {
    /// The body's bytes in memory; empty for [`Body::File`], whose bytes
    /// stay in the file.
    pub fn as_slice(&self) -> &[u8] {
        match self {
            Body::Empty | Body::File(_) => &[],
            Body::Static(bytes) => bytes,
            Body::Bytes(bytes) => bytes,
        }
    }

    /// Length in bytes (for [`Body::File`], of its range).
    pub fn len(&self) -> usize {
        match self {
            // A file range larger than the address space: only on 32-bit
            // targets, where such a body is refused when it is encoded.
            Body::File(file) => usize::try_from(file.len()).unwrap_or(usize::MAX),
            _ => self.as_slice().len(),
        }
    }

    /// Whether the body has no bytes.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl fmt::Debug for Body {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kind = match self {
            Body::Empty => "Empty",
            Body::Static(_) => "Static",
            Body::Bytes(_) => "Bytes",
            Body::File(_) => "File",
        };
        write!(f, "Body::{kind}({} bytes)", self.len())
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
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Response {
    status: u16,
    headers: Vec<(Cow<'static, str>, Bytes)>,
    body: Body,
}

impl Response {
    /// An empty response with `status`.
    pub fn new(status: u16) -> Self {
        Response {
            status,
            headers: Vec::new(),
            body: Body::Empty,
        }
    }

    /// `200`, `text/plain; charset=utf-8`.
    pub fn text(body: impl Into<Body>) -> Self {
        Response::new(200)
            .header("content-type", "text/plain; charset=utf-8")
            .body(body)
    }

    /// `200`, `text/html; charset=utf-8`.
    pub fn html(body: impl Into<Body>) -> Self {
        Response::new(200)
            .header("content-type", "text/html; charset=utf-8")
            .body(body)
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
        self.headers.push((name.into(), value.into()));
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
        self.headers.iter().map(|(n, v)| (n.as_ref(), v.as_ref()))
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
}
