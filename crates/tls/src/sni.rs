//! A server of several names with a certificate each: the one whose certificate is for
//! the name a client asks for by SNI is presented, the first to every other client.

use std::sync::Arc;

use openssl::nid::Nid;
use openssl::x509::X509;
use rustls::server::{ClientHello, ResolvesServerCert};
use rustls::sign::CertifiedKey;

use crate::config::Identity;
use crate::TlsError;

/// The host names `identity`'s leaf certificate is for: its DNS subject alternative
/// names, or without any its subject's common name (lowercase, as SNI is compared).
pub(crate) fn names(identity: &Identity) -> Result<Vec<String>, TlsError> {
    let leaf = X509::from_pem(identity.chain())
        .map_err(|e| TlsError::Config(format!("certificate PEM: {e}")))?;
    let mut names: Vec<String> = leaf
        .subject_alt_names()
        .into_iter()
        .flatten()
        .filter_map(|name| name.dnsname().map(str::to_ascii_lowercase))
        .collect();
    if names.is_empty() {
        names.extend(
            leaf.subject_name()
                .entries_by_nid(Nid::COMMONNAME)
                .filter_map(|cn| cn.data().to_string().ok())
                .map(|cn| cn.to_ascii_lowercase()),
        );
    }
    if names.is_empty() {
        return Err(TlsError::Config(
            "a certificate added by SNI names no host (no DNS names, no common name)".into(),
        ));
    }
    Ok(names)
}

/// Whether a certificate's `name` covers `host` (lowercase): the same name, or a wildcard
/// `*.example.com` standing for exactly one label (`a.example.com`, not `example.com` nor
/// `a.b.example.com`), as RFC 6125 has clients check it.
fn covers(name: &str, host: &str) -> bool {
    match name.strip_prefix("*.") {
        Some(parent) => host
            .split_once('.')
            .is_some_and(|(label, rest)| !label.is_empty() && rest == parent),
        None => name == host,
    }
}

/// What goes with the first of `choices` whose names cover `host`: an exact name before
/// a wildcard, then in the order added.
pub(crate) fn pick<'a, T>(choices: &'a [(Vec<String>, T)], host: &str) -> Option<&'a T> {
    let host = host.trim_end_matches('.').to_ascii_lowercase();
    let exact = choices
        .iter()
        .find(|(names, _)| names.iter().any(|n| !n.starts_with("*.") && *n == host));
    exact
        .or_else(|| {
            choices
                .iter()
                .find(|(names, _)| names.iter().any(|n| covers(n, &host)))
        })
        .map(|(_, value)| value)
}

/// rustls's side: the certified key for the client's SNI name, or the default.
#[derive(Debug)]
pub(crate) struct Resolver {
    pub(crate) default: Arc<CertifiedKey>,
    pub(crate) named: Vec<(Vec<String>, Arc<CertifiedKey>)>,
}

impl ResolvesServerCert for Resolver {
    fn resolve(&self, hello: ClientHello<'_>) -> Option<Arc<CertifiedKey>> {
        let named = hello.server_name().and_then(|host| pick(&self.named, host));
        Some(Arc::clone(named.unwrap_or(&self.default)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wildcards_cover_one_label() {
        assert!(covers("*.example.com", "a.example.com"));
        assert!(!covers("*.example.com", "example.com"));
        assert!(!covers("*.example.com", "a.b.example.com"));
        assert!(!covers("*.example.com", ".example.com"));
        assert!(covers("example.com", "example.com"));
        assert!(!covers("example.com", "a.example.com"));
    }

    #[test]
    fn exact_names_come_before_wildcards() {
        let choices = vec![
            (vec!["*.example.com".to_owned()], 1),
            (vec!["api.example.com".to_owned(), "b.test".to_owned()], 2),
        ];
        assert_eq!(pick(&choices, "api.example.com"), Some(&2));
        assert_eq!(pick(&choices, "API.Example.COM."), Some(&2));
        assert_eq!(pick(&choices, "www.example.com"), Some(&1));
        assert_eq!(pick(&choices, "b.test"), Some(&2));
        assert_eq!(pick(&choices, "c.test"), None);
    }

    #[test]
    fn names_come_from_the_certificate() {
        let (cert, key) = crate::self_signed(&["a.test", "*.w.test"]).expect("certificate");
        let identity = Identity::from_pem(&cert, &key).expect("identity");
        assert_eq!(names(&identity).expect("names"), ["a.test", "*.w.test"]);
    }
}
