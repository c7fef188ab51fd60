//! The batch header, and the walk over a partition's concatenated batches.

use ringwire_wire::Cursor;

use super::records::Records;
use super::Compression;
use crate::limits::Limits;
use crate::DecodeError;

/// Bytes before the first record: base offset (8), batch length (4), leader epoch (4), magic (1),
/// CRC (4), attributes (2), last offset delta (4), two timestamps (16), producer id (8), producer
/// epoch (2), base sequence (4), record count (4).
pub const BATCH_HEADER_LEN: usize = 61;
/// Base offset and batch length: the part of the header the length does not count.
const LOG_OVERHEAD: usize = 12;
/// Where the CRC-covered part (attributes..end) starts.
pub(crate) const CRC_START: usize = 21;
/// Offset of the CRC field.
pub(crate) const CRC_AT: usize = 17;
/// Offset of the producer id, followed by the producer epoch and the base sequence.
pub(crate) const PRODUCER_ID_AT: usize = 43;

pub(crate) const TIMESTAMP_TYPE_BIT: i16 = 1 << 3;
pub(crate) const TRANSACTIONAL_BIT: i16 = 1 << 4;
pub(crate) const CONTROL_BIT: i16 = 1 << 5;

/// Which clock a batch's timestamps come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimestampType {
    /// Set by the producer.
    CreateTime,
    /// Set by the broker on append: every record's timestamp is the batch's max timestamp.
    LogAppendTime,
}

/// One record batch v2, borrowed whole.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Batch<'a> {
    raw: &'a [u8],
    base_offset: i64,
    partition_leader_epoch: i32,
    crc: u32,
    attributes: i16,
    compression: Compression,
    last_offset_delta: i32,
    base_timestamp: i64,
    max_timestamp: i64,
    producer_id: i64,
    producer_epoch: i16,
    base_sequence: i32,
    records_count: i32,
}

impl<'a> Batch<'a> {
    /// Parses the header of the complete batch `raw` (exactly `12 + batch_length` bytes).
    fn parse(raw: &'a [u8]) -> Result<Self, DecodeError> {
        let mut c = Cursor::new(raw);
        let base_offset = c.i64_be()?;
        let _batch_length = c.i32_be()?;
        let partition_leader_epoch = c.i32_be()?;
        let magic = c.i8()?;
        if magic != 2 {
            return Err(DecodeError::UnsupportedMagic(magic));
        }
        let crc = c.u32_be()?;
        let attributes = c.i16_be()?;
        // Bits 0..2; the mask keeps the cast lossless.
        let compression = Compression::from_bits((attributes & 0x7) as u8)?;
        let last_offset_delta = c.i32_be()?;
        let base_timestamp = c.i64_be()?;
        let max_timestamp = c.i64_be()?;
        let producer_id = c.i64_be()?;
        let producer_epoch = c.i16_be()?;
        let base_sequence = c.i32_be()?;
        let records_count = c.i32_be()?;
        if records_count < 0 {
            return Err(DecodeError::InvalidLength {
                what: "record count",
                len: records_count.into(),
            });
        }
        Ok(Batch {
            raw,
            base_offset,
            partition_leader_epoch,
            crc,
            attributes,
            compression,
            last_offset_delta,
            base_timestamp,
            max_timestamp,
            producer_id,
            producer_epoch,
            base_sequence,
            records_count,
        })
    }

    /// The whole batch, header included.
    #[must_use]
    pub fn as_bytes(&self) -> &'a [u8] {
        self.raw
    }

    /// Offset of the first record.
    #[must_use]
    pub fn base_offset(&self) -> i64 {
        self.base_offset
    }

    /// Offset of the last record (records may have been compacted away before it).
    #[must_use]
    pub fn last_offset(&self) -> i64 {
        self.base_offset
            .saturating_add(i64::from(self.last_offset_delta))
    }

    /// Leader epoch when the batch was appended.
    #[must_use]
    pub fn partition_leader_epoch(&self) -> i32 {
        self.partition_leader_epoch
    }

    /// Raw attributes.
    #[must_use]
    pub fn attributes(&self) -> i16 {
        self.attributes
    }

    /// Compression codec.
    #[must_use]
    pub fn compression(&self) -> Compression {
        self.compression
    }

    /// Timestamp type.
    #[must_use]
    pub fn timestamp_type(&self) -> TimestampType {
        if self.attributes & TIMESTAMP_TYPE_BIT != 0 {
            TimestampType::LogAppendTime
        } else {
            TimestampType::CreateTime
        }
    }

    /// Part of a transaction.
    #[must_use]
    pub fn is_transactional(&self) -> bool {
        self.attributes & TRANSACTIONAL_BIT != 0
    }

    /// A control batch (transaction markers), not application data.
    #[must_use]
    pub fn is_control(&self) -> bool {
        self.attributes & CONTROL_BIT != 0
    }

    /// Timestamp of the first record.
    #[must_use]
    pub fn base_timestamp(&self) -> i64 {
        self.base_timestamp
    }

    /// Largest record timestamp (or the append time).
    #[must_use]
    pub fn max_timestamp(&self) -> i64 {
        self.max_timestamp
    }

    /// Idempotent producer id (-1 without).
    #[must_use]
    pub fn producer_id(&self) -> i64 {
        self.producer_id
    }

    /// Producer epoch.
    #[must_use]
    pub fn producer_epoch(&self) -> i16 {
        self.producer_epoch
    }

    /// Sequence number of the first record.
    #[must_use]
    pub fn base_sequence(&self) -> i32 {
        self.base_sequence
    }

    /// Declared record count.
    #[must_use]
    pub fn records_count(&self) -> i32 {
        self.records_count
    }

    /// The CRC stored in the header.
    #[must_use]
    pub fn crc(&self) -> u32 {
        self.crc
    }

    /// Checks the stored CRC-32C against the bytes from the attributes to the end.
    pub fn verify_crc(&self) -> Result<(), DecodeError> {
        let computed = crc32c::crc32c(&self.raw[CRC_START..]);
        if computed != self.crc {
            return Err(DecodeError::Crc {
                stored: self.crc,
                computed,
            });
        }
        Ok(())
    }

    /// The records. Uncompressed, they borrow the batch; compressed, they are decompressed
    /// into `scratch` (bounded by `limits.max_decompressed_len`) and borrow it.
    pub fn records<'s>(
        &self,
        scratch: &'s mut Vec<u8>,
        limits: &Limits,
    ) -> Result<Records<'s>, DecodeError>
    where
        'a: 's,
    {
        let payload = &self.raw[BATCH_HEADER_LEN..];
        let bytes: &'s [u8] = match self.compression {
            Compression::None => payload,
            codec => {
                let len = super::compression::decompress(
                    codec,
                    payload,
                    scratch,
                    limits.max_decompressed_len,
                )?;
                &scratch[..len]
            }
        };
        let log_append_time =
            (self.timestamp_type() == TimestampType::LogAppendTime).then_some(self.max_timestamp);
        Ok(Records::new(
            bytes,
            self.records_count,
            self.base_offset,
            self.base_timestamp,
            log_append_time,
        ))
    }
}

/// The complete batches at the front of a partition's record bytes. The broker may cut the last
/// batch short (it fills `max_bytes` with whole batches, then part of the next); that partial
/// tail is not an error: iteration just ends, and [`Batches::tail`] shows it.
#[derive(Debug, Clone)]
pub struct Batches<'a> {
    rest: &'a [u8],
}

impl<'a> Batches<'a> {
    /// Batches in `records` (a Fetch partition's `records` field, or a file of batches).
    #[must_use]
    pub fn new(records: &'a [u8]) -> Self {
        Batches { rest: records }
    }

    /// What is left: after iteration ends, the partial trailing batch (empty when none).
    #[must_use]
    pub fn tail(&self) -> &'a [u8] {
        self.rest
    }
}

impl<'a> Iterator for Batches<'a> {
    type Item = Result<Batch<'a>, DecodeError>;

    fn next(&mut self) -> Option<Self::Item> {
        let mut c = Cursor::new(self.rest);
        let (Ok(_base_offset), Ok(batch_length)) = (c.i64_be(), c.i32_be()) else {
            return None;
        };
        let min = BATCH_HEADER_LEN - LOG_OVERHEAD;
        if usize::try_from(batch_length).map_or(true, |len| len < min) {
            self.rest = &[];
            return Some(Err(DecodeError::InvalidLength {
                what: "record batch",
                len: batch_length.into(),
            }));
        }
        // Positive, checked just above.
        let total = LOG_OVERHEAD + batch_length as usize;
        let raw = self.rest.get(..total)?;
        let batch = Batch::parse(raw);
        self.rest = if batch.is_ok() {
            &self.rest[total..]
        } else {
            &[]
        };
        Some(batch)
    }
}
