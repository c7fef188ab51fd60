//! The timeout manager: Slowloris protection without a timer per request.
//!
//! One **sweeper** thread per [`Server`](crate::Server) wakes every
//! [`Timeouts::sweep`], advances a coarse millisecond clock and scans every
//! live connection. A thread, not a task: a timer on the runtime would make
//! each of its idle waits arm a kernel timer (`epoll_wait` with a timeout),
//! about 0.3 µs per wait on this project's KVM machines, paid per request.
//!
//! A connection owns a [`Timer`]: a shared [`Watch`] of atomics that it
//! updates on its hot path with plain relaxed/release stores, and a
//! [`Notify`] the sweeper fires when a limit is exceeded. Nothing is armed,
//! re-armed or cancelled per request or per chunk; the connection never reads
//! the system clock (phase changes read the sweeper's clock, one atomic load).
//!
//! # What is timed
//!
//! A connection is always in one phase; the phase and the coarse time it
//! began share one atomic word, so the sweeper reads both consistently.
//!
//! | phase | limit | on expiry |
//! |---|---|---|
//! | `Head` (from accept, or from the first byte of a later request) | [`Timeouts::head`], absolute: trickling bytes does not extend it | `408 Request Timeout` + close if any byte of the request arrived, else a silent close |
//! | `Warm` (just answered, nothing received, rings still held) | [`Timeouts::warm`] | the rings go back to the pools; `Idle` begins |
//! | `Idle` (keep-alive, between requests, nothing received, no rings) | [`Timeouts::idle`] | silent close |
//! | `Body` (reading a request body) | [`Timeouts::body_min_rate`] over each [`Timeouts::body_window`] | `408` + close |
//! | `Handler` | none | — |
//! | `Writing` (and the flush of a pipelined batch) | [`Timeouts::send_stall`]: no byte taken by the client for that long | close |
//! | upgraded (a WebSocket, after `101`) | none of the sweeper's; the kernel's keepalive after [`Timeouts::upgraded_keepalive`] of quiet | the kernel ends it if the peer is gone |
//!
//! (An HTTP/2 connection carries many bodies at once: each is held to the same rate on its
//! own stream by the connection itself, and a frame begun to the head limit; see `pace.rs`.)
//!
//! The body rate is checked per window: in every window of
//! `body_window` (the first one is the grace period, counted from the end of
//! the head) the body must either complete or advance by at least
//! `body_min_rate × body_window` bytes. Per chunk the connection stores its
//! received byte count (one relaxed store: the "still active" mark); the
//! sweeper keeps the mark of the previous window in its own list, so a client
//! cannot bank credit with a fast start and then stall (a cumulative average
//! would let an 8 MiB burst buy hours).
//!
//! A slow handler is the application's business, so `Handler` is untimed. A
//! client that stops reading our answers is backpressure: the send ring
//! fills, the connection stops reading requests, and memory stays bounded.
//! That wait is bounded by [`Timeouts::send_stall`], enforced by the send
//! transport itself: a timer is armed only while the socket is full, which
//! a reading client rarely makes it, so the hot path arms nothing.
//!
//! # Precision
//!
//! Phase starts are stamped with the sweeper's clock, which lags real time
//! by less than one sweep, so a phase counts as over one sweep after its
//! limit by that clock, and expiry is noticed at the next sweep: a limit `L`
//! ends a connection between `L` and `L + 2 × sweep` after its phase began
//! (plus scheduling delay), never before `L`. (The body rate's first window,
//! its grace, may end up to one sweep early.) The per-runtime cost is one wake-up per
//! sweep and a scan of the live connections; new connections are handed to
//! the sweeper through a short-locked inbox, so the scan itself holds no lock
//! that `accept` needs. Finished connections are dropped from the scan when
//! the sweeper holds the last reference to their watch.

use std::future::{poll_fn, Future};
use std::pin::pin;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use std::task::{Poll, Waker};
use std::time::{Duration, Instant};
use std::{io, thread};

use atomic_waker::AtomicWaker;
use tokio::sync::futures::Notified;
use tokio::sync::Notify;
use tokio::task::AbortHandle;

/// Per-connection time limits, enforced by one sweeper per server
/// (see [`ServerConfig::timeouts`](crate::ServerConfig::timeouts)).
///
/// `Duration::MAX` switches a duration limit off; a `body_min_rate` of 0
/// switches the body-rate limit off.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timeouts {
    /// A whole request head must arrive within this, counted from the
    /// accept (first request) or from the request's first byte (later
    /// requests on a keep-alive connection). Absolute: a byte now and then
    /// does not extend it. Default 10 s.
    pub head: Duration,
    /// How long a keep-alive connection may wait, with nothing received,
    /// for its next request (counted once [`warm`](Self::warm) is over).
    /// Default 60 s.
    pub idle: Duration,
    /// How long a connection keeps its rings after an answer, waiting for
    /// the next request, before it gives them back to the pools and idles
    /// holding none. A busy connection's next request then costs no pool
    /// traffic and no allocation; an idle one costs under 1 KiB once this
    /// is over. Zero gives the rings back at once. Default 1 s.
    pub warm: Duration,
    /// The slowest acceptable request body, in bytes per second, measured
    /// over each [`body_window`](Self::body_window) (over HTTP/2, for each
    /// stream's body on its own). Default 1024.
    pub body_min_rate: u64,
    /// The window over which the body rate is measured; the first window,
    /// from the end of the head, is also the grace period. Default 5 s.
    pub body_window: Duration,
    /// How often the sweeper checks every connection: the precision of all
    /// the limits above. Default 1 s.
    pub sweep: Duration,
    /// How long a client may take no bytes of a response while the socket
    /// is full before the connection is dropped. Default 30 s.
    pub send_stall: Duration,
    /// An upgraded connection (a WebSocket), or an HTTP/2 one once it carries
    /// a tunnel (RFC 8441), runs without a limit of its
    /// own, its protocol deciding when it ends; but a peer that vanished
    /// without a word (a dropped network, a laptop put to sleep) would hold
    /// it, its task and descriptor forever. After this long without traffic
    /// the kernel probes the peer (TCP keepalive, a probe every
    /// [`KEEPALIVE_INTERVAL`](Self::KEEPALIVE_INTERVAL), ending the
    /// connection after [`KEEPALIVE_PROBES`](Self::KEEPALIVE_PROBES)
    /// unanswered, or as long without an acknowledgement of data sent),
    /// which costs nothing while traffic flows. Linux only; `Duration::MAX`
    /// leaves the kernel's default (no probes). Default 60 s.
    pub upgraded_keepalive: Duration,
}

impl Timeouts {
    /// Default [`head`](Self::head): 10 s.
    pub const DEFAULT_HEAD: Duration = Duration::from_secs(10);
    /// Default [`idle`](Self::idle): 60 s.
    pub const DEFAULT_IDLE: Duration = Duration::from_secs(60);
    /// Default [`warm`](Self::warm): 1 s.
    pub const DEFAULT_WARM: Duration = Duration::from_secs(1);
    /// Default [`body_min_rate`](Self::body_min_rate): 1 KiB/s.
    pub const DEFAULT_BODY_MIN_RATE: u64 = 1024;
    /// Default [`body_window`](Self::body_window): 5 s.
    pub const DEFAULT_BODY_WINDOW: Duration = Duration::from_secs(5);
    /// Default [`sweep`](Self::sweep): 1 s.
    pub const DEFAULT_SWEEP: Duration = Duration::from_secs(1);
    /// Default [`send_stall`](Self::send_stall): 30 s.
    pub const DEFAULT_SEND_STALL: Duration = Duration::from_secs(30);
    /// Default [`upgraded_keepalive`](Self::upgraded_keepalive): 60 s.
    pub const DEFAULT_UPGRADED_KEEPALIVE: Duration = Duration::from_secs(60);
    /// Between keepalive probes of an upgraded connection.
    pub const KEEPALIVE_INTERVAL: Duration = Duration::from_secs(10);
    /// Unanswered keepalive probes that end an upgraded connection.
    pub const KEEPALIVE_PROBES: u32 = 6;
}

impl Default for Timeouts {
    fn default() -> Self {
        Timeouts {
            head: Self::DEFAULT_HEAD,
            idle: Self::DEFAULT_IDLE,
            warm: Self::DEFAULT_WARM,
            body_min_rate: Self::DEFAULT_BODY_MIN_RATE,
            body_window: Self::DEFAULT_BODY_WINDOW,
            sweep: Self::DEFAULT_SWEEP,
            send_stall: Self::DEFAULT_SEND_STALL,
            upgraded_keepalive: Self::DEFAULT_UPGRADED_KEEPALIVE,
        }
    }
}

/// What a connection is doing, as far as the limits care.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub(crate) enum Phase {
    /// Waiting for (the rest of) a request head.
    Head = 0,
    /// Keep-alive: waiting for the next request, nothing received yet.
    Idle = 1,
    /// Reading a request body.
    Body = 2,
    /// The handler runs: untimed.
    Handler = 3,
    /// Answering: bounded by the send stall limit (backpressure).
    Writing = 4,
    /// Answered, rings held for the next request.
    Warm = 5,
}

impl Phase {
    fn from_bits(bits: u64) -> Phase {
        match bits & PHASE_MASK {
            0 => Phase::Head,
            1 => Phase::Idle,
            2 => Phase::Body,
            3 => Phase::Handler,
            4 => Phase::Writing,
            _ => Phase::Warm,
        }
    }
}

// The state word: phase (bits 0..4), expired flag (bit 4), a per-connection
// sequence number (bits 8..24) that tells two phases with the same start
// apart, and the phase's start in clock milliseconds (bits 24..64: 34 years).
const PHASE_MASK: u64 = 0xf;
const EXPIRED: u64 = 1 << 4;
const SEQ_SHIFT: u32 = 8;
const START_SHIFT: u32 = 24;

fn pack(phase: Phase, seq: u16, start_ms: u64) -> u64 {
    (start_ms << START_SHIFT) | (u64::from(seq) << SEQ_SHIFT) | phase as u64
}

/// One connection's shared state: written by the connection, read (and
/// marked expired) by the sweeper.
#[derive(Debug)]
struct Watch {
    state: AtomicU64,
    /// Body bytes received in the current `Body` phase.
    progress: AtomicU64,
    cancel: Notify,
    /// `notify_waiters` calls on `cancel` begun and ended (odd while one is
    /// under way), so that a waiter can tell that none came since it
    /// registered without polling its `Notified`, which takes the lock.
    notices: AtomicU64,
    /// The connection task's own wait ([`Timer::expired`], [`Timer::over`]):
    /// a waiter per request, so a lock-free slot rather than a `Notified`
    /// (whose registration and removal each take the `Notify`'s lock). The
    /// connection awaits one of them at a time.
    own: AtomicWaker,
    /// The connection's task, aborted when the shutdown grace runs out.
    task: OnceLock<AbortHandle>,
    /// Here rather than in the [`Timer`]: one pointer less in every
    /// connection's task (the watch's allocation has room for it).
    shared: Arc<Shared>,
}

impl Watch {
    /// Whether shutdown has begun.
    fn is_stopped(&self) -> bool {
        self.shared.stopped.load(Ordering::SeqCst)
    }

    /// Resolves with what `check` finds once it finds something, looking
    /// again at each notification from the sweeper. Cancel-safe, and for
    /// any number of waiters in any tasks ([`Shutdown::started`]).
    ///
    /// Polled at every wait of an upgraded connection (a WebSocket's close
    /// signal), so a poll that can know nothing was notified since the last
    /// one returns at once: same waker, no notification begun since it
    /// registered (one atomic load instead of the `Notify`'s lock).
    async fn until<T>(&self, check: impl Fn() -> Option<T>) -> T {
        loop {
            // Created before the check: the sweeper's `notify_waiters` after
            // it sets a flag wakes it even before its first poll. Wake-ups
            // meant for something else (another flag, a phase since left)
            // find nothing and wait again.
            let notified = self.cancel.notified();
            if let Some(found) = check() {
                return found;
            }
            let mut notified = pin!(notified);
            let mut registered: Option<(Waker, u64)> = None;
            poll_fn(|cx| {
                if let Some((waker, seen)) = &registered {
                    let quiet = self.notices.load(Ordering::SeqCst) == *seen;
                    if quiet && waker.will_wake(cx.waker()) {
                        return Poll::Pending;
                    }
                }
                let seen = self.notices.load(Ordering::SeqCst);
                let polled = notified.as_mut().poll(cx);
                // An odd count: a notification was under way; trust only
                // the `Notified` next time.
                registered = (seen % 2 == 0).then(|| (cx.waker().clone(), seen));
                polled
            })
            .await;
        }
    }

    /// Resolves with what `check` finds once it finds something, woken by
    /// [`notify`](Self::notify) through the connection's own slot: for the
    /// connection task's waits only, one at a time. Cancel-safe.
    async fn until_own<T>(&self, check: impl Fn() -> Option<T>) -> T {
        poll_fn(|cx| {
            if let Some(found) = check() {
                return Poll::Ready(found);
            }
            self.own.register(cx.waker());
            // Checked again: a notification between the first check and the
            // registration woke nobody.
            check().map_or(Poll::Pending, Poll::Ready)
        })
        .await
    }

    /// Wakes every waiter of [`until`](Self::until), of
    /// [`until_own`](Self::until_own) and of [`Timer::notified`], counting
    /// the notification around it.
    fn notify(&self) {
        self.notices.fetch_add(1, Ordering::SeqCst);
        self.own.wake();
        self.cancel.notify_waiters();
        self.notices.fetch_add(1, Ordering::SeqCst);
    }
}

/// State shared by the sweeper and every connection.
#[derive(Debug)]
struct Shared {
    epoch: Instant,
    /// Milliseconds since `epoch`, advanced by the sweeper.
    now_ms: AtomicU64,
    /// Connections accepted since the last sweep.
    inbox: Mutex<Vec<Arc<Watch>>>,
    /// Shutdown began: idle connections close, busy ones after their answer.
    stopped: AtomicBool,
    /// The shutdown grace is over: every connection ends at once.
    aborted: AtomicBool,
    /// The server is gone: the sweeper thread ends.
    ended: AtomicBool,
}

impl Shared {
    fn now(&self) -> u64 {
        self.now_ms.load(Ordering::Relaxed)
    }

    fn tick(&self) -> u64 {
        let now = u64::try_from(self.epoch.elapsed().as_millis()).unwrap_or(u64::MAX >> 24);
        self.now_ms.store(now, Ordering::Relaxed);
        now
    }
}

/// The server's sweeper thread; ends when dropped.
#[derive(Debug)]
pub(crate) struct Sweeper {
    shared: Arc<Shared>,
    /// Unparked to pass on a stop, an abort or the end before the next tick.
    thread: thread::Thread,
}

impl Sweeper {
    /// Starts the sweeper on a thread of its own.
    ///
    /// # Errors
    ///
    /// The thread could not be started.
    pub(crate) fn start(timeouts: Timeouts) -> io::Result<Sweeper> {
        let shared = Arc::new(Shared {
            epoch: Instant::now(),
            now_ms: AtomicU64::new(0),
            inbox: Mutex::new(Vec::new()),
            stopped: AtomicBool::new(false),
            aborted: AtomicBool::new(false),
            ended: AtomicBool::new(false),
        });
        let sweeping = Arc::clone(&shared);
        let limits = Limits::new(&timeouts);
        let thread = thread::Builder::new()
            .name("ringwire-sweep".into())
            .spawn(move || sweep(&sweeping, &limits))?
            .thread()
            .clone();
        Ok(Sweeper { shared, thread })
    }

    /// A timer for a connection accepted now, in the `Head` phase.
    pub(crate) fn register(&self) -> Timer {
        let watch = Arc::new(Watch {
            state: AtomicU64::new(pack(Phase::Head, 0, self.shared.now())),
            progress: AtomicU64::new(0),
            cancel: Notify::new(),
            notices: AtomicU64::new(0),
            own: AtomicWaker::new(),
            task: OnceLock::new(),
            shared: Arc::clone(&self.shared),
        });
        self.shared
            .inbox
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(Arc::clone(&watch));
        Timer {
            watch,
            phase: Phase::Head,
            seq: 0,
            answered: false,
        }
    }

    /// Shutdown: every connection's timer wakes (through the watch the
    /// sweeper already holds, so an idle connection waits on one
    /// notification, not two); idle connections close, busy ones after
    /// their answer.
    pub(crate) fn stop(&self) {
        self.shared.stopped.store(true, Ordering::SeqCst);
        self.thread.unpark();
    }

    /// The shutdown grace is over: every connection's task is aborted (at
    /// its next await) by the sweeper.
    pub(crate) fn abort(&self) {
        self.shared.stopped.store(true, Ordering::SeqCst);
        self.shared.aborted.store(true, Ordering::SeqCst);
        self.thread.unpark();
    }
}

impl Drop for Sweeper {
    fn drop(&mut self) {
        self.shared.ended.store(true, Ordering::SeqCst);
        self.thread.unpark();
        // Watches not yet swept point back at `shared`: break the cycle.
        self.shared
            .inbox
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clear();
    }
}

/// A connection's end of the watch.
#[derive(Debug)]
pub(crate) struct Timer {
    watch: Arc<Watch>,
    phase: Phase,
    /// Counts phases; its low 16 bits go into the shared word. A full word
    /// of its own, so updating it never reads back the phase byte's store
    /// (a narrower store, which stalled the wider load on store forwarding).
    seq: u32,
    /// A response went out on this connection.
    answered: bool,
}

impl Timer {
    /// The phase last entered.
    pub(crate) fn phase(&self) -> Phase {
        self.phase
    }

    /// Notes that a response went out; returns whether one had before.
    /// Only a connection that came back for another request is kept
    /// [`Warm`](Phase::Warm): one that asked once and went quiet (a burst
    /// of clients that then idle) gives its rings back at once.
    pub(crate) fn answered_again(&mut self) -> bool {
        std::mem::replace(&mut self.answered, true)
    }

    /// Enters `phase` now, clearing any expiry of the previous one (and,
    /// for `Body`, the progress mark).
    pub(crate) fn enter(&mut self, phase: Phase) {
        self.phase = phase;
        self.seq = self.seq.wrapping_add(1);
        if phase == Phase::Body {
            self.watch.progress.store(0, Ordering::Relaxed);
        }
        // Release: the sweeper that sees the new phase sees the reset too.
        let word = pack(phase, self.seq as u16, self.watch.shared.now());
        self.watch.state.store(word, Ordering::Release);
    }

    /// The "still active" mark: body bytes received so far in this body.
    #[inline]
    pub(crate) fn progress(&self, body_bytes: usize) {
        self.watch
            .progress
            .store(body_bytes as u64, Ordering::Relaxed);
    }

    /// Whether shutdown has begun.
    pub(crate) fn is_stopped(&self) -> bool {
        self.watch.is_stopped()
    }

    /// Resolves when the sweeper has found the current phase over its
    /// limit, with that phase. Cancel-safe.
    pub(crate) async fn expired(&self) -> Phase {
        self.watch
            .until_own(|| {
                let state = self.watch.state.load(Ordering::Acquire);
                (state & EXPIRED != 0).then(|| Phase::from_bits(state))
            })
            .await
    }

    /// Resolves when [`is_over`](Self::is_over) holds. Cancel-safe.
    pub(crate) async fn over(&self) {
        self.watch.until_own(|| self.is_over().then_some(())).await;
    }

    /// Whether the current phase expired or shutdown began: what ends an
    /// idle connection. Check after creating a [`notified`](Self::notified)
    /// future, which a later expiry or shutdown wakes.
    pub(crate) fn is_over(&self) -> bool {
        self.watch.state.load(Ordering::Acquire) & EXPIRED != 0 || self.is_stopped()
    }

    /// Wakes on an expiry, a shutdown or the end of the shutdown grace
    /// (and spuriously when an expiry came as the phase changed), even if
    /// it has not been polled yet.
    pub(crate) fn notified(&self) -> Notified<'_> {
        self.watch.cancel.notified()
    }

    /// The start of shutdown, for an upgraded protocol to say goodbye by.
    pub(crate) fn shutdown(&self) -> Shutdown {
        Shutdown {
            watch: Arc::clone(&self.watch),
        }
    }

    /// Where the connection's task is handed to the sweeper, which aborts
    /// it when the shutdown grace runs out.
    pub(crate) fn task_slot(&self) -> TaskSlot {
        TaskSlot(Arc::clone(&self.watch))
    }
}

impl Drop for Timer {
    /// The task's waker leaves the shared watch with the task's future, so
    /// the sweeper's reference does not keep a finished task's memory.
    fn drop(&mut self) {
        drop(self.watch.own.take());
    }
}

/// Takes a connection's task, to be aborted at the end of the shutdown
/// grace: by the sweeper, so a busy connection does not check for the
/// abort at each of its wake-ups (an upgraded one wakes per message).
#[derive(Debug)]
pub(crate) struct TaskSlot(Arc<Watch>);

impl TaskSlot {
    pub(crate) fn fill(self, task: AbortHandle) {
        let _ = self.0.task.set(task);
    }
}

/// The server's graceful shutdown, as an upgraded connection sees it: a
/// WebSocket closes with `1001 Going Away` when it starts, rather than
/// waiting for the grace to run out and be dropped.
#[derive(Debug, Clone)]
pub struct Shutdown {
    watch: Arc<Watch>,
}

impl Shutdown {
    /// Whether the server has begun shutting down.
    #[must_use]
    pub fn is_started(&self) -> bool {
        self.watch.is_stopped()
    }

    /// Resolves once the server begins shutting down.
    pub async fn started(&self) {
        self.watch.until(|| self.is_started().then_some(())).await;
    }
}

/// The limits in clock milliseconds.
#[derive(Debug, Clone, Copy)]
struct Limits {
    head: u64,
    idle: u64,
    warm: u64,
    rate: u64,
    window: u64,
    sweep: Duration,
    /// How far the clock phase starts are stamped with may lag, in ms: one sweep.
    lag: u64,
}

impl Limits {
    fn new(t: &Timeouts) -> Limits {
        let ms = |d: Duration| u64::try_from(d.as_millis()).unwrap_or(u64::MAX);
        Limits {
            head: ms(t.head),
            idle: ms(t.idle),
            warm: ms(t.warm),
            rate: t.body_min_rate,
            window: ms(t.body_window).max(1),
            sweep: t.sweep.max(Duration::from_millis(1)),
            lag: ms(t.sweep.max(Duration::from_millis(1))),
        }
    }
}

/// A connection as the sweeper tracks it.
#[derive(Debug)]
struct Entry {
    watch: Arc<Watch>,
    /// The body phase being measured (its state word), when the current
    /// window began, and the progress then.
    mark: Option<(u64, u64, u64)>,
}

impl Entry {
    fn overdue(&mut self, state: u64, now: u64, limits: &Limits) -> bool {
        let start = state >> START_SHIFT;
        let age = now.saturating_sub(start);
        // The start may have been stamped up to one sweep late in real time.
        let over = |limit: u64| age >= limit.saturating_add(limits.lag);
        match Phase::from_bits(state) {
            Phase::Head => over(limits.head),
            Phase::Idle => over(limits.idle),
            Phase::Warm => over(limits.warm),
            Phase::Body if limits.rate > 0 => {
                let progress = self.watch.progress.load(Ordering::Relaxed);
                let (since, at) = match self.mark {
                    Some((seen, since, at)) if seen == state => (since, at),
                    _ => (start, 0),
                };
                let span = now.saturating_sub(since);
                if span < limits.window {
                    self.mark = Some((state, since, at));
                    return false;
                }
                let got = u128::from(progress.saturating_sub(at)) * 1000;
                if got < u128::from(limits.rate) * u128::from(span) {
                    return true;
                }
                self.mark = Some((state, now, progress));
                false
            }
            Phase::Body | Phase::Handler | Phase::Writing => false,
        }
    }
}

fn sweep(shared: &Shared, limits: &Limits) {
    let mut live: Vec<Entry> = Vec::new();
    // What has been passed on to every connection: stop, abort.
    let mut told = (false, false);
    let mut next = Instant::now();
    loop {
        // Until the next tick, or until there is news to pass on.
        loop {
            if shared.ended.load(Ordering::SeqCst) {
                return;
            }
            let news = (
                shared.stopped.load(Ordering::SeqCst),
                shared.aborted.load(Ordering::SeqCst),
            ) != told;
            let left = next.saturating_duration_since(Instant::now());
            if news || left.is_zero() {
                break;
            }
            thread::park_timeout(left);
        }
        next = Instant::now() + limits.sweep;
        let now = shared.tick();
        {
            let mut inbox = shared.inbox.lock().unwrap_or_else(PoisonError::into_inner);
            live.extend(inbox.drain(..).map(|watch| Entry { watch, mark: None }));
        }
        let flags = (
            shared.stopped.load(Ordering::SeqCst),
            shared.aborted.load(Ordering::SeqCst),
        );
        let tell = flags != told;
        told = flags;
        live.retain_mut(|entry| {
            // Only the sweeper's reference left: the connection is gone.
            if Arc::strong_count(&entry.watch) == 1 {
                return false;
            }
            if tell {
                entry.watch.notify();
                if flags.1 {
                    if let Some(task) = entry.watch.task.get() {
                        task.abort();
                    }
                }
            }
            let state = entry.watch.state.load(Ordering::Acquire);
            if state & EXPIRED == 0
                && entry.overdue(state, now, limits)
                && entry
                    .watch
                    .state
                    .compare_exchange(state, state | EXPIRED, Ordering::AcqRel, Ordering::Relaxed)
                    .is_ok()
            {
                // Every waiter: a busy connection may wait on both its
                // expiry and a shutdown.
                entry.watch.notify();
            }
            true
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(phase: Phase, start: u64) -> (Entry, u64) {
        let state = pack(phase, 1, start);
        let watch = Arc::new(Watch {
            state: AtomicU64::new(state),
            progress: AtomicU64::new(0),
            cancel: Notify::new(),
            notices: AtomicU64::new(0),
            own: AtomicWaker::new(),
            task: OnceLock::new(),
            shared: Arc::new(Shared {
                epoch: Instant::now(),
                now_ms: AtomicU64::new(0),
                inbox: Mutex::new(Vec::new()),
                stopped: AtomicBool::new(false),
                aborted: AtomicBool::new(false),
                ended: AtomicBool::new(false),
            }),
        });
        (Entry { watch, mark: None }, state)
    }

    /// `until` skips polling its `Notified` while nothing was notified, and
    /// still wakes for a notification that comes after such skipped polls,
    /// or one that was under way when it registered.
    #[test]
    fn until_sees_every_notification_past_skipped_polls() {
        let (entry, _) = entry(Phase::Handler, 0);
        let watch = entry.watch;
        let flag = AtomicBool::new(false);
        let mut cx = std::task::Context::from_waker(Waker::noop());
        let mut until = pin!(watch.until(|| flag.load(Ordering::SeqCst).then_some(())));
        for _ in 0..10 {
            assert!(until.as_mut().poll(&mut cx).is_pending());
        }
        // A wake-up meant for something else: found nothing, waits again.
        watch.notify();
        assert!(until.as_mut().poll(&mut cx).is_pending());
        assert!(until.as_mut().poll(&mut cx).is_pending());
        flag.store(true, Ordering::SeqCst);
        watch.notify();
        assert!(until.as_mut().poll(&mut cx).is_ready());

        // Registered while a notification was under way (an odd count).
        flag.store(false, Ordering::SeqCst);
        let mut until = pin!(watch.until(|| flag.load(Ordering::SeqCst).then_some(())));
        watch.notices.fetch_add(1, Ordering::SeqCst);
        assert!(until.as_mut().poll(&mut cx).is_pending());
        flag.store(true, Ordering::SeqCst);
        watch.cancel.notify_waiters();
        assert!(until.as_mut().poll(&mut cx).is_ready());
    }

    /// The connection's own wait wakes its task on a notification that
    /// finds its condition, whether it came before or after the wait began.
    #[test]
    fn until_own_is_woken_by_a_notification() {
        struct Count(std::sync::atomic::AtomicUsize);
        impl std::task::Wake for Count {
            fn wake(self: Arc<Self>) {
                self.0.fetch_add(1, Ordering::SeqCst);
            }
        }
        let (entry, _) = entry(Phase::Head, 0);
        let watch = entry.watch;
        let count = Arc::new(Count(0.into()));
        let waker = Waker::from(Arc::clone(&count));
        let mut cx = std::task::Context::from_waker(&waker);
        let flag = AtomicBool::new(false);
        let mut until = pin!(watch.until_own(|| flag.load(Ordering::SeqCst).then_some(())));
        assert!(until.as_mut().poll(&mut cx).is_pending());
        assert!(until.as_mut().poll(&mut cx).is_pending());
        flag.store(true, Ordering::SeqCst);
        watch.notify();
        assert_eq!(count.0.load(Ordering::SeqCst), 1, "woken once");
        assert!(until.as_mut().poll(&mut cx).is_ready());
        // A condition already met: ready at once, nothing registered.
        let mut until = pin!(watch.until_own(|| flag.load(Ordering::SeqCst).then_some(())));
        assert!(until.as_mut().poll(&mut cx).is_ready());
        watch.notify();
        assert_eq!(count.0.load(Ordering::SeqCst), 1);
    }

    fn limits() -> Limits {
        Limits::new(&Timeouts {
            head: Duration::from_millis(1000),
            idle: Duration::from_millis(5000),
            warm: Duration::from_millis(200),
            body_min_rate: 1000,
            body_window: Duration::from_millis(1000),
            sweep: Duration::from_millis(100),
            send_stall: Duration::MAX,
            upgraded_keepalive: Duration::MAX,
        })
    }

    #[test]
    fn head_and_idle_are_absolute_from_the_phase_start() {
        let l = limits();
        // Each limit plus one sweep (100 ms) of the start stamp's lag: never early.
        let (mut head, s) = entry(Phase::Head, 500);
        assert!(!head.overdue(s, 1599, &l));
        assert!(head.overdue(s, 1600, &l));
        let (mut warm, s) = entry(Phase::Warm, 500);
        assert!(!warm.overdue(s, 799, &l));
        assert!(warm.overdue(s, 800, &l));
        let (mut idle, s) = entry(Phase::Idle, 500);
        assert!(!idle.overdue(s, 5599, &l));
        assert!(idle.overdue(s, 5600, &l));
        for phase in [Phase::Handler, Phase::Writing] {
            let (mut busy, s) = entry(phase, 0);
            assert!(!busy.overdue(s, u64::MAX >> 24, &l));
        }
    }

    #[test]
    fn body_rate_is_measured_per_window() {
        let l = limits();
        let (mut body, s) = entry(Phase::Body, 0);
        // Grace: nothing needed within the first window.
        assert!(!body.overdue(s, 900, &l));
        // 1000 B/s over the first second: enough.
        body.watch.progress.store(1000, Ordering::Relaxed);
        assert!(!body.overdue(s, 1000, &l));
        // A fast start buys nothing for the next window.
        body.watch.progress.store(1500, Ordering::Relaxed);
        assert!(!body.overdue(s, 1500, &l));
        assert!(body.overdue(s, 2000, &l));
        // A new body phase starts a new grace window.
        let next = pack(Phase::Body, 2, 2000);
        body.watch.progress.store(0, Ordering::Relaxed);
        assert!(!body.overdue(next, 2500, &l));
        assert!(body.overdue(next, 3000, &l));
    }

    #[test]
    fn the_state_word_round_trips() {
        let word = pack(Phase::Writing, u16::MAX, (1 << 40) - 1);
        assert_eq!(Phase::from_bits(word), Phase::Writing);
        assert_eq!(word >> START_SHIFT, (1 << 40) - 1);
        assert_eq!(Phase::from_bits(word | EXPIRED), Phase::Writing);
    }
}
