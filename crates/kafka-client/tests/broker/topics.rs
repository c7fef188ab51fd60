//! Topics as an operator changes them: their configuration read with where each value comes
//! from, single entries set, appended to and deleted, a bad entry refused with nothing
//! changed, and partitions added (never taken away).

use ringwire_kafka::api::describe_configs::{ConfigSource, ResourceType};
use ringwire_kafka::api::incremental_alter_configs::{AlterableConfig, ConfigOperation};
use ringwire_kafka::ErrorCode;
use ringwire_kafka_client::blocking::Connection;
use ringwire_kafka_client::ClientError;

use super::{connect, create, unique};

/// The entries of `topic` named in `names`, as (name, value, source).
fn entries(
    conn: &mut Connection,
    topic: &str,
    names: &[&str],
) -> Vec<(String, Option<String>, ConfigSource)> {
    conn.describe_configs(ResourceType::TOPIC, topic, |configs| {
        names
            .iter()
            .map(|name| {
                let entry = configs.iter().find(|c| c.name == *name);
                let entry = entry.unwrap_or_else(|| panic!("{name} described"));
                let value = entry.value.map(str::to_owned);
                ((*name).to_owned(), value, entry.config_source)
            })
            .collect()
    })
    .expect("describe configs")
}

fn refused(result: Result<(), ClientError>, code: ErrorCode) {
    assert!(
        matches!(&result, Err(ClientError::Kafka { code: c, .. }) if *c == code),
        "{result:?}"
    );
}

pub(crate) fn configs_and_partitions_change(bootstrap: &str) {
    let mut conn = connect(bootstrap);
    let topic = unique("configs");
    create(&mut conn, &topic, 2, &[("retention.ms", Some("600000"))]);
    let names = ["retention.ms", "cleanup.policy"];
    let dynamic = ConfigSource::DYNAMIC_TOPIC_CONFIG;
    let [retention, policy] = <[_; 2]>::try_from(entries(&mut conn, &topic, &names)).unwrap();
    assert_eq!(retention.1.as_deref(), Some("600000"));
    assert_eq!(retention.2, dynamic);
    // Not set on the topic: the broker's (its default, or its own file's).
    assert_eq!(policy.1.as_deref(), Some("delete"));
    let broker_sources = [
        ConfigSource::DEFAULT_CONFIG,
        ConfigSource::STATIC_BROKER_CONFIG,
    ];
    assert!(broker_sources.contains(&policy.2), "{policy:?}");

    let set = |name, operation, value| AlterableConfig {
        name,
        operation,
        value,
    };
    let changes = [
        set("retention.ms", ConfigOperation::Set, Some("86400000")),
        set("cleanup.policy", ConfigOperation::Append, Some("compact")),
    ];
    conn.alter_configs(ResourceType::TOPIC, &topic, &changes, false)
        .expect("alter configs");
    let got = entries(&mut conn, &topic, &names);
    assert_eq!(
        got,
        [
            ("retention.ms".into(), Some("86400000".into()), dynamic),
            (
                "cleanup.policy".into(),
                Some("delete,compact".into()),
                dynamic
            ),
        ]
    );

    // An unknown entry is refused with the rest of the request: nothing changes.
    let bad = [
        set("retention.ms", ConfigOperation::Delete, None),
        set("no.such.entry", ConfigOperation::Set, Some("1")),
    ];
    refused(
        conn.alter_configs(ResourceType::TOPIC, &topic, &bad, false),
        ErrorCode::INVALID_CONFIG,
    );
    assert_eq!(entries(&mut conn, &topic, &names), got);
    // Deleted, the entry falls back to the broker's value.
    let delete = [set("retention.ms", ConfigOperation::Delete, None)];
    conn.alter_configs(ResourceType::TOPIC, &topic, &delete, false)
        .expect("delete an entry");
    let [retention] = <[_; 1]>::try_from(entries(&mut conn, &topic, &names[..1])).unwrap();
    assert_ne!(retention.2, dynamic, "{retention:?}");
    assert_ne!(retention.1.as_deref(), Some("86400000"));

    let missing = conn.describe_configs(ResourceType::TOPIC, &unique("missing"), |_| ());
    refused(missing, ErrorCode::UNKNOWN_TOPIC_OR_PARTITION);

    // The broker's own configuration, from itself.
    let node = conn
        .metadata(None, |m| m.brokers[0].node_id)
        .expect("metadata");
    let id = node.to_string();
    let node_id = conn
        .describe_configs(ResourceType::BROKER, &id, |configs| {
            let entry = configs.iter().find(|c| c.name == "node.id");
            entry.and_then(|c| c.value).map(str::to_owned)
        })
        .expect("describe the broker");
    assert_eq!(node_id, Some(id));

    let partitions = |conn: &mut Connection| {
        conn.metadata(Some(&[&topic]), |m| m.topics[0].partitions.len())
            .expect("metadata")
    };
    // Checked only: nothing changes, and what would be refused is.
    conn.create_partitions(&topic, 8, true).expect("8 would do");
    assert_eq!(partitions(&mut conn), 2);
    let later = [set("retention.ms", ConfigOperation::Set, Some("1000"))];
    conn.alter_configs(ResourceType::TOPIC, &topic, &later, true)
        .expect("would do");
    let [retention] = <[_; 1]>::try_from(entries(&mut conn, &topic, &names[..1])).unwrap();
    assert_ne!(retention.1.as_deref(), Some("1000"));
    refused(
        conn.alter_configs(ResourceType::TOPIC, &topic, &bad, true),
        ErrorCode::INVALID_CONFIG,
    );
    conn.create_partitions(&topic, 4, false).expect("grow to 4");
    assert_eq!(partitions(&mut conn), 4);
    refused(
        conn.create_partitions(&topic, 3, false),
        ErrorCode::INVALID_PARTITIONS,
    );
    assert_eq!(partitions(&mut conn), 4);
}
