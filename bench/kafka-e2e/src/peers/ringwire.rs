//! ringwire-kafka-client: the pipelined producer and consumer.

use std::time::Duration;

use ringwire_kafka::api::produce::Acks;
use ringwire_kafka_client::{
    Consumer, ConsumerConfig, Producer, ProducerConfig, ProducerRecord, Start,
};

use crate::{BATCH_BYTES, BATCH_RECORDS, FETCH_BYTES, IN_FLIGHT, PARTITION_FETCH_BYTES};

fn producer_config() -> ProducerConfig {
    ProducerConfig {
        acks: Acks::All,
        linger: Duration::from_millis(5),
        batch_size: BATCH_BYTES,
        max_request_size: BATCH_BYTES + (64 << 10),
        max_in_flight: IN_FLIGHT,
        // As the peers run (rdkafka with `enable.idempotence=false`): the same work for all.
        idempotence: false,
        ..ProducerConfig::default()
    }
}

/// `Producer::send` per record.
pub(super) async fn produce(bootstrap: &str, topic: &str, n: usize, value: &[u8]) {
    let producer = Producer::connect(bootstrap, producer_config())
        .await
        .unwrap();
    for _ in 0..n {
        producer
            .send(ProducerRecord::new(topic, value).partition(0))
            .await
            .unwrap();
    }
    producer.flush().await.unwrap();
}

/// `Producer::send_all` of `BATCH_RECORDS` records at a time, as the other clients hand
/// records over in bulk.
pub(super) async fn produce_bulk(bootstrap: &str, topic: &str, n: usize, value: &[u8]) {
    let producer = Producer::connect(bootstrap, producer_config())
        .await
        .unwrap();
    let mut sent = 0;
    while sent < n {
        let count = BATCH_RECORDS.min(n - sent);
        let records = (0..count).map(|_| ProducerRecord::new(topic, value).partition(0));
        // Dropped, not awaited: `flush` below reports any failure.
        let _ = producer.send_all(records).await.unwrap();
        sent += count;
    }
    producer.flush().await.unwrap();
}

pub(super) async fn fetch(bootstrap: &str, topic: &str, n: usize) -> usize {
    let config = ConsumerConfig {
        max_bytes: FETCH_BYTES,
        partition_max_bytes: PARTITION_FETCH_BYTES,
        ..ConsumerConfig::default()
    };
    let mut consumer = Consumer::connect(bootstrap, config).await.unwrap();
    consumer
        .assign_partition(topic, 0, Start::At(0))
        .await
        .unwrap();
    let (mut records, mut bytes) = (0, 0);
    while records < n {
        consumer
            .poll(|_, _, r| {
                if records < n {
                    records += 1;
                    bytes += r.value.map_or(0, <[u8]>::len);
                }
            })
            .await
            .unwrap();
    }
    bytes
}
