//! The four codecs a batch's attributes can name, decoded with a bound on the output.

use std::cell::RefCell;
use std::fmt;
use std::io::{Read, Write};

use ringwire_wire::{Limit, LimitExceeded};

use crate::{DecodeError, EncodeError};

/// Compression codec (attribute bits 0..2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Compression {
    /// Uncompressed: records are slices of the receive buffer.
    None,
    /// gzip (deflate with a gzip member header).
    Gzip,
    /// Snappy: raw blocks, or the xerial framing Java producers write.
    Snappy,
    /// LZ4 frame format.
    Lz4,
    /// Zstandard.
    Zstd,
}

impl Compression {
    /// Every codec, for tests and benchmarks that cover them all.
    pub const ALL: [Compression; 5] = [
        Compression::None,
        Compression::Gzip,
        Compression::Snappy,
        Compression::Lz4,
        Compression::Zstd,
    ];

    /// The attribute bits.
    #[must_use]
    pub fn bits(self) -> u8 {
        match self {
            Compression::None => 0,
            Compression::Gzip => 1,
            Compression::Snappy => 2,
            Compression::Lz4 => 3,
            Compression::Zstd => 4,
        }
    }

    /// The codec for attribute bits 0..2.
    pub fn from_bits(bits: u8) -> Result<Self, DecodeError> {
        Compression::ALL
            .into_iter()
            .find(|c| c.bits() == bits)
            .ok_or(DecodeError::UnknownCompression(bits))
    }
}

impl fmt::Display for Compression {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Compression::None => "none",
            Compression::Gzip => "gzip",
            Compression::Snappy => "snappy",
            Compression::Lz4 => "lz4",
            Compression::Zstd => "zstd",
        })
    }
}

/// Magic of the xerial snappy stream (snappy-java's `SnappyOutputStream`).
const XERIAL_MAGIC: &[u8; 8] = b"\x82SNAPPY\0";
/// Magic, version and compatible-version fields.
const XERIAL_HEADER_LEN: usize = 16;
/// Input per xerial block: snappy-java's default block size.
const XERIAL_BLOCK: usize = 32 * 1024;

/// Decompresses `input` into the front of `out`, refusing output longer than `max`: the
/// length written. `out` is scratch: past that length it may hold earlier output.
pub(crate) fn decompress(
    codec: Compression,
    input: &[u8],
    out: &mut Vec<u8>,
    max: usize,
) -> Result<usize, DecodeError> {
    let limit = decompressed_limit(max);
    let failed = |reason: String| codec.failure(reason);
    // One byte past the bound tells "exactly max" from "more than max".
    let bound = u64::try_from(max).unwrap_or(u64::MAX).saturating_add(1);
    let read = |mut reader: Box<dyn Read + '_>, out: &mut Vec<u8>| {
        reader
            .by_ref()
            .take(bound)
            .read_to_end(out)
            .map(drop)
            .map_err(|e| failed(e.to_string()))
    };
    match codec {
        // Block by block into room kept from earlier batches: zeroed once, not per batch.
        Compression::Lz4 => super::lz4::decompress(input, out, limit),
        // On a per-thread decoder, into the buffer's spare capacity.
        Compression::Snappy => snappy(input, out, limit, &failed),
        // Appended to `out`, emptied first.
        Compression::None => appended(out, limit, |out| {
            out.extend_from_slice(input);
            Ok(())
        }),
        Compression::Gzip => super::gzip::decompress(input, out, limit),
        // The reused context writes into room reserved up front (capacity, not pages).
        Compression::Zstd => appended(out, limit, |out| {
            if out.try_reserve(max).is_ok() {
                return zstd_frames(input, out, max).map_err(|e| match e.to_string() {
                    // More output than the bound allows: that is the limit's error.
                    text if text == DST_TOO_SMALL => past(limit),
                    text => failed(text),
                });
            }
            // A bound too large to reserve (a caller's "unlimited"): a fresh streaming decoder.
            let mut decoder = zstd::stream::read::Decoder::with_buffer(input)
                .map_err(|e| failed(e.to_string()))?;
            decoder
                .window_log_max(zstd_window_log(max))
                .map_err(|e| failed(e.to_string()))?;
            read(Box::new(decoder), out)
        }),
    }
}

/// The bound on a batch's decompressed length, as its errors name it.
pub(super) fn decompressed_limit(max: usize) -> Limit {
    Limit::new("decompressed batch length", max)
}

impl Compression {
    /// A batch of this codec that did not decompress, and why.
    pub(super) fn failure(self, reason: impl Into<String>) -> DecodeError {
        DecodeError::Decompress {
            codec: self,
            reason: reason.into(),
        }
    }
}

/// The error for output that would run past `limit`: one byte past it is as far as a
/// decoder goes to know.
pub(super) fn past(limit: Limit) -> DecodeError {
    LimitExceeded {
        name: limit.name,
        len: limit.max.saturating_add(1),
        max: limit.max,
    }
    .into()
}

/// Empties `out`, lets `fill` append to it, and checks what it appended against `limit`.
fn appended(
    out: &mut Vec<u8>,
    limit: Limit,
    fill: impl FnOnce(&mut Vec<u8>) -> Result<(), DecodeError>,
) -> Result<usize, DecodeError> {
    out.clear();
    fill(out)?;
    limit.check(out.len())?;
    Ok(out.len())
}

/// Decompresses snappy `input` (xerial framing or one raw block) into the front of `out`:
/// the length written.
fn snappy(
    input: &[u8],
    out: &mut Vec<u8>,
    limit: Limit,
    failed: &impl Fn(String) -> DecodeError,
) -> Result<usize, DecodeError> {
    let Some(blocks) = input.strip_prefix(XERIAL_MAGIC) else {
        return snappy_block(input, out, 0, limit, failed);
    };
    let mut blocks = blocks
        .get(XERIAL_HEADER_LEN - XERIAL_MAGIC.len()..)
        .ok_or_else(|| failed("xerial header truncated".into()))?;
    let mut end = 0;
    while !blocks.is_empty() {
        let (len, rest) = blocks
            .split_first_chunk::<4>()
            .ok_or_else(|| failed("xerial block length truncated".into()))?;
        let len = usize::try_from(u32::from_be_bytes(*len)).unwrap_or(usize::MAX);
        let block = rest
            .get(..len)
            .ok_or_else(|| failed("xerial block truncated".into()))?;
        end = snappy_block(block, out, end, limit, failed)?;
        blocks = &rest[len..];
    }
    Ok(end)
}

/// What zstd says of output that does not fit the room given (`ZSTD_getErrorName` of
/// `dstSize_tooSmall`, which the crate passes on as the error's text).
const DST_TOO_SMALL: &str = "Destination buffer is too small";

thread_local! {
    /// One decompression context per thread, reused: making one per batch cost about as much
    /// as decompressing a 16 KiB batch.
    static ZSTD: RefCell<Option<zstd::bulk::Decompressor<'static>>> = const { RefCell::new(None) };
}

/// Decompresses the zstd frames of `input` into `out` (empty, with room reserved for `max`
/// bytes) on this thread's context.
fn zstd_frames(input: &[u8], out: &mut Vec<u8>, max: usize) -> std::io::Result<()> {
    ZSTD.with_borrow_mut(|context| {
        let decompressor = match context {
            Some(decompressor) => decompressor,
            None => context.insert(zstd::bulk::Decompressor::new()?),
        };
        // A frame's window is allocated up front; no window needs to exceed the output bound,
        // so a hostile header cannot make zstd allocate past it either.
        decompressor.window_log_max(zstd_window_log(max))?;
        decompressor.decompress_to_buffer(input, out).map(drop)
    })
}

/// The window log to allow for an output bound of `max` bytes: the smallest covering it, but
/// at least 2^23 (what levels up to 19 use when the producer did not declare the size, so
/// a small bound never refuses an ordinary frame) and at most 2^27 (zstd's default limit).
fn zstd_window_log(max: usize) -> u32 {
    let log = usize::BITS - max.saturating_sub(1).leading_zeros();
    log.clamp(23, 27)
}

/// Decompresses one raw snappy block into `out` at `end`, its declared length checked against
/// `limit` first: where its output ends. Room `out` already holds is not zeroed again.
fn snappy_block(
    block: &[u8],
    out: &mut Vec<u8>,
    end: usize,
    limit: Limit,
    failed: &impl Fn(String) -> DecodeError,
) -> Result<usize, DecodeError> {
    let len = snap::raw::decompress_len(block).map_err(|e| failed(e.to_string()))?;
    let new_end = end.saturating_add(len);
    limit.check(new_end)?;
    if out.len() < new_end {
        out.resize(new_end, 0);
    }
    let n = snap::raw::Decoder::new()
        .decompress(block, &mut out[end..new_end])
        .map_err(|e| failed(e.to_string()))?;
    Ok(end + n)
}

/// Appends `input` compressed with `codec` to `out`.
pub(crate) fn compress(
    codec: Compression,
    input: &[u8],
    out: &mut Vec<u8>,
) -> Result<(), EncodeError> {
    let failed = |e: std::io::Error| EncodeError::Compress {
        codec,
        reason: e.to_string(),
    };
    match codec {
        Compression::None => out.extend_from_slice(input),
        Compression::Gzip => {
            let mut encoder = flate2::write::GzEncoder::new(out, flate2::Compression::default());
            encoder.write_all(input).map_err(failed)?;
            encoder.finish().map_err(failed)?;
        }
        Compression::Snappy => {
            // Xerial framing, as Java producers write it: every consumer reads it.
            out.extend_from_slice(XERIAL_MAGIC);
            out.extend_from_slice(&1i32.to_be_bytes()); // version
            out.extend_from_slice(&1i32.to_be_bytes()); // compatible version
            let mut encoder = snap::raw::Encoder::new();
            for chunk in input.chunks(XERIAL_BLOCK) {
                let block = encoder
                    .compress_vec(chunk)
                    .map_err(|e| EncodeError::Compress {
                        codec,
                        reason: e.to_string(),
                    })?;
                let len =
                    u32::try_from(block.len()).expect("a 32 KiB chunk compresses below 4 GiB");
                out.extend_from_slice(&len.to_be_bytes());
                out.extend_from_slice(&block);
            }
        }
        Compression::Lz4 => {
            // Independent 64 KiB blocks: the frame layout Kafka's Java LZ4 reader accepts.
            let info = lz4_flex::frame::FrameInfo::new()
                .block_size(lz4_flex::frame::BlockSize::Max64KB)
                .block_mode(lz4_flex::frame::BlockMode::Independent);
            let mut encoder = lz4_flex::frame::FrameEncoder::with_frame_info(info, out);
            encoder.write_all(input).map_err(failed)?;
            encoder.finish().map_err(|e| EncodeError::Compress {
                codec,
                reason: e.to_string(),
            })?;
        }
        Compression::Zstd => {
            let mut encoder = zstd::stream::write::Encoder::new(out, 0).map_err(failed)?;
            encoder.write_all(input).map_err(failed)?;
            encoder.finish().map_err(failed)?;
        }
    }
    Ok(())
}

/// For the decoders' tests: `decode` on `input` cut short anywhere is an error, and on
/// `input` with any one byte corrupted is an error or (where no check covers that byte)
/// what the codec's reference decoder, `reference`, makes of it. Never a panic.
#[cfg(test)]
pub(super) fn assert_fails_cleanly(
    input: &[u8],
    mut decode: impl FnMut(&[u8], &mut Vec<u8>) -> Result<usize, DecodeError>,
    reference: impl Fn(&[u8]) -> Vec<u8>,
) {
    let mut out = Vec::new();
    for cut in 1..input.len() {
        assert!(decode(&input[..cut], &mut out).is_err(), "cut at {cut}");
    }
    for at in 0..input.len() {
        for flip in [0x01, 0x80, 0xff] {
            let mut bad = input.to_vec();
            bad[at] ^= flip;
            if let Ok(len) = decode(&bad, &mut out) {
                assert_eq!(out[..len], reference(&bad), "byte {at} ^ {flip:#x}");
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_codec_round_trips() {
        let input: Vec<u8> = (0..100_000u32)
            .flat_map(|i| (i % 251).to_le_bytes())
            .collect();
        // One scratch buffer for every codec, as a walker reuses it from batch to batch,
        // whatever each batch's codec, and each codec twice: after another, then after itself.
        let mut out = Vec::new();
        for codec in Compression::ALL {
            let mut packed = Vec::new();
            compress(codec, &input, &mut packed).unwrap();
            for _ in 0..2 {
                let len = decompress(codec, &packed, &mut out, input.len()).unwrap();
                assert!(out[..len] == input, "{codec}");
            }
            if codec != Compression::None {
                assert!(packed.len() < input.len() / 2, "{codec} compresses");
            }
            // One byte short of the output is a named limit, not an allocation.
            let err = decompress(codec, &packed, &mut out, input.len() - 1).unwrap_err();
            assert!(
                matches!(err, DecodeError::Limit(l) if l.name == "decompressed batch length"),
                "{codec}: {err}"
            );
        }
    }

    #[test]
    fn zstd_window_follows_the_bound() {
        assert_eq!(zstd_window_log(1 << 24), 24);
        assert_eq!(zstd_window_log((1 << 24) + 1), 25);
        assert_eq!(zstd_window_log(0), 23);
        assert_eq!(zstd_window_log(usize::MAX), 27);
        // A frame compressed with a 2^24 window, decoded under a 1 MiB bound: refused before
        // its window is allocated (2^23 allowed), as a typed error.
        let input = vec![7u8; 1 << 24];
        let mut encoder = zstd::bulk::Compressor::new(19).unwrap();
        encoder
            .set_parameter(zstd::zstd_safe::CParameter::WindowLog(24))
            .unwrap();
        let packed = encoder.compress(&input).unwrap();
        let mut out = Vec::new();
        let err = decompress(Compression::Zstd, &packed, &mut out, 1 << 20).unwrap_err();
        assert!(
            matches!(err, DecodeError::Decompress { .. } | DecodeError::Limit(_)),
            "{err}"
        );
        let len = decompress(Compression::Zstd, &packed, &mut out, 1 << 24).unwrap();
        assert_eq!(len, 1 << 24);
    }

    #[test]
    fn raw_snappy_is_accepted() {
        let input = b"raw snappy blocks, as librdkafka writes them".repeat(20);
        let packed = snap::raw::Encoder::new().compress_vec(&input).unwrap();
        let mut out = Vec::new();
        let len = decompress(Compression::Snappy, &packed, &mut out, 1 << 20).unwrap();
        assert_eq!(out[..len], input);
    }

    #[test]
    fn garbage_is_a_typed_error() {
        let mut out = Vec::new();
        for codec in [
            Compression::Gzip,
            Compression::Snappy,
            Compression::Lz4,
            Compression::Zstd,
        ] {
            let err = decompress(
                codec,
                b"\x82SNAPPY\0\0\0\0\x01\0\0\0\x01\0\0\0\x09abc",
                &mut out,
                1 << 20,
            );
            assert!(
                matches!(err, Err(DecodeError::Decompress { .. })),
                "{codec}: {err:?}"
            );
        }
        assert_eq!(
            Compression::from_bits(5),
            Err(DecodeError::UnknownCompression(5))
        );
    }
}
