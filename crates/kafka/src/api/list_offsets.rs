//! ListOffsets (2): the offset for a timestamp, or the earliest and latest offsets.

use super::{ApiKey, Request, Response};
use crate::codec::{Reader, Writer};
use crate::{DecodeError, ErrorCode};

/// Timestamp asking for the next offset to be written (the log end).
pub const LATEST: i64 = -1;
/// Timestamp asking for the first offset still in the log.
pub const EARLIEST: i64 = -2;

/// One partition to look up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ListOffsetsPartition {
    /// Partition number.
    pub partition_index: i32,
    /// A timestamp in ms, or [`LATEST`] / [`EARLIEST`].
    pub timestamp: i64,
}

/// One topic's partitions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ListOffsetsTopic<'a> {
    /// Topic name.
    pub name: &'a str,
    /// Partitions.
    pub partitions: &'a [ListOffsetsPartition],
}

/// ListOffsets request, as a consumer sends it (replica id -1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ListOffsetsRequest<'a> {
    /// 0: read uncommitted, 1: read committed (v2+).
    pub isolation_level: i8,
    /// Topics.
    pub topics: &'a [ListOffsetsTopic<'a>],
}

impl Request for ListOffsetsRequest<'_> {
    const API_KEY: ApiKey = ApiKey::ListOffsets;

    fn encode(&self, w: &mut Writer<'_>, version: i16) {
        w.i32(-1); // replica_id: a consumer
        if version >= 2 {
            w.i8(self.isolation_level);
        }
        w.array("list offsets topics", self.topics, |w, topic| {
            w.string("topic name", topic.name);
            w.array("list offsets partitions", topic.partitions, |w, p| {
                w.i32(p.partition_index);
                if version >= 4 {
                    w.i32(-1); // current_leader_epoch: unknown
                }
                w.i64(p.timestamp);
                w.tagged_fields();
            });
            w.tagged_fields();
        });
        w.tagged_fields();
    }
}

/// One partition's answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ListOffsetsPartitionResponse {
    /// Partition number.
    pub partition_index: i32,
    /// Error.
    pub error_code: ErrorCode,
    /// Timestamp of the found offset (-1 for EARLIEST/LATEST).
    pub timestamp: i64,
    /// The offset.
    pub offset: i64,
    /// Leader epoch (v4+; -1 before).
    pub leader_epoch: i32,
}

/// One topic's answers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListOffsetsTopicResponse<'a> {
    /// Topic name.
    pub name: &'a str,
    /// Partitions.
    pub partitions: Vec<ListOffsetsPartitionResponse>,
}

/// ListOffsets response.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListOffsetsResponse<'a> {
    /// Quota throttle (v2+).
    pub throttle_time_ms: i32,
    /// Topics.
    pub topics: Vec<ListOffsetsTopicResponse<'a>>,
}

impl<'a> Response<'a> for ListOffsetsResponse<'a> {
    const API_KEY: ApiKey = ApiKey::ListOffsets;

    fn decode(r: &mut Reader<'a>, version: i16) -> Result<Self, DecodeError> {
        let throttle_time_ms = if version >= 2 { r.i32()? } else { 0 };
        let topics = r.array("list offsets topics", |r| {
            let name = r.string("topic name")?;
            let partitions = r.array("list offsets partitions", |r| {
                let partition_index = r.i32()?;
                let error_code = ErrorCode(r.i16()?);
                let timestamp = r.i64()?;
                let offset = r.i64()?;
                let leader_epoch = if version >= 4 { r.i32()? } else { -1 };
                r.tagged_fields()?;
                Ok(ListOffsetsPartitionResponse {
                    partition_index,
                    error_code,
                    timestamp,
                    offset,
                    leader_epoch,
                })
            })?;
            r.tagged_fields()?;
            Ok(ListOffsetsTopicResponse { name, partitions })
        })?;
        r.tagged_fields()?;
        Ok(ListOffsetsResponse {
            throttle_time_ms,
            topics,
        })
    }
}
