//! Why a request failed: each variant says whose fault it was (the caller's
//! input, the network, the server's bytes, a limit).

use std::{fmt, io};

use ringwire_http1::encode::EncodeError;
use ringwire_io::TransportError;
use ringwire_ring::RingError;
use ringwire_tls::TlsError;

use crate::decompress::{Corruption, Encoding};
use crate::url::UrlError;

/// A request that could not be sent or whose response could not be read.
#[derive(Debug)]
#[non_exhaustive]
pub enum Error {
    /// The URL could not be parsed (the caller's input).
    Url(UrlError),
    /// The TLS handshake failed (an untrusted or expired certificate, a
    /// wrong host, no common version), or the session did after it (the
    /// server's alert: a client certificate required), or TLS could not be
    /// set up.
    Tls(ringwire_tls::TlsError),
    /// A method, header or path the encoder refused (CR/LF injection,
    /// non-token names, ...): the caller's input.
    Encode(EncodeError),
    /// A header the client writes itself (`host`, `content-length`,
    /// `transfer-encoding`): the body and the URL decide them (a `host`
    /// of the caller's is given to `QueryBuilder::headers_with_host`).
    ManagedHeader(&'static str),
    /// The request head does not fit the room reserved for it.
    RequestHeadTooLarge {
        /// The room in bytes.
        limit: usize,
    },
    /// A body written in place does not fit the send ring's free span;
    /// [`RequestBuffer::reserve`](crate::RequestBuffer::reserve) makes room.
    BodyExceedsSendRing {
        /// The body's length, when known.
        len: usize,
        /// The room after the head.
        room: usize,
    },
    /// Reading a streamed body from its source failed
    /// ([`HeaderBuilder::body_stream`](crate::HeaderBuilder::body_stream)): the request was
    /// cut short and its connection closed.
    BodySource(io::Error),
    /// A streamed body's source ended before the length its head announced: the request
    /// was cut short and its connection closed.
    BodySourceEnded {
        /// Bytes the source gave.
        sent: u64,
        /// The announced length.
        expected: u64,
    },
    /// A [`Request`](crate::Request) whose bytes in its
    /// [`RequestBuffer`](crate::RequestBuffer) were overwritten by a later
    /// request (or that was written into another buffer): API misuse.
    StaleRequest,
    /// No connection could be opened to the host.
    Connect {
        /// `host:port` (`[address]:port` for IPv6).
        authority: String,
        /// Why.
        source: io::Error,
    },
    /// The connect or request deadline passed.
    Timeout(Phase),
    /// Sending or receiving failed (reset, broken pipe, ...).
    Io(io::Error),
    /// A ring could not grow as far as asked (a limit).
    Ring(RingError),
    /// A SOCKS proxy refused the tunnel (or could not be asked for it), for `reason`.
    Socks {
        /// The proxy's `host:port`.
        proxy: String,
        /// Why, in words.
        reason: &'static str,
    },
    /// A form cannot be sent as it is.
    Form(crate::FormError),
    /// The proxy refused to open a tunnel (`CONNECT`): `407` for missing or wrong
    /// credentials, `403` for a destination it does not allow, `502` when it could not
    /// reach it.
    Proxy {
        /// The proxy's `host:port`.
        proxy: String,
        /// Its answer's status.
        status: u16,
        /// Its reason phrase.
        reason: String,
    },
    /// The server's bytes are not a valid HTTP/1.1 response, or exceed the
    /// configured limits: the server's fault, and the connection is closed.
    Response(ringwire_http1::Error),
    /// The server closed the connection before a complete response head.
    Closed,
    /// The server broke HTTP/2's rules (a connection error; the `GOAWAY`
    /// saying so was sent): the connection is closed.
    Http2(ringwire_http2::Error),
    /// The request's HTTP/2 stream was reset, by the server or by this
    /// client for what the server sent on it. `REFUSED_STREAM` (also a
    /// `GOAWAY` that left the request unprocessed) means the server never
    /// acted on it, so it was sent again on a fresh connection if it could.
    Http2Reset(ringwire_http2::ErrorCode),
    /// The server chose HTTP/1.1 by ALPN where only HTTP/2 would do (a connection shared
    /// by many exchanges: [`Client::http2_connection`](crate::tokio::Client::http2_connection)).
    NotHttp2,
    /// The HTTP/2 server has not said it takes extended `CONNECT`s (RFC 8441), so it
    /// cannot carry a WebSocket on a stream.
    NoExtendedConnect,
    /// A request head HTTP/2 cannot carry as it was written (a `host`
    /// HTTP/2's `:authority` cannot hold).
    Http2Request(ringwire_http1::Error),
    /// The connection ended before the response body did (the server's
    /// fault, or the network's): the connection is closed.
    IncompleteBody {
        /// Body bytes that came.
        received: u64,
        /// The length the head announced; `None` for a chunked body.
        expected: Option<u64>,
        /// Over TLS, whether the server closed without `close_notify`
        /// (rather than after it).
        without_close_notify: bool,
    },
    /// A body the server compressed could not be decoded
    /// ([`HeaderBuilder::decompress`](crate::HeaderBuilder::decompress)):
    /// the server's fault, and the connection is closed.
    Decompress {
        /// The coding the body was to be decoded from.
        encoding: Encoding,
        /// What is wrong with it.
        corruption: Corruption,
    },
    /// A body decoded past
    /// [`ClientConfig::max_decoded_body_len`](crate::ClientConfig::max_decoded_body_len)
    /// (a decompression bomb, or a bound set too low); the connection is
    /// closed.
    DecodedBodyTooLarge {
        /// The configured limit in bytes.
        limit: u64,
    },
    /// The server's answer filled the receive ring to its bound
    /// ([`ClientConfig::rx`](crate::ClientConfig::rx)) while the request body was still
    /// being sent (a server that answers as it reads, as an echo does): an answer is read
    /// once its request is sent, and what comes before waits in the ring.
    AnsweredWhileSending {
        /// The ring's bound in bytes.
        limit: usize,
    },
    /// `101 Switching Protocols` to a request that asked for no upgrade.
    UnexpectedUpgrade,
    /// A redirect past the most allowed
    /// ([`ClientConfig::max_redirects`](crate::ClientConfig::max_redirects)).
    TooManyRedirects {
        /// The configured maximum.
        max: u32,
    },
    /// A redirect whose `Location` is not a URL this client can follow.
    InvalidLocation(UrlError),
    /// The WebSocket upgrade failed (refused by the server, or its answer
    /// invalid), or the connection failed during it.
    #[cfg(feature = "ws")]
    WebSocket(ringwire_ws::socket::SocketError),
    /// A value could not be written as JSON
    /// ([`HeaderBuilder::json`](crate::HeaderBuilder::json): a map whose keys are not
    /// strings, a `Serialize` that failed), or a body is not the JSON asked for
    /// (`Response::json`: serde's words, with the line and column).
    #[cfg(feature = "json")]
    Json(serde_json::Error),
    /// A body read as server-sent events ([`Response::events`](crate::tokio::Response::events))
    /// broke the reader's limits.
    EventStream(ringwire_sse::ParseError),
    /// An event source's answer is not a stream of events: a status other than `200`, or
    /// another `content-type` than `text/event-stream`. It does not reconnect, as browsers
    /// do not.
    NotEventStream {
        /// The answer's status.
        status: u16,
        /// Its `content-type`, if it had one.
        content_type: Option<String>,
    },
}

/// Which deadline passed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// Opening the connection.
    Connect,
    /// The whole exchange, from sending the request to the end of the body.
    Request,
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Url(e) => write!(f, "invalid URL: {e}"),
            Error::Tls(e) => write!(f, "{e}"),
            Error::Encode(e) => write!(f, "invalid request: {e}"),
            Error::ManagedHeader("host") => {
                f.write_str("the host header is set with headers_with_host, not as a field")
            }
            Error::ManagedHeader(name) => {
                write!(f, "the {name} header is set by the client, not by hand")
            }
            Error::RequestHeadTooLarge { limit } => {
                write!(f, "request head longer than {limit} bytes")
            }
            Error::BodyExceedsSendRing { len, room } => write!(
                f,
                "body of {len} bytes does not fit the {room} bytes free in the send ring"
            ),
            Error::BodySource(e) => write!(f, "reading the request body failed: {e}"),
            Error::BodySourceEnded { sent, expected } => write!(
                f,
                "the request body ended after {sent} of the {expected} bytes announced"
            ),
            Error::StaleRequest => {
                f.write_str("the request was overwritten in its buffer before it was sent")
            }
            Error::Connect { authority, source } => {
                write!(f, "cannot connect to {authority}: {source}")
            }
            Error::Proxy {
                proxy,
                status,
                reason,
            } => write!(f, "the proxy {proxy} refused: {status} {reason}"),
            Error::Timeout(Phase::Connect) => f.write_str("connect timed out"),
            Error::Timeout(Phase::Request) => f.write_str("request timed out"),
            Error::Io(e) => write!(f, "connection failed: {e}"),
            Error::Ring(e) => e.fmt(f),
            Error::Form(e) => e.fmt(f),
            Error::Socks { proxy, reason } => {
                write!(f, "the SOCKS proxy {proxy} refused: {reason}")
            }
            Error::Response(e) => write!(f, "invalid response: {e}"),
            Error::Closed => {
                f.write_str("the server closed the connection before a complete response")
            }
            Error::Http2(e) => write!(f, "{e}"),
            Error::Http2Reset(code) => write!(f, "HTTP/2 stream reset: {code}"),
            Error::Http2Request(e) => write!(f, "request not sendable over HTTP/2: {e}"),
            Error::IncompleteBody {
                received,
                expected,
                without_close_notify,
            } => {
                match expected {
                    Some(expected) => {
                        write!(f, "the body ended after {received} of {expected} bytes")?;
                    }
                    None => write!(
                        f,
                        "the body ended after {received} bytes, before its last chunk"
                    )?,
                }
                if *without_close_notify {
                    f.write_str(" (the server closed without TLS close_notify)")?;
                }
                Ok(())
            }
            Error::Decompress {
                encoding,
                corruption,
            } => write!(f, "the {encoding}-encoded body {corruption}"),
            Error::DecodedBodyTooLarge { limit } => write!(
                f,
                "the decoded body is longer than {limit} bytes (ClientConfig::max_decoded_body_len)"
            ),
            Error::AnsweredWhileSending { limit } => write!(
                f,
                "the answer passed {limit} bytes (the receive ring's bound, ClientConfig::rx) \
                 while the request body was still being sent"
            ),
            Error::UnexpectedUpgrade => f.write_str("unexpected 101 Switching Protocols"),
            Error::NotHttp2 => {
                f.write_str("the server does not speak HTTP/2 (ALPN chose http/1.1)")
            }
            Error::NoExtendedConnect => {
                f.write_str("the HTTP/2 server takes no WebSocket (no extended CONNECT)")
            }
            Error::TooManyRedirects { max } => write!(f, "maximum ({max}) redirects followed"),
            Error::InvalidLocation(e) => write!(f, "redirect to an invalid location: {e}"),
            #[cfg(feature = "ws")]
            Error::WebSocket(e) => write!(f, "WebSocket {e}"),
            #[cfg(feature = "json")]
            Error::Json(e) => write!(f, "JSON: {e}"),
            Error::EventStream(e) => write!(f, "event stream: {e}"),
            Error::NotEventStream {
                status,
                content_type,
            } => {
                write!(f, "not an event stream: status {status}")?;
                match content_type {
                    Some(t) => write!(f, ", content-type {t}"),
                    None => f.write_str(", no content-type"),
                }
            }
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Url(e) | Error::InvalidLocation(e) => Some(e),
            Error::Encode(e) => Some(e),
            Error::Connect { source, .. } => Some(source),
            Error::Io(e) | Error::BodySource(e) => Some(e),
            Error::Ring(e) => Some(e),
            Error::Form(e) => Some(e),
            Error::Response(e) | Error::Http2Request(e) => Some(e),
            Error::Http2(e) => Some(e),
            #[cfg(feature = "ws")]
            Error::WebSocket(e) => Some(e),
            #[cfg(feature = "json")]
            Error::Json(e) => Some(e),
            Error::EventStream(e) => Some(e),
            _ => None,
        }
    }
}

impl From<ringwire_sse::ParseError> for Error {
    fn from(e: ringwire_sse::ParseError) -> Self {
        Error::EventStream(e)
    }
}

impl From<UrlError> for Error {
    fn from(e: UrlError) -> Self {
        Error::Url(e)
    }
}

impl From<ringwire_http1::Error> for Error {
    fn from(e: ringwire_http1::Error) -> Self {
        Error::Response(e)
    }
}

impl From<RingError> for Error {
    fn from(e: RingError) -> Self {
        Error::Ring(e)
    }
}

impl From<TransportError> for Error {
    fn from(e: TransportError) -> Self {
        match e {
            TransportError::Io(e) => Error::from(e),
            TransportError::Ring(e) => Error::Ring(e),
        }
    }
}

impl From<io::Error> for Error {
    /// A socket timeout (blocking sockets report `WouldBlock`) is the
    /// request deadline; a TLS session's failure (which a TLS stream
    /// reports as invalid data) is TLS's; anything else is the connection
    /// failing.
    fn from(e: io::Error) -> Self {
        match e.kind() {
            io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut => Error::Timeout(Phase::Request),
            io::ErrorKind::InvalidData => match e.downcast::<TlsError>() {
                Ok(tls) => Error::Tls(tls),
                Err(e) => Error::Io(e),
            },
            _ => Error::Io(e),
        }
    }
}

/// A fill during a write (see the clients' `Out`) failed: past the ring's bound, the
/// answer came while the request was still being sent.
pub(crate) fn while_sending(e: TransportError) -> Error {
    match e {
        TransportError::Ring(RingError::TooLarge { max, .. }) => {
            Error::AnsweredWhileSending { limit: max }
        }
        other => other.into(),
    }
}
