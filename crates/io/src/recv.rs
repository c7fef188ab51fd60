//! Receive transport: recv straight into the ring's free span, parsers read the unread span.

use std::io::{self, Read};

use ringwire_ring::Ring;
use ringwire_wire::Source;

use crate::config::grow_for_burst;
use crate::{TransportConfig, TransportError};

/// A receive ring fed by any [`Read`] (socket, TLS stream, callback, pipe, fixture).
///
/// Every `recv` lands in ring memory: no intermediate buffer, no per-read allocation. Parsers
/// read [`RecvTransport::data`] and [`RecvTransport::consume`] what they finished.
#[derive(Debug)]
pub struct RecvTransport<R> {
    ring: Ring,
    io: R,
}

impl<R: Read> RecvTransport<R> {
    /// A transport with a fresh receive ring sized by `config.rx`.
    pub fn new(config: TransportConfig, io: R) -> Result<Self, TransportError> {
        Ok(Self::with_ring(config.rx_ring()?, io))
    }

    /// A transport over a ring the caller owns (from a [`ringwire_ring::RingPool`], say).
    pub fn with_ring(ring: Ring, io: R) -> Self {
        Self { ring, io }
    }

    /// One `recv` into the free span, after making room for `at_least` unread bytes in all.
    /// Returns the bytes received; 0 is end of stream.
    pub fn fill(&mut self, at_least: usize) -> Result<usize, TransportError> {
        let io = &mut self.io;
        fill_with(&mut self.ring, at_least, |span| io.read(span))
    }

    /// Unread bytes, contiguous.
    pub fn data(&self) -> &[u8] {
        self.ring.readable()
    }

    /// Unread bytes, contiguous and writable: for decoders that transform
    /// in place (a client unfolding a response head's obsolete line folds).
    pub fn data_mut(&mut self) -> &mut [u8] {
        self.ring.readable_mut()
    }

    /// Drops the first `n` unread bytes.
    pub fn consume(&mut self, n: usize) {
        self.ring.consume(n);
    }

    /// The ring, to inspect (capacity, backing).
    pub fn ring(&self) -> &Ring {
        &self.ring
    }

    /// The ring, for callers that want its finer API (release_pages when idle).
    pub fn ring_mut(&mut self) -> &mut Ring {
        &mut self.ring
    }

    /// The underlying stream.
    pub fn get_ref(&self) -> &R {
        &self.io
    }

    /// The underlying stream, mutably (to set socket options, or rewind a fixture).
    pub fn get_mut(&mut self) -> &mut R {
        &mut self.io
    }

    /// The ring (to return to a pool) and the stream.
    pub fn into_parts(self) -> (Ring, R) {
        (self.ring, self.io)
    }
}

impl<R: Read> Source for RecvTransport<R> {
    type Error = TransportError;

    fn data(&self) -> &[u8] {
        self.ring.readable()
    }

    fn consume(&mut self, n: usize) {
        self.ring.consume(n);
    }

    fn fill(&mut self, at_least: usize) -> Result<usize, TransportError> {
        RecvTransport::fill(self, at_least)
    }
}

/// Grows the ring so it can hold `at_least` bytes (and at least one more than it holds now),
/// then receives once into its free span; a read that filled it grows the ring for bursts
/// ([`crate::BURST_CAPACITY`]). Shared by every receive driver, blocking or not.
pub(crate) fn fill_with(
    ring: &mut Ring,
    at_least: usize,
    mut recv: impl FnMut(&mut [u8]) -> io::Result<usize>,
) -> Result<usize, TransportError> {
    // A full ring whose parser still says Partial needs room for at least one byte more;
    // growing here (up to the bound) is what keeps a message larger than the ring from hanging.
    ring.ensure_capacity(at_least.max(ring.len() + 1))?;
    loop {
        let span = ring.writable();
        let room = span.len();
        match recv(span) {
            Ok(n) => {
                ring.commit(n);
                if n == room {
                    // Full, and more is likely waiting: the next read takes the rest.
                    grow_for_burst(ring, 1);
                }
                return Ok(n);
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e.into()),
        }
    }
}
