//! A request as a handler sees it.

use std::fmt;
use std::net::SocketAddr;
use std::ops::Deref;
use std::sync::Arc;

use crate::Socket;

use ringwire_http1::encode::FieldBlock;
use ringwire_http1::target::{PercentDecoded, QueryPairs};

use crate::body_reader::{BodyReader, Inflow, RequestBody};
use crate::informational::{InformationalError, Sink};
use crate::router::Params;

/// A request as a handler sees it: the head, parsed in place in the receive
/// ring, the whole body, the path parameters a [`Router`](crate::Router)
/// matched, and the peer's address.
///
/// Derefs to [`ringwire_http1::Request`] for the method, target, version and
/// headers. Note that [`Request::body`] here is the body's bytes, while
/// `request.head().body()` is how it was framed. An HTTP/2 request's head is
/// rewritten as an HTTP/1.1 head (so its `version` says 1.1);
/// [`protocol`](Self::protocol) says what came on the wire.
#[derive(Debug, Clone, Copy)]
pub struct Request<'a> {
    head: ringwire_http1::Request<'a>,
    body: &'a [u8],
    params: &'a Params<'a>,
    peer: Peer<'a>,
    reader: Option<BodyReader<'a>>,
    /// An HTTP/2 body a handler may take beyond its call.
    inflow: Option<&'a Arc<Inflow>>,
    /// Where informational heads go; none for an HTTP/1.0 client.
    informational: Option<&'a dyn Sink>,
    http2: bool,
    /// An HTTP/2 extended `CONNECT` (RFC 8441), its head given as the HTTP/1.1 upgrade.
    extended_connect: bool,
}

/// The protocol a request came over.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Protocol {
    /// HTTP/1.0.
    Http10,
    /// HTTP/1.1.
    Http11,
    /// HTTP/2.
    Http2,
}

impl Protocol {
    /// As a request line or a log names it: `HTTP/1.0`, `HTTP/1.1`, `HTTP/2`.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Protocol::Http10 => "HTTP/1.0",
            Protocol::Http11 => "HTTP/1.1",
            Protocol::Http2 => "HTTP/2",
        }
    }
}

impl fmt::Display for Protocol {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Where the peer's address comes from: the PROXY protocol header the connection began
/// with, or else asked of the socket only when a handler wants it (a system call most
/// requests need not pay).
#[derive(Debug, Clone, Copy)]
enum Peer<'a> {
    Unknown,
    Addr(SocketAddr),
    Socket(&'a Socket, Option<SocketAddr>),
}

impl<'a> Request<'a> {
    /// A request from a parsed head and its buffered body (for tests and
    /// other drivers).
    pub fn new(head: ringwire_http1::Request<'a>, body: &'a [u8]) -> Self {
        Request {
            head,
            body,
            params: Params::none(),
            peer: Peer::Unknown,
            reader: None,
            inflow: None,
            informational: None,
            http2: false,
            extended_connect: false,
        }
    }

    /// The same request, received over HTTP/2.
    pub(crate) fn over_http2(mut self) -> Self {
        self.http2 = true;
        self
    }

    /// The same request, an HTTP/2 extended `CONNECT`: its stream is the upgraded
    /// protocol's once answered with an upgrade.
    pub(crate) fn as_extended_connect(mut self) -> Self {
        self.extended_connect = true;
        self
    }

    /// Whether the request is an HTTP/2 extended `CONNECT` (RFC 8441), shown as the
    /// HTTP/1.1 upgrade it stands for.
    pub(crate) fn is_extended_connect(&self) -> bool {
        self.extended_connect
    }

    /// The protocol the request came over.
    pub fn protocol(&self) -> Protocol {
        match (self.http2, self.head.version()) {
            (true, _) => Protocol::Http2,
            (false, ringwire_http1::Version::Http10) => Protocol::Http10,
            (false, ringwire_http1::Version::Http11) => Protocol::Http11,
        }
    }

    /// The same request, its body read through `reader`.
    pub(crate) fn with_reader(mut self, reader: BodyReader<'a>) -> Self {
        self.reader = Some(reader);
        self
    }

    /// The body as it arrives, for a handler that
    /// [streams bodies](crate::Handler::streams_body) (and whose request has
    /// one); `None` otherwise, when [`body`](Self::body) has it whole.
    pub fn body_reader(&self) -> Option<BodyReader<'a>> {
        self.reader
    }

    /// The same request, its HTTP/2 body read from `inflow` (by reference, or owned).
    pub(crate) fn with_inflow(mut self, inflow: &'a Arc<Inflow>) -> Self {
        self.reader = Some(BodyReader::new(&**inflow));
        self.inflow = Some(inflow);
        self
    }

    /// The body as it arrives, as [`body_reader`](Self::body_reader) gives it, but owned:
    /// it can be read after the handler has answered, by a task the handler spawned, as a
    /// bidirectional gRPC call does. HTTP/2 only (an HTTP/1.1 body is read within the call,
    /// from the connection's ring); `None` otherwise. Read it through one handle at a time.
    pub fn body_stream(&self) -> Option<RequestBody> {
        self.inflow
            .map(|inflow| RequestBody::new(Arc::clone(inflow)))
    }

    /// The same request, its informational heads sent through `sink`.
    pub(crate) fn with_informational(mut self, sink: &'a dyn Sink) -> Self {
        self.informational = Some(sink);
        self
    }

    /// Sends an informational (1xx) answer with `fields` before the final one, which the
    /// handler still returns: `103 Early Hints` ([`early_hints`](Self::early_hints)) lets a
    /// browser fetch what the page will need while the handler works on the page. Over
    /// HTTP/1.1 it is written and flushed before this returns; over HTTP/2 the connection
    /// sends it before anything else of the stream. An HTTP/1.0 client is sent nothing (it
    /// does not know these answers, RFC 9110 section 15.2), nor is a request made by
    /// [`Request::new`]; neither is an error.
    ///
    /// # Errors
    ///
    /// [`InformationalError::Status`] outside `102..=199`; over HTTP/1.1, a head past the
    /// send ring's bound or a failed connection.
    pub async fn send_informational(
        &self,
        status: u16,
        fields: &FieldBlock,
    ) -> Result<(), InformationalError> {
        if !(102..=199).contains(&status) {
            return Err(InformationalError::Status(status));
        }
        match self.informational {
            Some(sink) => sink.send(status, fields).await,
            None => Ok(()),
        }
    }

    /// Sends `103 Early Hints` with `fields` (`link` fields naming what to preload or
    /// preconnect to, RFC 8297); see [`send_informational`](Self::send_informational).
    ///
    /// # Errors
    ///
    /// As [`send_informational`](Self::send_informational).
    pub async fn early_hints(&self, fields: &FieldBlock) -> Result<(), InformationalError> {
        self.send_informational(103, fields).await
    }

    /// The same request, from `peer`.
    #[must_use]
    pub fn with_peer(mut self, peer: SocketAddr) -> Self {
        self.peer = Peer::Addr(peer);
        self
    }

    /// The same request, received on `socket`, from `client` if a PROXY protocol header
    /// named it.
    pub(crate) fn on(mut self, socket: &'a Socket, client: Option<SocketAddr>) -> Self {
        self.peer = Peer::Socket(socket, client);
        self
    }

    /// The same request, with the path parameters a route matched.
    #[must_use]
    pub fn with_params<'b>(&self, params: &'b Params<'b>) -> Request<'b>
    where
        'a: 'b,
    {
        Request { params, ..*self }
    }

    /// The parsed head (method, target, headers), zero-copy.
    pub fn head(&self) -> &ringwire_http1::Request<'a> {
        &self.head
    }

    /// The whole request body, dechunked; empty when there is none, and
    /// for a handler that reads it as it arrives ([`body_reader`](Self::body_reader)).
    ///
    /// A `Content-Length` body is a slice of the receive ring; a chunked one
    /// was decoded into a buffer the connection reuses.
    pub fn body(&self) -> &'a [u8] {
        self.body
    }

    /// The body as JSON, deserialised where it lies ([`body`](Self::body): a
    /// `Content-Length` body is a slice of the receive ring): `T`'s `&'a str` fields point
    /// into it, strings read without a copy. A string with an escape sequence must be
    /// decoded, which a `&str` cannot hold (an error); a `Cow<'a, str>` field marked
    /// `#[serde(borrow)]` borrows when it can and owns that one. Empty for a handler that
    /// [streams bodies](crate::Handler::streams_body).
    ///
    /// # Errors
    ///
    /// serde's, for a body that is not the JSON `T` reads (with its line and column: a
    /// `400 Bad Request` or `422` to answer).
    #[cfg(feature = "json")]
    pub fn json<T: serde::Deserialize<'a>>(&self) -> Result<T, serde_json::Error> {
        serde_json::from_slice(self.body)
    }

    /// The `name=value` pairs of an HTML form's body (`application/x-www-form-urlencoded`,
    /// what a `<form method=post>` and `curl -d` send), in order, each decoded only when read
    /// (`+` a space, `%XX` a byte) and borrowed from the [`body`](Self::body) while it needs no
    /// decoding; `None` for a request of another content type.
    pub fn form(&self) -> Option<QueryPairs<'a>> {
        let content_type = self.head.header("content-type")?;
        let essence = content_type.split(|&b| b == b';').next()?.trim_ascii();
        essence
            .eq_ignore_ascii_case(b"application/x-www-form-urlencoded")
            .then(|| QueryPairs::new(self.body))
    }

    /// The `multipart/form-data` fields of the [`body`](Self::body) (a browser's form, `curl
    /// -F`, file uploads), read in place: names and data are slices of the body. Within
    /// the default [`Limits`](crate::multipart::Limits) ([`Fields::new`] takes others); a
    /// handler that streams its body reads it with
    /// [`Multipart::read`](crate::multipart::Multipart::read) instead.
    ///
    /// [`Fields::new`]: crate::multipart::Fields::new
    ///
    /// # Errors
    ///
    /// [`MultipartError::NotMultipart`](crate::multipart::MultipartError) for a request
    /// whose `content-type` is not `multipart/form-data` with a boundary (a `415` or `400`
    /// to answer); the other errors come from the fields, each a `400`.
    pub fn multipart(
        &self,
    ) -> Result<crate::multipart::Fields<'a>, crate::multipart::MultipartError> {
        let content_type = self.head.header("content-type").unwrap_or_default();
        crate::multipart::Fields::new(content_type, self.body, crate::multipart::Limits::default())
    }

    /// The path parameters of the route that matched (none outside a
    /// [`Router`](crate::Router)).
    pub fn params(&self) -> &'a Params<'a> {
        self.params
    }

    /// The path parameter `name`, still percent-encoded; see
    /// [`Params::decoded`] for the decoded form.
    pub fn param(&self, name: &str) -> Option<&'a str> {
        self.params.get(name)
    }

    /// The first query parameter named `name` (`?page=2&q=caf%C3%A9`), form-decoded on
    /// demand (`+` a space; `to_str` borrows the target when nothing is encoded).
    pub fn query(&self, name: &str) -> Option<PercentDecoded<'a>> {
        self.head
            .target()
            .query_pairs()
            .find_map(|(key, value)| key.eq_str(name).then_some(value))
    }

    /// The value of the cookie `name` the request carries (its `cookie` fields split at
    /// `;`, surrounding spaces and one pair of double quotes taken off), zero-copy; the
    /// first, if it carries several.
    pub fn cookie(&self, name: &str) -> Option<&'a [u8]> {
        self.head
            .headers()
            .get_all("cookie")
            .flat_map(|field| field.split(|&b| b == b';'))
            .find_map(|pair| {
                let at = pair.iter().position(|&b| b == b'=')?;
                let (key, value) = (pair[..at].trim_ascii(), pair[at + 1..].trim_ascii());
                (key == name.as_bytes()).then_some(value)
            })
            .map(|value| {
                value
                    .strip_prefix(b"\"")
                    .and_then(|v| v.strip_suffix(b"\""))
                    .unwrap_or(value)
            })
    }

    /// The client's address, when the request came from a socket: on a server that takes
    /// the PROXY protocol ([`ServerConfig::proxy_protocol`](crate::ServerConfig)), the one
    /// the proxy's header named (the socket's peer, the proxy, when it named none).
    pub fn peer(&self) -> Option<SocketAddr> {
        match self.peer {
            Peer::Unknown => None,
            Peer::Addr(addr) => Some(addr),
            Peer::Socket(_, Some(client)) => Some(client),
            Peer::Socket(socket, None) => socket.get_ref().peer_addr(),
        }
    }

    /// Who is at the other end of a Unix socket ([`Server::bind_unix`](crate::Server)):
    /// its process, user and group as the kernel recorded them when it connected
    /// (`SO_PEERCRED`, Linux; a system call each time), for a local server that lets
    /// users in by who they are. `None` over TCP. Behind a proxy these are the proxy's.
    pub fn peer_credentials(&self) -> Option<ringwire_io::PeerCredentials> {
        match self.peer {
            Peer::Socket(socket, _) => socket.get_ref().peer_credentials(),
            Peer::Unknown | Peer::Addr(_) => None,
        }
    }

    /// The certificate (DER) the client presented, on a server that asks for one
    /// ([`ringwire_tls::ServerConfig::client_auth`]); `None` without TLS or without one.
    /// Its signature was checked against the CAs given there.
    pub fn peer_certificate(&self) -> Option<Vec<u8>> {
        match self.peer {
            Peer::Socket(socket, _) => socket.peer_certificate(),
            Peer::Unknown | Peer::Addr(_) => None,
        }
    }
}

impl<'a> Deref for Request<'a> {
    type Target = ringwire_http1::Request<'a>;

    fn deref(&self) -> &Self::Target {
        &self.head
    }
}
