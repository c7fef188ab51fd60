//! Serving files: a directory on disk ([`StaticFiles`]) or a fixed set of
//! pages compiled into the program ([`EmbeddedSite`]).
//!
//! [`StaticFiles`] reads each file whole with `tokio::fs::read` into
//! [`Bytes`] per request. Not yet here (later work): `sendfile`, an open-file
//! and metadata cache, `ETag`/`Last-Modified` validators, `Range` requests
//! and compression.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::io;
use std::path::{Path, PathBuf};

use bytes::Bytes;
use ringwire_http1::Method;

use crate::{Handler, Request, Response};

/// Serves the files under a root directory, for GET and HEAD.
///
/// The request path is percent-decoded segment by segment. Segments that
/// are `..`, or contain NUL, `/` (from `%2F`) or `\`, are refused (`403`);
/// a path that resolves outside the root, through a symlink for instance,
/// is refused too. A directory is answered with its `index.html`, else a
/// listing; a directory path without its trailing slash is redirected to it.
#[derive(Debug, Clone)]
pub struct StaticFiles {
    root: PathBuf,
}

impl StaticFiles {
    /// Serves `root`.
    ///
    /// # Errors
    ///
    /// `root` does not exist or is not a directory.
    pub fn new(root: PathBuf) -> io::Result<Self> {
        let root = root.canonicalize()?;
        if !root.is_dir() {
            return Err(io::Error::new(
                io::ErrorKind::NotADirectory,
                "not a directory",
            ));
        }
        Ok(StaticFiles { root })
    }

    /// The canonical root directory.
    pub fn root(&self) -> &Path {
        &self.root
    }

    async fn serve(&self, request: &Request<'_>) -> Response {
        let target = request.target();
        let mut path = self.root.clone();
        for segment in target.segments() {
            let decoded = segment.to_cow();
            match &decoded[..] {
                b"" | b"." => continue,
                b".." => return status(403),
                bytes if bytes.iter().any(|&b| matches!(b, 0 | b'/' | b'\\')) => {
                    return status(403)
                }
                _ => {}
            }
            let Ok(name) = std::str::from_utf8(&decoded) else {
                return status(404);
            };
            path.push(name);
        }
        let Ok(path) = tokio::fs::canonicalize(&path).await else {
            return status(404);
        };
        if !path.starts_with(&self.root) {
            return status(403);
        }
        let Ok(meta) = tokio::fs::metadata(&path).await else {
            return status(404);
        };
        if meta.is_dir() {
            let raw_path = target.path();
            if !raw_path.ends_with(b"/") {
                // One leading slash only: `//host/dir` would redirect off-site.
                let rest = raw_path
                    .iter()
                    .position(|&b| b != b'/')
                    .unwrap_or(raw_path.len());
                let mut location = b"/".to_vec();
                location.extend_from_slice(&raw_path[rest..]);
                location.push(b'/');
                return Response::new(301).header("location", location);
            }
            let index = path.join("index.html");
            if tokio::fs::metadata(&index).await.is_ok_and(|m| m.is_file()) {
                return file(&index).await;
            }
            return listing(&path, &String::from_utf8_lossy(raw_path)).await;
        }
        file(&path).await
    }
}

impl Handler for StaticFiles {
    async fn call(&self, request: &Request<'_>) -> Response {
        if !matches!(request.method(), Method::Get | Method::Head) {
            return status(405).header("allow", "GET, HEAD");
        }
        self.serve(request).await
    }
}

/// A fixed map of paths to pages compiled into the program (for example
/// with `include_bytes!`), for GET and HEAD.
#[derive(Debug, Clone, Default)]
pub struct EmbeddedSite {
    pages: HashMap<&'static str, (&'static str, &'static [u8])>,
}

impl EmbeddedSite {
    /// An empty site: every path is `404`.
    pub fn new() -> Self {
        EmbeddedSite::default()
    }

    /// Adds a page at `path` (starting with `/`).
    #[must_use]
    pub fn page(
        mut self,
        path: &'static str,
        content_type: &'static str,
        body: &'static [u8],
    ) -> Self {
        self.pages.insert(path, (content_type, body));
        self
    }
}

impl Handler for EmbeddedSite {
    fn call<'a>(
        &'a self,
        request: &'a Request<'a>,
    ) -> impl std::future::Future<Output = Response> + Send + 'a {
        let response = if matches!(request.method(), Method::Get | Method::Head) {
            let path = request.target().decoded_path().to_cow();
            match std::str::from_utf8(&path)
                .ok()
                .and_then(|p| self.pages.get(p))
            {
                Some(&(content_type, body)) => Response::new(200)
                    .header("content-type", content_type)
                    .body(body),
                None => status(404),
            }
        } else {
            status(405).header("allow", "GET, HEAD")
        };
        std::future::ready(response)
    }
}

/// A status with a one-line text body naming it.
fn status(code: u16) -> Response {
    let text = match code {
        403 => "403 Forbidden\n",
        404 => "404 Not Found\n",
        405 => "405 Method Not Allowed\n",
        _ => "error\n",
    };
    Response::new(code)
        .header("content-type", "text/plain; charset=utf-8")
        .body(text)
}

async fn file(path: &Path) -> Response {
    match tokio::fs::read(path).await {
        Ok(bytes) => Response::new(200)
            .header("content-type", content_type(path))
            .body(Bytes::from(bytes)),
        Err(e) if e.kind() == io::ErrorKind::PermissionDenied => status(403),
        Err(_) => status(404),
    }
}

async fn listing(dir: &Path, shown: &str) -> Response {
    let Ok(mut entries) = tokio::fs::read_dir(dir).await else {
        return status(404);
    };
    let mut names = Vec::new();
    while let Ok(Some(entry)) = entries.next_entry().await {
        let is_dir = entry.file_type().await.is_ok_and(|t| t.is_dir());
        names.push((entry.file_name().to_string_lossy().into_owned(), is_dir));
    }
    names.sort();
    let title = escape(shown);
    let mut html = format!(
        "<!doctype html>\n<html><head><meta charset=\"utf-8\"><title>Index of {title}</title></head>\n<body><h1>Index of {title}</h1>\n<ul>\n"
    );
    if shown != "/" {
        html.push_str("<li><a href=\"../\">../</a></li>\n");
    }
    for (name, is_dir) in names {
        let slash = if is_dir { "/" } else { "" };
        let _ = writeln!(
            html,
            "<li><a href=\"{}{slash}\">{}{slash}</a></li>",
            percent_encode(&name),
            escape(&name)
        );
    }
    html.push_str("</ul></body></html>\n");
    Response::html(html)
}

/// HTML-escapes text for element content and quoted attributes.
fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// Percent-encodes a file name for use as a relative link.
fn percent_encode(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    for &b in name.as_bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(char::from(b));
        } else {
            let _ = write!(out, "%{b:02X}");
        }
    }
    out
}

/// The media type for a file, by extension.
pub fn content_type(path: &Path) -> &'static str {
    let ext = path
        .extension()
        .and_then(|e| e.to_str())
        .unwrap_or_default()
        .to_ascii_lowercase();
    match ext.as_str() {
        "html" | "htm" => "text/html; charset=utf-8",
        "css" => "text/css; charset=utf-8",
        "js" | "mjs" => "text/javascript; charset=utf-8",
        "json" => "application/json",
        "txt" => "text/plain; charset=utf-8",
        "svg" => "image/svg+xml",
        "png" => "image/png",
        "jpg" | "jpeg" => "image/jpeg",
        "gif" => "image/gif",
        "webp" => "image/webp",
        "ico" => "image/x-icon",
        "wasm" => "application/wasm",
        "pdf" => "application/pdf",
        _ => "application/octet-stream",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn types_and_escaping() {
        assert_eq!(
            content_type(Path::new("a/b.HTML")),
            "text/html; charset=utf-8"
        );
        assert_eq!(content_type(Path::new("x.wasm")), "application/wasm");
        assert_eq!(content_type(Path::new("noext")), "application/octet-stream");
        assert_eq!(
            escape("<a href='x'>&\""),
            "&lt;a href=&#39;x&#39;&gt;&amp;&quot;"
        );
        assert_eq!(percent_encode("a b/%.txt"), "a%20b%2F%25.txt");
    }
}
