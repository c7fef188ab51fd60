//! `http://` and `https://` URLs: just enough of RFC 3986 to open a
//! connection, write `Host` and the request target, and follow a redirect.

use std::fmt;

/// Why a URL was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum UrlError {
    /// No `scheme://` in front.
    MissingScheme,
    /// A scheme other than `http` and `https`.
    UnsupportedScheme(String),
    /// `user:password@` in the authority (credentials go in a header).
    UserInfo,
    /// An empty host, or one with characters no host name has.
    InvalidHost,
    /// A port that is not a number from 1 to 65535.
    InvalidPort,
}

impl fmt::Display for UrlError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            UrlError::MissingScheme => f.write_str("no http:// or https:// in front"),
            UrlError::UnsupportedScheme(s) => write!(f, "unsupported scheme {s:?}"),
            UrlError::UserInfo => f.write_str("credentials in the URL are not supported"),
            UrlError::InvalidHost => f.write_str("invalid host"),
            UrlError::InvalidPort => f.write_str("invalid port"),
        }
    }
}

impl std::error::Error for UrlError {}

/// The transport a URL asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Scheme {
    /// Plain TCP.
    Http,
    /// TLS over TCP.
    Https,
}

impl Scheme {
    /// The scheme's name.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Scheme::Http => "http",
            Scheme::Https => "https",
        }
    }

    fn default_port(self) -> u16 {
        match self {
            Scheme::Http => 80,
            Scheme::Https => 443,
        }
    }
}

/// Where a connection goes: connections are pooled per origin.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Origin {
    scheme: Scheme,
    /// Without the brackets of an IPv6 literal, as the resolver wants it.
    host: String,
    port: u16,
}

impl Origin {
    /// The scheme.
    #[must_use]
    pub fn scheme(&self) -> Scheme {
        self.scheme
    }

    /// The host name or address.
    #[must_use]
    pub fn host(&self) -> &str {
        &self.host
    }

    /// The port.
    #[must_use]
    pub fn port(&self) -> u16 {
        self.port
    }

    /// `host:port`, an IPv6 address in brackets so the port stays apart:
    /// how errors name the peer.
    pub(crate) fn host_port(&self) -> String {
        if self.host.contains(':') {
            format!("[{}]:{}", self.host, self.port)
        } else {
            format!("{}:{}", self.host, self.port)
        }
    }
}

/// A parsed `http://` or `https://` URL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Url {
    origin: Origin,
    /// `host[:port]` as the `Host` field carries it (port only when not
    /// the default, IPv6 in brackets).
    authority: String,
    /// Path and query, percent-encoded, never empty; the fragment dropped.
    target: String,
}

impl Url {
    /// Parses `scheme://host[:port][/path][?query][#fragment]`.
    ///
    /// Bytes that cannot appear in a request target (spaces, non-ASCII) are
    /// percent-encoded; the fragment is dropped, since it is never sent.
    ///
    /// # Errors
    ///
    /// See [`UrlError`].
    pub fn parse(text: &str) -> Result<Url, UrlError> {
        let (scheme, rest) = text.split_once("://").ok_or(UrlError::MissingScheme)?;
        let scheme = if scheme.eq_ignore_ascii_case("http") {
            Scheme::Http
        } else if scheme.eq_ignore_ascii_case("https") {
            Scheme::Https
        } else {
            return Err(UrlError::UnsupportedScheme(scheme.to_owned()));
        };
        let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
        let (authority, target) = rest.split_at(end);
        if authority.contains('@') {
            return Err(UrlError::UserInfo);
        }
        let (host, port) = split_port(authority)?;
        let port = port.unwrap_or(scheme.default_port());
        let bracketed = host.starts_with('[');
        let bare = host.trim_start_matches('[').trim_end_matches(']');
        let valid = |c: char| c.is_ascii_alphanumeric() || "-._~:%".contains(c);
        if bare.is_empty() || !bare.chars().all(valid) || (bare.contains(':') && !bracketed) {
            return Err(UrlError::InvalidHost);
        }
        let host_field = host.to_ascii_lowercase();
        let authority = if port == scheme.default_port() {
            host_field
        } else {
            format!("{host_field}:{port}")
        };
        let target = target.split('#').next().unwrap_or_default();
        let mut encoded = String::with_capacity(target.len() + 1);
        if !target.starts_with('/') {
            encoded.push('/');
        }
        encode_target(target, &mut encoded);
        Ok(Url {
            origin: Origin {
                scheme,
                host: bare.to_ascii_lowercase(),
                port,
            },
            authority,
            target: encoded,
        })
    }

    /// Resolves a `Location` against this URL (RFC 3986 section 5.2, less
    /// dot-segment removal, which servers do themselves).
    ///
    /// # Errors
    ///
    /// See [`UrlError`].
    pub fn join(&self, location: &str) -> Result<Url, UrlError> {
        if has_scheme(location) {
            return Url::parse(location);
        }
        if location.is_empty() || location.starts_with('#') {
            // The same document (a fragment is never sent).
            return Ok(self.clone());
        }
        let scheme = self.origin.scheme.as_str();
        if let Some(rest) = location.strip_prefix("//") {
            return Url::parse(&format!("{scheme}://{rest}"));
        }
        let path = if location.starts_with('/') {
            location.to_owned()
        } else if location.starts_with('?') {
            let path = self.target.split('?').next().unwrap_or("/");
            format!("{path}{location}")
        } else {
            let path = self.target.split('?').next().unwrap_or("/");
            let dir = path.rsplit_once('/').map_or("", |(dir, _)| dir);
            format!("{dir}/{location}")
        };
        Url::parse(&format!("{scheme}://{}{path}", self.authority))
    }

    /// The scheme.
    #[must_use]
    pub fn scheme(&self) -> Scheme {
        self.origin.scheme
    }

    /// Where to connect.
    #[must_use]
    pub fn origin(&self) -> &Origin {
        &self.origin
    }

    /// The value of the `Host` field.
    #[must_use]
    pub fn authority(&self) -> &str {
        &self.authority
    }

    /// The request target: path and query, percent-encoded.
    #[must_use]
    pub fn target(&self) -> &str {
        &self.target
    }
}

impl fmt::Display for Url {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}://{}{}",
            self.origin.scheme.as_str(),
            self.authority,
            self.target
        )
    }
}

/// Whether `reference` begins with a scheme (RFC 3986 section 3.1: a letter, then letters,
/// digits, `+`, `-` or `.`, then `:`), rather than being a path that holds a `://` further
/// on (`/login?next=https://…`).
fn has_scheme(reference: &str) -> bool {
    reference.split_once(':').is_some_and(|(scheme, _)| {
        let mut chars = scheme.chars();
        chars.next().is_some_and(|c| c.is_ascii_alphabetic())
            && chars.all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c))
    })
}

/// Splits `host[:port]`, minding IPv6 brackets.
fn split_port(authority: &str) -> Result<(&str, Option<u16>), UrlError> {
    let colon = match authority.rfind(']') {
        Some(close) => authority[close..].find(':').map(|at| close + at),
        None if authority.matches(':').count() == 1 => authority.find(':'),
        None => None,
    };
    let Some(colon) = colon else {
        return Ok((authority, None));
    };
    let port = &authority[colon + 1..];
    if port.is_empty() {
        return Ok((&authority[..colon], None));
    }
    match port.parse::<u16>() {
        Ok(p) if p > 0 && port.bytes().all(|b| b.is_ascii_digit()) => {
            Ok((&authority[..colon], Some(p)))
        }
        _ => Err(UrlError::InvalidPort),
    }
}

/// Appends `target`, percent-encoding every byte outside visible ASCII.
fn encode_target(target: &str, out: &mut String) {
    const HEX: &[u8; 16] = b"0123456789ABCDEF";
    for &b in target.as_bytes() {
        if (0x21..=0x7e).contains(&b) {
            out.push(char::from(b));
        } else {
            out.push('%');
            out.push(char::from(HEX[usize::from(b >> 4)]));
            out.push(char::from(HEX[usize::from(b & 0xf)]));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parts() {
        let url = Url::parse("HTTP://Example.com:8080/a b?q=1#frag").unwrap();
        assert_eq!(url.scheme(), Scheme::Http);
        assert_eq!(url.origin().host(), "example.com");
        assert_eq!(url.origin().port(), 8080);
        assert_eq!(url.authority(), "example.com:8080");
        assert_eq!(url.target(), "/a%20b?q=1");
        assert_eq!(url.to_string(), "http://example.com:8080/a%20b?q=1");

        let url = Url::parse("https://h?x").unwrap();
        assert_eq!((url.origin().port(), url.authority()), (443, "h"));
        assert_eq!(url.target(), "/?x");

        let url = Url::parse("http://[::1]:9/").unwrap();
        assert_eq!((url.origin().host(), url.authority()), ("::1", "[::1]:9"));
        assert_eq!(url.origin().host_port(), "[::1]:9");
        let url = Url::parse("https://[::1]/").unwrap();
        assert_eq!(url.origin().host_port(), "[::1]:443");
        let url = Url::parse("https://h/").unwrap();
        assert_eq!(url.origin().host_port(), "h:443");
        assert_eq!(Url::parse("http://h:/").unwrap().origin().port(), 80);
    }

    #[test]
    fn refusals() {
        let cases = [
            ("example.com", UrlError::MissingScheme),
            ("ftp://h/", UrlError::UnsupportedScheme("ftp".into())),
            ("http://u:p@h/", UrlError::UserInfo),
            ("http:///x", UrlError::InvalidHost),
            ("http://h h/", UrlError::InvalidHost),
            ("http://::1/", UrlError::InvalidHost),
            ("http://h:0/", UrlError::InvalidPort),
            ("http://h:65536/", UrlError::InvalidPort),
            ("http://h:+80/", UrlError::InvalidPort),
        ];
        for (text, err) in cases {
            assert_eq!(Url::parse(text), Err(err), "{text}");
        }
    }

    #[test]
    fn join() {
        let base = Url::parse("http://h:81/a/b?q").unwrap();
        let joined = |loc: &str| base.join(loc).unwrap().to_string();
        assert_eq!(joined("/x"), "http://h:81/x");
        assert_eq!(joined("c?d"), "http://h:81/a/c?d");
        assert_eq!(joined("?z"), "http://h:81/a/b?z");
        assert_eq!(joined("//other/p"), "http://other/p");
        assert_eq!(joined("https://s/"), "https://s/");
        assert_eq!(joined("HTTPS://s/"), "https://s/");
        // A `://` past the path's start is no scheme.
        assert_eq!(
            joined("/login?next=https://h/x"),
            "http://h:81/login?next=https://h/x"
        );
        assert_eq!(joined("c?to=http://x"), "http://h:81/a/c?to=http://x");
        // The same document.
        assert_eq!(joined(""), "http://h:81/a/b?q");
        assert_eq!(joined("#part"), "http://h:81/a/b?q");
        assert_eq!(base.join("mailto:x"), Err(UrlError::MissingScheme));
    }
}
