//! `Sec-WebSocket-Extensions` for permessage-deflate (RFC 7692 section 5): the client's offer,
//! the server's choice among offers, and the client's check of the answer.

use std::borrow::Cow;
use std::fmt::{self, Write as _};

/// The extension's registered name.
const NAME: &str = "permessage-deflate";
/// LZ77 window sizes RFC 7692 allows, as powers of two.
const WINDOW_BITS: std::ops::RangeInclusive<u8> = 8..=15;

/// What this endpoint wants, offers or accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DeflateConfig {
    /// Ask (client) or require (server) that the server resets its compressor per message.
    pub server_no_context_takeover: bool,
    /// Ask (client) or require (server) that the client resets its compressor per message.
    pub client_no_context_takeover: bool,
    /// The largest server window to use or accept (8..=15).
    pub server_max_window_bits: u8,
    /// The largest client window to use or accept (8..=15).
    pub client_max_window_bits: u8,
    /// zlib compression level (0..=9) for what this endpoint sends.
    pub level: u32,
}

impl Default for DeflateConfig {
    /// Full windows, context takeover both ways, level 1 (fast: most WebSocket traffic is small
    /// and latency-bound).
    fn default() -> Self {
        Self {
            server_no_context_takeover: false,
            client_no_context_takeover: false,
            server_max_window_bits: 15,
            client_max_window_bits: 15,
            level: 1,
        }
    }
}

/// The parameters both ends agreed on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DeflateParams {
    /// The server resets its compressor after each message.
    pub server_no_context_takeover: bool,
    /// The client resets its compressor after each message.
    pub client_no_context_takeover: bool,
    /// The server's window, as a power of two.
    pub server_max_window_bits: u8,
    /// The client's window, as a power of two.
    pub client_max_window_bits: u8,
}

/// Why a server's `Sec-WebSocket-Extensions` answer cannot be accepted; the client fails the
/// connection (RFC 6455 section 4.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum NegotiationError {
    /// The header does not follow the extension-list grammar.
    Syntax,
    /// An extension the client did not offer, or more than one.
    UnexpectedExtension,
    /// A parameter that is unknown, repeated, has a bad value, or was not allowed by the offer.
    InvalidParameter,
}

impl fmt::Display for NegotiationError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            NegotiationError::Syntax => "malformed Sec-WebSocket-Extensions",
            NegotiationError::UnexpectedExtension => "extension not offered",
            NegotiationError::InvalidParameter => "invalid permessage-deflate parameter",
        })
    }
}

impl std::error::Error for NegotiationError {}

/// One `permessage-deflate` element with its parameters checked: no unknown or repeated
/// names, window bits in 8..=15, and values only where they belong.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
struct Element {
    server_no_context_takeover: bool,
    client_no_context_takeover: bool,
    server_max_window_bits: Option<u8>,
    /// `Some(None)`: present without a value (an offer saying "you may limit my window").
    client_max_window_bits: Option<Option<u8>>,
}

impl Element {
    fn from_params<'a>(
        params: impl IntoIterator<Item = (&'a str, Option<Cow<'a, str>>)>,
    ) -> Result<Self, NegotiationError> {
        let mut e = Element::default();
        let invalid = NegotiationError::InvalidParameter;
        for (name, value) in params {
            let bits = match value.as_deref() {
                None => None,
                Some(v) => Some(window_bits(v).ok_or(invalid)?),
            };
            if name.eq_ignore_ascii_case("server_no_context_takeover") {
                if e.server_no_context_takeover || bits.is_some() {
                    return Err(invalid);
                }
                e.server_no_context_takeover = true;
            } else if name.eq_ignore_ascii_case("client_no_context_takeover") {
                if e.client_no_context_takeover || bits.is_some() {
                    return Err(invalid);
                }
                e.client_no_context_takeover = true;
            } else if name.eq_ignore_ascii_case("server_max_window_bits") {
                if e.server_max_window_bits.is_some() {
                    return Err(invalid);
                }
                e.server_max_window_bits = Some(bits.ok_or(invalid)?);
            } else if name.eq_ignore_ascii_case("client_max_window_bits") {
                if e.client_max_window_bits.is_some() {
                    return Err(invalid);
                }
                e.client_max_window_bits = Some(bits);
            } else {
                return Err(invalid);
            }
        }
        Ok(e)
    }
}

/// `8`..`15` written as 1*DIGIT without leading zeros (RFC 7692 section 7.1.2).
fn window_bits(value: &str) -> Option<u8> {
    if value.starts_with('0') || value.len() > 2 {
        return None;
    }
    let bits: u8 = value.parse().ok()?;
    WINDOW_BITS.contains(&bits).then_some(bits)
}

impl DeflateConfig {
    /// The client's offer, a `Sec-WebSocket-Extensions` value. It always includes
    /// `client_max_window_bits` so the server may choose a smaller client window.
    #[must_use]
    pub fn offer(&self) -> String {
        // The parameters this side asks for are those a server would answer with, and a
        // bare `client_max_window_bits` (section 7.1.2.2) when the client window is full.
        let mut s = DeflateParams {
            server_no_context_takeover: self.server_no_context_takeover,
            client_no_context_takeover: self.client_no_context_takeover,
            server_max_window_bits: self.server_max_window_bits,
            client_max_window_bits: self.client_max_window_bits,
        }
        .response();
        if self.client_max_window_bits >= 15 {
            s.push_str("; client_max_window_bits");
        }
        s
    }

    /// Server side: picks the first acceptable `permessage-deflate` offer among the
    /// `Sec-WebSocket-Extensions` values (in order; offers with invalid parameters are
    /// declined, as section 5 requires). `None`: no compression. A value that does not parse
    /// declines everything it holds.
    pub fn accept<'a>(&self, values: impl IntoIterator<Item = &'a [u8]>) -> Option<DeflateParams> {
        for value in values {
            let Ok(extensions) = parse_extensions(value) else {
                continue;
            };
            for (name, params) in extensions {
                if !name.eq_ignore_ascii_case(NAME) {
                    continue;
                }
                let Ok(offer) = Element::from_params(params) else {
                    continue;
                };
                return Some(self.answer(&offer));
            }
        }
        None
    }

    fn answer(&self, offer: &Element) -> DeflateParams {
        let client_bits = match offer.client_max_window_bits {
            // The client did not say it can limit its window: it will use 15.
            None => 15,
            Some(bits) => bits.unwrap_or(15).min(self.client_max_window_bits),
        };
        DeflateParams {
            server_no_context_takeover: offer.server_no_context_takeover
                || self.server_no_context_takeover,
            client_no_context_takeover: offer.client_no_context_takeover
                || self.client_no_context_takeover,
            server_max_window_bits: offer
                .server_max_window_bits
                .unwrap_or(15)
                .min(self.server_max_window_bits),
            client_max_window_bits: client_bits,
        }
    }

    /// Client side: checks the server's `Sec-WebSocket-Extensions` values against the offer
    /// [`offer`](DeflateConfig::offer) made. `Ok(None)`: the server declined compression.
    pub fn verify<'a>(
        &self,
        values: impl IntoIterator<Item = &'a [u8]>,
    ) -> Result<Option<DeflateParams>, NegotiationError> {
        let mut chosen = None;
        for value in values {
            for (name, params) in parse_extensions(value)? {
                if !name.eq_ignore_ascii_case(NAME) || chosen.is_some() {
                    return Err(NegotiationError::UnexpectedExtension);
                }
                chosen = Some(Element::from_params(params)?);
            }
        }
        let Some(answer) = chosen else {
            return Ok(None);
        };
        let invalid = NegotiationError::InvalidParameter;
        let server_bits = answer.server_max_window_bits.unwrap_or(15);
        if self.server_max_window_bits < 15 && server_bits > self.server_max_window_bits {
            return Err(invalid);
        }
        let client_bits = match answer.client_max_window_bits {
            None => self.client_max_window_bits,
            Some(None) => return Err(invalid),
            Some(Some(bits))
                if bits > self.client_max_window_bits && self.client_max_window_bits < 15 =>
            {
                return Err(invalid)
            }
            Some(Some(bits)) => bits.min(self.client_max_window_bits),
        };
        if self.server_no_context_takeover && !answer.server_no_context_takeover {
            return Err(invalid);
        }
        Ok(Some(DeflateParams {
            server_no_context_takeover: answer.server_no_context_takeover,
            client_no_context_takeover: answer.client_no_context_takeover
                || self.client_no_context_takeover,
            server_max_window_bits: server_bits,
            client_max_window_bits: client_bits,
        }))
    }
}

impl DeflateParams {
    /// The server's answer, a `Sec-WebSocket-Extensions` value.
    #[must_use]
    pub fn response(&self) -> String {
        let mut s = String::from(NAME);
        if self.server_no_context_takeover {
            s.push_str("; server_no_context_takeover");
        }
        if self.client_no_context_takeover {
            s.push_str("; client_no_context_takeover");
        }
        if self.server_max_window_bits < 15 {
            let _ = write!(
                s,
                "; server_max_window_bits={}",
                self.server_max_window_bits
            );
        }
        if self.client_max_window_bits < 15 {
            let _ = write!(
                s,
                "; client_max_window_bits={}",
                self.client_max_window_bits
            );
        }
        s
    }
}

/// An extension name and its parameters (values unquoted).
type Extension<'a> = (&'a str, Vec<(&'a str, Option<Cow<'a, str>>)>);

/// Parses `1#( token *( OWS ";" OWS token [ "=" ( token / quoted-string ) ] ) )`
/// (RFC 6455 section 9.1), allowing empty list elements as RFC 9110 section 5.6.1 does.
fn parse_extensions(value: &[u8]) -> Result<Vec<Extension<'_>>, NegotiationError> {
    let text = std::str::from_utf8(value).map_err(|_| NegotiationError::Syntax)?;
    let mut p = Lexer { s: text, at: 0 };
    let mut out = Vec::new();
    loop {
        p.ows();
        if p.eat(',') {
            continue;
        }
        if p.done() {
            return Ok(out);
        }
        let name = p.token()?;
        let mut params = Vec::new();
        p.ows();
        while p.eat(';') {
            p.ows();
            let key = p.token()?;
            p.ows();
            let value = if p.eat('=') {
                p.ows();
                Some(p.value()?)
            } else {
                None
            };
            params.push((key, value));
            p.ows();
        }
        out.push((name, params));
        p.ows();
        if !p.done() && !p.eat(',') {
            return Err(NegotiationError::Syntax);
        }
    }
}

struct Lexer<'a> {
    s: &'a str,
    at: usize,
}

impl<'a> Lexer<'a> {
    fn done(&self) -> bool {
        self.at == self.s.len()
    }

    fn ows(&mut self) {
        while matches!(self.s.as_bytes().get(self.at), Some(b' ' | b'\t')) {
            self.at += 1;
        }
    }

    fn eat(&mut self, c: char) -> bool {
        let hit = self.s[self.at..].starts_with(c);
        if hit {
            self.at += c.len_utf8();
        }
        hit
    }

    fn token(&mut self) -> Result<&'a str, NegotiationError> {
        let start = self.at;
        while self.s.as_bytes().get(self.at).is_some_and(|&b| is_tchar(b)) {
            self.at += 1;
        }
        if self.at == start {
            return Err(NegotiationError::Syntax);
        }
        Ok(&self.s[start..self.at])
    }

    fn value(&mut self) -> Result<Cow<'a, str>, NegotiationError> {
        if !self.eat('"') {
            return self.token().map(Cow::Borrowed);
        }
        let mut out = String::new();
        loop {
            let c = self.s[self.at..]
                .chars()
                .next()
                .ok_or(NegotiationError::Syntax)?;
            self.at += c.len_utf8();
            match c {
                '"' => break,
                '\\' => {
                    let c = self.s[self.at..]
                        .chars()
                        .next()
                        .ok_or(NegotiationError::Syntax)?;
                    self.at += c.len_utf8();
                    out.push(c);
                }
                c => out.push(c),
            }
        }
        // RFC 6455 section 9.1: a quoted value must still be a token once unquoted.
        if out.is_empty() || !out.bytes().all(is_tchar) {
            return Err(NegotiationError::Syntax);
        }
        Ok(Cow::Owned(out))
    }
}

/// RFC 9110 `tchar`.
fn is_tchar(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn accept(config: &DeflateConfig, value: &str) -> Option<DeflateParams> {
        config.accept([value.as_bytes()])
    }

    #[test]
    fn parses_lists_params_and_quoted_values() {
        let got =
            parse_extensions(b"foo, permessage-deflate ; client_max_window_bits=\"10\";x ,, bar")
                .unwrap();
        assert_eq!(got.len(), 3);
        assert_eq!(got[1].0, "permessage-deflate");
        assert_eq!(
            got[1].1[0],
            ("client_max_window_bits", Some(Cow::Owned("10".into())))
        );
        assert_eq!(got[1].1[1], ("x", None));
        for bad in ["a;", "a b", "a;b=\"", "a;b=\"c d\"", "a;=1", "a,;"] {
            assert_eq!(
                parse_extensions(bad.as_bytes()),
                Err(NegotiationError::Syntax),
                "{bad}"
            );
        }
    }

    #[test]
    fn offers_name_what_differs_from_the_defaults() {
        let default = DeflateConfig::default();
        assert_eq!(
            default.offer(),
            "permessage-deflate; client_max_window_bits"
        );
        let narrow = DeflateConfig {
            server_no_context_takeover: true,
            client_no_context_takeover: true,
            server_max_window_bits: 10,
            client_max_window_bits: 9,
            ..default
        };
        assert_eq!(
            narrow.offer(),
            "permessage-deflate; server_no_context_takeover; client_no_context_takeover; \
             server_max_window_bits=10; client_max_window_bits=9"
        );
        // Each is an offer a server with the same settings takes as it stands.
        for config in [default, narrow] {
            let p = accept(&config, &config.offer()).unwrap();
            assert_eq!(
                (p.server_max_window_bits, p.client_max_window_bits),
                (config.server_max_window_bits, config.client_max_window_bits)
            );
        }
    }

    #[test]
    fn server_takes_the_first_valid_offer() {
        let c = DeflateConfig::default();
        let p = accept(
            &c,
            "permessage-deflate; server_max_window_bits=16, permessage-deflate; server_max_window_bits=10; client_max_window_bits",
        )
        .unwrap();
        assert_eq!(p.server_max_window_bits, 10);
        assert_eq!(p.client_max_window_bits, 15);
        assert_eq!(
            p.response(),
            "permessage-deflate; server_max_window_bits=10"
        );
    }

    #[test]
    fn server_declines_invalid_and_duplicate_params() {
        let c = DeflateConfig::default();
        for bad in [
            "permessage-deflate; server_max_window_bits",
            "permessage-deflate; server_max_window_bits=7",
            "permessage-deflate; server_max_window_bits=08",
            "permessage-deflate; client_max_window_bits=16",
            "permessage-deflate; server_no_context_takeover; server_no_context_takeover",
            "permessage-deflate; client_max_window_bits; client_max_window_bits=9",
            "permessage-deflate; server_no_context_takeover=1",
            "permessage-deflate; mystery",
            "x-webkit-deflate-frame",
        ] {
            assert_eq!(accept(&c, bad), None, "{bad}");
        }
    }

    #[test]
    fn server_limits_windows_and_contexts_it_is_configured_for() {
        let c = DeflateConfig {
            client_no_context_takeover: true,
            client_max_window_bits: 9,
            server_max_window_bits: 12,
            ..DeflateConfig::default()
        };
        let p = accept(
            &c,
            "permessage-deflate; client_max_window_bits; server_no_context_takeover",
        )
        .unwrap();
        assert_eq!(
            p,
            DeflateParams {
                server_no_context_takeover: true,
                client_no_context_takeover: true,
                server_max_window_bits: 12,
                client_max_window_bits: 9,
            }
        );
        // Without client_max_window_bits in the offer the server cannot limit the client.
        assert_eq!(
            accept(&c, "permessage-deflate")
                .unwrap()
                .client_max_window_bits,
            15
        );
    }

    #[test]
    fn client_checks_the_answer_against_its_offer() {
        let c = DeflateConfig {
            server_max_window_bits: 10,
            ..DeflateConfig::default()
        };
        let verify = |v: &str| c.verify([v.as_bytes()]);
        assert_eq!(verify("").unwrap(), None);
        let p = verify("permessage-deflate; server_max_window_bits=9; client_max_window_bits=11")
            .unwrap()
            .unwrap();
        assert_eq!(
            (p.server_max_window_bits, p.client_max_window_bits),
            (9, 11)
        );
        assert_eq!(
            verify("permessage-deflate; server_max_window_bits=12"),
            Err(NegotiationError::InvalidParameter)
        );
        assert_eq!(
            verify("permessage-deflate; client_max_window_bits"),
            Err(NegotiationError::InvalidParameter)
        );
        assert_eq!(
            verify("permessage-deflate, permessage-deflate"),
            Err(NegotiationError::UnexpectedExtension)
        );
        assert_eq!(
            verify("x-other"),
            Err(NegotiationError::UnexpectedExtension)
        );
    }
}
