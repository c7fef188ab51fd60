//! brotli, zstd and gzip for compressible response bodies.

use std::collections::HashMap;
use std::fmt;
use std::hash::BuildHasher as _;
use std::io::Write as _;
use std::sync::{Mutex, PoisonError};

use bytes::Bytes;

use crate::{Body, Handler, Request, Response};

#[cfg(fuzzing)]
pub mod fuzzing;

/// A content coding [`Compress`] can apply.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Encoding {
    /// `gzip` (level 6, zlib's default).
    Gzip,
    /// `br` (quality 5: near gzip's speed, smaller output).
    Brotli,
    /// `zstd` (RFC 8878; level 3, zstd's default: several times gzip's
    /// speed, smaller output). Its window (2 MiB at most at this level)
    /// stays within the 8 MiB that RFC 9659 allows a content coding.
    Zstd,
}

/// The codings in the order a tie of `accept-encoding` preferences is broken
/// in, for a body compressed once and kept (a static body, a repeated one, a
/// precompressed file): smallest output first.
pub(crate) const KEPT_ORDER: [Encoding; 3] = [Encoding::Brotli, Encoding::Zstd, Encoding::Gzip];

/// The same for a body compressed for one answer: least work first. At these
/// settings zstd takes about a fifth of gzip's time for a large body (and a
/// little more for a small one) for smaller output, and brotli twice gzip's
/// or more at any size (docs/benchmarks.md, "Content codings").
const FRESH_ORDER: [Encoding; 3] = [Encoding::Zstd, Encoding::Gzip, Encoding::Brotli];

impl Encoding {
    /// The token for `content-encoding`.
    pub fn token(self) -> &'static str {
        match self {
            Encoding::Gzip => "gzip",
            Encoding::Brotli => "br",
            Encoding::Zstd => "zstd",
        }
    }

    /// Whether an `accept-encoding` entry names this coding.
    fn named(self, name: &[u8]) -> bool {
        name.eq_ignore_ascii_case(self.token().as_bytes())
            || (self == Encoding::Gzip && name.eq_ignore_ascii_case(b"x-gzip"))
    }

    /// `data` compressed whole, at the settings [`Compress`] uses.
    #[must_use]
    pub fn encode(self, data: &[u8]) -> Vec<u8> {
        let out = Vec::with_capacity(data.len() / 2 + 64);
        // Writing into a `Vec` cannot fail.
        match self {
            Encoding::Gzip => {
                let mut gz = flate2::write::GzEncoder::new(out, flate2::Compression::new(6));
                let _ = gz.write_all(data);
                gz.finish().unwrap_or_default()
            }
            Encoding::Brotli => {
                let mut br = brotli::CompressorWriter::new(out, 4096, 5, 22);
                let _ = br.write_all(data);
                br.into_inner()
            }
            // With a content checksum, so a damaged frame fails to decode
            // rather than decoding to other bytes. Fails only if libzstd
            // cannot allocate: then the body's own bytes, which are sent
            // uncompressed as no smaller.
            Encoding::Zstd => zstd::bulk::Compressor::new(zstd::DEFAULT_COMPRESSION_LEVEL)
                .and_then(|mut zst| {
                    zst.set_parameter(zstd::zstd_safe::CParameter::ChecksumFlag(true))?;
                    zst.compress(data)
                })
                .unwrap_or_else(|_| data.to_vec()),
        }
    }
}

/// Compresses the in-memory bodies of `200` responses whose type compresses
/// well (text, JSON, JavaScript, XML, SVG, WebAssembly), with brotli, zstd
/// or gzip as the request's `accept-encoding` prefers. On a tie (a browser
/// names all three): brotli, the smallest, for a body whose form is kept (see
/// below: a static body, or one answered before), else zstd, the cheapest to
/// make, then gzip.
///
/// Left alone: bodies under [`min_size`](Self::min_size), responses that
/// already have a `content-encoding`, file bodies (sent by `sendfile`;
/// serve precompressed files for those), streamed bodies, and other
/// statuses (a `206`'s range is of the uncompressed bytes). A compressed
/// response gets `vary: accept-encoding` and its `etag` made weak.
///
/// Compressed forms are cached, so a body answered again and again (an
/// embedded page, a small file [`StaticFiles`](crate::files::StaticFiles)
/// keeps in memory, a repeated JSON answer) is compressed once per encoding
/// (twice for one compared by content): [`Body::Static`] bodies by address,
/// others of up to 256 KiB by content (a hash, then a comparison, which cost
/// a fraction of compressing), and those only once seen a second time, so
/// answers that never repeat are not kept. At most 256 forms and 16 MiB.
pub struct Compress<H> {
    inner: H,
    min_size: usize,
    cache: Mutex<Cache>,
    /// Hashes bodies for [`Source::Content`], seeded per middleware.
    content_hash: foldhash::fast::RandomState,
}

/// The kept forms and what admits them.
struct Cache {
    forms: HashMap<Key, Packed, foldhash::fast::RandomState>,
    /// Bytes the forms hold (theirs, and the bodies they were made from).
    bytes: usize,
    /// The keys of bodies compared by content seen lately, one per slot
    /// their hash picks: a body whose key is found here is kept.
    seen: Box<[Key; SEEN_SLOTS]>,
}

/// What a compressed form is kept under: its body and coding.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
struct Key(Source, Encoding);

/// A body whose compressed forms may be kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Source {
    /// A static body's address and length: the same bytes for ever.
    Static(usize, usize),
    /// Another body's hash and length: the same bytes if they compare equal.
    Content(u64, usize),
}

/// A cached compressed form, and for a [`Source::Content`] the body it was made from.
#[derive(Debug)]
struct Packed {
    from: Option<Bytes>,
    packed: Bytes,
}

/// Compressed forms kept; past it (or past [`CACHE_BYTES`]), one goes for
/// each one kept.
const CACHE_ENTRIES: usize = 256;

/// The bytes the kept forms may hold.
const CACHE_BYTES: usize = 16 << 20;

/// Bodies compared by content remembered as seen once (a key each).
const SEEN_SLOTS: usize = 1024;

/// The largest non-static body whose compressed form is kept (a larger one
/// is seldom answered twice alike, and hashing it would cost the most).
const CACHED_BODY_MAX: usize = 256 << 10;

impl<H: Handler> Compress<H> {
    /// Compresses what `inner` answers; bodies of 256 bytes or more.
    pub fn new(inner: H) -> Self {
        Compress {
            inner,
            min_size: 256,
            cache: Mutex::new(Cache {
                forms: HashMap::default(),
                bytes: 0,
                seen: Box::new([Key(Source::Static(0, 0), Encoding::Gzip); SEEN_SLOTS]),
            }),
            content_hash: foldhash::fast::RandomState::default(),
        }
    }

    /// Leaves bodies shorter than `bytes` uncompressed.
    #[must_use]
    pub fn min_size(mut self, bytes: usize) -> Self {
        self.min_size = bytes;
        self
    }

    /// `body` as a body whose compressed forms may be kept, if it is one.
    fn source(&self, body: &Body) -> Option<Source> {
        match body {
            Body::Static(data) => Some(Source::Static(data.as_ptr() as usize, data.len())),
            Body::Bytes(bytes) if bytes.len() <= CACHED_BODY_MAX => Some(Source::Content(
                self.content_hash.hash_one(&bytes[..]),
                bytes.len(),
            )),
            _ => None,
        }
    }

    /// The coding to answer `accept` with and `body` (which is `source`) in it: the form
    /// kept, or made now.
    fn packed(
        &self,
        accept: &[u8],
        body: &Body,
        source: Option<Source>,
    ) -> Option<(Encoding, Bytes)> {
        let (encoding, kept) = self.choose(accept, body, source)?;
        let packed = kept.unwrap_or_else(|| self.compress(body, source, encoding));
        Some((encoding, packed))
    }

    /// The coding to answer `accept` with, and `body`'s form in it if one is kept (`body`
    /// is `source`): one look at the cache, which also decides how ties are broken.
    fn choose(
        &self,
        accept: &[u8],
        body: &Body,
        source: Option<Source>,
    ) -> Option<(Encoding, Option<Bytes>)> {
        let Some(source) = source else {
            return preferred_encoding(accept, |_| true, &FRESH_ORDER).map(|e| (e, None));
        };
        let cache = self.cache();
        let order = if cache.keeps(source) {
            &KEPT_ORDER
        } else {
            &FRESH_ORDER
        };
        let encoding = preferred_encoding(accept, |_| true, order)?;
        let data = body.as_slice();
        let hit = cache
            .forms
            .get(&Key(source, encoding))
            .filter(|p| p.from.as_ref().is_none_or(|f| f[..] == *data))
            .map(|p| p.packed.clone());
        Some((encoding, hit))
    }

    /// `body` (which is `source`) compressed in `encoding` now, and kept if it may be.
    fn compress(&self, body: &Body, source: Option<Source>, encoding: Encoding) -> Bytes {
        // Compressed outside the lock: other answers go on meanwhile.
        let packed = Bytes::from(encoding.encode(body.as_slice()));
        if let Some(source) = source {
            let from = match body {
                Body::Bytes(bytes) => Some(bytes.clone()),
                _ => None,
            };
            let kept = Packed {
                from,
                packed: packed.clone(),
            };
            self.cache().keep(Key(source, encoding), kept);
        }
        packed
    }

    fn cache(&self) -> std::sync::MutexGuard<'_, Cache> {
        self.cache.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl Cache {
    /// Whether forms of `source` are kept, or will be from its next
    /// compression on: a static body's, or another's seen before in any
    /// coding.
    fn keeps(&self, source: Source) -> bool {
        let Source::Content(hash, _) = source else {
            return true;
        };
        KEPT_ORDER.into_iter().any(|encoding| {
            let key = Key(source, encoding);
            self.forms.contains_key(&key) || self.seen[seen_slot(hash, encoding)] == key
        })
    }

    /// Keeps `form` under `key`: a static body's at once, another's once its
    /// key was seen before; others go to make room.
    fn keep(&mut self, key: Key, form: Packed) {
        if let Key(Source::Content(hash, _), encoding) = key {
            let slot = &mut self.seen[seen_slot(hash, encoding)];
            if *slot != key {
                *slot = key;
                return;
            }
        }
        let size = form.size();
        if size > CACHE_BYTES {
            return;
        }
        if let Some(old) = self.forms.remove(&key) {
            self.bytes -= old.size();
        }
        while self.forms.len() >= CACHE_ENTRIES || self.bytes + size > CACHE_BYTES {
            let Some(victim) = self.forms.keys().next().copied() else {
                break;
            };
            if let Some(old) = self.forms.remove(&victim) {
                self.bytes -= old.size();
            }
        }
        self.bytes += size;
        self.forms.insert(key, form);
    }
}

/// Where a body of content `hash` in `encoding` is remembered as seen. The
/// hash is of the body's bytes, seeded: its low bits spread. Each coding of
/// one body has a slot of its own.
fn seen_slot(hash: u64, encoding: Encoding) -> usize {
    (hash as usize).wrapping_add(encoding as usize) % SEEN_SLOTS
}

impl Packed {
    fn size(&self) -> usize {
        self.packed.len() + self.from.as_ref().map_or(0, Bytes::len)
    }
}

impl<H> fmt::Debug for Compress<H> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Compress")
            .field("min_size", &self.min_size)
            .finish_non_exhaustive()
    }
}

impl<H: Handler> Handler for Compress<H> {
    fn streams_body(&self, request: &ringwire_http1::Request<'_>) -> bool {
        self.inner.streams_body(request)
    }

    async fn call(&self, request: &Request<'_>) -> Response {
        let mut response = self.inner.call(request).await;
        let compressible = response.status() == 200
            && matches!(response.body_ref(), Body::Static(_) | Body::Bytes(_))
            && response.body_ref().as_slice().len() >= self.min_size
            && response.header_value("content-encoding").is_none()
            && response
                .header_value("content-type")
                .is_some_and(compressible_type);
        if !compressible {
            return response;
        }
        let said = |v: &[u8]| {
            v.split(|&b| b == b',')
                .map(<[u8]>::trim_ascii)
                .any(|name| name == b"*" || name.eq_ignore_ascii_case(b"accept-encoding"))
        };
        match response.header_value("vary") {
            // Said already (a file with precompressed forms says it itself).
            Some(v) if said(v) => {}
            Some(v) => {
                let vary = Bytes::from([v, b", accept-encoding"].concat());
                response.remove_header("vary");
                response = response.header("vary", vary);
            }
            None => response = response.header("vary", "accept-encoding"),
        }
        // A client that accepts no coding costs no hash of the body.
        let Some(accept) = request.header("accept-encoding") else {
            return response;
        };
        let source = self.source(response.body_ref());
        let body = response.take_body();
        let Some((encoding, packed)) = self.packed(accept, &body, source) else {
            return response.body(body);
        };
        if packed.len() >= body.as_slice().len() {
            return response.body(body);
        }
        if let Some(tag) = response
            .header_value("etag")
            .filter(|t| t.starts_with(b"\""))
        {
            let weak = Bytes::from([b"W/", tag].concat());
            response.remove_header("etag");
            response = response.header("etag", weak);
        }
        response
            .header("content-encoding", encoding.token())
            .body(packed)
    }
}

/// Whether a `content-type` names a type worth compressing.
fn compressible_type(value: &[u8]) -> bool {
    let essence = value.split(|&b| b == b';').next().unwrap_or_default();
    let essence = essence.trim_ascii().to_ascii_lowercase();
    let Some(slash) = essence.iter().position(|&b| b == b'/') else {
        return false;
    };
    let (kind, sub) = (&essence[..slash], &essence[slash + 1..]);
    kind == b"text"
        || sub.ends_with(b"+json")
        || sub.ends_with(b"+xml")
        || (kind == b"application"
            && matches!(
                sub,
                b"json" | b"javascript" | b"xml" | b"wasm" | b"ecmascript"
            ))
}

/// The coding `accept-encoding` prefers among those `offered`: the highest
/// `q` (an explicit entry over `*`), on a tie the first in `order`, none
/// when every one offered is refused (`q=0`) or not mentioned.
pub(crate) fn preferred_encoding(
    accept: &[u8],
    offered: impl Fn(Encoding) -> bool,
    order: &[Encoding; 3],
) -> Option<Encoding> {
    let mut named = [None; 3];
    let mut any = None;
    for item in accept.split(|&b| b == b',') {
        let mut parts = item.split(|&b| b == b';');
        let name = parts.next().unwrap_or_default().trim_ascii();
        let q = parts
            .filter_map(|p| {
                p.trim_ascii()
                    .strip_prefix(b"q=")
                    .or_else(|| p.trim_ascii().strip_prefix(b"Q="))
            })
            .map(parse_q)
            .next()
            .unwrap_or(Some(1000));
        let Some(q) = q else { continue };
        if name == b"*" {
            any = Some(q);
        } else if let Some(i) = order.iter().position(|coding| coding.named(name)) {
            named[i] = Some(q);
        }
    }
    let mut best = None;
    for (coding, q) in order.iter().copied().zip(named) {
        let q = q.or(any).filter(|_| offered(coding)).unwrap_or(0);
        // Strictly higher: a tie keeps the earlier coding.
        if q > best.map_or(0, |(best_q, _)| best_q) {
            best = Some((q, coding));
        }
    }
    best.map(|(_, coding)| coding)
}

/// A quality value (RFC 9110 section 12.4.2) in thousandths; `None` when
/// malformed (the entry is ignored).
fn parse_q(value: &[u8]) -> Option<u16> {
    let (int, frac) = match value.iter().position(|&b| b == b'.') {
        Some(dot) => (&value[..dot], &value[dot + 1..]),
        None => (value, &b""[..]),
    };
    if frac.len() > 3 || !frac.iter().all(u8::is_ascii_digit) {
        return None;
    }
    let mut thousandths = 0u16;
    for i in 0..3 {
        thousandths = thousandths * 10 + frac.get(i).map_or(0, |d| u16::from(d - b'0'));
    }
    match int {
        b"0" => Some(thousandths),
        b"1" if thousandths == 0 => Some(1000),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accept_encoding_preferences() {
        let cases: &[(&str, Option<Encoding>)] = &[
            ("gzip, deflate, br, zstd", Some(Encoding::Brotli)),
            ("gzip", Some(Encoding::Gzip)),
            ("br;q=0.5, gzip;q=0.8", Some(Encoding::Gzip)),
            ("br;q=0, gzip;q=0", None),
            ("identity", None),
            ("", None),
            ("*", Some(Encoding::Brotli)),
            ("*;q=0.1, gzip", Some(Encoding::Gzip)),
            ("br;q=0, *", Some(Encoding::Zstd)),
            ("br;q=0, zstd;q=0, *", Some(Encoding::Gzip)),
            ("gzip, zstd", Some(Encoding::Zstd)),
            ("zstd;q=0.9, br;q=0.8", Some(Encoding::Zstd)),
            ("ZSTD", Some(Encoding::Zstd)),
            ("x-gzip", Some(Encoding::Gzip)),
            ("GZIP;Q=1.000", Some(Encoding::Gzip)),
            ("br;q=2, gzip;q=0.001", Some(Encoding::Gzip)),
            // A malformed q drops its entry.
            ("br;q=0.0001", None),
            ("br;q=0.5x, gzip;q=0.1", Some(Encoding::Gzip)),
        ];
        for (accept, expected) in cases {
            let preferred = preferred_encoding(accept.as_bytes(), |_| true, &KEPT_ORDER);
            assert_eq!(preferred, *expected, "{accept}");
        }
        // A body compressed for one answer: the least work on a tie.
        let cases: &[(&str, Option<Encoding>)] = &[
            ("gzip, deflate, br, zstd", Some(Encoding::Zstd)),
            ("gzip, deflate, br", Some(Encoding::Gzip)),
            ("br", Some(Encoding::Brotli)),
            ("*", Some(Encoding::Zstd)),
            ("zstd;q=0.9, br", Some(Encoding::Brotli)),
        ];
        for (accept, expected) in cases {
            let preferred = preferred_encoding(accept.as_bytes(), |_| true, &FRESH_ORDER);
            assert_eq!(preferred, *expected, "{accept}");
        }
        // Among what is offered: a gzip-only file to a client preferring brotli.
        let gzip_only = |coding| coding == Encoding::Gzip;
        let cases: &[(&str, Option<Encoding>)] = &[
            ("gzip, deflate, br, zstd", Some(Encoding::Gzip)),
            ("br", None),
            ("br;q=1, gzip;q=0.1", Some(Encoding::Gzip)),
            ("br, gzip;q=0", None),
        ];
        for (accept, expected) in cases {
            let preferred = preferred_encoding(accept.as_bytes(), gzip_only, &KEPT_ORDER);
            assert_eq!(preferred, *expected, "{accept}");
        }
    }

    #[test]
    fn compressible_types() {
        for t in [
            "text/html; charset=utf-8",
            "application/json",
            "image/svg+xml",
            "application/ld+json",
            "TEXT/CSS",
        ] {
            assert!(compressible_type(t.as_bytes()), "{t}");
        }
        for t in [
            "image/png",
            "application/octet-stream",
            "video/mp4",
            "nonsense",
        ] {
            assert!(!compressible_type(t.as_bytes()), "{t}");
        }
    }

    #[test]
    fn repeated_bodies_are_kept_and_others_not() {
        struct Nothing;
        impl Handler for Nothing {
            async fn call(&self, _: &Request<'_>) -> Response {
                Response::new(204)
            }
        }
        let compress = Compress::new(Nothing);
        let text = "body { color: black; }\n".repeat(100);
        let body = |text: &str| Body::Bytes(Bytes::from(text.to_owned()));
        let kept = |c: &Compress<Nothing>| c.cache().forms.len();
        let pack = |body: &Body, coding: Encoding| {
            let source = compress.source(body);
            let (chosen, packed) = compress
                .packed(coding.token().as_bytes(), body, source)
                .unwrap();
            assert_eq!(chosen, coding);
            packed
        };
        let first = pack(&body(&text), Encoding::Brotli);
        // Seen once: compressed, not kept.
        let second = pack(&body(&text), Encoding::Brotli);
        assert_ne!(first.as_ptr(), second.as_ptr());
        assert_eq!(kept(&compress), 1);
        // The same bytes in another buffer: the form made the second time.
        let third = pack(&body(&text), Encoding::Brotli);
        assert_eq!(second.as_ptr(), third.as_ptr());
        // Another coding of the same body is admitted apart, in its own slot.
        let gzip = pack(&body(&text), Encoding::Gzip);
        assert_ne!(gzip, first);
        assert_eq!(pack(&body(&text), Encoding::Gzip), gzip);
        assert_eq!(kept(&compress), 2);
        // Other bytes of the same length: their own form.
        let white = text.replace("black", "white");
        for _ in 0..2 {
            let other = pack(&body(&white), Encoding::Brotli);
            let mut out = Vec::new();
            brotli::BrotliDecompress(&mut &other[..], &mut out).expect("unbrotli");
            assert_eq!(out, white.as_bytes());
        }
        assert_eq!(kept(&compress), 3);
        // Bodies that never repeat are compressed and not kept.
        for i in 0..2 * SEEN_SLOTS {
            let _ = pack(&body(&format!("{i} {text}")), Encoding::Gzip);
        }
        assert_eq!(kept(&compress), 3);
        // Static bodies are kept at once; past the bound one goes per one kept.
        let statics: Vec<&'static str> = (0..CACHE_ENTRIES + 50)
            .map(|i| &*format!("{i} {text}").leak())
            .collect();
        for s in &statics {
            let _ = pack(&Body::Static(s.as_bytes()), Encoding::Gzip);
        }
        assert_eq!(kept(&compress), CACHE_ENTRIES);
        let cache = compress.cache();
        let held: usize = cache.forms.values().map(Packed::size).sum();
        assert_eq!(cache.bytes, held);
    }

    #[test]
    fn kept_forms_stay_within_their_bytes() {
        let mut cache = Cache {
            forms: HashMap::default(),
            bytes: 0,
            seen: Box::new([Key(Source::Static(0, 0), Encoding::Gzip); SEEN_SLOTS]),
        };
        let big = Bytes::from(vec![7u8; CACHED_BODY_MAX]);
        for i in 0..2 * CACHE_BYTES / CACHED_BODY_MAX {
            let key = Key(Source::Content(i as u64, big.len()), Encoding::Zstd);
            let form = || Packed {
                from: Some(big.clone()),
                packed: Bytes::from_static(b"packed"),
            };
            cache.keep(key, form());
            cache.keep(key, form());
            assert!(cache.bytes <= CACHE_BYTES, "{}", cache.bytes);
        }
        assert_eq!(cache.forms.len(), CACHE_BYTES / (CACHED_BODY_MAX + 6));
    }

    #[test]
    fn every_coding_round_trips() {
        let data = "the quick brown fox jumps over the lazy dog. ".repeat(100);
        let gz = Encoding::Gzip.encode(data.as_bytes());
        let mut out = String::new();
        std::io::Read::read_to_string(&mut flate2::read::GzDecoder::new(&gz[..]), &mut out)
            .expect("gunzip");
        assert_eq!(out, data);
        let br = Encoding::Brotli.encode(data.as_bytes());
        let mut out = Vec::new();
        brotli::BrotliDecompress(&mut &br[..], &mut out).expect("unbrotli");
        assert_eq!(out, data.as_bytes());
        let zst = Encoding::Zstd.encode(data.as_bytes());
        let out = zstd::bulk::decompress(&zst, data.len()).expect("unzstd");
        assert_eq!(out, data.as_bytes());
        // A content checksum (RFC 8878 frame header, bit 2): a damaged frame
        // fails rather than decoding to other bytes.
        assert_ne!(zst[4] & 0b100, 0, "checksum flag");
        let mut damaged = zst.clone();
        *damaged.last_mut().expect("bytes") ^= 1;
        assert!(zstd::bulk::decompress(&damaged, data.len()).is_err());
        for packed in [gz, br, zst] {
            assert!(packed.len() < data.len() / 10);
        }
    }
}
