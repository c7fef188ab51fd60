//! What a consumer does with a partition's bytes: checked batches, data records from the
//! fetch offset on, and for a read-committed consumer none of an aborted transaction's.

use super::{Batch, Batches, Record};
use crate::api::fetch::AbortedTransaction;
use crate::limits::Limits;
use crate::DecodeError;

/// The control record type that ends an aborted transaction (1 is a commit).
const ABORT_MARKER: i16 = 0;

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
    on_record: impl FnMut(&Batch<'a>, Record<'_>),
) -> Result<Walk, DecodeError> {
    walk_isolated(records, fetch_offset, None, scratch, limits, on_record)
}

/// [`walk`] for a read-committed consumer: the batches of the transactions in `aborted` (the
/// partition's `aborted_transactions` from a Fetch at isolation level 1) are skipped, from
/// each one's first offset up to its producer's abort marker.
pub fn walk_committed<'a>(
    records: &'a [u8],
    fetch_offset: i64,
    aborted: &[AbortedTransaction],
    scratch: &mut Vec<u8>,
    limits: &Limits,
    on_record: impl FnMut(&Batch<'a>, Record<'_>),
) -> Result<Walk, DecodeError> {
    walk_isolated(
        records,
        fetch_offset,
        Some(aborted),
        scratch,
        limits,
        on_record,
    )
}

fn walk_isolated<'a>(
    records: &'a [u8],
    fetch_offset: i64,
    aborted: Option<&[AbortedTransaction]>,
    scratch: &mut Vec<u8>,
    limits: &Limits,
    mut on_record: impl FnMut(&Batch<'a>, Record<'_>),
) -> Result<Walk, DecodeError> {
    let mut pending: Vec<AbortedTransaction> = aborted.map_or_else(Vec::new, <[_]>::to_vec);
    // Latest first, so the next to open pops off the end.
    pending.sort_unstable_by_key(|t| std::cmp::Reverse(t.first_offset));
    // Producers whose aborted transaction is open at the current batch.
    let mut aborting: Vec<i64> = Vec::new();
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
        if aborted.is_some() && batch.is_transactional() {
            while pending
                .last()
                .is_some_and(|t| t.first_offset <= batch.last_offset())
            {
                let opened = pending.pop().expect("checked above");
                aborting.push(opened.producer_id);
            }
            let producer = batch.producer_id();
            if batch.is_control() {
                if control_type(&batch, scratch, limits)? == Some(ABORT_MARKER) {
                    aborting.retain(|&p| p != producer);
                }
                continue;
            }
            if aborting.contains(&producer) {
                continue;
            }
        }
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

/// The type of a control batch's marker (its record key: version, then type, both i16).
fn control_type(
    batch: &Batch<'_>,
    scratch: &mut Vec<u8>,
    limits: &Limits,
) -> Result<Option<i16>, DecodeError> {
    let Some(record) = batch.records(scratch, limits)?.next() else {
        return Ok(None);
    };
    Ok(record?
        .key
        .and_then(|key| key.get(2..4))
        .map(|t| i16::from_be_bytes([t[0], t[1]])))
}
