//! Integration tests against a real Apache Kafka broker (KRaft, single node).
//!
//! `RINGWIRE_KAFKA_BOOTSTRAP=HOST:PORT` points them at a running broker; without it they start
//! one with `scripts/kafka/broker.sh start` (Kafka from Maven Central: Java 17 and Maven needed;
//! about 15 s the first time) and stop it at the end. `KAFKA_VERSION` picks the broker release.
//! A plain `main` (not libtest) so the broker is stopped however the tests end.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

mod admin;
mod groups;
mod idempotent;
mod modern_groups;
mod paused;
mod pipelined;
mod tls;
mod topics;
mod transactions;

use ringwire_io::{RingConfig, TransportConfig};
use ringwire_kafka::api::create_topics::NewTopic;
use ringwire_kafka::api::list_offsets::{EARLIEST, LATEST};
use ringwire_kafka::api::produce::Acks;
use ringwire_kafka::record::{BatchEncoder, BatchOptions, Compression, Header, NewRecord, Record};
use ringwire_kafka::{ApiKey, ErrorCode};
use ringwire_kafka_client::blocking::Connection;
use ringwire_kafka_client::{
    ClientConfig, ClientError, Consumer, ConsumerConfig, Producer, ProducerConfig, ProducerRecord,
    Start,
};
use ringwire_testkit::unique;

pub(crate) fn script() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../scripts/kafka/broker.sh")
}

fn broker(action: &str) -> String {
    broker_cmd(Command::new("bash").arg(script()).arg(action), action)
}

/// A broker of its own in `run_dir` (for the restart test, which must not restart a shared one).
fn broker_in(run_dir: &Path, action: &str) -> String {
    broker_cmd(
        Command::new("bash")
            .arg(script())
            .arg(action)
            .env("KAFKA_RUN_DIR", run_dir),
        action,
    )
}

pub(crate) fn broker_cmd(command: &mut Command, action: &str) -> String {
    let out = command.output().expect("run scripts/kafka/broker.sh");
    assert!(
        out.status.success(),
        "broker.sh {action} failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap().trim().to_owned()
}

fn connect(bootstrap: &str) -> Connection {
    Connection::connect(bootstrap, &ClientConfig::default()).expect("connect to the broker")
}

/// Creates `name` and waits until its partitions have a leader.
pub(crate) fn create(
    conn: &mut Connection,
    name: &str,
    partitions: i32,
    configs: &[(&str, Option<&str>)],
) {
    conn.create_topic(NewTopic {
        name,
        num_partitions: partitions,
        replication_factor: 1,
        configs,
    })
    .expect("create topic");
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let ready = conn
            .metadata(Some(&[name]), |m| {
                m.topics.iter().all(|t| {
                    t.error_code == ErrorCode::NONE
                        && t.partitions.len() == partitions as usize
                        && t.partitions.iter().all(|p| p.leader_id >= 0)
                })
            })
            .unwrap();
        // Metadata can name a leader a moment before the leader serves the partition
        // (ListOffsets then answers a retriable error such as NOT_LEADER_OR_FOLLOWER).
        let serving = ready
            && (0..partitions).all(|p| match conn.list_offset(name, p, LATEST) {
                Ok(_) => true,
                Err(ClientError::Kafka { code, .. }) if code.is_retriable() => false,
                Err(e) => panic!("ListOffsets on new topic {name}: {e}"),
            });
        if serving {
            return;
        }
        assert!(Instant::now() < deadline, "topic {name} never got leaders");
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// An owned copy of a fetched record, to compare with what was produced.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Owned {
    offset: i64,
    timestamp: i64,
    key: Option<Vec<u8>>,
    value: Option<Vec<u8>>,
    headers: Vec<(String, Option<Vec<u8>>)>,
}

impl Owned {
    fn of(record: Record<'_>) -> Self {
        Owned {
            offset: record.offset,
            timestamp: record.timestamp,
            key: record.key.map(<[u8]>::to_vec),
            value: record.value.map(<[u8]>::to_vec),
            headers: record
                .headers
                .map(|h| (h.key.to_owned(), h.value.map(<[u8]>::to_vec)))
                .collect(),
        }
    }
}

/// `n` records with varied keys, values (one null), headers (one with a null value).
fn sample(n: usize, base_offset: i64, ts: i64) -> Vec<Owned> {
    let owned: Vec<Owned> = (0..n)
        .map(|i| Owned {
            offset: base_offset + i as i64,
            timestamp: ts + i as i64,
            key: (i % 3 != 0).then(|| format!("key-{i}").into_bytes()),
            value: (i != 1).then(|| format!("value {i} ").repeat(i % 7 + 1).into_bytes()),
            headers: (0..i % 3)
                .map(|h| (format!("h{h}"), (h != 1).then(|| vec![h as u8; h + 1])))
                .collect(),
        })
        .collect();
    owned
}

fn encode(records: &[NewRecord<'_>], compression: Compression) -> Vec<u8> {
    let mut out = Vec::new();
    let options = BatchOptions {
        compression,
        ..BatchOptions::default()
    };
    BatchEncoder::new()
        .encode(&options, records, &mut out)
        .unwrap();
    out
}

/// An uncompressed batch of one record holding `value`, stamped now.
pub(crate) fn one_record(value: &[u8]) -> Vec<u8> {
    let record = NewRecord {
        timestamp: now_ms(),
        key: None,
        value: Some(value),
        headers: &[],
    };
    encode(&[record], Compression::None)
}

/// Re-encodes `owned` (offsets ignored) with `compression`.
fn encode_owned(owned: &[Owned], compression: Compression) -> Vec<u8> {
    let header_sets: Vec<Vec<Header<'_>>> = owned
        .iter()
        .map(|o| {
            o.headers
                .iter()
                .map(|(k, v)| Header {
                    key: k,
                    value: v.as_deref(),
                })
                .collect()
        })
        .collect();
    let records: Vec<NewRecord<'_>> = owned
        .iter()
        .zip(&header_sets)
        .map(|(o, headers)| NewRecord {
            timestamp: o.timestamp,
            key: o.key.as_deref(),
            value: o.value.as_deref(),
            headers,
        })
        .collect();
    encode(&records, compression)
}

fn fetch_all(conn: &mut Connection, topic: &str, from: i64, want: usize) -> Vec<Owned> {
    let mut got = Vec::new();
    let mut offset = from;
    let deadline = Instant::now() + Duration::from_secs(20);
    while got.len() < want {
        assert!(
            Instant::now() < deadline,
            "only {} of {want} records",
            got.len()
        );
        let walked = conn
            .fetch(topic, 0, offset, 1 << 20, 500, |r| got.push(Owned::of(r)))
            .unwrap();
        offset = walked.next_offset;
    }
    got
}

/// A current-thread runtime for the tests of the async clients.
fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

/// `want` records of every partition of `topic` from the start, with a [`Consumer`], in the
/// order they came.
async fn consume_all(bootstrap: &str, topic: &str, want: usize) -> Vec<Owned> {
    let mut consumer = Consumer::connect(bootstrap, ConsumerConfig::default())
        .await
        .unwrap();
    consumer.assign(topic, Start::Earliest).await.unwrap();
    let mut got = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(30);
    while got.len() < want {
        assert!(
            Instant::now() < deadline,
            "only {} of {want} records",
            got.len()
        );
        consumer
            .poll(|_, _, r| got.push(Owned::of(r)))
            .await
            .unwrap();
    }
    got
}

/// The inode numbers of the process's open sockets.
pub(crate) fn sockets() -> std::collections::BTreeSet<u64> {
    std::fs::read_dir("/proc/self/fd")
        .unwrap()
        .filter_map(|fd| std::fs::read_link(fd.ok()?.path()).ok())
        .filter_map(|target| {
            let target = target.to_str()?;
            target
                .strip_prefix("socket:[")?
                .strip_suffix(']')?
                .parse()
                .ok()
        })
        .collect()
}

pub(crate) fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64
}

// ---- the tests ----

fn negotiation(bootstrap: &str) {
    let conn = connect(bootstrap);
    for key in ApiKey::ALL {
        let broker = conn
            .broker_versions()
            .api_keys
            .iter()
            .find(|r| r.api_key == key.code())
            .unwrap_or_else(|| panic!("broker does not serve {key}"));
        let ours = key.versions();
        let want = broker.max_version.min(*ours.end());
        assert!(want >= broker.min_version.max(*ours.start()), "{key}");
        assert_eq!(conn.versions().version(key), Some(want), "{key}");
    }
    println!(
        "    negotiated: {:?}",
        ApiKey::ALL.map(|k| (k, conn.versions().version(k).unwrap()))
    );
}

fn create_topics_and_metadata(bootstrap: &str) {
    let mut conn = connect(bootstrap);
    let name = unique("meta");
    create(&mut conn, &name, 3, &[("retention.ms", Some("600000"))]);
    let again = conn.create_topic(NewTopic {
        name: &name,
        num_partitions: 3,
        replication_factor: 1,
        configs: &[],
    });
    // With the broker's own words, which name the topic.
    assert!(
        matches!(
            &again,
            Err(ClientError::Kafka {
                code: ErrorCode::TOPIC_ALREADY_EXISTS,
                message: Some(message),
                ..
            }) if message.contains(&name)
        ),
        "{again:?}"
    );
    let port: i32 = bootstrap.rsplit(':').next().unwrap().parse().unwrap();
    conn.metadata(Some(&[&name]), |m| {
        assert_eq!(m.brokers.len(), 1);
        assert_eq!((m.brokers[0].host, m.brokers[0].port), ("127.0.0.1", port));
        assert!(m.cluster_id.is_some_and(|id| id.len() == 22));
        let topic = &m.topics[0];
        assert_eq!(topic.name, Some(name.as_str()));
        assert_ne!(topic.topic_id, [0; 16]);
        let mut indexes: Vec<i32> = topic.partitions.iter().map(|p| p.partition_index).collect();
        indexes.sort_unstable();
        assert_eq!(indexes, [0, 1, 2]);
        for p in &topic.partitions {
            assert_eq!(p.leader_id, m.brokers[0].node_id);
            assert_eq!(p.isr_nodes, [p.leader_id]);
        }
    })
    .unwrap();
    let unknown = unique("absent");
    conn.metadata(Some(&[&unknown]), |m| {
        assert_eq!(
            m.topics[0].error_code,
            ErrorCode::UNKNOWN_TOPIC_OR_PARTITION
        );
    })
    .unwrap();
}

fn produce_and_fetch_every_codec_and_ack(bootstrap: &str) {
    let mut conn = connect(bootstrap);
    let topic = unique("codecs");
    create(&mut conn, &topic, 1, &[]);
    let mut expected = Vec::new();
    let mut next = 0;
    for codec in Compression::ALL {
        for acks in [Acks::Leader, Acks::All, Acks::None] {
            let mut owned = sample(25, next, now_ms());
            let batch = encode_owned(&owned, codec);
            let base = conn.produce(&topic, 0, &batch, acks).unwrap();
            match acks {
                Acks::None => assert_eq!(base, None),
                _ => assert_eq!(base, Some(next), "{codec} {acks:?}"),
            }
            // Same connection, so the broker has handled the acks=0 produce before this.
            let latest = conn.list_offset(&topic, 0, LATEST).unwrap();
            assert_eq!(latest, next + 25, "{codec} {acks:?}");
            for (i, o) in owned.iter_mut().enumerate() {
                o.offset = next + i as i64;
            }
            next += 25;
            expected.extend(owned);
        }
    }
    let got = fetch_all(&mut conn, &topic, 0, expected.len());
    assert_eq!(got.len(), expected.len());
    for (g, e) in got.iter().zip(&expected) {
        assert_eq!(g, e);
    }
}

/// A refused Produce says why, as the broker put it (v8+: `error_message` and the records it
/// names): here a record without a key on a compacted topic, from a one-shot call and from
/// the producer.
fn refused_records_say_why(bootstrap: &str) {
    let mut conn = connect(bootstrap);
    let topic = unique("compacted");
    create(&mut conn, &topic, 1, &[("cleanup.policy", Some("compact"))]);
    let keyless = NewRecord {
        timestamp: now_ms(),
        key: None,
        value: Some(b"no key"),
        headers: &[],
    };
    let batch = encode(&[keyless], Compression::None);
    let said = |e: &ClientError| match e {
        ClientError::Kafka {
            api: ApiKey::Produce,
            code: ErrorCode(87), // INVALID_RECORD
            message: Some(message),
        } => message.clone(),
        other => panic!("expected INVALID_RECORD with a message, got {other:?}"),
    };
    let refused = conn.produce(&topic, 0, &batch, Acks::Leader).unwrap_err();
    let message = said(&refused);
    assert!(
        message.starts_with("record 0: ") && message.contains("without key"),
        "{message}"
    );
    assert!(refused.to_string().contains(&message), "{refused}");

    let from_producer = runtime().block_on(async {
        let producer = Producer::connect(bootstrap, ProducerConfig::default())
            .await
            .unwrap();
        let record = ProducerRecord::new(&topic, b"no key either").partition(0);
        let delivery = producer.send(record).await.unwrap();
        delivery.await.unwrap_err()
    });
    assert!(
        said(from_producer.error()).contains("without key"),
        "{from_producer}"
    );
}

fn fetch_from_the_middle_of_a_compressed_batch(bootstrap: &str) {
    let mut conn = connect(bootstrap);
    let topic = unique("middle");
    create(&mut conn, &topic, 1, &[]);
    let owned = sample(10, 0, now_ms());
    for codec in [Compression::Gzip, Compression::None] {
        let base = conn
            .produce(&topic, 0, &encode_owned(&owned, codec), Acks::Leader)
            .unwrap()
            .unwrap();
        let mut got = Vec::new();
        let walked = conn
            .fetch(&topic, 0, base + 6, 1 << 20, 100, |r| {
                got.push(Owned::of(r))
            })
            .unwrap();
        assert_eq!(walked.records, 4, "{codec}");
        assert_eq!(walked.next_offset, base + 10, "{codec}");
        assert_eq!(walked.partial_tail, 0, "{codec}");
        let offsets: Vec<i64> = got.iter().map(|o| o.offset).collect();
        assert_eq!(offsets, [base + 6, base + 7, base + 8, base + 9], "{codec}");
        assert_eq!(got[0].value, owned[6].value);
    }
}

fn list_offsets_earliest_and_latest(bootstrap: &str) {
    let mut conn = connect(bootstrap);
    let topic = unique("offsets");
    create(&mut conn, &topic, 1, &[]);
    assert_eq!(conn.list_offset(&topic, 0, EARLIEST).unwrap(), 0);
    assert_eq!(conn.list_offset(&topic, 0, LATEST).unwrap(), 0);
    for _ in 0..3 {
        let owned = sample(7, 0, now_ms());
        conn.produce(
            &topic,
            0,
            &encode_owned(&owned, Compression::Lz4),
            Acks::All,
        )
        .unwrap();
    }
    assert_eq!(conn.list_offset(&topic, 0, EARLIEST).unwrap(), 0);
    assert_eq!(conn.list_offset(&topic, 0, LATEST).unwrap(), 21);
    let missing = conn.list_offset(&topic, 5, LATEST);
    assert!(
        matches!(missing, Err(ClientError::Kafka { code, .. }) if code.is_retriable()),
        "{missing:?}"
    );
}

fn fetch_larger_than_the_ring(bootstrap: &str) {
    let mut conn = connect(bootstrap);
    let topic = unique("large");
    create(
        &mut conn,
        &topic,
        1,
        &[("max.message.bytes", Some("4194304"))],
    );
    // One 1.5 MiB record: the broker returns the first batch whole, whatever max_bytes says.
    let value = vec![0x5a; 3 << 19];
    let batch = encode(
        &[NewRecord {
            timestamp: now_ms(),
            key: None,
            value: Some(&value),
            headers: &[],
        }],
        Compression::None,
    );
    conn.produce(&topic, 0, &batch, Acks::Leader).unwrap();

    let small = |max: usize| ClientConfig {
        transport: TransportConfig {
            rx: RingConfig::with_capacity(64 * 1024).max_capacity(max),
            tx: RingConfig::with_capacity(64 * 1024).max_capacity(max),
        },
        ..ClientConfig::default()
    };
    let mut growing = Connection::connect(bootstrap, &small(4 << 20)).unwrap();
    assert_eq!(growing.rx_capacity(), 64 * 1024);
    let mut len = 0;
    let walked = growing
        .fetch(&topic, 0, 0, 64 * 1024, 100, |r| {
            len = r.value.unwrap().len();
            assert!(r.value.unwrap().iter().all(|&b| b == 0x5a));
        })
        .unwrap();
    assert_eq!((walked.records, len), (1, value.len()));
    assert!(growing.rx_capacity() >= value.len());

    let mut bounded = Connection::connect(bootstrap, &small(256 * 1024)).unwrap();
    let err = bounded
        .fetch(&topic, 0, 0, 64 * 1024, 100, |_| panic!("no record fits"))
        .unwrap_err();
    assert!(
        matches!(err, ClientError::ResponseTooLarge { max, requested } if max == 256 * 1024 && requested > value.len()),
        "{err:?}"
    );
    assert!(err.to_string().contains("max_capacity"), "{err}");

    // A ring that may grow but a response limit below the answer: named as that limit.
    let limited = ClientConfig {
        limits: ringwire_kafka::Limits {
            max_response_len: 256 * 1024,
            ..ringwire_kafka::Limits::default()
        },
        ..ClientConfig::default()
    };
    let mut limited = Connection::connect(bootstrap, &limited).unwrap();
    let err = limited
        .fetch(&topic, 0, 0, 64 * 1024, 100, |_| panic!("no record fits"))
        .unwrap_err();
    assert!(
        matches!(err, ClientError::ResponseOverLimit { max, len } if max == 256 * 1024 && len > value.len()),
        "{err:?}"
    );
    assert!(err.to_string().contains("max_response_len"), "{err}");
}

fn pipelined_requests_keep_their_order(bootstrap: &str) {
    let mut conn = connect(bootstrap);
    let topic = unique("pipeline");
    create(&mut conn, &topic, 1, &[]);
    let owned = sample(3, 0, now_ms());
    let batch = encode_owned(&owned, Compression::Zstd);
    let partitions = [ringwire_kafka::api::produce::ProducePartition {
        index: 0,
        records: &batch,
    }];
    let request = ringwire_kafka::api::produce::ProduceRequest {
        transactional_id: None,
        acks: Acks::Leader,
        timeout_ms: 10_000,
        topics: &[ringwire_kafka::api::produce::ProduceTopic {
            name: &topic,
            partitions: &partitions,
        }],
    };
    let sent: Vec<i32> = (0..20)
        .map(|_| conn.send(&request).unwrap().correlation_id)
        .collect();
    conn.flush().unwrap();
    assert_eq!(conn.in_flight(), 20);
    for (i, id) in sent.iter().enumerate() {
        let base = conn
            .recv(|frame| {
                assert_eq!(frame.correlation_id, *id);
                let response =
                    frame.decode::<ringwire_kafka::api::produce::ProduceResponse<'_>>()?;
                Ok(response.topics[0].partitions[0].base_offset)
            })
            .unwrap();
        assert_eq!(base, 3 * i as i64);
    }
    assert_eq!(conn.in_flight(), 0);
}

/// Checks that kcat (librdkafka), an implementation no one here wrote, is installed.
fn kcat() {
    let found = Command::new("kcat")
        .arg("-V")
        .output()
        .is_ok_and(|o| o.status.success());
    assert!(
        found,
        "kcat is not installed: apt-get install kcat (.ci/run does)"
    );
}

/// kcat's output for `args`, `stdin` fed to it.
fn kcat_run(args: &[&str], stdin: &[u8]) -> Vec<u8> {
    use std::io::Write;
    use std::process::Stdio;
    let mut child = Command::new("kcat")
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn kcat");
    // Fed from a thread: kcat may write output before it has read all of its input.
    let mut input = child.stdin.take().unwrap();
    let stdin = stdin.to_vec();
    let feeder = std::thread::spawn(move || input.write_all(&stdin));
    let out = child.wait_with_output().unwrap();
    feeder.join().unwrap().unwrap();
    assert!(
        out.status.success(),
        "kcat {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

fn ringwire_produces_kcat_consumes(bootstrap: &str) {
    kcat();
    let mut conn = connect(bootstrap);
    let topic = unique("to-kcat");
    create(&mut conn, &topic, 1, &[]);
    let mut want = String::new();
    let mut offset = 0;
    for codec in Compression::ALL {
        let owned: Vec<Owned> = (0..5)
            .map(|i| Owned {
                offset: offset + i,
                timestamp: 1_700_000_000_000 + i,
                key: (i != 0).then(|| format!("k{i}").into_bytes()),
                value: (i != 1).then(|| format!("{codec} value {i}").into_bytes()),
                headers: (0..i % 3)
                    .map(|h| (format!("h{h}"), Some(format!("x{i}{h}").into_bytes())))
                    .collect(),
            })
            .collect();
        runtime().block_on(async {
            let config = ProducerConfig {
                compression: codec,
                ..ProducerConfig::default()
            };
            let producer = Producer::connect(bootstrap, config).await.unwrap();
            for o in &owned {
                let headers: Vec<Header<'_>> = o
                    .headers
                    .iter()
                    .map(|(key, value)| Header {
                        key,
                        value: value.as_deref(),
                    })
                    .collect();
                let record = ProducerRecord {
                    topic: &topic,
                    partition: Some(0),
                    key: o.key.as_deref(),
                    value: o.value.as_deref(),
                    headers: &headers,
                    timestamp: Some(o.timestamp),
                };
                producer.send(record).await.unwrap();
            }
            producer.flush().await.unwrap();
        });
        for o in &owned {
            let text = |b: &Option<Vec<u8>>| {
                b.as_ref()
                    .map_or("NULL".to_owned(), |b| String::from_utf8(b.clone()).unwrap())
            };
            let headers: Vec<String> = o
                .headers
                .iter()
                .map(|(k, v)| format!("{k}={}", text(v)))
                .collect();
            want += &format!(
                "{}|{}|{}|{}|{}\n",
                o.offset,
                o.timestamp,
                text(&o.key),
                text(&o.value),
                headers.join(",")
            );
        }
        offset += 5;
    }
    let got = kcat_run(
        &[
            "-b",
            bootstrap,
            "-C",
            "-t",
            &topic,
            "-p",
            "0",
            "-o",
            "beginning",
            "-e",
            "-Z",
            "-q",
            "-f",
            "%o|%T|%k|%s|%h\n",
        ],
        b"",
    );
    assert_eq!(String::from_utf8(got).unwrap(), want);
}

fn kcat_produces_ringwire_consumes(bootstrap: &str) {
    kcat();
    let mut conn = connect(bootstrap);
    let topic = unique("from-kcat");
    create(&mut conn, &topic, 1, &[]);
    let mut want = Vec::new();
    for codec in ["none", "gzip", "snappy", "lz4", "zstd"] {
        // With -Z an empty key or value is sent as null: every tenth record has a null key,
        // and another tenth a null value.
        let lines: Vec<(Option<String>, Option<String>)> = (0..50)
            .map(|i| {
                (
                    (i % 10 != 3).then(|| format!("{codec}-key-{i}")),
                    (i % 10 != 4).then(|| format!("{codec} value {i} ").repeat(i % 9 + 1)),
                )
            })
            .collect();
        let input: String = lines
            .iter()
            .map(|(k, v)| {
                let text = |t: &Option<String>| t.clone().unwrap_or_default();
                format!("{}\t{}\n", text(k), text(v))
            })
            .collect();
        kcat_run(
            &[
                "-b",
                bootstrap,
                "-P",
                "-t",
                &topic,
                "-p",
                "0",
                "-K",
                "\t",
                "-z",
                codec,
                "-Z",
                "-H",
                "codec=",
                "-H",
                &format!("name={codec}"),
                "-H",
                "null",
                "-q",
            ],
            input.as_bytes(),
        );
        want.extend(lines.into_iter().map(|line| (codec, line)));
    }
    let got = runtime().block_on(consume_all(bootstrap, &topic, want.len()));
    assert_eq!(got.len(), want.len());
    for (i, (g, (codec, (k, v)))) in got.iter().zip(&want).enumerate() {
        assert_eq!(g.offset, i as i64);
        assert_eq!(g.key.as_deref(), k.as_deref().map(str::as_bytes));
        assert_eq!(g.value.as_deref(), v.as_deref().map(str::as_bytes));
        assert_eq!(
            g.headers,
            [
                ("codec".to_owned(), Some(Vec::new())),
                ("name".to_owned(), Some(codec.as_bytes().to_vec())),
                ("null".to_owned(), None),
            ]
        );
    }
}

/// A new one-partition topic taking batches of up to 16 MiB.
fn big_topic(conn: &mut Connection, prefix: &str) -> String {
    let topic = unique(prefix);
    create(conn, &topic, 1, &[("max.message.bytes", Some("16777216"))]);
    topic
}

fn ten_megabyte_batch_round_trips(bootstrap: &str) {
    let mut conn = connect(bootstrap);
    let topic = big_topic(&mut conn, "ten-mb");
    // 10 MiB over 640 records of 16 KiB, each value distinct so a misplaced byte shows.
    let values: Vec<Vec<u8>> = (0..640u32)
        .map(|i| (0..16 * 1024u32).map(|j| (i * 31 + j) as u8).collect())
        .collect();
    let records: Vec<NewRecord<'_>> = values
        .iter()
        .map(|v| NewRecord {
            timestamp: now_ms(),
            key: Some(&v[..8]),
            value: Some(v),
            headers: &[],
        })
        .collect();
    for codec in [Compression::None, Compression::Zstd] {
        let batch = encode(&records, codec);
        let base = conn.produce(&topic, 0, &batch, Acks::All).unwrap().unwrap();
        let mut got = 0;
        let walked = conn
            .fetch(&topic, 0, base, 16 << 20, 1000, |r| {
                let i = (r.offset - base) as usize;
                assert_eq!(r.value, Some(&values[i][..]), "{codec} record {i}");
                got += 1;
            })
            .unwrap();
        assert_eq!((got, walked.next_offset), (640, base + 640), "{codec}");
    }
}

/// A 10 MiB batch each way between ringwire and kcat: 640 records of 16 KiB, one LZ4 batch
/// from ringwire read by kcat, then one batch from kcat (lingering until every line is in)
/// read by ringwire, byte for byte.
fn ten_megabyte_batches_to_and_from_kcat(bootstrap: &str) {
    kcat();
    let mut conn = connect(bootstrap);
    let topic = big_topic(&mut conn, "ten-mb-kcat");
    // Letters only, each value distinct, so kcat's line-per-record input can carry them.
    let values: Vec<Vec<u8>> = (0..640u32)
        .map(|i| {
            (0..16 * 1024u32)
                .map(|j| b'a' + ((i * 31 + j) % 26) as u8)
                .collect()
        })
        .collect();
    let records: Vec<NewRecord<'_>> = values
        .iter()
        .map(|v| NewRecord {
            timestamp: now_ms(),
            key: None,
            value: Some(v),
            headers: &[],
        })
        .collect();
    let batch = encode(&records, Compression::Lz4);
    conn.produce(&topic, 0, &batch, Acks::All).unwrap();
    let big = "message.max.bytes=16777216";
    let read = kcat_run(
        &[
            "-b",
            bootstrap,
            "-C",
            "-t",
            &topic,
            "-p",
            "0",
            "-o",
            "beginning",
            "-c",
            "640",
            "-e",
            "-q",
            "-X",
            big,
            "-f",
            "%s",
        ],
        b"",
    );
    assert!(read == values.concat(), "kcat read {} bytes", read.len());

    let lines: Vec<u8> = values
        .iter()
        .flat_map(|v| [&v[..], b"\n"].concat())
        .collect();
    kcat_run(
        &[
            "-b",
            bootstrap,
            "-P",
            "-t",
            &topic,
            "-p",
            "0",
            "-q",
            "-X",
            big,
            "-X",
            "batch.size=16777216",
            "-X",
            "batch.num.messages=1000000",
            "-X",
            "linger.ms=2000",
        ],
        &lines,
    );
    // max_bytes 1: the broker answers with the first batch alone (whole), so 640 records in
    // one answer means kcat sent them as one batch.
    let mut got = 0;
    conn.fetch(&topic, 0, 640, 1, 1000, |r| {
        let i = (r.offset - 640) as usize;
        assert!(r.value == Some(&values[i][..]), "record {i}");
        got += 1;
    })
    .unwrap();
    assert_eq!(got, 640);
}

/// One-shot calls dropped midway (a timeout around them, say): a produce dropped while its
/// answer is awaited has that answer read and dropped when it comes, not handed to the next
/// call; a consumer whose polls are dropped while they wait still hands out every record once.
fn one_shot_calls_dropped_midway(bootstrap: &str) {
    let topic = unique("dropped");
    create(&mut connect(bootstrap), &topic, 1, &[]);
    runtime().block_on(async {
        let config = ClientConfig::default();
        let mut conn = ringwire_kafka_client::Connection::connect(bootstrap, &config)
            .await
            .unwrap();
        // Sent whole at the first poll, then dropped while waiting for the answer.
        assert!(poll_once(conn.produce(
            &topic,
            0,
            &one_record(b"first"),
            Acks::All
        )));
        let second = conn
            .produce(&topic, 0, &one_record(b"second"), Acks::All)
            .await;
        assert_eq!(second.unwrap(), Some(1), "the second gets its own answer");
        assert_eq!(conn.list_offset(&topic, 0, LATEST).await.unwrap(), 2);

        // A consumer whose polls are dropped while they wait still hands out every record
        // once, in order.
        let mut consumer = Consumer::connect(bootstrap, ConsumerConfig::default())
            .await
            .unwrap();
        consumer.assign(&topic, Start::Earliest).await.unwrap();
        let mut got = Vec::new();
        for _ in 0..3 {
            assert!(poll_once(consumer.poll(|_, _, r| got.push(r.offset))));
        }
        let deadline = Instant::now() + Duration::from_secs(30);
        while got.len() < 2 {
            assert!(Instant::now() < deadline, "only {got:?}");
            consumer.poll(|_, _, r| got.push(r.offset)).await.unwrap();
        }
        assert_eq!(got, [0, 1]);
    });
}

/// Waiting for an answer that never comes fails at once: `call` refuses a Produce with
/// acks = 0 unsent, and `recv` with nothing in flight, or only such a Produce, refuses too.
/// Sent with `send`, that Produce still lands.
fn waits_for_no_answer_fail_at_once(bootstrap: &str) {
    use ringwire_kafka::api::produce::{ProducePartition, ProduceRequest, ProduceTopic};

    let topic = unique("unanswered");
    create(&mut connect(bootstrap), &topic, 1, &[]);
    let batch = one_record(b"unanswered");
    let partitions = [ProducePartition {
        index: 0,
        records: &batch,
    }];
    let topics = [ProduceTopic {
        name: &topic,
        partitions: &partitions,
    }];
    let request = ProduceRequest {
        transactional_id: None,
        acks: Acks::None,
        timeout_ms: 30_000,
        topics: &topics,
    };
    runtime().block_on(async {
        let config = ClientConfig::default();
        let mut conn = ringwire_kafka_client::Connection::connect(bootstrap, &config)
            .await
            .unwrap();
        let err = at_once(conn.call(&request, |_| Ok(()))).await;
        assert!(
            matches!(err, Err(ClientError::NoResponseAwaited)),
            "{err:?}"
        );
        let err = at_once(conn.recv(|_| Ok(()))).await;
        assert!(
            matches!(err, Err(ClientError::NoResponseAwaited)),
            "{err:?}"
        );
        assert_eq!(
            conn.list_offset(&topic, 0, LATEST).await.unwrap(),
            0,
            "nothing sent"
        );

        let sent = conn.send(&request).await.unwrap();
        assert!(!sent.expects_response);
        conn.flush().await.unwrap();
        let err = at_once(conn.recv(|_| Ok(()))).await;
        assert!(
            matches!(err, Err(ClientError::NoResponseAwaited)),
            "{err:?}"
        );
        let deadline = Instant::now() + Duration::from_secs(30);
        while conn.list_offset(&topic, 0, LATEST).await.unwrap() < 1 {
            assert!(
                Instant::now() < deadline,
                "the acks = 0 produce never landed"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    });
}

/// `call`'s outcome, which must come within seconds.
async fn at_once<T>(call: impl std::future::Future<Output = T>) -> T {
    tokio::time::timeout(Duration::from_secs(5), call)
        .await
        .expect("an outcome at once")
}

/// Polls `call` once, then drops it; whether it was still pending.
fn poll_once<T>(call: impl std::future::Future<Output = T>) -> bool {
    use std::task::{Context, Poll, Waker};
    let mut call = std::pin::pin!(call);
    let polled = call.as_mut().poll(&mut Context::from_waker(Waker::noop()));
    matches!(polled, Poll::Pending)
}

/// A produce dropped halfway through sending its batch (which goes out from the caller's
/// buffer, so the rest cannot stay queued) leaves the connection refusing every later call
/// with a clear error, instead of sending the torn request's remains. The peer is a stand-in
/// that answers ApiVersions and then stops reading: a real broker reads as fast as it can,
/// so no send of a size it accepts would reliably stop halfway.
fn a_send_dropped_halfway_tears_the_connection(_bootstrap: &str) {
    use std::io::{Read, Write};

    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    let (hold, stop) = std::sync::mpsc::channel::<()>();
    let peer = std::thread::spawn(move || {
        let (mut s, _) = listener.accept().unwrap();
        let mut size = [0; 4];
        s.read_exact(&mut size).unwrap();
        let mut request = vec![0; u32::from_be_bytes(size) as usize];
        s.read_exact(&mut request).unwrap();
        // ApiVersions v3's answer: response header v0 (the correlation id), then error 0,
        // a compact array of one API (Produce, v3 to v9, no tags), throttle 0, no tags.
        let mut body = request[4..8].to_vec();
        body.extend_from_slice(&[0, 0, 2, 0, 0, 0, 3, 0, 9, 0, 0, 0, 0, 0, 0]);
        let mut answer = (body.len() as u32).to_be_bytes().to_vec();
        answer.extend_from_slice(&body);
        s.write_all(&answer).unwrap();
        // Then read nothing more until the test is done.
        let _ = stop.recv();
    });
    let batch = vec![7u8; 16 << 20];
    runtime().block_on(async {
        let config = ClientConfig::default();
        let mut conn = ringwire_kafka_client::Connection::connect(&addr, &config)
            .await
            .unwrap();
        assert!(poll_once(conn.produce("t", 0, &batch, Acks::All)));
        // At once: the stand-in reads nothing more, so a send would wait forever.
        let later = conn.produce("t", 0, b"", Acks::All);
        let err = tokio::time::timeout(Duration::from_secs(5), later)
            .await
            .expect("refused at once")
            .unwrap_err();
        assert!(matches!(err, ClientError::Broken(_)), "{err}");
        let err = conn.flush().await.unwrap_err();
        assert!(matches!(err, ClientError::Broken(_)), "{err}");
        let err = conn.recv(|_| Ok(())).await.unwrap_err();
        assert!(matches!(err, ClientError::Broken(_)), "{err}");
    });
    drop(hold);
    peer.join().unwrap();
}

/// Stops a private broker and removes its directory however the test ends.
pub(crate) struct PrivateBroker(PathBuf);

impl Drop for PrivateBroker {
    fn drop(&mut self) {
        broker_in(&self.0, "stop");
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

type Test = (&'static str, fn(&str));

const TESTS: &[Test] = &[
    ("negotiation", negotiation),
    (
        "committed_transactions_are_read_and_aborted_ones_are_not",
        transactions::committed_transactions_are_read_and_aborted_ones_are_not,
    ),
    (
        "a_second_producer_with_the_id_fences_the_first",
        transactions::a_second_producer_with_the_id_fences_the_first,
    ),
    (
        "a_record_refused_dooms_its_transaction_and_abort_recovers",
        transactions::a_record_refused_dooms_its_transaction_and_abort_recovers,
    ),
    (
        "a_group_member_commits_what_it_consumed_with_a_transaction",
        transactions::a_group_member_commits_what_it_consumed_with_a_transaction,
    ),
    (
        "committed_offsets_shared_with_kcat",
        groups::committed_offsets_shared_with_kcat,
    ),
    (
        "members_share_partitions_and_take_them_over",
        groups::members_share_partitions_and_take_them_over,
    ),
    (
        "a_member_that_vanishes_is_replaced",
        groups::a_member_that_vanishes_is_replaced,
    ),
    (
        "auto_commit_commits_what_polls_handed_out",
        groups::auto_commit_commits_what_polls_handed_out,
    ),
    (
        "members_dropped_while_paused_hand_out_nothing_twice",
        groups::members_dropped_while_paused_hand_out_nothing_twice,
    ),
    (
        "a_topic_created_after_subscribing_is_shared",
        groups::a_topic_created_after_subscribing_is_shared,
    ),
    (
        "a_busy_member_stays_in_the_group",
        groups::a_busy_member_stays_in_the_group,
    ),
    (
        "a_member_not_polled_leaves_the_group",
        groups::a_member_not_polled_leaves_the_group,
    ),
    (
        "a_static_member_comes_back_without_a_rebalance",
        groups::a_static_member_comes_back_without_a_rebalance,
    ),
    (
        "consumer_protocol_members_move_partitions_one_at_a_time",
        modern_groups::members_move_partitions_one_at_a_time,
    ),
    (
        "a_consumer_protocol_member_not_polled_leaves_and_comes_back",
        modern_groups::a_member_not_polled_leaves_and_comes_back,
    ),
    (
        "a_java_consumer_protocol_member_shares_the_group",
        modern_groups::a_java_member_shares_the_group,
    ),
    (
        "a_static_consumer_protocol_member_comes_back_to_its_partition",
        modern_groups::a_static_member_comes_back_to_its_partition,
    ),
    (
        "a_consumer_protocol_pattern_takes_in_topics_created_later",
        modern_groups::a_pattern_takes_in_topics_created_later,
    ),
    (
        "fenced_consumer_protocol_members_join_again",
        modern_groups::fenced_members_join_again,
    ),
    (
        "a_classic_group_takes_in_a_consumer_protocol_member",
        modern_groups::a_classic_group_takes_in_a_consumer_protocol_member,
    ),
    (
        "groups_are_listed_described_and_deleted",
        admin::groups_are_listed_described_and_deleted,
    ),
    ("create_topics_and_metadata", create_topics_and_metadata),
    (
        "topic_configs_and_partitions_change",
        topics::configs_and_partitions_change,
    ),
    (
        "produce_and_fetch_every_codec_and_ack",
        produce_and_fetch_every_codec_and_ack,
    ),
    ("refused_records_say_why", refused_records_say_why),
    (
        "fetch_from_the_middle_of_a_compressed_batch",
        fetch_from_the_middle_of_a_compressed_batch,
    ),
    (
        "list_offsets_earliest_and_latest",
        list_offsets_earliest_and_latest,
    ),
    ("fetch_larger_than_the_ring", fetch_larger_than_the_ring),
    (
        "pipelined_requests_keep_their_order",
        pipelined_requests_keep_their_order,
    ),
    (
        "ten_megabyte_batch_round_trips",
        ten_megabyte_batch_round_trips,
    ),
    (
        "ten_megabyte_batches_to_and_from_kcat",
        ten_megabyte_batches_to_and_from_kcat,
    ),
    (
        "one_shot_calls_dropped_midway",
        one_shot_calls_dropped_midway,
    ),
    (
        "waits_for_no_answer_fail_at_once",
        waits_for_no_answer_fail_at_once,
    ),
    (
        "a_send_dropped_halfway_tears_the_connection",
        a_send_dropped_halfway_tears_the_connection,
    ),
    (
        "a_paused_broker_times_out_every_wait",
        paused::a_paused_broker_times_out_every_wait,
    ),
    (
        "every_acks_setting_delivers_in_order",
        pipelined::every_acks_setting_delivers_in_order,
    ),
    (
        "send_all_delivers_every_record_in_order",
        pipelined::send_all_delivers_every_record_in_order,
    ),
    (
        "producer_and_consumer_pipeline_many_partitions",
        pipelined::producer_and_consumer_pipeline_many_partitions,
    ),
    ("seek_rewinds_and_skips", pipelined::seek_rewinds_and_skips),
    ("start_at_a_time", pipelined::start_at_a_time),
    (
        "pause_holds_a_partition_back",
        pipelined::pause_holds_a_partition_back,
    ),
    (
        "an_offset_out_of_range_is_reset",
        pipelined::an_offset_out_of_range_is_reset,
    ),
    (
        "produce_and_consume_over_tls",
        tls::produce_and_consume_over_tls,
    ),
    (
        "produce_and_consume_with_sasl",
        tls::produce_and_consume_with_sasl,
    ),
    ("sasl_over_tls", tls::sasl_over_tls),
    (
        "produce_and_consume_with_oauth_bearer",
        tls::produce_and_consume_with_oauth_bearer,
    ),
    (
        "a_connection_renews_its_sasl_session",
        tls::a_connection_renews_its_sasl_session,
    ),
    (
        "pipelines_renew_their_sessions_in_place",
        tls::pipelines_renew_their_sessions_in_place,
    ),
    (
        "clients_outlive_their_sasl_sessions",
        tls::clients_outlive_their_sasl_sessions,
    ),
    (
        "produce_and_consume_with_a_client_certificate",
        tls::produce_and_consume_with_a_client_certificate,
    ),
    (
        "read_committed_skips_what_a_java_producer_aborted",
        pipelined::read_committed_skips_what_a_java_producer_aborted,
    ),
    (
        "read_committed_latest_is_the_last_stable_offset",
        pipelined::read_committed_latest_is_the_last_stable_offset,
    ),
    (
        "idempotent_batches_are_numbered_and_deduplicated",
        idempotent::idempotent_batches_are_numbered_and_deduplicated,
    ),
    (
        "retries_after_timeouts_write_nothing_twice",
        idempotent::retries_after_timeouts_write_nothing_twice,
    ),
    (
        "a_batch_refused_for_good_does_not_stall_its_partition",
        idempotent::a_batch_refused_for_good_does_not_stall_its_partition,
    ),
    (
        "an_idle_leader_does_not_hold_back_the_busy_one",
        pipelined::an_idle_leader_does_not_hold_back_the_busy_one,
    ),
    (
        "producer_rides_out_a_broker_restart",
        pipelined::producer_rides_out_a_broker_restart,
    ),
    (
        "ringwire_produces_kcat_consumes",
        ringwire_produces_kcat_consumes,
    ),
    (
        "kcat_produces_ringwire_consumes",
        kcat_produces_ringwire_consumes,
    ),
];

fn main() {
    // `cargo test -- NAME` runs the tests whose names contain NAME; libtest flags are ignored.
    let filter: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .collect();
    let selected: Vec<&Test> = TESTS
        .iter()
        .filter(|(name, _)| filter.is_empty() || filter.iter().any(|f| name.contains(f.as_str())))
        .collect();
    if selected.is_empty() {
        return;
    }
    let (bootstrap, started) = match std::env::var("RINGWIRE_KAFKA_BOOTSTRAP") {
        Ok(addr) => (addr, false),
        Err(_) => {
            // A broker someone else started (a previous run, `.ci/run`) is reused and left running.
            let running = Command::new("bash")
                .arg(script())
                .arg("status")
                .output()
                .is_ok_and(|out| out.status.success());
            println!(
                "RINGWIRE_KAFKA_BOOTSTRAP unset: starting a broker with scripts/kafka/broker.sh"
            );
            (broker("start"), !running)
        }
    };
    println!(
        "running {} tests against Kafka at {bootstrap}",
        selected.len()
    );
    let mut failed = Vec::new();
    for (name, test) in selected {
        let start = Instant::now();
        let outcome = catch_unwind(AssertUnwindSafe(|| test(&bootstrap)));
        let verdict = if outcome.is_ok() { "ok" } else { "FAILED" };
        println!("test {name} ... {verdict} ({:.1?})", start.elapsed());
        if outcome.is_err() {
            failed.push(*name);
        }
    }
    if started {
        broker("stop");
    }
    if !failed.is_empty() {
        eprintln!("failed: {failed:?}");
        std::process::exit(1);
    }
}
