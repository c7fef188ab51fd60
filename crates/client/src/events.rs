//! Server-sent events for both drivers: read from a response's pieces (where the reader is
//! in the piece the response handed out last, which the response can hand out again), and
//! an event source's reconnections (what it asks for, when it tries again, when it stops).

use std::time::Duration;

use ringwire_sse::{Limits, Message, Parser, Step};

use crate::{Error, Request, RequestBuffer, Url};

/// The parser, and how far into the response's last piece it has read.
#[derive(Debug)]
pub(crate) struct Cursor {
    parser: Parser,
    /// How much of the piece the response handed out last the parser has taken.
    at: usize,
    /// A piece was taken since the reader was made (an earlier one is not its to read).
    started: bool,
    /// The stream broke the parser's limits.
    broken: bool,
}

impl Cursor {
    pub(crate) fn new(limits: Limits) -> Self {
        Cursor {
            parser: Parser::new(limits),
            at: 0,
            started: false,
            broken: false,
        }
    }

    /// The next event of `handed`, the response's last piece again; `None` once it holds no
    /// more (the rest of it kept), and the next piece is to be taken.
    pub(crate) fn step<'a>(
        &'a mut self,
        handed: Option<&'a [u8]>,
    ) -> Result<Option<Message<'a>>, Error> {
        if !self.started {
            return Ok(None);
        }
        let rest = handed
            .unwrap_or_default()
            .get(self.at..)
            .unwrap_or_default();
        match self.parser.next(rest) {
            Ok(Step::Message(message, used)) => {
                self.at += used;
                Ok(Some(message))
            }
            Ok(Step::Need) => Ok(None),
            Err(e) => {
                self.broken = true;
                Err(e.into())
            }
        }
    }

    /// The response is about to hand out its next piece.
    pub(crate) fn next_piece(&mut self) {
        self.at = 0;
        self.started = true;
    }

    /// A reconnection's response comes next: no piece taken from it yet.
    pub(crate) fn restart(&mut self) {
        self.parser.restart();
        self.at = 0;
        self.started = false;
    }

    /// Whether the stream broke the parser's limits (and so is to be read no further).
    pub(crate) fn is_broken(&self) -> bool {
        self.broken
    }

    pub(crate) fn parser(&self) -> &Parser {
        &self.parser
    }
}

/// The accessors both drivers' `Events` share.
macro_rules! stream_state {
    () => {
        /// The last `id` the stream gave (empty if none): what a reconnection sends as
        /// `Last-Event-ID`.
        #[must_use]
        pub fn last_event_id(&self) -> &str {
            self.cursor.parser().last_event_id()
        }

        /// The reconnection time the stream asked for (`retry`), in milliseconds.
        #[must_use]
        pub fn retry(&self) -> Option<u64> {
            self.cursor.parser().retry()
        }

        /// The reader of events no longer than `limits` say (1 MiB each by default).
        #[must_use]
        pub fn with_limits(self, limits: ringwire_sse::Limits) -> Self {
            Self {
                cursor: crate::events::Cursor::new(limits),
                ..self
            }
        }
    };
}
pub(crate) use stream_state;

/// What an event source asks for, and when it tries again.
#[derive(Debug)]
pub(crate) struct Plan {
    url: Url,
    pub(crate) headers: Vec<(String, Vec<u8>)>,
    /// The wait before a reconnection until the stream names its own (`retry`).
    pub(crate) retry: Duration,
    pub(crate) max_attempts: Option<u32>,
    /// Attempts in a row that opened no stream.
    failures: u32,
    /// How long to wait before the next attempt.
    wait: Option<Duration>,
    pub(crate) reconnects: u64,
    pub(crate) last_error: Option<Error>,
    /// The server said no more (`204`), or an error ended the source.
    done: bool,
}

/// The wait before a reconnection when the stream names none, as browsers wait.
const DEFAULT_RETRY: Duration = Duration::from_secs(3);

/// The longest wait that failing attempts double the reconnection time to (unless the
/// stream asks for longer).
const MAX_BACKOFF: Duration = Duration::from_secs(30);

impl Plan {
    pub(crate) fn new(url: Url) -> Self {
        Plan {
            url,
            headers: Vec::new(),
            retry: DEFAULT_RETRY,
            max_attempts: None,
            failures: 0,
            wait: None,
            reconnects: 0,
            last_error: None,
            done: false,
        }
    }

    /// The request that opens (or reopens) the stream, in `buffer`.
    pub(crate) fn request(
        &self,
        buffer: &mut RequestBuffer,
        last_event_id: &str,
    ) -> Result<Request<'_>, Error> {
        let mut request = buffer
            .request("GET", &self.url)?
            .headers()?
            .header("accept", ringwire_sse::CONTENT_TYPE)?
            .header("cache-control", "no-cache")?;
        if !last_event_id.is_empty() {
            request = request.header("last-event-id", last_event_id)?;
        }
        for (name, value) in &self.headers {
            request = request.header(name, value)?;
        }
        request.finish()
    }

    /// Whether an answer opened a stream (`false`: a `204`, the server's way to say it has
    /// no more, and the source is done).
    pub(crate) fn opened(
        &mut self,
        status: u16,
        content_type: Option<&[u8]>,
    ) -> Result<bool, Error> {
        let media_type = content_type.map(|value| {
            let end = value.iter().position(|&b| b == b';').unwrap_or(value.len());
            value[..end].trim_ascii()
        });
        let is_stream = media_type
            .is_some_and(|m| m.eq_ignore_ascii_case(ringwire_sse::CONTENT_TYPE.as_bytes()));
        match status {
            200 if is_stream => {
                self.failures = 0;
                Ok(true)
            }
            204 => {
                self.done = true;
                Ok(false)
            }
            _ => Err(Error::NotEventStream {
                status,
                content_type: content_type.map(|v| String::from_utf8_lossy(v).into_owned()),
            }),
        }
    }

    /// The stream ended, by the server's choice (`error` `None`) or the network's: the next
    /// attempt waits the reconnection time.
    pub(crate) fn ended(&mut self, error: Option<Error>, parser: &Parser) {
        self.last_error = error;
        self.wait = Some(self.reconnection_time(parser));
        self.reconnects += 1;
    }

    /// An attempt to open the stream failed: the next waits the reconnection time, and each
    /// after another failure twice as long as the last, up to [`MAX_BACKOFF`]. An error no new attempt can mend (the request's, or an answer that is
    /// not a stream), or one past [`max_attempts`](Self::max_attempts), ends the source.
    pub(crate) fn failed(&mut self, error: Error, parser: &Parser) -> Result<(), Error> {
        self.failures += 1;
        let exhausted = self.max_attempts.is_some_and(|max| self.failures >= max);
        if exhausted || !transient(&error) {
            self.done = true;
            return Err(error);
        }
        let time = self.reconnection_time(parser);
        let doubled = time.saturating_mul(1 << (self.failures - 1).min(16));
        self.wait = Some(doubled.min(MAX_BACKOFF.max(time)));
        self.last_error = Some(error);
        self.reconnects += 1;
        Ok(())
    }

    /// The wait before the next attempt, once taken.
    pub(crate) fn take_wait(&mut self) -> Option<Duration> {
        self.wait.take()
    }

    pub(crate) fn is_done(&self) -> bool {
        self.done
    }

    fn reconnection_time(&self, parser: &Parser) -> Duration {
        parser.retry().map_or(self.retry, Duration::from_millis)
    }
}

/// Whether a later attempt may succeed where this one failed: the network's failures and
/// the server's broken answers, not the caller's request nor TLS's verdict on the server.
fn transient(error: &Error) -> bool {
    match error {
        Error::Tls(e) => matches!(e, ringwire_tls::TlsError::Io(_)),
        Error::Connect { .. }
        | Error::Timeout(_)
        | Error::Io(_)
        | Error::Closed
        | Error::Response(_)
        | Error::Http2(_)
        | Error::Http2Reset(_)
        | Error::IncompleteBody { .. }
        | Error::Decompress { .. } => true,
        _ => false,
    }
}

/// The builders and accessors both drivers' `EventSource` share.
macro_rules! source_api {
    () => {
        /// Sends `name: value` with every request (`authorization`, say); a field the
        /// encoder refuses fails the first [`next`](Self::next).
        #[must_use]
        pub fn header(mut self, name: &str, value: impl Into<Vec<u8>>) -> Self {
            self.plan.headers.push((name.to_owned(), value.into()));
            self
        }

        /// The wait before a reconnection while the stream has named none with `retry`
        /// (3 s, as browsers wait, by default). Attempts that fail in a row each wait twice
        /// as long as the last, up to 30 s (or the reconnection time, when longer).
        #[must_use]
        pub fn retry(mut self, time: std::time::Duration) -> Self {
            self.plan.retry = time;
            self
        }

        /// Gives up after `attempts` in a row open no stream, [`next`](Self::next) then
        /// returning the last one's error (by default it tries as long as it is read, as
        /// browsers do).
        #[must_use]
        pub fn max_attempts(mut self, attempts: u32) -> Self {
            self.plan.max_attempts = Some(attempts.max(1));
            self
        }

        /// Events no longer than `limits` say (1 MiB each by default).
        #[must_use]
        pub fn limits(mut self, limits: ringwire_sse::Limits) -> Self {
            self.cursor = crate::events::Cursor::new(limits);
            self
        }

        /// The last `id` the stream gave (empty if none): sent as `Last-Event-ID` by every
        /// reconnection.
        #[must_use]
        pub fn last_event_id(&self) -> &str {
            self.cursor.parser().last_event_id()
        }

        /// How many times the source has reconnected (or tried to).
        #[must_use]
        pub fn reconnects(&self) -> u64 {
            self.plan.reconnects
        }

        /// Why the source reconnected last: the error that ended its stream or failed its
        /// last attempt; `None` when the server ended the stream (or it never reconnected).
        #[must_use]
        pub fn last_error(&self) -> Option<&crate::Error> {
            self.plan.last_error.as_ref()
        }
    };
}
pub(crate) use source_api;

/// The body of both drivers' `EventSource::next`: `$sleep` waits out a reconnection time, and
/// the tokio driver passes `await`, which every call that waits then takes.
macro_rules! source_next {
    ($source:expr, $sleep:path $(, $aw:tt)?) => {{
        use polonius_the_crab::prelude::*;
        let mut this = $source;
        loop {
            if this.plan.is_done() || this.cursor.is_broken() {
                this.response = None;
                return Ok(None);
            }
            if this.response.is_none() {
                if let Some(wait) = this.plan.take_wait() {
                    $sleep(wait)$(.$aw)?;
                }
                // Ask for the stream; keep the response if it is one.
                let opened = 'open: {
                    let last_event_id = this.cursor.parser().last_event_id();
                    let request = match this.plan.request(&mut this.buffer, last_event_id) {
                        Ok(request) => request,
                        Err(e) => break 'open Err(e),
                    };
                    let response = match this.client.send(&mut this.buffer, &request)$(.$aw)? {
                        Ok(response) => response,
                        Err(e) => break 'open Err(e),
                    };
                    let content_type = response.header("content-type");
                    this.plan.opened(response.status(), content_type).map(|stream| {
                        if stream {
                            this.cursor.restart();
                            this.response = Some(response);
                        }
                    })
                };
                if let Err(e) = opened {
                    this.plan.failed(e, this.cursor.parser())?;
                }
                continue;
            }
            // As `Events::next`: a message borrows the piece, the loop must not.
            polonius!(
                |this| -> Result<Option<ringwire_sse::Message<'polonius>>, crate::Error> {
                    let handed = this.response.as_ref().and_then(|r| r.handed());
                    match this.cursor.step(handed) {
                        Ok(None) => {}
                        found => polonius_return!(found),
                    }
                }
            );
            this.cursor.next_piece();
            let Some(response) = this.response.as_mut() else {
                continue;
            };
            let ended = match response.chunk()$(.$aw)? {
                Ok(Some(_)) => continue,
                Ok(None) => None,
                Err(e) => Some(e),
            };
            this.response = None;
            this.plan.ended(ended, this.cursor.parser());
        }
    }};
}
pub(crate) use source_next;
