//! The io_uring driver's accept when the process runs out of descriptors: it pauses rather
//! than fail in a busy loop, and accepts the waiting connections once descriptors are back.
//! A test binary of its own: the descriptor limit it lowers is the whole process's.
#![cfg(all(feature = "uring", target_os = "linux"))]

use std::net::{TcpListener, TcpStream};
use std::time::{Duration, Instant};

use ringwire_io::uring::{Driver, Event};
use ringwire_io::TransportConfig;
use rustix::process::{getrlimit, setrlimit, Resource};

fn set_soft_limit(limit: Option<u64>) {
    let mut rlimit = getrlimit(Resource::Nofile);
    rlimit.current = limit;
    setrlimit(Resource::Nofile, rlimit).unwrap();
}

fn highest_open_descriptor() -> u64 {
    std::fs::read_dir("/proc/self/fd")
        .unwrap()
        .filter_map(|entry| entry.ok()?.file_name().to_str()?.parse().ok())
        .max()
        .unwrap()
}

/// Takes every descriptor left under the limit.
fn exhaust() -> Vec<std::fs::File> {
    let mut taken = Vec::new();
    loop {
        match std::fs::File::open("/dev/null") {
            Ok(file) => taken.push(file),
            Err(e) => {
                assert!(e.to_string().contains("open files"), "{e}");
                return taken;
            }
        }
    }
}

/// Waits for `span`, counting what accepting gave.
fn events_for(driver: &mut Driver, span: Duration) -> (usize, usize) {
    let (mut accepted, mut failed) = (0, 0);
    let start = Instant::now();
    while start.elapsed() < span {
        driver.wait(Some(Duration::from_millis(10))).unwrap();
        while let Some(event) = driver.next_event() {
            match event {
                Event::Accepted(_) => accepted += 1,
                Event::AcceptFailed(e) => {
                    assert!(e.to_string().contains("open files"), "{e}");
                    failed += 1;
                }
                other => panic!("{other:?}"),
            }
        }
    }
    (accepted, failed)
}

#[test]
fn out_of_descriptors_pauses_accepting_and_recovers() {
    let original = getrlimit(Resource::Nofile).current;
    let mut driver = Driver::new(64, TransportConfig::new(4096, 64 << 10)).unwrap();
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    driver.listen(listener).unwrap();
    // Connected by the kernel's backlog, waiting to be accepted.
    let clients: Vec<TcpStream> = (0..3).map(|_| TcpStream::connect(addr).unwrap()).collect();

    // No descriptor left for an accepted connection.
    set_soft_limit(Some(highest_open_descriptor() + 1));
    let taken = exhaust();
    let (accepted, failed) = events_for(&mut driver, Duration::from_millis(600));
    drop(taken);
    set_soft_limit(original);
    assert_eq!(accepted, 0);
    // A failure per pause of 100 ms, not one per turn of the loop.
    assert!((1..=10).contains(&failed), "{failed} failed accepts");

    let (accepted, _) = events_for(&mut driver, Duration::from_millis(500));
    assert_eq!(accepted, clients.len());
}
