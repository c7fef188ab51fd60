//! The clocks read for every response: the `date` field and the file
//! cache's time to live. On Linux these are the kernel's coarse clocks,
//! read from the vDSO without touching the TSC: a few milliseconds of
//! resolution, plenty for a one-second `date` and a one-second cache.

use std::time::{Duration, SystemTime};

/// The wall-clock time.
#[cfg(target_os = "linux")]
pub(crate) fn now() -> SystemTime {
    use rustix::time::{clock_gettime, ClockId};
    let t = clock_gettime(ClockId::RealtimeCoarse);
    SystemTime::UNIX_EPOCH + Duration::new(t.tv_sec as u64, t.tv_nsec as u32)
}

/// A monotonic time from an arbitrary start, for measuring ages.
#[cfg(target_os = "linux")]
pub(crate) fn monotonic() -> Duration {
    use rustix::time::{clock_gettime, ClockId};
    let t = clock_gettime(ClockId::MonotonicCoarse);
    Duration::new(t.tv_sec as u64, t.tv_nsec as u32)
}

#[cfg(not(target_os = "linux"))]
pub(crate) fn now() -> SystemTime {
    SystemTime::now()
}

#[cfg(not(target_os = "linux"))]
pub(crate) fn monotonic() -> Duration {
    static START: std::sync::OnceLock<std::time::Instant> = std::sync::OnceLock::new();
    START.get_or_init(std::time::Instant::now).elapsed()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn coarse_clocks_follow_the_precise_ones() {
        let wall = now().duration_since(SystemTime::UNIX_EPOCH).unwrap();
        let precise = SystemTime::now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .unwrap();
        // A coarse clock lags by at most a tick or so.
        assert!(precise.saturating_sub(wall) < Duration::from_millis(50));
        let before = monotonic();
        std::thread::sleep(Duration::from_millis(30));
        assert!(monotonic() - before >= Duration::from_millis(20));
    }
}
