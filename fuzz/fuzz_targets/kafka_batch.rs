//! `kafka_batch`: the record batch walker and the four decompressors on arbitrary bytes.
//! Nothing may panic or allocate past the limit; records come out at or after the fetch
//! offset, in order, borrowed from the input when the batch is uncompressed.
//!
//! Input layout:
//!
//! | bytes | meaning                                                                           |
//! |-------|-----------------------------------------------------------------------------------|
//! | 0     | flags: bit 0 rewrites each complete batch's CRC first (so the fuzzer gets past it)  |
//! | 1     | fetch offset (0..=255)                                                              |
//! | rest  | a Fetch partition's record bytes                                                    |

#![no_main]

use libfuzzer_sys::fuzz_target;
use ringwire_kafka::record::{walk, Compression};
use ringwire_kafka::Limits;

const LIMITS: Limits = Limits {
    max_response_len: 1 << 20,
    max_decompressed_len: 1 << 20,
};

/// Recomputes the CRC-32C of every complete batch (batch length at 8..12, CRC at 17..21,
/// covering 21..end), walking by the declared lengths.
fn fix_crcs(bytes: &mut [u8]) {
    let mut at = 0;
    while let Some(len) = bytes.get(at + 8..at + 12) {
        let len = i32::from_be_bytes(len.try_into().unwrap());
        let Ok(len) = usize::try_from(len) else {
            return;
        };
        let end = at + 12 + len;
        if len < 49 || end > bytes.len() {
            return;
        }
        let crc = crc32c::crc32c(&bytes[at + 21..end]);
        bytes[at + 17..at + 21].copy_from_slice(&crc.to_be_bytes());
        at = end;
    }
}

fuzz_target!(|data: &[u8]| {
    let flags = data.first().copied().unwrap_or(0);
    let from = i64::from(data.get(1).copied().unwrap_or(0));
    let mut bytes = data.get(2..).unwrap_or(&[]).to_vec();
    if flags & 1 != 0 {
        fix_crcs(&mut bytes);
    }
    let range = bytes.as_ptr_range();
    let mut scratch = Vec::new();
    let result = walk(&bytes, from, &mut scratch, &LIMITS, |batch, record| {
        assert!(record.offset >= from);
        assert!(!batch.is_control());
        if batch.compression() == Compression::None {
            if let Some(v) = record.value.filter(|v| !v.is_empty()) {
                assert!(
                    range.contains(&v.as_ptr()),
                    "uncompressed values borrow the input"
                );
            }
        }
        let _ = record.headers.count();
    });
    assert!(scratch.capacity() <= 4 * LIMITS.max_decompressed_len + 4096);
    if let Ok(walked) = result {
        assert!(walked.partial_tail <= bytes.len());
        assert!(walked.next_offset >= from);
    }
});
