//! Server settings.

use std::net::{Ipv4Addr, SocketAddr};
use std::time::Duration;

use ringwire_http1::Limits;
use ringwire_io::TransportConfig;

use crate::{Threading, Timeouts};

/// How a [`Server`](crate::Server) listens, and the bounds it enforces.
#[derive(Debug, Clone, Copy)]
pub struct ServerConfig {
    /// Where to listen. Port 0 picks a free port
    /// ([`Server::local_addr`](crate::Server::local_addr) tells which).
    pub addr: SocketAddr,
    /// Head limits for the request parser.
    pub limits: Limits,
    /// Ring sizes per connection. The receive ring must be able to grow to
    /// a head plus [`max_buffered_body`](Self::max_buffered_body) (and to
    /// the largest WebSocket frame accepted).
    ///
    /// A connection holds its two rings only while it has unread bytes or
    /// unsent output: between requests (and before the first one) they go
    /// back to a server-wide pool (which releases their pages, but for the
    /// few it keeps warm: `RingPool::WARM`), and the connection waits for
    /// the socket to become readable holding none.
    pub transport: TransportConfig,
    /// Idle rings each pool (receive and send) keeps for reuse, so a
    /// connection that wakes takes one instead of creating it. A pooled ring
    /// costs a descriptor and address space, no memory (but for the few
    /// returned last, which keep their pages for the next connections);
    /// rings beyond this are closed. Default [`DEFAULT_POOLED_RINGS`](Self::DEFAULT_POOLED_RINGS).
    pub pooled_rings: usize,
    /// The largest request body buffered for a handler; larger ones are
    /// answered with `413` and a close.
    pub max_buffered_body: usize,
    /// How long in-flight connections may take to finish after shutdown.
    pub shutdown_grace: Duration,
    /// Slowloris protection: how long a request head may take, how long a
    /// keep-alive connection may idle, the slowest acceptable request body,
    /// and how often one sweeper per server checks them all. See
    /// [`Timeouts`] for each knob and its default.
    pub timeouts: Timeouts,
    /// How [`Server::run`](crate::Server::run) uses threads (and how many
    /// listening sockets [`Server::bind`](crate::Server::bind) opens).
    /// Default: a single-threaded runtime per core, `SO_REUSEPORT`.
    pub threading: Threading,
    /// HTTP/2, with these settings, for TLS connections that negotiate `h2` (offer it in
    /// the acceptor's ALPN list) and cleartext ones that start with the HTTP/2 preface
    /// (prior knowledge). `None`: HTTP/1.1 only. Default: on, with
    /// `ringwire_http2::Config`'s defaults and extended `CONNECT` allowed, so browsers
    /// open WebSockets on the HTTP/2 connection they have (RFC 8441) rather than a
    /// connection of their own.
    pub http2: Option<ringwire_http2::Config>,
    /// Every connection starts with a PROXY protocol header (version 1 or 2, as HAProxy,
    /// AWS NLB or Envoy send it, before TLS on an HTTPS port), whose client address
    /// [`Request::peer`](crate::Request::peer) and the access log report. A connection
    /// without one, or with a malformed one, is closed unanswered, within the head's time
    /// limit. Only for a listener that nothing but the proxy reaches: a header names any
    /// address its sender likes. Default: off.
    pub proxy_protocol: bool,
}

impl ServerConfig {
    /// Default [`max_buffered_body`](Self::max_buffered_body): 8 MiB.
    pub const DEFAULT_MAX_BUFFERED_BODY: usize = 8 << 20;
    /// The largest WebSocket frame the default receive ring holds:
    /// `ringwire_ws::Limits::default().max_frame_len`.
    const WEBSOCKET_FRAME: usize = 16 << 20;
    /// Default [`pooled_rings`](Self::pooled_rings): 256 per direction.
    pub const DEFAULT_POOLED_RINGS: usize = 256;

    /// The defaults, listening on `addr`.
    pub fn new(addr: SocketAddr) -> Self {
        let mut transport = TransportConfig::new(16 << 10, 1 << 20);
        // Head and body must fit whole in the receive ring, and so does a
        // WebSocket frame of the default limits (16 MiB, the largest Autobahn
        // sends), so that upgraded connections keep their pooled rings (larger
        // limits raise the bound, and the ring leaves the pool). Growth
        // reserves address space only: the memory is what the bytes in flight
        // touch.
        transport.rx.max_capacity = Self::DEFAULT_MAX_BUFFERED_BODY.max(Self::WEBSOCKET_FRAME)
            + (Limits::default().max_head_len << 1);
        ServerConfig {
            addr,
            limits: Limits::default(),
            transport,
            pooled_rings: Self::DEFAULT_POOLED_RINGS,
            max_buffered_body: Self::DEFAULT_MAX_BUFFERED_BODY,
            shutdown_grace: Duration::from_secs(5),
            proxy_protocol: false,
            timeouts: Timeouts::default(),
            threading: Threading::default(),
            http2: Some(ringwire_http2::Config {
                enable_connect_protocol: true,
                ..ringwire_http2::Config::default()
            }),
        }
    }
}

impl Default for ServerConfig {
    /// 127.0.0.1:8080, 16 KiB rings growing to 1 MiB (send) and head + 16 MiB
    /// (receive), pooled, default [`Limits`], a 5 s shutdown grace, default
    /// [`Timeouts`] (head 10 s, idle 60 s, body at least 1 KiB/s per 5 s,
    /// swept every second).
    fn default() -> Self {
        ServerConfig::new(SocketAddr::from((Ipv4Addr::LOCALHOST, 8080)))
    }
}
