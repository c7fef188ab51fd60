//! ringwire's transactional producer against the broker: committed transactions visible to
//! read-committed consumers (ringwire's and kcat's), aborted ones not, consumer offsets
//! committed with a transaction, and a second producer with the same transactional id
//! fencing the first.

use std::time::{Duration, Instant};

use ringwire_kafka_client::{
    ClientError, Consumer, ConsumerConfig, GroupMetadata, Isolation, Producer, ProducerConfig,
    ProducerRecord, Reset, Start,
};

use super::{connect, create, kcat, kcat_run, runtime, unique};

fn transactional(id: &str) -> ProducerConfig {
    ProducerConfig {
        transactional_id: Some(id.to_owned()),
        ..ProducerConfig::default()
    }
}

/// The values of the partitions of `topic` up to their `ends`, as a consumer of `isolation`
/// reads them (partition 0's, then partition 1's, ...).
fn read(bootstrap: &str, topic: &str, isolation: Isolation, ends: &[i64]) -> Vec<String> {
    runtime().block_on(async {
        let config = ConsumerConfig {
            isolation,
            ..ConsumerConfig::default()
        };
        let mut consumer = Consumer::connect(bootstrap, config).await.unwrap();
        consumer.assign(topic, Start::Earliest).await.unwrap();
        let mut values = vec![Vec::new(); ends.len()];
        let deadline = Instant::now() + Duration::from_secs(30);
        let behind = |consumer: &Consumer, (p, end): (usize, &i64)| {
            consumer.position(topic, p as i32).unwrap() < *end
        };
        while ends.iter().enumerate().any(|p| behind(&consumer, p)) {
            assert!(Instant::now() < deadline, "stuck at {values:?}");
            consumer
                .poll(|_, p, r| {
                    let value = String::from_utf8(r.value.unwrap().to_vec()).unwrap();
                    values[p as usize].push(value);
                })
                .await
                .unwrap();
        }
        values.concat()
    })
}

pub(crate) fn committed_transactions_are_read_and_aborted_ones_are_not(bootstrap: &str) {
    let mut conn = connect(bootstrap);
    let topic = unique("transactional");
    create(&mut conn, &topic, 2, &[]);
    // Where the transactions' input came from: offsets only.
    let input = unique("txn-input");
    create(&mut conn, &input, 1, &[]);
    let group = unique("txn-group");
    let id = unique("txn-id");
    runtime().block_on(async {
        let producer = Producer::connect(bootstrap, transactional(&id))
            .await
            .unwrap();
        let outside = producer.send(ProducerRecord::new(&topic, b"x")).await;
        assert!(
            matches!(outside, Err(ClientError::TransactionState(_))),
            "{outside:?}"
        );
        // Connections once the first round has opened them (the group's coordinator's and
        // the leader's, whose sender connects when the first records go, which may be after
        // `send_offsets_to_transaction`): the later rounds open none.
        let mut known = None;
        for (round, commit) in [(0, true), (1, false), (2, true)] {
            producer.begin_transaction().unwrap();
            assert!(producer.begin_transaction().is_err(), "one at a time");
            for i in 0..10 {
                let value = format!("{round} {i}");
                let record = ProducerRecord {
                    partition: Some(i % 2),
                    ..ProducerRecord::new(&topic, value.as_bytes())
                };
                producer.send(record).await.unwrap();
            }
            // The offsets of what the round "consumed", committed with it or not.
            let offsets = [
                (&*topic, 0, 5 * (round + 1)),
                (&*input, 0, 7 * (round + 1)),
                (&*topic, 1, 100 + round),
            ];
            producer
                .send_offsets_to_transaction(&GroupMetadata::standalone(&group), &offsets)
                .await
                .unwrap();
            if commit {
                // While it commits, records and a second commit are refused (polled in
                // order on this one thread: the commit has begun when they are asked).
                let late = ProducerRecord::new(&topic, b"late");
                let (committed, sent, again) = tokio::join!(
                    producer.commit_transaction(),
                    producer.send(late),
                    producer.commit_transaction(),
                );
                committed.unwrap();
                assert!(
                    matches!(sent, Err(ClientError::TransactionState(_))),
                    "{sent:?}"
                );
                assert!(
                    matches!(again, Err(ClientError::TransactionState(_))),
                    "{again:?}"
                );
            } else {
                producer.abort_transaction().await.unwrap();
            }
            match &known {
                None => known = Some(super::sockets()),
                Some(known) => {
                    let opened: Vec<_> = super::sockets().difference(known).copied().collect();
                    assert_eq!(opened, [], "round {round} connected again");
                }
            }
        }
        let ended = producer.commit_transaction().await;
        assert!(
            matches!(ended, Err(ClientError::TransactionState(_))),
            "{ended:?}"
        );
    });

    // Each partition: 15 records and three markers.
    let ends = &[18, 18];
    let committed: Vec<String> = [0, 1]
        .iter()
        .flat_map(|&p| {
            [0, 2]
                .into_iter()
                .flat_map(move |round| (p..10).step_by(2).map(move |i| format!("{round} {i}")))
        })
        .collect();
    assert_eq!(
        read(bootstrap, &topic, Isolation::ReadCommitted, ends),
        committed
    );
    let all = read(bootstrap, &topic, Isolation::ReadUncommitted, ends);
    assert_eq!(all.len(), 30);
    assert_eq!(all.iter().filter(|v| v.starts_with("1 ")).count(), 10);

    // The last committed round's offsets; the aborted round's never were.
    let offsets = conn.committed_offsets(&group, &topic, &[0, 1]).unwrap();
    assert_eq!(offsets, [Some(15), Some(102)]);
    let offsets = conn.committed_offsets(&group, &input, &[0]).unwrap();
    assert_eq!(offsets, [Some(21)]);

    // kcat (librdkafka) reading committed records only.
    kcat();
    let out = kcat_run(
        &[
            "-b",
            bootstrap,
            "-C",
            "-t",
            &topic,
            "-o",
            "beginning",
            "-e",
            "-q",
            "-X",
            "isolation.level=read_committed",
            "-f",
            "%s\n",
        ],
        b"",
    );
    let mut theirs: Vec<String> = String::from_utf8(out)
        .unwrap()
        .lines()
        .map(str::to_owned)
        .collect();
    let mut ours = committed;
    theirs.sort();
    ours.sort();
    assert_eq!(theirs, ours);
}

pub(crate) fn a_second_producer_with_the_id_fences_the_first(bootstrap: &str) {
    let mut conn = connect(bootstrap);
    let topic = unique("fenced");
    create(&mut conn, &topic, 1, &[]);
    let id = unique("txn-id");
    runtime().block_on(async {
        let first = Producer::connect(bootstrap, transactional(&id)).await.unwrap();
        first.begin_transaction().unwrap();
        first
            .send(ProducerRecord::new(&topic, b"zombie"))
            .await
            .unwrap();
        first.flush().await.unwrap();
        // Taking the id aborts what the first left open, and fences it.
        let second = Producer::connect(bootstrap, transactional(&id)).await.unwrap();
        let fenced = first.commit_transaction().await;
        assert!(
            matches!(&fenced, Err(e) if e.to_string().contains("FENCED") || e.to_string().contains("EPOCH")),
            "{fenced:?}"
        );
        second.begin_transaction().unwrap();
        second
            .send(ProducerRecord::new(&topic, b"alive"))
            .await
            .unwrap();
        second.commit_transaction().await.unwrap();
    });
    // Offsets: the zombie's record, the abort marker, the live record, its commit marker.
    let values = read(bootstrap, &topic, Isolation::ReadCommitted, &[4]);
    assert_eq!(values, ["alive"]);
}

pub(crate) fn a_record_refused_dooms_its_transaction_and_abort_recovers(bootstrap: &str) {
    let mut conn = connect(bootstrap);
    let topic = unique("doomed");
    create(&mut conn, &topic, 1, &[("max.message.bytes", Some("2048"))]);
    let id = unique("txn-id");
    runtime().block_on(async {
        let producer = Producer::connect(bootstrap, transactional(&id))
            .await
            .unwrap();
        producer.begin_transaction().unwrap();
        producer
            .send(ProducerRecord::new(&topic, b"before"))
            .await
            .unwrap();
        producer.flush().await.unwrap();
        let big = vec![b'x'; 8192];
        producer
            .send(ProducerRecord::new(&topic, &big))
            .await
            .unwrap();
        let doomed = producer.commit_transaction().await;
        assert!(
            matches!(doomed, Err(ClientError::Undelivered(_))),
            "{doomed:?}"
        );
        // Aborted, the id's next epoch taken: the partition's sequence starts again.
        producer.abort_transaction().await.unwrap();
        assert_eq!(producer.stats().producer_ids, 2);
        producer.begin_transaction().unwrap();
        producer
            .send(ProducerRecord::new(&topic, b"after"))
            .await
            .unwrap();
        producer.commit_transaction().await.unwrap();
    });
    // "before", the abort marker, "after", its commit marker.
    let values = read(bootstrap, &topic, Isolation::ReadCommitted, &[4]);
    assert_eq!(values, ["after"]);
}

/// Consume, transform, produce: a group member's records turned into another topic's and its
/// offsets committed in one transaction; the member's generation checked (a zombie's refused).
pub(crate) fn a_group_member_commits_what_it_consumed_with_a_transaction(bootstrap: &str) {
    let mut conn = connect(bootstrap);
    let (input, output) = (unique("txn-in"), unique("txn-out"));
    create(&mut conn, &input, 1, &[]);
    create(&mut conn, &output, 1, &[]);
    let group = unique("txn-member");
    runtime().block_on(async {
        let plain = Producer::connect(bootstrap, ProducerConfig::default())
            .await
            .unwrap();
        for word in ["one", "two", "three"] {
            plain
                .send(ProducerRecord::new(&input, word.as_bytes()))
                .await
                .unwrap();
        }
        plain.flush().await.unwrap();

        let config = ConsumerConfig {
            group: Some(group.clone()),
            ..ConsumerConfig::default()
        };
        let mut consumer = Consumer::connect(bootstrap, config).await.unwrap();
        consumer
            .subscribe(&[&input], Reset::Earliest)
            .await
            .unwrap();
        let mut words = Vec::new();
        let deadline = Instant::now() + Duration::from_secs(30);
        while words.len() < 3 {
            assert!(Instant::now() < deadline, "only {words:?}");
            consumer
                .poll(|_, _, r| words.push(r.value.unwrap().to_ascii_uppercase()))
                .await
                .unwrap();
        }
        let member = consumer.group_metadata().expect("a group");
        assert!(
            member.generation_id >= 1 && !member.member_id.is_empty(),
            "{member:?}"
        );

        let producer = Producer::connect(bootstrap, transactional(&unique("ctp")))
            .await
            .unwrap();
        producer.begin_transaction().unwrap();
        for word in &words {
            producer
                .send(ProducerRecord::new(&output, word))
                .await
                .unwrap();
        }
        let position = consumer.position(&input, 0).unwrap();
        let offsets = [(&*input, 0, position)];
        producer
            .send_offsets_to_transaction(&member, &offsets)
            .await
            .unwrap();
        producer.commit_transaction().await.unwrap();
        assert_eq!(position, 3);

        // A member the group does not know (a zombie's id) cannot commit.
        let zombie = GroupMetadata {
            member_id: "gone".into(),
            ..member
        };
        producer.begin_transaction().unwrap();
        let refused = producer
            .send_offsets_to_transaction(&zombie, &offsets)
            .await;
        let said = refused.expect_err("a zombie's offsets").to_string();
        assert!(
            said.contains("UNKNOWN_MEMBER_ID") || said.contains("ILLEGAL_GENERATION"),
            "{said}"
        );
        producer.abort_transaction().await.unwrap();
    });
    assert_eq!(
        conn.committed_offsets(&group, &input, &[0]).unwrap(),
        [Some(3)]
    );
    // "ONE", "TWO", "THREE" and a commit marker.
    let values = read(bootstrap, &output, Isolation::ReadCommitted, &[4]);
    assert_eq!(values, ["ONE", "TWO", "THREE"]);
}
