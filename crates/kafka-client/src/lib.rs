//! Kafka over ringwire's rings, on tokio: requests are encoded straight into a send ring and
//! responses read where they landed in a receive ring, so a Fetch's records reach the caller
//! as slices of that ring.
//!
//! - [`Producer`]: batches per partition (linger, batch size), a task per leader broker with
//!   several Produce requests in flight, retries across leader moves and broker restarts.
//! - [`Consumer`]: assigned partitions, one Fetch in flight per leader, the next one sent
//!   before the records of the last are handed out; partitions assigned by the caller or
//!   shared by a consumer group's members; offsets committed to and read from the group's
//!   coordinator.
//! - [`Admin`]: consumer groups listed, described and deleted.
//! - [`Connection`]: one broker, any request, as many in flight as the caller likes;
//!   [`blocking::Connection`] runs it without a runtime.
//!
//! The protocol itself, without I/O, is `ringwire-kafka`.

pub mod admin;
pub mod blocking;
mod cluster;
mod connection;
pub mod consumer;
mod coordinator;
mod error;
mod group;
mod heartbeat;
mod modern_group;
mod partitioner;
pub mod producer;
mod sasl;
mod scram;

#[cfg(fuzzing)]
#[doc(hidden)]
pub mod fuzzing;

pub use admin::Admin;
pub use connection::{ClientConfig, Connection, Isolation, DEFAULT_RX_RING, DEFAULT_RX_RING_MAX};
pub use consumer::{Consumer, ConsumerConfig, GroupMetadata, GroupProtocol, Reset, Start};
pub use error::ClientError;
pub use producer::{
    Deliveries, Delivery, ProduceError, Producer, ProducerConfig, ProducerRecord, ProducerStats,
    RecordMetadata,
};
pub use sasl::{Sasl, TokenSource};
