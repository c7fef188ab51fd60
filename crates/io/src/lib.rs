//! Transports: the seam between byte streams and rings.
//!
//! A receive transport `recv`s straight into its ring's free span and shows parsers the unread
//! span; a send transport lets encoders reserve ring space, write, commit, and sends the ring
//! (or gathers caller slices with `writev`). They run over anything `Read`/`Write` — sockets, TLS
//! streams, [`recv_fn`]/[`send_fn`] callbacks, the in-memory [`pipe`] pair and the [`Chunks`]
//! fixture — or, with the `tokio` feature, over tokio sockets by readiness and `try_read`. With
//! the `uring` feature (Linux), [`uring::Driver`] runs many sockets' receives and sends through
//! one io_uring instead, lending ring spans to the kernel.
//!
//! Protocol crates never see this crate: they parse `&[u8]` and encode into `&mut [u8]`.
//!
//! What a parser borrows from [`RecvTransport::data`] cannot be kept across the next `fill`
//! (which may grow the ring or, on a heap ring, move its bytes) or `consume`: the compiler
//! refuses it (E0502), so no parsed slice ever points at bytes that moved or were reused.
//!
//! ```compile_fail,E0502
//! # use ringwire_io::{Chunks, RecvTransport, TransportConfig};
//! let source = Chunks::new(vec![b"GET / ".to_vec(), b"HTTP/1.1".to_vec()]);
//! let mut rx = RecvTransport::new(TransportConfig::default(), source).unwrap();
//! rx.fill(1).unwrap();
//! let method = &rx.data()[..3];
//! rx.fill(1).unwrap(); // may move the bytes `method` points at...
//! assert_eq!(method, b"GET"); // ...so this use is refused
//! ```
//!
//! Used before the next `fill`, or copied out, it is fine:
//!
//! ```
//! # use ringwire_io::{Chunks, RecvTransport, TransportConfig};
//! # let source = Chunks::new(vec![b"GET / ".to_vec(), b"HTTP/1.1".to_vec()]);
//! # let mut rx = RecvTransport::new(TransportConfig::default(), source).unwrap();
//! rx.fill(1).unwrap();
//! let method = rx.data()[..3].to_vec();
//! rx.fill(1).unwrap();
//! assert_eq!(method, b"GET");
//! ```

mod chunks;
mod config;
mod duplex;
mod error;
mod net;
pub mod pipe;
mod recv;
mod send;
mod stream;
#[cfg(feature = "tokio")]
pub mod tokio;
#[cfg(all(feature = "uring", target_os = "linux"))]
pub mod uring;

pub use chunks::Chunks;
pub use config::{TransportConfig, BURST_CAPACITY};
pub use duplex::Duplex;
pub use error::TransportError;
#[cfg(target_os = "linux")]
pub use net::abstract_unix_path;
pub use net::{unix_socket_name, NetStream, PeerCredentials};
pub use recv::RecvTransport;
pub use ringwire_ring::{Ring, RingConfig, RingPool};
pub use send::SendTransport;
pub use stream::{recv_fn, send_fn, RecvFn, SendFn, ShutdownWrite};
