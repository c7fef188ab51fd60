//! Sans-IO HTTP/2 (RFC 9113) with HPACK (RFC 7541), on the ring.
//!
//! - [`Connection`]: either side of a connection, [client](Connection::client) or
//!   [server](Connection::server): streams, flow control and settings as a state machine,
//!   bytes in and [`Event`]s out, messages in and bytes out.
//! - [`frame`]: frames parsed in place from the receive buffer and written into a send buffer.
//! - [`hpack`]: header compression, both directions.
//!
//! No I/O, no clock, no runtime: the caller moves bytes.

#![forbid(unsafe_code)]

mod conn;
mod error;
pub mod frame;
pub mod hpack;

pub use conn::{Config, Connection, Event, Fields, RequestHead, SendError, BY_REFERENCE};

pub use error::{Error, ErrorCode, Violation};
