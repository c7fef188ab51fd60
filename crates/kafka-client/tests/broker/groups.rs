//! Committed offsets of a consumer group: ringwire commits and reads them back, and
//! librdkafka (kcat's balanced consumer, `-G`) picks up from ringwire's commit and commits in
//! turn what ringwire then reads.

use std::time::{Duration, Instant};

use ringwire_kafka::api::produce::Acks;
use ringwire_kafka_client::{ClientError, Consumer, ConsumerConfig, Reset, Start};

use super::{connect, create, kcat, kcat_run, one_record, runtime, unique};

fn grouped(group: &str) -> ConsumerConfig {
    ConsumerConfig {
        group: Some(group.to_owned()),
        ..ConsumerConfig::default()
    }
}

/// Polls until every assigned partition of `topic` reached `ends` (by partition); the
/// values handed out, `partition:value`.
async fn consume_to(consumer: &mut Consumer, topic: &str, ends: &[i64]) -> Vec<String> {
    let mut got = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(30);
    let reached = |c: &Consumer| {
        (0..)
            .zip(ends)
            .all(|(p, end)| c.position(topic, p) >= Some(*end))
    };
    while !reached(consumer) {
        assert!(Instant::now() < deadline, "stopped at {got:?}");
        consumer
            .poll(|_, partition, r| {
                let value = String::from_utf8_lossy(r.value.unwrap_or_default());
                got.push(format!("{partition}:{value}"));
            })
            .await
            .unwrap();
    }
    got
}

pub(crate) fn committed_offsets_shared_with_kcat(bootstrap: &str) {
    kcat();
    let mut conn = connect(bootstrap);
    let topic = unique("group-offsets");
    let group = unique("group");
    create(&mut conn, &topic, 2, &[]);
    for partition in 0..2 {
        for i in 0..10 {
            let value = format!("p{partition}-{i}");
            conn.produce(
                &topic,
                partition,
                &one_record(value.as_bytes()),
                Acks::Leader,
            )
            .unwrap();
        }
    }
    let rt = runtime();
    rt.block_on(async {
        // Without a group there is nothing to commit to.
        let mut loose = Consumer::connect(bootstrap, ConsumerConfig::default())
            .await
            .unwrap();
        loose.assign(&topic, Start::Earliest).await.unwrap();
        assert!(matches!(loose.commit().await, Err(ClientError::NoGroup)));

        // Nothing committed yet: Reset decides, and the group's first use (which creates the
        // offsets topic on a fresh broker) is waited out.
        let mut first = Consumer::connect(bootstrap, grouped(&group)).await.unwrap();
        assert_eq!(first.committed(&topic, 0).await.unwrap(), None);
        first
            .assign(&topic, Start::Committed(Reset::Earliest))
            .await
            .unwrap();
        assert_eq!(first.position(&topic, 0), Some(0));
        consume_to(&mut first, &topic, &[10, 10]).await;
        // Only what was handled: 4 records of partition 0, 7 of partition 1.
        first
            .commit_offsets(&[(&topic, 0, 4), (&topic, 1, 7)])
            .await
            .unwrap();
        assert_eq!(first.committed(&topic, 0).await.unwrap(), Some(4));
        assert_eq!(first.committed(&topic, 1).await.unwrap(), Some(7));

        // A second consumer of the group goes on from there, whatever its Reset.
        let mut second = Consumer::connect(bootstrap, grouped(&group)).await.unwrap();
        second
            .assign(&topic, Start::Committed(Reset::Latest))
            .await
            .unwrap();
        assert_eq!(second.position(&topic, 0), Some(4));
        assert_eq!(second.position(&topic, 1), Some(7));
        let mut got = consume_to(&mut second, &topic, &[10, 10]).await;
        got.sort();
        let want = ["0:p0-4", "0:p0-5", "0:p0-6", "0:p0-7", "0:p0-8", "0:p0-9"]
            .into_iter()
            .chain(["1:p1-7", "1:p1-8", "1:p1-9"]);
        assert_eq!(got, want.collect::<Vec<_>>());
        // Commit 6 of 10 on partition 0 again, then everything handed out.
        second.commit_offsets(&[(&topic, 0, 6)]).await.unwrap();
        assert_eq!(second.committed(&topic, 0).await.unwrap(), Some(6));
        second.commit().await.unwrap();
        assert_eq!(second.committed(&topic, 0).await.unwrap(), Some(10));
        assert_eq!(second.committed(&topic, 1).await.unwrap(), Some(10));
    });

    // librdkafka reads ringwire's commit: only what came after it.
    for i in 10..13 {
        let value = format!("p0-{i}");
        conn.produce(&topic, 0, &one_record(value.as_bytes()), Acks::Leader)
            .unwrap();
    }
    let out = kcat_run(
        &[
            "-b", bootstrap, "-G", &group, "-e", "-q", "-f", "%p:%s\n", &topic,
        ],
        b"",
    );
    let mut lines: Vec<&str> = std::str::from_utf8(&out).unwrap().lines().collect();
    lines.sort_unstable();
    assert_eq!(lines, ["0:p0-10", "0:p0-11", "0:p0-12"]);

    // And ringwire reads librdkafka's commit, made as kcat left the group.
    rt.block_on(async {
        let mut third = Consumer::connect(bootstrap, grouped(&group)).await.unwrap();
        assert_eq!(third.committed(&topic, 0).await.unwrap(), Some(13));
        assert_eq!(third.committed(&topic, 1).await.unwrap(), Some(10));
    });
}
