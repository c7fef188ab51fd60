//! SyncGroup (14): after a join, the leader hands the coordinator every member's assignment
//! and each member gets its own.

use super::{ApiKey, Request, Response};
use crate::codec::{Reader, Writer};
use crate::{DecodeError, ErrorCode};

/// One member's assignment (encoded by
/// [`encode_assignment`](super::consumer_protocol::encode_assignment)), sent by the leader.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SyncGroupAssignment<'a> {
    /// The member.
    pub member_id: &'a str,
    /// Its assignment.
    pub assignment: &'a [u8],
}

/// SyncGroup request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SyncGroupRequest<'a> {
    /// The group.
    pub group_id: &'a str,
    /// The generation JoinGroup gave.
    pub generation_id: i32,
    /// This member's id.
    pub member_id: &'a str,
    /// Static membership id (v3+).
    pub group_instance_id: Option<&'a str>,
    /// The protocol type (v5+).
    pub protocol_type: Option<&'a str>,
    /// The chosen protocol (v5+).
    pub protocol_name: Option<&'a str>,
    /// Every member's assignment from the leader; empty from the others.
    pub assignments: &'a [SyncGroupAssignment<'a>],
}

impl Request for SyncGroupRequest<'_> {
    const API_KEY: ApiKey = ApiKey::SyncGroup;

    fn encode(&self, w: &mut Writer<'_>, version: i16) {
        w.string("group id", self.group_id);
        w.i32(self.generation_id);
        w.string("member id", self.member_id);
        if version >= 3 {
            w.nullable_string("group instance id", self.group_instance_id);
        }
        if version >= 5 {
            w.nullable_string("protocol type", self.protocol_type);
            w.nullable_string("protocol name", self.protocol_name);
        }
        w.array("sync group assignments", self.assignments, |w, a| {
            w.string("member id", a.member_id);
            w.nullable_bytes("assignment", Some(a.assignment));
            w.tagged_fields();
        });
        w.tagged_fields();
    }
}

/// SyncGroup response.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SyncGroupResponse<'a> {
    /// Quota throttle (v1+).
    pub throttle_time_ms: i32,
    /// Error (`REBALANCE_IN_PROGRESS`: join again).
    pub error_code: ErrorCode,
    /// The protocol type (v5+).
    pub protocol_type: Option<&'a str>,
    /// The chosen protocol (v5+).
    pub protocol_name: Option<&'a str>,
    /// This member's assignment.
    pub assignment: &'a [u8],
}

impl<'a> Response<'a> for SyncGroupResponse<'a> {
    const API_KEY: ApiKey = ApiKey::SyncGroup;

    fn decode(r: &mut Reader<'a>, version: i16) -> Result<Self, DecodeError> {
        let throttle_time_ms = if version >= 1 { r.i32()? } else { 0 };
        let error_code = ErrorCode(r.i16()?);
        let (protocol_type, protocol_name) = if version >= 5 {
            (
                r.nullable_string("protocol type")?,
                r.nullable_string("protocol name")?,
            )
        } else {
            (None, None)
        };
        let assignment = r.nullable_bytes("assignment")?.unwrap_or_default();
        r.tagged_fields()?;
        Ok(SyncGroupResponse {
            throttle_time_ms,
            error_code,
            protocol_type,
            protocol_name,
            assignment,
        })
    }
}
