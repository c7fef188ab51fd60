//! Forward proxies, used as curl uses them. Through an HTTP proxy, `https://` (and
//! WebSockets, and HTTP/2 with prior knowledge) goes through a `CONNECT` tunnel and `http://`
//! by absolute-form requests; through a SOCKS proxy (5, or 4 and 4a) everything goes through
//! its tunnel.
//! Which proxy an origin takes comes from [`Proxies`], set by hand or read from the
//! environment ([`Proxies::from_env`]). Sans-IO here and in `tunnel.rs`; each client's `dial`
//! moves the bytes.

use std::fmt;
use std::net::IpAddr;

use base64::engine::general_purpose::STANDARD as BASE64;
use base64::Engine as _;

use crate::url::{Origin, Scheme, Url, UrlError};

/// A forward proxy: where it listens, what it speaks, and the credentials it wants.
#[derive(Clone, PartialEq, Eq)]
pub struct Proxy {
    origin: Origin,
    pub(crate) protocol: ProxyProtocol,
    /// User and password, from the URL's `user:password@`, percent-decoded.
    pub(crate) credentials: Option<(String, String)>,
}

/// What a proxy speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ProxyProtocol {
    /// HTTP: `CONNECT`, and absolute-form requests.
    Http,
    /// SOCKS5 (RFC 1928), the destination's name resolved by the proxy (`socks5h://`) or
    /// by the client (`socks5://`).
    Socks5 { remote_dns: bool },
    /// SOCKS4, IPv4 only, the destination's name resolved by the client (`socks4://`), or
    /// SOCKS4a, resolved by the proxy (`socks4a://`).
    Socks4 { remote_dns: bool },
}

impl Proxy {
    /// Parses `[SCHEME://][user:password@]host[:port]`, as curl's `-x` takes it: the scheme
    /// `http` (the default), `socks5h` (SOCKS5, names resolved by the proxy), `socks5`
    /// (resolved by the client), `socks4a` (SOCKS4a, resolved by the proxy) or `socks4`
    /// (SOCKS4, resolved by the client, IPv4 only); port 1080 when none is given; the
    /// credentials percent-decoded (Basic authorization for HTTP, RFC 1929's for SOCKS5, the
    /// user name as SOCKS4's user id).
    ///
    /// # Errors
    ///
    /// Another scheme (TLS to the proxy itself is not supported), a path, or a host or port
    /// [`Url`] would refuse.
    pub fn parse(text: &str) -> Result<Proxy, UrlError> {
        let (protocol, rest) = match text.split_once("://") {
            None => (ProxyProtocol::Http, text),
            Some((scheme, rest)) => match scheme.to_ascii_lowercase().as_str() {
                "http" => (ProxyProtocol::Http, rest),
                "socks5h" => (ProxyProtocol::Socks5 { remote_dns: true }, rest),
                "socks5" => (ProxyProtocol::Socks5 { remote_dns: false }, rest),
                "socks4a" => (ProxyProtocol::Socks4 { remote_dns: true }, rest),
                "socks4" => (ProxyProtocol::Socks4 { remote_dns: false }, rest),
                _ => return Err(UrlError::UnsupportedScheme(scheme.to_owned())),
            },
        };
        let rest = rest.strip_suffix('/').unwrap_or(rest);
        let (credentials, host) = match rest.rsplit_once('@') {
            Some((credentials, host)) => (Some(credentials), host),
            None => (None, rest),
        };
        if host.contains(['/', '?', '#']) {
            return Err(UrlError::InvalidHost);
        }
        // `[v6]` alone, or anything with no colon after its last `]`, has no port.
        let has_port = host
            .rsplit_once(']')
            .map_or(host, |(_, after)| after)
            .contains(':');
        let authority = if has_port {
            host.to_owned()
        } else {
            format!("{host}:1080")
        };
        let origin = Url::parse(&format!("http://{authority}/"))?
            .origin()
            .clone();
        let credentials = credentials.map(|c| {
            let (user, password) = c.split_once(':').unwrap_or((c, ""));
            (percent_decoded(user), percent_decoded(password))
        });
        Ok(Proxy {
            origin,
            protocol,
            credentials,
        })
    }

    /// Whether the client resolves the destination's name (`socks5://`, `socks4://`).
    pub(crate) fn resolves_locally(&self) -> bool {
        matches!(
            self.protocol,
            ProxyProtocol::Socks5 { remote_dns: false }
                | ProxyProtocol::Socks4 { remote_dns: false }
        )
    }

    /// Whether the proxy reaches IPv4 addresses only (SOCKS4).
    pub(crate) fn ipv4_only(&self) -> bool {
        matches!(self.protocol, ProxyProtocol::Socks4 { .. })
    }

    /// `Proxy-Authorization`'s value.
    pub(crate) fn authorization(&self) -> Option<String> {
        let (user, password) = self.credentials.as_ref()?;
        Some(format!(
            "Basic {}",
            BASE64.encode(format!("{user}:{password}"))
        ))
    }

    /// Where the proxy listens.
    #[must_use]
    pub fn origin(&self) -> &Origin {
        &self.origin
    }

    /// `head`, a request head in origin-form as the builder wrote it for `origin`, in
    /// absolute-form for the proxy (RFC 9112 section 3.2.2), with its credentials.
    pub(crate) fn absolute_form(&self, head: &[u8], origin: &Origin) -> Vec<u8> {
        // The builder wrote `METHOD SP /target SP HTTP/1.1 CRLF`: one space after the method,
        // and the first line ends at the first LF.
        let method_end = head.iter().position(|&b| b == b' ').unwrap_or(0) + 1;
        let line_end = head
            .iter()
            .position(|&b| b == b'\n')
            .map_or(head.len(), |i| i + 1);
        let mut out = Vec::with_capacity(head.len() + 96);
        out.extend_from_slice(&head[..method_end]);
        out.extend_from_slice(format!("http://{}", origin.host_port()).as_bytes());
        out.extend_from_slice(&head[method_end..line_end]);
        if let Some(authorization) = self.authorization() {
            out.extend_from_slice(format!("Proxy-Authorization: {authorization}\r\n").as_bytes());
        }
        out.extend_from_slice(&head[line_end..]);
        out
    }
}

/// Not the credentials.
impl fmt::Debug for Proxy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Proxy")
            .field("origin", &self.origin.host_port())
            .field("protocol", &self.protocol)
            .field("credentials", &self.credentials.is_some())
            .finish()
    }
}

/// Which proxy each origin goes through: one for `http://` (and `ws://`), one for
/// `https://` (and `wss://`), none for the hosts of the no-proxy list.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Proxies {
    http: Option<Proxy>,
    https: Option<Proxy>,
    no_proxy: Vec<Bypass>,
}

/// One entry of a no-proxy list.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Bypass {
    /// `*`: every host.
    All,
    /// A host name and its subdomains (lower case, no leading or trailing dot).
    Name(String),
    /// An address, or a network in CIDR notation: the hosts written as addresses in it.
    Network(IpAddr, u8),
}

impl Bypass {
    /// `entry` as curl reads it; `None` for an empty one or a network whose prefix length
    /// does not fit its address.
    fn parse(entry: &str) -> Option<Bypass> {
        let entry = entry.trim();
        if entry == "*" {
            return Some(Bypass::All);
        }
        let (address, prefix) = match entry.split_once('/') {
            Some((address, prefix)) => (address, Some(prefix)),
            None => (entry, None),
        };
        let bracketed = address.strip_prefix('[').and_then(|a| a.strip_suffix(']'));
        if let Ok(ip) = bracketed.unwrap_or(address).parse::<IpAddr>() {
            let bits = if ip.is_ipv4() { 32 } else { 128 };
            let prefix = match prefix {
                Some(prefix) => prefix.parse().ok().filter(|&p| p <= bits)?,
                None => bits,
            };
            return Some(Bypass::Network(ip, prefix));
        }
        let name = entry.trim_start_matches('.').trim_end_matches('.');
        (!name.is_empty()).then(|| Bypass::Name(name.to_ascii_lowercase()))
    }

    /// Whether `host` (a name, or an address without brackets) is reached directly.
    fn covers(&self, host: &str) -> bool {
        match self {
            Bypass::All => true,
            Bypass::Name(name) => {
                let host = host.strip_suffix('.').unwrap_or(host);
                host.eq_ignore_ascii_case(name)
                    || host.len() > name.len()
                        && host.as_bytes()[host.len() - name.len() - 1] == b'.'
                        && host[host.len() - name.len()..].eq_ignore_ascii_case(name)
            }
            Bypass::Network(network, prefix) => match (host.parse::<IpAddr>(), network) {
                (Ok(IpAddr::V4(ip)), IpAddr::V4(net)) => same_prefix(
                    u128::from(ip.to_bits()) << 96,
                    u128::from(net.to_bits()) << 96,
                    *prefix,
                ),
                (Ok(IpAddr::V6(ip)), IpAddr::V6(net)) => {
                    same_prefix(ip.to_bits(), net.to_bits(), *prefix)
                }
                _ => false,
            },
        }
    }
}

/// Whether `a` and `b` agree in their first `prefix` bits.
fn same_prefix(a: u128, b: u128, prefix: u8) -> bool {
    prefix == 0 || (a ^ b) >> (128 - u32::from(prefix)) == 0
}

/// Why the environment's proxy settings were refused: the variable and its value's fault.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProxyEnvError {
    /// The variable.
    pub variable: &'static str,
    /// What is wrong with its value.
    pub error: UrlError,
}

impl fmt::Display for ProxyEnvError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "${}: {}", self.variable, self.error)
    }
}

impl std::error::Error for ProxyEnvError {}

impl Proxies {
    /// Every origin through `proxy`.
    #[must_use]
    pub fn all(proxy: Proxy) -> Self {
        Proxies {
            http: Some(proxy.clone()),
            https: Some(proxy),
            no_proxy: Vec::new(),
        }
    }

    /// `http://` and `ws://` origins through `proxy` (or directly).
    #[must_use]
    pub fn http(mut self, proxy: Option<Proxy>) -> Self {
        self.http = proxy;
        self
    }

    /// `https://` and `wss://` origins through `proxy` (or directly).
    #[must_use]
    pub fn https(mut self, proxy: Option<Proxy>) -> Self {
        self.https = proxy;
        self
    }

    /// Hosts reached directly, as curl's `--noproxy` and `no_proxy` list them: separated by
    /// commas (and white space), each a host name that also covers its subdomains (a
    /// leading dot is optional), an address (IPv6 with or without brackets) or a network in
    /// CIDR notation (`10.0.0.0/8`, `fd00::/8`) covering the hosts given as addresses in
    /// it; `*` alone is every host. Entries that fit none of these are left out.
    #[must_use]
    pub fn no_proxy(mut self, list: &str) -> Self {
        self.no_proxy = list
            .split(|c: char| c == ',' || c.is_whitespace())
            .filter_map(Bypass::parse)
            .collect();
        self
    }

    /// The proxies curl would use: `http_proxy` (lower case only, as curl: a CGI server
    /// sets `HTTP_PROXY` from a request header), `HTTPS_PROXY` or `https_proxy`, either
    /// falling back to `ALL_PROXY` or `all_proxy`, and `NO_PROXY` or `no_proxy`. Lower case
    /// wins where both are set; an empty value is unset.
    ///
    /// # Errors
    ///
    /// A variable whose value [`Proxy::parse`] refuses.
    pub fn from_env() -> Result<Self, ProxyEnvError> {
        let var = |names: &[&'static str]| {
            names.iter().find_map(|name| {
                std::env::var(name)
                    .ok()
                    .filter(|v| !v.is_empty())
                    .map(|v| (*name, v))
            })
        };
        let proxy = |names: &[&'static str]| {
            var(names)
                .or_else(|| var(&["all_proxy", "ALL_PROXY"]))
                .map(|(variable, value)| {
                    Proxy::parse(&value).map_err(|error| ProxyEnvError { variable, error })
                })
                .transpose()
        };
        let mut proxies = Proxies {
            http: proxy(&["http_proxy"])?,
            https: proxy(&["https_proxy", "HTTPS_PROXY"])?,
            no_proxy: Vec::new(),
        };
        if let Some((_, list)) = var(&["no_proxy", "NO_PROXY"]) {
            proxies = proxies.no_proxy(&list);
        }
        Ok(proxies)
    }

    /// The proxy that requests to `origin` are forwarded to in absolute-form, if any: plain
    /// HTTP/1.1 to an HTTP proxy. The rest goes through [`route`](Self::route)'s tunnel.
    pub(crate) fn forwarding(&self, origin: &Origin, http2: crate::Http2) -> Option<&Proxy> {
        let plain = origin.scheme() == Scheme::Http && http2 != crate::Http2::PriorKnowledge;
        self.route(origin)
            .filter(|proxy| plain && proxy.protocol == ProxyProtocol::Http)
    }

    /// The proxy `origin` goes through, if any.
    pub(crate) fn route(&self, origin: &Origin) -> Option<&Proxy> {
        let proxy = match origin.scheme() {
            Scheme::Http => self.http.as_ref(),
            Scheme::Https => self.https.as_ref(),
        }?;
        let bypassed = self.no_proxy.iter().any(|b| b.covers(origin.host()));
        (!bypassed).then_some(proxy)
    }
}

/// `%XX` escapes decoded (others kept as they are).
fn percent_decoded(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| (b as char).to_digit(16);
        match (bytes[i], bytes.get(i + 1), bytes.get(i + 2)) {
            (b'%', Some(&h), Some(&l)) if hex(h).is_some() && hex(l).is_some() => {
                out.push((hex(h).unwrap_or(0) * 16 + hex(l).unwrap_or(0)) as u8);
                i += 3;
            }
            (b, _, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn origin(url: &str) -> Origin {
        Url::parse(url).unwrap().origin().clone()
    }

    #[test]
    fn proxy_urls_as_curl_takes_them() {
        let p = Proxy::parse("proxy.example").unwrap();
        assert_eq!(
            (p.origin().host(), p.origin().port()),
            ("proxy.example", 1080)
        );
        let p = Proxy::parse("http://u%40x:p%3Aw@127.0.0.1:3128/").unwrap();
        assert_eq!(p.origin().port(), 3128);
        // base64("u@x:p:w")
        assert_eq!(p.authorization().as_deref(), Some("Basic dUB4OnA6dw=="));
        assert!(!format!("{p:?}").contains("dUB4"));
        let p = Proxy::parse("[::1]").unwrap();
        assert_eq!((p.origin().host(), p.origin().port()), ("::1", 1080));
        assert_eq!(Proxy::parse("[::1]:8080").unwrap().origin().port(), 8080);
        assert!(matches!(
            Proxy::parse("https://proxy"),
            Err(UrlError::UnsupportedScheme(_))
        ));
        let p = Proxy::parse("socks5h://a:b@127.0.0.1").unwrap();
        assert_eq!(p.protocol, ProxyProtocol::Socks5 { remote_dns: true });
        assert!(!p.resolves_locally());
        assert_eq!(p.credentials, Some(("a".into(), "b".into())));
        assert!(Proxy::parse("SOCKS5://h").unwrap().resolves_locally());
        let p = Proxy::parse("socks4://me@127.0.0.1:9050").unwrap();
        assert_eq!(p.protocol, ProxyProtocol::Socks4 { remote_dns: false });
        assert!(p.resolves_locally() && p.ipv4_only());
        assert_eq!(p.credentials, Some(("me".into(), String::new())));
        let p = Proxy::parse("socks4a://proxy").unwrap();
        assert_eq!(p.protocol, ProxyProtocol::Socks4 { remote_dns: true });
        assert!(!p.resolves_locally() && p.ipv4_only());
        assert_eq!(Proxy::parse("proxy/path"), Err(UrlError::InvalidHost));
        assert_eq!(Proxy::parse("proxy:99999"), Err(UrlError::InvalidPort));
    }

    #[test]
    fn requests_to_the_proxy() {
        let p = Proxy::parse("http://u:p@proxy:3128").unwrap();
        let head = b"GET /a?b HTTP/1.1\r\nhost: site\r\n\r\n";
        assert_eq!(
            p.absolute_form(head, &origin("http://site/")),
            b"GET http://site:80/a?b HTTP/1.1\r\nProxy-Authorization: Basic dTpw\r\nhost: site\r\n\r\n"
        );
    }

    #[test]
    fn no_proxy_networks() {
        let proxies = Proxies::all(Proxy::parse("proxy").unwrap())
            .no_proxy("192.168.0.0/16\t10.1.2.3/32 [fd00::]/8, ::1 127.0.0.1/40 0.0.0.0/0x");
        let routed = |url: &str| proxies.route(&origin(url)).is_some();
        assert!(!routed("http://192.168.77.1/"));
        assert!(routed("http://192.169.0.1/"));
        assert!(!routed("http://10.1.2.3/"));
        assert!(routed("http://10.1.2.4/"));
        assert!(!routed("http://[fd12:3456::1]/"));
        assert!(routed("http://[fe80::1]/"));
        assert!(!routed("http://[::1]:8080/"));
        // A prefix longer than the address, or not a number: the entry is left out.
        assert!(routed("http://127.0.0.1/"));
        assert!(routed("http://8.8.8.8/"));
        // Networks cover addresses, not names that resolve into them.
        assert!(routed("http://localhost/"));
        let everything = Proxies::all(Proxy::parse("proxy").unwrap()).no_proxy("0.0.0.0/0,::/0");
        assert!(everything.route(&origin("http://203.0.113.9/")).is_none());
        assert!(everything.route(&origin("http://[2001:db8::1]/")).is_none());
        assert!(everything.route(&origin("http://example.com/")).is_some());
    }

    #[test]
    fn no_proxy_hosts_and_their_subdomains() {
        let proxies = Proxies::all(Proxy::parse("proxy").unwrap())
            .no_proxy("example.com, .internal,10.0.0.1");
        let routed = |url: &str| proxies.route(&origin(url)).is_some();
        assert!(!routed("http://example.com/"));
        assert!(!routed("https://api.example.com/"));
        assert!(routed("https://notexample.com/"));
        assert!(!routed("http://db.internal/"));
        assert!(!routed("http://10.0.0.1/"));
        assert!(routed("http://10.0.0.10/"));
        assert!(!routed("http://API.Example.com./"));
        assert!(Proxies::all(Proxy::parse("proxy").unwrap())
            .no_proxy("*")
            .route(&origin("https://any/"))
            .is_none());
        // Only plain HTTP/1.1 through an HTTP proxy is forwarded; the rest is tunnelled.
        let http = Proxies::all(Proxy::parse("proxy").unwrap());
        let socks = Proxies::all(Proxy::parse("socks5h://proxy").unwrap());
        let forwarded = |p: &Proxies, url: &str, h2| p.forwarding(&origin(url), h2).is_some();
        assert!(forwarded(&http, "http://site/", crate::Http2::Negotiate));
        assert!(!forwarded(
            &http,
            "http://site/",
            crate::Http2::PriorKnowledge
        ));
        assert!(!forwarded(&http, "https://site/", crate::Http2::Off));
        assert!(!forwarded(&socks, "http://site/", crate::Http2::Off));
        let https_only = Proxies::default().https(Some(Proxy::parse("proxy").unwrap()));
        assert!(https_only.route(&origin("http://site/")).is_none());
        assert!(https_only.route(&origin("https://site/")).is_some());
    }
}
