//! Both directions of one byte stream.

use std::io::{Read, Write};
use std::net::TcpStream;

use crate::pipe::{self, PipeReader, PipeWriter};
use crate::{RecvTransport, SendTransport, ShutdownWrite, TransportConfig, TransportError};

/// A receive ring and a send ring over the two halves of one stream. The halves are separate
/// values so that a parser can borrow received bytes while an encoder writes the reply.
#[derive(Debug)]
pub struct Duplex<R, W> {
    /// Receiving half.
    pub rx: RecvTransport<R>,
    /// Sending half.
    pub tx: SendTransport<W>,
}

impl<R: Read, W: Write + ShutdownWrite> Duplex<R, W> {
    /// Rings from `config` over a reading and a writing half.
    pub fn new(config: TransportConfig, reader: R, writer: W) -> Result<Self, TransportError> {
        Ok(Self {
            rx: RecvTransport::new(config, reader)?,
            tx: SendTransport::new(config, writer)?,
        })
    }
}

impl<'s> Duplex<&'s TcpStream, &'s TcpStream> {
    /// Both directions of a TCP connection the caller keeps owning.
    pub fn tcp(config: TransportConfig, stream: &'s TcpStream) -> Result<Self, TransportError> {
        Self::new(config, stream, stream)
    }
}

impl Duplex<PipeReader, PipeWriter> {
    /// Two connected in-memory duplex transports, for tests: what one sends the other receives.
    pub fn pipe(config: TransportConfig) -> Result<(Self, Self), TransportError> {
        let ((r1, w1), (r2, w2)) = pipe::pair();
        Ok((Self::new(config, r1, w1)?, Self::new(config, r2, w2)?))
    }
}
