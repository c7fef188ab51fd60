//! `frame`: length-prefixed frames parsed from one whole slice must match, frame for frame and
//! in the final outcome, the same bytes received in arbitrary chunks through a small, growing
//! ring (`RecvTransport` over the `Chunks` fixture, driven by `ringwire_wire::run`).
//!
//! Input layout (all fields optional; missing bytes read as zero):
//!
//! | bytes     | meaning                                                                      |
//! |-----------|------------------------------------------------------------------------------|
//! | 0..3      | parser `max_len`, 24-bit big-endian, clamped to `MAX_FRAME_LEN_CAP` (512 KiB) |
//! | 3         | flags: bit 0 heap ring (else mirrored), bit 1 stop after `stop_after` frames  |
//! | 4         | `stop_after` (number of frames before the handler returns `Control::Stop`)    |
//! | 5         | `n`: number of chunk-size bytes that follow                                   |
//! | 6..6+n    | chunk sizes, used cyclically: `b < 0x80` → `b + 1`; else `((b & 0x7f) + 1) * 128` |
//! | rest      | the stream                                                                   |
//!
//! The ring starts at 4 KiB and may grow to 256 KiB; the parser limit may exceed that bound, so
//! a frame between the two must end in `RingError::TooLarge` (via `TransportError::Ring` in
//! `RunError::Source`), one above the parser limit in `FrameError::TooLong`. A hang is a bug
//! that libFuzzer reports as a timeout.

#![no_main]

use libfuzzer_sys::fuzz_target;
use ringwire_io::{Chunks, RecvTransport, TransportError};
use ringwire_ring::{Backing, Ring, RingConfig, RingError};
use ringwire_wire::{run, Control, Finish, FrameError, LengthPrefixed, Parse, RunError, Status};

const RING_CAPACITY: usize = 4 << 10;
const RING_MAX: usize = 256 << 10;
const MAX_FRAME_LEN_CAP: usize = 512 << 10;

/// How a run ended, comparable between the two paths.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Outcome {
    Eof,
    Stopped,
    Parse(FrameError),
    TooLarge { requested: usize, max: usize },
    UnexpectedEof { buffered: usize },
}

struct Input<'a> {
    max_len: usize,
    heap: bool,
    stop_after: Option<usize>,
    chunk_sizes: Vec<usize>,
    stream: &'a [u8],
}

fn decode_input(data: &[u8]) -> Input<'_> {
    let byte = |i: usize| data.get(i).copied().unwrap_or(0);
    let raw_max = usize::from(byte(0)) << 16 | usize::from(byte(1)) << 8 | usize::from(byte(2));
    let flags = byte(3);
    let n = usize::from(byte(5));
    let sizes_end = (6 + n).min(data.len());
    let chunk_sizes = data
        .get(6..sizes_end)
        .unwrap_or(&[])
        .iter()
        .map(|&b| {
            if b < 0x80 {
                usize::from(b) + 1
            } else {
                (usize::from(b & 0x7f) + 1) * 128
            }
        })
        .collect();
    Input {
        max_len: raw_max.min(MAX_FRAME_LEN_CAP),
        heap: flags & 1 != 0,
        stop_after: (flags & 2 != 0).then(|| usize::from(byte(4))),
        chunk_sizes,
        stream: data.get(sizes_end..).unwrap_or(&[]),
    }
}

/// The stream cut into chunks of the given sizes, cycling; one chunk if no sizes were given.
fn split<'a>(stream: &'a [u8], sizes: &[usize]) -> Vec<&'a [u8]> {
    if sizes.is_empty() {
        return vec![stream];
    }
    let mut chunks = Vec::new();
    let mut rest = stream;
    for &size in sizes.iter().cycle() {
        if rest.is_empty() {
            break;
        }
        let (head, tail) = rest.split_at(size.min(rest.len()));
        chunks.push(head);
        rest = tail;
    }
    chunks
}

/// Reference: parse → consume over the whole stream, with the outcome the ring-backed run must
/// reach given the ring's growth bound.
fn parse_whole<'a>(input: &Input<'a>, ring_max: usize) -> (Vec<&'a [u8]>, Outcome) {
    let mut parser = LengthPrefixed::new(input.max_len);
    let mut frames = Vec::new();
    let mut rest = input.stream;
    loop {
        match parser.parse(rest) {
            Err(e) => {
                // Only a visible length prefix can be rejected.
                assert!(rest.len() >= 4, "error {e:?} from {} bytes", rest.len());
                let len = u32::from_be_bytes(rest[..4].try_into().unwrap()) as usize;
                assert!(len > input.max_len, "rejected {len} <= {}", input.max_len);
                return (frames, Outcome::Parse(e));
            }
            Ok(Status::Complete(body, consumed)) => {
                assert!(rest.len() >= 4 && consumed == 4 + body.len() && consumed <= rest.len());
                let len = u32::from_be_bytes(rest[..4].try_into().unwrap()) as usize;
                assert_eq!(len, body.len());
                assert!(len <= input.max_len);
                assert_eq!(body, &rest[4..consumed]);
                if consumed > ring_max {
                    // The ring can never hold this frame whole.
                    return (
                        frames,
                        Outcome::TooLarge {
                            requested: consumed,
                            max: ring_max,
                        },
                    );
                }
                frames.push(body);
                rest = &rest[consumed..];
                if input.stop_after == Some(frames.len()) {
                    return (frames, Outcome::Stopped);
                }
            }
            Ok(Status::Partial { at_least }) => {
                assert!(
                    at_least > rest.len(),
                    "Partial {at_least} over {}",
                    rest.len()
                );
                let outcome = if rest.is_empty() {
                    Outcome::Eof
                } else if at_least > ring_max {
                    // The prefix is visible: the transport asks the ring for the whole frame.
                    Outcome::TooLarge {
                        requested: at_least,
                        max: ring_max,
                    }
                } else {
                    Outcome::UnexpectedEof {
                        buffered: rest.len(),
                    }
                };
                return (frames, outcome);
            }
        }
    }
}

/// `RINGWIRE_FUZZ_DEBUG=1` prints each input's decoded parameters and outcome (for triage and
/// for checking that crafted inputs reach the paths they aim at).
fn debug() -> bool {
    static DEBUG: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *DEBUG.get_or_init(|| std::env::var_os("RINGWIRE_FUZZ_DEBUG").is_some())
}

fuzz_target!(|data: &[u8]| {
    let input = decode_input(data);
    let backing = if input.heap {
        Backing::Heap
    } else {
        Backing::Mirrored
    };
    let config = RingConfig::with_capacity(RING_CAPACITY)
        .max_capacity(RING_MAX)
        .backing(backing);
    let ring = Ring::new(config).expect("ring");
    let ring_max = ring.max_capacity();
    assert_eq!(ring_max, RING_MAX);

    let (want_frames, want) = parse_whole(&input, ring_max);

    let chunks = split(input.stream, &input.chunk_sizes);
    let mut transport = RecvTransport::with_ring(ring, Chunks::new(chunks));
    let mut parser = LengthPrefixed::new(input.max_len);
    let mut got_frames: Vec<Vec<u8>> = Vec::new();
    let stop_after = input.stop_after;
    let result = run(&mut transport, &mut parser, |body: &[u8]| {
        got_frames.push(body.to_vec());
        if stop_after == Some(got_frames.len()) {
            Control::Stop
        } else {
            Control::Continue
        }
    });
    let got = match result {
        Ok(Finish::Eof) => Outcome::Eof,
        Ok(Finish::Stopped) => Outcome::Stopped,
        Err(RunError::Parse(e)) => Outcome::Parse(e),
        Err(RunError::UnexpectedEof { buffered }) => Outcome::UnexpectedEof { buffered },
        Err(RunError::Source(TransportError::Ring(RingError::TooLarge { requested, max }))) => {
            Outcome::TooLarge { requested, max }
        }
        Err(RunError::Source(other)) => panic!("unexpected transport error: {other}"),
    };

    assert_eq!(
        got_frames.len(),
        want_frames.len(),
        "frame count differs (ring outcome {got:?}, whole-slice outcome {want:?})"
    );
    for (i, (g, w)) in got_frames.iter().zip(&want_frames).enumerate() {
        assert!(
            g == w,
            "frame {i} differs: {} vs {} bytes",
            g.len(),
            w.len()
        );
    }
    assert_eq!(
        got,
        want,
        "outcome differs after {} frames",
        got_frames.len()
    );
    if debug() {
        eprintln!(
            "frame: max_len {} heap {} stop_after {:?} chunks {} stream {} bytes -> {} frames, {got:?}, ring capacity {}",
            input.max_len,
            input.heap,
            input.stop_after,
            input.chunk_sizes.len(),
            input.stream.len(),
            got_frames.len(),
            transport.ring().capacity(),
        );
    }

    let ring = transport.ring();
    assert!(ring.capacity() <= RING_MAX && ring.capacity().is_power_of_two());
    if got == Outcome::Eof {
        assert!(ring.is_empty());
    }
});
