//! rskafka: `PartitionClient::produce` of 10,000-record batches, five in flight (its calls
//! take `&self` and share one connection), and `fetch_records` in a loop.

use std::collections::BTreeMap;

use futures::StreamExt as _;
use rskafka::client::partition::{Compression, PartitionClient, UnknownTopicHandling};
use rskafka::client::ClientBuilder;
use rskafka::record::Record;

use crate::{BATCH_RECORDS, IN_FLIGHT, PARTITION_FETCH_BYTES};

pub(super) async fn produce(bootstrap: &str, topic: &str, n: usize, value: &[u8]) {
    let partition = partition_zero(bootstrap, topic).await;
    let now = rskafka::chrono::Utc::now();
    let batches = (0..n).step_by(BATCH_RECORDS).map(|start| {
        let records = (start..n.min(start + BATCH_RECORDS))
            .map(|_| Record {
                key: None,
                value: Some(value.to_vec()),
                headers: BTreeMap::new(),
                timestamp: now,
            })
            .collect();
        partition.produce(records, Compression::NoCompression)
    });
    let mut acked = futures::stream::iter(batches).buffered(IN_FLIGHT);
    let mut offsets = 0;
    while let Some(result) = acked.next().await {
        offsets += result.unwrap().len();
    }
    assert_eq!(offsets, n);
}

pub(super) async fn fetch(bootstrap: &str, topic: &str, n: usize) -> usize {
    let partition = partition_zero(bootstrap, topic).await;
    let (mut offset, mut records, mut bytes) = (0, 0, 0);
    while records < n {
        let (batch, _high_watermark) = partition
            .fetch_records(offset, 1..PARTITION_FETCH_BYTES, 500)
            .await
            .unwrap();
        for r in batch
            .iter()
            .filter(|r| r.offset >= offset)
            .take(n - records)
        {
            records += 1;
            bytes += r.record.value.as_ref().map_or(0, Vec::len);
        }
        if let Some(last) = batch.last() {
            offset = last.offset + 1;
        }
    }
    bytes
}

async fn partition_zero(bootstrap: &str, topic: &str) -> PartitionClient {
    let client = ClientBuilder::new(vec![bootstrap.to_owned()])
        .build()
        .await
        .unwrap();
    client
        .partition_client(topic, 0, UnknownTopicHandling::Retry)
        .await
        .unwrap()
}
