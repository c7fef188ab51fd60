//! Memory of idle rings: creates many mirrored rings (default 1000 of 16 MiB) and prints the
//! process's resident memory (`VmRSS`, of which `RssShmem` is ring pages) and the system's
//! `Shmem` (memfd pages exist there even while unmapped) at each stage:
//!
//! 1. before any ring exists;
//! 2. after creating them (expected: near zero, since nothing is touched);
//! 3. after writing 64 KiB into each (a recv's worth);
//! 4. after `clear()` + `release_pages()` (expected: back to near zero).
//!
//! Usage: `idle_rss [COUNT] [MIB_PER_RING] [mirrored|heap]`. Linux only (it reads `/proc`).
//! The heap backing is there for comparison: it releases with `madvise(MADV_DONTNEED)`, but a
//! heap ring made after the process freed a large block may be resident from birth (see
//! docs/benchmarks.md, finding 2).

#![deny(unsafe_code)]

use std::fs;

use ringwire_ring::{Backing, Ring, RingConfig};

/// Bytes written into each ring at stage 3.
const TOUCH: usize = 64 * 1024;

fn main() {
    let mut args = std::env::args().skip(1);
    let mut arg = |default: usize| {
        args.next()
            .map_or(default, |a| a.parse().expect("arguments are numbers"))
    };
    let count = arg(1000);
    let capacity = arg(16) << 20;
    let backing = match args.next().as_deref() {
        None | Some("mirrored") => Backing::Mirrored,
        Some("heap") => Backing::Heap,
        Some(other) => panic!("backing is mirrored or heap, not {other}"),
    };

    let (soft, hard) = raise_nofile_limit();
    println!("RLIMIT_NOFILE: soft {soft}, hard {hard} (each mirrored ring holds one memfd)");
    println!("{count} {backing:?} rings of {} MiB\n", capacity >> 20);
    println!(
        "{:<26} {:>18} {:>18} {:>18} {:>10}",
        "stage", "VmRSS", "RssShmem", "sys Shmem", "VmSize"
    );
    let baseline = Usage::now();
    baseline.print("before", None);

    let config = RingConfig::with_capacity(capacity)
        .max_capacity(capacity)
        .backing(backing);
    let mut rings: Vec<Ring> = (0..count)
        .map(|i| Ring::new(config).unwrap_or_else(|e| panic!("ring {i}: {e}")))
        .collect();
    Usage::now().print("created (idle)", Some(&baseline));

    for ring in &mut rings {
        ring.writable()[..TOUCH].fill(0xa5);
        ring.commit(TOUCH);
    }
    Usage::now().print("64 KiB written in each", Some(&baseline));

    for ring in &mut rings {
        ring.clear();
        assert!(ring.release_pages().expect("release_pages"));
    }
    let idle = Usage::now();
    idle.print("clear + release_pages", Some(&baseline));

    let rss = idle.rss.saturating_sub(baseline.rss);
    println!(
        "\nidle cost: {} KiB of RSS for {count} rings ({} bytes per ring), {} MiB of address \
         space",
        rss / 1024,
        rss / count.max(1),
        (idle.vm_size - baseline.vm_size) >> 20
    );
    drop(rings);
}

/// Memory figures, in bytes.
#[derive(Debug, Clone, Copy)]
struct Usage {
    rss: usize,
    rss_shmem: usize,
    vm_size: usize,
    /// System-wide shared memory (`/proc/meminfo`): other processes add noise.
    sys_shmem: usize,
}

impl Usage {
    fn now() -> Self {
        let status = fs::read_to_string("/proc/self/status").expect("/proc/self/status (Linux)");
        let meminfo = fs::read_to_string("/proc/meminfo").expect("/proc/meminfo (Linux)");
        Self {
            rss: kib_field(&status, "VmRSS:"),
            rss_shmem: kib_field(&status, "RssShmem:"),
            vm_size: kib_field(&status, "VmSize:"),
            sys_shmem: kib_field(&meminfo, "Shmem:"),
        }
    }

    /// One table row; with a baseline, the changes since it are shown too.
    fn print(&self, stage: &str, baseline: Option<&Usage>) {
        let show = |now: usize, base: Option<usize>| match base {
            Some(base) => format!("{} ({:+.2}M)", mib(now), mib_delta(now, base)),
            None => mib(now),
        };
        println!(
            "{stage:<26} {:>18} {:>18} {:>18} {:>10}",
            show(self.rss, baseline.map(|b| b.rss)),
            show(self.rss_shmem, baseline.map(|b| b.rss_shmem)),
            show(self.sys_shmem, baseline.map(|b| b.sys_shmem)),
            mib(self.vm_size),
        );
    }
}

fn mib(bytes: usize) -> String {
    format!("{:.1}M", bytes as f64 / f64::from(1 << 20))
}

fn mib_delta(now: usize, base: usize) -> f64 {
    (now as f64 - base as f64) / f64::from(1 << 20)
}

/// `Name:   123 kB` from a /proc file, in bytes (0 if absent, as on old kernels).
fn kib_field(text: &str, name: &str) -> usize {
    text.lines()
        .find_map(|line| line.strip_prefix(name))
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|kib| kib.parse::<usize>().ok())
        .map_or(0, |kib| kib * 1024)
}

/// Raises the soft open-file limit to the hard one (a fresh machine's soft limit of 1024 would
/// stop at about 1000 rings). Returns the (soft, hard) limits now in force.
#[cfg(unix)]
#[allow(unsafe_code)]
fn raise_nofile_limit() -> (u64, u64) {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes one `rlimit` through a pointer to a live local, and
    // setrlimit reads one; neither keeps the pointer. No other memory is touched.
    unsafe {
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) == 0 && limit.rlim_cur < limit.rlim_max
        {
            let raised = libc::rlimit {
                rlim_cur: limit.rlim_max,
                ..limit
            };
            if libc::setrlimit(libc::RLIMIT_NOFILE, &raised) == 0 {
                limit = raised;
            }
        }
    }
    (limit.rlim_cur, limit.rlim_max)
}

#[cfg(not(unix))]
fn raise_nofile_limit() -> (u64, u64) {
    (0, 0)
}
