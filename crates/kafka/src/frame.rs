//! Size-prefixed request and response frames, request and response headers, and the queue of
//! requests in flight that tells each response how to read its header.

use std::collections::VecDeque;

use ringwire_wire::{Cursor, LengthPrefixed, Parse, Status};

use crate::api::{ApiKey, Request, Response};
use crate::codec::{Reader, Writer};
use crate::limits::Limits;
use crate::{DecodeError, EncodeError};

/// A request on the wire that waits for its response.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct InFlight {
    correlation_id: i32,
    api_key: ApiKey,
    version: i16,
    /// Whether its response header ends in tagged fields (header v1), decided once at send.
    tagged_header: bool,
}

/// What [`Correlator::encode`] wrote.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sent {
    /// The request's correlation id.
    pub correlation_id: i32,
    /// Bytes written, size prefix included.
    pub len: usize,
    /// Whether a response will come (false for Produce with `acks = 0`).
    pub expects_response: bool,
}

/// One response frame, its header read, its body borrowed from the receive buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ResponseFrame<'a> {
    /// API of the request it answers.
    pub api_key: ApiKey,
    /// Version of that request.
    pub version: i16,
    /// Correlation id (equal to the request's).
    pub correlation_id: i32,
    /// The body after the header, borrowed.
    pub body: &'a [u8],
}

impl<'a> ResponseFrame<'a> {
    /// Decodes the body as `R`, which must be the response type of the request's API.
    pub fn decode<R: Response<'a>>(&self) -> Result<R, DecodeError> {
        if R::API_KEY != self.api_key {
            return Err(DecodeError::WrongApi {
                request: self.api_key.code(),
                decoded_as: R::API_KEY.code(),
            });
        }
        let mut reader = Reader::new(self.body, self.api_key.is_flexible(self.version));
        R::decode(&mut reader, self.version)
    }
}

/// The client side of a Kafka connection's framing: encodes requests with their headers and
/// correlation ids, and matches responses to them in request order.
///
/// Kafka answers the requests of one connection in the order they were sent, so the queue is a
/// FIFO; a response whose correlation id is not the oldest one in flight means the stream is out
/// of step and is an error. A Produce with `acks = 0` is never queued: no response comes.
#[derive(Debug)]
pub struct Correlator {
    client_id: Option<String>,
    next_id: i32,
    in_flight: VecDeque<InFlight>,
    frame: LengthPrefixed,
}

impl Correlator {
    /// A correlator sending `client_id` in every request header, accepting responses up to
    /// `limits.max_response_len`.
    #[must_use]
    pub fn new(client_id: Option<&str>, limits: &Limits) -> Self {
        Correlator {
            client_id: client_id.map(str::to_owned),
            next_id: 0,
            in_flight: VecDeque::new(),
            frame: LengthPrefixed::new(limits.max_response_len),
        }
    }

    /// Requests sent and not yet answered.
    #[must_use]
    pub fn in_flight(&self) -> usize {
        self.in_flight.len()
    }

    /// The correlation id of the oldest request not yet answered: whose response comes next.
    #[must_use]
    pub fn next_answer(&self) -> Option<i32> {
        self.in_flight.front().map(|f| f.correlation_id)
    }

    /// Bytes [`encode`](Correlator::encode) will write for `request` at `version`, so a driver can
    /// reserve exactly that much send-ring space.
    pub fn request_len<R: Request>(&self, request: &R, version: i16) -> Result<usize, EncodeError> {
        measure(self.write(request, version, 0, Writer::new(&mut [], false)))
    }

    /// Bytes [`encode_spliced`](Correlator::encode_spliced) will write for `request`: all of it
    /// but the payloads of its `records` fields.
    pub fn spliced_len<R: Request>(&self, request: &R, version: i16) -> Result<usize, EncodeError> {
        let mut splices = Vec::new();
        let w = Writer::splicing(&mut [], false, &mut splices);
        measure(self.write(request, version, 0, w))
    }

    /// Writes `request` framed with a request header (v1, or v2 for flexible versions) into
    /// `out`, and queues it unless no response will come.
    pub fn encode<R: Request>(
        &mut self,
        request: &R,
        version: i16,
        out: &mut [u8],
    ) -> Result<Sent, EncodeError> {
        self.queue(request, version, Writer::new(out, false))
    }

    /// [`encode`](Correlator::encode) with the payloads of `records` fields left out: `out`
    /// gets the rest, and `splices` the offset in `out` where each payload belongs, in the
    /// order the request holds them. Sent from where they lie between those pieces (a
    /// vectored write), record batches are never copied. `Sent::len` counts `out`'s bytes.
    pub fn encode_spliced<R: Request>(
        &mut self,
        request: &R,
        version: i16,
        out: &mut [u8],
        splices: &mut Vec<usize>,
    ) -> Result<Sent, EncodeError> {
        self.queue(request, version, Writer::splicing(out, false, splices))
    }

    fn queue<R: Request>(
        &mut self,
        request: &R,
        version: i16,
        w: Writer<'_>,
    ) -> Result<Sent, EncodeError> {
        let correlation_id = self.next_id;
        let len = self.write(request, version, correlation_id, w)?;
        self.next_id = self.next_id.wrapping_add(1);
        let expects_response = request.expects_response();
        if expects_response {
            self.in_flight.push_back(InFlight {
                correlation_id,
                api_key: R::API_KEY,
                version,
                tagged_header: R::API_KEY.response_header_is_flexible(version),
            });
        }
        Ok(Sent {
            correlation_id,
            len,
            expects_response,
        })
    }

    /// Writes the framed request with `w`, which starts out classic (the header's client id
    /// is never compact).
    fn write<R: Request>(
        &self,
        request: &R,
        version: i16,
        correlation_id: i32,
        mut w: Writer<'_>,
    ) -> Result<usize, EncodeError> {
        let key = R::API_KEY;
        if !key.versions().contains(&version) {
            return Err(EncodeError::UnsupportedVersion {
                api_key: key.code(),
                version,
            });
        }
        let flexible = key.is_flexible(version);
        w.i32(0);
        w.i16(key.code());
        w.i16(version);
        w.i32(correlation_id);
        w.nullable_string("client id", self.client_id.as_deref());
        w.set_flexible(flexible);
        w.tagged_fields();
        request.encode(&mut w, version);
        let size = w.position() - 4;
        let size = i32::try_from(size).map_err(|_| EncodeError::TooLong {
            what: "request",
            len: size,
        })?;
        w.patch_i32(0, size);
        w.finish()
    }

    /// Whether a whole response frame is at the front of `buf`, its header not yet read: its
    /// length with the size prefix when it is, so a driver can wait for it and then read it
    /// with [`parse_response`](Self::parse_response).
    pub fn frame_len(&mut self, buf: &[u8]) -> Result<Status<()>, DecodeError> {
        Ok(match self.size_prefixed(buf)? {
            Status::Complete(_, consumed) => Status::Complete((), consumed),
            Status::Partial { at_least } => Status::Partial { at_least },
        })
    }

    #[inline]
    fn size_prefixed<'a>(&mut self, buf: &'a [u8]) -> Result<Status<&'a [u8]>, DecodeError> {
        self.frame.parse(buf).map_err(|e| match e {
            ringwire_wire::FrameError::TooLong(exceeded) => exceeded.into(),
        })
    }

    /// Reads one response frame from the front of `buf`: `Partial` until the whole frame is
    /// there, then its header checked against the oldest request in flight.
    #[inline]
    pub fn parse_response<'a>(
        &mut self,
        buf: &'a [u8],
    ) -> Result<Status<ResponseFrame<'a>>, DecodeError> {
        let (frame, consumed) = match self.size_prefixed(buf)? {
            Status::Complete(frame, consumed) => (frame, consumed),
            Status::Partial { at_least } => return Ok(Status::Partial { at_least }),
        };
        let mut header = Cursor::new(frame);
        let correlation_id = header.i32_be()?;
        let Some(&front) = self.in_flight.front() else {
            return Err(DecodeError::UnexpectedResponse { correlation_id });
        };
        if front.correlation_id != correlation_id {
            return Err(DecodeError::CorrelationMismatch {
                expected: front.correlation_id,
                got: correlation_id,
            });
        }
        let mut body = header.remaining();
        if front.tagged_header {
            body = skip_tagged_fields(body)?;
        }
        self.in_flight.pop_front();
        Ok(Status::Complete(
            ResponseFrame {
                api_key: front.api_key,
                version: front.version,
                correlation_id,
                body,
            },
            consumed,
        ))
    }
}

impl Parse for Correlator {
    type Output<'a> = ResponseFrame<'a>;
    type Error = DecodeError;

    fn parse<'a>(&mut self, buf: &'a [u8]) -> Result<Status<ResponseFrame<'a>>, DecodeError> {
        self.parse_response(buf)
    }
}

/// `header` after its tagged fields. Inline for the usual case, no tags: one zero byte.
#[inline]
fn skip_tagged_fields(header: &[u8]) -> Result<&[u8], DecodeError> {
    match header {
        [0, rest @ ..] => Ok(rest),
        _ => {
            let mut reader = Reader::new(header, true);
            reader.tagged_fields()?;
            Ok(reader.remaining())
        }
    }
}

/// The length a writer over an empty span found.
fn measure(written: Result<usize, EncodeError>) -> Result<usize, EncodeError> {
    match written {
        Err(EncodeError::BufferTooSmall { need }) => Ok(need),
        other => other,
    }
}
