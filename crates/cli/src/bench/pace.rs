//! `--rate`: each connection sends on a fixed schedule instead of as fast
//! as answers come back, and latency counts from when a request was due,
//! not from when it went out. A server that stalls then shows its stall in
//! the latency of every request that should have gone out meanwhile,
//! instead of holding the generator back and hiding it ("coordinated
//! omission", as wrk2 corrects it).

use std::time::{Duration, Instant};

/// One connection's schedule; kept across its reconnects.
#[derive(Debug)]
pub(crate) struct Pace {
    /// Time between sends; `None` sends as soon as the last answer came.
    interval: Option<Duration>,
    next: Instant,
}

impl Pace {
    /// `rate` sends per second over `connections` connections, this one
    /// `slot`: the connections' schedules are staggered evenly.
    pub(crate) fn new(rate: Option<f64>, connections: usize, slot: usize) -> Pace {
        let interval = rate.map(|rate| Duration::from_secs_f64(connections as f64 / rate));
        let offset = interval.map_or(Duration::ZERO, |i| {
            i.mul_f64(slot as f64 / connections as f64)
        });
        Pace {
            interval,
            next: Instant::now() + offset,
        }
    }

    /// Waits until the next send is due; returns the time its latency counts
    /// from (now, without a rate). A schedule behind time does not wait, and
    /// counts from when the send was due: the server held it back. A send that
    /// waited for its time counts from when the timer woke it, which is up to
    /// a millisecond late: that lateness is the generator's, not the server's.
    pub(crate) async fn due(&mut self) -> Instant {
        let Some(interval) = self.interval else {
            return Instant::now();
        };
        let due = self.next;
        self.next += interval;
        if Instant::now() >= due {
            return due;
        }
        tokio::time::sleep_until(due.into()).await;
        Instant::now()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_schedule_behind_time_counts_from_when_sends_were_due() {
        let mut pace = Pace::new(Some(100.0), 1, 0);
        let first = pace.due().await;
        // A stalled answer: 50 ms pass, five sends' worth.
        std::thread::sleep(Duration::from_millis(50));
        let second = pace.due().await;
        assert_eq!(second - first, Duration::from_millis(10));
        assert!(second.elapsed() >= Duration::from_millis(40));
    }

    /// A send that waited for its time counts from when it went, not from its slot: the
    /// timer's lateness (up to a millisecond) is not the server's latency.
    #[tokio::test]
    async fn a_send_on_time_counts_from_when_the_timer_woke() {
        let mut pace = Pace::new(Some(100.0), 1, 0);
        pace.due().await;
        let slot = pace.next;
        let counted = pace.due().await;
        assert!(counted > slot, "{:?}", slot - counted);
        assert!(counted.elapsed() < Duration::from_millis(1));
    }

    #[tokio::test]
    async fn without_a_rate_a_send_is_due_now() {
        let mut pace = Pace::new(None, 4, 3);
        let before = Instant::now();
        let due = pace.due().await;
        assert!(due >= before && due.elapsed() < Duration::from_millis(50));
    }

    #[test]
    fn connections_are_staggered() {
        let a = Pace::new(Some(1000.0), 4, 0);
        let b = Pace::new(Some(1000.0), 4, 2);
        let gap = b.next - a.next;
        assert!(
            (Duration::from_micros(1900)..Duration::from_micros(2100)).contains(&gap),
            "{gap:?}"
        );
    }
}
