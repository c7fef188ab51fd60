//! The two receive paths the benchmarks compare, over one in-memory source.
//!
//! Both paths read from a [`Chunks`] fixture, which copies into the caller's buffer one chunk
//! per `read`, the way `recv` copies out of a socket buffer. What differs is where the bytes
//! land and what a frame costs once they are there:
//!
//! - [`RingPath`]: `recv` lands straight in a ring (one copy, done by the source); the
//!   [`LengthPrefixed`] parser hands the handler a `&[u8]` borrowed from the ring. No allocation,
//!   no reference count, nothing copied per frame.
//! - [`ClassicPath`]: what a tokio-util `FramedRead` + `LengthDelimitedCodec` user gets, written
//!   out without `unsafe`: bytes go into a `BytesMut`, and each frame is `advance(4)` past its
//!   head, `split_to(len)` off the front and `freeze()`d into a [`Bytes`] for the handler (an
//!   atomic reference count taken and dropped per frame). [`ClassicRead::Copy`] reads into a
//!   scratch buffer and appends (the "read + copy" path); [`ClassicRead::Direct`] reads straight
//!   into the `BytesMut`, which is as close to tokio's `read_buf` into spare capacity as safe
//!   code gets (it pays a `memset` of fresh space instead of a second `memcpy`).
//!
//! Both are built once and reused across iterations, as a connection would reuse them: the
//! benchmark measures the steady state, not setup.
//!
//! The [`http1`] module does the same for HTTP/1.1 request heads and chunked bodies, against
//! httparse and picohttpparser.
//!
//! `unsafe` is denied crate-wide and allowed in one module, [`pico`]: the FFI call into
//! picohttpparser (a C library) cannot be made without it. Everything else stays safe.

#![deny(unsafe_code)]

pub mod http1;
#[allow(unsafe_code)]
pub mod pico;

use std::io::Read;

use bytes::{Buf, Bytes, BytesMut};
use ringwire_io::{Chunks, RecvTransport, TransportError};
use ringwire_ring::{Backing, Ring, RingConfig};
use ringwire_wire::{run, Control, Finish, LengthPrefixed, RunError, DEFAULT_MAX_FRAME_LEN};

/// The most one `read` asks for, on both paths: the ring's capacity and the classic path's read
/// buffer. 64 KiB is about what one `recv` on a busy TCP socket returns.
pub const READ_SIZE: usize = 64 * 1024;

/// `count` length-prefixed frames with `body_len`-byte bodies, back to back.
pub fn frames(body_len: usize, count: usize) -> Vec<u8> {
    let head = u32::try_from(body_len)
        .expect("body fits a u32 length")
        .to_be_bytes();
    let mut out = Vec::with_capacity(count * (4 + body_len));
    for i in 0..count {
        out.extend_from_slice(&head);
        // Distinct bodies, so a path that mixed frames up would fail `check`.
        out.extend((0..body_len).map(|j| (i + j) as u8));
    }
    out
}

/// How the stream reaches the receiver.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Delivery {
    /// As fast as the reader takes it: each `read` returns as much as the caller's buffer
    /// holds, up to [`READ_SIZE`] (a ring the transport grew for bursts reads no more per
    /// call than the classic paths' buffers).
    Whole,
    /// Chunks of this many bytes: one `read` per chunk, like a peer's small writes.
    Chunked(usize),
}

impl Delivery {
    /// The fixture delivering `stream` this way.
    pub fn source(self, stream: &[u8]) -> Chunks {
        match self {
            Delivery::Whole => Chunks::every(stream, READ_SIZE),
            Delivery::Chunked(size) => Chunks::every(stream, size),
        }
    }

    /// A short name for benchmark ids: `whole`, `chunk64`, `chunk4`.
    pub fn name(self) -> String {
        match self {
            Delivery::Whole => "whole".to_owned(),
            Delivery::Chunked(size) => format!("chunk{size}"),
        }
    }
}

/// The ring path: a [`RecvTransport`] (connection-scoped, built once) driven by
/// [`ringwire_wire::run`] with a [`LengthPrefixed`] parser.
#[derive(Debug)]
pub struct RingPath {
    transport: RecvTransport<Chunks>,
    parser: LengthPrefixed,
}

impl RingPath {
    /// A transport over a [`READ_SIZE`] ring of the given backing, reading from `source`.
    pub fn new(source: Chunks, backing: Backing) -> Result<Self, TransportError> {
        let config = RingConfig::with_capacity(READ_SIZE).backing(backing);
        let ring = Ring::new(config)?;
        Ok(Self {
            transport: RecvTransport::with_ring(ring, source),
            parser: LengthPrefixed::default(),
        })
    }

    /// Rewinds the source and parses the whole stream, calling `on_frame` with each body.
    /// Returns the number of frames.
    pub fn run(
        &mut self,
        mut on_frame: impl FnMut(&[u8]),
    ) -> Result<usize, RunError<ringwire_wire::FrameError, TransportError>> {
        self.transport.get_mut().rewind();
        let mut count = 0;
        let finish = run(&mut self.transport, &mut self.parser, |body: &[u8]| {
            on_frame(body);
            count += 1;
            Control::Continue
        })?;
        debug_assert_eq!(finish, Finish::Eof);
        Ok(count)
    }

    /// Rewinds the source and receives the whole stream without parsing: the cost of the `recv`
    /// calls alone, to subtract from [`RingPath::run`]. Returns the number of `read` calls.
    pub fn drain(&mut self) -> Result<usize, TransportError> {
        self.transport.get_mut().rewind();
        let mut reads = 0;
        loop {
            reads += 1;
            if self.transport.fill(1)? == 0 {
                return Ok(reads);
            }
            let n = self.transport.data().len();
            self.transport.consume(n);
        }
    }
}

/// Where the classic path's `read` lands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClassicRead {
    /// `read` into a [`READ_SIZE`] scratch buffer, then `extend_from_slice` into the `BytesMut`:
    /// the "read + copy" path, and what safe code without a reader into spare capacity
    /// does.
    Copy,
    /// `read` straight into initialized space at the end of the `BytesMut`. Safe Rust cannot read
    /// into uninitialized spare capacity, so fresh space is zeroed once ([`READ_SIZE`] at a
    /// time) and kept zeroed past the filled bytes: one `memset` per byte received, against
    /// `Copy`'s second `memcpy`.
    Direct,
}

/// The classic path: `BytesMut` + `read` + `split_to`/`freeze` per frame, with
/// `LengthDelimitedCodec`'s decode steps (see the crate docs).
#[derive(Debug)]
pub struct ClassicPath {
    source: Chunks,
    read: ClassicRead,
    /// Received bytes. With [`ClassicRead::Direct`], `buf[filled..]` is zeroed spare space.
    buf: BytesMut,
    /// Bytes of `buf` that were received (all of it with [`ClassicRead::Copy`]).
    filled: usize,
    scratch: Box<[u8]>,
    /// The codec's state: the body length of a frame whose head was already consumed.
    body_len: Option<usize>,
    max_len: usize,
}

impl ClassicPath {
    /// A classic receiver over `source`, its buffers allocated once.
    pub fn new(source: Chunks, read: ClassicRead) -> Self {
        let scratch = match read {
            ClassicRead::Copy => vec![0; READ_SIZE].into_boxed_slice(),
            ClassicRead::Direct => Box::default(),
        };
        Self {
            source,
            read,
            buf: BytesMut::with_capacity(READ_SIZE),
            filled: 0,
            scratch,
            body_len: None,
            max_len: DEFAULT_MAX_FRAME_LEN,
        }
    }

    /// Rewinds the source and decodes the whole stream, handing each body to `on_frame` as
    /// [`Bytes`]. Returns the number of frames.
    pub fn run(&mut self, mut on_frame: impl FnMut(Bytes)) -> std::io::Result<usize> {
        self.reset();
        let mut count = 0;
        loop {
            while let Some(frame) = self.decode()? {
                on_frame(frame);
                count += 1;
            }
            if self.recv()? == 0 {
                return if self.filled == 0 && self.body_len.is_none() {
                    Ok(count)
                } else {
                    Err(std::io::ErrorKind::UnexpectedEof.into())
                };
            }
        }
    }

    /// Rewinds the source and receives the whole stream, discarding it: the cost of the `read`
    /// calls (and the copy or zeroing they entail) alone. Returns the number of `read` calls.
    pub fn drain(&mut self) -> std::io::Result<usize> {
        self.reset();
        let mut reads = 0;
        loop {
            reads += 1;
            if self.recv()? == 0 {
                return Ok(reads);
            }
            self.buf.advance(self.filled);
            self.filled = 0;
        }
    }

    fn reset(&mut self) {
        self.source.rewind();
        // Drops received bytes but keeps `Direct`'s zeroed tail, so zeroing stays amortized
        // (one byte per byte received) instead of a full read's worth per run.
        self.buf.advance(self.filled);
        self.filled = 0;
        self.body_len = None;
    }

    /// One `read`, landing at the end of the received bytes.
    fn recv(&mut self) -> std::io::Result<usize> {
        match self.read {
            ClassicRead::Copy => {
                let n = self.source.read(&mut self.scratch)?;
                self.buf.extend_from_slice(&self.scratch[..n]);
                self.filled += n;
                Ok(n)
            }
            ClassicRead::Direct => {
                if self.buf.len() == self.filled {
                    // Out of zeroed space: drop nothing (there is no tail), then zero a fresh
                    // read's worth. `resize` reserves first, which moves the unread bytes to the
                    // front of the allocation once every handed-out frame is gone.
                    self.buf.resize(self.filled + READ_SIZE, 0);
                }
                let n = self.source.read(&mut self.buf[self.filled..])?;
                self.filled += n;
                Ok(n)
            }
        }
    }

    /// `LengthDelimitedCodec::decode` for a 4-byte big-endian length: the head is consumed once
    /// (state kept across calls), then the body is split off when all of it is buffered.
    fn decode(&mut self) -> std::io::Result<Option<Bytes>> {
        let len = match self.body_len {
            Some(len) => len,
            None => {
                if self.filled < 4 {
                    return Ok(None);
                }
                let head = [self.buf[0], self.buf[1], self.buf[2], self.buf[3]];
                let len = u32::from_be_bytes(head) as usize;
                if len > self.max_len {
                    return Err(std::io::ErrorKind::InvalidData.into());
                }
                self.buf.advance(4);
                self.filled -= 4;
                self.body_len = Some(len);
                len
            }
        };
        if self.filled < len {
            if self.read == ClassicRead::Copy {
                // The codec's `src.reserve(n - src.len())`: room for the rest of the body.
                self.buf.reserve(len - self.filled);
            }
            return Ok(None);
        }
        self.body_len = None;
        self.filled -= len;
        Ok(Some(self.buf.split_to(len).freeze()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn deliveries() -> [Delivery; 4] {
        [
            Delivery::Whole,
            Delivery::Chunked(64),
            Delivery::Chunked(4),
            Delivery::Chunked(1),
        ]
    }

    /// Every path must see exactly the bodies that were sent, however they are delivered,
    /// and keep doing so when reused.
    #[test]
    fn all_paths_agree() {
        for (body_len, count) in [(0, 3), (5, 100), (64, 100), (4096, 40), (70_000, 3)] {
            let stream = frames(body_len, count);
            let expected: Vec<Vec<u8>> = stream
                .chunks(4 + body_len)
                .map(|f| f[4..].to_vec())
                .collect();
            for delivery in deliveries() {
                for backing in [Backing::Auto, Backing::Heap] {
                    let mut ring = RingPath::new(delivery.source(&stream), backing).unwrap();
                    for _ in 0..2 {
                        let mut seen = Vec::new();
                        let n = ring.run(|b| seen.push(b.to_vec())).unwrap();
                        assert_eq!((n, &seen), (count, &expected), "{delivery:?} {backing:?}");
                        assert!(ring.drain().unwrap() >= 2);
                    }
                }
                for read in [ClassicRead::Copy, ClassicRead::Direct] {
                    let mut classic = ClassicPath::new(delivery.source(&stream), read);
                    for _ in 0..2 {
                        let mut seen = Vec::new();
                        let n = classic.run(|b| seen.push(b.to_vec())).unwrap();
                        assert_eq!((n, &seen), (count, &expected), "{delivery:?} {read:?}");
                        assert!(classic.drain().unwrap() >= 2);
                    }
                }
            }
        }
    }

    #[test]
    fn truncated_stream_is_an_error_on_both_paths() {
        let stream = frames(10, 2);
        let cut = &stream[..stream.len() - 1];
        let mut ring = RingPath::new(Chunks::new([cut]), Backing::Auto).unwrap();
        assert!(matches!(
            ring.run(|_| {}),
            Err(RunError::UnexpectedEof { .. })
        ));
        let mut classic = ClassicPath::new(Chunks::new([cut]), ClassicRead::Copy);
        assert!(classic.run(|_| {}).is_err());
    }

    #[test]
    fn read_counts_match_the_delivery() {
        let stream = frames(64, 100); // 6800 bytes
        let mut ring = RingPath::new(Delivery::Chunked(4).source(&stream), Backing::Auto).unwrap();
        assert_eq!(ring.drain().unwrap(), 1700 + 1);
        let mut classic = ClassicPath::new(Delivery::Whole.source(&stream), ClassicRead::Copy);
        assert_eq!(classic.drain().unwrap(), 2);
    }
}
