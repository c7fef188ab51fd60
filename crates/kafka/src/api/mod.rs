//! The messages: one module per API, each a request encoder and a borrowed response view.

pub mod add_offsets_to_txn;
pub mod add_partitions_to_txn;
pub mod api_versions;
pub mod consumer_group_describe;
pub mod consumer_group_heartbeat;
pub mod consumer_protocol;
pub mod create_partitions;
pub mod create_topics;
pub mod delete_groups;
pub mod delete_topics;
pub mod describe_configs;
pub mod describe_groups;
pub mod end_txn;
pub mod fetch;
pub mod find_coordinator;
pub mod heartbeat;
pub mod incremental_alter_configs;
pub mod init_producer_id;
pub mod join_group;
mod key;
pub mod leave_group;
pub mod list_groups;
pub mod list_offsets;
pub mod metadata;
pub mod offset_commit;
pub mod offset_fetch;
pub mod produce;
pub mod sasl_authenticate;
pub mod sasl_handshake;
pub mod sync_group;
pub mod txn_offset_commit;

pub use key::ApiKey;

use crate::codec::{Reader, Writer};
use crate::DecodeError;

/// A request body: knows its API and writes itself for a version.
pub trait Request {
    /// The API this request belongs to.
    const API_KEY: ApiKey;

    /// Writes the body (everything after the request header) for `version`, which the caller
    /// has checked against [`ApiKey::versions`].
    fn encode(&self, w: &mut Writer<'_>, version: i16);

    /// False for a Produce with `acks = 0`: the broker sends nothing back, so nothing waits.
    fn expects_response(&self) -> bool {
        true
    }
}

/// A response body view borrowing the frame it was decoded from.
pub trait Response<'a>: Sized {
    /// The API this response belongs to.
    const API_KEY: ApiKey;

    /// Decodes the body (everything after the response header) for `version`.
    fn decode(r: &mut Reader<'a>, version: i16) -> Result<Self, DecodeError>;
}
