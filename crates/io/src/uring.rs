//! An io_uring driver (Linux, feature `uring`): many sockets, one system call per batch.
//! Sockets come from its listener, from [`Driver::connect`], or from the caller.
//!
//! Each connection owns a receive and a send ring. [`Driver::recv`] lends the receive ring's
//! free span to the kernel and [`Driver::send`] its send ring's unread span; a lent ring is out of
//! the caller's reach ([`Driver::rings`] says `None` for it) until its completion has arrived,
//! so the kernel never writes memory a parser is reading, nor reads memory an encoder is
//! writing, and nothing grows or moves a ring under a transfer. Closing a connection cancels
//! what is in flight and keeps the socket and the rings until every completion is in, even the
//! cancelled ones: a span stays lent until the kernel says it is done with it.
//!
//! Plain `RECV` into the ring, not registered buffers (which would pin and fault in the whole
//! double mapping) nor provided-buffer rings: the gain over readiness is in submitting and
//! reaping the work of many sockets in one `io_uring_enter`, not in the copy itself.

use std::collections::VecDeque;
use std::marker::PhantomData;
use std::net::{SocketAddr, TcpListener};
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, FromRawFd, OwnedFd};
use std::time::Duration;
use std::{fmt, io};

use io_uring::{cqueue, opcode, squeue, types, IoUring};
use ringwire_ring::Ring;
use socket2::{Domain, SockAddr, Socket, Type};

use crate::config::grow_for_burst;
use crate::{TransportConfig, TransportError};

/// A connection of a [`Driver`]; stale once it is [`Event::Closed`] (the driver then answers
/// `None` or an error for it, even after its slot is reused).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Conn {
    slot: u32,
    generation: u32,
}

impl Conn {
    /// A small number for the connection, below the most connections the driver has had open
    /// at once, reused once the connection is [`Event::Closed`]: an index into the caller's own
    /// per-connection state (a `Vec`), where a map would hash each event.
    #[must_use]
    pub fn index(self) -> usize {
        self.slot as usize
    }
}

/// Which of a connection's operations failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    /// A receive into its ring.
    Recv,
    /// A send from its ring.
    Send,
    /// Its connect ([`Driver::connect`]).
    Connect,
}

/// What the kernel finished, as [`Driver::next_event`] hands it out.
#[derive(Debug)]
pub enum Event {
    /// A connection came in on the listener; it has rings and nothing in flight.
    Accepted(Conn),
    /// A connection [`Driver::connect`] began is made; it has nothing in flight.
    Connected(Conn),
    /// This many bytes landed in the receive ring, after what it held; 0 means the peer sent
    /// its last byte.
    Received(Conn, usize),
    /// Everything the send ring held went out (a short send is resubmitted by the driver).
    Sent(Conn),
    /// A transfer failed, the connection's other transfer untouched, or its connect failed.
    /// Close it, usually.
    Failed(Conn, Op, io::Error),
    /// Accepting failed; the driver goes on accepting, after a pause of 100 ms when the cause
    /// is the listener's or the process's (out of descriptors, say) rather than one peer's.
    AcceptFailed(TransportError),
    /// A connection is closed, its socket too; its rings come back (for a pool, say).
    Closed {
        /// The connection, stale from now on.
        conn: Conn,
        /// The receive ring.
        rx: Ring,
        /// The send ring.
        tx: Ring,
    },
}

/// A connection's two rings, as the caller may touch them: either is `None` while lent to
/// the kernel.
#[derive(Debug)]
pub struct Rings<'d> {
    /// The receive ring: parse [`Ring::readable`], then [`Ring::consume`].
    pub rx: Option<&'d mut Ring>,
    /// The send ring: encode into [`Ring::reserve`], [`Ring::commit`], then [`Driver::send`].
    pub tx: Option<&'d mut Ring>,
}

/// One connection's socket, rings and transfers in flight.
struct Slot {
    generation: u32,
    fd: Option<OwnedFd>,
    rx: Ring,
    tx: Ring,
    /// A receive into `rx`'s free span is in flight: `rx` is the kernel's.
    rx_lent: bool,
    /// A send from `tx`'s unread span is in flight: `tx` is the kernel's.
    tx_lent: bool,
    /// Closed by the caller: finishing its transfers, then freed.
    closing: bool,
    /// The address a connect in flight reads, kept (boxed: it must not move) until its
    /// completion.
    connecting: Option<Box<SockAddr>>,
}

impl Slot {
    fn in_flight(&self) -> bool {
        self.rx_lent || self.tx_lent || self.connecting.is_some()
    }

    /// The socket, as a submission names it.
    fn raw_fd(&self) -> types::Fd {
        types::Fd(
            self.fd
                .as_ref()
                .expect("an open slot has its socket")
                .as_raw_fd(),
        )
    }
}

/// What a completion is for, in the low bits of its user data; the slot is in the rest.
const ACCEPT: u64 = 0;
/// On a connection's slot, where no accept is: its connect.
const CONNECT: u64 = 0;
const RECV: u64 = 1;
const SEND: u64 = 2;
/// Cancellations complete too.
const CANCEL: u64 = 3;
/// On the listener's slot: the pause after an accept failed for want of descriptors or memory.
const PAUSE: u64 = 1;
/// `IORING_RECVSEND_POLL_FIRST`: wait for readiness before trying the receive.
const RECVSEND_POLL_FIRST: u16 = 1;
/// The listener's completions carry this as their slot.
const LISTENER: u64 = u32::MAX as u64;
/// How long accepting rests after it failed for want of descriptors or memory: retrying at
/// once would fail again at once, a busy loop for as long as the shortage lasts. (A `static`:
/// the kernel reads it when the queue is submitted, which may be after the driver moved.)
static ACCEPT_PAUSE: types::Timespec = types::Timespec::new().nsec(100_000_000);

fn user_data(slot: impl Into<u64>, op: u64) -> u64 {
    (slot.into() << 2) | op
}

/// Sockets driven by one io_uring: accept, receive into rings, send from rings, close.
///
/// A driver stays on the thread that made it (one per core, say): it is not `Send`.
///
/// ```compile_fail
/// fn elsewhere(_: impl Send) {}
/// let driver = ringwire_io::uring::Driver::new(8, ringwire_io::TransportConfig::default());
/// elsewhere(driver.unwrap());
/// ```
///
/// ```no_run
/// # use ringwire_io::uring::{Driver, Event};
/// # use ringwire_io::TransportConfig;
/// let mut driver = Driver::new(256, TransportConfig::new(4096, 1 << 20))?;
/// driver.listen(std::net::TcpListener::bind("127.0.0.1:7000")?)?;
/// loop {
///     driver.wait(None)?;
///     while let Some(event) = driver.next_event() {
///         match event {
///             Event::Accepted(conn) => driver.recv(conn, 1)?,
///             Event::Received(conn, 0) => driver.close(conn)?,
///             Event::Received(conn, _) => {
///                 // Echo: what came in goes back out.
///                 let rings = driver.rings(conn).expect("open");
///                 let (Some(rx), Some(tx)) = (rings.rx, rings.tx) else { continue };
///                 let data = rx.readable();
///                 tx.reserve(data.len())?[..data.len()].copy_from_slice(data);
///                 tx.commit(data.len());
///                 let n = data.len();
///                 rx.consume(n);
///                 driver.send(conn)?;
///                 driver.recv(conn, 1)?;
///             }
///             Event::Failed(conn, ..) => driver.close(conn)?,
///             Event::AcceptFailed(e) => eprintln!("accept: {e}"),
///             Event::Connected(_) | Event::Sent(_) | Event::Closed { .. } => {}
///         }
///     }
/// }
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct Driver {
    uring: IoUring,
    config: TransportConfig,
    slots: Vec<Slot>,
    /// Slots whose connection is closed, for the next one.
    free: Vec<u32>,
    listener: Option<TcpListener>,
    /// Operations in flight (rings lent, connects under way): with none and no listener, there is
    /// nothing to wait for.
    in_flight: usize,
    /// Events made by calls rather than completions (a close with nothing in flight).
    ready: VecDeque<Event>,
    /// Not `Send`: the io_uring takes submissions from the thread that made it only.
    _one_thread: PhantomData<*const ()>,
}

impl fmt::Debug for Driver {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Driver")
            .field("connections", &(self.slots.len() - self.free.len()))
            .field("listening", &self.listener.is_some())
            .finish_non_exhaustive()
    }
}

impl Driver {
    /// A driver whose submission queue holds `entries` operations (a power of two; the queue
    /// is flushed to the kernel early when full), giving each connection rings sized by
    /// `config`.
    ///
    /// # Errors
    ///
    /// The kernel refused the io_uring (too old, or disabled by `kernel.io_uring_disabled`).
    pub fn new(entries: u32, config: TransportConfig) -> io::Result<Self> {
        Ok(Self {
            uring: Self::uring(entries)?,
            config,
            slots: Vec::new(),
            free: Vec::new(),
            listener: None,
            in_flight: 0,
            ready: VecDeque::new(),
            _one_thread: PhantomData,
        })
    }

    /// One issuer, whose completions' work runs when it waits (not by interrupting it as they
    /// come: fewer wake-ups, completions reaped in batches); a kernel older than 6.1 gets a
    /// plain io_uring.
    fn uring(entries: u32) -> io::Result<IoUring> {
        let deferred = IoUring::builder()
            .setup_single_issuer()
            .setup_defer_taskrun()
            .build(entries);
        match deferred {
            Err(e) if e.raw_os_error() == Some(libc::EINVAL) => IoUring::new(entries),
            other => other,
        }
    }

    /// Accepts connections on `listener` from now on, each an [`Event::Accepted`].
    ///
    /// # Errors
    ///
    /// A listener is already set.
    pub fn listen(&mut self, listener: TcpListener) -> io::Result<()> {
        if self.listener.is_some() {
            return Err(io::Error::new(
                io::ErrorKind::AlreadyExists,
                "the driver already has a listener",
            ));
        }
        self.listener = Some(listener);
        self.accept()
    }

    /// Asks for connections on the listener until the kernel says it stopped.
    fn accept(&mut self) -> io::Result<()> {
        let Some(listener) = &self.listener else {
            return Ok(());
        };
        let accept = opcode::AcceptMulti::new(types::Fd(listener.as_raw_fd()))
            .flags(libc::SOCK_CLOEXEC)
            .build()
            .user_data(user_data(LISTENER, ACCEPT));
        // SAFETY: accepting writes no caller memory (no peer address is asked for), and the
        // listener is the driver's for as long as the io_uring is (it is dropped after it).
        unsafe { self.push(&accept) }
    }

    /// Accepts again after [`ACCEPT_PAUSE`].
    fn pause_accepting(&mut self) -> io::Result<()> {
        let pause = opcode::Timeout::new(&raw const ACCEPT_PAUSE)
            .build()
            .user_data(user_data(LISTENER, PAUSE));
        // SAFETY: the timeout reads only its `static` timespec.
        unsafe { self.push(&pause) }
    }

    /// Connects a new TCP socket to `addr`, with fresh rings: [`Event::Connected`] once it is
    /// made, or [`Event::Failed`] with [`Op::Connect`] (then close it). Until then the
    /// connection takes no transfer; [`close`](Self::close) cancels the connect.
    ///
    /// # Errors
    ///
    /// The socket or the rings could not be made.
    pub fn connect(&mut self, addr: SocketAddr) -> Result<Conn, TransportError> {
        let socket = Socket::new(Domain::for_address(addr), Type::STREAM.cloexec(), None)?;
        let conn = self.register(socket)?;
        let target = Box::new(SockAddr::from(addr));
        let connect = opcode::Connect::new(
            self.slots[conn.slot as usize].raw_fd(),
            target.as_ptr().cast(),
            target.len(),
        )
        .build()
        .user_data(user_data(conn.slot, CONNECT));
        // SAFETY: the address is boxed and kept in the slot until the completion (dropping it
        // is what the completion does), and the socket stays open until then.
        if let Err(e) = unsafe { self.push(&connect) } {
            // Nothing was queued: the slot goes back at once, with no `Closed` for a
            // connection the caller never had.
            drop(self.release(conn.slot));
            return Err(e.into());
        }
        self.slots[conn.slot as usize].connecting = Some(target);
        self.in_flight += 1;
        Ok(conn)
    }

    /// Adds a connected socket (one the caller connected or accepted), with fresh rings.
    ///
    /// # Errors
    ///
    /// The rings could not be made.
    pub fn register(&mut self, socket: impl Into<OwnedFd>) -> Result<Conn, TransportError> {
        let rx = self.config.rx_ring()?;
        let tx = self.config.tx_ring()?;
        Ok(self.register_with(socket, rx, tx))
    }

    /// Adds a connected socket with rings the caller owns (from a [`crate::RingPool`], say);
    /// [`Event::Closed`] gives them back.
    pub fn register_with(&mut self, socket: impl Into<OwnedFd>, rx: Ring, tx: Ring) -> Conn {
        let fd = Some(socket.into());
        let slot = match self.free.pop() {
            Some(i) => {
                let slot = &mut self.slots[i as usize];
                slot.fd = fd;
                slot.rx = rx;
                slot.tx = tx;
                slot.closing = false;
                i
            }
            None => {
                self.slots.push(Slot {
                    generation: 0,
                    fd,
                    rx,
                    tx,
                    rx_lent: false,
                    tx_lent: false,
                    closing: false,
                    connecting: None,
                });
                u32::try_from(self.slots.len() - 1).expect("fewer than 2^32 connections")
            }
        };
        Conn {
            slot,
            generation: self.slots[slot as usize].generation,
        }
    }

    /// The connection's rings, each unless lent; `None` if `conn` is closed or closing.
    pub fn rings(&mut self, conn: Conn) -> Option<Rings<'_>> {
        let slot = self.open(conn)?;
        Some(Rings {
            rx: (!slot.rx_lent).then_some(&mut slot.rx),
            tx: (!slot.tx_lent).then_some(&mut slot.tx),
        })
    }

    /// The connection's socket, for its options (`TCP_NODELAY`, say).
    pub fn socket(&self, conn: Conn) -> Option<BorrowedFd<'_>> {
        let slot = self.slots.get(conn.slot as usize)?;
        (slot.generation == conn.generation && !slot.closing)
            .then(|| slot.fd.as_ref().map(AsFd::as_fd))
            .flatten()
    }

    /// Lends the receive ring's free span to one `recv`, after making room for `at_least`
    /// unread bytes in all (and one more than it holds): a message larger than the ring grows
    /// it, up to its bound. [`Event::Received`] gives the ring back.
    ///
    /// # Errors
    ///
    /// `conn` is closed, a receive is already in flight, or the ring cannot grow as asked
    /// ([`TransportError::is_too_large`]).
    pub fn recv(&mut self, conn: Conn, at_least: usize) -> Result<(), TransportError> {
        let slot = self.open(conn).ok_or_else(stale)?;
        if slot.rx_lent {
            return Err(busy("a receive is already in flight").into());
        }
        if slot.connecting.is_some() {
            return Err(busy("the connection is still being made").into());
        }
        let ring = &mut slot.rx;
        ring.ensure_capacity(at_least.max(ring.len() + 1))?;
        let span = ring.writable();
        let (buf, len) = (span.as_mut_ptr(), clamp(span.len()));
        let fd = slot.raw_fd();
        let recv = opcode::Recv::new(fd, buf, len)
            .ioprio(RECVSEND_POLL_FIRST)
            .build()
            .user_data(user_data(conn.slot, RECV));
        // SAFETY: the span is the ring's free span, which nothing reads or writes while
        // `rx_lent` holds (set right below, before the caller runs again; `rings` hides the
        // ring, `recv` refuses, `close` keeps the ring until the completion); the ring does not
        // move or grow under it for the same reason, and its memory is not freed before the
        // completion (the slot keeps it). The socket stays open until then too.
        unsafe { self.push(&recv)? };
        // Lent once queued (a failed push queued nothing: nothing to wait for).
        self.slots[conn.slot as usize].rx_lent = true;
        self.in_flight += 1;
        Ok(())
    }

    /// Lends the send ring's unread span to the kernel until all of it has gone out (short
    /// sends are resubmitted), then [`Event::Sent`]. Nothing to send: nothing happens.
    ///
    /// # Errors
    ///
    /// `conn` is closed, or a send is already in flight.
    pub fn send(&mut self, conn: Conn) -> Result<(), TransportError> {
        let slot = self.open(conn).ok_or_else(stale)?;
        if slot.tx_lent {
            return Err(busy("a send is already in flight").into());
        }
        if slot.connecting.is_some() {
            return Err(busy("the connection is still being made").into());
        }
        if slot.tx.is_empty() {
            return Ok(());
        }
        Ok(self.submit_send(conn.slot)?)
    }

    /// Closes `conn`: cancels its transfers and, once the kernel has finished with them,
    /// closes the socket and hands back the rings ([`Event::Closed`]).
    ///
    /// # Errors
    ///
    /// `conn` is already closed.
    pub fn close(&mut self, conn: Conn) -> Result<(), TransportError> {
        self.open(conn).ok_or_else(stale)?;
        self.cancel(conn.slot)?;
        self.free_if_done(conn.slot);
        Ok(())
    }

    /// Marks slot `index` closing and asks the kernel to cancel its transfers and connect.
    fn cancel(&mut self, index: u32) -> io::Result<()> {
        let slot = &mut self.slots[index as usize];
        slot.closing = true;
        let lent = [
            (slot.rx_lent, RECV),
            (slot.tx_lent, SEND),
            (slot.connecting.is_some(), CONNECT),
        ];
        for (_, op) in lent.into_iter().filter(|(lent, _)| *lent) {
            let cancel = opcode::AsyncCancel::new(user_data(index, op))
                .build()
                .user_data(user_data(index, CANCEL));
            // SAFETY: a cancellation touches no caller memory.
            unsafe { self.push(&cancel)? };
        }
        Ok(())
    }

    /// Submits what was asked and waits for at least one completion, or `timeout`. With
    /// nothing in flight and no listener, nothing can complete: it returns at once rather
    /// than hang (after the timeout's sleep, if one is given).
    ///
    /// # Errors
    ///
    /// `io_uring_enter` failed (other than by a signal or the timeout).
    pub fn wait(&mut self, timeout: Option<Duration>) -> io::Result<()> {
        let idle = self.in_flight == 0 && self.listener.is_none();
        if !self.ready.is_empty()
            || !self.uring.completion().is_empty()
            || idle && timeout.is_none()
        {
            return self.uring.submit().map(drop);
        }
        let done = match timeout {
            None => self.uring.submit_and_wait(1),
            Some(timeout) => {
                let ts = types::Timespec::from(timeout);
                let args = types::SubmitArgs::new().timespec(&ts);
                self.uring.submitter().submit_with_args(1, &args)
            }
        };
        match done {
            Err(e) if matches!(e.raw_os_error(), Some(libc::ETIME | libc::EINTR)) => Ok(()),
            other => other.map(drop),
        }
    }

    /// The next thing the kernel finished, or `None` until the next [`wait`](Self::wait).
    pub fn next_event(&mut self) -> Option<Event> {
        loop {
            if let Some(event) = self.ready.pop_front() {
                return Some(event);
            }
            let cqe = self.uring.completion().next()?;
            if let Some(event) = self.complete(&cqe) {
                return Some(event);
            }
        }
    }

    /// Turns one completion into what the caller is told, if anything.
    fn complete(&mut self, cqe: &cqueue::Entry) -> Option<Event> {
        let (slot_index, op) = (cqe.user_data() >> 2, cqe.user_data() & 3);
        let result = cqe.result();
        if slot_index == LISTENER {
            if op == PAUSE {
                return self.accept().err().map(|e| Event::AcceptFailed(e.into()));
            }
            if !cqueue::more(cqe.flags()) {
                // The kernel ended the multishot accept (an error, or overflow): ask again, after
                // a pause if the error will not pass by itself.
                let again = if result < 0 && !is_per_connection(-result) {
                    self.pause_accepting()
                } else {
                    self.accept()
                };
                if let Err(e) = again {
                    return Some(Event::AcceptFailed(e.into()));
                }
            }
            return Some(self.accepted(result));
        }
        if op == CANCEL {
            return None;
        }
        let index = u32::try_from(slot_index).expect("slot indices are u32");
        let slot = &mut self.slots[index as usize];
        let conn = Conn {
            slot: index,
            generation: slot.generation,
        };
        let event = if op == CONNECT {
            slot.connecting = None;
            self.in_flight -= 1;
            match result {
                0 => Event::Connected(conn),
                _ => Event::Failed(conn, Op::Connect, io::Error::from_raw_os_error(-result)),
            }
        } else if op == RECV {
            slot.rx_lent = false;
            self.in_flight -= 1;
            match usize::try_from(result) {
                Ok(n) => {
                    slot.rx.commit(n);
                    if n > 0 && slot.rx.free() == 0 {
                        // Full, and more is likely waiting: the next receive takes the rest.
                        grow_for_burst(&mut slot.rx, 1);
                    }
                    Event::Received(conn, n)
                }
                Err(_) => Event::Failed(conn, Op::Recv, io::Error::from_raw_os_error(-result)),
            }
        } else {
            slot.tx_lent = false;
            self.in_flight -= 1;
            match usize::try_from(result) {
                Ok(n) => {
                    slot.tx.consume(n);
                    if slot.tx.is_empty() || slot.closing {
                        Event::Sent(conn)
                    } else {
                        return match self.submit_send(index) {
                            Ok(()) => None,
                            Err(e) => Some(Event::Failed(conn, Op::Send, e)),
                        };
                    }
                }
                Err(_) => Event::Failed(conn, Op::Send, io::Error::from_raw_os_error(-result)),
            }
        };
        if self.slots[index as usize].closing {
            self.free_if_done(index);
            return None;
        }
        Some(event)
    }

    /// A completion of the accept: the new connection, or why accepting failed.
    fn accepted(&mut self, result: i32) -> Event {
        if result < 0 {
            return Event::AcceptFailed(io::Error::from_raw_os_error(-result).into());
        }
        // SAFETY: a successful accept's result is a new descriptor that nothing else owns.
        let socket = unsafe { OwnedFd::from_raw_fd(result) };
        match self.register(socket) {
            Ok(conn) => Event::Accepted(conn),
            Err(e) => Event::AcceptFailed(e),
        }
    }

    /// Lends the unread span of slot `index`'s send ring to one `send`.
    fn submit_send(&mut self, index: u32) -> io::Result<()> {
        let slot = &mut self.slots[index as usize];
        let span = slot.tx.readable();
        let (buf, len) = (span.as_ptr(), clamp(span.len()));
        let fd = slot.raw_fd();
        let send = opcode::Send::new(fd, buf, len)
            .flags(libc::MSG_NOSIGNAL)
            .build()
            .user_data(user_data(index, SEND));
        // SAFETY: the span is the ring's unread span, which nothing writes, consumes, moves or
        // frees while `tx_lent` holds (set right below, before the caller runs again; as for
        // receives in `recv`); the socket stays open.
        unsafe { self.push(&send)? };
        self.slots[index as usize].tx_lent = true;
        self.in_flight += 1;
        Ok(())
    }

    /// Frees a closing slot once nothing is in flight: the socket closes, the rings go back.
    fn free_if_done(&mut self, index: u32) {
        let slot = &self.slots[index as usize];
        if !slot.closing || slot.in_flight() {
            return;
        }
        let (conn, rx, tx) = self.release(index);
        self.ready.push_back(Event::Closed { conn, rx, tx });
    }

    /// Frees slot `index` for the next connection (nothing of it in flight): its socket
    /// closed, the connection it held and its rings handed back.
    fn release(&mut self, index: u32) -> (Conn, Ring, Ring) {
        let slot = &mut self.slots[index as usize];
        let conn = Conn {
            slot: index,
            generation: slot.generation,
        };
        slot.fd = None;
        slot.generation = slot.generation.wrapping_add(1);
        slot.closing = false;
        let rx = std::mem::replace(&mut slot.rx, Ring::empty());
        let tx = std::mem::replace(&mut slot.tx, Ring::empty());
        self.free.push(index);
        (conn, rx, tx)
    }

    /// The slot of `conn` if it is open (not closed, not closing).
    fn open(&mut self, conn: Conn) -> Option<&mut Slot> {
        let slot = self.slots.get_mut(conn.slot as usize)?;
        (slot.generation == conn.generation && slot.fd.is_some() && !slot.closing).then_some(slot)
    }

    /// Queues `entry`, handing the queue to the kernel first when it is full.
    ///
    /// # Safety
    ///
    /// Whatever memory and descriptor `entry` names stay valid until its completion.
    unsafe fn push(&mut self, entry: &squeue::Entry) -> io::Result<()> {
        loop {
            // SAFETY: the caller's promise.
            if unsafe { self.uring.submission().push(entry) }.is_ok() {
                return Ok(());
            }
            self.uring.submit()?;
        }
    }
}

impl Drop for Driver {
    fn drop(&mut self) {
        // The kernel may still write into a lent span after the io_uring is closed (its
        // requests are cancelled asynchronously): cancel everything and wait for every
        // completion before the rings are freed.
        let mut waited = Ok(());
        for index in 0..self.slots.len() {
            if self.slots[index].in_flight() {
                waited = waited.and(self.cancel(u32::try_from(index).expect("u32 slots")));
            }
        }
        while waited.is_ok() && self.slots.iter().any(Slot::in_flight) {
            waited = match self.uring.submit_and_wait(1) {
                Err(e) if e.raw_os_error() != Some(libc::EINTR) => Err(e),
                _ => Ok(()),
            };
            // The events of a dying driver are no one's.
            while self.next_event().is_some() {}
        }
        if waited.is_err() {
            // Rather a leak than memory the kernel may still write into.
            std::mem::forget(std::mem::take(&mut self.slots));
        }
    }
}

/// Whether an accept's error is the one connection's (it went away before it was accepted)
/// rather than the listener's or the process's.
fn is_per_connection(errno: i32) -> bool {
    matches!(
        errno,
        libc::ECONNABORTED | libc::ECONNRESET | libc::EPROTO | libc::EINTR | libc::EAGAIN
    )
}

/// One transfer's length: the kernel takes a `u32`.
fn clamp(len: usize) -> u32 {
    u32::try_from(len).unwrap_or(u32::MAX)
}

fn stale() -> TransportError {
    io::Error::new(io::ErrorKind::NotConnected, "the connection is closed").into()
}

fn busy(what: &'static str) -> io::Error {
    io::Error::new(io::ErrorKind::ResourceBusy, what)
}
