//! TxnOffsetCommit (28): a consumer group's offsets committed as part of a producer's
//! transaction (visible once, and only if, the transaction commits), sent to the group's
//! coordinator.

use super::offset_commit::{encode_topics, OffsetCommitResponse, OffsetCommitTopic};
use super::{ApiKey, Request, Response};
use crate::codec::{Reader, Writer};
use crate::DecodeError;

/// TxnOffsetCommit request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TxnOffsetCommitRequest<'a> {
    /// The producer's transactional id.
    pub transactional_id: &'a str,
    /// The consumer group.
    pub group_id: &'a str,
    /// The producer id.
    pub producer_id: i64,
    /// Its epoch.
    pub producer_epoch: i16,
    /// The group generation of the consumer whose offsets these are (v3+; -1 unknown).
    pub generation_id: i32,
    /// Its member id (v3+; empty unknown).
    pub member_id: &'a str,
    /// Its static membership id (v3+).
    pub group_instance_id: Option<&'a str>,
    /// The offsets, as OffsetCommit carries them.
    pub topics: &'a [OffsetCommitTopic<'a>],
}

impl Request for TxnOffsetCommitRequest<'_> {
    const API_KEY: ApiKey = ApiKey::TxnOffsetCommit;

    fn encode(&self, w: &mut Writer<'_>, version: i16) {
        w.string("transactional id", self.transactional_id);
        w.string("group id", self.group_id);
        w.i64(self.producer_id);
        w.i16(self.producer_epoch);
        if version >= 3 {
            w.i32(self.generation_id);
            w.string("member id", self.member_id);
            w.nullable_string("group instance id", self.group_instance_id);
        }
        encode_topics(w, self.topics, version >= 2);
        w.tagged_fields();
    }
}

/// TxnOffsetCommit response: OffsetCommit's layout (throttle, then each partition's error).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TxnOffsetCommitResponse<'a>(pub OffsetCommitResponse<'a>);

impl<'a> Response<'a> for TxnOffsetCommitResponse<'a> {
    const API_KEY: ApiKey = ApiKey::TxnOffsetCommit;

    fn decode(r: &mut Reader<'a>, version: i16) -> Result<Self, DecodeError> {
        // The throttle is there at every version (OffsetCommit's from v3 on).
        OffsetCommitResponse::decode(r, version.max(3)).map(TxnOffsetCommitResponse)
    }
}
