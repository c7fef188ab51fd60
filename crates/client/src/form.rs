//! `multipart/form-data` bodies (RFC 7578), as browsers and `curl -F` send them: text fields
//! and files, each part borrowed from the caller until it is written (into the send ring by
//! [`HeaderBuilder::form`](crate::HeaderBuilder::form), or into any writer).

use std::collections::hash_map::RandomState;
use std::hash::{BuildHasher, Hasher};
use std::io::{self, Write};

/// A form's fields and files, in order.
#[derive(Debug, Clone, Default)]
pub struct Form<'a> {
    parts: Vec<Part<'a>>,
}

/// One field or file.
#[derive(Debug, Clone, Copy)]
struct Part<'a> {
    name: &'a str,
    /// A file's name, which makes the part a file.
    filename: Option<&'a str>,
    content_type: Option<&'a str>,
    data: &'a [u8],
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
            data: value,
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
            data,
        });
        self
    }

    /// A boundary that occurs in no part, drawn at random (128 bits from the process's
    /// random hasher keys), for [`write`](Self::write) and the `content-type` it goes in.
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
            if self.parts.iter().all(|p| finder.find(p.data).is_none()) {
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
    /// What `out` returns.
    pub fn write(&self, boundary: &str, out: &mut impl Write) -> io::Result<()> {
        for part in &self.parts {
            write!(
                out,
                "--{boundary}\r\ncontent-disposition: form-data; name=\""
            )?;
            quoted(part.name, out)?;
            out.write_all(b"\"")?;
            if let Some(filename) = part.filename {
                out.write_all(b"; filename=\"")?;
                quoted(filename, out)?;
                out.write_all(b"\"")?;
            }
            out.write_all(b"\r\n")?;
            if let Some(content_type) = part.content_type {
                write!(out, "content-type: {content_type}\r\n")?;
            }
            out.write_all(b"\r\n")?;
            out.write_all(part.data)?;
            out.write_all(b"\r\n")?;
        }
        write!(out, "--{boundary}--\r\n")
    }
}

/// A name inside double quotes, as browsers escape it (the HTML standard's form encoding,
/// RFC 7578 section 2): `"` as `%22`, CR as `%0D`, LF as `%0A`.
fn quoted(name: &str, out: &mut impl Write) -> io::Result<()> {
    for piece in name.split_inclusive(['"', '\r', '\n']) {
        let (text, escape) = match piece.as_bytes().last() {
            Some(b'"') => (&piece[..piece.len() - 1], "%22"),
            Some(b'\r') => (&piece[..piece.len() - 1], "%0D"),
            Some(b'\n') => (&piece[..piece.len() - 1], "%0A"),
            _ => (piece, ""),
        };
        out.write_all(text.as_bytes())?;
        out.write_all(escape.as_bytes())?;
    }
    Ok(())
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
