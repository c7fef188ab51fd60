//! `http2_conn`: a server `Connection` fed the client preface and arbitrary bytes, arriving
//! in pieces of arbitrary sizes, driven as a server application would drive it: every
//! request answered (`send_response` + `send_data`, sometimes trailers, a reset or a
//! `go_away`), every piece of body released, the send buffer drained (sometimes late).
//!
//! It must never panic, consume only whole frames of what it was given (the preface, or nine
//! bytes plus the payload the header announces), never leave a whole frame unread while its
//! send buffer is under the bound, and keep that buffer bounded: `max_send_buffer` plus
//! what one frame and this driver's answers can add.
//!
//! Input: a setup byte, a seed byte for the piece sizes and driver choices, then the bytes
//! after the preface.
//!
//! | setup bits | meaning                                                                   |
//! |------------|---------------------------------------------------------------------------|
//! | 0          | leave the preface out (the input is the whole stream)                     |
//! | 1          | `max_send_buffer` 200 bytes instead of 1 MiB                              |
//! | 2          | `max_concurrent_streams` 2 instead of 128                                 |
//! | 3          | windows of 65,535 bytes instead of 256 KiB / 1 MiB                        |
//! | 4..6       | largest piece: `1 << (2 * n)` bytes (1 to 4,096)                          |
//! | 6          | the driver sometimes leaves the send buffer undrained                     |
//! | 7          | extended `CONNECT` (RFC 8441) allowed                                     |
//!
//! Every request head is also written as HTTP/1.1 (as the server hands it on), and what an
//! extended `CONNECT` becomes must be a `GET` with its `:protocol` as `upgrade`.

#![no_main]

mod http2_support;

use bytes::Bytes;
use http2_support::{drive, Feed, Rng};
use libfuzzer_sys::fuzz_target;
use ringwire_http2::frame::{StreamId, PREFACE};
use ringwire_http2::{Config, Connection, ErrorCode, Event};

/// A response body: small, so that what answers queue stays bounded.
const BODY: &[u8] = b"0123456789abcdef0123456789abcdef";
/// What one frame and the driver's answers may add to the send buffer past its bound: the
/// answers to every stream (head and body) flushed by one SETTINGS or WINDOW_UPDATE, a
/// GOAWAY with its reason, resets and window updates.
const SLACK: usize = 64 * 1024;

/// What the application does after an event (the event borrows the connection).
enum Action {
    Respond(StreamId),
    Release(StreamId, usize),
    None,
}

fuzz_target!(|input: &[u8]| {
    let [setup, seed, rest @ ..] = input else {
        return;
    };
    let config = Config {
        max_send_buffer: if setup & 2 != 0 { 200 } else { 1 << 20 },
        max_concurrent_streams: if setup & 4 != 0 { 2 } else { 128 },
        stream_window: if setup & 8 != 0 { 65_535 } else { 256 * 1024 },
        connection_window: if setup & 8 != 0 { 65_535 } else { 1 << 20 },
        enable_connect_protocol: setup & 128 != 0,
        ..Config::default()
    };
    let max_piece = 1usize << (2 * ((setup >> 4) & 3) as usize);
    let lazy = setup & 64 != 0;
    let mut rng = Rng::new(*seed);

    let mut stream = Vec::with_capacity(PREFACE.len() + rest.len());
    if setup & 1 == 0 {
        stream.extend_from_slice(PREFACE);
    }
    stream.extend_from_slice(rest);

    let mut conn = Connection::server(config);
    let feed = Feed {
        max_piece,
        lazy,
        max_send_buffer: config.max_send_buffer,
        bound: config.max_send_buffer + SLACK,
        // Without it, the connection must fail at once: still fed as if it came.
        preface: true,
    };
    let mut http1 = Vec::new();
    let decide = |event: Option<Event<'_>>, _: &mut Rng| match event {
        Some(Event::Request { stream, head, .. }) => {
            head.write_http1(&mut http1);
            if let Some(protocol) = head.protocol {
                assert!(
                    config.enable_connect_protocol,
                    "a :protocol the server did not allow"
                );
                assert!(
                    http1.starts_with(b"GET "),
                    "an extended CONNECT as {http1:?}"
                );
                let upgrade = [&b"\r\nupgrade: "[..], protocol, b"\r\n"].concat();
                assert!(http1.windows(upgrade.len()).any(|w| w == upgrade));
            }
            Action::Respond(stream)
        }
        Some(Event::Data { stream, data, .. }) => Action::Release(stream, data.len()),
        _ => Action::None,
    };
    let act = |conn: &mut Connection, action: Action, rng: &mut Rng| match action {
        Action::Respond(id) => respond(conn, id, rng),
        Action::Release(id, len) => conn.release(id, len),
        Action::None => {}
    };
    drive(&mut conn, &stream, &feed, &mut rng, decide, act);
});

/// Answers a request as an application would, with some variety.
fn respond(conn: &mut Connection, id: StreamId, rng: &mut Rng) {
    let choice = rng.next() % 16;
    if choice == 0 {
        conn.reset_stream(id, ErrorCode::CANCEL);
        return;
    }
    if choice == 1 {
        conn.go_away();
    }
    let fields: [(&[u8], &[u8]); 3] = [
        (b"Content-Type", b"text/plain"),
        (b"connection", b"close"),
        (b"x-id", b"1"),
    ];
    conn.send_response(id, 200, fields, false)
        .expect("a new request takes a response");
    let body = Bytes::from_static(&BODY[..rng.next() as usize % BODY.len()]);
    if choice == 2 {
        conn.send_data(id, body, false).expect("body");
        let trailers: [(&[u8], &[u8]); 1] = [(b"x-checksum", b"0")];
        conn.send_trailers(id, trailers).expect("trailers");
    } else {
        conn.send_data(id, body, true).expect("body");
    }
}
