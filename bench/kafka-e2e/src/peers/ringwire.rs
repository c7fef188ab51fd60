//! ringwire-kafka-client: the pipelined producer and consumer.

use std::time::Duration;

use ringwire_kafka::api::produce::Acks;
use ringwire_kafka_client::{
    Consumer, ConsumerConfig, Producer, ProducerConfig, ProducerRecord, Start,
};

use crate::{BATCH_BYTES, FETCH_BYTES, IN_FLIGHT, PARTITION_FETCH_BYTES};

pub(super) async fn produce(bootstrap: &str, topic: &str, n: usize, value: &[u8]) {
    let config = ProducerConfig {
        acks: Acks::All,
        linger: Duration::from_millis(5),
        batch_size: BATCH_BYTES,
        max_request_size: BATCH_BYTES + (64 << 10),
        max_in_flight: IN_FLIGHT,
        ..ProducerConfig::default()
    };
    let producer = Producer::connect(bootstrap, config).await.unwrap();
    for _ in 0..n {
        producer
            .send(ProducerRecord::new(topic, value).partition(0))
            .await
            .unwrap();
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
