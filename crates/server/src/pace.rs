//! Slow clients on an HTTP/2 connection, timed by the connection's own task.
//!
//! An HTTP/1.1 connection carries one request at a time, so the sweeper times it as a
//! whole ([`Phase`](crate::timeout::Phase)). An HTTP/2 connection carries many request
//! bodies at once, starting and ending independently: timed together, one stream flowing
//! would keep any number of trickling ones alive. So here each body still arriving has
//! windows of its own, under the same rule as HTTP/1.1's ([`Timeouts::body_min_rate`] over
//! each [`Timeouts::body_window`], the first window the grace), and a frame begun must be
//! whole within [`Timeouts::head`] (a header block, or any frame but `DATA`, whose bytes
//! count as their stream's progress instead): a client trickling frames holds the reading of
//! every other one.
//!
//! Nothing here reads the clock: the connection passes `now`, and arms one timer for the
//! earliest [`due`](Pacer::due) time, and only while a body or frame spans reads; a request
//! whose body comes with its head costs an insert and a remove.

use std::time::{Duration, Instant};

use foldhash::{HashMap, HashMapExt};
use ringwire_http2::frame::StreamId;

use crate::Timeouts;

/// The clocks of one connection's request bodies and of its frame in progress.
#[derive(Debug)]
pub(crate) struct Pacer {
    /// Bytes a body must advance by in each window; `None`: bodies are not timed.
    need: Option<u64>,
    window: Duration,
    head: Duration,
    bodies: HashMap<StreamId, Pace>,
    /// Some body has no window yet: [`due`](Self::due) gives it one.
    unstamped: bool,
    /// A frame begun and not whole (`Some(None)` until [`due`](Self::due) stamps it).
    frame: Option<Option<Instant>>,
}

#[derive(Debug, Clone, Copy)]
struct Pace {
    /// Body bytes received in whole `DATA` frames.
    received: u64,
    /// What the body had received at its window's start (with its part of a frame then).
    mark: u64,
    /// The end of its window.
    until: Option<Instant>,
}

/// What ran out of time: see [`Pacer::expire`].
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct Expired {
    /// Bodies that came slower than the minimum rate over a window, taken out of the pacer.
    pub(crate) bodies: Vec<StreamId>,
    /// A frame has been arriving for longer than the head limit.
    pub(crate) frame: bool,
}

impl Pacer {
    pub(crate) fn new(timeouts: &Timeouts) -> Pacer {
        let (rate, window) = (timeouts.body_min_rate, timeouts.body_window);
        let need = (rate > 0 && window != Duration::MAX).then(|| {
            let bytes = u128::from(rate) * window.as_millis() / 1000;
            u64::try_from(bytes).unwrap_or(u64::MAX).max(1)
        });
        Pacer {
            need,
            window,
            head: timeouts.head,
            bodies: HashMap::new(),
            unstamped: false,
            frame: None,
        }
    }

    /// `stream`'s body is arriving (a head without `END_STREAM`, or a body refused and
    /// thrown away as it comes); its first window starts at the next [`due`](Self::due).
    pub(crate) fn start(&mut self, stream: StreamId) {
        if self.need.is_some() {
            let pace = Pace {
                received: 0,
                mark: 0,
                until: None,
            };
            self.bodies.entry(stream).or_insert(pace);
            self.unstamped = true;
        }
    }

    /// `n` more bytes of `stream`'s body came.
    pub(crate) fn received(&mut self, stream: StreamId, n: usize) {
        if let Some(pace) = self.bodies.get_mut(&stream) {
            pace.received += n as u64;
        }
    }

    /// `stream`'s body ended, or is no longer timed.
    pub(crate) fn stop(&mut self, stream: StreamId) {
        self.bodies.remove(&stream);
    }

    /// Whether a frame is begun and not whole (one the limit of the head applies to).
    pub(crate) fn frame_begun(&mut self, begun: bool) {
        if !begun {
            self.frame = None;
        } else if self.frame.is_none() {
            self.frame = Some(None);
        }
    }

    /// Whether anything is being timed.
    pub(crate) fn is_active(&self) -> bool {
        !self.bodies.is_empty() || self.frame.is_some()
    }

    /// When the next check is due, if anything is timed; `now` (read only if needed) starts
    /// the windows of the bodies and frame begun since the last call.
    pub(crate) fn due(&mut self, now: impl FnOnce() -> Instant) -> Option<Instant> {
        let unstamped = self.unstamped || self.frame == Some(None);
        if unstamped {
            let now = now();
            for pace in self.bodies.values_mut() {
                pace.until.get_or_insert(now + self.window);
            }
            self.unstamped = false;
            if let Some(begun) = &mut self.frame {
                begun.get_or_insert(now);
            }
        }
        let frame = self.frame.flatten().map(|begun| begun + self.head);
        let bodies = self.bodies.values().filter_map(|pace| pace.until).min();
        frame.into_iter().chain(bodies).min()
    }

    /// What ran out of time by `now`. A body whose window is over starts its next one if it
    /// advanced by the minimum over it; `partial` is the part of a `DATA` frame not yet
    /// whole, counted for its stream.
    pub(crate) fn expire(&mut self, now: Instant, partial: Option<(StreamId, usize)>) -> Expired {
        let mut expired = Expired {
            frame: self
                .frame
                .flatten()
                .is_some_and(|begun| now >= begun + self.head),
            ..Expired::default()
        };
        let need = self.need.unwrap_or(0);
        for (&stream, pace) in &mut self.bodies {
            if pace.until.is_none_or(|until| now < until) {
                continue;
            }
            let partial = match partial {
                Some((id, n)) if id == stream => n as u64,
                _ => 0,
            };
            let got = pace.received + partial;
            if got - pace.mark >= need {
                pace.mark = got;
                pace.until = Some(now + self.window);
            } else {
                expired.bodies.push(stream);
            }
        }
        for stream in &expired.bodies {
            self.bodies.remove(stream);
        }
        expired
    }

    /// Starts every window and the frame's time anew from `now`: the connection was not
    /// reading, so what did not come is not the client's doing.
    pub(crate) fn restart(&mut self, now: Instant) {
        for pace in self.bodies.values_mut() {
            pace.mark = pace.received;
            pace.until = Some(now + self.window);
        }
        if let Some(begun) = &mut self.frame {
            *begun = Some(now);
        }
    }

    /// Gives back what the map grew to, for a quiet connection.
    pub(crate) fn shrink(&mut self) {
        self.bodies.shrink_to_fit();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const WINDOW: Duration = Duration::from_millis(500);

    fn pacer() -> Pacer {
        Pacer::new(&Timeouts {
            head: Duration::from_secs(2),
            body_min_rate: 1000,
            body_window: WINDOW,
            ..Timeouts::default()
        })
    }

    fn id(n: u32) -> StreamId {
        StreamId::new(n)
    }

    #[test]
    fn each_body_must_advance_by_the_minimum_in_each_of_its_windows() {
        let t0 = Instant::now();
        let mut p = pacer();
        assert_eq!(p.due(|| unreachable!("nothing timed")), None);
        p.start(id(1));
        p.start(id(3));
        assert_eq!(p.due(|| t0), Some(t0 + WINDOW));
        // 500 bytes per 500 ms window is the minimum: stream 1 makes it, 3 does not.
        p.received(id(1), 500);
        p.received(id(3), 499);
        assert_eq!(p.expire(t0 + WINDOW / 2, None), Expired::default());
        let expired = p.expire(t0 + WINDOW, None);
        assert_eq!(expired.bodies, [id(3)]);
        assert!(p.bodies.contains_key(&id(1)) && !p.bodies.contains_key(&id(3)));
        // A fast start buys nothing in the next window.
        let t1 = t0 + WINDOW;
        assert_eq!(p.due(|| unreachable!("all stamped")), Some(t1 + WINDOW));
        p.received(id(1), 10);
        assert_eq!(p.expire(t1 + WINDOW, None).bodies, [id(1)]);
        assert!(!p.is_active());
    }

    #[test]
    fn a_data_frame_half_received_counts_for_its_stream() {
        let t0 = Instant::now();
        let mut p = pacer();
        p.start(id(1));
        p.start(id(3));
        p.due(|| t0);
        let t1 = t0 + WINDOW;
        assert_eq!(p.expire(t1, Some((id(1), 600))).bodies, [id(3)]);
        // The frame completes: only what came since the window began counts in the next.
        p.received(id(1), 1000);
        assert_eq!(p.expire(t1 + WINDOW, None).bodies, [id(1)]);
    }

    #[test]
    fn a_frame_begun_must_be_whole_within_the_head_limit() {
        let t0 = Instant::now();
        let mut p = pacer();
        p.frame_begun(true);
        assert_eq!(p.due(|| t0), Some(t0 + Duration::from_secs(2)));
        // Still arriving later: the limit counts from its first byte.
        p.frame_begun(true);
        assert_eq!(
            p.due(|| unreachable!("stamped")),
            Some(t0 + Duration::from_secs(2))
        );
        assert!(!p.expire(t0 + Duration::from_millis(1999), None).frame);
        assert!(p.expire(t0 + Duration::from_secs(2), None).frame);
        // Whole: the next one has its own limit.
        p.frame_begun(false);
        assert!(!p.is_active());
        p.frame_begun(true);
        let t1 = t0 + Duration::from_secs(3);
        assert_eq!(p.due(|| t1), Some(t1 + Duration::from_secs(2)));
    }

    #[test]
    fn a_rate_of_zero_times_no_body() {
        let mut p = Pacer::new(&Timeouts {
            body_min_rate: 0,
            ..Timeouts::default()
        });
        p.start(id(1));
        assert!(p.bodies.is_empty());
        assert_eq!(p.due(|| unreachable!("nothing timed")), None);
    }
}
