//! Timeouts, limits, pooling and redirects, in one place for both APIs.

use std::time::Duration;

use ringwire_http1::Limits;
use ringwire_ring::RingConfig;

use crate::Http2;

/// How a [`blocking::Client`](crate::blocking::Client) or
/// [`tokio::Client`](crate::tokio::Client) behaves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClientConfig {
    /// How long opening a connection may take; `None` waits as long as the
    /// OS does.
    pub connect_timeout: Option<Duration>,
    /// How long one exchange may take, from sending the request to the end
    /// of the response body; `None` for no bound.
    pub request_timeout: Option<Duration>,
    /// Redirects followed per request: `None`, the default, follows none
    /// (a `3xx` is returned like any other response); `Some(n)` follows
    /// up to `n`, and a redirect past them is
    /// [`Error::TooManyRedirects`](crate::Error::TooManyRedirects).
    pub max_redirects: Option<u32>,
    /// How long a body sent with
    /// [`expect_continue`](crate::HeaderBuilder::expect_continue) waits for
    /// the server's `100 Continue` (or its answer) before it goes anyway:
    /// a server that does not know the expectation never sends one.
    pub expect_continue_timeout: Duration,
    /// Idle keep-alive connections kept per origin; more are closed.
    pub max_idle_per_host: usize,
    /// How long an idle connection stays in the pool. The pool is swept as
    /// it is used (for any origin, at most once a second): connections idle
    /// past this are closed, and those idle a second give back their rings'
    /// pages and TLS buffers (exchanges back to back keep them).
    pub idle_timeout: Duration,
    /// Bounds on response heads and bodies.
    pub limits: Limits,
    /// The longest body decoded for a request that asked for decompression
    /// ([`HeaderBuilder::decompress`](crate::HeaderBuilder::decompress));
    /// past it, [`Error::DecodedBodyTooLarge`](crate::Error::DecodedBodyTooLarge).
    /// A few KiB of gzip or brotli can decode to gigabytes, so the bound on
    /// the bytes received ([`Limits::max_body_len`]) is no bound on these.
    pub max_decoded_body_len: u64,
    /// Whether to speak HTTP/2 ([`Http2::Off`] by default).
    pub http2: Http2,
    /// How long a shared HTTP/2 connection (the tokio client's own, see
    /// [`http2_multiplex`](Self::http2_multiplex), or one from
    /// [`Client::http2_connection`](crate::tokio::Client::http2_connection)) may go
    /// without hearing from the server before it sends a `PING`; if nothing comes back
    /// within as long again, the connection is taken for dead and its exchanges fail,
    /// instead of waiting for a server that vanished (`None`, the default: never).
    pub http2_keepalive: Option<Duration>,
    /// Whether the [`tokio::Client`](crate::tokio::Client)'s requests to an origin that
    /// speaks HTTP/2 share one connection, many at once (`true`, the default, as browsers
    /// and reqwest do): a whole-body request goes on a stream of the origin's shared
    /// connection ([`Http2Connection`](crate::tokio::Http2Connection)), whose bodies
    /// are copied out of the ring once as their frames come. Streamed bodies and
    /// `100-continue` take a connection of their own, as do all requests when `false`:
    /// one exchange at a time per connection, the body read in place in the ring, more
    /// connections when tasks send at once. The blocking client never shares.
    pub http2_multiplex: bool,
    /// Each connection's receive ring. Bodies stream through it, so it
    /// must only hold the largest head (or trailer section), and a JSON
    /// answer read whole in place (`Response::json`; a larger one is
    /// collected instead). A ring that grew keeps its pages while its
    /// connection is used back to back (giving them back at once made every
    /// large answer fault them in again), and gives them back once the
    /// connection idles a second in the pool.
    pub rx: RingConfig,
}

impl ClientConfig {
    /// Ten seconds to connect.
    pub const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
    /// One second for `100 Continue`, as curl waits.
    pub const DEFAULT_EXPECT_CONTINUE_TIMEOUT: Duration = Duration::from_secs(1);
    /// Eight idle connections per origin, as browsers open at most six.
    pub const DEFAULT_MAX_IDLE_PER_HOST: usize = 8;
    /// 90 seconds idle, as hyper and reqwest keep them.
    pub const DEFAULT_IDLE_TIMEOUT: Duration = Duration::from_secs(90);
    /// 1 GiB decoded, as much as [`Limits::DEFAULT_MAX_BODY_LEN`] received:
    /// a backstop; applications set their own.
    pub const DEFAULT_MAX_DECODED_BODY_LEN: u64 = Limits::DEFAULT_MAX_BODY_LEN;
    /// A 64 KiB receive ring, growing to 1 MiB for unusually large heads.
    pub const DEFAULT_RX: RingConfig = RingConfig {
        capacity: 64 << 10,
        max_capacity: 1 << 20,
        backing: ringwire_ring::Backing::Auto,
    };
}

impl Default for ClientConfig {
    fn default() -> Self {
        ClientConfig {
            connect_timeout: Some(Self::DEFAULT_CONNECT_TIMEOUT),
            request_timeout: None,
            max_redirects: None,
            expect_continue_timeout: Self::DEFAULT_EXPECT_CONTINUE_TIMEOUT,
            max_idle_per_host: Self::DEFAULT_MAX_IDLE_PER_HOST,
            idle_timeout: Self::DEFAULT_IDLE_TIMEOUT,
            limits: Limits::default(),
            max_decoded_body_len: Self::DEFAULT_MAX_DECODED_BODY_LEN,
            http2: Http2::Off,
            http2_keepalive: None,
            http2_multiplex: true,
            rx: Self::DEFAULT_RX,
        }
    }
}
