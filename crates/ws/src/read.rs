//! The frame reader: frames from the front of the receive ring's readable span, unmasked in
//! place; whole messages out.

use std::cell::Cell;
use std::ops::Range;

use ringwire_wire::Status;

use crate::close::CloseFrame;
use crate::deflate::{DeflateParams, Inflater};
use crate::error::Error;
use crate::frame::{FrameHeader, OpCode};
use crate::limits::Limits;
use crate::mask::apply_mask;
use crate::message::Message;
use crate::utf8::Utf8Stream;
use crate::Role;

/// Reads frames and assembles messages from a contiguous span of received bytes.
///
/// Call [`read`](Reader::read) with the ring's readable span, mutable (masked payloads are
/// unmasked where they lie). It answers like every ringwire parser:
///
/// - `Complete(Some(message), n)`: a message or control frame; consume `n` bytes after use.
/// - `Complete(None, n)`: `n` bytes of fragments were copied into the reader's buffer;
///   consume them and call again.
/// - `Partial { at_least }`: buffer at least that many bytes (a whole frame, so a large frame
///   costs one ring growth, not a round trip per read), then call again with the same bytes
///   plus more. What arrived is already unmasked and, for text, validated: fails fast, never
///   revisits.
///
/// An unfragmented, uncompressed message is returned as a slice of the span (zero-copy).
/// Fragments and compressed messages go to buffers the reader keeps and reuses.
///
/// After an error the reader is done: every later call returns the same error.
#[derive(Debug)]
pub struct Reader {
    role: Role,
    limits: Limits,
    inflater: Option<Inflater>,
    /// The frame whose header has been parsed but whose payload is not all here.
    frame: Option<InFrame>,
    /// The fragmented or compressed message being assembled.
    message: Option<Assembly>,
    /// Assembled text: pieces are pushed as they are validated, so it is never rescanned.
    text: String,
    /// Assembled binary payload.
    binary: Vec<u8>,
    /// Inflated bytes of a text message, on their way through validation into `text`.
    scratch: Vec<u8>,
    /// Validates an unfragmented text frame while its payload arrives.
    single_utf8: Utf8Stream,
    /// Set by the first error; a `Cell` so the last step, which borrows `self` for the
    /// message it returns, can record one too.
    failed: Cell<Option<Error>>,
}

#[derive(Debug, Clone, Copy)]
struct InFrame {
    header: FrameHeader,
    header_len: usize,
    /// Payload bytes already unmasked (and absorbed or validated).
    done: usize,
    kind: Kind,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Control,
    /// A whole message in one uncompressed frame: returned in place.
    Single {
        text: bool,
    },
    /// Part of a message assembled in the reader's buffers.
    Part,
}

#[derive(Debug)]
struct Assembly {
    text: bool,
    compressed: bool,
    /// Compressed payload bytes seen: none means an empty message some peers send without
    /// even the empty block, which must not reach (and desynchronise) the inflater.
    compressed_len: u64,
    utf8: Utf8Stream,
}

/// What one frame came to.
enum Step {
    Partial {
        at_least: usize,
    },
    /// A fragment, absorbed; the frame's total length.
    Absorbed(usize),
    Ready(Ready, usize),
}

enum Ready {
    Single { text: bool, payload: Range<usize> },
    Assembled { text: bool },
    Control(OpCode, Range<usize>),
}

impl Reader {
    /// A reader for an endpoint in `role` (a server reads masked client frames), with
    /// permessage-deflate if it was negotiated.
    #[must_use]
    pub fn new(role: Role, limits: Limits, deflate: Option<&DeflateParams>) -> Self {
        Self {
            role,
            limits,
            inflater: deflate.map(|p| p.inflater(role)),
            frame: None,
            message: None,
            text: String::new(),
            binary: Vec::new(),
            scratch: Vec::new(),
            single_utf8: Utf8Stream::default(),
            failed: Cell::new(None),
        }
    }

    /// The limits this reader enforces.
    #[must_use]
    pub fn limits(&self) -> &Limits {
        &self.limits
    }

    /// Reads from the front of `buf`; see the type's documentation for the contract.
    #[inline]
    pub fn read<'a>(&'a mut self, buf: &'a mut [u8]) -> Result<Status<Option<Message<'a>>>, Error> {
        if let Some(err) = self.failed.get() {
            return Err(err);
        }
        let mut pos = 0;
        loop {
            let step = match self.step(&mut buf[pos..]) {
                Ok(step) => step,
                Err(err) => return Err(self.fail(err)),
            };
            match step {
                Step::Partial { at_least } if pos == 0 => return Ok(Status::Partial { at_least }),
                Step::Partial { .. } => return Ok(Status::Complete(None, pos)),
                Step::Absorbed(n) => pos += n,
                Step::Ready(ready, n) => {
                    let frame = &buf[pos..pos + n];
                    let msg = self
                        .message_of(ready, frame)
                        .inspect_err(|e| self.failed.set(Some(*e)))?;
                    return Ok(Status::Complete(Some(msg), pos + n));
                }
            }
        }
    }

    fn fail(&self, err: Error) -> Error {
        self.failed.set(Some(err));
        err
    }

    #[inline]
    fn step(&mut self, buf: &mut [u8]) -> Result<Step, Error> {
        if let Some(step) = self.whole_short_frame(buf) {
            return step;
        }
        let frame = match self.frame {
            Some(frame) => frame,
            None => match FrameHeader::parse(buf)? {
                Status::Partial { at_least } => return Ok(Step::Partial { at_least }),
                Status::Complete(header, header_len) => {
                    let kind = self.begin(&header)?;
                    InFrame {
                        header,
                        header_len,
                        done: 0,
                        kind,
                    }
                }
            },
        };
        // `begin` bounded the payload by the frame limit, which fits in memory.
        let payload_len = usize::try_from(frame.header.payload_len).unwrap_or(usize::MAX);
        let total = frame.header_len.saturating_add(payload_len);
        let here = buf.len().min(total).saturating_sub(frame.header_len);
        if here > frame.done {
            let new = &mut buf[frame.header_len + frame.done..frame.header_len + here];
            if let Some(key) = frame.header.mask {
                apply_mask(new, key, frame.done);
            }
            match frame.kind {
                Kind::Part => self.absorb(new)?,
                // Validated as it arrives only while incomplete; once whole it is validated
                // (again, for the part seen) to hand out `&str` without `unsafe`.
                Kind::Single { text: true } if here < payload_len => {
                    self.single_utf8
                        .feed(new, |_| ())
                        .map_err(|_| Error::InvalidUtf8)?;
                }
                Kind::Single { .. } | Kind::Control => {}
            }
        }
        if here < payload_len {
            self.frame = Some(InFrame {
                done: here,
                ..frame
            });
            return Ok(Step::Partial { at_least: total });
        }
        self.frame = None;
        let payload = frame.header_len..total;
        Ok(match frame.kind {
            Kind::Control => Step::Ready(Ready::Control(frame.header.opcode, payload), total),
            Kind::Single { text } => Step::Ready(Ready::Single { text, payload }, total),
            Kind::Part if frame.header.fin => {
                let text = self.finish_message()?;
                Step::Ready(Ready::Assembled { text }, total)
            }
            Kind::Part => Step::Absorbed(total),
        })
    }

    /// The common cases in one go, for a frame with a 7- or 16-bit length that is all here and
    /// masked as the role expects: an unfragmented, uncompressed text or binary frame between
    /// messages, or a continuation of an uncompressed message. Everything else (including every
    /// error the header could cause) takes the general path, which accepts the same frames.
    #[inline]
    fn whole_short_frame(&mut self, buf: &mut [u8]) -> Option<Result<Step, Error>> {
        let (b0, header_len, len) = self.short_header(buf)?;
        let total = header_len + len;
        let Limits {
            max_frame_len,
            max_message_len,
        } = self.limits;
        match b0 {
            0x81 | 0x82 => {
                let (text, payload) = self.single_frame(buf, b0, header_len, len)?;
                Some(Ok(Step::Ready(Ready::Single { text, payload }, total)))
            }
            0x00 | 0x80 => {
                let held = (self.text.len() + self.binary.len()) as u64;
                if self.message.as_ref().is_none_or(|m| m.compressed)
                    || len as u64 > max_frame_len
                    || held + len as u64 > max_message_len
                {
                    return None;
                }
                self.unmask_whole(buf, header_len, len);
                let absorbed = self.absorb(&buf[header_len..total]);
                Some(absorbed.and_then(|()| {
                    Ok(if b0 == 0x80 {
                        let text = self.finish_message()?;
                        Step::Ready(Ready::Assembled { text }, total)
                    } else {
                        Step::Absorbed(total)
                    })
                }))
            }
            _ => None,
        }
    }

    /// The commonest frame, for a connection's read loop to take before [`read`](Self::read):
    /// a whole, unfragmented, uncompressed text or binary frame with a 7- or 16-bit length,
    /// unmasked in place. Whether it is text (not yet validated) and where its payload lies
    /// (it ends the frame); nothing is borrowed, so the caller can fall back to `read`.
    #[cfg(any(feature = "blocking", feature = "tokio"))]
    #[inline(always)]
    pub(crate) fn whole_single_frame(&mut self, buf: &mut [u8]) -> Option<(bool, Range<usize>)> {
        if self.failed.get().is_some() {
            return None;
        }
        match self.short_header(buf)? {
            (b0 @ (0x81 | 0x82), header_len, len) => self.single_frame(buf, b0, header_len, len),
            _ => None,
        }
    }

    /// The first case of [`whole_short_frame`](Self::whole_short_frame), for a header
    /// [`short_header`](Self::short_header) accepted: an unfragmented, uncompressed data frame
    /// between messages, within the limits, unmasked.
    #[inline(always)]
    fn single_frame(
        &mut self,
        buf: &mut [u8],
        b0: u8,
        header_len: usize,
        len: usize,
    ) -> Option<(bool, Range<usize>)> {
        let limit = self.limits.max_frame_len.min(self.limits.max_message_len);
        if self.message.is_some() || len as u64 > limit {
            return None;
        }
        self.unmask_whole(buf, header_len, len);
        Some((b0 == 0x81, header_len..header_len + len))
    }

    /// Records a text payload that is not UTF-8, found by the caller of
    /// [`whole_single_frame`](Self::whole_single_frame): the reader fails from then on.
    #[cfg(any(feature = "blocking", feature = "tokio"))]
    pub(crate) fn fail_utf8(&self) -> Error {
        self.fail(Error::InvalidUtf8)
    }

    /// A whole frame with a 7- or 16-bit length, masked as the role expects, and no frame
    /// in progress: its first byte, header length and payload length.
    #[inline]
    fn short_header(&self, buf: &[u8]) -> Option<(u8, usize, usize)> {
        let [b0, b1, ..] = *buf else {
            return None;
        };
        let masked = self.role == Role::Server;
        if self.frame.is_some() || (b1 & 0x80 != 0) != masked {
            return None;
        }
        let (len, len_len) = match b1 & 0x7f {
            127 => return None,
            126 => (
                usize::from(u16::from_be_bytes([*buf.get(2)?, *buf.get(3)?])),
                2,
            ),
            short => (usize::from(short), 0),
        };
        let header_len = 2 + len_len + if masked { 4 } else { 0 };
        (buf.len() >= header_len + len).then_some((b0, header_len, len))
    }

    /// Unmasks, where it lies, the payload of a frame [`short_header`](Self::short_header)
    /// accepted.
    #[inline(always)]
    fn unmask_whole(&self, buf: &mut [u8], header_len: usize, len: usize) {
        if self.role == Role::Server {
            let (header, payload) = buf[..header_len + len].split_at_mut(header_len);
            let key = [
                header[header_len - 4],
                header[header_len - 3],
                header[header_len - 2],
                header[header_len - 1],
            ];
            apply_mask(payload, key, 0);
        }
    }

    /// Checks a new frame's header against the connection and the message in progress.
    #[inline]
    fn begin(&mut self, header: &FrameHeader) -> Result<Kind, Error> {
        match (self.role, header.mask.is_some()) {
            (Role::Server, false) => return Err(Error::UnmaskedFrame),
            (Role::Client, true) => return Err(Error::MaskedFrame),
            _ => {}
        }
        let may_compress =
            self.inflater.is_some() && matches!(header.opcode, OpCode::Text | OpCode::Binary);
        if header.rsv1 && !may_compress {
            return Err(Error::ReservedBits);
        }
        if header.payload_len > self.limits.max_frame_len {
            return Err(Error::FrameTooLarge {
                limit: self.limits.max_frame_len,
            });
        }
        let too_large = Error::MessageTooLarge {
            limit: self.limits.max_message_len,
        };
        // Tests, not a `match`: its jump table mispredicts when data frames and continuations
        // alternate.
        if header.opcode.is_control() {
            return Ok(Kind::Control);
        }
        if header.opcode == OpCode::Continuation {
            let Some(message) = &self.message else {
                return Err(Error::UnexpectedContinuation);
            };
            let held = (self.text.len() + self.binary.len()) as u64;
            if !message.compressed
                && held.saturating_add(header.payload_len) > self.limits.max_message_len
            {
                return Err(too_large);
            }
            return Ok(Kind::Part);
        }
        // Text or binary: a new message.
        if self.message.is_some() {
            return Err(Error::ExpectedContinuation);
        }
        let text = header.opcode == OpCode::Text;
        if header.payload_len > self.limits.max_message_len && !header.rsv1 {
            return Err(too_large);
        }
        if header.fin && !header.rsv1 {
            self.single_utf8.reset();
            return Ok(Kind::Single { text });
        }
        self.text.clear();
        self.binary.clear();
        self.message = Some(Assembly {
            text,
            compressed: header.rsv1,
            compressed_len: 0,
            utf8: Utf8Stream::default(),
        });
        Ok(Kind::Part)
    }

    /// Takes unmasked payload bytes of the message being assembled.
    #[inline]
    fn absorb(&mut self, bytes: &[u8]) -> Result<(), Error> {
        let Some(message) = &mut self.message else {
            return Err(Error::UnexpectedContinuation);
        };
        let limit = self.limits.max_message_len;
        if message.compressed {
            message.compressed_len += bytes.len() as u64;
        }
        match (message.compressed, message.text) {
            (false, false) => self.binary.extend_from_slice(bytes),
            (false, true) => {
                let text = &mut self.text;
                message
                    .utf8
                    .feed(bytes, |s| text.push_str(s))
                    .map_err(|_| Error::InvalidUtf8)?;
            }
            (true, false) => {
                if let Some(inflater) = &mut self.inflater {
                    inflater.inflate(bytes, &mut self.binary, limit, limit)?;
                }
            }
            (true, true) => {
                if let Some(inflater) = &mut self.inflater {
                    self.scratch.clear();
                    let room = limit.saturating_sub(self.text.len() as u64);
                    let inflated = inflater.inflate(bytes, &mut self.scratch, room, limit);
                    // What inflated before a failure is validated first, so the error does not
                    // depend on how the compressed bytes were split into reads.
                    let text = &mut self.text;
                    message
                        .utf8
                        .feed(&self.scratch, |s| text.push_str(s))
                        .map_err(|_| Error::InvalidUtf8)?;
                    inflated?;
                }
            }
        }
        Ok(())
    }

    /// Ends the assembled message; returns whether it is text.
    fn finish_message(&mut self) -> Result<bool, Error> {
        let Some(mut message) = self.message.take() else {
            return Err(Error::UnexpectedContinuation);
        };
        let limit = self.limits.max_message_len;
        if message.compressed && message.compressed_len > 0 {
            if let Some(inflater) = &mut self.inflater {
                if message.text {
                    self.scratch.clear();
                    let room = limit.saturating_sub(self.text.len() as u64);
                    let inflated = inflater.finish(&mut self.scratch, room, limit);
                    let text = &mut self.text;
                    message
                        .utf8
                        .feed(&self.scratch, |s| text.push_str(s))
                        .map_err(|_| Error::InvalidUtf8)?;
                    inflated?;
                } else {
                    inflater.finish(&mut self.binary, limit, limit)?;
                }
            }
        }
        message.utf8.finish().map_err(|_| Error::InvalidUtf8)?;
        Ok(message.text)
    }

    #[inline]
    fn message_of<'a>(&'a self, ready: Ready, frame: &'a [u8]) -> Result<Message<'a>, Error> {
        Ok(match ready {
            Ready::Single {
                text: false,
                payload,
            } => Message::Binary(&frame[payload]),
            Ready::Single {
                text: true,
                payload,
            } => Message::Text(
                simdutf8::basic::from_utf8(&frame[payload]).map_err(|_| Error::InvalidUtf8)?,
            ),
            Ready::Assembled { text: true } => Message::Text(&self.text),
            Ready::Assembled { text: false } => Message::Binary(&self.binary),
            Ready::Control(OpCode::Ping, payload) => Message::Ping(&frame[payload]),
            Ready::Control(OpCode::Pong, payload) => Message::Pong(&frame[payload]),
            Ready::Control(_, payload) => Message::Close(CloseFrame::parse(&frame[payload])?),
        })
    }
}
