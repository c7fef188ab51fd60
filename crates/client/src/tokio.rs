//! The async client: tokio sockets driven by readiness, the response
//! received into a ring by [`AsyncRecvTransport`].

use std::future::Future;
use std::io::{self, IoSlice};
use std::ops::Range;
use std::os::fd::AsFd as _;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use ::tokio::io::{AsyncRead, Interest, ReadBuf};
use ::tokio::net::TcpStream;
use ringwire_io::tokio::{AsyncNetStream, AsyncRecvTransport, AsyncStream};
use ringwire_ring::Ring;
use ringwire_tls::MaybeTls;

use crate::connect::unix_failed;
use crate::cookie;
use crate::exchange::{
    piece, remaining, source_rewound, Attempts, BodyStep, Failure, Next, Reader, RoundTrip, Source,
    DISCARD_LIMIT,
};
use crate::h2::Proto;
use crate::pool::{is_quiet, Keyed, Pool};
use crate::redirect::{next_hop, Answer, Authorizer, Follow, Hop};
use crate::resolve::Pinned;
use crate::tls::Tls;
use crate::tunnel::{first_address, Step, Tunnel};
use crate::url::{Origin, Scheme};
use crate::{
    ClientConfig, CookieJar, Error, Http2, Phase, Protocol, Proxies, Proxy, Request, RequestBuffer,
    StreamedRequest, Url,
};

mod events;
mod shared_h2;

pub use events::{EventSource, Events};
#[cfg(feature = "ws")]
pub use shared_h2::Http2Tunnel;
use shared_h2::{Found, Interim, Multiplexed};
pub use shared_h2::{Http2Answer, Http2Connection, Http2Response, Http2Upload};

/// A streamed body's source, as the async client reads it.
type BodySource<'s> = Source<'s, dyn AsyncRead + Unpin + Send + 's>;

/// An async HTTP/1.1 and HTTP/2 client with a keep-alive pool; share it by
/// reference (or in an `Arc`) across tasks.
#[derive(Debug)]
pub struct Client {
    pub(crate) config: ClientConfig,
    pool: Pool<Box<Connection>>,
    tls: Tls,
    proxies: Proxies,
    pinned: Pinned,
    /// The Unix socket every connection goes to, if one was given.
    unix: Option<Arc<Path>>,
    /// Cookies stored from answers and sent with requests, when given one.
    cookies: Option<Arc<CookieJar>>,
    /// The `authorization` of a redirect to another origin.
    authorize: Authorizer,
    /// The shared HTTP/2 connections of origins that speak it.
    multiplexed: Multiplexed,
}

impl Default for Client {
    fn default() -> Self {
        Client::new(ClientConfig::default())
    }
}

/// One connection: the socket (shared by the receive transport and the
/// sending side) and its protocol's state, kept warm across responses.
#[derive(Debug)]
struct Connection {
    rx: AsyncRecvTransport<Arc<Socket>>,
    stream: Arc<Socket>,
    proto: Proto,
    origin: Origin,
    /// The proxy an `http://` request goes to in absolute-form, if it goes through one.
    forward: Option<Proxy>,
}

/// The connection an exchange goes on.
enum Via {
    /// A stream of a shared HTTP/2 connection.
    Shared(Http2Connection),
    /// A connection of its own.
    Own(Box<Connection>),
}

/// What [`Client::send_traced`] is shown of an exchange, in order.
pub type Trace<'t> = crate::Trace<'t, Response<'t>>;

/// A connection's stream: a socket (TCP or Unix), or TLS over it.
pub(crate) type Socket = MaybeTls<AsyncNetStream>;

impl Keyed for Connection {
    fn origin(&self) -> &Origin {
        &self.origin
    }

    fn cool(&mut self) {
        // On an error the pages stay where they are: nothing is lost.
        let _ = self.rx.ring_mut().release_pages();
        let _ = self.stream.release_idle_memory();
        if let Some(h2) = self.proto.h2() {
            h2.shrink();
        }
    }
}

impl Client {
    crate::shared_api::client_builders!(multiplexed: Multiplexed::default());

    /// `GET url`: the shortest way to an answer. The request is written into a buffer made
    /// for it (a ring mapped and unmapped); a caller sending many keeps a [`RequestBuffer`]
    /// and writes each with its builder for [`send`](Self::send), fields and bodies too.
    ///
    /// ```no_run
    /// # async fn run() -> Result<(), ringwire_client::Error> {
    /// let client = ringwire_client::tokio::Client::default();
    /// let mut response = client.get("https://example.com/").await?;
    /// println!("{} {}", response.status(), response.text().await?);
    /// # Ok(())
    /// # }
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::Url`]; as [`send`](Self::send).
    pub async fn get(&self, url: &str) -> Result<Response<'_>, Error> {
        let url = Url::parse(url)?;
        let mut buffer = RequestBuffer::new()?;
        let request = buffer.request("GET", &url)?.headers()?.finish()?;
        self.send(&mut buffer, &request).await
    }

    /// Sends `request` (written into `buffer`) and reads the response head,
    /// following redirects when [`ClientConfig::max_redirects`] allows.
    ///
    /// # Errors
    ///
    /// See [`Error`].
    pub async fn send(
        &self,
        buffer: &mut RequestBuffer,
        request: &Request<'_>,
    ) -> Result<Response<'_>, Error> {
        self.send_from(buffer, request, None, &mut |_| {}).await
    }

    /// [`send`](Self::send), showing `trace` each step as it happens ([`Trace`]): the
    /// name resolved, the connection, the handshake, each request head and answer, for
    /// timings and logs.
    ///
    /// # Errors
    ///
    /// As [`send`](Self::send).
    pub async fn send_traced(
        &self,
        buffer: &mut RequestBuffer,
        request: &Request<'_>,
        mut trace: impl FnMut(Trace<'_>) + Send,
    ) -> Result<Response<'_>, Error> {
        self.send_from(buffer, request, None, &mut trace).await
    }

    /// Sends `request`, its body read from `source` as it goes (see
    /// [`HeaderBuilder::body_stream`](crate::HeaderBuilder::body_stream)), and reads
    /// the response head, following redirects that do not send the body again when
    /// [`ClientConfig::max_redirects`] allows.
    ///
    /// A file is better sent with [`send_file`](Self::send_file): a `tokio::fs::File`
    /// source makes a trip to tokio's blocking threads for every piece.
    ///
    /// # Errors
    ///
    /// See [`Error`]; [`Error::BodySource`] when `source` fails,
    /// [`Error::BodySourceEnded`] when it ends short of the announced length.
    pub async fn send_streamed(
        &self,
        buffer: &mut RequestBuffer,
        request: &StreamedRequest<'_>,
        source: impl AsyncRead + Unpin + Send,
    ) -> Result<Response<'_>, Error> {
        self.send_streamed_traced(buffer, request, source, |_| {})
            .await
    }

    /// [`send_streamed`](Self::send_streamed), showing `trace` each step ([`Trace`]),
    /// the bytes sent after each piece ([`Trace::Sent`](crate::Trace::Sent)) among them.
    ///
    /// # Errors
    ///
    /// As [`send_streamed`](Self::send_streamed).
    pub async fn send_streamed_traced(
        &self,
        buffer: &mut RequestBuffer,
        request: &StreamedRequest<'_>,
        mut source: impl AsyncRead + Unpin + Send,
        mut trace: impl FnMut(Trace<'_>) + Send,
    ) -> Result<Response<'_>, Error> {
        let source = Source::new(&mut source as &mut (dyn AsyncRead + Unpin + Send), None);
        self.send_from(buffer, request.request(), Some(source), &mut trace)
            .await
    }

    /// [`send_streamed`](Self::send_streamed) with `file` as the source, from its current
    /// offset (and from there again for a retry, or a redirect that keeps the body): over
    /// plain HTTP/1.1 with a known length its bytes go from the page cache to the socket
    /// by `sendfile`, never copied through the process; over TLS, HTTP/2 or
    /// chunked, read (on tokio's blocking threads, as `tokio::fs` reads) through the send
    /// ring as any source's.
    ///
    /// # Errors
    ///
    /// As [`send_streamed`](Self::send_streamed).
    pub async fn send_file(
        &self,
        buffer: &mut RequestBuffer,
        request: &StreamedRequest<'_>,
        file: &std::fs::File,
    ) -> Result<Response<'_>, Error> {
        self.send_file_traced(buffer, request, file, |_| {}).await
    }

    /// [`send_file`](Self::send_file), showing `trace` each step ([`Trace`]).
    ///
    /// # Errors
    ///
    /// As [`send_streamed`](Self::send_streamed).
    pub async fn send_file_traced(
        &self,
        buffer: &mut RequestBuffer,
        request: &StreamedRequest<'_>,
        file: &std::fs::File,
        mut trace: impl FnMut(Trace<'_>) + Send,
    ) -> Result<Response<'_>, Error> {
        // A second handle on the same open file: one offset for both ways of sending.
        let handle = file.try_clone().map_err(Error::BodySource)?;
        let mut reader = ::tokio::fs::File::from_std(handle);
        let source = Source::new(
            &mut reader as &mut (dyn AsyncRead + Unpin + Send),
            Some(file.as_fd()),
        );
        self.send_from(buffer, request.request(), Some(source), &mut trace)
            .await
    }

    /// Sends `request`, a streamed body read from `source`, showing `trace` each step.
    async fn send_from(
        &self,
        buffer: &mut RequestBuffer,
        request: &Request<'_>,
        mut source: Option<BodySource<'_>>,
        trace: &mut (dyn FnMut(Trace<'_>) + Send),
    ) -> Result<Response<'_>, Error> {
        let deadline = self.config.request_timeout.map(|t| Instant::now() + t);
        let mut hop: Option<Hop> = None;
        let mut hops = 0;
        loop {
            let current = hop.as_ref().map_or(*request, |h| h.request(request));
            // A redirect that keeps a streamed body sends it again from the start.
            if let (Some(source), Some(_)) = (source.as_mut(), current.streamed()) {
                source.rewind().map_err(Error::BodySource)?;
            }
            let cookied = cookie::cookied(self.cookies(), buffer, &current)?;
            let sent = cookied.as_ref().map_or(current, |c| c.request(request));
            let response = self
                .exchange(buffer, &sent, deadline, source.as_mut(), trace)
                .await?;
            trace(Trace::Response(&response));
            cookie::keep(self.cookies(), sent.url(), response.head());
            let (head, body) = buffer.bytes(&current)?;
            let answer = Answer {
                status: response.status(),
                location: response.header("location"),
            };
            let follow = Follow {
                max: self.config.max_redirects,
                authorize: self.authorize.0.as_deref(),
            };
            let resendable = source.as_ref().is_none_or(Source::resendable);
            let next = next_hop(
                &current,
                head,
                body.len(),
                answer,
                follow,
                &mut hops,
                resendable,
            )?;
            let Some(next) = next else {
                return Ok(response);
            };
            response.discard().await;
            hop = Some(next);
        }
    }

    /// Idle connections pooled for `url`'s origin.
    #[must_use]
    pub fn idle_connections(&self, url: &Url) -> usize {
        self.pool.idle(url.origin())
    }

    async fn exchange(
        &self,
        buffer: &mut RequestBuffer,
        request: &Request<'_>,
        deadline: Option<Instant>,
        mut source: Option<&mut BodySource<'_>>,
        trace: &mut (dyn FnMut(Trace<'_>) + Send),
    ) -> Result<Response<'_>, Error> {
        let origin = request.url().origin();
        let shares = self.config.http2 != Http2::Off
            && self.config.http2_multiplex
            && source.is_none()
            && !request.expects_continue();
        let mut attempts: Option<Attempts> = None;
        // The shared connection an attempt failed on: not the one to try again on.
        let mut failed: Option<Http2Connection> = None;
        loop {
            let found = match shares {
                true => {
                    let h2c = self.config.http2 == Http2::PriorKnowledge;
                    let idle = self.config.idle_timeout;
                    self.multiplexed.find(origin, h2c, idle).await
                }
                false => Found::Dial(None),
            };
            // The first attempt may go on a pooled connection; one tried again, on a fresh
            // one (or on the origin's shared one, dialed since).
            let (via, reused) = match found {
                Found::Shared(shared) if !failed.as_ref().is_some_and(|f| f.is(&shared)) => {
                    (Via::Shared(shared), true)
                }
                Found::Dial(None) if attempts.is_none() => {
                    match self.pool.take(origin, |c| is_quiet(c.stream.get_ref())) {
                        Some(conn) => (Via::Own(conn), true),
                        None => (self.open(origin, shares, deadline, trace).await?, false),
                    }
                }
                // A dial for all is dropped once its connection is kept: the others go on.
                _dialing => (self.open(origin, shares, deadline, trace).await?, false),
            };
            let attempts = attempts.get_or_insert_with(|| Attempts::new(reused));
            let attempt = match via {
                Via::Shared(shared) => {
                    let sent = self.send_shared(&shared, buffer, request, deadline, trace);
                    let sent = sent.await;
                    if sent.is_err() {
                        failed = Some(shared);
                    }
                    sent.map_err(Failure::shared)
                }
                Via::Own(conn) => {
                    let source = source.as_deref_mut();
                    let sent = self.round_trip(conn, buffer, request, deadline, source, trace);
                    sent.await
                }
            };
            match attempt {
                Ok(response) => return Ok(response),
                Err(f) if attempts.again(&f, request) && source_rewound(source.as_deref_mut()) => {}
                Err(f) => return Err(f.error),
            }
        }
    }

    /// `origin`'s shared HTTP/2 connection, the one kept or a new one (then kept):
    /// [`Error::NotHttp2`] when the server chose HTTP/1.1 (that connection pooled).
    #[cfg(feature = "ws")]
    pub(crate) async fn shared_connection(
        &self,
        origin: &Origin,
    ) -> Result<Http2Connection, Error> {
        let h2c = self.config.http2 == Http2::PriorKnowledge;
        // Held while dialing: the others wait for this connection.
        let _dialing = match self
            .multiplexed
            .find(origin, h2c, self.config.idle_timeout)
            .await
        {
            Found::Shared(conn) => return Ok(conn),
            Found::Dial(dialing) => dialing,
        };
        match self.open(origin, true, None, &mut |_| {}).await? {
            Via::Shared(conn) => Ok(conn),
            Via::Own(conn) => {
                self.pool.put(conn);
                Err(Error::NotHttp2)
            }
        }
    }

    /// A new connection to `origin`: shared from now on if it speaks HTTP/2 and `shares`.
    async fn open(
        &self,
        origin: &Origin,
        shares: bool,
        deadline: Option<Instant>,
        trace: &mut (dyn FnMut(Trace<'_>) + Send),
    ) -> Result<Via, Error> {
        let mut conn = self.connect(origin, deadline, trace).await?;
        if !shares {
            return Ok(Via::Own(conn));
        }
        if conn.proto.h2().is_none() {
            self.multiplexed.forget(origin);
            return Ok(Via::Own(conn));
        }
        let shared = Http2Connection::start(&self.config, conn.stream, conn.rx);
        self.multiplexed.keep(origin, &shared);
        Ok(Via::Shared(shared))
    }

    /// Sends `request` on a stream of the `shared` connection.
    async fn send_shared(
        &self,
        shared: &Http2Connection,
        buffer: &mut RequestBuffer,
        request: &Request<'_>,
        deadline: Option<Instant>,
        trace: &mut (dyn FnMut(Trace<'_>) + Send),
    ) -> Result<Response<'_>, Error> {
        let (head, _) = buffer.bytes(request)?;
        trace(Trace::Protocol(Protocol::Http2));
        trace(Trace::Request(head));
        let interim: Interim<'_> = &mut |head| trace(Trace::Interim(head));
        let response = shared.send_within(buffer, request, deadline, interim);
        let response = response.await?;
        Ok(Response::new(Exchange::Shared(response)))
    }

    async fn connect(
        &self,
        origin: &Origin,
        deadline: Option<Instant>,
        trace: &mut (dyn FnMut(Trace<'_>) + Send),
    ) -> Result<Box<Connection>, Error> {
        let limit = match (self.config.connect_timeout, deadline) {
            (limit, None) => limit,
            (limit, Some(d)) => Some(remaining(d)?.min(limit.unwrap_or(Duration::MAX))),
        };
        let forward = match self.unix {
            Some(_) => None,
            None => self.proxies.forwarding(origin, self.config.http2),
        };
        let stream = Arc::new(match forward {
            Some(proxy) => MaybeTls::Plain(self.tcp(proxy.origin(), limit, trace).await?.into()),
            None => {
                let h2 = self.config.http2 != Http2::Off;
                self.dial(origin, limit, h2, trace).await?
            }
        });
        let http2 = match &*stream {
            MaybeTls::Tls(_) => stream.alpn_protocol().as_deref() == Some(b"h2"),
            MaybeTls::Plain(_) => self.config.http2 == Http2::PriorKnowledge,
        };
        let ring = Ring::new(self.config.rx)?;
        Ok(Box::new(Connection {
            rx: AsyncRecvTransport::with_ring(ring, Arc::clone(&stream)),
            stream,
            proto: Proto::new(http2, &self.config),
            origin: origin.clone(),
            forward: forward.cloned(),
        }))
    }

    /// A stream to `origin`: TCP (through a tunnel if a proxy is on the way) or the client's
    /// Unix socket, then TLS for `https://` (offering `h2` by ALPN if `h2`), within
    /// `limit`; `trace` sees the connection and the handshake done.
    pub(crate) async fn dial(
        &self,
        origin: &Origin,
        limit: Option<Duration>,
        h2: bool,
        trace: &mut (dyn FnMut(Trace<'_>) + Send),
    ) -> Result<Socket, Error> {
        let socket: AsyncNetStream = match (&self.unix, self.proxies.route(origin)) {
            (Some(path), _) => {
                let connecting = async {
                    let unix = AsyncNetStream::connect_unix(path).await;
                    unix.map_err(|e| unix_failed(path, e))
                };
                let unix = within_connect(limit, connecting).await?;
                trace(Trace::ConnectedUnix(path));
                unix
            }
            (None, None) => self.tcp(origin, limit, trace).await?.into(),
            (None, Some(proxy)) => {
                let tcp = self.tcp(proxy.origin(), limit, trace).await?;
                let pinned = self.pinned.get(origin);
                within_connect(limit, tunnel(&tcp, proxy, origin, pinned)).await?;
                tcp.into()
            }
        };
        Ok(match origin.scheme() {
            Scheme::Http => MaybeTls::Plain(socket),
            Scheme::Https => {
                let handshake = self.tls.connector(h2)?.connect(origin.host(), socket);
                let tls = within_connect(limit, async { handshake.await.map_err(Error::Tls) });
                let tls = tls.await?;
                trace(Trace::Handshaken);
                MaybeTls::Tls(Box::new(tls))
            }
        })
    }

    /// A TCP connection to `to` (or where it is pinned) within `limit`, without Nagle's
    /// delay: its addresses raced as RFC 8305 has it (`connect.rs`).
    async fn tcp(
        &self,
        to: &Origin,
        limit: Option<Duration>,
        trace: &mut (dyn FnMut(Trace<'_>) + Send),
    ) -> Result<TcpStream, Error> {
        let failed = |source| Error::Connect {
            authority: to.host_port(),
            source,
        };
        let connecting = async {
            let addrs: Vec<_> = match self.pinned.all(to) {
                Some(pinned) => pinned.to_vec(),
                None => ::tokio::net::lookup_host((to.host(), to.port()))
                    .await
                    .map_err(failed)?
                    .collect(),
            };
            trace(Trace::Resolved);
            crate::connect::race(&crate::connect::interleaved(addrs))
                .await
                .map_err(failed)
        };
        let (tcp, addr) = within_connect(limit, connecting).await?;
        tcp.set_nodelay(true).map_err(failed)?;
        trace(Trace::Connected(addr));
        Ok(tcp)
    }

    async fn round_trip(
        &self,
        mut conn: Box<Connection>,
        buffer: &mut RequestBuffer,
        request: &Request<'_>,
        deadline: Option<Instant>,
        mut source: Option<&mut BodySource<'_>>,
        trace: &mut (dyn FnMut(Trace<'_>) + Send),
    ) -> Result<Response<'_>, Failure> {
        let (head, body) = buffer.bytes(request)?;
        trace(Trace::Protocol(conn.proto.protocol()));
        trace(Trace::Request(head));
        let mut trip = RoundTrip::new(request, &self.config, deadline);
        let with_head = trip.with_head(body);
        let wrote = match conn.proto.h2() {
            None => {
                let rewritten = conn
                    .forward
                    .as_ref()
                    .map(|p| p.absolute_form(head, &conn.origin));
                let head = rewritten.as_deref().unwrap_or(head);
                let with_head = with_head.unwrap_or_default();
                within(deadline, conn.out().write_all(head, with_head)).await
            }
            Some(h2) => {
                // A body held back (or streamed) is sent later; an empty one ends the
                // stream now.
                h2.send(request.url(), head, with_head)?;
                within(deadline, conn.flush()).await
            }
        };
        trip.wrote(wrote)?;
        loop {
            let next = trip.next(
                &mut conn.proto,
                conn.rx.data_mut(),
                request.parse_method(),
                &self.config.limits,
            )?;
            match next {
                Next::Interim(len) => {
                    trace(Trace::Interim(conn.proto.head(conn.rx.data())));
                    conn.rx.consume(len);
                }
                Next::Consume(len) => conn.rx.consume(len),
                Next::Body => {
                    let (_, body) = buffer.bytes(request)?;
                    let wrote = match conn.proto.h2() {
                        None => within(deadline, conn.out().write_all(&[], body)).await,
                        Some(h2) => {
                            h2.send_body(body)?;
                            within(deadline, conn.flush()).await
                        }
                    };
                    trip.wrote(wrote)?;
                }
                Next::Upload(max) => {
                    let received = conn.rx.data().len();
                    let direct = match source.as_deref_mut() {
                        Some(s) if trip.sends_unframed(&conn.proto) => {
                            within(deadline, conn.out().sendfile_piece(s, max)).await
                        }
                        _ => Ok(None),
                    };
                    let wrote = match direct {
                        Ok(Some(n)) => trip.sent_unframed(n).map(|()| Ok(()))?,
                        Err(e) => Err(e),
                        Ok(None) => {
                            let scratch = buffer.scratch();
                            let room = piece(scratch.len(), max)?;
                            let n = match source.as_deref_mut() {
                                Some(source) => {
                                    source.taken = true;
                                    let read = read_source(source.reader, &mut scratch[room]);
                                    within(deadline, read).await?
                                }
                                None => 0,
                            };
                            let out = trip.uploaded(&mut conn.proto, scratch, n)?;
                            let framed = &scratch[out];
                            match conn.proto.h2() {
                                None => within(deadline, conn.out().write_all(framed, &[])).await,
                                Some(_) => within(deadline, conn.flush_with(framed)).await,
                            }
                        }
                    };
                    trip.wrote(wrote)?;
                    trace(Trace::Sent(trip.uploaded_len()));
                    // What the server sent while the piece waited for room: an early answer
                    // to look at, as a probe's.
                    if conn.rx.data().len() != received {
                        trip.probed(Ok(true))?;
                    }
                }
                Next::Probe => {
                    let at_least = conn.rx.data().len() + 1;
                    let probed = conn.rx.try_fill(at_least).map(|got| got.is_some());
                    trip.probed(probed.map_err(Error::from))?;
                }
                Next::Fill { at_least, until } => {
                    let filled = within(until, async {
                        conn.flush().await?;
                        conn.rx.fill(at_least).await.map_err(Error::from)
                    })
                    .await;
                    trip.filled(filled)?;
                }
                Next::Final(reader) => {
                    return Ok(Response::new(Exchange::Own(Own {
                        client: self,
                        conn: Some(conn),
                        reader,
                        deadline,
                        handed: None,
                    })))
                }
            }
        }
    }
}

impl Connection {
    /// The sending side, for one write.
    fn out(&mut self) -> Out<'_> {
        Out {
            stream: &self.stream,
            rx: &mut self.rx,
            ended: false,
        }
    }

    /// Sends all that an HTTP/2 connection has queued (window updates, pings'
    /// answers, request body the server's windows let out): before every read,
    /// so neither side waits on the other.
    async fn flush(&mut self) -> Result<(), Error> {
        self.flush_with(&[]).await
    }

    /// [`flush`](Self::flush), then `framed` (a `DATA` frame framed in place), in one
    /// gathered write.
    async fn flush_with(&mut self, framed: &[u8]) -> Result<(), Error> {
        let Some(h2) = self.proto.h2() else {
            return Ok(());
        };
        let mut out = Out {
            stream: &self.stream,
            rx: &mut self.rx,
            ended: false,
        };
        // Every run but the last alone; the last and the frame in one write.
        while h2.transmit().len() < h2.pending() {
            let run = h2.transmit().len();
            out.write_all(h2.transmit(), &[]).await?;
            h2.advance(run);
        }
        let queued = h2.transmit().len();
        if queued > 0 || !framed.is_empty() {
            out.write_all(h2.transmit(), framed).await?;
            h2.advance(queued);
        }
        Ok(())
    }
}

/// A connection's sending side. While a write waits for room, what the server sends is
/// received into the ring: a server that answers as it reads (an echo) stops reading
/// once its answer fills the socket, and if this side waited for room without reading,
/// neither would ever move again.
struct Out<'c> {
    stream: &'c Socket,
    rx: &'c mut AsyncRecvTransport<Arc<Socket>>,
    /// The server's side of the stream has ended: nothing more to receive.
    ended: bool,
}

impl Out<'_> {
    /// Sends head and body with `writev`, waiting for room as needed (and, over TLS,
    /// until the records have left).
    async fn write_all(&mut self, head: &[u8], body: &[u8]) -> Result<(), Error> {
        let mut slices = [IoSlice::new(head), IoSlice::new(body)];
        let mut left = &mut slices[..];
        IoSlice::advance_slices(&mut left, 0);
        while !left.is_empty() {
            match self.stream.try_write_vectored(left) {
                Ok(0) => return Err(io::Error::from(io::ErrorKind::WriteZero).into()),
                Ok(n) => IoSlice::advance_slices(&mut left, n),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => self.writable().await?,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e.into()),
            }
        }
        loop {
            match self.stream.try_flush() {
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => self.writable().await?,
                done => return Ok(done?),
            }
        }
    }

    /// Sends up to `max` bytes of a streamed body straight from its file by `sendfile`,
    /// when the stream is a plain socket, waiting for room when it is full; `None` when it is
    /// not, or the file is not one `sendfile` reads (a pipe), and the body goes through
    /// the send ring instead (from where `sendfile` left the file's offset).
    async fn sendfile_piece(
        &mut self,
        source: &mut BodySource<'_>,
        max: usize,
    ) -> Result<Option<usize>, Error> {
        /// Linux sends at most this much per `sendfile`.
        const MAX_SENDFILE: usize = 0x7fff_f000;

        let (Some(file), MaybeTls::Plain(socket)) = (source.file, self.stream) else {
            return Ok(None);
        };
        source.taken = true;
        loop {
            // `try_io` clears tokio's write readiness when the socket is full, so the
            // wait below really waits.
            let sent = socket.try_io(Interest::WRITABLE, || {
                rustix::fs::sendfile(socket, file, None, max.min(MAX_SENDFILE))
                    .map_err(io::Error::from)
            });
            match sent {
                Ok(n) => return Ok(Some(n)),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => self.writable().await?,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) if e.kind() == io::ErrorKind::InvalidInput => {
                    source.file = None;
                    return Ok(None);
                }
                Err(e) => return Err(e.into()),
            }
        }
    }

    /// Waits until the stream takes more bytes, receiving what the server sends
    /// meanwhile (the ring grows to its bound; past it, the exchange fails rather than
    /// wait forever).
    async fn writable(&mut self) -> Result<(), Error> {
        loop {
            if self.ended {
                return Ok(self.stream.writable().await?);
            }
            ::tokio::select! {
                biased;
                room = self.stream.writable() => return Ok(room?),
                ready = self.stream.readable() => {
                    ready?;
                    let at_least = self.rx.data().len() + 1;
                    let filled = self.rx.try_fill(at_least);
                    if let Some(0) = filled.map_err(crate::error::while_sending)? {
                        self.ended = true;
                    }
                }
            }
        }
    }
}

/// Reads a piece of a streamed body from `source` into `into`.
async fn read_source(
    source: &mut (dyn AsyncRead + Unpin + Send + '_),
    into: &mut [u8],
) -> Result<usize, Error> {
    let mut buf = ReadBuf::new(into);
    std::future::poll_fn(|cx| std::pin::Pin::new(&mut *source).poll_read(cx, &mut buf))
        .await
        .map_err(Error::BodySource)?;
    Ok(buf.filled().len())
}

/// Runs `io`, bounded by `deadline` if there is one.
async fn within<T, E: Into<Error>>(
    deadline: Option<Instant>,
    io: impl Future<Output = Result<T, E>>,
) -> Result<T, Error> {
    match deadline {
        None => io.await.map_err(Into::into),
        Some(d) => match ::tokio::time::timeout_at(d.into(), io).await {
            Ok(done) => done.map_err(Into::into),
            Err(_) => Err(Error::Timeout(Phase::Request)),
        },
    }
}

/// `future`, bounded by the connect timeout `limit`.
async fn within_connect<T>(
    limit: Option<Duration>,
    future: impl Future<Output = Result<T, Error>>,
) -> Result<T, Error> {
    match limit {
        Some(limit) => ::tokio::time::timeout(limit, future)
            .await
            .map_err(|_| Error::Timeout(Phase::Connect))?,
        None => future.await,
    }
}

/// Has `proxy`, at the other end of `tcp`, open a tunnel to `origin`.
async fn tunnel(
    tcp: &TcpStream,
    proxy: &Proxy,
    origin: &Origin,
    pinned: Option<std::net::SocketAddr>,
) -> Result<(), Error> {
    let resolved = match (proxy.resolves_locally(), pinned) {
        (false, _) => None,
        (true, Some(addr)) => Some(addr.ip()),
        (true, None) => {
            let lookup = ::tokio::net::lookup_host((origin.host(), origin.port())).await;
            Some(first_address(proxy, origin, lookup)?)
        }
    };
    let (mut tunnel, first) = Tunnel::start(proxy, origin, resolved)?;
    send(tcp, &first).await?;
    let mut answer = Vec::new();
    let mut chunk = [0; 1024];
    loop {
        tcp.readable().await?;
        match tcp.try_read(&mut chunk) {
            Ok(0) => return Err(Error::Closed),
            Ok(n) => answer.extend_from_slice(&chunk[..n]),
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => continue,
            Err(e) => return Err(e.into()),
        }
        match tunnel.step(&answer)? {
            Step::More => {}
            Step::Send(bytes) => {
                answer.clear();
                send(tcp, &bytes).await?;
            }
            Step::Open => return Ok(()),
        }
    }
}

/// Writes all of `bytes` to `tcp`.
async fn send(tcp: &TcpStream, bytes: &[u8]) -> Result<(), Error> {
    let mut sent = 0;
    while sent < bytes.len() {
        tcp.writable().await?;
        match tcp.try_write(&bytes[sent..]) {
            Ok(n) => sent += n,
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
            Err(e) => return Err(e.into()),
        }
    }
    Ok(())
}

/// A response whose head has arrived; the body is read as it comes: in place in the
/// connection's receive ring, or, on a stream of a shared HTTP/2 connection
/// ([`ClientConfig::http2_multiplex`]), copied out of it once as its frames come.
///
/// Dropping it returns a connection of its own to the pool if the body was read to its end
/// and the server keeps it open; otherwise the connection closes (a shared connection's
/// stream is reset instead).
#[derive(Debug)]
pub struct Response<'c> {
    exchange: Exchange<'c>,
    /// The body, when [`json`](Self::json) had to collect it.
    #[cfg(feature = "json")]
    collected: Vec<u8>,
}

#[derive(Debug)]
enum Exchange<'c> {
    /// On a connection of its own.
    Own(Own<'c>),
    /// On a stream of a shared HTTP/2 connection.
    Shared(Http2Response),
}

/// An exchange on a connection of its own, the body read in place.
#[derive(Debug)]
struct Own<'c> {
    client: &'c Client,
    /// `None` once the body is done and the connection went back.
    conn: Option<Box<Connection>>,
    reader: Reader,
    deadline: Option<Instant>,
    /// Where the piece the last `chunk` handed out lies (`None`: decoded output), while
    /// it is there to hand out again.
    handed: Option<Option<Range<usize>>>,
}

impl<'c> Response<'c> {
    fn new(exchange: Exchange<'c>) -> Self {
        Response {
            exchange,
            #[cfg(feature = "json")]
            collected: Vec::new(),
        }
    }

    /// The status code.
    #[must_use]
    pub fn status(&self) -> u16 {
        match &self.exchange {
            Exchange::Own(own) => own.reader.status(),
            Exchange::Shared(shared) => shared.status(),
        }
    }

    /// The protocol the response came over.
    #[must_use]
    pub fn protocol(&self) -> Protocol {
        match &self.exchange {
            Exchange::Own(own) => own.reader.protocol(),
            Exchange::Shared(_) => Protocol::Http2,
        }
    }

    /// The head (over HTTP/2, rewritten as an HTTP/1.1 head with no reason phrase): in
    /// place in the receive ring until the body is read (`None` after the first
    /// [`chunk`](Self::chunk)) on a connection of its own, kept on a shared one.
    #[must_use]
    pub fn head(&self) -> Option<ringwire_http1::Response<'_>> {
        match &self.exchange {
            Exchange::Own(own) => {
                let conn = own.conn.as_ref()?;
                own.reader.head(&conn.proto, conn.rx.data())
            }
            Exchange::Shared(shared) => Some(shared.head()),
        }
    }

    /// The first field named `name`, while the head is there.
    #[must_use]
    pub fn header(&self, name: &str) -> Option<&[u8]> {
        self.head()?.header(name)
    }

    /// The trailer fields the body ended with: empty until [`chunk`](Self::chunk) has
    /// returned `None` (or the whole body was read otherwise), and for a body without any.
    /// A chunked HTTP/1.1 body or an HTTP/2 stream may have them (gRPC's `grpc-status`).
    #[must_use]
    pub fn trailers(&self) -> &crate::Trailers {
        match &self.exchange {
            Exchange::Own(own) => own.reader.trailers(),
            Exchange::Shared(shared) => shared.trailers(),
        }
    }

    /// The content coding the body is decoded from: `Some` when the request asked for it
    /// ([`HeaderBuilder::decompress`](crate::HeaderBuilder::decompress)) and the response's
    /// `content-encoding` is one the client undoes; the head still says what the server
    /// sent (`content-encoding`, and a `content-length` of the encoded bytes).
    #[must_use]
    pub fn decoding(&self) -> Option<crate::Encoding> {
        match &self.exchange {
            Exchange::Own(own) => own.reader.encoding(),
            Exchange::Shared(shared) => shared.decoding(),
        }
    }

    /// The next piece of body, valid until the next call: in place in the receive ring,
    /// or all that came since the last call on a shared connection. `None` at the end of
    /// the body.
    ///
    /// A body being decoded ([`decoding`](Self::decoding)) comes out decoded instead,
    /// from a buffer the response keeps for it (at most 64 KiB a piece).
    ///
    /// # Errors
    ///
    /// Malformed framing, a body over the limit, the deadline, the stream reset
    /// ([`Error::Http2Reset`]) or the connection failing; for a body being decoded,
    /// [`Error::Decompress`] and [`Error::DecodedBodyTooLarge`]. A connection of its own
    /// is then closed.
    pub async fn chunk(&mut self) -> Result<Option<&[u8]>, Error> {
        match &mut self.exchange {
            Exchange::Own(own) => own.chunk().await,
            Exchange::Shared(shared) => shared.chunk().await,
        }
    }

    /// The piece the last [`chunk`](Self::chunk) handed out, again.
    fn handed(&self) -> Option<&[u8]> {
        match &self.exchange {
            Exchange::Own(own) => own.handed(),
            Exchange::Shared(shared) => shared.handed(),
        }
    }

    /// The body from here on read as server-sent events (`text/event-stream`): an event
    /// that arrives whole in one piece is read where it lies, in the receive ring or the
    /// shared connection's buffer, as [`Events::next`] says.
    pub fn events(&mut self) -> Events<'_, 'c> {
        Events::new(self)
    }

    /// The whole body, collected.
    ///
    /// # Errors
    ///
    /// As [`chunk`](Self::chunk).
    pub async fn bytes(&mut self) -> Result<Vec<u8>, Error> {
        let mut out = Vec::new();
        while let Some(chunk) = self.chunk().await? {
            out.extend_from_slice(chunk);
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

    /// The whole body as JSON, deserialised into `T`, which may borrow from it (`&str`
    /// fields, `#[serde(borrow)]`): deserialised where it lies in the receive ring when it
    /// came over HTTP/1.1 on a connection of its own with a length the ring can hold, not
    /// decoded (no copy); otherwise collected first. The connection goes back to the pool
    /// when the response is dropped.
    ///
    /// # Errors
    ///
    /// As [`chunk`](Self::chunk); [`Error::Json`] for a body that is not JSON, or not
    /// the JSON `T` reads.
    #[cfg(feature = "json")]
    pub async fn json<'r, T: serde::Deserialize<'r>>(&'r mut self) -> Result<T, Error> {
        serde_json::from_slice(self.whole().await?).map_err(Error::Json)
    }

    /// The whole body in one slice: in place when [`Own::whole_in_ring`] can; else collected.
    #[cfg(feature = "json")]
    async fn whole(&mut self) -> Result<&[u8], Error> {
        let in_ring = match &mut self.exchange {
            Exchange::Own(own) => own.whole_in_ring().await?,
            Exchange::Shared(_) => false,
        };
        if in_ring {
            return Ok(self.chunk().await?.unwrap_or_default());
        }
        self.collected = self.bytes().await?;
        Ok(&self.collected)
    }

    /// Reads and drops a short body so the connection can be reused; a
    /// long one closes the connection instead.
    async fn discard(mut self) {
        let mut left = DISCARD_LIMIT;
        while left > 0 {
            match self.chunk().await {
                Ok(Some(chunk)) => left = left.saturating_sub(chunk.len()),
                Ok(None) | Err(_) => return,
            }
        }
    }
}

impl Own<'_> {
    /// As [`Response::chunk`].
    async fn chunk(&mut self) -> Result<Option<&[u8]>, Error> {
        self.handed = None;
        let piece = loop {
            let Some(conn) = self.conn.as_mut() else {
                return Ok(None);
            };
            conn.rx.consume(self.reader.take_consumed());
            match self.reader.decode(conn.rx.data(), conn.proto.h2())? {
                BodyStep::Data(range) => break Some(range),
                BodyStep::Decoded => break None,
                BodyStep::Need(consumed) => {
                    conn.rx.consume(consumed);
                    let at_least = conn.rx.data().len() + 1;
                    self.fill(at_least).await?;
                }
                BodyStep::Done(consumed) => {
                    conn.rx.consume(consumed);
                    self.release();
                    return Ok(None);
                }
            }
        };
        self.handed = Some(piece);
        Ok(self.handed())
    }

    /// The piece the last [`chunk`](Self::chunk) handed out, again.
    fn handed(&self) -> Option<&[u8]> {
        let data = self.conn.as_ref().map(|conn| conn.rx.data());
        self.reader.piece(data, self.handed.clone()?)
    }

    /// One read into the ring, once it has room for `at_least` unread bytes (what the
    /// connection has to send going first); the end of the stream, where the framing
    /// allows one.
    async fn fill(&mut self, at_least: usize) -> Result<(), Error> {
        let Some(conn) = self.conn.as_mut() else {
            return Ok(());
        };
        let filled = within(self.deadline, async {
            conn.flush().await?;
            conn.rx.fill(at_least).await.map_err(Error::from)
        })
        .await
        .map_err(|e| self.reader.failed(e))?;
        if filled == 0 {
            self.reader.eof()?;
        }
        Ok(())
    }

    /// Whether the whole body is in the receive ring, in one piece the next
    /// [`chunk`](Self::chunk) gives, after reading it there: when it comes framed by a
    /// length the ring can hold, undecoded, over HTTP/1.1.
    #[cfg(feature = "json")]
    async fn whole_in_ring(&mut self) -> Result<bool, Error> {
        let max = self.conn.as_ref().map_or(0, |c| c.rx.ring().max_capacity());
        let Some(len) = self.reader.whole_len().filter(|&len| len <= max) else {
            return Ok(false);
        };
        while let Some(conn) = self.conn.as_mut() {
            conn.rx.consume(self.reader.take_consumed());
            if conn.rx.data().len() >= len {
                break;
            }
            self.fill(len).await?;
        }
        Ok(true)
    }

    /// Returns the connection to the pool if it can carry another request.
    fn release(&mut self) {
        if let Some(conn) = self.conn.take() {
            if self.reader.reusable() && conn.proto.reusable() && conn.rx.data().is_empty() {
                self.client.pool.put(conn);
            }
        }
    }
}

impl Drop for Own<'_> {
    fn drop(&mut self) {
        if let Some(conn) = self.conn.as_mut() {
            if let Some(n) = self.reader.finish_in_place(conn.rx.data()) {
                conn.rx.consume(n);
            }
        }
        if self.reader.is_done() {
            self.release();
        }
    }
}
