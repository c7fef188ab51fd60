//! Record batch v2: round trips under proptest, CRC vectors, an independent encoder
//! (`kafka-protocol`), and every corruption and truncation the walker must refuse or drop.

use bytes::{Bytes, BytesMut};
use kafka_protocol::records as kpr;
use proptest::prelude::*;
use ringwire_kafka::api::fetch::AbortedTransaction;
use ringwire_kafka::record::{
    restamp, walk, walk_committed, Batch, BatchBuilder, BatchEncoder, BatchOptions, Batches,
    Compression, Header, NewRecord, TimestampType, BATCH_HEADER_LEN,
};
use ringwire_kafka::{DecodeError, Limits};

/// Owned record contents, to build `NewRecord`s from and compare decoded records with.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Owned {
    timestamp: i64,
    key: Option<Vec<u8>>,
    value: Option<Vec<u8>>,
    headers: OwnedHeaders,
}

/// Header list in order (Kafka allows repeated keys).
type OwnedHeaders = Vec<(String, Option<Vec<u8>>)>;

fn encode(records: &[Owned], options: &BatchOptions) -> Vec<u8> {
    let headers: Vec<Vec<Header<'_>>> = records
        .iter()
        .map(|r| {
            r.headers
                .iter()
                .map(|(key, value)| Header {
                    key,
                    value: value.as_deref(),
                })
                .collect()
        })
        .collect();
    let new: Vec<NewRecord<'_>> = records
        .iter()
        .zip(&headers)
        .map(|(r, headers)| NewRecord {
            timestamp: r.timestamp,
            key: r.key.as_deref(),
            value: r.value.as_deref(),
            headers,
        })
        .collect();
    let mut out = Vec::new();
    BatchEncoder::new().encode(options, &new, &mut out).unwrap();
    out
}

fn decode(batch: &Batch<'_>) -> Vec<(i64, Owned)> {
    let mut scratch = Vec::new();
    batch
        .records(&mut scratch, &Limits::default())
        .unwrap()
        .map(|r| {
            let r = r.unwrap();
            let owned = Owned {
                timestamp: r.timestamp,
                key: r.key.map(<[u8]>::to_vec),
                value: r.value.map(<[u8]>::to_vec),
                headers: r
                    .headers
                    .map(|h| (h.key.to_owned(), h.value.map(<[u8]>::to_vec)))
                    .collect(),
            };
            (r.offset, owned)
        })
        .collect()
}

fn one_batch(bytes: &[u8]) -> Batch<'_> {
    let mut batches = Batches::new(bytes);
    let batch = batches.next().unwrap().unwrap();
    assert!(batches.next().is_none());
    assert!(batches.tail().is_empty());
    batch
}

fn simple(n: usize) -> Vec<Owned> {
    (0..n)
        .map(|i| Owned {
            timestamp: 1_700_000_000_000 + i as i64,
            key: Some(format!("k{i}").into_bytes()),
            value: Some(format!("value number {i}").into_bytes()),
            headers: vec![("trace".into(), Some(vec![i as u8]))],
        })
        .collect()
}

fn codec() -> impl Strategy<Value = Compression> {
    prop::sample::select(Compression::ALL.to_vec())
}

fn bytes(max: usize) -> impl Strategy<Value = Option<Vec<u8>>> {
    prop::option::of(prop::collection::vec(any::<u8>(), 0..max))
}

fn record() -> impl Strategy<Value = Owned> {
    (
        -1_000i64..2_000_000_000_000,
        bytes(40),
        bytes(300),
        prop::collection::vec(("[a-z.é]{0,8}", bytes(20)), 0..4),
    )
        .prop_map(|(timestamp, key, value, headers)| Owned {
            timestamp,
            key,
            value,
            headers,
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn batches_round_trip(
        records in prop::collection::vec(record(), 1..40),
        compression in codec(),
        base_offset in 0i64..1 << 50,
        transactional: bool,
        log_append: bool,
        producer_id in -1i64..1000,
    ) {
        let options = BatchOptions {
            base_offset,
            compression,
            transactional,
            timestamp_type: if log_append { TimestampType::LogAppendTime } else { TimestampType::CreateTime },
            producer_id,
            producer_epoch: 3,
            base_sequence: 9,
            partition_leader_epoch: 12,
            control: false,
        };
        let bytes = encode(&records, &options);
        let batch = one_batch(&bytes);
        prop_assert_eq!(batch.verify_crc(), Ok(()));
        prop_assert_eq!(batch.base_offset(), base_offset);
        prop_assert_eq!(batch.last_offset(), base_offset + records.len() as i64 - 1);
        prop_assert_eq!(batch.compression(), compression);
        prop_assert_eq!(batch.is_transactional(), transactional);
        prop_assert!(!batch.is_control());
        prop_assert_eq!(batch.producer_id(), producer_id);
        prop_assert_eq!((batch.producer_epoch(), batch.base_sequence()), (3, 9));
        prop_assert_eq!(batch.partition_leader_epoch(), 12);
        prop_assert_eq!(batch.records_count() as usize, records.len());
        let max = records.iter().map(|r| r.timestamp).max().unwrap();
        prop_assert_eq!(batch.max_timestamp(), max);
        let decoded = decode(&batch);
        prop_assert_eq!(decoded.len(), records.len());
        for (i, ((offset, got), want)) in decoded.iter().zip(&records).enumerate() {
            prop_assert_eq!(*offset, base_offset + i as i64);
            let mut want = want.clone();
            if log_append {
                want.timestamp = max;
            }
            prop_assert_eq!(got, &want);
        }
        // Zero-copy when uncompressed: values point into the batch bytes.
        if compression == Compression::None {
            let mut scratch = Vec::new();
            for r in batch.records(&mut scratch, &Limits::default()).unwrap() {
                if let Some(v) = r.unwrap().value {
                    prop_assert!(bytes.as_ptr_range().contains(&v.as_ptr()) || v.is_empty());
                }
            }
            prop_assert!(scratch.is_empty());
        }
    }

    /// A batch's every strict prefix is a partial tail, never a batch or an error.
    #[test]
    fn a_batch_built_a_record_at_a_time_is_the_encoders_batch(
        mut records in prop::collection::vec(record(), 1..40),
        compression in codec(),
    ) {
        // The encoder's base timestamp is the smallest, the builder's the first: in order,
        // they agree.
        records.sort_by_key(|r| r.timestamp);
        let options = BatchOptions { compression, ..BatchOptions::default() };
        let mut builder = BatchBuilder::new(options);
        let mut size = 0;
        for r in &records {
            let headers: Vec<Header<'_>> = r
                .headers
                .iter()
                .map(|(key, value)| Header { key, value: value.as_deref() })
                .collect();
            builder
                .push(&NewRecord {
                    timestamp: r.timestamp,
                    key: r.key.as_deref(),
                    value: r.value.as_deref(),
                    headers: &headers,
                })
                .unwrap();
            prop_assert!(builder.size() > size);
            size = builder.size();
        }
        prop_assert_eq!(builder.records(), records.len());
        prop_assert_eq!(builder.finish().unwrap(), encode(&records, &options));
    }

    #[test]
    fn every_prefix_is_a_partial_tail(records in prop::collection::vec(record(), 1..5), compression in codec()) {
        let bytes = encode(&records, &BatchOptions { compression, ..BatchOptions::default() });
        for cut in 0..bytes.len() {
            let mut batches = Batches::new(&bytes[..cut]);
            prop_assert!(batches.next().is_none(), "cut {}", cut);
            prop_assert_eq!(batches.tail().len(), cut);
        }
    }

    /// Any single flipped bit in the CRC-covered part is caught by the CRC.
    #[test]
    fn flipped_bits_fail_the_crc(records in prop::collection::vec(record(), 1..5), at in any::<prop::sample::Index>(), bit in 0u8..8) {
        let mut bytes = encode(&records, &BatchOptions::default());
        let at = 21 + at.index(bytes.len() - 21);
        bytes[at] ^= 1 << bit;
        // A flip in the attributes or the record count may be refused before the CRC is
        // checked: also a typed error.
        match Batches::new(&bytes).next().unwrap() {
            Ok(batch) => {
                let caught = matches!(batch.verify_crc(), Err(DecodeError::Crc { .. }));
                prop_assert!(caught);
            }
            Err(e) => {
                let typed = matches!(e, DecodeError::UnknownCompression(_) | DecodeError::InvalidLength { what: "record count", .. });
                prop_assert!(typed, "{}", e);
            }
        }
    }

    /// Arbitrary bytes never panic the walker.
    #[test]
    fn garbage_never_panics(bytes in prop::collection::vec(any::<u8>(), 0..400), from in any::<i64>()) {
        let _ = walk(&bytes, from, &mut Vec::new(), &Limits::default(), |_, _| {});
    }
}

#[test]
fn crc32c_vectors() {
    // The CRC-32C check value (RFC 3720 appendix B.4 and every CRC catalogue).
    assert_eq!(crc32c::crc32c(b"123456789"), 0xe306_9283);
    assert_eq!(crc32c::crc32c(&[0; 32]), 0x8a91_36aa);
    // A batch's stored CRC covers attributes..end and nothing before.
    let bytes = encode(&simple(3), &BatchOptions::default());
    let stored = u32::from_be_bytes(bytes[17..21].try_into().unwrap());
    assert_eq!(stored, crc32c::crc32c(&bytes[21..]));
    assert_eq!(one_batch(&bytes).crc(), stored);
}

/// Encodes `records` with kafka-protocol (v2, `compression`), base offset 0.
fn kafka_protocol_batch(records: &[Owned], compression: kpr::Compression) -> Vec<u8> {
    let records: Vec<kpr::Record> = records
        .iter()
        .enumerate()
        .map(|(i, r)| kpr::Record {
            transactional: false,
            control: false,
            partition_leader_epoch: -1,
            producer_id: -1,
            producer_epoch: -1,
            timestamp_type: kpr::TimestampType::Creation,
            offset: i as i64,
            sequence: -1,
            timestamp: r.timestamp,
            key: r.key.clone().map(Bytes::from),
            value: r.value.clone().map(Bytes::from),
            headers: r
                .headers
                .iter()
                .map(|(k, v)| (k.clone().into(), v.clone().map(Bytes::from)))
                .collect(),
        })
        .collect();
    let mut buf = BytesMut::new();
    let options = kpr::RecordEncodeOptions {
        version: 2,
        compression,
    };
    kpr::RecordBatchEncoder::encode(&mut buf, records.iter(), &options).unwrap();
    buf.to_vec()
}

/// kafka-protocol writes one batch per record here; ours, given the same records one by one
/// at the same base offsets, must match it byte for byte.
#[test]
fn same_bytes_as_an_independent_encoder() {
    let records = simple(20);
    let theirs = kafka_protocol_batch(&records, kpr::Compression::None);
    let mut ours = Vec::new();
    for (i, record) in records.iter().enumerate() {
        let options = BatchOptions {
            base_offset: i as i64,
            ..BatchOptions::default()
        };
        ours.extend(encode(std::slice::from_ref(record), &options));
    }
    assert_eq!(ours, theirs);
}

/// A batch sealed under one producer id, re-stamped with another, is the batch the encoder
/// would have written with that id in the first place, for every codec.
#[test]
fn restamping_equals_encoding_with_the_new_producer_state() {
    let records = simple(30);
    for compression in [Compression::None, Compression::Gzip, Compression::Zstd] {
        let old = BatchOptions {
            compression,
            producer_id: 7,
            producer_epoch: 1,
            base_sequence: 100,
            ..BatchOptions::default()
        };
        let new = BatchOptions {
            producer_id: 9001,
            producer_epoch: 0,
            base_sequence: 0,
            ..old
        };
        let mut bytes = encode(&records, &old);
        restamp(&mut bytes, 9001, 0, 0).unwrap();
        assert_eq!(bytes, encode(&records, &new), "{compression:?}");
        let batch = one_batch(&bytes);
        batch.verify_crc().unwrap();
        assert_eq!(
            (
                batch.producer_id(),
                batch.producer_epoch(),
                batch.base_sequence()
            ),
            (9001, 0, 0)
        );
    }
    assert!(restamp(&mut [0; 60], 1, 0, 0).is_err());
}

#[test]
fn decodes_what_an_independent_encoder_compressed() {
    let records = simple(200);
    for (theirs, ours) in [
        (kpr::Compression::Gzip, Compression::Gzip),
        (kpr::Compression::Snappy, Compression::Snappy),
        (kpr::Compression::Lz4, Compression::Lz4),
        (kpr::Compression::Zstd, Compression::Zstd),
    ] {
        let bytes = kafka_protocol_batch(&records, theirs);
        let mut decoded = Vec::new();
        for batch in Batches::new(&bytes) {
            let batch = batch.unwrap();
            assert_eq!(batch.compression(), ours);
            batch.verify_crc().unwrap();
            decoded.extend(decode(&batch));
        }
        let offsets: Vec<i64> = decoded.iter().map(|(o, _)| *o).collect();
        assert_eq!(offsets, (0..200).collect::<Vec<i64>>(), "{ours}");
        let decoded: Vec<Owned> = decoded.into_iter().map(|(_, r)| r).collect();
        assert_eq!(decoded, records, "{ours}");
    }
}

#[test]
fn walk_skips_control_batches_filters_offsets_and_drops_the_tail() {
    let records = simple(10);
    let mut log = encode(&records, &BatchOptions::default());
    // A control batch (a transaction marker) at offsets 10..=10.
    let control = BatchOptions {
        base_offset: 10,
        control: true,
        transactional: true,
        ..BatchOptions::default()
    };
    log.extend(encode(&simple(1), &control));
    let third = BatchOptions {
        base_offset: 11,
        compression: Compression::Zstd,
        ..BatchOptions::default()
    };
    log.extend(encode(&simple(5), &third));
    let fourth = encode(
        &simple(5),
        &BatchOptions {
            base_offset: 16,
            ..BatchOptions::default()
        },
    );
    let whole = log.len();
    log.extend(&fourth[..fourth.len() - 1]);

    let mut seen = Vec::new();
    let mut scratch = Vec::new();
    let walked = walk(&log, 7, &mut scratch, &Limits::default(), |batch, r| {
        assert!(!batch.is_control());
        seen.push(r.offset);
    })
    .unwrap();
    assert_eq!(seen, [7, 8, 9, 11, 12, 13, 14, 15]);
    assert_eq!(walked.records, 8);
    assert_eq!(walked.next_offset, 16);
    assert_eq!(walked.partial_tail, log.len() - whole);

    // Starting past every complete batch: nothing, and the offset stays.
    let walked = walk(&log, 16, &mut scratch, &Limits::default(), |_, _| panic!()).unwrap();
    assert_eq!((walked.records, walked.next_offset), (0, 16));
}

#[test]
fn a_read_committed_walk_drops_aborted_transactions_only() {
    // Producer 7 aborts (0..=1, marker 2), then commits (3..=4, marker 5); producer 8 commits
    // (6, marker 8) around a plain batch (7); producer 9 aborts with compression (9..=10,
    // marker 11).
    let data = |base_offset, producer_id, n, compression| {
        let options = BatchOptions {
            base_offset,
            producer_id,
            producer_epoch: 0,
            transactional: true,
            compression,
            ..BatchOptions::default()
        };
        encode(&simple(n), &options)
    };
    let marker = |base_offset, producer_id, kind: u8| {
        let options = BatchOptions {
            base_offset,
            producer_id,
            producer_epoch: 0,
            transactional: true,
            control: true,
            ..BatchOptions::default()
        };
        let record = Owned {
            timestamp: 0,
            key: Some(vec![0, 0, 0, kind]),
            value: Some(vec![0; 6]),
            headers: Vec::new(),
        };
        encode(&[record], &options)
    };
    let plain = BatchOptions {
        base_offset: 7,
        ..BatchOptions::default()
    };
    let log: Vec<u8> = [
        data(0, 7, 2, Compression::None),
        marker(2, 7, 0),
        data(3, 7, 2, Compression::None),
        marker(5, 7, 1),
        data(6, 8, 1, Compression::None),
        encode(&simple(1), &plain),
        marker(8, 8, 1),
        data(9, 9, 2, Compression::Lz4),
        marker(11, 9, 0),
    ]
    .concat();
    let aborted = [
        AbortedTransaction {
            producer_id: 9,
            first_offset: 9,
        },
        AbortedTransaction {
            producer_id: 7,
            first_offset: 0,
        },
    ];
    let mut scratch = Vec::new();
    let mut seen = Vec::new();
    let walked = walk_committed(
        &log,
        0,
        &aborted,
        &mut scratch,
        &Limits::default(),
        |_, r| {
            seen.push(r.offset);
        },
    )
    .unwrap();
    assert_eq!(seen, [3, 4, 6, 7]);
    assert_eq!((walked.records, walked.next_offset), (4, 12));

    // Read uncommitted, every data record shows.
    let mut all = Vec::new();
    walk(&log, 0, &mut scratch, &Limits::default(), |_, r| {
        all.push(r.offset)
    })
    .unwrap();
    assert_eq!(all, [0, 1, 3, 4, 6, 7, 9, 10]);
}

/// Rewrites the CRC after an edit, so the test reaches the check after it.
fn fix_crc(bytes: &mut [u8]) {
    let crc = crc32c::crc32c(&bytes[21..]);
    bytes[17..21].copy_from_slice(&crc.to_be_bytes());
}

#[test]
fn malformed_batches_are_typed_errors() {
    let good = encode(&simple(3), &BatchOptions::default());
    let limits = Limits::default();
    let first_err = |bytes: &[u8]| walk(bytes, 0, &mut Vec::new(), &limits, |_, _| {}).unwrap_err();

    let mut magic = good.clone();
    magic[16] = 1;
    assert_eq!(first_err(&magic), DecodeError::UnsupportedMagic(1));

    let mut codec = good.clone();
    codec[22] |= 5;
    assert_eq!(first_err(&codec), DecodeError::UnknownCompression(5));

    let mut short = good.clone();
    short[8..12].copy_from_slice(&48i32.to_be_bytes());
    assert!(matches!(
        first_err(&short),
        DecodeError::InvalidLength {
            what: "record batch",
            len: 48
        }
    ));

    let mut crc = good.clone();
    crc[20] ^= 1;
    assert!(matches!(first_err(&crc), DecodeError::Crc { .. }));

    let mut count = good.clone();
    count[57..61].copy_from_slice(&4i32.to_be_bytes());
    fix_crc(&mut count);
    assert_eq!(
        first_err(&count),
        DecodeError::RecordCount {
            declared: 4,
            found: 3
        }
    );
    count[57..61].copy_from_slice(&2i32.to_be_bytes());
    fix_crc(&mut count);
    assert_eq!(
        first_err(&count),
        DecodeError::RecordCount {
            declared: 2,
            found: 3
        }
    );
    count[57..61].copy_from_slice(&(-1i32).to_be_bytes());
    fix_crc(&mut count);
    assert!(matches!(
        first_err(&count),
        DecodeError::InvalidLength {
            what: "record count",
            ..
        }
    ));

    // The first record's length varint (at the header's end) claims one byte more.
    let mut len = good.clone();
    len[BATCH_HEADER_LEN] += 2;
    fix_crc(&mut len);
    assert!(matches!(
        first_err(&len),
        DecodeError::RecordLength { .. }
            | DecodeError::Truncated { .. }
            | DecodeError::VarintOverflow
    ));

    // Compressed garbage.
    let mut gz = encode(
        &simple(3),
        &BatchOptions {
            compression: Compression::Gzip,
            ..BatchOptions::default()
        },
    );
    let end = gz.len();
    gz[end - 8] ^= 0xff; // the gzip trailer's CRC-32
    fix_crc(&mut gz);
    assert!(matches!(
        first_err(&gz),
        DecodeError::Decompress {
            codec: Compression::Gzip,
            ..
        }
    ));
}

#[test]
fn every_truncation_of_the_records_is_a_typed_error() {
    let good = encode(&simple(4), &BatchOptions::default());
    for cut in BATCH_HEADER_LEN..good.len() {
        let mut bytes = good[..cut].to_vec();
        let batch_length = (cut - 12) as i32;
        bytes[8..12].copy_from_slice(&batch_length.to_be_bytes());
        fix_crc(&mut bytes);
        let err = walk(&bytes, 0, &mut Vec::new(), &Limits::default(), |_, _| {});
        assert!(
            matches!(
                err,
                Err(DecodeError::Truncated { .. } | DecodeError::RecordCount { .. })
            ),
            "cut {cut}: {err:?}"
        );
    }
}

/// `records` encoded as one batch with each codec that compresses.
fn compressed(records: &[Owned]) -> impl Iterator<Item = (Compression, Vec<u8>)> + '_ {
    Compression::ALL
        .into_iter()
        .filter(|&c| c != Compression::None)
        .map(|compression| {
            let options = BatchOptions {
                compression,
                ..BatchOptions::default()
            };
            (compression, encode(records, &options))
        })
}

#[test]
fn decompression_is_bounded() {
    let records = vec![Owned {
        timestamp: 0,
        key: None,
        value: Some(vec![0; 1 << 20]),
        headers: vec![],
    }];
    for (compression, bytes) in compressed(&records) {
        assert!(bytes.len() < 64 * 1024, "{compression} compresses zeros");
        let limits = Limits {
            max_decompressed_len: 512 * 1024,
            ..Limits::default()
        };
        let err = walk(&bytes, 0, &mut Vec::new(), &limits, |_, _| {}).unwrap_err();
        assert!(
            matches!(err, DecodeError::Limit(l) if l.name == "decompressed batch length" && l.max == 512 * 1024),
            "{compression}: {err}"
        );
    }
}

/// The bound is inclusive for every codec, and a bound too large to reserve room for (zstd
/// decodes into room reserved up front) still decodes.
#[test]
fn decompression_bound_is_exact() {
    let records: Vec<Owned> = (0..50u8)
        .map(|i| Owned {
            timestamp: i64::from(i),
            key: Some(vec![i; 3]),
            value: Some(vec![i; 100 + usize::from(i)]),
            headers: vec![],
        })
        .collect();
    let plain = encode(&records, &BatchOptions::default());
    // The records section: the batch after its 61-byte header.
    let exact = plain.len() - 61;
    for (compression, bytes) in compressed(&records) {
        for (max, fits) in [(exact, true), (exact - 1, false), (usize::MAX, true)] {
            let limits = Limits {
                max_decompressed_len: max,
                ..Limits::default()
            };
            let mut n = 0;
            let walked = walk(&bytes, 0, &mut Vec::new(), &limits, |_, _| n += 1);
            match walked {
                Ok(_) => assert!(fits && n == 50, "{compression} at {max}: {n} records"),
                Err(DecodeError::Limit(l)) => assert!(!fits && l.max == max, "{compression}"),
                Err(e) => panic!("{compression} at {max}: {e}"),
            }
        }
    }
}

#[test]
fn empty_batches_are_refused() {
    let mut out = Vec::new();
    let err = BatchEncoder::new()
        .encode(&BatchOptions::default(), &[], &mut out)
        .unwrap_err();
    assert!(matches!(
        err,
        ringwire_kafka::EncodeError::TooLong { len: 0, .. }
    ));
}
