//! Transports: the seam between byte streams and rings.
//!
//! A receive transport `recv`s straight into its ring's free span and shows parsers the unread
//! span; a send transport lets encoders reserve ring space, write, commit, and sends the ring
//! (or gathers caller slices with `writev`). They run over anything `Read`/`Write` — sockets, TLS
//! streams, [`recv_fn`]/[`send_fn`] callbacks, the in-memory [`pipe`] pair and the [`Chunks`]
//! fixture — or, with the `tokio` feature, over tokio sockets by readiness and `try_read`.
//!
//! Protocol crates never see this crate: they parse `&[u8]` and encode into `&mut [u8]`.

mod chunks;
mod config;
mod duplex;
mod error;
pub mod pipe;
mod recv;
mod send;
mod stream;
#[cfg(feature = "tokio")]
pub mod tokio;

pub use chunks::Chunks;
pub use config::{TransportConfig, BURST_CAPACITY};
pub use duplex::Duplex;
pub use error::TransportError;
pub use recv::RecvTransport;
pub use ringwire_ring::{Ring, RingConfig, RingPool};
pub use send::SendTransport;
pub use stream::{recv_fn, send_fn, RecvFn, SendFn, ShutdownWrite};
