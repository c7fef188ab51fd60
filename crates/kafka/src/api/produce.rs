//! Produce (0): record batches to partition leaders.

use super::{ApiKey, Request, Response};
use crate::codec::{Reader, Writer};
use crate::{DecodeError, ErrorCode};

/// How many replicas must have a batch before the leader answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Acks {
    /// No answer at all: the request is fire-and-forget and is never queued for a response.
    None,
    /// The leader wrote it.
    Leader,
    /// Every in-sync replica has it (`acks = -1`, "all").
    All,
}

impl Acks {
    /// The wire value.
    #[must_use]
    pub fn code(self) -> i16 {
        match self {
            Acks::None => 0,
            Acks::Leader => 1,
            Acks::All => -1,
        }
    }
}

/// One partition's encoded record batches (see [`crate::record::BatchEncoder`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProducePartition<'a> {
    /// Partition number.
    pub index: i32,
    /// One or more encoded record batches v2.
    pub records: &'a [u8],
}

/// One topic's partitions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProduceTopic<'a> {
    /// Topic name.
    pub name: &'a str,
    /// Partitions.
    pub partitions: &'a [ProducePartition<'a>],
}

/// Produce request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProduceRequest<'a> {
    /// Transactional id, for transactional producers.
    pub transactional_id: Option<&'a str>,
    /// Acknowledgement level.
    pub acks: Acks,
    /// How long the leader may wait for replicas.
    pub timeout_ms: i32,
    /// Topics.
    pub topics: &'a [ProduceTopic<'a>],
}

impl Request for ProduceRequest<'_> {
    const API_KEY: ApiKey = ApiKey::Produce;

    fn encode(&self, w: &mut Writer<'_>, _version: i16) {
        w.nullable_string("transactional id", self.transactional_id);
        w.i16(self.acks.code());
        w.i32(self.timeout_ms);
        w.array("produce topics", self.topics, |w, topic| {
            w.string("topic name", topic.name);
            w.array("produce partitions", topic.partitions, |w, partition| {
                w.i32(partition.index);
                w.records("records", partition.records);
                w.tagged_fields();
            });
            w.tagged_fields();
        });
        w.tagged_fields();
    }

    fn expects_response(&self) -> bool {
        self.acks != Acks::None
    }
}

/// One partition's outcome.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProducePartitionResponse<'a> {
    /// Partition number.
    pub index: i32,
    /// Error.
    pub error_code: ErrorCode,
    /// Offset given to the first record.
    pub base_offset: i64,
    /// Append time when the topic uses LogAppendTime, else -1.
    pub log_append_time_ms: i64,
    /// The partition's log start offset (v5+).
    pub log_start_offset: i64,
    /// The records the broker refused, when it names them (v8+): a batch is refused whole.
    pub record_errors: Vec<RecordError<'a>>,
    /// Error detail (v8+).
    pub error_message: Option<&'a str>,
}

/// One record a broker refused, and why (v8+).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RecordError<'a> {
    /// The record's index in its batch.
    pub batch_index: i32,
    /// Why.
    pub message: Option<&'a str>,
}

/// One topic's outcomes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProduceTopicResponse<'a> {
    /// Topic name.
    pub name: &'a str,
    /// Partitions.
    pub partitions: Vec<ProducePartitionResponse<'a>>,
}

/// Produce response.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProduceResponse<'a> {
    /// Topics.
    pub topics: Vec<ProduceTopicResponse<'a>>,
    /// Quota throttle.
    pub throttle_time_ms: i32,
}

impl<'a> Response<'a> for ProduceResponse<'a> {
    const API_KEY: ApiKey = ApiKey::Produce;

    fn decode(r: &mut Reader<'a>, version: i16) -> Result<Self, DecodeError> {
        let topics = r.array("produce topics", |r| {
            let name = r.string("topic name")?;
            let partitions = r.array("produce partitions", |r| decode_partition(r, version))?;
            r.tagged_fields()?;
            Ok(ProduceTopicResponse { name, partitions })
        })?;
        let throttle_time_ms = r.i32()?;
        r.tagged_fields()?;
        Ok(ProduceResponse {
            topics,
            throttle_time_ms,
        })
    }
}

fn decode_partition<'a>(
    r: &mut Reader<'a>,
    version: i16,
) -> Result<ProducePartitionResponse<'a>, DecodeError> {
    let index = r.i32()?;
    let error_code = ErrorCode(r.i16()?);
    let base_offset = r.i64()?;
    let log_append_time_ms = r.i64()?;
    let log_start_offset = if version >= 5 { r.i64()? } else { -1 };
    let (mut record_errors, mut error_message) = (Vec::new(), None);
    if version >= 8 {
        record_errors = r.array("record errors", |r| {
            let batch_index = r.i32()?;
            let message = r.nullable_string("record error message")?;
            r.tagged_fields()?;
            Ok(RecordError {
                batch_index,
                message,
            })
        })?;
        error_message = r.nullable_string("error message")?;
    }
    r.tagged_fields()?;
    Ok(ProducePartitionResponse {
        index,
        error_code,
        base_offset,
        log_append_time_ms,
        log_start_offset,
        record_errors,
        error_message,
    })
}
