//! JoinGroup (11): a member joins a consumer group (classic protocol) and learns its
//! generation, its member id, and, as the group's leader, every member's subscription.

use super::{ApiKey, Request, Response};
use crate::codec::{Reader, Writer};
use crate::{DecodeError, ErrorCode};

/// One assignment protocol the member supports: its name (`range`) and metadata (a
/// subscription, encoded by
/// [`encode_subscription`](super::consumer_protocol::encode_subscription)).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct JoinGroupProtocol<'a> {
    /// Protocol name.
    pub name: &'a str,
    /// Protocol metadata.
    pub metadata: &'a [u8],
}

/// JoinGroup request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct JoinGroupRequest<'a> {
    /// The group.
    pub group_id: &'a str,
    /// Without a heartbeat for this long, the coordinator drops the member.
    pub session_timeout_ms: i32,
    /// How long the coordinator waits for every member to rejoin in a rebalance.
    pub rebalance_timeout_ms: i32,
    /// Empty on a first join; the coordinator's id for this member after.
    pub member_id: &'a str,
    /// Static membership id (v5+).
    pub group_instance_id: Option<&'a str>,
    /// `consumer` for consumers.
    pub protocol_type: &'a str,
    /// The assignment protocols this member supports, preferred first.
    pub protocols: &'a [JoinGroupProtocol<'a>],
    /// Why it joins (v8+), for the broker's log.
    pub reason: Option<&'a str>,
}

impl Request for JoinGroupRequest<'_> {
    const API_KEY: ApiKey = ApiKey::JoinGroup;

    fn encode(&self, w: &mut Writer<'_>, version: i16) {
        w.string("group id", self.group_id);
        w.i32(self.session_timeout_ms);
        w.i32(self.rebalance_timeout_ms);
        w.string("member id", self.member_id);
        if version >= 5 {
            w.nullable_string("group instance id", self.group_instance_id);
        }
        w.string("protocol type", self.protocol_type);
        w.array("join group protocols", self.protocols, |w, p| {
            w.string("protocol name", p.name);
            w.nullable_bytes("protocol metadata", Some(p.metadata));
            w.tagged_fields();
        });
        if version >= 8 {
            w.nullable_string("join reason", self.reason);
        }
        w.tagged_fields();
    }
}

/// A member as the leader learns it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct JoinGroupMember<'a> {
    /// Its member id.
    pub member_id: &'a str,
    /// Its static membership id (v5+).
    pub group_instance_id: Option<&'a str>,
    /// Its metadata for the chosen protocol.
    pub metadata: &'a [u8],
}

/// JoinGroup response.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JoinGroupResponse<'a> {
    /// Quota throttle (v2+).
    pub throttle_time_ms: i32,
    /// Error; `MEMBER_ID_REQUIRED` (v4+) asks the member to join again with `member_id`.
    pub error_code: ErrorCode,
    /// The generation this join makes.
    pub generation_id: i32,
    /// The protocol type (v7+).
    pub protocol_type: Option<&'a str>,
    /// The protocol the coordinator chose.
    pub protocol_name: Option<&'a str>,
    /// The leader's member id.
    pub leader: &'a str,
    /// Whether the leader may skip computing an assignment (v9+; for brokers that assign).
    pub skip_assignment: bool,
    /// This member's id.
    pub member_id: &'a str,
    /// Every member, for the leader; empty for the others.
    pub members: Vec<JoinGroupMember<'a>>,
}

impl<'a> Response<'a> for JoinGroupResponse<'a> {
    const API_KEY: ApiKey = ApiKey::JoinGroup;

    fn decode(r: &mut Reader<'a>, version: i16) -> Result<Self, DecodeError> {
        let throttle_time_ms = if version >= 2 { r.i32()? } else { 0 };
        let error_code = ErrorCode(r.i16()?);
        let generation_id = r.i32()?;
        let protocol_type = if version >= 7 {
            r.nullable_string("protocol type")?
        } else {
            None
        };
        let protocol_name = r.nullable_string("protocol name")?;
        let leader = r.string("leader")?;
        let skip_assignment = version >= 9 && r.bool()?;
        let member_id = r.string("member id")?;
        let members = r.array("join group members", |r| {
            let member = JoinGroupMember {
                member_id: r.string("member id")?,
                group_instance_id: if version >= 5 {
                    r.nullable_string("group instance id")?
                } else {
                    None
                },
                metadata: r.nullable_bytes("member metadata")?.unwrap_or_default(),
            };
            r.tagged_fields()?;
            Ok(member)
        })?;
        r.tagged_fields()?;
        Ok(JoinGroupResponse {
            throttle_time_ms,
            error_code,
            generation_id,
            protocol_type,
            protocol_name,
            leader,
            skip_assignment,
            member_id,
            members,
        })
    }
}
