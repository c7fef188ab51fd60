//! HTTP/1.1 request heads and chunked bodies: ringwire-http1 against httparse and
//! picohttpparser, and the ring receive path against the classic `BytesMut` + httparse loop.
//!
//! Three comparisons, used by `benches/http1.rs`:
//!
//! - **Parsing a whole buffer** ([`RingwireParser`], [`HttparseParser`], [`PicoParser`]): each
//!   parses a request head that is all there and reports method, target, version and every
//!   header name and value, as slices of the buffer, to a [`Visit`]. The benchmark's visitor,
//!   [`Touch`], passes each through [`black_box`], so nothing can be optimised away. Each parser
//!   keeps what a connection would keep between requests: ringwire its `RequestParser` (whose
//!   field index is reused), picohttpparser its `phr_header` array; httparse parses into an
//!   uninitialized header array on the stack (`parse_with_uninit_headers`, as hyper does), which
//!   costs nothing to set up.
//! - **Receiving** ([`RingRecv`], [`ClassicRecv`]): one request per run, from the [`Chunks`]
//!   fixture (rewound each run) delivering it whole or in pieces. The ring path reads into a
//!   mirrored ring through [`RecvTransport`] and calls [`RequestParser::parse`] after every read,
//!   which resumes where the last call stopped; on `Complete` it consumes the head. The classic
//!   path is how a `BytesMut` + httparse server loop works: `read` into a scratch buffer,
//!   `extend_from_slice` into a reused `BytesMut` (which compacts by `reserve` when its spare
//!   room runs out), and after every read `httparse::Request::parse(&buf[..])` from offset zero,
//!   until `Complete(n)`, then `advance(n)`. Both report the head to [`Touch`] like the parsers.
//!   Each also has a `drain`: the same reads without parsing, to tell the reads' cost from the
//!   parser's.
//! - **Chunked bodies** ([`ringwire_chunked`], [`httparse_chunked`]): a whole chunked body,
//!   decoded from one buffer by slicing off what each step consumed. The httparse peer is the
//!   loop a user of its `parse_chunk_size` writes: size line, slice the data, check the CRLF.
//!
//! Everything here is checked by the tests below: all parsers agree on every input, both
//! receive paths give the same head under every delivery and when reused, and both chunked
//! decoders return exactly the encoded payload.

use std::hint::black_box;
use std::io::Read;
use std::mem::MaybeUninit;

use bytes::{Buf, BytesMut};
use ringwire_http1::{BodyDecoder, BodyKind, Decoded, Limits, Request, RequestParser, Version};
use ringwire_io::{Chunks, RecvTransport, TransportError};
use ringwire_ring::{Backing, Ring, RingConfig};
use ringwire_wire::Status;

use crate::{pico, READ_SIZE};

/// A short HTTP/1.0 request (httparse's `REQ_SHORT` shape; HTTP/1.0 may carry one `Host`).
pub const REQ_SHORT: &[u8] = b"GET / HTTP/1.0\r\n\
Host: example.com\r\n\
Cookie: session=60; user_id=1\r\n\r\n";

/// The TechEmpower plaintext benchmark's request.
pub const REQ_TECHEMPOWER: &[u8] = b"GET /plaintext HTTP/1.1\r\n\
Host: localhost\r\n\
Accept: text/plain,text/html;q=0.9,application/xhtml+xml;q=0.9,application/xml;q=0.8,*/*;q=0.7\r\n\
Connection: keep-alive\r\n\r\n";

/// A browser's image request, about 700 bytes with 11 fields (the shape of httparse's own
/// benchmark request: long user agent, accept lists, a cookie).
pub const REQ_BROWSER: &[u8] = b"GET /wp-content/uploads/2024/03/a-cat-in-a-cardboard-box-looking-surprised.jpg HTTP/1.1\r\n\
Host: www.example-cats.org\r\n\
User-Agent: Mozilla/5.0 (Macintosh; Intel Mac OS X 10.15; rv:125.0) Gecko/20100101 Firefox/125.0\r\n\
Accept: image/avif,image/webp,image/png,image/svg+xml,image/*;q=0.8,*/*;q=0.5\r\n\
Accept-Language: en-GB,en;q=0.7,fr;q=0.3\r\n\
Accept-Encoding: gzip, deflate, br\r\n\
Referer: https://www.example-cats.org/2024/03/cats-and-boxes/\r\n\
Connection: keep-alive\r\n\
Cookie: visits=12; last_visit=1711111111; _pk_id.1.a2b3=0123456789abcdef.1711000000.; _pk_ses.1.a2b3=1; theme=dark; consent=analytics%3Dno%7Cads%3Dno; sid=Zm9vYmFyYmF6cXV4MTIzNDU2Nzg5MA\r\n\
Cache-Control: no-cache\r\n\
Pragma: no-cache\r\n\r\n";

/// A current browser's page navigation, exactly 1 KiB with 18 fields (client hints, fetch
/// metadata, a query string, a cookie).
pub const REQ_1K: &[u8] = b"GET /app/dashboard/projects/4711/issues?state=open&sort=updated&direction=desc&page=2 HTTP/1.1\r\n\
Host: tracker.example.com\r\n\
Connection: keep-alive\r\n\
sec-ch-ua: \"Chromium\";v=\"124\", \"Google Chrome\";v=\"124\", \"Not-A.Brand\";v=\"99\"\r\n\
sec-ch-ua-mobile: ?0\r\n\
sec-ch-ua-platform: \"Linux\"\r\n\
Upgrade-Insecure-Requests: 1\r\n\
User-Agent: Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36\r\n\
Accept: text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,image/apng,*/*;q=0.8,application/signed-exchange;v=b3;q=0.7\r\n\
Sec-Fetch-Site: same-origin\r\n\
Sec-Fetch-Mode: navigate\r\n\
Sec-Fetch-User: ?1\r\n\
Sec-Fetch-Dest: document\r\n\
Referer: https://tracker.example.com/app/dashboard/projects/4711\r\n\
Accept-Encoding: gzip, deflate, br, zstd\r\n\
Accept-Language: en-US,en;q=0.9,de;q=0.8\r\n\
Priority: u=0, i\r\n\
Cookie: _ga=GA1.1.1234567890.1711000000; _ga_ABCDEF1234=GS1.1.1711000000.3.1.1711003600.0.0.0; session=eyJ1c2VyIjo0MiwiZXhwIjoxNzExMDA3MjAwfQ.c2lnbmF0dXJl; csrftoken=q1w2e3r4t5y6u7i8o9p\r\n\r\n";

/// Header slots for httparse and picohttpparser: more than any input here has, as a server
/// would size them (ringwire allows [`Limits::DEFAULT_MAX_HEADERS`]).
pub const HEADER_SLOTS: usize = 32;

/// Receives the parts of a parsed head.
pub trait Visit {
    /// The request line: method, target, and the `x` of `HTTP/1.x`.
    fn line(&mut self, method: &[u8], target: &[u8], minor_version: u8);
    /// One header field, in order.
    fn header(&mut self, name: &[u8], value: &[u8]);
}

/// The benchmarks' visitor: every part goes through [`black_box`], so each parser must
/// produce it and nothing can be optimised away.
#[derive(Debug, Clone, Copy, Default)]
pub struct Touch;

impl Visit for Touch {
    #[inline]
    fn line(&mut self, method: &[u8], target: &[u8], minor_version: u8) {
        black_box(method);
        black_box(target);
        black_box(minor_version);
    }

    #[inline]
    fn header(&mut self, name: &[u8], value: &[u8]) {
        black_box(name);
        black_box(value);
    }
}

/// Reports a ringwire request to `visit`: what an application reads from it.
#[inline]
fn visit_ringwire(request: &Request<'_>, visit: &mut impl Visit) {
    let minor = match request.version() {
        Version::Http10 => 0,
        Version::Http11 => 1,
    };
    visit.line(
        request.method().as_str().as_bytes(),
        request.target().as_bytes(),
        minor,
    );
    for header in request.headers() {
        visit.header(header.name.as_bytes(), header.value);
    }
}

/// Reports an httparse request to `visit`.
#[inline]
fn visit_httparse(request: &httparse::Request<'_, '_>, visit: &mut impl Visit) {
    visit.line(
        request.method.unwrap_or_default().as_bytes(),
        request.path.unwrap_or_default().as_bytes(),
        request.version.unwrap_or_default(),
    );
    for header in request.headers.iter() {
        visit.header(header.name.as_bytes(), header.value);
    }
}

/// ringwire-http1's [`RequestParser`] with default [`Limits`], kept across requests.
#[derive(Debug)]
pub struct RingwireParser {
    parser: RequestParser,
}

impl Default for RingwireParser {
    fn default() -> Self {
        Self {
            parser: RequestParser::new(Limits::default()),
        }
    }
}

impl RingwireParser {
    /// Parses the head at the front of `buf` and reports it to `visit`; returns its length, or
    /// `None` if it is incomplete or invalid.
    #[inline]
    pub fn parse(&mut self, buf: &[u8], visit: &mut impl Visit) -> Option<usize> {
        match self.parser.parse(buf) {
            Ok(Status::Complete(request, len)) => {
                visit_ringwire(&request, visit);
                Some(len)
            }
            Ok(Status::Partial { .. }) | Err(_) => None,
        }
    }
}

/// httparse's `Request`, parsing into [`HEADER_SLOTS`] uninitialized header slots on the stack.
#[derive(Debug, Clone, Copy, Default)]
pub struct HttparseParser;

impl HttparseParser {
    /// Parses the head at the front of `buf` and reports it to `visit`; returns its length, or
    /// `None` if it is incomplete or invalid.
    #[inline]
    pub fn parse(&mut self, buf: &[u8], visit: &mut impl Visit) -> Option<usize> {
        let mut headers = [MaybeUninit::uninit(); HEADER_SLOTS];
        let mut request = httparse::Request::new(&mut []);
        match request.parse_with_uninit_headers(buf, &mut headers) {
            Ok(httparse::Status::Complete(len)) => {
                visit_httparse(&request, visit);
                Some(len)
            }
            Ok(httparse::Status::Partial) | Err(_) => None,
        }
    }
}

/// picohttpparser's `phr_parse_request`, with its header array kept across requests.
#[derive(Debug)]
pub struct PicoParser {
    raw: Vec<picohttpparser_sys::phr_header>,
}

impl Default for PicoParser {
    fn default() -> Self {
        Self {
            raw: pico::raw_headers(HEADER_SLOTS),
        }
    }
}

impl PicoParser {
    /// Parses the head at the front of `buf` and reports it to `visit`; returns its length, or
    /// `None` if it is incomplete or invalid.
    #[inline]
    pub fn parse(&mut self, buf: &[u8], visit: &mut impl Visit) -> Option<usize> {
        // Fields are reported as they are converted, the line after them: the order of the
        // calls is all that differs from the other parsers.
        match pico::parse_request(buf, &mut self.raw, |h| visit.header(h.name, h.value)) {
            pico::Parsed::Complete(request) => {
                visit.line(
                    request.method,
                    request.path,
                    u8::try_from(request.minor_version).unwrap_or_default(),
                );
                Some(request.head_len)
            }
            pico::Parsed::Partial | pico::Parsed::Invalid => None,
        }
    }
}

/// How the request reaches the receiver.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Arrival {
    /// In one read.
    Whole,
    /// In reads of this many bytes.
    Chunked(usize),
}

impl Arrival {
    /// The fixture delivering `request` this way.
    pub fn source(self, request: &[u8]) -> Chunks {
        match self {
            Arrival::Whole => Chunks::new([request]),
            Arrival::Chunked(size) => Chunks::every(request, size),
        }
    }
}

/// Why a receive run failed.
#[derive(Debug)]
pub enum RecvError {
    /// The stream ended before the head did.
    Eof,
    /// The source failed.
    Io(std::io::Error),
    /// The ring could not make room.
    Transport(TransportError),
    /// ringwire refused the head.
    Ringwire(ringwire_http1::Error),
    /// httparse refused the head.
    Httparse(httparse::Error),
}

/// The ring path: [`RecvTransport`] over a mirrored [`READ_SIZE`] ring, [`RequestParser`]
/// after every read. Built once, reused across runs, as a connection would be.
#[derive(Debug)]
pub struct RingRecv {
    transport: RecvTransport<Chunks>,
    parser: RequestParser,
}

impl RingRecv {
    /// A receiver reading from `source`.
    pub fn new(source: Chunks, backing: Backing) -> Result<Self, TransportError> {
        let ring = Ring::new(RingConfig::with_capacity(READ_SIZE).backing(backing))?;
        Ok(Self {
            transport: RecvTransport::with_ring(ring, source),
            parser: RequestParser::new(Limits::default()),
        })
    }

    /// Rewinds the source, receives one request head and reports it to `visit`; returns the
    /// head's length, which has been consumed from the ring.
    #[inline]
    pub fn run(&mut self, visit: &mut impl Visit) -> Result<usize, RecvError> {
        self.transport.get_mut().rewind();
        let mut at_least = 1;
        loop {
            if self
                .transport
                .fill(at_least)
                .map_err(RecvError::Transport)?
                == 0
            {
                return Err(RecvError::Eof);
            }
            match self.parser.parse(self.transport.data()) {
                Ok(Status::Complete(request, len)) => {
                    visit_ringwire(&request, visit);
                    self.transport.consume(len);
                    return Ok(len);
                }
                Ok(Status::Partial { at_least: more }) => at_least = more,
                Err(e) => return Err(RecvError::Ringwire(e)),
            }
        }
    }

    /// Rewinds the source and receives its first `len` bytes without parsing (dropping each
    /// read at once): with `len` the head's length, the same reads [`run`](Self::run) makes,
    /// and so their cost alone. Returns the number of `read` calls.
    pub fn drain(&mut self, len: usize) -> Result<usize, RecvError> {
        self.transport.get_mut().rewind();
        let (mut reads, mut received) = (0, 0);
        while received < len {
            reads += 1;
            let n = self.transport.fill(1).map_err(RecvError::Transport)?;
            if n == 0 {
                return Err(RecvError::Eof);
            }
            received += n;
            self.transport.consume(n);
        }
        Ok(reads)
    }
}

/// The classic path: `read` into a [`READ_SIZE`] scratch buffer, append to a `BytesMut`,
/// re-parse from offset zero with httparse after every read, `advance` past a complete head.
#[derive(Debug)]
pub struct ClassicRecv {
    source: Chunks,
    buf: BytesMut,
    scratch: Box<[u8]>,
}

impl ClassicRecv {
    /// A receiver reading from `source`, its buffers allocated once.
    pub fn new(source: Chunks) -> Self {
        Self {
            source,
            buf: BytesMut::with_capacity(READ_SIZE),
            scratch: vec![0; READ_SIZE].into_boxed_slice(),
        }
    }

    /// Rewinds the source, receives one request head and reports it to `visit`; returns the
    /// head's length, which has been `advance`d past.
    #[inline]
    pub fn run(&mut self, visit: &mut impl Visit) -> Result<usize, RecvError> {
        self.source.rewind();
        self.buf.clear();
        loop {
            let n = self.source.read(&mut self.scratch).map_err(RecvError::Io)?;
            if n == 0 {
                return Err(RecvError::Eof);
            }
            // Reserves (moving unread bytes to the front of the allocation, or growing it)
            // when the spare room runs out.
            self.buf.extend_from_slice(&self.scratch[..n]);
            let mut headers = [MaybeUninit::uninit(); HEADER_SLOTS];
            let mut request = httparse::Request::new(&mut []);
            match request.parse_with_uninit_headers(&self.buf, &mut headers) {
                Ok(httparse::Status::Complete(len)) => {
                    visit_httparse(&request, visit);
                    self.buf.advance(len);
                    return Ok(len);
                }
                Ok(httparse::Status::Partial) => {}
                Err(e) => return Err(RecvError::Httparse(e)),
            }
        }
    }

    /// Rewinds the source and receives its first `len` bytes without parsing (appending each
    /// read, then dropping it): with `len` the head's length, the same reads and appends
    /// [`run`](Self::run) makes, and so their cost alone. Returns the number of `read` calls.
    pub fn drain(&mut self, len: usize) -> Result<usize, RecvError> {
        self.source.rewind();
        self.buf.clear();
        let (mut reads, mut received) = (0, 0);
        while received < len {
            reads += 1;
            let n = self.source.read(&mut self.scratch).map_err(RecvError::Io)?;
            if n == 0 {
                return Err(RecvError::Eof);
            }
            received += n;
            self.buf.extend_from_slice(&self.scratch[..n]);
            self.buf.advance(n);
        }
        Ok(reads)
    }
}

/// A chunked body of `payload_len` bytes in chunks of `chunk_len` (the last may be shorter),
/// then the last chunk and an empty trailer section. The payload bytes are distinct, so a
/// decoder that mixed them up would fail the tests.
pub fn chunked_body(payload_len: usize, chunk_len: usize) -> Vec<u8> {
    assert!(chunk_len > 0, "chunks are not empty");
    let payload = payload(payload_len);
    let mut out = Vec::with_capacity(payload_len + payload_len.div_ceil(chunk_len) * 12 + 5);
    for chunk in payload.chunks(chunk_len) {
        out.extend_from_slice(format!("{:x}\r\n", chunk.len()).as_bytes());
        out.extend_from_slice(chunk);
        out.extend_from_slice(b"\r\n");
    }
    out.extend_from_slice(b"0\r\n\r\n");
    out
}

/// The payload [`chunked_body`] encodes.
pub fn payload(len: usize) -> Vec<u8> {
    (0..len).map(|i| b'a' + (i % 26) as u8).collect()
}

/// Decodes the whole chunked `body` with ringwire's [`BodyDecoder`], handing each piece of
/// payload to `on_data`; returns the bytes consumed (all of `body` when it is one message).
#[inline]
pub fn ringwire_chunked(
    body: &[u8],
    limits: &Limits,
    mut on_data: impl FnMut(&[u8]),
) -> Result<usize, ringwire_http1::Error> {
    let mut decoder = BodyDecoder::new(BodyKind::Chunked, limits);
    let mut at = 0;
    loop {
        match decoder.decode(&body[at..])? {
            Decoded::Data { data, consumed } => {
                on_data(data);
                at += consumed;
            }
            Decoded::Partial { consumed } => {
                if consumed == 0 {
                    return Err(ringwire_http1::Error::UnexpectedEof);
                }
                at += consumed;
            }
            Decoded::Done { consumed, .. } => return Ok(at + consumed),
        }
    }
}

/// Decodes the whole chunked `body` the way a user of httparse's `parse_chunk_size` does:
/// parse the size line, slice the data, check the CRLF after it; after the last chunk, expect
/// an empty trailer section. Returns the bytes consumed, or `None` on bad or cut framing.
#[inline]
pub fn httparse_chunked(body: &[u8], mut on_data: impl FnMut(&[u8])) -> Option<usize> {
    let mut at = 0;
    loop {
        let (start, size) = match httparse::parse_chunk_size(&body[at..]) {
            Ok(httparse::Status::Complete(found)) => found,
            _ => return None,
        };
        let start = at + start;
        if size == 0 {
            return (body.get(start..start + 2)? == b"\r\n").then_some(start + 2);
        }
        let end = start.checked_add(usize::try_from(size).ok()?)?;
        on_data(body.get(start..end)?);
        if body.get(end..end + 2)? != b"\r\n" {
            return None;
        }
        at = end + 2;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Collects what a parser reports, to compare parsers.
    #[derive(Debug, Default, PartialEq, Eq)]
    struct Collect {
        line: Option<(Vec<u8>, Vec<u8>, u8)>,
        headers: Vec<(Vec<u8>, Vec<u8>)>,
    }

    impl Visit for Collect {
        fn line(&mut self, method: &[u8], target: &[u8], minor_version: u8) {
            assert!(self.line.is_none(), "one line per head");
            self.line = Some((method.to_vec(), target.to_vec(), minor_version));
        }

        fn header(&mut self, name: &[u8], value: &[u8]) {
            self.headers.push((name.to_vec(), value.to_vec()));
        }
    }

    const INPUTS: [&[u8]; 4] = [REQ_SHORT, REQ_TECHEMPOWER, REQ_BROWSER, REQ_1K];

    #[test]
    fn inputs_have_the_advertised_sizes() {
        assert_eq!(REQ_SHORT.len(), 68);
        assert_eq!(REQ_TECHEMPOWER.len(), 164);
        assert!(
            (650..=750).contains(&REQ_BROWSER.len()),
            "{}",
            REQ_BROWSER.len()
        );
        assert_eq!(REQ_1K.len(), 1024);
    }

    #[test]
    fn all_parsers_agree() {
        for input in INPUTS {
            let mut seen = Vec::new();
            let mut ringwire = RingwireParser::default();
            for _ in 0..2 {
                let mut c = Collect::default();
                assert_eq!(ringwire.parse(input, &mut c), Some(input.len()));
                seen.push(c);
            }
            let mut c = Collect::default();
            assert_eq!(HttparseParser.parse(input, &mut c), Some(input.len()));
            seen.push(c);
            let mut pico = PicoParser::default();
            for _ in 0..2 {
                let mut c = Collect::default();
                assert_eq!(pico.parse(input, &mut c), Some(input.len()));
                seen.push(c);
            }
            assert!(seen[0].headers.len() >= 2);
            for other in &seen[1..] {
                assert_eq!(other, &seen[0], "{}", String::from_utf8_lossy(input));
            }
        }
    }

    #[test]
    fn parsers_say_incomplete_on_a_cut_head() {
        for input in INPUTS {
            let cut = &input[..input.len() - 1];
            assert_eq!(RingwireParser::default().parse(cut, &mut Touch), None);
            assert_eq!(HttparseParser.parse(cut, &mut Touch), None);
            assert_eq!(PicoParser::default().parse(cut, &mut Touch), None);
        }
    }

    #[test]
    fn receive_paths_agree_under_every_arrival() {
        for input in INPUTS {
            let mut expected = Collect::default();
            RingwireParser::default().parse(input, &mut expected);
            for arrival in [
                Arrival::Whole,
                Arrival::Chunked(64),
                Arrival::Chunked(4),
                Arrival::Chunked(1),
            ] {
                for backing in [Backing::Auto, Backing::Heap] {
                    let mut ring = RingRecv::new(arrival.source(input), backing).unwrap();
                    // Enough runs to wrap the 64 KiB ring.
                    for _ in 0..(2 * READ_SIZE / input.len() + 2) {
                        let mut c = Collect::default();
                        assert_eq!(ring.run(&mut c).unwrap(), input.len());
                        assert_eq!(c, expected, "{arrival:?} {backing:?}");
                        assert!(ring.transport.data().is_empty());
                    }
                }
                let mut classic = ClassicRecv::new(arrival.source(input));
                for _ in 0..(2 * READ_SIZE / input.len() + 2) {
                    let mut c = Collect::default();
                    assert_eq!(classic.run(&mut c).unwrap(), input.len());
                    assert_eq!(c, expected, "{arrival:?}");
                    assert!(classic.buf.is_empty());
                }
                let reads = match arrival {
                    Arrival::Whole => 1,
                    Arrival::Chunked(size) => input.len().div_ceil(size),
                };
                let mut ring = RingRecv::new(arrival.source(input), Backing::Auto).unwrap();
                for _ in 0..2 {
                    assert_eq!(ring.drain(input.len()).unwrap(), reads);
                    assert_eq!(classic.drain(input.len()).unwrap(), reads);
                }
            }
        }
    }

    #[test]
    fn receive_paths_fail_on_a_cut_head() {
        let cut = &REQ_1K[..REQ_1K.len() - 1];
        let mut ring = RingRecv::new(Chunks::every(cut, 4), Backing::Auto).unwrap();
        assert!(matches!(ring.run(&mut Touch), Err(RecvError::Eof)));
        let mut classic = ClassicRecv::new(Chunks::every(cut, 4));
        assert!(matches!(classic.run(&mut Touch), Err(RecvError::Eof)));
    }

    #[test]
    fn chunked_decoders_return_the_payload() {
        for (len, chunk) in [(0, 1), (1, 1), (100, 1), (100, 7), (1 << 20, 16 << 10)] {
            let body = chunked_body(len, chunk);
            let expected = payload(len);
            let mut got = Vec::new();
            let n = ringwire_chunked(&body, &Limits::default(), |d| got.extend_from_slice(d));
            assert_eq!(n.unwrap(), body.len());
            assert_eq!(got, expected);
            got.clear();
            let n = httparse_chunked(&body, |d| got.extend_from_slice(d));
            assert_eq!(n, Some(body.len()));
            assert_eq!(got, expected);
            // Cut framing is an error on both.
            let cut = &body[..body.len() - 1];
            assert!(ringwire_chunked(cut, &Limits::default(), |_| {}).is_err());
            assert_eq!(httparse_chunked(cut, |_| {}), None);
        }
    }
}
