//! Kafka: response frames and one Fetch response holding many records, received in 64 KiB
//! reads, parsed (and walked record by record) several ways. One criterion run gives every
//! path, so the ratios come from one run.
//!
//! `kafka/frames/*`: the reference design's table, ApiVersions response frames with 64-byte
//! bodies (100 and 1,000) and 4 KiB bodies (100), each matched to its request by correlation
//! id: `ring` parses them where the reads put them, `copy` reads each length and copies the
//! frame into a buffer of its own first.
//!
//! - `ring`: `RecvTransport` (mirrored ring) over the `Chunks` fixture; `Correlator` reads the
//!   frame in place, `FetchResponse` borrows the ring, `record::walk` hands each record's key
//!   and value out as slices of it. No byte is copied after the read.
//! - `copy`: the classic receive path with the same decoder: reads into a 64 KiB staging buffer,
//!   the frame copied into a `Vec` of its own (a length read, then a copy of the frame into its
//!   own buffer), then the same `Correlator` / `FetchResponse` / `walk` over that `Vec`.
//! - `kafka_protocol`: the same classic receive into a `BytesMut`, frozen, then the
//!   `kafka-protocol` crate's `ResponseHeader` + `FetchResponse` decoders and its
//!   `RecordBatchDecoder` (records as `Bytes` handles, headers in an `IndexMap`).
//!
//! Two depths: `kafka/fetch_records/*` walks every record (CRC checked; each record's offset,
//! key and value length to `black_box`); `kafka/fetch_frame/*` stops at the partition's record
//! bytes, handed out as one slice (the reference design's frame parser). Every path is checked
//! against the others before timing. Throughput is records for `fetch_records`, the frame's
//! bytes for `fetch_frame`; inputs are
//! `1k`: 1,000 records of 100-byte values with 8-byte keys in 10 batches (about 125 KiB, two
//! reads), and `10k`: 10,000 such records in 100 batches (about 1.2 MiB, 19 reads).
//!
//! The producer's side, `kafka/encode/10k`: one uncompressed batch of 10,000 records of
//! 100-byte values, no key (the end-to-end produce race's records). `ringwire`: a
//! `BatchBuilder` on a reused buffer, one `push` per record as the producer appends them, then
//! `finish`. `kafka_protocol`: the `Record` values built (the value a shared `Bytes`), then
//! `RecordBatchEncoder::encode` into a reused `BytesMut`, as its users (and the race) do.

mod common;

use std::hint::black_box;
use std::io::Read;

use bytes::{Bytes, BytesMut};
use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use kafka_protocol::messages as kp;
use kafka_protocol::protocol::{Decodable, Encodable};
use kafka_protocol::records::RecordBatchDecoder;
use ringwire_io::{Chunks, RecvTransport};
use ringwire_kafka::api::api_versions::ApiVersionsRequest;
use ringwire_kafka::api::fetch::{FetchPartition, FetchRequest, FetchResponse, FetchTopic};
use ringwire_kafka::record::{
    walk, BatchBuilder, BatchEncoder, BatchOptions, Compression, NewRecord,
};
use ringwire_kafka::{Correlator, Limits, ResponseFrame};
use ringwire_ring::{Backing, Ring, RingConfig};
use ringwire_wire::Status;

const READ: usize = 64 * 1024;
const FETCH_VERSION: i16 = 12;

/// The Fetch request each path answers (the correlator must have it in flight).
fn request() -> FetchRequest<'static> {
    static PARTITIONS: [FetchPartition; 1] = [FetchPartition {
        partition: 0,
        fetch_offset: 0,
        partition_max_bytes: 64 << 20,
    }];
    static TOPICS: [FetchTopic<'static>; 1] = [FetchTopic {
        name: "bench",
        partitions: &PARTITIONS,
    }];
    FetchRequest {
        max_wait_ms: 0,
        min_bytes: 1,
        max_bytes: 64 << 20,
        isolation_level: 0,
        topics: &TOPICS,
    }
}

/// A Fetch v12 response frame (size, correlation id 0, header tags, body) with `batches`
/// batches of `per_batch` records, encoded by ringwire and framed by kafka-protocol.
fn fetch_frame(batches: usize, per_batch: usize, compression: Compression) -> Vec<u8> {
    let value = [0x61u8; 100];
    let keys: Vec<String> = (0..per_batch).map(|i| format!("key{i:05}")).collect();
    let mut records = Vec::new();
    let mut encoder = BatchEncoder::new();
    for b in 0..batches {
        let new: Vec<NewRecord<'_>> = keys
            .iter()
            .enumerate()
            .map(|(i, key)| NewRecord {
                timestamp: 1_700_000_000_000 + i as i64,
                key: Some(key.as_bytes()),
                value: Some(&value),
                headers: &[],
            })
            .collect();
        let options = BatchOptions {
            base_offset: (b * per_batch) as i64,
            compression,
            ..BatchOptions::default()
        };
        encoder.encode(&options, &new, &mut records).unwrap();
    }
    let mut p = kp::fetch_response::PartitionData::default();
    p.high_watermark = (batches * per_batch) as i64;
    p.last_stable_offset = p.high_watermark;
    p.records = Some(Bytes::from(records));
    let mut t = kp::fetch_response::FetchableTopicResponse::default();
    t.topic = kp::TopicName("bench".to_string().into());
    t.partitions = vec![p];
    let mut response = kp::FetchResponse::default();
    response.responses = vec![t];
    let mut header = kp::ResponseHeader::default();
    header.correlation_id = 0;
    let mut body = BytesMut::new();
    header.encode(&mut body, 1).unwrap();
    response.encode(&mut body, FETCH_VERSION).unwrap();
    let mut frame = (body.len() as u32).to_be_bytes().to_vec();
    frame.extend_from_slice(&body);
    frame
}

/// Reports a record to the optimizer's blind spot; returns 1 to count it.
#[inline]
fn touch(offset: i64, key: usize, value: usize) -> usize {
    black_box((offset, key, value));
    1
}

/// How deep each path goes into the response.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Depth {
    /// Frame, header and Fetch body; each partition's records reported as one slice (the
    /// reference design's frame parser: length, correlation id, body handed out).
    Frame,
    /// Every record walked: CRC checked, key and value reported.
    Records,
}

/// Decodes a Fetch frame's body and walks its records with ringwire (both ringwire paths).
/// Returns the records seen, or the bytes of record data at `Depth::Frame`.
fn walk_frame(
    frame: ResponseFrame<'_>,
    scratch: &mut Vec<u8>,
    limits: &Limits,
    depth: Depth,
) -> usize {
    let response = frame.decode::<FetchResponse<'_>>().unwrap();
    let mut seen = 0;
    for p in response.topics.iter().flat_map(|t| &t.partitions) {
        if depth == Depth::Frame {
            seen += black_box(p.records).len();
            continue;
        }
        walk(p.records, 0, scratch, limits, |_, r| {
            seen += touch(
                r.offset,
                r.key.map_or(0, <[u8]>::len),
                r.value.map_or(0, <[u8]>::len),
            );
        })
        .unwrap();
    }
    seen
}

/// The zero-copy path: reads land in the ring, the frame is parsed where it landed.
struct RingPath {
    rx: RecvTransport<Chunks>,
    correlator: Correlator,
    request_buf: Vec<u8>,
    scratch: Vec<u8>,
    limits: Limits,
}

impl RingPath {
    fn new(frame: &[u8]) -> Self {
        let config = RingConfig::with_capacity(2 << 20)
            .max_capacity(2 << 20)
            .backing(Backing::Mirrored);
        let limits = Limits::default();
        let correlator = Correlator::new(None, &limits);
        let request_buf = vec![0; correlator.request_len(&request(), FETCH_VERSION).unwrap()];
        RingPath {
            rx: RecvTransport::with_ring(Ring::new(config).unwrap(), Chunks::every(frame, READ)),
            correlator,
            request_buf,
            scratch: Vec::new(),
            limits,
        }
    }

    fn run(&mut self, depth: Depth) -> usize {
        self.rx.get_mut().rewind();
        // A fresh correlator, so the canned frame's correlation id 0 answers its request.
        self.correlator = Correlator::new(None, &self.limits);
        self.correlator
            .encode(&request(), FETCH_VERSION, &mut self.request_buf)
            .unwrap();
        loop {
            let at_least = match self.correlator.parse_response(self.rx.data()).unwrap() {
                Status::Complete(frame, consumed) => {
                    let seen = walk_frame(frame, &mut self.scratch, &self.limits, depth);
                    self.rx.consume(consumed);
                    return seen;
                }
                Status::Partial { at_least } => at_least,
            };
            assert!(self.rx.fill(at_least).unwrap() > 0);
        }
    }
}

/// The classic receive: a staging buffer per read, then each frame copied into its own buffer.
struct Classic {
    source: Chunks,
    staging: Vec<u8>,
    /// Staged bytes not yet copied out (`staging[start..end]`).
    start: usize,
    end: usize,
}

impl Classic {
    fn new(frame: &[u8]) -> Self {
        Classic {
            source: Chunks::every(frame, READ),
            staging: vec![0; READ],
            start: 0,
            end: 0,
        }
    }

    /// Starts the stream again.
    fn rewind(&mut self) {
        self.source.rewind();
        self.start = 0;
        self.end = 0;
    }

    /// Receives the next length-prefixed frame into a buffer made by `alloc` and filled by
    /// `append`.
    fn frame<B>(
        &mut self,
        alloc: impl FnOnce(usize) -> B,
        mut append: impl FnMut(&mut B, &[u8]),
    ) -> B {
        let mut prefix = [0u8; 4];
        let mut have = 0;
        while have < 4 {
            self.refill();
            let n = (4 - have).min(self.end - self.start);
            prefix[have..have + n].copy_from_slice(&self.staging[self.start..self.start + n]);
            self.start += n;
            have += n;
        }
        let len = u32::from_be_bytes(prefix) as usize;
        let mut buf = alloc(4 + len);
        append(&mut buf, &prefix);
        let mut left = len;
        while left > 0 {
            self.refill();
            let n = left.min(self.end - self.start);
            append(&mut buf, &self.staging[self.start..self.start + n]);
            self.start += n;
            left -= n;
        }
        buf
    }

    fn refill(&mut self) {
        if self.start == self.end {
            self.end = self.source.read(&mut self.staging).unwrap();
            self.start = 0;
            assert!(self.end > 0, "stream ended inside the frame");
        }
    }
}

/// Classic receive, then ringwire's decoder over the frame's own buffer.
struct CopyPath {
    classic: Classic,
    correlator: Correlator,
    request_buf: Vec<u8>,
    scratch: Vec<u8>,
    limits: Limits,
}

impl CopyPath {
    fn new(frame: &[u8]) -> Self {
        let limits = Limits::default();
        let correlator = Correlator::new(None, &limits);
        let request_buf = vec![0; correlator.request_len(&request(), FETCH_VERSION).unwrap()];
        CopyPath {
            classic: Classic::new(frame),
            correlator,
            request_buf,
            scratch: Vec::new(),
            limits,
        }
    }

    fn run(&mut self, depth: Depth) -> usize {
        // A fresh correlator, so the canned frame's correlation id 0 answers its request.
        self.correlator = Correlator::new(None, &self.limits);
        self.correlator
            .encode(&request(), FETCH_VERSION, &mut self.request_buf)
            .unwrap();
        self.classic.rewind();
        let frame = self
            .classic
            .frame(Vec::with_capacity, |buf: &mut Vec<u8>, bytes| {
                buf.extend_from_slice(bytes)
            });
        let Status::Complete(response, _) = self.correlator.parse_response(&frame).unwrap() else {
            panic!("whole frame")
        };
        walk_frame(response, &mut self.scratch, &self.limits, depth)
    }
}

/// Classic receive into `BytesMut`, then kafka-protocol's decoders.
struct KafkaProtocolPath {
    classic: Classic,
}

impl KafkaProtocolPath {
    fn run(&mut self, depth: Depth) -> usize {
        self.classic.rewind();
        let frame = self
            .classic
            .frame(BytesMut::with_capacity, |buf: &mut BytesMut, bytes| {
                buf.extend_from_slice(bytes)
            });
        let mut frame = frame.freeze();
        let _size = frame.split_to(4);
        let header = kp::ResponseHeader::decode(&mut frame, 1).unwrap();
        assert_eq!(header.correlation_id, 0);
        let response = kp::FetchResponse::decode(&mut frame, FETCH_VERSION).unwrap();
        let mut seen = 0;
        for p in response.responses.iter().flat_map(|t| &t.partitions) {
            let mut records = p.records.clone().unwrap_or_default();
            if depth == Depth::Frame {
                seen += black_box(&records).len();
                continue;
            }
            for set in RecordBatchDecoder::decode_all(&mut records).unwrap() {
                for r in &set.records {
                    seen += touch(
                        r.offset,
                        r.key.as_ref().map_or(0, Bytes::len),
                        r.value.as_ref().map_or(0, Bytes::len),
                    );
                }
            }
        }
        seen
    }
}

fn bench_fetch(c: &mut Criterion) {
    for (name, batches, per_batch) in [("1k", 10, 100), ("10k", 100, 100)] {
        let frame = fetch_frame(batches, per_batch, Compression::None);
        let records = batches * per_batch;
        let mut ring = RingPath::new(&frame);
        let mut copy = CopyPath::new(&frame);
        let mut kafka_protocol = KafkaProtocolPath {
            classic: Classic::new(&frame),
        };
        for (depth, depth_name) in [(Depth::Records, "records"), (Depth::Frame, "frame")] {
            let mut group = c.benchmark_group(format!("kafka/fetch_{depth_name}/{name}"));
            group.throughput(match depth {
                Depth::Records => Throughput::Elements(records as u64),
                Depth::Frame => Throughput::Bytes(frame.len() as u64),
            });
            let want = ring.run(depth);
            if depth == Depth::Records {
                assert_eq!(want, records);
            }
            assert_eq!(copy.run(depth), want);
            assert_eq!(kafka_protocol.run(depth), want);
            group.bench_function("ring", |b| b.iter(|| ring.run(depth)));
            group.bench_function("copy", |b| b.iter(|| copy.run(depth)));
            group.bench_function("kafka_protocol", |b| b.iter(|| kafka_protocol.run(depth)));
            group.finish();
        }
    }
}

/// Walking compressed batches (100 records of 100 B each, 10 per response), one group per
/// codec: the decoder's cost per batch (its setup included) shows here.
fn bench_fetch_compressed(c: &mut Criterion) {
    for codec in [
        Compression::Zstd,
        Compression::Lz4,
        Compression::Gzip,
        Compression::Snappy,
    ] {
        let frame = fetch_frame(10, 100, codec);
        let mut ring = RingPath::new(&frame);
        let mut group = c.benchmark_group(format!("kafka/fetch_records/1k_{codec}"));
        group.throughput(Throughput::Elements(1000));
        assert_eq!(ring.run(Depth::Records), 1000);
        group.bench_function("ring", |b| b.iter(|| ring.run(Depth::Records)));
        group.finish();
    }
}

/// `count` ApiVersions response frames (header v0: size, correlation id 0, 1, ..., then `body`
/// bytes), back to back.
fn response_frames(count: usize, body: usize) -> Vec<u8> {
    let mut stream = Vec::with_capacity(count * (8 + body));
    for id in 0..count {
        stream.extend_from_slice(&((4 + body) as u32).to_be_bytes());
        stream.extend_from_slice(&(id as i32).to_be_bytes());
        stream.resize(stream.len() + body, 0x61);
    }
    stream
}

/// A correlator with `count` ApiVersions requests in flight (correlation ids 0..count), as a
/// pipelining client has when their answers arrive. Made outside the timed part.
fn in_flight(count: usize) -> Correlator {
    let limits = Limits::default();
    let mut correlator = Correlator::new(None, &limits);
    let request = ApiVersionsRequest::default();
    let mut buf = vec![0; correlator.request_len(&request, 3).unwrap()];
    for _ in 0..count {
        correlator.encode(&request, 3, &mut buf).unwrap();
    }
    correlator
}

/// The reference design's Kafka table: many small response frames (64 B bodies) and some big
/// ones (4 KiB), in 64 KiB reads, each frame's length and correlation id read (and matched to
/// its request) and its body handed out. `ring`: parsed where the reads put them, every whole
/// frame in the ring before one `consume`. `copy`: the classic path, a length read, then each
/// frame copied into a buffer of its own, parsed there.
///
/// Batches of 8 correlators: criterion's `SmallInput` makes thousands at once, and their
/// queues, written long before they are timed, came from memory rather than cache, which no
/// pipelining client's queue does.
fn bench_frames(c: &mut Criterion) {
    for (name, count, body) in [
        ("64b_x100", 100, 64),
        ("64b_x1000", 1000, 64),
        ("4k_x100", 100, 4096),
    ] {
        let stream = response_frames(count, body);
        let config = RingConfig::with_capacity(1 << 20)
            .max_capacity(1 << 20)
            .backing(Backing::Mirrored);
        let mut rx =
            RecvTransport::with_ring(Ring::new(config).unwrap(), Chunks::every(&stream, READ));
        let mut ring = |mut correlator: Correlator| {
            rx.get_mut().rewind();
            let (mut frames, mut seen) = (0, 0);
            loop {
                // Every whole frame the reads have brought, then one consume for all of them.
                let (buf, mut used) = (rx.data(), 0);
                let at_least = loop {
                    match correlator.parse_response(&buf[used..]).unwrap() {
                        Status::Complete(frame, consumed) => {
                            seen += black_box(frame.body).len();
                            frames += 1;
                            used += consumed;
                        }
                        Status::Partial { at_least } => break at_least,
                    }
                };
                rx.consume(used);
                if frames == count {
                    return seen;
                }
                assert!(rx.fill(at_least).unwrap() > 0);
            }
        };
        let mut classic = Classic::new(&stream);
        let mut copy = |mut correlator: Correlator| {
            classic.rewind();
            let mut seen = 0;
            for _ in 0..count {
                let frame = classic.frame(Vec::with_capacity, |buf: &mut Vec<u8>, bytes| {
                    buf.extend_from_slice(bytes)
                });
                let Status::Complete(frame, _) = correlator.parse_response(&frame).unwrap() else {
                    panic!("whole frame")
                };
                seen += black_box(frame.body).len();
            }
            seen
        };
        assert_eq!(ring(in_flight(count)), count * body);
        assert_eq!(copy(in_flight(count)), count * body);
        let mut group = c.benchmark_group(format!("kafka/frames/{name}"));
        group.throughput(Throughput::Elements(count as u64));
        group.bench_function("ring", |b| {
            b.iter_batched(|| in_flight(count), &mut ring, BatchSize::NumIterations(8))
        });
        group.bench_function("copy", |b| {
            b.iter_batched(|| in_flight(count), &mut copy, BatchSize::NumIterations(8))
        });
        group.finish();
    }
}

/// Records per batch and value size of the encode benchmark.
const ENCODE_RECORDS: usize = 10_000;
const ENCODE_VALUE: usize = 100;

/// ringwire: one record at a time into a builder, on the last batch's buffer.
fn encode_ringwire(value: &[u8], buf: Vec<u8>) -> Vec<u8> {
    let mut builder = BatchBuilder::with_buffer(BatchOptions::default(), buf);
    for _ in 0..ENCODE_RECORDS {
        let record = NewRecord {
            timestamp: 1_700_000_000_000,
            key: None,
            value: Some(value),
            headers: &[],
        };
        builder.push(&record).expect("push");
    }
    builder.finish().expect("finish")
}

/// kafka-protocol: the records built, then encoded as one batch into `out`.
fn encode_kafka_protocol(value: &Bytes, out: &mut BytesMut) {
    use kafka_protocol::records::{
        Compression, Record, RecordBatchEncoder, RecordEncodeOptions, TimestampType,
    };
    let records: Vec<Record> = (0..ENCODE_RECORDS)
        .map(|i| Record {
            transactional: false,
            control: false,
            partition_leader_epoch: -1,
            producer_id: -1,
            producer_epoch: -1,
            timestamp_type: TimestampType::Creation,
            offset: i as i64,
            // One batch: the encoder splits wherever offset minus sequence changes.
            sequence: i as i32 - 1,
            timestamp: 1_700_000_000_000,
            key: None,
            value: Some(value.clone()),
            headers: Default::default(),
        })
        .collect();
    out.clear();
    let options = RecordEncodeOptions {
        version: 2,
        compression: Compression::None,
    };
    RecordBatchEncoder::encode(out, &records, &options).expect("encode");
}

fn bench_encode(c: &mut Criterion) {
    let value = vec![b'v'; ENCODE_VALUE];
    let shared = Bytes::from(value.clone());
    // Both give a batch of the same length that decodes to the same records.
    let mine = encode_ringwire(&value, Vec::new());
    let mut theirs = BytesMut::new();
    encode_kafka_protocol(&shared, &mut theirs);
    assert_eq!(mine.len(), theirs.len());
    let decoded = RecordBatchDecoder::decode(&mut Bytes::from(mine.clone())).expect("decode");
    assert_eq!(decoded.records.len(), ENCODE_RECORDS);
    assert!(decoded
        .records
        .iter()
        .all(|r| r.value.as_deref() == Some(&value[..]) && r.key.is_none()));

    let mut group = c.benchmark_group("kafka/encode/10k");
    group.throughput(Throughput::Elements(ENCODE_RECORDS as u64));
    let mut buf = Some(mine);
    group.bench_function("ringwire", |b| {
        b.iter(|| {
            let batch = encode_ringwire(&value, buf.take().unwrap_or_default());
            black_box(batch.len());
            buf = Some(batch);
        });
    });
    group.bench_function("kafka_protocol", |b| {
        b.iter(|| {
            encode_kafka_protocol(&shared, &mut theirs);
            black_box(theirs.len());
        });
    });
    group.finish();
}

criterion_group! {
    name = benches;
    config = common::short_criterion();
    targets = bench_frames, bench_fetch, bench_fetch_compressed, bench_encode
}
criterion_main!(benches);
