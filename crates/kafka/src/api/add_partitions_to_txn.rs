//! AddPartitionsToTxn (24): a transactional producer names the partitions it is about to
//! write to, before its first batch to each in a transaction.

use super::offset_commit::OffsetCommitResponse;
use super::{ApiKey, Request, Response};
use crate::codec::{Reader, Writer};
use crate::DecodeError;

/// One topic's partitions to add.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AddPartitionsToTxnTopic<'a> {
    /// Topic name.
    pub name: &'a str,
    /// Partitions.
    pub partitions: &'a [i32],
}

/// AddPartitionsToTxn request, as a producer sends it (v0-v3: one transaction).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AddPartitionsToTxnRequest<'a> {
    /// The producer's transactional id.
    pub transactional_id: &'a str,
    /// Its producer id.
    pub producer_id: i64,
    /// Its epoch.
    pub producer_epoch: i16,
    /// The partitions.
    pub topics: &'a [AddPartitionsToTxnTopic<'a>],
}

impl Request for AddPartitionsToTxnRequest<'_> {
    const API_KEY: ApiKey = ApiKey::AddPartitionsToTxn;

    fn encode(&self, w: &mut Writer<'_>, _version: i16) {
        w.string("transactional id", self.transactional_id);
        w.i64(self.producer_id);
        w.i16(self.producer_epoch);
        w.array("transaction topics", self.topics, |w, topic| {
            w.string("topic name", topic.name);
            w.array("transaction partitions", topic.partitions, |w, &p| w.i32(p));
            w.tagged_fields();
        });
        w.tagged_fields();
    }
}

/// AddPartitionsToTxn response (v0-v3): OffsetCommit's layout (throttle, then each
/// partition's error).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AddPartitionsToTxnResponse<'a>(pub OffsetCommitResponse<'a>);

impl<'a> Response<'a> for AddPartitionsToTxnResponse<'a> {
    const API_KEY: ApiKey = ApiKey::AddPartitionsToTxn;

    fn decode(r: &mut Reader<'a>, version: i16) -> Result<Self, DecodeError> {
        // The throttle is there at every version (OffsetCommit's from v3 on).
        OffsetCommitResponse::decode(r, version.max(3)).map(AddPartitionsToTxnResponse)
    }
}
