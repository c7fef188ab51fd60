//! Server-sent events: a `text/event-stream` answer fed by a task, each event written as
//! one chunk so the client sees it as soon as it is sent.

use std::fmt;

pub use ringwire_sse::Event;
use ringwire_sse::{EncodeError, CONTENT_TYPE};

use crate::{Body, BodyClosed, BodySender, Response};

/// Sends the events of an answer made by [`Response::events`]; the stream ends when it is
/// dropped.
#[derive(Debug, Clone)]
pub struct EventSender(BodySender);

/// An event that was not sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SendError {
    /// The client left: stop producing.
    Closed,
    /// The event's type or id holds a line break.
    Encode(EncodeError),
}

impl fmt::Display for SendError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SendError::Closed => fmt::Display::fmt(&BodyClosed, f),
            SendError::Encode(e) => fmt::Display::fmt(e, f),
        }
    }
}

impl std::error::Error for SendError {}

impl From<BodyClosed> for SendError {
    fn from(_: BodyClosed) -> Self {
        SendError::Closed
    }
}

impl Response {
    /// A `200` event stream (`content-type: text/event-stream`, not cached), and the sender a
    /// task feeds it through, up to `buffer` events waiting (then `send` waits for the
    /// client). Compression middleware leaves it alone, as every streamed body.
    #[must_use]
    pub fn events(buffer: usize) -> (EventSender, Response) {
        let (tx, body) = Body::channel(buffer);
        let response = Response::new(200)
            .header("content-type", CONTENT_TYPE)
            .header("cache-control", "no-cache")
            .body(body);
        (EventSender(tx), response)
    }
}

impl EventSender {
    /// Sends `event`, waiting while `buffer` events wait for the client.
    ///
    /// # Errors
    ///
    /// [`SendError::Closed`] once the client is gone; [`SendError::Encode`] for a type or
    /// id with a line break (nothing sent).
    pub async fn send(&self, event: Event<'_>) -> Result<(), SendError> {
        let bytes = event.to_vec().map_err(SendError::Encode)?;
        Ok(self.0.send(bytes).await?)
    }

    /// Waits until the client is gone (see [`BodySender::closed`]): for a task that waits on
    /// something else between events, to stop as soon as no one listens.
    pub async fn closed(&self) {
        self.0.closed().await;
    }

    /// Sends a comment, which clients skip: keeps an idle stream's connection from being
    /// closed by proxies that time out silent ones.
    ///
    /// # Errors
    ///
    /// The client is gone.
    pub async fn comment(&self, text: &str) -> Result<(), BodyClosed> {
        let mut bytes = Vec::new();
        ringwire_sse::comment(text, &mut bytes);
        self.0.send(bytes).await
    }
}
