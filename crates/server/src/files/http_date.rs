//! Parsing HTTP-dates (RFC 9110 section 5.6.7) for `If-Modified-Since` and
//! `If-Range`: the IMF-fixdate every sender uses, and the two obsolete
//! forms every recipient must still accept.

const MONTHS: [&str; 12] = [
    "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
];

/// Seconds since the epoch of `Sun, 06 Nov 1994 08:49:37 GMT`,
/// `Sunday, 06-Nov-94 08:49:37 GMT` or `Sun Nov  6 08:49:37 1994`; `None`
/// for anything else (an invalid date is ignored by the caller).
pub(super) fn parse(value: &[u8]) -> Option<u64> {
    let text = std::str::from_utf8(value).ok()?;
    let words: Vec<&str> = text.split_ascii_whitespace().collect();
    let (day, month, year, time) = match words[..] {
        // IMF-fixdate.
        [weekday, day, month, year, time, "GMT"] if weekday.ends_with(',') && year.len() == 4 => {
            (day, month, number(year)?, time)
        }
        // RFC 850: a two-digit year, taken as 1970-2069.
        [weekday, date, time, "GMT"] if weekday.ends_with(',') => {
            let mut parts = date.split('-');
            let (day, month, year) = (parts.next()?, parts.next()?, parts.next()?);
            if parts.next().is_some() || year.len() != 2 {
                return None;
            }
            let year = number(year)?;
            (day, month, year + if year < 70 { 2000 } else { 1900 }, time)
        }
        // asctime.
        [_weekday, month, day, time, year] if year.len() == 4 => (day, month, number(year)?, time),
        _ => return None,
    };
    let month = MONTHS.iter().position(|&m| m == month)? as u64 + 1;
    let day = number(day).filter(|d| (1..=31).contains(d))?;
    let mut hms = time.split(':');
    let (h, m, s) = (
        number(hms.next()?)?,
        number(hms.next()?)?,
        number(hms.next()?)?,
    );
    if hms.next().is_some() || h > 23 || m > 59 || s > 60 || year < 1970 {
        return None;
    }
    Some(days_from_civil(year, month, day) * 86_400 + h * 3600 + m * 60 + s)
}

/// One or two (or, for years, four) ASCII digits.
fn number(digits: &str) -> Option<u64> {
    if digits.is_empty() || digits.len() > 4 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

/// Days from 1970-01-01 to `year-month-day` (Howard Hinnant's
/// `days_from_civil`, years starting in March); `year` is at least 1970.
fn days_from_civil(year: u64, month: u64, day: u64) -> u64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y / 400;
    let yoe = y % 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

#[cfg(test)]
mod tests {
    use super::*;
    use ringwire_http1::encode::DateCache;
    use std::time::{Duration, UNIX_EPOCH};

    #[test]
    fn three_forms() {
        let t = Some(784_111_777);
        assert_eq!(parse(b"Sun, 06 Nov 1994 08:49:37 GMT"), t);
        assert_eq!(parse(b"Sunday, 06-Nov-94 08:49:37 GMT"), t);
        assert_eq!(parse(b"Sun Nov  6 08:49:37 1994"), t);
        assert_eq!(parse(b"Thu, 01 Jan 1970 00:00:00 GMT"), Some(0));
        for bad in [
            &b""[..],
            b"yesterday",
            b"Sun, 06 Nov 1994 08:49:37 UTC",
            b"Sun, 06 Foo 1994 08:49:37 GMT",
            b"Sun, 32 Nov 1994 08:49:37 GMT",
            b"Sun, 06 Nov 1994 24:00:00 GMT",
            b"Sun, 06 Nov 1994 08:49 GMT",
            b"Sun, 06 Nov 1969 08:49:37 GMT",
            b"Sun, 06 Nov 1994 08:49:37:01 GMT",
            b"\xff",
        ] {
            assert_eq!(parse(bad), None, "{}", String::from_utf8_lossy(bad));
        }
    }

    #[test]
    fn reads_back_what_the_date_cache_writes() {
        let mut date = DateCache::new();
        let mut secs = 0u64;
        while secs < 253_402_300_799 {
            let text = date.update(UNIX_EPOCH + Duration::from_secs(secs));
            assert_eq!(parse(text), Some(secs), "{}", String::from_utf8_lossy(text));
            secs = secs * 3 + 86_399;
        }
    }
}
