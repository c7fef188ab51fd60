//! Which partition a record goes to: the key's murmur2 hash as Java's producer computes it, so
//! keyed records land where every other client puts them; records without a key stick to one
//! partition until its batch is sealed, then move to the next.

/// The partition for `key` among `partitions`: Java's `toPositive(murmur2(key)) % partitions`.
pub(crate) fn for_key(key: &[u8], partitions: usize) -> i32 {
    ((murmur2(key) & 0x7fff_ffff) as usize % partitions) as i32
}

/// Kafka's murmur2 (the Java client's `Utils.murmur2`, seed 0x9747b28c), so
/// that a key lands in the partition Java's producer would pick.
fn murmur2(data: &[u8]) -> u32 {
    const M: u32 = 0x5bd1_e995;
    const R: u32 = 24;
    let mut h: u32 = 0x9747_b28c ^ data.len() as u32;
    let mut chunks = data.chunks_exact(4);
    for chunk in &mut chunks {
        let mut k = u32::from_le_bytes([chunk[0], chunk[1], chunk[2], chunk[3]]);
        k = k.wrapping_mul(M);
        k ^= k >> R;
        k = k.wrapping_mul(M);
        h = h.wrapping_mul(M);
        h ^= k;
    }
    let rest = chunks.remainder();
    if rest.len() >= 3 {
        h ^= u32::from(rest[2]) << 16;
    }
    if rest.len() >= 2 {
        h ^= u32::from(rest[1]) << 8;
    }
    if !rest.is_empty() {
        h ^= u32::from(rest[0]);
        h = h.wrapping_mul(M);
    }
    h ^= h >> 13;
    h = h.wrapping_mul(M);
    h ^= h >> 15;
    h
}

#[cfg(test)]
mod tests {
    use super::murmur2;

    #[test]
    fn murmur2_matches_the_java_client() {
        // Values from Kafka's own `UtilsTest.testMurmur2`.
        let cases: [(&[u8], i32); 4] = [
            (b"21", -973_932_308),
            (b"foobar", -790_332_482),
            (b"a-little-bit-long-string", -985_981_536),
            (b"a-little-bit-longer-string", -1_486_304_829),
        ];
        for (key, expected) in cases {
            assert_eq!(murmur2(key) as i32, expected, "{key:?}");
        }
    }
}
