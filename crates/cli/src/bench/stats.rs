//! What a run counts: answers by status class, body bytes, errors by kind,
//! and a latency histogram; one per worker thread, merged at the end.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::time::Duration;

use super::open::FilesLimit;

/// Sub-buckets per power of two: values are kept within 1/32 (3%).
const SUB: usize = 32;
/// Up to 2^40 ns (18 minutes) and beyond, saturating.
const BUCKETS: usize = SUB * 36;

thread_local! {
    /// The latencies recorded on this thread. A worker's connections all run
    /// on its thread and share it: a histogram per connection would cost
    /// 9 KiB each, 90 MB for 10,000 connections.
    static LATENCY: RefCell<Histogram> = RefCell::new(Histogram::default());
}

/// Takes the latencies recorded on this thread so far.
pub(crate) fn take_thread_latency() -> Histogram {
    LATENCY.take()
}

/// Latencies in nanoseconds, log-linear: exact below 64, then 32 buckets
/// per power of two. The buckets are allocated on the first record.
#[derive(Debug, Clone, Default)]
pub(crate) struct Histogram {
    counts: Vec<u64>,
    total: u64,
    max: u64,
}

impl Histogram {
    fn index(ns: u64) -> usize {
        if ns < SUB as u64 {
            return ns as usize;
        }
        // `ns >> shift` lands in [SUB, 2 * SUB).
        let shift = 64 - ns.leading_zeros() as usize - 6;
        ((shift + 1) * SUB + (ns >> shift) as usize - SUB).min(BUCKETS - 1)
    }

    /// The middle of bucket `i`'s range.
    fn value(i: usize) -> u64 {
        if i < SUB {
            return i as u64;
        }
        let shift = i / SUB - 1;
        (((SUB + i % SUB) as u64) << shift) + ((1u64 << shift) >> 1)
    }

    pub(crate) fn record(&mut self, latency: Duration) {
        let ns = u64::try_from(latency.as_nanos()).unwrap_or(u64::MAX);
        if self.counts.is_empty() {
            self.counts = vec![0; BUCKETS];
        }
        self.counts[Self::index(ns)] += 1;
        self.total += 1;
        self.max = self.max.max(ns);
    }

    fn merge(&mut self, other: &Histogram) {
        if self.counts.is_empty() {
            self.counts.clone_from(&other.counts);
        } else {
            for (mine, theirs) in self.counts.iter_mut().zip(&other.counts) {
                *mine += theirs;
            }
        }
        self.total += other.total;
        self.max = self.max.max(other.max);
    }

    /// The latency `q` (0..=1) of the answers were at most, within 3%.
    pub(crate) fn quantile(&self, q: f64) -> Duration {
        if self.total == 0 {
            return Duration::ZERO;
        }
        let rank = ((q * self.total as f64).ceil() as u64).clamp(1, self.total);
        let mut seen = 0;
        for (i, &count) in self.counts.iter().enumerate() {
            seen += count;
            if seen >= rank {
                return Duration::from_nanos(Self::value(i).min(self.max));
            }
        }
        Duration::from_nanos(self.max)
    }

    pub(crate) fn max(&self) -> Duration {
        Duration::from_nanos(self.max)
    }
}

/// One worker's counts (or, merged, the run's).
#[derive(Debug, Default)]
pub(crate) struct Stats {
    /// Answers read whole, by status class: `[1xx, 2xx, 3xx, 4xx, 5xx]`.
    pub(crate) classes: [u64; 5],
    /// WebSocket echoes read whole.
    pub(crate) messages: u64,
    /// Body (or echoed payload) bytes received.
    pub(crate) body: u64,
    /// Latencies: a worker's connections record theirs in their thread's
    /// histogram ([`take_thread_latency`]), so this is filled once per worker.
    pub(crate) latency: Histogram,
    /// Connections opened.
    pub(crate) connects: u64,
    /// Connections that failed to open, each once however often it was
    /// tried again ([`super::open`]).
    pub(crate) connect_errors: u64,
    /// Failed tries at opening a connection, by cause.
    pub(crate) failures: BTreeMap<String, Failed>,
    /// What the connections were doing when the run ended: each of them
    /// once, so that one still opening is not left out.
    pub(crate) at_end: Ends,
    /// Connections never open in the whole run.
    pub(crate) never_opened: u64,
    /// Whether a try failed for want of a file descriptor.
    pub(crate) out_of_files: bool,
    /// Sends and receives that failed, or ended early by a close.
    pub(crate) read_errors: u64,
    /// Answers that did not parse.
    pub(crate) protocol_errors: u64,
    /// Batches not answered within the timeout.
    pub(crate) timeouts: u64,
    /// Answers that closed their connection (`connection: close`).
    pub(crate) closed: u64,
    /// The first error's message, to show what went wrong.
    pub(crate) first_error: Option<String>,
    /// The worker thread's CPU time (user and system), where the OS says.
    pub(crate) cpu: Option<Duration>,
}

/// What the report says of the run beside its counts.
#[derive(Debug)]
pub(crate) struct Run<'a> {
    pub(crate) elapsed: Duration,
    /// What was counted: requests, messages.
    pub(crate) unit: &'a str,
    /// `-c`.
    pub(crate) connections: usize,
    /// The limit on open files during the run.
    pub(crate) open_files: FilesLimit,
}

/// What a connection was doing when the run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum AtEnd {
    /// Open: loading, or between batches.
    Open,
    /// Opening (connecting, or upgrading to WebSocket), no try failed yet.
    Connecting,
    /// Opening again, or pausing before it, after a failed try.
    Retrying,
}

/// How many connections ended the run in each [`AtEnd`].
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Ends {
    pub(crate) open: u64,
    pub(crate) connecting: u64,
    pub(crate) retrying: u64,
}

impl Ends {
    fn all(&self) -> u64 {
        self.open + self.connecting + self.retrying
    }
}

/// The failed tries at opening connections of one cause.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Failed {
    /// Connections they were for, each once.
    pub(crate) connections: u64,
    pub(crate) tries: u64,
}

impl Stats {
    pub(crate) fn answer(&mut self, status: u16, body: u64, latency: Duration) {
        let class = usize::from(status / 100).clamp(1, 5) - 1;
        self.classes[class] += 1;
        self.body += body;
        LATENCY.with_borrow_mut(|h| h.record(latency));
    }

    pub(crate) fn message(&mut self, payload: u64, latency: Duration) {
        self.messages += 1;
        self.body += payload;
        LATENCY.with_borrow_mut(|h| h.record(latency));
    }

    /// Answers and echoes read whole.
    pub(crate) fn answers(&self) -> u64 {
        self.classes.iter().sum::<u64>() + self.messages
    }

    fn note(&mut self, message: &str) {
        if self.first_error.is_none() {
            self.first_error = Some(message.to_owned());
        }
    }

    pub(crate) fn connect_error(&mut self, message: &str) {
        self.connect_errors += 1;
        self.note(message);
    }

    /// A failed try at opening a connection, `new` for the first of its
    /// connection with this cause since it was last open.
    pub(crate) fn failed_try(&mut self, cause: &str, new: bool) {
        // Looked up first: no copy of the cause for every try.
        let failed = match self.failures.get_mut(cause) {
            Some(failed) => failed,
            None => self.failures.entry(cause.to_owned()).or_default(),
        };
        failed.connections += u64::from(new);
        failed.tries += 1;
    }

    /// A connection's state when the run ended, and whether it was ever
    /// open.
    pub(crate) fn ended(&mut self, at: AtEnd, opened: bool) {
        self.never_opened += u64::from(!opened);
        let count = match at {
            AtEnd::Open => &mut self.at_end.open,
            AtEnd::Connecting => &mut self.at_end.connecting,
            AtEnd::Retrying => &mut self.at_end.retrying,
        };
        *count += 1;
    }

    pub(crate) fn read_error(&mut self, message: &str) {
        self.read_errors += 1;
        self.note(message);
    }

    pub(crate) fn protocol_error(&mut self, message: &str) {
        self.protocol_errors += 1;
        self.note(message);
    }

    pub(crate) fn merge(&mut self, other: Stats) {
        for (mine, theirs) in self.classes.iter_mut().zip(other.classes) {
            *mine += theirs;
        }
        self.messages += other.messages;
        self.body += other.body;
        self.latency.merge(&other.latency);
        self.connects += other.connects;
        self.connect_errors += other.connect_errors;
        self.at_end.open += other.at_end.open;
        self.at_end.connecting += other.at_end.connecting;
        self.at_end.retrying += other.at_end.retrying;
        self.never_opened += other.never_opened;
        self.out_of_files |= other.out_of_files;
        for (cause, theirs) in other.failures {
            let mine = self.failures.entry(cause).or_default();
            mine.connections += theirs.connections;
            mine.tries += theirs.tries;
        }
        self.read_errors += other.read_errors;
        self.protocol_errors += other.protocol_errors;
        self.timeouts += other.timeouts;
        self.closed += other.closed;
        if self.first_error.is_none() {
            self.first_error = other.first_error;
        }
        self.cpu = match (self.cpu, other.cpu) {
            (Some(a), Some(b)) => Some(a + b),
            (a, b) => a.or(b),
        };
    }

    /// Why connections did not open, when a try ran out of file descriptors:
    /// the limit, which the run had raised as far as it could.
    fn out_of_files_note(&self, run: &Run<'_>) -> String {
        let FilesLimit { soft, hard } = run.open_files;
        match (self.out_of_files, soft) {
            (false, _) | (true, None) => String::new(),
            (true, Some(soft)) if soft == hard.unwrap_or(u64::MAX) => format!(
                ": out of file descriptors, {soft} open files at most (ulimit -n, the hard limit)"
            ),
            (true, Some(soft)) => format!(
                ": out of file descriptors, {soft} open files at most (ulimit -n; \
                 raising it to the hard limit failed)"
            ),
        }
    }

    /// The report: what was answered, how fast, and what failed.
    pub(crate) fn report(&self, run: &Run<'_>) -> String {
        let (elapsed, unit) = (run.elapsed, run.unit);
        let answers = self.answers();
        let secs = elapsed.as_secs_f64().max(f64::MIN_POSITIVE);
        let mut out = String::new();
        let _ = writeln!(
            out,
            "  {unit:<10} {answers} in {secs:.2} s: {:.0}/s",
            answers as f64 / secs
        );
        let mib = self.body as f64 / f64::from(1 << 20);
        let _ = writeln!(out, "  body       {mib:.1} MiB: {:.1} MiB/s", mib / secs);
        let l = &self.latency;
        let _ = writeln!(
            out,
            "  latency    p50 {}, p90 {}, p99 {}, p99.9 {}, max {}",
            micros(l.quantile(0.5)),
            micros(l.quantile(0.9)),
            micros(l.quantile(0.99)),
            micros(l.quantile(0.999)),
            micros(l.max())
        );
        let classes: Vec<String> = self
            .classes
            .iter()
            .enumerate()
            .filter(|(_, &n)| n > 0)
            .map(|(i, n)| format!("{}xx {n}", i + 1))
            .collect();
        let classes = if classes.is_empty() {
            "none".to_owned()
        } else {
            classes.join(", ")
        };
        // Echoes have no status, even when none came.
        if unit == "requests" {
            let _ = writeln!(out, "  statuses   {classes}");
        }
        let _ = writeln!(
            out,
            "  connects   {} (closed by the server after an answer: {})",
            self.connects, self.closed
        );
        let ends = &self.at_end;
        let _ = writeln!(
            out,
            "  at the end {}: {} open, {} still connecting, {} retrying after a failure",
            counted(ends.all(), "connection", "connections"),
            ends.open,
            ends.connecting,
            ends.retrying
        );
        if self.never_opened > 0 {
            let _ = writeln!(
                out,
                "  unopened   {} of {} connections never opened{}",
                self.never_opened,
                run.connections,
                self.out_of_files_note(run)
            );
        }
        let _ = writeln!(
            out,
            "  errors     connect {}, read {}, protocol {}, timeout {}",
            self.connect_errors, self.read_errors, self.protocol_errors, self.timeouts
        );
        for (cause, failed) in &self.failures {
            let _ = writeln!(
                out,
                "  failed     {} in {}: {cause}",
                counted(failed.connections, "connection", "connections"),
                counted(failed.tries, "try", "tries")
            );
        }
        if let Some(first) = &self.first_error {
            let _ = writeln!(out, "  first      {first}");
        }
        if let Some(cpu) = self.cpu.filter(|_| answers > 0) {
            let _ = writeln!(
                out,
                "  client CPU {:.2} µs per {} (user + system, every worker)",
                cpu.as_secs_f64() * 1e6 / answers as f64,
                unit.trim_end_matches('s')
            );
        }
        out
    }

    /// The same as [`report`](Self::report), for scripts: counts, rates,
    /// latencies in microseconds, CPU per answer in microseconds (`null`
    /// where the OS does not say), the connections at the end (`at_end`),
    /// those never opened, the failed tries by cause (`failures`), the
    /// limit on open files (`null`: none). Every fraction has at most 3 decimals
    /// (microseconds to the nanosecond): `as_secs_f64() * 1e6` printed
    /// latencies such as 2392.0640000000003.
    pub(crate) fn json(&self, run: &Run<'_>) -> serde_json::Value {
        let (elapsed, unit) = (run.elapsed, run.unit);
        let answers = self.answers();
        let secs = elapsed.as_secs_f64().max(f64::MIN_POSITIVE);
        let us = |d: Duration| thousandths(d.as_nanos() as f64 / 1e3);
        let l = &self.latency;
        let statuses: serde_json::Map<String, serde_json::Value> = self
            .classes
            .iter()
            .enumerate()
            .filter(|(_, &n)| n > 0)
            .map(|(i, &n)| (format!("{}xx", i + 1), n.into()))
            .collect();
        let failures: Vec<serde_json::Value> = self
            .failures
            .iter()
            .map(|(cause, failed)| {
                serde_json::json!({
                    "cause": cause,
                    "connections": failed.connections,
                    "tries": failed.tries,
                })
            })
            .collect();
        serde_json::json!({
            "unit": unit,
            "answered": answers,
            "seconds": thousandths(secs),
            "per_second": thousandths(answers as f64 / secs),
            "body_bytes": self.body,
            "latency_us": {
                "p50": us(l.quantile(0.5)),
                "p90": us(l.quantile(0.9)),
                "p99": us(l.quantile(0.99)),
                "p99_9": us(l.quantile(0.999)),
                "max": us(l.max()),
            },
            "statuses": statuses,
            "connects": self.connects,
            "closed_by_server": self.closed,
            "at_end": {
                "open": self.at_end.open,
                "connecting": self.at_end.connecting,
                "retrying": self.at_end.retrying,
            },
            "never_opened": self.never_opened,
            "open_files_limit": run.open_files.soft,
            "errors": {
                "connect": self.connect_errors,
                "read": self.read_errors,
                "protocol": self.protocol_errors,
                "timeout": self.timeouts,
            },
            "failures": failures,
            "first_error": self.first_error,
            "cpu_us_per_answer": self
                .cpu
                .filter(|_| answers > 0)
                .map(|cpu| thousandths(cpu.as_nanos() as f64 / 1e3 / answers as f64)),
        })
    }
}

/// `x` to 3 decimals: the double nearest that decimal, which prints as
/// written (a whole number of thousandths divided by 1000 rounds once).
fn thousandths(x: f64) -> f64 {
    (x * 1e3).round() / 1e3
}

/// `n` and the noun that goes with it.
fn counted(n: u64, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

fn micros(d: Duration) -> String {
    let us = d.as_secs_f64() * 1e6;
    match us {
        _ if us < 1_000.0 => format!("{us:.0} µs"),
        _ if us < 10_000.0 => format!("{:.2} ms", us / 1000.0),
        _ => format!("{:.1} ms", us / 1000.0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles_are_within_three_percent() {
        let mut h = Histogram::default();
        for us in 1..=10_000u64 {
            h.record(Duration::from_micros(us));
        }
        for (q, want) in [(0.5, 5_000.0), (0.9, 9_000.0), (0.99, 9_900.0)] {
            let got = h.quantile(q).as_secs_f64() * 1e6;
            assert!(
                (got - want).abs() / want < 0.03,
                "q{q}: {got} against {want}"
            );
        }
        assert_eq!(h.max(), Duration::from_micros(10_000));
        assert_eq!(h.quantile(1.0), Duration::from_micros(10_000));
    }

    #[test]
    fn every_value_lands_in_a_bucket_that_contains_it() {
        let mut ns = 0u64;
        while ns < 1 << 40 {
            let i = Histogram::index(ns);
            let mid = Histogram::value(i);
            assert!(
                mid.abs_diff(ns) <= ns / 32 + 1,
                "{ns} in bucket {i} around {mid}"
            );
            ns = ns * 9 / 8 + 1;
        }
        assert_eq!(Histogram::index(u64::MAX), BUCKETS - 1);
    }

    /// Every number in `value`, as serde_json writes it.
    fn numbers(value: &serde_json::Value, out: &mut Vec<String>) {
        match value {
            serde_json::Value::Number(n) => out.push(n.to_string()),
            serde_json::Value::Array(items) => items.iter().for_each(|v| numbers(v, out)),
            serde_json::Value::Object(map) => map.values().for_each(|v| numbers(v, out)),
            _ => {}
        }
    }

    #[test]
    fn echoes_have_no_statuses_even_when_none_came() {
        let run = |unit| Run {
            elapsed: Duration::from_secs(1),
            unit,
            connections: 1,
            open_files: FilesLimit {
                soft: Some(1024),
                hard: Some(1024),
            },
        };
        let stats = Stats::default();
        assert!(!stats.report(&run("messages")).contains("statuses"));
        assert!(stats.report(&run("requests")).contains("statuses   none"));
    }

    #[test]
    fn json_numbers_have_at_most_three_decimals() {
        let mut stats = Stats::default();
        // 3_524_103 ns as `as_secs_f64() * 1e6` is 3524.1029999999996 µs.
        stats.latency.record(Duration::from_nanos(3_524_103));
        stats.classes[1] = 3;
        stats.cpu = Some(Duration::from_nanos(1_000_001));
        let run = Run {
            elapsed: Duration::from_nanos(300_000_001),
            unit: "requests",
            connections: 1,
            open_files: FilesLimit {
                soft: Some(1024),
                hard: Some(1024),
            },
        };
        let json = stats.json(&run);
        assert_eq!(json["latency_us"]["max"].to_string(), "3524.103", "{json}");
        assert_eq!(json["cpu_us_per_answer"].to_string(), "333.334", "{json}");
        assert_eq!(json["seconds"].to_string(), "0.3", "{json}");
        let mut all = Vec::new();
        numbers(&json, &mut all);
        for n in all {
            let decimals = n.split_once('.').map_or(0, |(_, f)| f.len());
            assert!(decimals <= 3 && !n.contains('e'), "{n} in {json}");
        }
    }

    #[test]
    fn merged_counts_add_up() {
        let mut a = Stats::default();
        a.answer(200, 10, Duration::from_micros(5));
        a.connect_error("refused");
        a.failed_try("refused", true);
        a.failed_try("refused", false);
        let mut b = Stats::default();
        b.failed_try("refused", true);
        b.answer(404, 3, Duration::from_micros(50));
        b.answer(503, 0, Duration::from_micros(500));
        b.read_error("reset");
        a.ended(AtEnd::Open, true);
        b.ended(AtEnd::Connecting, false);
        b.ended(AtEnd::Open, true);
        a.merge(b);
        assert_eq!(a.classes, [0, 1, 0, 1, 1]);
        assert_eq!(a.body, 13);
        assert_eq!((a.connect_errors, a.read_errors), (1, 1));
        let ends = Ends {
            open: 2,
            connecting: 1,
            retrying: 0,
        };
        assert_eq!(a.at_end, ends);
        assert_eq!(a.never_opened, 1);
        assert_eq!(a.first_error.as_deref(), Some("refused"));
        let refused = Failed {
            connections: 2,
            tries: 3,
        };
        assert_eq!(a.failures.get("refused"), Some(&refused));
        // Both recorded on this thread.
        a.latency = take_thread_latency();
        assert_eq!(a.latency.max(), Duration::from_micros(500));
        let least = a.latency.quantile(0.0).as_nanos();
        assert!(least.abs_diff(5_000) <= 5_000 / 32, "{least}");
    }
}
