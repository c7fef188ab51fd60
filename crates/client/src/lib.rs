//! An HTTP/1.1 and HTTP/2 client on ringwire's rings.
//!
//! - A request is encoded straight into a send ring ([`RequestBuffer`])
//!   through a typestate: method and URL, then percent-encoded query
//!   parameters, then header fields, then the body (a slice sent from where
//!   it lies, bytes serialised into the ring, or a fixed size filled in
//!   place). Head and body leave in one `writev`.
//! - A `multipart/form-data` body ([`Form`], [`HeaderBuilder::form`]) is written into the
//!   send ring too, its boundary checked against every part; or read as it is sent, files
//!   of any size included ([`Form::file_from`], [`HeaderBuilder::form_stream`]).
//! - A body of any size can be read from a source as it is sent
//!   ([`HeaderBuilder::body_stream`], `send_streamed`: a file, a pipe, any `Read` or
//!   `AsyncRead`), piece by piece through the send ring: with `content-length`, or
//!   chunked (HTTP/2: frames within the server's windows) when its length is not known;
//!   a file by `sendfile` over plain HTTP/1.1 (`send_file`). An answer that comes before
//!   the body is all sent is watched for: a refusal stops the upload.
//! - A response is received into the connection's ring and read in place:
//!   the head as a view, the body as chunks borrowed from the ring, framed
//!   by length, chunked or the server's close; interim `1xx` heads are
//!   skipped, and HEAD, `204` and `304` responses have no body. The
//!   trailer fields a body ends with ([`Trailers`]: a chunked body's, an
//!   HTTP/2 stream's) are kept once it is read.
//! - A body can wait for the server's go-ahead (`Expect: 100-continue`,
//!   [`HeaderBuilder::expect_continue`]): a server that refuses at the head
//!   is spared the upload.
//! - A response can be asked for compressed and its body read decoded
//!   ([`HeaderBuilder::decompress`]: gzip, deflate, brotli, zstd), within
//!   [`ClientConfig::max_decoded_body_len`]; a request that does not ask
//!   costs nothing for it.
//! - A [`blocking::Client`] over std sockets and a [`tokio::Client`] over
//!   the tokio driver share the sans-IO parts: a keep-alive pool per origin
//!   (bounded, stale connections detected before reuse), connect and
//!   request timeouts, opt-in redirects (a request's `authorization` stays
//!   with its origin unless [`blocking::Client::authorize_redirects`] gives
//!   the next one its own), limits on heads and bodies.
//!
//! `http://` and `https://`: TLS through `ringwire-tls` (OpenSSL by
//! default, which decrypts straight into the receive ring), certificates
//! and host names verified against the system's roots unless the client is
//! made otherwise ([`blocking::Client::with_tls`],
//! [`tokio::Client::with_tls`]); a failed handshake is [`Error::Tls`].
//!
//! Through a forward proxy when the client is given one ([`blocking::Client::with_proxies`],
//! [`tokio::Client::with_proxies`]; [`Proxies::from_env`] reads curl's variables): `http://`
//! requests forwarded in absolute-form, `https://`, WebSockets and HTTP/2 with prior knowledge
//! through a `CONNECT` tunnel, Basic credentials from the proxy's URL; or everything through a
//! SOCKS proxy's tunnel (`socks5h://`, `socks5://`, `socks4a://`, `socks4://`).
//!
//! HTTP/2 when [`ClientConfig::http2`] says so:
//! offered to `https://` servers by ALPN, or spoken from the start over
//! cleartext ([`Http2::PriorKnowledge`]). The blocking client's connection
//! carries one exchange at a time, as an HTTP/1.1 one does; the response head
//! is viewed as an HTTP/1.1 head ([`blocking::Response::protocol`] tells them
//! apart) and the body is read in place from the `DATA` frames in the ring. A
//! request the server refused unprocessed (`REFUSED_STREAM`, or left out by a
//! `GOAWAY`) is sent again on a fresh connection, even a `POST`.
//!
//! The tokio client's requests to an HTTP/2 origin share one connection, many
//! at once ([`ClientConfig::http2_multiplex`]; streamed bodies and
//! `100-continue` take one of their own, as every request does with it off);
//! [`tokio::Client::http2_connection`] opens such a connection for the caller
//! to hold ([`tokio::Http2Connection`]): a task of its own reads the frames and sorts
//! them by stream (module `mux`), each request waits only for its own
//! answer, and each body is copied out of the ring once as its frames come
//! (the other streams' frames follow in the same ring) into buffers the
//! connection reuses, given back to flow control as it is read. Request bodies go whole, streamed from a source as the server's
//! windows take them, or piece by piece while the response is read (full
//! duplex, as gRPC's streaming calls: `send_duplex`); response bodies are
//! decoded when asked; an optional keepalive `PING`s a silent server
//! ([`ClientConfig::http2_keepalive`]).
//!
//! With a [`CookieJar`] ([`blocking::Client::with_cookies`], [`tokio::Client::with_cookies`])
//! a client keeps the cookies answers set and sends them back where they belong.
//!
//! With the `ws` feature, `ws://` and `wss://` too: `tokio::Client::websocket` opens a
//! WebSocket on a connection of its own, with the client's TLS settings (module `ws`), and
//! `tokio::Client::websocket_http2` one on a stream of the origin's shared HTTP/2 connection
//! (RFC 8441; `tokio::Http2Connection::websocket` on a connection held).

#![forbid(unsafe_code)]

pub mod blocking;
mod config;
mod connect;
mod cookie;
mod decompress;
mod error;
mod events;
mod exchange;
mod form;
#[cfg(fuzzing)]
#[doc(hidden)]
pub mod fuzzing;
mod h2;
mod mux;
mod pool;
mod proxy;
mod redirect;
mod request;
mod resolve;
mod shared_api;
mod stream;
mod tls;
pub mod tokio;
mod trace;
mod trailers;
mod tunnel;
mod url;
#[cfg(feature = "ws")]
pub mod ws;

pub use config::ClientConfig;
pub use cookie::CookieJar;
pub use decompress::{Corruption, Decoder, Encoding};
pub use error::{Error, Phase};
pub use form::{Form, FormError, FormReader};
pub use h2::{Http2, Protocol};
pub use proxy::{Proxies, Proxy, ProxyEnvError};
pub use request::{
    BodyWriter, HeaderBuilder, QueryBuilder, Request, RequestBuffer, StreamedRequest,
};
#[cfg(target_os = "linux")]
pub use ringwire_io::abstract_unix_path;
pub use trace::Trace;
pub use trailers::Trailers;
pub use url::{Origin, Scheme, Url, UrlError};
