//! `ringwire get -w FORMAT`, as curl's `--write-out`: after the transfer, the format with
//! `%{variable}` filled in and `\n`, `\r`, `\t`, `\\` escapes, on stdout.

use std::time::Duration;

use ringwire_client::Protocol;

/// What a transfer came to, for the format's variables.
#[derive(Debug)]
pub(crate) struct Transfer<'a> {
    pub(crate) status: u16,
    pub(crate) protocol: Protocol,
    /// Body bytes written (decoded, if they were).
    pub(crate) size_download: u64,
    pub(crate) time_total: Duration,
    pub(crate) content_type: Option<&'a str>,
    pub(crate) num_redirects: u32,
}

/// The variables this knows, for the warning about others.
const KNOWN: &str = "http_code, response_code, http_version, size_download, time_total, \
                     content_type, num_redirects";

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
        "time_total" => format!("{:.6}", t.time_total.as_secs_f64()),
        "content_type" => t.content_type.unwrap_or_default().to_owned(),
        "num_redirects" => t.num_redirects.to_string(),
        _ => {
            eprintln!("ringwire: unknown --write-out variable {name:?} (known: {KNOWN})");
            String::new()
        }
    }
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
            time_total: Duration::from_micros(1_500_250),
            content_type: Some("text/plain"),
            num_redirects: 1,
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
    }
}
