//! Body decoding: every framing, valid and not, fed whole and split at every
//! byte, from a growing buffer and through the ring, must decode the same.

mod support;

use proptest::prelude::*;
use ringwire_http1::{BodyDecoder, BodyKind, Decoded, Error, Limits};
use ringwire_io::{Chunks, RecvTransport, TransportConfig};

/// Everything a decoder made of one input.
#[derive(Debug, PartialEq)]
struct Outcome {
    data: Vec<u8>,
    trailers: Vec<(String, Vec<u8>)>,
    /// The bytes left after the body, or the error (a cut-short body is
    /// `UnexpectedEof`, from `finish_eof`).
    end: Result<Vec<u8>, Error>,
}

/// Feeds `input` in `pieces` (lengths; the rest goes last) as a caller with
/// a growing buffer would, dropping what each call consumed.
fn feed(kind: BodyKind, limits: &Limits, input: &[u8], pieces: &[usize]) -> Outcome {
    let mut decoder = BodyDecoder::new(kind, limits);
    let mut out = Outcome {
        data: Vec::new(),
        trailers: Vec::new(),
        end: Ok(Vec::new()),
    };
    let mut buf = Vec::new();
    let mut fed = 0;
    let mut piece = pieces.iter();
    loop {
        let len = piece
            .next()
            .map_or(input.len() - fed, |&n| n.min(input.len() - fed));
        buf.extend_from_slice(&input[fed..fed + len]);
        fed += len;
        loop {
            let consumed = match decoder.decode(&buf) {
                Err(e) => {
                    out.end = Err(e);
                    return out;
                }
                Ok(Decoded::Data { data, consumed }) => {
                    assert!(!data.is_empty(), "empty Data");
                    assert!(consumed >= data.len() && consumed <= buf.len());
                    out.data.extend_from_slice(data);
                    consumed
                }
                Ok(Decoded::Partial { consumed }) => {
                    buf.drain(..consumed);
                    break;
                }
                Ok(Decoded::Done { consumed, trailers }) => {
                    out.trailers = trailers
                        .iter()
                        .map(|h| (h.name.to_string(), h.value.to_vec()))
                        .collect();
                    buf.drain(..consumed);
                    assert!(decoder.is_done());
                    assert_eq!(decoder.delivered(), out.data.len() as u64);
                    assert!(matches!(
                        decoder.decode(&buf),
                        Ok(Decoded::Done { consumed: 0, trailers }) if trailers.is_empty()
                    ));
                    assert_eq!(decoder.finish_eof(), Ok(()));
                    buf.extend_from_slice(&input[fed..]);
                    out.end = Ok(buf);
                    return out;
                }
            };
            buf.drain(..consumed);
        }
        if fed == input.len() {
            break;
        }
    }
    out.end = decoder.finish_eof().map(|()| buf);
    if out.end.is_ok() {
        assert!(decoder.is_done());
    }
    out
}

/// Receives `chunks` into a ring (the transport a server or client reads
/// bodies from) and decodes in place, consuming what each call took.
fn feed_ring(kind: BodyKind, limits: &Limits, chunks: Chunks) -> Outcome {
    let mut decoder = BodyDecoder::new(kind, limits);
    let mut rx = RecvTransport::new(TransportConfig::new(4096, 1 << 20), chunks).expect("ring");
    let mut out = Outcome {
        data: Vec::new(),
        trailers: Vec::new(),
        end: Ok(Vec::new()),
    };
    loop {
        match decoder.decode(rx.data()) {
            Err(e) => {
                out.end = Err(e);
                return out;
            }
            Ok(Decoded::Data { data, consumed }) => {
                out.data.extend_from_slice(data);
                rx.consume(consumed);
            }
            Ok(Decoded::Partial { consumed }) => {
                rx.consume(consumed);
                if rx.fill(rx.data().len() + 1).expect("fixture") == 0 {
                    out.end = decoder.finish_eof().map(|()| rx.data().to_vec());
                    return out;
                }
            }
            Ok(Decoded::Done { consumed, trailers }) => {
                out.trailers = trailers
                    .iter()
                    .map(|h| (h.name.to_string(), h.value.to_vec()))
                    .collect();
                rx.consume(consumed);
                // What follows the body, as it arrives.
                while rx.fill(rx.data().len() + 1).expect("fixture") > 0 {}
                out.end = Ok(rx.data().to_vec());
                return out;
            }
        }
    }
}

/// Decodes `input` whole, split in two at every byte, and byte by byte,
/// from a growing buffer and through the ring; every way must give the
/// same outcome.
fn decode(kind: BodyKind, limits: &Limits, input: &[u8]) -> Outcome {
    let whole = feed(kind, limits, input, &[]);
    for at in 0..=input.len() {
        assert_eq!(feed(kind, limits, input, &[at]), whole, "split at {at}");
    }
    let bytes = vec![1; input.len()];
    assert_eq!(feed(kind, limits, input, &bytes), whole, "byte by byte");
    for (how, chunks) in support::deliveries(input) {
        assert_eq!(feed_ring(kind, limits, chunks), whole, "ring, {how}");
    }
    whole
}

fn chunked(input: &[u8]) -> Outcome {
    decode(BodyKind::Chunked, &Limits::default(), input)
}

fn ok(data: &[u8], trailers: &[(&str, &str)], rest: &[u8]) -> Outcome {
    Outcome {
        data: data.to_vec(),
        trailers: trailers
            .iter()
            .map(|(n, v)| ((*n).to_owned(), v.as_bytes().to_vec()))
            .collect(),
        end: Ok(rest.to_vec()),
    }
}

fn err(data: &[u8], e: Error) -> Outcome {
    Outcome {
        data: data.to_vec(),
        trailers: Vec::new(),
        end: Err(e),
    }
}

#[test]
fn length_delimited() {
    let limits = Limits::default();
    let cases: &[(u64, &[u8], Outcome)] = &[
        (0, b"", ok(b"", &[], b"")),
        (0, b"GET", ok(b"", &[], b"GET")),
        (5, b"hello", ok(b"hello", &[], b"")),
        (
            5,
            b"helloGET / HTTP/1.1\r\n",
            ok(b"hello", &[], b"GET / HTTP/1.1\r\n"),
        ),
        (5, b"hel", err(b"hel", Error::UnexpectedEof)),
        (5, b"", err(b"", Error::UnexpectedEof)),
    ];
    for (n, input, expected) in cases {
        assert_eq!(
            &decode(BodyKind::Length(*n), &limits, input),
            expected,
            "{n}"
        );
    }
    assert_eq!(
        decode(BodyKind::Empty, &limits, b"next"),
        ok(b"", &[], b"next")
    );
}

#[test]
fn length_calls() {
    let mut d = BodyDecoder::new(BodyKind::Length(3), &Limits::default());
    assert!(matches!(
        d.decode(b""),
        Ok(Decoded::Partial { consumed: 0 })
    ));
    assert!(matches!(
        d.decode(b"ab"),
        Ok(Decoded::Data {
            data: b"ab",
            consumed: 2
        })
    ));
    assert!(!d.is_done());
    assert!(matches!(
        d.decode(b"cde"),
        Ok(Decoded::Data {
            data: b"c",
            consumed: 1
        })
    ));
    assert!(d.is_done());
    assert!(matches!(
        d.decode(b"de"),
        Ok(Decoded::Done { consumed: 0, .. })
    ));
    assert_eq!((d.kind(), d.delivered()), (BodyKind::Length(3), 3));

    let mut d = BodyDecoder::new(BodyKind::Empty, &Limits::default());
    assert!(d.is_done());
    assert!(matches!(
        d.decode(b""),
        Ok(Decoded::Done { consumed: 0, .. })
    ));
}

#[test]
fn close_delimited() {
    let limits = Limits::default();
    let kind = BodyKind::CloseDelimited;
    assert_eq!(decode(kind, &limits, b""), ok(b"", &[], b""));
    assert_eq!(
        decode(kind, &limits, b"all\r\n0\r\n\r\nof it"),
        ok(b"all\r\n0\r\n\r\nof it", &[], b"")
    );

    let mut d = BodyDecoder::new(kind, &limits);
    assert!(matches!(
        d.decode(b""),
        Ok(Decoded::Partial { consumed: 0 })
    ));
    assert!(matches!(
        d.decode(b"abc"),
        Ok(Decoded::Data {
            data: b"abc",
            consumed: 3
        })
    ));
    assert!(!d.is_done());
    assert_eq!(d.finish_eof(), Ok(()));
    assert!(d.is_done());
    assert!(matches!(
        d.decode(b"x"),
        Ok(Decoded::Done { consumed: 0, .. })
    ));

    let small = Limits {
        max_body_len: 4,
        ..Limits::default()
    };
    assert_eq!(decode(kind, &small, b"abcd"), ok(b"abcd", &[], b""));
    let mut d = BodyDecoder::new(kind, &small);
    assert!(matches!(d.decode(b"abc"), Ok(Decoded::Data { .. })));
    assert_eq!(
        d.decode(b"de").err(),
        Some(Error::BodyTooLarge { limit: 4 })
    );
}

#[test]
fn chunked_valid() {
    let cases: &[(&[u8], Outcome)] = &[
        (b"0\r\n\r\n", ok(b"", &[], b"")),
        (b"5\r\nhello\r\n0\r\n\r\n", ok(b"hello", &[], b"")),
        (
            b"5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n",
            ok(b"hello world", &[], b""),
        ),
        // Pipelined bytes after the body stay in the buffer.
        (
            b"3\r\nabc\r\n0\r\n\r\nGET / HTTP/1.1\r\n\r\n",
            ok(b"abc", &[], b"GET / HTTP/1.1\r\n\r\n"),
        ),
        (
            b"1\r\na\r\n1\r\nb\r\n1\r\nc\r\n0\r\n\r\n",
            ok(b"abc", &[], b""),
        ),
        (b"A\r\n0123456789\r\n0\r\n\r\n", ok(b"0123456789", &[], b"")),
        (b"a\r\n0123456789\r\n0\r\n\r\n", ok(b"0123456789", &[], b"")),
        (b"000003\r\nabc\r\n000\r\n\r\n", ok(b"abc", &[], b"")),
        (
            b"00000000000000000000000000000001\r\na\r\n0\r\n\r\n",
            ok(b"a", &[], b""),
        ),
        // Chunk data may hold anything, framing look-alikes included.
        (b"5\r\n0\r\n\r\n\r\n0\r\n\r\n", ok(b"0\r\n\r\n", &[], b"")),
        // Extensions, with BWS where RFC 9112 allows it.
        (b"5;a\r\nhello\r\n0\r\n\r\n", ok(b"hello", &[], b"")),
        (b"5 ;a\r\nhello\r\n0\r\n\r\n", ok(b"hello", &[], b"")),
        (
            b"5\t; \ta \t= \tb\r\nhello\r\n0\r\n\r\n",
            ok(b"hello", &[], b""),
        ),
        (
            b"5;a=b;c;d=e\r\nhello\r\n0;last\r\n\r\n",
            ok(b"hello", &[], b""),
        ),
        (b"5;a=\"\"\r\nhello\r\n0\r\n\r\n", ok(b"hello", &[], b"")),
        (
            b"5;a=\"x;y=\\\"z\\\\\" ; b=\"\t\xff\"\r\nhello\r\n0\r\n\r\n",
            ok(b"hello", &[], b""),
        ),
        (
            b"5;a=\"\\\"\"\r\nhello\r\n0\r\n\r\n",
            ok(b"hello", &[], b""),
        ),
        // Trailers.
        (
            b"3\r\nabc\r\n0\r\nExpires: never\r\nX-Sum:  abc \r\n\r\nnext",
            ok(b"abc", &[("Expires", "never"), ("X-Sum", "abc")], b"next"),
        ),
        (b"0;x=\"y\"\r\nA: \r\n\r\n", ok(b"", &[("A", "")], b"")),
    ];
    for (input, expected) in cases {
        assert_eq!(&chunked(input), expected, "{}", input.escape_ascii());
    }
}

#[test]
fn chunked_invalid() {
    use Error::*;
    let cases: &[(&[u8], Outcome)] = &[
        // Sizes.
        (b"\r\n", err(b"", InvalidChunkSize)),
        (b"\n", err(b"", InvalidChunkSize)),
        (b" 5\r\nhello\r\n0\r\n\r\n", err(b"", InvalidChunkSize)),
        (b"-1\r\n", err(b"", InvalidChunkSize)),
        (b"+1\r\n", err(b"", InvalidChunkSize)),
        (b"0x5\r\n", err(b"", InvalidChunkSize)),
        (b"5g\r\n", err(b"", InvalidChunkSize)),
        (b"ffffffffffffffffff\r\n", err(b"", InvalidChunkSize)),
        (b"10000000000000000\r\n", err(b"", InvalidChunkSize)),
        (
            b"000000000000000000000000000000001\r\n",
            err(b"", InvalidChunkSize),
        ),
        (
            b"ffffffffffffffff\r\n",
            err(b"", BodyTooLarge { limit: 1 << 30 }),
        ),
        (b"5 \r\nhello", err(b"", InvalidChunkSize)),
        (b"5\nhello", err(b"", BareLf)),
        (b"5\rhello", err(b"", BareCr)),
        (b"5;a\nhello", err(b"", BareLf)),
        (b"5;a=b\nhello", err(b"", BareLf)),
        (b"5;a=\"b\"\nhello", err(b"", BareLf)),
        // Extensions.
        (b"5;\r\nhello", err(b"", InvalidChunkSize)),
        (b"5;;a\r\nhello", err(b"", InvalidChunkSize)),
        (b"5;a=\r\nhello", err(b"", InvalidChunkSize)),
        (b"5;a b\r\nhello", err(b"", InvalidChunkSize)),
        (b"5;a=b c\r\nhello", err(b"", InvalidChunkSize)),
        (b"5;a=b \r\nhello", err(b"", InvalidChunkSize)),
        (b"5;a \r\nhello", err(b"", InvalidChunkSize)),
        (b"5;a=\"b\"c\r\nhello", err(b"", InvalidChunkSize)),
        (b"5;a=\"b\r\n\"\r\nhello", err(b"", InvalidChunkSize)),
        (b"5;a=\"b\\\r\n", err(b"", InvalidChunkSize)),
        (b"5;a=\"b\x7f\"\r\n", err(b"", InvalidChunkSize)),
        (b"5;a=b\"c\"\r\n", err(b"", InvalidChunkSize)),
        (b"5;a@b\r\n", err(b"", InvalidChunkSize)),
        // Data ends.
        (b"5\r\nhelloX\r\n0\r\n\r\n", err(b"hello", InvalidChunkEnd)),
        (b"5\r\nhello\rX0\r\n\r\n", err(b"hello", InvalidChunkEnd)),
        (b"5\r\nhello\n0\r\n\r\n", err(b"hello", InvalidChunkEnd)),
        (b"5\r\nhello\r\n\r\n", err(b"hello", InvalidChunkSize)),
        (b"0\r\n0\r\n\r\n", err(b"", InvalidHeaderName)),
        // Trailers.
        (b"0\r\nA: b\n\r\n", err(b"", BareLf)),
        (b"0\r\n\n", err(b"", BareLf)),
        (b"0\r\n\rX\r\n\r\n", err(b"", BareCr)),
        (b"0\r\n folded: x\r\n\r\n", err(b"", ObsFold)),
        (b"0\r\nA : b\r\n\r\n", err(b"", WhitespaceBeforeColon)),
        (b"0\r\nA: b\x01\r\n\r\n", err(b"", InvalidHeaderValue)),
        // Cut short.
        (b"", err(b"", UnexpectedEof)),
        (b"5", err(b"", UnexpectedEof)),
        (b"5;a=\"", err(b"", UnexpectedEof)),
        (b"5\r\nhel", err(b"hel", UnexpectedEof)),
        (b"5\r\nhello\r\n", err(b"hello", UnexpectedEof)),
        (b"5\r\nhello\r\n0\r\n", err(b"hello", UnexpectedEof)),
        (b"5\r\nhello\r\n0\r\nA: b\r\n", err(b"hello", UnexpectedEof)),
        (b"0\r\n\r", err(b"", UnexpectedEof)),
    ];
    for (input, expected) in cases {
        assert_eq!(&chunked(input), expected, "{}", input.escape_ascii());
    }
}

#[test]
fn chunked_limits() {
    let limits = Limits {
        max_body_len: 10,
        max_chunk_ext_len: 4,
        max_head_len: 16,
        max_headers: 2,
        ..Limits::default()
    };
    let cases: &[(&[u8], Outcome)] = &[
        (b"a\r\n0123456789\r\n0\r\n\r\n", ok(b"0123456789", &[], b"")),
        (
            b"5\r\nhello\r\n5\r\nworld\r\n0\r\n\r\n",
            ok(b"helloworld", &[], b""),
        ),
        // The size that breaks the limit fails before its data arrives.
        (
            b"5\r\nhello\r\n6\r\n",
            err(b"hello", Error::BodyTooLarge { limit: 10 }),
        ),
        (b"b;x\r\n", err(b"", Error::BodyTooLarge { limit: 10 })),
        // Extension bytes: everything between the size and the CR.
        (b"1;abc\r\nx\r\n0 ;a\r\n\r\n", ok(b"x", &[], b"")),
        (
            b"1;abcd\r\n",
            err(b"", Error::ChunkExtensionTooLong { limit: 4 }),
        ),
        (
            b"1   ;a\r\n",
            err(b"", Error::ChunkExtensionTooLong { limit: 4 }),
        ),
        // Trailer section: at most 16 bytes with its empty line, 2 fields.
        (
            b"0\r\nA: 1\r\nB: 22\r\n\r\n",
            ok(b"", &[("A", "1"), ("B", "22")], b""),
        ),
        (
            b"0\r\nA: 1\r\nB: 2222\r\n\r\n",
            err(b"", Error::HeadTooLarge { limit: 16 }),
        ),
        (
            b"0\r\nA:\r\nB:\r\nC:\r\n\r\n",
            err(b"", Error::TooManyHeaders { limit: 2 }),
        ),
        (
            b"0\r\nAAAAAAAAAAAAAAAAAAAAAAAAA",
            err(b"", Error::HeadTooLarge { limit: 16 }),
        ),
    ];
    for (input, expected) in cases {
        assert_eq!(
            &decode(BodyKind::Chunked, &limits, input),
            expected,
            "{}",
            input.escape_ascii()
        );
    }
}

#[test]
fn chunked_calls() {
    let mut d = BodyDecoder::new(BodyKind::Chunked, &Limits::default());
    assert!(matches!(
        d.decode(b""),
        Ok(Decoded::Partial { consumed: 0 })
    ));
    // A size line split inside its digits: the digits read are released.
    assert!(matches!(
        d.decode(b"1"),
        Ok(Decoded::Partial { consumed: 1 })
    ));
    assert!(matches!(
        d.decode(b"0\r"),
        Ok(Decoded::Partial { consumed: 2 })
    ));
    // A chunk split across calls.
    assert!(matches!(
        d.decode(b"\nabc"),
        Ok(Decoded::Data {
            data: b"abc",
            consumed: 4
        })
    ));
    assert!(matches!(
        d.decode(b""),
        Ok(Decoded::Partial { consumed: 0 })
    ));
    assert!(matches!(
        d.decode(b"defghijklmnop\r\n"),
        Ok(Decoded::Data {
            data: b"defghijklmnop",
            consumed: 13
        })
    ));
    assert_eq!(d.delivered(), 16);
    assert!(matches!(
        d.decode(b"\r\n0\r\nA"),
        Ok(Decoded::Partial { consumed: 5 })
    ));
    assert!(!d.is_done());
    assert_eq!(d.finish_eof(), Err(Error::UnexpectedEof));
    // The trailer section stays in the buffer until it is whole.
    assert!(matches!(
        d.decode(b"A: b\r\n"),
        Ok(Decoded::Partial { consumed: 0 })
    ));
    match d.decode(b"A: b\r\n\r\nrest") {
        Ok(Decoded::Done {
            consumed: 8,
            trailers,
        }) => {
            assert_eq!(trailers.get("a"), Some(&b"b"[..]));
        }
        other => panic!("{other:?}"),
    }
    assert!(d.is_done());
    assert_eq!(d.finish_eof(), Ok(()));
    assert_eq!(d.kind(), BodyKind::Chunked);
}

/// Framing bytes are released by the call that reads them, so none is read
/// twice; only the trailer section waits in the buffer.
#[test]
fn framing_is_released_as_read() {
    let input = b"5;a=\"b\\\"\"\r\nhello\r\n1\r\nx\r\n0;z\r\nX: y\r\n\r\n";
    let trailers_at = input.len() - b"X: y\r\n\r\n".len();
    let mut d = BodyDecoder::new(BodyKind::Chunked, &Limits::default());
    let mut held = Vec::new();
    for (i, &b) in input.iter().enumerate() {
        held.push(b);
        match d.decode(&held).unwrap() {
            Decoded::Data { consumed, .. } | Decoded::Partial { consumed } => {
                held.drain(..consumed);
            }
            Decoded::Done { consumed, trailers } => {
                assert_eq!(
                    (i + 1, consumed, trailers.len()),
                    (input.len(), held.len(), 1)
                );
                return;
            }
        }
        assert_eq!(
            held.len(),
            (i + 1).saturating_sub(trailers_at),
            "after byte {i}"
        );
    }
    panic!("not done");
}

fn encode_chunked(body: &[u8], sizes: &[usize], upper: bool, trailers: bool) -> Vec<u8> {
    let mut out = Vec::new();
    let mut rest = body;
    let mut sizes = sizes.iter().cycle();
    while !rest.is_empty() {
        let n = sizes.next().copied().unwrap_or(1).clamp(1, rest.len());
        let size = if upper {
            format!("{n:X}")
        } else {
            format!("{n:x}")
        };
        out.extend_from_slice(size.as_bytes());
        if n % 3 == 0 {
            out.extend_from_slice(b" ; ext=\"q\\\"\"");
        }
        out.extend_from_slice(b"\r\n");
        out.extend_from_slice(&rest[..n]);
        out.extend_from_slice(b"\r\n");
        rest = &rest[n..];
    }
    out.extend_from_slice(b"0\r\n");
    if trailers {
        out.extend_from_slice(b"Digest: abc\r\n");
    }
    out.extend_from_slice(b"\r\n");
    out
}

proptest! {
    #[test]
    fn chunked_roundtrip(
        body in proptest::collection::vec(any::<u8>(), 0..2000),
        sizes in proptest::collection::vec(1usize..300, 1..8),
        pieces in proptest::collection::vec(0usize..64, 0..40),
        upper in any::<bool>(),
        trailers in any::<bool>(),
    ) {
        let mut input = encode_chunked(&body, &sizes, upper, trailers);
        input.extend_from_slice(b"NEXT");
        let got = feed(BodyKind::Chunked, &Limits::default(), &input, &pieces);
        let expected: &[(&str, &str)] = if trailers { &[("Digest", "abc")] } else { &[] };
        prop_assert_eq!(got, ok(&body, expected, b"NEXT"));
    }

    #[test]
    fn never_panics(input in proptest::collection::vec(any::<u8>(), 0..64), at in 0usize..64) {
        let kinds = [BodyKind::Chunked, BodyKind::Length(7), BodyKind::CloseDelimited];
        for kind in kinds {
            let whole = feed(kind, &Limits::default(), &input, &[]);
            prop_assert_eq!(feed(kind, &Limits::default(), &input, &[at]), whole);
        }
    }
}
