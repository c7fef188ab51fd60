//! Writing record batches v2 for Produce.

use ringwire_wire::{put_varint, varint_len, MAX_VARINT_LEN};

use super::batch::{
    BATCH_HEADER_LEN, CONTROL_BIT, CRC_AT, CRC_START, TIMESTAMP_TYPE_BIT, TRANSACTIONAL_BIT,
};
use super::compression::compress;
use super::{Compression, Header, TimestampType};
use crate::EncodeError;

/// A record to write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NewRecord<'a> {
    /// Timestamp in ms since the epoch (CreateTime).
    pub timestamp: i64,
    /// Key; `None` writes a null key.
    pub key: Option<&'a [u8]>,
    /// Value; `None` writes a null value (a tombstone).
    pub value: Option<&'a [u8]>,
    /// Headers.
    pub headers: &'a [Header<'a>],
}

/// Batch-level fields. The defaults are those of a plain, non-idempotent producer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BatchOptions {
    /// Base offset (the broker assigns real offsets; producers send 0).
    pub base_offset: i64,
    /// Leader epoch (-1 from producers).
    pub partition_leader_epoch: i32,
    /// Codec for the records.
    pub compression: Compression,
    /// Timestamp type.
    pub timestamp_type: TimestampType,
    /// Transactional batch.
    pub transactional: bool,
    /// Control batch (transaction markers).
    pub control: bool,
    /// Idempotent producer id (-1: none).
    pub producer_id: i64,
    /// Producer epoch (-1: none).
    pub producer_epoch: i16,
    /// Sequence of the first record (-1: none).
    pub base_sequence: i32,
}

impl Default for BatchOptions {
    fn default() -> Self {
        BatchOptions {
            base_offset: 0,
            partition_leader_epoch: -1,
            compression: Compression::None,
            timestamp_type: TimestampType::CreateTime,
            transactional: false,
            control: false,
            producer_id: -1,
            producer_epoch: -1,
            base_sequence: -1,
        }
    }
}

impl BatchOptions {
    fn attributes(&self) -> i16 {
        let mut attributes = i16::from(self.compression.bits());
        if self.timestamp_type == TimestampType::LogAppendTime {
            attributes |= TIMESTAMP_TYPE_BIT;
        }
        if self.transactional {
            attributes |= TRANSACTIONAL_BIT;
        }
        if self.control {
            attributes |= CONTROL_BIT;
        }
        attributes
    }
}

/// Writes record batches, keeping one buffer for the uncompressed records of compressed
/// batches across calls.
#[derive(Debug, Default)]
pub struct BatchEncoder {
    plain: Vec<u8>,
}

impl BatchEncoder {
    /// An encoder with an empty scratch buffer.
    #[must_use]
    pub fn new() -> Self {
        BatchEncoder::default()
    }

    /// Appends one batch holding `records` to `out`.
    pub fn encode(
        &mut self,
        options: &BatchOptions,
        records: &[NewRecord<'_>],
        out: &mut Vec<u8>,
    ) -> Result<(), EncodeError> {
        let last_offset_delta = i32::try_from(records.len())
            .ok()
            .filter(|&n| n > 0)
            .map(|n| n - 1)
            .ok_or(EncodeError::TooLong {
                what: "record batch (0 records, or more than i32::MAX)",
                len: records.len(),
            })?;
        let base_timestamp = records.iter().map(|r| r.timestamp).min().unwrap_or(-1);
        let max_timestamp = records.iter().map(|r| r.timestamp).max().unwrap_or(-1);

        let start = out.len();
        out.extend_from_slice(&options.base_offset.to_be_bytes());
        out.extend_from_slice(&0i32.to_be_bytes()); // batch length, patched below
        out.extend_from_slice(&options.partition_leader_epoch.to_be_bytes());
        out.push(2); // magic
        out.extend_from_slice(&0u32.to_be_bytes()); // CRC, patched below
        out.extend_from_slice(&options.attributes().to_be_bytes());
        out.extend_from_slice(&last_offset_delta.to_be_bytes());
        out.extend_from_slice(&base_timestamp.to_be_bytes());
        out.extend_from_slice(&max_timestamp.to_be_bytes());
        out.extend_from_slice(&options.producer_id.to_be_bytes());
        out.extend_from_slice(&options.producer_epoch.to_be_bytes());
        out.extend_from_slice(&options.base_sequence.to_be_bytes());
        out.extend_from_slice(&(last_offset_delta + 1).to_be_bytes());
        debug_assert_eq!(out.len() - start, BATCH_HEADER_LEN);

        if options.compression == Compression::None {
            write_records(records, base_timestamp, out)?;
        } else {
            self.plain.clear();
            write_records(records, base_timestamp, &mut self.plain)?;
            compress(options.compression, &self.plain, out)?;
        }

        let batch_length = out.len() - start - 12;
        let batch_length = i32::try_from(batch_length).map_err(|_| EncodeError::TooLong {
            what: "record batch",
            len: batch_length,
        })?;
        out[start + 8..start + 12].copy_from_slice(&batch_length.to_be_bytes());
        let crc = crc32c::crc32c(&out[start + CRC_START..]);
        out[start + CRC_AT..start + CRC_AT + 4].copy_from_slice(&crc.to_be_bytes());
        Ok(())
    }
}

/// Appends a zigzag varint.
fn put(out: &mut Vec<u8>, v: i64) {
    let mut tmp = [0u8; MAX_VARINT_LEN];
    let n = put_varint(&mut tmp, v);
    out.extend_from_slice(&tmp[..n]);
}

/// Length of a nullable field: its varint length prefix plus its bytes.
fn nullable_len(field: Option<&[u8]>) -> usize {
    field.map_or(varint_len(-1), |b| varint_len(b.len() as i64) + b.len())
}

fn put_nullable(out: &mut Vec<u8>, field: Option<&[u8]>) {
    match field {
        Some(bytes) => {
            put(out, bytes.len() as i64);
            out.extend_from_slice(bytes);
        }
        None => put(out, -1),
    }
}

fn write_records(
    records: &[NewRecord<'_>],
    base_timestamp: i64,
    out: &mut Vec<u8>,
) -> Result<(), EncodeError> {
    for (offset_delta, record) in records.iter().enumerate() {
        let timestamp_delta = record.timestamp - base_timestamp;
        let headers_len: usize = record
            .headers
            .iter()
            .map(|h| nullable_len(Some(h.key.as_bytes())) + nullable_len(h.value))
            .sum();
        let body_len = 1
            + varint_len(timestamp_delta)
            + varint_len(offset_delta as i64)
            + nullable_len(record.key)
            + nullable_len(record.value)
            + varint_len(record.headers.len() as i64)
            + headers_len;
        if i32::try_from(body_len).is_err() {
            return Err(EncodeError::TooLong {
                what: "record",
                len: body_len,
            });
        }
        put(out, body_len as i64);
        out.push(0); // attributes: unused
        put(out, timestamp_delta);
        put(out, offset_delta as i64);
        put_nullable(out, record.key);
        put_nullable(out, record.value);
        put(out, record.headers.len() as i64);
        for header in record.headers {
            put_nullable(out, Some(header.key.as_bytes()));
            put_nullable(out, header.value);
        }
    }
    Ok(())
}
