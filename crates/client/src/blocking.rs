//! The blocking client: std sockets, the response received into a ring by
//! [`RecvTransport`].

use std::fs::File;
use std::io::{self, IoSlice, Read, Write as _};
use std::net::{TcpStream, ToSocketAddrs};
use std::os::fd::AsFd as _;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use ringwire_io::{NetStream, RecvTransport, TransportError};
use ringwire_ring::Ring;

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
use crate::stream::Stream;
use crate::tls::Tls;
use crate::tunnel::{first_address, Step, Tunnel};
use crate::url::{Origin, Scheme};
use crate::{
    ClientConfig, CookieJar, Error, Http2, Phase, Proxies, Proxy, Request, RequestBuffer,
    StreamedRequest, Url,
};

/// A streamed body's source, as the blocking client reads it.
type BodySource<'s> = Source<'s, dyn Read + 's>;

/// An HTTP/1.1 and HTTP/2 client with a keep-alive pool; share it by
/// reference across threads.
#[derive(Debug)]
pub struct Client {
    pub(crate) config: ClientConfig,
    pool: Pool<Connection>,
    tls: Tls,
    proxies: Proxies,
    pinned: Pinned,
    /// The Unix socket every connection goes to, if one was given.
    unix: Option<Arc<Path>>,
    /// Cookies stored from answers and sent with requests, when given one.
    cookies: Option<Arc<CookieJar>>,
    /// The `authorization` of a redirect to another origin.
    authorize: Authorizer,
}

impl Default for Client {
    fn default() -> Self {
        Client::new(ClientConfig::default())
    }
}

/// One connection: its stream inside the receive transport (requests are
/// written to the same stream), and its protocol's state, kept warm across
/// responses.
#[derive(Debug)]
struct Connection {
    rx: RecvTransport<Stream>,
    proto: Proto,
    origin: Origin,
    /// The proxy an `http://` request goes to in absolute-form, if it goes through one.
    forward: Option<Proxy>,
    /// What the socket's timeouts are set for: cleared for a request without
    /// a deadline; for one with, set again before a read only when the last
    /// setting is older than [`REARM_AFTER`].
    armed: Armed,
}

/// How stale a read timeout may be before it is set again from the time
/// left: a read then ends at most this long past the deadline. The write
/// and the first read of a round trip share one setting (two system calls
/// fewer per request), while a body trickling in keeps to the deadline.
const REARM_AFTER: Duration = Duration::from_millis(1);

/// What a connection's socket timeouts were last set for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Armed {
    /// None set.
    Nothing,
    /// Some, not ours (the TLS handshake leaves the connect timeout).
    Unknown,
    /// What was left until `deadline` at `at`.
    Until { deadline: Instant, at: Instant },
}

impl Client {
    crate::shared_api::client_builders!();

    /// `GET url`, as [`tokio::Client::get`](crate::tokio::Client::get).
    ///
    /// # Errors
    ///
    /// [`Error::Url`]; as [`send`](Self::send).
    pub fn get(&self, url: &str) -> Result<Response<'_>, Error> {
        let url = crate::Url::parse(url)?;
        let mut buffer = RequestBuffer::new()?;
        let request = buffer.request("GET", &url)?.headers()?.finish()?;
        self.send(&mut buffer, &request)
    }

    /// Sends `request` (written into `buffer`) and reads the response head,
    /// following redirects when [`ClientConfig::max_redirects`] allows.
    ///
    /// # Errors
    ///
    /// See [`Error`].
    pub fn send(
        &self,
        buffer: &mut RequestBuffer,
        request: &Request<'_>,
    ) -> Result<Response<'_>, Error> {
        self.send_traced(buffer, request, |_| {})
    }

    /// [`send`](Self::send), handing `trace` the exchange as it goes, as `curl -v` shows
    /// it: each request head, the interim answers to it, and the response it got, every
    /// hop of a redirect chain and the last.
    ///
    /// # Errors
    ///
    /// See [`Error`].
    pub fn send_traced(
        &self,
        buffer: &mut RequestBuffer,
        request: &Request<'_>,
        trace: impl FnMut(Trace<'_>),
    ) -> Result<Response<'_>, Error> {
        self.send_from(buffer, request, None, trace)
    }

    /// Sends `request`, its body read from `source` as it goes (see
    /// [`HeaderBuilder::body_stream`](crate::HeaderBuilder::body_stream)), and reads
    /// the response head, following redirects that do not send the body again when
    /// [`ClientConfig::max_redirects`] allows.
    ///
    /// ```no_run
    /// use ringwire_client::{blocking::Client, RequestBuffer, Url};
    ///
    /// let url = Url::parse("http://127.0.0.1:8080/upload/backup.tar")?;
    /// let file = std::fs::File::open("backup.tar").map_err(ringwire_client::Error::Io)?;
    /// let len = file.metadata().map_err(ringwire_client::Error::Io)?.len();
    /// let mut buffer = RequestBuffer::new()?;
    /// let request = buffer.request("PUT", &url)?.headers()?.body_stream(Some(len))?;
    /// let client = Client::default();
    /// let response = client.send_streamed(&mut buffer, &request, file)?;
    /// println!("{}", response.status());
    /// # Ok::<(), ringwire_client::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// See [`Error`]; [`Error::BodySource`] when `source` fails,
    /// [`Error::BodySourceEnded`] when it ends short of the announced length.
    pub fn send_streamed(
        &self,
        buffer: &mut RequestBuffer,
        request: &StreamedRequest<'_>,
        source: impl Read,
    ) -> Result<Response<'_>, Error> {
        self.send_streamed_traced(buffer, request, source, |_| {})
    }

    /// [`send_streamed`](Self::send_streamed), handing `trace` the exchange as
    /// [`send_traced`](Self::send_traced) does.
    ///
    /// # Errors
    ///
    /// As [`send_streamed`](Self::send_streamed).
    pub fn send_streamed_traced(
        &self,
        buffer: &mut RequestBuffer,
        request: &StreamedRequest<'_>,
        mut source: impl Read,
        trace: impl FnMut(Trace<'_>),
    ) -> Result<Response<'_>, Error> {
        let source = Source::new(&mut source as &mut dyn Read, None);
        self.send_from(buffer, request.request(), Some(source), trace)
    }

    /// [`send_streamed`](Self::send_streamed) with `file` as the source, from its current
    /// offset (and from there again for a retry, or a redirect that keeps the body): over
    /// plain HTTP/1.1 with a known length its bytes go from the page cache to the socket
    /// by `sendfile`, never copied through the process; over TLS, HTTP/2 or
    /// chunked, through the send ring as any source's.
    ///
    /// # Errors
    ///
    /// As [`send_streamed`](Self::send_streamed).
    pub fn send_file(
        &self,
        buffer: &mut RequestBuffer,
        request: &StreamedRequest<'_>,
        file: &File,
    ) -> Result<Response<'_>, Error> {
        self.send_file_traced(buffer, request, file, |_| {})
    }

    /// [`send_file`](Self::send_file), handing `trace` the exchange as
    /// [`send_traced`](Self::send_traced) does.
    ///
    /// # Errors
    ///
    /// As [`send_streamed`](Self::send_streamed).
    pub fn send_file_traced(
        &self,
        buffer: &mut RequestBuffer,
        request: &StreamedRequest<'_>,
        file: &File,
        trace: impl FnMut(Trace<'_>),
    ) -> Result<Response<'_>, Error> {
        let mut reader = file;
        let source = Source::new(&mut reader as &mut dyn Read, Some(file.as_fd()));
        self.send_from(buffer, request.request(), Some(source), trace)
    }

    /// Sends `request`, a streamed body read from `source`.
    fn send_from(
        &self,
        buffer: &mut RequestBuffer,
        request: &Request<'_>,
        mut source: Option<BodySource<'_>>,
        mut trace: impl FnMut(Trace<'_>),
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
            let response = self.exchange(buffer, &sent, deadline, source.as_mut(), &mut trace)?;
            cookie::keep(self.cookies(), sent.url(), response.head());
            trace(Trace::Response(&response));
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
            response.discard();
            hop = Some(next);
        }
    }

    /// Idle connections pooled for `url`'s origin.
    #[must_use]
    pub fn idle_connections(&self, url: &Url) -> usize {
        self.pool.idle(url.origin())
    }

    /// One request and response head: on a pooled connection, and once more
    /// on a fresh one if the pooled one turned out closed; on a fresh one
    /// once more if an HTTP/2 server refused it unprocessed.
    fn exchange(
        &self,
        buffer: &mut RequestBuffer,
        request: &Request<'_>,
        deadline: Option<Instant>,
        mut source: Option<&mut BodySource<'_>>,
        trace: &mut dyn FnMut(Trace<'_>),
    ) -> Result<Response<'_>, Error> {
        let origin = request.url().origin();
        let pooled = self
            .pool
            .take(origin, |c| is_quiet(c.rx.get_ref().socket()));
        let mut attempts = Attempts::new(pooled.is_some());
        let mut conn = match pooled {
            Some(conn) => conn,
            None => self.connect(origin, deadline, trace)?,
        };
        loop {
            let attempt = self.round_trip(
                conn,
                buffer,
                request,
                deadline,
                source.as_deref_mut(),
                trace,
            );
            match attempt {
                Ok(response) => return Ok(response),
                Err(f) if attempts.again(&f, request) && source_rewound(source.as_deref_mut()) => {}
                Err(f) => return Err(f.error),
            }
            conn = self.connect(origin, deadline, trace)?;
        }
    }

    fn connect(
        &self,
        origin: &Origin,
        deadline: Option<Instant>,
        trace: &mut dyn FnMut(Trace<'_>),
    ) -> Result<Connection, Error> {
        let timeout = match (self.config.connect_timeout, deadline) {
            (limit, None) => limit,
            (limit, Some(d)) => Some(remaining(d)?.min(limit.unwrap_or(Duration::MAX))),
        };
        let forward = match self.unix {
            Some(_) => None,
            None => self.proxies.forwarding(origin, self.config.http2),
        };
        let stream = match forward {
            Some(proxy) => Stream::Plain(self.tcp(proxy.origin(), timeout, trace)?.into()),
            None => self.dial(origin, timeout, self.config.http2 != Http2::Off, trace)?,
        };
        let http2 = match &stream {
            Stream::Tls(tls) => tls.alpn_protocol().as_deref() == Some(b"h2"),
            Stream::Plain(_) => self.config.http2 == Http2::PriorKnowledge,
        };
        let ring = Ring::new(self.config.rx)?;
        Ok(Connection {
            rx: RecvTransport::with_ring(ring, stream),
            proto: Proto::new(http2, &self.config),
            origin: origin.clone(),
            forward: forward.cloned(),
            // The handshake, or the tunnel's, left the connect timeout on the socket.
            armed: if forward.is_none()
                && (origin.scheme() == Scheme::Https || self.proxies.route(origin).is_some())
            {
                Armed::Unknown
            } else {
                Armed::Nothing
            },
        })
    }

    /// A stream to `origin`: TCP (through a tunnel if a proxy is on the way) or the client's
    /// Unix socket, then TLS for `https://` (offering `h2` by ALPN if `h2`, and leaving
    /// `timeout` on the socket), connecting within `timeout`; `trace` sees the connection
    /// and the handshake done.
    pub(crate) fn dial(
        &self,
        origin: &Origin,
        timeout: Option<Duration>,
        h2: bool,
        trace: &mut dyn FnMut(Trace<'_>),
    ) -> Result<Stream, Error> {
        let socket = match (&self.unix, self.proxies.route(origin)) {
            (Some(path), _) => {
                let stream = NetStream::connect_unix(path, timeout);
                let stream = stream.map_err(|e| unix_failed(path, e))?;
                trace(Trace::ConnectedUnix(path));
                stream
            }
            (None, None) => self.tcp(origin, timeout, trace)?.into(),
            (None, Some(proxy)) => {
                let mut tcp = self.tcp(proxy.origin(), timeout, trace)?;
                tunnel(&mut tcp, proxy, origin, self.pinned.get(origin), timeout)?;
                tcp.into()
            }
        };
        match origin.scheme() {
            Scheme::Http => Ok(Stream::Plain(socket)),
            Scheme::Https => {
                let tls = self.handshake(origin, socket, timeout, h2)?;
                trace(Trace::Handshaken);
                Ok(tls)
            }
        }
    }

    /// A TCP connection to `to` (or where it is pinned) within `timeout`, without Nagle's
    /// delay: its addresses raced as RFC 8305 has it (`connect.rs`).
    fn tcp(
        &self,
        to: &Origin,
        timeout: Option<Duration>,
        trace: &mut dyn FnMut(Trace<'_>),
    ) -> Result<TcpStream, Error> {
        let failed = |source| Error::Connect {
            authority: to.host_port(),
            source,
        };
        let addrs: Vec<_> = match self.pinned.all(to) {
            Some(pinned) => pinned.to_vec(),
            None => (to.host(), to.port())
                .to_socket_addrs()
                .map_err(failed)?
                .collect(),
        };
        trace(Trace::Resolved);
        match crate::connect::race_blocking(&crate::connect::interleaved(addrs), timeout) {
            Ok((stream, addr)) => {
                stream.set_nodelay(true).map_err(failed)?;
                trace(Trace::Connected(addr));
                Ok(stream)
            }
            Err(e) if e.kind() == io::ErrorKind::TimedOut => Err(Error::Timeout(Phase::Connect)),
            Err(e) => Err(failed(e)),
        }
    }

    /// TLS over `socket`, the handshake bounded by the connect timeout.
    fn handshake(
        &self,
        origin: &Origin,
        socket: NetStream,
        timeout: Option<Duration>,
        h2: bool,
    ) -> Result<Stream, Error> {
        let connector = self.tls.connector(h2)?;
        socket.set_read_timeout(timeout)?;
        socket.set_write_timeout(timeout)?;
        match connector.connect_blocking(origin.host(), socket) {
            Ok(tls) => Ok(Stream::Tls(Box::new(tls))),
            Err(ringwire_tls::TlsError::Io(e))
                if matches!(
                    e.kind(),
                    io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                ) =>
            {
                Err(Error::Timeout(Phase::Connect))
            }
            Err(e) => Err(Error::Tls(e)),
        }
    }

    /// Sends the request and reads up to the final response head.
    fn round_trip(
        &self,
        mut conn: Connection,
        buffer: &mut RequestBuffer,
        request: &Request<'_>,
        deadline: Option<Instant>,
        mut source: Option<&mut BodySource<'_>>,
        trace: &mut dyn FnMut(Trace<'_>),
    ) -> Result<Response<'_>, Failure> {
        let (head, body) = buffer.bytes(request)?;
        let mut trip = RoundTrip::new(request, &self.config, deadline);
        trace(Trace::Protocol(conn.proto.protocol()));
        trace(Trace::Request(head));
        conn.set_deadline(deadline)?;
        let with_head = trip.with_head(body);
        let wrote = match &mut conn.proto {
            Proto::Http1(_) => {
                let with_head = with_head.unwrap_or_default();
                match conn.forward.as_ref() {
                    None => conn.out(Opening::Yes).write_all(head, with_head),
                    Some(proxy) => {
                        let head = proxy.absolute_form(head, &conn.origin);
                        conn.out(Opening::Yes).write_all(&head, with_head)
                    }
                }
            }
            Proto::Http2(h2) => {
                // A body held back (or streamed) is sent later; an empty one ends the
                // stream now.
                h2.send(request.url(), head, with_head)?;
                conn.flush_with(&[], Opening::Yes)
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
                    conn.set_deadline(deadline)?;
                    let wrote = match &mut conn.proto {
                        Proto::Http1(_) => conn.out(Opening::No).write_all(&[], body),
                        Proto::Http2(h2) => {
                            h2.send_body(body)?;
                            conn.flush()
                        }
                    };
                    trip.wrote(wrote)?;
                }
                Next::Upload(max) => {
                    conn.set_deadline(deadline)?;
                    let received = conn.rx.data().len();
                    let direct = match source.as_deref_mut() {
                        Some(s) if trip.sends_unframed(&conn.proto) => {
                            conn.out(Opening::No).sendfile_piece(s, max)
                        }
                        _ => None,
                    };
                    let wrote = match direct {
                        Some(Ok(n)) => trip.sent_unframed(n).map(|()| Ok(()))?,
                        Some(Err(e)) => Err(e),
                        None => {
                            let scratch = buffer.scratch();
                            let room = piece(scratch.len(), max)?;
                            let n = match source.as_deref_mut() {
                                Some(source) => {
                                    source.taken = true;
                                    read_source(source.reader, &mut scratch[room])?
                                }
                                None => 0,
                            };
                            let out = trip.uploaded(&mut conn.proto, scratch, n)?;
                            match conn.proto {
                                Proto::Http1(_) => {
                                    conn.out(Opening::No).write_all(&scratch[out], &[])
                                }
                                Proto::Http2(_) => conn.flush_with(&scratch[out], Opening::No),
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
                    let probed = conn.probe();
                    trip.probed(probed)?;
                }
                Next::Fill { at_least, until } => {
                    let filled = conn
                        .set_deadline(until)
                        .and_then(|()| conn.flush())
                        .and_then(|()| Ok(conn.rx.fill(at_least)?));
                    trip.filled(filled)?;
                }
                Next::Final(reader) => {
                    return Ok(Response {
                        client: self,
                        conn: Some(conn),
                        reader,
                        deadline,
                        handed: None,
                        #[cfg(feature = "json")]
                        collected: Vec::new(),
                    })
                }
            }
        }
    }
}

/// Has `proxy`, at the other end of `tcp`, open a tunnel to `origin`, within `timeout`.
fn tunnel(
    tcp: &mut TcpStream,
    proxy: &Proxy,
    origin: &Origin,
    pinned: Option<std::net::SocketAddr>,
    timeout: Option<Duration>,
) -> Result<(), Error> {
    let timed_out = |e: io::Error| match e.kind() {
        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut => Error::Timeout(Phase::Connect),
        _ => Error::Io(e),
    };
    let resolved = match (proxy.resolves_locally(), pinned) {
        (false, _) => None,
        (true, Some(addr)) => Some(addr.ip()),
        (true, None) => {
            let lookup = (origin.host(), origin.port()).to_socket_addrs();
            Some(first_address(proxy, origin, lookup)?)
        }
    };
    tcp.set_read_timeout(timeout)?;
    tcp.set_write_timeout(timeout)?;
    let (mut tunnel, first) = Tunnel::start(proxy, origin, resolved)?;
    tcp.write_all(&first).map_err(timed_out)?;
    let mut answer = Vec::new();
    let mut chunk = [0; 1024];
    loop {
        let n = io::Read::read(tcp, &mut chunk).map_err(timed_out)?;
        if n == 0 {
            return Err(Error::Closed);
        }
        answer.extend_from_slice(&chunk[..n]);
        match tunnel.step(&answer)? {
            Step::More => {}
            Step::Send(bytes) => {
                answer.clear();
                tcp.write_all(&bytes).map_err(timed_out)?;
            }
            Step::Open => return Ok(()),
        }
    }
}

impl Keyed for Connection {
    fn origin(&self) -> &Origin {
        &self.origin
    }

    fn cool(&mut self) {
        // On an error the pages stay where they are: nothing is lost.
        let _ = self.rx.ring_mut().release_pages();
        if let Stream::Tls(tls) = self.rx.get_mut() {
            let _ = tls.release_idle_memory();
        }
        if let Some(h2) = self.proto.h2() {
            h2.shrink();
        }
    }
}

impl Connection {
    /// Sends what an HTTP/2 connection has queued (window updates, pings'
    /// answers, request body the server's windows let out): before every
    /// read, so neither side waits on the other.
    fn flush(&mut self) -> Result<(), Error> {
        self.flush_with(&[], Opening::No)
    }

    /// [`flush`](Self::flush), then `framed` (a `DATA` frame framed in place), in one
    /// gathered write.
    fn flush_with(&mut self, framed: &[u8], opening: Opening) -> Result<(), Error> {
        let deadline = self.deadline();
        let Some(h2) = self.proto.h2() else {
            return Ok(());
        };
        let mut out = Out {
            rx: &mut self.rx,
            deadline,
            opening,
            ended: false,
        };
        // Every run but the last alone; the last and the frame in one write.
        while h2.transmit().len() < h2.pending() {
            let run = h2.transmit().len();
            out.write_all(h2.transmit(), &[])?;
            h2.advance(run);
        }
        let queued = h2.transmit().len();
        if queued > 0 || !framed.is_empty() {
            out.write_all(h2.transmit(), framed)?;
            h2.advance(queued);
        }
        Ok(())
    }

    /// The sending side, for one write.
    fn out(&mut self, opening: Opening) -> Out<'_> {
        Out {
            deadline: self.deadline(),
            rx: &mut self.rx,
            opening,
            ended: false,
        }
    }

    /// The deadline the socket's timeouts were last set for.
    fn deadline(&self) -> Option<Instant> {
        match self.armed {
            Armed::Until { deadline, .. } => Some(deadline),
            Armed::Nothing | Armed::Unknown => None,
        }
    }

    /// Receives what has arrived, without waiting: whether anything (or the end of the
    /// stream) did. A quiet socket costs one `recv(MSG_PEEK)`; over TLS, bytes that
    /// decrypt to nothing (a session ticket) count as none.
    fn probe(&mut self) -> Result<bool, Error> {
        if is_quiet(self.rx.get_ref().socket()) {
            return Ok(false);
        }
        let socket = self.rx.get_ref().socket();
        socket.set_nonblocking(true)?;
        let at_least = self.rx.data().len() + 1;
        let filled = self.rx.fill(at_least);
        self.rx.get_ref().socket().set_nonblocking(false)?;
        match filled {
            Ok(_) => Ok(true),
            Err(TransportError::Io(e)) if e.kind() == io::ErrorKind::WouldBlock => Ok(false),
            Err(e) => Err(e.into()),
        }
    }

    /// Bounds the next read by what is left until `deadline`.
    fn set_deadline(&mut self, deadline: Option<Instant>) -> Result<(), Error> {
        let socket = self.rx.get_ref().socket();
        let armed = match (deadline, self.armed) {
            (None, Armed::Nothing) => return Ok(()),
            (None, _) => Armed::Nothing,
            (Some(d), armed) => {
                let now = Instant::now();
                if let Armed::Until { deadline, at } = armed {
                    if deadline == d && now.duration_since(at) <= REARM_AFTER {
                        return Ok(());
                    }
                }
                Armed::Until {
                    deadline: d,
                    at: now,
                }
            }
        };
        let left = deadline.map(remaining).transpose()?;
        socket.set_read_timeout(left)?;
        socket.set_write_timeout(left)?;
        self.armed = armed;
        Ok(())
    }
}

/// The most sent per `sendfile`: a few calls per MiB at most, and progress
/// ([`Trace::Sent`]) seen as a large file goes.
const MAX_SENDFILE: usize = 4 << 20;

/// Reads a piece of a streamed body from `source` into `into`, again when
/// interrupted.
fn read_source(source: &mut dyn Read, into: &mut [u8]) -> Result<usize, Error> {
    loop {
        match source.read(into) {
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            read => return read.map_err(Error::BodySource),
        }
    }
}

/// An exchange's first write up to this size goes by one blocking call: the server
/// cannot be answering yet, and whatever of an answer it sends while it reads this much
/// fits the sockets' buffers. Others wait for room with `poll` (see [`Out`]).
const BLOCKING_WRITE_MAX: usize = 64 << 10;

/// Whether a write opens an exchange (nothing of its answer can be on its way yet).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Opening {
    Yes,
    No,
}

/// How a write waits for room in the socket.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Waits {
    /// In the blocking call itself.
    Blocked,
    /// By `poll`, on a nonblocking socket, receiving meanwhile.
    Polled,
}

/// A connection's sending side. While a large write waits for room, what the server
/// sends is received into the ring: a server that answers as it reads (an echo) stops
/// reading once its answer fills the socket, and if this side waited for room without
/// reading, neither would ever move again (curl reads meanwhile too).
struct Out<'c> {
    rx: &'c mut RecvTransport<Stream>,
    deadline: Option<Instant>,
    opening: Opening,
    /// The server's side of the stream has ended: nothing more to receive.
    ended: bool,
}

impl Out<'_> {
    /// Sends head and body with `writev`, as many times as the kernel needs: an opening
    /// write of up to [`BLOCKING_WRITE_MAX`] by blocking calls, others on the socket made
    /// nonblocking, waiting for room with [`wait`](Self::wait).
    fn write_all(&mut self, head: &[u8], body: &[u8]) -> Result<(), Error> {
        let mut slices = [IoSlice::new(head), IoSlice::new(body)];
        let mut left = &mut slices[..];
        IoSlice::advance_slices(&mut left, 0);
        if self.opening == Opening::Yes && head.len() + body.len() <= BLOCKING_WRITE_MAX {
            return self.write_slices(left, Waits::Blocked);
        }
        self.nonblocking(|out| out.write_slices(left, Waits::Polled))
    }

    /// Writes all of `left`, then any TLS records still waiting for room. `WouldBlock` is
    /// a wait for room when `waits` is [`Waits::Polled`]; on a blocking socket it is the
    /// socket's send timeout running out, an error.
    fn write_slices(&mut self, mut left: &mut [IoSlice<'_>], waits: Waits) -> Result<(), Error> {
        let polled = waits == Waits::Polled;
        while !left.is_empty() {
            match self.rx.get_mut().write_vectored(left) {
                Ok(0) => return Err(io::Error::from(io::ErrorKind::WriteZero).into()),
                Ok(n) => IoSlice::advance_slices(&mut left, n),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock && polled => self.wait()?,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e.into()),
            }
        }
        loop {
            match self.rx.get_mut().flush() {
                Err(e) if e.kind() == io::ErrorKind::WouldBlock && polled => self.wait()?,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                done => return Ok(done?),
            }
        }
    }

    /// Sends up to `max` bytes of a streamed body straight from its file by `sendfile`,
    /// when the stream is a plain socket; `None` when it is not, or the file is not one
    /// `sendfile` reads (a pipe), and the body goes through the send ring instead (from
    /// where `sendfile` left the file's offset).
    fn sendfile_piece(
        &mut self,
        source: &mut BodySource<'_>,
        max: usize,
    ) -> Option<Result<usize, Error>> {
        let file = source.file?;
        if !matches!(self.rx.get_ref(), Stream::Plain(_)) {
            return None;
        }
        source.taken = true;
        let sent = self.nonblocking(|out| loop {
            let Stream::Plain(socket) = out.rx.get_ref() else {
                return Ok(None);
            };
            match rustix::fs::sendfile(socket, file, None, max.min(MAX_SENDFILE)) {
                Ok(n) => return Ok(Some(n)),
                Err(rustix::io::Errno::AGAIN) => out.wait()?,
                Err(rustix::io::Errno::INTR) => {}
                Err(rustix::io::Errno::INVAL) => return Ok(None),
                Err(e) => return Err(io::Error::from(e).into()),
            }
        });
        match sent {
            Ok(Some(n)) => Some(Ok(n)),
            Ok(None) => {
                source.file = None;
                None
            }
            Err(e) => Some(Err(e)),
        }
    }

    /// Runs `write` with the socket nonblocking, and blocking again after.
    fn nonblocking<T>(
        &mut self,
        write: impl FnOnce(&mut Self) -> Result<T, Error>,
    ) -> Result<T, Error> {
        self.rx.get_ref().socket().set_nonblocking(true)?;
        let done = write(self);
        let restored = self.rx.get_ref().socket().set_nonblocking(false);
        let done = done?;
        restored?;
        Ok(done)
    }

    /// Waits until the socket takes more bytes, within the deadline, receiving what the
    /// server sends meanwhile (the ring grows to its bound; past it, the exchange fails
    /// rather than wait forever).
    fn wait(&mut self) -> Result<(), Error> {
        use rustix::event::{poll, PollFd, PollFlags, Timespec};

        loop {
            let wanted = if self.ended {
                PollFlags::OUT
            } else {
                PollFlags::OUT | PollFlags::IN
            };
            // A wait too long for a `Timespec` is no wait limit at all.
            let left = self.deadline.map(remaining).transpose()?;
            let timeout = left.and_then(|left| Timespec::try_from(left).ok());
            let mut fds = [PollFd::new(self.rx.get_ref().socket(), wanted)];
            match poll(&mut fds, timeout.as_ref()) {
                Ok(0) => return Err(Error::Timeout(Phase::Request)),
                Ok(_) => {}
                Err(rustix::io::Errno::INTR) => continue,
                Err(e) => return Err(io::Error::from(e).into()),
            }
            let ready = fds[0].revents();
            // Room, or an error (or a hang-up) the write will report.
            if ready.intersects(PollFlags::OUT | PollFlags::ERR | PollFlags::HUP) {
                return Ok(());
            }
            let at_least = self.rx.data().len() + 1;
            match self.rx.fill(at_least) {
                Ok(0) => self.ended = true,
                Ok(_) => {}
                Err(TransportError::Io(e)) if e.kind() == io::ErrorKind::WouldBlock => {}
                Err(e) => return Err(crate::error::while_sending(e)),
            }
        }
    }
}

/// What [`Client::send_traced`] is shown of an exchange, in order.
pub type Trace<'t> = crate::Trace<'t, Response<'t>>;

/// A response whose head has arrived; the body is read from the
/// connection's receive ring as it comes.
///
/// Dropping it returns the connection to the pool if the body was read to
/// its end and the server keeps it open; otherwise the connection closes.
#[derive(Debug)]
pub struct Response<'c> {
    client: &'c Client,
    /// `None` once the body is done and the connection went back.
    conn: Option<Connection>,
    reader: Reader,
    deadline: Option<Instant>,
    /// Where the piece the last `chunk` handed out lies (`None`: decoded output), while
    /// it is there to hand out again.
    handed: Option<Option<std::ops::Range<usize>>>,
    /// The body, when [`json`](Self::json) had to collect it.
    #[cfg(feature = "json")]
    collected: Vec<u8>,
}

impl<'c> Response<'c> {
    /// The status code.
    #[must_use]
    pub fn status(&self) -> u16 {
        self.reader.status()
    }

    /// The protocol the response came over.
    #[must_use]
    pub fn protocol(&self) -> crate::Protocol {
        self.reader.protocol()
    }

    /// The head, in place in the receive ring (over HTTP/2, rewritten as an
    /// HTTP/1.1 head with no reason phrase): there until the body is read
    /// (`None` after the first [`chunk`](Self::chunk)).
    #[must_use]
    pub fn head(&self) -> Option<ringwire_http1::Response<'_>> {
        let conn = self.conn.as_ref()?;
        self.reader.head(&conn.proto, conn.rx.data())
    }

    /// The first field named `name`, while the head is in the ring.
    #[must_use]
    pub fn header(&self, name: &str) -> Option<&[u8]> {
        self.head()?.header(name)
    }

    /// The trailer fields the body ended with: empty until [`chunk`](Self::chunk) has
    /// returned `None` (or the whole body was read otherwise), and for a body without any.
    /// A chunked HTTP/1.1 body or an HTTP/2 stream may have them (gRPC's `grpc-status`).
    #[must_use]
    pub fn trailers(&self) -> &crate::Trailers {
        self.reader.trailers()
    }

    /// The content coding the body is decoded from: `Some` when the
    /// request asked for it
    /// ([`HeaderBuilder::decompress`](crate::HeaderBuilder::decompress)) and the
    /// response's `content-encoding` is one the client undoes; the head
    /// still says what the server sent (`content-encoding`, and a
    /// `content-length` of the encoded bytes).
    #[must_use]
    pub fn decoding(&self) -> Option<crate::Encoding> {
        self.reader.encoding()
    }

    /// The next piece of body, in place in the receive ring: valid until
    /// the next call. `None` at the end of the body.
    ///
    /// A body being decoded ([`decoding`](Self::decoding)) comes out
    /// decoded instead, from a buffer the response keeps for it (at most
    /// 64 KiB a piece).
    ///
    /// # Errors
    ///
    /// Malformed framing, a body over the limit, the deadline, or the
    /// connection failing; for a body being decoded,
    /// [`Error::Decompress`] and [`Error::DecodedBodyTooLarge`]. The
    /// connection is then closed.
    pub fn chunk(&mut self) -> Result<Option<&[u8]>, Error> {
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
                    self.fill(at_least)?;
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

    /// The body from here on read as server-sent events (`text/event-stream`): an event
    /// that arrives whole in one piece is read where it lies in the receive ring, as
    /// [`Events::next`] says.
    pub fn events(&mut self) -> Events<'_, 'c> {
        Events {
            response: self,
            cursor: crate::events::Cursor::new(ringwire_sse::Limits::default()),
        }
    }

    /// One read into the ring, once it has room for `at_least` unread bytes; the end of
    /// the stream, where the framing allows one.
    fn fill(&mut self, at_least: usize) -> Result<(), Error> {
        let Some(conn) = self.conn.as_mut() else {
            return Ok(());
        };
        conn.set_deadline(self.deadline)?;
        conn.flush().map_err(|e| self.reader.failed(e))?;
        let filled = conn
            .rx
            .fill(at_least)
            .map_err(|e| self.reader.failed(e.into()))?;
        if filled == 0 {
            self.reader.eof()?;
        }
        Ok(())
    }

    /// The whole body in one slice: where it lies in the receive ring when it comes framed
    /// by a length the ring can hold, undecoded, over HTTP/1.1; else collected.
    #[cfg(feature = "json")]
    fn whole(&mut self) -> Result<&[u8], Error> {
        let max = self.conn.as_ref().map_or(0, |c| c.rx.ring().max_capacity());
        if let Some(len) = self.reader.whole_len().filter(|&len| len <= max) {
            while let Some(conn) = self.conn.as_mut() {
                conn.rx.consume(self.reader.take_consumed());
                if conn.rx.data().len() >= len {
                    break;
                }
                self.fill(len)?;
            }
            return Ok(self.chunk()?.unwrap_or_default());
        }
        self.collected = self.bytes()?;
        Ok(&self.collected)
    }

    /// The whole body, collected.
    ///
    /// # Errors
    ///
    /// As [`chunk`](Self::chunk).
    pub fn bytes(&mut self) -> Result<Vec<u8>, Error> {
        let mut out = Vec::new();
        while let Some(chunk) = self.chunk()? {
            out.extend_from_slice(chunk);
        }
        Ok(out)
    }

    /// The whole body as text (invalid UTF-8 replaced).
    ///
    /// # Errors
    ///
    /// As [`chunk`](Self::chunk).
    pub fn text(&mut self) -> Result<String, Error> {
        Ok(String::from_utf8_lossy(&self.bytes()?).into_owned())
    }

    /// The whole body as JSON, deserialised into `T`, which may borrow from it (`&str`
    /// fields, `#[serde(borrow)]`): deserialised where it lies in the receive ring when it
    /// came with a length the ring can hold, over HTTP/1.1 and not decoded (no copy);
    /// otherwise collected first. The connection goes back to the pool when the response
    /// is dropped.
    ///
    /// # Errors
    ///
    /// As [`chunk`](Self::chunk); [`Error::Json`] for a body that is not JSON, or not
    /// the JSON `T` reads.
    #[cfg(feature = "json")]
    pub fn json<'r, T: serde::Deserialize<'r>>(&'r mut self) -> Result<T, Error> {
        serde_json::from_slice(self.whole()?).map_err(Error::Json)
    }

    /// Reads and drops a short body so the connection can be reused; a
    /// long one closes the connection instead.
    fn discard(mut self) {
        let mut left = DISCARD_LIMIT;
        while left > 0 {
            match self.chunk() {
                Ok(Some(chunk)) => left = left.saturating_sub(chunk.len()),
                Ok(None) | Err(_) => return,
            }
        }
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

impl Drop for Response<'_> {
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

/// The events of a response ([`Response::events`]).
#[derive(Debug)]
pub struct Events<'r, 'c> {
    response: &'r mut Response<'c>,
    cursor: crate::events::Cursor,
}

impl Events<'_, '_> {
    /// The next event, valid until the next call; `None` at the end of the body (where an
    /// event without its blank line is dropped, as browsers drop it). An event whole in one
    /// piece of the body borrows it; one cut between pieces is joined from a copy of its
    /// start.
    ///
    /// # Errors
    ///
    /// As [`Response::chunk`], and [`Error::EventStream`] for an event over the limit.
    #[allow(clippy::should_implement_trait)] // Not an `Iterator`: each event borrows the reader.
    pub fn next(&mut self) -> Result<Option<ringwire_sse::Message<'_>>, Error> {
        use polonius_the_crab::prelude::*;
        let mut this = self;
        loop {
            // As the tokio driver's: a message borrows the piece, the loop must not.
            polonius!(
                |this| -> Result<Option<ringwire_sse::Message<'polonius>>, Error> {
                    match this.cursor.step(this.response.handed()) {
                        Ok(None) => {}
                        found => polonius_return!(found),
                    }
                }
            );
            this.cursor.next_piece();
            if this.response.chunk()?.is_none() {
                return Ok(None);
            }
        }
    }

    crate::events::stream_state!();
}

/// An event stream that reconnects, as browsers' `EventSource` does
/// ([`Client::event_source`]); as [`tokio::EventSource`](crate::tokio::EventSource), its
/// waits sleeping the thread.
#[derive(Debug)]
pub struct EventSource<'c> {
    client: &'c Client,
    plan: crate::events::Plan,
    buffer: RequestBuffer,
    response: Option<Response<'c>>,
    cursor: crate::events::Cursor,
}

impl Client {
    /// The events of `url` ([`EventSource`]); nothing is sent before the first
    /// [`next`](EventSource::next).
    ///
    /// # Errors
    ///
    /// [`Error::Url`]; a request buffer that cannot be mapped ([`Error::Ring`]).
    pub fn event_source(&self, url: &str) -> Result<EventSource<'_>, Error> {
        Ok(EventSource {
            client: self,
            plan: crate::events::Plan::new(crate::Url::parse(url)?),
            buffer: RequestBuffer::new()?,
            response: None,
            cursor: crate::events::Cursor::new(ringwire_sse::Limits::default()),
        })
    }
}

impl EventSource<'_> {
    /// The next event, valid until the next call, reconnecting as often as it takes;
    /// `None` once the server answered `204` (and ever after).
    ///
    /// # Errors
    ///
    /// As [`tokio::EventSource::next`](crate::tokio::EventSource::next).
    #[allow(clippy::should_implement_trait)] // Not an `Iterator`: each event borrows the source.
    pub fn next(&mut self) -> Result<Option<ringwire_sse::Message<'_>>, Error> {
        crate::events::source_next!(self, std::thread::sleep)
    }

    crate::events::source_api!();
}
