//! Frames written into a send buffer.

use super::{flags, kind, StreamId, HEADER_LEN};
use crate::ErrorCode;

/// Appends a frame header.
pub fn encode_header(out: &mut Vec<u8>, len: usize, kind: u8, flags: u8, stream: StreamId) {
    out.extend_from_slice(&header(len, kind, flags, stream));
}

/// A frame header.
pub fn header(len: usize, kind: u8, flags: u8, stream: StreamId) -> [u8; HEADER_LEN] {
    debug_assert!(len < 1 << 24, "frame length {len} over 24 bits");
    let len = (len as u32).to_be_bytes();
    let id = stream.get().to_be_bytes();
    [
        len[1], len[2], len[3], kind, flags, id[0], id[1], id[2], id[3],
    ]
}

/// Appends a `SETTINGS` frame with `params` (identifier, value).
pub fn encode_settings(out: &mut Vec<u8>, params: &[(u16, u32)]) {
    encode_header(out, params.len() * 6, kind::SETTINGS, 0, StreamId::ZERO);
    for (id, value) in params {
        out.extend_from_slice(&id.to_be_bytes());
        out.extend_from_slice(&value.to_be_bytes());
    }
}

/// Appends the acknowledgement of the peer's `SETTINGS`.
pub fn encode_settings_ack(out: &mut Vec<u8>) {
    encode_header(out, 0, kind::SETTINGS, flags::ACK, StreamId::ZERO);
}

/// Appends a `PING` (or its acknowledgement) carrying `data`.
pub fn encode_ping(out: &mut Vec<u8>, ack: bool, data: [u8; 8]) {
    let flags = if ack { flags::ACK } else { 0 };
    encode_header(out, 8, kind::PING, flags, StreamId::ZERO);
    out.extend_from_slice(&data);
}

/// Appends a `GOAWAY`.
pub fn encode_goaway(out: &mut Vec<u8>, last_stream: StreamId, code: ErrorCode, debug: &[u8]) {
    encode_header(out, 8 + debug.len(), kind::GOAWAY, 0, StreamId::ZERO);
    out.extend_from_slice(&last_stream.get().to_be_bytes());
    out.extend_from_slice(&code.0.to_be_bytes());
    out.extend_from_slice(debug);
}

/// Appends a `RST_STREAM`.
pub fn encode_rst_stream(out: &mut Vec<u8>, stream: StreamId, code: ErrorCode) {
    encode_header(out, 4, kind::RST_STREAM, 0, stream);
    out.extend_from_slice(&code.0.to_be_bytes());
}

/// Appends a `WINDOW_UPDATE` (1 to 2^31 - 1).
pub fn encode_window_update(out: &mut Vec<u8>, stream: StreamId, increment: u32) {
    debug_assert!((1..1 << 31).contains(&increment));
    encode_header(out, 4, kind::WINDOW_UPDATE, 0, stream);
    out.extend_from_slice(&increment.to_be_bytes());
}

/// Appends one `DATA` frame carrying `data` (at most the peer's maximum frame size).
pub fn encode_data(out: &mut Vec<u8>, stream: StreamId, data: &[u8], end_stream: bool) {
    let flags = if end_stream { flags::END_STREAM } else { 0 };
    encode_header(out, data.len(), kind::DATA, flags, stream);
    out.extend_from_slice(data);
}

/// Appends a header `block` as a `HEADERS` frame and as many `CONTINUATION`s as frames of
/// `max_frame_len` need.
pub fn encode_headers(
    out: &mut Vec<u8>,
    stream: StreamId,
    block: &[u8],
    end_stream: bool,
    max_frame_len: usize,
) {
    let (mut kind, mut flags) = (
        kind::HEADERS,
        if end_stream { flags::END_STREAM } else { 0 },
    );
    let mut rest = block;
    loop {
        let (piece, after) = rest.split_at(rest.len().min(max_frame_len.max(1)));
        if after.is_empty() {
            flags |= flags::END_HEADERS;
        }
        encode_header(out, piece.len(), kind, flags, stream);
        out.extend_from_slice(piece);
        if after.is_empty() {
            return;
        }
        (kind, flags, rest) = (kind::CONTINUATION, 0, after);
    }
}
