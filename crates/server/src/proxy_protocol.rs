//! The PROXY protocol header (HAProxy's, versions 1 and 2), sans-IO: what a load
//! balancer that forwards TCP (HAProxy, AWS NLB, Envoy, nginx's stream module) sends
//! before the client's first byte, so that the server learns the client's address
//! rather than the balancer's.
//!
//! [`parse`] reads one header from the front of a buffer, resumably: `Partial` until it
//! has arrived, then the addresses and its length, never a byte past it (what follows is
//! the client's: HTTP, or a TLS handshake). Trust it only from a proxy: a listener that
//! takes it lets whoever connects name any address.

use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

use ringwire_http1::Status;

/// The first bytes of a version 2 header.
pub const V2_SIGNATURE: [u8; 12] = *b"\r\n\r\n\0\r\nQUIT\n";

/// A version 1 line's bound, its CRLF included (the specification's).
pub const V1_MAX_LEN: usize = 107;

/// A version 2 header's bound, its 16 fixed bytes included. The addresses take at most
/// 216 bytes; the rest is room for the balancer's TLVs (AWS's endpoint id, a TLS
/// summary), which this parser skips.
pub const V2_MAX_LEN: usize = 2048;

const V1_PREFIX: &[u8] = b"PROXY ";

/// What a header says about the connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Proxied {
    /// A TCP connection the proxy accepted: `source` is the client, `destination`
    /// the address the client connected to.
    Tcp {
        source: SocketAddr,
        destination: SocketAddr,
    },
    /// No client to name: the proxy's own connection (a version 2 `LOCAL` command: a
    /// health check), or addresses of a family other than TCP over IPv4 or IPv6
    /// (`UNKNOWN`, `UNSPEC`, a Unix socket). The connection's own addresses stand.
    Own,
}

impl Proxied {
    /// The client's address, if the header names one.
    #[must_use]
    pub fn source(&self) -> Option<SocketAddr> {
        match self {
            Proxied::Tcp { source, .. } => Some(*source),
            Proxied::Own => None,
        }
    }
}

/// Why bytes are not a PROXY protocol header. Each ends the connection: the
/// specification forbids guessing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProxyHeaderError {
    /// The connection did not start with a header (a client that came straight to a
    /// listener meant for the proxy).
    Missing,
    /// A version 1 line longer than [`V1_MAX_LEN`] without its CRLF.
    LineTooLong,
    /// A version 1 line other than `PROXY TCP4|TCP6 <source> <destination> <source port>
    /// <destination port>` (single spaces, addresses of the family, decimal ports) or
    /// `PROXY UNKNOWN ...`.
    InvalidLine,
    /// A version 2 header of another version than 2 (the byte after the signature).
    Version(u8),
    /// A version 2 command other than `LOCAL` and `PROXY`.
    Command(u8),
    /// A version 2 family and transport byte naming datagrams (UDP, Unix datagrams) or
    /// nothing known, where a stream connection is proxied.
    Family(u8),
    /// A version 2 address block too short for its family's addresses.
    ShortAddresses,
    /// A version 2 header longer than [`V2_MAX_LEN`].
    TooLong {
        /// Its length, the 16 fixed bytes included.
        length: usize,
    },
}

impl fmt::Display for ProxyHeaderError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ProxyHeaderError::Missing => f.write_str("no PROXY protocol header"),
            ProxyHeaderError::LineTooLong => {
                write!(f, "PROXY protocol line over {V1_MAX_LEN} bytes")
            }
            ProxyHeaderError::InvalidLine => f.write_str("malformed PROXY protocol line"),
            ProxyHeaderError::Version(v) => write!(f, "PROXY protocol version byte {v:#04x}"),
            ProxyHeaderError::Command(c) => write!(f, "PROXY protocol command {c:#x}"),
            ProxyHeaderError::Family(b) => {
                write!(f, "PROXY protocol family/transport {b:#04x} on a stream")
            }
            ProxyHeaderError::ShortAddresses => {
                f.write_str("PROXY protocol address block too short for its family")
            }
            ProxyHeaderError::TooLong { length } => write!(
                f,
                "PROXY protocol header of {length} bytes (limit {V2_MAX_LEN})"
            ),
        }
    }
}

impl std::error::Error for ProxyHeaderError {}

/// Reads the header at the front of `data`: `Complete` with its length, or `Partial`
/// until it has arrived. Bytes that cannot start a header are refused as soon as they
/// are seen.
///
/// # Errors
///
/// The bytes are not a header of either version; see [`ProxyHeaderError`].
pub fn parse(data: &[u8]) -> Result<Status<Proxied>, ProxyHeaderError> {
    if data.is_empty() {
        // Either version: one byte tells which (or that it is neither).
        return Ok(Status::Partial { at_least: 1 });
    }
    if starts(data, &V2_SIGNATURE) {
        v2(data)
    } else if starts(data, V1_PREFIX) {
        v1(data)
    } else {
        Err(ProxyHeaderError::Missing)
    }
}

/// Whether `data` agrees with `prefix` as far as either goes.
fn starts(data: &[u8], prefix: &[u8]) -> bool {
    let n = data.len().min(prefix.len());
    data[..n] == prefix[..n]
}

fn v1(data: &[u8]) -> Result<Status<Proxied>, ProxyHeaderError> {
    let window = &data[..data.len().min(V1_MAX_LEN)];
    let Some(end) = window.iter().position(|&b| b == b'\r' || b == b'\n') else {
        return if data.len() >= V1_MAX_LEN {
            Err(ProxyHeaderError::LineTooLong)
        } else {
            Ok(Status::Partial {
                at_least: data.len() + 1,
            })
        };
    };
    // The line ends with CRLF, within the bound; a bare LF, or a CR followed by
    // anything else, ends nothing.
    if window[end] == b'\n' {
        return Err(ProxyHeaderError::InvalidLine);
    }
    if end + 2 > V1_MAX_LEN {
        return Err(ProxyHeaderError::LineTooLong);
    }
    match data.get(end + 1) {
        None => return Ok(Status::Partial { at_least: end + 2 }),
        Some(b'\n') => {}
        Some(_) => return Err(ProxyHeaderError::InvalidLine),
    }
    let line = &data[V1_PREFIX.len()..end];
    let proxied = v1_fields(line).ok_or(ProxyHeaderError::InvalidLine)?;
    Ok(Status::Complete(proxied, end + 2))
}

/// The fields after `PROXY `.
fn v1_fields(line: &[u8]) -> Option<Proxied> {
    let mut fields = line.split(|&b| b == b' ');
    let v6 = match fields.next()? {
        // Whatever follows is the proxy's business.
        b"UNKNOWN" => return Some(Proxied::Own),
        b"TCP4" => false,
        b"TCP6" => true,
        _ => return None,
    };
    let mut ip = || -> Option<IpAddr> {
        let text = std::str::from_utf8(fields.next()?).ok()?;
        Some(if v6 {
            IpAddr::V6(text.parse::<Ipv6Addr>().ok()?)
        } else {
            IpAddr::V4(text.parse::<Ipv4Addr>().ok()?)
        })
    };
    let (source, destination) = (ip()?, ip()?);
    let (source_port, destination_port) = (port(fields.next()?)?, port(fields.next()?)?);
    if fields.next().is_some() {
        return None;
    }
    Some(Proxied::Tcp {
        source: SocketAddr::new(source, source_port),
        destination: SocketAddr::new(destination, destination_port),
    })
}

/// A port: 1 to 5 decimal digits, no sign, no leading zero (but `0` itself), at most
/// 65535.
fn port(text: &[u8]) -> Option<u16> {
    let digits = !text.is_empty() && text.len() <= 5 && text.iter().all(u8::is_ascii_digit);
    if !digits || (text.len() > 1 && text[0] == b'0') {
        return None;
    }
    let value = text.iter().fold(0u32, |n, &d| n * 10 + u32::from(d - b'0'));
    u16::try_from(value).ok()
}

/// The fixed part of a version 2 header: signature, version and command, family and
/// transport, length.
const V2_FIXED: usize = 16;

fn v2(data: &[u8]) -> Result<Status<Proxied>, ProxyHeaderError> {
    if let Some(&version_command) = data.get(12) {
        if version_command >> 4 != 2 {
            return Err(ProxyHeaderError::Version(version_command));
        }
        if version_command & 0x0f > 1 {
            return Err(ProxyHeaderError::Command(version_command & 0x0f));
        }
    }
    let Some(fixed) = data.get(..V2_FIXED) else {
        return Ok(Status::Partial { at_least: V2_FIXED });
    };
    let length = V2_FIXED + usize::from(u16::from_be_bytes([fixed[14], fixed[15]]));
    if length > V2_MAX_LEN {
        return Err(ProxyHeaderError::TooLong { length });
    }
    let Some(block) = data.get(V2_FIXED..length) else {
        return Ok(Status::Partial { at_least: length });
    };
    let local = fixed[12] & 0x0f == 0;
    let family = fixed[13];
    let proxied = match family {
        // Stream over IPv4, over IPv6.
        0x11 => {
            let a = block.get(..12).ok_or(ProxyHeaderError::ShortAddresses)?;
            let ip = |at: usize| IpAddr::V4(Ipv4Addr::new(a[at], a[at + 1], a[at + 2], a[at + 3]));
            tcp(ip(0), ip(4), &a[8..12])
        }
        0x21 => {
            let a = block.get(..36).ok_or(ProxyHeaderError::ShortAddresses)?;
            let ip = |at: usize| {
                let octets: [u8; 16] = a[at..at + 16].try_into().unwrap_or([0; 16]);
                IpAddr::V6(Ipv6Addr::from(octets))
            };
            tcp(ip(0), ip(16), &a[32..36])
        }
        // Unspecified, a Unix stream socket: nothing this server can use.
        0x00 | 0x31 => Proxied::Own,
        _ if local => Proxied::Own,
        _ => return Err(ProxyHeaderError::Family(family)),
    };
    // A LOCAL header's addresses, if any, are the proxy's own: ignored.
    let proxied = if local { Proxied::Own } else { proxied };
    Ok(Status::Complete(proxied, length))
}

fn tcp(source: IpAddr, destination: IpAddr, ports: &[u8]) -> Proxied {
    Proxied::Tcp {
        source: SocketAddr::new(source, u16::from_be_bytes([ports[0], ports[1]])),
        destination: SocketAddr::new(destination, u16::from_be_bytes([ports[2], ports[3]])),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn complete(data: &[u8]) -> (Proxied, usize) {
        match parse(data) {
            Ok(Status::Complete(proxied, n)) => (proxied, n),
            other => panic!("{:?}: {other:?}", String::from_utf8_lossy(data)),
        }
    }

    fn addr(text: &str) -> SocketAddr {
        text.parse().expect("address")
    }

    #[test]
    fn version_1_lines() {
        let line = b"PROXY TCP4 203.0.113.7 192.0.2.1 56324 443\r\nGET / HTTP/1.1\r\n";
        assert_eq!(
            complete(line),
            (
                Proxied::Tcp {
                    source: addr("203.0.113.7:56324"),
                    destination: addr("192.0.2.1:443"),
                },
                44
            )
        );
        let line = b"PROXY TCP6 2001:db8::7 ::1 65535 0\r\n";
        assert_eq!(complete(line).0.source(), Some(addr("[2001:db8::7]:65535")));
        assert_eq!(complete(b"PROXY UNKNOWN\r\n"), (Proxied::Own, 15));
        let unknown = b"PROXY UNKNOWN ffff::1 ffff::2 1 2\r\nX";
        assert_eq!(complete(unknown), (Proxied::Own, unknown.len() - 1));
        // The longest lines there are: 104 bytes of TCP6, the bound's 107 of UNKNOWN.
        let v6 = "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff";
        let longest = format!("PROXY TCP6 {v6} {v6} 65535 65535\r\n");
        assert_eq!(complete(longest.as_bytes()).1, 104);
        let longest = format!("PROXY UNKNOWN {v6} {v6} 65535 65535\r\n");
        assert_eq!(complete(longest.as_bytes()), (Proxied::Own, V1_MAX_LEN));
    }

    #[test]
    fn version_1_arrives_in_pieces() {
        let line = b"PROXY TCP4 203.0.113.7 192.0.2.1 56324 443\r\n";
        for end in 0..line.len() {
            match parse(&line[..end]) {
                Ok(Status::Partial { at_least }) => {
                    assert!(
                        at_least > end && at_least <= line.len(),
                        "{end}: {at_least}"
                    );
                }
                other => panic!("{end} bytes: {other:?}"),
            }
        }
    }

    #[test]
    fn version_1_refusals() {
        use ProxyHeaderError::*;
        let cases: &[(&[u8], ProxyHeaderError)] = &[
            (b"GET / HTTP/1.1\r\n", Missing),
            (b"\x16\x03\x01", Missing),
            (b"PROXY\r\n", Missing),
            (b"PROXY TCP4 1.2.3.4 5.6.7.8 1 2\n", InvalidLine),
            (b"PROXY TCP4 1.2.3.4 5.6.7.8 1 2\rX", InvalidLine),
            (b"PROXY TCP5 1.2.3.4 5.6.7.8 1 2\r\n", InvalidLine),
            (b"PROXY TCP4 ::1 ::1 1 2\r\n", InvalidLine),
            (b"PROXY TCP6 1.2.3.4 5.6.7.8 1 2\r\n", InvalidLine),
            (b"PROXY TCP4 1.2.3.4 5.6.7.8 1\r\n", InvalidLine),
            (b"PROXY TCP4 1.2.3.4 5.6.7.8 1 2 3\r\n", InvalidLine),
            (b"PROXY TCP4  1.2.3.4 5.6.7.8 1 2\r\n", InvalidLine),
            (b"PROXY TCP4 1.2.3.4 5.6.7.8 65536 2\r\n", InvalidLine),
            (b"PROXY TCP4 1.2.3.4 5.6.7.8 +1 2\r\n", InvalidLine),
            (b"PROXY TCP4 1.2.3.4 5.6.7.8 01 2\r\n", InvalidLine),
            (b"PROXY TCP4 1.2.3.4 5.6.7.8 1 2 \r\n", InvalidLine),
            (b"PROXY TCP4 01.2.3.4 5.6.7.8 1 2\r\n", InvalidLine),
        ];
        for (input, error) in cases {
            assert_eq!(
                parse(input),
                Err(*error),
                "{:?}",
                String::from_utf8_lossy(input)
            );
        }
        let long = format!("PROXY UNKNOWN {}", "x".repeat(100));
        assert_eq!(parse(long.as_bytes()), Err(LineTooLong));
        assert!(parse(&long.as_bytes()[..V1_MAX_LEN - 1]).is_ok_and(|s| s.is_partial()));
    }

    fn v2_header(command: u8, family: u8, block: &[u8]) -> Vec<u8> {
        let mut header = V2_SIGNATURE.to_vec();
        header.push(0x20 | command);
        header.push(family);
        header.extend_from_slice(&u16::try_from(block.len()).expect("len").to_be_bytes());
        header.extend_from_slice(block);
        header
    }

    #[test]
    fn version_2_headers() {
        let mut v4 = vec![203, 0, 113, 7, 192, 0, 2, 1];
        v4.extend_from_slice(&56324u16.to_be_bytes());
        v4.extend_from_slice(&443u16.to_be_bytes());
        // A TLV after the addresses (PP2_TYPE_AUTHORITY) is skipped.
        let mut with_tlv = v4.clone();
        with_tlv.extend_from_slice(b"\x02\x00\x0bexample.com");
        let header = v2_header(1, 0x11, &with_tlv);
        let mut data = header.clone();
        data.extend_from_slice(b"GET / HTTP/1.1\r\n");
        assert_eq!(
            complete(&data),
            (
                Proxied::Tcp {
                    source: addr("203.0.113.7:56324"),
                    destination: addr("192.0.2.1:443"),
                },
                header.len()
            )
        );
        for end in 0..header.len() {
            assert!(
                parse(&header[..end]).is_ok_and(|s| s.is_partial()),
                "{end} bytes"
            );
        }
        let mut v6 = [0u8; 36];
        v6[..16].copy_from_slice(&"2001:db8::7".parse::<Ipv6Addr>().expect("v6").octets());
        v6[15 + 16] = 1;
        v6[32..34].copy_from_slice(&8080u16.to_be_bytes());
        assert_eq!(
            complete(&v2_header(1, 0x21, &v6)).0,
            Proxied::Tcp {
                source: addr("[2001:db8::7]:8080"),
                destination: addr("[::1]:0"),
            }
        );
        // LOCAL (a health check), with or without addresses; UNSPEC; a Unix stream.
        assert_eq!(complete(&v2_header(0, 0x00, &[])), (Proxied::Own, 16));
        assert_eq!(complete(&v2_header(0, 0x11, &v4)).0, Proxied::Own);
        assert_eq!(complete(&v2_header(1, 0x00, &[])).0, Proxied::Own);
        assert_eq!(complete(&v2_header(1, 0x31, &[0; 216])).0, Proxied::Own);
    }

    #[test]
    fn version_2_refusals() {
        use ProxyHeaderError::*;
        let mut wrong_version = v2_header(1, 0x11, &[0; 12]);
        wrong_version[12] = 0x11;
        assert_eq!(parse(&wrong_version[..13]), Err(Version(0x11)));
        assert_eq!(parse(&v2_header(2, 0x11, &[0; 12])), Err(Command(2)));
        assert_eq!(parse(&v2_header(1, 0x12, &[0; 12])), Err(Family(0x12)));
        assert_eq!(parse(&v2_header(1, 0x32, &[0; 216])), Err(Family(0x32)));
        assert_eq!(parse(&v2_header(1, 0x11, &[0; 11])), Err(ShortAddresses));
        assert_eq!(parse(&v2_header(1, 0x21, &[0; 35])), Err(ShortAddresses));
        let mut too_long = v2_header(1, 0x11, &[]);
        too_long[14..16].copy_from_slice(&4096u16.to_be_bytes());
        assert_eq!(parse(&too_long), Err(TooLong { length: 4112 }));
        // A signature broken anywhere is no header at all.
        for at in 0..12 {
            let mut broken = v2_header(1, 0x11, &[0; 12]);
            broken[at] ^= 0x40;
            assert_eq!(parse(&broken), Err(Missing), "byte {at}");
        }
    }
}
