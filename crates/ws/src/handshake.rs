//! The opening handshake (RFC 6455 section 4) over `ringwire-http1` heads, without I/O: the
//! server checks an upgrade request and writes the 101; the client writes the request and
//! checks the 101. The bytes after either head belong to the WebSocket reader.

use std::borrow::Cow;
use std::fmt;

use base64::engine::general_purpose::STANDARD as BASE64;
use base64::Engine as _;
use ringwire_http1::encode::{EncodeError, RequestWriter, ResponseWriter};
use ringwire_http1::{Method, Request, Response, Version};

use crate::deflate::{DeflateConfig, DeflateParams, NegotiationError};

/// Appended to the key before hashing (section 1.3).
const GUID: &[u8] = b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11";
/// The only version RFC 6455 defines.
const VERSION: &[u8] = b"13";

/// Why a handshake failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum HandshakeError {
    /// Server: not `GET` over HTTP/1.1.
    NotGet,
    /// No `Upgrade: websocket` with `Connection: upgrade`.
    NotUpgrade,
    /// Server: `Sec-WebSocket-Version` is not 13 (answer 426 with version 13).
    UnsupportedVersion,
    /// Server: `Sec-WebSocket-Key` is missing or not 16 bytes in base64.
    InvalidKey,
    /// Client: the response status is not 101 (over HTTP/2, not `2xx`).
    NotSwitching(u16),
    /// Client: `Sec-WebSocket-Accept` is missing or does not match the key.
    AcceptMismatch,
    /// Client: a subprotocol that was not offered, or several.
    UnexpectedProtocol,
    /// Client: the extensions answer is invalid or was not offered.
    Extensions(NegotiationError),
}

impl HandshakeError {
    /// The status a server answers a failed upgrade request with.
    #[must_use]
    pub fn status(&self) -> u16 {
        match self {
            HandshakeError::UnsupportedVersion | HandshakeError::NotUpgrade => 426,
            _ => 400,
        }
    }
}

impl fmt::Display for HandshakeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            HandshakeError::NotGet => f.write_str("upgrade request is not GET over HTTP/1.1"),
            HandshakeError::NotUpgrade => {
                f.write_str("not a WebSocket upgrade (Upgrade: websocket and Connection: Upgrade)")
            }
            HandshakeError::UnsupportedVersion => f.write_str("Sec-WebSocket-Version is not 13"),
            HandshakeError::InvalidKey => f.write_str("invalid Sec-WebSocket-Key"),
            HandshakeError::NotSwitching(status) => {
                write!(f, "upgrade refused with status {status}")
            }
            HandshakeError::AcceptMismatch => f.write_str("Sec-WebSocket-Accept does not match"),
            HandshakeError::UnexpectedProtocol => f.write_str("subprotocol not offered"),
            HandshakeError::Extensions(err) => err.fmt(f),
        }
    }
}

impl std::error::Error for HandshakeError {}

/// `Sec-WebSocket-Accept` for `key`: base64 of SHA-1 of the key and the GUID.
#[must_use]
pub fn accept_key(key: &[u8]) -> String {
    let mut sha = sha1_smol::Sha1::new();
    sha.update(key);
    sha.update(GUID);
    BASE64.encode(sha.digest().bytes())
}

/// Whether a comma-separated header value holds `token` (ASCII case-insensitive).
fn has_token(value: &[u8], token: &str) -> bool {
    value
        .split(|&b| b == b',')
        .any(|t| t.trim_ascii().eq_ignore_ascii_case(token.as_bytes()))
}

/// The tokens of every `name` field's comma-separated values.
fn tokens<'a>(fields: impl Iterator<Item = &'a [u8]>) -> impl Iterator<Item = &'a [u8]> {
    fields
        .flat_map(|v| v.split(|&b| b == b','))
        .map(<[u8]>::trim_ascii)
        .filter(|t| !t.is_empty())
}

/// A valid upgrade request, and what the server chose.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Accepted<'p> {
    /// `Sec-WebSocket-Accept`; none over HTTP/2, which has no key.
    accept: Option<String>,
    protocol: Option<&'p str>,
    deflate: Option<DeflateParams>,
}

/// Server side: checks an upgrade request (section 4.2.1), picks the first of `protocols`
/// (the server's preference order) that the client offers, and negotiates permessage-deflate
/// if `deflate` is given.
///
/// # Errors
///
/// A [`HandshakeError`] whose [`status`](HandshakeError::status) to answer with.
pub fn accept<'p>(
    request: &Request<'_>,
    protocols: &[&'p str],
    deflate: Option<&DeflateConfig>,
) -> Result<Accepted<'p>, HandshakeError> {
    check_upgrade(request)?;
    let headers = request.headers();
    let mut keys = headers.get_all("sec-websocket-key");
    let key = match (keys.next(), keys.next()) {
        (Some(key), None) => key.trim_ascii(),
        _ => return Err(HandshakeError::InvalidKey),
    };
    match BASE64.decode(key) {
        Ok(raw) if raw.len() == 16 => {}
        _ => return Err(HandshakeError::InvalidKey),
    }
    Ok(negotiate(
        request,
        protocols,
        deflate,
        Some(accept_key(key)),
    ))
}

/// Server side, over HTTP/2: checks an extended `CONNECT` for `websocket` (RFC 8441), given
/// in the HTTP/1.1 form it stands for (`GET` with `Upgrade: websocket`), and negotiates as
/// [`accept`] does. There is no key to answer: the stream, opened by a `CONNECT` only a
/// client that knows RFC 8441 sends, is proof enough (RFC 8441 section 5).
///
/// # Errors
///
/// As [`accept`], but never [`HandshakeError::InvalidKey`].
pub fn accept_extended_connect<'p>(
    request: &Request<'_>,
    protocols: &[&'p str],
    deflate: Option<&DeflateConfig>,
) -> Result<Accepted<'p>, HandshakeError> {
    check_upgrade(request)?;
    Ok(negotiate(request, protocols, deflate, None))
}

/// `GET`, `Upgrade: websocket` and version 13 (section 4.2.1).
fn check_upgrade(request: &Request<'_>) -> Result<(), HandshakeError> {
    if request.method() != Method::Get || request.version() != Version::Http11 {
        return Err(HandshakeError::NotGet);
    }
    if !request.upgrade().is_some_and(|u| has_token(u, "websocket")) {
        return Err(HandshakeError::NotUpgrade);
    }
    let version = request.headers().get("sec-websocket-version");
    if version.map(<[u8]>::trim_ascii) != Some(VERSION) {
        return Err(HandshakeError::UnsupportedVersion);
    }
    Ok(())
}

/// The server's choice of subprotocol and permessage-deflate parameters.
fn negotiate<'p>(
    request: &Request<'_>,
    protocols: &[&'p str],
    deflate: Option<&DeflateConfig>,
    accept: Option<String>,
) -> Accepted<'p> {
    let headers = request.headers();
    let offered: Vec<&[u8]> = tokens(headers.get_all("sec-websocket-protocol")).collect();
    let protocol = protocols
        .iter()
        .find(|p| offered.contains(&p.as_bytes()))
        .copied();
    let deflate =
        deflate.and_then(|config| config.accept(headers.get_all("sec-websocket-extensions")));
    Accepted {
        accept,
        protocol,
        deflate,
    }
}

impl Accepted<'_> {
    /// The subprotocol chosen, if any.
    #[must_use]
    pub fn protocol(&self) -> Option<&str> {
        self.protocol
    }

    /// The permessage-deflate parameters agreed, if any.
    #[must_use]
    pub fn deflate(&self) -> Option<&DeflateParams> {
        self.deflate.as_ref()
    }

    /// Writes the `101 Switching Protocols` head into `out`; returns its length.
    ///
    /// # Errors
    ///
    /// [`EncodeError::BufferFull`] (about 200 bytes are needed).
    pub fn write_response(&self, out: &mut [u8]) -> Result<usize, EncodeError> {
        let mut head = ResponseWriter::new(out, Version::Http11, 101, None)?;
        head.header("upgrade", "websocket")?
            .header("connection", "Upgrade")?;
        if let Some(accept) = &self.accept {
            head.header("sec-websocket-accept", accept)?;
        }
        if let Some(protocol) = self.protocol {
            head.header("sec-websocket-protocol", protocol)?;
        }
        if let Some(deflate) = &self.deflate {
            head.header("sec-websocket-extensions", deflate.response())?;
        }
        head.finish()
    }
}

/// What a client's handshake agreed on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Negotiated {
    /// The subprotocol the server chose.
    pub protocol: Option<String>,
    /// permessage-deflate, if the server accepted it.
    pub deflate: Option<DeflateParams>,
    /// The answer's `set-cookie` fields (invalid UTF-8 replaced), for a cookie jar to keep
    /// as it keeps any answer's; most answers have none.
    pub set_cookies: Vec<String>,
}

/// What a client's upgrade request asks for besides its path: subprotocols (most
/// preferred first), fields of the caller's (`authorization`, `cookie`, `origin`, ...; not
/// [`MANAGED_HEADERS`]) and permessage-deflate.
#[derive(Debug, Clone, Copy, Default)]
pub struct Offer<'a> {
    /// Subprotocols, most preferred first.
    pub protocols: &'a [&'a str],
    /// The caller's fields.
    pub headers: &'a [(&'a str, &'a str)],
    /// permessage-deflate to offer (`None`: none).
    pub deflate: Option<DeflateConfig>,
}

/// A request field of [`ClientHandshake::extended_connect_fields`]: name and value.
pub type Field<'a> = (&'a str, Cow<'a, [u8]>);

/// Client side: a fresh key, the request carrying it, and the check of the answer.
#[derive(Debug, Clone)]
pub struct ClientHandshake {
    key: String,
    protocols: Vec<String>,
    deflate: Option<DeflateConfig>,
    /// Fields of the caller's (`authorization`, `cookie`, `origin`, ...).
    headers: Vec<(String, String)>,
}

/// Fields a client's handshake writes itself; a caller's would contradict them.
pub const MANAGED_HEADERS: [&str; 7] = [
    "host",
    "upgrade",
    "connection",
    "sec-websocket-key",
    "sec-websocket-version",
    "sec-websocket-protocol",
    "sec-websocket-extensions",
];

impl ClientHandshake {
    /// A handshake offering `protocols` (in preference order) and, if given, permessage-deflate.
    ///
    /// # Errors
    ///
    /// The OS random source failed (the key must be unpredictable, section 4.1).
    pub fn new(
        protocols: &[&str],
        deflate: Option<DeflateConfig>,
    ) -> Result<Self, getrandom::Error> {
        let mut nonce = [0; 16];
        getrandom::fill(&mut nonce)?;
        Ok(Self {
            key: BASE64.encode(nonce),
            protocols: protocols.iter().map(|p| (*p).to_owned()).collect(),
            deflate,
            headers: Vec::new(),
        })
    }

    /// Also sends `headers` (`authorization`, `cookie`, `origin`, ...), checked when the
    /// request is written.
    #[must_use]
    pub fn with_headers(mut self, headers: &[(&str, &str)]) -> Self {
        self.headers = headers
            .iter()
            .map(|(n, v)| ((*n).to_owned(), (*v).to_owned()))
            .collect();
        self
    }

    /// Bytes the caller's fields add to the request.
    #[must_use]
    pub fn headers_len(&self) -> usize {
        self.headers
            .iter()
            .map(|(n, v)| n.len() + v.len() + 4)
            .sum()
    }

    /// The `Sec-WebSocket-Key` sent.
    #[must_use]
    pub fn key(&self) -> &str {
        &self.key
    }

    /// Writes the upgrade request for `path` (origin form, already percent-encoded) on `host`
    /// into `out`, with the fields of [`with_headers`](Self::with_headers); returns its length.
    ///
    /// # Errors
    ///
    /// As [`RequestWriter`]: an invalid path or field, or [`EncodeError::BufferFull`];
    /// [`EncodeError::InvalidHeaderName`] for a field the handshake writes itself (`host`,
    /// `upgrade`, `connection`, `sec-websocket-*`).
    pub fn write_request(
        &self,
        host: &str,
        path: &str,
        out: &mut [u8],
    ) -> Result<usize, EncodeError> {
        let mut head = RequestWriter::new(out, "GET", path)?.headers(Version::Http11)?;
        head.header("host", host)?
            .header("upgrade", "websocket")?
            .header("connection", "Upgrade")?
            .header("sec-websocket-key", &self.key)?
            .header("sec-websocket-version", VERSION)?;
        if !self.protocols.is_empty() {
            head.header("sec-websocket-protocol", self.protocols.join(", "))?;
        }
        if let Some(deflate) = &self.deflate {
            head.header("sec-websocket-extensions", deflate.offer())?;
        }
        for (name, value) in &self.headers {
            if MANAGED_HEADERS.iter().any(|m| name.eq_ignore_ascii_case(m)) {
                return Err(EncodeError::InvalidHeaderName);
            }
            head.header(name, value)?;
        }
        head.finish()
    }

    /// Checks the server's response head (section 4.1, the client's requirements).
    ///
    /// # Errors
    ///
    /// Any [`HandshakeError`]: the client fails the connection.
    pub fn verify(&self, response: &Response<'_>) -> Result<Negotiated, HandshakeError> {
        if response.status() != 101 {
            return Err(HandshakeError::NotSwitching(response.status()));
        }
        let headers = response.headers();
        let connection_upgrade = headers
            .get_all("connection")
            .any(|v| has_token(v, "upgrade"));
        if !connection_upgrade
            || !response
                .upgrade()
                .is_some_and(|u| has_token(u, "websocket"))
        {
            return Err(HandshakeError::NotUpgrade);
        }
        let accept = headers.get("sec-websocket-accept").map(<[u8]>::trim_ascii);
        if accept != Some(accept_key(self.key.as_bytes()).as_bytes()) {
            return Err(HandshakeError::AcceptMismatch);
        }
        self.agreed(response)
    }

    /// The fields of an extended `CONNECT` that opens the WebSocket over HTTP/2 (RFC 8441
    /// section 5): those of [`write_request`](Self::write_request) but the key, `host`
    /// (the `:authority`), `upgrade` and `connection`, which HTTP/2 has no use for.
    ///
    /// # Errors
    ///
    /// [`EncodeError::InvalidHeaderName`] for a field the handshake writes itself.
    pub fn extended_connect_fields(&self) -> Result<Vec<Field<'_>>, EncodeError> {
        let mut fields = vec![("sec-websocket-version", Cow::Borrowed(VERSION))];
        if !self.protocols.is_empty() {
            fields.push((
                "sec-websocket-protocol",
                self.protocols.join(", ").into_bytes().into(),
            ));
        }
        if let Some(deflate) = &self.deflate {
            fields.push((
                "sec-websocket-extensions",
                deflate.offer().into_bytes().into(),
            ));
        }
        for (name, value) in &self.headers {
            if MANAGED_HEADERS.iter().any(|m| name.eq_ignore_ascii_case(m)) {
                return Err(EncodeError::InvalidHeaderName);
            }
            fields.push((name, Cow::Borrowed(value.as_bytes())));
        }
        Ok(fields)
    }

    /// Checks the server's answer to the extended `CONNECT` of
    /// [`extended_connect_fields`](Self::extended_connect_fields): a `2xx` opens the
    /// WebSocket (RFC 8441 section 5; no key to check), with the same checks of the
    /// subprotocol and extensions as [`verify`](Self::verify).
    ///
    /// # Errors
    ///
    /// [`HandshakeError::NotSwitching`] for another status; the others as
    /// [`verify`](Self::verify).
    pub fn verify_extended_connect(
        &self,
        response: &Response<'_>,
    ) -> Result<Negotiated, HandshakeError> {
        if !(200..300).contains(&response.status()) {
            return Err(HandshakeError::NotSwitching(response.status()));
        }
        self.agreed(response)
    }

    /// What the answer agreed to: the subprotocol and extensions it chose among those
    /// offered, and its cookies.
    fn agreed(&self, response: &Response<'_>) -> Result<Negotiated, HandshakeError> {
        let headers = response.headers();
        let chosen: Vec<&[u8]> = tokens(headers.get_all("sec-websocket-protocol")).collect();
        let protocol = match chosen[..] {
            [] => None,
            [one] => Some(
                self.protocols
                    .iter()
                    .find(|p| p.as_bytes() == one)
                    .ok_or(HandshakeError::UnexpectedProtocol)?
                    .clone(),
            ),
            _ => return Err(HandshakeError::UnexpectedProtocol),
        };
        let extensions = headers.get_all("sec-websocket-extensions");
        let deflate = match &self.deflate {
            Some(config) => config
                .verify(extensions)
                .map_err(HandshakeError::Extensions)?,
            None if headers.get("sec-websocket-extensions").is_some() => {
                return Err(HandshakeError::Extensions(
                    NegotiationError::UnexpectedExtension,
                ))
            }
            None => None,
        };
        let set_cookies = headers
            .get_all("set-cookie")
            .map(|v| String::from_utf8_lossy(v).into_owned())
            .collect();
        Ok(Negotiated {
            protocol,
            deflate,
            set_cookies,
        })
    }
}
