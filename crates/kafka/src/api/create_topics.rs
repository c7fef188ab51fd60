//! CreateTopics (19).

use super::{ApiKey, Request, Response};
use crate::codec::{Reader, Writer};
use crate::{DecodeError, ErrorCode};

/// A topic to create, with broker-default replica assignment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NewTopic<'a> {
    /// Name.
    pub name: &'a str,
    /// Partition count (-1: broker default).
    pub num_partitions: i32,
    /// Replication factor (-1: broker default).
    pub replication_factor: i16,
    /// Topic configs (`cleanup.policy`, `max.message.bytes`, ...).
    pub configs: &'a [(&'a str, Option<&'a str>)],
}

/// CreateTopics request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CreateTopicsRequest<'a> {
    /// Topics.
    pub topics: &'a [NewTopic<'a>],
    /// How long the controller may take.
    pub timeout_ms: i32,
    /// Check only, create nothing.
    pub validate_only: bool,
}

impl Request for CreateTopicsRequest<'_> {
    const API_KEY: ApiKey = ApiKey::CreateTopics;

    fn encode(&self, w: &mut Writer<'_>, _version: i16) {
        w.array("topics", self.topics, |w, topic| {
            w.string("topic name", topic.name);
            w.i32(topic.num_partitions);
            w.i16(topic.replication_factor);
            w.array_len("assignments", Some(0));
            w.array("configs", topic.configs, |w, (name, value)| {
                w.string("config name", name);
                w.nullable_string("config value", *value);
                w.tagged_fields();
            });
            w.tagged_fields();
        });
        w.i32(self.timeout_ms);
        w.bool(self.validate_only);
        w.tagged_fields();
    }
}

/// One topic's outcome.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CreatedTopic<'a> {
    /// Name.
    pub name: &'a str,
    /// Topic id (v7+).
    pub topic_id: [u8; 16],
    /// Error (`TOPIC_ALREADY_EXISTS`, ...).
    pub error_code: ErrorCode,
    /// Error detail.
    pub error_message: Option<&'a str>,
    /// Partition count (v5+; -1 before).
    pub num_partitions: i32,
    /// Replication factor (v5+; -1 before).
    pub replication_factor: i16,
}

/// CreateTopics response.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CreateTopicsResponse<'a> {
    /// Quota throttle.
    pub throttle_time_ms: i32,
    /// One entry per requested topic.
    pub topics: Vec<CreatedTopic<'a>>,
}

impl<'a> Response<'a> for CreateTopicsResponse<'a> {
    const API_KEY: ApiKey = ApiKey::CreateTopics;

    fn decode(r: &mut Reader<'a>, version: i16) -> Result<Self, DecodeError> {
        let throttle_time_ms = r.i32()?;
        let topics = r.array("created topics", |r| {
            let name = r.string("topic name")?;
            let topic_id = if version >= 7 { r.uuid()? } else { [0; 16] };
            let error_code = ErrorCode(r.i16()?);
            let error_message = r.nullable_string("error message")?;
            let (mut num_partitions, mut replication_factor) = (-1, -1);
            if version >= 5 {
                num_partitions = r.i32()?;
                replication_factor = r.i16()?;
                r.nullable_array("topic configs", |r| {
                    r.string("config name")?;
                    r.nullable_string("config value")?;
                    r.bool()?; // read_only
                    r.i8()?; // config_source
                    r.bool()?; // is_sensitive
                    r.tagged_fields()
                })?;
            }
            r.tagged_fields()?;
            Ok(CreatedTopic {
                name,
                topic_id,
                error_code,
                error_message,
                num_partitions,
                replication_factor,
            })
        })?;
        r.tagged_fields()?;
        Ok(CreateTopicsResponse {
            throttle_time_ms,
            topics,
        })
    }
}
