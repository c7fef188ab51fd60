//! The frame header (RFC 6455 section 5.2): parsing and writing.

use ringwire_wire::Status;

use crate::error::{EncodeError, Error};

/// Longest header: 2 bytes, a 64-bit length, a mask key.
pub const MAX_HEADER_LEN: usize = 14;
/// Longest control frame payload (section 5.5).
pub const MAX_CONTROL_PAYLOAD: usize = 125;

/// What a frame carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum OpCode {
    /// The next fragment of a message.
    Continuation,
    /// The first frame of a UTF-8 text message.
    Text,
    /// The first frame of a binary message.
    Binary,
    /// Close (control).
    Close,
    /// Ping (control).
    Ping,
    /// Pong (control).
    Pong,
}

impl OpCode {
    /// Decodes the low 4 bits of the first header byte.
    #[inline]
    pub fn from_u8(op: u8) -> Result<Self, Error> {
        // A table, not a `match`: a jump table's indirect branch mispredicts when data frames
        // and continuations alternate.
        const TABLE: [Option<OpCode>; 16] = {
            let mut table = [None; 16];
            table[0x0] = Some(OpCode::Continuation);
            table[0x1] = Some(OpCode::Text);
            table[0x2] = Some(OpCode::Binary);
            table[0x8] = Some(OpCode::Close);
            table[0x9] = Some(OpCode::Ping);
            table[0xa] = Some(OpCode::Pong);
            table
        };
        match TABLE.get(usize::from(op)) {
            Some(&Some(opcode)) => Ok(opcode),
            _ => Err(Error::ReservedOpcode(op)),
        }
    }

    /// The wire value.
    #[must_use]
    pub fn as_u8(self) -> u8 {
        match self {
            OpCode::Continuation => 0x0,
            OpCode::Text => 0x1,
            OpCode::Binary => 0x2,
            OpCode::Close => 0x8,
            OpCode::Ping => 0x9,
            OpCode::Pong => 0xa,
        }
    }

    /// Close, ping and pong.
    #[must_use]
    pub fn is_control(self) -> bool {
        matches!(self, OpCode::Close | OpCode::Ping | OpCode::Pong)
    }
}

/// A decoded frame header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FrameHeader {
    /// Last frame of its message.
    pub fin: bool,
    /// RSV1: with permessage-deflate, "this message is compressed" (first frame only).
    pub rsv1: bool,
    /// What the frame carries.
    pub opcode: OpCode,
    /// The masking key, present on every client frame and on no server frame.
    pub mask: Option<[u8; 4]>,
    /// Payload length in bytes.
    pub payload_len: u64,
}

impl FrameHeader {
    /// Parses a header from the front of `buf`: `Complete(header, header_len)`, or `Partial`
    /// with the header length once the first two bytes say it. Checks what the header alone
    /// can break: RSV2/RSV3, the opcode, the 64-bit length's high bit, and the control frame
    /// rules. The caller checks RSV1, masking and limits, which depend on the connection.
    #[inline]
    pub fn parse(buf: &[u8]) -> Result<Status<FrameHeader>, Error> {
        let [b0, b1, ..] = *buf else {
            return Ok(Status::Partial { at_least: 2 });
        };
        if b0 & 0x30 != 0 {
            return Err(Error::ReservedBits);
        }
        let opcode = OpCode::from_u8(b0 & 0x0f)?;
        let fin = b0 & 0x80 != 0;
        let masked = b1 & 0x80 != 0;
        let (len_len, short) = match b1 & 0x7f {
            126 => (2, None),
            127 => (8, None),
            n => (0, Some(u64::from(n))),
        };
        if opcode.is_control() {
            if !fin {
                return Err(Error::FragmentedControlFrame);
            }
            if short.is_none() {
                return Err(Error::ControlFrameTooLong);
            }
        }
        let header_len = 2 + len_len + if masked { 4 } else { 0 };
        if buf.len() < header_len {
            return Ok(Status::Partial {
                at_least: header_len,
            });
        }
        let payload_len = match len_len {
            0 => short.unwrap_or_default(),
            2 => u64::from(u16::from_be_bytes([buf[2], buf[3]])),
            _ => {
                let mut len = [0; 8];
                len.copy_from_slice(&buf[2..10]);
                let len = u64::from_be_bytes(len);
                if len >> 63 != 0 {
                    return Err(Error::InvalidLength);
                }
                len
            }
        };
        let mask = masked.then(|| {
            let k = &buf[header_len - 4..header_len];
            [k[0], k[1], k[2], k[3]]
        });
        let header = FrameHeader {
            fin,
            rsv1: b0 & 0x40 != 0,
            opcode,
            mask,
            payload_len,
        };
        Ok(Status::Complete(header, header_len))
    }

    /// Bytes [`write`](FrameHeader::write) produces: 2 to 14.
    #[must_use]
    pub fn encoded_len(&self) -> usize {
        let len = match self.payload_len {
            0..=125 => 2,
            126..=0xffff => 4,
            _ => 10,
        };
        len + if self.mask.is_some() { 4 } else { 0 }
    }

    /// Writes the header with the shortest length encoding; returns its length.
    pub fn write(&self, out: &mut [u8]) -> Result<usize, EncodeError> {
        let n = self.encoded_len();
        let Some(out) = out.get_mut(..n) else {
            return Err(EncodeError::BufferFull { needed: n });
        };
        out[0] = u8::from(self.fin) << 7 | u8::from(self.rsv1) << 6 | self.opcode.as_u8();
        let mask_bit = if self.mask.is_some() { 0x80 } else { 0 };
        let at = match self.payload_len {
            len @ 0..=125 => {
                out[1] = mask_bit | len as u8;
                2
            }
            len @ 126..=0xffff => {
                out[1] = mask_bit | 126;
                out[2..4].copy_from_slice(&(len as u16).to_be_bytes());
                4
            }
            len => {
                out[1] = mask_bit | 127;
                out[2..10].copy_from_slice(&len.to_be_bytes());
                10
            }
        };
        if let Some(key) = self.mask {
            out[at..at + 4].copy_from_slice(&key);
        }
        Ok(n)
    }
}
