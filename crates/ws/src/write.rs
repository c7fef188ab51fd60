//! The frame writer: messages into a caller's buffer (a send-ring reservation).

use std::num::NonZeroUsize;

use crate::close::CloseFrame;
use crate::deflate::{DeflateParams, Deflater};
use crate::error::EncodeError;
use crate::frame::{FrameHeader, OpCode, MAX_CONTROL_PAYLOAD};
use crate::mask::apply_mask;
use crate::message::Message;
use crate::Role;

/// Fresh masking keys: wyrand, seeded from the OS. Keys must be unpredictable to scripts in
/// the client (RFC 6455 section 10.3), not secret, so a fast generator with a secure seed is
/// enough; one 64-bit multiply per frame.
#[derive(Debug, Clone)]
struct MaskKeys(u64);

impl MaskKeys {
    fn next(&mut self) -> [u8; 4] {
        self.0 = self.0.wrapping_add(0xa076_1d64_78bd_642f);
        let t = u128::from(self.0) * u128::from(self.0 ^ 0xe703_7ed1_a0b4_28db);
        (((t >> 64) as u64 ^ t as u64) as u32).to_ne_bytes()
    }
}

/// Writes frames for one endpoint: unmasked as a server, masked with a fresh key per frame as
/// a client; compressed when permessage-deflate was negotiated; data messages split into
/// frames of at most [`fragment_size`](Writer::set_fragment_size) bytes if set.
#[derive(Debug)]
pub struct Writer {
    role: Role,
    keys: MaskKeys,
    deflater: Option<Deflater>,
    fragment_size: Option<NonZeroUsize>,
    /// Reused output of the compressor.
    compressed: Vec<u8>,
}

impl Writer {
    /// A server's writer.
    #[must_use]
    pub fn server() -> Self {
        Self::with_seed(Role::Server, 0)
    }

    /// A client's writer, its mask generator seeded by the OS.
    ///
    /// # Errors
    ///
    /// The OS random source failed: there is no safe fallback for mask keys.
    pub fn client() -> Result<Self, getrandom::Error> {
        Ok(Self::with_seed(Role::Client, getrandom::u64()?))
    }

    /// A writer for `role`; for a client, [`client`](Writer::client) seeds securely.
    ///
    /// # Errors
    ///
    /// As [`client`](Writer::client).
    pub fn new(role: Role) -> Result<Self, getrandom::Error> {
        match role {
            Role::Server => Ok(Self::server()),
            Role::Client => Self::client(),
        }
    }

    fn with_seed(role: Role, seed: u64) -> Self {
        Self {
            role,
            keys: MaskKeys(seed),
            deflater: None,
            fragment_size: None,
            compressed: Vec::new(),
        }
    }

    /// Compresses every data message from now on with the negotiated parameters.
    #[must_use]
    pub fn with_deflate(mut self, params: &DeflateParams, level: u32) -> Self {
        self.deflater = Some(params.deflater(self.role, level));
        self
    }

    /// Splits data messages into frames of at most `size` payload bytes (`None`: one frame).
    pub fn set_fragment_size(&mut self, size: Option<NonZeroUsize>) {
        self.fragment_size = size;
    }

    /// The fragment size set, if any.
    #[must_use]
    pub fn fragment_size(&self) -> Option<NonZeroUsize> {
        self.fragment_size
    }

    /// The endpoint this writer frames for.
    #[must_use]
    pub fn role(&self) -> Role {
        self.role
    }

    /// A header for a frame of `payload_len` bytes, with a fresh mask key when a client.
    ///
    /// For sending a large payload from the caller's own memory (`writev`): write the header
    /// with [`FrameHeader::write`], and, as a client, mask the payload in place first with
    /// [`apply_mask`](crate::apply_mask)`(payload, key, 0)`.
    pub fn header(&mut self, opcode: OpCode, fin: bool, payload_len: u64) -> FrameHeader {
        FrameHeader {
            fin,
            rsv1: false,
            opcode,
            mask: (self.role == Role::Client).then(|| self.keys.next()),
            payload_len,
        }
    }

    /// An upper bound on what [`write`](Writer::write) needs for `message` (exact without
    /// compression).
    #[must_use]
    pub fn max_encoded_len(&self, message: &Message<'_>) -> usize {
        let (len, control) = match message {
            Message::Text(t) => (t.len(), false),
            Message::Binary(b) => (b.len(), false),
            Message::Ping(p) | Message::Pong(p) => (p.len(), true),
            Message::Close(c) => (c.as_ref().map_or(0, CloseFrame::payload_len), true),
        };
        if control {
            return self.frames_len(len, None);
        }
        let len = if self.deflater.is_some() {
            Deflater::bound(len)
        } else {
            len
        };
        self.frames_len(len, self.fragment_size)
    }

    /// Writes `message` into `out`; returns the bytes written.
    ///
    /// # Errors
    ///
    /// [`BufferFull`](EncodeError::BufferFull) with [`max_encoded_len`](Writer::max_encoded_len)
    /// (nothing was written and no state changed: retry with a larger buffer);
    /// [`ControlFrameTooLong`](EncodeError::ControlFrameTooLong);
    /// [`InvalidCloseCode`](EncodeError::InvalidCloseCode).
    pub fn write(&mut self, message: &Message<'_>, out: &mut [u8]) -> Result<usize, EncodeError> {
        let needed = self.max_encoded_len(message);
        if out.len() < needed {
            return Err(EncodeError::BufferFull { needed });
        }
        let (opcode, data) = match *message {
            Message::Text(t) => (OpCode::Text, t.as_bytes()),
            Message::Binary(b) => (OpCode::Binary, b),
            Message::Ping(p) => return self.control(OpCode::Ping, p, out),
            Message::Pong(p) => return self.control(OpCode::Pong, p, out),
            Message::Close(None) => return self.control(OpCode::Close, &[], out),
            Message::Close(Some(close)) => {
                if !close.code.is_valid_on_wire() {
                    return Err(EncodeError::InvalidCloseCode(close.code.0));
                }
                let mut payload = [0; MAX_CONTROL_PAYLOAD];
                let len = close.payload_len();
                if len > MAX_CONTROL_PAYLOAD {
                    return Err(EncodeError::ControlFrameTooLong);
                }
                payload[..2].copy_from_slice(&close.code.0.to_be_bytes());
                payload[2..len].copy_from_slice(close.reason.as_bytes());
                return self.control(OpCode::Close, &payload[..len], out);
            }
        };
        let mut compressed = std::mem::take(&mut self.compressed);
        let payload = match &mut self.deflater {
            Some(deflater) => {
                deflater.compress(data, &mut compressed);
                &compressed[..]
            }
            None => data,
        };
        let n = self.data_frames(opcode, payload, out);
        self.compressed = compressed;
        Ok(n)
    }

    fn control(
        &mut self,
        opcode: OpCode,
        payload: &[u8],
        out: &mut [u8],
    ) -> Result<usize, EncodeError> {
        if payload.len() > MAX_CONTROL_PAYLOAD {
            return Err(EncodeError::ControlFrameTooLong);
        }
        let header = self.header(opcode, true, payload.len() as u64);
        Ok(put_frame(&header, payload, out))
    }

    /// Frames a data payload (already compressed if it is to be); `out` is large enough.
    fn data_frames(&mut self, opcode: OpCode, payload: &[u8], out: &mut [u8]) -> usize {
        let size = self.fragment_size.map_or(usize::MAX, NonZeroUsize::get);
        let compressed = self.deflater.is_some();
        let mut at = 0;
        let mut rest = payload;
        let mut first = true;
        loop {
            let (chunk, tail) = rest.split_at(rest.len().min(size));
            let opcode = if first { opcode } else { OpCode::Continuation };
            let mut header = self.header(opcode, tail.is_empty(), chunk.len() as u64);
            // RFC 7692 section 6: RSV1 marks the first frame of a compressed message only.
            header.rsv1 = first && compressed;
            at += put_frame(&header, chunk, &mut out[at..]);
            first = false;
            rest = tail;
            if rest.is_empty() {
                return at;
            }
        }
    }

    /// Bytes of `len` payload bytes framed in pieces of at most `size`.
    fn frames_len(&self, len: usize, size: Option<NonZeroUsize>) -> usize {
        let mask = if self.role == Role::Client { 4 } else { 0 };
        let header = |n: usize| {
            mask + match n {
                0..=125 => 2,
                126..=0xffff => 4,
                _ => 10,
            }
        };
        let size = size.map_or(usize::MAX, NonZeroUsize::get).min(len.max(1));
        let (full, last) = (len / size, len % size);
        let mut total = len + full * header(size);
        if last > 0 || len == 0 {
            total += header(last);
        }
        total
    }
}

/// Writes a header and its payload, masking the payload's copy if the header has a key.
/// `out` is large enough (checked by the caller).
fn put_frame(header: &FrameHeader, payload: &[u8], out: &mut [u8]) -> usize {
    let n = header.encoded_len();
    // `write` cannot fail: the caller reserved `encoded_len` + payload bytes.
    let _ = header.write(&mut out[..n]);
    let body = &mut out[n..n + payload.len()];
    body.copy_from_slice(payload);
    if let Some(key) = header.mask {
        apply_mask(body, key, 0);
    }
    n + payload.len()
}
