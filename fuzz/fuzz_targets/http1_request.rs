//! `http1_request`: a stream of pipelined requests read as a server would (head, body, next
//! head, until `Connection: close`, an error or the end of input), once from the whole stream
//! and once with the stream arriving in pieces, must give the same heads, bodies, trailers and
//! end. Every head is also checked against rules any accepted request satisfies.
//!
//! Input: a setup byte (see `http1_support.rs`: limits, split point or piece size), then the
//! stream.

#![no_main]

mod http1_support;

use http1_support::{fields, is_tchar, read, setup, After, Fields, Outcome, Parsed, Text};
use libfuzzer_sys::fuzz_target;
use ringwire_http1::{BodyKind, Error, Limits, Request, RequestParser, Status, Version};

/// What a request head says, owned so the two deliveries can be compared.
#[derive(Debug, PartialEq, Eq)]
struct Head {
    method: String,
    target: Text,
    version: Version,
    fields: Fields,
    body: BodyKind,
    keep_alive: bool,
    expects_continue: bool,
    upgrade: Option<Text>,
    len: usize,
}

fn summarise(req: &Request<'_>, buf: &[u8], limits: &Limits) -> Head {
    let len = req.head_len();
    assert!(len <= buf.len() && len <= limits.max_head_len);
    assert!(
        buf[..len].ends_with(b"\r\n\r\n"),
        "head does not end in CRLF CRLF"
    );
    let method = req.method().as_str().to_owned();
    assert!(
        !method.is_empty() && method.bytes().all(is_tchar),
        "method {method:?}"
    );
    let target = req.target().as_bytes();
    assert!(!target.is_empty() && target.len() <= limits.max_target_len);
    assert!(
        target.iter().all(|b| (0x21..=0x7e).contains(b)),
        "target {target:?}"
    );
    let fields = fields(req.headers());
    let count = |name: &str| {
        let named = |(n, _): &&(String, Text)| n.eq_ignore_ascii_case(name);
        fields.iter().filter(named).count()
    };
    if req.version() == Version::Http11 {
        assert_eq!(count("host"), 1, "HTTP/1.1 without exactly one Host");
    }
    match req.body() {
        BodyKind::Chunked => {
            assert_eq!(req.version(), Version::Http11);
            assert_eq!(count("content-length"), 0, "chunked with Content-Length");
        }
        BodyKind::Length(n) => assert!(n > 0 && n <= limits.max_body_len),
        BodyKind::Empty => assert_eq!(count("transfer-encoding"), 0),
        BodyKind::CloseDelimited => panic!("a close-delimited request"),
    }
    Head {
        method,
        target: Text::of(target),
        version: req.version(),
        fields,
        body: req.body(),
        keep_alive: req.keep_alive(),
        expects_continue: req.expects_continue(),
        upgrade: req.upgrade().map(Text::of),
        len,
    }
}

/// Reads `pieces` as a server: after a request without keep-alive, nothing more is read.
/// Upgrades and CONNECT are read on as if the server declined them.
fn serve(pieces: &[&[u8]], limits: &Limits) -> Outcome<Head> {
    let mut parser = RequestParser::new(*limits);
    read(
        pieces,
        limits,
        |buf| -> Result<Status<Parsed<Head>>, Error> {
            let parsed = parser.parse(buf)?.map(|req| Parsed {
                head: summarise(&req, buf, limits),
                len: req.head_len(),
                body: req.body(),
                after: if req.keep_alive() {
                    After::Next
                } else {
                    After::Stop
                },
            });
            if let Status::Complete(parsed, len) = &parsed {
                // Nothing after the head was looked at: the head alone parses the same.
                let head = &buf[..*len];
                match RequestParser::new(*limits).parse(head) {
                    Ok(Status::Complete(req, n)) if n == *len => {
                        assert_eq!(summarise(&req, head, limits), parsed.head);
                    }
                    other => panic!("the head alone gives {other:?}"),
                }
            }
            Ok(parsed)
        },
    )
}

fuzz_target!(|data: &[u8]| {
    let Some((&byte, stream)) = data.split_first() else {
        return;
    };
    let (limits, pieces) = setup(byte, stream);
    let whole = serve(&[stream], &limits);
    let split = serve(&pieces, &limits);
    if http1_support::debug() {
        eprintln!("whole: {whole:?}");
        if split != whole {
            eprintln!("{} pieces: {split:?}", pieces.len());
        }
    }
    http1_support::assert_agree(&whole, &split);
});
