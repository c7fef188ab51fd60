//! One exchange, sans-IO: the round trip up to the final response head,
//! then the body read from the front of the receive ring. These steps say
//! what to write, what to consume and how much to wait for; the drivers
//! ([`blocking`](crate::blocking), [`tokio`](crate::tokio)) only write,
//! fill and consume. A body that the request asked to have decoded goes
//! through its [`Decoder`] here too.

use std::io;
use std::ops::Range;
use std::os::fd::BorrowedFd;
use std::time::{Duration, Instant};

use ringwire_http1::encode::{chunk_header, last_chunk, CHUNK_END};
use ringwire_http1::{BodyDecoder, BodyKind, Decoded, Limits, Method, ResponseParser, Status};
use ringwire_http2::ErrorCode;

use crate::decompress::{Decoder, Encoding};
use crate::h2::{self, Proto, H2};
use crate::{ClientConfig, Error, Phase, Protocol, Request, Trailers};

/// A redirect's body worth reading to keep its connection: past this,
/// closing is cheaper.
pub(crate) const DISCARD_LIMIT: usize = 64 << 10;

/// How an exchange failed, and whether a fresh connection may retry it.
pub(crate) struct Failure {
    pub(crate) error: Error,
    /// Nothing came back, and the connection was reused: the server may
    /// have closed it while it idled.
    pub(crate) retryable: bool,
}

impl Failure {
    /// Sending failed: a fresh connection may retry unless time ran out.
    pub(crate) fn sending(error: Error) -> Failure {
        let retryable = matches!(error, Error::Io(_));
        Failure { error, retryable }
    }

    /// An exchange on a shared HTTP/2 connection failed before its answer: a fresh
    /// connection may retry it if the connection failed under it (it may have died
    /// while it idled), as a pooled one's, or the server refused it.
    pub(crate) fn shared(error: Error) -> Failure {
        let retryable = unprocessed(&error) || matches!(error, Error::Io(_) | Error::Closed);
        Failure { error, retryable }
    }

    /// Whether `request` may go again on a fresh connection: when it is
    /// idempotent, or when the server said it never processed it.
    pub(crate) fn may_retry(&self, request: &Request<'_>) -> bool {
        self.retryable && (request.is_idempotent() || self.unprocessed())
    }

    /// Whether the server said it never processed the request.
    pub(crate) fn unprocessed(&self) -> bool {
        unprocessed(&self.error)
    }
}

/// Which failed attempts at an exchange are tried again, on a fresh
/// connection: one on a pooled connection that turned out closed (when
/// [`Failure::may_retry`]), and one that an HTTP/2 server refused
/// unprocessed.
#[derive(Debug)]
pub(crate) struct Attempts {
    reused: bool,
    refused: bool,
}

impl Attempts {
    /// The first attempt goes on a pooled connection if `reused`.
    pub(crate) fn new(reused: bool) -> Attempts {
        Attempts {
            reused,
            refused: false,
        }
    }

    /// Whether `request`, failed as `failure` says, goes again.
    pub(crate) fn again(&mut self, failure: &Failure, request: &Request<'_>) -> bool {
        let again =
            failure.may_retry(request) && (self.reused || (failure.unprocessed() && !self.refused));
        self.refused |= failure.unprocessed();
        self.reused = false;
        again
    }
}

/// An HTTP/2 server's word that it did not act on the request (RFC 9113
/// section 8.7).
fn unprocessed(error: &Error) -> bool {
    matches!(error, Error::Http2Reset(code) if *code == ErrorCode::REFUSED_STREAM)
}

impl From<Error> for Failure {
    fn from(error: Error) -> Self {
        Failure {
            retryable: unprocessed(&error),
            error,
        }
    }
}

/// Time left until `deadline`, or the request timeout.
pub(crate) fn remaining(deadline: Instant) -> Result<Duration, Error> {
    match deadline.checked_duration_since(Instant::now()) {
        Some(left) if !left.is_zero() => Ok(left),
        _ => Err(Error::Timeout(Phase::Request)),
    }
}

/// One request's exchange up to its final head, sans-IO: the drivers write
/// and fill as [`next`](Self::next) says and report how that went; what it
/// means for the answer, the connection and a retry is decided here.
#[derive(Debug)]
pub(crate) struct RoundTrip {
    deadline: Option<Instant>,
    body: Withheld,
    /// Why sending stopped short, if it did.
    cut: Option<Error>,
    /// Whether any of an answer arrived: a failure before that, on a
    /// reused connection, may be the server having closed it while it idled.
    heard: bool,
    /// The most bytes of body decoded, when the request asked for decoding.
    decode_limit: Option<u64>,
    /// A body read from a source as it is sent.
    upload: Option<Upload>,
    /// A probe found bytes of the answer while the body was being sent.
    probed: bool,
    /// A success that came before the body was all sent: the body goes on,
    /// and this head is the answer once it has.
    early: Option<Reader>,
}

/// A body streamed from a source, framed here piece by piece.
#[derive(Debug)]
struct Upload {
    /// Bytes still to send of a body of announced length; `None`: chunked,
    /// until the source ends.
    left: Option<u64>,
    /// Bytes sent so far.
    sent: u64,
    /// Bytes sent since the last look for an early answer.
    unprobed: u64,
    /// All of it went, its end too.
    done: bool,
}

/// How much of a streamed body goes out between two looks for an early
/// answer over HTTP/1.1 (a look is one system call that does not wait).
const PROBE_EVERY: u64 = 1 << 20;

impl Upload {
    /// Counts `n` bytes taken from the source; none: it ended, which ends a
    /// chunked body and fails one short of its announced length.
    fn count(&mut self, n: usize) -> Result<(), Failure> {
        match (n, self.left) {
            (0, Some(left)) => {
                let (sent, expected) = (self.sent, self.sent + left);
                Err(Error::BodySourceEnded { sent, expected }.into())
            }
            (0, None) => {
                self.done = true;
                Ok(())
            }
            (n, left) => {
                self.sent += n as u64;
                self.unprobed += n as u64;
                if let Some(left) = left {
                    let left = left.saturating_sub(n as u64);
                    self.left = Some(left);
                    self.done = left == 0;
                }
                Ok(())
            }
        }
    }
}

/// Where a streamed body's piece is read into the scratch: after room for
/// a chunk-size line (16 hex digits and CRLF), so that a chunk is framed
/// in place and goes out in one write.
const PIECE_AT: usize = 18;

/// The range of a scratch of `len` bytes that the next piece of a streamed
/// body, at most `max` bytes, is read into (room kept for a chunk's CRLF).
///
/// # Errors
///
/// [`Error::BodyExceedsSendRing`] when the send ring keeps no room after the
/// head.
pub(crate) fn piece(len: usize, max: usize) -> Result<Range<usize>, Error> {
    let room = len.saturating_sub(PIECE_AT + CHUNK_END.len());
    if room == 0 {
        return Err(Error::BodyExceedsSendRing { len: max, room });
    }
    Ok(PIECE_AT..PIECE_AT + max.min(room))
}

/// A streamed body's source, and whether any of it was read: a request that
/// took from its source goes again (a retry, a redirect that keeps the body)
/// only if the source can be rewound, as a file can.
pub(crate) struct Source<'s, R: ?Sized> {
    pub(crate) reader: &'s mut R,
    /// The file `reader` reads from its current offset, when it is one: sent
    /// by `sendfile` where nothing needs to go between its bytes.
    pub(crate) file: Option<BorrowedFd<'s>>,
    /// Where a file source started, to give its body again from there.
    start: Option<(BorrowedFd<'s>, u64)>,
    pub(crate) taken: bool,
}

impl<'s, R: ?Sized> Source<'s, R> {
    pub(crate) fn new(reader: &'s mut R, file: Option<BorrowedFd<'s>>) -> Self {
        let here = |fd| rustix::fs::seek(fd, rustix::fs::SeekFrom::Current(0)).ok();
        Source {
            reader,
            file,
            // Not a pipe's: it cannot seek.
            start: file.and_then(|fd| Some((fd, here(fd)?))),
            taken: false,
        }
    }

    /// Whether the source can give its body again.
    pub(crate) fn resendable(&self) -> bool {
        !self.taken || self.start.is_some()
    }

    /// Makes the source give its body again from the start.
    ///
    /// # Errors
    ///
    /// Some of it was read and it cannot seek back.
    pub(crate) fn rewind(&mut self) -> io::Result<()> {
        if !self.taken {
            return Ok(());
        }
        let Some((fd, at)) = self.start else {
            return Err(io::Error::other("the body's source cannot be read again"));
        };
        rustix::fs::seek(fd, rustix::fs::SeekFrom::Start(at))?;
        self.taken = false;
        Ok(())
    }
}

/// Whether a failed exchange may go again as far as its body's `source` goes:
/// none, or one rewound.
pub(crate) fn source_rewound<R: ?Sized>(source: Option<&mut Source<'_, R>>) -> bool {
    source.is_none_or(|s| s.rewind().is_ok())
}

/// Whether the request body is held back for `100 Continue`.
#[derive(Debug, Clone, Copy)]
enum Withheld {
    /// No: it went with the head (or sending was cut short).
    No,
    /// Until the server's `100 Continue`, or this instant.
    Until(Instant),
    /// No longer: it is to be sent now.
    Released,
}

/// What the driver does next in a [`RoundTrip`].
#[derive(Debug)]
pub(crate) enum Next {
    /// An interim `1xx` head of this many bytes is at the front of the
    /// ring: consume it.
    Interim(usize),
    /// Frames of this many bytes were handled (HTTP/2): consume them.
    Consume(usize),
    /// Send the body held back, and report it to [`RoundTrip::wrote`].
    Body,
    /// See whether any of the answer has arrived while a streamed body is
    /// being sent, without waiting, and report it to [`RoundTrip::probed`]
    /// (RFC 9112 section 9.5: a client sending a body watches for an error
    /// response meanwhile).
    Probe,
    /// Read at most this many bytes of a streamed body from its source into
    /// [`piece`] of the scratch, report them to [`RoundTrip::uploaded`],
    /// write what it says (over HTTP/2, what the connection has to send),
    /// and report that to [`RoundTrip::wrote`].
    Upload(usize),
    /// Fill the ring to at least this many bytes, reading until `until`
    /// at the latest, and report it to [`RoundTrip::filled`]; over HTTP/2,
    /// send what the connection has to send first.
    Fill {
        at_least: usize,
        until: Option<Instant>,
    },
    /// The final head is at the front of the ring.
    Final(Reader),
}

impl RoundTrip {
    /// A round trip of `request` bounded by `deadline`, as `config` says
    /// (how long a body that expects `100 Continue` waits for it, how much
    /// of a body is decoded).
    pub(crate) fn new(
        request: &Request<'_>,
        config: &ClientConfig,
        deadline: Option<Instant>,
    ) -> Self {
        RoundTrip {
            deadline,
            body: if request.expects_continue() {
                Withheld::Until(Instant::now() + config.expect_continue_timeout)
            } else {
                Withheld::No
            },
            cut: None,
            heard: false,
            decode_limit: request
                .decompresses()
                .then_some(config.max_decoded_body_len),
            upload: request.streamed().map(|len| Upload {
                left: len,
                sent: 0,
                unprobed: 0,
                done: len == Some(0),
            }),
            probed: false,
            early: None,
        }
    }

    /// The body that goes with the head: all of it, or `None` when it waits
    /// for `100 Continue` or is streamed after it.
    pub(crate) fn with_head<'b>(&self, body: &'b [u8]) -> Option<&'b [u8]> {
        match self.body {
            Withheld::No if self.upload.as_ref().is_none_or(|u| u.done) => Some(body),
            Withheld::No | Withheld::Until(_) | Withheld::Released => None,
        }
    }

    /// How much of a streamed body may be read now: none while it waits for
    /// `100 Continue`, after sending was cut short, or (HTTP/2) while the
    /// server's windows are shut.
    fn upload_room(&self, proto: &Proto) -> Option<usize> {
        let upload = self.upload.as_ref().filter(|u| !u.done)?;
        if matches!(self.body, Withheld::Until(_)) || self.cut.is_some() {
            return None;
        }
        let window = match proto {
            Proto::Http1(_) => usize::MAX,
            Proto::Http2(h2) => h2.send_capacity(),
        };
        let left = upload
            .left
            .map_or(usize::MAX, |l| usize::try_from(l).unwrap_or(usize::MAX));
        Some(window.min(left)).filter(|&max| max > 0)
    }

    /// The bytes of a streamed body sent so far.
    pub(crate) fn uploaded_len(&self) -> u64 {
        self.upload.as_ref().map_or(0, |u| u.sent)
    }

    /// Whether a streamed body may go straight from a file to the socket (`sendfile`):
    /// over HTTP/1.1, with `content-length`, so that no framing goes between its bytes.
    pub(crate) fn sends_unframed(&self, proto: &Proto) -> bool {
        matches!(proto, Proto::Http1(_)) && self.upload.as_ref().is_some_and(|u| u.left.is_some())
    }

    /// `n` bytes of a streamed body went straight from its file to the socket (see
    /// [`sends_unframed`](Self::sends_unframed)); none: the file ended.
    pub(crate) fn sent_unframed(&mut self, n: usize) -> Result<(), Failure> {
        self.upload
            .as_mut()
            .map_or(Ok(()), |upload| upload.count(n))
    }

    /// `n` bytes of a streamed body were read into [`piece`] of `scratch`
    /// (none: the source ended): frames them, and says which range of
    /// `scratch` to write. Over HTTP/2 that range is one `DATA` frame framed
    /// in place, written after what the connection queued, when the server's
    /// frame size and windows take the whole piece; else the piece is queued
    /// on the connection and the range is empty.
    pub(crate) fn uploaded(
        &mut self,
        proto: &mut Proto,
        scratch: &mut [u8],
        n: usize,
    ) -> Result<Range<usize>, Failure> {
        let Some(upload) = self.upload.as_mut() else {
            return Ok(0..0);
        };
        upload.count(n)?;
        if n == 0 {
            return Ok(match proto {
                Proto::Http1(_) => 0..last_chunk(&[], scratch).map_err(Error::Encode)?,
                Proto::Http2(h2) => {
                    h2.send_piece(&[], true)?;
                    0..0
                }
            });
        }
        let piece = PIECE_AT..PIECE_AT + n;
        Ok(match proto {
            Proto::Http2(h2) => match h2.frame_in_place(n, upload.done)? {
                Some(header) => {
                    let start = PIECE_AT - header.len();
                    scratch[start..PIECE_AT].copy_from_slice(&header);
                    start..piece.end
                }
                None => {
                    h2.send_piece(&scratch[piece], upload.done)?;
                    0..0
                }
            },
            Proto::Http1(_) if upload.left.is_some() => piece,
            Proto::Http1(_) => {
                // The size line right before the piece, CRLF after it.
                let mut line = [0; PIECE_AT];
                let len = chunk_header(n, &mut line).map_err(Error::Encode)?;
                let start = PIECE_AT - len;
                scratch[start..PIECE_AT].copy_from_slice(&line[..len]);
                let end = piece.end + CHUNK_END.len();
                scratch[piece.end..end].copy_from_slice(CHUNK_END);
                start..end
            }
        })
    }

    /// The outcome of writing the request (or its body, once released);
    /// `Err` when no answer can be waiting. A server that refuses a request
    /// early (a 413 before the whole body) may answer and close without
    /// reading the rest, which fails the write with a broken pipe or a
    /// reset, but its answer is already here to read (RFC 9112 section 9.3).
    pub(crate) fn wrote(&mut self, written: Result<(), Error>) -> Result<(), Failure> {
        match written {
            Ok(()) => {
                if let Withheld::Released = self.body {
                    self.body = Withheld::No;
                }
                Ok(())
            }
            Err(Error::Io(e))
                if matches!(
                    e.kind(),
                    io::ErrorKind::BrokenPipe | io::ErrorKind::ConnectionReset
                ) =>
            {
                self.cut = Some(Error::Io(e));
                self.body = Withheld::No;
                Ok(())
            }
            Err(error) => Err(Failure {
                retryable: !self.heard && matches!(error, Error::Io(_)),
                error,
            }),
        }
    }

    /// Parses what the ring holds of the response to `method`.
    pub(crate) fn next(
        &mut self,
        proto: &mut Proto,
        data: &mut [u8],
        method: Method<'_>,
        limits: &Limits,
    ) -> Result<Next, Failure> {
        if let Some(max) = self.upload_room(proto) {
            return match proto {
                Proto::Http1(parser) => self.next_uploading(parser, data, method, limits, max),
                Proto::Http2(_) => Ok(Next::Upload(max)),
            };
        }
        if let Withheld::Released = self.body {
            return Ok(Next::Body);
        }
        if let Some(reader) = self.early.take() {
            return Ok(Next::Final(self.answered(reader)));
        }
        let parser = match proto {
            Proto::Http1(parser) => parser,
            Proto::Http2(h2) => return self.next_h2(h2, data),
        };
        let step = parse_head(parser, data, method, limits, self.decode_limit)?;
        Ok(match step {
            HeadStep::Interim { len, status } => self.interim(len, status),
            // A success instead of `100 Continue`: the server reads the body as it answers
            // (an echo does), so the body goes (as curl sends it), and the answer is
            // handed out once it is sent. Any other answer refuses the body.
            HeadStep::Final(reader)
                if reader.status() < 300 && matches!(self.body, Withheld::Until(_)) =>
            {
                self.body = Withheld::Released;
                self.early = Some(reader);
                return self.next(proto, data, method, limits);
            }
            HeadStep::Final(reader) => Next::Final(self.answered(reader)),
            HeadStep::Need(at_least) => Next::Fill {
                at_least,
                until: self.read_until(),
            },
        })
    }

    /// [`next`](Self::next) while a streamed body goes out over HTTP/1.1: its next piece
    /// (at most `max` bytes), a look for an early answer every [`PROBE_EVERY`] bytes, or,
    /// when a look found some, what it says. An interim answer is passed; a success is
    /// kept for when the body is sent; any other final answer ends the upload (the server
    /// does not want the rest), and the connection with it.
    fn next_uploading(
        &mut self,
        parser: &mut ResponseParser,
        data: &mut [u8],
        method: Method<'_>,
        limits: &Limits,
        max: usize,
    ) -> Result<Next, Failure> {
        // (Once a success is kept, the next bytes are its body's, not a head.)
        if std::mem::take(&mut self.probed) && self.early.is_none() {
            match parse_head(parser, data, method, limits, self.decode_limit)? {
                HeadStep::Interim { len, status } => {
                    self.probed = true;
                    return Ok(self.interim(len, status));
                }
                HeadStep::Final(reader) if reader.status() < 300 => self.early = Some(reader),
                HeadStep::Final(reader) => return Ok(Next::Final(self.answered(reader))),
                // The rest of a head comes at the next look.
                HeadStep::Need(_) => {}
            }
        }
        let Some(upload) = self.upload.as_mut() else {
            return Ok(Next::Upload(max));
        };
        if self.early.is_none() && upload.unprobed >= PROBE_EVERY {
            upload.unprobed = 0;
            return Ok(Next::Probe);
        }
        Ok(Next::Upload(max))
    }

    /// The outcome of a [`Next::Probe`]: whether bytes (or the end of the stream) came.
    pub(crate) fn probed(&mut self, probed: Result<bool, Error>) -> Result<(), Failure> {
        match probed {
            Ok(came) => {
                self.probed = came;
                Ok(())
            }
            Err(error) => Err(Failure {
                retryable: !self.heard && matches!(error, Error::Io(_)),
                error,
            }),
        }
    }

    /// [`next`](Self::next) on an HTTP/2 connection: handles the frames at
    /// the front of `data`.
    fn next_h2(&mut self, h2: &mut H2, data: &[u8]) -> Result<Next, Failure> {
        Ok(match h2.head(data)? {
            h2::HeadStep::Need(0) => Next::Fill {
                at_least: data.len() + 1,
                until: self.read_until(),
            },
            h2::HeadStep::Need(consumed) => Next::Consume(consumed),
            h2::HeadStep::Interim { consumed, status } => self.interim(consumed, status),
            h2::HeadStep::Final {
                consumed,
                end_stream,
            } => {
                let head = h2.head_view();
                Next::Final(self.answered(Reader {
                    head_len: consumed,
                    pending: 0,
                    framing: Framing {
                        frames: Frames::Http2 { received: 0 },
                        done: end_stream,
                        trailers: None,
                    },
                    keep_alive: true,
                    status: head.status(),
                    decoding: decoding(&head, self.decode_limit),
                }))
            }
        })
    }

    /// An interim head of `len` bytes with `status` arrived: a `100
    /// Continue` releases a body held back for it, other interim answers
    /// (`103 Early Hints`) do not.
    fn interim(&mut self, len: usize, status: u16) -> Next {
        if let (100, Withheld::Until(_)) = (status, self.body) {
            self.body = Withheld::Released;
        }
        Next::Interim(len)
    }

    /// The outcome of a [`Next::Fill`]: the bytes read, or why none were.
    pub(crate) fn filled(&mut self, filled: Result<usize, Error>) -> Result<(), Failure> {
        // Over TLS a close without `close_notify` reads as an unexpected end: the same end of
        // stream as TCP's.
        let filled = match filled {
            Err(Error::Io(e)) if e.kind() == io::ErrorKind::UnexpectedEof => Ok(0),
            other => other,
        };
        let failure = match filled {
            Ok(0) => Failure {
                error: Error::Closed,
                retryable: !self.heard,
            },
            Ok(_) => {
                self.heard = true;
                return Ok(());
            }
            // Only the wait for `100 Continue` is over: a server that knows
            // nothing of it never sends one, and RFC 9110 section 10.1.1
            // has a client not wait for it indefinitely.
            Err(Error::Timeout(Phase::Request)) if self.waited_out() => {
                self.body = Withheld::Released;
                return Ok(());
            }
            Err(error) => Failure {
                retryable: !self.heard && matches!(error, Error::Io(_)),
                error,
            },
        };
        // No answer came: a request cut short is the failure to report.
        Err(self.cut.take().map_or(failure, Failure::sending))
    }

    /// How long a fill may read: until the request's deadline, or the end
    /// of the wait for `100 Continue` if that comes first.
    fn read_until(&self) -> Option<Instant> {
        match self.body {
            Withheld::Until(wait) => Some(self.deadline.map_or(wait, |d| d.min(wait))),
            Withheld::No | Withheld::Released => self.deadline,
        }
    }

    /// Whether a timeout was the end of the wait for `100 Continue`, not
    /// the request's deadline.
    fn waited_out(&self) -> bool {
        match self.body {
            Withheld::Until(wait) => self.deadline.is_none_or(|d| wait < d),
            Withheld::No | Withheld::Released => false,
        }
    }

    /// The answer's head arrived: after a request cut short, or before a
    /// body that was held back, the connection carries nothing more. The
    /// server would take the next request for the body its head announced
    /// (a persistent connection needs every message whole, RFC 9112 section
    /// 9.3; RFC 2616 section 8.2.2 had a client that stops short of a
    /// `Content-Length` body close the connection).
    fn answered(&self, mut reader: Reader) -> Reader {
        let unsent = self.upload.as_ref().is_some_and(|u| !u.done);
        if self.cut.is_some() || unsent || !matches!(self.body, Withheld::No) {
            reader.keep_alive = false;
        }
        reader
    }
}

/// What the front of the ring holds, head-wise.
#[derive(Debug)]
enum HeadStep {
    /// An interim `1xx` head of `len` bytes: consume it, parse again.
    Interim { len: usize, status: u16 },
    /// The final head, left in the ring for [`Reader::head_len`] bytes.
    Final(Reader),
    /// Fill until the ring holds at least this many bytes.
    Need(usize),
}

/// Parses the head of the response to `method` at the front of `data`,
/// replacing obsolete line folds with spaces in place (RFC 9112 section
/// 5.2 has a user agent accept them; the parser, shared with requests,
/// refuses them, so they cost nothing until one comes). The body is
/// decoded, up to `decode_limit`, when there is one.
fn parse_head(
    parser: &mut ResponseParser,
    data: &mut [u8],
    method: Method<'_>,
    limits: &Limits,
    decode_limit: Option<u64>,
) -> Result<HeadStep, Error> {
    loop {
        match parser.parse(data, method) {
            Err(ringwire_http1::Error::ObsFold) => {}
            status => return head_step(status?, method, limits, decode_limit),
        }
        // Each pass replaces at least one fold, so this ends.
        if !parser.unfold(data) {
            return Err(Error::Response(ringwire_http1::Error::ObsFold));
        }
    }
}

fn head_step(
    status: Status<ringwire_http1::Response<'_>>,
    method: Method<'_>,
    limits: &Limits,
    decode_limit: Option<u64>,
) -> Result<HeadStep, Error> {
    match status {
        Status::Partial { at_least } => Ok(HeadStep::Need(at_least)),
        Status::Complete(head, len) if head.is_interim() => Ok(HeadStep::Interim {
            len,
            status: head.status(),
        }),
        // The connection now speaks another protocol nobody asked for.
        Status::Complete(head, _) if head.status() == 101 => Err(Error::UnexpectedUpgrade),
        Status::Complete(head, len) => Ok(HeadStep::Final(Reader {
            head_len: len,
            pending: 0,
            framing: Framing {
                frames: Frames::Http1(BodyDecoder::new(head.body(), limits)),
                done: false,
                trailers: None,
            },
            // After a 2xx to CONNECT the connection is a tunnel, not HTTP.
            keep_alive: head.keep_alive()
                && !(method == Method::Connect && (200..300).contains(&head.status())),
            status: head.status(),
            decoding: decoding(&head, decode_limit),
        })),
    }
}

/// The decoding of `head`'s body, when the request asked for it
/// (`decode_limit`) and the body has a coding the client undoes.
fn decoding(
    head: &ringwire_http1::Response<'_>,
    decode_limit: Option<u64>,
) -> Option<Box<Decoding>> {
    let decoder = Decoder::for_response(head, decode_limit?)?;
    Some(Box::new(Decoding {
        decoder,
        unread: None,
    }))
}

/// What the front of the ring holds, body-wise.
#[derive(Debug)]
pub(crate) enum BodyStep {
    /// Body bytes at this range of the ring's unread span.
    Data(Range<usize>),
    /// Decoded body bytes, in [`Reader::decoded`].
    Decoded,
    /// Consume this much framing, then fill.
    Need(usize),
    /// The body is complete once this much (final framing) is consumed.
    Done(usize),
}

/// One response's progress through its body.
#[derive(Debug)]
pub(crate) struct Reader {
    /// Bytes of head still at the front of the ring: kept there, so the
    /// head can be viewed in place, until the body is read.
    head_len: usize,
    /// Bytes of body handed out (or decoded) since the last consume,
    /// consumed before the next piece.
    pending: usize,
    framing: Framing,
    keep_alive: bool,
    status: u16,
    /// The content coding undone, when the request asked for it and the
    /// response has one (boxed: a response without costs a pointer).
    decoding: Option<Box<Decoding>>,
}

impl Reader {
    /// The status code.
    pub(crate) fn status(&self) -> u16 {
        self.status
    }

    /// The protocol the response came over.
    pub(crate) fn protocol(&self) -> Protocol {
        match self.framing.frames {
            Frames::Http1(_) => Protocol::Http1,
            Frames::Http2 { .. } => Protocol::Http2,
        }
    }

    /// The head, while it is still at the front of the ring's unread `data`, as `proto`
    /// reads it.
    pub(crate) fn head<'d>(
        &self,
        proto: &'d Proto,
        data: &'d [u8],
    ) -> Option<ringwire_http1::Response<'d>> {
        (self.head_len > 0).then(|| proto.head(data))
    }

    /// The content coding the body is decoded from, if it is.
    pub(crate) fn encoding(&self) -> Option<Encoding> {
        self.decoding.as_ref().map(|d| d.decoder.encoding())
    }

    /// Bytes the driver consumes before the next [`decode`](Self::decode):
    /// the head, then each piece of body once the caller is done with it.
    pub(crate) fn take_consumed(&mut self) -> usize {
        std::mem::take(&mut self.head_len) + std::mem::take(&mut self.pending)
    }

    /// Decodes from the front of `data` (after [`take_consumed`](Self::take_consumed)),
    /// through `h2` when the response came over HTTP/2.
    pub(crate) fn decode(&mut self, data: &[u8], h2: Option<&mut H2>) -> Result<BodyStep, Error> {
        let Some(decoding) = self.decoding.as_deref_mut() else {
            return Ok(match self.framing.next(data, h2)? {
                Framed::Data { piece, consumed } => {
                    self.pending = consumed;
                    BodyStep::Data(piece)
                }
                Framed::Need(consumed) => BodyStep::Need(consumed),
                Framed::Done(consumed) => BodyStep::Done(consumed),
            });
        };
        match decoding.next(&mut self.framing, data, h2) {
            Ok((step, pending)) => {
                self.pending = pending;
                Ok(step)
            }
            Err(error) => {
                // Whatever follows data that is not of its coding is not
                // worth reading, nor the connection worth keeping.
                self.keep_alive = false;
                Err(error)
            }
        }
    }

    /// The bytes of a piece [`decode`](Self::decode) pointed at: `range` of
    /// the ring's unread `data` for [`BodyStep::Data`], the decoder's output
    /// (`None`) for [`BodyStep::Decoded`].
    pub(crate) fn piece<'d>(
        &'d self,
        data: Option<&'d [u8]>,
        range: Option<Range<usize>>,
    ) -> Option<&'d [u8]> {
        match range {
            Some(range) => data?.get(range),
            None => Some(self.decoding.as_ref().map_or(&[], |d| d.decoder.output())),
        }
    }

    /// The peer closed: the end of a close-delimited body, an error for any
    /// other. Either way the connection is spent.
    pub(crate) fn eof(&mut self) -> Result<(), Error> {
        self.keep_alive = false;
        let Frames::Http1(decoder) = &mut self.framing.frames else {
            // An HTTP/2 body ends with its stream, never with the connection.
            return Err(self.incomplete(false));
        };
        if decoder.finish_eof().is_err() {
            return Err(self.incomplete(false));
        }
        self.framing.done = true;
        Ok(())
    }

    /// Reading the body failed with `error`. Over TLS, a peer that closed
    /// without `close_notify` cut a body framed by its length or chunks
    /// short just as a plain close does: how much came is the useful fact.
    /// A close-delimited body has no length to tell a cut from its end, so
    /// there the missing `close_notify` stays the error.
    pub(crate) fn failed(&self, error: Error) -> Error {
        match error {
            Error::Io(e)
                if e.kind() == io::ErrorKind::UnexpectedEof && !self.framing.close_delimited() =>
            {
                self.incomplete(true)
            }
            error => error,
        }
    }

    fn incomplete(&self, without_close_notify: bool) -> Error {
        let (received, expected) = match &self.framing.frames {
            Frames::Http1(decoder) => (
                decoder.delivered(),
                match decoder.kind() {
                    BodyKind::Length(len) => Some(len),
                    _ => None,
                },
            ),
            Frames::Http2 { received } => (*received, None),
        };
        Error::IncompleteBody {
            received,
            expected,
            without_close_notify,
        }
    }

    /// The trailer fields the body ended with (none until it has).
    pub(crate) fn trailers(&self) -> &Trailers {
        static NONE: Trailers = Trailers::new();
        self.framing.trailers.as_deref().unwrap_or(&NONE)
    }

    /// The body's length when all of it can be handed out as one piece in place: over
    /// HTTP/1.1, framed by a length, not decoded, none of it handed out yet.
    #[cfg(feature = "json")]
    pub(crate) fn whole_len(&self) -> Option<usize> {
        let Frames::Http1(decoder) = &self.framing.frames else {
            return None;
        };
        match decoder.kind() {
            BodyKind::Length(len) if self.decoding.is_none() && decoder.delivered() == 0 => {
                usize::try_from(len).ok()
            }
            _ => None,
        }
    }

    /// Reads the rest of an HTTP/1.1 body from `data` (the ring's unread bytes) when all of
    /// it is there, with no I/O: how many bytes to consume, what was handed out included,
    /// the body then done. `None` when it was done already, more must arrive, the body is
    /// being decoded, or it came over HTTP/2 (whose reads would queue frames to send). For
    /// a response dropped with its body unread or its end not yet seen: the connection
    /// can still go back to the pool.
    pub(crate) fn finish_in_place(&mut self, data: &[u8]) -> Option<usize> {
        if self.framing.done
            || self.decoding.is_some()
            || !matches!(self.framing.frames, Frames::Http1(_))
        {
            return None;
        }
        let mut at = self.take_consumed();
        loop {
            match self.framing.next(data.get(at..)?, None).ok()? {
                Framed::Data { consumed, .. } => at += consumed,
                Framed::Done(consumed) => return Some(at + consumed),
                Framed::Need(_) => return None,
            }
        }
    }

    /// Whether the body has been read to its end.
    pub(crate) fn is_done(&self) -> bool {
        self.framing.done
    }

    /// Whether the connection can carry another request.
    pub(crate) fn reusable(&self) -> bool {
        self.framing.done && self.keep_alive
    }
}

/// A body's framing, read in place.
#[derive(Debug)]
struct Framing {
    frames: Frames,
    done: bool,
    /// Copied out of the ring (or the HTTP/2 decoder) at the body's end, if it has any
    /// (boxed: a response without costs a pointer).
    trailers: Option<Box<Trailers>>,
}

/// What frames a body.
#[derive(Debug)]
enum Frames {
    /// HTTP/1.1: length, chunks, the server's close.
    Http1(BodyDecoder),
    /// HTTP/2 `DATA` frames, `received` bytes of body so far.
    Http2 { received: u64 },
}

/// Where the next piece of a body lies, framing-wise.
enum Framed {
    /// Body bytes at `piece` of the ring's unread span, done with once
    /// `consumed` bytes are (the piece's framing around it included).
    Data {
        piece: Range<usize>,
        consumed: usize,
    },
    /// Consume this much framing, then fill.
    Need(usize),
    /// The body is complete once this much (final framing) is consumed.
    Done(usize),
}

impl Framing {
    /// The next piece of body at the front of `data`, through `h2` for an
    /// HTTP/2 body.
    fn next(&mut self, data: &[u8], h2: Option<&mut H2>) -> Result<Framed, Error> {
        if self.done {
            return Ok(Framed::Done(0));
        }
        let framed = match (&mut self.frames, h2) {
            (Frames::Http1(decoder), _) => match decoder.decode(data)? {
                Decoded::Data { data, consumed } => Framed::Data {
                    piece: consumed - data.len()..consumed,
                    consumed,
                },
                Decoded::Partial { consumed } => Framed::Need(consumed),
                Decoded::Done { consumed, trailers } => {
                    if !trailers.is_empty() {
                        let mut copied = Trailers::new();
                        for field in trailers {
                            copied.push(field.name.as_bytes(), field.value);
                        }
                        self.trailers = Some(Box::new(copied));
                    }
                    Framed::Done(consumed)
                }
            },
            (Frames::Http2 { received }, Some(h2)) => match h2.body(data)? {
                h2::BodyStep::Data { piece, consumed } => {
                    *received += piece.len() as u64;
                    Framed::Data { piece, consumed }
                }
                h2::BodyStep::Need(consumed) => Framed::Need(consumed),
                h2::BodyStep::Done(consumed) => {
                    let trailers = h2.take_trailers();
                    self.trailers = (!trailers.is_empty()).then(|| Box::new(trailers));
                    Framed::Done(consumed)
                }
            },
            // An HTTP/2 response is read only on its own connection.
            (Frames::Http2 { .. }, None) => return Err(Error::Closed),
        };
        if let Framed::Done(_) = framed {
            self.done = true;
        }
        Ok(framed)
    }

    /// Whether the body ends when the server closes.
    fn close_delimited(&self) -> bool {
        matches!(&self.frames, Frames::Http1(d) if d.kind() == BodyKind::CloseDelimited)
    }
}

/// A body whose content coding is undone as it is read.
#[derive(Debug)]
struct Decoding {
    decoder: Decoder,
    /// The rest of a piece of body in the ring that the decoder had no
    /// room to take yet, with where its framing ends: fed before anything
    /// after it.
    unread: Option<(Range<usize>, usize)>,
}

impl Decoding {
    /// Feeds pieces of body from the front of `data` to the decoder until
    /// it has bytes to hand out, the ring needs filling, or the body ends
    /// (when the compressed data must end too). With the step, the bytes
    /// at the front of `data` done with: a piece stays in the ring until
    /// all of it is fed.
    fn next(
        &mut self,
        framing: &mut Framing,
        data: &[u8],
        mut h2: Option<&mut H2>,
    ) -> Result<(BodyStep, usize), Error> {
        let mut fed = 0;
        loop {
            let (piece, end) = match self.unread.take() {
                Some(unread) => unread,
                None => match framing.next(&data[fed..], h2.as_deref_mut())? {
                    Framed::Data { piece, consumed } => {
                        (fed + piece.start..fed + piece.end, fed + consumed)
                    }
                    Framed::Need(consumed) => return Ok((BodyStep::Need(fed + consumed), 0)),
                    Framed::Done(consumed) => {
                        self.decoder.finish()?;
                        return Ok((BodyStep::Done(fed + consumed), 0));
                    }
                },
            };
            match self.decoder.feed(&data[piece.clone()])? {
                // Kept relative to the ring once `fed` is consumed.
                Some(used) => {
                    self.unread = Some((piece.start + used - fed..piece.end - fed, end - fed));
                }
                None => fed = end,
            }
            if !self.decoder.output().is_empty() {
                return Ok((BodyStep::Decoded, fed));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{RequestBuffer, Url};

    /// A round trip of a PUT whose body expects `100 Continue`.
    fn expecting(wait: Duration, deadline: Option<Instant>) -> RoundTrip {
        let url = Url::parse("http://example.com/").unwrap();
        let mut buffer = RequestBuffer::new().unwrap();
        let request = buffer
            .request("PUT", &url)
            .unwrap()
            .headers()
            .unwrap()
            .expect_continue()
            .body(b"body")
            .unwrap();
        let config = ClientConfig {
            expect_continue_timeout: wait,
            ..ClientConfig::default()
        };
        RoundTrip::new(&request, &config, deadline)
    }

    /// What comes next with `received` at the front of the ring.
    fn next(trip: &mut RoundTrip, received: &str) -> Next {
        let mut data = received.as_bytes().to_vec();
        let mut proto = Proto::Http1(ResponseParser::new(Limits::default()));
        trip.next(
            &mut proto,
            &mut data,
            Method::from("PUT"),
            &Limits::default(),
        )
        .map_err(|f| f.error)
        .unwrap()
    }

    #[test]
    fn the_body_waits_for_100_continue_and_no_other_interim_answer() {
        let mut trip = expecting(Duration::from_secs(1), None);
        assert_eq!(trip.with_head(b"body"), None);
        assert!(matches!(
            next(&mut trip, ""),
            Next::Fill { until: Some(_), .. }
        ));
        let hints = "HTTP/1.1 103 Early Hints\r\n\r\n";
        assert!(matches!(next(&mut trip, hints), Next::Interim(n) if n == hints.len()));
        assert!(matches!(next(&mut trip, ""), Next::Fill { .. }));
        let go = "HTTP/1.1 100 Continue\r\n\r\n";
        assert!(matches!(next(&mut trip, go), Next::Interim(n) if n == go.len()));
        assert!(matches!(next(&mut trip, ""), Next::Body));
        trip.wrote(Ok(())).map_err(|f| f.error).unwrap();
        // Sent: now only the request's own deadline (none) bounds a read.
        assert!(matches!(
            next(&mut trip, ""),
            Next::Fill { until: None, .. }
        ));
        let ok = "HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n";
        assert!(matches!(next(&mut trip, ok), Next::Final(r) if r.keep_alive));
    }

    /// A round trip of a `PUT` whose body streams from a source, `len` bytes or chunked.
    fn streaming(len: Option<u64>, buffer: &mut RequestBuffer) -> RoundTrip {
        let url = Url::parse("http://example.com/up").unwrap();
        let request = buffer
            .request("PUT", &url)
            .unwrap()
            .headers()
            .unwrap()
            .body_stream(len)
            .unwrap();
        let (head, _) = buffer.bytes(request.request()).unwrap();
        let head = String::from_utf8_lossy(head).into_owned();
        let framing = len.map_or("transfer-encoding: chunked".to_owned(), |n| {
            format!("content-length: {n}")
        });
        assert!(head.contains(&framing), "{head}");
        let trip = RoundTrip::new(request.request(), &ClientConfig::default(), None);
        assert_eq!(trip.with_head(b""), None, "the body goes after the head");
        trip
    }

    #[test]
    fn a_streamed_body_is_framed_in_place_piece_by_piece() {
        let mut buffer = RequestBuffer::new().unwrap();
        let mut proto = Proto::Http1(ResponseParser::new(Limits::default()));
        let mut scratch = vec![0; 64];

        // Chunked: each piece gets its size line before it and CRLF after it, in place.
        let mut trip = streaming(None, &mut buffer);
        let Next::Upload(max) = next(&mut trip, "") else {
            panic!("no upload");
        };
        let room = piece(scratch.len(), max).unwrap();
        assert_eq!(room.len(), 64 - PIECE_AT - 2);
        scratch[room.start..room.start + 26].copy_from_slice(b"abcdefghijklmnopqrstuvwxyz");
        let out = trip.uploaded(&mut proto, &mut scratch, 26).ok().unwrap();
        assert_eq!(&scratch[out], b"1A\r\nabcdefghijklmnopqrstuvwxyz\r\n");
        assert!(matches!(next(&mut trip, ""), Next::Upload(_)));
        let out = trip.uploaded(&mut proto, &mut scratch, 0).ok().unwrap();
        assert_eq!(&scratch[out], b"0\r\n\r\n");
        // All sent: now the answer.
        assert!(matches!(next(&mut trip, ""), Next::Fill { .. }));

        // Of known length: no more asked of the source than is left, sent as it is.
        let mut trip = streaming(Some(30), &mut buffer);
        let Next::Upload(max) = next(&mut trip, "") else {
            panic!("no upload");
        };
        assert_eq!(max, 30);
        let out = trip.uploaded(&mut proto, &mut scratch, 20).ok().unwrap();
        assert_eq!(out, PIECE_AT..PIECE_AT + 20);
        assert!(matches!(next(&mut trip, ""), Next::Upload(10)));
        // Over HTTP/1.1 an answer that came early is not looked at until a look for one
        // (every `PROBE_EVERY` bytes) finds it, or the body is sent.
        let ok = "HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n";
        assert!(matches!(
            trip.next(
                &mut proto,
                &mut ok.as_bytes().to_vec(),
                Method::from("PUT"),
                &Limits::default()
            ),
            Ok(Next::Upload(10))
        ));
        let ended = trip.uploaded(&mut proto, &mut scratch, 0).err().unwrap();
        assert!(matches!(
            ended.error,
            Error::BodySourceEnded {
                sent: 20,
                expected: 30
            }
        ));
        assert!(!ended.retryable);

        let mut trip = streaming(Some(30), &mut buffer);
        trip.uploaded(&mut proto, &mut scratch, 20).ok().unwrap();
        trip.wrote(Err(Error::Io(io::ErrorKind::BrokenPipe.into())))
            .ok()
            .unwrap();
        let Next::Final(reader) = next(&mut trip, ok) else {
            panic!("no answer after a cut");
        };
        assert!(!reader.keep_alive);

        // No room after the head: an error, not an empty read taken for the end.
        assert!(matches!(
            piece(PIECE_AT + 2, 100),
            Err(Error::BodyExceedsSendRing { .. })
        ));
    }

    #[test]
    fn an_answer_before_the_body_spares_it_and_closes_the_connection() {
        let mut trip = expecting(Duration::from_secs(1), None);
        let refused = "HTTP/1.1 413 Content Too Large\r\ncontent-length: 0\r\n\r\n";
        let Next::Final(reader) = next(&mut trip, refused) else {
            panic!("no final answer");
        };
        assert_eq!(reader.status(), 413);
        assert!(!reader.keep_alive);
    }

    #[test]
    fn the_wait_ends_without_failing_unless_the_deadline_comes_first() {
        let now = Instant::now();
        let mut trip = expecting(Duration::from_secs(1), Some(now + Duration::from_secs(10)));
        let Next::Fill {
            until: Some(until), ..
        } = next(&mut trip, "")
        else {
            panic!("no fill");
        };
        assert!(until < now + Duration::from_secs(5));
        trip.filled(Err(Error::Timeout(Phase::Request)))
            .map_err(|f| f.error)
            .unwrap();
        assert!(matches!(next(&mut trip, ""), Next::Body));

        let mut trip = expecting(Duration::from_secs(10), Some(now + Duration::from_secs(1)));
        assert!(matches!(next(&mut trip, ""), Next::Fill { .. }));
        let failed = trip.filled(Err(Error::Timeout(Phase::Request)));
        assert!(matches!(
            failed,
            Err(Failure {
                error: Error::Timeout(Phase::Request),
                ..
            })
        ));
    }
}
