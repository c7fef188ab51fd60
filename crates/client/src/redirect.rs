//! Following a redirect (RFC 9110 section 15.4): the next URL and method,
//! and a head rewritten from the one sent.

use ringwire_http1::encode::{EncodeError, RequestWriter};
use ringwire_http1::{RequestParser, Status, Version};

use crate::{Error, Request, Url};

/// Fields that the new head gets afresh, or must not carry to another origin
/// (`host` is kept within the origin, where it may name a virtual host).
const REWRITTEN: [&str; 2] = ["content-length", "transfer-encoding"];
const CROSS_ORIGIN: [&str; 4] = ["host", "authorization", "cookie", "proxy-authorization"];

/// The request a redirect leads to, its head encoded into a buffer of its
/// own (a cold path, so it may allocate).
#[derive(Debug)]
pub(crate) struct Hop {
    method: String,
    url: Url,
    head: Vec<u8>,
    keep_body: bool,
}

impl Hop {
    /// The redirect `status` with `location` leads to, after `sent` (whose
    /// encoded head is `head` and body `body_len` bytes); `None` when the
    /// response is not a redirect to follow.
    pub(crate) fn after(
        sent: &Request<'_>,
        head: &[u8],
        body_len: usize,
        status: u16,
        location: Option<&[u8]>,
    ) -> Result<Option<Hop>, Error> {
        let keep_method = match status {
            301..=303 => sent.method() == "HEAD",
            307 | 308 => true,
            _ => return Ok(None),
        };
        let Some(location) = location else {
            return Ok(None);
        };
        let location = String::from_utf8_lossy(location);
        let url = sent.url().join(&location).map_err(Error::InvalidLocation)?;
        let method = if keep_method { sent.method() } else { "GET" };
        let keep_body = keep_method && body_len > 0;
        let same_origin = url.origin() == sent.url().origin();
        let mut parser = RequestParser::default();
        let Ok(Status::Complete(old, _)) = parser.parse(head) else {
            // The client encoded this head itself: only bytes overwritten
            // since can fail to parse.
            return Err(Error::StaleRequest);
        };
        let mut out = vec![0; head.len() + url.target().len() + url.authority().len() + 64];
        loop {
            let written = RequestWriter::new(&mut out, method, url.target())
                .and_then(|query| query.headers(Version::Http11))
                .and_then(|mut writer| {
                    if !same_origin {
                        writer.header("host", url.authority())?;
                    }
                    for field in old.headers() {
                        let name = field.name.as_str();
                        let dropped = REWRITTEN.iter().any(|n| field.name.eq_ignore_ascii_case(n))
                            || (!same_origin
                                && CROSS_ORIGIN
                                    .iter()
                                    .any(|n| field.name.eq_ignore_ascii_case(n)))
                            // `100-continue` only goes with content (RFC 9110 section 10.1.1).
                            || (!keep_body && field.name.eq_ignore_ascii_case("expect"));
                        if !dropped {
                            writer.header(name, field.value)?;
                        }
                    }
                    if keep_body {
                        writer.content_length(body_len as u64)?;
                    }
                    writer.finish()
                });
            match written {
                Ok(len) => {
                    out.truncate(len);
                    break;
                }
                Err(EncodeError::BufferFull { needed }) => out.resize(needed.max(out.len() * 2), 0),
                Err(e) => return Err(Error::Encode(e)),
            }
        }
        Ok(Some(Hop {
            method: method.to_owned(),
            url,
            head: out,
            keep_body,
        }))
    }

    /// The request to send next.
    pub(crate) fn request<'h>(&'h self, first: &Request<'h>) -> Request<'h> {
        first.rewritten(&self.method, &self.url, &self.head, self.keep_body)
    }
}
