//! The timeout manager over loopback: idle keep-alive, the absolute head
//! limit, the minimum body rate, and a Slowloris attack that must neither
//! hold connections past the head limit nor slow a normal client down.
//!
//! Limits are short (hundreds of milliseconds, swept every 50-100 ms), so the
//! whole file runs in about 10 s. The Slowloris test measures throughput, so
//! it runs alone (`SERIAL`); the others only sleep and may overlap.

mod common;

use std::io::{ErrorKind, Read as _, Write as _};
use std::net::{SocketAddr, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, RwLock};
use std::thread;
use std::time::{Duration, Instant};

use common::{start, statuses, Echo};
use ringwire_server::{ServerConfig, Timeouts};

static SERIAL: RwLock<()> = RwLock::new(());

fn config(head: u64, idle: u64, body_min_rate: u64, body_window: u64, sweep: u64) -> ServerConfig {
    let ms = Duration::from_millis;
    ServerConfig {
        timeouts: Timeouts {
            head: ms(head),
            idle: ms(idle),
            warm: Timeouts::DEFAULT_WARM,
            body_min_rate,
            body_window: ms(body_window),
            sweep: ms(sweep),
            ..Timeouts::default()
        },
        ..ServerConfig::default()
    }
}

fn connect(addr: SocketAddr) -> TcpStream {
    let s = TcpStream::connect(addr).expect("connect");
    s.set_read_timeout(Some(Duration::from_secs(10)))
        .expect("timeout");
    s
}

/// Everything the server sends until it closes (a reset counts as a close).
fn read_to_close(s: &mut TcpStream) -> String {
    let mut out = Vec::new();
    let mut buf = [0; 4096];
    loop {
        match s.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => out.extend_from_slice(&buf[..n]),
            Err(e) if e.kind() == ErrorKind::ConnectionReset => break,
            Err(e) => panic!("read: {e}"),
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Reads one answer from `Echo` whose body ends with `tail`.
fn read_answer(s: &mut TcpStream, tail: &str) -> String {
    let mut out = Vec::new();
    let mut buf = [0; 4096];
    while !out.ends_with(tail.as_bytes()) {
        let n = s.read(&mut buf).expect("read");
        assert!(n > 0, "closed early: {}", String::from_utf8_lossy(&out));
        out.extend_from_slice(&buf[..n]);
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Sends `pieces` one at a time, `gap` apart, stopping early if the server
/// closes or answers; then reads to the close. Returns what was read, the
/// pieces sent, and when the answer (or close) came, from the first piece.
fn trickle(addr: SocketAddr, pieces: &[&[u8]], gap: Duration) -> (String, usize, Duration) {
    let mut s = connect(addr);
    let began = Instant::now();
    let mut sent = 0;
    for piece in pieces {
        if s.write_all(piece).is_err() {
            break;
        }
        sent += 1;
        s.set_read_timeout(Some(gap)).expect("timeout");
        let mut byte = [0; 1];
        match s.read(&mut byte) {
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {}
            Ok(1) => {
                let at = began.elapsed();
                s.set_read_timeout(Some(Duration::from_secs(10)))
                    .expect("timeout");
                let rest = read_to_close(&mut s);
                return (format!("{}{rest}", byte[0] as char), sent, at);
            }
            _ => return (String::new(), sent, began.elapsed()),
        }
    }
    s.set_read_timeout(Some(Duration::from_secs(10)))
        .expect("timeout");
    let out = read_to_close(&mut s);
    (out, sent, began.elapsed())
}

fn bytes(text: &[u8]) -> Vec<&[u8]> {
    text.chunks(1).collect()
}

#[test]
fn idle_keep_alive_connections_are_closed_after_the_idle_limit() {
    let _shared = SERIAL.read().unwrap_or_else(|e| e.into_inner());
    let (idle, sweep) = (500, 50);
    let addr = start(config(5000, idle, 1024, 5000, sweep), Echo);
    let mut s = connect(addr);
    s.write_all(b"GET /a HTTP/1.1\r\nHost: a\r\n\r\n")
        .expect("write");
    read_answer(&mut s, "GET /a body=0\n");
    let began = Instant::now();
    let rest = read_to_close(&mut s);
    let waited = began.elapsed();
    assert_eq!(rest, "", "an idle close is silent");
    assert!(
        waited >= Duration::from_millis(idle - sweep) - Duration::from_millis(10),
        "closed too early: {waited:?}"
    );
    assert!(
        waited <= Duration::from_millis(idle + 2 * sweep + 100),
        "closed too late: {waited:?}"
    );
}

#[test]
fn a_trickled_head_is_cut_at_the_head_limit_and_a_slow_one_in_time_is_served() {
    let _shared = SERIAL.read().unwrap_or_else(|e| e.into_inner());
    let (head, sweep) = (1000, 50);
    let addr = start(config(head, 30_000, 1024, 5000, sweep), Echo);
    let request = b"GET /trickle HTTP/1.1\r\nHost: a\r\n\r\n";

    // One byte every 200 ms would take 7 s: cut at 1 s with a 408.
    let slow = thread::spawn(move || trickle(addr, &bytes(request), Duration::from_millis(200)));
    // The whole head within the limit, in five pieces 150 ms apart.
    let in_time = thread::spawn(move || {
        let pieces: Vec<&[u8]> = request.chunks(request.len().div_ceil(5)).collect();
        let mut s = connect(addr);
        for piece in pieces {
            s.write_all(piece).expect("write");
            thread::sleep(Duration::from_millis(150));
        }
        let answer = read_answer(&mut s, "GET /trickle body=0\n");
        // Still a keep-alive connection afterwards.
        s.write_all(b"GET /again HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n")
            .expect("write");
        answer + &read_to_close(&mut s)
    });
    // A connection that sends nothing is closed silently at the head limit.
    let silent = thread::spawn(move || {
        let mut s = connect(addr);
        let began = Instant::now();
        (read_to_close(&mut s), began.elapsed())
    });

    let bound = Duration::from_millis(head + 2 * sweep + 100);
    let (out, sent, at) = slow.join().expect("slow");
    assert_eq!(statuses(&out), [408], "{out}");
    assert!(out.contains("connection: close\r\n"), "{out}");
    assert!(sent < request.len(), "cut before completing: {sent}");
    assert!(at <= bound, "cut after {at:?}");
    assert!(
        at >= Duration::from_millis(head - sweep),
        "cut early: {at:?}"
    );

    let out = in_time.join().expect("in time");
    assert_eq!(statuses(&out), [200, 200], "{out}");
    assert!(out.contains("GET /again body=0\n"), "{out}");

    let (out, waited) = silent.join().expect("silent");
    assert_eq!(out, "");
    assert!(waited <= bound, "closed after {waited:?}");
}

#[test]
fn a_body_below_the_minimum_rate_gets_408() {
    let _shared = SERIAL.read().unwrap_or_else(|e| e.into_inner());
    let (window, sweep) = (500, 50);
    // At least 1000 B/s over each 500 ms window.
    let addr = start(config(5000, 30_000, 1000, window, sweep), Echo);
    let bound = Duration::from_millis(window + 2 * sweep + 100);

    // 10 bytes every 100 ms is 100 B/s: cut after the first window.
    let slow_length = thread::spawn(move || {
        let mut pieces: Vec<&[u8]> =
            vec![b"POST /up HTTP/1.1\r\nHost: a\r\nContent-Length: 10000\r\n\r\n"];
        pieces.extend(std::iter::repeat_n(&b"0123456789"[..], 100));
        trickle(addr, &pieces, Duration::from_millis(100))
    });
    let slow_chunked = thread::spawn(move || {
        let mut pieces: Vec<&[u8]> =
            vec![b"POST /up HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n"];
        pieces.extend(std::iter::repeat_n(&b"5\r\n01234\r\n"[..], 100));
        trickle(addr, &pieces, Duration::from_millis(100))
    });
    // 1000 bytes every 200 ms is 5000 B/s: served.
    let fast_enough = thread::spawn(move || {
        let mut s = connect(addr);
        s.write_all(b"POST /up HTTP/1.1\r\nHost: a\r\nContent-Length: 3000\r\n\r\n")
            .expect("write");
        for _ in 0..3 {
            thread::sleep(Duration::from_millis(200));
            s.write_all(&[b'k'; 1000]).expect("write");
        }
        read_answer(&mut s, &"k".repeat(1000))
    });

    for (name, slow) in [("length", slow_length), ("chunked", slow_chunked)] {
        let (out, sent, at) = slow.join().expect(name);
        assert_eq!(statuses(&out), [408], "{name}: {out}");
        assert!(out.contains("connection: close\r\n"), "{name}: {out}");
        assert!(sent < 20, "{name}: cut late, {sent} pieces sent");
        assert!(at <= bound, "{name}: cut after {at:?}");
    }
    let out = fast_enough.join().expect("fast enough");
    assert_eq!(statuses(&out), [200], "{out}");
    assert!(out.contains("POST /up body=3000\n"), "{out}");
}

/// Sequential keep-alive GETs on one connection for `window`; the count.
fn normal_client(addr: SocketAddr, window: Duration) -> u64 {
    let mut s = connect(addr);
    let began = Instant::now();
    let mut count = 0;
    while began.elapsed() < window {
        s.write_all(b"GET /n HTTP/1.1\r\nHost: a\r\n\r\n")
            .expect("write");
        read_answer(&mut s, "GET /n body=0\n");
        count += 1;
    }
    count
}

/// What the attacker saw.
#[derive(Debug, Default)]
struct Attack {
    /// Connections the server closed.
    cut: usize,
    /// Of those, how many were answered 408 first.
    answered_408: usize,
    /// The longest any connection lived, closed by the server or still open
    /// at the end.
    longest: Duration,
}

/// `n` connections, each sending one more header byte every `every`, each
/// reconnecting when the server cuts it, until `stop`.
fn slowloris(addr: SocketAddr, n: usize, every: Duration, stop: &AtomicBool) -> Attack {
    const POLL: Duration = Duration::from_millis(50);
    const HEAD: &[u8] = b"GET /slowloris HTTP/1.1\r\nHost: a\r\nX-Trickle: ";
    struct Slot {
        stream: TcpStream,
        born: Instant,
        next: Instant,
        sent: usize,
        seen_408: bool,
    }
    let open = |offset: Duration| {
        let stream = TcpStream::connect(addr).expect("attacker connect");
        stream.set_nonblocking(true).expect("nonblocking");
        let born = Instant::now();
        Slot {
            stream,
            born,
            next: born + offset,
            sent: 0,
            seen_408: false,
        }
    };
    // Connections open spread over the first interval, as a real attack
    // ramps up: opening all at once would overflow the listen backlog and
    // time the kernel's SYN retries instead of the server.
    let stagger = every / u32::try_from(n).expect("n");
    let began = Instant::now();
    let mut slots: Vec<Slot> = Vec::with_capacity(n);
    let mut attack = Attack::default();
    let mut buf = [0; 1024];
    while !stop.load(Ordering::Relaxed) {
        while slots.len() < n && began.elapsed() >= stagger * slots.len() as u32 {
            slots.push(open(Duration::ZERO));
        }
        let now = Instant::now();
        for slot in &mut slots {
            let closed = loop {
                match slot.stream.read(&mut buf) {
                    Ok(0) => break true,
                    Ok(k) => slot.seen_408 |= buf[..k].starts_with(b"HTTP/1.1 408 "),
                    Err(e) if e.kind() == ErrorKind::WouldBlock => break false,
                    Err(_) => break true,
                }
            };
            if closed {
                attack.cut += 1;
                attack.answered_408 += usize::from(slot.seen_408);
                attack.longest = attack.longest.max(now - slot.born);
                *slot = open(Duration::ZERO);
            } else if now >= slot.next {
                let byte = HEAD.get(slot.sent).copied().unwrap_or(b'a');
                if slot.stream.write(&[byte]).is_ok() {
                    slot.sent += 1;
                }
                slot.next = now + every;
            }
        }
        thread::sleep(POLL);
    }
    let now = Instant::now();
    for slot in &slots {
        attack.longest = attack.longest.max(now - slot.born);
    }
    attack
}

#[test]
fn slowloris_is_cut_off_and_a_normal_client_keeps_its_rate() {
    let _alone = SERIAL.write().unwrap_or_else(|e| e.into_inner());
    const ATTACKERS: usize = 1000;
    // Each attacker costs two descriptors here (both ends live in this
    // process), more while the server lingers on a cut connection.
    assert!(
        common::raise_open_files_limit() >= 4 * ATTACKERS as u64,
        "the hard limit on open files is too low: raise `ulimit -Hn` to run this test"
    );
    let (head, sweep) = (2000, 100);
    let addr = start(config(head, 10_000, 1024, 5000, sweep), Echo);
    // The attacked window spans about four generations of attackers being
    // cut and reconnecting, so the attack runs at full strength throughout.
    // On a 2-core machine a lone client's rate varies by ±10% from run to
    // run (where the scheduler puts the client and the server's workers),
    // so the baseline is measured half before and half after the attack,
    // and the windows are 4 s rather than 3 s.
    let window = Duration::from_secs(4);

    let _warm = normal_client(addr, Duration::from_millis(300));
    // A second round only when the first misses the rate: a lone client's
    // rate on this shared 2-core machine swings by about 10% on its own, so
    // one noisy round is not a verdict; a server the attack really slows
    // misses both.
    let mut rates = Vec::new();
    for _round in 0..2 {
        let before = normal_client(addr, window / 2);
        let stop = Arc::new(AtomicBool::new(false));
        let attacker = {
            let stop = Arc::clone(&stop);
            thread::spawn(move || slowloris(addr, ATTACKERS, Duration::from_millis(1000), &stop))
        };
        // Let every attacker connect and start trickling.
        thread::sleep(Duration::from_millis(1100));
        let attacked = normal_client(addr, window);
        stop.store(true, Ordering::Relaxed);
        let attack = attacker.join().expect("attacker");
        // Cut attackers' sockets are closed, lingering ends at once.
        thread::sleep(Duration::from_millis(200));
        let baseline = before + normal_client(addr, window / 2);
        eprintln!("baseline {baseline} requests, under attack {attacked}; {attack:?}");

        // Every first-generation attacker was cut during the ~4.6 s attack.
        assert!(attack.cut >= ATTACKERS, "{attack:?}");
        // Each had sent bytes of a head, so each should be told why; on a
        // loaded 2-core machine some 408s lose the race with the cut (86%
        // seen under a concurrent build), so this asks for most, not all.
        assert!(attack.answered_408 >= attack.cut * 3 / 4, "{attack:?}");
        // Cut near the head limit (plus two sweeps and the attacker's 20 ms
        // polling; 1.1 s typical, 1.44 s seen under load), far before the
        // trickled head could finish (over 10 s at one byte per 500 ms).
        let bound = Duration::from_millis(2 * head);
        assert!(attack.longest <= bound, "{attack:?}");

        rates.push((attacked, baseline));
        if attacked * 10 >= baseline * 9 {
            return;
        }
    }
    panic!("normal client slowed down under attack in both rounds (attacked, baseline): {rates:?}");
}
