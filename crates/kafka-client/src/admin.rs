//! Consumer groups as an operator sees them (Java's `kafka-consumer-groups.sh`): every group
//! of the cluster, one group's members with what each subscribed to and owns, its offsets
//! moved while it is stopped, and the removal of groups no one uses any more.

use std::sync::Arc;

use ringwire_kafka::api::consumer_group_describe::{
    ConsumerGroupDescribeRequest, ConsumerGroupDescribeResponse, ConsumerGroupMember,
    DescribedPartitions,
};
use ringwire_kafka::api::consumer_protocol::{self, decode_assignment, decode_subscription};
use ringwire_kafka::api::delete_groups::{DeleteGroupsRequest, DeleteGroupsResponse};
use ringwire_kafka::api::describe_groups::{
    DescribeGroupsRequest, DescribeGroupsResponse, DescribedGroup, DescribedMember,
};
use ringwire_kafka::api::find_coordinator::GROUP;
use ringwire_kafka::api::list_groups::{ListGroupsRequest, ListGroupsResponse};
use ringwire_kafka::{ApiKey, ErrorCode};

use crate::cluster::Cluster;
use crate::coordinator::Coordinator;
use crate::{
    ClientConfig, ClientError, Connection, Consumer, ConsumerConfig, GroupProtocol, Start,
};

/// A cluster's consumer groups, reached through any of its brokers.
#[derive(Debug)]
pub struct Admin {
    cluster: Arc<Cluster>,
}

/// A group as [`Admin::list_groups`] finds it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GroupListing {
    /// The group's id.
    pub group_id: String,
    /// `consumer` for consumer groups of either protocol, empty for a group that only has
    /// offsets committed (by a consumer that assigns its partitions itself).
    pub protocol_type: String,
    /// Its state, from brokers of Kafka 2.6 on: `Stable`, `Empty`, ...
    pub state: Option<String>,
    /// Its type, from brokers of Kafka 3.7 on: `classic` or `consumer` (KIP-848).
    pub group_type: Option<String>,
}

/// One group as its coordinator describes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GroupDescription {
    /// The group's id.
    pub group_id: String,
    /// Which protocol its members follow.
    pub protocol: GroupProtocol,
    /// Its state: a classic group's `Stable`, `PreparingRebalance`, `CompletingRebalance` or
    /// `Empty`; a consumer-protocol group's `Stable`, `Assigning`, `Reconciling` or `Empty`.
    pub state: String,
    /// The assignor: the one a classic group's members agreed on (`range`, ...; empty while
    /// it rebalances), or the coordinator's (`uniform`, `range`).
    pub assignor: String,
    /// The members, by member id.
    pub members: Vec<MemberDescription>,
}

/// One member of a described group.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemberDescription {
    /// The member's id.
    pub member_id: String,
    /// Its static membership id.
    pub instance_id: Option<String>,
    /// Its `client.id`.
    pub client_id: String,
    /// The address it connected from, as the coordinator saw it (`/127.0.0.1`).
    pub client_host: String,
    /// The topics it subscribed to (a classic group tells them once stable).
    pub topics: Vec<String>,
    /// The regular expression it subscribed with (consumer protocol only).
    pub topic_regex: Option<String>,
    /// The partitions it owns, by topic (a classic group tells them once stable).
    pub assignment: Vec<(String, Vec<i32>)>,
    /// Consumer protocol: the partitions the coordinator is moving it to (the same as
    /// `assignment` once it is reconciled). `None` in a classic group.
    pub target_assignment: Option<Vec<(String, Vec<i32>)>>,
}

impl Admin {
    /// Reaches the cluster through `bootstrap` (`HOST:PORT`, several separated by commas).
    pub async fn connect(bootstrap: &str, config: ClientConfig) -> Result<Self, ClientError> {
        let cluster = Cluster::connect(bootstrap, config).await?;
        Ok(Admin {
            cluster: Arc::new(cluster),
        })
    }

    /// Every group of the cluster, by id: each broker lists the groups it coordinates, all
    /// of them asked at once.
    pub async fn list_groups(&self) -> Result<Vec<GroupListing>, ClientError> {
        self.cluster.refresh(&[]).await?;
        let mut asked = tokio::task::JoinSet::new();
        for address in self.cluster.broker_addresses() {
            let config = self.cluster.config.clone();
            asked.spawn(async move {
                let mut groups = Vec::new();
                let mut conn = Connection::connect(&address, &config).await?;
                conn.list_groups(&mut groups).await?;
                Ok::<_, ClientError>(groups)
            });
        }
        let mut groups = Vec::new();
        while let Some(listed) = asked.join_next().await {
            let listed = listed.map_err(|e| ClientError::Broken(e.to_string()))?;
            groups.extend(listed?);
        }
        groups.sort_by(|a, b| a.group_id.cmp(&b.group_id));
        Ok(groups)
    }

    /// Group `group`, described by its coordinator: by ConsumerGroupDescribe when the broker
    /// runs KIP-848's groups, else, or for a classic group, by DescribeGroups. A group
    /// that does not exist is the Kafka error `GROUP_ID_NOT_FOUND`.
    pub async fn describe_group(&self, group: &str) -> Result<GroupDescription, ClientError> {
        self.coordinator(group)
            .call(|mut conn, group| async move {
                let described = conn.describe_group(group).await;
                (conn, described)
            })
            .await
    }

    /// Deletes `group` with its committed offsets; one with members is refused with
    /// `NON_EMPTY_GROUP`, one that does not exist with `GROUP_ID_NOT_FOUND`.
    pub async fn delete_group(&self, group: &str) -> Result<(), ClientError> {
        self.coordinator(group)
            .call(|mut conn, group| async move {
                let deleted = conn.delete_group(group).await;
                (conn, deleted)
            })
            .await
    }

    /// Where `group` would start on each partition of `topic` from `to` (`Start::Committed`:
    /// where it committed, else where the reset says), by partition: what
    /// [`commit_offsets`](Self::commit_offsets) would commit to move the group there
    /// (Java's `kafka-consumer-groups.sh --reset-offsets` without `--execute`).
    pub async fn offsets(
        &self,
        group: &str,
        topic: &str,
        to: Start,
    ) -> Result<Vec<(i32, i64)>, ClientError> {
        let mut consumer = self.consumer(group);
        let partitions = consumer.assign(topic, to).await?;
        Ok((0..)
            .take(partitions)
            .filter_map(|p| Some((p, consumer.position(topic, p)?)))
            .collect())
    }

    /// Commits `offsets` (partition, offset) of `topic` for `group`, which must have no
    /// members (they would commit over it): moves where the group goes on when it starts
    /// again. A group with members is refused with `NON_EMPTY_GROUP`, as DeleteGroups would
    /// refuse it.
    pub async fn commit_offsets(
        &self,
        group: &str,
        topic: &str,
        offsets: &[(i32, i64)],
    ) -> Result<(), ClientError> {
        match self.describe_group(group).await {
            Ok(g) if !g.members.is_empty() => {
                return Err(ClientError::Kafka {
                    api: ApiKey::OffsetCommit,
                    code: ErrorCode::NON_EMPTY_GROUP,
                    message: Some(format!(
                        "group {group} is {} with {} members: stop them first",
                        g.state,
                        g.members.len()
                    )),
                })
            }
            Ok(_) => {}
            Err(ClientError::Kafka { code, .. }) if code == ErrorCode::GROUP_ID_NOT_FOUND => {}
            Err(e) => return Err(e),
        }
        let offsets: Vec<(&str, i32, i64)> = offsets.iter().map(|&(p, o)| (topic, p, o)).collect();
        self.consumer(group).commit_offsets(&offsets).await
    }

    /// A consumer of `group` that is not a member (it assigns partitions and commits as
    /// one that assigns its own).
    fn consumer(&self, group: &str) -> Consumer {
        let config = ConsumerConfig {
            client: self.cluster.config.clone(),
            group: Some(group.to_owned()),
            ..ConsumerConfig::default()
        };
        Consumer::on(Arc::clone(&self.cluster), config)
    }

    fn coordinator(&self, group: &str) -> Coordinator {
        Coordinator::new(group.to_owned(), GROUP, Arc::clone(&self.cluster))
    }
}

impl Connection {
    /// Adds the groups this broker coordinates to `groups`.
    pub async fn list_groups(&mut self, groups: &mut Vec<GroupListing>) -> Result<(), ClientError> {
        self.call(&ListGroupsRequest::default(), |frame| {
            let response = frame.decode::<ListGroupsResponse<'_>>()?;
            ClientError::check(ApiKey::ListGroups, response.error_code)?;
            groups.extend(response.groups.iter().map(|g| GroupListing {
                group_id: g.group_id.to_owned(),
                protocol_type: g.protocol_type.to_owned(),
                state: g.group_state.map(str::to_owned),
                group_type: g.group_type.map(str::to_owned),
            }));
            Ok(())
        })
        .await
    }

    /// Describes `group`; this broker must be its coordinator
    /// ([`find_group_coordinator`](Self::find_group_coordinator)). See
    /// [`Admin::describe_group`].
    pub async fn describe_group(&mut self, group: &str) -> Result<GroupDescription, ClientError> {
        if self
            .versions()
            .version(ApiKey::ConsumerGroupDescribe)
            .is_some()
        {
            let request = ConsumerGroupDescribeRequest {
                group_ids: &[group],
                include_authorized_operations: false,
            };
            let described = self
                .call(&request, |frame| {
                    let response = frame.decode::<ConsumerGroupDescribeResponse<'_>>()?;
                    let g = response.groups.first().ok_or(ClientError::Kafka {
                        api: ApiKey::ConsumerGroupDescribe,
                        code: ErrorCode::GROUP_ID_NOT_FOUND,
                        message: Some("no group in the answer".into()),
                    })?;
                    // A classic group (or none) is not this API's, and a broker that does
                    // not run the consumer protocol (3.x unless told to) serves the API but
                    // refuses every group: asked again below.
                    if [
                        ErrorCode::GROUP_ID_NOT_FOUND,
                        ErrorCode::UNSUPPORTED_VERSION,
                    ]
                    .contains(&g.error_code)
                    {
                        return Ok(None);
                    }
                    ClientError::check_said(
                        ApiKey::ConsumerGroupDescribe,
                        g.error_code,
                        g.error_message,
                    )?;
                    Ok(Some(GroupDescription {
                        group_id: g.group_id.to_owned(),
                        protocol: GroupProtocol::Consumer,
                        state: g.group_state.to_owned(),
                        assignor: g.assignor_name.to_owned(),
                        members: sorted(g.members.iter().map(consumer_member).collect()),
                    }))
                })
                .await?;
            if let Some(described) = described {
                return Ok(described);
            }
        }
        let request = DescribeGroupsRequest {
            groups: &[group],
            include_authorized_operations: false,
        };
        self.call(&request, |frame| {
            let response = frame.decode::<DescribeGroupsResponse<'_>>()?;
            let g = response
                .groups
                .first()
                // Before v6, a group that does not exist is described as `Dead`.
                .filter(|g| g.group_state != "Dead" || g.error_code != ErrorCode::NONE)
                .ok_or(ClientError::Kafka {
                    api: ApiKey::DescribeGroups,
                    code: ErrorCode::GROUP_ID_NOT_FOUND,
                    message: None,
                })?;
            ClientError::check_said(ApiKey::DescribeGroups, g.error_code, g.error_message)?;
            classic_group(g)
        })
        .await
    }

    /// Deletes `group`; this broker must be its coordinator. See [`Admin::delete_group`].
    pub async fn delete_group(&mut self, group: &str) -> Result<(), ClientError> {
        let request = DeleteGroupsRequest {
            groups_names: &[group],
        };
        self.call(&request, |frame| {
            let response = frame.decode::<DeleteGroupsResponse<'_>>()?;
            response
                .results
                .iter()
                .try_for_each(|r| ClientError::check(ApiKey::DeleteGroups, r.error_code))
        })
        .await
    }
}

/// A classic group's description; its members' subscriptions and assignments decoded when it
/// is a consumer group (other protocols' are their own business).
fn classic_group(g: &DescribedGroup<'_>) -> Result<GroupDescription, ClientError> {
    let consumers = g.protocol_type == consumer_protocol::PROTOCOL_TYPE;
    let members = g
        .members
        .iter()
        .map(|m| classic_member(m, consumers))
        .collect::<Result<_, ClientError>>()?;
    Ok(GroupDescription {
        group_id: g.group_id.to_owned(),
        protocol: GroupProtocol::Classic,
        state: g.group_state.to_owned(),
        assignor: g.protocol_data.to_owned(),
        members: sorted(members),
    })
}

fn classic_member(
    m: &DescribedMember<'_>,
    consumers: bool,
) -> Result<MemberDescription, ClientError> {
    // Empty until the group is stable.
    let (topics, assignment) = if consumers && !m.member_metadata.is_empty() {
        let topics = decode_subscription(m.member_metadata)?;
        (topics, decode_assignment(m.member_assignment)?)
    } else {
        (Vec::new(), Vec::new())
    };
    Ok(MemberDescription {
        member_id: m.member_id.to_owned(),
        instance_id: m.group_instance_id.map(str::to_owned),
        client_id: m.client_id.to_owned(),
        client_host: m.client_host.to_owned(),
        topics: topics.into_iter().map(str::to_owned).collect(),
        topic_regex: None,
        assignment: assignment
            .into_iter()
            .map(|(topic, partitions)| (topic.to_owned(), partitions))
            .collect(),
        target_assignment: None,
    })
}

fn consumer_member(m: &ConsumerGroupMember<'_>) -> MemberDescription {
    let owned = |topics: &[DescribedPartitions<'_>]| {
        topics
            .iter()
            .map(|t| (t.topic_name.to_owned(), t.partitions.clone()))
            .collect()
    };
    MemberDescription {
        member_id: m.member_id.to_owned(),
        instance_id: m.instance_id.map(str::to_owned),
        client_id: m.client_id.to_owned(),
        client_host: m.client_host.to_owned(),
        topics: m
            .subscribed_topic_names
            .iter()
            .map(|t| (*t).to_owned())
            .collect(),
        topic_regex: m.subscribed_topic_regex.map(str::to_owned),
        assignment: owned(&m.assignment),
        target_assignment: Some(owned(&m.target_assignment)),
    }
}

fn sorted(mut members: Vec<MemberDescription>) -> Vec<MemberDescription> {
    members.sort_by(|a, b| a.member_id.cmp(&b.member_id));
    members
}
