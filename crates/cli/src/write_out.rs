//! `ringwire get -w FORMAT`, as curl's `--write-out`: after the transfer, the format with
//! `%{variable}` filled in and `\n`, `\r`, `\t`, `\\` escapes, on stdout.

use std::net::SocketAddr;
use std::time::Duration;

use ringwire_client::Protocol;

/// What a transfer came to, for the format's variables.
#[derive(Debug)]
pub(crate) struct Transfer<'a> {
    pub(crate) status: u16,
    pub(crate) protocol: Protocol,
    /// Body bytes written (decoded, if they were).
    pub(crate) size_download: u64,
    pub(crate) content_type: Option<&'a str>,
    pub(crate) num_redirects: u32,
    /// The URL of the last request (the last redirect followed).
    pub(crate) url_effective: &'a str,
    pub(crate) timing: Timing,
    pub(crate) time_total: Duration,
}

/// When the last request's steps were done, from the start: as curl, each from the last
/// time it happened, zero if it never did (no TLS, a pooled connection).
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct Timing {
    /// The host's addresses known (resolved, or pinned).
    pub(crate) namelookup: Duration,
    /// TCP connected (to the origin or its proxy), and to which address.
    pub(crate) connect: Duration,
    pub(crate) remote: Option<SocketAddr>,
    /// TLS handshake done.
    pub(crate) appconnect: Duration,
    /// The request about to be sent.
    pub(crate) pretransfer: Duration,
    /// Its first answer's head in (an interim one, if any).
    pub(crate) starttransfer: Duration,
    /// The last redirect's answer in, before the request it led to (zero without one).
    pub(crate) redirect: Duration,
}

/// The variables this knows, for the warning about others.
const KNOWN: &str = "http_code, response_code, http_version, size_download, content_type, \
                     num_redirects, url_effective, remote_ip, remote_port, time_namelookup, \
                     time_connect, time_appconnect, time_pretransfer, time_starttransfer, \
                     time_redirect, time_total";

/// `format` filled in from `transfer`; an unknown variable is left empty, with a warning on
/// stderr (as curl does).
pub(crate) fn render(format: &str, transfer: &Transfer<'_>) -> String {
    let mut out = String::with_capacity(format.len());
    let mut rest = format;
    while let Some(at) = rest.find(['%', '\\']) {
        out.push_str(&rest[..at]);
        let tail = &rest[at..];
        if let Some(inner) = tail.strip_prefix("%{") {
            if let Some(end) = inner.find('}') {
                out.push_str(&variable(&inner[..end], transfer));
                rest = &inner[end + 1..];
                continue;
            }
        }
        let (text, skip) = match tail.as_bytes().get(..2) {
            Some(b"%%") => ("%", 2),
            Some(b"\\n") => ("\n", 2),
            Some(b"\\r") => ("\r", 2),
            Some(b"\\t") => ("\t", 2),
            Some(b"\\\\") => ("\\", 2),
            _ => (&tail[..1], 1),
        };
        out.push_str(text);
        rest = &tail[skip..];
    }
    out.push_str(rest);
    out
}

fn variable(name: &str, t: &Transfer<'_>) -> String {
    match name {
        "http_code" | "response_code" => format!("{:03}", t.status),
        "http_version" => match t.protocol {
            Protocol::Http1 => "1.1".into(),
            Protocol::Http2 => "2".into(),
        },
        "size_download" => t.size_download.to_string(),
        "content_type" => t.content_type.unwrap_or_default().to_owned(),
        "num_redirects" => t.num_redirects.to_string(),
        "url_effective" => t.url_effective.to_owned(),
        "remote_ip" => t
            .timing
            .remote
            .map(|a| a.ip().to_string())
            .unwrap_or_default(),
        "remote_port" => t
            .timing
            .remote
            .map(|a| a.port().to_string())
            .unwrap_or_default(),
        "time_namelookup" => seconds(t.timing.namelookup),
        "time_connect" => seconds(t.timing.connect),
        "time_appconnect" => seconds(t.timing.appconnect),
        "time_pretransfer" => seconds(t.timing.pretransfer),
        "time_starttransfer" => seconds(t.timing.starttransfer),
        "time_redirect" => seconds(t.timing.redirect),
        "time_total" => seconds(t.time_total),
        _ => {
            eprintln!("ringwire: unknown --write-out variable {name:?} (known: {KNOWN})");
            String::new()
        }
    }
}

/// Seconds with microseconds, as curl writes times.
fn seconds(time: Duration) -> String {
    format!("{:.6}", time.as_secs_f64())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn variables_and_escapes_as_curl() {
        let t = Transfer {
            status: 204,
            protocol: Protocol::Http2,
            size_download: 12,
            content_type: Some("text/plain"),
            num_redirects: 1,
            url_effective: "https://example.com/b",
            timing: Timing {
                namelookup: Duration::from_micros(20),
                connect: Duration::from_micros(250),
                remote: Some("[::1]:8443".parse().unwrap()),
                appconnect: Duration::from_micros(1_250),
                pretransfer: Duration::from_micros(1_300),
                starttransfer: Duration::from_micros(1_499_000),
                redirect: Duration::from_micros(900),
            },
            time_total: Duration::from_micros(1_500_250),
        };
        assert_eq!(
            render(
                "%{http_code} %{http_version}\\n%{size_download}\\t%{time_total}",
                &t
            ),
            "204 2\n12\t1.500250"
        );
        assert_eq!(
            render(
                "%{content_type}|%{num_redirects}|100%%|\\\\|%{unknown}|%{",
                &t
            ),
            "text/plain|1|100%|\\||%{"
        );
        assert_eq!(render("50% off \\x", &t), "50% off \\x");
        assert_eq!(
            render(
                "%{url_effective} %{remote_ip} %{remote_port} %{time_namelookup} \
                 %{time_connect} %{time_appconnect} %{time_pretransfer} %{time_redirect} \
                 %{time_starttransfer}",
                &t
            ),
            "https://example.com/b ::1 8443 0.000020 0.000250 0.001250 0.001300 0.000900 \
             1.499000"
        );
    }
}
