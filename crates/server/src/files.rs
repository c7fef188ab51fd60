//! Serving files: a directory on disk ([`StaticFiles`]) or a fixed set of
//! pages compiled into the program ([`EmbeddedSite`]).
//!
//! [`StaticFiles`] answers with a [`Body::File`]: the connection sends the
//! head, then the file's bytes with `sendfile`, never copied through user
//! space. Open files and their metadata are cached for a moment (one second
//! by default, [`StaticFiles::cache`]) under the path as the client sent it,
//! so repeated requests for a path skip `canonicalize`, `open` and `stat`
//! and allocate nothing. Files up to 16 KiB are cached with their bytes and
//! sent from memory in the same `send` as their head: for a small page that
//! saves the `sendfile` call, which costs more than the copy. Responses carry `ETag` (from
//! length and modification time) and `Last-Modified`, and honour `If-Match`,
//! `If-Unmodified-Since`, `If-None-Match`, `If-Modified-Since`, `Range` and `If-Range`
//! (several ranges answered as `multipart/byteranges` parts, up to 16 ranges and 64 KiB;
//! past that, and for overlapping ranges, the whole file). A file's precompressed forms
//! beside it (`app.js.br`, `app.js.zst`, `app.js.gz`) are sent, by `sendfile` as any file,
//! to clients that accept them ([`StaticFiles::precompressed`]).

mod cache;
#[cfg(fuzzing)]
pub mod fuzzing;
mod http_date;

use std::ffi::OsStr;
use std::fmt::Write as _;
use std::io;
use std::os::unix::ffi::OsStrExt as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use foldhash::HashMap;
use ringwire_http1::Method;

use self::cache::{Entry, FileCache};
use crate::middleware::Encoding;
use crate::FileBody;
use crate::{Body, Handler, Request, Response};

/// How long an open file and its metadata are reused by default.
pub const DEFAULT_CACHE_TTL: Duration = Duration::from_secs(1);

/// How many open files are kept by default (each is one descriptor).
pub const DEFAULT_CACHE_ENTRIES: usize = 256;

/// Serves the files under a root directory, for GET and HEAD.
///
/// The request path is percent-decoded segment by segment, and the bytes,
/// UTF-8 or not, name the file (as the listing links them). Segments that
/// are `..`, or contain NUL, `/` (from `%2F`) or `\`, are refused (`403`);
/// a path that resolves outside the root, through a symlink for instance,
/// is refused too. A directory is answered with its `index.html`, else a
/// listing; a directory path without its trailing slash is redirected to it,
/// and a file path with one is not found.
///
/// Dotfiles are hidden by default ([`Dotfiles`]): a path with a segment
/// that starts with `.` (`/.env`, `/.git/config`, `/%2egit/config`) is not
/// found, and listings leave such names out, except for `/.well-known/`.
///
/// A path once resolved to a file is kept, with the open file, for the
/// cache's time to live: a file replaced (or a symlink changed) on disk is
/// seen when the entry expires. Clones share the cache, unless one is
/// given another [`dotfiles`](Self::dotfiles) or
/// [`precompressed`](Self::precompressed) setting.
#[derive(Debug, Clone)]
pub struct StaticFiles {
    root: PathBuf,
    cache: Arc<FileCache>,
    dotfiles: Dotfiles,
    precompressed: bool,
    /// Page navigations to paths that name no file get the root's `index.html`.
    spa: bool,
}

/// The precompressed forms looked for beside a file, by the suffix added to its name.
const SIDECARS: [(Encoding, &str); 3] = [
    (Encoding::Brotli, ".br"),
    (Encoding::Zstd, ".zst"),
    (Encoding::Gzip, ".gz"),
];

/// What [`StaticFiles`] does with names that start with `.` (`.git`,
/// `.env`, `.ssh`): files and directories a project keeps next to what it
/// publishes, often secret.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Dotfiles {
    /// Not found (`404`, which does not tell that they exist) and left out
    /// of listings, at any depth. `/.well-known/` (RFC 8615: ACME
    /// challenges, `security.txt`) is served and listed, though dotfiles
    /// within it are hidden.
    #[default]
    Hide,
    /// Served and listed like any other name.
    Serve,
}

/// The one top-level dot directory published on purpose (RFC 8615).
const WELL_KNOWN: &[u8] = b".well-known";

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
        Ok(StaticFiles {
            root,
            cache: Arc::new(FileCache::new(DEFAULT_CACHE_TTL, DEFAULT_CACHE_ENTRIES)),
            dotfiles: Dotfiles::default(),
            precompressed: true,
            spa: false,
        })
    }

    /// Whether a file's precompressed forms are served (the default): for `X`, the files
    /// `X.br`, `X.zst` and `X.gz` beside it, made beforehand (`brotli -k`, `zstd`, `gzip
    /// -k`) and kept in step with `X` by whoever writes it (a form is sent as it is, never
    /// checked; a `.zst` form's window should stay within RFC 9659's 8 MiB, as `zstd`'s
    /// levels up to 19 do), are sent instead to a client whose `accept-encoding` takes them
    /// (the one it prefers; on a tie brotli, then zstd), with `content-encoding`, their own `ETag` and byte ranges, and `vary:
    /// accept-encoding` on every answer for `X`. By `sendfile` like any file: compression
    /// that costs nothing per request, for files too large for
    /// [`Compress`](crate::middleware::Compress) to compress as it answers. A form that
    /// resolves outside the root, or through a hidden name, is not used.
    #[must_use]
    pub fn precompressed(mut self, precompressed: bool) -> Self {
        if precompressed != self.precompressed {
            // Cached entries carry their forms (or none).
            self.cache = Arc::new(self.cache.emptied());
            self.precompressed = precompressed;
        }
        self
    }

    /// Keeps at most `entries` open files, each reused for `ttl` after it
    /// was opened; a zero for either opens and checks every file on every
    /// request.
    #[must_use]
    pub fn cache(mut self, ttl: Duration, entries: usize) -> Self {
        self.cache = Arc::new(FileCache::new(ttl, entries));
        self
    }

    /// Hides dotfiles ([`Dotfiles::Hide`], the default) or serves them
    /// ([`Dotfiles::Serve`]).
    #[must_use]
    pub fn dotfiles(mut self, dotfiles: Dotfiles) -> Self {
        if dotfiles != self.dotfiles {
            // A cache hit is answered before any path check: a clone that
            // hides dotfiles must not find one its sibling cached.
            self.cache = Arc::new(self.cache.emptied());
            self.dotfiles = dotfiles;
        }
        self
    }

    /// Answers a page navigation (a `GET` or `HEAD` that accepts `text/html`) to a path
    /// that names no file, and whose last segment has no extension, with the root's
    /// `index.html`, `200`: a single-page app whose script routes `/settings/profile` itself
    /// loads at that address, while a missing `app.js` is still `404`.
    #[must_use]
    pub fn single_page_app(mut self, on: bool) -> Self {
        self.spa = on;
        self
    }

    /// The canonical root directory.
    pub fn root(&self) -> &Path {
        &self.root
    }

    async fn serve(&self, request: &Request<'_>) -> Response {
        let target = request.target();
        let raw_path = target.path();
        // Keyed by the path as sent: a hit costs no path building (and no
        // allocation); each spelling of a path is checked once on its miss.
        if let Some(response) = self.cache.with(raw_path, |entry| answer(entry, request)) {
            return response;
        }
        let mut path = self.root.clone();
        // Whether the last segment is empty or `.`: the path names a
        // directory, as `dir/` does (empty segments before it are skipped).
        let mut names_dir = false;
        // Whether no segment has named anything yet: the next is in the root.
        let mut top_level = true;
        for segment in target.segments() {
            let decoded = segment.to_cow();
            names_dir = matches!(&decoded[..], b"" | b".");
            match &decoded[..] {
                b"" | b"." => continue,
                b".." => return status(403),
                bytes if bytes.iter().any(|&b| matches!(b, 0 | b'/' | b'\\')) => {
                    return status(403)
                }
                // Decoded, so `%2e` is a dot too. Not found: a `403` would
                // tell that `.git` is there.
                name if self.hides(name, top_level) => return status(404),
                _ => {}
            }
            // Bytes, UTF-8 or not, as the listing links them.
            path.push(OsStr::from_bytes(&decoded));
            top_level = false;
        }
        let Ok(resolved) = tokio::fs::canonicalize(&path).await else {
            return status(404);
        };
        if !resolved.starts_with(&self.root) {
            return status(403);
        }
        if self.hides_resolved(&resolved) {
            return status(404);
        }
        let Ok(meta) = tokio::fs::metadata(&resolved).await else {
            return status(404);
        };
        let opened = if meta.is_dir() {
            if !names_dir {
                // One leading slash only: `//host/dir` would redirect off-site.
                let rest = raw_path
                    .iter()
                    .position(|&b| b != b'/')
                    .unwrap_or(raw_path.len());
                let mut location = b"/".to_vec();
                location.extend_from_slice(&raw_path[rest..]);
                location.push(b'/');
                // The query is part of what was asked for (a search, a
                // cache buster): it goes along.
                if let Some(query) = target.query() {
                    location.push(b'?');
                    location.extend_from_slice(query);
                }
                return Response::new(301).header("location", location);
            }
            let shown = || target.decoded_path().to_string();
            let listed = |name: &[u8]| !self.hides(name, top_level);
            // The index is held to the root like any other file: it is
            // cached under the same key as `dir/index.html`.
            match tokio::fs::canonicalize(resolved.join("index.html")).await {
                Ok(index) if !index.starts_with(&self.root) => return status(403),
                Ok(index) if self.hides_resolved(&index) => return status(404),
                Ok(index) => match self.open(&index).await {
                    Err(e) if e.kind() != io::ErrorKind::PermissionDenied => {
                        return listing(&resolved, &shown(), listed).await;
                    }
                    opened => opened,
                },
                Err(_) => return listing(&resolved, &shown(), listed).await,
            }
        } else if names_dir {
            // `file/` would give the file a second URL, under which its
            // relative links break: not found, as open(2) says (ENOTDIR).
            return status(404);
        } else {
            self.open(&resolved).await
        };
        match opened {
            Ok(entry) => {
                let entry = Arc::new(entry);
                let response = answer(&entry, request);
                self.cache.insert(raw_path.to_vec(), entry);
                response
            }
            Err(e) if e.kind() == io::ErrorKind::PermissionDenied => status(403),
            Err(_) => status(404),
        }
    }

    /// Opens `resolved`, a canonical path within the root, with its precompressed forms
    /// held to the root as it is.
    async fn open(&self, resolved: &Path) -> io::Result<Entry> {
        let mut sidecars = Vec::new();
        for (coding, suffix) in SIDECARS.iter().filter(|_| self.precompressed) {
            let mut name = resolved.as_os_str().to_owned();
            name.push(suffix);
            match tokio::fs::canonicalize(&name).await {
                Ok(path) if path.starts_with(&self.root) && !self.hides_resolved(&path) => {
                    sidecars.push((*coding, path));
                }
                _ => {}
            }
        }
        Entry::open(resolved, &sidecars).await
    }

    /// Whether `name`, a path segment or a directory entry (`top_level`
    /// when in the root), is a dotfile this server hides.
    fn hides(&self, name: &[u8], top_level: bool) -> bool {
        self.dotfiles == Dotfiles::Hide
            && name.first() == Some(&b'.')
            && !(top_level && name == WELL_KNOWN)
    }

    /// Whether `resolved`, a canonical path within the root, passes through
    /// a hidden name: a symlink with a plain name (`public -> .git`) leads
    /// where its name does not say.
    fn hides_resolved(&self, resolved: &Path) -> bool {
        let Ok(within) = resolved.strip_prefix(&self.root) else {
            return false;
        };
        (0..)
            .zip(within.components())
            .any(|(i, name)| self.hides(name.as_os_str().as_bytes(), i == 0))
    }
}

/// The answer to a GET or HEAD of `entry`: `412` when a precondition fails,
/// `304` when the client's copy is current, `206` or `416` for a range, else
/// the whole file.
fn answer(entry: &Entry, request: &Request<'_>) -> Response {
    let entry = entry.select(|| request.header("accept-encoding"));
    // Both name the file the conditions were checked against.
    let refused = match preconditions(entry, request) {
        Precondition::Holds => None,
        Precondition::Failed => Some(412),
        Precondition::NotModified => Some(304),
    };
    if let Some(status) = refused {
        let response = Response::new(status).header("etag", entry.etag.clone());
        return match entry.varies {
            true => response.header("vary", "accept-encoding"),
            false => response,
        };
    }
    // Range is defined for GET only; an If-Range that does not match asks
    // for the whole (changed) file. (Decided before the response is built,
    // so it is built once, in place.)
    let range = request
        .header("range")
        .filter(|_| request.method() == Method::Get)
        .filter(|_| {
            request
                .header("if-range")
                .is_none_or(|v| if_range_holds(v, entry))
        })
        .map_or(ByteRange::Whole, |range| parse_range(range, entry.len));
    match range {
        ByteRange::Whole => Response::new(200)
            .fields(entry.fields.clone())
            .body(file_body(entry, 0, entry.len)),
        ByteRange::Part { first, last } => Response::new(206)
            .fields(entry.fields.clone())
            .header(
                "content-range",
                format!("bytes {first}-{last}/{}", entry.len),
            )
            .body(file_body(entry, first, last - first + 1)),
        ByteRange::Parts(ranges) => multipart(entry, &ranges).unwrap_or_else(|| {
            Response::new(200)
                .fields(entry.fields.clone())
                .body(file_body(entry, 0, entry.len))
        }),
        ByteRange::Unsatisfiable => Response::new(416)
            .header("accept-ranges", "bytes")
            .header("content-range", format!("bytes */{}", entry.len)),
    }
}

/// What the conditional fields make of a GET or HEAD.
#[derive(Debug)]
enum Precondition {
    /// `If-Match` or `If-Unmodified-Since` is false: `412`.
    Failed,
    /// `If-None-Match` or `If-Modified-Since` is false: `304`.
    NotModified,
    /// Answer as if unconditional (a range may still apply).
    Holds,
}

/// Evaluates the conditional fields in the order of RFC 9110 section
/// 13.2.2; each date is ignored when its tag field is present, or when it
/// is not a valid HTTP-date.
fn preconditions(entry: &Entry, request: &Request<'_>) -> Precondition {
    let headers = request.headers();
    let date = |name| request.header(name).and_then(http_date::parse);
    let mut if_match = headers.get_all("if-match").peekable();
    let failed = if if_match.peek().is_some() {
        !if_match.any(|list| tag_list_hits(list, &entry.etag, Comparison::Strong))
    } else {
        date("if-unmodified-since").is_some_and(|since| entry.mtime > since)
    };
    if failed {
        return Precondition::Failed;
    }
    let mut if_none_match = headers.get_all("if-none-match").peekable();
    let not_modified = if if_none_match.peek().is_some() {
        if_none_match.any(|list| tag_list_hits(list, &entry.etag, Comparison::Weak))
    } else {
        date("if-modified-since").is_some_and(|since| entry.mtime <= since)
    };
    if not_modified {
        Precondition::NotModified
    } else {
        Precondition::Holds
    }
}

fn file_body(entry: &Entry, offset: u64, len: u64) -> Body {
    match &entry.contents {
        // Offsets within a small file's length: they fit in `usize`.
        Some(bytes) => Body::Bytes(bytes.slice(offset as usize..(offset + len) as usize)),
        None => Body::File(FileBody::new(Arc::clone(&entry.file), offset, len)),
    }
}

/// How entity tags are compared (RFC 9110 section 8.8.3.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Comparison {
    /// Both tags strong and equal: what `If-Match` asks.
    Strong,
    /// Equal once `W/` prefixes are dropped: what `If-None-Match` asks.
    Weak,
}

/// Whether an `If-Match` or `If-None-Match` field value (`*` or a list of
/// entity tags) matches `etag`, the strong tag of a current file (so `*`
/// matches).
fn tag_list_hits(list: &[u8], etag: &[u8], comparison: Comparison) -> bool {
    if list.trim_ascii() == b"*" {
        return true;
    }
    let mut rest = list;
    loop {
        rest = rest.trim_ascii_start();
        while let Some(after) = rest.strip_prefix(b",") {
            rest = after.trim_ascii_start();
        }
        if rest.is_empty() {
            return false;
        }
        let weak = rest.starts_with(b"W/");
        rest = rest.strip_prefix(b"W/").unwrap_or(rest);
        // An opaque tag: a quoted string without inner quotes.
        let Some(close) = rest
            .get(1..)
            .and_then(|r| r.iter().position(|&b| b == b'"'))
        else {
            return false;
        };
        if rest[0] != b'"' {
            return false;
        }
        let (tag, after) = rest.split_at(close + 2);
        // `"a"x` is no tag, so no match (nor one for `If-Match` to pass).
        if after
            .first()
            .is_some_and(|&b| b != b',' && !b.is_ascii_whitespace())
        {
            return false;
        }
        let strong_enough = comparison == Comparison::Weak || !weak;
        if tag == etag && strong_enough {
            return true;
        }
        rest = after;
    }
}

/// Whether `If-Range` still describes the file: the same strong entity tag
/// or exactly the modification time.
fn if_range_holds(value: &[u8], entry: &Entry) -> bool {
    let value = value.trim_ascii();
    if value.starts_with(b"\"") || value.starts_with(b"W/") {
        // Strong comparison: a weak tag never matches.
        value == &entry.etag[..]
    } else {
        http_date::parse(value) == Some(entry.mtime)
    }
}

/// What a `Range` field asks of a file.
#[derive(Debug, PartialEq, Eq)]
enum ByteRange {
    /// No range this server serves (another unit, bad syntax, an empty
    /// file, more ranges than [`MAX_RANGES`] or [`MAX_MULTIPART`] bytes,
    /// overlapping ranges): the whole file, `200`.
    Whole,
    /// Bytes `first..=last`, within the file: `206`.
    Part { first: u64, last: u64 },
    /// Several ranges, each `(first, last)` within the file, in the order
    /// asked: `206` with a `multipart/byteranges` body.
    Parts(Vec<(u64, u64)>),
    /// Well-formed ranges that all start past the end: `416`.
    Unsatisfiable,
}

/// At most this many ranges are answered; a request for more (a file asked
/// for in many small pieces, RFC 9110 section 14.2) gets it whole.
const MAX_RANGES: usize = 16;

/// At most this many bytes of a file go in a `multipart/byteranges` body,
/// which is put together in memory (read while the file cache is held);
/// more gets the whole file, by `sendfile`.
const MAX_MULTIPART: u64 = 64 << 10;

/// Reads `bytes=` and a list of `a-b`, `a-` or `-n` against a file of
/// `len` bytes (RFC 9110 section 14.1.2): the ranges within the file,
/// those past its end left out.
fn parse_range(value: &[u8], len: u64) -> ByteRange {
    // An empty file's one satisfiable range, a suffix (14.1.2), cannot be
    // written in a Content-Range; 14.2 lets a server ignore any range of
    // an empty file, and nginx does.
    if len == 0 {
        return ByteRange::Whole;
    }
    let value = value.trim_ascii();
    let Some(spec) = value
        .get(..6)
        .filter(|unit| unit.eq_ignore_ascii_case(b"bytes="))
        .map(|_| value[6..].trim_ascii())
    else {
        return ByteRange::Whole;
    };
    let mut ranges = Vec::new();
    let mut unsatisfiable = false;
    // Empty list elements are allowed (RFC 9110 section 5.6.1).
    let specs = spec.split(|&b| b == b',').map(<[u8]>::trim_ascii);
    for (n, spec) in specs.filter(|spec| !spec.is_empty()).enumerate() {
        if n == MAX_RANGES {
            return ByteRange::Whole;
        }
        match one_range(spec, len) {
            // Bad syntax anywhere: the field is ignored.
            None => return ByteRange::Whole,
            Some(None) => unsatisfiable = true,
            Some(Some(range)) => ranges.push(range),
        }
    }
    match ranges[..] {
        [] if unsatisfiable => ByteRange::Unsatisfiable,
        [] => ByteRange::Whole,
        [(first, last)] => ByteRange::Part { first, last },
        _ if ranges
            .iter()
            .fold(0u64, |n, (f, l)| n.saturating_add(l - f + 1))
            > MAX_MULTIPART
            || overlapping(&ranges) =>
        {
            ByteRange::Whole
        }
        _ => ByteRange::Parts(ranges),
    }
}

/// One `a-b`, `a-` or `-n`: `None` if malformed, `Some(None)` if it starts
/// past the end, else the bytes it asks for within the file.
fn one_range(spec: &[u8], len: u64) -> Option<Option<(u64, u64)>> {
    let dash = spec.iter().position(|&b| b == b'-')?;
    let (first, last) = (&spec[..dash], &spec[dash + 1..]);
    let number = |digits: &[u8]| -> Option<u64> {
        if digits.is_empty() || !digits.iter().all(u8::is_ascii_digit) {
            return None;
        }
        // Past u64::MAX is past any file's end.
        Some(
            std::str::from_utf8(digits)
                .ok()?
                .parse()
                .unwrap_or(u64::MAX),
        )
    };
    if first.is_empty() {
        // The last `n` bytes.
        return match number(last)? {
            0 => Some(None),
            n => Some(Some((len.saturating_sub(n), len - 1))),
        };
    }
    let first = number(first)?;
    let last = if last.is_empty() {
        u64::MAX
    } else {
        Some(number(last)?).filter(|&last| last >= first)?
    };
    if first >= len {
        return Some(None);
    }
    Some(Some((first, last.min(len - 1))))
}

/// Whether any two of `ranges` share a byte (such a request is answered
/// whole: RFC 9110 section 14.2).
fn overlapping(ranges: &[(u64, u64)]) -> bool {
    let mut sorted = ranges.to_vec();
    sorted.sort_unstable();
    sorted.windows(2).any(|w| w[1].0 <= w[0].1)
}

/// A `206` whose body holds `ranges` of `entry` as `multipart/byteranges`
/// parts, each with the file's `content-type` and its `content-range`
/// (RFC 9110 section 14.6); `None` if the file cannot be read.
fn multipart(entry: &Entry, ranges: &[(u64, u64)]) -> Option<Response> {
    let mut pieces = Vec::with_capacity(ranges.len());
    for &(first, last) in ranges {
        // Within MAX_MULTIPART: the lengths fit in `usize`.
        let (at, len) = (first as usize, (last - first + 1) as usize);
        pieces.push(match &entry.contents {
            Some(bytes) => bytes.slice(at..at + len),
            None => {
                let mut piece = vec![0; len];
                std::os::unix::fs::FileExt::read_exact_at(&*entry.file, &mut piece, first).ok()?;
                Bytes::from(piece)
            }
        });
    }
    let boundary = boundary(&pieces);
    let content_type = entry
        .fields
        .iter()
        .find(|(name, _)| *name == "content-type")
        .map_or(&b"application/octet-stream"[..], |(_, value)| value);
    let mut body = Vec::new();
    for (&(first, last), piece) in ranges.iter().zip(&pieces) {
        body.extend_from_slice(format!("\r\n--{boundary}\r\ncontent-type: ").as_bytes());
        body.extend_from_slice(content_type);
        let range = format!(
            "\r\ncontent-range: bytes {first}-{last}/{}\r\n\r\n",
            entry.len
        );
        body.extend_from_slice(range.as_bytes());
        body.extend_from_slice(piece);
    }
    body.extend_from_slice(format!("\r\n--{boundary}--\r\n").as_bytes());
    let kind = format!("multipart/byteranges; boundary={boundary}");
    let response = Response::new(206).header("content-type", kind);
    let response = entry
        .fields
        .iter()
        .filter(|(name, _)| *name != "content-type")
        .fold(response, |response, (name, value)| {
            response.header(name.to_owned(), Bytes::copy_from_slice(value))
        });
    Some(response.body(Bytes::from(body)))
}

/// A multipart boundary that none of `pieces` holds.
fn boundary(pieces: &[Bytes]) -> String {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    loop {
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let boundary = format!("ringwire-byteranges-{n:016x}");
        if !pieces
            .iter()
            .any(|piece| memchr::memmem::find(piece, boundary.as_bytes()).is_some())
        {
            return boundary;
        }
    }
}

impl Handler for StaticFiles {
    async fn call(&self, request: &Request<'_>) -> Response {
        if !matches!(request.method(), Method::Get | Method::Head) {
            return status(405).header("allow", "GET, HEAD");
        }
        let response = self.serve(request).await;
        if response.status() == 404 && self.spa && is_navigation(request) {
            return self.app_page(request).await;
        }
        response
    }
}

impl StaticFiles {
    /// The root's `index.html`, for a navigation that named no file.
    async fn app_page(&self, request: &Request<'_>) -> Response {
        const KEY: &[u8] = b"/index.html";
        if let Some(response) = self.cache.with(KEY, |entry| answer(entry, request)) {
            return response;
        }
        let index = tokio::fs::canonicalize(self.root.join("index.html")).await;
        let opened = match index {
            Ok(index) if index.starts_with(&self.root) && !self.hides_resolved(&index) => {
                self.open(&index).await
            }
            _ => return status(404),
        };
        match opened {
            Ok(entry) => {
                let entry = Arc::new(entry);
                let response = answer(&entry, request);
                self.cache.insert(KEY.to_vec(), entry);
                response
            }
            Err(_) => status(404),
        }
    }
}

/// Whether `request` is a browser's page navigation to a route rather than a file: it
/// accepts HTML, and its path's last segment has no extension.
fn is_navigation(request: &Request<'_>) -> bool {
    let accepts_html = request
        .header("accept")
        .is_some_and(|accept| memchr::memmem::find(accept, b"text/html").is_some());
    let path = request.target().path();
    let last = path.rsplit(|&b| b == b'/').next().unwrap_or_default();
    accepts_html && !last.contains(&b'.')
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

/// The entries of `dir`, whose path (decoded) is `shown`, that `listed`
/// lets through. Names that are not UTF-8 are shown with U+FFFD but linked
/// by their bytes.
async fn listing(dir: &Path, shown: &str, listed: impl Fn(&[u8]) -> bool) -> Response {
    let Ok(mut entries) = tokio::fs::read_dir(dir).await else {
        return status(404);
    };
    let mut names = Vec::new();
    while let Ok(Some(entry)) = entries.next_entry().await {
        if !listed(entry.file_name().as_bytes()) {
            continue;
        }
        let is_dir = entry.file_type().await.is_ok_and(|t| t.is_dir());
        names.push((entry.file_name(), is_dir));
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
            percent_encode(name.as_bytes()),
            escape(&name.to_string_lossy())
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
fn percent_encode(name: &[u8]) -> String {
    let mut out = String::with_capacity(name.len());
    for &b in name {
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
        "md" => "text/markdown; charset=utf-8",
        "csv" => "text/csv; charset=utf-8",
        "xml" => "application/xml",
        "avif" => "image/avif",
        "woff" => "font/woff",
        "woff2" => "font/woff2",
        "mp3" => "audio/mpeg",
        "mp4" => "video/mp4",
        "webm" => "video/webm",
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
        assert_eq!(percent_encode(b"a b/%.txt\xff"), "a%20b%2F%25.txt%FF");
        assert_eq!(
            content_type(Path::new("n.md")),
            "text/markdown; charset=utf-8"
        );
    }

    #[test]
    fn byte_ranges() {
        use ByteRange::{Part, Parts, Unsatisfiable, Whole};
        let r = |v: &str| parse_range(v.as_bytes(), 1000);
        assert_eq!(r("bytes=0-99"), Part { first: 0, last: 99 });
        assert_eq!(
            r("BYTES= 10-"),
            Part {
                first: 10,
                last: 999
            }
        );
        assert_eq!(
            r("bytes=-1"),
            Part {
                first: 999,
                last: 999
            }
        );
        assert_eq!(
            r("bytes=-5000"),
            Part {
                first: 0,
                last: 999
            }
        );
        assert_eq!(
            r("bytes=990-5000"),
            Part {
                first: 990,
                last: 999
            }
        );
        assert_eq!(r("bytes=1000-"), Unsatisfiable);
        assert_eq!(r("bytes=99999999999999999999999-"), Unsatisfiable);
        assert_eq!(r("bytes=-0"), Unsatisfiable);
        for empty in ["bytes=-3", "bytes=0-", "bytes=-0"] {
            assert_eq!(parse_range(empty.as_bytes(), 0), Whole, "{empty}");
        }
        // Several: those within the file, in the order asked.
        assert_eq!(
            r("bytes=0-1, ,900-949,5000-,-10"),
            Parts(vec![(0, 1), (900, 949), (990, 999)])
        );
        assert_eq!(r("bytes=20-29,0-9"), Parts(vec![(20, 29), (0, 9)]));
        assert_eq!(r("bytes=0-9,2000-"), Part { first: 0, last: 9 });
        assert_eq!(r("bytes=2000-,3000-3001"), Unsatisfiable);
        let many: Vec<String> = (0..=MAX_RANGES)
            .map(|i| format!("{}-{}", i * 10, i * 10))
            .collect();
        assert_eq!(r(&format!("bytes={}", many.join(","))), Whole, "too many");
        let at = MAX_MULTIPART;
        let big = parse_range(format!("bytes=0-{at},{}-", at + 10).as_bytes(), at * 4);
        assert_eq!(big, Whole, "too many bytes");
        for whole in [
            "bytes=0-10,5-6",
            "bytes=0-1,x-4",
            "bytes=",
            "bytes=5-4",
            "bytes=a-b",
            "bytes=-",
            "bytes=1",
            "bytes=+1-2",
            "items=0-1",
            "",
        ] {
            assert_eq!(r(whole), Whole, "{whole}");
        }
    }

    #[test]
    fn entity_tag_lists() {
        use Comparison::{Strong, Weak};
        let tag = b"\"1f-2a\"";
        let hits = |list: &[u8]| tag_list_hits(list, tag, Weak);
        assert!(hits(b"\"1f-2a\""));
        assert!(hits(b" * "));
        assert!(hits(b"W/\"1f-2a\""));
        assert!(hits(b"\"x\", ,W/\"y\",\"1f-2a\""));
        assert!(!hits(b"\"x\", \"1f-2b\""));
        assert!(!hits(b"1f-2a"), "unquoted");
        assert!(!hits(b"\"1f-2a"), "unterminated");
        assert!(!hits(b"\"1f-2a\"x"), "trailing bytes");
        assert!(!hits(b""));
        let strong = |list: &[u8]| tag_list_hits(list, tag, Strong);
        assert!(strong(b"\"1f-2a\""));
        assert!(strong(b"*"));
        assert!(strong(b"W/\"x\", \"1f-2a\""));
        assert!(!strong(b"W/\"1f-2a\""), "a weak tag never matches");
    }
}
