//! Informational (1xx) answers a handler sends before its final one, `103 Early Hints`
//! above all: written and flushed at once over HTTP/1.1 (the connection waits on the
//! handler meanwhile, so its send ring is free), queued for the connection over HTTP/2.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, PoisonError};

use ringwire_http1::encode::{EncodeError, FieldBlock, ResponseWriter};
use ringwire_http1::Version;
use ringwire_http2::frame::StreamId;
use ringwire_http2::Connection;
use ringwire_io::tokio::AsyncSendTransport;
use ringwire_io::TransportError;
use tokio::sync::Notify;

use crate::Socket;

/// Why an informational answer was not sent.
#[derive(Debug)]
#[non_exhaustive]
pub enum InformationalError {
    /// Not in `102..=199`: the server itself sends `100 Continue` (when a request expects
    /// it), and `101 Switching Protocols` is a final answer ([`Response::upgrade`](crate::Response::upgrade)).
    Status(u16),
    /// The head could not be written (the send ring's bound, or a bug).
    Encode(EncodeError),
    /// The connection failed.
    Transport(TransportError),
}

impl fmt::Display for InformationalError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Status(status) => write!(f, "{status} is not an informational status to send"),
            Self::Encode(e) => write!(f, "informational head: {e}"),
            Self::Transport(e) => write!(f, "informational head: {e}"),
        }
    }
}

impl std::error::Error for InformationalError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Status(_) => None,
            Self::Encode(e) => Some(e),
            Self::Transport(e) => Some(e),
        }
    }
}

/// What a [`Sink`] gives back: sent, or why not.
pub(crate) type Sent<'a> =
    Pin<Box<dyn Future<Output = Result<(), InformationalError>> + Send + 'a>>;

/// Where a request's informational heads go.
pub(crate) trait Sink: fmt::Debug + Send + Sync {
    /// Sends `status` (checked to be `102..=199`) with `fields`.
    fn send<'a>(&'a self, status: u16, fields: &'a FieldBlock) -> Sent<'a>;
}

/// HTTP/1.1: the connection's send transport, lent to the handler for its call.
#[derive(Debug)]
pub(crate) struct Http1<'t, 's>(tokio::sync::Mutex<&'t mut AsyncSendTransport<&'s Socket>>);

impl<'t, 's> Http1<'t, 's> {
    pub(crate) fn new(tx: &'t mut AsyncSendTransport<&'s Socket>) -> Self {
        Http1(tokio::sync::Mutex::new(tx))
    }
}

impl Sink for Http1<'_, '_> {
    fn send<'a>(&'a self, status: u16, fields: &'a FieldBlock) -> Sent<'a> {
        Box::pin(async move {
            let mut tx = self.0.lock().await;
            // Status line (at most `HTTP/1.1 NNN ` and a standard phrase) and the end.
            let need = 64 + fields.as_bytes().len();
            let buf = tx
                .reserve(need)
                .await
                .map_err(InformationalError::Transport)?;
            let encode = |buf| {
                let mut head = ResponseWriter::new(buf, Version::Http11, status, None)?;
                head.fields(fields)?;
                head.finish()
            };
            let n = encode(buf).map_err(InformationalError::Encode)?;
            tx.commit(n);
            // Hints are worth something only if they arrive before the answer.
            tx.flush().await.map_err(InformationalError::Transport)
        })
    }
}

/// HTTP/2: heads the connection's handlers queued, sent by the connection before their
/// streams' final answers (it drains the queue before it sends any answer).
#[derive(Debug, Default)]
pub(crate) struct Queue {
    heads: Mutex<Vec<(StreamId, u16, FieldBlock)>>,
    /// Whether `heads` may hold some: most answers come with none, and look here alone.
    any: AtomicBool,
    queued: Notify,
}

impl Queue {
    /// Resolves once a handler queued a head.
    pub(crate) async fn queued(&self) {
        self.queued.notified().await;
    }

    /// Encodes every queued head into `conn`'s send buffer.
    pub(crate) fn send_all(&self, conn: &mut Connection) {
        // A plain load first: most answers come with no heads, and a swap is a locked
        // instruction on every one of them.
        if !self.any.load(Ordering::Relaxed) || !self.any.swap(false, Ordering::Acquire) {
            return;
        }
        let heads = std::mem::take(&mut *self.heads.lock().unwrap_or_else(PoisonError::into_inner));
        for (id, status, fields) in heads {
            let fields = fields.iter().map(|(name, value)| (name.as_bytes(), value));
            // Refused only when the client reset the stream meanwhile: nothing to send.
            let _ = conn.send_informational(id, status, fields);
        }
    }

    /// The sink of stream `id`'s handler.
    pub(crate) fn of(&self, id: StreamId) -> Http2<'_> {
        Http2 { id, queue: self }
    }
}

/// HTTP/2: one stream's way into the connection's [`Queue`].
#[derive(Debug)]
pub(crate) struct Http2<'q> {
    id: StreamId,
    queue: &'q Queue,
}

impl Sink for Http2<'_> {
    fn send<'a>(&'a self, status: u16, fields: &'a FieldBlock) -> Sent<'a> {
        let head = (self.id, status, fields.clone());
        self.queue
            .heads
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(head);
        self.queue.any.store(true, Ordering::Release);
        self.queue.queued.notify_one();
        Box::pin(std::future::ready(Ok(())))
    }
}
