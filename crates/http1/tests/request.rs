//! Request heads: a table of valid and malformed requests, each parsed
//! whole, split at every byte, and one byte per read.

mod support;

use ringwire_http1::{BodyKind, Error, Limits, RequestParser, Status, Version};
use support::{agree, drive, text};

/// What a parsed request head says, owned so deliveries can be compared.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Head {
    method: String,
    target: String,
    version: Version,
    headers: Vec<(String, String)>,
    body: BodyKind,
    keep_alive: bool,
    expects_continue: bool,
    upgrade: Option<String>,
}

fn parse_with(limits: Limits, input: &[u8]) -> Result<Option<(Head, usize)>, Error> {
    agree(input, |chunks| {
        let mut parser = RequestParser::new(limits);
        drive(chunks, |buf| {
            Ok(parser.parse(buf)?.map(|r| Head {
                method: r.method().to_string(),
                target: text(r.target().as_bytes()),
                version: r.version(),
                headers: r
                    .headers()
                    .iter()
                    .map(|h| (h.name.to_string(), text(h.value)))
                    .collect(),
                body: r.body(),
                keep_alive: r.keep_alive(),
                expects_continue: r.expects_continue(),
                upgrade: r.upgrade().map(text),
            }))
        })
    })
}

fn parse(input: &str) -> Result<Option<(Head, usize)>, Error> {
    parse_with(Limits::default(), input.as_bytes())
}

fn ok(input: &str) -> (Head, usize) {
    parse(input)
        .unwrap_or_else(|e| panic!("{input:?}: {e}"))
        .unwrap_or_else(|| panic!("{input:?}: incomplete"))
}

fn fields(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
    pairs
        .iter()
        .map(|(n, v)| (n.to_string(), v.to_string()))
        .collect()
}

#[test]
fn simple_get() {
    let input = "GET /index.html?x=1 HTTP/1.1\r\nHost: example.com\r\nAccept: */*\r\n\r\n";
    let (head, len) = ok(input);
    assert_eq!(len, input.len());
    assert_eq!(
        head,
        Head {
            method: "GET".into(),
            target: "/index.html?x=1".into(),
            version: Version::Http11,
            headers: fields(&[("Host", "example.com"), ("Accept", "*/*")]),
            body: BodyKind::Empty,
            keep_alive: true,
            expects_continue: false,
            upgrade: None,
        }
    );
}

#[test]
fn pipelined_bytes_stay_unconsumed() {
    let first = "GET /a HTTP/1.1\r\nHost: h\r\n\r\n";
    let input = format!("{first}GET /b HTTP/1.1\r\nHost: h\r\n\r\n");
    let (head, len) = ok(&input);
    assert_eq!((head.target.as_str(), len), ("/a", first.len()));
}

#[test]
fn body_framing() {
    let cases = [
        (
            "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\n\r\nhello",
            BodyKind::Length(5),
        ),
        (
            "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 5, 5\r\n\r\n",
            BodyKind::Length(5),
        ),
        (
            "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 0\r\n\r\n",
            BodyKind::Empty,
        ),
        (
            "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n",
            BodyKind::Chunked,
        ),
        (
            "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: Chunked ;x=1\r\n\r\n",
            BodyKind::Chunked,
        ),
        ("POST / HTTP/1.0\r\n\r\n", BodyKind::Empty),
    ];
    for (input, body) in cases {
        assert_eq!(ok(input).0.body, body, "{input:?}");
    }
}

#[test]
fn connection_semantics() {
    let cases = [
        ("GET / HTTP/1.1\r\nHost: h\r\n\r\n", true),
        (
            "GET / HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n",
            false,
        ),
        (
            "GET / HTTP/1.1\r\nHost: h\r\nConnection: keep-alive, Close\r\n\r\n",
            false,
        ),
        ("GET / HTTP/1.0\r\n\r\n", false),
        ("GET / HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n", true),
    ];
    for (input, keep_alive) in cases {
        assert_eq!(ok(input).0.keep_alive, keep_alive, "{input:?}");
    }
    let expect = "PUT /f HTTP/1.1\r\nHost: h\r\nExpect: 100-Continue\r\nContent-Length: 9\r\n\r\n";
    assert!(ok(expect).0.expects_continue);
    let no_body = "GET /f HTTP/1.1\r\nHost: h\r\nExpect: 100-continue\r\n\r\n";
    assert!(!ok(no_body).0.expects_continue);
    let http10 = "PUT /f HTTP/1.0\r\nExpect: 100-continue\r\nContent-Length: 9\r\n\r\n";
    assert!(!ok(http10).0.expects_continue);
}

#[test]
fn upgrade_keeps_the_bytes_after_the_head() {
    let head = "GET /ws HTTP/1.1\r\nHost: h\r\nConnection: keep-alive, Upgrade\r\nUpgrade: websocket\r\n\r\n";
    let input = format!("{head}\x01\x05hello");
    let (parsed, len) = ok(&input);
    assert_eq!(parsed.upgrade.as_deref(), Some("websocket"));
    assert_eq!(&input.as_bytes()[len..], b"\x01\x05hello");
    let no_token = "GET /ws HTTP/1.1\r\nHost: h\r\nUpgrade: websocket\r\n\r\n";
    assert_eq!(ok(no_token).0.upgrade, None);
}

#[test]
fn lenient_where_the_rfc_allows() {
    // Empty lines before the request line are skipped (RFC 9112 section 2.2).
    let (head, len) = ok("\r\n\r\nGET / HTTP/1.1\r\nHost: h\r\n\r\n");
    assert_eq!((head.method.as_str(), len), ("GET", 31));
    // Whitespace around values is not part of them; inside it is.
    let (head, _) =
        ok("GET / HTTP/1.1\r\nHost:h\r\nX: \t a \t b \t\r\nEmpty:\r\nBlank:   \r\n\r\n");
    assert_eq!(
        head.headers,
        fields(&[("Host", "h"), ("X", "a \t b"), ("Empty", ""), ("Blank", "")])
    );
    // obs-text in values is kept as bytes.
    let (head, _) = ok("GET / HTTP/1.1\r\nHost: h\r\nX: caf\u{e9}\r\n\r\n");
    assert_eq!(head.headers[1].1, "caf\u{e9}");
    for (input, method, target) in [
        ("OPTIONS * HTTP/1.1\r\nHost: h\r\n\r\n", "OPTIONS", "*"),
        (
            "CONNECT h:443 HTTP/1.1\r\nHost: h:443\r\n\r\n",
            "CONNECT",
            "h:443",
        ),
        (
            "GET http://h/p?q HTTP/1.1\r\nHost: h\r\n\r\n",
            "GET",
            "http://h/p?q",
        ),
        ("PURGE /x HTTP/1.1\r\nHost: h\r\n\r\n", "PURGE", "/x"),
    ] {
        let (head, _) = ok(input);
        assert_eq!(
            (head.method.as_str(), head.target.as_str()),
            (method, target)
        );
    }
}

/// Host values RFC 9112 section 3.2 allows: names, addresses, IP literals, a port (even
/// an empty one), percent-escapes, and the empty value of a target with no authority.
#[test]
fn valid_host_values() {
    for host in [
        "example.com",
        "example.com:8080",
        "example.com:",
        "127.0.0.1:80",
        "[::1]",
        "[::1]:8443",
        "[v1.fe80::a+en1]",
        "xn--bcher-kva.example",
        "a%2Eb",
        "under_score~tilde!$&'()*+,;=",
        "",
    ] {
        let input = format!("GET / HTTP/1.1\r\nHost: {host}\r\n\r\n");
        let (head, _) = ok(&input);
        assert_eq!(head.headers, fields(&[("Host", host)]), "{host:?}");
    }
}

#[test]
fn partial_heads_are_partial_not_errors() {
    let input = "GET /x HTTP/1.1\r\nHost: h\r\n\r\n";
    for end in 0..input.len() {
        let prefix = &input[..end];
        assert_eq!(parse(prefix), Ok(None), "{prefix:?}");
    }
}

/// Every malformed request names its error and status, however it arrives.
#[test]
fn malformed_requests() {
    let h = "Host: h\r\n";
    let cases: Vec<(String, Error, u16)> = vec![
        ("GET / HTTP/1.1\nHost: h\r\n\r\n".into(), Error::BareLf, 400),
        (format!("GET / HTTP/1.1\r\n{h}X: y\n\r\n"), Error::BareLf, 400),
        (format!("GET / HTTP/1.1\r\n{h}\n"), Error::BareLf, 400),
        (format!("GET / HTTP/1.1\r\n{h}X: a\rb\r\n\r\n"), Error::BareCr, 400),
        ("GET / HTTP/1.1\rX".into(), Error::BareCr, 400),
        (format!("GET / HTTP/1.1\r\n{h}X: a\r\n b\r\n\r\n"), Error::ObsFold, 400),
        (format!("GET / HTTP/1.1\r\n{h}X: a\r\n\tb\r\n\r\n"), Error::ObsFold, 400),
        (format!("GET / HTTP/1.1\r\n{h}X : a\r\n\r\n"), Error::WhitespaceBeforeColon, 400),
        (format!("GET / HTTP/1.1\r\n{h}X\t: a\r\n\r\n"), Error::WhitespaceBeforeColon, 400),
        ("G(T / HTTP/1.1\r\nHost: h\r\n\r\n".into(), Error::InvalidMethod, 400),
        (" / HTTP/1.1\r\nHost: h\r\n\r\n".into(), Error::InvalidMethod, 400),
        ("GET\t/ HTTP/1.1\r\nHost: h\r\n\r\n".into(), Error::InvalidMethod, 400),
        (format!("GET / HTTP/1.1\r\n{h}X@Y: a\r\n\r\n"), Error::InvalidHeaderName, 400),
        (format!("GET / HTTP/1.1\r\n{h}: a\r\n\r\n"), Error::InvalidHeaderName, 400),
        (format!("GET / HTTP/1.1\r\n{h}NoColon\r\n\r\n"), Error::InvalidHeaderName, 400),
        (format!("GET / HTTP/1.1\r\n{h}X\0: a\r\n\r\n"), Error::InvalidHeaderName, 400),
        (format!("GET / HTTP/1.1\r\n{h}X: a\x01b\r\n\r\n"), Error::InvalidHeaderValue, 400),
        (format!("GET / HTTP/1.1\r\n{h}X: a\x7fb\r\n\r\n"), Error::InvalidHeaderValue, 400),
        (format!("GET / HTTP/1.1\r\n{h}X: a\0\r\n\r\n"), Error::InvalidHeaderValue, 400),
        ("GET /\x01 HTTP/1.1\r\nHost: h\r\n\r\n".into(), Error::InvalidTarget, 400),
        ("GET  / HTTP/1.1\r\nHost: h\r\n\r\n".into(), Error::InvalidTarget, 400),
        ("GET /\u{e9} HTTP/1.1\r\nHost: h\r\n\r\n".into(), Error::InvalidTarget, 400),
        ("GET hello HTTP/1.1\r\nHost: h\r\n\r\n".into(), Error::InvalidTarget, 400),
        ("GET h:80 HTTP/1.1\r\nHost: h\r\n\r\n".into(), Error::InvalidTarget, 400),
        ("GET * HTTP/1.1\r\nHost: h\r\n\r\n".into(), Error::InvalidTarget, 400),
        ("CONNECT / HTTP/1.1\r\nHost: h\r\n\r\n".into(), Error::InvalidTarget, 400),
        ("CONNECT http://h/ HTTP/1.1\r\nHost: h\r\n\r\n".into(), Error::InvalidTarget, 400),
        ("OPTIONS h:80 HTTP/1.1\r\nHost: h\r\n\r\n".into(), Error::InvalidTarget, 400),
        ("GET /a#b HTTP/1.1\r\nHost: h\r\n\r\n".into(), Error::InvalidTarget, 400),
        ("GET /0123456789abcdef0123#x HTTP/1.1\r\nHost: h\r\n\r\n".into(), Error::InvalidTarget, 400),
        ("GET /a b HTTP/1.1\r\nHost: h\r\n\r\n".into(), Error::InvalidVersion, 400),
        ("GET /\r\n\r\n".into(), Error::InvalidVersion, 400),
        ("GET / HTTX/1.1\r\nHost: h\r\n\r\n".into(), Error::InvalidVersion, 400),
        ("GET / HTTP/1.1 \r\nHost: h\r\n\r\n".into(), Error::InvalidVersion, 400),
        ("GET / http/1.1\r\nHost: h\r\n\r\n".into(), Error::InvalidVersion, 400),
        ("GET / HTTP/2.0\r\nHost: h\r\n\r\n".into(), Error::UnsupportedVersion, 505),
        ("GET / HTTP/1.2\r\nHost: h\r\n\r\n".into(), Error::UnsupportedVersion, 505),
        // Regression (fuzz/regressions/http1_request/version-order): the
        // version is judged before the bytes after it, however they arrive.
        ("GET / HTTP/2.0x\r\nHost: h\r\n\r\n".into(), Error::UnsupportedVersion, 505),
        ("GET / HTTP/2.0\rx\r\n\r\n".into(), Error::UnsupportedVersion, 505),
        ("GET / HTTP/0.9\r\n\r\n".into(), Error::UnsupportedVersion, 505),
        ("GET / HTTP/1.1\r\n\r\n".into(), Error::InvalidHost, 400),
        (format!("GET / HTTP/1.1\r\n{h}{h}\r\n"), Error::InvalidHost, 400),
        (format!("GET / HTTP/1.0\r\n{h}{h}\r\n"), Error::InvalidHost, 400),
        ("GET / HTTP/1.1\r\nHost: a b\r\n\r\n".into(), Error::InvalidHost, 400),
        ("GET / HTTP/1.1\r\nHost: u@x\r\n\r\n".into(), Error::InvalidHost, 400),
        ("GET / HTTP/1.1\r\nHost: x:abc\r\n\r\n".into(), Error::InvalidHost, 400),
        ("GET / HTTP/1.1\r\nHost: x:80:80\r\n\r\n".into(), Error::InvalidHost, 400),
        ("GET / HTTP/1.1\r\nHost: x/y\r\n\r\n".into(), Error::InvalidHost, 400),
        ("GET / HTTP/1.1\r\nHost: %zz\r\n\r\n".into(), Error::InvalidHost, 400),
        ("GET / HTTP/1.1\r\nHost: [::1\r\n\r\n".into(), Error::InvalidHost, 400),
        ("GET / HTTP/1.1\r\nHost: []\r\n\r\n".into(), Error::InvalidHost, 400),
        ("GET / HTTP/1.1\r\nHost: [::1]x\r\n\r\n".into(), Error::InvalidHost, 400),
        ("GET / HTTP/1.0\r\nHost: a b\r\n\r\n".into(), Error::InvalidHost, 400),
        (format!("POST / HTTP/1.1\r\n{h}Content-Length: abc\r\n\r\n"), Error::InvalidContentLength, 400),
        (format!("POST / HTTP/1.1\r\n{h}Content-Length: -1\r\n\r\n"), Error::InvalidContentLength, 400),
        (
            format!("POST / HTTP/1.1\r\n{h}Content-Length: 99999999999999999999\r\n\r\n"),
            Error::InvalidContentLength,
            400,
        ),
        (
            format!("POST / HTTP/1.1\r\n{h}Content-Length: 5\r\nContent-Length: 6\r\n\r\n"),
            Error::ConflictingContentLength,
            400,
        ),
        (format!("POST / HTTP/1.1\r\n{h}Content-Length: 5, 6\r\n\r\n"), Error::ConflictingContentLength, 400),
        (
            format!("POST / HTTP/1.1\r\n{h}Content-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n"),
            Error::ContentLengthWithTransferEncoding,
            400,
        ),
        (format!("POST / HTTP/1.1\r\n{h}Transfer-Encoding: gzip\r\n\r\n"), Error::ChunkedNotFinal, 400),
        (format!("POST / HTTP/1.1\r\n{h}Transfer-Encoding: chunked, gzip\r\n\r\n"), Error::ChunkedNotFinal, 400),
        (
            format!("POST / HTTP/1.1\r\n{h}Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n"),
            Error::ChunkedNotFinal,
            400,
        ),
        (format!("POST / HTTP/1.1\r\n{h}Transfer-Encoding: \r\n\r\n"), Error::ChunkedNotFinal, 400),
        (
            format!("POST / HTTP/1.1\r\n{h}Transfer-Encoding: gzip, chunked\r\n\r\n"),
            Error::UnsupportedTransferCoding,
            501,
        ),
        (
            "POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n".into(),
            Error::TransferEncodingInHttp10,
            400,
        ),
    ];
    for (input, error, status) in cases {
        assert_eq!(parse(&input), Err(error), "{input:?}");
        assert_eq!(
            (error.status(), error.must_close()),
            (status, true),
            "{error:?}"
        );
    }
}

#[test]
fn limits() {
    let limits = Limits {
        max_head_len: 64,
        max_headers: 3,
        max_target_len: 16,
        max_body_len: 100,
        ..Limits::default()
    };
    let cases: Vec<(String, Error, u16)> = vec![
        (
            "GET / HTTP/1.1\r\nHost: h\r\nA: 1\r\nB: 2\r\nC: 3\r\n\r\n".into(),
            Error::TooManyHeaders { limit: 3 },
            431,
        ),
        (
            format!("GET / HTTP/1.1\r\nHost: h\r\nA: {}\r\n\r\n", "x".repeat(40)),
            Error::HeadTooLarge { limit: 64 },
            431,
        ),
        (
            // Never ends: the bound still stops it.
            format!("GET / HTTP/1.1\r\nHost: h\r\nA: {}", "x".repeat(60)),
            Error::HeadTooLarge { limit: 64 },
            431,
        ),
        (
            format!("GET /{} HTTP/1.1\r\nHost: h\r\n\r\n", "a".repeat(16)),
            Error::TargetTooLong { limit: 16 },
            414,
        ),
        (
            format!("GET /{}", "a".repeat(40)),
            Error::TargetTooLong { limit: 16 },
            414,
        ),
        (
            "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 101\r\n\r\n".into(),
            Error::BodyTooLarge { limit: 100 },
            413,
        ),
    ];
    for (input, error, status) in cases {
        assert_eq!(
            parse_with(limits, input.as_bytes()),
            Err(error),
            "{input:?}"
        );
        assert_eq!(error.status(), status);
    }
    let at_limits = "GET /aaaaaaaaaaaaaaa HTTP/1.1\r\nHost: h\r\nA: 1\r\nB: 2\r\n\r\n";
    assert!(parse_with(limits, at_limits.as_bytes()).unwrap().is_some());
}

#[test]
fn errors_come_as_soon_as_the_bytes_show_them() {
    // A garbage first line fails before any head end arrives.
    for input in [
        "\x16\x03\x01\x02\x00",
        "GET / FTP",
        "GET / HTTP/1.1\n",
        "GET / HTTP/3.0\r",
        "GET / HTTP/3 ",
    ] {
        assert!(parse(input).is_err(), "{input:?}");
    }
}

#[test]
fn the_parser_is_reused_across_messages() {
    let mut parser = RequestParser::default();
    let buf = b"GET /1 HTTP/1.1\r\nHost: h\r\nA: 1\r\n\r\nPOST /2 HTTP/1.0\r\n\r\n";
    let mut at = 0;
    let mut seen = Vec::new();
    while at < buf.len() {
        match parser.parse(&buf[at..]).unwrap() {
            ringwire_http1::Status::Complete(r, n) => {
                seen.push((r.method().to_string(), r.headers().len()));
                at += n;
            }
            ringwire_http1::Status::Partial { .. } => panic!("partial"),
        }
    }
    assert_eq!(seen, [("GET".to_string(), 2), ("POST".to_string(), 0)]);
}

/// A server that does not read a request's body drains it with the decoder
/// before the next pipelined request, whichever way the body is framed.
#[test]
fn unread_bodies_are_drained_before_the_next_request() {
    use ringwire_http1::{BodyDecoder, Decoded, Status};
    let stream = b"POST /a HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\n\r\nhello\
        POST /b HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\nT: 1\r\n\r\n\
        GET /c HTTP/1.1\r\nHost: h\r\n\r\n";
    let mut parser = RequestParser::default();
    let (mut at, mut targets) = (0, Vec::new());
    while at < stream.len() {
        let Ok(Status::Complete(request, n)) = parser.parse(&stream[at..]) else {
            panic!("request at {at}")
        };
        targets.push(text(request.target().as_bytes()));
        let kind = request.body();
        at += n;
        // The application ignored the body: skip it, never looking past it.
        let mut decoder = BodyDecoder::new(kind, &Limits::default());
        loop {
            match decoder.decode(&stream[at..]).expect("body") {
                Decoded::Data { consumed, .. } | Decoded::Partial { consumed } => at += consumed,
                Decoded::Done { consumed, .. } => {
                    at += consumed;
                    break;
                }
            }
        }
    }
    assert_eq!(targets, ["/a", "/b", "/c"]);
}

/// A parser kept across a connection's requests remembers the last valid Host, and
/// still refuses an invalid one after it (and a valid new one after that).
#[test]
fn host_checked_on_every_request_of_a_connection() {
    let mut parser = RequestParser::new(Limits::default());
    for (host, valid) in [
        ("a.example", true),
        ("a.example", true),
        ("a.exampl", true),
        ("a.example:", true),
        ("a example", false),
        ("a.example", true),
        ("b.example:8080", true),
        ("b.example:8080/", false),
        ("a-very-long-host-name-past-the-cache.example.com", true),
        ("a-very-long-host-name-past-the-cache.example.com ", true),
        ("a-very-long-host-name-past-the-cache.example.com x", false),
    ] {
        let input = format!("GET / HTTP/1.1\r\nHost: {host}\r\n\r\n");
        let result = parser
            .parse(input.as_bytes())
            .map(|s| matches!(s, Status::Complete(..)));
        let want = if valid {
            Ok(true)
        } else {
            Err(Error::InvalidHost)
        };
        assert_eq!(result, want, "{host:?}");
    }
}
