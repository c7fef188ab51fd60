//! OffsetFetch (9): the offsets a consumer group committed.

use super::{ApiKey, Request, Response};
use crate::codec::{Reader, Writer};
use crate::{DecodeError, ErrorCode};

/// The committed offset of a partition with none.
pub const NO_OFFSET: i64 = -1;

/// One topic's partitions to look up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OffsetFetchTopic<'a> {
    /// Topic name.
    pub name: &'a str,
    /// Partitions.
    pub partition_indexes: &'a [i32],
}

/// OffsetFetch request for one group.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OffsetFetchRequest<'a> {
    /// The group.
    pub group_id: &'a str,
    /// Topics.
    pub topics: &'a [OffsetFetchTopic<'a>],
    /// Whether a partition with a transactional commit still pending answers
    /// `UNSTABLE_OFFSET_COMMIT` (retriable) rather than the last stable offset (v7+).
    pub require_stable: bool,
}

impl Request for OffsetFetchRequest<'_> {
    const API_KEY: ApiKey = ApiKey::OffsetFetch;

    fn encode(&self, w: &mut Writer<'_>, version: i16) {
        w.string("group id", self.group_id);
        w.array("offset fetch topics", self.topics, |w, topic| {
            w.string("topic name", topic.name);
            w.array("partition indexes", topic.partition_indexes, |w, p| {
                w.i32(*p)
            });
            w.tagged_fields();
        });
        if version >= 7 {
            w.bool(self.require_stable);
        }
        w.tagged_fields();
    }
}

/// One partition's committed offset.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OffsetFetchPartitionResponse<'a> {
    /// Partition number.
    pub partition_index: i32,
    /// The committed offset, or [`NO_OFFSET`].
    pub committed_offset: i64,
    /// Its leader epoch (v5+), -1 when unknown.
    pub committed_leader_epoch: i32,
    /// What the committer kept beside it.
    pub metadata: Option<&'a str>,
    /// Error.
    pub error_code: ErrorCode,
}

/// One topic's answers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OffsetFetchTopicResponse<'a> {
    /// Topic name.
    pub name: &'a str,
    /// Partitions.
    pub partitions: Vec<OffsetFetchPartitionResponse<'a>>,
}

/// OffsetFetch response.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OffsetFetchResponse<'a> {
    /// Quota throttle (v3+).
    pub throttle_time_ms: i32,
    /// Topics.
    pub topics: Vec<OffsetFetchTopicResponse<'a>>,
    /// The group's error (v2+; before, it is repeated in every partition).
    pub error_code: ErrorCode,
}

impl<'a> Response<'a> for OffsetFetchResponse<'a> {
    const API_KEY: ApiKey = ApiKey::OffsetFetch;

    fn decode(r: &mut Reader<'a>, version: i16) -> Result<Self, DecodeError> {
        let throttle_time_ms = if version >= 3 { r.i32()? } else { 0 };
        let topics = r.array("offset fetch topics", |r| {
            let name = r.string("topic name")?;
            let partitions = r.array("offset fetch partitions", |r| {
                let partition = OffsetFetchPartitionResponse {
                    partition_index: r.i32()?,
                    committed_offset: r.i64()?,
                    committed_leader_epoch: if version >= 5 { r.i32()? } else { -1 },
                    metadata: r.nullable_string("committed metadata")?,
                    error_code: ErrorCode(r.i16()?),
                };
                r.tagged_fields()?;
                Ok(partition)
            })?;
            r.tagged_fields()?;
            Ok(OffsetFetchTopicResponse { name, partitions })
        })?;
        let error_code = ErrorCode(if version >= 2 { r.i16()? } else { 0 });
        r.tagged_fields()?;
        Ok(OffsetFetchResponse {
            throttle_time_ms,
            topics,
            error_code,
        })
    }
}
