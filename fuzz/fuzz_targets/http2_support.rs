//! Shared by the `http2_*` connection targets: the generator of piece sizes and driver
//! choices, and the driver that feeds a `Connection` the peer's bytes in pieces and checks
//! what it consumes and what it keeps to send.

use ringwire_http2::frame::{FrameHeader, HEADER_LEN, PREFACE};
use ringwire_http2::{Connection, Event};

/// A xorshift generator for piece sizes and the driver's choices.
pub struct Rng(u32);

impl Rng {
    pub fn new(seed: u8) -> Rng {
        Rng(u32::from(seed).wrapping_mul(0x9e37_79b9) | 1)
    }

    pub fn next(&mut self) -> u32 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 17;
        self.0 ^= self.0 << 5;
        self.0
    }
}

/// How the bytes are fed.
pub struct Feed {
    /// The largest piece.
    pub max_piece: usize,
    /// The driver sometimes leaves the send buffer undrained.
    pub lazy: bool,
    /// The connection's `max_send_buffer`.
    pub max_send_buffer: usize,
    /// What the send buffer may hold at most (`max_send_buffer` plus what one frame and the
    /// driver's own sends can add).
    pub bound: usize,
    /// The bytes start with the client preface (a server reads it first).
    pub preface: bool,
}

/// Feeds `stream` to `conn` in pieces, as an application would: `decide` picks what to do
/// about each event (which borrows the connection) and `act` does it once the event is
/// gone. Checks that only the preface or whole frames are consumed, that no whole frame is
/// left unread unless the send buffer is full, that the buffer stays within the bound, and
/// that a failed connection stays failed.
pub fn drive<A>(
    conn: &mut Connection,
    stream: &[u8],
    feed: &Feed,
    rng: &mut Rng,
    mut decide: impl FnMut(Option<Event<'_>>, &mut Rng) -> A,
    mut act: impl FnMut(&mut Connection, A, &mut Rng),
) {
    let mut buf: Vec<u8> = Vec::new();
    let mut fed = 0;
    let mut preface_done = !feed.preface;
    loop {
        if fed < stream.len() {
            let n = (1 + rng.next() as usize % feed.max_piece).min(stream.len() - fed);
            buf.extend_from_slice(&stream[fed..fed + n]);
            fed += n;
        }
        // Read until the connection wants more bytes (or a drained buffer).
        loop {
            let whole = if preface_done {
                FrameHeader::parse(&buf).map(|h| HEADER_LEN + h.len as usize)
            } else {
                Some(PREFACE.len())
            };
            // Whether `recv` reads nothing for the bytes waiting to be sent: taken before
            // the driver drains them below.
            let blocked = conn.pending() > feed.max_send_buffer;
            let (n, action) = match conn.recv(&buf) {
                Err(_) => {
                    assert!(conn.pending() <= feed.bound);
                    assert!(conn.recv(&buf).is_err(), "a failed connection stays failed");
                    return;
                }
                Ok((n, event)) => {
                    if let Some(Event::Data { data, .. }) = &event {
                        assert!(data.len() <= n);
                    }
                    (n, decide(event, rng))
                }
            };
            assert!(n <= buf.len(), "consumed {n} of {} bytes", buf.len());
            if n > 0 {
                assert_eq!(Some(n), whole, "consumed something other than one frame");
                preface_done = true;
            }
            buf.drain(..n);
            act(conn, action, rng);
            assert!(
                conn.pending() <= feed.bound,
                "send buffer at {} bytes",
                conn.pending()
            );
            if !feed.lazy || rng.next() % 4 != 0 {
                conn.advance(conn.pending());
            }
            if n == 0 {
                assert!(
                    blocked || whole.is_none_or(|whole| whole > buf.len()),
                    "a whole frame left unread"
                );
                if blocked {
                    conn.advance(conn.pending());
                    continue;
                }
                break;
            }
        }
        if fed == stream.len() {
            return;
        }
    }
}
