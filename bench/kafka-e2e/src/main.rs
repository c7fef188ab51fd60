//! One client, one operation, against a real broker; prints one JSON line with wall and CPU
//! time (user + system of this process, every thread included) over the timed part.
//!
//!   kafka-e2e CLIENT produce|fetch --bootstrap HOST:PORT --topic T --records N --size B
//!   kafka-e2e create --bootstrap HOST:PORT --topic T
//!
//! CLIENT is `ringwire` (`Producer::send` per record), `ringwire_bulk` (`Producer::send_all`
//! of 10,000 records at a time), `rskafka`, `rdkafka` or `kafka_protocol`. Produce sends N
//! records of B bytes (no key, uncompressed) to partition 0 and returns once every one is
//! acknowledged (acks = all: rskafka's only setting; on one broker the same as acks = 1).
//! Fetch reads N records of partition 0 from offset 0, touching every value.

mod peers;

use std::time::{Duration, Instant};

use ringwire_kafka::api::create_topics::NewTopic;
use ringwire_kafka_client::{ClientConfig, Connection};

/// A producer's or consumer's settings that every client gets alike.
pub(crate) const BATCH_RECORDS: usize = 10_000;
pub(crate) const BATCH_BYTES: usize = 1 << 20;
pub(crate) const IN_FLIGHT: usize = 5;
pub(crate) const PARTITION_FETCH_BYTES: i32 = 4 << 20;
pub(crate) const FETCH_BYTES: i32 = 16 << 20;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let flag = |name: &str| {
        args.iter()
            .position(|a| a == name)
            .and_then(|i| args.get(i + 1))
            .unwrap_or_else(|| panic!("{name} missing"))
            .clone()
    };
    let bootstrap = flag("--bootstrap");
    let topic = flag("--topic");
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    if args[0] == "create" {
        runtime.block_on(create(&bootstrap, &topic));
        return;
    }
    let (client, op) = (args[0].as_str(), args[1].as_str());
    let records: usize = flag("--records").parse().unwrap();
    let size: usize = flag("--size").parse().unwrap();
    let value: Vec<u8> = (0..size).map(|i| b'a' + (i % 26) as u8).collect();
    let before = cpu();
    let start = Instant::now();
    let bytes = match op {
        "produce" => {
            runtime.block_on(peers::produce(client, &bootstrap, &topic, records, &value));
            records * size
        }
        "fetch" => {
            let bytes = runtime.block_on(peers::fetch(client, &bootstrap, &topic, records));
            assert_eq!(bytes, records * size, "{client} fetched the wrong bytes");
            bytes
        }
        other => panic!("unknown operation {other}"),
    };
    let secs = start.elapsed().as_secs_f64();
    let cpu_secs = (cpu() - before).as_secs_f64();
    println!(
        "{{\"client\":\"{client}\",\"op\":\"{op}\",\"records\":{records},\"bytes\":{bytes},\
         \"secs\":{secs:.4},\"cpu_secs\":{cpu_secs:.4}}}"
    );
}

async fn create(bootstrap: &str, topic: &str) {
    let mut conn = Connection::connect(bootstrap, &ClientConfig::default())
        .await
        .unwrap();
    conn.create_topic(NewTopic {
        name: topic,
        num_partitions: 1,
        replication_factor: 1,
        configs: &[],
    })
    .await
    .unwrap();
    // Ready once the leader answers ListOffsets.
    let deadline = Instant::now() + Duration::from_secs(20);
    while conn.list_offset(topic, 0, -1).await.is_err() {
        assert!(Instant::now() < deadline, "{topic} has no leader");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// User plus system time of this process so far.
fn cpu() -> Duration {
    // SAFETY: getrusage writes one `rusage` into the zeroed value passed.
    let usage = unsafe {
        let mut usage: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_SELF, &mut usage);
        usage
    };
    let time = |t: libc::timeval| Duration::new(t.tv_sec as u64, t.tv_usec as u32 * 1000);
    time(usage.ru_utime) + time(usage.ru_stime)
}
