//! The ciphertext side of a session: a receive ring the driver fills with
//! what the socket delivered, and a send ring the driver drains to it.
//! The TLS library reads records from the one and writes records into the
//! other through `Read`/`Write`; it never touches the socket.

use std::io::{self, Read, Write};

use ringwire_ring::{Ring, RingConfig};

use crate::TlsError;

/// Room for one full TLS record (16 KiB of plaintext plus its overhead)
/// and then some; the rings grow to a bound for bursts.
const RING: usize = 32 << 10;
const RING_MAX: usize = 4 << 20;

/// Ciphertext that may wait for the socket; past it, writes take no more
/// plaintext (so one large write cannot outgrow the output ring).
const PENDING_MAX: usize = 256 << 10;

/// Ciphertext in and out.
#[derive(Debug)]
pub(crate) struct Wire {
    /// Received ciphertext not yet taken by the TLS library.
    pub(crate) input: Ring,
    /// Ciphertext the TLS library wrote, not yet sent.
    pub(crate) output: Ring,
    /// The peer's end of stream reached `input`.
    pub(crate) eof: bool,
}

impl Wire {
    pub(crate) fn new() -> Result<Wire, TlsError> {
        let config = RingConfig::with_capacity(RING).max_capacity(RING_MAX);
        Ok(Wire {
            input: Ring::new(config)?,
            output: Ring::new(config)?,
            eof: false,
        })
    }

    /// Gives the rings' touched pages back to the OS if both are empty (an
    /// idle connection); whether they were.
    pub(crate) fn release_pages(&mut self) -> Result<bool, TlsError> {
        if !(self.input.is_empty() && self.output.is_empty()) {
            return Ok(false);
        }
        Ok(self.input.release_pages()? && self.output.release_pages()?)
    }

    /// How much more plaintext a write may encrypt now (record overhead
    /// aside): what the output ring holds counts against [`PENDING_MAX`].
    pub(crate) fn room(&self) -> usize {
        PENDING_MAX.saturating_sub(self.output.len())
    }

    /// Receives once with `recv` into the input ring; 0 is end of stream.
    pub(crate) fn receive(
        &mut self,
        recv: impl FnOnce(&mut [u8]) -> io::Result<usize>,
    ) -> io::Result<usize> {
        let free = self
            .input
            .reserve(RING / 2)
            .map_err(|e| io::Error::other(TlsError::Ring(e)))?;
        let n = recv(free)?;
        self.input.commit(n);
        if n == 0 {
            self.eof = true;
        }
        Ok(n)
    }

    /// Sends what `output` holds with `send` until it is empty or the
    /// socket would block (`WouldBlock` then).
    pub(crate) fn send(
        &mut self,
        mut send: impl FnMut(&[u8]) -> io::Result<usize>,
    ) -> io::Result<()> {
        while !self.output.is_empty() {
            match send(self.output.readable()) {
                Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
                Ok(n) => self.output.consume(n),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }
}

/// The TLS library's view: records in, records out.
impl Read for Wire {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let data = self.input.readable();
        if data.is_empty() {
            // Nothing yet: the library asks again once the driver received
            // more; at end of stream it sees the end.
            return if self.eof {
                Ok(0)
            } else {
                Err(io::ErrorKind::WouldBlock.into())
            };
        }
        let n = data.len().min(buf.len());
        buf[..n].copy_from_slice(&data[..n]);
        self.input.consume(n);
        Ok(n)
    }
}

impl Write for Wire {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let span = self
            .output
            .reserve(buf.len())
            .map_err(|e| io::Error::other(TlsError::Ring(e)))?;
        span[..buf.len()].copy_from_slice(buf);
        self.output.commit(buf.len());
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// Whether a send failed because the peer closed or reset the connection. A read goes on
/// then: what the peer sent before it went (an answer, an alert saying why) is still to be
/// read, and the failure shows again at the next write.
pub(crate) fn peer_gone(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::BrokenPipe | io::ErrorKind::ConnectionReset
    )
}
