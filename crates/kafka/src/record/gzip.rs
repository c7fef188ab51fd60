//! gzip batches (RFC 1952 members, one or several) inflated on a per-thread decoder that is
//! reset, not rebuilt, for each member, straight into the caller's buffer: no decoder state
//! allocated per batch, no staging buffer, no zeroing of the output's room.

use std::cell::RefCell;

use flate2::{Crc, Decompress, FlushDecompress, Status};
use ringwire_wire::Limit;

use super::compression::past;
use super::Compression;
use crate::DecodeError;

const MAGIC: [u8; 2] = [0x1f, 0x8b];
const DEFLATE: u8 = 8;
const FHCRC: u8 = 0x02;
const FEXTRA: u8 = 0x04;
const FNAME: u8 = 0x08;
const FCOMMENT: u8 = 0x10;
const FRESERVED: u8 = 0xe0;
/// Magic, method, flags, mtime, extra flags, OS.
const HEADER_LEN: usize = 10;
/// CRC-32 and length of the member's data.
const TRAILER_LEN: usize = 8;

thread_local! {
    /// One raw-deflate decoder per thread: making one per batch allocated and set up its
    /// state every time.
    static INFLATE: RefCell<Option<Decompress>> = const { RefCell::new(None) };
}

/// Inflates the gzip members of `input` into `out` (emptied first), refusing output longer
/// than `limit` allows: the length written.
pub(super) fn decompress(
    input: &[u8],
    out: &mut Vec<u8>,
    limit: Limit,
) -> Result<usize, DecodeError> {
    out.clear();
    INFLATE.with_borrow_mut(|inflate| {
        let inflate = inflate.get_or_insert_with(|| Decompress::new(false));
        let mut rest = input;
        while !rest.is_empty() {
            let body = header(rest)?;
            inflate.reset(false);
            let start = out.len();
            let used = member(inflate, body, out, limit)?;
            limit.check(out.len())?;
            let (trailer, after) = body[used..]
                .split_first_chunk::<TRAILER_LEN>()
                .ok_or_else(|| bad("member truncated"))?;
            let mut crc = Crc::new();
            crc.update(&out[start..]);
            let [c0, c1, c2, c3, n0, n1, n2, n3] = *trailer;
            if crc.sum() != u32::from_le_bytes([c0, c1, c2, c3]) {
                return Err(bad("CRC-32 mismatch"));
            }
            if (out.len() - start) as u32 != u32::from_le_bytes([n0, n1, n2, n3]) {
                return Err(bad("length differs from the member's trailer"));
            }
            rest = after;
        }
        Ok(out.len())
    })
}

/// The member's deflate stream and what follows it, past a checked header.
fn header(member: &[u8]) -> Result<&[u8], DecodeError> {
    let truncated = || bad("header truncated");
    let fixed = member.get(..HEADER_LEN).ok_or_else(truncated)?;
    let flags = fixed[3];
    if fixed[..2] != MAGIC || fixed[2] != DEFLATE || flags & FRESERVED != 0 {
        return Err(bad("not a gzip member"));
    }
    let mut at = HEADER_LEN;
    if flags & FEXTRA != 0 {
        let len = member.get(at..at + 2).ok_or_else(truncated)?;
        at += 2 + usize::from(u16::from_le_bytes([len[0], len[1]]));
    }
    for field in [FNAME, FCOMMENT] {
        if flags & field != 0 {
            let text = member.get(at..).ok_or_else(truncated)?;
            at += 1 + text.iter().position(|&b| b == 0).ok_or_else(truncated)?;
        }
    }
    if flags & FHCRC != 0 {
        let stored = member.get(at..at + 2).ok_or_else(truncated)?;
        let mut crc = Crc::new();
        crc.update(&member[..at]);
        if crc.sum() as u16 != u16::from_le_bytes([stored[0], stored[1]]) {
            return Err(bad("header CRC mismatch"));
        }
        at += 2;
    }
    member.get(at..).ok_or_else(truncated)
}

/// Inflates one member's deflate stream from the front of `input` onto `out`, growing it
/// as needed up to one byte past the bound: the input bytes the stream took.
fn member(
    inflate: &mut Decompress,
    input: &[u8],
    out: &mut Vec<u8>,
    limit: Limit,
) -> Result<usize, DecodeError> {
    let bound = limit.max.saturating_add(1);
    // The trailer's length field (of the last member) is a good first guess at the room.
    let guess = input
        .last_chunk::<4>()
        .map_or(0, |&n| u32::from_le_bytes(n) as usize);
    loop {
        if out.len() == out.capacity() {
            let room = guess.max(out.len()).max(4096).min(bound - out.len());
            if room == 0 {
                return Err(past(limit));
            }
            out.try_reserve_exact(room)
                .map_err(|_| bad("cannot allocate the output"))?;
        }
        let (taken, made) = (inflate.total_in(), out.len());
        let status = inflate
            .decompress_vec(&input[taken as usize..], out, FlushDecompress::Finish)
            .map_err(|e| bad(e.to_string()))?;
        match status {
            Status::StreamEnd => return Ok(inflate.total_in() as usize),
            // Out of room: grow it above. Otherwise no progress means no more input.
            _ if out.len() == out.capacity() => {}
            _ if inflate.total_in() == taken && out.len() == made => {
                return Err(bad("deflate stream truncated"));
            }
            _ => {}
        }
    }
}

fn bad(reason: impl Into<String>) -> DecodeError {
    Compression::Gzip.failure(reason)
}

#[cfg(test)]
mod tests {
    use std::io::{Read, Write};

    use flate2::{write::GzEncoder, GzBuilder};

    use super::super::compression::{assert_fails_cleanly, decompressed_limit};
    use super::*;

    fn gzip(data: &[u8]) -> Vec<u8> {
        let mut encoder = GzEncoder::new(Vec::new(), flate2::Compression::default());
        encoder.write_all(data).unwrap();
        encoder.finish().unwrap()
    }

    fn content() -> Vec<u8> {
        (0..300_000u32)
            .map(|i| b"kafka gzip "[i as usize % 11] ^ (i / 997) as u8)
            .collect()
    }

    #[test]
    fn members_with_every_header_field_and_several_members() {
        let data = content();
        let mut with_fields = GzBuilder::new()
            .filename("batch.bin")
            .comment("a comment")
            .extra(vec![1, 2, 3, 4])
            .operating_system(3)
            .write(Vec::new(), flate2::Compression::best());
        with_fields.write_all(&data[..1000]).unwrap();
        let mut input = with_fields.finish().unwrap();
        input.extend(gzip(&data[1000..]));
        input.extend(gzip(b""));
        let mut out = Vec::new();
        for _ in 0..2 {
            let len = decompress(&input, &mut out, decompressed_limit(usize::MAX)).unwrap();
            assert!(out[..len] == data);
        }
    }

    #[test]
    fn the_bound_is_exact() {
        let data = content();
        let input = gzip(&data);
        let mut out = Vec::new();
        assert_eq!(
            decompress(&input, &mut out, decompressed_limit(data.len())).unwrap(),
            data.len()
        );
        let err = decompress(&input, &mut out, decompressed_limit(data.len() - 1)).unwrap_err();
        assert!(matches!(err, DecodeError::Limit(_)), "{err}");
        assert!(
            out.capacity() <= data.len() + 4096,
            "allocated past the bound"
        );
    }

    /// Cut short anywhere, a member is an error; corrupted anywhere, it is an error or (in
    /// header bytes no check covers, such as the mtime) what flate2's own decoder makes of it.
    #[test]
    fn truncated_or_corrupt_members_fail_cleanly() {
        let data = b"a record value, then another one; ".repeat(40);
        let mut with_crc = GzBuilder::new()
            .filename("x")
            .write(Vec::new(), flate2::Compression::default());
        with_crc.write_all(&data).unwrap();
        for input in [gzip(&data), with_crc.finish().unwrap()] {
            assert_fails_cleanly(
                &input,
                |bytes, out| decompress(bytes, out, decompressed_limit(1 << 20)),
                |bytes| {
                    let mut theirs = Vec::new();
                    flate2::read::MultiGzDecoder::new(bytes)
                        .read_to_end(&mut theirs)
                        .unwrap();
                    theirs
                },
            );
        }
    }
}
