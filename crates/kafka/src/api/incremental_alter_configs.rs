//! IncrementalAlterConfigs (44): sets, deletes, or adds to and takes from list values of,
//! single configuration entries, leaving the others as they are.

use super::describe_configs::ResourceType;
use super::{ApiKey, Request, Response};
use crate::codec::{Reader, Writer};
use crate::{DecodeError, ErrorCode};

/// What to do with an entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(i8)]
pub enum ConfigOperation {
    /// Give it this value.
    Set = 0,
    /// Remove it: the level below (the broker's default) applies again.
    Delete = 1,
    /// Add the value to a list entry.
    Append = 2,
    /// Take the value out of a list entry.
    Subtract = 3,
}

/// One entry's change.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AlterableConfig<'a> {
    /// The entry.
    pub name: &'a str,
    /// What to do.
    pub operation: ConfigOperation,
    /// The value (`None` to delete).
    pub value: Option<&'a str>,
}

/// One resource's changes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AlterConfigsResource<'a> {
    /// What it is.
    pub resource_type: ResourceType,
    /// Its name.
    pub resource_name: &'a str,
    /// The changes.
    pub configs: &'a [AlterableConfig<'a>],
}

/// IncrementalAlterConfigs request, sent to any broker for a topic.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IncrementalAlterConfigsRequest<'a> {
    /// The resources.
    pub resources: &'a [AlterConfigsResource<'a>],
    /// Check only, change nothing.
    pub validate_only: bool,
}

impl Request for IncrementalAlterConfigsRequest<'_> {
    const API_KEY: ApiKey = ApiKey::IncrementalAlterConfigs;

    fn encode(&self, w: &mut Writer<'_>, _version: i16) {
        w.array("resources", self.resources, |w, resource| {
            w.i8(resource.resource_type.0);
            w.string("resource name", resource.resource_name);
            w.array("configs", resource.configs, |w, config| {
                w.string("config name", config.name);
                w.i8(config.operation as i8);
                w.nullable_string("config value", config.value);
                w.tagged_fields();
            });
            w.tagged_fields();
        });
        w.bool(self.validate_only);
        w.tagged_fields();
    }
}

/// One resource's outcome.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AlterConfigsResult<'a> {
    /// Error: `INVALID_CONFIG` (an unknown entry, a bad value), `UNKNOWN_TOPIC_OR_PARTITION`, ...
    pub error_code: ErrorCode,
    /// Error detail.
    pub error_message: Option<&'a str>,
    /// What it is.
    pub resource_type: ResourceType,
    /// Its name.
    pub resource_name: &'a str,
}

/// IncrementalAlterConfigs response.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IncrementalAlterConfigsResponse<'a> {
    /// Quota throttle.
    pub throttle_time_ms: i32,
    /// One entry per resource.
    pub responses: Vec<AlterConfigsResult<'a>>,
}

impl<'a> Response<'a> for IncrementalAlterConfigsResponse<'a> {
    const API_KEY: ApiKey = ApiKey::IncrementalAlterConfigs;

    fn decode(r: &mut Reader<'a>, _version: i16) -> Result<Self, DecodeError> {
        let throttle_time_ms = r.i32()?;
        let responses = r.array("alter results", |r| {
            let result = AlterConfigsResult {
                error_code: ErrorCode(r.i16()?),
                error_message: r.nullable_string("error message")?,
                resource_type: ResourceType(r.i8()?),
                resource_name: r.string("resource name")?,
            };
            r.tagged_fields()?;
            Ok(result)
        })?;
        r.tagged_fields()?;
        Ok(IncrementalAlterConfigsResponse {
            throttle_time_ms,
            responses,
        })
    }
}
