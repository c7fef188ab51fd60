//! Send transport: encoders write into a reservation of the send ring; flush sends the ring.

use std::io::{self, IoSlice, Write};

use ringwire_ring::Ring;

use crate::config::grow_for_burst;
use crate::{ShutdownWrite, TransportConfig, TransportError};

/// A send ring drained into any [`Write`] (socket, TLS stream, callback, pipe).
///
/// Encoders [`reserve`](SendTransport::reserve) a span, write into it and
/// [`commit`](SendTransport::commit) what they wrote; nothing is sent until
/// [`flush`](SendTransport::flush), so many small messages leave in one `send`.
#[derive(Debug)]
pub struct SendTransport<W> {
    ring: Ring,
    io: W,
}

impl<W: Write + ShutdownWrite> SendTransport<W> {
    /// A transport with a fresh send ring sized by `config.tx`.
    pub fn new(config: TransportConfig, io: W) -> Result<Self, TransportError> {
        Ok(Self::with_ring(config.tx_ring()?, io))
    }

    /// A transport over a ring the caller owns.
    pub fn with_ring(ring: Ring, io: W) -> Self {
        Self { ring, io }
    }

    /// A writable span of at least `n` bytes. When the ring lacks room it grows for the burst
    /// ([`crate::BURST_CAPACITY`]), else it is flushed first; past that it grows (up to its
    /// bound) only for a single message larger than the ring.
    pub fn reserve(&mut self, n: usize) -> Result<&mut [u8], TransportError> {
        if self.ring.free() < n && !grow_for_burst(&mut self.ring, n) {
            self.flush()?;
        }
        Ok(self.ring.reserve(n)?)
    }

    /// Queues the first `n` bytes of the last reservation.
    pub fn commit(&mut self, n: usize) {
        self.ring.commit(n);
    }

    /// Queues a copy of `bytes`.
    pub fn write(&mut self, bytes: &[u8]) -> Result<(), TransportError> {
        self.reserve(bytes.len())?[..bytes.len()].copy_from_slice(bytes);
        self.commit(bytes.len());
        Ok(())
    }

    /// Sends what is queued, then `slices`, without copying them: one `writev` when the kernel
    /// takes it all, more when it takes part.
    pub fn send_vectored(&mut self, slices: &[&[u8]]) -> Result<(), TransportError> {
        let mut gather = Gather::new(self.ring.readable(), slices);
        while !gather.is_done() {
            gather.write(|iov| self.io.write_vectored(iov))?;
        }
        self.ring.clear();
        Ok(())
    }

    /// Sends everything queued.
    pub fn flush(&mut self) -> Result<(), TransportError> {
        let io = &mut self.io;
        while !self.ring.is_empty() {
            send_once(&mut self.ring, |bytes| io.write(bytes))?;
        }
        Ok(())
    }

    /// Flushes, then half-closes: the peer sees end of stream.
    pub fn shutdown_write(&mut self) -> Result<(), TransportError> {
        self.flush()?;
        Ok(self.io.shutdown_write()?)
    }

    /// Bytes queued and not yet sent.
    pub fn pending(&self) -> usize {
        self.ring.len()
    }

    /// The underlying stream.
    pub fn get_ref(&self) -> &W {
        &self.io
    }

    /// The underlying stream, mutably (to set socket options, or rewind a fixture).
    pub fn get_mut(&mut self) -> &mut W {
        &mut self.io
    }

    /// The ring and the stream; queued bytes stay in the ring.
    pub fn into_parts(self) -> (Ring, W) {
        (self.ring, self.io)
    }
}

/// One `send` from the front of the ring; consumes what the kernel took.
pub(crate) fn send_once(
    ring: &mut Ring,
    mut send: impl FnMut(&[u8]) -> io::Result<usize>,
) -> Result<(), TransportError> {
    match send(ring.readable()) {
        Ok(0) => Err(io::Error::from(io::ErrorKind::WriteZero).into()),
        Ok(n) => {
            ring.consume(n);
            Ok(())
        }
        Err(e) if e.kind() == io::ErrorKind::Interrupted => Ok(()),
        Err(e) => Err(e.into()),
    }
}

/// Progress through a gathered write of a head span followed by many slices, in batches of at
/// most [`Gather::BATCH`] iovecs (no allocation; `IOV_MAX` is 1024 on Linux).
pub(crate) struct Gather<'a> {
    iov: [IoSlice<'a>; Gather::BATCH],
    /// Filled and unsent entries of `iov`: `iov[start..end]`.
    start: usize,
    end: usize,
    /// Slices not yet loaded into `iov`.
    rest: &'a [&'a [u8]],
}

impl<'a> Gather<'a> {
    const BATCH: usize = 64;

    pub(crate) fn new(head: &'a [u8], slices: &'a [&'a [u8]]) -> Self {
        let mut gather = Self {
            iov: [IoSlice::new(&[]); Self::BATCH],
            start: 0,
            end: 0,
            rest: slices,
        };
        if !head.is_empty() {
            gather.iov[0] = IoSlice::new(head);
            gather.end = 1;
        }
        gather.load();
        gather
    }

    pub(crate) fn is_done(&self) -> bool {
        self.start == self.end
    }

    /// One vectored write; advances past what the kernel took.
    pub(crate) fn write(
        &mut self,
        writev: impl FnOnce(&[IoSlice<'a>]) -> io::Result<usize>,
    ) -> Result<(), TransportError> {
        let n = match writev(&self.iov[self.start..self.end]) {
            Ok(0) => return Err(io::Error::from(io::ErrorKind::WriteZero).into()),
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => 0,
            Err(e) => return Err(e.into()),
        };
        let mut window = &mut self.iov[self.start..self.end];
        IoSlice::advance_slices(&mut window, n);
        self.start = self.end - window.len();
        if self.is_done() {
            self.start = 0;
            self.end = 0;
            self.load();
        }
        Ok(())
    }

    /// Moves slices from `rest` into free iovec entries, skipping empty ones.
    fn load(&mut self) {
        while self.end < Self::BATCH {
            let Some((first, rest)) = self.rest.split_first() else {
                break;
            };
            self.rest = rest;
            if !first.is_empty() {
                self.iov[self.end] = IoSlice::new(first);
                self.end += 1;
            }
        }
    }
}
