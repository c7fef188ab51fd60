//! Writer to reader, for both roles, with fragmentation and permessage-deflate; UTF-8 split
//! across fragments at every position; decompression bombs.

mod support;

use std::num::NonZeroUsize;

use proptest::prelude::*;
use ringwire_io::Chunks;
use ringwire_ws::{DeflateParams, Error, Limits, Message, Reader, Role, Writer};
use support::{drive, Owned};

fn peer(role: Role) -> Role {
    match role {
        Role::Client => Role::Server,
        Role::Server => Role::Client,
    }
}

/// Encodes `messages` as `role` would send them.
fn encode(writer: &mut Writer, messages: &[Owned]) -> Vec<u8> {
    let mut wire = Vec::new();
    for m in messages {
        let message = match m {
            Owned::Text(t) => Message::Text(t),
            Owned::Binary(b) => Message::Binary(b),
            Owned::Ping(p) => Message::Ping(p),
            Owned::Pong(p) => Message::Pong(p),
            Owned::Close(_) => unreachable!("not generated"),
        };
        let mut out = vec![0; writer.max_encoded_len(&message)];
        let n = writer.write(&message, &mut out).expect("room reserved");
        wire.extend_from_slice(&out[..n]);
    }
    wire
}

fn message() -> impl Strategy<Value = Owned> {
    prop_oneof![
        ".{0,300}".prop_map(Owned::Text),
        proptest::collection::vec(any::<u8>(), 0..3000).prop_map(Owned::Binary),
        proptest::collection::vec(any::<u8>(), 0..=125).prop_map(Owned::Ping),
        proptest::collection::vec(any::<u8>(), 0..=125).prop_map(Owned::Pong),
        // Repetitive text, so compression has something to find.
        ("[ab ]{1,4}", 0usize..500).prop_map(|(s, n)| Owned::Text(s.repeat(n))),
    ]
}

fn params() -> impl Strategy<Value = DeflateParams> {
    (any::<bool>(), any::<bool>(), 8u8..=15, 8u8..=15).prop_map(|(snct, cnct, sb, cb)| {
        DeflateParams {
            server_no_context_takeover: snct,
            client_no_context_takeover: cnct,
            server_max_window_bits: sb,
            client_max_window_bits: cb,
        }
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn writer_to_reader(
        messages in proptest::collection::vec(message(), 1..12),
        client_sends in any::<bool>(),
        fragment in proptest::option::of(1usize..700),
        deflate in proptest::option::of(params()),
        level in 0u32..=9,
        read_size in 1usize..5000,
    ) {
        let sender = if client_sends { Role::Client } else { Role::Server };
        let mut writer = Writer::new(sender).unwrap();
        if let Some(p) = &deflate {
            writer = writer.with_deflate(p, level);
        }
        writer.set_fragment_size(fragment.and_then(NonZeroUsize::new));
        let wire = encode(&mut writer, &messages);
        let mut reader = Reader::new(peer(sender), Limits::default(), deflate.as_ref());
        let got = drive(&mut reader, Chunks::every(&wire, read_size));
        prop_assert_eq!(got.error, None);
        prop_assert_eq!(got.leftover, 0);
        prop_assert_eq!(got.messages, messages);
    }
}

/// Every window size, with and without context takeover, both directions: many messages in a
/// row, so a compressor and inflater that disagree on the window or the reset would show.
#[test]
fn deflate_every_window_with_and_without_context_takeover() {
    let messages: Vec<Owned> = (0..20)
        .map(|i| {
            let line = format!("message {i}: the quick brown fox jumps over the lazy dog. ");
            Owned::Text(line.repeat(1 + i * 37 % 200))
        })
        .chain([Owned::Binary(
            (0..70_000u64).map(|i| (i * i % 251) as u8).collect(),
        )])
        .collect();
    for bits in 8..=15 {
        for no_context in [false, true] {
            for sender in [Role::Client, Role::Server] {
                let p = DeflateParams {
                    server_no_context_takeover: no_context,
                    client_no_context_takeover: no_context,
                    server_max_window_bits: bits,
                    client_max_window_bits: bits,
                };
                let mut writer = Writer::new(sender).unwrap().with_deflate(&p, 6);
                let wire = encode(&mut writer, &messages);
                let plain: usize = messages
                    .iter()
                    .map(|m| match m {
                        Owned::Text(t) => t.len(),
                        Owned::Binary(b) => b.len(),
                        _ => 0,
                    })
                    .sum();
                assert!(
                    wire.len() < plain / 2,
                    "bits {bits}: {} of {plain}",
                    wire.len()
                );
                let mut reader = Reader::new(peer(sender), Limits::default(), Some(&p));
                let got = drive(&mut reader, Chunks::every(&wire, 1000));
                assert_eq!(got.error, None, "bits {bits} no_context {no_context}");
                assert_eq!(
                    got.messages, messages,
                    "bits {bits} no_context {no_context}"
                );
            }
        }
    }
}

/// RSV1 is set on the first frame of a compressed message only, never on control frames.
#[test]
fn rsv1_only_on_the_first_frame_of_a_compressed_message() {
    let p = DeflateParams {
        server_no_context_takeover: false,
        client_no_context_takeover: false,
        server_max_window_bits: 15,
        client_max_window_bits: 15,
    };
    let mut w = Writer::server().with_deflate(&p, 0);
    w.set_fragment_size(NonZeroUsize::new(4));
    let mut out = [0; 200];
    let n = w
        .write(&Message::Binary(b"level 0 stores: longer than 4"), &mut out)
        .unwrap();
    let mut at = 0;
    let mut first = true;
    while at < n {
        let rsv1 = out[at] & 0x40 != 0;
        assert_eq!(rsv1, first, "frame at {at}");
        first = false;
        at += 2 + usize::from(out[at + 1] & 0x7f);
    }
    let n = w.write(&Message::Ping(b"x"), &mut out).unwrap();
    assert_eq!(&out[..n], b"\x89\x01x");
    // And the reader refuses RSV1 where it does not belong.
    for bad in [&b"\xc9\x00"[..], b"\x41\x01a\xc0\x01b"] {
        let got = drive(
            &mut Reader::new(Role::Client, Limits::default(), Some(&p)),
            Chunks::new([bad]),
        );
        assert_eq!(got.error, Some(Error::ReservedBits), "{bad:x?}");
    }
}

/// A small compressed message that inflates past the limit fails with 1009 without
/// allocating its full size; the bound counts inflated bytes, not compressed ones.
#[test]
fn decompression_bomb_is_refused() {
    let p = DeflateParams {
        server_no_context_takeover: false,
        client_no_context_takeover: false,
        server_max_window_bits: 15,
        client_max_window_bits: 15,
    };
    let zeros = vec![0u8; 50 << 20];
    let mut w = Writer::client().unwrap().with_deflate(&p, 9);
    let mut out = vec![0; w.max_encoded_len(&Message::Binary(&zeros))];
    let n = w.write(&Message::Binary(&zeros), &mut out).unwrap();
    assert!(n < 100 << 10, "50 MiB of zeros compresses to {n} bytes");
    let limits = Limits {
        max_frame_len: 1 << 20,
        max_message_len: 1 << 20,
    };
    let got = drive(
        &mut Reader::new(Role::Server, limits, Some(&p)),
        Chunks::new([&out[..n]]),
    );
    assert_eq!(got.error, Some(Error::MessageTooLarge { limit: 1 << 20 }));
    assert_eq!(got.error.unwrap().close_code().0, 1009);
    // Exactly the limit still passes (a fresh writer: the reader starts without context).
    let mut w = Writer::client().unwrap().with_deflate(&p, 9);
    let ok = vec![0u8; 1 << 20];
    let n = w.write(&Message::Binary(&ok), &mut out).unwrap();
    let got = drive(
        &mut Reader::new(Role::Server, limits, Some(&p)),
        Chunks::new([&out[..n]]),
    );
    assert_eq!(got.error, None);
    assert_eq!(got.messages, vec![Owned::Binary(ok)]);
}

/// Garbage behind RSV1 is invalid data (1007), not a panic.
#[test]
fn corrupt_compressed_data_is_1007() {
    let p = DeflateParams {
        server_no_context_takeover: true,
        client_no_context_takeover: true,
        server_max_window_bits: 15,
        client_max_window_bits: 15,
    };
    let got = drive(
        &mut Reader::new(Role::Client, Limits::default(), Some(&p)),
        Chunks::new([&b"\xc2\x04\xff\xff\xff\xff"[..]]),
    );
    assert_eq!(got.error, Some(Error::InvalidCompressedData));
    assert_eq!(got.error.unwrap().close_code().0, 1007);
}

/// A text message of multi-byte characters cut into two fragments at every byte: every cut
/// is valid; the same with a bad byte at every position is refused.
#[test]
fn utf8_split_across_fragments_at_every_position() {
    let text = "zero-copy κόσμε € 𝄞 ✓";
    let bytes = text.as_bytes();
    for cut in 0..=bytes.len() {
        let (a, b) = bytes.split_at(cut);
        let mut wire = vec![0x01, a.len() as u8];
        wire.extend_from_slice(a);
        wire.extend_from_slice(&[0x80, b.len() as u8]);
        wire.extend_from_slice(b);
        let got = support::agree(&wire, || Reader::new(Role::Client, Limits::default(), None));
        assert_eq!(got.messages, vec![Owned::Text(text.into())], "cut {cut}");
    }
    for bad_at in 0..bytes.len() {
        let mut broken = bytes.to_vec();
        broken[bad_at] = 0xff;
        let cut = bytes.len() / 2;
        let (a, b) = broken.split_at(cut);
        let mut wire = vec![0x01, a.len() as u8];
        wire.extend_from_slice(a);
        wire.extend_from_slice(&[0x80, b.len() as u8]);
        wire.extend_from_slice(b);
        let got = drive(
            &mut Reader::new(Role::Client, Limits::default(), None),
            Chunks::new([&wire[..]]),
        );
        assert_eq!(got.error, Some(Error::InvalidUtf8), "bad at {bad_at}");
    }
}

/// Empty messages compressed back to back (zlib emits nothing for the second flush), and an
/// empty RSV1 payload from a lenient peer: neither may desynchronise the inflater.
#[test]
fn empty_compressed_messages_keep_the_stream_in_step() {
    let p = DeflateParams {
        server_no_context_takeover: false,
        client_no_context_takeover: false,
        server_max_window_bits: 9,
        client_max_window_bits: 9,
    };
    let messages = vec![
        Owned::Binary(Vec::new()),
        Owned::Binary(Vec::new()),
        Owned::Text(String::new()),
        Owned::Text("after the empty ones".into()),
    ];
    let mut w = Writer::server().with_deflate(&p, 4);
    let wire = encode(&mut w, &messages);
    let got = drive(
        &mut Reader::new(Role::Client, Limits::default(), Some(&p)),
        Chunks::new([&wire[..]]),
    );
    assert_eq!((got.error, got.messages), (None, messages));
    // A peer's empty RSV1 frame between two real messages.
    let mut w = Writer::server().with_deflate(&p, 4);
    let mut wire = encode(&mut w, &[Owned::Text("one".into())]);
    wire.extend_from_slice(b"\xc1\x00");
    wire.extend_from_slice(&encode(&mut w, &[Owned::Text("two".into())]));
    let got = drive(
        &mut Reader::new(Role::Client, Limits::default(), Some(&p)),
        Chunks::new([&wire[..]]),
    );
    assert_eq!(got.error, None);
    assert_eq!(
        got.messages,
        vec![
            Owned::Text("one".into()),
            Owned::Text(String::new()),
            Owned::Text("two".into())
        ]
    );
}

/// A 16 MiB text frame arriving in 64 KiB reads: each read's bytes are unmasked and validated
/// once (no rescans), so it costs about 16 times a 1 MiB frame, not 256 times. The bound is
/// loose (48x) for a loaded machine; quadratic work would blow through it.
#[test]
fn a_large_frame_in_small_reads_costs_linear_time() {
    let time = |len: usize| {
        let text = "κόσμε zero-copy ".repeat(len / 20 + 1);
        let text = &text[..text
            .char_indices()
            .take_while(|(i, _)| *i < len)
            .last()
            .unwrap()
            .0];
        let mut w = Writer::client().unwrap();
        let wire = encode(&mut w, &[Owned::Text(text.to_owned())]);
        let chunks = Chunks::every(&wire, 64 << 10);
        let start = std::time::Instant::now();
        let got = drive(
            &mut Reader::new(Role::Server, Limits::default(), None),
            chunks,
        );
        let elapsed = start.elapsed();
        assert_eq!(got.messages.len(), 1);
        elapsed
    };
    let small = (0..3).map(|_| time(1 << 20)).min().unwrap();
    let large = time(16 << 20);
    assert!(large < small * 48, "16 MiB took {large:?}, 1 MiB {small:?}");
}
