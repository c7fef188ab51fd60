//! Connecting to a host with several addresses, as RFC 8305 ("Happy Eyeballs") has it:
//! the addresses tried with their families alternating, a new attempt started each time
//! the last one failed or has not connected within [`ATTEMPT_DELAY`], the first to connect
//! kept. An address that drops the handshake (an IPv6 route that goes nowhere) then costs
//! a quarter of a second, not the whole connect timeout. And connecting to a Unix socket,
//! for a client that reaches every origin through one (curl's `--unix-socket`).

use std::future::Future;
use std::io;
use std::net::{SocketAddr, TcpStream};
use std::path::Path;
use std::pin::Pin;
use std::task::Poll;
use std::time::{Duration, Instant};

use rustix::event::{poll, PollFd, PollFlags, Timespec};
use socket2::{Domain, SockAddr, Socket, Type};

use crate::{Error, Phase};

/// How long an attempt goes on alone before the next one starts (RFC 8305 section 5
/// recommends 250 ms).
pub(crate) const ATTEMPT_DELAY: Duration = Duration::from_millis(250);

/// `addrs` in the order they are tried: the first address's family first, then the two
/// families in turn, each in its own order (RFC 8305 section 4).
pub(crate) fn interleaved(addrs: Vec<SocketAddr>) -> Vec<SocketAddr> {
    let Some(first) = addrs.first() else {
        return addrs;
    };
    let first_v6 = first.is_ipv6();
    let (mut preferred, mut other): (Vec<_>, Vec<_>) =
        addrs.into_iter().partition(|a| a.is_ipv6() == first_v6);
    let mut out = Vec::with_capacity(preferred.len() + other.len());
    preferred.reverse();
    other.reverse();
    loop {
        match (preferred.pop(), other.pop()) {
            (None, None) => return out,
            (a, b) => out.extend(a.into_iter().chain(b)),
        }
    }
}

/// The first of `addrs` (in [`interleaved`] order) to connect, by the race above, within
/// `limit`; past it an error of kind `TimedOut`, and when all failed the last failure.
pub(crate) fn race_blocking(
    addrs: &[SocketAddr],
    limit: Option<Duration>,
) -> io::Result<(TcpStream, SocketAddr)> {
    if let [addr] = addrs {
        let stream = match limit {
            Some(limit) => TcpStream::connect_timeout(addr, limit)?,
            None => TcpStream::connect(addr)?,
        };
        return Ok((stream, *addr));
    }
    let deadline = limit.map(|limit| Instant::now() + limit);
    let mut next = addrs.iter();
    let mut attempts: Vec<(Socket, SocketAddr)> = Vec::new();
    let mut last = io::Error::from(io::ErrorKind::AddrNotAvailable);
    // When the next attempt is due, if there is one.
    let mut due = Some(Instant::now());
    loop {
        let now = Instant::now();
        if due.is_some_and(|due| now >= due) {
            due = None;
            if let Some(&addr) = next.next() {
                // An attempt that failed at once (no route) waits for nothing.
                let wait = match start(addr) {
                    Ok(socket) => {
                        attempts.push((socket, addr));
                        ATTEMPT_DELAY
                    }
                    Err(e) => {
                        last = e;
                        Duration::ZERO
                    }
                };
                due = (next.len() > 0).then(|| now + wait);
            }
        }
        if attempts.is_empty() {
            match due {
                // Nothing in flight: the next one at once.
                Some(_) => due = Some(now),
                None => return Err(last),
            }
            continue;
        }
        if deadline.is_some_and(|d| now >= d) {
            return Err(io::ErrorKind::TimedOut.into());
        }
        let wake = [due, deadline].into_iter().flatten().min();
        let wait = wake.map(|at| at.saturating_duration_since(now));
        let mut fds: Vec<PollFd<'_>> = attempts
            .iter()
            .map(|(socket, _)| PollFd::new(socket, PollFlags::OUT))
            .collect();
        // A wait too long for a `Timespec` is no wait limit at all.
        let timeout = wait.and_then(|w| Timespec::try_from(w).ok());
        match poll(&mut fds, timeout.as_ref()) {
            Ok(_) => {}
            Err(e) if e == rustix::io::Errno::INTR => continue,
            Err(e) => return Err(e.into()),
        }
        let ready: Vec<bool> = fds.iter().map(|fd| !fd.revents().is_empty()).collect();
        drop(fds);
        let mut i = 0;
        let mut failed_now = false;
        for ready in ready {
            if !ready {
                i += 1;
                continue;
            }
            let (socket, addr) = attempts.remove(i);
            match socket.take_error()? {
                None => {
                    socket.set_nonblocking(false)?;
                    return Ok((socket.into(), addr));
                }
                Some(e) => {
                    last = e;
                    failed_now = true;
                }
            }
        }
        // A failure starts the next attempt without waiting out the delay.
        if failed_now && due.is_some() {
            due = Some(Instant::now());
        }
    }
}

/// A nonblocking connect to `addr`, under way.
fn start(addr: SocketAddr) -> io::Result<Socket> {
    let socket = Socket::new(Domain::for_address(addr), Type::STREAM, None)?;
    socket.set_nonblocking(true)?;
    match socket.connect(&SockAddr::from(addr)) {
        Ok(()) => Ok(socket),
        Err(e) if e.raw_os_error() == Some(libc::EINPROGRESS) => Ok(socket),
        Err(e) => Err(e),
    }
}

/// The async form of [`race_blocking`], without a limit of its own (the caller bounds the
/// whole connect): tokio connects raced on the caller's task.
pub(crate) async fn race(addrs: &[SocketAddr]) -> io::Result<(tokio::net::TcpStream, SocketAddr)> {
    type Attempt = Pin<Box<dyn Future<Output = io::Result<tokio::net::TcpStream>> + Send>>;
    if let [addr] = addrs {
        return Ok((tokio::net::TcpStream::connect(addr).await?, *addr));
    }
    let mut next = addrs.iter();
    let mut attempts: Vec<(Attempt, SocketAddr)> = Vec::new();
    let mut last = io::Error::from(io::ErrorKind::AddrNotAvailable);
    let delay = tokio::time::sleep(Duration::ZERO);
    tokio::pin!(delay);
    std::future::poll_fn(|cx| loop {
        // Due: the next attempt starts, and the delay runs again while more are left.
        let due = delay.as_mut().poll(cx).is_ready() || attempts.is_empty();
        if due {
            match next.next() {
                Some(&addr) => {
                    attempts.push((Box::pin(tokio::net::TcpStream::connect(addr)), addr));
                    let at = tokio::time::Instant::now() + ATTEMPT_DELAY;
                    delay.as_mut().reset(at);
                }
                None if attempts.is_empty() => {
                    return Poll::Ready(Err(std::mem::replace(
                        &mut last,
                        io::ErrorKind::AddrNotAvailable.into(),
                    )))
                }
                // All started: the delay matters no more.
                None => delay.as_mut().reset(far_future()),
            }
        }
        let mut failed_now = false;
        let mut i = 0;
        while i < attempts.len() {
            match attempts[i].0.as_mut().poll(cx) {
                Poll::Ready(Ok(stream)) => return Poll::Ready(Ok((stream, attempts[i].1))),
                Poll::Ready(Err(e)) => {
                    last = e;
                    drop(attempts.remove(i));
                    failed_now = true;
                }
                Poll::Pending => i += 1,
            }
        }
        // A failure starts the next attempt at once; else wait for an attempt or the delay.
        if !failed_now {
            return Poll::Pending;
        }
        delay.as_mut().reset(tokio::time::Instant::now());
    })
    .await
}

/// A deadline that never comes in practice, for a timer with nothing left to start.
fn far_future() -> tokio::time::Instant {
    tokio::time::Instant::now() + Duration::from_secs(86_400 * 365)
}

/// What a failed connection to the Unix socket at `path` is: a timeout, or
/// [`Error::Connect`] naming the socket.
pub(crate) fn unix_failed(path: &Path, e: io::Error) -> Error {
    match e.kind() {
        io::ErrorKind::TimedOut => Error::Timeout(Phase::Connect),
        _ => Error::Connect {
            authority: format!("unix:{}", ringwire_io::unix_socket_name(path)),
            source: e,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn addrs(list: &[&str]) -> Vec<SocketAddr> {
        list.iter().map(|a| a.parse().unwrap()).collect()
    }

    #[test]
    fn families_alternate_from_the_first() {
        let mixed = addrs(&["[::1]:1", "[::2]:1", "10.0.0.1:1", "[::3]:1", "10.0.0.2:1"]);
        assert_eq!(
            interleaved(mixed),
            addrs(&["[::1]:1", "10.0.0.1:1", "[::2]:1", "10.0.0.2:1", "[::3]:1"])
        );
        let v4 = addrs(&["10.0.0.1:1", "[::1]:1"]);
        assert_eq!(interleaved(v4.clone()), v4);
        assert!(interleaved(Vec::new()).is_empty());
    }

    /// A listener whose backlog is full: further handshakes are dropped, as by an address
    /// that goes nowhere.
    fn black_hole() -> (std::net::TcpListener, Vec<TcpStream>, SocketAddr) {
        let socket = Socket::new(Domain::IPV4, Type::STREAM, None).unwrap();
        socket
            .bind(&SockAddr::from(
                "127.0.0.2:0".parse::<SocketAddr>().unwrap(),
            ))
            .unwrap();
        socket.listen(0).unwrap();
        let listener: std::net::TcpListener = socket.into();
        let addr = listener.local_addr().unwrap();
        // Fill the queue (never accepted).
        let mut held = Vec::new();
        for _ in 0..4 {
            if let Ok(s) = TcpStream::connect_timeout(&addr, Duration::from_millis(100)) {
                held.push(s);
            }
        }
        (listener, held, addr)
    }

    #[test]
    fn a_silent_address_costs_the_attempt_delay_not_the_limit() {
        let (_hole, _held, silent) = black_hole();
        let good = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let both = [silent, good.local_addr().unwrap()];
        let started = Instant::now();
        let (stream, addr) = race_blocking(&both, Some(Duration::from_secs(10))).unwrap();
        assert_eq!(addr, both[1]);
        assert_eq!(stream.peer_addr().unwrap(), both[1]);
        assert!(
            started.elapsed() < Duration::from_secs(2),
            "{:?}",
            started.elapsed()
        );

        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let started = Instant::now();
        let (_, addr) = runtime.block_on(race(&both)).unwrap();
        assert_eq!(addr, both[1]);
        assert!(
            started.elapsed() < Duration::from_secs(2),
            "{:?}",
            started.elapsed()
        );
    }

    #[test]
    fn refused_addresses_fall_through_at_once_and_the_last_error_stays() {
        let closed = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap();
        let good = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let list = [closed, closed, good.local_addr().unwrap()];
        let started = Instant::now();
        assert_eq!(race_blocking(&list, None).unwrap().1, list[2]);
        // Each refusal starts the next attempt without waiting the delay.
        assert!(started.elapsed() < ATTEMPT_DELAY, "{:?}", started.elapsed());
        let refused = race_blocking(&[closed, closed], None).unwrap_err();
        assert_eq!(refused.kind(), io::ErrorKind::ConnectionRefused);

        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let started = Instant::now();
        assert_eq!(runtime.block_on(race(&list)).unwrap().1, list[2]);
        assert!(started.elapsed() < ATTEMPT_DELAY, "{:?}", started.elapsed());
        let refused = runtime.block_on(race(&[closed, closed])).unwrap_err();
        assert_eq!(refused.kind(), io::ErrorKind::ConnectionRefused);
    }

    #[test]
    fn the_limit_bounds_the_whole_race() {
        let (_hole, _held, silent) = black_hole();
        let (_hole2, _held2, silent2) = black_hole();
        let started = Instant::now();
        let err = race_blocking(&[silent, silent2], Some(Duration::from_millis(600))).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::TimedOut);
        let took = started.elapsed();
        assert!(
            took >= Duration::from_millis(550) && took < Duration::from_secs(2),
            "{took:?}"
        );
    }
}
