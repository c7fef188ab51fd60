//! `client_decompress`: the HTTP client's content decoder (gzip, deflate, brotli, zstd).
//! Arbitrary bytes fed in arbitrary pieces must decode or fail with a typed error, never panic,
//! spin or hand out more than the limit; and a body this target compressed (gzip, zstd, or deflate with
//! or without its zlib wrapper) must come back whole, whatever the pieces.
//!
//! Input: a mode byte (its low bits pick the coding, its top bit the round trip), a piece-size
//! byte, then the body.

#![no_main]

use std::io::Write as _;

use flate2::write::{DeflateEncoder, GzEncoder, ZlibEncoder};
use flate2::Compression;
use libfuzzer_sys::fuzz_target;
use ringwire_client::{Decoder, Encoding, Error};

/// The most this target lets a body decode to.
const LIMIT: u64 = 1 << 20;

/// `body` decoded in pieces of `piece` bytes, as the client feeds what each read brings.
fn decode(encoding: Encoding, body: &[u8], piece: usize) -> Result<Vec<u8>, Error> {
    let mut decoder = Decoder::new(encoding, LIMIT);
    let mut out = Vec::new();
    for mut rest in body.chunks(piece) {
        loop {
            let used = decoder.feed(rest)?;
            out.extend_from_slice(decoder.output());
            assert!(out.len() as u64 <= LIMIT, "decoded past the limit");
            match used {
                None => break,
                Some(n) => rest = &rest[n..],
            }
        }
    }
    decoder.finish()?;
    Ok(out)
}

/// `body` compressed as a server would send it with `encoding` (`wrapped`: deflate in its zlib
/// wrapper, as RFC 9110 says; otherwise bare, as some servers send it).
fn compress(encoding: Encoding, wrapped: bool, body: &[u8]) -> Vec<u8> {
    let level = Compression::fast();
    match (encoding, wrapped) {
        (Encoding::Zstd, _) => zstd::bulk::compress(body, 1).unwrap(),
        (Encoding::Gzip, _) => {
            let mut e = GzEncoder::new(Vec::new(), level);
            e.write_all(body).unwrap();
            e.finish().unwrap()
        }
        (_, true) => {
            let mut e = ZlibEncoder::new(Vec::new(), level);
            e.write_all(body).unwrap();
            e.finish().unwrap()
        }
        (_, false) => {
            let mut e = DeflateEncoder::new(Vec::new(), level);
            e.write_all(body).unwrap();
            e.finish().unwrap()
        }
    }
}

fuzz_target!(|data: &[u8]| {
    let [mode, piece, body @ ..] = data else {
        return;
    };
    let encoding = match mode % 4 {
        0 => Encoding::Gzip,
        1 => Encoding::Deflate,
        2 => Encoding::Brotli,
        _ => Encoding::Zstd,
    };
    let piece = usize::from(*piece).max(1);
    let _ = decode(encoding, body, piece);
    if mode & 0x80 != 0 && encoding != Encoding::Brotli {
        let compressed = compress(encoding, mode & 0x40 != 0, body);
        let decoded = decode(encoding, &compressed, piece).expect("a body compressed here decodes");
        assert!(decoded == body, "round trip changed the body");
    }
});
