//! What follows a final answer: a redirect to follow (RFC 9110 section
//! 15.4: the next URL and method), or the same request again without its
//! expectation after a `417`; either way a head rewritten from the one sent.
//! And a head rewritten to carry a cookie jar's `Cookie` field.

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
    /// Whether the body still waits for `100 Continue`.
    keep_expectation: bool,
}

/// Gives the `authorization` field for a request a redirect sends to another origin
/// ([`blocking::Client::authorize_redirects`](crate::blocking::Client::authorize_redirects)).
pub(crate) type Authorize = dyn Fn(&Url) -> Option<String> + Send + Sync;

/// A client's [`Authorize`], if it was given one.
#[derive(Clone, Default)]
pub(crate) struct Authorizer(pub(crate) Option<std::sync::Arc<Authorize>>);

impl std::fmt::Debug for Authorizer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.0.is_some() { "Some(..)" } else { "None" })
    }
}

/// Which redirects a client follows, and what it tells their new origins.
#[derive(Clone, Copy)]
pub(crate) struct Follow<'c> {
    /// Redirects followed per request (`None`: none).
    pub(crate) max: Option<u32>,
    /// The `authorization` field of a hop to another origin.
    pub(crate) authorize: Option<&'c Authorize>,
}

/// What a rewritten head gains.
#[derive(Clone, Copy, Default)]
struct Added<'a> {
    /// Cookies, after the values of the head's own `cookie` field.
    cookies: Option<&'a str>,
    /// An `authorization` field (the head's own never goes to another origin).
    authorization: Option<&'a str>,
}

/// What a final answer said that decides the next request.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Answer<'r> {
    pub(crate) status: u16,
    pub(crate) location: Option<&'r [u8]>,
}

/// The request that follows `answer` to `sent` (whose encoded head is
/// `head` and body `body_len` bytes), if one does: after a `417` to a body
/// that waited for `100 Continue`, the same request with the body at once
/// (RFC 9110 section 10.1.1: a client SHOULD repeat it without the
/// expectation); else, with redirects followed as `follow` says (up to its
/// `max`, `hops` so far, counted here), the redirect's. None that would send a
/// body streamed from a source again unless the source can give it again
/// (`resendable`: a file): otherwise that answer is the caller's.
pub(crate) fn next_hop(
    sent: &Request<'_>,
    head: &[u8],
    body_len: usize,
    answer: Answer<'_>,
    follow: Follow<'_>,
    hops: &mut u32,
    resendable: bool,
) -> Result<Option<Hop>, Error> {
    let stuck = sent.streamed().is_some() && !resendable;
    if answer.status == 417 && sent.expects_continue() {
        if stuck {
            return Ok(None);
        }
        let url = sent.url().clone();
        let body = Some(body_len);
        let again = Hop::rewrite(
            sent,
            head,
            sent.method(),
            url,
            body,
            false,
            Added::default(),
        )?;
        return Ok(Some(again));
    }
    let Some(max) = follow.max else {
        return Ok(None);
    };
    let Some(hop) = Hop::after(sent, head, body_len, answer, follow.authorize)? else {
        return Ok(None);
    };
    if hop.keep_body && stuck {
        return Ok(None);
    }
    if *hops == max {
        return Err(Error::TooManyRedirects { max });
    }
    *hops += 1;
    Ok(Some(hop))
}

impl Hop {
    /// The redirect `answer` leads to, after `sent` (whose encoded head is
    /// `head` and body `body_len` bytes), authorized by `authorize` when it
    /// goes to another origin; `None` when the response is not a redirect to
    /// follow.
    fn after(
        sent: &Request<'_>,
        head: &[u8],
        body_len: usize,
        answer: Answer<'_>,
        authorize: Option<&Authorize>,
    ) -> Result<Option<Hop>, Error> {
        let keep_method = match answer.status {
            301..=303 => sent.method() == "HEAD",
            307 | 308 => true,
            _ => return Ok(None),
        };
        let Some(location) = answer.location else {
            return Ok(None);
        };
        let location = String::from_utf8_lossy(location);
        let url = sent.url().join(&location).map_err(Error::InvalidLocation)?;
        let method = if keep_method { sent.method() } else { "GET" };
        let has_body = body_len > 0 || sent.streamed().is_some();
        let body = (keep_method && has_body).then_some(body_len);
        let authorization = authorize
            .filter(|_| url.origin() != sent.url().origin())
            .and_then(|authorize| authorize(&url));
        let added = Added {
            cookies: None,
            authorization: authorization.as_deref(),
        };
        // `100-continue` only goes with content (RFC 9110 section 10.1.1).
        Self::rewrite(sent, head, method, url, body, body.is_some(), added).map(Some)
    }

    /// `sent` (whose encoded head is `head`) as it is, framing and body included, carrying
    /// `cookies` too (after the values of any `cookie` field it has: one field, as RFC 6265
    /// section 5.4 wants).
    pub(crate) fn cookied(sent: &Request<'_>, head: &[u8], cookies: &str) -> Result<Hop, Error> {
        let url = sent.url().clone();
        let expectation = sent.expects_continue();
        let rewritten = Self::rewrite(
            sent,
            head,
            sent.method(),
            url,
            None,
            expectation,
            Added {
                cookies: Some(cookies),
                authorization: None,
            },
        );
        rewritten.map(|hop| Hop {
            keep_body: true,
            ..hop
        })
    }

    /// `sent` (whose encoded head is `head`) as `method` to `url`, with the
    /// same body of `body` bytes or none, its expectation kept or not, and the
    /// fields `added`; with cookies added, its framing as it was and the cookies
    /// added to its `cookie` field. A body streamed from a source keeps its
    /// framing too (its length, or chunked).
    fn rewrite(
        sent: &Request<'_>,
        head: &[u8],
        method: &str,
        url: Url,
        body: Option<usize>,
        keep_expectation: bool,
        added: Added<'_>,
    ) -> Result<Hop, Error> {
        let cookies = added.cookies;
        let same_origin = url.origin() == sent.url().origin();
        let keep_framing = cookies.is_some() || (body.is_some() && sent.streamed().is_some());
        let mut parser = RequestParser::default();
        let Ok(Status::Complete(old, _)) = parser.parse(head) else {
            // The client encoded this head itself: only bytes overwritten
            // since can fail to parse.
            return Err(Error::StaleRequest);
        };
        let extra =
            cookies.map_or(0, |c| c.len() + 16) + added.authorization.map_or(0, |a| a.len() + 24);
        let mut out = vec![0; head.len() + url.target().len() + url.authority().len() + 64 + extra];
        // The cookies sent: what the head had, then the jar's.
        let cookie: Option<String> = cookies.map(|jar| {
            let mut all: Vec<&[u8]> = old.headers().get_all("cookie").collect();
            all.push(jar.as_bytes());
            String::from_utf8_lossy(&all.join(&b"; "[..])).into_owned()
        });
        loop {
            let written = RequestWriter::new(&mut out, method, url.target())
                .and_then(|query| query.headers(Version::Http11))
                .and_then(|mut writer| {
                    if !same_origin {
                        writer.header("host", url.authority())?;
                    }
                    for field in old.headers() {
                        let name = field.name.as_str();
                        let dropped = (!keep_framing
                            && REWRITTEN.iter().any(|n| field.name.eq_ignore_ascii_case(n)))
                            || (!same_origin
                                && CROSS_ORIGIN
                                    .iter()
                                    .any(|n| field.name.eq_ignore_ascii_case(n)))
                            || (!keep_expectation && field.name.eq_ignore_ascii_case("expect"))
                            || (cookie.is_some() && field.name.eq_ignore_ascii_case("cookie"));
                        if !dropped {
                            writer.header(name, field.value)?;
                        }
                    }
                    if let Some(cookie) = &cookie {
                        writer.header("cookie", cookie.as_bytes())?;
                    }
                    if let Some(authorization) = added.authorization {
                        writer.header("authorization", authorization)?;
                    }
                    if let Some(len) = body.filter(|_| !keep_framing) {
                        writer.content_length(len as u64)?;
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
        Ok(Hop {
            method: method.to_owned(),
            url,
            head: out,
            keep_body: body.is_some(),
            keep_expectation,
        })
    }

    /// The request to send next.
    pub(crate) fn request<'h>(&'h self, first: &Request<'h>) -> Request<'h> {
        first.rewritten(
            &self.method,
            &self.url,
            &self.head,
            self.keep_body,
            self.keep_expectation,
        )
    }
}
