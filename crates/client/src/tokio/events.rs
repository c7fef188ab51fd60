//! A response body read as server-sent events, event by event, in place.

use polonius_the_crab::prelude::*;
use ringwire_sse::{Limits, Message, Parser, Step};

use super::Response;
use crate::Error;

/// The events of a response ([`Response::events`]).
#[derive(Debug)]
pub struct Events<'r, 'c> {
    response: &'r mut Response<'c>,
    parser: Parser,
    /// How much of the piece the response handed out last the parser has taken.
    at: usize,
    /// A piece was taken since the reader was made (an earlier one is not its to read).
    started: bool,
}

impl<'r, 'c> Events<'r, 'c> {
    pub(super) fn new(response: &'r mut Response<'c>, limits: Limits) -> Self {
        Events {
            response,
            parser: Parser::new(limits),
            at: 0,
            started: false,
        }
    }

    /// The reader of events no longer than `limits` say (1 MiB each by default).
    #[must_use]
    pub fn with_limits(self, limits: Limits) -> Self {
        Events {
            parser: Parser::new(limits),
            ..self
        }
    }

    /// The next event, valid until the next call; `None` at the end of the body (where an
    /// event without its blank line is dropped, as browsers drop it). An event whole in one
    /// piece of the body borrows it; one cut between pieces is joined from a copy of its
    /// start.
    ///
    /// # Errors
    ///
    /// As [`Response::chunk`], and [`Error::EventStream`] for an event over the limit.
    pub async fn next(&mut self) -> Result<Option<Message<'_>>, Error> {
        let mut this = self;
        loop {
            // A message borrows the piece; the loop that reads the next piece must not,
            // which plain borrows cannot express yet.
            polonius!(|this| -> Result<Option<Message<'polonius>>, Error> {
                if this.started {
                    let piece = this.response.handed().unwrap_or_default();
                    let rest = piece.get(this.at..).unwrap_or_default();
                    match this.parser.next(rest) {
                        Ok(Step::Message(message, used)) => {
                            this.at += used;
                            polonius_return!(Ok(Some(message)));
                        }
                        Ok(Step::Need) => {}
                        Err(e) => polonius_return!(Err(e.into())),
                    }
                }
            });
            this.at = 0;
            this.started = true;
            if this.response.chunk().await?.is_none() {
                return Ok(None);
            }
        }
    }

    /// The last `id` the stream gave (empty if none): what a reconnection sends as
    /// `Last-Event-ID`.
    #[must_use]
    pub fn last_event_id(&self) -> &str {
        self.parser.last_event_id()
    }

    /// The reconnection time the stream asked for (`retry`), in milliseconds.
    #[must_use]
    pub fn retry(&self) -> Option<u64> {
        self.parser.retry()
    }
}
