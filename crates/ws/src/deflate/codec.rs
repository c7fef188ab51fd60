//! The permessage-deflate transforms (RFC 7692 section 7.2): raw DEFLATE with a sync flush per
//! message, its `00 00 ff ff` tail removed on send and put back on receive.

use flate2::{Compress, Compression, Decompress, FlushCompress, FlushDecompress, Status};

use crate::error::Error;

/// The empty stored block a sync flush ends with; senders strip it, receivers append it.
const TAIL: [u8; 4] = [0x00, 0x00, 0xff, 0xff];
/// Output grows by at most this much per inflate step, so a bomb is caught within one step of
/// the limit instead of after a huge allocation.
const STEP: usize = 64 * 1024;

/// zlib refuses a 256-byte window for raw deflate (it silently used 512 before 1.2.9); a peer
/// that negotiated 8 bits gets 9, which every real peer inflates, and we inflate with 9 too so
/// a peer doing the same is read correctly. The one deviation from RFC 7692 in this crate.
fn zlib_window(bits: u8) -> u8 {
    bits.clamp(9, 15)
}

/// Inflates one direction's messages, keeping the window between them unless the peer
/// resets its context after each message.
#[derive(Debug)]
pub(crate) struct Inflater {
    inner: Decompress,
    reset_after_message: bool,
}

impl Inflater {
    pub(crate) fn new(window_bits: u8, no_context_takeover: bool) -> Self {
        Self {
            inner: Decompress::new_with_window_bits(false, zlib_window(window_bits)),
            reset_after_message: no_context_takeover,
        }
    }

    /// Inflates `input` (part of a message's compressed payload) onto `out`, failing with
    /// [`Error::MessageTooLarge`] naming `limit` once `out` would hold more than `room` bytes.
    pub(crate) fn inflate(
        &mut self,
        mut input: &[u8],
        out: &mut Vec<u8>,
        room: u64,
        limit: u64,
    ) -> Result<(), Error> {
        let too_large = Error::MessageTooLarge { limit };
        let limit = usize::try_from(room).unwrap_or(usize::MAX);
        loop {
            let start = out.len();
            // One byte past the limit, so "exactly the limit" is distinguishable from "more".
            let room = STEP.min(limit.saturating_add(1).saturating_sub(start));
            if room == 0 {
                return Err(too_large);
            }
            out.resize(start + room, 0);
            let (in0, out0) = (self.inner.total_in(), self.inner.total_out());
            let status = self
                .inner
                .decompress(input, &mut out[start..], FlushDecompress::Sync);
            let produced = (self.inner.total_out() - out0) as usize;
            let used = (self.inner.total_in() - in0) as usize;
            out.truncate(start + produced);
            // The limit first: zlib stops when the output is full, so how far it got into
            // corrupt input depends on how the input was split, but overflowing does not.
            if out.len() > limit {
                return Err(too_large);
            }
            let status = status.map_err(|_| Error::InvalidCompressedData)?;
            input = &input[used..];
            if status == Status::StreamEnd {
                // A final block ends this deflate stream; what follows starts a new one.
                self.inner.reset(false);
            }
            if input.is_empty() && produced < room {
                return Ok(());
            }
            if used == 0 && produced == 0 && status != Status::StreamEnd {
                return Err(Error::InvalidCompressedData);
            }
        }
    }

    /// Ends a message: inflates the tail the sender stripped, and resets if agreed.
    pub(crate) fn finish(&mut self, out: &mut Vec<u8>, room: u64, limit: u64) -> Result<(), Error> {
        self.inflate(&TAIL, out, room, limit)?;
        if self.reset_after_message {
            self.inner.reset(false);
        }
        Ok(())
    }
}

/// Compresses one direction's messages.
#[derive(Debug)]
pub(crate) struct Deflater {
    inner: Compress,
    reset_after_message: bool,
}

impl Deflater {
    pub(crate) fn new(window_bits: u8, no_context_takeover: bool, level: u32) -> Self {
        Self {
            inner: Compress::new_with_window_bits(
                Compression::new(level.min(9)),
                false,
                zlib_window(window_bits),
            ),
            reset_after_message: no_context_takeover,
        }
    }

    /// An upper bound on the compressed length of `len` bytes (zlib's `deflateBound` for
    /// non-default parameters, plus the sync flush), so a caller can reserve before the
    /// compressor's state moves.
    pub(crate) fn bound(len: usize) -> usize {
        len + len.div_ceil(8) + len.div_ceil(64) + 5 + 6
    }

    /// Compresses a whole message into `out` (cleared first), tail stripped.
    pub(crate) fn compress(&mut self, mut input: &[u8], out: &mut Vec<u8>) {
        out.clear();
        out.reserve(Self::bound(input.len()));
        loop {
            let in0 = self.inner.total_in();
            // zlib fails only on a finished or corrupted stream, which this one never is.
            if self
                .inner
                .compress_vec(input, out, FlushCompress::Sync)
                .is_err()
            {
                break;
            }
            input = &input[(self.inner.total_in() - in0) as usize..];
            if input.is_empty() && out.len() < out.capacity() {
                break;
            }
            out.reserve(STEP);
        }
        if out.ends_with(&TAIL) {
            out.truncate(out.len() - TAIL.len());
        }
        if out.is_empty() {
            // zlib emits nothing for an empty message right after a flush; a lone 0x00 is the
            // header of the empty stored block that the receiver's appended tail completes
            // (RFC 7692 section 7.2.3.6).
            out.push(0x00);
        }
        if self.reset_after_message {
            self.inner.reset();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc7692_hello_example_inflates() {
        // RFC 7692 section 7.2.3.1: "Hello" compressed, tail stripped.
        let mut inflater = Inflater::new(15, false);
        let mut out = Vec::new();
        inflater
            .inflate(
                &[0xf2, 0x48, 0xcd, 0xc9, 0xc9, 0x07, 0x00],
                &mut out,
                100,
                100,
            )
            .unwrap();
        inflater.finish(&mut out, 100, 100).unwrap();
        assert_eq!(out, b"Hello");
    }

    #[test]
    fn context_takeover_shrinks_a_repeated_message() {
        let mut d = Deflater::new(15, false, 6);
        let mut i = Inflater::new(15, false);
        let msg = b"Hello, Hello, Hello! the same message twice compresses to a back-reference";
        let (mut first, mut second) = (Vec::new(), Vec::new());
        d.compress(msg, &mut first);
        d.compress(msg, &mut second);
        assert!(second.len() < first.len() / 2, "{second:?} vs {first:?}");
        for c in [&first, &second] {
            let mut out = Vec::new();
            i.inflate(c, &mut out, 1000, 1000).unwrap();
            i.finish(&mut out, 1000, 1000).unwrap();
            assert_eq!(out, msg);
        }
    }
}
