//! WebSocket on the server: the handshake's answer, then a socket over the
//! connection's own rings.
//!
//! ```no_run
//! use ringwire_server::ws::{self, Message, WsConfig};
//! use ringwire_server::{Request, Response};
//!
//! async fn echo(request: &Request<'_>) -> Response {
//!     ws::accept(request, &WsConfig::default(), |mut socket| {
//!         Box::pin(async move {
//!             while let Some(Ok((message, mut reply))) = socket.recv().await {
//!                 if matches!(message, Message::Text(_) | Message::Binary(_))
//!                     && reply.send(&message).await.is_err()
//!                 {
//!                     break;
//!                 }
//!             }
//!         })
//!     })
//! }
//! ```
//!
//! A service that also pushes (a chat room, a live feed) waits on its client
//! and on its own channel at once; `recv` is cancel-safe, so it can be one
//! branch of `tokio::select!`:
//!
//! ```no_run
//! use ringwire_server::ws::{Message, WebSocket};
//! use tokio::sync::broadcast;
//!
//! async fn member(mut socket: WebSocket<'_>, room: broadcast::Sender<String>) {
//!     let mut heard = room.subscribe();
//!     loop {
//!         tokio::select! {
//!             received = socket.recv() => match received {
//!                 Some(Ok((Message::Text(text), _))) => drop(room.send(text.to_owned())),
//!                 Some(Ok(_)) => {}
//!                 Some(Err(_)) | None => break,
//!             },
//!             Ok(text) = heard.recv() => {
//!                 if socket.send(&Message::Text(&text)).await.is_err() {
//!                     break;
//!                 }
//!             }
//!         }
//!     }
//! }
//! ```
//!
//! The socket is `ringwire-ws`'s tokio [`WebSocket`](ringwire_ws::socket::WebSocket)
//! over the connection: messages are read zero-copy, pings are answered and
//! the closing handshake completed by the socket itself. When the server
//! shuts down, the socket sends `1001 Going Away` from within `recv`, which
//! returns `None` once the client answers.

use ringwire_ws::handshake::{self, HandshakeError};
use ringwire_ws::{Connection, Role};

pub use ringwire_ws::socket::SocketError as WsError;
pub use ringwire_ws::{CloseCode, CloseFrame, DeflateConfig, Limits, Message};

use crate::{Request, Response, UpgradeFuture, Upgraded, UpgradedStream};

/// How [`accept`] sets WebSockets up.
#[derive(Debug, Clone)]
pub struct WsConfig {
    /// Subprotocols in the server's order of preference; the first the
    /// client offers is chosen.
    pub protocols: Vec<&'static str>,
    /// permessage-deflate, when the client offers it (`None`: never).
    pub deflate: Option<DeflateConfig>,
    /// Frame and message size limits (`1009` past them). An upgraded
    /// connection's receive ring may grow to hold the largest frame they
    /// allow, past [`ServerConfig::transport`](crate::ServerConfig::transport)'s bound.
    pub limits: Limits,
    /// Ping a client once it has been quiet this long, and end the socket
    /// when not even the pong comes as long again
    /// ([`WebSocket::keepalive`](ringwire_ws::socket::WebSocket::keepalive)):
    /// for clients behind proxies that close idle connections. `None`, the
    /// default: no pings (a vanished client is still ended by
    /// [`Timeouts::upgraded_keepalive`](crate::Timeouts::upgraded_keepalive)).
    pub keepalive: Option<std::time::Duration>,
}

impl Default for WsConfig {
    /// No subprotocol, permessage-deflate accepted, default limits.
    fn default() -> Self {
        WsConfig {
            protocols: Vec::new(),
            deflate: Some(DeflateConfig::default()),
            limits: Limits::default(),
            keepalive: None,
        }
    }
}

/// Answers a WebSocket upgrade request: `101`, after which `on_open` runs
/// with the [`WebSocket`] until its future ends; or, for a request that is
/// not a valid upgrade, the status the handshake names (`400`, `426` with
/// the version this server speaks, ...). Over HTTP/2 the request is an
/// extended `CONNECT` (RFC 8441; browsers send one on a connection whose
/// server allows it, as this one does), answered `200`, and the WebSocket
/// runs on its stream.
pub fn accept<F>(request: &Request<'_>, config: &WsConfig, on_open: F) -> Response
where
    F: for<'s> FnOnce(WebSocket<'s>) -> UpgradeFuture<'s> + Send + 'static,
{
    let over_http2 = request.is_extended_connect();
    let (protocols, deflate) = (&config.protocols, config.deflate.as_ref());
    let accepted = if over_http2 {
        handshake::accept_extended_connect(request.head(), protocols, deflate)
    } else {
        handshake::accept(request.head(), protocols, deflate)
    };
    let accepted = match accepted {
        Ok(accepted) => accepted,
        Err(e) => return refused(&e),
    };
    let deflate = accepted
        .deflate()
        .map(|params| (params, config.deflate.map_or(1, |d| d.level)));
    let conn = match Connection::new(Role::Server, config.limits, deflate) {
        Ok(conn) => conn,
        Err(e) => {
            log::warn!("websocket: {e}");
            return Response::new(500);
        }
    };
    let protocol = accepted.protocol().map(str::to_owned);
    let keepalive = config.keepalive;
    let mut response = Response::upgrade("websocket", move |up: Upgraded<'_>| {
        let mut socket = WebSocket::from_parts(up.rx, up.tx, conn);
        socket.keepalive(keepalive);
        let shutdown = up.shutdown;
        socket.close_on(
            async move { shutdown.started().await },
            CloseCode::GOING_AWAY,
            "server shutting down",
        );
        on_open(socket)
    });
    // Over HTTP/2 success is a `200`, and there is no key to answer.
    response = if over_http2 {
        response.status_code(200)
    } else {
        response.header("sec-websocket-accept", accept_value(request))
    };
    if let Some(protocol) = protocol {
        response = response.header("sec-websocket-protocol", protocol);
    }
    if let Some(params) = accepted.deflate() {
        response = response.header("sec-websocket-extensions", params.response());
    }
    response
}

/// `Sec-WebSocket-Accept` for the request's key (already checked by the
/// handshake).
fn accept_value(request: &Request<'_>) -> String {
    let key = request.header("sec-websocket-key").unwrap_or_default();
    handshake::accept_key(key.trim_ascii())
}

/// A WebSocket echo endpoint: every text and binary message comes back as
/// it was sent (the demo site's `/ws/echo`; also what Autobahn's fuzzing
/// client expects of a server).
pub async fn echo(request: &Request<'_>) -> Response {
    accept(request, &WsConfig::default(), |mut socket| {
        Box::pin(async move {
            while let Some(received) = socket.recv().await {
                let sent = match received {
                    // Queued: the echoes of one read go out in one write,
                    // when the socket next waits for the peer.
                    Ok((message @ (Message::Text(_) | Message::Binary(_)), mut reply)) => {
                        reply.queue(&message).await
                    }
                    Ok(_) => Ok(()),
                    Err(e) => Err(e),
                };
                if let Err(e) = sent {
                    log::debug!("websocket echo: {e}");
                    break;
                }
            }
        })
    })
}

fn refused(e: &HandshakeError) -> Response {
    let response = Response::new(e.status()).body(format!("{e}\n"));
    if e.status() == 426 {
        response
            .header("upgrade", "websocket")
            .header("sec-websocket-version", "13")
    } else {
        response
    }
}

/// A WebSocket on an upgraded server connection (or HTTP/2 stream).
pub type WebSocket<'s> = ringwire_ws::socket::WebSocket<UpgradedStream<'s>>;

/// Sends on a [`WebSocket`] while a message read from it is borrowed.
pub type Reply<'w, 's> = ringwire_ws::socket::Reply<'w, UpgradedStream<'s>>;
