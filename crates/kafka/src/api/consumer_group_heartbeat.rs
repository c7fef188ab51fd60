//! ConsumerGroupHeartbeat (68): the consumer group protocol of KIP-848 (Kafka 4.0's
//! default for new consumers), in which the coordinator assigns the partitions and moves
//! them one at a time. A member joins (epoch 0) and beats with this one request; each
//! answer may bring its epoch and the partitions it may use now, and the next beat tells
//! which it owns once it let go of the others. Epoch -1 leaves; -2 leaves a static member's
//! place open for its return.

use super::{ApiKey, Request, Response};
use crate::codec::{Reader, Writer};
use crate::{DecodeError, ErrorCode};

/// The epoch that joins the group.
pub const JOIN_EPOCH: i32 = 0;
/// The epoch that leaves it.
pub const LEAVE_EPOCH: i32 = -1;
/// The epoch a static member leaves with when it is coming back.
pub const STATIC_LEAVE_EPOCH: i32 = -2;

/// Partitions of one topic, named by its id.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TopicPartitions<'a> {
    /// The topic's id (Metadata v10+ names it).
    pub topic_id: [u8; 16],
    /// Partitions.
    pub partitions: &'a [i32],
}

/// ConsumerGroupHeartbeat request. The optional fields are `None` when they did not change
/// since the last beat the coordinator answered (all are sent when joining).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConsumerGroupHeartbeatRequest<'a> {
    /// The group.
    pub group_id: &'a str,
    /// The member's id, chosen by the member (v1 asks for one from the start) and kept for
    /// the process's life.
    pub member_id: &'a str,
    /// The epoch the coordinator last gave; [`JOIN_EPOCH`], [`LEAVE_EPOCH`] or
    /// [`STATIC_LEAVE_EPOCH`].
    pub member_epoch: i32,
    /// Static membership id.
    pub instance_id: Option<&'a str>,
    /// The member's rack.
    pub rack_id: Option<&'a str>,
    /// How long the coordinator waits for the member to give partitions up; -1 unchanged.
    pub rebalance_timeout_ms: i32,
    /// Topics subscribed to.
    pub subscribed_topic_names: Option<&'a [&'a str]>,
    /// A regular expression naming the topics subscribed to (v1+; RE2/J syntax).
    pub subscribed_topic_regex: Option<&'a str>,
    /// The coordinator's assignor to use (`uniform` or `range`); `None` for its default.
    pub server_assignor: Option<&'a str>,
    /// The partitions the member owns now.
    pub owned: Option<&'a [TopicPartitions<'a>]>,
}

impl<'a> ConsumerGroupHeartbeatRequest<'a> {
    /// A beat of `member_id` at `member_epoch` with nothing changed.
    #[must_use]
    pub fn beat(group_id: &'a str, member_id: &'a str, member_epoch: i32) -> Self {
        ConsumerGroupHeartbeatRequest {
            group_id,
            member_id,
            member_epoch,
            instance_id: None,
            rack_id: None,
            rebalance_timeout_ms: -1,
            subscribed_topic_names: None,
            subscribed_topic_regex: None,
            server_assignor: None,
            owned: None,
        }
    }
}

impl Request for ConsumerGroupHeartbeatRequest<'_> {
    const API_KEY: ApiKey = ApiKey::ConsumerGroupHeartbeat;

    fn encode(&self, w: &mut Writer<'_>, version: i16) {
        w.string("group id", self.group_id);
        w.string("member id", self.member_id);
        w.i32(self.member_epoch);
        w.nullable_string("instance id", self.instance_id);
        w.nullable_string("rack id", self.rack_id);
        w.i32(self.rebalance_timeout_ms);
        match self.subscribed_topic_names {
            Some(names) => w.array("subscribed topic names", names, |w, name| {
                w.string("topic name", name);
            }),
            None => w.array_len("subscribed topic names", None),
        }
        if version >= 1 {
            w.nullable_string("subscribed topic regex", self.subscribed_topic_regex);
        }
        w.nullable_string("server assignor", self.server_assignor);
        match self.owned {
            Some(owned) => w.array("owned topic partitions", owned, |w, topic| {
                w.uuid(&topic.topic_id);
                w.array("owned partitions", topic.partitions, |w, &p| w.i32(p));
                w.tagged_fields();
            }),
            None => w.array_len("owned topic partitions", None),
        }
        w.tagged_fields();
    }
}

/// Partitions of one topic assigned to the member.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AssignedPartitions {
    /// The topic's id.
    pub topic_id: [u8; 16],
    /// Partitions.
    pub partitions: Vec<i32>,
}

/// ConsumerGroupHeartbeat response.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConsumerGroupHeartbeatResponse<'a> {
    /// Quota throttle.
    pub throttle_time_ms: i32,
    /// Error.
    pub error_code: ErrorCode,
    /// What the error was about, if the coordinator said.
    pub error_message: Option<&'a str>,
    /// The member's id (the one it chose, from v1).
    pub member_id: Option<&'a str>,
    /// The member's epoch now.
    pub member_epoch: i32,
    /// How often the member beats.
    pub heartbeat_interval_ms: i32,
    /// The partitions the member may use now, replacing what it had; `None` when unchanged.
    pub assignment: Option<Vec<AssignedPartitions>>,
}

impl<'a> Response<'a> for ConsumerGroupHeartbeatResponse<'a> {
    const API_KEY: ApiKey = ApiKey::ConsumerGroupHeartbeat;

    fn decode(r: &mut Reader<'a>, _version: i16) -> Result<Self, DecodeError> {
        let throttle_time_ms = r.i32()?;
        let error_code = ErrorCode(r.i16()?);
        let error_message = r.nullable_string("error message")?;
        let member_id = r.nullable_string("member id")?;
        let member_epoch = r.i32()?;
        let heartbeat_interval_ms = r.i32()?;
        // A nullable structure: a byte says whether it is there.
        let assignment = match r.i8()? {
            -1 => None,
            _ => {
                let topics = r.array("assigned topic partitions", |r| {
                    let topic_id = r.uuid()?;
                    let partitions = r.array("assigned partitions", Reader::i32)?;
                    r.tagged_fields()?;
                    Ok(AssignedPartitions {
                        topic_id,
                        partitions,
                    })
                })?;
                r.tagged_fields()?;
                Some(topics)
            }
        };
        r.tagged_fields()?;
        Ok(ConsumerGroupHeartbeatResponse {
            throttle_time_ms,
            error_code,
            error_message,
            member_id,
            member_epoch,
            heartbeat_interval_ms,
            assignment,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TOPIC: [u8; 16] = [7; 16];

    #[test]
    fn a_join_is_written_as_kafka_reads_it() {
        let topics = ["t"];
        let owned = [TopicPartitions {
            topic_id: TOPIC,
            partitions: &[2],
        }];
        let request = ConsumerGroupHeartbeatRequest {
            rebalance_timeout_ms: 60_000,
            subscribed_topic_names: Some(&topics),
            owned: Some(&owned),
            ..ConsumerGroupHeartbeatRequest::beat("g", "m", JOIN_EPOCH)
        };
        let mut buf = [0u8; 128];
        let mut w = Writer::new(&mut buf, true);
        request.encode(&mut w, 1);
        let n = w.finish().unwrap();
        let mut want = vec![2, b'g', 2, b'm', 0, 0, 0, 0, 0, 0];
        want.extend_from_slice(&60_000i32.to_be_bytes());
        want.extend_from_slice(&[2, 2, b't', 0, 0]); // topics ["t"], regex null, assignor null
        want.push(2); // one owned topic
        want.extend_from_slice(&TOPIC);
        want.extend_from_slice(&[2, 0, 0, 0, 2, 0, 0]); // [2], its tags, the request's tags
        assert_eq!(&buf[..n], &want[..]);
        // v0 has no regex field.
        let mut w = Writer::new(&mut buf, true);
        request.encode(&mut w, 0);
        assert_eq!(w.finish().unwrap(), n - 1);
    }

    #[test]
    fn an_answer_with_and_without_an_assignment() {
        let mut bytes = vec![0, 0, 0, 0, 0, 0, 0, 2, b'm'];
        bytes.extend_from_slice(&5i32.to_be_bytes());
        bytes.extend_from_slice(&5_000i32.to_be_bytes());
        let unchanged = [&bytes[..], &[0xff, 0]].concat();
        let r =
            ConsumerGroupHeartbeatResponse::decode(&mut Reader::new(&unchanged, true), 1).unwrap();
        assert_eq!(
            (r.error_code, r.error_message, r.member_id),
            (ErrorCode::NONE, None, Some("m"))
        );
        assert_eq!((r.member_epoch, r.heartbeat_interval_ms), (5, 5_000));
        assert_eq!(r.assignment, None);

        let mut assigned = [&bytes[..], &[1, 2]].concat();
        assigned.extend_from_slice(&TOPIC);
        assigned.extend_from_slice(&[3, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0]);
        let r =
            ConsumerGroupHeartbeatResponse::decode(&mut Reader::new(&assigned, true), 1).unwrap();
        assert_eq!(
            r.assignment,
            Some(vec![AssignedPartitions {
                topic_id: TOPIC,
                partitions: vec![0, 1],
            }])
        );
        // Cut anywhere, it is an error, not a panic.
        for cut in 0..assigned.len() {
            let short = &assigned[..cut];
            assert!(
                ConsumerGroupHeartbeatResponse::decode(&mut Reader::new(short, true), 1).is_err()
            );
        }
    }
}
