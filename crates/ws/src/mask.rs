//! Masking (RFC 6455 section 5.3): XOR with a 4-byte key, in place.

/// XORs `data` with `key` in place, as if `data` started `offset` bytes into a frame's payload
/// (so a payload unmasked in pieces as it arrives gives the same bytes as one call).
///
/// Masking and unmasking are the same operation.
#[inline]
pub fn apply_mask(data: &mut [u8], key: [u8; 4], offset: usize) {
    if data.len() < WIDE {
        xor(data, key, offset);
    } else {
        // The same loop, compiled again for the widest vectors this CPU has (AVX2, AVX-512)
        // and picked at run time: the portable build only has 16-byte SSE2.
        pulp::Arch::new().dispatch(|| xor(data, key, offset));
    }
}

/// Payloads shorter than this are not worth the CPU feature check.
const WIDE: usize = 512;

#[inline(always)]
fn xor(data: &mut [u8], key: [u8; 4], offset: usize) {
    let key = rotate(key, offset);
    // Eight bytes a step (two key phases): the compiler widens this loop to the vector width.
    let word = u64::from_ne_bytes([
        key[0], key[1], key[2], key[3], key[0], key[1], key[2], key[3],
    ]);
    let mut words = data.chunks_exact_mut(8);
    for chunk in &mut words {
        let mut bytes = [0; 8];
        bytes.copy_from_slice(chunk);
        chunk.copy_from_slice(&(u64::from_ne_bytes(bytes) ^ word).to_ne_bytes());
    }
    for (b, k) in words.into_remainder().iter_mut().zip(key.iter().cycle()) {
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
        for len in (0..200).chain([511, 512, 513, 4096 + 67]) {
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
