//! Response heads: a table of valid and malformed responses, each parsed
//! whole, split at every byte, and one byte per read.

mod support;

use ringwire_http1::{BodyKind, Error, Limits, Method, ResponseParser, Version};
use support::{agree, drive, text};

#[derive(Debug, Clone, PartialEq, Eq)]
struct Head {
    version: Version,
    status: u16,
    reason: String,
    headers: Vec<(String, String)>,
    body: BodyKind,
    keep_alive: bool,
    interim: bool,
    upgrade: Option<String>,
}

fn parse_with(
    limits: Limits,
    method: Method<'_>,
    input: &[u8],
) -> Result<Option<(Head, usize)>, Error> {
    agree(input, |chunks| {
        let mut parser = ResponseParser::new(limits);
        drive(chunks, |buf| {
            Ok(parser.parse(buf, method)?.map(|r| Head {
                version: r.version(),
                status: r.status(),
                reason: text(r.reason()),
                headers: r
                    .headers()
                    .iter()
                    .map(|h| (h.name.to_string(), text(h.value)))
                    .collect(),
                body: r.body(),
                keep_alive: r.keep_alive(),
                interim: r.is_interim(),
                upgrade: r.upgrade().map(text),
            }))
        })
    })
}

fn ok_for(method: Method<'_>, input: &str) -> (Head, usize) {
    parse_with(Limits::default(), method, input.as_bytes())
        .unwrap_or_else(|e| panic!("{input:?}: {e}"))
        .unwrap_or_else(|| panic!("{input:?}: incomplete"))
}

fn ok(input: &str) -> (Head, usize) {
    ok_for(Method::Get, input)
}

#[test]
fn simple_response() {
    let input = "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 5\r\n\r\nhello";
    let (head, len) = ok(input);
    assert_eq!(len, input.len() - 5);
    assert_eq!(
        head,
        Head {
            version: Version::Http11,
            status: 200,
            reason: "OK".into(),
            headers: vec![
                ("Content-Type".into(), "text/plain".into()),
                ("Content-Length".into(), "5".into())
            ],
            body: BodyKind::Length(5),
            keep_alive: true,
            interim: false,
            upgrade: None,
        }
    );
}

#[test]
fn status_line_variants() {
    for (input, status, reason) in [
        ("HTTP/1.1 404 Not Found\r\n\r\n", 404, "Not Found"),
        ("HTTP/1.1 200 \r\n\r\n", 200, ""),
        ("HTTP/1.1 200\r\n\r\n", 200, ""),
        (
            "HTTP/1.0 500 Internal\tError \u{e9}\r\n\r\n",
            500,
            "Internal\tError \u{e9}",
        ),
        ("HTTP/1.1 999 Whatever\r\n\r\n", 999, "Whatever"),
    ] {
        let (head, _) = ok(input);
        assert_eq!(
            (head.status, head.reason.as_str()),
            (status, reason),
            "{input:?}"
        );
    }
}

#[test]
fn body_framing_follows_rfc_9112_section_6_3() {
    let cases = [
        (
            Method::Get,
            "HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\n",
            BodyKind::Length(3),
            true,
        ),
        (
            Method::Head,
            "HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\n",
            BodyKind::Empty,
            true,
        ),
        (
            Method::Get,
            "HTTP/1.1 204 No Content\r\nContent-Length: 3\r\n\r\n",
            BodyKind::Empty,
            true,
        ),
        (
            Method::Get,
            "HTTP/1.1 304 Not Modified\r\nContent-Length: 3\r\n\r\n",
            BodyKind::Empty,
            true,
        ),
        (
            Method::Get,
            "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n",
            BodyKind::Chunked,
            true,
        ),
        (
            Method::Get,
            "HTTP/1.1 200 OK\r\n\r\n",
            BodyKind::CloseDelimited,
            false,
        ),
        (
            Method::Get,
            "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\n",
            BodyKind::CloseDelimited,
            false,
        ),
        (
            Method::Get,
            "HTTP/1.1 200 OK\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n",
            BodyKind::Chunked,
            false,
        ),
        (
            Method::Get,
            "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n",
            BodyKind::Empty,
            true,
        ),
        (
            Method::Connect,
            "HTTP/1.1 200 Connection Established\r\n\r\n",
            BodyKind::Empty,
            true,
        ),
        (
            Method::Get,
            "HTTP/1.0 200 OK\r\nContent-Length: 3\r\n\r\n",
            BodyKind::Length(3),
            false,
        ),
        (
            Method::Get,
            "HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 3\r\n\r\n",
            BodyKind::Length(3),
            true,
        ),
        (
            Method::Get,
            "HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 3\r\n\r\n",
            BodyKind::Length(3),
            false,
        ),
    ];
    for (method, input, body, keep_alive) in cases {
        let (head, _) = ok_for(method, input);
        assert_eq!(
            (head.body, head.keep_alive),
            (body, keep_alive),
            "{method} {input:?}"
        );
    }
}

#[test]
fn interim_and_switching_responses() {
    let input = "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n";
    let (head, len) = ok(input);
    assert!(head.interim);
    assert_eq!((head.body, len), (BodyKind::Empty, 25));
    let (final_head, _) = ok(&input[len..]);
    assert_eq!(final_head.status, 200);

    let switch = "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n\x01\x00";
    let (head, len) = ok(switch);
    assert!(!head.interim);
    assert_eq!(head.upgrade.as_deref(), Some("websocket"));
    assert_eq!(&switch.as_bytes()[len..], b"\x01\x00");
}

#[test]
fn malformed_responses() {
    let cases: Vec<(String, Error)> = vec![
        (
            "HTTP/1.1 200 OK\nContent-Length: 0\r\n\r\n".into(),
            Error::BareLf,
        ),
        ("HTTP/1.1 200 OK\r\nX: a\rb\r\n\r\n".into(), Error::BareCr),
        (
            "HTTP/1.1 200 OK\r\nX: a\r\n b\r\n\r\n".into(),
            Error::ObsFold,
        ),
        (
            "HTTP/1.1 200 OK\r\nX : a\r\n\r\n".into(),
            Error::WhitespaceBeforeColon,
        ),
        (
            "HTTP/1.1 200 OK\r\nX(: a\r\n\r\n".into(),
            Error::InvalidHeaderName,
        ),
        (
            "HTTP/1.1 200 OK\r\nX: \x01\r\n\r\n".into(),
            Error::InvalidHeaderValue,
        ),
        ("HTTP/1.1 200 O\x01K\r\n\r\n".into(), Error::InvalidReason),
        ("HTTP/1.1 20 OK\r\n\r\n".into(), Error::InvalidStatus),
        ("HTTP/1.1 099 OK\r\n\r\n".into(), Error::InvalidStatus),
        ("HTTP/1.1 2000 OK\r\n\r\n".into(), Error::InvalidStatus),
        ("HTTP/1.1 abc OK\r\n\r\n".into(), Error::InvalidStatus),
        ("HTTP/1.1  200 OK\r\n\r\n".into(), Error::InvalidStatus),
        ("HTTP/1.1\t200 OK\r\n\r\n".into(), Error::InvalidVersion),
        ("HTTP/2 200 OK\r\n\r\n".into(), Error::InvalidVersion),
        ("ICY 200 OK\r\n\r\n".into(), Error::InvalidVersion),
        ("HTTP/2.0 200 OK\r\n\r\n".into(), Error::UnsupportedVersion),
        // Regression (fuzz/regressions/http1_response/version-order).
        ("HTTP/1.21 200 OK\r\n\r\n".into(), Error::UnsupportedVersion),
        ("HTTP/1.2 099 X\r\n\r\n".into(), Error::UnsupportedVersion),
        (
            "HTTP/1.1 200 OK\r\nContent-Length: x\r\n\r\n".into(),
            Error::InvalidContentLength,
        ),
        (
            "HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n".into(),
            Error::ConflictingContentLength,
        ),
    ];
    for (input, error) in cases {
        let outcome = parse_with(Limits::default(), Method::Get, input.as_bytes());
        assert_eq!(outcome, Err(error), "{input:?}");
    }
}

#[test]
fn limits() {
    let limits = Limits {
        max_head_len: 48,
        max_headers: 2,
        max_body_len: 10,
        ..Limits::default()
    };
    let parse = |input: &str| parse_with(limits, Method::Get, input.as_bytes());
    assert_eq!(
        parse("HTTP/1.1 200 OK\r\nA: 1\r\nB: 2\r\nC: 3\r\n\r\n"),
        Err(Error::TooManyHeaders { limit: 2 })
    );
    let long = format!("HTTP/1.1 200 OK\r\nA: {}", "x".repeat(40));
    assert_eq!(parse(&long), Err(Error::HeadTooLarge { limit: 48 }));
    assert_eq!(
        parse("HTTP/1.1 200 OK\r\nContent-Length: 11\r\n\r\n"),
        Err(Error::BodyTooLarge { limit: 10 })
    );
}

#[test]
fn obsolete_line_folds_are_unfolded_in_place_on_request() {
    let input = b"HTTP/1.1 200 OK\r\nX: a\r\n b\r\n\tc\r\nY: d\r\n\r\nbody\r\n e";
    let mut buf = input.to_vec();
    let mut parser = ResponseParser::default();
    // A partial parse first, so the unfold must forget where it stopped.
    assert!(parser.parse(&buf[..20], Method::Get).is_ok());
    assert_eq!(parser.parse(&buf, Method::Get).err(), Some(Error::ObsFold));
    assert!(parser.unfold(&mut buf));
    let (head, len) = match parser.parse(&buf, Method::Get).unwrap() {
        ringwire_http1::Status::Complete(head, len) => (head, len),
        partial => panic!("{partial:?}"),
    };
    assert_eq!(head.header("x"), Some(&b"a   b  \tc"[..]));
    assert_eq!(head.header("y"), Some(&b"d"[..]));
    // Offsets kept, and the body after the head left alone.
    assert_eq!(&buf[len..], b"body\r\n e");

    // Nothing to unfold: none at all, or a fold right after the status line.
    let mut plain = b"HTTP/1.1 200 OK\r\nX: a\r\n\r\n".to_vec();
    assert!(!parser.unfold(&mut plain));
    let mut first = b"HTTP/1.1 200 OK\r\n X: a\r\n\r\n".to_vec();
    assert!(!parser.unfold(&mut first));
    assert_eq!(first, b"HTTP/1.1 200 OK\r\n X: a\r\n\r\n");
}
