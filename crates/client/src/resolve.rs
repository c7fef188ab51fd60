//! Addresses pinned for host names, as curl's `--resolve` and reqwest's `resolve` pin them:
//! a connection to a pinned host and port goes to the given address, while the name is still
//! what `Host`, SNI and the certificate check use (a staging server under its real name).

use std::net::{IpAddr, SocketAddr};

use crate::url::Origin;

/// The pins, few: looked up by a scan.
#[derive(Debug, Clone, Default)]
pub(crate) struct Pinned(Vec<(String, u16, Vec<SocketAddr>)>);

impl Pinned {
    /// Pins `host:port` to `addrs`, raced as a name's addresses are (`connect.rs`),
    /// replacing an earlier pin of the same; none unpins it.
    pub(crate) fn add(&mut self, host: &str, port: u16, addrs: &[IpAddr]) {
        let host = host
            .trim_start_matches('[')
            .trim_end_matches(']')
            .to_ascii_lowercase();
        self.0.retain(|(h, p, _)| !(*h == host && *p == port));
        if !addrs.is_empty() {
            let addrs = addrs.iter().map(|&a| SocketAddr::new(a, port)).collect();
            self.0.push((host, port, addrs));
        }
    }

    /// Where a connection to `origin` goes, if it is pinned: its first address.
    pub(crate) fn get(&self, origin: &Origin) -> Option<SocketAddr> {
        self.all(origin).and_then(|addrs| addrs.first().copied())
    }

    /// Every address `origin` is pinned to, if it is.
    pub(crate) fn all(&self, origin: &Origin) -> Option<&[SocketAddr]> {
        self.0
            .iter()
            .find(|(h, p, _)| *h == origin.host() && *p == origin.port())
            .map(|(_, _, addrs)| &addrs[..])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Url;

    #[test]
    fn pins_by_host_and_port() {
        let mut pinned = Pinned::default();
        pinned.add("API.example", 443, &["10.0.0.1".parse().unwrap()]);
        pinned.add("[::1]", 80, &["::2".parse().unwrap()]);
        let origin = |url: &str| Url::parse(url).unwrap().origin().clone();
        assert_eq!(
            pinned.get(&origin("https://api.example/x")),
            Some("10.0.0.1:443".parse().unwrap())
        );
        assert_eq!(pinned.get(&origin("http://api.example/")), None);
        assert_eq!(
            pinned.get(&origin("http://[::1]/")),
            Some("[::2]:80".parse().unwrap())
        );
        let both = ["10.0.0.2".parse().unwrap(), "::3".parse().unwrap()];
        pinned.add("api.example", 443, &both);
        assert_eq!(
            pinned.get(&origin("https://api.example/")),
            Some("10.0.0.2:443".parse().unwrap())
        );
        assert_eq!(
            pinned.all(&origin("https://api.example/")),
            Some(
                &[
                    "10.0.0.2:443".parse().unwrap(),
                    "[::3]:443".parse().unwrap()
                ][..]
            )
        );
        pinned.add("api.example", 443, &[]);
        assert_eq!(pinned.all(&origin("https://api.example/")), None);
    }
}
