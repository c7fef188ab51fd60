//! The clients' futures are `Send`, so that a consumer or producer can run in a task of its
//! own (`tokio::spawn`) on a multi-threaded runtime. Checked when this test compiles.

use ringwire_kafka_client::{Consumer, ConsumerConfig, Producer, ProducerRecord, Reset, Start};

fn spawnable<F: std::future::Future + Send>(_: F) {}

fn consumer_futures(mut consumer: Consumer, producer: Producer) {
    spawnable(async move {
        let _ = Consumer::connect("127.0.0.1:9092", ConsumerConfig::default()).await;
        let _ = consumer
            .assign("t", Start::Committed(Reset::Earliest))
            .await;
        let _ = consumer.subscribe(&["t"], Reset::Earliest).await;
        let _ = consumer.poll(|_, _, _| {}).await;
        let _ = consumer.committed("t", 0).await;
        let _ = consumer.commit().await;
        let _ = consumer.leave().await;
        let _ = producer.send(ProducerRecord::new("t", b"v")).await;
        let _ = producer.flush().await;
    });
}

#[test]
fn consumer_and_producer_futures_are_send() {
    // The check is `consumer_futures` compiling; this names it so that the test runs.
    let _ = consumer_futures as fn(Consumer, Producer);
}
