//! One HTTP/2 connection that many tasks send on at once: a task of its own reads the
//! connection's frames into the ring and sorts them by stream ([`Mux`]); each request's
//! task waits only for its own stream.

use std::collections::HashMap;
use std::future::poll_fn;
use std::io::{self, IoSlice};
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use ::tokio::io::AsyncRead;
use ::tokio::sync::Notify;
use ::tokio::time::Sleep;
use ringwire_http2::frame::StreamId;
use ringwire_http2::ErrorCode;
use ringwire_io::tokio::{AsyncRecvTransport, AsyncStream as _};
use ringwire_io::TransportError;
use ringwire_ring::Ring;
use ringwire_tls::MaybeTls;

#[cfg(feature = "ws")]
mod tunnel;

use super::{read_source, within, Client, Out, Socket};
use crate::mux::{Head, Mux};
use crate::pool::SWEEP_EVERY;
use crate::url::{Origin, Scheme};
use crate::{
    ClientConfig, Decoder, Encoding, Error, Phase, Request, RequestBuffer, StreamedRequest,
    Trailers, Url,
};
#[cfg(feature = "ws")]
pub use tunnel::Http2Tunnel;

/// An HTTP/2 connection that many tasks send requests on at once, each waiting only for
/// its own response ([`Client::http2_connection`]). Clones share the connection, which
/// closes (with a `GOAWAY`) once every clone and every response is dropped.
///
/// Its responses' bodies are copied out of the receive ring once, as their frames come,
/// since the other streams' frames follow in the same ring (see [`Http2Response::chunk`];
/// the buffers are reused, so a warm connection allocates nothing per exchange). The
/// client keeps one such connection per HTTP/2 origin for its own requests
/// ([`ClientConfig::http2_multiplex`]), which get its cookies, redirects and retries;
/// requests sent here go as they are, but for decoding the bodies of those that ask
/// ([`HeaderBuilder::decompress`](crate::HeaderBuilder::decompress)), and a request refused
/// by a `GOAWAY` fails with `REFUSED_STREAM` for the caller to send again on a new
/// connection.
#[derive(Debug)]
pub struct Http2Connection {
    shared: Arc<Shared>,
}

#[derive(Debug)]
struct Shared {
    mux: Mutex<Mux>,
    /// Wakes the connection's task: there is something to send, or it may close.
    wake: Notify,
    request_timeout: Option<Duration>,
    max_decoded_body_len: u64,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, Mux> {
        // A panic while the lock was held left nothing half done that matters here.
        self.mux.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// `stream`'s final head once it came, within `deadline`; each interim head before it
    /// shown to `interim`, then kept for the next exchanges.
    async fn final_head(
        &self,
        stream: StreamId,
        deadline: Option<Instant>,
        interim: Interim<'_>,
    ) -> Result<Box<Head>, Error> {
        loop {
            let head = poll_fn(|cx| self.lock().poll_head(cx, stream));
            match within(deadline, head).await? {
                (head, false) => return Ok(head),
                (head, true) => {
                    interim(head.view());
                    self.lock().recycle(Some(head), Vec::new());
                }
            }
        }
    }
}

/// What is shown each interim (`1xx`) head of a response, as it comes.
pub(super) type Interim<'i> = &'i mut (dyn FnMut(ringwire_http1::Response<'_>) + Send);

/// The client's own shared connections ([`ClientConfig::http2_multiplex`]): one per
/// origin known to speak HTTP/2 (one did, or prior knowledge says so), while it takes
/// requests and until it has gone unused for the client's idle timeout (what is known of
/// other origins is swept at most once a second). When such an origin has no connection,
/// one task dials it and the others wait for that one, rather than each dialing its own.
#[derive(Debug, Default)]
pub(super) struct Multiplexed {
    state: Mutex<Kept>,
}

#[derive(Debug, Default)]
struct Kept {
    by_origin: HashMap<Origin, Known>,
    swept: Option<Instant>,
}

/// An origin known to speak HTTP/2.
#[derive(Debug)]
struct Known {
    /// Its connection, while it has one.
    conn: Option<Http2Connection>,
    /// When a request last went to it.
    last: Instant,
    /// Set while a task dials it: the others wait for the connection.
    dialing: Option<Arc<Notify>>,
}

impl Known {
    fn has_open(&self) -> bool {
        self.conn.as_ref().is_some_and(Http2Connection::is_open)
    }
}

/// How a request reaches an origin ([`Multiplexed::find`]).
pub(super) enum Found<'m> {
    /// On its shared connection.
    Shared(Http2Connection),
    /// On a connection the caller dials: kept for the others if it speaks HTTP/2, and
    /// awaited by them while the [`Dialing`] lives.
    Dial(Option<Dialing<'m>>),
}

/// The task dialing an origin for all; dropped (the connection kept, or the dial failed),
/// it lets the waiting ones go on.
pub(super) struct Dialing<'m> {
    kept: &'m Multiplexed,
    origin: Origin,
}

impl Multiplexed {
    fn lock(&self) -> MutexGuard<'_, Kept> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// How a request reaches `origin` (`h2c`: the client speaks HTTP/2 to `http://`
    /// origins with prior knowledge), waiting for another task's dial at most once: a dial
    /// that failed leaves each waiting task to dial its own.
    pub(super) async fn find(
        &self,
        origin: &Origin,
        h2c: bool,
        idle_timeout: Duration,
    ) -> Found<'_> {
        let mut waited = false;
        loop {
            let dialed = {
                let mut kept = self.lock();
                let now = Instant::now();
                if kept
                    .swept
                    .is_none_or(|at| now.duration_since(at) >= SWEEP_EVERY)
                {
                    // A connection let go here stays open until its exchanges end.
                    let live = |known: &mut Known| {
                        known.dialing.is_some() || now.duration_since(known.last) < idle_timeout
                    };
                    kept.by_origin.retain(|_, known| live(known));
                    kept.swept = Some(now);
                }
                let prior = h2c && origin.scheme() == Scheme::Http;
                let known = match kept.by_origin.get_mut(origin) {
                    Some(known) => known,
                    None if prior => kept.by_origin.entry(origin.clone()).or_insert(Known {
                        conn: None,
                        last: now,
                        dialing: None,
                    }),
                    None => return Found::Dial(None),
                };
                if now.duration_since(known.last) >= idle_timeout {
                    known.conn = None;
                }
                known.last = now;
                known.conn = known.conn.take().filter(Http2Connection::is_open);
                if let Some(conn) = &known.conn {
                    return Found::Shared(conn.clone());
                }
                match &known.dialing {
                    _ if waited => return Found::Dial(None),
                    // Created under the lock: the dialer's wake-up cannot come before it.
                    Some(dialing) => Arc::clone(dialing).notified_owned(),
                    None => {
                        known.dialing = Some(Arc::new(Notify::new()));
                        let origin = origin.clone();
                        return Found::Dial(Some(Dialing { kept: self, origin }));
                    }
                }
            };
            dialed.await;
            waited = true;
        }
    }

    /// Keeps `conn` as `origin`'s, unless it has an open one already (both opened at once).
    pub(super) fn keep(&self, origin: &Origin, conn: &Http2Connection) {
        let mut kept = self.lock();
        let known = kept.by_origin.entry(origin.clone()).or_insert(Known {
            conn: None,
            last: Instant::now(),
            dialing: None,
        });
        if !known.has_open() {
            known.conn = Some(conn.clone());
        }
    }

    /// Forgets `origin` once a connection to it spoke HTTP/1.1, unless it has an open
    /// HTTP/2 one: its requests go to the pool again rather than each dial for all.
    pub(super) fn forget(&self, origin: &Origin) {
        let mut kept = self.lock();
        if kept
            .by_origin
            .get(origin)
            .is_some_and(|known| !known.has_open())
        {
            if let Some(Known {
                dialing: Some(dialing),
                ..
            }) = kept.by_origin.remove(origin)
            {
                drop(kept);
                dialing.notify_waiters();
            }
        }
    }
}

impl Drop for Dialing<'_> {
    fn drop(&mut self) {
        let mut kept = self.kept.lock();
        let dialing = kept.by_origin.get_mut(&self.origin);
        if let Some(dialing) = dialing.and_then(|known| known.dialing.take()) {
            drop(kept);
            dialing.notify_waiters();
        }
    }
}

impl Client {
    /// Opens an HTTP/2 connection to `url`'s origin that many tasks can send requests on
    /// at once ([`Http2Connection::send`]): `https://` asks for `h2` by ALPN, `http://`
    /// speaks it from the start (prior knowledge). Proxies, the Unix socket, TLS settings
    /// and the connect timeout are this client's. Must be called within a tokio runtime:
    /// the connection is driven by a task of its own.
    ///
    /// # Errors
    ///
    /// As connecting does in [`send`](Self::send); [`Error::NotHttp2`] when the server
    /// chose HTTP/1.1.
    pub async fn http2_connection(&self, url: &Url) -> Result<Http2Connection, Error> {
        let origin = url.origin();
        let stream = self
            .dial(origin, self.config.connect_timeout, true, &mut |_| {})
            .await?;
        if matches!(stream, MaybeTls::Tls(_)) && stream.alpn_protocol().as_deref() != Some(b"h2") {
            return Err(Error::NotHttp2);
        }
        let stream = Arc::new(stream);
        let rx = AsyncRecvTransport::with_ring(Ring::new(self.config.rx)?, Arc::clone(&stream));
        Ok(Http2Connection::start(&self.config, stream, rx))
    }
}

/// The largest request body sent with its head, as far as the windows take it and the
/// rest copied to wait for them: the initial window of a stream (RFC 9113 section 6.9.2).
/// A larger one goes as the windows open.
const WHOLE_BODY: usize = 65_535;

impl Http2Connection {
    /// Starts the connection's task on `stream`, which `rx` receives from: a connection
    /// that has sent nothing yet.
    pub(super) fn start(
        config: &ClientConfig,
        stream: Arc<Socket>,
        rx: AsyncRecvTransport<Arc<Socket>>,
    ) -> Http2Connection {
        let shared = Arc::new(Shared {
            mux: Mutex::new(Mux::new(config)),
            wake: Notify::new(),
            request_timeout: config.request_timeout,
            max_decoded_body_len: config.max_decoded_body_len,
        });
        ::tokio::spawn(drive(
            Arc::clone(&shared),
            stream,
            rx,
            config.http2_keepalive,
        ));
        Http2Connection { shared }
    }

    /// Sends `request` (written into `buffer`, which is free again once this returns) on
    /// a stream of its own and waits for its response's head, within the client's request
    /// timeout. While the server's limit on concurrent streams is reached, the request
    /// waits for a stream to close.
    ///
    /// # Errors
    ///
    /// [`Error::StaleRequest`] as [`Client::send`]; [`Error::Http2Reset`] when the server
    /// reset the stream (`REFUSED_STREAM`: it never acted on the request); the
    /// connection's failure ([`Error::Http2`], [`Error::Io`], [`Error::Closed`]);
    /// [`Error::Timeout`].
    pub async fn send(
        &self,
        buffer: &mut RequestBuffer,
        request: &Request<'_>,
    ) -> Result<Http2Response, Error> {
        let deadline = self.request_deadline();
        self.send_within(buffer, request, deadline, &mut |_| {})
            .await
    }

    /// [`send`](Self::send), within `deadline`, showing `interim` each interim head.
    pub(super) async fn send_within(
        &self,
        buffer: &mut RequestBuffer,
        request: &Request<'_>,
        deadline: Option<Instant>,
        interim: Interim<'_>,
    ) -> Result<Http2Response, Error> {
        let (head, body) = buffer.bytes(request)?;
        // A body the windows may not take at once goes as they open, from where it lies,
        // rather than copied aside to wait.
        let whole = body.len() <= WHOLE_BODY;
        let response = self
            .open(request, head, whole.then_some(body), deadline)
            .await?;
        if !whole {
            self.upload(response.stream, body, deadline).await?;
        }
        response.arrived(request.decompresses(), interim).await
    }

    /// Sends `body` on `stream` as the server's windows take it; an answer (or a reset)
    /// that comes first stops it.
    async fn upload(
        &self,
        stream: StreamId,
        mut body: &[u8],
        deadline: Option<Instant>,
    ) -> Result<(), Error> {
        while let Some(room) = self.room(stream, deadline).await? {
            let (piece, rest) = body.split_at(room.min(body.len()));
            body = rest;
            if !self.send_piece(stream, piece, body.is_empty()) || body.is_empty() {
                break;
            }
        }
        Ok(())
    }

    /// How much of its body `stream` takes now, waiting for the server's windows; `None`
    /// once it takes no more (answered or reset first), the rest then not sent.
    async fn room(
        &self,
        stream: StreamId,
        deadline: Option<Instant>,
    ) -> Result<Option<usize>, Error> {
        let room = poll_fn(|cx| self.shared.lock().poll_send_room(cx, stream));
        let room = within(deadline, room).await?;
        if room.is_none() {
            self.shared.lock().stop_sending(stream);
            self.shared.wake.notify_one();
        }
        Ok(room)
    }

    /// Sends `piece` of `stream`'s body, ending it if `end`: whether the stream takes more.
    fn send_piece(&self, stream: StreamId, piece: &[u8], end: bool) -> bool {
        let more = self.shared.lock().send_piece(stream, piece, end);
        self.shared.wake.notify_one();
        more
    }

    /// Sends `request`, its body read from `source` as it goes (see
    /// [`HeaderBuilder::body_stream`](crate::HeaderBuilder::body_stream)) in pieces the
    /// server's windows take, through `buffer`'s free span; then waits for the response's
    /// head, as [`send`](Self::send). An answer that comes before the body is all sent (a
    /// refusal that ends the server's side, or a reset) stops the upload.
    ///
    /// # Errors
    ///
    /// As [`send`](Self::send); [`Error::BodySource`] when reading `source` fails, and
    /// [`Error::BodySourceEnded`] when it ends before the length the head announced (the
    /// stream is reset either way).
    pub async fn send_streamed(
        &self,
        buffer: &mut RequestBuffer,
        request: &StreamedRequest<'_>,
        mut source: impl AsyncRead + Unpin + Send,
    ) -> Result<Http2Response, Error> {
        let deadline = self.request_deadline();
        let request = request.request();
        let len = request.streamed().flatten();
        let (head, _) = buffer.bytes(request)?;
        let response = self.open(request, head, None, deadline).await?;
        let stream = response.stream;
        let mut sent = 0u64;
        while let Some(room) = self.room(stream, deadline).await? {
            let scratch = buffer.scratch();
            let left = len.map_or(u64::MAX, |len| len - sent);
            let want = room
                .min(scratch.len())
                .min(usize::try_from(left).unwrap_or(usize::MAX));
            let n = match want {
                0 => 0,
                want => within(deadline, read_source(&mut source, &mut scratch[..want])).await?,
            };
            sent += n as u64;
            if let Some(expected) = len.filter(|&len| n == 0 && sent < len) {
                return Err(Error::BodySourceEnded { sent, expected });
            }
            let end = n == 0 || len == Some(sent);
            if !self.send_piece(stream, &scratch[..n], end) || end {
                break;
            }
        }
        response.arrived(request.decompresses(), &mut |_| {}).await
    }

    /// Opens a stream for `request` whose body goes piece by piece through the
    /// [`Http2Upload`] while the response is read through the [`Http2Answer`]: both at
    /// once, from two tasks if need be (full duplex, as gRPC's streaming calls are). The
    /// head goes at once; keeping to the length it announces, if any, is the caller's part.
    ///
    /// # Errors
    ///
    /// As [`send`](Self::send), for the stream's opening.
    pub async fn send_duplex(
        &self,
        buffer: &mut RequestBuffer,
        request: &StreamedRequest<'_>,
    ) -> Result<(Http2Upload, Http2Answer), Error> {
        let deadline = self.request_deadline();
        let request = request.request();
        let (head, _) = buffer.bytes(request)?;
        let response = self.open(request, head, None, deadline).await?;
        let upload = Http2Upload {
            shared: Arc::clone(&self.shared),
            stream: response.stream,
            deadline,
            ended: false,
            stopped: None,
        };
        let answer = Http2Answer {
            response,
            decompress: request.decompresses(),
        };
        Ok((upload, answer))
    }

    /// Opens a stream for `request` (its `head`, and its `body` unless streamed), within
    /// `deadline`; the response that waits on it.
    async fn open(
        &self,
        request: &Request<'_>,
        head: &[u8],
        body: Option<&[u8]>,
        deadline: Option<Instant>,
    ) -> Result<Http2Response, Error> {
        let opening = poll_fn(|cx| self.shared.lock().poll_open(cx, request.url(), head, body));
        let stream = within(deadline, opening).await?;
        let body = self.shared.lock().spare_buffer();
        self.shared.wake.notify_one();
        // Dropped before its end (given up, or failed), it resets the stream.
        Ok(Http2Response {
            shared: Arc::clone(&self.shared),
            stream,
            head: None,
            trailers: Trailers::new(),
            deadline,
            finished: false,
            body,
            at: 0,
            decoder: None,
            feeding: false,
            handed: Next::End,
        })
    }

    /// When a request sent now must have its answer, by the client's request timeout.
    pub(crate) fn request_deadline(&self) -> Option<Instant> {
        self.shared.request_timeout.map(|t| Instant::now() + t)
    }

    /// Whether `other` is a handle to the same connection.
    pub(super) fn is(&self, other: &Http2Connection) -> bool {
        Arc::ptr_eq(&self.shared, &other.shared)
    }

    /// Whether the connection takes new requests: it has not failed, and the server has
    /// not said it is going away.
    #[must_use]
    pub fn is_open(&self) -> bool {
        self.shared.lock().is_open()
    }
}

impl Clone for Http2Connection {
    fn clone(&self) -> Self {
        self.shared.lock().hold();
        Http2Connection {
            shared: Arc::clone(&self.shared),
        }
    }
}

impl Drop for Http2Connection {
    fn drop(&mut self) {
        if self.shared.lock().let_go() {
            self.shared.wake.notify_one();
        }
    }
}

/// A response on an [`Http2Connection`], its head arrived; the body comes as it is read.
/// Dropped before the body's end, it resets its stream (`CANCEL`).
#[derive(Debug)]
pub struct Http2Response {
    shared: Arc<Shared>,
    stream: StreamId,
    /// `None` only while [`Http2Connection::send`] waits for it.
    head: Option<Box<Head>>,
    trailers: Trailers,
    deadline: Option<Instant>,
    /// The body was read to its end.
    finished: bool,
    /// The body bytes taken last.
    body: Vec<u8>,
    /// How far into `body` the decoder has read.
    at: usize,
    /// Undoes the body's coding, when the request asked.
    decoder: Option<Box<Decoder>>,
    /// The decoder has more of `body` (or of its own output) to give.
    feeding: bool,
    /// What the last [`chunk`](Self::chunk) handed out (`End`: nothing).
    handed: Next,
}

/// The sending half of a full-duplex exchange ([`Http2Connection::send_duplex`]): the
/// request body, piece by piece, as the server's windows take it. Dropped before
/// [`finish`](Self::finish), it resets the stream.
#[derive(Debug)]
pub struct Http2Upload {
    shared: Arc<Shared>,
    stream: StreamId,
    deadline: Option<Instant>,
    /// The body's end was sent, or the stream stopped.
    ended: bool,
    /// Why the stream took no more, once it did: every later piece fails with it.
    stopped: Option<ErrorCode>,
}

impl Http2Upload {
    /// Sends `piece` of the body, waiting for the server's windows as needed.
    ///
    /// # Errors
    ///
    /// [`Error::Http2Reset`] when the stream takes no more: reset by the server (its
    /// code), or its answer ended first (`NO_ERROR`; the stream is then closed), for this
    /// piece and every later one; the connection's failure; [`Error::Timeout`].
    pub async fn send(&mut self, mut piece: &[u8]) -> Result<(), Error> {
        while !piece.is_empty() {
            if let Some(code) = self.stopped {
                return Err(Error::Http2Reset(code));
            }
            let (shared, stream) = (&self.shared, self.stream);
            let room = poll_fn(|cx| shared.lock().poll_send_room(cx, stream));
            let Some(room) = within(self.deadline, room).await? else {
                self.ended = true;
                self.stopped = Some(self.shared.lock().stop_sending(self.stream));
                self.shared.wake.notify_one();
                continue;
            };
            let n = room.min(piece.len());
            self.shared
                .lock()
                .send_piece(self.stream, &piece[..n], false);
            self.shared.wake.notify_one();
            piece = &piece[n..];
        }
        Ok(())
    }

    /// Ends the body.
    pub fn finish(mut self) {
        self.ended = true;
        self.shared.lock().send_piece(self.stream, &[], true);
        self.shared.wake.notify_one();
    }
}

impl Drop for Http2Upload {
    fn drop(&mut self) {
        if !self.ended {
            self.shared.lock().stop_sending(self.stream);
            self.shared.wake.notify_one();
        }
    }
}

/// The receiving half of a full-duplex exchange ([`Http2Connection::send_duplex`]):
/// the response, once its head comes. Dropped first, it resets the stream.
#[derive(Debug)]
pub struct Http2Answer {
    response: Http2Response,
    decompress: bool,
}

impl Http2Answer {
    /// The response, once its head came.
    ///
    /// # Errors
    ///
    /// As [`Http2Connection::send`]'s wait for the head.
    pub async fn response(self) -> Result<Http2Response, Error> {
        self.response.arrived(self.decompress, &mut |_| {}).await
    }
}

/// What [`Http2Response::chunk`] hands out.
#[derive(Debug, Clone, Copy)]
enum Next {
    Piece,
    Decoded,
    End,
}

impl Http2Response {
    /// The status code.
    #[must_use]
    pub fn status(&self) -> u16 {
        self.head().status()
    }

    /// The head, rewritten as an HTTP/1.1 head with no reason phrase.
    #[must_use]
    pub fn head(&self) -> ringwire_http1::Response<'_> {
        self.head
            .as_ref()
            .expect("the head arrives before the response is handed out")
            .view()
    }

    /// The first field named `name`.
    #[must_use]
    pub fn header(&self, name: &str) -> Option<&[u8]> {
        self.head.as_ref().and_then(|head| head.view().header(name))
    }

    /// The trailer fields the body ended with: empty until [`chunk`](Self::chunk) has
    /// returned `None`, and for a body without any.
    #[must_use]
    pub fn trailers(&self) -> &Trailers {
        &self.trailers
    }

    /// This response once its final head came, each interim head before it shown to
    /// `interim`; its body decoded if `decompress` (the request asked).
    async fn arrived(mut self, decompress: bool, interim: Interim<'_>) -> Result<Self, Error> {
        let head = self
            .shared
            .final_head(self.stream, self.deadline, interim)
            .await?;
        if decompress {
            let limit = self.shared.max_decoded_body_len;
            self.decoder = Decoder::for_response(&head.view(), limit).map(Box::new);
        }
        self.head = Some(head);
        Ok(self)
    }

    /// The content coding the body is decoded from: `Some` when the request asked
    /// ([`HeaderBuilder::decompress`](crate::HeaderBuilder::decompress)) and the response's
    /// `content-encoding` is one the client undoes.
    #[must_use]
    pub fn decoding(&self) -> Option<Encoding> {
        self.decoder.as_deref().map(Decoder::encoding)
    }

    /// The next piece of body, valid until the next call: all that arrived since the last
    /// (copied out of the receive ring as it came), or decoded (at most 64 KiB a piece)
    /// when [`decoding`](Self::decoding); `None` at the end of the body.
    ///
    /// # Errors
    ///
    /// [`Error::Http2Reset`] when the server reset the stream; the connection's failure;
    /// [`Error::Timeout`]; for a body being decoded, [`Error::Decompress`] and
    /// [`Error::DecodedBodyTooLarge`].
    pub async fn chunk(&mut self) -> Result<Option<&[u8]>, Error> {
        self.handed = Next::End;
        let next = loop {
            if let (Some(decoder), true) = (self.decoder.as_mut(), self.feeding) {
                match decoder.feed(&self.body[self.at..])? {
                    None => self.feeding = false,
                    Some(used) => self.at += used,
                }
                if !decoder.output().is_empty() {
                    break Next::Decoded;
                }
                continue;
            }
            match self.take().await? {
                true => {
                    self.at = 0;
                    self.feeding = self.decoder.is_some();
                    if !self.feeding {
                        break Next::Piece;
                    }
                }
                false => {
                    if let Some(decoder) = &self.decoder {
                        decoder.finish()?;
                    }
                    break Next::End;
                }
            }
        };
        self.handed = next;
        Ok(self.handed())
    }

    /// The piece the last [`chunk`](Self::chunk) handed out, again.
    pub(crate) fn handed(&self) -> Option<&[u8]> {
        match self.handed {
            Next::Piece => Some(&self.body),
            Next::Decoded => self.decoder.as_deref().map(Decoder::output),
            Next::End => None,
        }
    }

    /// The body bytes that arrived since the last call, into `body`; `false` at its end.
    async fn take(&mut self) -> Result<bool, Error> {
        if self.finished {
            return Ok(false);
        }
        let (shared, stream) = (&self.shared, self.stream);
        let (body, trailers) = (&mut self.body, &mut self.trailers);
        let next = poll_fn(|cx| {
            let mut mux = shared.lock();
            let next = mux.poll_chunk(cx, stream, body, trailers);
            // A `WINDOW_UPDATE` for what was taken, the stream's end, or the connection's
            // (its last stream done after its last handle went).
            if next.is_ready() && (!mux.transmit().is_empty() || mux.unheld()) {
                shared.wake.notify_one();
            }
            next
        });
        let next = within(self.deadline, next).await?;
        self.finished = !next;
        Ok(next)
    }

    /// The whole body, collected.
    ///
    /// # Errors
    ///
    /// As [`chunk`](Self::chunk).
    pub async fn bytes(&mut self) -> Result<Vec<u8>, Error> {
        let mut out = Vec::new();
        while let Some(piece) = self.chunk().await? {
            out.extend_from_slice(piece);
        }
        Ok(out)
    }

    /// The whole body as text (invalid UTF-8 replaced).
    ///
    /// # Errors
    ///
    /// As [`chunk`](Self::chunk).
    pub async fn text(&mut self) -> Result<String, Error> {
        Ok(String::from_utf8_lossy(&self.bytes().await?).into_owned())
    }

    /// The whole body as JSON, deserialised into `T`.
    ///
    /// # Errors
    ///
    /// As [`chunk`](Self::chunk); [`Error::Json`] for a body that is not the JSON `T` reads.
    #[cfg(feature = "json")]
    pub async fn json<T: serde::de::DeserializeOwned>(&mut self) -> Result<T, Error> {
        serde_json::from_slice(&self.bytes().await?).map_err(Error::Json)
    }
}

impl Drop for Http2Response {
    fn drop(&mut self) {
        let mut mux = self.shared.lock();
        if !self.finished {
            mux.cancel(self.stream);
            self.shared.wake.notify_one();
        }
        mux.recycle(self.head.take(), std::mem::take(&mut self.body));
    }
}

/// The connection's task: sends what waits, receives and sorts frames, until nothing
/// holds the connection any more or it fails (a server silent past `keepalive` twice over,
/// a `PING` in between, included).
async fn drive(
    shared: Arc<Shared>,
    stream: Arc<Socket>,
    mut rx: AsyncRecvTransport<Arc<Socket>>,
    keepalive: Option<Duration>,
) {
    let _ended = Ended(&shared);
    let mut out = Out {
        stream: &stream,
        rx: &mut rx,
        ended: false,
    };
    if let Err(e) = run(&shared, &mut out, keepalive).await {
        shared.lock().fail_io(&e);
        // The `GOAWAY` of a connection error, if there is one; the socket closes anyway.
        let _ = send(&shared, &mut out).await;
    }
}

/// Ends the connection's exchanges when its task ends, however it does: dropped
/// unfinished with its runtime (a client used from one runtime after another), the
/// connection is not left to wait for a task that is gone.
struct Ended<'s>(&'s Shared);

impl Drop for Ended<'_> {
    fn drop(&mut self) {
        self.0.lock().fail_io(&Error::Closed);
    }
}

/// What woke the connection's task.
enum Woken {
    Received(Result<usize, TransportError>),
    Told,
    Silence,
}

async fn run(shared: &Shared, out: &mut Out<'_>, keepalive: Option<Duration>) -> Result<(), Error> {
    // Whether a `PING` asks the server since it was last heard from.
    let mut pinged = false;
    // How long the server may stay silent: one timer, put later as frames come (tokio
    // just notes a later deadline), rather than a new one registered at every wake.
    let mut silence = std::pin::pin!(::tokio::time::sleep(keepalive.unwrap_or(Duration::MAX)));
    let wait_from_now = |silence: Pin<&mut Sleep>| {
        if let Some(quiet) = keepalive {
            silence.reset(::tokio::time::Instant::now() + quiet);
        }
    };
    loop {
        send(shared, out).await?;
        if shared.lock().finished() {
            return send(shared, out).await;
        }
        let at_least = out.rx.data().len() + 1;
        let woken = ::tokio::select! {
            filled = out.rx.fill(at_least) => Woken::Received(filled),
            () = shared.wake.notified() => Woken::Told,
            () = &mut silence, if keepalive.is_some() => Woken::Silence,
        };
        match woken {
            Woken::Received(Ok(0)) => return Err(Error::Closed),
            Woken::Received(filled) => {
                filled?;
                pinged = false;
                wait_from_now(silence.as_mut());
            }
            Woken::Told => {}
            Woken::Silence if pinged => return Err(Error::Timeout(Phase::Request)),
            Woken::Silence => {
                shared.lock().ping();
                pinged = true;
                wait_from_now(silence.as_mut());
            }
        }
        // What came now, or while a send waited for room.
        if !out.rx.data().is_empty() {
            let used = shared.lock().receive(out.rx.data())?;
            out.rx.consume(used);
        }
    }
}

/// Sends all that waits, the lock held only between waits for room.
async fn send(shared: &Shared, out: &mut Out<'_>) -> Result<(), Error> {
    loop {
        let blocked = {
            let mut mux = shared.lock();
            loop {
                let run = mux.transmit();
                if run.is_empty() {
                    break false;
                }
                match out.stream.try_write_vectored(&[IoSlice::new(run)]) {
                    Ok(0) => return Err(io::Error::from(io::ErrorKind::WriteZero).into()),
                    Ok(n) => mux.advance(n),
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => break true,
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                    Err(e) => return Err(e.into()),
                }
            }
        };
        let blocked = blocked
            || match out.stream.try_flush() {
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => true,
                done => {
                    done?;
                    false
                }
            };
        if !blocked {
            return Ok(());
        }
        out.writable().await?;
    }
}
