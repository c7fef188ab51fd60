//! Consumer group membership, Kafka's classic protocol: a member joins (JoinGroup), the
//! leader it elects assigns every member's partitions with the range assignor (Java's and
//! librdkafka's default, so mixed groups agree), each member learns its share (SyncGroup),
//! heartbeats keep it in (`heartbeat.rs`), and a member that goes says so (LeaveGroup).

use std::collections::HashMap;
use std::time::Duration;

use ringwire_kafka::api::consumer_protocol::{decode_assignment, decode_subscription};
use ringwire_kafka::api::heartbeat::{HeartbeatRequest, HeartbeatResponse};
use ringwire_kafka::api::join_group::{JoinGroupRequest, JoinGroupResponse};
use ringwire_kafka::api::leave_group::{LeaveGroupRequest, LeaveGroupResponse};
use ringwire_kafka::api::sync_group::{SyncGroupRequest, SyncGroupResponse};
use ringwire_kafka::{ApiKey, ErrorCode};

use crate::{ClientError, Connection};

/// The one assignment protocol this client speaks.
pub(crate) const RANGE: &str = "range";

/// A member's answer to JoinGroup, owned: the frame it came in is gone by the time the leader
/// assigns.
#[derive(Debug)]
pub(crate) struct Joined {
    /// `NONE`, or `MEMBER_ID_REQUIRED` (join again with `member_id`).
    pub(crate) error_code: ErrorCode,
    pub(crate) generation: i32,
    pub(crate) member_id: String,
    pub(crate) leader: String,
    pub(crate) protocol: Option<String>,
    /// Every member and its subscribed topics (for the leader; empty for the others).
    pub(crate) members: Vec<(String, Vec<String>)>,
}

/// Topics, each with its partitions.
pub(crate) type Assignment = Vec<(String, Vec<i32>)>;

impl Connection {
    /// Joins as `request` says, waiting up to `limit` (the coordinator holds the answer until
    /// the group's members have joined). `MEMBER_ID_REQUIRED` comes back as an answer, every
    /// other error as one.
    pub(crate) async fn join_group(
        &mut self,
        request: &JoinGroupRequest<'_>,
        limit: Duration,
    ) -> Result<Joined, ClientError> {
        self.call_within(request, limit, |frame| {
            let r = frame.decode::<JoinGroupResponse<'_>>()?;
            if r.error_code != ErrorCode::MEMBER_ID_REQUIRED {
                ClientError::check(ApiKey::JoinGroup, r.error_code)?;
            }
            let members = r
                .members
                .iter()
                .map(|m| {
                    let topics = decode_subscription(m.metadata)?;
                    Ok((
                        m.member_id.to_owned(),
                        topics.into_iter().map(str::to_owned).collect(),
                    ))
                })
                .collect::<Result<_, ClientError>>()?;
            Ok(Joined {
                error_code: r.error_code,
                generation: r.generation_id,
                member_id: r.member_id.to_owned(),
                leader: r.leader.to_owned(),
                protocol: r.protocol_name.map(str::to_owned),
                members,
            })
        })
        .await
    }

    /// Sends the leader's assignments (or none), and returns this member's.
    pub(crate) async fn sync_group(
        &mut self,
        request: &SyncGroupRequest<'_>,
        limit: Duration,
    ) -> Result<Assignment, ClientError> {
        self.call_within(request, limit, |frame| {
            let r = frame.decode::<SyncGroupResponse<'_>>()?;
            ClientError::check(ApiKey::SyncGroup, r.error_code)?;
            Ok(decode_assignment(r.assignment)?
                .into_iter()
                .map(|(topic, partitions)| (topic.to_owned(), partitions))
                .collect())
        })
        .await
    }

    /// One heartbeat; `REBALANCE_IN_PROGRESS` and the other refusals are errors.
    pub(crate) async fn heartbeat(
        &mut self,
        request: &HeartbeatRequest<'_>,
    ) -> Result<(), ClientError> {
        self.call(request, |frame| {
            let r = frame.decode::<HeartbeatResponse>()?;
            ClientError::check(ApiKey::Heartbeat, r.error_code)
        })
        .await
    }

    /// Leaves the group.
    pub(crate) async fn leave_group(
        &mut self,
        request: &LeaveGroupRequest<'_>,
    ) -> Result<(), ClientError> {
        self.call(request, |frame| {
            let r = frame.decode::<LeaveGroupResponse<'_>>()?;
            ClientError::check(ApiKey::LeaveGroup, r.error_code)?;
            r.members
                .iter()
                .try_for_each(|m| ClientError::check(ApiKey::LeaveGroup, m.error_code))
        })
        .await
    }
}

/// The range assignor: for each topic, its members (sorted by id) take consecutive runs of
/// its partitions, the first `partitions % members` one more than the rest. Every member
/// gets an entry, an empty one if nothing falls to it.
pub(crate) fn range_assign(
    members: &[(String, Vec<String>)],
    partitions: &HashMap<String, usize>,
) -> Vec<(String, Assignment)> {
    let mut out: Vec<(String, Assignment)> = members
        .iter()
        .map(|(id, _)| (id.clone(), Vec::new()))
        .collect();
    out.sort_by(|a, b| a.0.cmp(&b.0));
    let mut topics: Vec<&String> = members.iter().flat_map(|(_, t)| t).collect();
    topics.sort();
    topics.dedup();
    for topic in topics {
        let count = partitions.get(topic).copied().unwrap_or(0);
        let takers: Vec<usize> = out
            .iter()
            .enumerate()
            .filter(|(_, (id, _))| {
                members
                    .iter()
                    .any(|(m, subscribed)| m == id && subscribed.contains(topic))
            })
            .map(|(i, _)| i)
            .collect();
        if takers.is_empty() {
            continue;
        }
        let (each, extra) = (count / takers.len(), count % takers.len());
        let mut next = 0;
        for (k, &i) in takers.iter().enumerate() {
            let n = each + usize::from(k < extra);
            let run: Vec<i32> = (next..next + n)
                .filter_map(|p| i32::try_from(p).ok())
                .collect();
            next += n;
            if !run.is_empty() {
                out[i].1.push((topic.clone(), run));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn member(id: &str, topics: &[&str]) -> (String, Vec<String>) {
        (id.into(), topics.iter().map(|t| (*t).into()).collect())
    }

    #[test]
    fn range_assignment_as_javas() {
        // Java's RangeAssignor example: two members, two topics of three partitions.
        let members = [member("c1", &["t1", "t0"]), member("c0", &["t0", "t1"])];
        let counts = HashMap::from([("t0".into(), 3), ("t1".into(), 3)]);
        let got = range_assign(&members, &counts);
        let want = vec![
            (
                "c0".to_owned(),
                vec![("t0".to_owned(), vec![0, 1]), ("t1".to_owned(), vec![0, 1])],
            ),
            (
                "c1".to_owned(),
                vec![("t0".to_owned(), vec![2]), ("t1".to_owned(), vec![2])],
            ),
        ];
        assert_eq!(got, want);
    }

    #[test]
    fn range_assignment_of_uneven_subscriptions() {
        // More members than partitions; a topic only one member wants; an unknown topic.
        let members = [
            member("a", &["x"]),
            member("b", &["x", "y"]),
            member("c", &["x", "gone"]),
        ];
        let counts = HashMap::from([("x".into(), 2), ("y".into(), 4)]);
        let got = range_assign(&members, &counts);
        assert_eq!(
            got,
            vec![
                ("a".to_owned(), vec![("x".to_owned(), vec![0])]),
                (
                    "b".to_owned(),
                    vec![
                        ("x".to_owned(), vec![1]),
                        ("y".to_owned(), vec![0, 1, 2, 3])
                    ]
                ),
                ("c".to_owned(), vec![]),
            ]
        );
    }
}
