//! `ws_deflate`: permessage-deflate both ways. Arbitrary messages, compressed and framed by
//! the writer with arbitrary parameters and fragment size, must come back unchanged through
//! the reader; and arbitrary bytes sent as a compressed message must inflate or fail with
//! 1007/1009, never panic or exceed the message limit.
//!
//! Input: a parameter byte, a fragment-size byte, then messages separated by `0xff 0x00`
//! (the first byte of each picks text, binary or raw-compressed).

#![no_main]

use std::num::NonZeroUsize;

use libfuzzer_sys::fuzz_target;
use ringwire_ws::{DeflateParams, Error, Limits, Message, OpCode, Reader, Role, Status, Writer};

/// Reads every message in `wire`; returns them with the first error, if any.
fn read_all(reader: &mut Reader, mut wire: Vec<u8>) -> (Vec<Vec<u8>>, Option<Error>) {
    let mut out = Vec::new();
    let mut start = 0;
    loop {
        match reader.read(&mut wire[start..]) {
            Ok(Status::Complete(m, n)) => {
                match m {
                    Some(Message::Text(t)) => out.push(t.as_bytes().to_vec()),
                    Some(Message::Binary(b)) => out.push(b.to_vec()),
                    Some(other) => panic!("no control frames were sent: {other:?}"),
                    None => {}
                }
                start += n;
            }
            Ok(Status::Partial { .. }) => return (out, None),
            Err(e) => return (out, Some(e)),
        }
    }
}

fuzz_target!(|data: &[u8]| {
    let [params, fragment, rest @ ..] = data else {
        return;
    };
    let p = DeflateParams {
        server_no_context_takeover: params & 1 != 0,
        client_no_context_takeover: params & 2 != 0,
        server_max_window_bits: 8 + (params >> 2 & 7),
        client_max_window_bits: 8 + (params >> 5 & 7),
    };
    let level = u32::from(fragment >> 5);
    let sender = if params & 0x80 != 0 {
        Role::Client
    } else {
        Role::Server
    };
    let receiver = match sender {
        Role::Client => Role::Server,
        Role::Server => Role::Client,
    };
    let limits = Limits {
        max_frame_len: 1 << 20,
        max_message_len: 64 << 10,
    };
    let mut writer = Writer::new(sender).expect("seed").with_deflate(&p, level);
    writer.set_fragment_size(NonZeroUsize::new(usize::from(fragment & 0x1f) * 16));
    let mut wire = Vec::new();
    let mut sent = Vec::new();
    let mut raw = false;
    for chunk in rest
        .split(|&b| b == 0xff)
        .map(|c| c.strip_prefix(&[0]).unwrap_or(c))
    {
        let Some((&kind, body)) = chunk.split_first() else {
            continue;
        };
        let message = match kind % 3 {
            0 => match std::str::from_utf8(body) {
                Ok(t) => Message::Text(t),
                Err(_) => Message::Binary(body),
            },
            1 => Message::Binary(body),
            _ => {
                // Raw bytes behind RSV1, as an attacker would send them.
                let mut header = writer.header(OpCode::Binary, true, body.len() as u64);
                header.rsv1 = true;
                let mut frame = vec![0; header.encoded_len() + body.len()];
                let h = header.write(&mut frame).expect("sized");
                frame[h..].copy_from_slice(body);
                if let Some(key) = header.mask {
                    ringwire_ws::apply_mask(&mut frame[h..], key, 0);
                }
                wire.extend_from_slice(&frame);
                raw = true;
                break;
            }
        };
        let mut out = vec![0; writer.max_encoded_len(&message)];
        let n = writer.write(&message, &mut out).expect("room reserved");
        wire.extend_from_slice(&out[..n]);
        sent.push(match message {
            Message::Text(t) => t.as_bytes().to_vec(),
            Message::Binary(b) => b.to_vec(),
            _ => unreachable!(),
        });
    }
    let (got, error) = read_all(&mut Reader::new(receiver, limits, Some(&p)), wire);
    for m in &got {
        assert!(m.len() <= 64 << 10);
    }
    let messages_fit = sent.iter().all(|m| m.len() <= 64 << 10);
    if raw {
        // Everything before the raw message round-trips; the raw one inflates or fails cleanly.
        assert!(got.len() >= sent.len() || error.is_some() || !messages_fit);
        assert_eq!(
            got[..sent.len().min(got.len())],
            sent[..sent.len().min(got.len())]
        );
        if let Some(e) = error {
            assert!(matches!(e.close_code().0, 1007 | 1009), "{e}");
        }
    } else if messages_fit {
        assert_eq!(error, None);
        assert_eq!(got, sent);
    } else {
        assert!(
            matches!(error, Some(Error::MessageTooLarge { .. })),
            "{error:?}"
        );
    }
});
