//! Writing record batches v2 for Produce.

use ringwire_wire::{push_varint, varint_len};

use super::batch::{
    BATCH_HEADER_LEN, CONTROL_BIT, CRC_AT, CRC_START, PRODUCER_ID_AT, TIMESTAMP_TYPE_BIT,
    TRANSACTIONAL_BIT,
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
        let span = Span {
            count: records.len(),
            base_timestamp: records.iter().map(|r| r.timestamp).min().unwrap_or(-1),
            max_timestamp: records.iter().map(|r| r.timestamp).max().unwrap_or(-1),
        };
        let start = out.len();
        out.resize(start + BATCH_HEADER_LEN, 0);
        let plain = if options.compression == Compression::None {
            &mut *out
        } else {
            self.plain.clear();
            &mut self.plain
        };
        for (offset_delta, record) in records.iter().enumerate() {
            write_record(record, offset_delta, span.base_timestamp, plain)?;
        }
        if options.compression != Compression::None {
            compress(options.compression, &self.plain, out)?;
        }
        seal(options, &span, &mut out[start..])
    }
}

/// One batch built a record at a time, as a producer's records arrive: uncompressed records
/// go straight after room for the header, so an uncompressed batch is sealed in place.
#[derive(Debug)]
pub struct BatchBuilder {
    options: BatchOptions,
    buf: Vec<u8>,
    span: Span,
}

impl BatchBuilder {
    /// An empty batch written with `options`.
    #[must_use]
    pub fn new(options: BatchOptions) -> Self {
        BatchBuilder::with_buffer(options, Vec::new())
    }

    /// An empty batch written into `buf`, cleared first: a finished batch's buffer, reused
    /// with its capacity.
    #[must_use]
    pub fn with_buffer(options: BatchOptions, mut buf: Vec<u8>) -> Self {
        let header = if options.compression == Compression::None {
            BATCH_HEADER_LEN
        } else {
            0
        };
        buf.clear();
        buf.resize(header, 0);
        BatchBuilder {
            options,
            buf,
            span: Span {
                count: 0,
                base_timestamp: -1,
                max_timestamp: -1,
            },
        }
    }

    /// Appends `record`; its timestamp delta is taken from the first record's timestamp.
    pub fn push(&mut self, record: &NewRecord<'_>) -> Result<(), EncodeError> {
        if self.span.count == 0 {
            self.span.base_timestamp = record.timestamp;
        }
        write_record(
            record,
            self.span.count,
            self.span.base_timestamp,
            &mut self.buf,
        )?;
        self.span.count += 1;
        self.span.max_timestamp = self.span.max_timestamp.max(record.timestamp);
        Ok(())
    }

    /// Records pushed.
    #[must_use]
    pub fn records(&self) -> usize {
        self.span.count
    }

    /// Bytes of the records pushed so far (before compression).
    #[must_use]
    pub fn size(&self) -> usize {
        if self.options.compression == Compression::None {
            self.buf.len() - BATCH_HEADER_LEN
        } else {
            self.buf.len()
        }
    }

    /// The finished batch: sealed in place, or compressed into a new buffer.
    pub fn finish(self) -> Result<Vec<u8>, EncodeError> {
        let mut out = if self.options.compression == Compression::None {
            self.buf
        } else {
            let mut out = vec![0; BATCH_HEADER_LEN];
            compress(self.options.compression, &self.buf, &mut out)?;
            out
        };
        seal(&self.options, &self.span, &mut out)?;
        Ok(out)
    }
}

/// What a batch header says about its records.
#[derive(Debug, Clone, Copy)]
struct Span {
    count: usize,
    base_timestamp: i64,
    max_timestamp: i64,
}

/// Writes the header into the first [`BATCH_HEADER_LEN`] bytes of `batch` (its records
/// follow), then the CRC over both.
fn seal(options: &BatchOptions, span: &Span, batch: &mut [u8]) -> Result<(), EncodeError> {
    let last_offset_delta = i32::try_from(span.count)
        .ok()
        .filter(|&n| n > 0)
        .map(|n| n - 1)
        .ok_or(EncodeError::TooLong {
            what: "record batch (0 records, or more than i32::MAX)",
            len: span.count,
        })?;
    let batch_length = batch.len() - 12;
    let batch_length = i32::try_from(batch_length).map_err(|_| EncodeError::TooLong {
        what: "record batch",
        len: batch_length,
    })?;
    let mut header = &mut batch[..BATCH_HEADER_LEN];
    let mut put = |bytes: &[u8]| {
        let (field, rest) = std::mem::take(&mut header).split_at_mut(bytes.len());
        field.copy_from_slice(bytes);
        header = rest;
    };
    put(&options.base_offset.to_be_bytes());
    put(&batch_length.to_be_bytes());
    put(&options.partition_leader_epoch.to_be_bytes());
    put(&[2]); // magic
    put(&[0; 4]); // CRC, written below
    put(&options.attributes().to_be_bytes());
    put(&last_offset_delta.to_be_bytes());
    put(&span.base_timestamp.to_be_bytes());
    put(&span.max_timestamp.to_be_bytes());
    put(&options.producer_id.to_be_bytes());
    put(&options.producer_epoch.to_be_bytes());
    put(&options.base_sequence.to_be_bytes());
    put(&(last_offset_delta + 1).to_be_bytes());
    let crc = crc32c::crc32c(&batch[CRC_START..]);
    batch[CRC_AT..CRC_AT + 4].copy_from_slice(&crc.to_be_bytes());
    Ok(())
}

/// Re-stamps a sealed batch (one, whole, as [`BatchBuilder::finish`] made it) with another
/// idempotent producer id, epoch and base sequence, and its CRC again: for a producer that must
/// send batches it already sealed under a fresh producer id.
///
/// # Errors
///
/// `batch` is shorter than a batch header.
pub fn restamp(
    batch: &mut [u8],
    producer_id: i64,
    producer_epoch: i16,
    base_sequence: i32,
) -> Result<(), EncodeError> {
    if batch.len() < BATCH_HEADER_LEN {
        return Err(EncodeError::BufferTooSmall {
            need: BATCH_HEADER_LEN,
        });
    }
    batch[PRODUCER_ID_AT..PRODUCER_ID_AT + 8].copy_from_slice(&producer_id.to_be_bytes());
    batch[PRODUCER_ID_AT + 8..PRODUCER_ID_AT + 10].copy_from_slice(&producer_epoch.to_be_bytes());
    batch[PRODUCER_ID_AT + 10..PRODUCER_ID_AT + 14].copy_from_slice(&base_sequence.to_be_bytes());
    let crc = crc32c::crc32c(&batch[CRC_START..]);
    batch[CRC_AT..CRC_AT + 4].copy_from_slice(&crc.to_be_bytes());
    Ok(())
}

/// Length of a nullable field: its varint length prefix plus its bytes.
fn nullable_len(field: Option<&[u8]>) -> usize {
    field.map_or(varint_len(-1), |b| varint_len(b.len() as i64) + b.len())
}

fn put_nullable(out: &mut Vec<u8>, field: Option<&[u8]>) {
    match field {
        Some(bytes) => {
            push_varint(out, bytes.len() as i64);
            out.extend_from_slice(bytes);
        }
        None => push_varint(out, -1),
    }
}

fn write_record(
    record: &NewRecord<'_>,
    offset_delta: usize,
    base_timestamp: i64,
    out: &mut Vec<u8>,
) -> Result<(), EncodeError> {
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
    push_varint(out, body_len as i64);
    out.push(0); // attributes: unused
    push_varint(out, timestamp_delta);
    push_varint(out, offset_delta as i64);
    put_nullable(out, record.key);
    put_nullable(out, record.value);
    push_varint(out, record.headers.len() as i64);
    for header in record.headers {
        put_nullable(out, Some(header.key.as_bytes()));
        put_nullable(out, header.value);
    }
    Ok(())
}
