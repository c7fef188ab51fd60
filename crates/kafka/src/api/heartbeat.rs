//! Heartbeat (12): a member tells its group's coordinator it is alive, and learns of a
//! rebalance (`REBALANCE_IN_PROGRESS`: join again).

use super::{ApiKey, Request, Response};
use crate::codec::{Reader, Writer};
use crate::{DecodeError, ErrorCode};

/// Heartbeat request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HeartbeatRequest<'a> {
    /// The group.
    pub group_id: &'a str,
    /// The member's generation.
    pub generation_id: i32,
    /// The member's id.
    pub member_id: &'a str,
    /// Static membership id (v3+).
    pub group_instance_id: Option<&'a str>,
}

impl Request for HeartbeatRequest<'_> {
    const API_KEY: ApiKey = ApiKey::Heartbeat;

    fn encode(&self, w: &mut Writer<'_>, version: i16) {
        w.string("group id", self.group_id);
        w.i32(self.generation_id);
        w.string("member id", self.member_id);
        if version >= 3 {
            w.nullable_string("group instance id", self.group_instance_id);
        }
        w.tagged_fields();
    }
}

/// Heartbeat response.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HeartbeatResponse {
    /// Quota throttle (v1+).
    pub throttle_time_ms: i32,
    /// Error.
    pub error_code: ErrorCode,
}

impl Response<'_> for HeartbeatResponse {
    const API_KEY: ApiKey = ApiKey::Heartbeat;

    fn decode(r: &mut Reader<'_>, version: i16) -> Result<Self, DecodeError> {
        let throttle_time_ms = if version >= 1 { r.i32()? } else { 0 };
        let error_code = ErrorCode(r.i16()?);
        r.tagged_fields()?;
        Ok(HeartbeatResponse {
            throttle_time_ms,
            error_code,
        })
    }
}
