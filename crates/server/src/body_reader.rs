//! Request bodies streamed to the handler as they arrive.
//!
//! A handler that says so ([`Handler::streams_body`](crate::Handler::streams_body))
//! gets its request before the body: the connection copies the head out of
//! the receive ring (the one copy; heads are small) so the ring is free to
//! take the body, and the handler reads it through a [`BodyReader`], which
//! decodes the framing (length or chunked) in the ring and copies the body
//! bytes into the caller's buffer. The body-rate limit applies while it
//! reads: a client that trickles gets a timeout error. Over HTTP/2 the
//! connection copies each `DATA` frame's bytes into the stream's [`Inflow`],
//! and gives the client window back as the handler reads them.

use std::fmt;
use std::future::{poll_fn, Future};
use std::io;
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll, Waker};

use bytes::Bytes;

use crate::Socket;
use ringwire_http1::{BodyDecoder, Decoded};
use ringwire_http2::frame::StreamId;
use ringwire_io::tokio::AsyncRecvTransport;
use ringwire_io::TransportError;
use tokio::io::{AsyncRead, ReadBuf};
use tokio::sync::futures::Notified;
use tokio::sync::Notify;

use crate::timeout::Timer;

/// Reads a request body as it arrives; see [`Request::body_reader`](crate::Request::body_reader).
///
/// Implements tokio's [`AsyncRead`], so `tokio::io::copy` can stream an
/// upload to a file.
#[derive(Clone, Copy)]
pub struct BodyReader<'a> {
    source: &'a (dyn Source + 'a),
}

impl<'a> BodyReader<'a> {
    pub(crate) fn new(source: &'a (dyn Source + 'a)) -> Self {
        BodyReader { source }
    }

    /// Reads body bytes into `buf`; `Ok(0)` at the end of the body.
    ///
    /// # Errors
    ///
    /// The client sent malformed framing ([`io::ErrorKind::InvalidData`]),
    /// went away ([`io::ErrorKind::UnexpectedEof`]) or sent too slowly
    /// ([`io::ErrorKind::TimedOut`]). The connection closes after the
    /// response.
    pub async fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        poll_fn(|cx| self.source.poll_read(cx, buf)).await
    }

    /// Hands `f` the next piece of the body where it lies, without copying it: in the
    /// connection's receive ring over HTTP/1.1 (the framing around it left out), in the
    /// stream's buffer over HTTP/2; `Ok(None)` at the end of the body. For a handler that
    /// looks at the bytes (a checksum, a parser) rather than keeping them.
    ///
    /// # Errors
    ///
    /// As [`read`](Self::read).
    pub async fn with_chunk<T>(&mut self, f: impl FnOnce(&[u8]) -> T) -> io::Result<Option<T>> {
        let mut f = Some(f);
        let mut made = None;
        poll_fn(|cx| {
            self.source.poll_chunk(cx, &mut |piece| {
                made = f.take().map(|f| f(piece));
            })
        })
        .await?;
        Ok(made)
    }

    /// Reads the rest of the body into a vector, refusing more than `limit`
    /// bytes ([`io::ErrorKind::FileTooLarge`]).
    ///
    /// # Errors
    ///
    /// As [`read`](Self::read), or the body is over `limit`.
    pub async fn to_vec(&mut self, limit: usize) -> io::Result<Vec<u8>> {
        let mut out = Vec::new();
        let mut buf = [0; 16 << 10];
        loop {
            let n = self.read(&mut buf).await?;
            if n == 0 {
                return Ok(out);
            }
            if out.len() + n > limit {
                return Err(io::Error::new(
                    io::ErrorKind::FileTooLarge,
                    "request body over the limit",
                ));
            }
            out.extend_from_slice(&buf[..n]);
        }
    }
}

impl fmt::Debug for BodyReader<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("BodyReader")
    }
}

impl AsyncRead for BodyReader<'_> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        poll_read_into(self.source, cx, buf)
    }
}

/// What `source` has, read into the unfilled part of `buf` (`AsyncRead`'s way).
fn poll_read_into(
    source: &dyn Source,
    cx: &mut Context<'_>,
    buf: &mut ReadBuf<'_>,
) -> Poll<io::Result<()>> {
    let n = std::task::ready!(source.poll_read(cx, buf.initialize_unfilled()))?;
    buf.advance(n);
    Poll::Ready(Ok(()))
}

/// Where a [`BodyReader`] reads from: the connection's [`Pump`], behind a
/// lock so that the request (shared by reference) can hand it out.
pub(crate) trait Source: Sync {
    /// Copies what has arrived into `buf`: how much; none at the end.
    fn poll_read(&self, cx: &mut Context<'_>, buf: &mut [u8]) -> Poll<io::Result<usize>> {
        let copied = std::task::ready!(self.poll_take(cx, &mut |waiting| {
            let n = waiting.len().min(buf.len());
            buf[..n].copy_from_slice(&waiting[..n]);
            n
        }))?;
        Poll::Ready(Ok(copied.unwrap_or(0)))
    }

    /// Hands `f` all that has arrived, in place (it takes it all); `false` at the end.
    fn poll_chunk(&self, cx: &mut Context<'_>, f: &mut dyn FnMut(&[u8])) -> Poll<io::Result<bool>> {
        let taken = std::task::ready!(self.poll_take(cx, &mut |waiting| {
            f(waiting);
            waiting.len()
        }))?;
        Poll::Ready(Ok(taken.is_some()))
    }

    /// Hands `take` the body bytes waiting, which says how many it took; `None` at the
    /// body's end; pending while nothing waits.
    fn poll_take(
        &self,
        cx: &mut Context<'_>,
        take: &mut dyn FnMut(&[u8]) -> usize,
    ) -> Poll<io::Result<Option<usize>>>;
}

/// The connection's side: the receive ring, the framing decoder, and the
/// body's progress for the rate limit.
pub(crate) struct Pump<'r, 's> {
    rx: &'r mut AsyncRecvTransport<&'s Socket>,
    stream: &'r Socket,
    timer: &'r Timer,
    decoder: BodyDecoder,
    /// Body bytes at the front of the ring the decoder has passed but the
    /// reader has not taken yet (its buffer was smaller).
    leftover: usize,
    received: usize,
    end: End,
    /// The timer's wake-up while waiting for more of the body.
    wake: Option<Pin<Box<Notified<'r>>>>,
}

/// How the body ended, if it has.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum End {
    /// Not yet: the handler left some of it unread.
    Unread,
    /// Read to its end: the connection can carry on.
    Done,
    /// Framing error, timeout or a vanished client: the connection closes.
    Failed,
}

impl<'r, 's> Pump<'r, 's> {
    pub(crate) fn new(
        rx: &'r mut AsyncRecvTransport<&'s Socket>,
        stream: &'r Socket,
        timer: &'r Timer,
        decoder: BodyDecoder,
    ) -> Self {
        Pump {
            rx,
            stream,
            timer,
            decoder,
            leftover: 0,
            received: 0,
            end: End::Unread,
            wake: None,
        }
    }

    /// How the body ended, once the handler is done with it.
    pub(crate) fn end(&self) -> End {
        self.end
    }

    fn fail<T>(&mut self, kind: io::ErrorKind, what: &str) -> Poll<io::Result<T>> {
        self.end = End::Failed;
        Poll::Ready(Err(io::Error::new(kind, what.to_owned())))
    }

    fn poll_take(
        &mut self,
        cx: &mut Context<'_>,
        take: &mut dyn FnMut(&[u8]) -> usize,
    ) -> Poll<io::Result<Option<usize>>> {
        loop {
            match self.end {
                End::Done => return Poll::Ready(Ok(None)),
                End::Failed => {
                    return self.fail(io::ErrorKind::BrokenPipe, "the request body failed")
                }
                End::Unread => {}
            }
            if self.leftover > 0 {
                let n = take(&self.rx.data()[..self.leftover]).min(self.leftover);
                self.rx.consume(n);
                self.leftover -= n;
                return Poll::Ready(Ok(Some(n)));
            }
            if self.timer.is_over() {
                return self.fail(io::ErrorKind::TimedOut, "request body too slow");
            }
            let more = match self.decoder.decode(self.rx.data()) {
                Ok(Decoded::Data { data, consumed }) => {
                    // `data` ends where `consumed` does: drop the framing
                    // before it and leave the data for the copy above.
                    self.leftover = data.len();
                    self.rx.consume(consumed - data.len());
                    false
                }
                Ok(Decoded::Partial { consumed }) => {
                    self.rx.consume(consumed);
                    true
                }
                Ok(Decoded::Done { consumed, .. }) => {
                    self.rx.consume(consumed);
                    self.end = End::Done;
                    false
                }
                Err(e) => return self.fail(io::ErrorKind::InvalidData, e.reason()),
            };
            if !more {
                continue;
            }
            let want = self.rx.data().len() + 1;
            match self.rx.try_fill(want) {
                Ok(Some(0)) => {
                    return self.fail(
                        io::ErrorKind::UnexpectedEof,
                        "the client went away mid-body",
                    )
                }
                Ok(Some(n)) => {
                    self.received += n;
                    self.timer.progress(self.received);
                }
                Ok(None) => {
                    // Nothing yet: wake on data, or on the sweeper's expiry
                    // (kept registered across polls).
                    let timer = self.timer;
                    let wake = self.wake.get_or_insert_with(|| Box::pin(timer.notified()));
                    if wake.as_mut().poll(cx).is_ready() {
                        self.wake = None;
                        continue;
                    }
                    if self.timer.is_over() {
                        continue;
                    }
                    match crate::socket::poll_read_ready(self.stream, cx) {
                        Poll::Pending => return Poll::Pending,
                        Poll::Ready(Ok(())) => {}
                        Poll::Ready(Err(e)) => {
                            self.end = End::Failed;
                            return Poll::Ready(Err(e));
                        }
                    }
                }
                Err(TransportError::Io(e)) => {
                    self.end = End::Failed;
                    return Poll::Ready(Err(e));
                }
                Err(e) => return self.fail(io::ErrorKind::Other, &e.to_string()),
            }
        }
    }
}

impl Source for Mutex<Pump<'_, '_>> {
    fn poll_take(
        &self,
        cx: &mut Context<'_>,
        take: &mut dyn FnMut(&[u8]) -> usize,
    ) -> Poll<io::Result<Option<usize>>> {
        self.lock()
            .unwrap_or_else(PoisonError::into_inner)
            .poll_take(cx, take)
    }
}

/// An HTTP/2 request body on its way to a handler that streams it: the connection appends
/// each `DATA` frame's bytes, the reader takes them. The stream's flow-control window is
/// given back only as the reader takes (the body lists itself in the connection's
/// [`Settling`], which then asks [`Inflow::take_read`]), so a slow reader holds the client
/// back and at most a stream window waits here.
#[derive(Debug)]
pub(crate) struct Inflow {
    state: Mutex<InflowState>,
    /// The stream whose body this is.
    id: StreamId,
    /// Where the body lists itself once read from (or let go).
    settling: Arc<Settling>,
}

/// The bodies read from or let go since the connection last looked, each listed once until
/// it looks (the body's [`Inflow::take_read`]): the connection gives back window and drops
/// bodies no one reads without walking every body it streams (a connection carrying many
/// WebSockets would, at every message).
#[derive(Debug, Default)]
pub(crate) struct Settling {
    listed: Mutex<Vec<StreamId>>,
    signal: Notify,
}

impl Settling {
    fn list(&self, id: StreamId) {
        self.listed
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(id);
        self.signal.notify_one();
    }

    /// Ready once a body was listed since the last [`take`](Self::take) (at once if one was
    /// while no one waited).
    pub(crate) fn listed(&self) -> Notified<'_> {
        self.signal.notified()
    }

    /// The bodies listed, moved into `ids` (what it held is dropped).
    pub(crate) fn take(&self, ids: &mut Vec<StreamId>) {
        ids.clear();
        std::mem::swap(
            ids,
            &mut self.listed.lock().unwrap_or_else(PoisonError::into_inner),
        );
    }
}

/// How much an [`Inflow`]'s reader takes before the bytes it took are dropped from the
/// front of the buffer (the rest, at most a stream window, moved down).
const COMPACT_AT: usize = 64 << 10;

#[derive(Debug, Default)]
struct InflowState {
    data: Vec<u8>,
    /// How much of `data` the reader has taken.
    at: usize,
    /// Taken since the connection last asked.
    unreleased: usize,
    /// The body's end: whole, or cut off (the client reset the stream).
    end: Option<Result<(), io::ErrorKind>>,
    reader: Option<Waker>,
    /// [`RequestBody`] handles alive: the body outlives its handler's call while any is.
    handles: usize,
    /// In the connection's [`Settling`] list, not yet looked at.
    listed: bool,
}

impl Inflow {
    pub(crate) fn new(id: StreamId, settling: Arc<Settling>) -> Self {
        Inflow {
            state: Mutex::new(InflowState::default()),
            id,
            settling,
        }
    }

    fn state(&self) -> std::sync::MutexGuard<'_, InflowState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Lists the body for the connection to look at, unless it is listed already.
    fn list(&self, state: &mut InflowState) {
        if !std::mem::replace(&mut state.listed, true) {
            self.settling.list(self.id);
        }
    }

    /// More of the body, and whether it ends with it.
    pub(crate) fn push(&self, data: &[u8], end: bool) {
        let mut state = self.state();
        state.data.extend_from_slice(data);
        if end {
            state.end = Some(Ok(()));
        }
        if let Some(reader) = state.reader.take() {
            reader.wake();
        }
    }

    /// The client reset the stream, or the connection ended: the reader gets an error once
    /// it has what came.
    pub(crate) fn cut(&self) {
        self.fail(io::ErrorKind::UnexpectedEof);
    }

    /// The body came slower than the minimum rate: the reader's next read fails with a
    /// timeout (the connection drops what waits, and throws away what follows).
    pub(crate) fn time_out(&self) {
        self.fail(io::ErrorKind::TimedOut);
    }

    /// The body failed as `kind` says: the reader gets that error once it has what came.
    pub(crate) fn fail(&self, kind: io::ErrorKind) {
        let mut state = self.state();
        state.end.get_or_insert(Err(kind));
        if let Some(reader) = state.reader.take() {
            reader.wake();
        }
    }

    /// Whether the body came to its end (it may not all be read yet).
    pub(crate) fn ended(&self) -> bool {
        self.state().end.is_some()
    }

    /// Whether a [`RequestBody`] still reads it.
    pub(crate) fn held(&self) -> bool {
        self.state().handles > 0
    }

    /// Bytes read since the last call: window for the connection to give back. The body
    /// lists itself again when next read from.
    pub(crate) fn take_read(&self) -> usize {
        let mut state = self.state();
        state.listed = false;
        std::mem::take(&mut state.unreleased)
    }

    /// Drops what the reader left: with what was read since the last
    /// [`take_read`](Self::take_read), window for the connection to give back.
    pub(crate) fn drop_unread(&self) -> usize {
        let mut state = self.state();
        let unread = state.data.len() - state.at;
        state.data = Vec::new();
        state.at = 0;
        unread + std::mem::take(&mut state.unreleased)
    }
}

impl Inflow {
    /// Hands `take` the bytes waiting, which says how many it took and what it made of
    /// them; `None` at the body's end; pending while nothing waits.
    fn poll_take<T>(
        &self,
        cx: &mut Context<'_>,
        take: impl FnOnce(&[u8]) -> (usize, T),
    ) -> Poll<io::Result<Option<T>>> {
        let mut state = self.state();
        match self.take_now(&mut state, take) {
            Some(taken) => Poll::Ready(taken),
            None => {
                state.reader = Some(cx.waker().clone());
                Poll::Pending
            }
        }
    }

    /// Ready once bytes wait or the body has ended.
    pub(crate) fn poll_ready(&self, cx: &mut Context<'_>) -> Poll<()> {
        let mut state = self.state();
        if state.at < state.data.len() || state.end.is_some() {
            return Poll::Ready(());
        }
        state.reader = Some(cx.waker().clone());
        Poll::Pending
    }

    /// Copies what waits into `buf` (`Ok(0)` at the body's end); `WouldBlock` while
    /// nothing does, without taking the place of the waker [`poll_ready`](Self::poll_ready) left.
    pub(crate) fn try_read(&self, buf: &mut [u8]) -> io::Result<usize> {
        let mut state = self.state();
        let taken = self.take_now(&mut state, |waiting| {
            let n = waiting.len().min(buf.len());
            buf[..n].copy_from_slice(&waiting[..n]);
            (n, n)
        });
        match taken {
            Some(taken) => taken.map(Option::unwrap_or_default),
            None => Err(io::ErrorKind::WouldBlock.into()),
        }
    }

    /// What [`poll_take`](Self::poll_take) gives when it does not wait: `None` while
    /// nothing waits and the body goes on.
    fn take_now<T>(
        &self,
        state: &mut InflowState,
        take: impl FnOnce(&[u8]) -> (usize, T),
    ) -> Option<io::Result<Option<T>>> {
        if state.at < state.data.len() {
            let (n, taken) = take(&state.data[state.at..]);
            state.at += n;
            if state.at == state.data.len() {
                state.data.clear();
                state.at = 0;
            } else if state.at >= COMPACT_AT {
                // A reader always a little behind never empties the buffer: what it took
                // goes, or the buffer would grow for as long as the body does.
                let at = state.at;
                state.data.drain(..at);
                state.at = 0;
            }
            state.unreleased += n;
            self.list(state);
            return Some(Ok(Some(taken)));
        }
        match state.end {
            Some(Ok(())) => Some(Ok(None)),
            Some(Err(kind)) => {
                let what = match kind {
                    io::ErrorKind::TimedOut => "request body too slow",
                    io::ErrorKind::InvalidData => "malformed request body framing",
                    io::ErrorKind::FileTooLarge => {
                        "request body over what is kept once the answer is ready"
                    }
                    _ => "the request body was cut off",
                };
                Some(Err(io::Error::new(kind, what)))
            }
            None => None,
        }
    }
}

impl Source for Inflow {
    fn poll_take(
        &self,
        cx: &mut Context<'_>,
        take: &mut dyn FnMut(&[u8]) -> usize,
    ) -> Poll<io::Result<Option<usize>>> {
        Inflow::poll_take(self, cx, |waiting| {
            let n = take(waiting).min(waiting.len());
            (n, n)
        })
    }
}

/// An HTTP/2 request body that outlives its handler's call: the handler answers at once
/// (a gRPC bidirectional stream's response headers, say) and a task it spawned goes on
/// reading the request as it comes ([`Request::body_stream`](crate::Request::body_stream)).
/// The stream's window is given back as it reads; dropped, the rest of the body is thrown
/// away.
#[derive(Debug)]
pub struct RequestBody {
    inflow: Arc<Inflow>,
}

impl RequestBody {
    pub(crate) fn new(inflow: Arc<Inflow>) -> Self {
        inflow.state().handles += 1;
        RequestBody { inflow }
    }

    /// Reads body bytes into `buf`; `Ok(0)` at the end of the body.
    ///
    /// # Errors
    ///
    /// The client reset the stream ([`io::ErrorKind::UnexpectedEof`]).
    pub async fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        poll_fn(|cx| self.inflow.poll_read(cx, buf)).await
    }

    pub(crate) fn inflow(&self) -> &Inflow {
        &self.inflow
    }
}

impl AsyncRead for RequestBody {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        poll_read_into(&*self.inflow, cx, buf)
    }
}

/// What has arrived, a piece at a time (copied out, up to 64 KiB a piece).
impl futures_core::Stream for RequestBody {
    type Item = io::Result<Bytes>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let piece = self.inflow.poll_take(cx, |waiting| {
            let n = waiting.len().min(PIECE);
            (n, Bytes::copy_from_slice(&waiting[..n]))
        });
        Poll::Ready(std::task::ready!(piece).transpose())
    }
}

/// The most a [`RequestBody`] hands out at once as a stream.
const PIECE: usize = 64 << 10;

impl Drop for RequestBody {
    fn drop(&mut self) {
        let mut state = self.inflow.state();
        state.handles -= 1;
        // The connection looks again: a body no one reads any more is thrown away.
        self.inflow.list(&mut state);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reader_always_behind_keeps_the_buffer_to_what_it_has_not_read() {
        let inflow = Inflow::new(StreamId::new(1), Arc::default());
        let mut cx = Context::from_waker(Waker::noop());
        let mut buf = [0; 4096];
        let (mut pushed, mut read) = (Vec::new(), Vec::new());
        for i in 0..1000u32 {
            let piece = vec![i as u8; 4100];
            inflow.push(&piece, false);
            pushed.extend_from_slice(&piece);
            let Poll::Ready(Ok(n)) = inflow.poll_read(&mut cx, &mut buf) else {
                panic!("bytes were waiting");
            };
            read.extend_from_slice(&buf[..n]);
        }
        assert_eq!(read[..], pushed[..read.len()]);
        let state = inflow.state();
        assert_eq!(state.data.len() - state.at, pushed.len() - read.len());
        assert!(state.at < COMPACT_AT, "{} bytes read and kept", state.at);
        assert_eq!(state.unreleased, read.len());
    }
}
