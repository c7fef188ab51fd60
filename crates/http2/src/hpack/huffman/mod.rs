//! The static Huffman code (RFC 7541 section 5.2, Appendix B).
//!
//! Decoding is a finite automaton built at compile time from [`codes::CODES`]: its states are
//! the 256 inner nodes of the code tree, and each step consumes 4 bits, emitting at most one
//! byte (the shortest code is 5 bits long). No bit-by-bit tree walk at run time.

mod codes;

use codes::CODES;

/// The symbol that must never be decoded (section 5.2).
const EOS: usize = 256;

/// Transition flags, above the next state (bits 0..8) and the symbol (bits 8..16).
const EMIT: u32 = 1 << 16;
/// The 4 bits complete the EOS code.
const FAIL: u32 = 1 << 17;
/// The next state may end a string: only 1 bits, at most 7 of them, since the last symbol.
const ACCEPT: u32 = 1 << 18;

/// `DECODE[state][nibble]`: the transition. State 0 is the root (between symbols).
static DECODE: [[u32; 16]; 256] = build_decoder();

const fn build_decoder() -> [[u32; 16]; 256] {
    // The code tree: `tree[node][bit]` is an inner node's index, or LEAF | symbol. 0 means
    // "not yet created": the root (0) is nobody's child.
    const LEAF: u16 = 0x8000;
    let mut tree = [[0u16; 2]; 256];
    let mut nodes = 1;
    let mut sym = 0;
    while sym < CODES.len() {
        let (code, len) = CODES[sym];
        let mut node = 0;
        let mut bit = len - 1;
        while bit > 0 {
            let b = ((code >> bit) & 1) as usize;
            if tree[node][b] == 0 {
                tree[node][b] = nodes;
                nodes += 1;
            }
            node = tree[node][b] as usize;
            bit -= 1;
        }
        tree[node][(code & 1) as usize] = LEAF | sym as u16;
        sym += 1;
    }

    // Accepting states: the all-ones path from the root, up to 7 bits deep (EOS's prefix).
    let mut accept = [false; 256];
    accept[0] = true;
    let mut node = 0;
    let mut depth = 0;
    while depth < 7 {
        node = tree[node][1] as usize;
        accept[node] = true;
        depth += 1;
    }

    let mut table = [[0u32; 16]; 256];
    let mut state = 0;
    while state < 256 {
        let mut nibble = 0;
        while nibble < 16 {
            let mut node = state;
            let mut entry = 0;
            let mut bit = 4;
            while bit > 0 {
                bit -= 1;
                let child = tree[node][(nibble >> bit) & 1];
                if child & LEAF != 0 {
                    let sym = (child & !LEAF) as usize;
                    if sym == EOS {
                        entry |= FAIL;
                    } else {
                        entry |= EMIT | ((sym as u32) << 8);
                    }
                    node = 0;
                } else {
                    node = child as usize;
                }
            }
            entry |= node as u32;
            if accept[node] {
                entry |= ACCEPT;
            }
            table[state][nibble] = entry;
            nibble += 1;
        }
        state += 1;
    }
    table
}

/// Why [`decode`] stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Error {
    /// EOS, or bad padding.
    Invalid,
    /// The output would pass the limit.
    TooLong,
}

/// Appends the decoding of `src` to `out`, failing once `out` would grow past `limit` bytes.
pub(super) fn decode(src: &[u8], out: &mut Vec<u8>, limit: usize) -> Result<(), Error> {
    // A 5-bit code is the shortest: at most 8/5 bytes out per byte in.
    let room = limit.saturating_sub(out.len());
    out.reserve((src.len() * 8 / 5).min(room));
    let mut state = 0usize;
    let mut entry = ACCEPT;
    for &byte in src {
        for nibble in [byte >> 4, byte & 0x0f] {
            entry = DECODE[state][usize::from(nibble)];
            if entry & (EMIT | FAIL) != 0 {
                if entry & FAIL != 0 {
                    return Err(Error::Invalid);
                }
                if out.len() >= limit {
                    return Err(Error::TooLong);
                }
                out.push((entry >> 8) as u8);
            }
            state = (entry & 0xff) as usize;
        }
    }
    if entry & ACCEPT == 0 {
        return Err(Error::Invalid);
    }
    Ok(())
}

/// The length of `src` Huffman-coded, in bytes.
pub(super) fn encoded_len(src: &[u8]) -> usize {
    let bits: usize = src
        .iter()
        .map(|&b| usize::from(CODES[usize::from(b)].1))
        .sum();
    bits.div_ceil(8)
}

/// Appends `src` Huffman-coded, padded with the most significant bits of EOS.
pub(super) fn encode(src: &[u8], out: &mut Vec<u8>) {
    // Pending bits are the low `pending` bits of `acc` (at most 7 + 30 of them).
    let mut acc: u64 = 0;
    let mut pending = 0;
    for &byte in src {
        let (code, len) = CODES[usize::from(byte)];
        acc = (acc << len) | u64::from(code);
        pending += u32::from(len);
        while pending >= 8 {
            pending -= 8;
            out.push((acc >> pending) as u8);
        }
    }
    if pending > 0 {
        out.push(((acc << (8 - pending)) as u8) | (0xff >> pending));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decoded(src: &[u8]) -> Result<Vec<u8>, Error> {
        let mut out = vec![];
        decode(src, &mut out, usize::MAX).map(|()| out)
    }

    fn encoded(src: &[u8]) -> Vec<u8> {
        let mut out = vec![];
        encode(src, &mut out);
        assert_eq!(out.len(), encoded_len(src));
        out
    }

    #[test]
    fn rfc_strings() {
        // C.4.1 and C.6.1.
        let cases: [(&[u8], &[u8]); 3] = [
            (
                b"www.example.com",
                &[
                    0xf1, 0xe3, 0xc2, 0xe5, 0xf2, 0x3a, 0x6b, 0xa0, 0xab, 0x90, 0xf4, 0xff,
                ],
            ),
            (b"no-cache", &[0xa8, 0xeb, 0x10, 0x64, 0x9c, 0xbf]),
            (b"302", &[0x64, 0x02]),
        ];
        for (plain, coded) in cases {
            assert_eq!(encoded(plain), coded);
            assert_eq!(decoded(coded).unwrap(), plain);
        }
    }

    #[test]
    fn every_byte_round_trips() {
        for b in 0..=255u8 {
            assert_eq!(decoded(&encoded(&[b])).unwrap(), [b], "byte {b}");
            // And surrounded, so codes straddle byte boundaries at every offset.
            for pad in 0..8 {
                let s: Vec<u8> = std::iter::repeat_n(b'a', pad).chain([b, b'0', b]).collect();
                assert_eq!(decoded(&encoded(&s)).unwrap(), s);
            }
        }
        let all: Vec<u8> = (0..=255).collect();
        assert_eq!(decoded(&encoded(&all)).unwrap(), all);
    }

    #[test]
    fn rejects_eos() {
        // EOS is 30 ones; 32 ones contain it.
        assert_eq!(decoded(&[0xff, 0xff, 0xff, 0xff]), Err(Error::Invalid));
        // After a symbol ('0' = 00000) too.
        assert_eq!(
            decoded(&[0x07, 0xff, 0xff, 0xff, 0xff]),
            Err(Error::Invalid)
        );
    }

    #[test]
    fn rejects_bad_padding() {
        // 8 bits of padding: a whole byte of ones.
        let mut long = encoded(b"a");
        assert_eq!(long.len(), 1);
        long.push(0xff);
        assert_eq!(decoded(&long), Err(Error::Invalid));
        // '0' (00000) then padding 000 instead of 111.
        assert_eq!(decoded(&[0x00]), Err(Error::Invalid));
        // '0' then 110.
        assert_eq!(decoded(&[0x06]), Err(Error::Invalid));
        assert_eq!(decoded(&[0x07]).unwrap(), b"0");
        // A lone ones byte is 8 bits of padding.
        assert_eq!(decoded(&[0xff]), Err(Error::Invalid));
        assert_eq!(decoded(&[]).unwrap(), b"");
    }

    #[test]
    fn limit() {
        let coded = encoded(b"abcdef");
        let mut out = vec![];
        assert_eq!(decode(&coded, &mut out, 5), Err(Error::TooLong));
        out.clear();
        assert_eq!(decode(&coded, &mut out, 6), Ok(()));
    }
}
