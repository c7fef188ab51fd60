//! Ring sizes for a transport's two directions, in one place.

use ringwire_ring::{Ring, RingConfig, RingError};

/// How far a transport grows its ring by itself for bursts. A read that fills the whole
/// free span means the peer sent more than the ring holds, and output that fills the send
/// ring means the application writes more at once than it holds: either way the ring doubles
/// (up to this size and never past its own bound) so that the next burst takes one system
/// call instead of one per ring-full, as hyper's adaptive read buffer does. Rings configured
/// larger than this never grow for bursts, only for a message that needs it.
pub const BURST_CAPACITY: usize = 256 << 10;

/// Grows `ring` to hold `more` bytes besides the ones it holds, if that stays within
/// [`BURST_CAPACITY`] and the ring's bound; whether it has room for them now. A failed growth
/// (no memory for the mapping) leaves the ring as it was, still working at its size.
pub(crate) fn grow_for_burst(ring: &mut Ring, more: usize) -> bool {
    let total = ring.len() + more;
    total <= BURST_CAPACITY.min(ring.max_capacity()) && ring.ensure_capacity(total).is_ok()
}

/// Sizes of the receive and send rings. Protocols pick their own defaults (HTTP/1 heads are
/// small, Kafka fetches are large); this generic one is 1 MiB each way, growing to 64 MiB.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct TransportConfig {
    /// Receive ring: bounds the largest message a parser can see whole.
    pub rx: RingConfig,
    /// Send ring: bounds what encoders can reserve at once.
    pub tx: RingConfig,
}

impl TransportConfig {
    /// Both rings start at `capacity` and may grow to `max_capacity`.
    pub fn new(capacity: usize, max_capacity: usize) -> Self {
        let ring = RingConfig::with_capacity(capacity).max_capacity(max_capacity);
        Self { rx: ring, tx: ring }
    }

    pub(crate) fn rx_ring(&self) -> Result<Ring, RingError> {
        Ring::new(self.rx)
    }

    pub(crate) fn tx_ring(&self) -> Result<Ring, RingError> {
        Ring::new(self.tx)
    }
}
