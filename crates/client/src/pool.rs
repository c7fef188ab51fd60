//! Idle keep-alive connections per origin, bounded, checked before reuse. Swept as the
//! pool is used: connections idle past their timeout are closed, and those idle a second
//! give back their buffers' memory.

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

    /// Gives back the memory an idle connection does not need (its rings' touched pages,
    /// what its buffers grew to): the next exchange faults in only what it uses.
    fn cool(&mut self);
}

/// A boxed connection (kept so, as a pool's moves are then a pointer's) knows too.
impl<C: Keyed> Keyed for Box<C> {
    fn origin(&self) -> &Origin {
        (**self).origin()
    }

    fn cool(&mut self) {
        (**self).cool();
    }
}

/// Idle connections of type `C`, most recently used last.
#[derive(Debug)]
pub(crate) struct Pool<C> {
    state: Mutex<State<C>>,
    max_per_origin: usize,
    idle_timeout: Duration,
}

#[derive(Debug)]
struct State<C> {
    idle: HashMap<Origin, Vec<Idle<C>>>,
    /// When the idle connections were last swept.
    swept: Instant,
}

#[derive(Debug)]
struct Idle<C> {
    conn: C,
    since: Instant,
    cooled: bool,
}

/// How often a sweep runs at most.
pub(crate) const SWEEP_EVERY: Duration = Duration::from_secs(1);

/// How long a connection idles before it gives back its memory, as the server's warm
/// period: exchanges back to back keep their pages (a large answer would fault them in
/// again each time).
const COOL_AFTER: Duration = Duration::from_secs(1);

impl<C: Keyed> Pool<C> {
    pub(crate) fn new(max_per_origin: usize, idle_timeout: Duration) -> Self {
        Pool {
            state: Mutex::new(State {
                idle: HashMap::new(),
                swept: Instant::now(),
            }),
            max_per_origin,
            idle_timeout,
        }
    }

    /// The most recently used idle connection to `origin` that `alive`
    /// accepts; older ones and those that fail the check are closed.
    pub(crate) fn take(&self, origin: &Origin, alive: impl Fn(&C) -> bool) -> Option<C> {
        let now = Instant::now();
        let mut state = self.lock();
        self.sweep(&mut state, now);
        loop {
            let idle = state.idle.get_mut(origin)?.pop()?;
            // The check is a syscall: not under the lock.
            drop(state);
            if now.duration_since(idle.since) < self.idle_timeout && alive(&idle.conn) {
                return Some(idle.conn);
            }
            state = self.lock();
        }
    }

    /// Keeps `conn` for reuse, closing the oldest idle one past the bound.
    pub(crate) fn put(&self, conn: C) {
        if self.max_per_origin == 0 {
            return;
        }
        let now = Instant::now();
        let mut state = self.lock();
        self.sweep(&mut state, now);
        // The key is cloned once per origin, not once per request.
        let list = match state.idle.get_mut(conn.origin()) {
            Some(list) => list,
            None => state.idle.entry(conn.origin().clone()).or_default(),
        };
        let idle = Idle {
            conn,
            since: now,
            cooled: false,
        };
        if list.len() >= self.max_per_origin {
            list.remove(0);
        }
        list.push(idle);
    }

    /// At most once a second: closes the connections of every origin idle past the
    /// timeout, and cools those idle [`COOL_AFTER`] (once each).
    fn sweep(&self, state: &mut State<C>, now: Instant) {
        if now.duration_since(state.swept) < SWEEP_EVERY {
            return;
        }
        state.swept = now;
        state.idle.retain(|_, list| {
            list.retain(|idle| now.duration_since(idle.since) < self.idle_timeout);
            for idle in list.iter_mut() {
                if !idle.cooled && now.duration_since(idle.since) >= COOL_AFTER {
                    idle.conn.cool();
                    idle.cooled = true;
                }
            }
            !list.is_empty()
        });
    }

    /// Idle connections kept for `origin`.
    pub(crate) fn idle(&self, origin: &Origin) -> usize {
        self.lock().idle.get(origin).map_or(0, Vec::len)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State<C>> {
        // A panic elsewhere cannot leave the map half-updated.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
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

        fn cool(&mut self) {
            self.1 += 100;
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
    fn sweeps_cool_idle_connections_once_and_close_expired_ones() {
        let pool = Pool::new(4, Duration::from_millis(2500));
        let (a, b) = (
            Url::parse("http://a/").unwrap(),
            Url::parse("http://b/").unwrap(),
        );
        pool.put(Conn(a.origin().clone(), 1));
        // Not yet: swept at most once a second, and cooled after a second idle.
        pool.put(Conn(b.origin().clone(), 1));
        assert_eq!(
            pool.take(b.origin(), |_| true),
            Some(Conn(b.origin().clone(), 1))
        );
        std::thread::sleep(Duration::from_millis(1100));
        // Using the pool for `b` cools `a`'s connection, idle since.
        assert_eq!(pool.take(b.origin(), |_| true), None);
        std::thread::sleep(Duration::from_millis(1100));
        pool.put(Conn(b.origin().clone(), 2));
        assert_eq!(
            pool.take(a.origin(), |_| true),
            Some(Conn(a.origin().clone(), 101))
        );
        // Past the idle timeout, a sweep closes it without a take for its origin.
        pool.put(Conn(a.origin().clone(), 3));
        std::thread::sleep(Duration::from_millis(2600));
        assert_eq!(pool.idle(a.origin()), 1);
        pool.put(Conn(b.origin().clone(), 4));
        assert_eq!((pool.idle(a.origin()), pool.idle(b.origin())), (0, 1));
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
