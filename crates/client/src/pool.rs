//! Idle keep-alive connections per origin, bounded, checked before reuse.

use std::collections::HashMap;
use std::io;
use std::mem::MaybeUninit;
use std::os::fd::AsFd;
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

use socket2::SockRef;

use crate::url::Origin;

/// A connection that knows where it goes.
pub(crate) trait Keyed {
    fn origin(&self) -> &Origin;
}

/// Idle connections of type `C`, most recently used last.
#[derive(Debug)]
pub(crate) struct Pool<C> {
    idle: Mutex<HashMap<Origin, Vec<Idle<C>>>>,
    max_per_origin: usize,
    idle_timeout: Duration,
}

#[derive(Debug)]
struct Idle<C> {
    conn: C,
    since: Instant,
}

impl<C: Keyed> Pool<C> {
    pub(crate) fn new(max_per_origin: usize, idle_timeout: Duration) -> Self {
        Pool {
            idle: Mutex::new(HashMap::new()),
            max_per_origin,
            idle_timeout,
        }
    }

    /// The most recently used idle connection to `origin` that `alive`
    /// accepts; older ones and those that fail the check are closed.
    pub(crate) fn take(&self, origin: &Origin, alive: impl Fn(&C) -> bool) -> Option<C> {
        loop {
            // The check is a syscall: not under the lock.
            let idle = self.lock().get_mut(origin)?.pop()?;
            if idle.since.elapsed() < self.idle_timeout && alive(&idle.conn) {
                return Some(idle.conn);
            }
        }
    }

    /// Keeps `conn` for reuse, closing the oldest idle one past the bound.
    pub(crate) fn put(&self, conn: C) {
        if self.max_per_origin == 0 {
            return;
        }
        let mut map = self.lock();
        // The key is cloned once per origin, not once per request.
        let list = match map.get_mut(conn.origin()) {
            Some(list) => list,
            None => map.entry(conn.origin().clone()).or_default(),
        };
        let idle = Idle {
            conn,
            since: Instant::now(),
        };
        if list.len() >= self.max_per_origin {
            list.remove(0);
        }
        list.push(idle);
    }

    /// Idle connections kept for `origin`.
    pub(crate) fn idle(&self, origin: &Origin) -> usize {
        self.lock().get(origin).map_or(0, Vec::len)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<Origin, Vec<Idle<C>>>> {
        // A panic elsewhere cannot leave the map half-updated.
        self.idle.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// Whether an idle socket is still open and quiet: one non-blocking peek.
/// End of stream (the server closed it) and unsolicited bytes (nothing
/// that arrives between responses can be framed) both make it stale.
pub(crate) fn is_quiet(socket: &impl AsFd) -> bool {
    let mut byte = [MaybeUninit::uninit()];
    let peeked =
        SockRef::from(socket).recv_with_flags(&mut byte, libc::MSG_PEEK | libc::MSG_DONTWAIT);
    matches!(peeked, Err(e) if e.kind() == io::ErrorKind::WouldBlock)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Url;

    #[derive(Debug, PartialEq)]
    struct Conn(Origin, u32);

    impl Keyed for Conn {
        fn origin(&self) -> &Origin {
            &self.0
        }
    }

    #[test]
    fn bounded_and_most_recent_first() {
        let pool = Pool::new(2, Duration::from_secs(60));
        let a = Url::parse("http://a/").unwrap();
        let b = Url::parse("http://b:81/").unwrap();
        for n in 1..=3 {
            pool.put(Conn(a.origin().clone(), n));
        }
        assert_eq!(pool.idle(a.origin()), 2);
        assert_eq!(pool.take(b.origin(), |_| true), None);
        let second = pool.take(a.origin(), |c| c.1 != 3);
        assert_eq!(second, Some(Conn(a.origin().clone(), 2)));
        assert_eq!(pool.take(a.origin(), |_| true), None);
    }

    #[test]
    fn expired_ones_are_dropped() {
        let pool = Pool::new(2, Duration::ZERO);
        let a = Url::parse("http://a/").unwrap();
        pool.put(Conn(a.origin().clone(), 1));
        assert_eq!(pool.take(a.origin(), |_| true), None);
    }

    #[test]
    fn quiet_until_closed() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let client = std::net::TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        let (server, _) = listener.accept().unwrap();
        assert!(is_quiet(&client));
        drop(server);
        // The FIN arrives asynchronously, even over loopback.
        let deadline = Instant::now() + Duration::from_secs(5);
        while is_quiet(&client) {
            assert!(Instant::now() < deadline, "close never seen");
            std::thread::sleep(Duration::from_millis(5));
        }
    }
}
