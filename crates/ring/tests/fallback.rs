//! When the kernel refuses a mirrored ring, `Backing::Auto` falls back to the heap with a warning.
//! Its own test binary: it lowers this process's descriptor limit.
#![cfg(all(target_os = "linux", not(miri)))]

use std::sync::Mutex;

use ringwire_ring::{Backing, Ring, RingConfig, RingError};

static WARNINGS: Mutex<Vec<String>> = Mutex::new(Vec::new());

struct Capture;

impl log::Log for Capture {
    fn enabled(&self, _: &log::Metadata<'_>) -> bool {
        true
    }
    fn log(&self, record: &log::Record<'_>) {
        if record.level() == log::Level::Warn {
            WARNINGS.lock().unwrap().push(record.args().to_string());
        }
    }
    fn flush(&self) {}
}

#[test]
fn refused_memfd_falls_back_to_heap_with_a_warning() {
    log::set_logger(&Capture).unwrap();
    log::set_max_level(log::LevelFilter::Warn);
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit/setrlimit write to and read from a valid rlimit struct.
    unsafe {
        assert_eq!(libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit), 0);
        // No new descriptor at all: memfd_create fails with EMFILE.
        let lowered = libc::rlimit {
            rlim_cur: 0,
            ..limit
        };
        assert_eq!(libc::setrlimit(libc::RLIMIT_NOFILE, &lowered), 0);
    }
    let strict = Ring::new(RingConfig::with_capacity(4096).backing(Backing::Mirrored));
    let mut fallback = Ring::new(RingConfig::with_capacity(4096)).unwrap();
    // SAFETY: as above.
    unsafe { assert_eq!(libc::setrlimit(libc::RLIMIT_NOFILE, &limit), 0) };

    assert!(matches!(strict, Err(RingError::Os(ref e)) if e.raw_os_error() == Some(libc::EMFILE)));
    assert!(!fallback.is_mirrored());
    let span = fallback.reserve(3).unwrap();
    span[..3].copy_from_slice(b"abc");
    fallback.commit(3);
    assert_eq!(fallback.readable(), b"abc");
    let warnings = WARNINGS.lock().unwrap();
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(warnings[0].contains("heap ring"), "{}", warnings[0]);
    assert!(Ring::new(RingConfig::with_capacity(4096))
        .unwrap()
        .is_mirrored());
}
