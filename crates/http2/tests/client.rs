//! The client connection: against a server `Connection` back to back in memory, against a
//! hand-written server that breaks the rules (frames built with the crate's own encoders),
//! and against a real one (Python's `h2`) over TCP.
//!
//! Every in-memory scenario runs twice: once with each side's bytes handed to the other
//! whole, once a byte at a time.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

mod common;

use bytes::Bytes;
use common::*;
use ringwire_http2::frame::{
    self, flags, kind, setting, Frame, FrameHeader, StreamId, HEADER_LEN, PREFACE,
};
use ringwire_http2::hpack::{Encoder, Field};
use ringwire_http2::{Config, Connection, Error, ErrorCode, SendError, Violation};

/// `fields` as the byte pairs the send methods take.
fn bytes_of<'a>(fields: &'a [(&'a str, &'a str)]) -> Vec<(&'a [u8], &'a [u8])> {
    fields
        .iter()
        .map(|(n, v)| (n.as_bytes(), v.as_bytes()))
        .collect()
}

const NONE: [(&[u8], &[u8]); 0] = [];

/// The events other than body pieces, and the body of each stream joined.
fn split_body(events: &[Ev], stream: u32) -> (Vec<Ev>, Vec<u8>, bool) {
    let mut heads = Vec::new();
    let mut body = Vec::new();
    let mut ended = false;
    for event in events {
        match event {
            Ev::Data {
                stream: s,
                data,
                end_stream,
            } if *s == stream => {
                assert!(!ended, "DATA after the end");
                body.extend_from_slice(data);
                ended = *end_stream;
            }
            other => heads.push(other.clone()),
        }
    }
    (heads, body, ended)
}

/// Hands `conn` the bytes in `input` until it wants more, releasing body bytes when
/// `release` says; the events go to `events`. Checks that only whole frames are consumed.
fn read_all(
    conn: &mut Connection,
    input: &mut Vec<u8>,
    preface: &mut bool,
    release: bool,
    events: &mut Vec<Ev>,
) -> Result<(), Error> {
    loop {
        let whole = if *preface {
            Some(PREFACE.len())
        } else {
            FrameHeader::parse(input).map(|h| HEADER_LEN + h.len as usize)
        };
        let (n, event) = conn.recv(input)?;
        let event = event.map(Ev::from);
        if n == 0 {
            assert!(
                whole.is_none_or(|whole| whole > input.len()),
                "a whole frame left unread"
            );
            return Ok(());
        }
        assert_eq!(Some(n), whole, "consumed something other than one frame");
        *preface = false;
        input.drain(..n);
        if let (true, Some(Ev::Data { stream, data, .. })) = (release, &event) {
            conn.release(sid(*stream), data.len());
        }
        events.extend(event);
    }
}

/// Hands `bytes` to `conn`, whole or a byte at a time.
fn deliver(
    conn: &mut Connection,
    input: &mut Vec<u8>,
    preface: &mut bool,
    bytes: &[u8],
    split: bool,
    release: bool,
) -> Result<Vec<Ev>, Error> {
    let mut events = Vec::new();
    if split {
        for &b in bytes {
            input.push(b);
            read_all(conn, input, preface, release, &mut events)?;
        }
    } else {
        input.extend_from_slice(bytes);
        read_all(conn, input, preface, release, &mut events)?;
    }
    Ok(events)
}

/// What `conn` has to send, taken out of its buffer.
fn take(conn: &mut Connection) -> Vec<u8> {
    let mut out = Vec::new();
    while !conn.transmit().is_empty() {
        out.extend_from_slice(conn.transmit());
        conn.advance(conn.transmit().len());
    }
    assert_eq!(conn.pending(), 0);
    out
}

// --- Back to back ---------------------------------------------------------------------------

/// A client and a server connection wired to each other.
struct Pair {
    client: Connection,
    server: Connection,
    split: bool,
    /// The server releases body bytes as they arrive (the client always does).
    server_releases: bool,
    client_in: Vec<u8>,
    server_in: Vec<u8>,
    /// The server has yet to read the client's preface.
    server_preface: bool,
}

impl Pair {
    fn new(client: Config, server: Config, split: bool) -> Pair {
        let mut pair = Pair {
            client: Connection::client(client),
            server: Connection::server(server),
            split,
            server_releases: true,
            client_in: Vec::new(),
            server_in: Vec::new(),
            server_preface: true,
        };
        assert_eq!(pair.pump(), (vec![], vec![]));
        pair
    }

    /// Moves bytes both ways until neither side has anything more to send: the client's
    /// events, then the server's.
    fn pump(&mut self) -> (Vec<Ev>, Vec<Ev>) {
        let (mut client_events, mut server_events) = (Vec::new(), Vec::new());
        loop {
            let to_server = take(&mut self.client);
            let to_client = take(&mut self.server);
            if to_server.is_empty() && to_client.is_empty() {
                return (client_events, server_events);
            }
            let events = deliver(
                &mut self.server,
                &mut self.server_in,
                &mut self.server_preface,
                &to_server,
                self.split,
                self.server_releases,
            )
            .expect("no connection error on the server");
            server_events.extend(events);
            let events = deliver(
                &mut self.client,
                &mut self.client_in,
                &mut false,
                &to_client,
                self.split,
                true,
            )
            .expect("no connection error on the client");
            client_events.extend(events);
        }
    }

    fn get(&mut self, path: &str, fields: &[(&str, &str)]) -> StreamId {
        self.client
            .send_request(
                b"GET",
                b"http",
                b"example.com",
                path.as_bytes(),
                bytes_of(fields),
                true,
            )
            .expect("a request")
    }
}

fn run_with(client: Config, server: Config, test: impl Fn(&mut Pair)) {
    for split in [false, true] {
        test(&mut Pair::new(client, server, split));
    }
}

fn run(test: impl Fn(&mut Pair)) {
    run_with(Config::default(), Config::default(), test);
}

/// Windows no larger than the default, on either side.
fn small_windows() -> Config {
    Config {
        stream_window: 65_535,
        connection_window: 65_535,
        ..Config::default()
    }
}

/// A GET the client tests send (`http://example.com`), as the server sees it.
fn get_request(stream: u32, path: &str, fields: &[(&str, &str)]) -> Ev {
    let mut all = vec![
        (":method", "GET"),
        (":scheme", "http"),
        (":authority", "example.com"),
        (":path", path),
    ];
    all.extend_from_slice(fields);
    Ev::request(stream, &all, true)
}

#[test]
fn the_client_preface_is_the_magic_settings_without_push_and_a_connection_window() {
    let mut client = Connection::client(Config::default());
    let out = take(&mut client);
    assert_eq!(&out[..PREFACE.len()], PREFACE);
    let mut rest = &out[PREFACE.len()..];
    let mut frames = Vec::new();
    while !rest.is_empty() {
        let header = FrameHeader::parse(rest).expect("a frame header");
        let end = HEADER_LEN + header.len as usize;
        match Frame::parse(header, &rest[HEADER_LEN..end]).expect("a valid frame") {
            Frame::Settings(params) => {
                frames.push(format!("{:?}", params.iter().collect::<Vec<_>>()))
            }
            Frame::WindowUpdate { stream, increment } => {
                frames.push(format!("window {} +{increment}", stream.get()));
            }
            other => panic!("{other:?} in the preface"),
        }
        rest = &rest[end..];
    }
    let settings = format!(
        "{:?}",
        [
            (setting::ENABLE_PUSH, 0),
            (setting::INITIAL_WINDOW_SIZE, 256 * 1024),
            (setting::MAX_FRAME_SIZE, 16_384),
            (setting::MAX_HEADER_LIST_SIZE, 64 * 1024),
        ]
    );
    let window = format!("window 0 +{}", 1024 * 1024 - 65_535);
    assert_eq!(frames, [settings, window]);
}

#[test]
fn a_get_with_end_stream_gets_its_response_exactly() {
    run(|p| {
        let id = p.get("/index.html", &[("Accept", "*/*"), ("connection", "close")]);
        assert_eq!(id, sid(1));
        let (client, server) = p.pump();
        assert_eq!(client, []);
        assert_eq!(
            server,
            [get_request(1, "/index.html", &[("accept", "*/*")])]
        );
        let head = [
            ("Content-Type", "text/html"),
            ("set-cookie", "a=1"),
            ("Keep-Alive", "timeout=5"),
            ("set-cookie", "b=2"),
        ];
        p.server
            .send_response(id, 200, bytes_of(&head), false)
            .unwrap();
        p.server
            .send_data(id, Bytes::from_static(b"<p>hello</p>"), true)
            .unwrap();
        let (client, server) = p.pump();
        assert_eq!(server, []);
        let (heads, body, ended) = split_body(&client, 1);
        let fields = [
            ("content-type", "text/html"),
            ("set-cookie", "a=1"),
            ("set-cookie", "b=2"),
        ];
        assert_eq!(
            heads,
            [Ev::Response {
                stream: 1,
                status: 200,
                fields: strs(&fields),
                end_stream: false
            }]
        );
        assert_eq!((&body[..], ended), (&b"<p>hello</p>"[..], true));
        assert_eq!((p.client.open_streams(), p.server.open_streams()), (0, 0));
        assert!(!p.client.is_busy() && !p.server.is_busy());
    });
}

/// An extended `CONNECT` (RFC 8441) goes only to a server whose `SETTINGS` welcomed it;
/// answered `200`, its stream carries the protocol's bytes both ways.
#[test]
fn an_extended_connect_waits_for_the_servers_word_and_opens_a_tunnel() {
    let connect = |client: &mut Connection| {
        let fields = bytes_of(&[("sec-websocket-version", "13")]);
        client.send_extended_connect(b"websocket", b"https", b"example.com", b"/chat", fields)
    };
    let welcoming = Config {
        enable_connect_protocol: true,
        ..Config::default()
    };
    let mut client = Connection::client(Config::default());
    assert_eq!(connect(&mut client), Err(SendError::NoExtendedConnect));
    assert!(!client.has_peer_settings());
    run_with(Config::default(), Config::default(), |p| {
        assert!(p.client.has_peer_settings() && !p.client.peer_extended_connect());
        assert_eq!(connect(&mut p.client), Err(SendError::NoExtendedConnect));
    });
    run_with(Config::default(), welcoming, |p| {
        let id = connect(&mut p.client).unwrap();
        let (_, server) = p.pump();
        assert_eq!(server, [Ev::request(1, WEBSOCKET, false)]);
        p.server.send_response(id, 200, NONE, false).unwrap();
        p.client
            .send_data(id, Bytes::from_static(b"ping"), false)
            .unwrap();
        let (client, server) = p.pump();
        assert_eq!(
            client,
            [Ev::Response {
                stream: 1,
                status: 200,
                fields: vec![],
                end_stream: false
            }]
        );
        assert_eq!(server, [Ev::data(1, b"ping", false)]);
        p.server
            .send_data(id, Bytes::from_static(b"pong"), true)
            .unwrap();
        p.client.send_data(id, Bytes::new(), true).unwrap();
        let (client, server) = p.pump();
        assert_eq!(split_body(&client, 1).1, b"pong");
        assert_eq!(split_body(&server, 1), (vec![], vec![], true));
        assert_eq!((p.client.open_streams(), p.server.open_streams()), (0, 0));
    });
}

#[test]
fn a_response_without_a_body_ends_the_stream_on_both_sides() {
    run(|p| {
        let id = p.get("/", &[]);
        p.pump();
        p.server.send_response(id, 204, NONE, true).unwrap();
        let (client, _) = p.pump();
        assert_eq!(
            client,
            [Ev::Response {
                stream: 1,
                status: 204,
                fields: vec![],
                end_stream: true
            }]
        );
        assert_eq!((p.client.open_streams(), p.server.open_streams()), (0, 0));
    });
}

#[test]
fn a_post_larger_than_the_windows_flows_both_ways_as_bytes_are_released() {
    run_with(small_windows(), small_windows(), |p| {
        p.server_releases = false;
        let upload = body(200_000);
        let id = p
            .client
            .send_request(b"POST", b"http", b"example.com", b"/echo", NONE, false)
            .unwrap();
        p.client
            .send_data(id, Bytes::from(upload.clone()), true)
            .unwrap();
        let (_, server) = p.pump();
        let (heads, got, ended) = split_body(&server, 1);
        assert!(matches!(
            &heads[..],
            [Ev::Request {
                end_stream: false,
                ..
            }]
        ));
        // The server's windows are full until its application releases what it holds.
        assert_eq!((got.len(), ended), (65_535, false));
        assert_eq!(p.client.queued(id), 200_000 - 65_535);
        p.server_releases = true;
        p.server.release(id, got.len());
        let (_, server) = p.pump();
        let (_, rest, ended) = split_body(&server, 1);
        assert!(ended);
        assert_eq!([got, rest].concat(), upload);
        assert_eq!(p.client.queued(id), 0);

        // And back: the client releases as it reads.
        p.server.send_response(id, 200, NONE, false).unwrap();
        p.server
            .send_data(id, Bytes::from(upload.clone()), true)
            .unwrap();
        let (client, _) = p.pump();
        let (heads, echoed, ended) = split_body(&client, 1);
        assert!(matches!(&heads[..], [Ev::Response { status: 200, .. }]));
        assert!(ended);
        assert_eq!(echoed, upload);
        assert_eq!((p.client.open_streams(), p.server.open_streams()), (0, 0));
    });
}

#[test]
fn a_body_sent_now_goes_as_far_as_the_windows_and_the_queue_takes_the_rest() {
    run_with(small_windows(), small_windows(), |p| {
        p.server_releases = false;
        let upload = body(100_000);
        let id = p
            .client
            .send_request(b"POST", b"http", b"example.com", b"/up", NONE, false)
            .unwrap();
        assert_eq!(p.client.send_capacity(id), 65_535);
        let sent = p.client.send_data_now(id, &upload, true).unwrap();
        assert_eq!(sent, 65_535, "the server's initial windows");
        // Nothing more goes now: the windows are spent.
        assert_eq!(p.client.send_capacity(id), 0);
        assert_eq!(p.client.send_data_now(id, &upload[sent..], true), Ok(0));
        p.client
            .send_data(id, Bytes::copy_from_slice(&upload[sent..]), false)
            .unwrap();
        // Queued body goes first: nothing jumps it.
        assert_eq!(p.client.send_data_now(id, b"late", true), Ok(0));
        p.client.send_data(id, Bytes::new(), true).unwrap();
        assert_eq!(p.client.send_capacity(id), 0, "the end is queued");
        assert_eq!(
            p.client.send_data_now(id, b"late", true),
            Err(SendError::AlreadySent(id))
        );
        let (_, server) = p.pump();
        let (_, got, ended) = split_body(&server, 1);
        assert_eq!((got.len(), ended), (65_535, false));
        p.server_releases = true;
        p.server.release(id, got.len());
        let (_, server) = p.pump();
        assert_eq!(p.client.send_capacity(id), 0, "the stream has ended");
        let (_, rest, ended) = split_body(&server, 1);
        assert!(ended);
        assert_eq!([got, rest].concat(), upload);

        // Within the windows: all of it, the stream ended with its last byte.
        let id = p
            .client
            .send_request(b"POST", b"http", b"example.com", b"/small", NONE, false)
            .unwrap();
        // The connection's window is what the server gave back (its own policy).
        assert!(p.client.send_capacity(id) > 5);
        assert_eq!(p.client.send_data_now(id, b"small", true), Ok(5));
        assert_eq!(
            p.client.send_data_now(id, b"more", false),
            Err(SendError::AlreadySent(id))
        );
        let (_, server) = p.pump();
        let (_, got, ended) = split_body(&server, 3);
        assert_eq!((&got[..], ended), (&b"small"[..], true));
    });
}

#[test]
fn a_shrunk_connection_carries_on() {
    run(|p| {
        let id = p.get("/big", &[("accept", "*/*")]);
        p.pump();
        let big = body(200_000);
        p.server
            .send_response(id, 200, bytes_of(&[("x-a", "1")]), false)
            .unwrap();
        p.server
            .send_data(id, Bytes::from(big.clone()), true)
            .unwrap();
        let (client, _) = p.pump();
        assert_eq!(split_body(&client, 1).1, big);
        p.server.shrink();
        p.client.shrink();
        // The HPACK tables stay: the same fields again come out the same.
        let id = p.get("/big", &[("accept", "*/*")]);
        let (_, server) = p.pump();
        assert_eq!(server, [get_request(3, "/big", &[("accept", "*/*")])]);
        p.server
            .send_response(id, 200, bytes_of(&[("x-a", "1")]), true)
            .unwrap();
        let (client, _) = p.pump();
        assert!(matches!(
            &client[..],
            [Ev::Response {
                stream: 3,
                status: 200,
                end_stream: true,
                ..
            }]
        ));
    });
}

#[test]
fn trailers_go_both_ways() {
    run(|p| {
        let id = p
            .client
            .send_request(b"POST", b"https", b"example.com", b"/rpc", NONE, false)
            .unwrap();
        p.client
            .send_data(id, Bytes::from_static(b"ping"), false)
            .unwrap();
        p.client
            .send_trailers(id, bytes_of(&[("X-Checksum", "1234")]))
            .unwrap();
        let (_, server) = p.pump();
        let (heads, got, _) = split_body(&server, 1);
        assert_eq!(got, b"ping");
        assert_eq!(
            heads[1..],
            [Ev::Trailers {
                stream: 1,
                fields: strs(&[("x-checksum", "1234")])
            }]
        );
        p.server.send_response(id, 200, NONE, false).unwrap();
        p.server
            .send_data(id, Bytes::from_static(b"pong"), false)
            .unwrap();
        p.server
            .send_trailers(id, bytes_of(&[("grpc-status", "0")]))
            .unwrap();
        let (client, _) = p.pump();
        let (heads, got, _) = split_body(&client, 1);
        assert_eq!(got, b"pong");
        assert_eq!(
            heads[1..],
            [Ev::Trailers {
                stream: 1,
                fields: strs(&[("grpc-status", "0")])
            }]
        );
        assert_eq!((p.client.open_streams(), p.server.open_streams()), (0, 0));
    });
}

#[test]
fn streams_open_up_to_the_server_limit_and_no_further() {
    let server = Config {
        max_concurrent_streams: 5,
        ..Config::default()
    };
    run_with(Config::default(), server, |p| {
        let ids: Vec<u32> = (0..5).map(|_| p.get("/", &[]).get()).collect();
        assert_eq!(ids, [1, 3, 5, 7, 9]);
        let full = p
            .client
            .send_request(b"GET", b"http", b"example.com", b"/", NONE, true);
        assert_eq!(full, Err(SendError::TooManyStreams));
        let (_, server) = p.pump();
        assert_eq!(server.len(), 5);
        for &id in &ids {
            let body = id.to_string();
            p.server.send_response(sid(id), 200, NONE, false).unwrap();
            p.server
                .send_data(sid(id), Bytes::from(body), true)
                .unwrap();
        }
        let (client, _) = p.pump();
        for &id in &ids {
            let (_, got, ended) = split_body(&client, id);
            assert_eq!((got, ended), (id.to_string().into_bytes(), true));
        }
        assert_eq!(p.client.open_streams(), 0);
        assert_eq!(p.get("/", &[]), sid(11));
    });
}

#[test]
fn a_server_that_allows_no_stream_gets_none() {
    let server = Config {
        max_concurrent_streams: 0,
        ..Config::default()
    };
    run_with(Config::default(), server, |p| {
        let none = p
            .client
            .send_request(b"GET", b"http", b"example.com", b"/", NONE, true);
        assert_eq!(none, Err(SendError::TooManyStreams));
    });
}

#[test]
fn a_reset_from_the_client_reaches_the_server() {
    run(|p| {
        let id = p
            .client
            .send_request(b"PUT", b"http", b"example.com", b"/big", NONE, false)
            .unwrap();
        p.pump();
        p.client.reset_stream(id, ErrorCode::CANCEL);
        let (client, server) = p.pump();
        assert_eq!(client, []);
        assert_eq!(
            server,
            [Ev::Reset {
                stream: 1,
                code: ErrorCode::CANCEL,
                violation: None
            }]
        );
        assert_eq!((p.client.open_streams(), p.server.open_streams()), (0, 0));
        assert_eq!(
            p.client.send_data(id, Bytes::from_static(b"x"), true),
            Err(SendError::NoStream(id))
        );
    });
}

#[test]
fn a_reset_from_the_server_reaches_the_client() {
    run(|p| {
        let id = p.get("/slow", &[]);
        p.pump();
        p.server.reset_stream(id, ErrorCode::REFUSED_STREAM);
        let (client, server) = p.pump();
        assert_eq!(server, []);
        assert_eq!(
            client,
            [Ev::Reset {
                stream: 1,
                code: ErrorCode::REFUSED_STREAM,
                violation: None
            }]
        );
        assert_eq!((p.client.open_streams(), p.server.open_streams()), (0, 0));
    });
}

#[test]
fn a_server_goaway_stops_new_requests_and_finishes_the_open_ones() {
    run(|p| {
        p.get("/a", &[]);
        p.get("/b", &[]);
        p.pump();
        p.server.go_away();
        // Sent before the client knew: the server never processes it.
        let late = p.get("/late", &[]);
        assert_eq!(late, sid(5));
        let (client, server) = p.pump();
        assert_eq!(server, []);
        assert_eq!(
            client,
            [Ev::GoAway {
                last_stream: 3,
                code: ErrorCode::NO_ERROR
            }]
        );
        assert_eq!(p.client.open_streams(), 2, "stream 5 forgotten");
        let refused = p
            .client
            .send_request(b"GET", b"http", b"example.com", b"/", NONE, true);
        assert_eq!(refused, Err(SendError::GoingAway));
        for id in [1, 3] {
            p.server.send_response(sid(id), 200, NONE, true).unwrap();
        }
        let (client, _) = p.pump();
        assert_eq!(client.len(), 2);
        assert_eq!((p.client.open_streams(), p.server.open_streams()), (0, 0));
    });
}

#[test]
fn a_client_goaway_names_no_stream_and_stops_its_requests() {
    run(|p| {
        p.get("/", &[]);
        p.pump();
        p.client.go_away();
        let (_, server) = p.pump();
        assert_eq!(
            server,
            [Ev::GoAway {
                last_stream: 0,
                code: ErrorCode::NO_ERROR
            }]
        );
        let refused = p
            .client
            .send_request(b"GET", b"http", b"example.com", b"/", NONE, true);
        assert_eq!(refused, Err(SendError::GoingAway));
        // Its open request is still answered.
        p.server.send_response(sid(1), 200, NONE, true).unwrap();
        let (client, _) = p.pump();
        assert!(matches!(&client[..], [Ev::Response { stream: 1, .. }]));
    });
}

#[test]
fn big_heads_go_over_continuations_both_ways() {
    run(|p| {
        let big = "v".repeat(40_000);
        let id = p.get("/", &[("x-big", &big)]);
        let (_, server) = p.pump();
        assert_eq!(server, [get_request(1, "/", &[("x-big", &big)])]);
        p.server
            .send_response(id, 200, bytes_of(&[("x-big", &big)]), true)
            .unwrap();
        let (client, _) = p.pump();
        assert_eq!(
            client,
            [Ev::Response {
                stream: 1,
                status: 200,
                fields: strs(&[("x-big", &big)]),
                end_stream: true
            }]
        );
    });
}

#[test]
fn a_head_response_declares_a_length_and_has_no_body() {
    run(|p| {
        let id = p
            .client
            .send_request(b"HEAD", b"http", b"example.com", b"/", NONE, true)
            .unwrap();
        p.pump();
        p.server
            .send_response(id, 200, bytes_of(&[("content-length", "1234")]), true)
            .unwrap();
        let (client, _) = p.pump();
        assert!(matches!(
            &client[..],
            [Ev::Response {
                end_stream: true,
                ..
            }]
        ));
        assert_eq!(p.client.open_streams(), 0);
    });
}

#[test]
fn a_server_connection_opens_no_stream_and_a_client_stream_takes_no_response() {
    let mut server = Connection::server(Config::default());
    let refused = server.send_request(b"GET", b"http", b"a", b"/", NONE, true);
    assert_eq!(refused, Err(SendError::NotClient));
    run(|p| {
        let id = p.get("/", &[]);
        let answered = p.client.send_response(id, 200, NONE, true);
        assert_eq!(answered, Err(SendError::AlreadySent(id)));
    });
}

// --- A server that breaks the rules ---------------------------------------------------------

/// A frame the client sent, owned (header blocks are not decoded: these tests do not need
/// them).
#[derive(Debug, Clone, PartialEq, Eq)]
enum Sent {
    Settings(Vec<(u16, u32)>),
    SettingsAck,
    Headers { stream: u32, end_stream: bool },
    Data { stream: u32, len: usize },
    Rst { stream: u32, code: ErrorCode },
    GoAway { last_stream: u32, code: ErrorCode },
    WindowUpdate { stream: u32 },
}

/// A client connection and the hand-written server it talks to.
struct Fake {
    client: Connection,
    split: bool,
    encoder: Encoder,
    input: Vec<u8>,
}

impl Fake {
    /// A client whose preface was read, before the server said anything.
    fn raw(split: bool) -> Fake {
        let mut client = Connection::client(Config::default());
        let preface = take(&mut client);
        assert_eq!(&preface[..PREFACE.len()], PREFACE);
        Fake {
            client,
            split,
            encoder: Encoder::new(),
            input: Vec::new(),
        }
    }

    /// A client that got the server's (empty) `SETTINGS` and sent a GET on stream 1.
    fn new(split: bool) -> Fake {
        let mut fake = Fake::raw(split);
        assert_eq!(fake.send(&settings(&[])), []);
        assert_eq!(fake.sent(), [Sent::SettingsAck]);
        let id = fake
            .client
            .send_request(b"GET", b"http", b"example.com", b"/", NONE, true)
            .unwrap();
        assert_eq!(id, sid(1));
        assert_eq!(
            fake.sent(),
            [Sent::Headers {
                stream: 1,
                end_stream: true
            }]
        );
        fake
    }

    fn feed(&mut self, bytes: &[u8]) -> Result<Vec<Ev>, Error> {
        let client = &mut self.client;
        deliver(client, &mut self.input, &mut false, bytes, self.split, true)
    }

    fn send(&mut self, bytes: &[u8]) -> Vec<Ev> {
        self.feed(bytes).expect("no connection error")
    }

    /// `bytes` must fail the connection for `violation`, with a `GOAWAY` naming no stream.
    fn send_fails(&mut self, bytes: &[u8], code: ErrorCode, violation: Violation) {
        let error = self.feed(bytes).expect_err("a connection error");
        assert_eq!(error, Error { code, violation });
        let last = self.sent().pop();
        assert_eq!(
            last,
            Some(Sent::GoAway {
                last_stream: 0,
                code
            })
        );
        assert_eq!(self.client.recv(b"").map(|(n, _)| n), Err(error));
        let after = self
            .client
            .send_request(b"GET", b"http", b"a", b"/", NONE, true);
        assert_eq!(after, Err(SendError::ConnectionFailed));
    }

    /// The frames the client sent since the last call.
    fn sent(&mut self) -> Vec<Sent> {
        let out = take(&mut self.client);
        let mut rest = &out[..];
        let mut frames = Vec::new();
        while !rest.is_empty() {
            let header = FrameHeader::parse(rest).expect("a frame header");
            let end = HEADER_LEN + header.len as usize;
            let frame = Frame::parse(header, &rest[HEADER_LEN..end]).expect("a valid frame");
            rest = &rest[end..];
            frames.push(match frame {
                Frame::Settings(params) => Sent::Settings(params.iter().collect()),
                Frame::SettingsAck => Sent::SettingsAck,
                Frame::Headers {
                    stream,
                    end_stream,
                    end_headers: true,
                    ..
                } => Sent::Headers {
                    stream: stream.get(),
                    end_stream,
                },
                Frame::Data { stream, data, .. } => Sent::Data {
                    stream: stream.get(),
                    len: data.len(),
                },
                Frame::RstStream { stream, code } => Sent::Rst {
                    stream: stream.get(),
                    code,
                },
                Frame::GoAway {
                    last_stream, code, ..
                } => Sent::GoAway {
                    last_stream: last_stream.get(),
                    code,
                },
                Frame::WindowUpdate { stream, .. } => Sent::WindowUpdate {
                    stream: stream.get(),
                },
                other => panic!("the client sent {other:?}"),
            });
        }
        frames
    }

    /// A header block for `fields`, as they are (uppercase and all).
    fn block(&mut self, fields: &[(&str, &str)]) -> Vec<u8> {
        let mut block = Vec::new();
        let fields = fields.iter().map(|(n, v)| Field {
            name: n.as_bytes(),
            value: v.as_bytes(),
            sensitive: false,
        });
        self.encoder.encode(fields, &mut block);
        block
    }

    fn headers(&mut self, stream: u32, fields: &[(&str, &str)], end_stream: bool) -> Vec<u8> {
        let block = self.block(fields);
        let mut out = Vec::new();
        frame::encode_headers(&mut out, sid(stream), &block, end_stream, 16_384);
        out
    }

    /// A response head on stream 1 that breaks `rule`: stream error, the client resets it.
    fn malformed(&mut self, fields: &[(&str, &str)], end_stream: bool, rule: &'static str) {
        let bytes = self.headers(1, fields, end_stream);
        assert_eq!(self.send(&bytes), [malformed(1, rule)]);
        assert_eq!(
            self.sent(),
            [Sent::Rst {
                stream: 1,
                code: ErrorCode::PROTOCOL_ERROR
            }]
        );
        assert_eq!(self.client.open_streams(), 0);
    }
}

fn fake(test: impl Fn(&mut Fake)) {
    for split in [false, true] {
        test(&mut Fake::new(split));
    }
}

#[test]
fn a_response_without_status_is_malformed() {
    fake(|f| f.malformed(&[("server", "x")], true, "no :status"));
}

#[test]
fn a_response_with_two_statuses_is_malformed() {
    fake(|f| {
        let fields = [(":status", "200"), (":status", "204")];
        f.malformed(&fields, true, "a repeated pseudo-header field");
    });
}

#[test]
fn a_status_other_than_three_digits_is_malformed() {
    for status in ["20", "2000", "abc", "099"] {
        fake(|f| {
            let rule = "a :status other than three digits from 100";
            f.malformed(&[(":status", status)], true, rule);
        });
    }
}

#[test]
fn a_request_pseudo_header_in_a_response_is_malformed() {
    for name in [":path", ":method", ":scheme", ":authority"] {
        fake(|f| {
            let fields = [(":status", "200"), (name, "/")];
            f.malformed(&fields, true, "a request pseudo-header field in a response");
        });
    }
}

#[test]
fn an_unknown_or_late_pseudo_header_is_malformed() {
    fake(|f| {
        let fields = [(":status", "200"), (":foo", "x")];
        f.malformed(&fields, true, "an unknown pseudo-header field");
    });
    fake(|f| {
        let fields = [("server", "x"), (":status", "200")];
        f.malformed(&fields, true, "a pseudo-header field after a regular one");
    });
}

#[test]
fn an_uppercase_name_in_a_response_is_malformed() {
    fake(|f| {
        let fields = [(":status", "200"), ("Content-Type", "text/plain")];
        f.malformed(&fields, true, "an uppercase field name");
    });
}

#[test]
fn a_connection_specific_field_in_a_response_is_malformed_te_too() {
    for (field, rule) in [
        (
            ("transfer-encoding", "chunked"),
            "a connection-specific header field",
        ),
        // A request may carry `te: trailers`; a response no TE at all.
        (("te", "trailers"), "TE outside a request's head"),
    ] {
        fake(|f| f.malformed(&[(":status", "200"), field], false, rule));
    }
}

#[test]
fn a_request_over_the_servers_header_list_limit_is_not_sent() {
    let server = Config {
        max_header_list_size: 300,
        ..Config::default()
    };
    run_with(Config::default(), server, |p| {
        let big = "x".repeat(300);
        let refused = p.client.send_request(
            b"GET",
            b"http",
            b"example.com",
            b"/",
            bytes_of(&[("cookie", &big)]),
            true,
        );
        assert_eq!(refused, Err(SendError::HeaderListTooLarge { limit: 300 }));
        // Nothing went: the next request takes stream 1, and HPACK stays in step.
        let id = p.get("/small", &[("accept", "*/*")]);
        assert_eq!(id, sid(1));
        let (_, server) = p.pump();
        assert_eq!(server, [get_request(1, "/small", &[("accept", "*/*")])]);
    });
}

#[test]
fn switching_protocols_is_malformed_in_http2() {
    fake(|f| {
        let rule = "101 Switching Protocols, which HTTP/2 forbids";
        f.malformed(&[(":status", "101")], false, rule);
    });
}

#[test]
fn a_body_that_differs_from_content_length_resets_the_stream() {
    for (chunk, end) in [(&b"12345"[..], true), (&b"12345678901"[..], false)] {
        fake(|f| {
            let head = f.headers(1, &[(":status", "200"), ("content-length", "10")], false);
            assert!(matches!(&f.send(&head)[..], [Ev::Response { .. }]));
            let events = f.send(&data(1, chunk, end));
            let rule = "a body whose length differs from content-length";
            assert_eq!(events, [malformed(1, rule)]);
            assert!(f.sent().contains(&Sent::Rst {
                stream: 1,
                code: ErrorCode::PROTOCOL_ERROR
            }));
            assert_eq!(f.client.open_streams(), 0);
        });
    }
    fake(|f| {
        let fields = [(":status", "200"), ("content-length", "10")];
        f.malformed(&fields, true, "content-length without a body");
    });
}

#[test]
fn data_before_the_response_head_resets_the_stream() {
    fake(|f| {
        let events = f.send(&data(1, b"early", true));
        assert_eq!(events, [malformed(1, "DATA before the response head")]);
    });
}

#[test]
fn interim_responses_come_before_the_final_one() {
    fake(|f| {
        let early = f.headers(1, &[(":status", "103"), ("link", "</a.css>")], false);
        let head = f.headers(1, &[(":status", "200")], true);
        let events = f.send(&[early, head].concat());
        assert_eq!(
            events,
            [
                Ev::Interim {
                    stream: 1,
                    status: 103,
                    fields: strs(&[("link", "</a.css>")])
                },
                Ev::Response {
                    stream: 1,
                    status: 200,
                    fields: vec![],
                    end_stream: true
                }
            ]
        );
        assert_eq!(f.client.open_streams(), 0);
    });
    fake(|f| {
        let rule = "an interim response with END_STREAM";
        f.malformed(&[(":status", "100")], true, rule);
    });
}

#[test]
fn push_promise_is_a_connection_error() {
    fake(|f| {
        let mut payload = 2u32.to_be_bytes().to_vec();
        payload.extend(f.block(&[(":method", "GET"), (":path", "/pushed")]));
        let bytes = raw(kind::PUSH_PROMISE, flags::END_HEADERS, 1, &payload);
        f.send_fails(&bytes, ErrorCode::PROTOCOL_ERROR, Violation::PushPromise);
    });
}

#[test]
fn headers_on_a_stream_the_client_never_opened_are_a_connection_error() {
    for stream in [2, 3, 4] {
        fake(|f| {
            let bytes = f.headers(stream, &[(":status", "200")], true);
            let violation = Violation::IdleStream("HEADERS");
            f.send_fails(&bytes, ErrorCode::PROTOCOL_ERROR, violation);
        });
    }
}

#[test]
fn frames_on_a_stream_the_client_never_opened_are_connection_errors() {
    for (stream, what) in [(3, "DATA"), (2, "DATA")] {
        fake(|f| {
            let violation = Violation::IdleStream(what);
            f.send_fails(
                &data(stream, b"x", true),
                ErrorCode::PROTOCOL_ERROR,
                violation,
            );
        });
    }
}

#[test]
fn a_first_server_frame_other_than_settings_is_a_protocol_error() {
    for split in [false, true] {
        let mut f = Fake::raw(split);
        let mut ping = Vec::new();
        frame::encode_ping(&mut ping, false, [0; 8]);
        f.send_fails(&ping, ErrorCode::PROTOCOL_ERROR, Violation::Preface);
    }
    // A server sends no magic preface: the client takes it for a broken frame header.
    let mut f = Fake::raw(false);
    assert!(f.feed(PREFACE).is_err());
    // An HTTP/1.1 server's answer to the preface: no HTTP/2 server, not an overlong frame.
    for split in [false, true] {
        let mut f = Fake::raw(split);
        let answer = b"HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\n\r\n";
        f.send_fails(answer, ErrorCode::PROTOCOL_ERROR, Violation::Preface);
    }
}

#[test]
fn a_server_enabling_push_is_a_protocol_error() {
    for split in [false, true] {
        let mut f = Fake::raw(split);
        let bytes = settings(&[(setting::ENABLE_PUSH, 1)]);
        let violation = Violation::Setting {
            id: setting::ENABLE_PUSH,
            value: 1,
        };
        f.send_fails(&bytes, ErrorCode::PROTOCOL_ERROR, violation);
    }
}

#[test]
fn a_late_response_to_a_reset_stream_is_dropped() {
    fake(|f| {
        f.client.reset_stream(sid(1), ErrorCode::CANCEL);
        assert_eq!(
            f.sent(),
            [Sent::Rst {
                stream: 1,
                code: ErrorCode::CANCEL
            }]
        );
        let head = f.headers(1, &[(":status", "200")], false);
        assert_eq!(f.send(&head), []);
        assert_eq!(f.send(&data(1, b"late", true)), []);
        assert_eq!(f.sent(), []);
    });
}

// --- A real server: Python's h2 ---------------------------------------------------------------

/// An h2c server (prior knowledge) on 127.0.0.1, one connection at a time: a `POST` is
/// answered with its body, anything else with `hello`; the response sent as the client's
/// windows allow. It prints its port, and stops by itself after a minute.
const H2_SERVER: &str = r#"
import signal, socket
import h2.config, h2.connection, h2.events

signal.alarm(60)

def serve(sock):
    config = h2.config.H2Configuration(client_side=False, header_encoding="utf-8")
    conn = h2.connection.H2Connection(config)
    conn.initiate_connection()
    sock.sendall(conn.data_to_send())
    requests, pending = {}, {}
    while True:
        data = sock.recv(65536)
        if not data:
            return
        for event in conn.receive_data(data):
            if isinstance(event, h2.events.RequestReceived):
                requests[event.stream_id] = (dict(event.headers), bytearray())
            elif isinstance(event, h2.events.DataReceived):
                requests[event.stream_id][1].extend(event.data)
                conn.acknowledge_received_data(event.flow_controlled_length, event.stream_id)
            elif isinstance(event, h2.events.StreamEnded):
                headers, body = requests.pop(event.stream_id)
                out = bytes(body) if headers[":method"] == "POST" else b"hello"
                conn.send_headers(event.stream_id, [
                    (":status", "200"),
                    ("content-length", str(len(out))),
                    ("x-path", headers[":path"]),
                    ("x-got", str(len(body))),
                ])
                pending[event.stream_id] = out
        for stream_id in list(pending):
            out = pending[stream_id]
            while out:
                n = min(len(out), conn.local_flow_control_window(stream_id),
                        conn.max_outbound_frame_size)
                if n <= 0:
                    break
                conn.send_data(stream_id, out[:n])
                out = out[n:]
            pending[stream_id] = out
            if not out:
                conn.end_stream(stream_id)
                del pending[stream_id]
        sock.sendall(conn.data_to_send())

listener = socket.socket()
listener.bind(("127.0.0.1", 0))
listener.listen()
print(listener.getsockname()[1], flush=True)
while True:
    sock, _ = listener.accept()
    with sock:
        serve(sock)
"#;

/// Installs Python's `h2` when it is missing.
fn ensure_h2() {
    let has = || {
        Command::new("python3")
            .args(["-c", "import h2"])
            .status()
            .is_ok_and(|s| s.success())
    };
    if !has() {
        let _ = Command::new("python3")
            .args(["-m", "pip", "install", "--quiet", "h2"])
            .status();
    }
    assert!(has(), "Python's h2 is missing: python3 -m pip install h2");
}

/// The Python server, killed when dropped.
struct PyServer(Child);

impl Drop for PyServer {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Starts the server and connects to it.
fn python_h2() -> (PyServer, TcpStream) {
    ensure_h2();
    let mut child = Command::new("python3")
        .args(["-c", H2_SERVER])
        .stdout(Stdio::piped())
        .spawn()
        .expect("python3 runs");
    let mut line = String::new();
    let stdout = child.stdout.take().expect("a stdout");
    BufReader::new(stdout)
        .read_line(&mut line)
        .expect("the port");
    let server = PyServer(child);
    let port: u16 = line.trim().parse().expect("a port number");
    let sock = TcpStream::connect(("127.0.0.1", port)).expect("a connection");
    sock.set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    (server, sock)
}

/// Drives `conn` over `sock` until stream `stream` has ended (or was reset): writes what it
/// has to send, reads, hands every frame to it, releases body bytes as they come.
fn exchange(
    conn: &mut Connection,
    sock: &mut TcpStream,
    input: &mut Vec<u8>,
    stream: u32,
) -> Vec<Ev> {
    let mut events = Vec::new();
    let mut chunk = [0u8; 16 * 1024];
    loop {
        let out = take(conn);
        sock.write_all(&out).expect("write");
        read_all(conn, input, &mut false, true, &mut events).expect("no connection error");
        let over = events.iter().any(|e| match e {
            Ev::Response {
                stream: s,
                end_stream,
                ..
            } => *s == stream && *end_stream,
            Ev::Data {
                stream: s,
                end_stream,
                ..
            } => *s == stream && *end_stream,
            Ev::Trailers { stream: s, .. } | Ev::Reset { stream: s, .. } => *s == stream,
            _ => false,
        });
        if over && conn.pending() == 0 {
            return events;
        }
        if !conn.transmit().is_empty() {
            continue;
        }
        let n = sock.read(&mut chunk).expect("read");
        assert!(n > 0, "the server closed the connection");
        input.extend_from_slice(&chunk[..n]);
    }
}

#[test]
fn against_python_h2_a_get_and_a_200_kib_post_echoed() {
    let (_server, mut sock) = python_h2();
    // Windows of the default size: the echo needs the releases to come through.
    let mut conn = Connection::client(small_windows());
    let mut input = Vec::new();

    let id = conn
        .send_request(
            b"GET",
            b"http",
            b"127.0.0.1",
            b"/hello",
            bytes_of(&[("User-Agent", "ringwire")]),
            true,
        )
        .unwrap();
    let events = exchange(&mut conn, &mut sock, &mut input, id.get());
    let (heads, got, ended) = split_body(&events, id.get());
    let fields = [
        ("content-length", "5"),
        ("x-path", "/hello"),
        ("x-got", "0"),
    ];
    assert_eq!(
        heads,
        [Ev::Response {
            stream: 1,
            status: 200,
            fields: strs(&fields),
            end_stream: false
        }]
    );
    assert_eq!((&got[..], ended), (&b"hello"[..], true));

    let upload = body(200 * 1024);
    let id = conn
        .send_request(b"POST", b"http", b"127.0.0.1", b"/echo", NONE, false)
        .unwrap();
    conn.send_data(id, Bytes::from(upload.clone()), true)
        .unwrap();
    let events = exchange(&mut conn, &mut sock, &mut input, id.get());
    let (heads, echoed, ended) = split_body(&events, id.get());
    let length = upload.len().to_string();
    let fields = [
        ("content-length", &length[..]),
        ("x-path", "/echo"),
        ("x-got", &length[..]),
    ];
    assert_eq!(
        heads,
        [Ev::Response {
            stream: 3,
            status: 200,
            fields: strs(&fields),
            end_stream: false
        }]
    );
    assert!(ended);
    assert!(echoed == upload, "the echo differs");
    assert_eq!(conn.open_streams(), 0);
}

#[test]
fn a_server_sends_informational_heads_before_the_final_one() {
    run(|p| {
        let id = p.get("/", &[]);
        p.pump();
        let link = [("Link", "</a.css>; rel=preload")];
        p.server
            .send_informational(id, 103, bytes_of(&link))
            .unwrap();
        for status in [101, 200, 99] {
            let refused = p.server.send_informational(id, status, NONE);
            assert_eq!(refused, Err(SendError::NotInformational(status)));
        }
        p.server.send_response(id, 204, NONE, true).unwrap();
        let late = p.server.send_informational(id, 103, NONE);
        assert!(matches!(
            late,
            Err(SendError::AlreadySent(_) | SendError::NoStream(_))
        ));
        let (client, server) = p.pump();
        assert_eq!(server, []);
        assert_eq!(
            client,
            [
                Ev::Interim {
                    stream: 1,
                    status: 103,
                    fields: strs(&[("link", "</a.css>; rel=preload")])
                },
                Ev::Response {
                    stream: 1,
                    status: 204,
                    fields: vec![],
                    end_stream: true
                }
            ]
        );
    });
}

#[test]
fn a_body_framed_in_place_goes_after_what_is_queued_and_counts_against_the_windows() {
    run_with(small_windows(), small_windows(), |p| {
        let id = p
            .client
            .send_request(b"POST", b"http", b"example.com", b"/up", NONE, false)
            .unwrap();
        let max = p.client.max_send_frame();
        assert_eq!(max, 16_384, "the server's default");
        let too_many = p.client.send_data_in_place(id, max + 1, false);
        assert_eq!(
            too_many,
            Err(SendError::NoRoom {
                len: max + 1,
                room: max
            })
        );
        let piece = body(max);
        let header = p.client.send_data_in_place(id, piece.len(), false).unwrap();
        assert_eq!(p.client.send_capacity(id), 65_535 - max);
        // As a driver sends it: what the connection queued (the request head), then the
        // frame's header and its bytes from where they are.
        let mut wire = take(&mut p.client);
        wire.extend_from_slice(&header);
        wire.extend_from_slice(&piece);
        let last = p.client.send_data_in_place(id, 5, true).unwrap();
        wire.extend_from_slice(&last);
        wire.extend_from_slice(b"hello");
        assert_eq!(
            p.client.send_data_in_place(id, 1, true),
            Err(SendError::AlreadySent(id))
        );
        let events = deliver(
            &mut p.server,
            &mut p.server_in,
            &mut p.server_preface,
            &wire,
            p.split,
            p.server_releases,
        )
        .unwrap();
        let (_, got, ended) = split_body(&events, 1);
        assert!(ended);
        assert_eq!(got, [piece, b"hello".to_vec()].concat());
    });
}
