//! Chunked transfer coding (RFC 9112 section 7.1), read a byte at a time.
//!
//! The framing is a state machine fed one byte per step, so a chunk-size
//! line may be split anywhere and no byte is read twice: whatever a call
//! got through is reported consumed. The common case, a bare size line that
//! has fully arrived, skips the per-byte dispatch; chunk data is handed out
//! as whole slices, one step per call however long the chunk.

use super::trailers::Trailers;
use super::Decoded;
use crate::chars::{hex_digit, is_token, is_value_byte};
use crate::{Error, Headers, Limits};

/// Sixteen hex digits fill 64 bits; the rest allows zero padding while still
/// bounding the size.
const MAX_SIZE_DIGITS: u8 = 32;

/// A place in the grammar:
///
/// ```text
/// chunk     = chunk-size [ chunk-ext ] CRLF chunk-data CRLF
/// chunk-ext = *( BWS ";" BWS ext-name [ BWS "=" BWS ext-val ] )
/// ext-val   = token / quoted-string
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// Before the first digit of a chunk size.
    SizeStart,
    /// Among the digits of a chunk size.
    Size,
    /// Right after a size or value: whitespace, `;` or CR may follow.
    ValueEnd,
    /// Whitespace after a size or value: only `;` may follow.
    Bws,
    /// After `;`, before an extension name.
    NameStart,
    Name,
    /// Whitespace after a name: `=` or `;` may follow.
    NameBws,
    /// After `=`, before a value.
    ValueStart,
    Token,
    Quoted,
    /// After a backslash in a quoted string.
    QuotedPair,
    /// The CR that ends a chunk-size line was read.
    LineLf,
    /// Inside chunk data; `Chunked::size` bytes remain.
    Data,
    DataCr,
    DataLf,
    /// After the last chunk: the trailer section, which is kept in the buffer
    /// until it is whole.
    Trailers,
    Done,
}

/// Decoding state of one chunked body.
#[derive(Debug)]
pub(super) struct Chunked {
    state: State,
    /// The size being read, then what remains of the chunk's data.
    size: u64,
    digits: u8,
    /// Extension bytes on the current size line.
    ext_len: usize,
    max_ext_len: usize,
    /// Body bytes the limit still allows beyond the sizes announced so far.
    budget: u64,
    max_body_len: u64,
    trailers: Trailers,
}

impl Chunked {
    pub(super) fn new(limits: &Limits) -> Self {
        Chunked {
            state: State::SizeStart,
            size: 0,
            digits: 0,
            ext_len: 0,
            max_ext_len: limits.max_chunk_ext_len,
            budget: limits.max_body_len,
            max_body_len: limits.max_body_len,
            trailers: Trailers::new(limits),
        }
    }

    pub(super) fn is_done(&self) -> bool {
        self.state == State::Done
    }

    #[inline]
    pub(super) fn decode<'a>(&'a mut self, buf: &'a [u8]) -> Result<Decoded<'a>, Error> {
        let at = self.frame(buf)?;
        match self.state {
            State::Data if at < buf.len() => {
                let n =
                    usize::try_from(self.size).map_or(buf.len() - at, |s| s.min(buf.len() - at));
                self.size -= n as u64;
                if self.size == 0 {
                    self.state = State::DataCr;
                }
                Ok(Decoded::Data {
                    data: &buf[at..at + n],
                    consumed: at + n,
                })
            }
            State::Trailers => match self.trailers.section(&buf[at..])? {
                Some((len, trailers)) => {
                    self.state = State::Done;
                    Ok(Decoded::Done {
                        consumed: at + len,
                        trailers,
                    })
                }
                None => Ok(Decoded::Partial { consumed: at }),
            },
            State::Done => Ok(Decoded::Done {
                consumed: 0,
                trailers: Headers::new(&[], &[]),
            }),
            _ => Ok(Decoded::Partial { consumed: at }),
        }
    }

    /// Reads framing from the front of `buf` until data or trailers start,
    /// or the bytes run out; returns how many bytes it read.
    #[inline]
    fn frame(&mut self, buf: &[u8]) -> Result<usize, Error> {
        let (mut state, mut at) = self.fast_line(buf)?;
        while let Some(&b) = buf.get(at) {
            state = match state {
                State::Data | State::Trailers | State::Done => break,
                State::DataCr if b == b'\r' => State::DataLf,
                State::DataLf if b == b'\n' => State::SizeStart,
                State::DataCr | State::DataLf => return Err(Error::InvalidChunkEnd),
                State::SizeStart => match hex_digit(b) {
                    None => return Err(Error::InvalidChunkSize),
                    Some(d) => {
                        self.size = u64::from(d);
                        self.digits = 1;
                        State::Size
                    }
                },
                State::Size => match hex_digit(b) {
                    None => {
                        self.announce()?;
                        if b == b'\r' {
                            State::LineLf
                        } else {
                            self.ext_len = 0;
                            self.extension(State::ValueEnd, b)?
                        }
                    }
                    Some(d) => {
                        if self.digits == MAX_SIZE_DIGITS || self.size >> 60 != 0 {
                            return Err(Error::InvalidChunkSize);
                        }
                        self.digits += 1;
                        self.size = self.size << 4 | u64::from(d);
                        State::Size
                    }
                },
                State::LineLf if b == b'\n' => {
                    if self.size == 0 {
                        State::Trailers
                    } else {
                        State::Data
                    }
                }
                State::LineLf => return Err(Error::BareCr),
                ext => self.extension(ext, b)?,
            };
            at += 1;
        }
        self.state = state;
        Ok(at)
    }

    /// The usual framing between chunks, the previous chunk's CRLF and a
    /// size line without extensions, read without the per-byte dispatch when
    /// it is all there. Returns where [`frame`](Self::frame) goes on; bytes
    /// this skips (a longer or cut-off size line) it reads again in the same
    /// call, never in a later one.
    #[inline]
    fn fast_line(&mut self, buf: &[u8]) -> Result<(State, usize), Error> {
        let mut state = self.state;
        let mut at = 0;
        if state == State::DataCr && buf.starts_with(b"\r\n") {
            state = State::SizeStart;
            at = 2;
        }
        if state != State::SizeStart {
            return Ok((state, at));
        }
        // Sixteen digits cannot overflow; more are left to the slow path.
        let mut end = at;
        let mut size = 0;
        while let Some(&b) = buf.get(end).filter(|_| end - at < 16) {
            let Some(d) = hex_digit(b) else {
                break;
            };
            size = size << 4 | u64::from(d);
            end += 1;
        }
        if end == at || buf.get(end..end + 2) != Some(b"\r\n") {
            return Ok((state, at));
        }
        self.size = size;
        self.announce()?;
        let next = if size == 0 {
            State::Trailers
        } else {
            State::Data
        };
        Ok((next, end + 2))
    }

    /// Charges a just-read chunk size to the body limit, before any of its
    /// data is handed out.
    #[inline]
    fn announce(&mut self) -> Result<(), Error> {
        if self.size > self.budget {
            return Err(Error::BodyTooLarge {
                limit: self.max_body_len,
            });
        }
        self.budget -= self.size;
        Ok(())
    }

    /// One byte of a size line after the size; the CR that ends the line is
    /// not an extension byte.
    fn extension(&mut self, state: State, b: u8) -> Result<State, Error> {
        let next = extension_step(state, b)?;
        if b != b'\r' {
            self.ext_len += 1;
            if self.ext_len > self.max_ext_len {
                return Err(Error::ChunkExtensionTooLong {
                    limit: self.max_ext_len,
                });
            }
        }
        Ok(next)
    }
}

/// The extension grammar: where byte `b` leads from `state`.
fn extension_step(state: State, b: u8) -> Result<State, Error> {
    use State::{Bws, Name, NameBws, NameStart, Quoted, QuotedPair, Token, ValueEnd, ValueStart};
    Ok(match (state, b) {
        (Name | NameStart, _) if is_token(b) => Name,
        (Token | ValueStart, _) if is_token(b) => Token,
        (Quoted, b'"') => ValueEnd,
        (Quoted, b'\\') => QuotedPair,
        // qdtext and the escaped byte of a quoted-pair: no controls but HTAB.
        (Quoted | QuotedPair, _) if is_value_byte(b) => Quoted,
        (ValueStart, b'"') => Quoted,
        (Name | Token | ValueEnd, b'\r') => State::LineLf,
        (Name | Token | ValueEnd, b'\n') => return Err(Error::BareLf),
        (Name | NameBws | Token | ValueEnd | Bws, b';') => NameStart,
        (Name | NameBws, b'=') => ValueStart,
        (Name, b' ' | b'\t') => NameBws,
        (Token | ValueEnd, b' ' | b'\t') => Bws,
        (Bws | NameStart | NameBws | ValueStart, b' ' | b'\t') => state,
        _ => return Err(Error::InvalidChunkSize),
    })
}
