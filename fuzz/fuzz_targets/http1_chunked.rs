//! `http1_chunked`: a chunked body decoded from arbitrary bytes, once from the whole input and
//! once with it arriving in pieces of fuzz-chosen sizes, must give the same data, trailers and
//! end (the same error, or done after the same number of bytes). Every `decode` call is checked
//! by `http1_support::decode` (nothing consumed beyond the buffer, data in place); the bytes
//! after the body are never consumed.
//!
//! Input layout:
//!
//! | bytes   | meaning                                                                  |
//! |---------|--------------------------------------------------------------------------|
//! | 0       | bit 7: small limits; bits 0..4: `n`, the number of piece sizes that follow |
//! | 1..1+n  | piece sizes, used cyclically: `b + 1` (no sizes: one byte per piece)     |
//! | rest    | the body and whatever follows it                                         |

#![no_main]

mod http1_support;

use http1_support::{decode, small_limits, Fields, Step, Text};
use libfuzzer_sys::fuzz_target;
use ringwire_http1::{BodyDecoder, BodyKind, Error, Limits};

#[derive(Debug, PartialEq, Eq)]
struct Outcome {
    data: Text,
    trailers: Fields,
    /// Bytes the body took (framing included), or the error; a body cut short by the end of
    /// the input is `UnexpectedEof`.
    end: Result<usize, Error>,
}

/// Decodes `pieces` as a caller with a growing buffer would, dropping what each call consumed.
fn decode_pieces(pieces: &[&[u8]], limits: &Limits) -> Outcome {
    let mut decoder = BodyDecoder::new(BodyKind::Chunked, limits);
    let mut out = Outcome {
        data: Text::default(),
        trailers: Vec::new(),
        end: Ok(0),
    };
    let mut buf = Vec::new();
    let mut consumed_total = 0;
    for piece in pieces {
        buf.extend_from_slice(piece);
        loop {
            match decode(&mut decoder, &buf, &mut out.data) {
                Err(e) => {
                    out.end = Err(e);
                    return out;
                }
                Ok(Step::More(consumed)) => {
                    buf.drain(..consumed);
                    consumed_total += consumed;
                    if consumed == 0 {
                        break;
                    }
                }
                Ok(Step::Done(consumed, trailers)) => {
                    out.trailers = trailers;
                    out.end = Ok(consumed_total + consumed);
                    return out;
                }
            }
        }
    }
    out.end = match decoder.finish_eof() {
        Ok(()) => panic!("finish_eof accepted an unfinished chunked body"),
        Err(e) => Err(e),
    };
    out
}

fuzz_target!(|data: &[u8]| {
    let Some((&flags, rest)) = data.split_first() else {
        return;
    };
    let limits = if flags & 0x80 != 0 {
        small_limits()
    } else {
        Limits::default()
    };
    let n = usize::from(flags & 0x0f).min(rest.len());
    let (sizes, stream) = rest.split_at(n);
    let sizes = if sizes.is_empty() { &[0][..] } else { sizes };
    let mut pieces = Vec::new();
    let mut left = stream;
    for &size in sizes.iter().cycle() {
        if left.is_empty() {
            break;
        }
        let (piece, tail) = left.split_at((usize::from(size) + 1).min(left.len()));
        pieces.push(piece);
        left = tail;
    }

    let whole = decode_pieces(&[stream], &limits);
    let split = decode_pieces(&pieces, &limits);
    if http1_support::debug() {
        eprintln!("{} pieces: {whole:?}", pieces.len());
    }
    assert_eq!(whole, split, "whole input vs. pieces");
    if let Ok(len) = whole.end {
        // The body ends in the empty line after the trailers, and nothing after it matters:
        // the same bytes without what follows them decode the same.
        assert!(len <= stream.len() && stream[..len].ends_with(b"\r\n"));
        assert_eq!(decode_pieces(&[&stream[..len]], &limits), whole);
    }
});
