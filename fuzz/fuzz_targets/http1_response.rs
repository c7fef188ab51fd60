//! `http1_response`: a stream of responses read as a client would (interim responses, then the
//! final one and its body, then the next if the connection persists), once from the whole
//! stream and once with the stream arriving in pieces, must give the same heads, bodies,
//! trailers and end. A close-delimited body ends at the end of the input (`finish_eof`). Every
//! head is also checked against rules any accepted response satisfies.
//!
//! Input: a setup byte (see `http1_support.rs`: limits, split point or piece size), a byte
//! choosing the request method (GET, HEAD or CONNECT, for every response), then the stream.

#![no_main]

mod http1_support;

use http1_support::{fields, read, setup, After, Fields, Outcome, Parsed, Text};
use libfuzzer_sys::fuzz_target;
use ringwire_http1::{BodyKind, Error, Limits, Method, Response, ResponseParser, Status, Version};

/// What a response head says, owned so the two deliveries can be compared.
#[derive(Debug, PartialEq, Eq)]
struct Head {
    version: Version,
    status: u16,
    reason: Text,
    fields: Fields,
    body: BodyKind,
    keep_alive: bool,
    interim: bool,
    upgrade: Option<Text>,
    len: usize,
}

fn summarise(res: &Response<'_>, buf: &[u8], limits: &Limits, method: Method<'_>) -> Head {
    let len = res.head_len();
    assert!(len <= buf.len() && len <= limits.max_head_len);
    assert!(
        buf[..len].ends_with(b"\r\n\r\n"),
        "head does not end in CRLF CRLF"
    );
    assert!(
        (100..=999).contains(&res.status()),
        "status {}",
        res.status()
    );
    let reason = res.reason();
    assert!(
        reason
            .iter()
            .all(|&b| b == b'\t' || (b >= 0x20 && b != 0x7f)),
        "control byte in reason {reason:?}"
    );
    let body = res.body();
    let bodiless = method == Method::Head || matches!(res.status(), 100..=199 | 204 | 304);
    if bodiless || (method == Method::Connect && (200..300).contains(&res.status())) {
        assert_eq!(body, BodyKind::Empty);
    }
    if let BodyKind::Length(n) = body {
        assert!(n > 0 && n <= limits.max_body_len);
    }
    if body == BodyKind::CloseDelimited {
        assert!(!res.keep_alive());
    }
    Head {
        version: res.version(),
        status: res.status(),
        reason: Text::of(reason),
        fields: fields(res.headers()),
        body,
        keep_alive: res.keep_alive(),
        interim: res.is_interim(),
        upgrade: res.upgrade().map(Text::of),
        len,
    }
}

/// What a client reads after this response: the final response after an interim one, nothing
/// after a switch of protocols or an established tunnel, the next response if the connection
/// persists.
fn after(res: &Response<'_>, method: Method<'_>) -> After {
    let tunnel = method == Method::Connect && (200..300).contains(&res.status());
    if res.is_interim() {
        After::Next
    } else if res.status() == 101 || tunnel || !res.keep_alive() {
        After::Stop
    } else {
        After::Next
    }
}

fn fetch(pieces: &[&[u8]], limits: &Limits, method: Method<'_>) -> Outcome<Head> {
    let mut parser = ResponseParser::new(*limits);
    read(
        pieces,
        limits,
        |buf| -> Result<Status<Parsed<Head>>, Error> {
            let parsed = parser.parse(buf, method)?.map(|res| Parsed {
                head: summarise(&res, buf, limits, method),
                len: res.head_len(),
                body: res.body(),
                after: after(&res, method),
            });
            if let Status::Complete(parsed, len) = &parsed {
                // Nothing after the head was looked at: the head alone parses the same.
                let head = &buf[..*len];
                match ResponseParser::new(*limits).parse(head, method) {
                    Ok(Status::Complete(res, n)) if n == *len => {
                        assert_eq!(summarise(&res, head, limits, method), parsed.head);
                    }
                    other => panic!("the head alone gives {other:?}"),
                }
            }
            Ok(parsed)
        },
    )
}

fuzz_target!(|data: &[u8]| {
    let [byte, method, stream @ ..] = data else {
        return;
    };
    let method = match method % 3 {
        0 => Method::Get,
        1 => Method::Head,
        _ => Method::Connect,
    };
    let (limits, pieces) = setup(*byte, stream);
    let whole = fetch(&[stream], &limits, method);
    let split = fetch(&pieces, &limits, method);
    if http1_support::debug() {
        eprintln!("whole: {whole:?}");
        if split != whole {
            eprintln!("{} pieces: {split:?}", pieces.len());
        }
    }
    http1_support::assert_agree(&whole, &split);
    unfolded(stream, &limits, method);
});

/// A head refused for an obsolete line fold, unfolded in place as a client does and parsed
/// again until it parses or fails otherwise: each pass replaces a fold (so the loop ends),
/// and only ever turns a fold's CR LF into two spaces.
fn unfolded(stream: &[u8], limits: &Limits, method: Method<'_>) {
    let mut buf = stream.to_vec();
    let mut parser = ResponseParser::new(*limits);
    let mut passes = 0;
    while let Err(Error::ObsFold) = parser.parse(&buf, method) {
        let before = buf.clone();
        if !parser.unfold(&mut buf) {
            return;
        }
        passes += 1;
        assert!(passes <= stream.len(), "unfolding does not end");
        for (i, (&was, &now)) in before.iter().zip(&buf).enumerate() {
            if was != now {
                assert!(
                    now == b' ' && matches!(was, b'\r' | b'\n'),
                    "byte {i} changed"
                );
            }
        }
    }
}
