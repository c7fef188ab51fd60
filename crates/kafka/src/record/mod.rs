//! Record batch v2 (magic 2): the on-disk and on-wire unit of Kafka data.
//!
//! A batch is a 61-byte header (offsets, CRC-32C, attributes, timestamps, producer state, record
//! count) and its records, which may be compressed as one block. [`Batches`] walks a Fetch
//! partition's bytes batch by batch, borrowing each; [`Batch::records`] yields records that
//! borrow the batch (or, for a compressed batch, a caller-owned scratch buffer); [`walk`] adds
//! what a consumer wants on top: CRC checks, control batches skipped, records before the fetch
//! offset dropped. [`BatchEncoder`] writes batches for Produce, and [`BatchBuilder`] a batch a
//! record at a time.

mod batch;
mod compression;
mod encode;
mod gzip;
mod lz4;
mod records;
mod walk;

pub use batch::{Batch, Batches, TimestampType, BATCH_HEADER_LEN};
pub use compression::Compression;
pub use encode::{restamp, BatchBuilder, BatchEncoder, BatchOptions, NewRecord};
pub use records::{Header, Headers, Record, Records};
pub use walk::{walk, walk_committed, Walk};
