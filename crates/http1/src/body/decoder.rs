//! The body decoder: hands out body bytes in place, whatever the framing.

use super::chunked::Chunked;
use super::BodyKind;
use crate::{Error, Headers, Limits};

/// What one [`BodyDecoder::decode`] call found at the front of the buffer.
#[derive(Debug, Clone, Copy)]
pub enum Decoded<'a> {
    /// Body bytes, never empty. `data` is a slice of the buffer passed in;
    /// once done with it, the caller consumes `consumed` bytes (the framing
    /// before `data`, then `data` itself).
    Data {
        /// Body bytes, in place.
        data: &'a [u8],
        /// Bytes to drop from the front of the buffer.
        consumed: usize,
    },
    /// More bytes are needed. The first `consumed` bytes were framing, fully
    /// read, and may be dropped now (there may be none).
    Partial {
        /// Bytes to drop from the front of the buffer.
        consumed: usize,
    },
    /// The body is complete. The caller consumes `consumed` bytes (the final
    /// framing of a chunked body: last chunk, trailers, empty line); any
    /// bytes after them belong to the next message.
    Done {
        /// Bytes to drop from the front of the buffer.
        consumed: usize,
        /// The trailer fields of a chunked body; empty otherwise.
        trailers: Headers<'a>,
    },
}

/// Decodes one message body from the bytes after its head.
///
/// Sans-IO: each [`decode`](BodyDecoder::decode) looks at the front of the
/// caller's buffer and says how many bytes to drop. It never reads past the
/// end of the body, so a pipelined request or upgraded protocol that follows
/// stays in the buffer untouched.
#[derive(Debug)]
pub struct BodyDecoder {
    kind: BodyKind,
    state: State,
    delivered: u64,
}

#[derive(Debug)]
enum State {
    /// Bytes left of a length-delimited body; zero once it is done.
    Length(u64),
    /// Until the peer closes, bounded by the body limit (the only bound
    /// nothing else enforces).
    Close {
        limit: u64,
    },
    /// Chunked bodies finish inside [`Chunked`], which keeps the trailers.
    Chunked(Chunked),
    Done,
}

impl BodyDecoder {
    /// A decoder for a body framed as `kind`, enforcing `limits`.
    #[must_use]
    pub fn new(kind: BodyKind, limits: &Limits) -> Self {
        let state = match kind {
            BodyKind::Empty | BodyKind::Length(0) => State::Done,
            BodyKind::Length(n) => State::Length(n),
            BodyKind::Chunked => State::Chunked(Chunked::new(limits)),
            BodyKind::CloseDelimited => State::Close {
                limit: limits.max_body_len,
            },
        };
        BodyDecoder {
            kind,
            state,
            delivered: 0,
        }
    }

    /// Decodes from the front of `buf`: the bytes right after the head, less
    /// what earlier calls said to consume.
    ///
    /// Framing bytes are read once: those a call reports as consumed are not
    /// looked at again, so a chunk-size line may be split at any byte. Only
    /// a trailer section is held in the buffer until it is whole.
    ///
    /// # Errors
    ///
    /// Malformed chunked framing or trailers, or a body over
    /// [`Limits::max_body_len`].
    #[inline]
    pub fn decode<'a>(&'a mut self, buf: &'a [u8]) -> Result<Decoded<'a>, Error> {
        let decoded = match &mut self.state {
            State::Length(0) | State::Done => Decoded::Done {
                consumed: 0,
                trailers: Headers::new(&[], &[]),
            },
            State::Length(_) | State::Close { .. } if buf.is_empty() => {
                Decoded::Partial { consumed: 0 }
            }
            State::Length(remaining) => {
                let n = usize::try_from(*remaining).map_or(buf.len(), |r| r.min(buf.len()));
                *remaining -= n as u64;
                Decoded::Data {
                    data: &buf[..n],
                    consumed: n,
                }
            }
            State::Close { limit } => {
                if buf.len() as u64 > *limit - self.delivered {
                    return Err(Error::BodyTooLarge { limit: *limit });
                }
                Decoded::Data {
                    data: buf,
                    consumed: buf.len(),
                }
            }
            State::Chunked(chunked) => chunked.decode(buf)?,
        };
        if let Decoded::Data { data, .. } = decoded {
            self.delivered += data.len() as u64;
        }
        Ok(decoded)
    }

    /// The peer closed the connection. That ends a close-delimited body;
    /// any other body must be complete already.
    ///
    /// # Errors
    ///
    /// [`Error::UnexpectedEof`] when the body was cut short.
    pub fn finish_eof(&mut self) -> Result<(), Error> {
        if let State::Close { .. } = self.state {
            self.state = State::Done;
        }
        if self.is_done() {
            Ok(())
        } else {
            Err(Error::UnexpectedEof)
        }
    }

    /// Whether the whole body has been decoded.
    #[must_use]
    pub fn is_done(&self) -> bool {
        match &self.state {
            State::Done | State::Length(0) => true,
            State::Chunked(chunked) => chunked.is_done(),
            State::Length(_) | State::Close { .. } => false,
        }
    }

    /// How the body is framed.
    #[must_use]
    pub fn kind(&self) -> BodyKind {
        self.kind
    }

    /// Body bytes delivered so far (framing excluded).
    #[must_use]
    pub fn delivered(&self) -> u64 {
        self.delivered
    }
}
