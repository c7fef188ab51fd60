//! The `Date` field value (IMF-fixdate, RFC 9110 section 5.6.7), formatted
//! at most once per second.

use std::fmt;
use std::time::{SystemTime, UNIX_EPOCH};

/// The last second IMF-fixdate can show: 9999-12-31T23:59:59Z.
const MAX_SECS: u64 = 253_402_300_799;

const DAYS: [&[u8; 3]; 7] = [b"Sun", b"Mon", b"Tue", b"Wed", b"Thu", b"Fri", b"Sat"];
const MONTHS: [&[u8; 3]; 12] = [
    b"Jan", b"Feb", b"Mar", b"Apr", b"May", b"Jun", b"Jul", b"Aug", b"Sep", b"Oct", b"Nov", b"Dec",
];

/// The current date as an IMF-fixdate, such as `Sun, 06 Nov 1994 08:49:37 GMT`.
///
/// The codec has no clock: the caller passes the time to
/// [`update`](DateCache::update), typically once per event-loop turn, and
/// the text is reformatted only when the whole second has changed. Times
/// before 1970 show the epoch; times past the year 9999 show its last second.
#[derive(Clone)]
pub struct DateCache {
    secs: u64,
    text: [u8; 29],
}

impl DateCache {
    /// A cache showing the epoch until the first [`update`](DateCache::update).
    #[must_use]
    pub fn new() -> Self {
        DateCache {
            secs: 0,
            text: imf_fixdate(0),
        }
    }

    /// Moves the cache to `now`; returns the date.
    pub fn update(&mut self, now: SystemTime) -> &[u8; 29] {
        let secs = now
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_secs())
            .min(MAX_SECS);
        if secs != self.secs {
            self.secs = secs;
            self.text = imf_fixdate(secs);
        }
        &self.text
    }

    /// The date as of the last [`update`](DateCache::update).
    #[must_use]
    pub fn get(&self) -> &[u8; 29] {
        &self.text
    }
}

impl Default for DateCache {
    fn default() -> Self {
        DateCache::new()
    }
}

impl fmt::Debug for DateCache {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("DateCache")
            .field(&String::from_utf8_lossy(&self.text))
            .finish()
    }
}

/// Formats `secs` past the epoch (at most [`MAX_SECS`]).
fn imf_fixdate(secs: u64) -> [u8; 29] {
    let days = secs / 86_400;
    let in_day = secs % 86_400;
    let (year, month, day) = civil_from_days(days);
    // 1970-01-01 was a Thursday.
    let weekday = DAYS[((days + 4) % 7) as usize];
    let two = |n: u64| [b'0' + (n / 10 % 10) as u8, b'0' + (n % 10) as u8];
    let [h, o] = two(in_day / 3600);
    let [mi, nu] = two(in_day / 60 % 60);
    let [s, e] = two(in_day % 60);
    let [d1, d2] = two(day);
    let [y1, y2] = two(year / 100);
    let [y3, y4] = two(year % 100);
    let [w1, w2, w3] = *weekday;
    let [m1, m2, m3] = *MONTHS[(month - 1) as usize];
    [
        w1, w2, w3, b',', b' ', d1, d2, b' ', m1, m2, m3, b' ', y1, y2, y3, y4, b' ', h, o, b':',
        mi, nu, b':', s, e, b' ', b'G', b'M', b'T',
    ]
}

/// Year, month (1-12) and day (1-31) of the day `days` past 1970-01-01, by
/// Howard Hinnant's `civil_from_days`: count in 400-year eras of 146097
/// days, with years starting in March so the leap day falls last.
fn civil_from_days(days: u64) -> (u64, u64, u64) {
    // Shift the epoch to 0000-03-01.
    let z = days + 719_468;
    let era = z / 146_097;
    let doe = z % 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = era * 400 + yoe + u64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn at(secs: u64) -> String {
        String::from_utf8(imf_fixdate(secs).to_vec()).unwrap()
    }

    #[test]
    fn known_dates() {
        assert_eq!(at(0), "Thu, 01 Jan 1970 00:00:00 GMT");
        assert_eq!(at(784_111_777), "Sun, 06 Nov 1994 08:49:37 GMT");
        assert_eq!(at(951_782_400), "Tue, 29 Feb 2000 00:00:00 GMT");
        assert_eq!(at(951_868_799), "Tue, 29 Feb 2000 23:59:59 GMT");
        assert_eq!(at(2_147_483_647), "Tue, 19 Jan 2038 03:14:07 GMT");
        assert_eq!(at(4_107_542_400), "Mon, 01 Mar 2100 00:00:00 GMT");
        // 2100 is not a leap year: the day before 1 March is 28 February.
        assert_eq!(at(4_107_542_399), "Sun, 28 Feb 2100 23:59:59 GMT");
        assert_eq!(at(MAX_SECS), "Fri, 31 Dec 9999 23:59:59 GMT");
    }

    #[test]
    fn every_day_follows_the_one_before() {
        let month_len = |y: u64, m: u64| match m {
            2 if (y % 4 == 0 && y % 100 != 0) || y % 400 == 0 => 29,
            2 => 28,
            4 | 6 | 9 | 11 => 30,
            _ => 31,
        };
        let mut expected = (1970, 1, 1);
        for days in 0..=MAX_SECS / 86_400 {
            assert_eq!(civil_from_days(days), expected, "day {days}");
            let (y, m, d) = expected;
            expected = match (d == month_len(y, m), m) {
                (false, _) => (y, m, d + 1),
                (true, 12) => (y + 1, 1, 1),
                (true, _) => (y, m + 1, 1),
            };
        }
    }

    #[test]
    fn reformats_only_when_the_second_changes() {
        let mut cache = DateCache::default();
        assert_eq!(cache.get(), b"Thu, 01 Jan 1970 00:00:00 GMT");
        let t = UNIX_EPOCH + Duration::from_secs(784_111_777);
        assert_eq!(cache.update(t), b"Sun, 06 Nov 1994 08:49:37 GMT");
        let later = t + Duration::from_millis(999);
        assert_eq!(cache.update(later), b"Sun, 06 Nov 1994 08:49:37 GMT");
        assert_eq!(cache.secs, 784_111_777);
        let next = t + Duration::from_secs(1);
        assert_eq!(cache.update(next), b"Sun, 06 Nov 1994 08:49:38 GMT");
        assert_eq!(cache.get(), b"Sun, 06 Nov 1994 08:49:38 GMT");
    }

    #[test]
    fn out_of_range_times_are_clamped() {
        let mut cache = DateCache::new();
        cache.update(UNIX_EPOCH + Duration::from_secs(60));
        let before = UNIX_EPOCH - Duration::from_secs(86_400 * 365);
        assert_eq!(cache.update(before), b"Thu, 01 Jan 1970 00:00:00 GMT");
        if let Some(far) = UNIX_EPOCH.checked_add(Duration::from_secs(u64::MAX / 2)) {
            assert_eq!(cache.update(far), b"Fri, 31 Dec 9999 23:59:59 GMT");
        }
        assert_eq!(format!("{cache:?}").len(), "DateCache(\"\")".len() + 29);
    }
}
