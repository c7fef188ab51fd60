//! A stream of a shared HTTP/2 connection as a byte stream both ways, opened by an
//! extended `CONNECT` (RFC 8441): what a WebSocket over HTTP/2 runs on.
//!
//! The stream's bytes are copied where a connection of its own reads them in place: the
//! connection's task copies the stream's `DATA` out of its receive ring (the other
//! streams' frames follow in that ring), and a read copies it again into the protocol's
//! ring; what the protocol writes is copied as it is framed into the connection's send
//! buffer.

use std::borrow::Cow;
use std::future::poll_fn;
use std::io::{self, IoSlice};
use std::sync::Arc;
use std::time::Instant;

use ringwire_http2::frame::StreamId;
use ringwire_io::tokio::AsyncStream;

use super::{within, Http2Connection};
use crate::{Error, Url};

/// A stream of an [`Http2Connection`] that carries a protocol's bytes both ways (what
/// [`Http2Connection::websocket`] runs on). Clones are handles to the same stream; the
/// last one dropped resets it unless both sides ended it, and lets the connection go.
#[derive(Debug, Clone)]
pub struct Http2Tunnel(Arc<Ends>);

#[derive(Debug)]
struct Ends {
    conn: Http2Connection,
    stream: StreamId,
}

impl Drop for Ends {
    fn drop(&mut self) {
        self.conn.shared.lock().cancel(self.stream);
        self.conn.shared.wake.notify_one();
    }
}

impl Http2Connection {
    /// Opens a tunnel for `protocol` to `url` with the request's `fields`, within
    /// `deadline`, once `accept` takes the answer's head (what it makes of it comes back
    /// beside the tunnel; refused, the tunnel is dropped, which resets the stream).
    pub(crate) async fn tunnel<T>(
        &self,
        url: &Url,
        protocol: &[u8],
        fields: &[(&str, Cow<'_, [u8]>)],
        deadline: Option<Instant>,
        accept: impl FnOnce(ringwire_http1::Response<'_>) -> Result<T, Error>,
    ) -> Result<(Http2Tunnel, T), Error> {
        let shared = &self.shared;
        let open = poll_fn(|cx| shared.lock().poll_open_tunnel(cx, url, protocol, fields));
        let stream = within(deadline, open).await?;
        shared.wake.notify_one();
        let tunnel = Http2Tunnel(Arc::new(Ends {
            conn: self.clone(),
            stream,
        }));
        let head = shared.final_head(stream, deadline, &mut |_| {}).await?;
        let accepted = accept(head.view());
        shared.lock().recycle(Some(head), Vec::new());
        Ok((tunnel, accepted?))
    }
}

impl Http2Tunnel {
    /// Runs `step` on the connection's state for this stream, then wakes the
    /// connection's task if there is something to send.
    fn with<T>(&self, step: impl FnOnce(&mut crate::mux::Mux, StreamId) -> T) -> T {
        let shared = &self.0.conn.shared;
        let mut mux = shared.lock();
        let done = step(&mut mux, self.0.stream);
        if !mux.transmit().is_empty() {
            shared.wake.notify_one();
        }
        done
    }
}

impl AsyncStream for Http2Tunnel {
    async fn readable(&self) -> io::Result<()> {
        let (shared, stream) = (&self.0.conn.shared, self.0.stream);
        poll_fn(|cx| shared.lock().poll_readable(cx, stream)).await;
        Ok(())
    }

    fn try_read(&self, buf: &mut [u8]) -> io::Result<usize> {
        // What is taken goes back to the server as window.
        self.with(|mux, stream| mux.try_read(stream, buf))
    }

    async fn writable(&self) -> io::Result<()> {
        // A stream that takes no more says why at the write.
        let (shared, stream) = (&self.0.conn.shared, self.0.stream);
        poll_fn(|cx| shared.lock().poll_writable(cx, stream)).await;
        Ok(())
    }

    fn try_write(&self, buf: &[u8]) -> io::Result<usize> {
        self.try_write_vectored(&[IoSlice::new(buf)])
    }

    fn try_write_vectored(&self, bufs: &[IoSlice<'_>]) -> io::Result<usize> {
        self.with(|mux, stream| mux.try_write(stream, bufs))
    }

    fn shutdown_write(&self) -> io::Result<()> {
        self.with(|mux, stream| mux.send_piece(stream, &[], true));
        Ok(())
    }
}
