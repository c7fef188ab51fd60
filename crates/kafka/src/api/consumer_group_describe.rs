//! ConsumerGroupDescribe (69): a group of KIP-848's consumer protocol, where the coordinator
//! assigns: each member's subscription, the partitions it owns and those it is moving to.
//! Sent to the group's coordinator; a classic group answers `GROUP_ID_NOT_FOUND` here and is
//! described by [`DescribeGroups`](super::describe_groups).

use super::{ApiKey, Request, Response};
use crate::codec::{Reader, Writer};
use crate::{DecodeError, ErrorCode};

/// ConsumerGroupDescribe request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConsumerGroupDescribeRequest<'a> {
    /// The groups.
    pub group_ids: &'a [&'a str],
    /// Whether to ask for the operations the client may perform on each.
    pub include_authorized_operations: bool,
}

impl Request for ConsumerGroupDescribeRequest<'_> {
    const API_KEY: ApiKey = ApiKey::ConsumerGroupDescribe;

    fn encode(&self, w: &mut Writer<'_>, _version: i16) {
        w.array("group ids", self.group_ids, |w, group| {
            w.string("group id", group);
        });
        w.bool(self.include_authorized_operations);
        w.tagged_fields();
    }
}

/// Partitions of one topic, by id and name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DescribedPartitions<'a> {
    /// The topic's id.
    pub topic_id: [u8; 16],
    /// The topic's name.
    pub topic_name: &'a str,
    /// Partitions.
    pub partitions: Vec<i32>,
}

/// One member of a consumer-protocol group.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConsumerGroupMember<'a> {
    /// The id the member chose.
    pub member_id: &'a str,
    /// Its static membership id.
    pub instance_id: Option<&'a str>,
    /// Its rack.
    pub rack_id: Option<&'a str>,
    /// Its epoch.
    pub member_epoch: i32,
    /// Its `client.id`.
    pub client_id: &'a str,
    /// The address it beats from.
    pub client_host: &'a str,
    /// The topics it subscribed to by name.
    pub subscribed_topic_names: Vec<&'a str>,
    /// The regular expression it subscribed with, if any.
    pub subscribed_topic_regex: Option<&'a str>,
    /// The partitions it owns now.
    pub assignment: Vec<DescribedPartitions<'a>>,
    /// The partitions the coordinator is moving it to.
    pub target_assignment: Vec<DescribedPartitions<'a>>,
    /// v1+: 0 a member of the classic protocol in this group (a Java consumer with
    /// `group.protocol=classic` that joined it), 1 one of the consumer protocol; -1 unknown.
    pub member_type: i8,
}

/// One described group.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConsumerGroupDescription<'a> {
    /// Error (`GROUP_ID_NOT_FOUND` for a group that does not exist or is not of this protocol).
    pub error_code: ErrorCode,
    /// What the error was about.
    pub error_message: Option<&'a str>,
    /// The group's id.
    pub group_id: &'a str,
    /// `Empty`, `Assigning`, `Reconciling`, `Stable` or `Dead`.
    pub group_state: &'a str,
    /// The group's epoch.
    pub group_epoch: i32,
    /// The epoch of the assignment the members move to.
    pub assignment_epoch: i32,
    /// The coordinator's assignor (`uniform`, `range`).
    pub assignor_name: &'a str,
    /// The members.
    pub members: Vec<ConsumerGroupMember<'a>>,
    /// A bit per operation the client may perform (when asked), else `i32::MIN`.
    pub authorized_operations: i32,
}

/// ConsumerGroupDescribe response.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConsumerGroupDescribeResponse<'a> {
    /// Quota throttle.
    pub throttle_time_ms: i32,
    /// One entry per group asked about.
    pub groups: Vec<ConsumerGroupDescription<'a>>,
}

impl<'a> Response<'a> for ConsumerGroupDescribeResponse<'a> {
    const API_KEY: ApiKey = ApiKey::ConsumerGroupDescribe;

    fn decode(r: &mut Reader<'a>, version: i16) -> Result<Self, DecodeError> {
        let throttle_time_ms = r.i32()?;
        let groups = r.array("described groups", |r| {
            let error_code = ErrorCode(r.i16()?);
            let error_message = r.nullable_string("error message")?;
            let group_id = r.string("group id")?;
            let group_state = r.string("group state")?;
            let group_epoch = r.i32()?;
            let assignment_epoch = r.i32()?;
            let assignor_name = r.string("assignor name")?;
            let members = r.array("group members", |r| member(r, version))?;
            let authorized_operations = r.i32()?;
            r.tagged_fields()?;
            Ok(ConsumerGroupDescription {
                error_code,
                error_message,
                group_id,
                group_state,
                group_epoch,
                assignment_epoch,
                assignor_name,
                members,
                authorized_operations,
            })
        })?;
        r.tagged_fields()?;
        Ok(ConsumerGroupDescribeResponse {
            throttle_time_ms,
            groups,
        })
    }
}

fn member<'a>(r: &mut Reader<'a>, version: i16) -> Result<ConsumerGroupMember<'a>, DecodeError> {
    let member = ConsumerGroupMember {
        member_id: r.string("member id")?,
        instance_id: r.nullable_string("instance id")?,
        rack_id: r.nullable_string("rack id")?,
        member_epoch: r.i32()?,
        client_id: r.string("client id")?,
        client_host: r.string("client host")?,
        subscribed_topic_names: r.array("subscribed topic names", |r| r.string("topic name"))?,
        subscribed_topic_regex: r.nullable_string("subscribed topic regex")?,
        assignment: assignment(r)?,
        target_assignment: assignment(r)?,
        member_type: if version >= 1 { r.i8()? } else { -1 },
    };
    r.tagged_fields()?;
    Ok(member)
}

/// An `Assignment` structure: its topics, then its tags.
fn assignment<'a>(r: &mut Reader<'a>) -> Result<Vec<DescribedPartitions<'a>>, DecodeError> {
    let topics = r.array("assigned topics", |r| {
        let topic = DescribedPartitions {
            topic_id: r.uuid()?,
            topic_name: r.string("topic name")?,
            partitions: r.array("assigned partitions", Reader::i32)?,
        };
        r.tagged_fields()?;
        Ok(topic)
    })?;
    r.tagged_fields()?;
    Ok(topics)
}
