//! DeleteTopics (20).

use super::{ApiKey, Request, Response};
use crate::codec::{Reader, Writer};
use crate::{DecodeError, ErrorCode};

/// DeleteTopics request: topics by name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DeleteTopicsRequest<'a> {
    /// Topics to delete.
    pub topic_names: &'a [&'a str],
    /// How long the controller may take.
    pub timeout_ms: i32,
}

impl Request for DeleteTopicsRequest<'_> {
    const API_KEY: ApiKey = ApiKey::DeleteTopics;

    fn encode(&self, w: &mut Writer<'_>, _version: i16) {
        w.array("topic names", self.topic_names, |w, name| {
            w.string("topic name", name);
        });
        w.i32(self.timeout_ms);
        w.tagged_fields();
    }
}

/// One topic's outcome.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DeletedTopic<'a> {
    /// Name.
    pub name: &'a str,
    /// Error (`UNKNOWN_TOPIC_OR_PARTITION`, ...).
    pub error_code: ErrorCode,
    /// Error detail (v5+).
    pub error_message: Option<&'a str>,
}

/// DeleteTopics response.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeleteTopicsResponse<'a> {
    /// Quota throttle.
    pub throttle_time_ms: i32,
    /// One entry per requested topic.
    pub topics: Vec<DeletedTopic<'a>>,
}

impl<'a> Response<'a> for DeleteTopicsResponse<'a> {
    const API_KEY: ApiKey = ApiKey::DeleteTopics;

    fn decode(r: &mut Reader<'a>, version: i16) -> Result<Self, DecodeError> {
        let throttle_time_ms = r.i32()?;
        let topics = r.array("deleted topics", |r| {
            let name = r.string("topic name")?;
            let error_code = ErrorCode(r.i16()?);
            let error_message = if version >= 5 {
                r.nullable_string("error message")?
            } else {
                None
            };
            r.tagged_fields()?;
            Ok(DeletedTopic {
                name,
                error_code,
                error_message,
            })
        })?;
        r.tagged_fields()?;
        Ok(DeleteTopicsResponse {
            throttle_time_ms,
            topics,
        })
    }
}
