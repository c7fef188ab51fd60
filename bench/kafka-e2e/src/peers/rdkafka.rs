//! rdkafka (librdkafka, built from the crate's vendored sources): a `BaseProducer` with
//! 1 MB batches and 5 ms linger, and a `BaseConsumer` assigned partition 0 with
//! `fetch.queue.backoff.ms=0` (without it librdkafka waits between fetches).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use rdkafka::config::ClientConfig;
use rdkafka::consumer::{BaseConsumer, Consumer as _};
use rdkafka::error::{KafkaError, RDKafkaErrorCode};
use rdkafka::producer::{BaseProducer, BaseRecord, DeliveryResult, Producer as _, ProducerContext};
use rdkafka::{ClientContext, Message as _, Offset, TopicPartitionList};

use crate::{BATCH_BYTES, FETCH_BYTES, IN_FLIGHT, PARTITION_FETCH_BYTES};

/// Counts acknowledged and failed records.
#[derive(Default)]
struct Deliveries {
    ok: AtomicUsize,
    failed: AtomicUsize,
}

impl ClientContext for Deliveries {}

impl ProducerContext for Deliveries {
    type DeliveryOpaque = ();

    fn delivery(&self, result: &DeliveryResult<'_>, (): ()) {
        let counter = if result.is_ok() {
            &self.ok
        } else {
            &self.failed
        };
        counter.fetch_add(1, Ordering::Relaxed);
    }
}

pub(super) fn produce(bootstrap: &str, topic: &str, n: usize, value: &[u8]) {
    let producer: BaseProducer<Deliveries> = ClientConfig::new()
        .set("bootstrap.servers", bootstrap)
        .set("acks", "all")
        .set("linger.ms", "5")
        .set("batch.size", BATCH_BYTES.to_string())
        .set("batch.num.messages", "1000000")
        .set(
            "max.in.flight.requests.per.connection",
            IN_FLIGHT.to_string(),
        )
        .set("queue.buffering.max.messages", "2000000")
        .set("queue.buffering.max.kbytes", "2097151")
        .set("enable.idempotence", "false")
        .create_with_context(Deliveries::default())
        .unwrap();
    for _ in 0..n {
        let mut record = BaseRecord::<(), [u8]>::to(topic)
            .partition(0)
            .payload(value);
        loop {
            match producer.send(record) {
                Ok(()) => break,
                Err((KafkaError::MessageProduction(RDKafkaErrorCode::QueueFull), back)) => {
                    producer.poll(Duration::from_millis(1));
                    record = back;
                }
                Err((e, _)) => panic!("rdkafka send: {e}"),
            }
        }
    }
    producer.flush(Duration::from_secs(120)).unwrap();
    let deliveries = producer.context();
    assert_eq!(deliveries.failed.load(Ordering::Relaxed), 0);
    assert_eq!(deliveries.ok.load(Ordering::Relaxed), n);
}

pub(super) fn fetch(bootstrap: &str, topic: &str, n: usize) -> usize {
    let consumer: BaseConsumer = ClientConfig::new()
        .set("bootstrap.servers", bootstrap)
        .set("group.id", "kafka-e2e")
        .set("enable.auto.commit", "false")
        .set("fetch.queue.backoff.ms", "0")
        .set("fetch.max.bytes", FETCH_BYTES.to_string())
        .set(
            "max.partition.fetch.bytes",
            PARTITION_FETCH_BYTES.to_string(),
        )
        .set("fetch.wait.max.ms", "500")
        .create()
        .unwrap();
    let mut assignment = TopicPartitionList::new();
    assignment
        .add_partition_offset(topic, 0, Offset::Beginning)
        .unwrap();
    consumer.assign(&assignment).unwrap();
    let (mut records, mut bytes) = (0, 0);
    while records < n {
        if let Some(message) = consumer.poll(Duration::from_millis(100)) {
            let message = message.unwrap();
            records += 1;
            bytes += message.payload().map_or(0, <[u8]>::len);
        }
    }
    bytes
}
