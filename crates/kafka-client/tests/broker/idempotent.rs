//! The idempotent producer against the broker: its batches carry a producer id and sequences
//! the broker deduplicates by, retries write nothing twice, and a batch refused for good does
//! not stall the batches after it.

use std::time::{Duration, Instant};

use ringwire_kafka::api::fetch::{FetchPartition, FetchRequest, FetchResponse, FetchTopic};
use ringwire_kafka::api::list_offsets::LATEST;
use ringwire_kafka::api::produce::Acks;
use ringwire_kafka::record::{restamp, Batches};
use ringwire_kafka::{ApiKey, ErrorCode};
use ringwire_kafka_client::blocking::Connection;
use ringwire_kafka_client::{ClientError, Delivery, Producer, ProducerConfig, ProducerRecord};

use super::{connect, consume_all, create, runtime, unique};

/// One batch as the broker stores it: its header's producer fields and its bytes.
struct Stored {
    base_offset: i64,
    producer_id: i64,
    producer_epoch: i16,
    base_sequence: i32,
    records: i32,
    bytes: Vec<u8>,
}

/// Every batch of partition 0 of `topic`, in log order.
fn stored_batches(conn: &mut Connection, topic: &str) -> Vec<Stored> {
    let end = conn.list_offset(topic, 0, LATEST).unwrap();
    let mut batches: Vec<Stored> = Vec::new();
    let mut offset = 0;
    while offset < end {
        let partitions = [FetchPartition {
            partition: 0,
            fetch_offset: offset,
            partition_max_bytes: 1 << 20,
        }];
        let request = FetchRequest {
            max_wait_ms: 100,
            min_bytes: 1,
            max_bytes: 1 << 20,
            isolation_level: 0,
            topics: &[FetchTopic {
                name: topic,
                partitions: &partitions,
            }],
        };
        conn.call(&request, |frame| {
            let response = frame.decode::<FetchResponse<'_>>()?;
            let p = &response.topics[0].partitions[0];
            assert_eq!(p.error_code, ErrorCode::NONE);
            for batch in Batches::new(p.records) {
                let batch = batch?;
                if batch.base_offset() < offset {
                    continue;
                }
                batches.push(Stored {
                    base_offset: batch.base_offset(),
                    producer_id: batch.producer_id(),
                    producer_epoch: batch.producer_epoch(),
                    base_sequence: batch.base_sequence(),
                    records: batch.records_count(),
                    bytes: batch.as_bytes().to_vec(),
                });
            }
            Ok(())
        })
        .unwrap();
        offset = batches
            .last()
            .map_or(offset, |b| b.base_offset + i64::from(b.records));
    }
    batches
}

/// A record of each value, to partition 0 of `topic`.
fn to_partition_0<'a>(
    topic: &'a str,
    values: &'a [String],
) -> impl Iterator<Item = ProducerRecord<'a>> {
    values
        .iter()
        .map(move |v| ProducerRecord::new(topic, v.as_bytes()).partition(0))
}

/// The producer's batches carry one producer id and sequences that count its records from 0;
/// one of them sent again is answered as delivered at its first offset and not written twice,
/// and one that skips ahead is refused.
pub(crate) fn idempotent_batches_are_numbered_and_deduplicated(bootstrap: &str) {
    let mut conn = connect(bootstrap);
    let topic = unique("idempotent");
    create(&mut conn, &topic, 1, &[]);
    let n = 2_000;
    runtime().block_on(async {
        let config = ProducerConfig {
            batch_size: 4 << 10,
            linger: Duration::from_millis(1),
            ..ProducerConfig::default()
        };
        let producer = Producer::connect(bootstrap, config).await.unwrap();
        let values: Vec<String> = (0..n).map(|i| format!("record {i}")).collect();
        let records = to_partition_0(&topic, &values);
        producer.send_all(records).await.unwrap().await.unwrap();
        assert_eq!(producer.stats().producer_ids, 1);
    });

    let batches = stored_batches(&mut conn, &topic);
    assert!(batches.len() > 5, "{} batches", batches.len());
    let id = batches[0].producer_id;
    assert!(id >= 0, "no producer id");
    let mut sequence = 0;
    for b in &batches {
        assert_eq!(
            (b.producer_id, b.producer_epoch),
            (id, batches[0].producer_epoch)
        );
        assert_eq!(
            b.base_sequence, sequence,
            "batch at offset {}",
            b.base_offset
        );
        sequence += b.records;
    }
    assert_eq!(sequence, n);

    // The last batch again, as a retry would send it: the broker knows it (it remembers a
    // producer's last five batches per partition).
    let end = conn.list_offset(&topic, 0, LATEST).unwrap();
    let last = batches.last().unwrap();
    let mut again = last.bytes.clone();
    again[..8].copy_from_slice(&0i64.to_be_bytes()); // base offset: a producer sends 0
    again[12..16].copy_from_slice(&(-1i32).to_be_bytes()); // leader epoch: the broker's
    let answer = conn.produce(&topic, 0, &again, Acks::All).unwrap();
    assert_eq!(
        answer,
        Some(last.base_offset),
        "a duplicate is answered with its offset"
    );
    assert_eq!(
        conn.list_offset(&topic, 0, LATEST).unwrap(),
        end,
        "written twice"
    );

    // The same batch numbered past the next expected sequence: a gap, refused.
    restamp(&mut again, id, batches[0].producer_epoch, sequence + 100).unwrap();
    let err = conn.produce(&topic, 0, &again, Acks::All).unwrap_err();
    assert!(
        matches!(
            err,
            ClientError::Kafka {
                api: ApiKey::Produce,
                code: ErrorCode::OUT_OF_ORDER_SEQUENCE_NUMBER,
                ..
            }
        ),
        "{err}"
    );
    assert_eq!(conn.list_offset(&topic, 0, LATEST).unwrap(), end);
}

/// Requests that time out before the broker answers: the producer drops the connection and
/// sends the same batches again, and still every record lands once, in the order sent. The
/// timeout shrinks until some requests do time out (a fast broker answers within 2 ms).
pub(crate) fn retries_after_timeouts_write_nothing_twice(bootstrap: &str) {
    let mut conn = connect(bootstrap);
    let n = 20_000;
    let values: Vec<String> = (0..n).map(|i| format!("{i}")).collect();
    for timeout_us in [2000, 1000, 500, 250] {
        let topic = unique("idempotent-retries");
        create(&mut conn, &topic, 1, &[]);
        let retries = runtime().block_on(async {
            let config = ProducerConfig {
                batch_size: 8 << 10,
                linger: Duration::from_millis(1),
                request_timeout: Duration::from_micros(timeout_us),
                retry_backoff: Duration::from_millis(5),
                delivery_timeout: Duration::from_secs(60),
                ..ProducerConfig::default()
            };
            let producer = Producer::connect(bootstrap, config).await.unwrap();
            producer
                .send_all(to_partition_0(&topic, &values))
                .await
                .unwrap();
            producer.flush().await.unwrap();
            producer.stats().retries
        });
        println!("{retries} retries with a {timeout_us} us timeout");
        if retries == 0 {
            continue;
        }
        let got = runtime().block_on(consume_all(bootstrap, &topic, n));
        let got: Vec<String> = got
            .iter()
            .map(|r| String::from_utf8(r.value.clone().unwrap()).unwrap())
            .collect();
        assert_eq!(got.len(), n, "{retries} retries");
        assert!(
            got == values,
            "duplicated or reordered after {retries} retries"
        );
        assert_eq!(conn.list_offset(&topic, 0, LATEST).unwrap(), n as i64);
        return;
    }
    panic!("no request ever timed out: the test proved nothing");
}

/// A record larger than the topic allows is refused for good; the records sent after it, some
/// already in flight behind it, are delivered anyway (under a fresh producer id), in order, and
/// long before the delivery timeout.
pub(crate) fn a_batch_refused_for_good_does_not_stall_its_partition(bootstrap: &str) {
    let mut conn = connect(bootstrap);
    let topic = unique("idempotent-refused");
    create(&mut conn, &topic, 1, &[("max.message.bytes", Some("4096"))]);
    let started = Instant::now();
    runtime().block_on(async {
        let config = ProducerConfig {
            batch_size: 1024,
            linger: Duration::ZERO,
            // Stalled batches would fail after this; the test wants them delivered at once.
            delivery_timeout: Duration::from_secs(20),
            ..ProducerConfig::default()
        };
        let producer = Producer::connect(bootstrap, config).await.unwrap();
        let big = vec![b'x'; 16 << 10];
        let mut deliveries: Vec<(String, Delivery)> = Vec::new();
        for i in 0..300 {
            let value = if i == 100 {
                String::from_utf8(big.clone()).unwrap()
            } else {
                format!("small {i}")
            };
            let record = ProducerRecord::new(&topic, value.as_bytes()).partition(0);
            deliveries.push((value.clone(), producer.send(record).await.unwrap()));
        }
        let first_failure = producer.flush().await.unwrap_err();
        assert!(
            matches!(
                first_failure.error(),
                ClientError::Kafka {
                    code: ErrorCode(10), // MESSAGE_TOO_LARGE
                    ..
                }
            ),
            "{first_failure}"
        );
        let mut offsets = Vec::new();
        for (value, delivery) in deliveries {
            match delivery.await {
                Ok(meta) => offsets.push(meta.offset),
                Err(e) => assert!(value.len() > 4096, "{value}: {e}"),
            }
        }
        assert_eq!(offsets, (0..299).collect::<Vec<i64>>());
        assert_eq!(producer.stats().producer_ids, 2);
    });
    assert!(
        started.elapsed() < Duration::from_secs(30),
        "{:?}",
        started.elapsed()
    );
    let got = runtime().block_on(consume_all(bootstrap, &topic, 299));
    let values: Vec<Vec<u8>> = got.into_iter().map(|r| r.value.unwrap()).collect();
    let expected: Vec<Vec<u8>> = (0..300)
        .filter(|&i| i != 100)
        .map(|i| format!("small {i}").into_bytes())
        .collect();
    assert_eq!(values, expected);
}
