//! Fetch (1): record batches from partition leaders, handed out as slices of the frame.

use super::{ApiKey, Request, Response};
use crate::codec::{Reader, Writer};
use crate::record::Batches;
use crate::{DecodeError, ErrorCode};

/// One partition to read from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FetchPartition {
    /// Partition number.
    pub partition: i32,
    /// First offset wanted.
    pub fetch_offset: i64,
    /// Bound on this partition's data (the first batch comes whole even past it).
    pub partition_max_bytes: i32,
}

/// One topic's partitions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FetchTopic<'a> {
    /// Topic name.
    pub name: &'a str,
    /// Partitions.
    pub partitions: &'a [FetchPartition],
}

/// Fetch request from a consumer, without fetch sessions (every request is a full one).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FetchRequest<'a> {
    /// Longest the broker may wait for `min_bytes`.
    pub max_wait_ms: i32,
    /// Bytes the broker waits for before answering.
    pub min_bytes: i32,
    /// Bound on the whole response (the first batch comes whole even past it).
    pub max_bytes: i32,
    /// 0: read uncommitted, 1: read committed.
    pub isolation_level: i8,
    /// Topics.
    pub topics: &'a [FetchTopic<'a>],
}

impl Request for FetchRequest<'_> {
    const API_KEY: ApiKey = ApiKey::Fetch;

    fn encode(&self, w: &mut Writer<'_>, version: i16) {
        w.i32(-1); // replica_id: a consumer
        w.i32(self.max_wait_ms);
        w.i32(self.min_bytes);
        w.i32(self.max_bytes);
        w.i8(self.isolation_level);
        if version >= 7 {
            w.i32(0); // session_id: none
            w.i32(-1); // session_epoch: a full request that opens no session
        }
        w.array("fetch topics", self.topics, |w, topic| {
            w.string("topic name", topic.name);
            w.array("fetch partitions", topic.partitions, |w, p| {
                w.i32(p.partition);
                if version >= 9 {
                    w.i32(-1); // current_leader_epoch: unknown
                }
                w.i64(p.fetch_offset);
                if version >= 12 {
                    w.i32(-1); // last_fetched_epoch
                }
                if version >= 5 {
                    w.i64(-1); // log_start_offset: only followers send it
                }
                w.i32(p.partition_max_bytes);
                w.tagged_fields();
            });
            w.tagged_fields();
        });
        if version >= 7 {
            w.array_len("forgotten topics", Some(0));
        }
        if version >= 11 {
            w.string("rack id", "");
        }
        w.tagged_fields();
    }
}

/// A transaction aborted within the returned range (read-committed consumers drop its records).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AbortedTransaction {
    /// Producer id.
    pub producer_id: i64,
    /// First offset of the aborted transaction.
    pub first_offset: i64,
}

/// One partition's data.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FetchPartitionResponse<'a> {
    /// Partition number.
    pub partition_index: i32,
    /// Error.
    pub error_code: ErrorCode,
    /// Offset after the last committed record.
    pub high_watermark: i64,
    /// Offset after the last stable record.
    pub last_stable_offset: i64,
    /// First offset in the log (v5+; -1 before).
    pub log_start_offset: i64,
    /// Aborted transactions in range.
    pub aborted_transactions: Vec<AbortedTransaction>,
    /// Replica to read from instead (v11+; -1: this one).
    pub preferred_read_replica: i32,
    /// The record batches, borrowed; may end in a partial batch.
    pub records: &'a [u8],
}

impl<'a> FetchPartitionResponse<'a> {
    /// The batches in `records`, a trailing partial batch dropped.
    #[must_use]
    pub fn batches(&self) -> Batches<'a> {
        Batches::new(self.records)
    }
}

/// One topic's partitions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FetchTopicResponse<'a> {
    /// Topic name.
    pub name: &'a str,
    /// Partitions.
    pub partitions: Vec<FetchPartitionResponse<'a>>,
}

/// Fetch response.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FetchResponse<'a> {
    /// Quota throttle.
    pub throttle_time_ms: i32,
    /// Top-level error (v7+).
    pub error_code: ErrorCode,
    /// Fetch session (v7+; 0 without one).
    pub session_id: i32,
    /// Topics.
    pub topics: Vec<FetchTopicResponse<'a>>,
}

impl<'a> Response<'a> for FetchResponse<'a> {
    const API_KEY: ApiKey = ApiKey::Fetch;

    fn decode(r: &mut Reader<'a>, version: i16) -> Result<Self, DecodeError> {
        let throttle_time_ms = r.i32()?;
        let (mut error_code, mut session_id) = (ErrorCode::NONE, 0);
        if version >= 7 {
            error_code = ErrorCode(r.i16()?);
            session_id = r.i32()?;
        }
        let topics = r.array("fetch topics", |r| {
            let name = r.string("topic name")?;
            let partitions = r.array("fetch partitions", |r| decode_partition(r, version))?;
            r.tagged_fields()?;
            Ok(FetchTopicResponse { name, partitions })
        })?;
        r.tagged_fields()?;
        Ok(FetchResponse {
            throttle_time_ms,
            error_code,
            session_id,
            topics,
        })
    }
}

fn decode_partition<'a>(
    r: &mut Reader<'a>,
    version: i16,
) -> Result<FetchPartitionResponse<'a>, DecodeError> {
    let partition_index = r.i32()?;
    let error_code = ErrorCode(r.i16()?);
    let high_watermark = r.i64()?;
    let last_stable_offset = r.i64()?;
    let log_start_offset = if version >= 5 { r.i64()? } else { -1 };
    let aborted_transactions = r.array("aborted transactions", |r| {
        let aborted = AbortedTransaction {
            producer_id: r.i64()?,
            first_offset: r.i64()?,
        };
        r.tagged_fields()?;
        Ok(aborted)
    })?;
    let preferred_read_replica = if version >= 11 { r.i32()? } else { -1 };
    let records = r.nullable_bytes("records")?.unwrap_or_default();
    r.tagged_fields()?;
    Ok(FetchPartitionResponse {
        partition_index,
        error_code,
        high_watermark,
        last_stable_offset,
        log_start_offset,
        aborted_transactions,
        preferred_read_replica,
        records,
    })
}
