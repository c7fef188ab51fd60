//! DescribeGroups (15): a classic group's state, protocol and members, each with what it
//! subscribed to and what the leader assigned it. Sent to the group's coordinator. A group of
//! KIP-848's consumer protocol is described by
//! [`ConsumerGroupDescribe`](super::consumer_group_describe) instead.

use super::{ApiKey, Request, Response};
use crate::codec::{Reader, Writer};
use crate::{DecodeError, ErrorCode};

/// DescribeGroups request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DescribeGroupsRequest<'a> {
    /// The groups.
    pub groups: &'a [&'a str],
    /// Whether to ask for the operations the client may perform on each (v3+).
    pub include_authorized_operations: bool,
}

impl Request for DescribeGroupsRequest<'_> {
    const API_KEY: ApiKey = ApiKey::DescribeGroups;

    fn encode(&self, w: &mut Writer<'_>, version: i16) {
        w.array("groups", self.groups, |w, group| {
            w.string("group id", group)
        });
        if version >= 3 {
            w.bool(self.include_authorized_operations);
        }
        w.tagged_fields();
    }
}

/// One member of a described group.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DescribedMember<'a> {
    /// The id the coordinator gave it.
    pub member_id: &'a str,
    /// Its static membership id (v4+).
    pub group_instance_id: Option<&'a str>,
    /// The `client.id` of its last JoinGroup.
    pub client_id: &'a str,
    /// The address it joined from (`/127.0.0.1`).
    pub client_host: &'a str,
    /// What it sent for the chosen protocol (for consumers, its subscription; see
    /// [`consumer_protocol::decode_subscription`](super::consumer_protocol::decode_subscription));
    /// empty unless the group is `Stable`.
    pub member_metadata: &'a [u8],
    /// What the leader assigned it (for consumers,
    /// [`consumer_protocol::decode_assignment`](super::consumer_protocol::decode_assignment));
    /// empty unless the group is `Stable`.
    pub member_assignment: &'a [u8],
}

/// One described group.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DescribedGroup<'a> {
    /// Error (`GROUP_ID_NOT_FOUND` from v6 for a group that does not exist; before, such a
    /// group is `Dead` with no members).
    pub error_code: ErrorCode,
    /// What the error was about (v6+).
    pub error_message: Option<&'a str>,
    /// The group's id.
    pub group_id: &'a str,
    /// `Stable`, `PreparingRebalance`, `CompletingRebalance`, `Empty` or `Dead`.
    pub group_state: &'a str,
    /// `consumer` for consumer groups.
    pub protocol_type: &'a str,
    /// The protocol the members agreed on (for consumers, the assignor: `range`, ...).
    pub protocol_data: &'a str,
    /// The members.
    pub members: Vec<DescribedMember<'a>>,
    /// A bit per operation the client may perform (v3+, when asked), else `i32::MIN`.
    pub authorized_operations: i32,
}

/// DescribeGroups response.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DescribeGroupsResponse<'a> {
    /// Quota throttle (v1+).
    pub throttle_time_ms: i32,
    /// One entry per group asked about.
    pub groups: Vec<DescribedGroup<'a>>,
}

impl<'a> Response<'a> for DescribeGroupsResponse<'a> {
    const API_KEY: ApiKey = ApiKey::DescribeGroups;

    fn decode(r: &mut Reader<'a>, version: i16) -> Result<Self, DecodeError> {
        let throttle_time_ms = if version >= 1 { r.i32()? } else { 0 };
        let groups = r.array("described groups", |r| {
            let error_code = ErrorCode(r.i16()?);
            let error_message = if version >= 6 {
                r.nullable_string("error message")?
            } else {
                None
            };
            let group_id = r.string("group id")?;
            let group_state = r.string("group state")?;
            let protocol_type = r.string("protocol type")?;
            let protocol_data = r.string("protocol data")?;
            let members = r.array("group members", |r| {
                let member = DescribedMember {
                    member_id: r.string("member id")?,
                    group_instance_id: if version >= 4 {
                        r.nullable_string("group instance id")?
                    } else {
                        None
                    },
                    client_id: r.string("client id")?,
                    client_host: r.string("client host")?,
                    member_metadata: r.nullable_bytes("member metadata")?.unwrap_or_default(),
                    member_assignment: r.nullable_bytes("member assignment")?.unwrap_or_default(),
                };
                r.tagged_fields()?;
                Ok(member)
            })?;
            let authorized_operations = if version >= 3 { r.i32()? } else { i32::MIN };
            r.tagged_fields()?;
            Ok(DescribedGroup {
                error_code,
                error_message,
                group_id,
                group_state,
                protocol_type,
                protocol_data,
                members,
                authorized_operations,
            })
        })?;
        r.tagged_fields()?;
        Ok(DescribeGroupsResponse {
            throttle_time_ms,
            groups,
        })
    }
}
