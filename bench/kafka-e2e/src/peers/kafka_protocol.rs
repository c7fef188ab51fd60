//! Raw kafka-protocol over a tokio `TcpStream`: its message types and record batch codec, the
//! framing and correlation by hand. Produce keeps five requests of 10,000 records in flight;
//! Fetch asks for the next range once the last has been decoded.

use std::collections::VecDeque;

use bytes::{Bytes, BytesMut};
use kafka_protocol::messages::{
    fetch_request, produce_request, ApiKey, BrokerId, FetchRequest, FetchResponse, ProduceRequest,
    ProduceResponse, RequestHeader, ResponseHeader, TopicName,
};
use kafka_protocol::protocol::{Decodable, Encodable, HeaderVersion, StrBytes};
use kafka_protocol::records::{
    Compression, Record, RecordBatchDecoder, RecordBatchEncoder, RecordEncodeOptions, TimestampType,
};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::TcpStream;

use crate::{BATCH_RECORDS, FETCH_BYTES, IN_FLIGHT, PARTITION_FETCH_BYTES};

const PRODUCE_VERSION: i16 = 9;
const FETCH_VERSION: i16 = 12;

/// One framed request: size, header, body.
fn frame<R: Encodable + HeaderVersion>(key: ApiKey, version: i16, id: i32, request: &R) -> Vec<u8> {
    let header = RequestHeader::default()
        .with_request_api_key(key as i16)
        .with_request_api_version(version)
        .with_correlation_id(id)
        .with_client_id(Some(StrBytes::from_static_str("kafka-e2e")));
    let mut buf = BytesMut::new();
    buf.extend_from_slice(&[0; 4]);
    header.encode(&mut buf, R::header_version(version)).unwrap();
    request.encode(&mut buf, version).unwrap();
    let size = (buf.len() - 4) as i32;
    buf[..4].copy_from_slice(&size.to_be_bytes());
    buf.to_vec()
}

/// The next response: its correlation id checked, the body after the header.
async fn response<R: HeaderVersion>(stream: &mut TcpStream, version: i16, id: i32) -> Bytes {
    let size = stream.read_i32().await.unwrap() as usize;
    let mut buf = BytesMut::zeroed(size);
    stream.read_exact(&mut buf).await.unwrap();
    let mut body = buf.freeze();
    let header = ResponseHeader::decode(&mut body, R::header_version(version)).unwrap();
    assert_eq!(header.correlation_id, id);
    body
}

pub(super) async fn produce(bootstrap: &str, topic: &str, n: usize, value: &[u8]) {
    let mut stream = TcpStream::connect(bootstrap).await.unwrap();
    stream.set_nodelay(true).unwrap();
    let value = Bytes::copy_from_slice(value);
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64;
    let options = RecordEncodeOptions {
        version: 2,
        compression: Compression::None,
    };
    let mut in_flight = VecDeque::new();
    let (mut sent, mut acked, mut id) = (0, 0, 0);
    while acked < n {
        if sent < n && in_flight.len() < IN_FLIGHT {
            let count = BATCH_RECORDS.min(n - sent);
            let records: Vec<Record> = (0..count)
                .map(|i| Record {
                    transactional: false,
                    control: false,
                    partition_leader_epoch: -1,
                    producer_id: -1,
                    producer_epoch: -1,
                    timestamp_type: TimestampType::Creation,
                    offset: i as i64,
                    // The encoder starts a new batch wherever offset minus sequence
                    // changes; this keeps one batch whose base sequence is -1 (none).
                    sequence: i as i32 - 1,
                    timestamp: now,
                    key: None,
                    value: Some(value.clone()),
                    headers: Default::default(),
                })
                .collect();
            let mut batch = BytesMut::new();
            RecordBatchEncoder::encode(&mut batch, &records, &options).unwrap();
            let partition = produce_request::PartitionProduceData::default()
                .with_index(0)
                .with_records(Some(batch.freeze()));
            let data = produce_request::TopicProduceData::default()
                .with_name(TopicName(StrBytes::from_string(topic.to_owned())))
                .with_partition_data(vec![partition]);
            let request = ProduceRequest::default()
                .with_acks(-1)
                .with_timeout_ms(30_000)
                .with_topic_data(vec![data]);
            let bytes = frame(ApiKey::Produce, PRODUCE_VERSION, id, &request);
            stream.write_all(&bytes).await.unwrap();
            in_flight.push_back((id, count));
            id += 1;
            sent += count;
            continue;
        }
        let (expected, count) = in_flight.pop_front().unwrap();
        let mut body = response::<ProduceResponse>(&mut stream, PRODUCE_VERSION, expected).await;
        let answer = ProduceResponse::decode(&mut body, PRODUCE_VERSION).unwrap();
        for p in answer.responses.iter().flat_map(|t| &t.partition_responses) {
            assert_eq!(p.error_code, 0, "produce error");
        }
        acked += count;
    }
}

pub(super) async fn fetch(bootstrap: &str, topic: &str, n: usize) -> usize {
    let mut stream = TcpStream::connect(bootstrap).await.unwrap();
    stream.set_nodelay(true).unwrap();
    let (mut offset, mut records, mut bytes, mut id) = (0i64, 0, 0, 0);
    while records < n {
        let partition = fetch_request::FetchPartition::default()
            .with_partition(0)
            .with_fetch_offset(offset)
            .with_partition_max_bytes(PARTITION_FETCH_BYTES);
        let request = FetchRequest::default()
            .with_replica_id(BrokerId(-1))
            .with_max_wait_ms(500)
            .with_min_bytes(1)
            .with_max_bytes(FETCH_BYTES)
            .with_topics(vec![fetch_request::FetchTopic::default()
                .with_topic(TopicName(StrBytes::from_string(topic.to_owned())))
                .with_partitions(vec![partition])]);
        stream
            .write_all(&frame(ApiKey::Fetch, FETCH_VERSION, id, &request))
            .await
            .unwrap();
        let mut body = response::<FetchResponse>(&mut stream, FETCH_VERSION, id).await;
        id += 1;
        let answer = FetchResponse::decode(&mut body, FETCH_VERSION).unwrap();
        for p in answer.responses.iter().flat_map(|t| &t.partitions) {
            assert_eq!(p.error_code, 0, "fetch error");
            let mut data = p.records.clone().unwrap_or_default();
            let from = offset;
            // Whole batches only: the answer may end in part of one, which decode_all
            // refuses.
            let mut whole = Vec::new();
            while data.len() >= 12 {
                let len = i32::from_be_bytes(data[8..12].try_into().unwrap()) as usize;
                if data.len() < 12 + len {
                    break;
                }
                whole.push(RecordBatchDecoder::decode(&mut data.split_to(12 + len)).unwrap());
            }
            for set in whole {
                for r in set.records.iter().filter(|r| r.offset >= from) {
                    if records < n {
                        records += 1;
                        bytes += r.value.as_ref().map_or(0, Bytes::len);
                    }
                    offset = r.offset + 1;
                }
            }
        }
    }
    bytes
}
