//! What the connection tests share: events made owned, and frames built by hand.

#![allow(dead_code, unreachable_pub)]

use ringwire_http2::frame::{self, StreamId};
use ringwire_http2::{ErrorCode, Event, Violation};

pub type Pairs = Vec<(String, String)>;

/// An event, owned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ev {
    Request {
        stream: u32,
        method: String,
        scheme: Option<String>,
        authority: Option<String>,
        path: String,
        protocol: Option<String>,
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

pub fn text(bytes: &[u8]) -> String {
    String::from_utf8(bytes.to_vec()).expect("UTF-8 in a test field")
}

pub fn pairs<'a>(fields: impl IntoIterator<Item = (&'a [u8], &'a [u8])>) -> Pairs {
    fields
        .into_iter()
        .map(|(n, v)| (text(n), text(v)))
        .collect()
}

pub fn strs(fields: &[(&str, &str)]) -> Pairs {
    pairs(fields.iter().map(|(n, v)| (n.as_bytes(), v.as_bytes())))
}

impl Ev {
    pub fn from(event: Event<'_>) -> Ev {
        match event {
            Event::Request {
                stream,
                head,
                end_stream,
            } => Ev::Request {
                stream: stream.get(),
                method: text(head.method),
                scheme: head.scheme.map(text),
                authority: head.authority.map(text),
                path: text(head.path),
                protocol: head.protocol.map(text),
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

    /// The request event `fields` (pseudo-header fields first) make.
    pub fn request(stream: u32, fields: &[(&str, &str)], end_stream: bool) -> Ev {
        let pseudo = |name: &str| {
            fields
                .iter()
                .find(|(n, _)| *n == name)
                .map(|(_, v)| v.to_string())
        };
        let regular: Vec<_> = fields
            .iter()
            .filter(|(n, _)| !n.starts_with(':'))
            .copied()
            .collect();
        Ev::Request {
            stream,
            method: pseudo(":method").unwrap_or_default(),
            scheme: pseudo(":scheme"),
            authority: pseudo(":authority"),
            path: pseudo(":path").unwrap_or_default(),
            protocol: pseudo(":protocol"),
            fields: strs(&regular),
            end_stream,
        }
    }

    pub fn data(stream: u32, data: &[u8], end_stream: bool) -> Ev {
        Ev::Data {
            stream,
            data: data.to_vec(),
            end_stream,
        }
    }
}

/// The reset of stream `stream`, whose message broke `rule` (RFC 9113 section 8.1.1).
pub fn malformed(stream: u32, rule: &'static str) -> Ev {
    Ev::Reset {
        stream,
        code: ErrorCode::PROTOCOL_ERROR,
        violation: Some(Violation::Malformed(rule)),
    }
}

pub fn sid(n: u32) -> StreamId {
    StreamId::new(n)
}

/// `len` bytes of a pattern that does not repeat within a frame.
pub fn body(len: usize) -> Vec<u8> {
    (0..len).map(|i| (i * 7 % 251) as u8).collect()
}

/// A frame of any type, flags and payload.
pub fn raw(kind: u8, flags: u8, stream: u32, payload: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    frame::encode_header(&mut out, payload.len(), kind, flags, sid(stream));
    out.extend_from_slice(payload);
    out
}

pub fn settings(params: &[(u16, u32)]) -> Vec<u8> {
    let mut out = Vec::new();
    frame::encode_settings(&mut out, params);
    out
}

pub fn data(stream: u32, bytes: &[u8], end_stream: bool) -> Vec<u8> {
    let mut out = Vec::new();
    frame::encode_data(&mut out, sid(stream), bytes, end_stream);
    out
}

/// An extended `CONNECT` for a WebSocket (RFC 8441) as the server sees it.
pub const WEBSOCKET: &[(&str, &str)] = &[
    (":method", "CONNECT"),
    (":protocol", "websocket"),
    (":scheme", "https"),
    (":authority", "example.com"),
    (":path", "/chat"),
    ("sec-websocket-version", "13"),
];
