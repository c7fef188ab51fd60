//! One stream's state (RFC 9113 section 5.1) and send queue, as either side sees it.

use std::collections::VecDeque;

use bytes::Bytes;

/// Which halves of a stream are still open.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum State {
    /// Both directions open.
    Open,
    /// The peer ended its side (`END_STREAM` received); we may still send.
    HalfClosedRemote,
    /// We ended our side; the peer may still send.
    HalfClosedLocal,
}

/// An open stream.
#[derive(Debug)]
pub(crate) struct Stream {
    pub(crate) state: State,
    /// What we may still send on it: signed, since a smaller
    /// `SETTINGS_INITIAL_WINDOW_SIZE` can push it below zero (section 6.9.2).
    pub(crate) send_window: i64,
    /// What the peer may still send before we grant more.
    pub(crate) recv_window: i64,
    /// Received bytes the application has released but we have not yet granted again.
    pub(crate) unacked: u32,
    /// Body bytes handed to the application and not yet released.
    pub(crate) held: u32,
    /// The declared body length, checked against what arrives.
    pub(crate) content_length: Option<u64>,
    pub(crate) received: u64,
    /// Body bytes waiting for window.
    pub(crate) queue: VecDeque<Bytes>,
    /// Whether our side ends once the queue is sent (trailers, if any, then follow).
    pub(crate) end_queued: bool,
    /// A header block (trailers) to send after the queue.
    pub(crate) trailers: Option<Vec<u8>>,
    /// Whether this side's head went out: the response's on the server (sent later), the
    /// request's on the client (sent with the stream's opening).
    pub(crate) head_sent: bool,
    /// Whether the peer's head arrived: the request's on the server (it opened the stream),
    /// the final response's on the client (until then, only interim responses may come).
    pub(crate) head_received: bool,
    /// The request was a `HEAD`: its response has no body, whatever content-length says.
    pub(crate) head_request: bool,
}

impl Stream {
    /// A stream whose body will queue in `queue` (empty; a closed stream's, reused).
    pub(crate) fn new(send_window: i64, recv_window: i64, queue: VecDeque<Bytes>) -> Stream {
        Stream {
            state: State::Open,
            send_window,
            recv_window,
            unacked: 0,
            held: 0,
            content_length: None,
            received: 0,
            queue,
            end_queued: false,
            trailers: None,
            head_sent: false,
            head_received: false,
            head_request: false,
        }
    }

    /// Whether the peer may still send on it.
    pub(crate) fn remote_open(&self) -> bool {
        self.state != State::HalfClosedRemote
    }

    /// Bytes queued and not yet sent.
    pub(crate) fn queued(&self) -> usize {
        self.queue.iter().map(Bytes::len).sum()
    }
}
