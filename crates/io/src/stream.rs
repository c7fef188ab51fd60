//! The byte streams transports run over: anything `Read`/`Write`, plus half-close.

use std::io::{self, Read, Write};
use std::net::{Shutdown, TcpStream};
use std::os::unix::net::UnixStream;

/// A stream whose sending half can be closed while its receiving half stays open.
pub trait ShutdownWrite {
    /// Sends end-of-stream to the peer (TCP FIN). Further sends fail.
    fn shutdown_write(&mut self) -> io::Result<()>;
}

macro_rules! socket_shutdown {
    ($($t:ty),*) => {$(
        impl ShutdownWrite for $t {
            fn shutdown_write(&mut self) -> io::Result<()> {
                self.shutdown(Shutdown::Write)
            }
        }
    )*};
}
socket_shutdown!(TcpStream, &TcpStream, UnixStream, &UnixStream);

/// Any `recv` callback as a [`Read`]: `recv_fn(|buf| ssl.read(buf))`.
pub fn recv_fn<F: FnMut(&mut [u8]) -> io::Result<usize>>(recv: F) -> RecvFn<F> {
    RecvFn(recv)
}

/// See [`recv_fn`].
#[derive(Debug)]
pub struct RecvFn<F>(F);

impl<F: FnMut(&mut [u8]) -> io::Result<usize>> Read for RecvFn<F> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        (self.0)(buf)
    }
}

/// Any `send` callback plus a shutdown action as a [`Write`] + [`ShutdownWrite`].
pub fn send_fn<F, S>(send: F, shutdown: S) -> SendFn<F, S>
where
    F: FnMut(&[u8]) -> io::Result<usize>,
    S: FnMut() -> io::Result<()>,
{
    SendFn { send, shutdown }
}

/// See [`send_fn`].
#[derive(Debug)]
pub struct SendFn<F, S> {
    send: F,
    shutdown: S,
}

impl<F: FnMut(&[u8]) -> io::Result<usize>, S> Write for SendFn<F, S> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        (self.send)(buf)
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl<F, S: FnMut() -> io::Result<()>> ShutdownWrite for SendFn<F, S> {
    fn shutdown_write(&mut self) -> io::Result<()> {
        (self.shutdown)()
    }
}
