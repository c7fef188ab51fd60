//! A response body read as server-sent events, event by event, in place.

use polonius_the_crab::prelude::*;
use ringwire_sse::{Limits, Message};

use super::Response;
use crate::events::{stream_state, Cursor};
use crate::Error;

/// The events of a response ([`Response::events`]).
#[derive(Debug)]
pub struct Events<'r, 'c> {
    response: &'r mut Response<'c>,
    cursor: Cursor,
}

impl<'r, 'c> Events<'r, 'c> {
    pub(super) fn new(response: &'r mut Response<'c>) -> Self {
        Events {
            response,
            cursor: Cursor::new(Limits::default()),
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
                match this.cursor.step(this.response.handed()) {
                    Ok(None) => {}
                    found => polonius_return!(found),
                }
            });
            this.cursor.next_piece();
            if this.response.chunk().await?.is_none() {
                return Ok(None);
            }
        }
    }

    stream_state!();
}
