//! Each frame type's payload rules (RFC 9113 section 6).

use super::{flags, kind, Frame, FrameHeader, Priority, Settings, StreamId};
use crate::{ErrorCode, Violation};

/// A frame that breaks its type's rules.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FrameError {
    /// The code to send.
    pub code: ErrorCode,
    /// `Some` for a stream error (section 5.4.2: reset that stream, the connection goes on),
    /// `None` for a connection error.
    pub stream: Option<StreamId>,
    /// What was wrong.
    pub violation: Violation,
}

impl FrameError {
    fn connection(code: ErrorCode, violation: Violation) -> FrameError {
        FrameError {
            code,
            stream: None,
            violation,
        }
    }

    fn protocol(violation: Violation) -> FrameError {
        FrameError::connection(ErrorCode::PROTOCOL_ERROR, violation)
    }

    fn size(name: &'static str, len: usize) -> FrameError {
        let len = u32::try_from(len).unwrap_or(u32::MAX);
        FrameError::connection(ErrorCode::FRAME_SIZE_ERROR, Violation::Length(name, len))
    }
}

impl Frame<'_> {
    /// Parses the frame `header` introduces from its whole `payload` (`header.len` bytes).
    ///
    /// The frame's length against `SETTINGS_MAX_FRAME_SIZE` is the caller's check, made on
    /// the header before the payload is awaited.
    pub fn parse(header: FrameHeader, payload: &[u8]) -> Result<Frame<'_>, FrameError> {
        debug_assert_eq!(payload.len(), header.len as usize);
        let stream = header.stream;
        let on_stream = |name| {
            if stream.is_zero() {
                Err(FrameError::protocol(Violation::StreamZero(name)))
            } else {
                Ok(())
            }
        };
        let on_connection = |name| {
            if stream.is_zero() {
                Ok(())
            } else {
                Err(FrameError::protocol(Violation::NotStreamZero(name)))
            }
        };
        Ok(match header.kind {
            kind::DATA => {
                on_stream("DATA")?;
                Frame::Data {
                    stream,
                    data: unpad(header, payload)?,
                    flow_len: header.len,
                    end_stream: header.has(flags::END_STREAM),
                }
            }
            kind::HEADERS => {
                on_stream("HEADERS")?;
                let mut fragment = unpad(header, payload)?;
                let mut priority = None;
                if header.has(flags::PRIORITY) {
                    let (spec, rest) = fragment
                        .split_first_chunk::<5>()
                        .ok_or(FrameError::size("HEADERS", payload.len()))?;
                    // Not `priority()`: a stream depending on itself is a stream error, but
                    // the header block must still be decoded to keep HPACK in step, which is
                    // the connection's job. `Frame::Headers` hands the priority out as is.
                    priority = Some(parse_priority(spec));
                    fragment = rest;
                }
                Frame::Headers {
                    stream,
                    fragment,
                    end_stream: header.has(flags::END_STREAM),
                    end_headers: header.has(flags::END_HEADERS),
                    priority,
                }
            }
            kind::PRIORITY => {
                on_stream("PRIORITY")?;
                let spec: &[u8; 5] = payload.try_into().map_err(|_| FrameError {
                    stream: Some(stream),
                    ..FrameError::size("PRIORITY", payload.len())
                })?;
                Frame::Priority {
                    stream,
                    priority: priority(stream, spec)?,
                }
            }
            kind::RST_STREAM => {
                on_stream("RST_STREAM")?;
                Frame::RstStream {
                    stream,
                    code: ErrorCode(u32::from_be_bytes(word(payload, "RST_STREAM")?)),
                }
            }
            kind::SETTINGS => {
                on_connection("SETTINGS")?;
                if header.has(flags::ACK) {
                    if !payload.is_empty() {
                        return Err(FrameError::size("SETTINGS ACK", payload.len()));
                    }
                    Frame::SettingsAck
                } else if payload.len() % 6 != 0 {
                    return Err(FrameError::size("SETTINGS", payload.len()));
                } else {
                    Frame::Settings(Settings(payload))
                }
            }
            kind::PUSH_PROMISE => {
                on_stream("PUSH_PROMISE")?;
                Frame::PushPromise { stream }
            }
            kind::PING => {
                on_connection("PING")?;
                Frame::Ping {
                    ack: header.has(flags::ACK),
                    data: payload
                        .try_into()
                        .map_err(|_| FrameError::size("PING", payload.len()))?,
                }
            }
            kind::GOAWAY => {
                on_connection("GOAWAY")?;
                if payload.len() < 8 {
                    return Err(FrameError::size("GOAWAY", payload.len()));
                }
                let (ids, debug) = payload.split_at(8);
                Frame::GoAway {
                    last_stream: StreamId::new(u32::from_be_bytes(word(&ids[..4], "GOAWAY")?)),
                    code: ErrorCode(u32::from_be_bytes(word(&ids[4..], "GOAWAY")?)),
                    debug,
                }
            }
            kind::WINDOW_UPDATE => {
                let increment = u32::from_be_bytes(word(payload, "WINDOW_UPDATE")?) & 0x7fff_ffff;
                if increment == 0 {
                    // Section 6.9: an error of the stream it names, or of the connection.
                    return Err(FrameError {
                        stream: Some(stream).filter(|s| !s.is_zero()),
                        ..FrameError::protocol(Violation::ZeroIncrement)
                    });
                }
                Frame::WindowUpdate { stream, increment }
            }
            kind::CONTINUATION => {
                on_stream("CONTINUATION")?;
                Frame::Continuation {
                    stream,
                    fragment: payload,
                    end_headers: header.has(flags::END_HEADERS),
                }
            }
            other => Frame::Unknown { kind: other },
        })
    }
}

/// A four-byte payload.
fn word(payload: &[u8], name: &'static str) -> Result<[u8; 4], FrameError> {
    payload
        .try_into()
        .map_err(|_| FrameError::size(name, payload.len()))
}

/// The payload without its pad length byte and padding, when the frame is `PADDED`.
fn unpad(header: FrameHeader, payload: &[u8]) -> Result<&[u8], FrameError> {
    if !header.has(flags::PADDED) {
        return Ok(payload);
    }
    let (&pad, rest) = payload
        .split_first()
        .ok_or(FrameError::protocol(Violation::Padding))?;
    rest.len()
        .checked_sub(usize::from(pad))
        .map(|end| &rest[..end])
        .ok_or(FrameError::protocol(Violation::Padding))
}

/// A five-byte priority of `stream`; depending on itself is that stream's error.
fn priority(stream: StreamId, spec: &[u8; 5]) -> Result<Priority, FrameError> {
    let priority = parse_priority(spec);
    if priority.dependency == stream {
        return Err(FrameError {
            stream: Some(stream),
            ..FrameError::protocol(Violation::SelfDependency)
        });
    }
    Ok(priority)
}

/// A five-byte priority, unchecked.
fn parse_priority(spec: &[u8; 5]) -> Priority {
    let raw = u32::from_be_bytes([spec[0], spec[1], spec[2], spec[3]]);
    Priority {
        dependency: StreamId::new(raw),
        exclusive: raw & 0x8000_0000 != 0,
        weight: spec[4],
    }
}
