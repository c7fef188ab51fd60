//! LZ4 frames (the format of Kafka's LZ4 batches) decoded block by block straight into the
//! caller's scratch buffer: no decoder to set up per batch, no staging copy, and a block's
//! room zeroed once per scratch buffer rather than once per batch.

use std::hash::Hasher;
use std::ops::RangeInclusive;

use lz4_flex::block::DecompressError;
use ringwire_wire::Limit;
use twox_hash::XxHash32;

use super::compression::past;
use super::Compression;
use crate::DecodeError;

const MAGIC: u32 = 0x184D_2204;
/// Frames any decoder skips: a length, then that many bytes.
const SKIPPABLE: RangeInclusive<u32> = 0x184D_2A50..=0x184D_2A5F;

const FLG_VERSION: u8 = 0b1100_0000;
const FLG_VERSION_01: u8 = 0b0100_0000;
const FLG_INDEPENDENT_BLOCKS: u8 = 0b0010_0000;
const FLG_BLOCK_CHECKSUMS: u8 = 0b0001_0000;
const FLG_CONTENT_SIZE: u8 = 0b0000_1000;
const FLG_CONTENT_CHECKSUM: u8 = 0b0000_0100;
const FLG_RESERVED: u8 = 0b0000_0010;
const FLG_DICTIONARY_ID: u8 = 0b0000_0001;
const BD_BLOCK_SIZE: u8 = 0b0111_0000;

/// A block length word's high bit: the block is stored as it is.
const STORED: u32 = 0x8000_0000;
/// How far back a linked block's matches may reach.
const WINDOW: usize = 64 * 1024;

/// Decodes the LZ4 frames of `input` into the front of `out`, refusing output longer than
/// `limit` allows: the length written. Past it, `out` keeps whatever earlier batches left
/// there, so the next batch's blocks land in room already zeroed.
pub(super) fn decompress(
    input: &[u8],
    out: &mut Vec<u8>,
    limit: Limit,
) -> Result<usize, DecodeError> {
    let mut input = Input(input);
    let mut end = 0;
    while !input.0.is_empty() {
        let magic = input.u32_le()?;
        if SKIPPABLE.contains(&magic) {
            let len = input.u32_le()?;
            input.take(len as usize)?;
        } else if magic == MAGIC {
            end = frame(&mut input, out, end, limit)?;
        } else {
            return Err(bad(format!("not an LZ4 frame (magic {magic:#010x})")));
        }
    }
    Ok(end)
}

/// Decodes one frame (its magic read) into `out` from `start`: where its output ends.
fn frame(
    input: &mut Input<'_>,
    out: &mut Vec<u8>,
    start: usize,
    limit: Limit,
) -> Result<usize, DecodeError> {
    let descriptor = input.0;
    let [flg, bd] = input.array::<2>()?;
    if flg & FLG_VERSION != FLG_VERSION_01 || flg & FLG_RESERVED != 0 || bd & !BD_BLOCK_SIZE != 0 {
        return Err(bad("unknown frame version or reserved bits set"));
    }
    if flg & FLG_DICTIONARY_ID != 0 {
        return Err(bad("frame needs a dictionary"));
    }
    let block_max = match bd >> 4 {
        4 => 64 << 10,
        5 => 256 << 10,
        6 => 1 << 20,
        7 => 4 << 20,
        _ => return Err(bad("unknown block size")),
    };
    let content_size = if flg & FLG_CONTENT_SIZE != 0 {
        Some(u64::from_le_bytes(input.array()?))
    } else {
        None
    };
    let descriptor = &descriptor[..descriptor.len() - input.0.len()];
    let [check] = input.array()?;
    if (xxh32(descriptor) >> 8) as u8 != check {
        return Err(bad("frame header checksum mismatch"));
    }
    // One byte past the bound tells "exactly max" from "more than max".
    let bound = limit.max.saturating_add(1);
    let mut end = start;
    loop {
        let word = input.u32_le()?;
        if word == 0 {
            break;
        }
        let len = (word & !STORED) as usize;
        if len > block_max {
            return Err(bad("block larger than the frame's block size"));
        }
        let data = input.take(len)?;
        if flg & FLG_BLOCK_CHECKSUMS != 0 && xxh32(data) != input.u32_le()? {
            return Err(bad("block checksum mismatch"));
        }
        let room = block_max.min(bound - end);
        if out.len() < end + room {
            out.resize(end + room, 0);
        }
        let (done, rest) = out.split_at_mut(end);
        let dest = &mut rest[..room];
        let written = if word & STORED != 0 {
            dest.get_mut(..len)
                .ok_or_else(|| past(limit))?
                .copy_from_slice(data);
            len
        } else {
            let decoded = if flg & FLG_INDEPENDENT_BLOCKS != 0 || end == start {
                lz4_flex::block::decompress_into(data, dest)
            } else {
                let dict = &done[start.max(end.saturating_sub(WINDOW))..];
                lz4_flex::block::decompress_into_with_dict(data, dest, dict)
            };
            decoded.map_err(|e| match e {
                // Room cut short by the bound: the limit's error, not a corrupt block.
                DecompressError::OutputTooSmall { .. } if room < block_max => past(limit),
                e => bad(e.to_string()),
            })?
        };
        end += written;
        limit.check(end)?;
    }
    if content_size.is_some_and(|size| size != (end - start) as u64) {
        return Err(bad("content size differs from the frame's header"));
    }
    if flg & FLG_CONTENT_CHECKSUM != 0 && xxh32(&out[start..end]) != input.u32_le()? {
        return Err(bad("content checksum mismatch"));
    }
    Ok(end)
}

fn xxh32(bytes: &[u8]) -> u32 {
    let mut hasher = XxHash32::with_seed(0);
    hasher.write(bytes);
    hasher.finish_32()
}

fn bad(reason: impl Into<String>) -> DecodeError {
    Compression::Lz4.failure(reason)
}

/// The frame bytes not yet read.
struct Input<'a>(&'a [u8]);

impl<'a> Input<'a> {
    fn take(&mut self, len: usize) -> Result<&'a [u8], DecodeError> {
        if self.0.len() < len {
            return Err(bad("frame truncated"));
        }
        let (taken, rest) = self.0.split_at(len);
        self.0 = rest;
        Ok(taken)
    }

    fn array<const N: usize>(&mut self) -> Result<[u8; N], DecodeError> {
        let (array, rest) = self
            .0
            .split_first_chunk::<N>()
            .ok_or_else(|| bad("frame truncated"))?;
        self.0 = rest;
        Ok(*array)
    }

    fn u32_le(&mut self) -> Result<u32, DecodeError> {
        self.array().map(u32::from_le_bytes)
    }
}

#[cfg(test)]
mod tests {
    use std::io::{Read, Write};

    use lz4_flex::frame::{BlockMode, BlockSize, FrameDecoder, FrameEncoder, FrameInfo};

    use super::super::compression::{assert_fails_cleanly, decompressed_limit};
    use super::*;

    /// 300 KB: runs that compress, then bytes that do not (stored blocks).
    fn content() -> Vec<u8> {
        let mut bytes: Vec<u8> = (0..200_000u32)
            .map(|i| b"kafka record "[i as usize % 13])
            .collect();
        let mut x = 0x2545_F491_4F6C_DD1Du64;
        bytes.extend((0..100_000).map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        }));
        bytes
    }

    fn encode(input: &[u8], info: FrameInfo) -> Vec<u8> {
        let mut encoder = FrameEncoder::with_frame_info(info, Vec::new());
        encoder.write_all(input).unwrap();
        encoder.finish().unwrap()
    }

    /// Every layout lz4_flex writes: linked or independent blocks of 64 or 256 KiB, with and
    /// without block checksums, content checksum and content size.
    fn layouts(len: usize) -> impl Iterator<Item = FrameInfo> {
        (0..32u32).map(move |bits| {
            FrameInfo::new()
                .block_mode(if bits & 1 == 0 {
                    BlockMode::Linked
                } else {
                    BlockMode::Independent
                })
                .block_size(if bits & 2 == 0 {
                    BlockSize::Max64KB
                } else {
                    BlockSize::Max256KB
                })
                .block_checksums(bits & 4 != 0)
                .content_checksum(bits & 8 != 0)
                .content_size((bits & 16 != 0).then_some(len as u64))
        })
    }

    #[test]
    fn every_layout_decodes() {
        let input = content();
        let mut out = Vec::new();
        for info in layouts(input.len()) {
            let frame = encode(&input, info.clone());
            let len = decompress(&frame, &mut out, decompressed_limit(input.len())).unwrap();
            assert_eq!(&out[..len], input, "{info:?}");
        }
    }

    #[test]
    fn frames_follow_one_another_and_skippable_ones_are_skipped() {
        let (a, b) = (b"first frame ".repeat(100), b"second".repeat(3000));
        let mut input = encode(&a, FrameInfo::new());
        input.extend_from_slice(&0x184D_2A5Au32.to_le_bytes());
        input.extend_from_slice(&3u32.to_le_bytes());
        input.extend_from_slice(b"xyz");
        input.extend(encode(&b, FrameInfo::new().block_mode(BlockMode::Linked)));
        let mut out = Vec::new();
        let len = decompress(&input, &mut out, decompressed_limit(usize::MAX)).unwrap();
        assert_eq!(out[..len], [a, b].concat());
    }

    #[test]
    fn scratch_kept_from_a_larger_batch_holds_only_the_new_output() {
        let (large, small) = (content(), b"small".repeat(10));
        let mut out = Vec::new();
        decompress(
            &encode(&large, FrameInfo::new()),
            &mut out,
            decompressed_limit(1 << 20),
        )
        .unwrap();
        let len = decompress(
            &encode(&small, FrameInfo::new()),
            &mut out,
            decompressed_limit(1 << 20),
        )
        .unwrap();
        assert_eq!(out[..len], small);
    }

    #[test]
    fn the_bound_is_exact_for_compressed_and_stored_blocks() {
        let input = content();
        let mut out = Vec::new();
        for (what, bytes) in [
            ("compressed", &input[..150_000]),
            ("stored", &input[200_000..]),
        ] {
            let frame = encode(bytes, FrameInfo::new());
            assert_eq!(
                decompress(&frame, &mut out, decompressed_limit(bytes.len())).unwrap(),
                bytes.len()
            );
            let err =
                decompress(&frame, &mut out, decompressed_limit(bytes.len() - 1)).unwrap_err();
            assert!(matches!(err, DecodeError::Limit(_)), "{what}: {err}");
        }
    }

    /// Cut short anywhere, a frame is an error; corrupted anywhere, it is an error or what
    /// lz4_flex's own decoder makes of it, in every layout.
    #[test]
    fn truncated_or_corrupt_frames_fail_cleanly() {
        let input = b"a record value, then another one; ".repeat(40);
        for info in layouts(input.len()) {
            assert_fails_cleanly(
                &encode(&input, info),
                |bytes, out| decompress(bytes, out, decompressed_limit(1 << 20)),
                |bytes| {
                    let mut theirs = Vec::new();
                    FrameDecoder::new(bytes).read_to_end(&mut theirs).unwrap();
                    theirs
                },
            );
        }
    }
}
