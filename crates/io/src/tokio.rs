//! Tokio driver: wait for readiness, then `try_read` straight into the ring's free span (and
//! `try_write` from the send ring). Same rings, same semantics as the blocking transports.

use std::future::Future;
use std::io::{self, IoSlice};
use std::net::Shutdown;
use std::sync::Arc;
use std::time::Duration;

use ringwire_ring::Ring;
use ringwire_wire::AsyncSource;

pub use crate::net::AsyncNetStream;

use crate::config::grow_for_burst;
use crate::recv::fill_with;
use crate::send::{send_once, Gather};
use crate::{TransportConfig, TransportError};

/// A readiness-based stream (tokio's `TcpStream` and `UnixStream`, or a reference to one).
pub trait AsyncStream {
    /// Resolves when a read may make progress.
    fn readable(&self) -> impl Future<Output = io::Result<()>> + Send;
    /// Nonblocking read; `WouldBlock` when nothing is ready.
    fn try_read(&self, buf: &mut [u8]) -> io::Result<usize>;
    /// Resolves when a write may make progress.
    fn writable(&self) -> impl Future<Output = io::Result<()>> + Send;
    /// Nonblocking write.
    fn try_write(&self, buf: &[u8]) -> io::Result<usize>;
    /// Nonblocking gathered write.
    fn try_write_vectored(&self, bufs: &[IoSlice<'_>]) -> io::Result<usize>;
    /// Nonblocking write of bytes that more will follow at once (a head
    /// before a `sendfile`): on Linux `MSG_MORE`, so they share packets
    /// with what follows instead of going out alone.
    fn try_write_more(&self, buf: &[u8]) -> io::Result<usize> {
        self.try_write(buf)
    }
    /// Pushes out bytes the stream itself holds back (a TLS session's
    /// ciphertext); `WouldBlock` while some remain. Plain sockets hold none.
    fn try_flush(&self) -> io::Result<()> {
        Ok(())
    }
    /// Half-close: the peer sees end of stream. `WouldBlock` when what
    /// must go first (a TLS `close_notify`) cannot leave yet.
    fn shutdown_write(&self) -> io::Result<()>;
}

macro_rules! tokio_stream {
    ($($t:ty),*) => {$(
        impl AsyncStream for $t {
            fn readable(&self) -> impl Future<Output = io::Result<()>> + Send {
                <$t>::readable(self)
            }
            fn try_read(&self, buf: &mut [u8]) -> io::Result<usize> {
                // A short read drained the socket: clear tokio's readiness
                // now (by reporting `WouldBlock` from inside `try_io`, which
                // clears it only if no new event came meanwhile), so the next
                // read waits for data instead of paying a `recv` that fails
                // with `EAGAIN`: one system call less per request.
                let mut drained = None;
                let read = self.try_io(::tokio::io::Interest::READABLE, || {
                    let n = io::Read::read(&mut &*socket2::SockRef::from(self), buf)?;
                    if n > 0 && n < buf.len() {
                        drained = Some(n);
                        return Err(io::ErrorKind::WouldBlock.into());
                    }
                    Ok(n)
                });
                match drained {
                    Some(n) => Ok(n),
                    None => read,
                }
            }
            fn writable(&self) -> impl Future<Output = io::Result<()>> + Send {
                <$t>::writable(self)
            }
            fn try_write(&self, buf: &[u8]) -> io::Result<usize> {
                <$t>::try_write(self, buf)
            }
            fn try_write_vectored(&self, bufs: &[IoSlice<'_>]) -> io::Result<usize> {
                <$t>::try_write_vectored(self, bufs)
            }
            #[cfg(target_os = "linux")]
            fn try_write_more(&self, buf: &[u8]) -> io::Result<usize> {
                // `try_io` clears the readiness on `WouldBlock`, as
                // `try_write` does. (Unix sockets ignore the flag.)
                self.try_io(::tokio::io::Interest::WRITABLE, || {
                    socket2::SockRef::from(self).send_with_flags(buf, libc::MSG_MORE)
                })
            }
            fn shutdown_write(&self) -> io::Result<()> {
                socket2::SockRef::from(self).shutdown(Shutdown::Write)
            }
        }
    )*};
}
tokio_stream!(::tokio::net::TcpStream, ::tokio::net::UnixStream);

macro_rules! delegate_stream {
    ($($ptr:ty),*) => {$(
        impl<T: AsyncStream + Sync> AsyncStream for $ptr {
            fn readable(&self) -> impl Future<Output = io::Result<()>> + Send {
                (**self).readable()
            }
            fn try_read(&self, buf: &mut [u8]) -> io::Result<usize> {
                (**self).try_read(buf)
            }
            fn writable(&self) -> impl Future<Output = io::Result<()>> + Send {
                (**self).writable()
            }
            fn try_write(&self, buf: &[u8]) -> io::Result<usize> {
                (**self).try_write(buf)
            }
            fn try_write_vectored(&self, bufs: &[IoSlice<'_>]) -> io::Result<usize> {
                (**self).try_write_vectored(bufs)
            }
            fn try_write_more(&self, buf: &[u8]) -> io::Result<usize> {
                (**self).try_write_more(buf)
            }
            fn try_flush(&self) -> io::Result<()> {
                (**self).try_flush()
            }
            fn shutdown_write(&self) -> io::Result<()> {
                (**self).shutdown_write()
            }
        }
    )*};
}
delegate_stream!(&T, Arc<T>, Box<T>);

/// Implements [`AsyncStream`] for an enum each of whose variants holds one stream, every call
/// forwarded to the variant's (by the trait's path: tokio's sockets have inherent methods of
/// the same names, which would win):
/// `forward_async_stream!(impl[S: AsyncStream + Send + Sync] MaybeTls<S> { MaybeTls::Plain, MaybeTls::Tls });`
#[macro_export]
macro_rules! forward_async_stream {
    (impl[$($generics:tt)*] $ty:ty { $($variant:path),+ $(,)? }) => {
        impl<$($generics)*> $crate::tokio::AsyncStream for $ty {
            async fn readable(&self) -> ::std::io::Result<()> {
                match self {
                    $($variant(s) => $crate::tokio::AsyncStream::readable(s).await,)+
                }
            }
            fn try_read(&self, buf: &mut [u8]) -> ::std::io::Result<usize> {
                match self {
                    $($variant(s) => $crate::tokio::AsyncStream::try_read(s, buf),)+
                }
            }
            async fn writable(&self) -> ::std::io::Result<()> {
                match self {
                    $($variant(s) => $crate::tokio::AsyncStream::writable(s).await,)+
                }
            }
            fn try_write(&self, buf: &[u8]) -> ::std::io::Result<usize> {
                match self {
                    $($variant(s) => $crate::tokio::AsyncStream::try_write(s, buf),)+
                }
            }
            fn try_write_vectored(
                &self,
                bufs: &[::std::io::IoSlice<'_>],
            ) -> ::std::io::Result<usize> {
                match self {
                    $($variant(s) => $crate::tokio::AsyncStream::try_write_vectored(s, bufs),)+
                }
            }
            fn try_write_more(&self, buf: &[u8]) -> ::std::io::Result<usize> {
                match self {
                    $($variant(s) => $crate::tokio::AsyncStream::try_write_more(s, buf),)+
                }
            }
            fn try_flush(&self) -> ::std::io::Result<()> {
                match self {
                    $($variant(s) => $crate::tokio::AsyncStream::try_flush(s),)+
                }
            }
            fn shutdown_write(&self) -> ::std::io::Result<()> {
                match self {
                    $($variant(s) => $crate::tokio::AsyncStream::shutdown_write(s),)+
                }
            }
        }
    };
}

/// Receive ring over a tokio stream.
#[derive(Debug)]
pub struct AsyncRecvTransport<S> {
    ring: Ring,
    io: S,
}

impl<S: AsyncStream> AsyncRecvTransport<S> {
    /// A transport with a fresh receive ring sized by `config.rx`.
    pub fn new(config: TransportConfig, io: S) -> Result<Self, TransportError> {
        Ok(Self::with_ring(config.rx_ring()?, io))
    }

    /// A transport over a ring the caller owns.
    pub fn with_ring(ring: Ring, io: S) -> Self {
        Self { ring, io }
    }

    /// Receives once into the free span (waiting for readiness if nothing is there), after
    /// making room for `at_least` unread bytes in all. 0 is end of stream.
    pub async fn fill(&mut self, at_least: usize) -> Result<usize, TransportError> {
        loop {
            match fill_with(&mut self.ring, at_least, |span| self.io.try_read(span)) {
                Err(e) if e.is_would_block() => self.io.readable().await?,
                done => return done,
            }
        }
    }

    /// Receives once if bytes (or the end of stream) are already there, without waiting:
    /// `None` when nothing is ready. Like [`fill`](Self::fill), makes room for `at_least`
    /// unread bytes first. A `None` clears the stream's cached readiness, so the next
    /// `readable()` wait on the stream (with or without this transport) sleeps until the peer
    /// sends: how a connection can hand its ring back while idle.
    pub fn try_fill(&mut self, at_least: usize) -> Result<Option<usize>, TransportError> {
        match fill_with(&mut self.ring, at_least, |span| self.io.try_read(span)) {
            Err(e) if e.is_would_block() => Ok(None),
            done => done.map(Some),
        }
    }

    /// Unread bytes, contiguous.
    pub fn data(&self) -> &[u8] {
        self.ring.readable()
    }

    /// The receive ring, to inspect its size.
    pub fn ring(&self) -> &Ring {
        &self.ring
    }

    /// The receive ring, for callers that want its finer API (a growth bound raised to
    /// what a protocol's limits allow).
    pub fn ring_mut(&mut self) -> &mut Ring {
        &mut self.ring
    }

    /// Unread bytes, contiguous and writable: for decoders that transform
    /// in place (a WebSocket reader unmasks payloads where they arrived).
    pub fn data_mut(&mut self) -> &mut [u8] {
        self.ring.readable_mut()
    }

    /// Drops the first `n` unread bytes.
    pub fn consume(&mut self, n: usize) {
        self.ring.consume(n);
    }

    /// Forgets the unread bytes past the first `len` ([`Ring::truncate`]): for a decoder that
    /// compacts in place, to give the room it freed back to the next receive.
    pub fn truncate(&mut self, len: usize) {
        self.ring.truncate(len);
    }

    /// The ring and the stream.
    pub fn into_parts(self) -> (Ring, S) {
        (self.ring, self.io)
    }

    /// Gives the ring's touched pages back to the OS if nothing is unread (see
    /// [`Ring::release_pages`]): for a connection gone quiet after a large message grew its
    /// ring. Whether they were released.
    ///
    /// # Errors
    ///
    /// The OS refused.
    pub fn release_pages(&mut self) -> Result<bool, TransportError> {
        Ok(self.ring.release_pages()?)
    }
}

impl<S: AsyncStream> AsyncSource for AsyncRecvTransport<S> {
    type Error = TransportError;

    fn data(&self) -> &[u8] {
        self.ring.readable()
    }

    fn consume(&mut self, n: usize) {
        self.ring.consume(n);
    }

    async fn fill(&mut self, at_least: usize) -> Result<usize, TransportError> {
        AsyncRecvTransport::fill(self, at_least).await
    }
}

/// Send ring over a tokio stream.
#[derive(Debug)]
pub struct AsyncSendTransport<S> {
    ring: Ring,
    io: S,
    /// How long a send may wait for the peer to take bytes.
    stall: Option<Duration>,
}

impl<S: AsyncStream> AsyncSendTransport<S> {
    /// A transport with a fresh send ring sized by `config.tx`.
    pub fn new(config: TransportConfig, io: S) -> Result<Self, TransportError> {
        Ok(Self::with_ring(config.tx_ring()?, io))
    }

    /// A transport over a ring the caller owns.
    pub fn with_ring(ring: Ring, io: S) -> Self {
        Self {
            ring,
            io,
            stall: None,
        }
    }

    /// Bounds how long any send waits for the peer to take bytes (a peer
    /// that stops reading): past `limit` without progress, the send fails
    /// with [`io::ErrorKind::TimedOut`]. `None` (the default) waits forever.
    pub fn set_stall_limit(&mut self, limit: Option<Duration>) {
        self.stall = limit;
    }

    /// Resolves when the stream can take more bytes, within the stall limit.
    ///
    /// # Errors
    ///
    /// The stall limit passed, or the stream failed.
    pub async fn writable(&self) -> Result<(), TransportError> {
        match self.stall {
            None => Ok(self.io.writable().await?),
            Some(limit) => match tokio::time::timeout(limit, self.io.writable()).await {
                Ok(ready) => Ok(ready?),
                Err(_) => Err(io::Error::new(
                    io::ErrorKind::TimedOut,
                    "the peer took no bytes within the send stall limit",
                )
                .into()),
            },
        }
    }

    /// A writable span of at least `n` bytes. When the ring lacks room it grows for the burst
    /// ([`crate::BURST_CAPACITY`]), else it is flushed first.
    pub async fn reserve(&mut self, n: usize) -> Result<&mut [u8], TransportError> {
        if self.ring.free() < n && !grow_for_burst(&mut self.ring, n) {
            self.flush().await?;
        }
        Ok(self.ring.reserve(n)?)
    }

    /// Queues the first `n` bytes of the last reservation.
    pub fn commit(&mut self, n: usize) {
        self.ring.commit(n);
    }

    /// Queues a copy of `bytes`.
    pub async fn write(&mut self, bytes: &[u8]) -> Result<(), TransportError> {
        self.reserve(bytes.len()).await?[..bytes.len()].copy_from_slice(bytes);
        self.commit(bytes.len());
        Ok(())
    }

    /// Sends what is queued, then `slices`, without copying them.
    ///
    /// Not cancel-safe: dropped midway, part of the bytes is on the wire and the queued ones
    /// would go out again; the stream is then unusable.
    pub async fn send_vectored(&mut self, slices: &[&[u8]]) -> Result<(), TransportError> {
        self.gather(Gather::new(self.ring.readable(), slices))
            .await?;
        self.ring.clear();
        self.flush_stream().await
    }

    /// Sends what is queued with `slices[i]` inserted after its first `at[i]` bytes, without
    /// copying the slices (an encoder that left room for payloads lying elsewhere, such as
    /// Kafka's record batches, notes where each goes).
    ///
    /// Not cancel-safe, as [`send_vectored`](Self::send_vectored).
    ///
    /// # Panics
    ///
    /// If `at` and `slices` differ in length, or `at` is not ascending within the queued bytes.
    pub async fn send_spliced(
        &mut self,
        at: &[usize],
        slices: &[&[u8]],
    ) -> Result<(), TransportError> {
        assert_eq!(at.len(), slices.len(), "one offset per spliced slice");
        let queued = self.ring.readable();
        let mut pieces = Vec::with_capacity(2 * slices.len() + 1);
        let mut from = 0;
        for (&at, &slice) in at.iter().zip(slices) {
            pieces.extend([&queued[from..at], slice]);
            from = at;
        }
        pieces.push(&queued[from..]);
        self.gather(Gather::new(&[], &pieces)).await?;
        self.ring.clear();
        self.flush_stream().await
    }

    /// Writes everything `gather` holds (the caller then drops the queued bytes among it).
    async fn gather(&self, mut gather: Gather<'_>) -> Result<(), TransportError> {
        while !gather.is_done() {
            match gather.write(|iov| self.io.try_write_vectored(iov)) {
                Err(e) if e.is_would_block() => self.writable().await?,
                sent => sent?,
            }
        }
        Ok(())
    }

    /// Sends everything queued.
    pub async fn flush(&mut self) -> Result<(), TransportError> {
        self.drain(false).await
    }

    /// Sends everything queued, telling the kernel that more follows at
    /// once ([`AsyncStream::try_write_more`]): before a `sendfile`.
    pub async fn flush_more(&mut self) -> Result<(), TransportError> {
        self.drain(true).await
    }

    async fn drain(&mut self, more: bool) -> Result<(), TransportError> {
        while !self.ring.is_empty() {
            let io = &self.io;
            let sent = send_once(&mut self.ring, |bytes| {
                if more {
                    io.try_write_more(bytes)
                } else {
                    io.try_write(bytes)
                }
            });
            match sent {
                Err(e) if e.is_would_block() => self.writable().await?,
                sent => sent?,
            }
        }
        self.flush_stream().await
    }

    /// Waits until the stream has pushed out what it holds back.
    async fn flush_stream(&self) -> Result<(), TransportError> {
        self.retry(|io| io.try_flush()).await
    }

    /// Runs `op` until it does not block, waiting for writability between.
    async fn retry(&self, op: impl Fn(&S) -> io::Result<()>) -> Result<(), TransportError> {
        loop {
            match op(&self.io) {
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => self.writable().await?,
                done => return Ok(done?),
            }
        }
    }

    /// Flushes, then half-closes.
    pub async fn shutdown_write(&mut self) -> Result<(), TransportError> {
        self.flush().await?;
        self.retry(|io| io.shutdown_write()).await
    }

    /// Bytes queued and not yet sent.
    pub fn pending(&self) -> usize {
        self.ring.len()
    }

    /// The send ring, to inspect its size and bound.
    pub fn ring(&self) -> &Ring {
        &self.ring
    }

    /// The send ring: a caller that sends only from its own buffers
    /// ([`send_vectored`](Self::send_vectored)) may hand it back to its pool, leaving
    /// [`Ring::empty`] in its place, once nothing is queued.
    pub fn ring_mut(&mut self) -> &mut Ring {
        &mut self.ring
    }

    /// The ring (with any bytes still queued) and the stream.
    pub fn into_parts(self) -> (Ring, S) {
        (self.ring, self.io)
    }

    /// The underlying stream (to set socket options, or to send a file
    /// from the kernel once the ring is flushed).
    pub fn get_ref(&self) -> &S {
        &self.io
    }
}

/// Both directions of one tokio stream the caller keeps owning.
#[derive(Debug)]
pub struct AsyncDuplex<'s, S> {
    /// Receiving half.
    pub rx: AsyncRecvTransport<&'s S>,
    /// Sending half.
    pub tx: AsyncSendTransport<&'s S>,
}

impl<'s, S: AsyncStream + Sync> AsyncDuplex<'s, S> {
    /// Rings from `config` over `stream`.
    pub fn new(config: TransportConfig, stream: &'s S) -> Result<Self, TransportError> {
        Ok(Self {
            rx: AsyncRecvTransport::new(config, stream)?,
            tx: AsyncSendTransport::new(config, stream)?,
        })
    }
}
