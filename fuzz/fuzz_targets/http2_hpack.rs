//! `http2_hpack`: the HPACK decoder on arbitrary header blocks, several per connection, with
//! table size changes between them. It must never panic; every field list it accepts must be
//! within the list limit, and must survive a round trip through a fresh `Encoder` and
//! `Decoder` unchanged (names, values and the never-indexed flag).
//!
//! Input: a setup byte, then records.
//!
//! | setup bits | meaning                                                                  |
//! |------------|--------------------------------------------------------------------------|
//! | 0          | table size 256 instead of 4096                                           |
//! | 1          | list limit 512 bytes instead of 64 KiB                                   |
//!
//! A record is a tag byte: `tag & 3 == 3` sets the table size to `SIZES[(tag >> 2) & 7]`
//! (as if our SETTINGS were acknowledged); otherwise a block follows, its length in the next
//! byte (`len * 4 + (tag >> 2 & 3)` bytes, cut short by the end of the input).

#![no_main]

use libfuzzer_sys::fuzz_target;
use ringwire_http2::hpack::{Decoder, Encoder, Field};

const SIZES: [usize; 8] = [0, 1, 32, 64, 100, 256, 4096, 65536];

type Owned = (Vec<u8>, Vec<u8>, bool);

fn decode(decoder: &mut Decoder, block: &[u8], limit: usize) -> Option<Vec<Owned>> {
    let mut fields = vec![];
    decoder
        .decode(block, limit, |f| {
            fields.push((f.name.to_vec(), f.value.to_vec(), f.sensitive));
        })
        .ok()?;
    Some(fields)
}

fuzz_target!(|data: &[u8]| {
    let Some((&setup, mut rest)) = data.split_first() else {
        return;
    };
    let table_size = if setup & 1 != 0 { 256 } else { 4096 };
    let limit = if setup & 2 != 0 { 512 } else { 64 << 10 };
    let mut decoder = Decoder::new(table_size);

    while let Some((&tag, tail)) = rest.split_first() {
        rest = tail;
        if tag & 3 == 3 {
            decoder.set_max_table_size(SIZES[usize::from(tag >> 2) & 7]);
            continue;
        }
        let Some((&len, tail)) = rest.split_first() else {
            return;
        };
        let len = (usize::from(len) * 4 + usize::from(tag >> 2 & 3)).min(tail.len());
        let (block, tail) = tail.split_at(len);
        rest = tail;

        // After an error the table is undefined: the connection would be closed.
        let Some(fields) = decode(&mut decoder, block, limit) else {
            return;
        };
        let list: usize = fields.iter().map(|(n, v, _)| n.len() + v.len() + 32).sum();
        assert!(list <= limit, "list of {list} bytes past the limit {limit}");

        let mut encoder = Encoder::new();
        let mut encoded = vec![];
        encoder.encode(
            fields.iter().map(|(name, value, sensitive)| Field {
                name,
                value,
                sensitive: *sensitive,
            }),
            &mut encoded,
        );
        let again = decode(&mut Decoder::new(4096), &encoded, usize::MAX)
            .expect("our own encoding does not decode");
        assert_eq!(again, fields);
    }
});
