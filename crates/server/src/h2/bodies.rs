//! The response bodies an HTTP/2 connection produces a piece at a time (files, streams, and
//! the tunnels' protocols behind them), and which of them to poll: each body has a waker of
//! its own, so one is polled when its source woke it (or it is new, or it just gave a piece,
//! or its queue drained), never because another did. Polling every body at each wake-up
//! made a connection with many long streams (WebSockets, server-sent events) pay for all
//! of them at every message.

use std::os::unix::fs::FileExt as _;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};

use bytes::{Bytes, BytesMut};
use foldhash::{HashMap, HashMapExt};
use futures_core::Stream as _;
use futures_util::task::{waker_ref, ArcWake, AtomicWaker};
use ringwire_http2::frame::StreamId;
use ringwire_http2::{Connection, ErrorCode};

use crate::{BodyStream, FileBody};

/// How much of one response body waits in the connection at most before more is read
/// from its file or stream.
pub(crate) const BODY_QUEUE: usize = 256 << 10;

/// How much of all the bodies of a connection waits for window at most before more is read:
/// a client that opens many streams and grants no window holds this much, not
/// [`BODY_QUEUE`] per stream.
const CONNECTION_QUEUE: usize = 1 << 20;

/// How much of a file is read at a time.
const FILE_PIECE: u64 = 64 << 10;

/// The bodies being sent.
pub(super) struct Bodies {
    producers: HashMap<StreamId, Producer>,
    ready: Arc<Ready>,
    /// Streams whose bodies have bytes queued for window (what [`CONNECTION_QUEUE`] bounds).
    waiting: Vec<StreamId>,
    /// Streams woken while their queue was full: scheduled again once it drains.
    parked: Vec<StreamId>,
    /// Wakers of bodies that ended and that nothing holds any more, for the next ones.
    spare: Vec<Arc<Wakeup>>,
}

struct Producer {
    source: Source,
    wakeup: Arc<Wakeup>,
}

/// The streams whose bodies may have a piece, and the connection's task to wake for them.
#[derive(Default)]
struct Ready {
    ids: Mutex<Vec<StreamId>>,
    task: AtomicWaker,
}

/// One body's waker: schedules its stream (once until it is polled) and wakes the task.
struct Wakeup {
    /// The stream, as [`StreamId::get`] gives it.
    id: AtomicU32,
    scheduled: AtomicBool,
    ready: Arc<Ready>,
}

impl Wakeup {
    /// Puts the stream in the queue to poll, unless it is there; whether it was not.
    fn schedule(&self) -> bool {
        let first = !self.scheduled.swap(true, Ordering::AcqRel);
        if first {
            self.ready
                .push(StreamId::new(self.id.load(Ordering::Acquire)));
        }
        first
    }
}

impl ArcWake for Wakeup {
    fn wake_by_ref(wakeup: &Arc<Self>) {
        if wakeup.schedule() {
            wakeup.ready.task.wake();
        }
    }
}

impl Ready {
    fn push(&self, id: StreamId) {
        self.ids
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(id);
    }

    fn pop(&self) -> Option<StreamId> {
        self.ids
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .pop()
    }
}

impl Bodies {
    pub(super) fn new() -> Bodies {
        Bodies {
            producers: HashMap::new(),
            ready: Arc::default(),
            waiting: Vec::new(),
            parked: Vec::new(),
            spare: Vec::new(),
        }
    }

    pub(super) fn is_empty(&self) -> bool {
        self.producers.is_empty()
    }

    /// `id`'s body comes from `source`; it is polled at the next [`produce`](Self::produce).
    pub(super) fn insert(&mut self, id: StreamId, source: Source) {
        let wakeup = match self.spare.pop() {
            Some(wakeup) => {
                wakeup.id.store(id.get(), Ordering::Release);
                wakeup
            }
            None => Arc::new(Wakeup {
                id: AtomicU32::new(id.get()),
                scheduled: AtomicBool::new(false),
                ready: Arc::clone(&self.ready),
            }),
        };
        wakeup.schedule();
        self.producers.insert(id, Producer { source, wakeup });
    }

    fn remove(&mut self, id: StreamId) {
        let Some(Producer { source, wakeup }) = self.producers.remove(&id) else {
            return;
        };
        drop(source);
        // Kept for the next body unless a waker the source gave away outlives it.
        if Arc::strong_count(&wakeup) == 1 {
            wakeup.scheduled.store(false, Ordering::Release);
            self.spare.push(wakeup);
        }
    }

    /// Gives back what the maps grew to, for a quiet connection.
    pub(super) fn shrink(&mut self) {
        self.producers.shrink_to_fit();
        self.waiting = Vec::new();
        self.parked = Vec::new();
        self.spare = Vec::new();
        self.ready
            .ids
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .shrink_to_fit();
    }

    /// The next piece of a body that was woken and whose stream has room in the
    /// connection's queue, while the connection's bodies wait for window in all less than
    /// [`CONNECTION_QUEUE`]; the task is woken when a body is.
    pub(super) async fn produce(
        &mut self,
        arena: &mut BytesMut,
        conn: &Connection,
    ) -> (StreamId, Option<std::io::Result<Bytes>>) {
        std::future::poll_fn(|cx| {
            // At every poll, before the queue is looked at: a wake-up takes the waker, so
            // one left at an earlier poll may be gone (a body woken with nothing to give
            // took it), and a body woken after the look must find one.
            self.ready.task.register(cx.waker());
            self.produce_now(arena, conn)
                .map_or(Poll::Pending, Poll::Ready)
        })
        .await
    }

    /// As [`produce`](Self::produce), what is ready now: `None` when no woken body has a
    /// piece, or the connection's bodies hold [`CONNECTION_QUEUE`] already (the client's
    /// windows drain it; the next read wakes the loop).
    pub(super) fn produce_now(
        &mut self,
        arena: &mut BytesMut,
        conn: &Connection,
    ) -> Option<(StreamId, Option<std::io::Result<Bytes>>)> {
        let producers = &self.producers;
        self.waiting
            .retain(|id| producers.contains_key(id) && conn.queued(*id) > 0);
        let queued: usize = self.waiting.iter().map(|&id| conn.queued(id)).sum();
        if queued >= CONNECTION_QUEUE {
            return None;
        }
        let ready = &self.ready;
        self.parked.retain(|&id| {
            let full = producers.contains_key(&id) && conn.queued(id) >= BODY_QUEUE;
            if !full {
                ready.push(id);
            }
            full
        });
        while let Some(id) = self.ready.pop() {
            let Some(producer) = self.producers.get_mut(&id) else {
                continue;
            };
            if conn.queued(id) >= BODY_QUEUE {
                // Polled again after a read, once the window drains it.
                self.parked.push(id);
                continue;
            }
            producer.wakeup.scheduled.store(false, Ordering::Release);
            let waker = waker_ref(&producer.wakeup);
            let mut cx = Context::from_waker(&waker);
            if let Poll::Ready(piece) = producer.source.poll_next(&mut cx, arena) {
                // It may have more at once: polled again at the next call, which the
                // connection makes at once (no wake-up needed).
                producer.wakeup.schedule();
                return Some((id, piece));
            }
        }
        None
    }

    /// Queues a piece of `id`'s body (or its end, or its failure) on the connection.
    pub(super) fn take_piece(
        &mut self,
        conn: &mut Connection,
        id: StreamId,
        piece: Option<std::io::Result<Bytes>>,
    ) {
        let done = |bodies: &Bodies| {
            bodies
                .producers
                .get(&id)
                .is_some_and(|p| p.source.is_done())
        };
        let (data, end) = match piece {
            Some(Ok(data)) => (data, done(self)),
            Some(Err(e)) => {
                log::debug!("a body failed midway: {e}");
                conn.reset_stream(id, ErrorCode::INTERNAL_ERROR);
                self.remove(id);
                return;
            }
            None => {
                let trailers = match self.producers.get_mut(&id).map(|p| &mut p.source) {
                    Some(Source::Stream(stream)) => stream.trailers(),
                    _ => None,
                };
                self.remove(id);
                // Refused only when the client reset the stream: nothing more to send.
                let _ = match trailers {
                    Some(fields) => {
                        conn.send_trailers(id, fields.iter().map(|(n, v)| (n.as_bytes(), v)))
                    }
                    None => conn.send_data(id, Bytes::new(), true).map(drop),
                };
                return;
            }
        };
        // Refused only when the client reset the stream: nothing more to send.
        if conn.send_data(id, data, end).is_err() || end {
            self.remove(id);
        } else if conn.queued(id) > 0 && !self.waiting.contains(&id) {
            self.waiting.push(id);
        }
    }
}

/// A body produced as it is sent, a piece at a time.
pub(super) enum Source {
    /// A file range, read a piece at a time; the offset into it.
    File(FileBody, u64),
    /// The handler's stream.
    Stream(Pin<Box<BodyStream>>),
}

impl Source {
    /// The next piece; a file's is read into `arena`.
    fn poll_next(
        &mut self,
        cx: &mut Context<'_>,
        arena: &mut BytesMut,
    ) -> Poll<Option<std::io::Result<Bytes>>> {
        Poll::Ready(match self {
            Source::File(file, done) => {
                let left = file.len() - *done;
                if left == 0 {
                    return Poll::Ready(None);
                }
                let len = left.min(FILE_PIECE) as usize;
                let read = read_piece(file, file.offset() + *done, len, arena);
                *done += len as u64;
                Some(read)
            }
            Source::Stream(stream) => return stream.as_mut().poll_next(cx),
        })
    }

    /// Whether the piece just taken was the last (known only for sized bodies).
    fn is_done(&self) -> bool {
        match self {
            Source::File(file, done) => *done == file.len(),
            Source::Stream(_) => false,
        }
    }
}

/// `len` bytes of `file` from `offset`, read into the front of `arena` and cut off it. The
/// pieces go out by reference (no copy into the connection's send buffer), so each lives
/// until sent: a fresh allocation per piece made the heap give pages back and fault them
/// in again (a tenth of the server's time on 64 KiB files); the arena takes its memory back
/// once the pieces cut from it are gone.
fn read_piece(
    file: &FileBody,
    offset: u64,
    len: usize,
    arena: &mut BytesMut,
) -> std::io::Result<Bytes> {
    arena.resize(len, 0);
    file.file().read_exact_at(&mut arena[..], offset)?;
    Ok(arena.split().freeze())
}
