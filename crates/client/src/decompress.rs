//! Content codings undone as a body is read (RFC 9110 section 8.4.1):
//! gzip, deflate, brotli and zstd, sans-IO, for both drivers.
//!
//! The compressed bytes are read in place in the receive ring like any
//! body; the decoded bytes are written into one buffer per response, which
//! every piece handed out reuses.

use std::fmt;

use brotli_decompressor::{BrotliDecompressStream, BrotliResult, BrotliState, StandardAlloc};
use flate2::{Decompress, FlushDecompress, Status};
use ringwire_http1::{BodyKind, Response};
use zstd::zstd_safe::{DCtx, DParameter, InBuffer, OutBuffer};

use crate::Error;

/// Decoded bytes handed out at most per piece: two deflate windows' worth. zlib copies
/// the last 32 KiB of each call's output into its window, so a 32 KiB piece doubled the
/// copying; with 64 KiB a 0.7 MB gzip body decodes as fast as into one growing buffer.
const PIECE_LEN: usize = 64 << 10;

/// What a request that asks for decompression offers, in `accept-encoding`.
pub(crate) const ACCEPTED: &str = "gzip, deflate, br, zstd";

/// The largest zstd window decoded: 8 MiB, what RFC 9659 allows a content
/// coding (a frame asking for more would make the decoder allocate it).
const ZSTD_WINDOW_LOG_MAX: u32 = 23;

/// A content coding the client undoes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Encoding {
    /// `gzip`, or its old alias `x-gzip` (RFC 1952); members that follow
    /// one another are decoded one after another.
    Gzip,
    /// `deflate`: a zlib stream (RFC 1950), or bare deflate data (RFC 1951),
    /// which some servers send and browsers accept; the first two bytes
    /// tell them apart.
    Deflate,
    /// `br` (RFC 7932).
    Brotli,
    /// `zstd` (RFC 8878), its window at most 8 MiB (RFC 9659); frames that
    /// follow one another are decoded one after another.
    Zstd,
}

impl Encoding {
    /// The token `content-encoding` names it by.
    #[must_use]
    pub fn token(self) -> &'static str {
        match self {
            Encoding::Gzip => "gzip",
            Encoding::Deflate => "deflate",
            Encoding::Brotli => "br",
            Encoding::Zstd => "zstd",
        }
    }

    /// The one coding `head`'s `content-encoding` fields name, if the client
    /// undoes it: `None` without one (or with only `identity`), for one it
    /// does not know, and for several stacked (`gzip, br`), which are left
    /// for the caller.
    fn of(head: &Response<'_>) -> Option<Encoding> {
        let mut codings = head
            .headers()
            .get_all("content-encoding")
            .flat_map(|value| value.split(|&b| b == b','))
            .map(<[u8]>::trim_ascii)
            .filter(|token| !token.is_empty() && !token.eq_ignore_ascii_case(b"identity"));
        let coding = codings.next()?;
        if codings.next().is_some() {
            return None;
        }
        [
            (&b"gzip"[..], Encoding::Gzip),
            (b"x-gzip", Encoding::Gzip),
            (b"deflate", Encoding::Deflate),
            (b"br", Encoding::Brotli),
            (b"zstd", Encoding::Zstd),
        ]
        .into_iter()
        .find(|(token, _)| coding.eq_ignore_ascii_case(token))
        .map(|(_, encoding)| encoding)
    }
}

impl fmt::Display for Encoding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.token())
    }
}

/// What is wrong with a compressed body that could not be decoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Corruption {
    /// Bytes that are not valid compressed data, or a checksum that does
    /// not match.
    Invalid,
    /// The body ended before the compressed data did.
    Truncated,
    /// Bytes follow the end of the compressed data.
    TrailingBytes,
}

impl fmt::Display for Corruption {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Corruption::Invalid => "is not valid compressed data",
            Corruption::Truncated => "ends before its compressed data does",
            Corruption::TrailingBytes => "has bytes after the end of its compressed data",
        })
    }
}

/// Undoes one response body's content coding, a piece of the body at a
/// time, sans-IO: what the client runs for a request that asked
/// ([`HeaderBuilder::decompress`](crate::HeaderBuilder::decompress)), and
/// usable on its own.
pub struct Decoder {
    encoding: Encoding,
    codec: Codec,
    /// The decoded bytes of the last [`feed`](Self::feed), at its front.
    out: Box<[u8]>,
    len: usize,
    /// Decoded bytes so far, and the most allowed.
    total: u64,
    limit: u64,
    /// Whether any compressed byte came: an empty body is not cut short.
    started: bool,
    /// Whether the compressed data ended (the last gzip member, so far).
    ended: bool,
}

enum Codec {
    /// `deflate` until its first two bytes (holding the first, if it came
    /// alone): a zlib header, or bare deflate data?
    Sniffing(Option<u8>),
    Flate(Decompress),
    Brotli(Box<BrotliState<StandardAlloc, StandardAlloc, StandardAlloc>>),
    Zstd(DCtx<'static>),
}

impl fmt::Debug for Decoder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Decoder")
            .field("encoding", &self.encoding)
            .field("total", &self.total)
            .field("limit", &self.limit)
            .field("ended", &self.ended)
            .finish_non_exhaustive()
    }
}

/// One codec call: input bytes used, output bytes made, and whether the
/// compressed data ended.
type Step = (usize, usize, bool);

impl Decoder {
    /// A decoder for the body of `head`, decoding at most `limit` bytes;
    /// `None` when there is nothing to undo: no coding the client knows,
    /// no body (HEAD, `204`, `304`), or a `206`, whose range is of the
    /// encoded bytes and cannot be decoded on its own.
    pub(crate) fn for_response(head: &Response<'_>, limit: u64) -> Option<Decoder> {
        if head.status() == 206 || matches!(head.body(), BodyKind::Empty | BodyKind::Length(0)) {
            return None;
        }
        Some(Decoder::new(Encoding::of(head)?, limit))
    }

    /// A decoder of `encoding`, decoding at most `limit` bytes.
    #[must_use]
    pub fn new(encoding: Encoding, limit: u64) -> Decoder {
        let codec = match encoding {
            Encoding::Gzip => Codec::Flate(Decompress::new_gzip(15)),
            Encoding::Deflate => Codec::Sniffing(None),
            Encoding::Brotli => Codec::Brotli(Box::new(BrotliState::new(
                StandardAlloc::default(),
                StandardAlloc::default(),
                StandardAlloc::default(),
            ))),
            Encoding::Zstd => {
                let mut context = DCtx::create();
                // In range, so it cannot fail.
                let _ = context.set_parameter(DParameter::WindowLogMax(ZSTD_WINDOW_LOG_MAX));
                Codec::Zstd(context)
            }
        };
        Decoder {
            encoding,
            codec,
            out: vec![0; PIECE_LEN].into_boxed_slice(),
            len: 0,
            total: 0,
            limit,
            started: false,
            ended: false,
        }
    }

    /// The coding undone.
    #[must_use]
    pub fn encoding(&self) -> Encoding {
        self.encoding
    }

    /// The bytes the last [`feed`](Self::feed) decoded.
    #[must_use]
    pub fn output(&self) -> &[u8] {
        &self.out[..self.len]
    }

    /// Decodes from `input`, as much as the output buffer holds. `None`
    /// when all of `input` is used; `Some(used)` when the buffer filled
    /// first: the rest, from `used` (even none of it: the codec may hold
    /// more output), goes to the next call, before any new input.
    ///
    /// # Errors
    ///
    /// [`Error::Decompress`] for data that is not of this coding, and
    /// [`Error::DecodedBodyTooLarge`] past the limit.
    pub fn feed(&mut self, input: &[u8]) -> Result<Option<usize>, Error> {
        self.len = 0;
        self.started |= !input.is_empty();
        let mut used = 0;
        while self.len < self.out.len() {
            let rest = &input[used..];
            if self.ended {
                if rest.is_empty() {
                    break;
                }
                self.next_member()?;
            }
            let (n, made, ended) = self.step(rest).map_err(|c| self.corrupt(c))?;
            used += n;
            self.len += made;
            self.ended = ended;
            if n == 0 && made == 0 && !ended {
                break;
            }
        }
        self.total += self.len as u64;
        if self.total > self.limit {
            return Err(Error::DecodedBodyTooLarge { limit: self.limit });
        }
        if used == input.len() && self.len < self.out.len() {
            return Ok(None);
        }
        if self.len < self.out.len() {
            // Room for output and input to use, yet no progress: a codec
            // that can go no further on data it was given.
            return Err(self.corrupt(Corruption::Invalid));
        }
        Ok(Some(used))
    }

    /// The body's framing ended: the compressed data must have too.
    ///
    /// # Errors
    ///
    /// [`Error::Decompress`] with [`Corruption::Truncated`].
    pub fn finish(&self) -> Result<(), Error> {
        if self.ended || !self.started {
            Ok(())
        } else {
            Err(self.corrupt(Corruption::Truncated))
        }
    }

    /// Bytes after the end: another gzip member (RFC 1952 section 2.2) or
    /// zstd frame (RFC 8878 section 3), or for the other codings, an error.
    fn next_member(&mut self) -> Result<(), Error> {
        match &mut self.codec {
            Codec::Flate(inflate) if self.encoding == Encoding::Gzip => {
                inflate.reset(true);
                self.ended = false;
                Ok(())
            }
            // A context that finished a frame starts the next by itself.
            Codec::Zstd(_) => {
                self.ended = false;
                Ok(())
            }
            _ => Err(self.corrupt(Corruption::TrailingBytes)),
        }
    }

    /// One call into the codec, decoding `input` into the free part of the
    /// output buffer.
    fn step(&mut self, input: &[u8]) -> Result<Step, Corruption> {
        let out = &mut self.out[self.len..];
        match &mut self.codec {
            Codec::Sniffing(held) => {
                let (mut inflate, made) = match (*held, input) {
                    (_, []) => return Ok((0, 0, false)),
                    (None, [first]) => {
                        *held = Some(*first);
                        return Ok((1, 0, false));
                    }
                    (None, [first, second, ..]) => (sniffed(*first, *second), 0),
                    (Some(first), [second, ..]) => {
                        // The held byte goes first: it starts the header or the data.
                        let mut inflate = sniffed(first, *second);
                        let (_, made, _) = flate(&mut inflate, &[first], out)?;
                        (inflate, made)
                    }
                };
                let (used, more, ended) = flate(&mut inflate, input, &mut out[made..])?;
                self.codec = Codec::Flate(inflate);
                Ok((used, made + more, ended))
            }
            Codec::Flate(inflate) => flate(inflate, input, out),
            Codec::Brotli(state) => brotli(state, input, out),
            Codec::Zstd(context) => zstd(context, input, out),
        }
    }

    fn corrupt(&self, corruption: Corruption) -> Error {
        Error::Decompress {
            encoding: self.encoding,
            corruption,
        }
    }
}

/// An inflater for `deflate` data that starts with `first` and `second`:
/// zlib-wrapped when they are a zlib header (compression method 8, a
/// window of at most 32 KiB, the check bits right), bare deflate data
/// otherwise, as browsers tell them apart.
fn sniffed(first: u8, second: u8) -> Decompress {
    let zlib =
        first & 0x0f == 8 && first >> 4 <= 7 && u16::from_be_bytes([first, second]) % 31 == 0;
    Decompress::new(zlib)
}

fn flate(inflate: &mut Decompress, input: &[u8], out: &mut [u8]) -> Result<Step, Corruption> {
    let (before_in, before_out) = (inflate.total_in(), inflate.total_out());
    let status = inflate
        .decompress(input, out, FlushDecompress::None)
        .map_err(|_| Corruption::Invalid)?;
    // Both deltas are bounded by the slices' lengths.
    let used = (inflate.total_in() - before_in) as usize;
    let made = (inflate.total_out() - before_out) as usize;
    Ok((used, made, status == Status::StreamEnd))
}

fn brotli(
    state: &mut BrotliState<StandardAlloc, StandardAlloc, StandardAlloc>,
    input: &[u8],
    out: &mut [u8],
) -> Result<Step, Corruption> {
    let (mut available_in, mut used) = (input.len(), 0);
    let (mut available_out, mut made, mut total) = (out.len(), 0, 0);
    let result = BrotliDecompressStream(
        &mut available_in,
        &mut used,
        input,
        &mut available_out,
        &mut made,
        out,
        &mut total,
        state,
    );
    match result {
        BrotliResult::ResultFailure => Err(Corruption::Invalid),
        BrotliResult::ResultSuccess => Ok((used, made, true)),
        BrotliResult::NeedsMoreInput | BrotliResult::NeedsMoreOutput => Ok((used, made, false)),
    }
}

fn zstd(context: &mut DCtx<'static>, input: &[u8], out: &mut [u8]) -> Result<Step, Corruption> {
    let mut input = InBuffer::around(input);
    let mut out = OutBuffer::around(out);
    // Past the window bound, too: such a frame is refused as invalid.
    let hint = context
        .decompress_stream(&mut out, &mut input)
        .map_err(|_| Corruption::Invalid)?;
    // 0: a frame ended and all of it was handed out.
    Ok((input.pos(), out.pos(), hint == 0))
}

#[cfg(test)]
mod tests {
    use std::io::Write as _;

    use flate2::write::{DeflateEncoder, GzEncoder, ZlibEncoder};
    use flate2::Compression;
    use ringwire_http1::{Limits, Method, ResponseParser, Status};

    use super::*;

    fn gzip(data: &[u8]) -> Vec<u8> {
        let mut gz = GzEncoder::new(Vec::new(), Compression::default());
        gz.write_all(data).unwrap();
        gz.finish().unwrap()
    }

    fn zlib(data: &[u8]) -> Vec<u8> {
        let mut z = ZlibEncoder::new(Vec::new(), Compression::default());
        z.write_all(data).unwrap();
        z.finish().unwrap()
    }

    fn raw_deflate(data: &[u8]) -> Vec<u8> {
        let mut d = DeflateEncoder::new(Vec::new(), Compression::default());
        d.write_all(data).unwrap();
        d.finish().unwrap()
    }

    fn brotli(data: &[u8]) -> Vec<u8> {
        let mut br = ::brotli::CompressorWriter::new(Vec::new(), 4096, 5, 22);
        br.write_all(data).unwrap();
        br.into_inner()
    }

    fn zstd(data: &[u8]) -> Vec<u8> {
        ::zstd::bulk::compress(data, 3).unwrap()
    }

    /// A decoder for a `200` with these head lines, if one is made.
    fn decoder_for(fields: &str, limit: u64) -> Option<Decoder> {
        let head = format!("HTTP/1.1 200 OK\r\n{fields}content-length: 10\r\n\r\n");
        let mut parser = ResponseParser::new(Limits::default());
        let Ok(Status::Complete(head, _)) = parser.parse(head.as_bytes(), Method::Get) else {
            panic!("head");
        };
        Decoder::for_response(&head, limit)
    }

    fn decoder(encoding: &str) -> Decoder {
        decoder_for(&format!("content-encoding: {encoding}\r\n"), u64::MAX).unwrap()
    }

    /// Feeds `body` in pieces of `piece` bytes, as the ring would hand
    /// them out: each piece again from where the decoder stopped.
    fn decode(decoder: &mut Decoder, body: &[u8], piece: usize) -> Result<Vec<u8>, Error> {
        let mut out = Vec::new();
        for mut input in body.chunks(piece) {
            while let Some(used) = decoder.feed(input)? {
                out.extend_from_slice(decoder.output());
                input = &input[used..];
            }
            out.extend_from_slice(decoder.output());
        }
        decoder.finish()?;
        Ok(out)
    }

    /// Text that compresses well, longer than a piece of output.
    fn text() -> Vec<u8> {
        (0..40_000)
            .flat_map(|n| format!("line {n}\n").into_bytes())
            .collect()
    }

    #[test]
    fn each_coding_decodes_whatever_the_pieces() {
        let text = text();
        assert!(text.len() > 4 * PIECE_LEN);
        let cases = [
            ("gzip", gzip(&text)),
            ("x-gzip", gzip(&text)),
            ("deflate", zlib(&text)),
            ("deflate", raw_deflate(&text)),
            ("br", brotli(&text)),
            ("zstd", zstd(&text)),
        ];
        for (encoding, body) in cases {
            for piece in [1, 2, 7, 4096, body.len()] {
                let decoded = decode(&mut decoder(encoding), &body, piece).unwrap();
                assert!(decoded == text, "{encoding} in pieces of {piece}");
            }
        }
    }

    #[test]
    fn gzip_members_and_zstd_frames_follow_one_another() {
        let body = [gzip(b"first "), gzip(b"second")].concat();
        let decoded = decode(&mut decoder("gzip"), &body, 5).unwrap();
        assert_eq!(decoded, b"first second");
        let body = [zstd(b"first "), zstd(b"second")].concat();
        let decoded = decode(&mut decoder("zstd"), &body, 5).unwrap();
        assert_eq!(decoded, b"first second");
    }

    #[test]
    fn a_zstd_window_past_8_mib_is_refused() {
        use ::zstd::zstd_safe::CParameter;
        // Unknown content size, so the frame header states its window.
        let frame = |window_log: u32| {
            let mut encoder = ::zstd::stream::Encoder::new(Vec::new(), 3).unwrap();
            encoder
                .set_parameter(CParameter::WindowLog(window_log))
                .unwrap();
            encoder.include_contentsize(false).unwrap();
            encoder.write_all(&text()).unwrap();
            encoder.finish().unwrap()
        };
        let decoded = decode(&mut decoder("zstd"), &frame(23), 4096).unwrap();
        assert_eq!(decoded, text());
        match decode(&mut decoder("zstd"), &frame(24), 4096) {
            Err(Error::Decompress { corruption, .. }) => {
                assert_eq!(corruption, Corruption::Invalid);
            }
            other => panic!("a 16 MiB window decoded: {other:?}"),
        }
    }

    #[test]
    fn which_codings_are_undone() {
        let one = |fields: &str| decoder_for(fields, 1).map(|d| d.encoding());
        assert_eq!(one("content-encoding: GZIP\r\n"), Some(Encoding::Gzip));
        assert_eq!(one("Content-Encoding:  br \r\n"), Some(Encoding::Brotli));
        assert_eq!(
            one("content-encoding: identity, deflate\r\n"),
            Some(Encoding::Deflate)
        );
        // None, unknown, or stacked (in one field or two): left as they are.
        assert_eq!(one(""), None);
        assert_eq!(one("content-encoding: identity\r\n"), None);
        assert_eq!(one("content-encoding: ZSTD\r\n"), Some(Encoding::Zstd));
        assert_eq!(one("content-encoding: compress\r\n"), None);
        assert_eq!(one("content-encoding: gzip, br\r\n"), None);
        assert_eq!(
            one("content-encoding: gzip\r\ncontent-encoding: gzip\r\n"),
            None
        );
    }

    #[test]
    fn corrupt_cut_or_trailing_data_is_an_error() {
        let text = text();
        let corruption =
            |encoding: &str, body: &[u8]| match decode(&mut decoder(encoding), body, 100) {
                Err(Error::Decompress {
                    corruption,
                    encoding: e,
                }) => {
                    assert_eq!(e.token(), encoding);
                    corruption
                }
                other => panic!("{encoding}: {:?}", other.map(|out| out.len())),
            };
        let mut flipped = gzip(&text);
        let middle = flipped.len() / 2;
        flipped[middle] ^= 0xff;
        assert_eq!(corruption("gzip", &flipped), Corruption::Invalid);
        assert_eq!(corruption("gzip", b"not gzip at all"), Corruption::Invalid);
        assert_eq!(
            corruption("br", b"\xff\xff\xff not brotli"),
            Corruption::Invalid
        );
        // A wrong CRC-32 in the trailer.
        let mut checked = gzip(b"checked");
        let crc = checked.len() - 8;
        checked[crc] ^= 1;
        assert_eq!(corruption("gzip", &checked), Corruption::Invalid);

        for (encoding, body) in [
            ("gzip", gzip(&text)),
            ("deflate", zlib(&text)),
            ("br", brotli(&text)),
            ("zstd", zstd(&text)),
        ] {
            let cut = &body[..body.len() - 10];
            assert_eq!(
                corruption(encoding, cut),
                Corruption::Truncated,
                "{encoding}"
            );
        }
        let trailing = [zlib(b"done"), b"more".to_vec()].concat();
        assert_eq!(corruption("deflate", &trailing), Corruption::TrailingBytes);
        let trailing = [brotli(b"done"), b"more".to_vec()].concat();
        assert_eq!(corruption("br", &trailing), Corruption::TrailingBytes);
        // After a zstd frame, bytes that do not start another are invalid.
        let trailing = [zstd(b"done"), b"more".to_vec()].concat();
        assert_eq!(corruption("zstd", &trailing), Corruption::Invalid);
        // Without a content checksum (as servers send it) zstd cannot tell every flipped
        // byte; a frame that does not start as one, it can.
        let mut flipped = zstd(&text);
        flipped[0] ^= 0xff;
        assert_eq!(corruption("zstd", &flipped), Corruption::Invalid);
    }

    #[test]
    fn an_empty_body_is_empty() {
        for encoding in ["gzip", "deflate", "br", "zstd"] {
            assert_eq!(decode(&mut decoder(encoding), b"", 1).unwrap(), b"");
        }
    }

    #[test]
    fn decoding_stops_at_the_limit() {
        let bomb = gzip(&vec![0; 10 << 20]);
        assert!(bomb.len() < 20 << 10, "{}", bomb.len());
        let mut capped = decoder_for("content-encoding: gzip\r\n", 1 << 20).unwrap();
        let mut handed_out = 0;
        let mut input = &bomb[..];
        let error = loop {
            match capped.feed(input) {
                Ok(Some(used)) => input = &input[used..],
                Ok(None) => panic!("decoded past the limit"),
                Err(e) => break e,
            }
            handed_out += capped.output().len();
        };
        assert!(matches!(error, Error::DecodedBodyTooLarge { limit } if limit == 1 << 20));
        assert!(handed_out <= 1 << 20);
        // Exactly the limit is fine.
        let exact = gzip(&vec![0; 1 << 20]);
        let mut exact_decoder = decoder_for("content-encoding: gzip\r\n", 1 << 20).unwrap();
        assert_eq!(
            decode(&mut exact_decoder, &exact, 1000).unwrap().len(),
            1 << 20
        );
    }

    #[test]
    fn no_decoder_without_a_body_or_for_a_range() {
        let parse = |head: &str, method: Method<'_>| {
            let mut parser = ResponseParser::new(Limits::default());
            let Ok(Status::Complete(head, _)) = parser.parse(head.as_bytes(), method) else {
                panic!("head");
            };
            Decoder::for_response(&head, u64::MAX).is_some()
        };
        let gzip_200 = "HTTP/1.1 200 OK\r\ncontent-encoding: gzip\r\ncontent-length: 9\r\n\r\n";
        assert!(parse(gzip_200, Method::Get));
        assert!(!parse(gzip_200, Method::Head));
        for status in ["204 No Content", "304 Not Modified"] {
            let head = format!("HTTP/1.1 {status}\r\ncontent-encoding: gzip\r\n\r\n");
            assert!(!parse(&head, Method::Get), "{status}");
        }
        let range =
            "HTTP/1.1 206 Partial Content\r\ncontent-encoding: gzip\r\ncontent-length: 9\r\n\r\n";
        assert!(!parse(range, Method::Get));
    }
}
