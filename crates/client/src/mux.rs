//! Many exchanges at once on one HTTP/2 connection, sans-IO: the connection's frames
//! sorted into each stream's slot as they arrive, for the task that waits on it.
//!
//! Unlike a connection that carries one exchange at a time ([`crate::h2`]), whose body is
//! read in place in the receive ring, a stream here cannot borrow the ring: the frames of
//! the other streams follow its own, and the ring moves on under them. Each `DATA` frame's
//! bytes are copied out once, appended to the stream's buffer, and handed out by swapping
//! that buffer with the reader's; the server may send as much again only once they are
//! taken, so a reader that lags slows its own stream rather than filling memory. Heads
//! and buffers go back to the connection when their exchange ends, for the next one:
//! once warm, an exchange allocates nothing.

#[cfg(feature = "ws")]
use std::borrow::Cow;
use std::collections::HashMap;
#[cfg(feature = "ws")]
use std::io::{self, IoSlice};
use std::task::{Context, Poll, Waker};

use ringwire_http1::{Method, RequestParser, ResponseParser, Status};
use ringwire_http2::frame::StreamId;
#[cfg(feature = "ws")]
use ringwire_http2::SendError;
use ringwire_http2::{Connection, ErrorCode, Event};

use crate::h2::{client_connection, head_parser, open, refused, send_all};
use crate::{ClientConfig, Error, Phase, Trailers, Url};

/// A response's final head, as HTTP/1.1 text (no reason phrase) with its parse.
#[derive(Debug)]
pub(crate) struct Head {
    pub(crate) text: Vec<u8>,
    pub(crate) parsed: ResponseParser,
}

impl Head {
    fn new(limits: ringwire_http1::Limits) -> Head {
        Head {
            text: Vec::new(),
            parsed: ResponseParser::new(limits),
        }
    }

    /// The head's view.
    pub(crate) fn view(&self) -> ringwire_http1::Response<'_> {
        self.parsed.head().view(&self.text)
    }
}

/// What has arrived for one stream and not yet been taken.
#[derive(Debug, Default)]
struct Slot {
    /// Interim (`1xx`) heads not yet taken, in order.
    #[expect(clippy::vec_box, reason = "handed out boxed, as final heads are")]
    interim: Vec<Box<Head>>,
    head: Option<Box<Head>>,
    /// Body bytes not yet taken.
    data: Vec<u8>,
    /// The body has ended (`END_STREAM`, or trailers).
    ended: bool,
    trailers: Option<Trailers>,
    reset: Option<ErrorCode>,
    /// The task waiting on this stream.
    waker: Option<Waker>,
}

impl Slot {
    /// Nothing to hand out yet: the stream's reset or the connection's failure, else a
    /// wait until the connection's task brings more.
    fn wait<T>(&mut self, cx: &Context<'_>, failed: Option<Failure>) -> Poll<Result<T, Error>> {
        if let Some(code) = self.reset {
            return Poll::Ready(Err(Error::Http2Reset(code)));
        }
        if let Some(failure) = failed {
            return Poll::Ready(Err(failure.error()));
        }
        self.waker = Some(cx.waker().clone());
        Poll::Pending
    }

    fn wake(&mut self) {
        if let Some(waker) = self.waker.take() {
            waker.wake();
        }
    }
}

/// Why the whole connection stopped, kept to tell every stream.
#[derive(Debug, Clone, Copy)]
enum Failure {
    Http2(ringwire_http2::Error),
    Io(std::io::ErrorKind),
    /// The server went silent, a `PING` unanswered.
    Timeout(Phase),
    Closed,
}

impl Failure {
    fn error(self) -> Error {
        match self {
            Failure::Http2(e) => Error::Http2(e),
            Failure::Io(kind) => Error::Io(kind.into()),
            Failure::Timeout(phase) => Error::Timeout(phase),
            Failure::Closed => Error::Closed,
        }
    }
}

/// Spare heads and buffers kept for the next exchanges, at most.
const SPARES: usize = 16;

/// A buffer that grew past this goes rather than waits as a spare.
const SPARE_CAPACITY: usize = 64 << 10;

/// A head of `status` and `fields` as HTTP/1.1 text, in `spare` if there is one.
fn head_of(
    spare: Option<Box<Head>>,
    limits: ringwire_http1::Limits,
    status: u16,
    fields: &ringwire_http2::Fields<'_>,
) -> Box<Head> {
    let mut head = spare.unwrap_or_else(|| Box::new(Head::new(limits)));
    head.text.clear();
    fields.write_http1_response(status, &mut head.text);
    head
}

/// What one frame meant, owned, so the connection can be used again before acting on it.
enum Seen {
    Nothing,
    Head(StreamId, Box<Head>, bool),
    Interim(StreamId, Box<Head>),
    /// Body bytes of a stream no longer awaited.
    Orphan(StreamId, usize),
    Trailers(StreamId, Trailers),
    Reset(StreamId, ErrorCode),
    GoAway(StreamId),
}

/// An HTTP/2 client connection shared by many exchanges.
#[derive(Debug)]
pub(crate) struct Mux {
    conn: Connection,
    /// Reads the request heads the builder wrote.
    request: RequestParser,
    limits: ringwire_http1::Limits,
    streams: HashMap<StreamId, Slot>,
    /// Requests waiting for a stream to close (the server's limit on concurrent streams),
    /// and streamed bodies waiting for the server's windows.
    waiting: Vec<Waker>,
    failed: Option<Failure>,
    /// The server sent `GOAWAY`: no new stream.
    going_away: bool,
    /// Handles to the connection still held: with none and no stream open, it closes.
    handles: usize,
    #[expect(
        clippy::vec_box,
        reason = "a head is handed out boxed: its moves, a pointer's, are in every exchange"
    )]
    spare_heads: Vec<Box<Head>>,
    spare_buffers: Vec<Vec<u8>>,
}

impl Mux {
    /// A connection on `config`'s limits, its preface waiting in [`transmit`](Self::transmit).
    pub(crate) fn new(config: &ClientConfig) -> Mux {
        Mux {
            conn: client_connection(config),
            request: head_parser(),
            limits: config.limits,
            streams: HashMap::new(),
            waiting: Vec::new(),
            failed: None,
            going_away: false,
            handles: 1,
            spare_heads: Vec::new(),
            spare_buffers: Vec::new(),
        }
    }

    /// Opens a stream with the request `head` and `body` (HTTP/1.1 text and the body, as
    /// the builder wrote them; `None` for a body streamed after it with
    /// [`send_piece`](Self::send_piece)) for `url`; pending while the server's limit on
    /// concurrent streams is reached.
    pub(crate) fn poll_open(
        &mut self,
        cx: &mut Context<'_>,
        url: &Url,
        head: &[u8],
        body: Option<&[u8]>,
    ) -> Poll<Result<StreamId, Error>> {
        if let Err(waiting) = self.may_open(cx) {
            return waiting;
        }
        let end = body.is_some_and(<[u8]>::is_empty);
        let stream = open(&mut self.conn, &mut self.request, url, head, end)?;
        if let Some(body) = body.filter(|b| !b.is_empty()) {
            send_all(&mut self.conn, stream, body, true).map_err(refused)?;
        }
        Poll::Ready(Ok(self.opened(stream)))
    }

    /// Opens a stream with an extended `CONNECT` for `protocol` at `url` (RFC 8441),
    /// with `fields`: a tunnel for that protocol once a `2xx` answers. Pending until the
    /// server's `SETTINGS` came (they say whether it takes these), and while its limit on
    /// concurrent streams is reached.
    #[cfg(feature = "ws")]
    pub(crate) fn poll_open_tunnel(
        &mut self,
        cx: &mut Context<'_>,
        url: &Url,
        protocol: &[u8],
        fields: &[(&str, Cow<'_, [u8]>)],
    ) -> Poll<Result<StreamId, Error>> {
        if let Err(waiting) = self.may_open(cx) {
            return waiting;
        }
        if !self.conn.has_peer_settings() {
            self.waiting.push(cx.waker().clone());
            return Poll::Pending;
        }
        let stream = self.conn.send_extended_connect(
            protocol,
            url.origin().scheme().as_str().as_bytes(),
            url.authority().as_bytes(),
            url.target().as_bytes(),
            fields
                .iter()
                .map(|(name, value)| (name.as_bytes(), &**value)),
        );
        let stream = stream.map_err(|e| match e {
            SendError::NoExtendedConnect => Error::NoExtendedConnect,
            e => refused(e),
        })?;
        Poll::Ready(Ok(self.opened(stream)))
    }

    /// `Ok` when a stream may open now; else why not, or pending while the server's
    /// limit on concurrent streams is reached.
    fn may_open<T>(&mut self, cx: &Context<'_>) -> Result<(), Poll<Result<T, Error>>> {
        if let Some(failure) = self.failed {
            return Err(Poll::Ready(Err(failure.error())));
        }
        if self.going_away {
            return Err(Poll::Ready(Err(Error::Http2Reset(
                ErrorCode::REFUSED_STREAM,
            ))));
        }
        if !self.conn.has_stream_room() {
            self.waiting.push(cx.waker().clone());
            return Err(Poll::Pending);
        }
        Ok(())
    }

    /// `stream`, just opened, awaited from now on.
    fn opened(&mut self, stream: StreamId) -> StreamId {
        let slot = Slot {
            data: self.spare_buffer(),
            ..Slot::default()
        };
        self.streams.insert(stream, slot);
        stream
    }

    /// How much of a streamed body the server's windows take on `stream` now; pending
    /// until they take some. `None` once the stream takes no more: the server answered
    /// and ended its side, or reset the stream (the head or the reset then tells).
    pub(crate) fn poll_send_room(
        &mut self,
        cx: &mut Context<'_>,
        stream: StreamId,
    ) -> Poll<Result<Option<usize>, Error>> {
        if let Some(failure) = self.failed {
            return Poll::Ready(Err(failure.error()));
        }
        let Some(slot) = self.streams.get(&stream) else {
            return Poll::Ready(Err(Error::Closed));
        };
        if slot.ended || slot.reset.is_some() {
            return Poll::Ready(Ok(None));
        }
        match self.conn.send_capacity(stream) {
            0 => {
                self.waiting.push(cx.waker().clone());
                Poll::Pending
            }
            room => Poll::Ready(Ok(Some(room))),
        }
    }

    /// Sends `piece` of `stream`'s streamed body (within [`poll_send_room`](Self::poll_send_room)),
    /// ending the stream with it if `end`; `false` when the stream takes no more.
    pub(crate) fn send_piece(&mut self, stream: StreamId, piece: &[u8], end: bool) -> bool {
        let sent = send_all(&mut self.conn, stream, piece, end).is_ok();
        if end {
            // A stream the server had ended already closes here: room for a request.
            self.wake_waiting();
        }
        sent
    }

    /// The next head of `stream`'s response, once it came: interim ones (`true`) first,
    /// then the final one.
    pub(crate) fn poll_head(
        &mut self,
        cx: &mut Context<'_>,
        stream: StreamId,
    ) -> Poll<Result<(Box<Head>, bool), Error>> {
        let failed = self.failed;
        let Some(slot) = self.streams.get_mut(&stream) else {
            return Poll::Ready(Err(Error::Closed));
        };
        if !slot.interim.is_empty() {
            return Poll::Ready(Ok((slot.interim.remove(0), true)));
        }
        if let Some(head) = slot.head.take() {
            return Poll::Ready(Ok((head, false)));
        }
        slot.wait(cx, failed)
    }

    /// The body bytes of `stream` that came since the last call, swapped into `out`
    /// (`false` at the body's end, its trailers then in `trailers`); the server may send
    /// as much again.
    pub(crate) fn poll_chunk(
        &mut self,
        cx: &mut Context<'_>,
        stream: StreamId,
        out: &mut Vec<u8>,
        trailers: &mut Trailers,
    ) -> Poll<Result<bool, Error>> {
        out.clear();
        let failed = self.failed;
        let Some(slot) = self.streams.get_mut(&stream) else {
            return Poll::Ready(Ok(false));
        };
        if !slot.data.is_empty() {
            std::mem::swap(&mut slot.data, out);
            self.conn.release(stream, out.len());
            return Poll::Ready(Ok(true));
        }
        if slot.ended {
            if let Some(fields) = slot.trailers.take() {
                *trailers = fields;
            }
            self.remove(stream);
            return Poll::Ready(Ok(false));
        }
        slot.wait(cx, failed)
    }

    /// Ready once `stream` has bytes to read, has ended, or failed (a tunnel's
    /// readiness: [`try_read`](Self::try_read) then says which).
    #[cfg(feature = "ws")]
    pub(crate) fn poll_readable(&mut self, cx: &Context<'_>, stream: StreamId) -> Poll<()> {
        let failed = self.failed.is_some();
        match self.streams.get_mut(&stream) {
            Some(slot) if slot.data.is_empty() && !slot.ended && slot.reset.is_none() => {
                if failed {
                    return Poll::Ready(());
                }
                slot.waker = Some(cx.waker().clone());
                Poll::Pending
            }
            _ => Poll::Ready(()),
        }
    }

    /// Copies what came of `stream`'s bytes into `buf` (a tunnel's read): `Ok(0)` once
    /// the server ended its side, `WouldBlock` while nothing waits. The server may send
    /// as much again.
    #[cfg(feature = "ws")]
    pub(crate) fn try_read(&mut self, stream: StreamId, buf: &mut [u8]) -> io::Result<usize> {
        let failed = self.failed;
        let Some(slot) = self.streams.get_mut(&stream) else {
            return Err(io::ErrorKind::NotConnected.into());
        };
        if !slot.data.is_empty() {
            let n = buf.len().min(slot.data.len());
            buf[..n].copy_from_slice(&slot.data[..n]);
            slot.data.drain(..n);
            self.conn.release(stream, n);
            return Ok(n);
        }
        if slot.ended {
            return Ok(0);
        }
        let failed = slot
            .reset
            .map(Error::Http2Reset)
            .or(failed.map(Failure::error));
        match failed {
            Some(error) => Err(io::Error::other(error)),
            None => Err(io::ErrorKind::WouldBlock.into()),
        }
    }

    /// Ready once `stream` takes bytes (the server's windows opened), or takes no more at
    /// all (reset, ended on this side, the connection failed: the write then says why). A
    /// tunnel's writability, which unlike [`poll_send_room`](Self::poll_send_room) does not
    /// end with the server's side.
    #[cfg(feature = "ws")]
    pub(crate) fn poll_writable(&mut self, cx: &Context<'_>, stream: StreamId) -> Poll<()> {
        let reset = self
            .streams
            .get(&stream)
            .is_none_or(|slot| slot.reset.is_some());
        if reset || !self.conn.can_send(stream) || self.conn.send_capacity(stream) > 0 {
            return Poll::Ready(());
        }
        self.waiting.push(cx.waker().clone());
        Poll::Pending
    }

    /// Sends what `bufs` hold on `stream` as far as the server's windows take it now (a
    /// tunnel's write): `WouldBlock` when they take nothing.
    #[cfg(feature = "ws")]
    pub(crate) fn try_write(
        &mut self,
        stream: StreamId,
        bufs: &[IoSlice<'_>],
    ) -> io::Result<usize> {
        if let Some(failure) = self.failed {
            return Err(io::Error::other(failure.error()));
        }
        let Some(slot) = self.streams.get(&stream) else {
            return Err(io::ErrorKind::NotConnected.into());
        };
        if let Some(code) = slot.reset {
            let reset = Error::Http2Reset(code);
            return Err(io::Error::new(io::ErrorKind::BrokenPipe, reset));
        }
        if !self.conn.can_send(stream) {
            return Err(io::ErrorKind::BrokenPipe.into());
        }
        let room = self.conn.send_capacity(stream);
        if room == 0 && bufs.iter().any(|b| !b.is_empty()) {
            return Err(io::ErrorKind::WouldBlock.into());
        }
        let mut written = 0;
        for buf in bufs {
            let piece = &buf[..buf.len().min(room - written)];
            send_all(&mut self.conn, stream, piece, false).map_err(io::Error::other)?;
            written += piece.len();
        }
        Ok(written)
    }

    /// `stream`'s body is not sent to its end: the server is told to drop the stream
    /// (`CANCEL`) unless it reset it already, and a response not yet whole fails with
    /// that. What stopped the body: the server's reset, or `NO_ERROR` when its answer
    /// ended first (it wants no more).
    pub(crate) fn stop_sending(&mut self, stream: StreamId) -> ErrorCode {
        let Some(slot) = self.streams.get_mut(&stream) else {
            return ErrorCode::CANCEL;
        };
        if let Some(code) = slot.reset {
            return code;
        }
        let ended = slot.ended;
        if !ended {
            slot.reset = Some(ErrorCode::CANCEL);
            slot.wake();
        }
        self.conn.reset_stream(stream, ErrorCode::CANCEL);
        self.wake_waiting();
        if ended {
            ErrorCode::NO_ERROR
        } else {
            ErrorCode::CANCEL
        }
    }

    /// The exchange on `stream` is given up before its end: the server is told to stop.
    pub(crate) fn cancel(&mut self, stream: StreamId) {
        // Also when only the server's side ended: ours is left open otherwise, and the
        // stream counts against the server's limit. One both sides ended, or the server
        // reset, has left the connection: nothing is sent for it.
        self.conn.reset_stream(stream, ErrorCode::CANCEL);
        self.remove(stream);
        self.wake_waiting();
    }

    /// Forgets `stream`, keeping its buffers for the next exchanges.
    fn remove(&mut self, stream: StreamId) {
        if let Some(slot) = self.streams.remove(&stream) {
            // Interim heads never taken too (an exchange given up before its answer).
            for head in slot.interim {
                self.recycle(Some(head), Vec::new());
            }
            self.recycle(slot.head, slot.data);
        }
    }

    /// A buffer for an exchange's body: a spare one if there is one.
    pub(crate) fn spare_buffer(&mut self) -> Vec<u8> {
        self.spare_buffers.pop().unwrap_or_default()
    }

    /// `head` and `buffer`, done with, kept for the next exchanges (a few, and not a
    /// buffer that never held anything or grew large).
    pub(crate) fn recycle(&mut self, head: Option<Box<Head>>, mut buffer: Vec<u8>) {
        if let Some(head) = head.filter(|_| self.spare_heads.len() < SPARES) {
            self.spare_heads.push(head);
        }
        let worth = (1..=SPARE_CAPACITY).contains(&buffer.capacity());
        if worth && self.spare_buffers.len() < SPARES {
            buffer.clear();
            self.spare_buffers.push(buffer);
        }
    }

    /// Handles the frames at the front of `data`: how many bytes they took. An `Err`
    /// fails the connection (its `GOAWAY` waits in [`transmit`](Self::transmit)).
    pub(crate) fn receive(&mut self, data: &[u8]) -> Result<usize, Error> {
        let mut used = 0;
        loop {
            let (n, seen) = match self.frame(&data[used..]) {
                Ok(step) => step,
                Err(e) => {
                    self.fail(Failure::Http2(e));
                    return Err(Error::Http2(e));
                }
            };
            used += n;
            if n == 0 {
                // Windows may have opened, and streams closed: waiting senders try again.
                if used > 0 {
                    self.wake_waiting();
                }
                return Ok(used);
            }
            self.apply(seen);
        }
    }

    fn frame(&mut self, data: &[u8]) -> Result<(usize, Seen), ringwire_http2::Error> {
        let (n, event) = self.conn.recv(data)?;
        let seen = match event {
            None => Seen::Nothing,
            Some(Event::Response {
                stream,
                status,
                fields,
                end_stream,
            }) => {
                let head = head_of(self.spare_heads.pop(), self.limits, status, &fields);
                Seen::Head(stream, head, end_stream)
            }
            Some(Event::Interim {
                stream,
                status,
                fields,
            }) => Seen::Interim(
                stream,
                head_of(self.spare_heads.pop(), self.limits, status, &fields),
            ),
            Some(Event::Data {
                stream,
                data,
                end_stream,
            }) => match self.streams.get_mut(&stream) {
                Some(slot) => {
                    slot.data.extend_from_slice(data);
                    slot.ended |= end_stream;
                    slot.wake();
                    Seen::Nothing
                }
                None => Seen::Orphan(stream, data.len()),
            },
            Some(Event::Trailers { stream, fields }) => {
                Seen::Trailers(stream, Trailers::of(fields.iter()))
            }
            Some(Event::Reset { stream, code, .. }) => Seen::Reset(stream, code),
            Some(Event::GoAway { last_stream, .. }) => Seen::GoAway(last_stream),
            // What the connection answers itself.
            Some(_) => Seen::Nothing,
        };
        Ok((n, seen))
    }

    fn apply(&mut self, seen: Seen) {
        match seen {
            Seen::Nothing => {}
            Seen::Head(stream, head, end) => self.head_came(stream, head, Some(end)),
            Seen::Interim(stream, head) => self.head_came(stream, head, None),
            // A stream given up: its bytes count for nothing.
            Seen::Orphan(stream, len) => self.conn.release(stream, len),
            Seen::Trailers(stream, trailers) => {
                self.deliver(stream, |slot| {
                    slot.trailers = Some(trailers);
                    slot.ended = true;
                });
            }
            Seen::Reset(stream, code) => {
                self.deliver(stream, |slot| slot.reset = Some(code));
            }
            Seen::GoAway(last) => {
                self.going_away = true;
                // Streams the server never processed may be sent again elsewhere.
                for (stream, slot) in &mut self.streams {
                    if stream.get() > last.get() {
                        slot.reset = Some(ErrorCode::REFUSED_STREAM);
                        slot.wake();
                    }
                }
            }
        }
    }

    /// A head of `stream` came: its final one (`end`: no body follows), or with `None`
    /// an interim one.
    fn head_came(&mut self, stream: StreamId, mut head: Box<Head>, end: Option<bool>) {
        let Head { text, parsed } = &mut *head;
        // Fields HTTP/2 allows and HTTP/1.1 does not: the server's fault.
        if matches!(parsed.parse(text, Method::Get), Ok(Status::Complete(..))) {
            self.deliver(stream, |slot| match end {
                Some(end) => {
                    slot.head = Some(head);
                    slot.ended = end;
                }
                None => slot.interim.push(head),
            });
        } else {
            self.recycle(Some(head), Vec::new());
            self.conn.reset_stream(stream, ErrorCode::PROTOCOL_ERROR);
            self.deliver(stream, |slot| {
                slot.reset = Some(ErrorCode::PROTOCOL_ERROR);
            });
        }
    }

    /// Updates `stream`'s slot with `update` and wakes its task; `false` for a stream
    /// no longer awaited.
    fn deliver(&mut self, stream: StreamId, update: impl FnOnce(&mut Slot)) -> bool {
        let Some(slot) = self.streams.get_mut(&stream) else {
            return false;
        };
        update(slot);
        slot.wake();
        true
    }

    /// The connection failed, or its socket did: every stream and waiting request learns.
    pub(crate) fn fail_io(&mut self, error: &Error) {
        self.fail(match error {
            Error::Io(e) => Failure::Io(e.kind()),
            Error::Http2(e) => Failure::Http2(*e),
            Error::Timeout(phase) => Failure::Timeout(*phase),
            _ => Failure::Closed,
        });
    }

    fn fail(&mut self, failure: Failure) {
        self.failed.get_or_insert(failure);
        for slot in self.streams.values_mut() {
            slot.wake();
        }
        self.wake_waiting();
    }

    fn wake_waiting(&mut self) {
        for waker in self.waiting.drain(..) {
            waker.wake();
        }
    }

    /// Whether the connection takes new requests.
    pub(crate) fn is_open(&self) -> bool {
        self.failed.is_none() && !self.going_away
    }

    /// Another handle to the connection.
    pub(crate) fn hold(&mut self) {
        self.handles += 1;
    }

    /// A handle to the connection was dropped: whether nothing holds it any more.
    pub(crate) fn let_go(&mut self) -> bool {
        self.handles -= 1;
        self.unheld()
    }

    /// No handle holds the connection and no exchange is under way.
    pub(crate) fn unheld(&self) -> bool {
        self.handles == 0 && self.streams.is_empty()
    }

    /// [`unheld`](Self::unheld): the connection may close, with a `GOAWAY` first.
    pub(crate) fn finished(&mut self) -> bool {
        let done = self.unheld();
        if done {
            self.conn.go_away();
        }
        done
    }

    /// Asks the server whether it is still there (a `PING`).
    pub(crate) fn ping(&mut self) {
        self.conn.ping(*b"ringwire");
    }

    /// The next run of bytes waiting to be sent.
    pub(crate) fn transmit(&self) -> &[u8] {
        self.conn.transmit()
    }

    /// The first `n` bytes waiting to be sent went out.
    pub(crate) fn advance(&mut self, n: usize) {
        self.conn.advance(n);
    }
}

#[cfg(all(test, feature = "ws"))]
mod tests {
    use std::io::IoSlice;
    use std::task::{Context, Waker};

    use ringwire_http2::frame::{self, setting};

    use super::Mux;
    use crate::{ClientConfig, Url};

    /// A tunnel the server ended its side of still sends as windows open: its writability
    /// waits for them (a socket writing on would otherwise spin), and ends with this side.
    #[test]
    fn a_tunnel_waits_for_window_after_the_server_ended_its_side() {
        let mut mux = Mux::new(&ClientConfig::default());
        let url = Url::parse("http://example.com/chat").unwrap();
        let cx = &mut Context::from_waker(Waker::noop());
        let mut server = Vec::new();
        let welcome = [
            (setting::ENABLE_CONNECT_PROTOCOL, 1),
            (setting::INITIAL_WINDOW_SIZE, 4),
        ];
        frame::encode_settings(&mut server, &welcome);
        assert_eq!(mux.receive(&server).unwrap(), server.len());
        let stream = match mux.poll_open_tunnel(cx, &url, b"websocket", &[]) {
            std::task::Poll::Ready(Ok(stream)) => stream,
            other => panic!("{other:?}"),
        };
        // `:status 200` (static index 8), then the server's last bytes.
        let mut answer = Vec::new();
        frame::encode_headers(&mut answer, stream, &[0x88], false, 16_384);
        frame::encode_data(&mut answer, stream, b"bye", true);
        assert_eq!(mux.receive(&answer).unwrap(), answer.len());
        assert_eq!(mux.try_write(stream, &[IoSlice::new(b"hello")]).unwrap(), 4);
        assert!(
            mux.poll_writable(cx, stream).is_pending(),
            "no window: wait"
        );
        let mut window = Vec::new();
        frame::encode_window_update(&mut window, stream, 10);
        assert_eq!(mux.receive(&window).unwrap(), window.len());
        assert!(mux.poll_writable(cx, stream).is_ready());
        assert_eq!(mux.try_write(stream, &[IoSlice::new(b"o")]).unwrap(), 1);
        mux.send_piece(stream, &[], true);
        assert!(mux.poll_writable(cx, stream).is_ready());
        assert!(mux.try_write(stream, &[IoSlice::new(b"x")]).is_err());
    }
}
