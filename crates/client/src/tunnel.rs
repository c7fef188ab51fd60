//! Opening a tunnel through a proxy, sans-IO: an HTTP proxy's `CONNECT`, SOCKS5's exchange
//! (RFC 1928, with RFC 1929's user and password), or SOCKS4's request (SOCKS4a's, with the
//! name for the proxy to resolve). The driver sends what a step asks, reads, and hands
//! everything received since to the next step.

use std::net::IpAddr;

use ringwire_http1::{Limits, Method, ResponseParser, Status};

use crate::proxy::{Proxy, ProxyProtocol};
use crate::url::Origin;
use crate::Error;

/// A tunnel being opened to `origin`.
#[derive(Debug)]
pub(crate) struct Tunnel<'p> {
    proxy: &'p Proxy,
    origin: &'p Origin,
    /// The destination's address, when the client resolved it (`socks5://`, `socks4://`).
    resolved: Option<IpAddr>,
    stage: Stage,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stage {
    /// The HTTP proxy's answer to `CONNECT`.
    HttpAnswer,
    /// The SOCKS5 proxy's choice of authentication.
    SocksMethod,
    /// Its answer to the credentials.
    SocksAuth,
    /// Its answer to the connect request.
    SocksReply,
    /// The SOCKS4 proxy's answer to the connect request.
    Socks4Reply,
}

/// What to do after a step.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Step {
    /// Read more.
    More,
    /// Everything received was read: send these bytes, then read again.
    Send(Vec<u8>),
    /// The tunnel is open.
    Open,
}

impl<'p> Tunnel<'p> {
    /// A tunnel through `proxy` to `origin` (at `resolved`, if the client resolved it), and
    /// the first bytes to send.
    ///
    /// # Errors
    ///
    /// A SOCKS4 proxy cannot be asked for this destination (an IPv6 address, a user name
    /// with a NUL byte).
    pub(crate) fn start(
        proxy: &'p Proxy,
        origin: &'p Origin,
        resolved: Option<IpAddr>,
    ) -> Result<(Self, Vec<u8>), Error> {
        let (stage, first) = match proxy.protocol {
            ProxyProtocol::Http => (Stage::HttpAnswer, connect_request(proxy, origin)),
            ProxyProtocol::Socks5 { .. } => {
                // No authentication, and user and password if there are any.
                let methods: &[u8] = if proxy.credentials.is_some() {
                    &[0, 2]
                } else {
                    &[0]
                };
                let mut greeting = vec![5, methods.len() as u8];
                greeting.extend_from_slice(methods);
                (Stage::SocksMethod, greeting)
            }
            ProxyProtocol::Socks4 { .. } => {
                (Stage::Socks4Reply, socks4_request(proxy, origin, resolved)?)
            }
        };
        let tunnel = Tunnel {
            proxy,
            origin,
            resolved,
            stage,
        };
        Ok((tunnel, first))
    }

    /// What `answer`, every byte received since the last bytes were sent, means.
    pub(crate) fn step(&mut self, answer: &[u8]) -> Result<Step, Error> {
        match self.stage {
            Stage::HttpAnswer => connect_answer(self.proxy, answer),
            Stage::SocksMethod => {
                let Some([version, method]) = self.whole::<2>(answer)? else {
                    return Ok(Step::More);
                };
                self.check_version(version, 5)?;
                match (method, &self.proxy.credentials) {
                    (0, _) => self.connect(),
                    (2, Some((user, password))) => {
                        let too_long = |what: &str| {
                            self.refused(if what == "user" {
                                "the user name is longer than SOCKS5 allows (255 bytes)"
                            } else {
                                "the password is longer than SOCKS5 allows (255 bytes)"
                            })
                        };
                        let user_len = u8::try_from(user.len()).map_err(|_| too_long("user"))?;
                        let password_len =
                            u8::try_from(password.len()).map_err(|_| too_long("password"))?;
                        let mut auth = vec![1, user_len];
                        auth.extend_from_slice(user.as_bytes());
                        auth.push(password_len);
                        auth.extend_from_slice(password.as_bytes());
                        self.stage = Stage::SocksAuth;
                        Ok(Step::Send(auth))
                    }
                    (2, None) => Err(self.refused("it wants a user and password")),
                    _ => Err(self.refused("it takes none of the authentication methods offered")),
                }
            }
            Stage::SocksAuth => {
                let Some([version, status]) = self.whole::<2>(answer)? else {
                    return Ok(Step::More);
                };
                self.check_version(version, 1)?;
                if status != 0 {
                    return Err(self.refused("the user and password were refused"));
                }
                self.connect()
            }
            Stage::SocksReply => {
                // VER REP RSV ATYP, then the bound address and port.
                let Some(&kind) = answer.get(3) else {
                    return Ok(Step::More);
                };
                let len = match kind {
                    1 => 4 + 4 + 2,
                    3 => match answer.get(4) {
                        Some(&name) => 4 + 1 + usize::from(name) + 2,
                        None => return Ok(Step::More),
                    },
                    4 => 4 + 16 + 2,
                    _ => return Err(malformed("an unknown address type in its reply")),
                };
                self.check_version(answer[0], 5)?;
                if answer[1] != 0 {
                    return Err(self.refused(reply_reason(answer[1])));
                }
                Ok(match answer.len() {
                    n if n < len => Step::More,
                    n if n == len => Step::Open,
                    _ => return Err(early()),
                })
            }
            Stage::Socks4Reply => {
                // VN CD, then a port and an address that carry nothing for a connect.
                let Some(reply) = self.whole::<8>(answer)? else {
                    return Ok(Step::More);
                };
                self.check_version(reply[0], 0)?;
                match reply[1] {
                    90 => Ok(Step::Open),
                    92 => Err(self.refused("it could not reach the client's identd")),
                    93 => Err(self.refused("the client's identd reported another user id")),
                    _ => Err(self.refused("the request was rejected or failed")),
                }
            }
        }
    }

    /// The SOCKS5 connect request for the origin: by address when it is one or the client
    /// resolved it, else by name.
    fn connect(&mut self) -> Result<Step, Error> {
        let host = self.origin.host();
        let mut request = vec![5, 1, 0];
        match self.resolved.or_else(|| host.parse().ok()) {
            Some(IpAddr::V4(v4)) => {
                request.push(1);
                request.extend_from_slice(&v4.octets());
            }
            Some(IpAddr::V6(v6)) => {
                request.push(4);
                request.extend_from_slice(&v6.octets());
            }
            None => {
                let len = u8::try_from(host.len())
                    .map_err(|_| self.refused("the host name is longer than SOCKS5 allows"))?;
                request.extend_from_slice(&[3, len]);
                request.extend_from_slice(host.as_bytes());
            }
        }
        request.extend_from_slice(&self.origin.port().to_be_bytes());
        self.stage = Stage::SocksReply;
        Ok(Step::Send(request))
    }

    /// A fixed-size reply: `None` until it is whole; an error with more than it.
    fn whole<const N: usize>(&self, answer: &[u8]) -> Result<Option<[u8; N]>, Error> {
        match answer.len() {
            n if n < N => Ok(None),
            n if n == N => Ok(answer.try_into().ok()),
            _ => Err(early()),
        }
    }

    fn check_version(&self, got: u8, want: u8) -> Result<(), Error> {
        match self.proxy.protocol {
            _ if got == want => Ok(()),
            ProxyProtocol::Socks4 { .. } => Err(malformed("not a SOCKS4 answer")),
            _ => Err(malformed("not a SOCKS5 answer")),
        }
    }

    fn refused(&self, reason: &'static str) -> Error {
        refused(self.proxy, reason)
    }
}

fn refused(proxy: &Proxy, reason: &'static str) -> Error {
    Error::Socks {
        proxy: proxy.origin().host_port(),
        reason,
    }
}

/// SOCKS4's connect request: the destination's IPv4 address (an address in the URL, or
/// the one the client resolved), or for SOCKS4a a name the proxy resolves (the address
/// 0.0.0.1 says one follows); the user id is the proxy URL's user name, if any.
fn socks4_request(
    proxy: &Proxy,
    origin: &Origin,
    resolved: Option<IpAddr>,
) -> Result<Vec<u8>, Error> {
    let host = origin.host();
    let mut request = vec![4, 1];
    request.extend_from_slice(&origin.port().to_be_bytes());
    let name = match resolved.or_else(|| host.parse().ok()) {
        Some(IpAddr::V4(v4)) => {
            request.extend_from_slice(&v4.octets());
            None
        }
        Some(IpAddr::V6(_)) => return Err(refused(proxy, "SOCKS4 reaches IPv4 addresses only")),
        None => {
            request.extend_from_slice(&[0, 0, 0, 1]);
            Some(host)
        }
    };
    let user = proxy
        .credentials
        .as_ref()
        .map_or("", |(user, _)| user.as_str());
    if user.contains('\0') {
        return Err(refused(
            proxy,
            "SOCKS4 cannot carry a user name with a NUL byte",
        ));
    }
    request.extend_from_slice(user.as_bytes());
    request.push(0);
    if let Some(name) = name {
        request.extend_from_slice(name.as_bytes());
        request.push(0);
    }
    Ok(request)
}

/// The `CONNECT` request that asks `proxy` for a tunnel to `origin`.
fn connect_request(proxy: &Proxy, origin: &Origin) -> Vec<u8> {
    let target = origin.host_port();
    let mut out = format!("CONNECT {target} HTTP/1.1\r\nHost: {target}\r\n");
    if let Some(authorization) = proxy.authorization() {
        out += &format!("Proxy-Authorization: {authorization}\r\n");
    }
    out += "\r\n";
    out.into_bytes()
}

/// What the front of `buf` holds of `proxy`'s answer to the `CONNECT`: more to read, or a
/// tunnel granted; a refusal is [`Error::Proxy`].
fn connect_answer(proxy: &Proxy, buf: &[u8]) -> Result<Step, Error> {
    let mut parser = ResponseParser::new(Limits::default());
    let (status, reason, len) = match parser.parse(buf, Method::Connect)? {
        Status::Partial { .. } => return Ok(Step::More),
        Status::Complete(head, len) => (head.status(), head.reason().to_vec(), len),
    };
    if !(200..300).contains(&status) {
        return Err(Error::Proxy {
            proxy: proxy.origin().host_port(),
            status,
            reason: String::from_utf8_lossy(&reason).into_owned(),
        });
    }
    if buf.len() > len {
        return Err(early());
    }
    Ok(Step::Open)
}

/// The first address `lookup` found for `origin` (for `socks5://` and `socks4://`, whose
/// client resolves), the first IPv4 one if `proxy` reaches no other.
pub(crate) fn first_address(
    proxy: &Proxy,
    origin: &Origin,
    lookup: std::io::Result<impl Iterator<Item = std::net::SocketAddr>>,
) -> Result<IpAddr, Error> {
    let failed = |source| Error::Connect {
        authority: origin.host_port(),
        source,
    };
    let found = lookup
        .map_err(failed)?
        .find(|addr| addr.is_ipv4() || !proxy.ipv4_only());
    found
        .map(|addr| addr.ip())
        .ok_or_else(|| failed(std::io::ErrorKind::NotFound.into()))
}

/// RFC 1928's reply codes.
fn reply_reason(code: u8) -> &'static str {
    match code {
        2 => "the connection is not allowed by its rules",
        3 => "network unreachable",
        4 => "host unreachable",
        5 => "connection refused",
        6 => "TTL expired",
        7 => "command not supported",
        8 => "address type not supported",
        _ => "general failure",
    }
}

fn malformed(what: &str) -> Error {
    Error::Io(std::io::Error::new(
        std::io::ErrorKind::InvalidData,
        format!("the proxy sent {what}"),
    ))
}

/// The tunnel's protocols speak first: a proxy sending more than its answer is broken.
fn early() -> Error {
    Error::Io(std::io::Error::new(
        std::io::ErrorKind::InvalidData,
        "the proxy sent bytes before the tunnel's first request",
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Url;

    fn origin(url: &str) -> Origin {
        Url::parse(url).unwrap().origin().clone()
    }

    /// Runs a tunnel against scripted answers: the bytes it sent.
    fn exchange(
        proxy: &str,
        to: &str,
        resolved: Option<IpAddr>,
        answers: &[&[u8]],
    ) -> Result<Vec<Vec<u8>>, Error> {
        let proxy = Proxy::parse(proxy).unwrap();
        let to = origin(to);
        let (mut tunnel, first) = Tunnel::start(&proxy, &to, resolved)?;
        let mut sent = vec![first];
        for (i, answer) in answers.iter().enumerate() {
            // Every prefix asks for more.
            for cut in 0..answer.len() {
                assert_eq!(tunnel.step(&answer[..cut])?, Step::More, "{i}: {cut}");
            }
            match tunnel.step(answer)? {
                Step::Send(bytes) => sent.push(bytes),
                Step::Open => assert_eq!(i, answers.len() - 1, "open early"),
                Step::More => panic!("{i}: more than the whole answer"),
            }
        }
        Ok(sent)
    }

    #[test]
    fn the_proxys_answer_to_connect() {
        let p = Proxy::parse("proxy:3128").unwrap();
        let ok = b"HTTP/1.1 200 Connection established\r\n\r\n";
        for cut in 0..ok.len() {
            assert_eq!(connect_answer(&p, &ok[..cut]).unwrap(), Step::More, "{cut}");
        }
        assert_eq!(connect_answer(&p, ok).unwrap(), Step::Open);
        let refused = connect_answer(
            &p,
            b"HTTP/1.1 407 Proxy Authentication Required\r\ncontent-length: 0\r\n\r\n",
        )
        .unwrap_err();
        assert!(
            matches!(refused, Error::Proxy { status: 407, .. }),
            "{refused}"
        );
        assert_eq!(
            refused.to_string(),
            "the proxy proxy:3128 refused: 407 Proxy Authentication Required"
        );
        assert!(connect_answer(&p, b"HTTP/1.1 200 OK\r\n\r\nearly").is_err());
        assert!(connect_answer(&p, b"SSH-2.0-OpenSSH\r\n\r\n").is_err());
    }

    #[test]
    fn the_connect_request() {
        let p = Proxy::parse("http://u:p@proxy:3128").unwrap();
        assert_eq!(
            connect_request(&p, &origin("https://api.example:8443/x")),
            b"CONNECT api.example:8443 HTTP/1.1\r\nHost: api.example:8443\r\nProxy-Authorization: Basic dTpw\r\n\r\n"
        );
    }

    #[test]
    fn socks5_by_name_with_credentials() {
        let sent = exchange(
            "socks5h://me:pw@127.0.0.1:1080",
            "https://api.example:8443/",
            None,
            &[&[5, 2], &[1, 0], &[5, 0, 0, 1, 127, 0, 0, 1, 0x1f, 0x90]],
        )
        .unwrap();
        assert_eq!(sent[0], [5, 2, 0, 2]);
        assert_eq!(sent[1], b"\x01\x02me\x02pw");
        let mut connect = vec![5, 1, 0, 3, 11];
        connect.extend_from_slice(b"api.example");
        connect.extend_from_slice(&8443u16.to_be_bytes());
        assert_eq!(sent[2], connect);
    }

    #[test]
    fn socks5_by_address_without_credentials() {
        let v6: IpAddr = "::1".parse().unwrap();
        let mut reply = vec![5, 0, 0, 4];
        reply.extend_from_slice(&[0; 18]);
        let sent = exchange(
            "socks5://proxy",
            "http://name/",
            Some(v6),
            &[&[5, 0], &reply],
        )
        .unwrap();
        assert_eq!(sent[0], [5, 1, 0]);
        let mut connect = vec![5, 1, 0, 4];
        connect.extend_from_slice(&[0; 15]);
        connect.extend_from_slice(&[1, 0, 80]);
        assert_eq!(sent[1], connect);
        // A literal address goes as one, a name reply is as long as its name says.
        let sent = exchange(
            "socks5h://proxy",
            "http://10.1.2.3:81/",
            None,
            &[&[5, 0], b"\x05\x00\x00\x03\x03abc\x00\x50"],
        )
        .unwrap();
        assert_eq!(sent[1], [5, 1, 0, 1, 10, 1, 2, 3, 0, 81]);
    }

    #[test]
    fn socks5_refusals_say_why() {
        let refused = |answers: &[&[u8]]| {
            exchange("socks5h://u:p@proxy:1080", "http://site/", None, answers).unwrap_err()
        };
        let said = |e: Error| match e {
            Error::Socks { reason, .. } => reason,
            e => panic!("{e}"),
        };
        assert_eq!(
            said(refused(&[&[5, 0xff]])),
            "it takes none of the authentication methods offered"
        );
        assert_eq!(
            said(refused(&[&[5, 2], &[1, 1]])),
            "the user and password were refused"
        );
        assert_eq!(
            said(refused(&[&[5, 0], &[5, 5, 0, 1, 0, 0, 0, 0, 0, 0]])),
            "connection refused"
        );
        // A byte past the reply.
        let proxy = Proxy::parse("socks5h://proxy").unwrap();
        let to = origin("http://site/");
        let (mut tunnel, _) = Tunnel::start(&proxy, &to, None).unwrap();
        assert!(matches!(tunnel.step(&[5, 0]), Ok(Step::Send(_))));
        let e = tunnel.step(&[5, 0, 0, 1, 0, 0, 0, 0, 0, 0, 9]).unwrap_err();
        assert!(
            e.to_string().contains("before the tunnel's first request"),
            "{e}"
        );
        let e = refused(&[b"HT"]);
        assert!(e.to_string().contains("not a SOCKS5 answer"), "{e}");
        let e = exchange("socks5h://proxy", "http://site/", None, &[&[5, 2]]).unwrap_err();
        assert_eq!(said(e), "it wants a user and password");
        assert_eq!(
            refused(&[&[5, 0], &[5, 4, 0, 1, 0, 0, 0, 0, 0, 0]]).to_string(),
            "the SOCKS proxy proxy:1080 refused: host unreachable"
        );
    }

    /// The reply a SOCKS4 proxy grants with (its port and address carry nothing).
    const GRANTED: &[u8] = &[0, 90, 0, 0, 0, 0, 0, 0];

    #[test]
    fn socks4_by_address_with_a_user_id() {
        let v4: IpAddr = "192.0.2.7".parse().unwrap();
        let sent = exchange(
            "socks4://me:ignored@proxy",
            "http://name:8080/",
            Some(v4),
            &[GRANTED],
        );
        assert_eq!(sent.unwrap(), [b"\x04\x01\x1f\x90\xc0\x00\x02\x07me\x00"]);
        // A literal address in the URL goes as it is; no user, an empty user id.
        let sent = exchange("socks4://proxy", "https://10.1.2.3/", None, &[GRANTED]);
        assert_eq!(sent.unwrap(), [b"\x04\x01\x01\xbb\x0a\x01\x02\x03\x00"]);
    }

    #[test]
    fn socks4a_by_name() {
        let sent = exchange("socks4a://u@proxy", "http://api.example/", None, &[GRANTED]);
        assert_eq!(
            sent.unwrap(),
            [b"\x04\x01\x00\x50\x00\x00\x00\x01u\x00api.example\x00".to_vec()]
        );
        // An address needs no name.
        let sent = exchange("socks4a://proxy", "http://10.0.0.9/", None, &[GRANTED]);
        assert_eq!(sent.unwrap(), [b"\x04\x01\x00\x50\x0a\x00\x00\x09\x00"]);
    }

    #[test]
    fn socks4_refusals_say_why() {
        let said = |e: Error| match e {
            Error::Socks { reason, .. } => reason,
            e => panic!("{e}"),
        };
        let answer = |code: u8| {
            let reply = [0, code, 0, 0, 0, 0, 0, 0];
            exchange("socks4a://proxy", "http://site/", None, &[&reply]).unwrap_err()
        };
        assert_eq!(said(answer(91)), "the request was rejected or failed");
        assert_eq!(said(answer(92)), "it could not reach the client's identd");
        assert_eq!(
            said(answer(93)),
            "the client's identd reported another user id"
        );
        let v6 = Some("::1".parse().unwrap());
        let e = exchange("socks4://proxy", "http://site/", v6, &[]).unwrap_err();
        assert_eq!(said(e), "SOCKS4 reaches IPv4 addresses only");
        let e = exchange("socks4a://proxy", "http://[::1]/", None, &[]).unwrap_err();
        assert_eq!(said(e), "SOCKS4 reaches IPv4 addresses only");
        let e = exchange("socks4a://a%00b@proxy", "http://site/", None, &[]).unwrap_err();
        assert_eq!(said(e), "SOCKS4 cannot carry a user name with a NUL byte");
        // A SOCKS5 answer, and a byte past the reply.
        let e = exchange(
            "socks4a://proxy",
            "http://site/",
            None,
            &[&[5, 0, 0, 1, 0, 0, 0, 0]],
        );
        assert!(e.unwrap_err().to_string().contains("not a SOCKS4 answer"));
        let proxy = Proxy::parse("socks4a://proxy").unwrap();
        let to = origin("http://site/");
        let (mut tunnel, _) = Tunnel::start(&proxy, &to, None).unwrap();
        let e = tunnel.step(&[0, 90, 0, 0, 0, 0, 0, 0, 1]).unwrap_err();
        assert!(
            e.to_string().contains("before the tunnel's first request"),
            "{e}"
        );
    }

    #[test]
    fn socks4_resolves_to_ipv4() {
        let proxy = Proxy::parse("socks4://proxy").unwrap();
        let to = origin("http://site/");
        let both = ["[::1]:80".parse().unwrap(), "127.0.0.1:80".parse().unwrap()];
        let found = first_address(&proxy, &to, Ok(both.into_iter())).unwrap();
        assert_eq!(found, IpAddr::from([127, 0, 0, 1]));
        let socks5 = Proxy::parse("socks5://proxy").unwrap();
        let found = first_address(&socks5, &to, Ok(both.into_iter())).unwrap();
        assert!(found.is_ipv6());
        let v6_only = ["[::1]:80".parse().unwrap()];
        assert!(first_address(&proxy, &to, Ok(v6_only.into_iter())).is_err());
    }
}
