//! WebSocket clients (`ws://`, `wss://`, feature `ws`) on this client's connections: TCP, TLS
//! with the client's settings (roots, verification, the TLS library), then the upgrade, all
//! within its connect timeout; from the tokio client ([`Client::websocket`]) or the blocking one
//! ([`blocking::Client::websocket`]). Or on a stream of an HTTP/2 connection, beside its
//! other streams, where the server takes RFC 8441's extended `CONNECT`
//! ([`Client::websocket_http2`], [`Http2Connection::websocket`]): one connection for
//! everything, at the price of copies (a connection of its own reads messages where they
//! land).
//!
//! ```no_run
//! # async fn run() -> Result<(), ringwire_client::Error> {
//! use ringwire_client::tokio::Client;
//! use ringwire_client::ws::{Message, WsOptions, WsUrl};
//!
//! let client = Client::default();
//! let url = WsUrl::parse("wss://echo.example/chat")?;
//! let (mut socket, _) = client.websocket(&url, &WsOptions::default()).await?;
//! socket.send(&Message::Text("hello")).await.map_err(ringwire_client::Error::WebSocket)?;
//! if let Some(Ok((reply, _))) = socket.recv().await {
//!     println!("{reply:?}");
//! }
//! # Ok(())
//! # }
//! ```

use ringwire_ws::handshake::{ClientHandshake, Offer};
use ringwire_ws::Role;
use std::io;
use std::sync::Arc;
use std::time::Duration;

use ringwire_io::tokio::{AsyncRecvTransport, AsyncSendTransport, AsyncStream};
use ringwire_io::{NetStream, RecvTransport, SendTransport, TransportConfig};
use ringwire_tls::TlsHalf;

pub use ringwire_ws::handshake::{HandshakeError, Negotiated};
pub use ringwire_ws::socket::{SocketError, WebSocket};
pub use ringwire_ws::{CloseCode, DeflateConfig, Limits, Message};

use crate::cookie;
pub use crate::stream::Stream;
use crate::tokio::{Client, Http2Connection, Http2Tunnel, Socket};
use crate::url::{Scheme, Url, UrlError};
use crate::{blocking, CookieJar, Error, Phase};

/// A WebSocket on a connection of its own, as [`Client::websocket`] opens it.
pub type ClientWebSocket = WebSocket<Arc<Socket>>;

/// A WebSocket on a stream of an HTTP/2 connection, as [`Http2Connection::websocket`]
/// opens it.
pub type Http2WebSocket = WebSocket<Http2Tunnel>;

/// A `ws://` or `wss://` URL: the host, port and target of the `http://` or `https://` URL of
/// the same place.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WsUrl(Url);

impl WsUrl {
    /// Parses a `ws://` or `wss://` URL (any fragment is dropped: RFC 6455 allows none).
    ///
    /// # Errors
    ///
    /// Another scheme, or what [`Url::parse`] refuses.
    pub fn parse(text: &str) -> Result<WsUrl, UrlError> {
        let (scheme, rest) = text.split_once("://").ok_or(UrlError::MissingScheme)?;
        let http = if scheme.eq_ignore_ascii_case("ws") {
            "http"
        } else if scheme.eq_ignore_ascii_case("wss") {
            "https"
        } else {
            return Err(UrlError::UnsupportedScheme(scheme.to_owned()));
        };
        Url::parse(&format!("{http}://{rest}")).map(WsUrl)
    }

    /// Whether the connection is TLS (`wss://`).
    #[must_use]
    pub fn is_tls(&self) -> bool {
        self.0.scheme() == Scheme::Https
    }

    /// The same place as an `http://` or `https://` URL: host, port, target.
    #[must_use]
    pub fn http(&self) -> &Url {
        &self.0
    }
}

/// What a WebSocket connection offers and holds.
#[derive(Debug, Clone)]
pub struct WsOptions<'a> {
    /// Subprotocols to offer, most preferred first.
    pub protocols: &'a [&'a str],
    /// Fields to send with the upgrade request: `authorization`, `cookie`, `origin`, ...
    /// (not those the handshake writes itself: `host`, `upgrade`, `connection`,
    /// `sec-websocket-*`). A client with a cookie jar adds the jar's cookies for the URL.
    pub headers: &'a [(&'a str, &'a str)],
    /// permessage-deflate to offer (`None`: none).
    pub deflate: Option<DeflateConfig>,
    /// Frame and message size limits (`1009` past them).
    pub limits: Limits,
    /// The connection's rings. The receive ring's bound is raised, if need be, to the largest
    /// frame the limits allow.
    pub transport: TransportConfig,
    /// Ping the server once it has been quiet this long, and fail when not even the pong
    /// comes as long again ([`WebSocket::keepalive`](ringwire_ws::socket::WebSocket::keepalive);
    /// a blocking socket's reads then time out after this long, which is how it notices the
    /// quiet). `None`: no pings.
    pub keepalive: Option<Duration>,
}

impl Default for WsOptions<'_> {
    /// No subprotocol, permessage-deflate offered, default limits, 64 KiB rings growing to
    /// 64 MiB.
    fn default() -> Self {
        WsOptions {
            protocols: &[],
            headers: &[],
            deflate: Some(DeflateConfig::default()),
            limits: Limits::default(),
            transport: TransportConfig::new(64 << 10, 64 << 20),
            keepalive: None,
        }
    }
}

impl<'a> WsOptions<'a> {
    /// These options with `headers` instead.
    fn with_headers<'h>(&self, headers: &'h [(&'h str, &'h str)]) -> WsOptions<'h>
    where
        'a: 'h,
    {
        WsOptions {
            headers,
            ..self.clone()
        }
    }

    /// Refuses a field the handshake writes itself, before anything is sent.
    fn check(&self) -> Result<(), Error> {
        for (name, _) in self.headers {
            let managed = ringwire_ws::handshake::MANAGED_HEADERS.iter();
            if let Some(managed) = managed.into_iter().find(|m| name.eq_ignore_ascii_case(m)) {
                return Err(Error::ManagedHeader(managed));
            }
        }
        Ok(())
    }
}

/// The WebSocket upgrade for `url` over `stream`, already connected (and TLS for `wss://`):
/// the socket and what the server agreed to. For callers that open their streams
/// themselves; [`Client::websocket`] does both.
///
/// # Errors
///
/// [`Error::WebSocket`]: the server refused the upgrade or answered it wrongly, or the
/// connection failed; [`Error::ManagedHeader`] for a field the handshake writes itself.
pub async fn handshake<S: AsyncStream + Clone>(
    stream: S,
    url: &WsUrl,
    options: &WsOptions<'_>,
) -> Result<(WebSocket<S>, Negotiated), Error> {
    options.check()?;
    let rx = AsyncRecvTransport::new(options.transport, stream.clone())?;
    let tx = AsyncSendTransport::new(options.transport, stream)?;
    WebSocket::connect(
        rx,
        tx,
        url.0.authority(),
        url.0.target(),
        &Offer {
            protocols: options.protocols,
            headers: options.headers,
            deflate: options.deflate,
        },
        options.limits,
    )
    .await
    .map(|(mut socket, negotiated)| {
        socket.keepalive(options.keepalive);
        (socket, negotiated)
    })
    .map_err(Error::WebSocket)
}

impl Client {
    /// Opens a WebSocket: TCP (or the client's Unix socket), TLS with this client's settings for `wss://`, then the
    /// upgrade, all within [`ClientConfig::connect_timeout`](crate::ClientConfig).
    ///
    /// # Errors
    ///
    /// As a request's connection ([`Error::Connect`], [`Error::Tls`],
    /// [`Error::Timeout`]), or [`Error::WebSocket`] for the upgrade.
    pub async fn websocket(
        &self,
        url: &WsUrl,
        options: &WsOptions<'_>,
    ) -> Result<(ClientWebSocket, Negotiated), Error> {
        let cookie = cookie::merged(self.cookies(), &url.0, options.headers);
        let fields = with_cookie(options.headers, cookie.as_deref());
        let options = &options.with_headers(&fields);
        let open = async {
            // No `h2` offered: a WebSocket needs HTTP/1.1's upgrade.
            let stream = Arc::new(self.dial(url.0.origin(), None, false, &mut |_| {}).await?);
            handshake(stream, url, options).await
        };
        let opened = match self.config.connect_timeout {
            Some(limit) => ::tokio::time::timeout(limit, open)
                .await
                .map_err(|_| Error::Timeout(Phase::Connect))?,
            None => open.await,
        }?;
        keep_cookies(self.cookies(), url, &opened.1);
        Ok(opened)
    }

    /// Opens a WebSocket on a stream of the origin's shared HTTP/2 connection (RFC 8441),
    /// as a browser does once a page came over HTTP/2: the connection this client's
    /// requests to the origin share ([`ClientConfig::http2_multiplex`](crate::ClientConfig)),
    /// or a new one (then shared). Needs [`ClientConfig::http2`](crate::ClientConfig): `h2`
    /// offered by ALPN for `wss://`, prior knowledge for `ws://`. The jar's cookies go and
    /// come as with [`websocket`](Self::websocket); see
    /// [`Http2Connection::websocket`] for the rest, and for what a stream costs.
    ///
    /// # Errors
    ///
    /// As [`websocket`](Self::websocket); [`Error::NotHttp2`] when the server chose
    /// HTTP/1.1, [`Error::NoExtendedConnect`] when it takes no WebSocket over HTTP/2.
    pub async fn websocket_http2(
        &self,
        url: &WsUrl,
        options: &WsOptions<'_>,
    ) -> Result<(Http2WebSocket, Negotiated), Error> {
        let cookie = cookie::merged(self.cookies(), &url.0, options.headers);
        let fields = with_cookie(options.headers, cookie.as_deref());
        let options = &options.with_headers(&fields);
        let conn = self.shared_connection(url.0.origin()).await?;
        let opened = conn.websocket(url, options).await?;
        keep_cookies(self.cookies(), url, &opened.1);
        Ok(opened)
    }
}

impl Http2Connection {
    /// Opens a WebSocket on a stream of this connection (RFC 8441: an extended `CONNECT`
    /// for `websocket`), beside its other streams, within the client's request timeout:
    /// the server must have said it takes them. `url`'s origin should be the
    /// connection's. Messages are copied on their way, twice in and once out, where a
    /// connection of its own reads them where they land (see [`Http2Tunnel`]).
    ///
    /// # Errors
    ///
    /// [`Error::NoExtendedConnect`] when the server takes none; [`Error::WebSocket`]
    /// when it refuses this one or answers it wrongly (a [`HandshakeError`] inside, as
    /// for an upgrade: `NotSwitching` holds a status other than `2xx`); the
    /// connection's failure; [`Error::ManagedHeader`] for a field the handshake writes
    /// itself; [`Error::Timeout`].
    pub async fn websocket(
        &self,
        url: &WsUrl,
        options: &WsOptions<'_>,
    ) -> Result<(Http2WebSocket, Negotiated), Error> {
        options.check()?;
        let handshake = ClientHandshake::new(options.protocols, options.deflate)
            .map_err(|e| Error::WebSocket(io::Error::other(e).into()))?
            .with_headers(options.headers);
        let fields = handshake
            .extended_connect_fields()
            .map_err(|_| Error::ManagedHeader("sec-websocket-*"))?;
        let deadline = self.request_deadline();
        let accept = |head: ringwire_http1::Response<'_>| {
            let verified = handshake.verify_extended_connect(&head);
            verified.map_err(|e| Error::WebSocket(SocketError::Handshake(e)))
        };
        let opened = self.tunnel(&url.0, b"websocket", &fields, deadline, accept);
        let (tunnel, negotiated) = opened.await?;
        let level = options.deflate.map_or(1, |d| d.level);
        let deflate = negotiated.deflate.as_ref().map(|p| (p, level));
        let conn = ringwire_ws::Connection::new(Role::Client, options.limits, deflate)
            .map_err(|e| Error::WebSocket(io::Error::other(e).into()))?;
        let rx = AsyncRecvTransport::new(options.transport, tunnel.clone())?;
        let tx = AsyncSendTransport::new(options.transport, tunnel)?;
        let mut socket = WebSocket::from_parts(rx, tx, conn);
        socket.keepalive(options.keepalive);
        Ok((socket, negotiated))
    }
}

/// `fields` with their `cookie` fields replaced by `cookie` (their cookies and a jar's), if
/// there is one.
fn with_cookie<'f>(
    fields: &[(&'f str, &'f str)],
    cookie: Option<&'f str>,
) -> Vec<(&'f str, &'f str)> {
    let Some(cookie) = cookie else {
        return fields.to_vec();
    };
    let others = fields
        .iter()
        .filter(|(n, _)| !n.eq_ignore_ascii_case("cookie"));
    others.copied().chain([("cookie", cookie)]).collect()
}

/// A blocking WebSocket on a connection of its own, as
/// [`blocking::Client::websocket`] opens it. Not `Send` over TLS: both halves share one session.
pub type BlockingWebSocket = ringwire_ws::blocking::WebSocket<BlockingHalf, BlockingHalf>;

/// One direction of a blocking WebSocket's stream: a socket's handle, or a handle on the
/// TLS session over it ([`BlockingTlsStream::split`](ringwire_tls::BlockingTlsStream::split)).
pub type BlockingHalf = Stream<TlsHalf<NetStream>>;

impl blocking::Client {
    /// Opens a WebSocket: TCP (or the client's Unix socket), TLS with this client's settings for `wss://`, then the
    /// upgrade, all within [`ClientConfig::connect_timeout`](crate::ClientConfig); the socket
    /// then waits as long as its peer takes.
    ///
    /// # Errors
    ///
    /// As a request's connection ([`Error::Connect`], [`Error::Tls`],
    /// [`Error::Timeout`]), or [`Error::WebSocket`] for the upgrade.
    pub fn websocket(
        &self,
        url: &WsUrl,
        options: &WsOptions<'_>,
    ) -> Result<(BlockingWebSocket, Negotiated), Error> {
        options.check()?;
        let limit = self.config.connect_timeout;
        let stream = self.dial(url.0.origin(), limit, false, &mut |_| {})?;
        // The upgrade within the connect timeout too; the socket's options are shared by
        // every handle on it.
        let socket = stream.socket().try_clone()?;
        socket.set_read_timeout(limit)?;
        socket.set_write_timeout(limit)?;
        let (read, write) = match stream {
            Stream::Plain(socket) => (Stream::Plain(socket.try_clone()?), Stream::Plain(socket)),
            Stream::Tls(tls) => {
                let (read, write) = tls.split();
                (Stream::Tls(read), Stream::Tls(write))
            }
        };
        let cookie = cookie::merged(self.cookies(), &url.0, options.headers);
        let fields = with_cookie(options.headers, cookie.as_deref());
        let opened = ringwire_ws::blocking::WebSocket::connect(
            RecvTransport::new(options.transport, read)?,
            SendTransport::new(options.transport, write)?,
            url.0.authority(),
            url.0.target(),
            &Offer {
                protocols: options.protocols,
                headers: &fields,
                deflate: options.deflate,
            },
            options.limits,
        );
        let (mut opened, negotiated) = match opened {
            Err(SocketError::Transport(e)) if e.is_timeout() => {
                return Err(Error::Timeout(Phase::Connect))
            }
            opened => opened.map_err(Error::WebSocket)?,
        };
        // The keepalive's quiet is a read that waited its interval.
        socket.set_read_timeout(options.keepalive)?;
        socket.set_write_timeout(None)?;
        opened.keepalive(options.keepalive);
        keep_cookies(self.cookies(), url, &negotiated);
        Ok((opened, negotiated))
    }
}

/// Keeps in `jar` the cookies the upgrade's answer set, as any answer's are kept.
fn keep_cookies(jar: Option<&CookieJar>, url: &WsUrl, negotiated: &Negotiated) {
    if let Some(jar) = jar {
        for cookie in &negotiated.set_cookies {
            jar.store(&url.0, cookie.as_bytes());
        }
    }
}
