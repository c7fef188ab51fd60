//! What a consumer does with a partition's bytes: checked batches, data records from the
//! fetch offset on.

use super::{Batch, Batches, Record};
use crate::limits::Limits;
use crate::DecodeError;

/// How a [`walk`] ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Walk {
    /// Records handed to the callback.
    pub records: usize,
    /// Offset to fetch from next: after the last complete batch (control batches included), or
    /// the fetch offset when no batch was complete.
    pub next_offset: i64,
    /// Bytes of a partial trailing batch that were dropped. Non-zero with no complete batch
    /// means a batch larger than the fetch's `max_bytes`: raise it to make progress.
    pub partial_tail: usize,
}

/// Walks the batches in `records` (a Fetch partition's bytes), checking each CRC, skipping
/// control batches and calling `on_record` for every data record at or after `fetch_offset`
/// (a compressed batch starts where its producer started it, possibly before). Uncompressed
/// records borrow `records`; compressed ones borrow `scratch`, reused batch after batch.
pub fn walk<'a>(
    records: &'a [u8],
    fetch_offset: i64,
    scratch: &mut Vec<u8>,
    limits: &Limits,
    mut on_record: impl FnMut(&Batch<'a>, Record<'_>),
) -> Result<Walk, DecodeError> {
    let mut batches = Batches::new(records);
    let mut walked = Walk {
        records: 0,
        next_offset: fetch_offset,
        partial_tail: 0,
    };
    for batch in batches.by_ref() {
        let batch = batch?;
        batch.verify_crc()?;
        walked.next_offset = walked
            .next_offset
            .max(batch.last_offset().saturating_add(1));
        if batch.is_control() || batch.last_offset() < fetch_offset {
            continue;
        }
        for record in batch.records(scratch, limits)? {
            let record = record?;
            if record.offset >= fetch_offset {
                walked.records += 1;
                on_record(&batch, record);
            }
        }
    }
    walked.partial_tail = batches.tail().len();
    Ok(walked)
}
