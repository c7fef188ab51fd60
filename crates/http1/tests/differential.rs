//! Differential test against httparse (strict default `ParserConfig`): every input in the
//! corpus is parsed by both, and both must say the same thing (the same head, or both partial,
//! or both an error) unless the input is listed in `EXPLAINED` with the reason they differ.
//! An explained input that stops differing fails too, so the table stays true.
//!
//! httparse only tokenizes a head; ringwire also applies RFC 9112's framing and host rules and
//! refuses what the RFC lets a recipient refuse (bare LF, a body length it cannot trust), so
//! most explained entries are ringwire being stricter. docs/http1-differential.md lists them.

use ringwire_http1::{Limits, Method, RequestParser, ResponseParser, Status, Version};

/// What a parser made of an input. Errors are not compared by kind: the two crates name them
/// differently.
#[derive(Clone, PartialEq, Eq)]
enum Parsed<Line> {
    Complete {
        len: usize,
        line: Line,
        headers: Vec<(String, Text)>,
    },
    Partial,
    Error(String),
}

/// Short enough to read in a failure message: the first few fields only.
impl<Line: std::fmt::Debug> std::fmt::Debug for Parsed<Line> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Parsed::Complete { len, line, headers } => {
                write!(f, "Complete({len} bytes, {line:?}, ")?;
                f.debug_list().entries(headers.iter().take(4)).finish()?;
                if headers.len() > 4 {
                    write!(f, " and {} more", headers.len() - 4)?;
                }
                f.write_str(")")
            }
            Parsed::Partial => f.write_str("Partial"),
            Parsed::Error(e) => write!(f, "Error({e})"),
        }
    }
}

impl<Line: PartialEq> Parsed<Line> {
    fn agrees_with(&self, other: &Self) -> bool {
        match (self, other) {
            (Parsed::Error(_), Parsed::Error(_)) => true,
            _ => self == other,
        }
    }
}

/// Method, path, minor version.
type RequestLine = (String, Text, u8);
/// Minor version, code, reason.
type StatusLine = (u8, u16, Text);

/// Bytes that print as an escaped string, shortened when long, so failures stay readable.
#[derive(Clone, PartialEq, Eq)]
struct Text(Vec<u8>);

impl Text {
    fn of(bytes: &[u8]) -> Self {
        Text(bytes.to_vec())
    }
}

impl std::fmt::Debug for Text {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.0.get(..40) {
            Some(start) if self.0.len() > 40 => {
                write!(
                    f,
                    "\"{}\"... ({} bytes)",
                    start.escape_ascii(),
                    self.0.len()
                )
            }
            _ => write!(f, "\"{}\"", self.0.escape_ascii()),
        }
    }
}

fn minor(version: Version) -> u8 {
    match version {
        Version::Http10 => 0,
        Version::Http11 => 1,
    }
}

fn httparse_request(buf: &[u8]) -> Parsed<RequestLine> {
    let mut headers = [httparse::EMPTY_HEADER; 64];
    let mut req = httparse::Request::new(&mut headers);
    match req.parse(buf) {
        Ok(httparse::Status::Complete(len)) => Parsed::Complete {
            len,
            line: (
                req.method.unwrap_or_default().to_owned(),
                Text::of(req.path.unwrap_or_default().as_bytes()),
                req.version.unwrap_or_default(),
            ),
            headers: req
                .headers
                .iter()
                .map(|h| (h.name.to_owned(), Text::of(h.value)))
                .collect(),
        },
        Ok(httparse::Status::Partial) => Parsed::Partial,
        Err(e) => Parsed::Error(e.to_string()),
    }
}

fn ringwire_request(buf: &[u8]) -> Parsed<RequestLine> {
    let mut parser = RequestParser::new(Limits::default());
    match parser.parse(buf) {
        Ok(Status::Complete(req, len)) => Parsed::Complete {
            len,
            line: (
                req.method().to_string(),
                Text::of(req.target().as_bytes()),
                minor(req.version()),
            ),
            headers: req
                .headers()
                .iter()
                .map(|h| (h.name.as_str().to_owned(), Text::of(h.value)))
                .collect(),
        },
        Ok(Status::Partial { .. }) => Parsed::Partial,
        Err(e) => Parsed::Error(format!("{e:?}")),
    }
}

fn httparse_response(buf: &[u8]) -> Parsed<StatusLine> {
    let mut headers = [httparse::EMPTY_HEADER; 64];
    let mut res = httparse::Response::new(&mut headers);
    match res.parse(buf) {
        Ok(httparse::Status::Complete(len)) => Parsed::Complete {
            len,
            line: (
                res.version.unwrap_or_default(),
                res.code.unwrap_or_default(),
                Text::of(res.reason.unwrap_or_default().as_bytes()),
            ),
            headers: res
                .headers
                .iter()
                .map(|h| (h.name.to_owned(), Text::of(h.value)))
                .collect(),
        },
        Ok(httparse::Status::Partial) => Parsed::Partial,
        Err(e) => Parsed::Error(e.to_string()),
    }
}

fn ringwire_response(buf: &[u8]) -> Parsed<StatusLine> {
    let mut parser = ResponseParser::new(Limits::default());
    match parser.parse(buf, Method::Get) {
        Ok(Status::Complete(res, len)) => Parsed::Complete {
            len,
            line: (minor(res.version()), res.status(), Text::of(res.reason())),
            headers: res
                .headers()
                .iter()
                .map(|h| (h.name.as_str().to_owned(), Text::of(h.value)))
                .collect(),
        },
        Ok(Status::Partial { .. }) => Parsed::Partial,
        Err(e) => Parsed::Error(format!("{e:?}")),
    }
}

/// Parses every input with both parsers and fails, listing them all, on any disagreement not
/// in `explained` and on any explained entry that no longer disagrees (or names no input).
fn compare<Line: PartialEq + std::fmt::Debug>(
    corpus: &[(&str, Vec<u8>)],
    explained: &[(&str, &str)],
    httparse: fn(&[u8]) -> Parsed<Line>,
    ringwire: fn(&[u8]) -> Parsed<Line>,
) {
    let mut problems = Vec::new();
    for (i, (name, _)) in corpus.iter().enumerate() {
        assert!(
            corpus[..i].iter().all(|(n, _)| n != name),
            "duplicate name {name}"
        );
    }
    for (name, _) in explained {
        if !corpus.iter().any(|(n, _)| n == name) {
            problems.push(format!("{name}: in EXPLAINED but not in the corpus"));
        }
    }
    for (name, input) in corpus {
        let (theirs, ours) = (httparse(input), ringwire(input));
        let why = explained
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, why)| why);
        match (theirs.agrees_with(&ours), why) {
            (true, None) | (false, Some(_)) => {}
            (false, None) => problems.push(format!(
                "{name}: unexplained disagreement\n  httparse: {theirs:?}\n  ringwire: {ours:?}"
            )),
            (true, Some(why)) => problems.push(format!(
                "{name}: explained ({why}) but both now say {ours:?}"
            )),
        }
    }
    assert!(problems.is_empty(), "\n{}", problems.join("\n"));
}

/// Requests: valid ones of many shapes, then one or more of every malformed class.
const REQUESTS: &[(&str, &[u8])] = &[
    // Valid.
    ("get_minimal", b"GET / HTTP/1.1\r\nHost: a\r\n\r\n"),
    ("get_query", b"GET /search?q=rust&lang=en HTTP/1.1\r\nHost: example.com\r\n\r\n"),
    ("get_browser", b"GET /index.html HTTP/1.1\r\nHost: www.example.com\r\nUser-Agent: Mozilla/5.0 (X11; Linux x86_64; rv:120.0) Gecko/20100101 Firefox/120.0\r\nAccept: text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8\r\nAccept-Language: en-US,en;q=0.5\r\nAccept-Encoding: gzip, deflate, br\r\nConnection: keep-alive\r\nCookie: a=1; b=2\r\nUpgrade-Insecure-Requests: 1\r\n\r\n"),
    ("post_content_length", b"POST /submit HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\n\r\nhello"),
    ("post_chunked", b"POST /upload HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n"),
    ("content_length_zero", b"POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 0\r\n\r\n"),
    ("content_length_list_same", b"POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 5, 5\r\n\r\nhello"),
    ("content_length_twice_same", b"POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\nContent-Length: 5\r\n\r\nhello"),
    ("http10_no_host", b"GET / HTTP/1.0\r\n\r\n"),
    ("http10_keep_alive", b"GET /a HTTP/1.0\r\nConnection: keep-alive\r\nHost: h\r\n\r\n"),
    ("http10_post", b"POST /form HTTP/1.0\r\nContent-Length: 3\r\n\r\na=b"),
    ("options_asterisk", b"OPTIONS * HTTP/1.1\r\nHost: h\r\n\r\n"),
    ("connect_authority", b"CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n"),
    ("absolute_form", b"GET http://example.com/x?y=1 HTTP/1.1\r\nHost: example.com\r\n\r\n"),
    ("custom_method", b"PROPFIND /dav HTTP/1.1\r\nHost: h\r\nDepth: 1\r\n\r\n"),
    ("method_all_tchars", b"!#$%&'*+-.^_`|~09azAZ / HTTP/1.1\r\nHost: h\r\n\r\n"),
    ("method_lowercase", b"get / HTTP/1.1\r\nHost: h\r\n\r\n"),
    ("header_name_all_tchars", b"GET / HTTP/1.1\r\nHost: h\r\nX-!#$%&'*+.^_`|~: v\r\n\r\n"),
    ("header_name_mixed_case", b"GET / HTTP/1.1\r\nhOsT: h\r\nx-LOWER-upper: v\r\n\r\n"),
    ("duplicate_fields", b"GET / HTTP/1.1\r\nHost: h\r\nAccept: a\r\nAccept: b\r\n\r\n"),
    ("empty_value", b"GET / HTTP/1.1\r\nHost: h\r\nX-Empty:\r\n\r\n"),
    ("empty_value_spaces", b"GET / HTTP/1.1\r\nHost: h\r\nX-Empty:   \t \r\n\r\n"),
    ("no_space_after_colon", b"GET / HTTP/1.1\r\nHost:h\r\n\r\n"),
    ("tab_in_value", b"GET / HTTP/1.1\r\nHost: h\r\nX: a\tb\r\n\r\n"),
    ("tab_before_value", b"GET / HTTP/1.1\r\nHost: h\r\nX:\t\tv\r\n\r\n"),
    ("trailing_whitespace", b"GET / HTTP/1.1\r\nHost: h  \r\nX: v \t \r\n\r\n"),
    ("obs_text_value", b"GET / HTTP/1.1\r\nHost: h\r\nX: caf\xe9 \xff\r\n\r\n"),
    ("utf8_value", b"GET / HTTP/1.1\r\nHost: h\r\nX: h\xc3\xa9llo w\xc3\xb6rld\r\n\r\n"),
    ("colons_in_value", b"GET / HTTP/1.1\r\nHost: h:80\r\nX:: a:b:c\r\n\r\n"),
    ("quoted_value", b"GET / HTTP/1.1\r\nHost: h\r\nX: \"quoted, value\" ; p=\"a\\\"b\"\r\n\r\n"),
    ("leading_crlf", b"\r\nGET / HTTP/1.1\r\nHost: h\r\n\r\n"),
    ("leading_crlf_twice", b"\r\n\r\nGET / HTTP/1.1\r\nHost: h\r\n\r\n"),
    ("target_percent", b"GET /a%20b/%2F..%2e?x=%00&y=%zz HTTP/1.1\r\nHost: h\r\n\r\n"),
    ("target_odd_visible", b"GET /~!$&'()*+,;=:@[]{}|\\^`\"<> HTTP/1.1\r\nHost: h\r\n\r\n"),
    ("target_fragment", b"GET /page#frag HTTP/1.1\r\nHost: h\r\n\r\n"),
    ("expect_continue", b"PUT /f HTTP/1.1\r\nHost: h\r\nExpect: 100-continue\r\nContent-Length: 3\r\n\r\n"),
    ("upgrade_websocket", b"GET /chat HTTP/1.1\r\nHost: h\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"),
    ("connection_close", b"GET / HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n"),
    // Not all there yet.
    ("partial_empty", b""),
    ("partial_method", b"GE"),
    ("partial_target", b"GET /inde"),
    ("partial_version", b"GET / HTTP/1."),
    ("partial_fields", b"GET / HTTP/1.1\r\nHost: h\r\n"),
    ("partial_final_cr", b"GET / HTTP/1.1\r\nHost: h\r\n\r"),
    // Line endings.
    ("bare_lf_everywhere", b"GET / HTTP/1.1\nHost: h\n\n"),
    ("bare_lf_request_line", b"GET / HTTP/1.1\nHost: h\r\n\r\n"),
    ("bare_lf_field", b"GET / HTTP/1.1\r\nHost: h\n\r\n"),
    ("bare_lf_final", b"GET / HTTP/1.1\r\nHost: h\r\n\n"),
    ("bare_lf_leading", b"\nGET / HTTP/1.1\r\nHost: h\r\n\r\n"),
    ("bare_cr_request_line", b"GET / HTTP/1.1\rHost: h\r\n\r\n"),
    ("bare_cr_in_value", b"GET / HTTP/1.1\r\nHost: h\r\nX: a\rb\r\n\r\n"),
    ("bare_cr_final", b"GET / HTTP/1.1\r\nHost: h\r\n\rX"),
    // Field syntax.
    ("obs_fold_space", b"GET / HTTP/1.1\r\nHost: h\r\nX: a\r\n b\r\n\r\n"),
    ("obs_fold_tab", b"GET / HTTP/1.1\r\nHost: h\r\nX: a\r\n\tb\r\n\r\n"),
    ("space_before_first_field", b"GET / HTTP/1.1\r\n Host: h\r\n\r\n"),
    ("space_before_colon", b"GET / HTTP/1.1\r\nHost : h\r\n\r\n"),
    ("tab_before_colon", b"GET / HTTP/1.1\r\nHost\t: h\r\n\r\n"),
    ("space_in_name", b"GET / HTTP/1.1\r\nHost: h\r\nX Y: v\r\n\r\n"),
    ("name_paren", b"GET / HTTP/1.1\r\nHost: h\r\nX(y): v\r\n\r\n"),
    ("name_at", b"GET / HTTP/1.1\r\nHost: h\r\nX@y: v\r\n\r\n"),
    ("name_quote", b"GET / HTTP/1.1\r\nHost: h\r\nX\"y: v\r\n\r\n"),
    ("name_empty", b"GET / HTTP/1.1\r\nHost: h\r\n: v\r\n\r\n"),
    ("name_utf8", b"GET / HTTP/1.1\r\nHost: h\r\nX\xc3\xa9: v\r\n\r\n"),
    ("name_no_colon", b"GET / HTTP/1.1\r\nHost: h\r\nX-No-Colon\r\n\r\n"),
    ("nul_in_value", b"GET / HTTP/1.1\r\nHost: h\r\nX: a\0b\r\n\r\n"),
    ("ctl_in_value", b"GET / HTTP/1.1\r\nHost: h\r\nX: a\x01b\r\n\r\n"),
    ("esc_in_value", b"GET / HTTP/1.1\r\nHost: h\r\nX: a\x1b[0mb\r\n\r\n"),
    ("del_in_value", b"GET / HTTP/1.1\r\nHost: h\r\nX: a\x7fb\r\n\r\n"),
    // Request line.
    ("method_empty", b" / HTTP/1.1\r\nHost: h\r\n\r\n"),
    ("method_paren", b"GE(T / HTTP/1.1\r\nHost: h\r\n\r\n"),
    ("method_utf8", b"G\xc3\x89T / HTTP/1.1\r\nHost: h\r\n\r\n"),
    ("leading_space", b" GET / HTTP/1.1\r\nHost: h\r\n\r\n"),
    ("double_space", b"GET  / HTTP/1.1\r\nHost: h\r\n\r\n"),
    ("tab_delimiter", b"GET\t/ HTTP/1.1\r\nHost: h\r\n\r\n"),
    ("target_utf8", b"GET /caf\xc3\xa9 HTTP/1.1\r\nHost: h\r\n\r\n"),
    ("target_invalid_utf8", b"GET /\xff HTTP/1.1\r\nHost: h\r\n\r\n"),
    ("target_ctl", b"GET /a\x01b HTTP/1.1\r\nHost: h\r\n\r\n"),
    ("target_del", b"GET /a\x7fb HTTP/1.1\r\nHost: h\r\n\r\n"),
    ("http09", b"GET /\r\n\r\n"),
    ("version_http2", b"GET / HTTP/2.0\r\nHost: h\r\n\r\n"),
    ("version_http12", b"GET / HTTP/1.2\r\nHost: h\r\n\r\n"),
    ("version_lowercase", b"GET / http/1.1\r\nHost: h\r\n\r\n"),
    ("version_short", b"GET / HTTP/1\r\nHost: h\r\n\r\n"),
    ("version_trailing_space", b"GET / HTTP/1.1 \r\nHost: h\r\n\r\n"),
    // Framing and host: well-formed syntax, unacceptable meaning.
    ("cl_and_te", b"POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n"),
    ("cl_differing", b"POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\n"),
    ("cl_list_differing", b"POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 5, 6\r\n\r\n"),
    ("cl_negative", b"POST / HTTP/1.1\r\nHost: h\r\nContent-Length: -1\r\n\r\n"),
    ("cl_plus", b"POST / HTTP/1.1\r\nHost: h\r\nContent-Length: +5\r\n\r\n"),
    ("cl_hex", b"POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 0x10\r\n\r\n"),
    ("cl_overflow", b"POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 99999999999999999999\r\n\r\n"),
    ("cl_empty", b"POST / HTTP/1.1\r\nHost: h\r\nContent-Length:\r\n\r\n"),
    ("te_chunked_not_final", b"POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked, gzip\r\n\r\n"),
    ("te_chunked_twice", b"POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n"),
    ("te_gzip_chunked", b"POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: gzip, chunked\r\n\r\n"),
    ("te_identity", b"POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: identity\r\n\r\n"),
    ("te_in_http10", b"POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n"),
    ("missing_host", b"GET / HTTP/1.1\r\nAccept: */*\r\n\r\n"),
    ("duplicate_host", b"GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n"),
];

/// Requests too long to write out: a long target, more fields than httparse's 64 slots, a
/// target past the 8 KiB limit, and a head past the 64 KiB limit.
fn generated_requests() -> Vec<(&'static str, Vec<u8>)> {
    let with_target = |target: &str| format!("GET {target} HTTP/1.1\r\nHost: h\r\n\r\n");
    let mut many = String::from("GET / HTTP/1.1\r\nHost: h\r\n");
    for i in 0..80 {
        many += &format!("X-Field-{i}: {i}\r\n");
    }
    many += "\r\n";
    let huge = format!(
        "GET / HTTP/1.1\r\nHost: h\r\nX: {}\r\n\r\n",
        "v".repeat(70_000)
    );
    vec![
        ("target_4k", with_target(&format!("/{}", "a".repeat(4000)))),
        ("target_9k", with_target(&format!("/{}", "a".repeat(9000)))),
        ("fields_80", many),
        ("head_70k", huge),
    ]
    .into_iter()
    .map(|(name, s)| (name, s.into_bytes()))
    .collect()
}

/// Inputs on which httparse and ringwire differ, and why. All are ringwire being stricter:
/// httparse tokenizes a head and leaves framing and host rules to its caller.
const EXPLAINED_REQUESTS: &[(&str, &str)] = &[
    ("bare_lf_everywhere", BARE_LF),
    ("bare_lf_request_line", BARE_LF),
    ("bare_lf_field", BARE_LF),
    ("bare_lf_final", BARE_LF),
    ("bare_lf_leading", "httparse skips a lone LF before the request line; RFC 9112 2.2 only asks to skip empty lines (CRLF) and ringwire refuses bare LF everywhere"),
    ("target_fragment", "RFC 9112 3.2: a request target has no fragment (a client never sends `#`); ringwire answers 400, httparse takes it as part of the target"),
    ("target_utf8", "httparse takes raw UTF-8 in the target; RFC 9112 3.2 / RFC 3986 allow only visible ASCII there (non-ASCII is percent-encoded), so ringwire answers 400"),
    ("cl_and_te", "httparse does not interpret framing fields (its caller's job); ringwire refuses Content-Length with Transfer-Encoding at the parser, RFC 9112 6.1 (a smuggling vector)"),
    ("cl_differing", CONTENT_LENGTH),
    ("cl_list_differing", CONTENT_LENGTH),
    ("cl_negative", CONTENT_LENGTH),
    ("cl_plus", CONTENT_LENGTH),
    ("cl_hex", CONTENT_LENGTH),
    ("cl_overflow", CONTENT_LENGTH),
    ("cl_empty", CONTENT_LENGTH),
    ("te_chunked_not_final", "RFC 9112 6.3: a request whose final transfer coding is not chunked has no knowable length: 400; httparse does not interpret Transfer-Encoding"),
    ("te_chunked_twice", "RFC 9112 6.1: chunked must not be applied more than once; httparse does not interpret Transfer-Encoding"),
    ("te_gzip_chunked", "ringwire decodes no transfer coding but chunked, so it answers 501 (RFC 9112 6.1); httparse does not interpret Transfer-Encoding"),
    ("te_identity", "identity is no transfer coding since RFC 7230, so chunked is not final: 400; httparse does not interpret Transfer-Encoding"),
    ("te_in_http10", "RFC 9112 6.1: Transfer-Encoding in an HTTP/1.0 message means faulty framing; ringwire refuses it, httparse does not interpret it"),
    ("missing_host", "RFC 9112 3.2: a server must answer 400 to an HTTP/1.1 request without Host; httparse leaves that to its caller"),
    ("duplicate_host", "RFC 9112 3.2: likewise for more than one Host field"),
    ("target_9k", "ringwire's default target limit is 8 KiB (RFC 9112 3 asks for at least 8000 octets), past it 414; httparse has no limit"),
    ("fields_80", "httparse fails when the caller's field array (64 slots here) is full; ringwire's default limit is 100 fields"),
    ("head_70k", "ringwire's default head limit is 64 KiB, past it 431; httparse has no limit"),
];

const BARE_LF: &str = "httparse takes a bare LF as a line end; RFC 9112 2.2 lets a recipient refuse it, and ringwire does (400): parsers that disagree on line ends are a smuggling vector";
const CONTENT_LENGTH: &str = "RFC 9110 8.6 / RFC 9112 6.3: Content-Length is 1*DIGIT, and differing values make the length unknowable: 400; httparse does not interpret field values";

#[test]
fn requests_agree_with_httparse() {
    let corpus: Vec<(&str, Vec<u8>)> = REQUESTS
        .iter()
        .map(|&(name, bytes)| (name, bytes.to_vec()))
        .chain(generated_requests())
        .collect();
    assert!(corpus.len() >= 60);
    compare(
        &corpus,
        EXPLAINED_REQUESTS,
        httparse_request,
        ringwire_request,
    );
}

const RESPONSES: &[(&str, &[u8])] = &[
    // Valid.
    ("ok", b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Type: text/plain\r\n\r\nhello"),
    ("http10", b"HTTP/1.0 200 OK\r\nServer: old\r\n\r\nbody until close"),
    ("no_reason", b"HTTP/1.1 204\r\n\r\n"),
    ("empty_reason", b"HTTP/1.1 200 \r\n\r\n"),
    ("reason_words", b"HTTP/1.1 404 Not Found Here\r\nContent-Length: 0\r\n\r\n"),
    ("reason_tab", b"HTTP/1.1 200 O\tK\r\n\r\n"),
    ("reason_obs_text", b"HTTP/1.1 200 \xe9t\xe9\r\n\r\n"),
    ("interim_100", b"HTTP/1.1 100 Continue\r\n\r\n"),
    ("switching_101", b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n"),
    ("chunked", b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"),
    ("set_cookies", b"HTTP/1.1 200 OK\r\nSet-Cookie: a=1; Path=/\r\nSet-Cookie: b=2; HttpOnly\r\nContent-Length: 0\r\n\r\n"),
    ("status_600", b"HTTP/1.1 600 Custom\r\n\r\n"),
    ("status_999", b"HTTP/1.1 999 Custom\r\n\r\n"),
    ("cl_and_te", b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n"),
    ("obs_text_value", b"HTTP/1.1 200 OK\r\nX: caf\xe9\r\n\r\n"),
    ("empty_value", b"HTTP/1.1 200 OK\r\nX:\r\nY: \t\r\n\r\n"),
    // Not all there yet.
    ("partial_version", b"HTTP/1."),
    ("partial_status", b"HTTP/1.1 20"),
    ("partial_fields", b"HTTP/1.1 200 OK\r\nContent-"),
    // Malformed.
    ("status_099", b"HTTP/1.1 099 Low\r\n\r\n"),
    ("status_000", b"HTTP/1.1 000 Zero\r\n\r\n"),
    ("status_two_digits", b"HTTP/1.1 20 OK\r\n\r\n"),
    ("status_four_digits", b"HTTP/1.1 2000 OK\r\n\r\n"),
    ("status_letters", b"HTTP/1.1 2x0 OK\r\n\r\n"),
    ("no_space_after_version", b"HTTP/1.1200 OK\r\n\r\n"),
    ("double_space", b"HTTP/1.1  200 OK\r\n\r\n"),
    ("version_http2", b"HTTP/2.0 200 OK\r\n\r\n"),
    ("version_lowercase", b"http/1.1 200 OK\r\n\r\n"),
    ("leading_crlf", b"\r\nHTTP/1.1 200 OK\r\n\r\n"),
    ("reason_ctl", b"HTTP/1.1 200 O\x01K\r\n\r\n"),
    ("reason_del", b"HTTP/1.1 200 O\x7fK\r\n\r\n"),
    ("bare_lf_everywhere", b"HTTP/1.1 200 OK\nContent-Length: 0\n\n"),
    ("bare_lf_after_code", b"HTTP/1.1 200\n\r\n"),
    ("bare_cr_status_line", b"HTTP/1.1 200 OK\rX: y\r\n\r\n"),
    ("obs_fold", b"HTTP/1.1 200 OK\r\nX: a\r\n b\r\n\r\n"),
    ("space_before_colon", b"HTTP/1.1 200 OK\r\nX : a\r\n\r\n"),
    ("nul_in_value", b"HTTP/1.1 200 OK\r\nX: a\0b\r\n\r\n"),
    ("name_invalid", b"HTTP/1.1 200 OK\r\nX[y]: a\r\n\r\n"),
    ("cl_differing", b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\n"),
    ("cl_invalid", b"HTTP/1.1 200 OK\r\nContent-Length: five\r\n\r\n"),
];

/// As for requests: ringwire is stricter where RFC 9112 lets a client refuse.
const EXPLAINED_RESPONSES: &[(&str, &str)] = &[
    ("reason_obs_text", "httparse replaces a reason phrase holding obs-text with an empty one; ringwire hands out the bytes as sent (a reason carries no meaning, RFC 9112 4)"),
    ("status_099", STATUS_BELOW_100),
    ("status_000", STATUS_BELOW_100),
    ("leading_crlf", "httparse skips empty lines before a status line too; RFC 9112 2.2 allows that before a request line only, and ringwire's response parser does not"),
    ("bare_lf_everywhere", BARE_LF),
    ("bare_lf_after_code", BARE_LF),
    ("cl_differing", CONTENT_LENGTH),
    ("cl_invalid", CONTENT_LENGTH),
];

const STATUS_BELOW_100: &str = "RFC 9110 15: valid status codes are 100 to 599; ringwire refuses codes below 100 (and keeps 600-999, as httparse does), httparse takes any three digits";

#[test]
fn responses_agree_with_httparse() {
    let corpus: Vec<(&str, Vec<u8>)> = RESPONSES
        .iter()
        .map(|&(name, bytes)| (name, bytes.to_vec()))
        .collect();
    assert!(corpus.len() >= 25);
    compare(
        &corpus,
        EXPLAINED_RESPONSES,
        httparse_response,
        ringwire_response,
    );
}
