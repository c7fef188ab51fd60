//! Timeouts and the end of a run without a timer per wait: a timer on the
//! runtime would turn every idle `epoll_wait` into one with a timeout, a
//! kernel timer armed and cancelled per response, and the load generator
//! would spend its CPU there instead of on requests. Instead each
//! connection marks when it started waiting in its [`Slot`], and the
//! watchdog (the main thread, a few times a second) wakes the ones that
//! waited too long, or all of them when the run ends.

use std::future::{poll_fn, Future};
use std::pin::pin;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::task::Poll;
use std::time::{Duration, Instant};

use atomic_waker::AtomicWaker;

/// Why a guarded wait ended early.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Interrupt {
    /// The run is over.
    Stop,
    /// This connection waited longer than the timeout.
    Timeout,
}

/// One connection's mark.
#[derive(Debug, Default)]
struct Slot {
    /// Microseconds since the board's start, plus one, when the wait began;
    /// 0 while nothing is awaited.
    since: AtomicU64,
    expired: AtomicBool,
    waker: AtomicWaker,
}

/// Every connection's slot, shared by the workers and the watchdog.
#[derive(Debug)]
pub(crate) struct Board {
    start: Instant,
    stop: AtomicBool,
    slots: Box<[Slot]>,
}

impl Board {
    pub(crate) fn new(connections: usize) -> Self {
        Board {
            start: Instant::now(),
            stop: AtomicBool::new(false),
            slots: (0..connections).map(|_| Slot::default()).collect(),
        }
    }

    /// How many connections the run has.
    pub(crate) fn connections(&self) -> usize {
        self.slots.len()
    }

    fn now(&self) -> u64 {
        u64::try_from(self.start.elapsed().as_micros()).unwrap_or(u64::MAX) + 1
    }

    /// Connection `i` starts waiting for an answer now.
    pub(crate) fn arm(&self, i: usize) {
        self.slots[i].since.store(self.now(), Ordering::Relaxed);
    }

    /// Connection `i` waits for nothing.
    pub(crate) fn disarm(&self, i: usize) {
        self.slots[i].since.store(0, Ordering::Relaxed);
    }

    pub(crate) fn stopped(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
    }

    /// Ends the run: every guarded wait returns [`Interrupt::Stop`].
    pub(crate) fn stop(&self) {
        self.stop.store(true, Ordering::Relaxed);
        for slot in &self.slots {
            slot.waker.wake();
        }
    }

    /// Expires every connection armed for longer than `timeout`.
    pub(crate) fn sweep(&self, timeout: Duration) {
        let now = self.now();
        let limit = u64::try_from(timeout.as_micros()).unwrap_or(u64::MAX);
        for slot in &self.slots {
            let since = slot.since.load(Ordering::Relaxed);
            if since != 0 && now.saturating_sub(since) > limit {
                slot.since.store(0, Ordering::Relaxed);
                slot.expired.store(true, Ordering::Relaxed);
                slot.waker.wake();
            }
        }
    }

    /// Runs `f` for connection `i` until it finishes, the run ends, or the
    /// watchdog expires the connection.
    pub(crate) async fn guard<F: Future>(&self, i: usize, f: F) -> Result<F::Output, Interrupt> {
        let slot = &self.slots[i];
        let mut f = pin!(f);
        poll_fn(|cx| {
            // Registered before the flags are read, so a flag set after the
            // read finds this waker.
            slot.waker.register(cx.waker());
            if self.stop.load(Ordering::Relaxed) {
                return Poll::Ready(Err(Interrupt::Stop));
            }
            if slot.expired.swap(false, Ordering::Relaxed) {
                return Poll::Ready(Err(Interrupt::Timeout));
            }
            f.as_mut().poll(cx).map(Ok)
        })
        .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[tokio::test]
    async fn a_wait_ends_when_the_watchdog_expires_it_or_stops_the_run() {
        let board = Arc::new(Board::new(2));
        board.arm(0);
        let watchdog = Arc::clone(&board);
        let sweeper = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(30));
            watchdog.sweep(Duration::from_millis(10));
        });
        let never = std::future::pending::<()>();
        assert_eq!(board.guard(0, never).await, Err(Interrupt::Timeout));
        sweeper.join().unwrap();

        // Connection 1 was never armed: the sweep left it alone.
        assert_eq!(board.guard(1, async { 7 }).await, Ok(7));

        let watchdog = Arc::clone(&board);
        let stopper = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(10));
            watchdog.stop();
        });
        let never = std::future::pending::<()>();
        assert_eq!(board.guard(1, never).await, Err(Interrupt::Stop));
        stopper.join().unwrap();
    }
}
