//! `ws_frame`: the WebSocket reader on arbitrary bytes, as either role, with or without
//! permessage-deflate. Read from the whole stream and from the same stream arriving in
//! pieces through a small, growing ring, it must give the same messages and the same error,
//! never panic, and every message must respect the limits and RFC 6455's rules.
//!
//! Input: a setup byte, then the stream.
//!
//! | setup bits | meaning                                                                  |
//! |------------|--------------------------------------------------------------------------|
//! | 0          | role: server (reads masked frames) or client                             |
//! | 1          | permessage-deflate negotiated                                            |
//! | 2          | context takeover off both ways (with deflate)                            |
//! | 3          | tight limits (frame 300 B, message 1 KiB) instead of 64 KiB / 256 KiB    |
//! | 4..8       | piece size for the split delivery: `1 + 7 * n` bytes                     |

#![no_main]

use libfuzzer_sys::fuzz_target;
use ringwire_io::{Chunks, RecvTransport, TransportConfig};
use ringwire_ws::{DeflateParams, Error, Limits, Message, Reader, Role, Status};

/// A message copied out, comparable between the two deliveries.
#[derive(Debug, PartialEq, Eq)]
enum Owned {
    Text(String),
    Binary(Vec<u8>),
    Ping(Vec<u8>),
    Pong(Vec<u8>),
    Close(Option<(u16, String)>),
}

fn check(message: &Message<'_>, limits: &Limits) -> Owned {
    let max = limits.max_message_len as usize;
    match *message {
        Message::Text(t) => {
            assert!(t.len() <= max);
            Owned::Text(t.to_owned())
        }
        Message::Binary(b) => {
            assert!(b.len() <= max);
            Owned::Binary(b.to_vec())
        }
        Message::Ping(p) => {
            assert!(p.len() <= 125);
            Owned::Ping(p.to_vec())
        }
        Message::Pong(p) => {
            assert!(p.len() <= 125);
            Owned::Pong(p.to_vec())
        }
        Message::Close(c) => Owned::Close(c.map(|c| {
            assert!(c.code.is_valid_on_wire() && c.reason.len() <= 123);
            (c.code.0, c.reason.to_owned())
        })),
    }
}

fn read(reader: &mut Reader, chunks: Chunks, limits: &Limits) -> (Vec<Owned>, Option<Error>) {
    let config = TransportConfig::new(4096, 1 << 20);
    let mut rx = RecvTransport::new(config, chunks).expect("ring");
    let mut messages = Vec::new();
    loop {
        let before = rx.data().len();
        match reader.read(rx.ring_mut().readable_mut()) {
            Ok(Status::Complete(message, n)) => {
                assert!(n > 0 && n <= before, "consumed {n} of {before}");
                messages.extend(message.map(|m| check(&m, limits)));
                rx.consume(n);
            }
            Ok(Status::Partial { at_least }) => {
                assert!(
                    at_least > before,
                    "Partial asks for {at_least} with {before} buffered"
                );
                match rx.fill(at_least) {
                    Ok(0) | Err(_) => return (messages, None),
                    Ok(_) => {}
                }
            }
            Err(err) => {
                // A failed reader stays failed.
                assert_eq!(reader.read(&mut []).err(), Some(err));
                return (messages, Some(err));
            }
        }
    }
}

fuzz_target!(|data: &[u8]| {
    let Some((&setup, stream)) = data.split_first() else {
        return;
    };
    let role = if setup & 1 == 0 {
        Role::Server
    } else {
        Role::Client
    };
    let no_context = setup & 4 != 0;
    let deflate = (setup & 2 != 0).then_some(DeflateParams {
        server_no_context_takeover: no_context,
        client_no_context_takeover: no_context,
        server_max_window_bits: 15,
        client_max_window_bits: 15,
    });
    let limits = if setup & 8 != 0 {
        Limits {
            max_frame_len: 300,
            max_message_len: 1024,
        }
    } else {
        Limits {
            max_frame_len: 64 << 10,
            max_message_len: 256 << 10,
        }
    };
    let piece = 1 + 7 * usize::from(setup >> 4);
    let new = || Reader::new(role, limits, deflate.as_ref());
    let whole = read(&mut new(), Chunks::new([stream]), &limits);
    let split = read(&mut new(), Chunks::every(stream, piece), &limits);
    assert_eq!(whole, split, "piece size {piece}");
});
