//! Consumer groups as an operator sees them: listed across the cluster, described by their
//! coordinator (a classic group's members with their decoded subscriptions and assignments, a
//! consumer-protocol group's with what they own and move to), their offsets moved and the
//! groups deleted once empty.

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use ringwire_kafka::ErrorCode;
use ringwire_kafka_client::admin::{GroupDescription, MemberDescription};
use ringwire_kafka_client::{
    Admin, ClientConfig, ClientError, Consumer, GroupProtocol, Reset, Start,
};

use super::groups::{join_beside, member};
use super::modern_groups::{self, protocol_offered};
use super::{connect, create, runtime, unique};

/// Checks that a description found no group.
fn gone(described: Result<GroupDescription, ClientError>) {
    assert!(
        matches!(described, Err(ClientError::Kafka { code, .. }) if code == ErrorCode::GROUP_ID_NOT_FOUND),
        "{described:?}"
    );
}

/// Every partition the members own, by topic and partition.
fn owned(members: &[MemberDescription]) -> BTreeSet<(String, i32)> {
    members
        .iter()
        .flat_map(|m| &m.assignment)
        .flat_map(|(topic, partitions)| partitions.iter().map(|p| (topic.clone(), *p)))
        .collect()
}

/// Describes `group` until `settled` holds (the coordinator's view lags the members' own).
async fn describe_until(
    admin: &Admin,
    group: &str,
    settled: impl Fn(&GroupDescription) -> bool,
) -> GroupDescription {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let described = admin.describe_group(group).await.unwrap();
        if settled(&described) {
            return described;
        }
        assert!(Instant::now() < deadline, "never settled: {described:?}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

pub(crate) fn groups_are_listed_described_and_deleted(bootstrap: &str) {
    let mut conn = connect(bootstrap);
    let topic = unique("admin");
    create(&mut conn, &topic, 2, &[]);
    let classic = unique("admin-classic");
    runtime().block_on(async {
        let admin = Admin::connect(bootstrap, ClientConfig::default())
            .await
            .unwrap();
        gone(admin.describe_group(&classic).await);

        // Two classic members, one named by a static instance id.
        let mut a = Consumer::connect(bootstrap, member(&classic)).await.unwrap();
        a.subscribe(&[&topic], Reset::Earliest).await.unwrap();
        let config = member(&classic);
        let mut b = Consumer::connect(
            bootstrap,
            ringwire_kafka_client::ConsumerConfig {
                group_instance_id: Some("pod-b".into()),
                ..config
            },
        )
        .await
        .unwrap();
        join_beside(&mut b, &topic, &mut [&mut a]).await;

        let described = describe_until(&admin, &classic, |g| {
            g.state == "Stable" && owned(&g.members).len() == 2
        })
        .await;
        assert_eq!(
            (described.group_id.as_str(), described.protocol),
            (classic.as_str(), GroupProtocol::Classic)
        );
        assert_eq!(described.assignor, "range");
        let [first, second] = &described.members[..] else {
            panic!("two members: {described:?}")
        };
        for m in [first, second] {
            assert_eq!(m.topics, std::slice::from_ref(&topic));
            assert_eq!(m.assignment.len(), 1, "one partition each: {m:?}");
            assert_eq!((m.client_id.as_str(), m.target_assignment.as_ref()), ("ringwire", None));
            assert!(m.client_host.ends_with("127.0.0.1"), "{}", m.client_host);
        }
        let instances: BTreeSet<_> = described.members.iter().map(|m| m.instance_id.clone()).collect();
        assert_eq!(instances, BTreeSet::from([None, Some("pod-b".to_owned())]));
        let want: BTreeSet<_> = [(topic.clone(), 0), (topic.clone(), 1)].into();
        assert_eq!(owned(&described.members), want);

        let listed = admin.list_groups().await.unwrap();
        let mine = listed
            .iter()
            .find(|g| g.group_id == classic)
            .unwrap_or_else(|| panic!("{classic} not in {listed:?}"));
        assert_eq!(mine.protocol_type, "consumer");
        assert_eq!(mine.state.as_deref(), Some("Stable"));
        assert!(
            matches!(mine.group_type.as_deref(), None | Some("classic")),
            "{mine:?}"
        );

        // Not while it has members: neither its offsets moved nor the group deleted.
        let non_empty = |refused: ClientError| {
            assert!(
                matches!(refused, ClientError::Kafka { code, .. } if code == ErrorCode::NON_EMPTY_GROUP),
                "{refused}"
            );
        };
        non_empty(admin.commit_offsets(&classic, &topic, &[(0, 1)]).await.unwrap_err());
        non_empty(admin.delete_group(&classic).await.unwrap_err());
        a.leave().await.unwrap();
        b.leave().await.unwrap();
        describe_until(&admin, &classic, |g| g.state == "Empty" && g.members.is_empty()).await;

        // Stopped, its offsets move; then the group and its offsets go.
        let latest = admin.offsets(&classic, &topic, Start::Latest).await.unwrap();
        assert_eq!(latest, [(0, 0), (1, 0)]);
        admin
            .commit_offsets(&classic, &topic, &[(0, 3), (1, 5)])
            .await
            .unwrap();
        let committed = Start::Committed(Reset::Earliest);
        let moved = admin.offsets(&classic, &topic, committed).await.unwrap();
        assert_eq!(moved, [(0, 3), (1, 5)]);
        admin.delete_group(&classic).await.unwrap();
        gone(admin.describe_group(&classic).await);
        let forgotten = admin.offsets(&classic, &topic, committed).await.unwrap();
        assert_eq!(forgotten, [(0, 0), (1, 0)]);
        let listed = admin.list_groups().await.unwrap();
        assert!(listed.iter().all(|g| g.group_id != classic), "{listed:?}");

        // A consumer-protocol group (Kafka 4): the coordinator's own view, what each member
        // owns and where it is headed.
        if !protocol_offered(bootstrap, &topic).await {
            return;
        }
        let modern = unique("admin-modern");
        let mut c = Consumer::connect(bootstrap, modern_groups::member(&modern))
            .await
            .unwrap();
        c.subscribe(&[&topic], Reset::Earliest).await.unwrap();
        let described = describe_until(&admin, &modern, |g| owned(&g.members).len() == 2).await;
        assert_eq!(described.protocol, GroupProtocol::Consumer);
        assert!(["uniform", "range"].contains(&described.assignor.as_str()));
        let [m] = &described.members[..] else {
            panic!("one member: {described:?}")
        };
        let (id, _) = c.member().expect("a member");
        assert_eq!((m.member_id.as_str(), &m.topics[..]), (id, std::slice::from_ref(&topic)));
        assert_eq!(m.target_assignment.as_ref(), Some(&m.assignment));
        let listed = admin.list_groups().await.unwrap();
        let mine = listed.iter().find(|g| g.group_id == modern).unwrap();
        assert_eq!(mine.group_type.as_deref(), Some("consumer"));
        c.leave().await.unwrap();
        describe_until(&admin, &modern, |g| g.members.is_empty()).await;
        admin.delete_group(&modern).await.unwrap();
        gone(admin.describe_group(&modern).await);
    });
}
