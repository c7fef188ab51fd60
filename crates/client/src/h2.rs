//! HTTP/2 under the client's exchange, sans-IO: a connection carries one
//! exchange at a time, as an HTTP/1.1 one does, so the pool, the round trip
//! and the body reader stay the same. The request head the builder wrote
//! is sent as a `HEADERS` frame; the response head is rewritten as an
//! HTTP/1.1 head for the same view ([`Response::head`](crate::blocking::Response::head));
//! body `DATA` is handed out in place in the receive ring.

use std::ops::Range;

use bytes::Bytes;
use ringwire_http1::{Limits, Method, RequestParser, ResponseParser, Status};
use ringwire_http2::frame::{StreamId, HEADER_LEN};
use ringwire_http2::{Connection, ErrorCode, Event, SendError};

use crate::{ClientConfig, Error, Trailers, Url};

/// Which protocol a connection speaks, with its per-connection state.
#[derive(Debug)]
pub(crate) enum Proto {
    /// HTTP/1.1, with its response parser kept warm.
    Http1(ResponseParser),
    /// HTTP/2.
    Http2(Box<H2>),
}

impl Proto {
    /// A connection's state, for HTTP/2 if `http2`.
    pub(crate) fn new(http2: bool, config: &ClientConfig) -> Proto {
        if http2 {
            Proto::Http2(Box::new(H2::new(config)))
        } else {
            Proto::Http1(ResponseParser::new(config.limits))
        }
    }

    pub(crate) fn protocol(&self) -> Protocol {
        match self {
            Proto::Http1(_) => Protocol::Http1,
            Proto::Http2(_) => Protocol::Http2,
        }
    }

    /// The last head received: in the ring's unread `data` (HTTP/1.1), or
    /// rewritten (HTTP/2).
    pub(crate) fn head<'a>(&'a self, data: &'a [u8]) -> ringwire_http1::Response<'a> {
        match self {
            Proto::Http1(parser) => parser.head().view(data),
            Proto::Http2(h2) => h2.head_view(),
        }
    }

    /// The HTTP/2 connection, if it is one.
    pub(crate) fn h2(&mut self) -> Option<&mut H2> {
        match self {
            Proto::Http1(_) => None,
            Proto::Http2(h2) => Some(h2),
        }
    }

    /// Whether the protocol lets the connection carry another request once
    /// the response is read (HTTP/1.1's own rules are the reader's).
    pub(crate) fn reusable(&self) -> bool {
        match self {
            Proto::Http1(_) => true,
            Proto::Http2(h2) => h2.reusable(),
        }
    }
}

/// Which protocol a response came over.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Protocol {
    /// HTTP/1.1 (or 1.0).
    Http1,
    /// HTTP/2.
    Http2,
}

/// Whether and how a client speaks HTTP/2.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Http2 {
    /// HTTP/1.1 only.
    #[default]
    Off,
    /// Offered to `https://` servers by ALPN, with `http/1.1`: the server
    /// chooses. `http://` stays HTTP/1.1.
    Negotiate,
    /// HTTP/2 from the start over `http://` (prior knowledge, RFC 9113
    /// section 3.3): the server must speak it. `https://` asks by ALPN, as
    /// with [`Negotiate`](Self::Negotiate).
    PriorKnowledge,
}

/// An HTTP/2 connection and the exchange under way on it.
#[derive(Debug)]
pub(crate) struct H2 {
    conn: Connection,
    /// Parses the request head the builder wrote, to send it as fields.
    request: RequestParser,
    /// The last response head (interim or final), as HTTP/1.1 text.
    head: Vec<u8>,
    /// Parses `head`, for the view.
    response: ResponseParser,
    /// The exchange's stream.
    stream: Option<StreamId>,
    /// The body's last `DATA` frame was handed out: its end comes next.
    ending: bool,
    /// Body bytes handed out and not yet given back to flow control.
    unreleased: usize,
    /// The server sent `GOAWAY`: no further request goes on this connection.
    going_away: bool,
    /// The trailer fields of the exchange's response, once they came.
    trailers: Trailers,
}

/// What the front of the ring holds, head-wise.
#[derive(Debug)]
pub(crate) enum HeadStep {
    /// Consume this much, send what [`H2::transmit`] holds, then fill.
    Need(usize),
    /// An interim head, in [`H2::head_view`]; consume this much.
    Interim { consumed: usize, status: u16 },
    /// The final head, in [`H2::head_view`]; consume this much.
    Final { consumed: usize, end_stream: bool },
}

/// Where the next piece of body lies.
#[derive(Debug)]
pub(crate) enum BodyStep {
    /// Body bytes at `piece` of the ring's unread span, handed out until
    /// `consumed` bytes are consumed.
    Data {
        piece: Range<usize>,
        consumed: usize,
    },
    /// Consume this much, send what [`H2::transmit`] holds, then fill.
    Need(usize),
    /// The body is complete once this much is consumed.
    Done(usize),
}

/// What one frame meant for the exchange, taken out of the event that
/// borrows the connection.
enum Seen {
    Nothing,
    Head {
        status: u16,
        interim: bool,
        end_stream: bool,
    },
    Data {
        piece: Range<usize>,
        end_stream: bool,
    },
    Trailers,
    Reset(ErrorCode),
}

impl H2 {
    /// Gives back what the connection's buffers grew to, for an idle connection.
    pub(crate) fn shrink(&mut self) {
        self.conn.shrink();
        self.head = Vec::new();
    }

    /// A client connection on `config`'s limits; its preface is in
    /// [`transmit`](Self::transmit).
    pub(crate) fn new(config: &ClientConfig) -> H2 {
        H2 {
            conn: client_connection(config),
            request: head_parser(),
            head: Vec::new(),
            response: ResponseParser::new(config.limits),
            stream: None,
            ending: false,
            unreleased: 0,
            going_away: false,
            trailers: Trailers::new(),
        }
    }

    /// Opens a stream with the request `head` (HTTP/1.1 text, as the
    /// builder wrote it) for `url`, and queues `body` (all of it, the
    /// stream's end) unless it is held back (`None`: sent later with
    /// [`send_body`](Self::send_body)).
    pub(crate) fn send(
        &mut self,
        url: &Url,
        head: &[u8],
        body: Option<&[u8]>,
    ) -> Result<(), Error> {
        let end_stream = body.is_some_and(<[u8]>::is_empty);
        let stream = open(&mut self.conn, &mut self.request, url, head, end_stream)?;
        self.stream = Some(stream);
        self.ending = false;
        self.unreleased = 0;
        match body {
            Some(body) if !end_stream => self.send_body(body),
            _ => Ok(()),
        }
    }

    /// Queues the request body held back, ending the stream.
    pub(crate) fn send_body(&mut self, body: &[u8]) -> Result<(), Error> {
        self.send_piece(body, true)
    }

    /// How much of a streamed body the server's windows take now.
    pub(crate) fn send_capacity(&self) -> usize {
        self.stream.map_or(0, |s| self.conn.send_capacity(s))
    }

    /// Sends `piece` of the request body, ending the stream with it if `end`: what
    /// the server's windows take now (all of a streamed body's piece, read within
    /// [`send_capacity`](Self::send_capacity)) goes into the send buffer, the rest
    /// waits in the connection's queue, which owns what it holds.
    pub(crate) fn send_piece(&mut self, piece: &[u8], end: bool) -> Result<(), Error> {
        let Some(stream) = self.stream else {
            return Ok(());
        };
        send_all(&mut self.conn, stream, piece, end).map_err(refused)
    }

    /// Counts the `len` bytes of a streamed body's piece as one `DATA` frame sent from
    /// where they are, if one frame can carry them now (the server's frame size and
    /// windows): its header, to send before them after [`transmit`](Self::transmit);
    /// `None` when it cannot (the piece then goes by [`send_piece`](Self::send_piece)).
    pub(crate) fn frame_in_place(
        &mut self,
        len: usize,
        end: bool,
    ) -> Result<Option<[u8; HEADER_LEN]>, Error> {
        let Some(stream) = self.stream else {
            return Ok(None);
        };
        if len
            > self
                .conn
                .max_send_frame()
                .min(self.conn.send_capacity(stream))
        {
            return Ok(None);
        }
        self.conn
            .send_data_in_place(stream, len, end)
            .map(Some)
            .map_err(refused)
    }

    /// The next run of bytes waiting to be sent (a body piece held by
    /// reference is a run of its own).
    pub(crate) fn transmit(&self) -> &[u8] {
        self.conn.transmit()
    }

    /// All the bytes waiting to be sent, over every run.
    pub(crate) fn pending(&self) -> usize {
        self.conn.pending()
    }

    /// The first `n` bytes waiting to be sent went out.
    pub(crate) fn advance(&mut self, n: usize) {
        self.conn.advance(n);
    }

    /// The trailer fields the response's body ended with (none if it had none).
    pub(crate) fn take_trailers(&mut self) -> Trailers {
        std::mem::replace(&mut self.trailers, Trailers::new())
    }

    /// The last head received, as an HTTP/1.1 head.
    pub(crate) fn head_view(&self) -> ringwire_http1::Response<'_> {
        self.response.head().view(&self.head)
    }

    /// Whether the connection can carry another request.
    fn reusable(&self) -> bool {
        !self.going_away && self.conn.open_streams() == 0
    }

    /// Handles frames at the front of `data` until the response's next head.
    pub(crate) fn head(&mut self, data: &[u8]) -> Result<HeadStep, Error> {
        let mut used = 0;
        loop {
            let (n, seen) = self.frame(&data[used..])?;
            used += n;
            match seen {
                Seen::Nothing if n == 0 => return Ok(HeadStep::Need(used)),
                Seen::Head {
                    status,
                    interim,
                    end_stream,
                } => {
                    // Fields HTTP/2 allows and HTTP/1.1 does not (a value
                    // with a control byte) make the head the server's fault.
                    match self.response.parse(&self.head, Method::Get) {
                        Ok(Status::Complete(..)) => {}
                        Ok(Status::Partial { .. }) => return Err(Error::Closed),
                        Err(e) => return Err(Error::Response(e)),
                    }
                    return Ok(if interim {
                        HeadStep::Interim {
                            consumed: used,
                            status,
                        }
                    } else {
                        HeadStep::Final {
                            consumed: used,
                            end_stream,
                        }
                    });
                }
                Seen::Reset(code) => return Err(Error::Http2Reset(code)),
                // Body before a head: the connection resets such a stream.
                Seen::Nothing | Seen::Data { .. } | Seen::Trailers => {}
            }
        }
    }

    /// Handles frames at the front of `data` until the next piece of body.
    pub(crate) fn body(&mut self, data: &[u8]) -> Result<BodyStep, Error> {
        if let Some(stream) = self.stream {
            self.conn
                .release(stream, std::mem::take(&mut self.unreleased));
        }
        if self.ending {
            return Ok(BodyStep::Done(0));
        }
        let mut used = 0;
        loop {
            let (n, seen) = self.frame(&data[used..])?;
            let start = used;
            used += n;
            match seen {
                Seen::Nothing if n == 0 => return Ok(BodyStep::Need(start)),
                Seen::Data { piece, end_stream } if piece.is_empty() => {
                    if end_stream {
                        return Ok(BodyStep::Done(used));
                    }
                }
                Seen::Data { piece, end_stream } => {
                    self.ending = end_stream;
                    self.unreleased = piece.len();
                    return Ok(BodyStep::Data {
                        piece: start + piece.start..start + piece.end,
                        consumed: used,
                    });
                }
                Seen::Trailers => return Ok(BodyStep::Done(used)),
                Seen::Reset(code) => return Err(Error::Http2Reset(code)),
                Seen::Nothing | Seen::Head { .. } => {}
            }
        }
    }

    /// Handles the frame at the front of `data`: how many bytes it took,
    /// and what it meant for the exchange.
    fn frame(&mut self, data: &[u8]) -> Result<(usize, Seen), Error> {
        let ours = self.stream;
        let (n, event) = self.conn.recv(data).map_err(Error::Http2)?;
        let seen = match event {
            None => Seen::Nothing,
            Some(Event::Response {
                stream,
                status,
                fields,
                end_stream,
            }) if Some(stream) == ours => {
                fields.write_http1_response(status, &mut self.head);
                Seen::Head {
                    status,
                    interim: false,
                    end_stream,
                }
            }
            Some(Event::Interim {
                stream,
                status,
                fields,
            }) if Some(stream) == ours => {
                fields.write_http1_response(status, &mut self.head);
                Seen::Head {
                    status,
                    interim: true,
                    end_stream: false,
                }
            }
            Some(Event::Data {
                stream,
                data: piece,
                end_stream,
            }) if Some(stream) == ours => {
                // The piece is a slice of `data`: where it starts in it.
                let start = piece.as_ptr() as usize - data.as_ptr() as usize;
                Seen::Data {
                    piece: start..start + piece.len(),
                    end_stream,
                }
            }
            Some(Event::Trailers { stream, fields }) if Some(stream) == ours => {
                self.trailers = Trailers::of(fields.iter());
                Seen::Trailers
            }
            Some(Event::Reset { stream, code, .. }) if Some(stream) == ours => Seen::Reset(code),
            Some(Event::GoAway { last_stream, .. }) => {
                self.going_away = true;
                match ours {
                    // Never processed: safe to send again elsewhere.
                    Some(stream) if stream.get() > last_stream.get() => {
                        Seen::Reset(ErrorCode::REFUSED_STREAM)
                    }
                    _ => Seen::Nothing,
                }
            }
            Some(_) => Seen::Nothing,
        };
        Ok((n, seen))
    }
}

/// A client connection on `config`'s limits, its preface queued.
pub(crate) fn client_connection(config: &ClientConfig) -> Connection {
    Connection::client(ringwire_http2::Config {
        max_header_list_size: u32::try_from(config.limits.max_head_len).unwrap_or(u32::MAX),
        ..ringwire_http2::Config::default()
    })
}

/// The parser [`open`] reads request heads with: bounded by the request buffer's room
/// already.
pub(crate) fn head_parser() -> RequestParser {
    RequestParser::new(Limits {
        max_head_len: usize::MAX,
        max_headers: usize::MAX,
        max_target_len: usize::MAX,
        ..Limits::default()
    })
}

/// Opens a stream on `conn` with the request `head` (HTTP/1.1 text, as the builder wrote
/// it, read by `parser`) for `url`; `end_stream` when no body follows.
pub(crate) fn open(
    conn: &mut Connection,
    parser: &mut RequestParser,
    url: &Url,
    head: &[u8],
    end_stream: bool,
) -> Result<StreamId, Error> {
    let request = match parser.parse(head) {
        Ok(Status::Complete(request, _)) => request,
        // The builder wrote the head whole: only a bound can refuse it.
        Ok(Status::Partial { .. }) => return Err(Error::StaleRequest),
        Err(e) => return Err(Error::Http2Request(e)),
    };
    let authority = request.header("host").unwrap_or_default();
    let fields = request
        .headers()
        .iter()
        .filter(|h| !h.name.eq_ignore_ascii_case("host"))
        .map(|h| (h.name.as_bytes(), h.value));
    conn.send_request(
        request.method().as_str().as_bytes(),
        url.origin().scheme().as_str().as_bytes(),
        authority,
        request.target().as_bytes(),
        fields,
        end_stream,
    )
    .map_err(refused)
}

/// Sends `piece` of `stream`'s body, ending the stream with it if `end`: what the peer's
/// windows take now goes into the send buffer, the rest is copied into the stream's queue.
pub(crate) fn send_all(
    conn: &mut Connection,
    stream: StreamId,
    piece: &[u8],
    end: bool,
) -> Result<(), SendError> {
    let sent = conn.send_data_now(stream, piece, end)?;
    if sent < piece.len() {
        conn.send_data(stream, Bytes::copy_from_slice(&piece[sent..]), end)?;
    }
    Ok(())
}

/// Why a request could not go out on the connection: nothing of it was
/// sent, so a fresh connection may take it (unless it is too large for the
/// server).
pub(crate) fn refused(error: SendError) -> Error {
    match error {
        SendError::HeaderListTooLarge { limit } => Error::RequestHeadTooLarge {
            limit: limit as usize,
        },
        SendError::ConnectionFailed
        | SendError::GoingAway
        | SendError::TooManyStreams
        | SendError::StreamIdsExhausted => Error::Http2Reset(ErrorCode::REFUSED_STREAM),
        _ => Error::Http2Reset(ErrorCode::INTERNAL_ERROR),
    }
}
