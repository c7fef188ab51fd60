//! The reader and writer on RFC 6455's examples and on every protocol violation, each input
//! fed whole, split at every byte and one byte per read.

mod support;

use ringwire_ws::{
    CloseCode, CloseFrame, EncodeError, Error, Limits, Message, OpCode, Reader, Role, Writer,
};
use support::{agree, Outcome, Owned};

fn client() -> Reader {
    Reader::new(Role::Client, Limits::default(), None)
}

fn server() -> Reader {
    Reader::new(Role::Server, Limits::default(), None)
}

fn text(s: &str) -> Owned {
    Owned::Text(s.into())
}

fn ok(messages: Vec<Owned>) -> Outcome {
    Outcome {
        messages,
        error: None,
        leftover: 0,
    }
}

/// RFC 6455 section 5.7, every example.
#[test]
fn rfc6455_section_5_7_examples() {
    let hello = b"Hello".to_vec();
    assert_eq!(agree(b"\x81\x05Hello", client), ok(vec![text("Hello")]));
    assert_eq!(
        agree(b"\x81\x85\x37\xfa\x21\x3d\x7f\x9f\x4d\x51\x58", server),
        ok(vec![text("Hello")])
    );
    assert_eq!(
        agree(b"\x01\x03Hel\x80\x02lo", client),
        ok(vec![text("Hello")])
    );
    assert_eq!(
        agree(b"\x89\x05Hello", client),
        ok(vec![Owned::Ping(hello.clone())])
    );
    assert_eq!(
        agree(b"\x8a\x85\x37\xfa\x21\x3d\x7f\x9f\x4d\x51\x58", server),
        ok(vec![Owned::Pong(hello)])
    );
    let body: Vec<u8> = (0..256).map(|i| i as u8).collect();
    let mut frame = b"\x82\x7e\x01\x00".to_vec();
    frame.extend_from_slice(&body);
    assert_eq!(agree(&frame, client), ok(vec![Owned::Binary(body)]));
    let body: Vec<u8> = (0..65536).map(|i| (i * 7) as u8).collect();
    let mut frame = b"\x82\x7f\x00\x00\x00\x00\x00\x01\x00\x00".to_vec();
    frame.extend_from_slice(&body);
    // 64 KiB split at every byte is slow; whole and a few splits are enough here.
    for cut in [0, 1, 5, 10, 11, 4096, 65545] {
        let chunks = ringwire_io::Chunks::split_at(&frame, cut);
        let got = support::drive(&mut client(), chunks);
        assert_eq!(got, ok(vec![Owned::Binary(body.clone())]), "cut {cut}");
    }
}

/// The writer produces the same bytes as RFC 6455's unmasked examples.
#[test]
fn writer_reproduces_the_unmasked_examples() {
    let mut w = Writer::server();
    let mut out = [0; 300];
    let n = w.write(&Message::Text("Hello"), &mut out).unwrap();
    assert_eq!(&out[..n], b"\x81\x05Hello");
    let n = w.write(&Message::Ping(b"Hello"), &mut out).unwrap();
    assert_eq!(&out[..n], b"\x89\x05Hello");
    w.set_fragment_size(std::num::NonZeroUsize::new(3));
    let n = w.write(&Message::Text("Hello"), &mut out).unwrap();
    assert_eq!(&out[..n], b"\x01\x03Hel\x80\x02lo");
    w.set_fragment_size(None);
    let body = [9u8; 256];
    let n = w.write(&Message::Binary(&body), &mut out).unwrap();
    assert_eq!(&out[..4], b"\x82\x7e\x01\x00");
    assert_eq!(&out[4..n], &body[..]);
}

#[test]
fn client_frames_are_masked_with_a_fresh_key_each() {
    let mut w = Writer::client().unwrap();
    let mut keys = std::collections::HashSet::new();
    let mut out = [0; 64];
    for _ in 0..100 {
        let n = w.write(&Message::Binary(b"abc"), &mut out).unwrap();
        assert_eq!(n, 2 + 4 + 3);
        assert_eq!(out[1], 0x80 | 3);
        keys.insert([out[2], out[3], out[4], out[5]]);
        let got = support::drive(&mut server(), ringwire_io::Chunks::new([&out[..n]]));
        assert_eq!(got, ok(vec![Owned::Binary(b"abc".to_vec())]));
    }
    assert!(keys.len() > 95, "keys repeat: {}", keys.len());
}

#[test]
fn writer_says_how_much_room_it_needs_and_checks_control_frames() {
    let mut w = Writer::server();
    let mut small = [0; 10];
    assert_eq!(
        w.write(&Message::Binary(&[0; 200]), &mut small),
        Err(EncodeError::BufferFull { needed: 204 })
    );
    let mut out = [0; 300];
    assert_eq!(
        w.write(&Message::Ping(&[0; 126]), &mut out),
        Err(EncodeError::ControlFrameTooLong)
    );
    let close = |code| {
        Message::Close(Some(CloseFrame {
            code: CloseCode(code),
            reason: "bye",
        }))
    };
    assert_eq!(
        w.write(&close(1005), &mut out),
        Err(EncodeError::InvalidCloseCode(1005))
    );
    let n = w.write(&close(1000), &mut out).unwrap();
    assert_eq!(&out[..n], b"\x88\x05\x03\xe8bye");
}

#[test]
fn control_frames_interleave_with_fragments() {
    let input = b"\x01\x02He\x89\x01!\x00\x01l\x8a\x00\x80\x02lo";
    assert_eq!(
        agree(input, client),
        ok(vec![
            Owned::Ping(b"!".to_vec()),
            Owned::Pong(Vec::new()),
            text("Hello"),
        ])
    );
}

#[test]
fn non_minimal_lengths_are_accepted() {
    // RFC 6455 asks for the minimal encoding but a receiver need not enforce it.
    assert_eq!(
        agree(b"\x82\x7e\x00\x02hi", client),
        ok(vec![Owned::Binary(b"hi".to_vec())])
    );
    assert_eq!(
        agree(b"\x82\x7f\x00\x00\x00\x00\x00\x00\x00\x02hi", client),
        ok(vec![Owned::Binary(b"hi".to_vec())])
    );
}

#[test]
fn close_frames_parse_code_and_reason() {
    assert_eq!(agree(b"\x88\x00", client), ok(vec![Owned::Close(None)]));
    assert_eq!(
        agree(b"\x88\x04\x0f\xa0ok", client),
        ok(vec![Owned::Close(Some((4000, "ok".into())))])
    );
    for code in [
        1000u16, 1001, 1002, 1003, 1007, 1008, 1009, 1010, 1011, 3000, 3999, 4000, 4999,
    ] {
        let mut frame = vec![0x88, 2];
        frame.extend_from_slice(&code.to_be_bytes());
        assert_eq!(
            agree(&frame, client),
            ok(vec![Owned::Close(Some((code, String::new())))])
        );
    }
}

/// Every violation, its error and its close code; the messages before it still arrive.
#[test]
fn every_error_maps_to_its_close_code() {
    let tiny = || {
        Reader::new(
            Role::Client,
            Limits {
                max_frame_len: 8,
                max_message_len: 12,
            },
            None,
        )
    };
    /// Input, the reader it goes to, the error and its close code.
    type Case = (&'static [u8], fn() -> Reader, Error, u16);
    let cases: Vec<Case> = vec![
        (b"\xa1\x00", client, Error::ReservedBits, 1002),
        (b"\x91\x00", client, Error::ReservedBits, 1002),
        (b"\xc1\x00", client, Error::ReservedBits, 1002), // RSV1 without deflate
        (b"\x83\x00", client, Error::ReservedOpcode(3), 1002),
        (b"\x8b\x00", client, Error::ReservedOpcode(0xb), 1002),
        (
            b"\x82\x7f\x80\x00\x00\x00\x00\x00\x00\x00",
            client,
            Error::InvalidLength,
            1002,
        ),
        (b"\x82\x01x", server, Error::UnmaskedFrame, 1002),
        (b"\x82\x81abcdx", client, Error::MaskedFrame, 1002),
        (
            b"\x89\x7e\x00\x7e",
            client,
            Error::ControlFrameTooLong,
            1002,
        ),
        (b"\x09\x00", client, Error::FragmentedControlFrame, 1002),
        (b"\x80\x01x", client, Error::UnexpectedContinuation, 1002),
        (
            b"\x01\x01a\x01\x01b",
            client,
            Error::ExpectedContinuation,
            1002,
        ),
        (b"\x88\x01\x03", client, Error::InvalidClosePayload, 1002),
        (
            b"\x88\x02\x03\xed",
            client,
            Error::InvalidCloseCode(1005),
            1002,
        ),
        (
            b"\x88\x02\x03\xec",
            client,
            Error::InvalidCloseCode(1004),
            1002,
        ),
        (
            b"\x88\x02\x03\xf7",
            client,
            Error::InvalidCloseCode(1015),
            1002,
        ),
        (
            b"\x88\x02\x0b\xb7",
            client,
            Error::InvalidCloseCode(2999),
            1002,
        ),
        (
            b"\x88\x02\x13\x88",
            client,
            Error::InvalidCloseCode(5000),
            1002,
        ),
        (
            b"\x88\x02\x00\x00",
            client,
            Error::InvalidCloseCode(0),
            1002,
        ),
        (b"\x88\x03\x03\xe8\xff", client, Error::InvalidUtf8, 1007),
        (b"\x81\x02\xc3\x28", client, Error::InvalidUtf8, 1007),
        (
            b"\x01\x01\xe2\x80\x01\x82",
            client,
            Error::InvalidUtf8,
            1007,
        ),
        (
            b"\x01\x01\xce\x00\x01\xff",
            client,
            Error::InvalidUtf8,
            1007,
        ),
        (
            b"\x82\x09123456789",
            tiny,
            Error::FrameTooLarge { limit: 8 },
            1009,
        ),
        (
            b"\x02\x0812345678\x80\x05abcde",
            tiny,
            Error::MessageTooLarge { limit: 12 },
            1009,
        ),
    ];
    for (input, reader, error, code) in cases {
        let got = agree(input, reader);
        assert_eq!(got.error, Some(error), "{input:x?}");
        assert_eq!(error.close_code(), CloseCode(code), "{error}");
        assert!(got.messages.is_empty(), "{input:x?}");
        assert!(!error.to_string().is_empty());
    }
}

/// Invalid UTF-8 is reported as soon as its bytes arrive, not when the frame or message ends.
#[test]
fn invalid_text_fails_before_the_rest_arrives() {
    for role in [Role::Client, Role::Server] {
        let payload = b"valid start \xce\xba then \xff and a long tail that never needs to arrive";
        // The frame the peer would send (the opposite role).
        let (frame, h) = frame_of(&mut peer_of(role), OpCode::Text, true, payload);
        let bad = payload.iter().position(|&b| b == 0xff).unwrap();
        // Deliver only up to and including the bad byte: the frame is unfinished.
        let upto = &frame[..h + bad + 1];
        let got = support::drive(
            &mut Reader::new(role, Limits::default(), None),
            ringwire_io::Chunks::every(upto, 3),
        );
        assert_eq!(got.error, Some(Error::InvalidUtf8), "{role:?}");
    }
}

/// A one-byte input never panics and is either an error or waits for more; so is every
/// two-byte header with every length form.
#[test]
fn short_inputs_never_panic() {
    for a in 0..=255u8 {
        for b in 0..=255u8 {
            for role in [Role::Client, Role::Server] {
                let mut r = Reader::new(role, Limits::default(), None);
                let mut buf = [a, b];
                let _ = r.read(&mut buf);
            }
        }
    }
}

/// Header only, payload from the caller's memory (as `writev` sends it): the same bytes as a
/// whole frame for a server; for a client, the payload masked in place reads back.
#[test]
fn header_only_then_payload_for_writev() {
    let payload: Vec<u8> = (0..70_000u32).map(|i| (i % 251) as u8).collect();
    let mut w = Writer::server();
    let mut whole = vec![0; w.max_encoded_len(&Message::Binary(&payload))];
    let n = w.write(&Message::Binary(&payload), &mut whole).unwrap();
    let header = w.header(OpCode::Binary, true, payload.len() as u64);
    let mut head = [0; ringwire_ws::MAX_HEADER_LEN];
    let h = header.write(&mut head).unwrap();
    assert_eq!([&head[..h], &payload[..]].concat(), whole[..n]);

    let mut w = Writer::client().unwrap();
    let header = w.header(OpCode::Binary, true, payload.len() as u64);
    let h = header.write(&mut head).unwrap();
    let mut body = payload.clone();
    ringwire_ws::apply_mask(&mut body, header.mask.unwrap(), 0);
    let wire = [&head[..h], &body[..]].concat();
    let got = support::drive(&mut server(), ringwire_io::Chunks::every(&wire, 4096));
    assert_eq!(got, ok(vec![Owned::Binary(payload)]));
}

/// Whole short text and binary frames take the reader's one-step path; split ones take the
/// general path. Both must give the same messages and errors, for both roles, at the length
/// forms' edges, with limits below and above the frame, and with invalid text.
#[test]
fn whole_frames_and_split_frames_agree() {
    for role in [Role::Client, Role::Server] {
        let mut peer = peer_of(role);
        for len in [0, 1, 125, 126, 300, 65535, 65536] {
            for opcode in [OpCode::Text, OpCode::Binary] {
                let mut payload: Vec<u8> = (0..len).map(|i| b'a' + (i % 26) as u8).collect();
                if len > 0 && opcode == OpCode::Text && len % 2 == 1 {
                    payload[len / 2] = 0xff;
                }
                let (frame, h) = frame_of(&mut peer, opcode, true, &payload);
                for max in [len as u64 / 2, len as u64, u64::MAX] {
                    let limits = Limits {
                        max_frame_len: max,
                        max_message_len: max,
                    };
                    let whole = support::drive(
                        &mut Reader::new(role, limits, None),
                        ringwire_io::Chunks::new([&frame[..]]),
                    );
                    for cut in [1, h, h + len / 2] {
                        let split = support::drive(
                            &mut Reader::new(role, limits, None),
                            ringwire_io::Chunks::split_at(&frame, cut),
                        );
                        let case = format!("{role:?} {opcode:?} {len} max {max} cut {cut}");
                        assert_eq!(split.messages, whole.messages, "{case}");
                        assert_eq!(split.error, whole.error, "{case}");
                    }
                    let expect_ok = max >= len as u64 && (opcode == OpCode::Binary || len % 2 == 0);
                    assert_eq!(
                        whole.error.is_none(),
                        expect_ok,
                        "{role:?} {opcode:?} {len} {max}"
                    );
                }
            }
        }
    }
}

/// Fragmented messages whose frames arrive whole take the reader's one-step path for the
/// continuations; split, the general path. Same messages and errors both ways, for both roles,
/// with limits below and above the message and with invalid text in a later fragment.
#[test]
fn whole_and_split_fragments_agree() {
    for role in [Role::Client, Role::Server] {
        let mut peer = peer_of(role);
        for (opcode, pieces) in [
            (OpCode::Text, vec![&b"Hel"[..], b"lo, ", b"wor", b"ld"]),
            (OpCode::Text, vec![&b"ok "[..], b"then \xff", b"bad"]),
            (OpCode::Text, vec![&b"split \xce"[..], b"\xba char"]),
            (OpCode::Binary, vec![&[0u8; 200][..], &[1; 300], &[2; 5]]),
        ] {
            let mut wire = Vec::new();
            for (i, piece) in pieces.iter().enumerate() {
                let op = if i == 0 { opcode } else { OpCode::Continuation };
                wire.extend(frame_of(&mut peer, op, i + 1 == pieces.len(), piece).0);
            }
            let total: usize = pieces.iter().map(|p| p.len()).sum();
            for max in [total as u64 - 1, total as u64, u64::MAX] {
                let new = || {
                    Reader::new(
                        role,
                        Limits {
                            max_frame_len: max,
                            max_message_len: max,
                        },
                        None,
                    )
                };
                let case = format!("{role:?} {opcode:?} {pieces:x?} max {max}");
                let whole = support::drive(&mut new(), ringwire_io::Chunks::new([&wire[..]]));
                let bytes = support::drive(&mut new(), ringwire_io::Chunks::every(&wire, 1));
                assert_eq!(bytes.messages, whole.messages, "{case}");
                assert_eq!(bytes.error, whole.error, "{case}");
            }
        }
    }
}

/// A writer for the other end from `role`: the frames a `role` reader receives.
fn peer_of(role: Role) -> Writer {
    Writer::new(match role {
        Role::Client => Role::Server,
        Role::Server => Role::Client,
    })
    .unwrap()
}

/// One frame as `peer` sends it, and its header length.
fn frame_of(peer: &mut Writer, opcode: OpCode, fin: bool, payload: &[u8]) -> (Vec<u8>, usize) {
    let header = peer.header(opcode, fin, payload.len() as u64);
    let mut frame = vec![0; 14 + payload.len()];
    let h = header.write(&mut frame).unwrap();
    frame[h..h + payload.len()].copy_from_slice(payload);
    if let Some(key) = header.mask {
        ringwire_ws::apply_mask(&mut frame[h..h + payload.len()], key, 0);
    }
    frame.truncate(h + payload.len());
    (frame, h)
}
