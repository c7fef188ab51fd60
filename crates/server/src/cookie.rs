//! Setting cookies: a `set-cookie` field (RFC 6265bis) written from its parts, each checked,
//! so that a value from a request cannot add attributes of its own (a `;`) or break the
//! field, and a cookie browsers would drop (`SameSite=None` without `Secure`, a `__Host-`
//! cookie with a `Domain`) is refused where it is made.

use std::fmt;
use std::time::{Duration, SystemTime};

use ringwire_http1::encode::DateCache;

/// A cookie to set, written with [`Response::cookie`](crate::Response::cookie).
///
/// ```
/// use std::time::Duration;
///
/// use ringwire_server::cookie::{SameSite, SetCookie};
/// use ringwire_server::Response;
///
/// let session = SetCookie::new("session", "b4d5e6")
///     .path("/")
///     .max_age(Duration::from_secs(3600))
///     .http_only()
///     .secure()
///     .same_site(SameSite::Lax);
/// assert_eq!(
///     session.to_field().as_deref(),
///     Ok("session=b4d5e6; Path=/; Max-Age=3600; Secure; HttpOnly; SameSite=Lax")
/// );
/// let response = Response::text("signed in\n").cookie(&session);
/// # let _ = response;
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SetCookie<'a> {
    name: &'a str,
    value: &'a str,
    path: Option<&'a str>,
    domain: Option<&'a str>,
    max_age: Option<Duration>,
    expires: Option<SystemTime>,
    secure: bool,
    http_only: bool,
    same_site: Option<SameSite>,
    partitioned: bool,
}

/// Whether a browser sends the cookie with requests other sites start.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SameSite {
    /// Only with requests from the site itself.
    Strict,
    /// Also when the user follows a link from another site (browsers' default).
    Lax,
    /// With every request; requires [`SetCookie::secure`].
    None,
}

/// A cookie that cannot be set as it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CookieError {
    /// The name is empty or not a token (RFC 9110 `tchar`s only).
    Name,
    /// The value has a byte a cookie value cannot hold: a control character, a space, a
    /// `"`, `,`, `;` or `\`.
    Value,
    /// The path or domain has a control character or a `;`.
    Attribute(&'static str),
    /// `SameSite=None` or `Partitioned` (the attribute named) without `Secure`, which
    /// browsers drop.
    NeedsSecure(&'static str),
    /// A `__Secure-` cookie without `Secure`, or a `__Host-` one without `Secure`, with a
    /// `Domain`, or with a path other than `/`: browsers drop them.
    Prefix(&'static str),
}

impl fmt::Display for CookieError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CookieError::Name => f.write_str("a cookie name must be a non-empty token"),
            CookieError::Value => f.write_str(
                "a cookie value cannot hold control characters, spaces, '\"', ',', ';' or '\\'",
            ),
            CookieError::Attribute(name) => {
                write!(f, "a cookie's {name} cannot hold control characters or ';'")
            }
            CookieError::NeedsSecure(attribute) => {
                write!(f, "{attribute} without Secure, which browsers drop")
            }
            CookieError::Prefix(prefix) => write!(
                f,
                "a {prefix} cookie wants Secure{}, or browsers drop it",
                if *prefix == "__Host-" {
                    ", Path=/ and no Domain"
                } else {
                    ""
                }
            ),
        }
    }
}

impl std::error::Error for CookieError {}

impl<'a> SetCookie<'a> {
    /// `name=value`, a session cookie for the request's host and path until attributes say
    /// otherwise.
    #[must_use]
    pub fn new(name: &'a str, value: &'a str) -> Self {
        SetCookie {
            name,
            value,
            path: None,
            domain: None,
            max_age: None,
            expires: None,
            secure: false,
            http_only: false,
            same_site: None,
            partitioned: false,
        }
    }

    /// The cookie `name` removed: empty, and expired at once (set its `path` and `domain`
    /// as it was set).
    #[must_use]
    pub fn removal(name: &'a str) -> Self {
        SetCookie::new(name, "").max_age(Duration::ZERO)
    }

    /// Sent with requests for paths under `path`.
    #[must_use]
    pub fn path(self, path: &'a str) -> Self {
        SetCookie {
            path: Some(path),
            ..self
        }
    }

    /// Sent to `domain` and its subdomains (without it, to the host that set it alone).
    #[must_use]
    pub fn domain(self, domain: &'a str) -> Self {
        SetCookie {
            domain: Some(domain),
            ..self
        }
    }

    /// Kept for `age` (in whole seconds), then dropped; zero drops it at once.
    #[must_use]
    pub fn max_age(self, age: Duration) -> Self {
        SetCookie {
            max_age: Some(age),
            ..self
        }
    }

    /// Kept until `time` (`Max-Age` wins where both are given).
    #[must_use]
    pub fn expires(self, time: SystemTime) -> Self {
        SetCookie {
            expires: Some(time),
            ..self
        }
    }

    /// Sent over HTTPS only.
    #[must_use]
    pub fn secure(self) -> Self {
        SetCookie {
            secure: true,
            ..self
        }
    }

    /// Hidden from the page's scripts.
    #[must_use]
    pub fn http_only(self) -> Self {
        SetCookie {
            http_only: true,
            ..self
        }
    }

    /// When requests from other sites carry it.
    #[must_use]
    pub fn same_site(self, same_site: SameSite) -> Self {
        SetCookie {
            same_site: Some(same_site),
            ..self
        }
    }

    /// Kept apart for each site that embeds this one (CHIPS); requires `Secure`.
    #[must_use]
    pub fn partitioned(self) -> Self {
        SetCookie {
            partitioned: true,
            ..self
        }
    }

    /// The `set-cookie` field's value.
    ///
    /// # Errors
    ///
    /// A part that cannot be written, or a combination browsers drop ([`CookieError`]).
    pub fn to_field(&self) -> Result<String, CookieError> {
        self.check()?;
        let mut field = format!("{}={}", self.name, self.value);
        if let Some(path) = self.path {
            field.push_str("; Path=");
            field.push_str(path);
        }
        if let Some(domain) = self.domain {
            field.push_str("; Domain=");
            field.push_str(domain);
        }
        if let Some(age) = self.max_age {
            field.push_str(&format!("; Max-Age={}", age.as_secs()));
        }
        if let Some(time) = self.expires {
            let mut date = DateCache::new();
            field.push_str("; Expires=");
            field.push_str(&String::from_utf8_lossy(date.update(time)));
        }
        if self.secure {
            field.push_str("; Secure");
        }
        if self.http_only {
            field.push_str("; HttpOnly");
        }
        if let Some(same_site) = self.same_site {
            field.push_str(match same_site {
                SameSite::Strict => "; SameSite=Strict",
                SameSite::Lax => "; SameSite=Lax",
                SameSite::None => "; SameSite=None",
            });
        }
        if self.partitioned {
            field.push_str("; Partitioned");
        }
        Ok(field)
    }

    fn check(&self) -> Result<(), CookieError> {
        if self.name.is_empty() || !self.name.bytes().all(is_tchar) {
            return Err(CookieError::Name);
        }
        if !self.value.bytes().all(is_cookie_octet) {
            return Err(CookieError::Value);
        }
        for (name, attribute) in [("path", self.path), ("domain", self.domain)] {
            let bad = |b: u8| b.is_ascii_control() || b == b';';
            if attribute.is_some_and(|a| a.bytes().any(bad)) {
                return Err(CookieError::Attribute(name));
            }
        }
        if self.same_site == Some(SameSite::None) && !self.secure {
            return Err(CookieError::NeedsSecure("SameSite=None"));
        }
        if self.partitioned && !self.secure {
            return Err(CookieError::NeedsSecure("Partitioned"));
        }
        if self.name.starts_with("__Secure-") && !self.secure {
            return Err(CookieError::Prefix("__Secure-"));
        }
        let host_only = self.secure && self.domain.is_none() && self.path == Some("/");
        if self.name.starts_with("__Host-") && !host_only {
            return Err(CookieError::Prefix("__Host-"));
        }
        Ok(())
    }
}

/// RFC 9110's `tchar`.
fn is_tchar(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}

/// RFC 6265's `cookie-octet`: printable ASCII but space, `"`, `,`, `;` and `\`.
fn is_cookie_octet(b: u8) -> bool {
    matches!(b, 0x21 | 0x23..=0x2b | 0x2d..=0x3a | 0x3c..=0x5b | 0x5d..=0x7e)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_attribute_in_order() {
        let expires = SystemTime::UNIX_EPOCH + Duration::from_secs(784_111_777);
        let cookie = SetCookie::new("__Host-id", "a1%2Fb")
            .path("/")
            .max_age(Duration::from_millis(90_500))
            .expires(expires)
            .secure()
            .http_only()
            .same_site(SameSite::None)
            .partitioned();
        assert_eq!(
            cookie.to_field().as_deref(),
            Ok(
                "__Host-id=a1%2Fb; Path=/; Max-Age=90; Expires=Sun, 06 Nov 1994 08:49:37 GMT; \
                Secure; HttpOnly; SameSite=None; Partitioned"
            )
        );
        let gone = SetCookie::removal("id").path("/app").domain("example.com");
        assert_eq!(
            gone.to_field().as_deref(),
            Ok("id=; Path=/app; Domain=example.com; Max-Age=0")
        );
    }

    #[test]
    fn what_would_break_the_field_or_be_dropped_is_refused() {
        let refused = |cookie: SetCookie<'_>| cookie.to_field().unwrap_err();
        assert_eq!(refused(SetCookie::new("", "v")), CookieError::Name);
        assert_eq!(refused(SetCookie::new("a b", "v")), CookieError::Name);
        assert_eq!(refused(SetCookie::new("a=", "v")), CookieError::Name);
        // A value from a request adds no attribute: `;` and the rest are refused.
        for value in [
            "x; Domain=evil.com",
            "a b",
            "\"q\"",
            "a,b",
            "a\\b",
            "a\r\nb",
            "é",
        ] {
            assert_eq!(
                refused(SetCookie::new("id", value)),
                CookieError::Value,
                "{value}"
            );
        }
        let path = SetCookie::new("id", "v").path("/; Secure");
        assert_eq!(refused(path), CookieError::Attribute("path"));
        let domain = SetCookie::new("id", "v").domain("a.com\n");
        assert_eq!(refused(domain), CookieError::Attribute("domain"));
        let none = SetCookie::new("id", "v").same_site(SameSite::None);
        assert_eq!(refused(none), CookieError::NeedsSecure("SameSite=None"));
        let partitioned = SetCookie::new("id", "v").partitioned();
        assert_eq!(
            refused(partitioned),
            CookieError::NeedsSecure("Partitioned")
        );
        assert_eq!(
            refused(SetCookie::new("__Secure-id", "v")),
            CookieError::Prefix("__Secure-")
        );
        for host in [
            SetCookie::new("__Host-id", "v").secure(),
            SetCookie::new("__Host-id", "v").secure().path("/a"),
            SetCookie::new("__Host-id", "v")
                .secure()
                .path("/")
                .domain("a.com"),
        ] {
            assert_eq!(refused(host), CookieError::Prefix("__Host-"));
        }
        assert!(SetCookie::new("__Secure-id", "v")
            .secure()
            .to_field()
            .is_ok());
    }
}
