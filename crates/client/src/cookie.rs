//! A cookie jar (RFC 6265): what `Set-Cookie` fields store, and the `Cookie` field each
//! request then carries, as a browser, `curl -b/-c` and reqwest's cookie store keep them.
//!
//! Cookies are matched by host (the setting host only, or its domain and subdomains when
//! the cookie names one), by path, by scheme (`Secure` ones only over `https://`) and by age
//! (`Max-Age`, else `Expires`; neither: the session's). A `Domain` must be the host or one of
//! its parent domains, and not a public suffix (`co.uk`, `github.io`: the compiled-in public
//! suffix list, as browsers and curl's libpsl check it), and an address takes host-only
//! cookies. A jar is shared by the clients given it (behind an
//! `Arc`), and can be written to and read from curl's cookie files (Netscape's format).

use std::fmt::Write as _;
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::{SystemTime, UNIX_EPOCH};

use crate::redirect::Hop;
use crate::{Error, Request, RequestBuffer, Scheme, Url};

/// Cookies kept across requests (RFC 6265): stored from `Set-Cookie` fields, sent in the
/// `Cookie` field of the requests they go with.
///
/// A cookie goes to the host that set it, or to its domain and subdomains when it names
/// one; to its path and below; over `https://` only if `Secure`; until `Max-Age`, else
/// `Expires`, or for the session. A `Domain` must be the host or a parent domain that is
/// not a public suffix (a cookie for `co.uk` or `github.io` would go to every site under
/// it: refused, or kept for the host alone when the host is that suffix, RFC 6265 section
/// 5.3), and an address takes host-only cookies. Cookies go most specific path first, then in the order they were set. Share a
/// jar between clients behind an `Arc`; write it to and read it from curl's cookie files
/// with [`to_netscape`](Self::to_netscape) and [`load_netscape`](Self::load_netscape).
#[derive(Debug, Default)]
pub struct CookieJar {
    cookies: Mutex<Vec<Cookie>>,
}

/// One stored cookie.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Cookie {
    name: String,
    value: String,
    /// Lowercase, without a leading dot.
    domain: String,
    /// Sent to `domain` alone, not its subdomains (no `Domain` attribute).
    host_only: bool,
    path: String,
    secure: bool,
    http_only: bool,
    /// When it expires, in seconds since the epoch; `None` for the session.
    expires: Option<u64>,
}

/// The longest cookie (name and value) kept, as browsers bound it.
const MAX_COOKIE: usize = 4096;

/// The most cookies a jar keeps (the oldest go first), as browsers bound them: servers
/// cannot grow it without end.
const MAX_COOKIES: usize = 3000;

impl CookieJar {
    /// An empty jar.
    #[must_use]
    pub fn new() -> Self {
        CookieJar::default()
    }

    fn cookies(&self) -> MutexGuard<'_, Vec<Cookie>> {
        self.cookies.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// How many cookies the jar holds (expired ones included until next used).
    #[must_use]
    pub fn len(&self) -> usize {
        self.cookies().len()
    }

    /// Whether the jar holds none.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Stores what a `Set-Cookie` field's `value` says, received from `url`: a cookie set,
    /// replaced, or (expired) removed. A field that breaks the rules is ignored.
    pub fn store(&self, url: &Url, value: &[u8]) {
        let Ok(text) = std::str::from_utf8(value) else {
            return;
        };
        if let Some((cookie, expired)) = parse(url, text, now()) {
            let mut cookies = self.cookies();
            cookies.retain(|c| !c.same_slot(&cookie));
            if !expired {
                if cookies.len() == MAX_COOKIES {
                    cookies.remove(0);
                }
                cookies.push(cookie);
            }
        }
    }

    /// The `Cookie` field value for a request to `url`, if any cookie goes with it: most
    /// specific path first, then in the order they were set.
    #[must_use]
    pub fn header(&self, url: &Url) -> Option<String> {
        let now = now();
        let mut cookies = self.cookies();
        cookies.retain(|c| c.expires.is_none_or(|at| at > now));
        let host = url.origin().host().to_ascii_lowercase();
        let path = path_of(url.target());
        let https = url.scheme() == Scheme::Https;
        let mut sent: Vec<&Cookie> = cookies
            .iter()
            .filter(|c| c.matches(&host, path, https))
            .collect();
        // Stable: equal paths keep the order the cookies were set in.
        sent.sort_by_key(|c| std::cmp::Reverse(c.path.len()));
        let mut header = String::new();
        for c in sent {
            if !header.is_empty() {
                header.push_str("; ");
            }
            header.push_str(&c.name);
            header.push('=');
            header.push_str(&c.value);
        }
        (!header.is_empty()).then_some(header)
    }

    /// The jar as a cookie file in Netscape's format, as `curl -c` writes it: one line per
    /// cookie (domain, subdomains too, path, secure, expiry, name, value, tab-separated),
    /// session cookies with expiry 0, `HttpOnly` ones marked `#HttpOnly_`.
    #[must_use]
    pub fn to_netscape(&self) -> String {
        let mut out = String::from("# Netscape HTTP Cookie File\n");
        let flag = |on: bool| if on { "TRUE" } else { "FALSE" };
        for c in self.cookies().iter() {
            let _ = writeln!(
                out,
                "{}{}{}\t{}\t{}\t{}\t{}\t{}\t{}",
                if c.http_only { "#HttpOnly_" } else { "" },
                if c.host_only { "" } else { "." },
                c.domain,
                flag(!c.host_only),
                c.path,
                flag(c.secure),
                c.expires.unwrap_or(0),
                c.name,
                c.value
            );
        }
        out
    }

    /// Adds the cookies of a file in Netscape's format (as `curl -c` writes it and `curl -b`
    /// reads it); lines that are not cookies are skipped, and so are expired cookies.
    pub fn load_netscape(&self, text: &str) {
        let now = now();
        let mut cookies = self.cookies();
        for line in text.lines() {
            let (http_only, line) = match line.strip_prefix("#HttpOnly_") {
                Some(rest) => (true, rest),
                None => (false, line),
            };
            if line.starts_with('#') {
                continue;
            }
            let fields: Vec<&str> = line.trim_end_matches('\r').split('\t').collect();
            let &[domain, subdomains, path, secure, expires, name, value] = &fields[..] else {
                continue;
            };
            let Ok(expires) = expires.parse::<u64>() else {
                continue;
            };
            let cookie = Cookie {
                name: name.to_owned(),
                value: value.to_owned(),
                domain: domain.trim_start_matches('.').to_ascii_lowercase(),
                host_only: subdomains != "TRUE",
                path: path.to_owned(),
                secure: secure == "TRUE",
                http_only,
                expires: (expires != 0).then_some(expires),
            };
            if name.is_empty() || cookie.expires.is_some_and(|at| at <= now) {
                continue;
            }
            cookies.retain(|c| !c.same_slot(&cookie));
            if cookies.len() == MAX_COOKIES {
                cookies.remove(0);
            }
            cookies.push(cookie);
        }
    }
}

/// `request` rewritten to carry the cookies of `jar` that go with its URL, if any do.
pub(crate) fn cookied(
    jar: Option<&CookieJar>,
    buffer: &mut RequestBuffer,
    request: &Request<'_>,
) -> Result<Option<Hop>, Error> {
    let Some(cookies) = jar.and_then(|jar| jar.header(request.url())) else {
        return Ok(None);
    };
    let (head, _) = buffer.bytes(request)?;
    Hop::cookied(request, head, &cookies).map(Some)
}

/// The `cookie` field value for a request to `url` whose own fields are `fields`: their
/// cookies, then the jar's; `None` when the jar has none for it (the fields go as they are).
#[cfg(feature = "ws")]
pub(crate) fn merged(
    jar: Option<&CookieJar>,
    url: &Url,
    fields: &[(&str, &str)],
) -> Option<String> {
    let from_jar = jar?.header(url)?;
    let own = fields
        .iter()
        .filter(|(name, _)| name.eq_ignore_ascii_case("cookie"))
        .map(|(_, value)| *value);
    Some(
        own.chain([from_jar.as_str()])
            .collect::<Vec<_>>()
            .join("; "),
    )
}

/// Stores in `jar` the cookies a response from `url` sets (its `head`'s `Set-Cookie` fields).
pub(crate) fn keep(jar: Option<&CookieJar>, url: &Url, head: Option<ringwire_http1::Response<'_>>) {
    if let (Some(jar), Some(head)) = (jar, head) {
        for value in head.headers().get_all("set-cookie") {
            jar.store(url, value);
        }
    }
}

impl Cookie {
    /// Whether `other` takes this one's place: same name, domain and path.
    fn same_slot(&self, other: &Cookie) -> bool {
        self.name == other.name && self.domain == other.domain && self.path == other.path
    }

    /// Whether it goes with a request to `host` (lowercase) for `path`.
    fn matches(&self, host: &str, path: &str, https: bool) -> bool {
        let host_ok = if self.host_only {
            host == self.domain
        } else {
            domain_matches(host, &self.domain)
        };
        host_ok && path_matches(path, &self.path) && (https || !self.secure)
    }
}

/// The cookie a `Set-Cookie` field sets, received from `url` at `now`, and whether it is
/// already expired (a removal); `None` if the field is to be ignored (RFC 6265 section 5.2).
fn parse(url: &Url, field: &str, now: u64) -> Option<(Cookie, bool)> {
    // A control character (a tab, say) would end a cookie file's field or line.
    if field.bytes().any(|b| b < 0x20 || b == 0x7f) {
        return None;
    }
    let mut parts = field.split(';');
    let (name, value) = parts.next()?.split_once('=')?;
    let (name, value) = (name.trim(), value.trim());
    if name.is_empty() || name.len() + value.len() > MAX_COOKIE {
        return None;
    }
    let host = url.origin().host().to_ascii_lowercase();
    let mut cookie = Cookie {
        name: name.to_owned(),
        value: value.to_owned(),
        domain: host.clone(),
        host_only: true,
        path: default_path(path_of(url.target())).to_owned(),
        secure: false,
        http_only: false,
        expires: None,
    };
    let mut max_age = None;
    for attribute in parts {
        let (key, value) = match attribute.split_once('=') {
            Some((key, value)) => (key.trim(), value.trim()),
            None => (attribute.trim(), ""),
        };
        match key.to_ascii_lowercase().as_str() {
            "expires" => {
                if let Some(at) = cookie_date(value) {
                    cookie.expires = Some(at);
                }
            }
            "max-age" => {
                let digits = value.strip_prefix('-').unwrap_or(value);
                if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) {
                    max_age = Some(value.parse::<i64>().unwrap_or(if value.starts_with('-') {
                        i64::MIN
                    } else {
                        i64::MAX
                    }));
                }
            }
            "domain" if !value.is_empty() => {
                let domain = value.trim_start_matches('.').to_ascii_lowercase();
                if is_public_suffix(&domain) {
                    // For the host alone, if it is the suffix itself (RFC 6265 section 5.3,
                    // step 5); for a whole registry, never.
                    if domain != host {
                        return None;
                    }
                    continue;
                }
                // The host itself, or a parent domain; an address takes none.
                let allowed =
                    domain == host || (!is_address(&host) && domain_matches(&host, &domain));
                if !allowed {
                    return None;
                }
                cookie.domain = domain;
                cookie.host_only = false;
            }
            "path" if value.starts_with('/') => cookie.path = value.to_owned(),
            "secure" => cookie.secure = true,
            "httponly" => cookie.http_only = true,
            _ => {}
        }
    }
    if let Some(age) = max_age {
        // Max-Age wins over Expires; zero or less expires it now.
        cookie.expires = Some(if age <= 0 {
            0
        } else {
            now.saturating_add(age as u64)
        });
    }
    let expired = cookie.expires.is_some_and(|at| at <= now);
    Some((cookie, expired))
}

/// The path of a request target, without its query.
fn path_of(target: &str) -> &str {
    let path = target.split(['?', '#']).next().unwrap_or("/");
    if path.starts_with('/') {
        path
    } else {
        "/"
    }
}

/// A cookie's path when it names none: the request path up to its last `/`.
fn default_path(path: &str) -> &str {
    match path.rfind('/') {
        Some(0) | None => "/",
        Some(i) => &path[..i],
    }
}

/// Whether `domain` is a public suffix: a registry under which anyone may register names
/// (`com`, `co.uk`, `github.io`), or a name under no known top-level domain (the list's `*`
/// rule, as libpsl reads it).
fn is_public_suffix(domain: &str) -> bool {
    psl::suffix(domain.as_bytes()).is_some_and(|suffix| suffix.as_bytes().len() == domain.len())
}

fn domain_matches(host: &str, domain: &str) -> bool {
    host == domain
        || (host.len() > domain.len()
            && host.ends_with(domain)
            && host.as_bytes()[host.len() - domain.len() - 1] == b'.'
            && !is_address(host))
}

fn path_matches(path: &str, cookie_path: &str) -> bool {
    path == cookie_path
        || (path.starts_with(cookie_path)
            && (cookie_path.ends_with('/') || path.as_bytes()[cookie_path.len()] == b'/'))
}

fn is_address(host: &str) -> bool {
    host.parse::<std::net::IpAddr>().is_ok()
}

fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// An `Expires` date, in seconds since the epoch, parsed as RFC 6265 section 5.1.1 says:
/// leniently, from its time, day, month and year tokens in any order.
fn cookie_date(text: &str) -> Option<u64> {
    const MONTHS: [&str; 12] = [
        "jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec",
    ];
    let delimiter = |c: char| !(c.is_ascii_alphanumeric() || c == ':');
    let (mut time, mut day, mut month, mut year) = (None, None, None, None);
    for token in text.split(delimiter).filter(|t| !t.is_empty()) {
        let digits = |t: &str| t.bytes().take_while(u8::is_ascii_digit).count();
        if time.is_none() {
            let hms: Vec<&str> = token.split(':').collect();
            if let [h, m, s] = &hms[..] {
                let parsed = (h.parse::<u64>(), m.parse::<u64>(), s.parse::<u64>());
                if let (Ok(h), Ok(m), Ok(s)) = parsed {
                    time = Some((h, m, s));
                    continue;
                }
            }
        }
        let n = digits(token);
        if day.is_none() && (1..=2).contains(&n) {
            day = token[..n].parse::<u64>().ok();
            continue;
        }
        if month.is_none() && token.len() >= 3 {
            let prefix = token[..3].to_ascii_lowercase();
            if let Some(i) = MONTHS.iter().position(|m| *m == prefix) {
                month = Some(i as u64 + 1);
                continue;
            }
        }
        if year.is_none() && (2..=4).contains(&n) {
            year = token[..n].parse::<u64>().ok();
        }
    }
    let (h, m, s) = time?;
    let (day, month, mut year) = (day?, month?, year?);
    year += match year {
        70..=99 => 1900,
        0..=69 => 2000,
        _ => 0,
    };
    if !(1..=31).contains(&day) || year < 1601 || h > 23 || m > 59 || s > 59 {
        return None;
    }
    let days = days_from_civil(year, month, day)?;
    Some(days * 86_400 + h * 3600 + m * 60 + s)
}

/// Days from 1970-01-01 to a date of the proleptic Gregorian calendar (`None` before 1970).
fn days_from_civil(year: u64, month: u64, day: u64) -> Option<u64> {
    let y = if month <= 2 { year - 1 } else { year } as i64;
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (month as i64 + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day as i64 - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    u64::try_from(era * 146_097 + doe - 719_468).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn url(text: &str) -> Url {
        Url::parse(text).expect("url")
    }

    fn jar(from: &str, fields: &[&str]) -> CookieJar {
        let jar = CookieJar::new();
        for field in fields {
            jar.store(&url(from), field.as_bytes());
        }
        jar
    }

    #[test]
    fn a_cookie_goes_back_to_its_host_and_path() {
        let cookies = jar(
            "http://example.com/app/login",
            &["sid=abc; Path=/app", "lang=en"],
        );
        let sent = |to: &str| cookies.header(&url(to));
        // `lang` takes the default path, `/app`.
        assert_eq!(
            sent("http://example.com/app/x").as_deref(),
            Some("sid=abc; lang=en")
        );
        assert_eq!(
            sent("http://example.com/app").as_deref(),
            Some("sid=abc; lang=en")
        );
        assert_eq!(sent("http://example.com/apple"), None);
        assert_eq!(sent("http://example.com/"), None);
        // Host-only: not a subdomain, not another host.
        assert_eq!(sent("http://www.example.com/app/"), None);
        assert_eq!(sent("http://example.org/app/"), None);
    }

    #[test]
    fn a_domain_cookie_goes_to_subdomains_and_a_foreign_domain_is_refused() {
        let cookies = jar(
            "http://www.example.com/",
            &[
                "a=1; Domain=.Example.COM",
                "b=2; Domain=other.com",
                "c=3; Domain=com",
                "d=4; Domain=ample.com",
            ],
        );
        assert_eq!(cookies.len(), 1);
        let sent = |to: &str| cookies.header(&url(to));
        assert_eq!(sent("http://api.example.com/x").as_deref(), Some("a=1"));
        assert_eq!(sent("http://example.com/").as_deref(), Some("a=1"));
        assert_eq!(sent("http://notexample.com/"), None);
        // An address takes host-only cookies alone.
        let ip = jar("http://127.0.0.1/", &["a=1; Domain=0.0.1", "b=2"]);
        assert_eq!(ip.header(&url("http://127.0.0.1/")).as_deref(), Some("b=2"));
    }

    #[test]
    fn no_cookie_goes_to_a_whole_public_suffix() {
        for (host, domain) in [
            ("www.example.co.uk", "co.uk"),
            ("www.example.co.uk", "uk"),
            ("me.github.io", "github.io"),
            ("a.b.example.com", "com"),
            ("shop.localhost", "localhost"),
        ] {
            let cookies = jar(
                &format!("http://{host}/"),
                &[&format!("a=1; Domain={domain}")],
            );
            assert_eq!(cookies.len(), 0, "{domain} from {host}");
        }
        // Under a suffix, a registered name's domain is fine.
        let cookies = jar("http://www.example.co.uk/", &["a=1; Domain=example.co.uk"]);
        let sent = cookies.header(&url("http://shop.example.co.uk/"));
        assert_eq!(sent.as_deref(), Some("a=1"));
        assert_eq!(cookies.header(&url("http://other.co.uk/")), None);
        // A host that is itself a suffix keeps such a cookie for itself alone.
        let cookies = jar("http://github.io/", &["a=1; Domain=github.io"]);
        assert_eq!(
            cookies.header(&url("http://github.io/")).as_deref(),
            Some("a=1")
        );
        assert_eq!(cookies.header(&url("http://me.github.io/")), None);
    }

    #[test]
    fn secure_cookies_go_over_https_only_and_longer_paths_first() {
        let cookies = jar(
            "https://example.com/a/b/c",
            &["s=1; Secure; Path=/", "deep=2; Path=/a/b", "mid=3; Path=/a"],
        );
        let sent = |to: &str| cookies.header(&url(to));
        assert_eq!(
            sent("https://example.com/a/b/c").as_deref(),
            Some("deep=2; mid=3; s=1")
        );
        assert_eq!(
            sent("http://example.com/a/b/c").as_deref(),
            Some("deep=2; mid=3")
        );
    }

    #[test]
    fn a_cookie_is_replaced_and_removed_by_name_domain_and_path() {
        let from = "http://example.com/";
        let jar = jar(from, &["a=1", "a=2", "b=1"]);
        assert_eq!(jar.header(&url(from)).as_deref(), Some("a=2; b=1"));
        jar.store(&url(from), b"a=gone; Max-Age=0");
        jar.store(&url(from), b"b=gone; Expires=Thu, 01 Jan 1970 00:00:01 GMT");
        assert_eq!(jar.header(&url(from)), None);
        assert!(jar.is_empty());
        // Max-Age wins over Expires.
        jar.store(
            &url(from),
            b"c=3; Expires=Thu, 01 Jan 1970 00:00:01 GMT; Max-Age=60",
        );
        assert_eq!(jar.header(&url(from)).as_deref(), Some("c=3"));
    }

    #[test]
    fn fields_that_break_the_rules_are_ignored() {
        let jar = jar(
            "http://example.com/",
            &[
                "novalue",
                "=empty-name",
                " ; Path=/",
                "tab=a\tb",
                &format!("big={}", "x".repeat(5000)),
            ],
        );
        assert!(jar.is_empty());
    }

    #[test]
    fn a_jar_keeps_the_newest_cookies_up_to_its_bound() {
        let from = url("http://example.com/");
        let jar = CookieJar::new();
        for i in 0..MAX_COOKIES + 10 {
            jar.store(&from, format!("c{i}=v").as_bytes());
        }
        assert_eq!(jar.len(), MAX_COOKIES);
        let header = jar.header(&from).expect("cookies");
        assert!(header.starts_with("c10=v; c11=v"), "{}", &header[..40]);
    }

    #[test]
    fn dates_are_read_in_every_form_servers_send() {
        let at = Some(784_111_777); // 1994-11-06 08:49:37 UTC
        for text in [
            "Sun, 06 Nov 1994 08:49:37 GMT",
            "Sunday, 06-Nov-94 08:49:37 GMT",
            "Sun Nov  6 08:49:37 1994",
            "06 nov 1994 08:49:37",
        ] {
            assert_eq!(cookie_date(text), at, "{text}");
        }
        assert_eq!(
            cookie_date("Wed, 01 Jan 2031 00:00:00 GMT"),
            Some(1_924_992_000)
        );
        for text in [
            "",
            "Sun, 32 Nov 1994 08:49:37 GMT",
            "06 Nov 1994",
            "tomorrow",
        ] {
            assert_eq!(cookie_date(text), None, "{text}");
        }
    }

    #[test]
    fn the_netscape_format_round_trips() {
        let jar = jar(
            "https://www.example.com/app/",
            &[
                "sid=abc; HttpOnly; Secure",
                "pref=1; Domain=example.com; Path=/; Expires=Wed, 01 Jan 2031 00:00:00 GMT",
            ],
        );
        let text = jar.to_netscape();
        assert_eq!(
            text,
            "# Netscape HTTP Cookie File\n\
             #HttpOnly_www.example.com\tFALSE\t/app\tTRUE\t0\tsid\tabc\n\
             .example.com\tTRUE\t/\tFALSE\t1924992000\tpref\t1\n"
        );
        let again = CookieJar::new();
        again.load_netscape(&text);
        assert_eq!(again.to_netscape(), text);
        assert_eq!(
            again
                .header(&url("https://www.example.com/app/x"))
                .as_deref(),
            Some("sid=abc; pref=1")
        );
    }
}
