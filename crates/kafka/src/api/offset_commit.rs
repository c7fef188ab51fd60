//! OffsetCommit (8): a consumer group's committed offsets, kept by its coordinator.

use super::{ApiKey, Request, Response};
use crate::codec::{Reader, Writer};
use crate::{DecodeError, ErrorCode};

/// One partition's offset to commit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OffsetCommitPartition<'a> {
    /// Partition number.
    pub partition_index: i32,
    /// The next offset to consume (one past the last record handled).
    pub committed_offset: i64,
    /// Leader epoch of the last record handled (v6+), -1 when unknown.
    pub committed_leader_epoch: i32,
    /// Anything the client wants kept beside the offset.
    pub committed_metadata: Option<&'a str>,
}

/// One topic's partitions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OffsetCommitTopic<'a> {
    /// Topic name.
    pub name: &'a str,
    /// Partitions.
    pub partitions: &'a [OffsetCommitPartition<'a>],
}

/// OffsetCommit request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OffsetCommitRequest<'a> {
    /// The group.
    pub group_id: &'a str,
    /// The group generation, -1 for a consumer outside group membership.
    pub generation_id: i32,
    /// The member id the coordinator gave, empty outside group membership.
    pub member_id: &'a str,
    /// Static membership id (v7+).
    pub group_instance_id: Option<&'a str>,
    /// Topics.
    pub topics: &'a [OffsetCommitTopic<'a>],
}

impl<'a> OffsetCommitRequest<'a> {
    /// A commit by a consumer that assigns its partitions itself (no group membership: the
    /// coordinator takes it while no member holds the group).
    #[must_use]
    pub fn standalone(group_id: &'a str, topics: &'a [OffsetCommitTopic<'a>]) -> Self {
        OffsetCommitRequest {
            group_id,
            generation_id: -1,
            member_id: "",
            group_instance_id: None,
            topics,
        }
    }
}

impl Request for OffsetCommitRequest<'_> {
    const API_KEY: ApiKey = ApiKey::OffsetCommit;

    fn encode(&self, w: &mut Writer<'_>, version: i16) {
        w.string("group id", self.group_id);
        w.i32(self.generation_id);
        w.string("member id", self.member_id);
        if version >= 7 {
            w.nullable_string("group instance id", self.group_instance_id);
        }
        if version <= 4 {
            w.i64(-1); // retention_time_ms: the broker's setting
        }
        encode_topics(w, self.topics, version >= 6);
        w.tagged_fields();
    }
}

/// `topics` and their offsets to commit, as OffsetCommit and TxnOffsetCommit write them
/// (with each partition's leader epoch if `leader_epoch`).
pub(super) fn encode_topics(
    w: &mut Writer<'_>,
    topics: &[OffsetCommitTopic<'_>],
    leader_epoch: bool,
) {
    w.array("offset commit topics", topics, |w, topic| {
        w.string("topic name", topic.name);
        w.array("offset commit partitions", topic.partitions, |w, p| {
            w.i32(p.partition_index);
            w.i64(p.committed_offset);
            if leader_epoch {
                w.i32(p.committed_leader_epoch);
            }
            w.nullable_string("committed metadata", p.committed_metadata);
            w.tagged_fields();
        });
        w.tagged_fields();
    });
}

/// One partition's answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OffsetCommitPartitionResponse {
    /// Partition number.
    pub partition_index: i32,
    /// Error.
    pub error_code: ErrorCode,
}

/// One topic's answers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OffsetCommitTopicResponse<'a> {
    /// Topic name.
    pub name: &'a str,
    /// Partitions.
    pub partitions: Vec<OffsetCommitPartitionResponse>,
}

/// OffsetCommit response.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OffsetCommitResponse<'a> {
    /// Quota throttle (v3+).
    pub throttle_time_ms: i32,
    /// Topics.
    pub topics: Vec<OffsetCommitTopicResponse<'a>>,
}

impl<'a> Response<'a> for OffsetCommitResponse<'a> {
    const API_KEY: ApiKey = ApiKey::OffsetCommit;

    fn decode(r: &mut Reader<'a>, version: i16) -> Result<Self, DecodeError> {
        let throttle_time_ms = if version >= 3 { r.i32()? } else { 0 };
        let topics = r.array("offset commit topics", |r| {
            let name = r.string("topic name")?;
            let partitions = r.array("offset commit partitions", |r| {
                let partition = OffsetCommitPartitionResponse {
                    partition_index: r.i32()?,
                    error_code: ErrorCode(r.i16()?),
                };
                r.tagged_fields()?;
                Ok(partition)
            })?;
            r.tagged_fields()?;
            Ok(OffsetCommitTopicResponse { name, partitions })
        })?;
        r.tagged_fields()?;
        Ok(OffsetCommitResponse {
            throttle_time_ms,
            topics,
        })
    }
}
