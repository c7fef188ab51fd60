//! Sans-IO HTTP/2 (RFC 9113) with HPACK (RFC 7541), on the ring.
//!
//! - [`hpack`]: header compression, both directions.
//!
//! No I/O, no clock, no runtime: the caller moves bytes.

#![forbid(unsafe_code)]

pub mod hpack;
