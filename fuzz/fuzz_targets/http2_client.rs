//! `http2_client`: a client `Connection` that sent a few requests, fed arbitrary bytes as the
//! server's, arriving in pieces of arbitrary sizes, driven as a client application would
//! drive it: every piece of body released, sometimes a stream reset, a `go_away` or a new
//! request, the send buffer drained (sometimes late).
//!
//! It must never panic, consume only whole frames of what it was given (nine bytes plus the
//! payload the header announces: a server sends no magic preface), never leave a whole frame
//! unread while its send buffer is under the bound, and keep that buffer bounded:
//! `max_send_buffer` plus what one frame and this driver's requests can add.
//!
//! Input: a setup byte, a seed byte for the piece sizes and driver choices, then the server's
//! bytes.
//!
//! | setup bits | meaning                                                                   |
//! |------------|---------------------------------------------------------------------------|
//! | 0          | the first requests carry bodies (a POST of 100 KiB) and trailers          |
//! | 1          | `max_send_buffer` 200 bytes instead of 1 MiB                              |
//! | 2          | windows of 65,535 bytes instead of 256 KiB / 1 MiB                        |
//! | 3          | the driver sometimes leaves the send buffer undrained                     |
//! | 4..6       | largest piece: `1 << (2 * n)` bytes (1 to 4,096)                          |

#![no_main]

mod http2_support;

use bytes::Bytes;
use http2_support::{drive, Feed, Rng};
use libfuzzer_sys::fuzz_target;
use ringwire_http2::frame::StreamId;
use ringwire_http2::{Config, Connection, ErrorCode, Event};

/// What one frame and the driver's requests may add to the send buffer past its bound: a
/// flushed body (the peer's window, up to 2^31 - 1, is what bounds it: capped here by the
/// body's size), a GOAWAY with its reason, resets, window updates and request heads.
const SLACK: usize = 3 * BODY + 64 * 1024;
/// The request body when setup bit 0 is set.
const BODY: usize = 100 * 1024;

/// What the application does after an event (the event borrows the connection).
enum Action {
    Release(StreamId, usize),
    Reset(StreamId),
    Request,
    GoAway,
    None,
}

fuzz_target!(|input: &[u8]| {
    let [setup, seed, stream @ ..] = input else {
        return;
    };
    let config = Config {
        max_send_buffer: if setup & 2 != 0 { 200 } else { 1 << 20 },
        stream_window: if setup & 4 != 0 { 65_535 } else { 256 * 1024 },
        connection_window: if setup & 4 != 0 { 65_535 } else { 1 << 20 },
        ..Config::default()
    };
    let bodies = setup & 1 != 0;
    let lazy = setup & 8 != 0;
    let max_piece = 1usize << (2 * ((setup >> 4) & 3) as usize);
    let mut rng = Rng::new(*seed);

    let mut conn = Connection::client(config);
    for _ in 0..3 {
        request(&mut conn, bodies);
    }
    let feed = Feed {
        max_piece,
        lazy,
        max_send_buffer: config.max_send_buffer,
        bound: config.max_send_buffer + SLACK,
        preface: false,
    };
    let decide = |event: Option<Event<'_>>, rng: &mut Rng| {
        let choice = rng.next() % 16;
        match event {
            Some(Event::Data { stream, data, .. }) => Action::Release(stream, data.len()),
            Some(Event::Response { stream, .. }) if choice == 0 => Action::Reset(stream),
            Some(Event::Response { .. }) if choice == 1 => Action::GoAway,
            Some(Event::Response { .. } | Event::Reset { .. }) => Action::Request,
            _ => Action::None,
        }
    };
    let act = |conn: &mut Connection, action: Action, _: &mut Rng| match action {
        Action::Release(id, len) => conn.release(id, len),
        Action::Reset(id) => conn.reset_stream(id, ErrorCode::CANCEL),
        Action::Request => request(conn, false),
        Action::GoAway => conn.go_away(),
        Action::None => {}
    };
    drive(&mut conn, stream, &feed, &mut rng, decide, act);
});

/// Sends a GET, or a POST with a body and trailers; a refusal (too many streams, going
/// away, a failed connection) is the connection's to make.
fn request(conn: &mut Connection, body: bool) {
    let fields: [(&[u8], &[u8]); 2] = [(b"User-Agent", b"fuzz"), (b"connection", b"close")];
    let method: &[u8] = if body { b"POST" } else { b"GET" };
    let Ok(id) = conn.send_request(method, b"http", b"example.com", b"/", fields, !body) else {
        return;
    };
    if body {
        conn.send_data(id, Bytes::from(vec![b'x'; BODY]), false)
            .expect("the request's body");
        let trailers: [(&[u8], &[u8]); 1] = [(b"x-checksum", b"0")];
        conn.send_trailers(id, trailers).expect("trailers");
    }
}
