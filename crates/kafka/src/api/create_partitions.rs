//! CreatePartitions (37): more partitions for existing topics (never fewer).

use super::{ApiKey, Request, Response};
use crate::codec::{Reader, Writer};
use crate::{DecodeError, ErrorCode};

/// One topic's new partition count.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NewPartitions<'a> {
    /// The topic.
    pub name: &'a str,
    /// The partition count it is to have in all.
    pub count: i32,
    /// The replicas (broker ids) of each new partition; `None`: the controller places them.
    pub assignments: Option<&'a [&'a [i32]]>,
}

/// CreatePartitions request, sent to any broker (which forwards it to the controller).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CreatePartitionsRequest<'a> {
    /// The topics.
    pub topics: &'a [NewPartitions<'a>],
    /// How long the controller may take.
    pub timeout_ms: i32,
    /// Check only, create nothing.
    pub validate_only: bool,
}

impl Request for CreatePartitionsRequest<'_> {
    const API_KEY: ApiKey = ApiKey::CreatePartitions;

    fn encode(&self, w: &mut Writer<'_>, _version: i16) {
        w.array("topics", self.topics, |w, topic| {
            w.string("topic name", topic.name);
            w.i32(topic.count);
            match topic.assignments {
                Some(assignments) => w.array("assignments", assignments, |w, brokers| {
                    w.array("broker ids", brokers, |w, id| w.i32(*id));
                    w.tagged_fields();
                }),
                None => w.array_len("assignments", None),
            }
            w.tagged_fields();
        });
        w.i32(self.timeout_ms);
        w.bool(self.validate_only);
        w.tagged_fields();
    }
}

/// One topic's outcome.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CreatePartitionsResult<'a> {
    /// The topic.
    pub name: &'a str,
    /// Error: `INVALID_PARTITIONS` (not more than it has), `UNKNOWN_TOPIC_OR_PARTITION`, ...
    pub error_code: ErrorCode,
    /// Error detail.
    pub error_message: Option<&'a str>,
}

/// CreatePartitions response.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CreatePartitionsResponse<'a> {
    /// Quota throttle.
    pub throttle_time_ms: i32,
    /// One entry per topic.
    pub results: Vec<CreatePartitionsResult<'a>>,
}

impl<'a> Response<'a> for CreatePartitionsResponse<'a> {
    const API_KEY: ApiKey = ApiKey::CreatePartitions;

    fn decode(r: &mut Reader<'a>, _version: i16) -> Result<Self, DecodeError> {
        let throttle_time_ms = r.i32()?;
        let results = r.array("partition results", |r| {
            let result = CreatePartitionsResult {
                name: r.string("topic name")?,
                error_code: ErrorCode(r.i16()?),
                error_message: r.nullable_string("error message")?,
            };
            r.tagged_fields()?;
            Ok(result)
        })?;
        r.tagged_fields()?;
        Ok(CreatePartitionsResponse {
            throttle_time_ms,
            results,
        })
    }
}
