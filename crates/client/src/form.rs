//! `multipart/form-data` bodies (RFC 7578), as browsers and `curl -F` send them: text fields
//! and files, each part borrowed from the caller until it is written (into the send ring by
//! [`HeaderBuilder::form`](crate::HeaderBuilder::form), or into any writer), or read as the
//! body is sent ([`HeaderBuilder::form_stream`](crate::HeaderBuilder::form_stream)), files
//! of any size included.

use std::collections::hash_map::RandomState;
use std::fs::File;
use std::hash::{BuildHasher, Hasher};
use std::io::{self, Read, Write};
use std::os::unix::fs::FileExt as _;
use std::pin::Pin;
use std::task::{Context, Poll};

/// A form's fields and files, in order.
#[derive(Debug, Clone, Default)]
pub struct Form<'a> {
    parts: Vec<Part<'a>>,
}

/// One field or file.
#[derive(Debug, Clone)]
struct Part<'a> {
    name: &'a str,
    /// A file's name, which makes the part a file.
    filename: Option<&'a str>,
    content_type: Option<&'a str>,
    /// Bytes in hand, or the first `len` bytes of a file, read as they are sent.
    data: Segment<'a>,
}

/// Why a form cannot be sent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FormError {
    /// A part's content type has a control character (CR, LF, ...), which would end its line.
    InvalidContentType(String),
}

impl std::fmt::Display for FormError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FormError::InvalidContentType(t) => {
                write!(
                    f,
                    "a form part's content type {t:?} has a control character"
                )
            }
        }
    }
}

impl std::error::Error for FormError {}

impl<'a> Form<'a> {
    /// An empty form.
    #[must_use]
    pub fn new() -> Self {
        Form::default()
    }

    /// Adds a text field.
    #[must_use]
    pub fn text(self, name: &'a str, value: &'a str) -> Self {
        self.field(name, value.as_bytes())
    }

    /// Adds a field of any bytes (not a file: no file name, no type).
    #[must_use]
    pub fn field(mut self, name: &'a str, value: &'a [u8]) -> Self {
        self.parts.push(Part {
            name,
            filename: None,
            content_type: None,
            data: Segment::Bytes(value),
        });
        self
    }

    /// Adds a file: its field name, the file name the server sees, its type
    /// (`application/octet-stream` when `None`, as curl sends), its bytes.
    #[must_use]
    pub fn file(
        mut self,
        name: &'a str,
        filename: &'a str,
        content_type: Option<&'a str>,
        data: &'a [u8],
    ) -> Self {
        self.parts.push(Part {
            name,
            filename: Some(filename),
            content_type: Some(content_type.unwrap_or("application/octet-stream")),
            data: Segment::Bytes(data),
        });
        self
    }

    /// Adds a file read from `file` as the body is sent: all of it, from its start (by
    /// `pread`: its offset is left alone), as long as it is now. A file that shrinks before
    /// it is sent fails the request ([`Error::BodySource`](crate::Error::BodySource)).
    ///
    /// # Errors
    ///
    /// The file's length cannot be read.
    pub fn file_from(
        mut self,
        name: &'a str,
        filename: &'a str,
        content_type: Option<&'a str>,
        file: &'a File,
    ) -> io::Result<Self> {
        let len = file.metadata()?.len();
        self.parts.push(Part {
            name,
            filename: Some(filename),
            content_type: Some(content_type.unwrap_or("application/octet-stream")),
            data: Segment::File { file, len },
        });
        Ok(self)
    }

    /// A boundary that occurs in no part, drawn at random (128 bits from the process's
    /// random hasher keys), for [`write`](Self::write) and the `content-type` it goes in.
    /// Files added by [`file_from`](Self::file_from) are not read to check: 128 random
    /// bits are what browsers and curl trust too.
    ///
    /// # Errors
    ///
    /// [`FormError`]: a part that cannot be sent.
    pub fn boundary(&self) -> Result<String, FormError> {
        for part in &self.parts {
            if let Some(t) = part
                .content_type
                .filter(|t| t.bytes().any(|b| b.is_ascii_control()))
            {
                return Err(FormError::InvalidContentType(t.to_owned()));
            }
        }
        loop {
            let word = || {
                let mut hasher = RandomState::new().build_hasher();
                hasher.write_u64(0);
                hasher.finish()
            };
            let boundary = format!("ringwire-{:016x}{:016x}", word(), word());
            let marker = format!("--{boundary}");
            let finder = memchr::memmem::Finder::new(marker.as_bytes());
            let absent = |p: &Part<'_>| match p.data {
                Segment::Bytes(data) => finder.find(data).is_none(),
                Segment::Owned(_) | Segment::File { .. } => true,
            };
            if self.parts.iter().all(absent) {
                return Ok(boundary);
            }
        }
    }

    /// The `content-type` field for a body written with `boundary`.
    #[must_use]
    pub fn content_type(boundary: &str) -> String {
        format!("multipart/form-data; boundary={boundary}")
    }

    /// Writes the body with `boundary` (from [`boundary`](Self::boundary)).
    ///
    /// # Errors
    ///
    /// What `out` returns; reading a file part failed, or it ended short.
    pub fn write(&self, boundary: &str, out: &mut impl Write) -> io::Result<()> {
        for segment in self.segments(boundary) {
            match segment {
                Segment::Owned(bytes) => out.write_all(&bytes)?,
                Segment::Bytes(bytes) => out.write_all(bytes)?,
                file @ Segment::File { .. } => {
                    let mut file = FormReader {
                        segments: vec![file],
                        at: 0,
                        offset: 0,
                    };
                    io::copy(&mut file, out)?;
                }
            }
        }
        Ok(())
    }

    /// The body's length in bytes with `boundary`.
    #[must_use]
    pub fn len(&self, boundary: &str) -> u64 {
        self.reader(boundary).total_len()
    }

    /// The body with `boundary`, read as it is sent: as [`Read`], or as tokio's `AsyncRead`
    /// (whose file parts are read by `pread` on the calling thread, as the server reads a
    /// file it sends over TLS: quick from the page cache, blocking from a slow disk).
    #[must_use]
    pub fn reader(&self, boundary: &str) -> FormReader<'a> {
        FormReader {
            segments: self.segments(boundary),
            at: 0,
            offset: 0,
        }
    }

    /// The body as it goes out: each part's head, its content and CRLF, then the closing
    /// delimiter.
    fn segments(&self, boundary: &str) -> Vec<Segment<'a>> {
        let mut segments = Vec::with_capacity(self.parts.len() * 3 + 1);
        for part in &self.parts {
            let mut head = format!("--{boundary}\r\ncontent-disposition: form-data; name=\"");
            quoted(part.name, &mut head);
            head.push('"');
            if let Some(filename) = part.filename {
                head.push_str("; filename=\"");
                quoted(filename, &mut head);
                head.push('"');
            }
            head.push_str("\r\n");
            if let Some(content_type) = part.content_type {
                head.push_str("content-type: ");
                head.push_str(content_type);
                head.push_str("\r\n");
            }
            head.push_str("\r\n");
            segments.push(Segment::Owned(head.into_bytes()));
            segments.push(part.data.clone());
            segments.push(Segment::Bytes(b"\r\n"));
        }
        segments.push(Segment::Owned(format!("--{boundary}--\r\n").into_bytes()));
        segments
    }
}

/// A piece of a form's body.
#[derive(Debug, Clone)]
enum Segment<'a> {
    Owned(Vec<u8>),
    Bytes(&'a [u8]),
    File { file: &'a File, len: u64 },
}

impl Segment<'_> {
    fn len(&self) -> u64 {
        match self {
            Segment::Owned(bytes) => bytes.len() as u64,
            Segment::Bytes(bytes) => bytes.len() as u64,
            Segment::File { len, .. } => *len,
        }
    }
}

/// A form's body as it is sent ([`Form::reader`]): each read fills as much of the buffer
/// as the parts give, across parts.
#[derive(Debug)]
pub struct FormReader<'a> {
    segments: Vec<Segment<'a>>,
    /// The segment being read, and how far into it.
    at: usize,
    offset: u64,
}

impl FormReader<'_> {
    /// The whole body's length in bytes (what is read and what is not).
    pub(crate) fn total_len(&self) -> u64 {
        self.segments.iter().map(Segment::len).sum()
    }
}

impl Read for FormReader<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let mut filled = 0;
        while filled < buf.len() {
            let Some(segment) = self.segments.get(self.at) else {
                break;
            };
            let left = segment.len() - self.offset;
            if left == 0 {
                self.at += 1;
                self.offset = 0;
                continue;
            }
            let room = &mut buf[filled..];
            let want = room.len().min(usize::try_from(left).unwrap_or(usize::MAX));
            let start = self.offset as usize;
            let n = match segment {
                Segment::Owned(bytes) => copy(&bytes[start..start + want], room),
                Segment::Bytes(bytes) => copy(&bytes[start..start + want], room),
                Segment::File { file, .. } => match file.read_at(&mut room[..want], self.offset) {
                    Ok(0) => {
                        return Err(io::Error::new(
                            io::ErrorKind::UnexpectedEof,
                            "a form's file is shorter than when it was added",
                        ))
                    }
                    Ok(n) => n,
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                    // What was read so far goes first; the error comes again.
                    Err(_) if filled > 0 => break,
                    Err(e) => return Err(e),
                },
            };
            self.offset += n as u64;
            filled += n;
        }
        Ok(filled)
    }
}

impl tokio::io::AsyncRead for FormReader<'_> {
    fn poll_read(
        self: Pin<&mut Self>,
        _: &mut Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let n = self.get_mut().read(buf.initialize_unfilled())?;
        buf.advance(n);
        Poll::Ready(Ok(()))
    }
}

/// Copies `from` to the front of `to` (which has room for it).
fn copy(from: &[u8], to: &mut [u8]) -> usize {
    to[..from.len()].copy_from_slice(from);
    from.len()
}

/// A name inside double quotes, as browsers escape it (the HTML standard's form encoding,
/// RFC 7578 section 2): `"` as `%22`, CR as `%0D`, LF as `%0A`.
fn quoted(name: &str, out: &mut String) {
    for c in name.chars() {
        match c {
            '"' => out.push_str("%22"),
            '\r' => out.push_str("%0D"),
            '\n' => out.push_str("%0A"),
            c => out.push(c),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parts_as_rfc_7578_lays_them_out() {
        let form = Form::new()
            .text("q", "ring\"wire")
            .file("up\"load", "a\r\nb.txt", Some("text/plain"), b"hello")
            .file("raw", "r.bin", None, &[0, 1]);
        let mut out = Vec::new();
        form.write("B", &mut out).unwrap();
        assert_eq!(
            out,
            [
                &b"--B\r\ncontent-disposition: form-data; name=\"q\"\r\n\r\nring\"wire\r\n"[..],
                b"--B\r\ncontent-disposition: form-data; name=\"up%22load\"; filename=\"a%0D%0Ab.txt\"\r\ncontent-type: text/plain\r\n\r\nhello\r\n",
                b"--B\r\ncontent-disposition: form-data; name=\"raw\"; filename=\"r.bin\"\r\ncontent-type: application/octet-stream\r\n\r\n\x00\x01\r\n",
                b"--B--\r\n",
            ]
            .concat()
        );
        assert_eq!(Form::content_type("B"), "multipart/form-data; boundary=B");
    }

    #[test]
    fn the_boundary_occurs_in_no_part_and_types_are_checked() {
        let a = Form::new().text("a", "x").boundary().unwrap();
        let b = Form::new().text("a", "x").boundary().unwrap();
        assert_ne!(a, b, "drawn afresh");
        assert!(a.len() <= 70, "RFC 2046's bound");
        let bad = Form::new().file("f", "f", Some("text/plain\r\nx: y"), b"");
        assert!(matches!(
            bad.boundary(),
            Err(FormError::InvalidContentType(_))
        ));
    }
}
