//! Ring sizes for a transport's two directions, in one place.

use ringwire_ring::{Ring, RingConfig, RingError};

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
