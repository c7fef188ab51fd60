//! Helpers shared by the transport tests.
#![allow(dead_code, unreachable_pub)] // each test binary uses a different subset

use std::sync::mpsc;
use std::time::Duration;

/// Length-prefixed frames with bodies of the given sizes, bytes patterned by index.
pub fn frames(sizes: &[usize]) -> Vec<u8> {
    let mut wire = Vec::new();
    for (i, &size) in sizes.iter().enumerate() {
        wire.extend_from_slice(&(size as u32).to_be_bytes());
        wire.extend((0..size).map(|j| (i + j) as u8));
    }
    wire
}

/// Runs `f` on a thread and fails the test if it does not finish in `secs`: a hang is a bug.
pub fn within<T: Send + 'static>(secs: u64, f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    rx.recv_timeout(Duration::from_secs(secs))
        .expect("timed out: the transport hung")
}
