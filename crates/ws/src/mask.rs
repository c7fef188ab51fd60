//! Masking (RFC 6455 section 5.3): XOR with a 4-byte key, in place.

/// Bytes per step of the wide loop; a multiple of 4 so the key pattern repeats within a block,
/// and wide enough that the compiler turns the inner loop into a few SIMD XORs.
const BLOCK: usize = 64;

/// XORs `data` with `key` in place, as if `data` started `offset` bytes into a frame's payload
/// (so a payload unmasked in pieces as it arrives gives the same bytes as one call).
///
/// Masking and unmasking are the same operation.
#[inline]
pub fn apply_mask(data: &mut [u8], key: [u8; 4], offset: usize) {
    let key = rotate(key, offset);
    // Blocks first, so every block and the tail start at a multiple of 4: one key phase.
    let (blocks, tail) = data.split_at_mut(data.len() - data.len() % BLOCK);
    let mut pattern = [0u8; BLOCK];
    for (i, b) in pattern.iter_mut().enumerate() {
        *b = key[i % 4];
    }
    for block in blocks.chunks_exact_mut(BLOCK) {
        for (b, k) in block.iter_mut().zip(pattern.iter()) {
            *b ^= k;
        }
    }
    let word = u32::from_ne_bytes(key);
    let mut words = tail.chunks_exact_mut(4);
    for chunk in &mut words {
        let v = u32::from_ne_bytes([chunk[0], chunk[1], chunk[2], chunk[3]]) ^ word;
        chunk.copy_from_slice(&v.to_ne_bytes());
    }
    for (b, k) in words.into_remainder().iter_mut().zip(key) {
        *b ^= k;
    }
}

/// The key as seen from `offset` bytes into the payload.
#[inline]
fn rotate(key: [u8; 4], offset: usize) -> [u8; 4] {
    let mut key = key;
    key.rotate_left(offset % 4);
    key
}

#[cfg(test)]
mod tests {
    use super::*;

    fn naive(data: &mut [u8], key: [u8; 4], offset: usize) {
        for (i, b) in data.iter_mut().enumerate() {
            *b ^= key[(offset + i) % 4];
        }
    }

    #[test]
    fn matches_bytewise_xor_at_every_length_and_offset() {
        let key = [0x37, 0xfa, 0x21, 0x3d];
        for len in 0..200 {
            for offset in 0..8 {
                let data: Vec<u8> = (0..len).map(|i| (i * 31 + 7) as u8).collect();
                let (mut fast, mut slow) = (data.clone(), data);
                apply_mask(&mut fast, key, offset);
                naive(&mut slow, key, offset);
                assert_eq!(fast, slow, "len {len} offset {offset}");
            }
        }
    }

    #[test]
    fn pieces_give_the_same_bytes_as_one_call() {
        let key = [1, 2, 3, 4];
        let data: Vec<u8> = (0..=255).collect();
        let mut whole = data.clone();
        apply_mask(&mut whole, key, 0);
        for cut in 0..data.len() {
            let mut split = data.clone();
            let (a, b) = split.split_at_mut(cut);
            apply_mask(a, key, 0);
            apply_mask(b, key, cut);
            assert_eq!(split, whole, "cut {cut}");
        }
    }
}
