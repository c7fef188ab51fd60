//! What a consumer group change costs the members that stay, on each group protocol:
//! Kafka's classic one (JoinGroup/SyncGroup: every member gives up everything and waits for
//! every other to join again) against KIP-848's consumer protocol (the coordinator moves only
//! the partitions that must move).
//!
//! Against a real broker (`scripts/kafka/broker.sh start`, Kafka 4.1, or
//! `RINGWIRE_KAFKA_BOOTSTRAP`): a producer writes a record to each of 8 partitions every
//! 5 ms. Member A reads as fast as it can; member C is slow, handling each poll's records for
//! `SLOW` (1 s) before it polls again, as a consumer doing real work does. Member B joins,
//! and later leaves. Measured on A: the longest time without a record during each change
//! (a pause), and how long until B holds a share (until B's partitions are A's and C's
//! again). Heartbeats every 500 ms on both protocols (the classic members'
//! `heartbeat_interval`, the test broker's `group.consumer.heartbeat.interval.ms`). Medians
//! of `REBALANCE_ROUNDS` (default 5), the protocols alternated.
//!
//! ```sh
//! cargo bench -p ringwire-bench --bench kafka_rebalance
//! ```

use std::collections::HashMap;
use std::path::PathBuf;
use std::process::Command;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use ringwire_kafka::api::create_topics::NewTopic;
use ringwire_kafka::api::produce::Acks;
use ringwire_kafka::record::{BatchEncoder, BatchOptions, NewRecord};
use ringwire_kafka_client::{Connection, Consumer, ConsumerConfig, GroupProtocol, Reset};
use ringwire_testkit::unique;

const PARTITIONS: i32 = 8;
/// One record to each partition this often.
const EVERY: Duration = Duration::from_millis(5);
/// Steady reading before and after each change.
const STEADY: Duration = Duration::from_secs(1);

/// A broker this run started, stopped when dropped (a failed run too).
struct Started(Option<PathBuf>);

impl Drop for Started {
    fn drop(&mut self) {
        if let Some(script) = &self.0 {
            let _ = Command::new("bash").arg(script).arg("stop").output();
        }
    }
}

fn main() {
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../scripts/kafka/broker.sh");
    let (bootstrap, started) = match std::env::var("RINGWIRE_KAFKA_BOOTSTRAP") {
        Ok(addr) => (addr, false),
        Err(_) => {
            let running = Command::new("bash")
                .arg(&script)
                .arg("status")
                .output()
                .is_ok_and(|out| out.status.success());
            let out = Command::new("bash")
                .arg(&script)
                .arg("start")
                .output()
                .expect("scripts/kafka/broker.sh start");
            assert!(out.status.success(), "the broker did not start");
            (
                String::from_utf8(out.stdout).unwrap().trim().to_owned(),
                !running,
            )
        }
    };
    let _broker = Started(started.then(|| script.clone()));
    let rounds: usize = std::env::var("REBALANCE_ROUNDS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(5);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    println!("Kafka at {bootstrap}, {rounds} rounds per protocol, alternated\n");
    let mut results: HashMap<&str, Vec<Round>> = HashMap::new();
    for round in 0..rounds {
        for (name, protocol) in [
            ("classic", GroupProtocol::Classic),
            ("consumer", GroupProtocol::Consumer),
        ] {
            let r = runtime.block_on(one_round(&bootstrap, protocol, round));
            println!(
                "{name:8} round {round}: join pause {:>6.0} ms, shared after {:>6.0} ms, \
                 leave pause {:>6.0} ms, taken back after {:>6.0} ms",
                ms(r.join_pause),
                ms(r.shared_after),
                ms(r.leave_pause),
                ms(r.back_after)
            );
            results.entry(name).or_default().push(r);
        }
    }
    println!(
        "\n| protocol | A's longest pause, B joining (ms) | until B has a share (ms) \
         | A's longest pause, B leaving (ms) | until B's share is A's and C's (ms) |\n\
         |---|---:|---:|---:|---:|"
    );
    for name in ["classic", "consumer"] {
        let rs = &results[name];
        let median = |f: fn(&Round) -> Duration| {
            let mut v: Vec<Duration> = rs.iter().map(f).collect();
            v.sort();
            ms(v[v.len() / 2])
        };
        println!(
            "| {name} | {:.0} | {:.0} | {:.0} | {:.0} |",
            median(|r| r.join_pause),
            median(|r| r.shared_after),
            median(|r| r.leave_pause),
            median(|r| r.back_after)
        );
    }
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

#[derive(Debug)]
struct Round {
    join_pause: Duration,
    shared_after: Duration,
    leave_pause: Duration,
    back_after: Duration,
}

/// When A handed out each record.
#[derive(Default)]
struct Seen(Vec<Instant>);

impl Seen {
    /// The longest time without a record from `from` to `to`.
    fn longest_gap(&self, from: Instant, to: Instant) -> Duration {
        let mut longest = Duration::ZERO;
        let mut last = from;
        for &t in self.0.iter().filter(|&&t| t >= from && t <= to) {
            longest = longest.max(t - last);
            last = t;
        }
        longest.max(to.saturating_duration_since(last))
    }
}

fn member(group: &str, protocol: GroupProtocol) -> ConsumerConfig {
    ConsumerConfig {
        group: Some(group.to_owned()),
        group_protocol: protocol,
        heartbeat_interval: Duration::from_millis(500),
        max_wait: Duration::from_millis(100),
        commit_on_rebalance: true,
        ..ConsumerConfig::default()
    }
}

/// How long the slow member handles each poll's records.
const SLOW: Duration = Duration::from_secs(1);

/// A member on a task of its own, polling (then handling for `work`) until told to leave;
/// how many partitions it reads, as of its last poll.
struct Other {
    task: tokio::task::JoinHandle<()>,
    partitions: Arc<AtomicUsize>,
    leave: Arc<AtomicBool>,
}

impl Other {
    fn start(bootstrap: &str, topic: &str, config: ConsumerConfig, work: Duration) -> Other {
        let partitions = Arc::new(AtomicUsize::new(0));
        let leave = Arc::new(AtomicBool::new(false));
        let (count, stop) = (Arc::clone(&partitions), Arc::clone(&leave));
        let (bootstrap, topic) = (bootstrap.to_owned(), topic.to_owned());
        let task = tokio::spawn(async move {
            let mut consumer = Consumer::connect(&bootstrap, config).await.unwrap();
            consumer.subscribe(&[&topic], Reset::Latest).await.unwrap();
            while !stop.load(Ordering::SeqCst) {
                consumer.poll(|_, _, _| {}).await.expect("poll");
                count.store(consumer.assignment().len(), Ordering::SeqCst);
                tokio::time::sleep(work).await;
            }
            consumer.leave().await.unwrap();
        });
        Other {
            task,
            partitions,
            leave,
        }
    }

    fn partitions(&self) -> usize {
        self.partitions.load(Ordering::SeqCst)
    }

    async fn leave(self) {
        self.leave.store(true, Ordering::SeqCst);
        self.task.await.unwrap();
    }
}

/// Polls `a`, recording into `seen`, until `done` (checked before each poll) or `limit`.
async fn poll_until(
    a: &mut Consumer,
    seen: &mut Seen,
    limit: Duration,
    done: impl Fn(&Consumer) -> bool,
) {
    let deadline = Instant::now() + limit;
    while !done(a) {
        assert!(Instant::now() < deadline, "stuck with {:?}", a.assignment());
        a.poll(|_, _, _| seen.0.push(Instant::now()))
            .await
            .expect("poll");
    }
}

/// Polls `a` for `span`.
async fn poll_for(a: &mut Consumer, seen: &mut Seen, span: Duration) {
    let until = Instant::now() + span;
    poll_until(a, seen, span * 2, |_| Instant::now() >= until).await;
}

async fn one_round(bootstrap: &str, protocol: GroupProtocol, round: usize) -> Round {
    let topic = unique(&format!("rebalance-{round}"));
    let group = unique("rebalance");
    let mut admin = Connection::connect(bootstrap, &Default::default())
        .await
        .unwrap();
    admin
        .create_topic(NewTopic {
            name: &topic,
            num_partitions: PARTITIONS,
            replication_factor: 1,
            configs: &[],
        })
        .await
        .expect("create the topic");
    let producing = Arc::new(AtomicBool::new(true));
    let producer = tokio::spawn(produce(
        bootstrap.to_owned(),
        topic.clone(),
        Arc::clone(&producing),
    ));
    let all = PARTITIONS as usize;
    let mut seen = Seen::default();

    let mut a = Consumer::connect(bootstrap, member(&group, protocol))
        .await
        .unwrap();
    a.subscribe(&[&topic], Reset::Latest).await.unwrap();
    let c = Other::start(bootstrap, &topic, member(&group, protocol), SLOW);
    poll_until(&mut a, &mut seen, Duration::from_secs(60), |a| {
        a.assignment().len() + c.partitions() == all && c.partitions() > 0
    })
    .await;
    poll_for(&mut a, &mut seen, STEADY).await;

    // B joins; A polls on.
    let joined = Instant::now();
    let b = Other::start(bootstrap, &topic, member(&group, protocol), Duration::ZERO);
    poll_until(&mut a, &mut seen, Duration::from_secs(60), |a| {
        b.partitions() >= 2 && a.assignment().len() + b.partitions() + c.partitions() == all
    })
    .await;
    let shared_after = joined.elapsed();
    poll_for(&mut a, &mut seen, STEADY).await;
    let join_pause = seen.longest_gap(joined, Instant::now());

    // B leaves: A and C take its partitions back.
    let left = Instant::now();
    let leaving = tokio::spawn(b.leave());
    poll_until(&mut a, &mut seen, Duration::from_secs(60), |a| {
        leaving.is_finished() && a.assignment().len() + c.partitions() == all
    })
    .await;
    let back_after = left.elapsed();
    poll_for(&mut a, &mut seen, STEADY).await;
    let leave_pause = seen.longest_gap(left, Instant::now());
    leaving.await.unwrap();

    let (left_a, ()) = tokio::join!(a.leave(), c.leave());
    left_a.unwrap();
    producing.store(false, Ordering::SeqCst);
    producer.await.unwrap();
    let _ = admin.delete_topic(&topic).await;
    Round {
        join_pause,
        shared_after,
        leave_pause,
        back_after,
    }
}

/// One record to every partition every [`EVERY`] until `producing` turns false.
async fn produce(bootstrap: String, topic: String, producing: Arc<AtomicBool>) {
    let mut conn = Connection::connect(&bootstrap, &Default::default())
        .await
        .unwrap();
    let mut encoder = BatchEncoder::new();
    let mut batch = Vec::new();
    let mut next = Instant::now();
    while producing.load(Ordering::SeqCst) {
        let record = NewRecord {
            timestamp: i64::try_from(
                SystemTime::now()
                    .duration_since(UNIX_EPOCH)
                    .unwrap()
                    .as_millis(),
            )
            .unwrap(),
            key: None,
            value: Some(b"tick"),
            headers: &[],
        };
        batch.clear();
        encoder
            .encode(&BatchOptions::default(), &[record], &mut batch)
            .unwrap();
        for partition in 0..PARTITIONS {
            // A partition's leader may not be elected yet right after the topic was made.
            while let Err(e) = conn.produce(&topic, partition, &batch, Acks::Leader).await {
                assert!(e.is_transient(), "produce: {e}");
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        }
        next += EVERY;
        tokio::time::sleep_until(next.into()).await;
    }
}
