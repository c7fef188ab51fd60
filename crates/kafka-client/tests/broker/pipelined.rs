//! The pipelined producer and consumer against the broker.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use ringwire_kafka::api::list_offsets::LATEST;
use ringwire_kafka::api::produce::Acks;
use ringwire_kafka::record::{BatchEncoder, BatchOptions, Compression, NewRecord};
use ringwire_kafka::ErrorCode;
use ringwire_kafka_client::{
    ClientError, Consumer, ConsumerConfig, Delivery, Isolation, Producer, ProducerConfig,
    ProducerRecord, Reset, Start,
};

use super::{broker_cmd, broker_in, connect, create, runtime, script, unique, PrivateBroker};
use ringwire_kafka::api::create_topics::NewTopic;

/// Many records over three partitions, keyed and not, through small batches so that many
/// requests are in flight; every record is read back where its delivery said it landed.
pub(crate) fn producer_and_consumer_pipeline_many_partitions(bootstrap: &str) {
    let mut conn = connect(bootstrap);
    let topic = unique("pipelined");
    create(&mut conn, &topic, 3, &[]);
    let n = 60_000;
    runtime().block_on(async {
        let config = ProducerConfig {
            compression: Compression::Lz4,
            batch_size: 16 << 10,
            linger: Duration::from_millis(2),
            ..ProducerConfig::default()
        };
        let producer = Producer::connect(bootstrap, config).await.unwrap();
        let mut deliveries: Vec<(usize, Delivery)> = Vec::new();
        for i in 0..n {
            let value = format!("value {i}");
            let key = format!("key-{}", i % 17);
            let mut record = ProducerRecord::new(&topic, value.as_bytes());
            if i % 2 == 0 {
                record = record.key(key.as_bytes());
            }
            let delivery = producer.send(record).await.unwrap();
            if i % 97 == 0 {
                deliveries.push((i, delivery));
            }
        }
        producer.flush().await.unwrap();

        let mut consumer = Consumer::connect(bootstrap, ConsumerConfig::default())
            .await
            .unwrap();
        consumer.assign(&topic, Start::Earliest).await.unwrap();
        // (partition, offset) -> (key, value), and each partition's offsets in arrival order.
        let mut stored = HashMap::new();
        let mut order: HashMap<i32, Vec<i64>> = HashMap::new();
        let deadline = Instant::now() + Duration::from_secs(60);
        while stored.len() < n {
            assert!(Instant::now() < deadline, "only {} of {n}", stored.len());
            consumer
                .poll(|t, p, r| {
                    assert_eq!(t, topic);
                    order.entry(p).or_default().push(r.offset);
                    let key = r.key.map(<[u8]>::to_vec);
                    let value = r.value.unwrap().to_vec();
                    assert!(stored.insert((p, r.offset), (key, value)).is_none());
                })
                .await
                .unwrap();
        }
        assert_eq!(stored.len(), n);
        for (p, offsets) in &order {
            let expected: Vec<i64> = (0..offsets.len() as i64).collect();
            assert_eq!(offsets, &expected, "partition {p} in order, without gaps");
            assert_eq!(consumer.position(&topic, *p), Some(offsets.len() as i64));
        }
        for (i, delivery) in deliveries {
            let partition = delivery.partition();
            let meta = delivery.await.unwrap();
            assert_eq!(meta.partition, partition);
            let (_, value) = &stored[&(meta.partition, meta.offset)];
            assert_eq!(value, format!("value {i}").as_bytes(), "record {i}");
        }
        // One key, one partition; records without a key went to more than one.
        let mut key_partition = HashMap::new();
        let mut unkeyed = std::collections::HashSet::new();
        for (&(p, _), (key, _)) in &stored {
            match key {
                Some(key) => assert_eq!(*key_partition.entry(key.clone()).or_insert(p), p),
                None => {
                    unkeyed.insert(p);
                }
            }
        }
        assert_eq!(key_partition.len(), 17);
        assert!(unkeyed.len() > 1, "the sticky partition never moved");
    });
}

/// `send_all` in bulk through a buffer far smaller than the records (so it waits for room
/// again and again) to a topic the producer has not seen: every record arrives, each
/// partition in the order sent.
pub(crate) fn send_all_delivers_every_record_in_order(bootstrap: &str) {
    let mut conn = connect(bootstrap);
    let topic = unique("send-all");
    create(&mut conn, &topic, 3, &[]);
    let n = 30_000;
    runtime().block_on(async {
        let config = ProducerConfig {
            batch_size: 16 << 10,
            buffer_memory: 128 << 10,
            linger: Duration::from_millis(1),
            ..ProducerConfig::default()
        };
        let producer = Producer::connect(bootstrap, config).await.unwrap();
        let values: Vec<String> = (0..n).map(|i| format!("{i}")).collect();
        let keys: Vec<String> = (0..n).map(|i| format!("key-{}", i % 5)).collect();
        let records: Vec<ProducerRecord<'_>> = values
            .iter()
            .zip(&keys)
            .enumerate()
            .map(|(i, (value, key))| {
                let record = ProducerRecord::new(&topic, value.as_bytes());
                if i % 3 == 0 {
                    record
                } else {
                    record.key(key.as_bytes())
                }
            })
            .collect();
        // The first call meets the topic; the second finds it known.
        let deliveries = producer
            .send_all(records[..10].iter().copied())
            .await
            .unwrap();
        let more = producer
            .send_all(records[10..].iter().copied())
            .await
            .unwrap();
        deliveries.await.unwrap();
        more.await.unwrap();

        let mut consumer = Consumer::connect(bootstrap, ConsumerConfig::default())
            .await
            .unwrap();
        consumer.assign(&topic, Start::Earliest).await.unwrap();
        let mut seen: HashMap<i32, Vec<usize>> = HashMap::new();
        let mut total = 0;
        let deadline = Instant::now() + Duration::from_secs(60);
        while total < n {
            assert!(Instant::now() < deadline, "only {total} of {n}");
            total += consumer
                .poll(|_, p, r| {
                    let i = std::str::from_utf8(r.value.unwrap())
                        .unwrap()
                        .parse()
                        .unwrap();
                    seen.entry(p).or_default().push(i);
                })
                .await
                .unwrap();
        }
        let mut all: Vec<usize> = seen.values().flatten().copied().collect();
        all.sort_unstable();
        assert_eq!(all, (0..n).collect::<Vec<_>>(), "each record once");
        for (p, sent) in &seen {
            assert!(
                sent.windows(2).all(|w| w[0] < w[1]),
                "partition {p} out of order"
            );
        }
        assert_eq!(seen.len(), 3);
    });
}

/// A producer keeps sending while its broker restarts: every record it says was delivered is
/// in the log afterwards at the offset it said.
pub(crate) fn producer_rides_out_a_broker_restart(_shared: &str) {
    let dir = std::env::temp_dir().join(unique("ringwire-kafka-restart"));
    let private = PrivateBroker(dir);
    let addr = broker_in(&private.0, "start");
    let topic = unique("restart");
    create(&mut connect(&addr), &topic, 1, &[]);

    let restart_dir = private.0.clone();
    let restarter = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(500));
        let started = Instant::now();
        (broker_in(&restart_dir, "restart"), started)
    });
    let (sent, restarted) = runtime().block_on(async {
        let config = ProducerConfig {
            acks: Acks::All,
            linger: Duration::from_millis(1),
            retry_backoff: Duration::from_millis(200),
            request_timeout: Duration::from_secs(10),
            delivery_timeout: Duration::from_secs(90),
            ..ProducerConfig::default()
        };
        let producer = Producer::connect(&addr, config).await.unwrap();
        let mut sent = Vec::new();
        let mut after_restart = 0;
        let deadline = Instant::now() + Duration::from_secs(120);
        while !(restarter.is_finished() && after_restart >= 200) {
            assert!(Instant::now() < deadline, "no progress after the restart");
            let value = format!("record {}", sent.len());
            let delivery = producer
                .send(ProducerRecord::new(&topic, value.as_bytes()))
                .await
                .unwrap();
            sent.push((value, delivery));
            if restarter.is_finished() {
                after_restart += 1;
            }
            // Paced, so that the restart falls in the middle of the loop.
            if sent.len() % 20 == 0 {
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
        }
        let _ = producer.flush().await;
        let total = sent.len();
        let mut acked = Vec::new();
        for (value, delivery) in sent {
            if let Ok(meta) = delivery.await {
                acked.push((meta.offset, value));
            }
        }
        assert_eq!(
            acked.len(),
            total,
            "records failed despite the 90 s delivery timeout"
        );
        (acked, restarter.join().unwrap())
    });
    assert_eq!(restarted.0, addr);
    assert!(sent.len() > 400, "{} acknowledged", sent.len());

    let mut log = HashMap::new();
    runtime().block_on(async {
        let mut consumer = Consumer::connect(&addr, ConsumerConfig::default())
            .await
            .unwrap();
        consumer.assign(&topic, Start::Earliest).await.unwrap();
        let end = sent.iter().map(|(o, _)| *o).max().unwrap();
        while consumer.position(&topic, 0).unwrap() <= end {
            consumer
                .poll(|_, _, r| {
                    log.insert(r.offset, r.value.unwrap().to_vec());
                })
                .await
                .unwrap();
        }
    });
    for (offset, value) in &sent {
        assert_eq!(
            log.get(offset).map(Vec::as_slice),
            Some(value.as_bytes()),
            "acknowledged offset {offset}"
        );
    }
    println!(
        "    {} records acknowledged, {} in the log (retried batches may be written twice)",
        sent.len(),
        log.len()
    );
}

/// Kafka's own Java producer commits and aborts transactions in turn; a read-committed
/// consumer sees the committed records only, a read-uncommitted one all of them.
pub(crate) fn read_committed_skips_what_a_java_producer_aborted(bootstrap: &str) {
    let mut conn = connect(bootstrap);
    let topic = unique("transactions");
    create(&mut conn, &topic, 1, &[]);
    let program = script().with_file_name("Transactions.java");
    broker_cmd(
        std::process::Command::new("bash")
            .arg(script())
            .arg("java")
            .arg(program)
            .args([bootstrap, &topic, "6"]),
        "java Transactions.java",
    );
    let end = conn.list_offset(&topic, 0, LATEST).unwrap();
    let read = |isolation| {
        runtime().block_on(async {
            let config = ConsumerConfig {
                isolation,
                ..ConsumerConfig::default()
            };
            let mut consumer = Consumer::connect(bootstrap, config).await.unwrap();
            consumer.assign(&topic, Start::Earliest).await.unwrap();
            let mut values = Vec::new();
            let deadline = Instant::now() + Duration::from_secs(30);
            while consumer.position(&topic, 0).unwrap() < end {
                assert!(Instant::now() < deadline, "stuck at {values:?}");
                consumer
                    .poll(|_, _, r| {
                        values.push(String::from_utf8(r.value.unwrap().to_vec()).unwrap())
                    })
                    .await
                    .unwrap();
            }
            values
        })
    };
    let committed: Vec<String> = (0..6)
        .step_by(2)
        .flat_map(|round| (0..10).map(move |i| format!("committed {round} {i}")))
        .collect();
    assert_eq!(read(Isolation::ReadCommitted), committed);
    let all = read(Isolation::ReadUncommitted);
    assert_eq!(all.len(), 60);
    assert_eq!(all.iter().filter(|v| v.starts_with("aborted")).count(), 30);
}

/// With a transaction left open by Kafka's Java producer, a read-committed consumer that
/// starts at the latest offset starts at the last stable one (the open transaction's first
/// record), a read-uncommitted one at the end of the log; a Fetch reports that same end.
pub(crate) fn read_committed_latest_is_the_last_stable_offset(bootstrap: &str) {
    use std::io::BufRead as _;

    let mut conn = connect(bootstrap);
    let topic = unique("open-transaction");
    create(&mut conn, &topic, 1, &[]);
    let mut java = std::process::Command::new("bash")
        .arg(script())
        .arg("java")
        .arg(script().with_file_name("Transactions.java"))
        .args([bootstrap, &topic, "2", "open"])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("run Transactions.java");
    let mut line = String::new();
    std::io::BufReader::new(java.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let latest = |isolation| {
        runtime().block_on(async {
            let config = ConsumerConfig {
                isolation,
                ..ConsumerConfig::default()
            };
            let mut consumer = Consumer::connect(bootstrap, config).await.unwrap();
            consumer.assign(&topic, Start::Latest).await.unwrap();
            assert_eq!(consumer.end_offset(&topic, 0), None, "before any Fetch");
            consumer.poll(|_, _, _| {}).await.unwrap();
            let end = consumer.end_offset(&topic, 0);
            assert_eq!(consumer.position(&topic, 0), end);
            end
        })
    };
    let (committed, uncommitted) = (
        latest(Isolation::ReadCommitted),
        latest(Isolation::ReadUncommitted),
    );
    // Stopped by its process id (the JVM is bash's exec'd child, so the same one).
    let _ = java.kill();
    let _ = java.wait();
    assert_eq!(line.trim(), "open", "the transaction was left open");
    // Round 0: offsets 0-9 and a commit marker at 10; round 1: 11-20 and an abort marker at
    // 21; the open transaction: 22-31.
    assert_eq!((committed, uncommitted), (Some(22), Some(32)));
}

/// Two brokers, a partition led by each, records in one of them only: the consumer's Fetch to
/// the idle leader waits out `max_wait` every time, and the other leader's answers must not
/// queue behind it. (Waiting on the leaders in turn took one `max_wait` per answer here.)
pub(crate) fn an_idle_leader_does_not_hold_back_the_busy_one(_shared: &str) {
    let dir = std::env::temp_dir().join(unique("ringwire-kafka-two"));
    let private = PrivateBroker(dir);
    let addr = broker_in(&private.0, "start");
    broker_in(&private.0, "add-broker");
    let mut conn = connect(&addr);
    // The second broker registers with the controller shortly after it answers.
    let deadline = Instant::now() + Duration::from_secs(30);
    while conn.metadata(None, |m| m.brokers.len()).unwrap() < 2 {
        assert!(
            Instant::now() < deadline,
            "the second broker never registered"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    let topic = unique("two-leaders");
    // Not `create`, whose readiness check asks the first broker about every partition.
    conn.create_topic(NewTopic {
        name: &topic,
        num_partitions: 2,
        replication_factor: 1,
        configs: &[],
    })
    .unwrap();
    let leaders = loop {
        let leaders: Vec<i32> = conn
            .metadata(Some(&[topic.as_str()]), |m| {
                let mut p: Vec<(i32, i32)> = m.topics[0]
                    .partitions
                    .iter()
                    .map(|p| (p.partition_index, p.leader_id))
                    .collect();
                p.sort_unstable();
                p.into_iter().map(|(_, leader)| leader).collect()
            })
            .unwrap();
        if leaders.len() == 2 && leaders.iter().all(|&l| l >= 0) {
            break leaders;
        }
        assert!(Instant::now() < deadline, "no leaders: {leaders:?}");
        std::thread::sleep(Duration::from_millis(100));
    };
    assert!(
        leaders[0] != leaders[1],
        "one broker leads both: {leaders:?}"
    );

    let n = 3_000;
    let max_wait = Duration::from_secs(2);
    let elapsed = runtime().block_on(async {
        let config = ProducerConfig {
            batch_size: 1024,
            linger: Duration::ZERO,
            ..ProducerConfig::default()
        };
        let producer = Producer::connect(&addr, config).await.unwrap();
        for i in 0..n {
            let value = format!("{i:0>100}");
            let record = ProducerRecord::new(&topic, value.as_bytes()).partition(0);
            producer.send(record).await.unwrap();
        }
        producer.flush().await.unwrap();

        let config = ConsumerConfig {
            max_wait,
            // A few batches per answer: the records take dozens of Fetches.
            partition_max_bytes: 4096,
            ..ConsumerConfig::default()
        };
        let mut consumer = Consumer::connect(&addr, config).await.unwrap();
        consumer.assign(&topic, Start::Earliest).await.unwrap();
        let started = Instant::now();
        let (mut got, mut answers) = (0, 0);
        while got < n {
            assert!(started.elapsed() < Duration::from_secs(60), "{got} of {n}");
            got += consumer.poll(|_, p, _| assert_eq!(p, 0)).await.unwrap();
            answers += 1;
        }
        assert!(answers > 10, "{answers} answers: too few to tell");
        println!("{n} records in {answers} answers, {:?}", started.elapsed());
        started.elapsed()
    });
    // In turn, every other wait would be the idle leader's `max_wait`.
    assert!(elapsed < max_wait * 3, "{elapsed:?}");
}

/// The pipelined producer with each acks setting (idempotence off, as acks other than All
/// need): every record lands once, in order; deliveries report offsets, except with acks =
/// 0, whose requests get no answer (offset -1).
pub(crate) fn every_acks_setting_delivers_in_order(bootstrap: &str) {
    let mut conn = connect(bootstrap);
    let n = 5_000;
    let values: Vec<String> = (0..n).map(|i| format!("record {i}")).collect();
    for acks in [Acks::None, Acks::Leader, Acks::All] {
        let topic = unique("acks");
        create(&mut conn, &topic, 1, &[]);
        runtime().block_on(async {
            let config = ProducerConfig {
                acks,
                idempotence: false,
                batch_size: 16 << 10,
                linger: Duration::from_millis(1),
                ..ProducerConfig::default()
            };
            let producer = Producer::connect(bootstrap, config).await.unwrap();
            let mut deliveries = Vec::new();
            for value in &values {
                let record = ProducerRecord::new(&topic, value.as_bytes()).partition(0);
                deliveries.push(producer.send(record).await.unwrap());
            }
            producer.flush().await.unwrap();
            for (i, delivery) in deliveries.into_iter().enumerate() {
                let offset = delivery.await.unwrap().offset;
                let want = if acks == Acks::None { -1 } else { i as i64 };
                assert_eq!(offset, want, "{acks:?} record {i}");
            }
        });
        let got = runtime().block_on(super::consume_all(bootstrap, &topic, n));
        let got: Vec<&[u8]> = got.iter().map(|r| r.value.as_deref().unwrap()).collect();
        let want: Vec<&[u8]> = values.iter().map(|v| v.as_bytes()).collect();
        assert!(
            got == want,
            "{acks:?}: {} records, out of order or changed",
            got.len()
        );
        assert_eq!(
            conn.list_offset(&topic, 0, LATEST).unwrap(),
            n as i64,
            "{acks:?}"
        );
    }
}

/// `seek` moves a partition's position at once: back, to hand records out again, while a
/// Fetch from the old position is in flight and answered with newer records (dropped, not
/// handed out ahead of the rewound ones); ahead, to skip records.
pub(crate) fn seek_rewinds_and_skips(bootstrap: &str) {
    let mut conn = connect(bootstrap);
    let topic = unique("seek");
    create(&mut conn, &topic, 1, &[]);
    let values = |range| values("v", range);
    runtime().block_on(async {
        let producer = Producer::connect(bootstrap, ProducerConfig::default())
            .await
            .unwrap();
        let produce = async |range| produce_to(&producer, &topic, 0, "v", range).await;
        let config = quick_consumer(Some(Reset::Latest));
        let mut consumer = Consumer::connect(bootstrap, config).await.unwrap();
        consumer.assign(&topic, Start::Earliest).await.unwrap();
        produce(0..10).await;
        assert_eq!(
            poll_until(&mut consumer, |c| c.position(&topic, 0) >= Some(10)).await,
            values(0..10)
        );
        // The next Fetch (from 10) is in flight; these records answer it.
        produce(10..20).await;
        consumer.seek(&topic, 0, 3).unwrap();
        assert_eq!(consumer.position(&topic, 0), Some(3));
        assert_eq!(
            poll_until(&mut consumer, |c| c.position(&topic, 0) >= Some(20)).await,
            values(3..20)
        );

        consumer.seek(&topic, 0, 15).unwrap();
        produce(20..22).await;
        assert_eq!(
            poll_until(&mut consumer, |c| c.position(&topic, 0) >= Some(22)).await,
            values(15..22)
        );

        let err = consumer.seek(&topic, 1, 0).unwrap_err();
        assert!(
            matches!(err, ClientError::NotAssigned { partition: 1, .. }),
            "{err}"
        );
    });
}

/// `Start::Time`: the first record stamped at or after the time, within a batch or at its
/// start; past the newest record, the end of the log. `seek_to_time` moves there later.
pub(crate) fn start_at_a_time(bootstrap: &str) {
    let mut conn = connect(bootstrap);
    let topic = unique("start-time");
    create(&mut conn, &topic, 1, &[]);
    // Two batches: records stamped t, t+1 s, t+2 s, then t+3 s.
    let t = super::now_ms() - 60_000;
    let record = |i: i64, value| NewRecord {
        timestamp: t + 1000 * i,
        key: None,
        value: Some(value),
        headers: &[],
    };
    let batches = [
        vec![record(0, b"a"), record(1, b"b"), record(2, b"c")],
        vec![record(3, b"d")],
    ];
    for batch in &batches {
        let mut bytes = Vec::new();
        BatchEncoder::new()
            .encode(&BatchOptions::default(), batch, &mut bytes)
            .unwrap();
        conn.produce(&topic, 0, &bytes, Acks::Leader).unwrap();
    }
    runtime().block_on(async {
        for (at, first) in [
            (t - 5000, 0),
            (t, 0),
            (t + 1, 1),
            (t + 2000, 2),
            (t + 2500, 3),
            (t + 3000, 3),
            (t + 3001, 4),
            (-1, 0),
        ] {
            let mut consumer = Consumer::connect(bootstrap, quick_consumer(None))
                .await
                .unwrap();
            consumer
                .assign_partition(&topic, 0, Start::Time(at))
                .await
                .unwrap();
            assert_eq!(consumer.position(&topic, 0), Some(first), "at {at}, t {t}");
        }
        // `seek_to_time` on a partition read to its end: back to a time, its records again.
        let mut consumer = Consumer::connect(bootstrap, quick_consumer(None))
            .await
            .unwrap();
        consumer.assign(&topic, Start::Earliest).await.unwrap();
        let mut got = Vec::new();
        let read_to_end = async |c: &mut Consumer, got: &mut Vec<String>| {
            while c.position(&topic, 0) < Some(4) {
                c.poll(|_, _, r| got.push(String::from_utf8_lossy(r.value.unwrap()).into()))
                    .await
                    .unwrap();
            }
        };
        read_to_end(&mut consumer, &mut got).await;
        consumer.seek_to_time(&topic, 0, t + 1500).await.unwrap();
        assert_eq!(consumer.position(&topic, 0), Some(2));
        read_to_end(&mut consumer, &mut got).await;
        assert_eq!(got, ["a", "b", "c", "d", "c", "d"]);
        consumer.seek_to_time(&topic, 0, t + 9000).await.unwrap();
        assert_eq!(consumer.position(&topic, 0), Some(4));
        let err = consumer.seek_to_time(&topic, 1, t).await.unwrap_err();
        assert!(matches!(err, ClientError::NotAssigned { .. }), "{err}");
    });
}

/// `pause` holds a partition back (its records, a Fetch in flight's included, wait for
/// `resume`, none lost), the others going on; with every partition paused, a poll waits
/// `max_wait` and hands out nothing.
pub(crate) fn pause_holds_a_partition_back(bootstrap: &str) {
    let mut conn = connect(bootstrap);
    let topic = unique("pause");
    create(&mut conn, &topic, 2, &[]);
    let values = |p: i32, range| values(&format!("p{p}-"), range);
    runtime().block_on(async {
        let producer = Producer::connect(bootstrap, ProducerConfig::default())
            .await
            .unwrap();
        let produce =
            async |p: i32, range| produce_to(&producer, &topic, p, &format!("p{p}-"), range).await;
        let config = quick_consumer(Some(Reset::Latest));
        let mut consumer = Consumer::connect(bootstrap, config).await.unwrap();
        consumer.assign(&topic, Start::Earliest).await.unwrap();
        produce(0, 0..10).await;
        produce(1, 0..10).await;
        consumer.pause(&topic, 1).unwrap();
        let got = poll_until(&mut consumer, |c| c.position(&topic, 0) >= Some(10)).await;
        assert_eq!(got, values(0, 0..10));
        // The next Fetch (partition 0 alone) is in flight; these records answer it.
        produce(0, 10..20).await;
        consumer.pause(&topic, 0).unwrap();
        for _ in 0..3 {
            let started = Instant::now();
            assert_eq!(consumer.poll(|_, _, _| panic!("paused")).await.unwrap(), 0);
            assert!(started.elapsed() >= Duration::from_millis(250));
        }
        consumer.resume(&topic, 1).unwrap();
        let got = poll_until(&mut consumer, |c| c.position(&topic, 1) >= Some(10)).await;
        assert_eq!(got, values(1, 0..10));
        consumer.resume(&topic, 0).unwrap();
        let got = poll_until(&mut consumer, |c| c.position(&topic, 0) >= Some(20)).await;
        assert_eq!(got, values(0, 10..20));
        let err = consumer.pause(&topic, 2).unwrap_err();
        assert!(
            matches!(err, ClientError::NotAssigned { partition: 2, .. }),
            "{err}"
        );
    });
}

/// The values handed out while `consumer` polls until `done` says.
async fn poll_until(consumer: &mut Consumer, done: impl Fn(&Consumer) -> bool) -> Vec<String> {
    let mut got = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(30);
    while !done(consumer) {
        assert!(Instant::now() < deadline, "stuck at {got:?}");
        consumer
            .poll(|_, _, r| got.push(String::from_utf8_lossy(r.value.unwrap()).into_owned()))
            .await
            .unwrap();
    }
    got
}

/// A position out of the log's range (a start past the end here; records deleted by
/// retention in life) goes where `offset_reset` says; with none, the poll says why.
pub(crate) fn an_offset_out_of_range_is_reset(bootstrap: &str) {
    let mut conn = connect(bootstrap);
    let topic = unique("out-of-range");
    create(&mut conn, &topic, 1, &[]);
    let values = |range| values("v", range);
    runtime().block_on(async {
        let producer = Producer::connect(bootstrap, ProducerConfig::default())
            .await
            .unwrap();
        let produce = async |range| produce_to(&producer, &topic, 0, "v", range).await;
        produce(0..5).await;
        let consumer = async |reset: Option<Reset>| {
            let mut consumer = Consumer::connect(bootstrap, quick_consumer(reset))
                .await
                .unwrap();
            consumer
                .assign_partition(&topic, 0, Start::At(1_000))
                .await
                .unwrap();
            consumer
        };
        let mut earliest = consumer(Some(Reset::Earliest)).await;
        // From 1,000 back to 0, then on to the end.
        let got = poll_until(&mut earliest, |c| c.position(&topic, 0) == Some(5)).await;
        assert_eq!(got, values(0..5));

        let mut latest = consumer(Some(Reset::Latest)).await;
        let got = poll_until(&mut latest, |c| c.position(&topic, 0) == Some(5)).await;
        assert!(got.is_empty(), "{got:?}");
        produce(5..7).await;
        let got = poll_until(&mut latest, |c| c.position(&topic, 0) >= Some(7)).await;
        assert_eq!(got, values(5..7));

        let mut none = consumer(None).await;
        let err = none.poll(|_, _, _| {}).await.unwrap_err();
        assert!(
            matches!(&err, ClientError::Kafka { code, .. } if *code == ErrorCode::OFFSET_OUT_OF_RANGE),
            "{err}"
        );
    });
}

/// `prefix` followed by each offset of `range`: the values [`produce_to`] writes.
fn values(prefix: &str, range: std::ops::Range<i64>) -> Vec<String> {
    range.map(|i| format!("{prefix}{i}")).collect()
}

/// Writes `values(prefix, range)` to a partition, each acknowledged before the next (so
/// each value's offset is its number, in a partition that started empty).
async fn produce_to(
    producer: &Producer,
    topic: &str,
    partition: i32,
    prefix: &str,
    range: std::ops::Range<i64>,
) {
    for value in values(prefix, range) {
        let record = ProducerRecord::new(topic, value.as_bytes()).partition(partition);
        producer.send(record).await.unwrap().await.unwrap();
    }
}

/// A consumer that waits 300 ms for records, positions out of range going to `reset`.
fn quick_consumer(reset: Option<Reset>) -> ConsumerConfig {
    ConsumerConfig {
        max_wait: Duration::from_millis(300),
        offset_reset: reset,
        ..ConsumerConfig::default()
    }
}
