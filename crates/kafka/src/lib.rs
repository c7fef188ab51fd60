//! Sans-IO Kafka wire protocol, parsed zero-copy out of a receive ring.
//!
//! - [`Correlator`]: size-prefixed frames, request headers v1/v2 and response headers v0/v1,
//!   correlation ids matched in request order (ApiVersions always answers with header v0; a
//!   Produce with `acks = 0` is never answered, so never waited for).
//! - [`api`]: ApiVersions (with [`api::api_versions::Negotiated`]), Metadata, CreateTopics,
//!   Produce, Fetch, ListOffsets, InitProducerId, and the consumer group APIs
//!   (FindCoordinator, JoinGroup, SyncGroup, Heartbeat, LeaveGroup, OffsetCommit, OffsetFetch,
//!   and the consumer protocol's subscriptions and assignments; ConsumerGroupHeartbeat, KIP-848's
//!   protocol, in which the coordinator assigns): requests encode into a
//!   caller-owned span, responses are views borrowing the frame (strings, and Fetch's
//!   records, are slices of it).
//! - [`record`]: record batch v2 — a walker that hands out records as slices of the frame,
//!   drops a partial trailing batch, skips control batches and records before the fetch
//!   offset; gzip, snappy (raw and xerial), lz4 and zstd both ways; CRC-32C.
//!
//! No I/O here: `ringwire-kafka-client` drives this over sockets.
//!
//! Every length read from the wire is bounded by the frame holding it and by [`Limits`];
//! malformed input is a [`DecodeError`], never a panic.
//!
//! ```
//! use ringwire_kafka::api::metadata::MetadataRequest;
//! use ringwire_kafka::{Correlator, Limits};
//!
//! let mut correlator = Correlator::new(Some("doc"), &Limits::default());
//! let request = MetadataRequest::default();
//! let len = correlator.request_len(&request, 12).unwrap();
//! let mut out = vec![0; len]; // a send-ring reservation in a real driver
//! let sent = correlator.encode(&request, 12, &mut out).unwrap();
//! assert_eq!((sent.len, sent.correlation_id, correlator.in_flight()), (len, 0, 1));
//! ```

#![forbid(unsafe_code)]

pub mod api;
pub mod codec;
mod error;
mod error_code;
mod frame;
mod limits;
pub mod record;

pub use api::{ApiKey, Request, Response};
pub use error::{DecodeError, EncodeError};
pub use error_code::ErrorCode;
pub use frame::{Correlator, ResponseFrame, Sent};
pub use limits::{Limits, DEFAULT_MAX_DECOMPRESSED_LEN, DEFAULT_MAX_RESPONSE_LEN};
