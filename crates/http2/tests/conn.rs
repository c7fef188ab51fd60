//! The server connection driven as a client would drive it: bytes built with the crate's own
//! frame encoders and HPACK encoder, the server's bytes parsed back with its frame parser and
//! HPACK decoder.
//!
//! Every scenario runs twice: once with each input handed to [`Connection::recv`] whole, once
//! with it arriving a byte at a time. In both, the connection must consume whole frames only
//! (the preface, or nine bytes plus the payload) and never leave a whole frame unread.

mod common;

use bytes::Bytes;
use common::*;
use ringwire_http2::frame::{self, flags, kind, setting, Frame, FrameHeader, HEADER_LEN, PREFACE};
use ringwire_http2::hpack::{Decoder, Encoder, Field};
use ringwire_http2::{Config, Connection, Error, ErrorCode, Event, Violation, BY_REFERENCE};

/// A request a client would send.
const GET: &[(&str, &str)] = &[
    (":method", "GET"),
    (":scheme", "https"),
    (":authority", "example.com"),
    (":path", "/"),
];
const POST: &[(&str, &str)] = &[
    (":method", "POST"),
    (":scheme", "https"),
    (":authority", "example.com"),
    (":path", "/upload"),
];

/// A frame the server sent, owned; a header block with its `CONTINUATION`s is one `Headers`.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Out {
    Settings(Vec<(u16, u32)>),
    SettingsAck,
    Headers {
        stream: u32,
        fields: Pairs,
        end_stream: bool,
        /// How many frames the block took.
        frames: usize,
    },
    Data {
        stream: u32,
        data: Vec<u8>,
        end_stream: bool,
    },
    Rst {
        stream: u32,
        code: ErrorCode,
    },
    Ping {
        ack: bool,
        data: [u8; 8],
    },
    GoAway {
        last_stream: u32,
        code: ErrorCode,
    },
    WindowUpdate {
        stream: u32,
        increment: u32,
    },
}

fn data_out(stream: u32, data: &[u8], end_stream: bool) -> Out {
    Out::Data {
        stream,
        data: data.to_vec(),
        end_stream,
    }
}

fn rst(stream: u32, code: ErrorCode) -> Out {
    Out::Rst { stream, code }
}

fn window_update_out(stream: u32, increment: u32) -> Out {
    Out::WindowUpdate { stream, increment }
}

/// A header block on its way in: stream, end of stream, fragments so far, frame count.
type OpenBlock = (u32, bool, Vec<u8>, usize);

/// A client: its HPACK contexts, the connection under test and what the server sent.
struct Client {
    conn: Connection,
    /// Feed the input a byte at a time.
    split: bool,
    /// Leave the server's bytes in its send buffer (no `advance`) until [`Client::drain`].
    hold: bool,
    encoder: Encoder,
    decoder: Decoder,
    /// Input not consumed yet.
    pending: Vec<u8>,
    /// The preface is consumed: frames follow.
    started: bool,
    /// The server's output, not parsed yet.
    out: Vec<u8>,
    /// The `SETTINGS_MAX_FRAME_SIZE` this client announced: no server frame may exceed it.
    max_frame: u32,
    max_send_buffer: usize,
}

impl Client {
    fn new(config: Config, split: bool) -> Client {
        Client {
            conn: Connection::server(config),
            split,
            hold: false,
            encoder: Encoder::new(),
            decoder: Decoder::new(4096),
            pending: Vec::new(),
            started: false,
            out: Vec::new(),
            max_frame: 16_384,
            max_send_buffer: config.max_send_buffer,
        }
    }

    /// Hands `bytes` to the connection (whole or a byte at a time) and returns the events.
    fn feed(&mut self, bytes: &[u8]) -> Result<Vec<Ev>, Error> {
        let mut events = Vec::new();
        if self.split {
            for &b in bytes {
                self.pending.push(b);
                self.pump(&mut events)?;
            }
            if bytes.is_empty() {
                self.pump(&mut events)?;
            }
        } else {
            self.pending.extend_from_slice(bytes);
            self.pump(&mut events)?;
        }
        Ok(events)
    }

    /// [`feed`](Self::feed), which must not fail.
    fn send(&mut self, bytes: &[u8]) -> Vec<Ev> {
        self.feed(bytes).expect("no connection error")
    }

    /// [`feed`](Self::feed), which must fail with `code` for `violation` and a `GOAWAY`.
    fn send_fails(&mut self, bytes: &[u8], code: ErrorCode, violation: Violation) {
        let error = self.feed(bytes).expect_err("a connection error");
        assert_eq!(error, Error { code, violation });
        let last = self.frames().pop().expect("a GOAWAY");
        assert!(
            matches!(last, Out::GoAway { code: c, .. } if c == code),
            "{last:?}"
        );
        assert_eq!(
            self.conn.recv(b"").map(|(n, _)| n),
            Err(error),
            "stays failed"
        );
    }

    /// Calls `recv` until it wants more bytes.
    fn pump(&mut self, events: &mut Vec<Ev>) -> Result<(), Error> {
        loop {
            let whole = self.whole_len();
            let result = self.conn.recv(&self.pending);
            let (n, event) = match result {
                Ok((n, event)) => (n, event.map(Ev::from)),
                Err(error) => {
                    self.drain();
                    return Err(error);
                }
            };
            events.extend(event);
            if !self.hold {
                self.drain();
            }
            if n == 0 {
                let blocked = self.conn.pending() > self.max_send_buffer;
                assert!(
                    blocked || whole.is_none_or(|whole| whole > self.pending.len()),
                    "a whole frame left unread"
                );
                return Ok(());
            }
            assert_eq!(Some(n), whole, "consumed something other than one frame");
            self.started = true;
            self.pending.drain(..n);
        }
    }

    /// The length of the preface or of the frame at the front of the input.
    fn whole_len(&self) -> Option<usize> {
        if !self.started {
            return Some(PREFACE.len());
        }
        FrameHeader::parse(&self.pending).map(|h| HEADER_LEN + h.len as usize)
    }

    /// Moves the server's send buffer to `out`.
    fn drain(&mut self) {
        while !self.conn.transmit().is_empty() {
            let n = self.conn.transmit().len();
            self.out.extend_from_slice(self.conn.transmit());
            self.conn.advance(n);
        }
        assert_eq!(self.conn.pending(), 0);
    }

    /// Parses (and forgets) what the server sent so far.
    fn frames(&mut self) -> Vec<Out> {
        self.drain();
        let out = std::mem::take(&mut self.out);
        let mut rest = &out[..];
        let mut frames = Vec::new();
        let mut block: Option<OpenBlock> = None;
        while !rest.is_empty() {
            let header = FrameHeader::parse(rest).expect("a whole frame header");
            assert!(header.len <= self.max_frame, "{header:?} over our maximum");
            let end = HEADER_LEN + header.len as usize;
            let frame = Frame::parse(header, &rest[HEADER_LEN..end]).expect("a valid frame");
            rest = &rest[end..];
            let (stream, end_stream, fragment, end_headers) = match frame {
                Frame::Headers {
                    stream,
                    fragment,
                    end_stream,
                    end_headers,
                    ..
                } => {
                    assert!(block.is_none(), "HEADERS inside a header block");
                    (stream.get(), end_stream, fragment, end_headers)
                }
                Frame::Continuation {
                    stream,
                    fragment,
                    end_headers,
                } => {
                    let open = block.take().expect("CONTINUATION after HEADERS");
                    assert_eq!(open.0, stream.get());
                    block = Some((open.0, open.1, open.2, open.3));
                    (stream.get(), false, fragment, end_headers)
                }
                other => {
                    assert!(block.is_none(), "{other:?} inside a header block");
                    frames.push(Out::from(other));
                    continue;
                }
            };
            let open = block.get_or_insert((stream, end_stream, Vec::new(), 0));
            open.2.extend_from_slice(fragment);
            open.3 += 1;
            if end_headers {
                let (stream, end_stream, bytes, count) = block.take().unwrap();
                let mut fields = Vec::new();
                self.decoder
                    .decode(&bytes, usize::MAX, |f| {
                        fields.push((text(f.name), text(f.value)))
                    })
                    .expect("a header block that decodes");
                frames.push(Out::Headers {
                    stream,
                    fields,
                    end_stream,
                    frames: count,
                });
            }
        }
        assert!(block.is_none(), "a header block left open");
        frames
    }

    /// A header block for `fields`.
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

    /// `HEADERS` (with `CONTINUATION`s when needed) carrying `fields`.
    fn headers(&mut self, stream: u32, fields: &[(&str, &str)], end_stream: bool) -> Vec<u8> {
        let block = self.block(fields);
        let mut out = Vec::new();
        frame::encode_headers(&mut out, sid(stream), &block, end_stream, 16_384);
        out
    }

    /// Sends a request head, which must open `stream`.
    fn request(&mut self, stream: u32, fields: &[(&str, &str)], end_stream: bool) {
        let bytes = self.headers(stream, fields, end_stream);
        let events = self.send(&bytes);
        assert_eq!(events, [Ev::request(stream, fields, end_stream)]);
    }

    /// Sends the preface and `SETTINGS` with `params`; the server answers with its own
    /// `SETTINGS` (and a connection window) and an acknowledgement.
    fn start(&mut self, params: &[(u16, u32)]) {
        let mut bytes = PREFACE.to_vec();
        bytes.extend(settings(params));
        assert_eq!(self.send(&bytes), []);
        self.note_settings(params);
        let frames = self.frames();
        assert!(matches!(frames[0], Out::Settings(_)), "{frames:?}");
        assert_eq!(frames.last(), Some(&Out::SettingsAck));
    }

    /// Sends `SETTINGS` after the first; the server acknowledges them.
    fn settings(&mut self, params: &[(u16, u32)]) -> Vec<Out> {
        assert_eq!(self.send(&settings(params)), []);
        self.note_settings(params);
        let mut frames = self.frames();
        assert_eq!(frames.remove(0), Out::SettingsAck);
        frames
    }

    fn note_settings(&mut self, params: &[(u16, u32)]) {
        for &(id, value) in params {
            if id == setting::MAX_FRAME_SIZE {
                self.max_frame = value;
            }
        }
    }

    fn respond(&mut self, stream: u32, status: u16, end_stream: bool) {
        let no_fields: [(&[u8], &[u8]); 0] = [];
        self.conn
            .send_response(sid(stream), status, no_fields, end_stream)
            .expect("the stream takes a response");
    }
}

impl Out {
    fn from(frame: Frame<'_>) -> Out {
        match frame {
            Frame::Settings(params) => Out::Settings(params.iter().collect()),
            Frame::SettingsAck => Out::SettingsAck,
            Frame::Data {
                stream,
                data,
                end_stream,
                ..
            } => data_out(stream.get(), data, end_stream),
            Frame::RstStream { stream, code } => rst(stream.get(), code),
            Frame::Ping { ack, data } => Out::Ping { ack, data },
            Frame::GoAway {
                last_stream, code, ..
            } => Out::GoAway {
                last_stream: last_stream.get(),
                code,
            },
            Frame::WindowUpdate { stream, increment } => window_update_out(stream.get(), increment),
            other => panic!("the server sent {other:?}"),
        }
    }
}

/// Runs `test` on a client that has not sent its preface, once whole and once split.
fn run_raw(config: Config, test: impl Fn(&mut Client)) {
    for split in [false, true] {
        eprintln!("input split at every byte: {split}");
        test(&mut Client::new(config, split));
    }
}

/// Runs `test` once the client's preface and `SETTINGS` (`params`) are exchanged.
fn run_with(config: Config, params: &[(u16, u32)], test: impl Fn(&mut Client)) {
    run_raw(config, |c| {
        c.start(params);
        test(c);
    });
}

fn run(test: impl Fn(&mut Client)) {
    run_with(Config::default(), &[], test);
}

fn padded_data(stream: u32, bytes: &[u8], pad: u8, end_stream: bool) -> Vec<u8> {
    let mut payload = vec![pad];
    payload.extend_from_slice(bytes);
    payload.resize(payload.len() + usize::from(pad), 0);
    let end = if end_stream { flags::END_STREAM } else { 0 };
    raw(kind::DATA, flags::PADDED | end, stream, &payload)
}

fn window_update(stream: u32, increment: u32) -> Vec<u8> {
    let mut out = Vec::new();
    frame::encode_window_update(&mut out, sid(stream), increment);
    out
}

fn rst_stream(stream: u32, code: ErrorCode) -> Vec<u8> {
    let mut out = Vec::new();
    frame::encode_rst_stream(&mut out, sid(stream), code);
    out
}

fn ping(ack: bool, data: [u8; 8]) -> Vec<u8> {
    let mut out = Vec::new();
    frame::encode_ping(&mut out, ack, data);
    out
}

// --- The preface and SETTINGS -------------------------------------------------------------

#[test]
fn preface_and_settings_get_server_settings_and_an_ack() {
    run_raw(Config::default(), |c| {
        let mut bytes = PREFACE.to_vec();
        bytes.extend(settings(&[(setting::HEADER_TABLE_SIZE, 4096)]));
        assert_eq!(c.send(&bytes), []);
        assert_eq!(
            c.frames(),
            [
                Out::Settings(vec![
                    (setting::MAX_CONCURRENT_STREAMS, 128),
                    (setting::INITIAL_WINDOW_SIZE, 256 * 1024),
                    (setting::MAX_FRAME_SIZE, 16_384),
                    (setting::MAX_HEADER_LIST_SIZE, 64 * 1024),
                ]),
                window_update_out(0, 1024 * 1024 - 65_535),
                Out::SettingsAck,
            ]
        );
    });
}

#[test]
fn a_wrong_preface_is_a_protocol_error() {
    run_raw(Config::default(), |c| {
        let mut bytes = PREFACE.to_vec();
        bytes[3] = b'X';
        c.send_fails(&bytes, ErrorCode::PROTOCOL_ERROR, Violation::Preface);
    });
    run_raw(Config::default(), |c| {
        c.send_fails(
            b"GET / HTTP/1.1\r\n",
            ErrorCode::PROTOCOL_ERROR,
            Violation::Preface,
        );
    });
}

#[test]
fn a_first_frame_other_than_settings_is_a_protocol_error() {
    for first in [ping(false, [0; 8]), raw(kind::SETTINGS, flags::ACK, 0, b"")] {
        run_raw(Config::default(), |c| {
            let mut bytes = PREFACE.to_vec();
            bytes.extend_from_slice(&first);
            c.send_fails(&bytes, ErrorCode::PROTOCOL_ERROR, Violation::Preface);
        });
    }
}

// --- Requests and responses ---------------------------------------------------------------

#[test]
fn a_get_is_a_request_event_with_its_fields() {
    run(|c| {
        let fields = [GET, &[("accept", "*/*"), ("user-agent", "test/1")]].concat();
        let bytes = c.headers(1, &fields, true);
        assert_eq!(
            c.send(&bytes),
            [Ev::Request {
                stream: 1,
                method: "GET".into(),
                scheme: Some("https".into()),
                authority: Some("example.com".into()),
                path: "/".into(),
                protocol: None,
                fields: strs(&[("accept", "*/*"), ("user-agent", "test/1")]),
                end_stream: true,
            }]
        );
        assert_eq!(c.conn.open_streams(), 1);
    });
}

#[test]
fn a_response_is_headers_then_data() {
    run(|c| {
        c.request(1, GET, true);
        let fields: [(&[u8], &[u8]); 1] = [(b"content-type", b"text/plain")];
        c.conn.send_response(sid(1), 200, fields, false).unwrap();
        c.conn
            .send_data(sid(1), Bytes::from_static(b"hello"), true)
            .unwrap();
        assert_eq!(
            c.frames(),
            [
                Out::Headers {
                    stream: 1,
                    fields: strs(&[(":status", "200"), ("content-type", "text/plain")]),
                    end_stream: false,
                    frames: 1,
                },
                data_out(1, b"hello", true),
            ]
        );
        assert_eq!(c.conn.open_streams(), 0, "both sides ended the stream");
        assert!(!c.conn.is_busy());
    });
}

#[test]
fn trailers_after_an_empty_piece_carry_the_end_alone() {
    // A closed window keeps the pieces queued until the trailers are in too.
    run_with(
        Config::default(),
        &[(setting::INITIAL_WINDOW_SIZE, 0)],
        |c| {
            c.request(1, GET, true);
            c.respond(1, 200, false);
            c.conn
                .send_data(sid(1), Bytes::from_static(b"body"), false)
                .unwrap();
            c.conn.send_data(sid(1), Bytes::new(), false).unwrap();
            let trailers: [(&[u8], &[u8]); 1] = [(b"x-checksum", b"1")];
            c.conn.send_trailers(sid(1), trailers).unwrap();
            assert_eq!(c.frames().len(), 1, "the head alone");
            assert_eq!(c.send(&window_update(1, 100)), []);
            assert_eq!(
                c.frames(),
                [
                    data_out(1, b"body", false),
                    Out::Headers {
                        stream: 1,
                        fields: strs(&[("x-checksum", "1")]),
                        end_stream: true,
                        frames: 1,
                    },
                ]
            );
        },
    );
}

#[test]
fn the_encoder_uses_no_more_than_4096_bytes_of_a_larger_peer_table() {
    // The client offers a 1 MiB table but its decoder keeps 4096 bytes, as HPACK lets the
    // encoder choose any size up to the offer: a larger table on the server's side would
    // name entries this decoder has evicted (and `frames` would fail to decode).
    run_with(
        Config::default(),
        &[(setting::HEADER_TABLE_SIZE, 1 << 20)],
        |c| {
            let values: Vec<String> = (0..12)
                .map(|i| format!("{i:02}{}", "v".repeat(1000)))
                .collect();
            for (n, value) in values.iter().chain(&values).enumerate() {
                let stream = 2 * n as u32 + 1;
                c.request(stream, GET, true);
                let fields: [(&[u8], &[u8]); 1] = [(b"x-big", value.as_bytes())];
                c.conn
                    .send_response(sid(stream), 200, fields, true)
                    .unwrap();
                let frames = c.frames();
                assert!(
                    matches!(&frames[..], [Out::Headers { fields, .. }] if fields[1].1 == *value),
                    "{frames:?}"
                );
            }
        },
    );
}

#[test]
fn response_names_are_lowercased_in_order_and_connection_fields_dropped() {
    run(|c| {
        c.request(1, GET, true);
        let fields: [(&[u8], &[u8]); 6] = [
            (b"Content-Type", b"text/plain"),
            (b"connection", b"close"),
            (b"X-Tag", b"1"),
            (b"Transfer-Encoding", b"chunked"),
            (b"x-tag", b"2"),
            (b"Keep-Alive", b"5"),
        ];
        c.conn.send_response(sid(1), 404, fields, true).unwrap();
        let expected = [
            (":status", "404"),
            ("content-type", "text/plain"),
            ("x-tag", "1"),
            ("x-tag", "2"),
        ];
        assert_eq!(
            c.frames(),
            [Out::Headers {
                stream: 1,
                fields: strs(&expected),
                end_stream: true,
                frames: 1,
            }]
        );
    });
}

// --- Request bodies and receive flow control ----------------------------------------------

#[test]
fn a_body_over_padded_data_frames_arrives_exactly() {
    run(|c| {
        c.request(1, POST, false);
        let mut bytes = padded_data(1, b"first ", 10, false);
        bytes.extend(data(1, b"second ", false));
        bytes.extend(padded_data(1, b"", 3, false));
        bytes.extend(padded_data(1, b"third", 0, true));
        assert_eq!(
            c.send(&bytes),
            [
                Ev::data(1, b"first ", false),
                Ev::data(1, b"second ", false),
                Ev::data(1, b"", false),
                Ev::data(1, b"third", true),
            ]
        );
        assert_eq!(c.frames(), [], "padding alone grants no window yet");
    });
}

#[test]
fn padding_as_long_as_the_frame_is_a_protocol_error() {
    run(|c| {
        c.request(1, POST, false);
        let bytes = raw(kind::DATA, flags::PADDED, 1, &[4, 0, 0, 0]);
        c.send_fails(&bytes, ErrorCode::PROTOCOL_ERROR, Violation::Padding);
    });
}

/// Windows of 65,535 bytes, so that half a window is quickly used.
fn small_windows() -> Config {
    Config {
        stream_window: 65_535,
        connection_window: 65_535,
        ..Config::default()
    }
}

#[test]
fn released_body_bytes_are_granted_again_once_half_a_window_is_used() {
    run_with(small_windows(), &[], |c| {
        c.request(1, POST, false);
        let chunk = body(16_000);
        for _ in 0..2 {
            assert_eq!(
                c.send(&data(1, &chunk, false)),
                [Ev::data(1, &chunk, false)]
            );
            c.conn.release(sid(1), chunk.len());
        }
        assert_eq!(c.frames(), [], "32,000 bytes: under half the window");
        // Padding counts too, and is released by the connection itself.
        let more = body(600);
        assert_eq!(c.send(&padded_data(1, &more, 255, false)).len(), 1);
        assert_eq!(
            c.frames(),
            [],
            "32,256 bytes: the 600 are held by the application"
        );
        c.conn.release(sid(1), more.len());
        let granted = 32_000 + 256 + 600;
        assert_eq!(
            c.frames(),
            [window_update_out(1, granted), window_update_out(0, granted)]
        );
    });
}

#[test]
fn released_bytes_grant_the_exact_window_back() {
    run_with(small_windows(), &[], |c| {
        c.request(1, POST, false);
        let chunk = body(16_384);
        for _ in 0..2 {
            c.send(&data(1, &chunk, false));
        }
        c.conn.release(sid(1), 2 * chunk.len());
        assert_eq!(
            c.frames(),
            [window_update_out(1, 32_768), window_update_out(0, 32_768)]
        );
        // The whole window is available again: another 65,535 bytes are accepted.
        for n in [16_384, 16_384, 16_384, 16_383] {
            assert_eq!(c.send(&data(1, &body(n), false)).len(), 1);
        }
    });
}

#[test]
fn data_beyond_the_stream_window_resets_the_stream() {
    let config = Config {
        stream_window: 65_535,
        ..Config::default()
    };
    run_with(config, &[], |c| {
        c.request(1, POST, false);
        for n in [16_384, 16_384, 16_384, 16_383] {
            assert_eq!(c.send(&data(1, &body(n), false)).len(), 1);
        }
        assert_eq!(
            c.send(&data(1, b"!", false)),
            [Ev::Reset {
                stream: 1,
                code: ErrorCode::FLOW_CONTROL_ERROR,
                violation: Some(Violation::WindowExceeded),
            }]
        );
        assert_eq!(c.frames(), [rst(1, ErrorCode::FLOW_CONTROL_ERROR)]);
        assert_eq!(c.conn.open_streams(), 0);
        // The connection goes on.
        c.request(3, GET, true);
    });
}

#[test]
fn data_beyond_the_connection_window_is_a_connection_error() {
    run_with(small_windows(), &[], |c| {
        c.request(1, POST, false);
        c.request(3, POST, false);
        for n in [16_384, 16_384] {
            assert_eq!(c.send(&data(1, &body(n), false)).len(), 1);
        }
        for n in [16_384, 16_383] {
            assert_eq!(c.send(&data(3, &body(n), false)).len(), 1);
        }
        c.send_fails(
            &data(3, b"!", false),
            ErrorCode::FLOW_CONTROL_ERROR,
            Violation::WindowExceeded,
        );
    });
}

#[test]
fn a_stream_reset_by_the_peer_gives_its_unreleased_bytes_back_to_the_connection() {
    run_with(small_windows(), &[], |c| {
        c.request(1, POST, false);
        for n in [16_384, 16_384, 7_232] {
            assert_eq!(c.send(&data(1, &body(n), false)).len(), 1);
        }
        let events = c.send(&rst_stream(1, ErrorCode::CANCEL));
        assert!(matches!(events[..], [Ev::Reset { stream: 1, .. }]));
        // The application can no longer release them: the connection must.
        assert_eq!(c.frames(), [window_update_out(0, 40_000)]);
        c.request(3, POST, false);
        for n in [16_384, 16_384, 16_384, 16_383] {
            assert_eq!(c.send(&data(3, &body(n), false)).len(), 1);
        }
    });
}

// --- Send flow control and frame sizes ----------------------------------------------------

#[test]
fn a_body_waits_for_the_stream_window() {
    run_with(
        Config::default(),
        &[(setting::INITIAL_WINDOW_SIZE, 10)],
        |c| {
            c.request(1, GET, true);
            c.respond(1, 200, false);
            let payload = body(25);
            c.conn
                .send_data(sid(1), Bytes::from(payload.clone()), true)
                .unwrap();
            let frames = c.frames();
            assert!(matches!(frames[0], Out::Headers { .. }));
            assert_eq!(frames[1..], [data_out(1, &payload[..10], false)]);
            assert_eq!(c.conn.queued(sid(1)), 15);
            assert_eq!(c.send(&window_update(1, 4)), []);
            assert_eq!(c.frames(), [data_out(1, &payload[10..14], false)]);
            assert_eq!(c.send(&window_update(1, 100)), []);
            assert_eq!(c.frames(), [data_out(1, &payload[14..], true)]);
            assert_eq!(c.conn.open_streams(), 0);
        },
    );
}

#[test]
fn a_body_waits_for_the_connection_window() {
    run_with(
        Config::default(),
        &[(setting::INITIAL_WINDOW_SIZE, 1 << 20)],
        |c| {
            c.request(1, GET, true);
            c.respond(1, 200, false);
            let payload = body(70_000);
            c.conn
                .send_data(sid(1), Bytes::from(payload.clone()), true)
                .unwrap();
            let mut frames = c.frames();
            frames.remove(0);
            let sent: Vec<u8> = frames
                .iter()
                .flat_map(|f| match f {
                    Out::Data {
                        stream: 1,
                        data,
                        end_stream: false,
                    } => data.clone(),
                    other => panic!("{other:?}"),
                })
                .collect();
            assert_eq!(sent, payload[..65_535]);
            assert_eq!(c.send(&window_update(0, 1_000)), []);
            assert_eq!(c.frames(), [data_out(1, &payload[65_535..66_535], false)]);
            assert_eq!(c.send(&window_update(0, 10_000)), []);
            assert_eq!(c.frames(), [data_out(1, &payload[66_535..], true)]);
        },
    );
}

#[test]
fn a_smaller_initial_window_can_make_a_stream_window_negative() {
    // RFC 9113 section 6.9.2.
    run_with(
        Config::default(),
        &[(setting::INITIAL_WINDOW_SIZE, 10)],
        |c| {
            c.request(1, GET, true);
            c.respond(1, 200, false);
            let payload = body(25);
            c.conn
                .send_data(sid(1), Bytes::from(payload.clone()), true)
                .unwrap();
            assert_eq!(c.frames()[1..], [data_out(1, &payload[..10], false)]);
            // 0 - 6 = -6.
            assert_eq!(c.settings(&[(setting::INITIAL_WINDOW_SIZE, 4)]), []);
            assert_eq!(c.send(&window_update(1, 6)), []);
            assert_eq!(c.frames(), [], "the window is back at 0 only");
            // 0 + 16 = 16.
            assert_eq!(
                c.settings(&[(setting::INITIAL_WINDOW_SIZE, 20)]),
                [data_out(1, &payload[10..], true)]
            );
        },
    );
}

#[test]
fn data_frames_respect_the_peer_max_frame_size() {
    for (max, sizes) in [
        (16_384, &[16_384, 16_384, 7_232][..]),
        (20_000, &[20_000, 20_000]),
    ] {
        let params = [
            (setting::INITIAL_WINDOW_SIZE, 1 << 20),
            (setting::MAX_FRAME_SIZE, max),
        ];
        run_with(Config::default(), &params, |c| {
            c.request(1, GET, true);
            c.respond(1, 200, false);
            c.conn
                .send_data(sid(1), Bytes::from(body(40_000)), true)
                .unwrap();
            let lens: Vec<usize> = c.frames()[1..]
                .iter()
                .map(|f| match f {
                    Out::Data { data, .. } => data.len(),
                    other => panic!("{other:?}"),
                })
                .collect();
            assert_eq!(lens, sizes);
        });
    }
}

#[test]
fn large_pieces_go_out_from_the_callers_bytes_small_ones_copied() {
    let params = [(setting::INITIAL_WINDOW_SIZE, 1 << 20)];
    run_with(Config::default(), &params, |c| {
        c.drain();
        c.request(1, GET, true);
        c.respond(1, 200, false);
        // 40,000 bytes: two whole frames and a tail of 7,232, all by reference; then a
        // piece under the bound, copied.
        let large = Bytes::from(body(40_000));
        let small = Bytes::from(body(BY_REFERENCE - 1));
        c.conn.send_data(sid(1), large.clone(), false).unwrap();
        c.conn.send_data(sid(1), small.clone(), true).unwrap();
        let mut runs = [&[][..]; 16];
        let filled = c.conn.transmit_vectored(&mut runs);
        let inside = |run: &[u8], of: &Bytes| {
            of.as_ptr_range().contains(&run.as_ptr()) && run.len() <= of.len()
        };
        let by_reference: Vec<usize> = runs[..filled]
            .iter()
            .filter(|run| inside(run, &large))
            .map(|run| run.len())
            .collect();
        assert_eq!(by_reference, [16_384, 16_384, 7_232]);
        assert!(runs[..filled].iter().all(|run| !inside(run, &small)));
        let total: usize = runs[..filled].iter().map(|run| run.len()).sum();
        assert_eq!(total, c.conn.pending());
        // Sent in odd amounts that cut runs anywhere: the same frames.
        let mut wire = Vec::new();
        for step in [1, 5, 9, 100, 16_000, 700].into_iter().cycle() {
            let run = c.conn.transmit();
            if run.is_empty() {
                break;
            }
            let n = step.min(run.len());
            wire.extend_from_slice(&run[..n]);
            c.conn.advance(n);
        }
        assert_eq!(c.conn.pending(), 0);
        c.out.extend_from_slice(&wire);
        let frames = c.frames();
        let data: Vec<u8> = frames
            .iter()
            .filter_map(|f| match f {
                Out::Data { data, .. } => Some(data.clone()),
                _ => None,
            })
            .flatten()
            .collect();
        assert_eq!(data, [&large[..], &small[..]].concat());
        assert!(matches!(
            frames.last(),
            Some(Out::Data {
                end_stream: true,
                ..
            })
        ));
    });
}

#[test]
fn a_big_response_head_is_split_into_continuations() {
    for max in [16_384, 20_000] {
        run_with(Config::default(), &[(setting::MAX_FRAME_SIZE, max)], |c| {
            c.request(1, GET, true);
            let big = "x".repeat(50_000);
            let fields: [(&[u8], &[u8]); 1] = [(b"x-big", big.as_bytes())];
            c.conn.send_response(sid(1), 200, fields, true).unwrap();
            let frames = c.frames();
            let [Out::Headers {
                fields,
                frames: count,
                end_stream: true,
                ..
            }] = &frames[..]
            else {
                panic!("{frames:?}");
            };
            assert_eq!(fields[1], ("x-big".to_string(), big));
            // 50,000 'x's Huffman-coded: 43,750 bytes.
            assert_eq!(*count, 43_760usize.div_ceil(max as usize));
        });
    }
}

// --- Header blocks in pieces --------------------------------------------------------------

#[test]
fn a_header_block_over_headers_and_continuations_is_one_request() {
    run(|c| {
        let fields = [GET, &[("x-a", "1"), ("x-b", "2")]].concat();
        let block = c.block(&fields);
        let mut bytes = Vec::new();
        frame::encode_headers(&mut bytes, sid(1), &block, true, 7);
        assert!(bytes.len() > 3 * HEADER_LEN + block.len(), "several frames");
        assert_eq!(c.send(&bytes), [Ev::request(1, &fields, true)]);
    });
}

#[test]
fn a_header_block_is_known_to_be_half_received_until_its_end() {
    run(|c| {
        let block = c.block(GET);
        assert!(!c.conn.in_header_block());
        assert_eq!(
            c.send(&raw(kind::HEADERS, flags::END_STREAM, 1, &block[..2])),
            []
        );
        assert!(c.conn.in_header_block(), "CONTINUATION awaited");
        let rest = raw(kind::CONTINUATION, flags::END_HEADERS, 1, &block[2..]);
        assert_eq!(c.send(&rest), [Ev::request(1, GET, true)]);
        assert!(!c.conn.in_header_block());
    });
}

#[test]
fn a_frame_inside_a_header_block_is_a_protocol_error() {
    for interloper in [
        ping(false, [1; 8]),
        data(1, b"x", false),
        raw(kind::CONTINUATION, flags::END_HEADERS, 3, b""),
        raw(0xfa, 0, 0, b"unknown"),
    ] {
        run(|c| {
            let block = c.block(GET);
            let mut bytes = raw(kind::HEADERS, flags::END_STREAM, 1, &block[..2]);
            bytes.extend_from_slice(&interloper);
            c.send_fails(
                &bytes,
                ErrorCode::PROTOCOL_ERROR,
                Violation::ExpectedContinuation,
            );
        });
    }
}

#[test]
fn a_continuation_without_headers_is_a_protocol_error() {
    run(|c| {
        let block = c.block(GET);
        c.send_fails(
            &raw(kind::CONTINUATION, flags::END_HEADERS, 1, &block),
            ErrorCode::PROTOCOL_ERROR,
            Violation::UnexpectedContinuation,
        );
    });
    run(|c| {
        c.request(1, GET, true);
        c.send_fails(
            &raw(kind::CONTINUATION, flags::END_HEADERS, 1, b""),
            ErrorCode::PROTOCOL_ERROR,
            Violation::UnexpectedContinuation,
        );
    });
}

// --- Stream rules -------------------------------------------------------------------------

#[test]
fn an_even_stream_id_is_a_protocol_error() {
    run(|c| {
        let bytes = c.headers(2, GET, true);
        c.send_fails(
            &bytes,
            ErrorCode::PROTOCOL_ERROR,
            Violation::EvenStreamId(2),
        );
    });
}

#[test]
fn a_lower_stream_id_after_a_higher_one_is_a_protocol_error() {
    run(|c| {
        c.request(5, GET, true);
        let bytes = c.headers(3, GET, true);
        c.send_fails(
            &bytes,
            ErrorCode::PROTOCOL_ERROR,
            Violation::StreamIdReused(3),
        );
    });
}

#[test]
fn frames_on_an_idle_stream_are_protocol_errors() {
    for (bytes, what) in [
        (data(1, b"x", false), "DATA"),
        (window_update(1, 1), "WINDOW_UPDATE"),
        // Zero is a stream error on an open stream; no RST_STREAM may answer an idle one.
        (raw(kind::WINDOW_UPDATE, 0, 1, &[0; 4]), "WINDOW_UPDATE"),
        (rst_stream(1, ErrorCode::CANCEL), "RST_STREAM"),
    ] {
        run(|c| {
            c.send_fails(
                &bytes,
                ErrorCode::PROTOCOL_ERROR,
                Violation::IdleStream(what),
            );
        });
    }
}

#[test]
fn frames_on_an_even_stream_are_protocol_errors_as_the_server_pushes_none() {
    for (bytes, what) in [
        (data(2, b"x", false), "DATA"),
        (window_update(2, 1), "WINDOW_UPDATE"),
        (rst_stream(2, ErrorCode::CANCEL), "RST_STREAM"),
    ] {
        run(|c| {
            // Stream 2 lies below the highest open stream, yet was never opened.
            c.request(3, GET, true);
            c.send_fails(
                &bytes,
                ErrorCode::PROTOCOL_ERROR,
                Violation::IdleStream(what),
            );
        });
    }
}

#[test]
fn headers_on_a_half_closed_stream_reset_it_with_stream_closed() {
    run(|c| {
        c.request(1, GET, true);
        let bytes = c.headers(1, &[("x-more", "1")], true);
        assert_eq!(
            c.send(&bytes),
            [Ev::Reset {
                stream: 1,
                code: ErrorCode::STREAM_CLOSED,
                violation: Some(Violation::StreamClosed("HEADERS")),
            }],
            "the application, which saw the request, is told"
        );
        assert_eq!(c.frames(), [rst(1, ErrorCode::STREAM_CLOSED)]);
        c.request(3, GET, true);
    });
}

#[test]
fn data_on_a_half_closed_stream_resets_it_with_stream_closed() {
    run(|c| {
        c.request(1, GET, true);
        assert_eq!(
            c.send(&data(1, b"late", false)),
            [Ev::Reset {
                stream: 1,
                code: ErrorCode::STREAM_CLOSED,
                violation: Some(Violation::StreamClosed("DATA")),
            }]
        );
        assert_eq!(c.frames(), [rst(1, ErrorCode::STREAM_CLOSED)]);
    });
}

#[test]
fn headers_on_a_closed_stream_are_a_stream_closed_connection_error() {
    run(|c| {
        c.request(1, GET, true);
        c.respond(1, 204, true);
        assert_eq!(c.conn.open_streams(), 0);
        let bytes = c.headers(1, GET, true);
        c.send_fails(
            &bytes,
            ErrorCode::STREAM_CLOSED,
            Violation::StreamClosed("HEADERS"),
        );
    });
}

#[test]
fn rst_stream_from_the_peer_is_a_reset_event() {
    run(|c| {
        c.request(1, GET, true);
        assert_eq!(
            c.send(&rst_stream(1, ErrorCode::CANCEL)),
            [Ev::Reset {
                stream: 1,
                code: ErrorCode::CANCEL,
                violation: None,
            }]
        );
        assert_eq!(c.conn.open_streams(), 0);
        let no_fields: [(&[u8], &[u8]); 0] = [];
        assert!(c.conn.send_response(sid(1), 200, no_fields, true).is_err());
        // Late frames the peer may still send: a WINDOW_UPDATE, another RST_STREAM.
        assert_eq!(c.send(&window_update(1, 10)), []);
        assert_eq!(c.send(&rst_stream(1, ErrorCode::CANCEL)), []);
        assert_eq!(c.frames(), []);
    });
}

#[test]
fn frames_for_a_stream_the_server_reset_are_ignored() {
    run(|c| {
        let fields = [GET, &[("X-Upper", "1")][..]].concat();
        let bytes = c.headers(1, &fields, false);
        assert_eq!(c.send(&bytes), []);
        assert_eq!(c.frames(), [rst(1, ErrorCode::PROTOCOL_ERROR)]);
        let mut late = data(1, b"body", false);
        late.extend(window_update(1, 5));
        late.extend(c.headers(1, &[("x-trailer", "1")], true));
        late.extend(rst_stream(1, ErrorCode::CANCEL));
        assert_eq!(c.send(&late), []);
        assert_eq!(c.frames(), []);
        c.request(3, GET, true);
    });
}

#[test]
fn streams_past_the_concurrency_limit_are_refused_and_hpack_stays_in_sync() {
    let config = Config {
        max_concurrent_streams: 1,
        ..Config::default()
    };
    run_with(config, &[], |c| {
        c.request(1, GET, true);
        // The refused request's block adds an entry to both dynamic tables...
        let fields = [GET, &[("x-custom", "value")][..]].concat();
        let bytes = c.headers(3, &fields, true);
        assert_eq!(c.send(&bytes), []);
        assert_eq!(c.frames(), [rst(3, ErrorCode::REFUSED_STREAM)]);
        c.respond(1, 204, true);
        c.frames();
        // ...which the next block refers to by index.
        let block = c.block(&fields);
        assert!(block.len() < 8, "indexed fields only: {block:?}");
        c.request(5, &fields, true);
    });
}

// --- Malformed requests -------------------------------------------------------------------

/// A request head that must be refused with `RST_STREAM` `PROTOCOL_ERROR` and no event.
fn assert_malformed(fields: &[(&str, &str)]) {
    run(|c| {
        let bytes = c.headers(1, fields, true);
        assert_eq!(c.send(&bytes), [], "{fields:?}");
        assert_eq!(
            c.frames(),
            [rst(1, ErrorCode::PROTOCOL_ERROR)],
            "{fields:?}"
        );
        assert_eq!(c.conn.open_streams(), 0);
        // HPACK is still in step.
        c.request(3, GET, true);
    });
}

#[test]
fn an_uppercase_field_name_is_malformed() {
    assert_malformed(&[GET, &[("Accept", "*/*")][..]].concat());
}

#[test]
fn a_missing_path_is_malformed() {
    assert_malformed(&GET[..3]);
}

#[test]
fn an_unknown_pseudo_header_is_malformed() {
    assert_malformed(&[GET, &[(":foo", "bar")][..]].concat());
}

// --- Extended CONNECT (RFC 8441) ----------------------------------------------------------

fn extended() -> Config {
    Config {
        enable_connect_protocol: true,
        ..Config::default()
    }
}

#[test]
fn a_server_that_takes_extended_connect_says_so() {
    run_raw(extended(), |c| {
        let mut bytes = PREFACE.to_vec();
        bytes.extend(settings(&[]));
        assert_eq!(c.send(&bytes), []);
        let Out::Settings(params) = &c.frames()[0] else {
            panic!("SETTINGS first");
        };
        assert!(
            params.contains(&(setting::ENABLE_CONNECT_PROTOCOL, 1)),
            "{params:?}"
        );
    });
}

#[test]
fn an_extended_connect_is_a_request_with_its_protocol() {
    run_with(extended(), &[], |c| {
        let bytes = c.headers(1, WEBSOCKET, false);
        assert_eq!(c.send(&bytes), [Ev::request(1, WEBSOCKET, false)]);
        // Its stream carries bytes both ways, as DATA.
        assert_eq!(
            c.send(&data(1, b"\x82\x00", false)),
            [Ev::data(1, b"\x82\x00", false)]
        );
    });
}

#[test]
fn an_extended_connect_as_http1_is_the_upgrade_it_stands_for() {
    run_with(extended(), &[], |c| {
        let bytes = c.headers(1, WEBSOCKET, false);
        let mut wire = bytes.as_slice();
        let mut http1 = Vec::new();
        while !wire.is_empty() {
            let (n, event) = c.conn.recv(wire).expect("no connection error");
            if let Some(Event::Request { head, .. }) = event {
                head.write_http1(&mut http1);
            }
            wire = &wire[n..];
        }
        assert_eq!(
            std::str::from_utf8(&http1).unwrap(),
            "GET /chat HTTP/1.1\r\nhost: example.com\r\nconnection: upgrade\r\n\
             upgrade: websocket\r\nsec-websocket-version: 13\r\n\r\n"
        );
    });
}

#[test]
fn an_extended_connect_is_malformed_unless_advertised_and_complete() {
    // Not advertised (the default).
    assert_malformed(WEBSOCKET);
    for fields in [
        // :protocol on another method.
        [GET, &[(":protocol", "websocket")][..]].concat(),
        // Without :path, or :scheme, or :authority.
        WEBSOCKET
            .iter()
            .filter(|(n, _)| *n != ":path")
            .copied()
            .collect(),
        WEBSOCKET
            .iter()
            .filter(|(n, _)| *n != ":scheme")
            .copied()
            .collect(),
        WEBSOCKET
            .iter()
            .filter(|(n, _)| *n != ":authority")
            .copied()
            .collect(),
    ] {
        run_with(extended(), &[], |c| {
            let bytes = c.headers(1, &fields, true);
            assert_eq!(c.send(&bytes), [], "{fields:?}");
            assert_eq!(
                c.frames(),
                [rst(1, ErrorCode::PROTOCOL_ERROR)],
                "{fields:?}"
            );
        });
    }
}

#[test]
fn a_pseudo_header_after_a_regular_field_is_malformed() {
    assert_malformed(&[&GET[..3], &[("accept", "*/*"), (":path", "/")][..]].concat());
}

#[test]
fn a_connection_field_is_malformed() {
    assert_malformed(&[GET, &[("connection", "keep-alive")][..]].concat());
}

#[test]
fn te_other_than_trailers_is_malformed() {
    assert_malformed(&[GET, &[("te", "gzip")][..]].concat());
}

#[test]
fn te_trailers_is_allowed() {
    run(|c| c.request(1, &[GET, &[("te", "trailers")][..]].concat(), true));
}

#[test]
fn a_body_longer_or_shorter_than_content_length_is_malformed() {
    for (chunks, end) in [
        (&[&b"abc"[..]][..], true),
        (&[&b"abcde"[..], b"f"][..], false),
    ] {
        run(|c| {
            c.request(1, &[POST, &[("content-length", "5")][..]].concat(), false);
            let (last, first) = chunks.split_last().unwrap();
            for chunk in first {
                assert_eq!(c.send(&data(1, chunk, false)), [Ev::data(1, chunk, false)]);
            }
            assert_eq!(
                c.send(&data(1, last, end)),
                [malformed(
                    1,
                    "a body whose length differs from content-length"
                )]
            );
            assert_eq!(c.frames(), [rst(1, ErrorCode::PROTOCOL_ERROR)]);
        });
    }
}

#[test]
fn a_body_shorter_than_content_length_ended_by_trailers_is_malformed() {
    run(|c| {
        c.request(1, &[POST, &[("content-length", "5")][..]].concat(), false);
        assert_eq!(c.send(&data(1, b"abc", false)).len(), 1);
        let bytes = c.headers(1, &[("x-checksum", "1")], true);
        assert_eq!(
            c.send(&bytes),
            [malformed(
                1,
                "a body whose length differs from content-length"
            )]
        );
        assert_eq!(c.frames(), [rst(1, ErrorCode::PROTOCOL_ERROR)]);
    });
}

#[test]
fn trailers_with_a_pseudo_header_are_malformed() {
    run(|c| {
        c.request(1, POST, false);
        let bytes = c.headers(1, &[(":path", "/again")], true);
        assert_eq!(
            c.send(&bytes),
            [malformed(1, "a pseudo-header field in trailers")]
        );
        assert_eq!(c.frames(), [rst(1, ErrorCode::PROTOCOL_ERROR)]);
    });
}

#[test]
fn valid_trailers_end_the_request() {
    run(|c| {
        c.request(1, &[POST, &[("content-length", "4")][..]].concat(), false);
        assert_eq!(c.send(&data(1, b"body", false)).len(), 1);
        let bytes = c.headers(1, &[("x-checksum", "abc")], true);
        assert_eq!(
            c.send(&bytes),
            [Ev::Trailers {
                stream: 1,
                fields: strs(&[("x-checksum", "abc")]),
            }]
        );
        c.respond(1, 200, true);
        assert_eq!(c.conn.open_streams(), 0);
    });
}

// --- Connection frames --------------------------------------------------------------------

#[test]
fn a_ping_is_answered_with_the_same_data() {
    run(|c| {
        let data = *b"12345678";
        assert_eq!(c.send(&ping(false, data)), []);
        assert_eq!(c.frames(), [Out::Ping { ack: true, data }]);
        assert_eq!(c.send(&ping(true, data)), []);
        assert_eq!(c.frames(), [], "an acknowledgement is not answered");
    });
}

#[test]
fn settings_out_of_range_are_connection_errors() {
    for (id, value, code) in [
        (setting::ENABLE_PUSH, 2, ErrorCode::PROTOCOL_ERROR),
        (
            setting::INITIAL_WINDOW_SIZE,
            1 << 31,
            ErrorCode::FLOW_CONTROL_ERROR,
        ),
        (setting::MAX_FRAME_SIZE, 100, ErrorCode::PROTOCOL_ERROR),
        (setting::MAX_FRAME_SIZE, 1 << 24, ErrorCode::PROTOCOL_ERROR),
    ] {
        run(|c| {
            c.send_fails(
                &settings(&[(id, value)]),
                code,
                Violation::Setting { id, value },
            );
        });
    }
}

#[test]
fn a_window_update_past_2_pow_31_overflows() {
    run(|c| {
        c.send_fails(
            &window_update(0, (1 << 31) - 1),
            ErrorCode::FLOW_CONTROL_ERROR,
            Violation::WindowOverflow,
        );
    });
    run(|c| {
        c.request(1, GET, true);
        assert_eq!(
            c.send(&window_update(1, (1 << 31) - 1)),
            [Ev::Reset {
                stream: 1,
                code: ErrorCode::FLOW_CONTROL_ERROR,
                violation: Some(Violation::WindowOverflow),
            }]
        );
        assert_eq!(c.frames(), [rst(1, ErrorCode::FLOW_CONTROL_ERROR)]);
    });
}

#[test]
fn goaway_from_the_peer_is_an_event() {
    run(|c| {
        c.request(1, GET, true);
        let mut bytes = Vec::new();
        frame::encode_goaway(&mut bytes, sid(1), ErrorCode::NO_ERROR, b"bye");
        assert_eq!(
            c.send(&bytes),
            [Ev::GoAway {
                last_stream: 1,
                code: ErrorCode::NO_ERROR,
            }]
        );
        c.respond(1, 200, true);
        assert!(matches!(c.frames()[..], [Out::Headers { .. }]));
    });
}

#[test]
fn go_away_names_the_last_stream_and_ignores_new_ones() {
    run(|c| {
        c.request(1, GET, false);
        c.conn.go_away();
        assert_eq!(
            c.frames(),
            [Out::GoAway {
                last_stream: 1,
                code: ErrorCode::NO_ERROR,
            }]
        );
        let fields = [GET, &[("x-new", "1")][..]].concat();
        let bytes = c.headers(3, &fields, false);
        assert_eq!(c.send(&bytes), [], "stream 3 is ignored");
        assert_eq!(c.send(&data(3, b"ignored", false)), []);
        let trailers = c.headers(3, &[("x-trailer", "1")], true);
        assert_eq!(c.send(&trailers), []);
        // Stream 1 finishes, and HPACK is still in step.
        assert_eq!(c.send(&data(1, b"x", true)), [Ev::data(1, b"x", true)]);
        c.respond(1, 200, true);
        let frames = c.frames();
        assert!(
            matches!(frames[..], [Out::Headers { stream: 1, .. }]),
            "{frames:?}"
        );
        assert_eq!(c.conn.open_streams(), 0);
    });
}

#[test]
fn a_full_send_buffer_stops_reading_until_it_drains() {
    let config = Config {
        max_send_buffer: 100,
        ..Config::default()
    };
    run_with(config, &[], |c| {
        c.hold = true;
        let pings: Vec<u8> = (0..10u8).flat_map(|i| ping(false, [i; 8])).collect();
        assert_eq!(c.send(&pings), []);
        assert!(!c.pending.is_empty(), "some pings left unread");
        assert!(c.conn.pending() > 100);
        assert_eq!(c.conn.recv(&c.pending.clone()).unwrap().0, 0);
        let mut answered = 0;
        while !c.pending.is_empty() {
            let frames = c.frames();
            assert!(!frames.is_empty(), "drained, then more read");
            answered += frames.len();
            c.send(&[]);
        }
        answered += c.frames().len();
        assert_eq!(answered, 10);
    });
}

#[test]
fn a_frame_over_our_max_frame_size_is_a_frame_size_error() {
    run(|c| {
        let bytes = data(1, &body(16_385), false);
        c.send_fails(
            &bytes,
            ErrorCode::FRAME_SIZE_ERROR,
            Violation::FrameTooLarge {
                len: 16_385,
                max: 16_384,
            },
        );
    });
}

#[test]
fn headers_depending_on_their_own_stream_keep_hpack_in_step() {
    // Whole in HEADERS, then over HEADERS and a CONTINUATION.
    for split in [usize::MAX, 3] {
        run(|c| {
            // A priority naming stream 1 itself, and a new dynamic table entry.
            let fields = [GET, &[("x-custom", "value")][..]].concat();
            let block = c.block(&fields);
            let (first, rest) = block.split_at(split.min(block.len()));
            let mut payload = vec![0, 0, 0, 1, 15];
            payload.extend_from_slice(first);
            let end_headers = if rest.is_empty() {
                flags::END_HEADERS
            } else {
                0
            };
            let flags = flags::PRIORITY | flags::END_STREAM | end_headers;
            let mut bytes = raw(kind::HEADERS, flags, 1, &payload);
            if !rest.is_empty() {
                bytes.extend(raw(kind::CONTINUATION, flags::END_HEADERS, 1, rest));
            }
            assert_eq!(c.send(&bytes), []);
            assert_eq!(c.frames(), [rst(1, ErrorCode::PROTOCOL_ERROR)]);
            c.request(3, &fields, true);
        });
    }
}
