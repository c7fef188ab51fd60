//! An HTTP/2 stream as a byte stream both ways: what an extended `CONNECT` (RFC 8441)
//! opens for WebSocket, or for any protocol a [`Response::upgrade`](crate::Response::upgrade)
//! names. The client's bytes arrive as the request's body (its [`Inflow`], the window given
//! back as the protocol reads); the protocol's bytes go out as the response's body, a
//! stream that also drives the protocol's future, so the connection's task runs it among
//! its streams and sends what it wrote as the client's window allows.
//!
//! Each way costs one copy more than a connection of its own: the connection copies the
//! client's `DATA` into the stream's buffer before the protocol reads it into its ring, and
//! what the protocol writes waits here before the connection frames it.
//!
//! [`Inflow`]: crate::body_reader::Inflow

use std::future::poll_fn;
use std::io::{self, IoSlice};
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::task::{Context, Poll, Waker};

use bytes::{Bytes, BytesMut};
use futures_core::Stream;
use ringwire_io::tokio::{AsyncRecvTransport, AsyncSendTransport, AsyncStream};
use ringwire_io::Ring;

use crate::body_reader::RequestBody;
use crate::upgrade::{OnUpgrade, UpgradeFuture};
use crate::{Body, Shutdown, Upgraded, UpgradedStream};

/// How much the protocol may write before the connection takes it: as much as one
/// stream's body waits in the connection's queue.
const OUT_MAX: usize = crate::h2::BODY_QUEUE;

/// The protocol's side of the stream (both transports hold one).
#[derive(Debug, Clone)]
pub struct Tunnel(Arc<Ends>);

#[derive(Debug)]
struct Ends {
    /// The client's bytes.
    inbound: RequestBody,
    /// What the protocol wrote and the connection has not taken yet.
    outbound: Mutex<Outbound>,
}

#[derive(Debug, Default)]
struct Outbound {
    data: BytesMut,
    /// The protocol shut its side down: nothing more is written.
    shut: bool,
    /// A write waiting for room.
    writer: Option<Waker>,
}

impl Ends {
    fn outbound(&self) -> MutexGuard<'_, Outbound> {
        self.outbound.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// Runs `on_upgrade` over the stream whose request body `inbound` is, with `rings` (receive,
/// send) as its transports' and `shutdown` as its cue to end: the response body that
/// sends what it writes (and drives it).
pub(crate) fn open(
    inbound: RequestBody,
    rings: (Ring, Ring),
    shutdown: Shutdown,
    on_upgrade: OnUpgrade,
) -> Body {
    let tunnel = Tunnel(Arc::new(Ends {
        inbound,
        outbound: Mutex::default(),
    }));
    let stream = || UpgradedStream::Http2(tunnel.clone());
    let upgraded = Upgraded {
        rx: AsyncRecvTransport::with_ring(rings.0, stream()),
        tx: AsyncSendTransport::with_ring(rings.1, stream()),
        shutdown,
    };
    Body::stream(Driven {
        session: Some((on_upgrade.0)(upgraded)),
        ends: tunnel.0,
    })
}

/// The response body of a tunnel: the protocol's future, polled whenever the connection
/// asks for more, and the bytes it wrote. It ends once the protocol's future has (a
/// protocol that shut its side down may still read the peer's last words).
struct Driven {
    session: Option<UpgradeFuture<'static>>,
    ends: Arc<Ends>,
}

impl Stream for Driven {
    type Item = io::Result<Bytes>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        if let Some(session) = &mut self.session {
            if session.as_mut().poll(cx).is_ready() {
                self.session = None;
            }
        }
        let mut out = self.ends.outbound();
        if !out.data.is_empty() {
            let piece = out.data.split().freeze();
            if let Some(writer) = out.writer.take() {
                writer.wake();
            }
            return Poll::Ready(Some(Ok(piece)));
        }
        if self.session.is_none() {
            return Poll::Ready(None);
        }
        Poll::Pending
    }
}

impl AsyncStream for Tunnel {
    async fn readable(&self) -> io::Result<()> {
        poll_fn(|cx| self.0.inbound.inflow().poll_ready(cx)).await;
        Ok(())
    }

    fn try_read(&self, buf: &mut [u8]) -> io::Result<usize> {
        self.0.inbound.inflow().try_read(buf)
    }

    async fn writable(&self) -> io::Result<()> {
        poll_fn(|cx| {
            let mut out = self.0.outbound();
            if out.shut || out.data.len() < OUT_MAX {
                return Poll::Ready(Ok(()));
            }
            out.writer = Some(cx.waker().clone());
            Poll::Pending
        })
        .await
    }

    fn try_write(&self, buf: &[u8]) -> io::Result<usize> {
        self.try_write_vectored(&[IoSlice::new(buf)])
    }

    fn try_write_vectored(&self, bufs: &[IoSlice<'_>]) -> io::Result<usize> {
        let mut out = self.0.outbound();
        if out.shut {
            return Err(io::ErrorKind::BrokenPipe.into());
        }
        let room = OUT_MAX.saturating_sub(out.data.len());
        if room == 0 && bufs.iter().any(|b| !b.is_empty()) {
            return Err(io::ErrorKind::WouldBlock.into());
        }
        let mut written = 0;
        for buf in bufs {
            let n = buf.len().min(room - written);
            out.data.extend_from_slice(&buf[..n]);
            written += n;
        }
        Ok(written)
    }

    fn shutdown_write(&self) -> io::Result<()> {
        self.0.outbound().shut = true;
        Ok(())
    }
}
