//! LeaveGroup (13): a member leaves its group at once, rather than at its session's end, so
//! the others take its partitions over without waiting.

use super::{ApiKey, Request, Response};
use crate::codec::{Reader, Writer};
use crate::{DecodeError, ErrorCode};

/// LeaveGroup request for one member.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LeaveGroupRequest<'a> {
    /// The group.
    pub group_id: &'a str,
    /// The member leaving.
    pub member_id: &'a str,
    /// Its static membership id (v3+).
    pub group_instance_id: Option<&'a str>,
    /// Why (v5+), for the broker's log.
    pub reason: Option<&'a str>,
}

impl Request for LeaveGroupRequest<'_> {
    const API_KEY: ApiKey = ApiKey::LeaveGroup;

    fn encode(&self, w: &mut Writer<'_>, version: i16) {
        w.string("group id", self.group_id);
        if version < 3 {
            w.string("member id", self.member_id);
        } else {
            // v3 batches members (KIP-345); this request names one.
            w.array("leaving members", &[*self], |w, leave| {
                w.string("member id", leave.member_id);
                w.nullable_string("group instance id", leave.group_instance_id);
                if version >= 5 {
                    w.nullable_string("leave reason", leave.reason);
                }
                w.tagged_fields();
            });
        }
        w.tagged_fields();
    }
}

/// One member's answer (v3+).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LeaveGroupMemberResponse<'a> {
    /// The member.
    pub member_id: &'a str,
    /// Its static membership id.
    pub group_instance_id: Option<&'a str>,
    /// Error.
    pub error_code: ErrorCode,
}

/// LeaveGroup response.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LeaveGroupResponse<'a> {
    /// Quota throttle (v1+).
    pub throttle_time_ms: i32,
    /// The group's error.
    pub error_code: ErrorCode,
    /// Each member's answer (v3+).
    pub members: Vec<LeaveGroupMemberResponse<'a>>,
}

impl<'a> Response<'a> for LeaveGroupResponse<'a> {
    const API_KEY: ApiKey = ApiKey::LeaveGroup;

    fn decode(r: &mut Reader<'a>, version: i16) -> Result<Self, DecodeError> {
        let throttle_time_ms = if version >= 1 { r.i32()? } else { 0 };
        let error_code = ErrorCode(r.i16()?);
        let members = if version >= 3 {
            r.array("leaving members", |r| {
                let member = LeaveGroupMemberResponse {
                    member_id: r.string("member id")?,
                    group_instance_id: r.nullable_string("group instance id")?,
                    error_code: ErrorCode(r.i16()?),
                };
                r.tagged_fields()?;
                Ok(member)
            })?
        } else {
            Vec::new()
        };
        r.tagged_fields()?;
        Ok(LeaveGroupResponse {
            throttle_time_ms,
            error_code,
            members,
        })
    }
}
