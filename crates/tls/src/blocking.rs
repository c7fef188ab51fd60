//! TLS over a blocking `Read + Write` stream: the same sessions, for the
//! blocking transports and clients.

use std::cell::RefCell;
use std::io::{self, Read, Write};
use std::rc::Rc;

use ringwire_io::ShutdownWrite;

use crate::session::{Plain, Session};
use crate::wire::Wire;
use crate::{TlsAcceptor, TlsConnector, TlsError};

/// A TLS session over a blocking stream. `read` decrypts into the span it
/// is given (with OpenSSL, straight into a receive ring's free span).
pub struct BlockingTlsStream<S> {
    io: S,
    session: Session,
}

impl<S> std::fmt::Debug for BlockingTlsStream<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("BlockingTlsStream")
    }
}

impl TlsConnector {
    /// Runs the client side of a handshake with `server_name` on `io`.
    ///
    /// # Errors
    ///
    /// The handshake failed: see [`TlsError`].
    pub fn connect_blocking<S: Read + Write>(
        &self,
        server_name: &str,
        io: S,
    ) -> Result<BlockingTlsStream<S>, TlsError> {
        BlockingTlsStream::handshake(self.session(server_name)?, io)
    }
}

impl TlsAcceptor {
    /// Runs the server side of a handshake on `io`.
    ///
    /// # Errors
    ///
    /// The handshake failed: see [`TlsError`].
    pub fn accept_blocking<S: Read + Write>(
        &self,
        io: S,
    ) -> Result<BlockingTlsStream<S>, TlsError> {
        BlockingTlsStream::handshake(self.session()?, io)
    }
}

impl<S: Read + Write> BlockingTlsStream<S> {
    fn handshake(mut session: Session, mut io: S) -> Result<Self, TlsError> {
        loop {
            let done = session.handshake();
            send(&mut io, session.wire())?;
            if done? {
                return Ok(BlockingTlsStream { io, session });
            }
            session.wire().receive(|buf| io.read(buf))?;
        }
    }

    /// Gives the ciphertext rings' touched pages back to the OS, and frees
    /// the TLS library's record buffers, when nothing waits in them: for a
    /// connection going idle, as [`TlsStream::release_idle_memory`](crate::TlsStream::release_idle_memory).
    /// Whether all of it was released.
    ///
    /// # Errors
    ///
    /// The OS refused (`madvise`).
    pub fn release_idle_memory(&mut self) -> Result<bool, TlsError> {
        let freed = self.session.release_buffers();
        Ok(self.session.wire().release_pages()? && freed)
    }

    /// The protocol ALPN settled on, if any.
    pub fn alpn_protocol(&self) -> Option<Vec<u8>> {
        self.session.alpn_protocol()
    }

    /// Whether the handshake resumed an earlier session with this server.
    pub fn is_resumed(&self) -> bool {
        self.session.is_resumed()
    }

    /// The peer's certificate (DER): see [`TlsStream::peer_certificate`](crate::TlsStream::peer_certificate).
    pub fn peer_certificate(&self) -> Option<Vec<u8>> {
        self.session.peer_certificate()
    }

    /// The stream underneath.
    pub fn get_ref(&self) -> &S {
        &self.io
    }

    /// Sends `close_notify`.
    ///
    /// # Errors
    ///
    /// The stream failed.
    pub fn close(&mut self) -> io::Result<()> {
        self.session.close()?;
        send(&mut self.io, self.session.wire())
    }
}

impl<S: Read + Write> BlockingTlsStream<S> {
    /// Two handles on this session for one thread, one for reading and one for writing, as
    /// a receive and a send transport each take their own stream (a blocking WebSocket's,
    /// say). Not `Send`: a read that waits for the peer holds the session.
    pub fn split(self) -> (TlsHalf<S>, TlsHalf<S>) {
        let shared = Rc::new(RefCell::new(self));
        (TlsHalf(Rc::clone(&shared)), TlsHalf(shared))
    }
}

/// One of the two handles [`BlockingTlsStream::split`] makes: reads and writes go to the
/// shared session.
pub struct TlsHalf<S>(Rc<RefCell<BlockingTlsStream<S>>>);

impl<S> std::fmt::Debug for TlsHalf<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("TlsHalf")
    }
}

impl<S: Read + Write> Read for TlsHalf<S> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.0.borrow_mut().read(buf)
    }
}

impl<S: Read + Write> Write for TlsHalf<S> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0.borrow_mut().write(buf)
    }

    fn write_vectored(&mut self, bufs: &[io::IoSlice<'_>]) -> io::Result<usize> {
        self.0.borrow_mut().write_vectored(bufs)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.0.borrow_mut().flush()
    }
}

impl<S: Read + Write + ShutdownWrite> ShutdownWrite for TlsHalf<S> {
    /// `close_notify`, then the stream's own half-close.
    fn shutdown_write(&mut self) -> io::Result<()> {
        let mut stream = self.0.borrow_mut();
        stream.close()?;
        stream.io.shutdown_write()
    }
}

fn send<S: Write>(io: &mut S, wire: &mut Wire) -> io::Result<()> {
    wire.send(|bytes| io.write(bytes))?;
    io.flush()
}

impl<S: Read + Write> Read for BlockingTlsStream<S> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        loop {
            let plain = self.session.read(buf);
            // Records that cannot leave yet (a nonblocking socket, full) wait for the next
            // write or flush: they must not keep the read from what has arrived.
            match send(&mut self.io, self.session.wire()) {
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                Err(e) if !crate::wire::peer_gone(&e) => return Err(e),
                _ => {}
            }
            match plain? {
                Plain::Read(n) => return Ok(n),
                Plain::Closed => return Ok(0),
                Plain::WantCipher => {
                    let io = &mut self.io;
                    self.session.wire().receive(|span| io.read(span))?;
                }
            }
        }
    }
}

/// Over a nonblocking socket a write takes what it encrypted even when the records cannot
/// all leave yet: they wait in the output ring, and go before the next write's (whose
/// `WouldBlock` then means nothing was taken) or at [`flush`](Write::flush).
impl<S: Read + Write> Write for BlockingTlsStream<S> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.write_vectored(&[io::IoSlice::new(buf)])
    }

    fn write_vectored(&mut self, bufs: &[io::IoSlice<'_>]) -> io::Result<usize> {
        send(&mut self.io, self.session.wire())?;
        let n = self.session.write_vectored(bufs)?;
        match send(&mut self.io, self.session.wire()) {
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => Ok(n),
            sent => sent.map(|()| n),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        send(&mut self.io, self.session.wire())
    }
}
