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

use bytes::Bytes;
use ringwire_http2::frame::{
    self, flags, kind, setting, Frame, FrameHeader, StreamId, HEADER_LEN, PREFACE,
};
use ringwire_http2::hpack::{Decoder, Encoder, Field};
use ringwire_http2::{Config, Connection, Error, ErrorCode, Event, SendError, Violation};

type Pairs = Vec<(String, String)>;

/// An event, owned.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Ev {
    Request {
        stream: u32,
        method: String,
        path: String,
        fields: Pairs,
        end_stream: bool,
    },
    Response {
        stream: u32,
        status: u16,
        fields: Pairs,
        end_stream: bool,
    },
    Interim {
        stream: u32,
        status: u16,
        fields: Pairs,
    },
    Data {
        stream: u32,
        data: Vec<u8>,
        end_stream: bool,
    },
    Trailers {
        stream: u32,
        fields: Pairs,
    },
    Reset {
        stream: u32,
        code: ErrorCode,
        violation: Option<Violation>,
    },
    GoAway {
        last_stream: u32,
        code: ErrorCode,
    },
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8(bytes.to_vec()).expect("UTF-8 in a test field")
}

fn pairs<'a>(fields: impl IntoIterator<Item = (&'a [u8], &'a [u8])>) -> Pairs {
    fields
        .into_iter()
        .map(|(n, v)| (text(n), text(v)))
        .collect()
}

fn strs(fields: &[(&str, &str)]) -> Pairs {
    pairs(fields.iter().map(|(n, v)| (n.as_bytes(), v.as_bytes())))
}

/// `fields` as the byte pairs the send methods take.
fn bytes_of<'a>(fields: &'a [(&'a str, &'a str)]) -> Vec<(&'a [u8], &'a [u8])> {
    fields
        .iter()
        .map(|(n, v)| (n.as_bytes(), v.as_bytes()))
        .collect()
}

const NONE: [(&[u8], &[u8]); 0] = [];

impl Ev {
    fn from(event: Event<'_>) -> Ev {
        match event {
            Event::Request {
                stream,
                head,
                end_stream,
            } => Ev::Request {
                stream: stream.get(),
                method: text(head.method),
                path: text(head.path),
                fields: pairs(head.fields.iter()),
                end_stream,
            },
            Event::Response {
                stream,
                status,
                fields,
                end_stream,
            } => Ev::Response {
                stream: stream.get(),
                status,
                fields: pairs(fields.iter()),
                end_stream,
            },
            Event::Interim {
                stream,
                status,
                fields,
            } => Ev::Interim {
                stream: stream.get(),
                status,
                fields: pairs(fields.iter()),
            },
            Event::Data {
                stream,
                data,
                end_stream,
            } => Ev::Data {
                stream: stream.get(),
                data: data.to_vec(),
                end_stream,
            },
            Event::Trailers { stream, fields } => Ev::Trailers {
                stream: stream.get(),
                fields: pairs(fields.iter()),
            },
            Event::Reset {
                stream,
                code,
                violation,
            } => Ev::Reset {
                stream: stream.get(),
                code,
                violation,
            },
            Event::GoAway { last_stream, code } => Ev::GoAway {
                last_stream: last_stream.get(),
                code,
            },
            other => panic!("an event this test does not know: {other:?}"),
        }
    }
}

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

fn sid(n: u32) -> StreamId {
    StreamId::new(n)
}

fn body(len: usize) -> Vec<u8> {
    (0..len).map(|i| (i * 7 % 251) as u8).collect()
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
    let out = conn.transmit().to_vec();
    conn.advance(out.len());
    assert!(conn.transmit().is_empty());
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

fn get_request(stream: u32, path: &str, fields: &[(&str, &str)]) -> Ev {
    Ev::Request {
        stream,
        method: "GET".into(),
        path: path.into(),
        fields: strs(fields),
        end_stream: true,
    }
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
            Frame::Settings(params) => frames.push(format!("{:?}", params.iter().collect::<Vec<_>>())),
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
        assert_eq!(server, [get_request(1, "/index.html", &[("accept", "*/*")])]);
        let head = [
            ("Content-Type", "text/html"),
            ("set-cookie", "a=1"),
            ("Keep-Alive", "timeout=5"),
            ("set-cookie", "b=2"),
        ];
        p.server.send_response(id, 200, bytes_of(&head), false).unwrap();
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
        assert!(matches!(&heads[..], [Ev::Request { end_stream: false, .. }]));
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
            p.server.send_data(sid(id), Bytes::from(body), true).unwrap();
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
        assert!(matches!(&client[..], [Ev::Response { end_stream: true, .. }]));
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
