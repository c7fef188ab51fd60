//! Server-sent events, event by event, in place: one response's body ([`Events`]), or a
//! stream that reconnects as browsers' `EventSource` does ([`EventSource`]).

use polonius_the_crab::prelude::*;
use ringwire_sse::{Limits, Message};

use super::{Client, Response};
use crate::events::{source_api, source_next, stream_state, Cursor, Plan};
use crate::{Error, RequestBuffer, Url};

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

/// An event stream that reconnects, as browsers' `EventSource` does
/// ([`Client::event_source`]): when the stream ends or the connection fails, it waits the
/// reconnection time (the stream's `retry`, else [`retry`](Self::retry)'s) and asks again,
/// with `Last-Event-ID` set to the last id the stream gave, so the server can go on where
/// it stopped. An answer other than `200 text/event-stream` ends it
/// ([`Error::NotEventStream`]), a `204` ends it quietly.
///
/// Each request runs under [`ClientConfig::request_timeout`](crate::ClientConfig) like any
/// other, so a client with one reconnects that often: streams are best read by a client
/// without it.
#[derive(Debug)]
pub struct EventSource<'c> {
    client: &'c Client,
    plan: Plan,
    buffer: RequestBuffer,
    response: Option<Response<'c>>,
    cursor: Cursor,
}

impl Client {
    /// The events of `url` ([`EventSource`]); nothing is sent before the first
    /// [`next`](EventSource::next).
    ///
    /// # Errors
    ///
    /// [`Error::Url`]; a request buffer that cannot be mapped ([`Error::Ring`]).
    pub fn event_source(&self, url: &str) -> Result<EventSource<'_>, Error> {
        Ok(EventSource {
            client: self,
            plan: Plan::new(Url::parse(url)?),
            buffer: RequestBuffer::new()?,
            response: None,
            cursor: Cursor::new(Limits::default()),
        })
    }
}

impl EventSource<'_> {
    /// The next event, valid until the next call, reconnecting as often as it takes (see
    /// [`EventSource`]); `None` once the server answered `204` (and ever after).
    ///
    /// # Errors
    ///
    /// [`Error::NotEventStream`]; the request's own errors ([`Error::Encode`] for a field
    /// of [`header`](Self::header), say), a TLS verdict on the server, and an event over
    /// the limits ([`Error::EventStream`]), none of which another attempt mends; after
    /// [`max_attempts`](Self::max_attempts) failed in a row, the last one's error. The
    /// source then ends: later calls return `None`.
    pub async fn next(&mut self) -> Result<Option<Message<'_>>, Error> {
        source_next!(self, ::tokio::time::sleep, await)
    }

    source_api!();
}
