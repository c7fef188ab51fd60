//! HPACK through the public API: round trips over many blocks and table size changes, every
//! error, truncations, and a differential test against the `hpack` crate.

use proptest::prelude::*;
use ringwire_http2::hpack::{DecodeError, Decoder, Encoder, Field};

/// An owned field.
type Owned = (Vec<u8>, Vec<u8>, bool);

fn decode(decoder: &mut Decoder, block: &[u8], max: usize) -> Result<Vec<Owned>, DecodeError> {
    let mut fields = vec![];
    decoder.decode(block, max, |f| {
        fields.push((f.name.to_vec(), f.value.to_vec(), f.sensitive));
    })?;
    Ok(fields)
}

fn encode(encoder: &mut Encoder, fields: &[Owned]) -> Vec<u8> {
    let mut out = vec![];
    let fields = fields.iter().map(|(name, value, sensitive)| Field {
        name,
        value,
        sensitive: *sensitive,
    });
    encoder.encode(fields, &mut out);
    out
}

fn field() -> impl Strategy<Value = Owned> {
    let name = prop_oneof![
        // Names in the static table, so that its indices are exercised.
        prop::sample::select(vec![
            ":method",
            ":path",
            ":status",
            "accept",
            "cookie",
            "date",
            "etag",
            "user-agent",
        ])
        .prop_map(|s| s.as_bytes().to_vec()),
        // Few distinct names and values: repeats hit the dynamic table.
        prop::sample::select(vec!["x-a", "x-b", "x-c"]).prop_map(|s| s.as_bytes().to_vec()),
        prop::collection::vec(any::<u8>(), 0..20),
    ];
    let value = prop_oneof![
        prop::sample::select(vec!["", "GET", "/", "200", "gzip, deflate", "v1", "v2"])
            .prop_map(|s| s.as_bytes().to_vec()),
        prop::collection::vec(any::<u8>(), 0..40),
        prop::collection::vec(any::<u8>(), 100..400),
    ];
    (name, value, prop::bool::weighted(0.1))
}

#[derive(Debug, Clone)]
enum Step {
    Block(Vec<Owned>),
    /// Our SETTINGS_HEADER_TABLE_SIZE changes (and is acknowledged) before the next block.
    TableSize(usize),
}

fn steps() -> impl Strategy<Value = Vec<Step>> {
    let step = prop_oneof![
        6 => prop::collection::vec(field(), 0..16).prop_map(Step::Block),
        1 => prop::sample::select(vec![0usize, 1, 64, 100, 256, 1000, 4096, 8192])
            .prop_map(Step::TableSize),
    ];
    prop::collection::vec(step, 1..24)
}

proptest! {
    #[test]
    fn round_trips(steps in steps()) {
        let mut encoder = Encoder::new();
        let mut decoder = Decoder::new(4096);
        for step in steps {
            match step {
                Step::TableSize(n) => {
                    decoder.set_max_table_size(n);
                    encoder.set_max_table_size(n);
                }
                Step::Block(fields) => {
                    let block = encode(&mut encoder, &fields);
                    prop_assert_eq!(decode(&mut decoder, &block, usize::MAX)?, fields);
                }
            }
        }
    }

    #[test]
    fn ours_to_theirs(blocks in prop::collection::vec(prop::collection::vec(field(), 0..16), 1..12)) {
        let mut encoder = Encoder::new();
        let mut theirs = hpack::Decoder::new();
        for fields in blocks {
            let block = encode(&mut encoder, &fields);
            let decoded = theirs.decode(&block).map_err(|e| TestCaseError::fail(format!("{e:?}")))?;
            let want: Vec<_> = fields.into_iter().map(|(n, v, _)| (n, v)).collect();
            prop_assert_eq!(decoded, want);
        }
    }

    #[test]
    fn theirs_to_ours(blocks in prop::collection::vec(prop::collection::vec(field(), 0..16), 1..12)) {
        let mut theirs = hpack::Encoder::new();
        let mut decoder = Decoder::new(4096);
        for fields in blocks {
            let block = theirs.encode(fields.iter().map(|(n, v, _)| (&n[..], &v[..])));
            let want: Vec<_> = fields.into_iter().map(|(n, v, _)| (n, v, false)).collect();
            prop_assert_eq!(decode(&mut decoder, &block, usize::MAX)?, want);
        }
    }

    #[test]
    fn arbitrary_blocks_do_not_panic(blocks in prop::collection::vec(prop::collection::vec(any::<u8>(), 0..64), 1..8)) {
        let mut decoder = Decoder::new(256);
        for block in blocks {
            let _ = decode(&mut decoder, &block, 1024);
        }
    }
}

/// Blocks of RFC 7541 C.4 (requests) and C.6 (responses, a 256-byte table), and a block of
/// ours with every representation.
fn valid_blocks() -> Vec<(usize, Vec<Vec<u8>>)> {
    let hex = |s: &str| -> Vec<u8> {
        (0..s.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
            .collect()
    };
    let mut encoder = Encoder::new();
    encoder.set_max_table_size(1000);
    let ours = encode(
        &mut encoder,
        &[
            (b":method".to_vec(), b"GET".to_vec(), false),
            (b":path".to_vec(), b"/a/b?c=d".to_vec(), false),
            (b"x-custom".to_vec(), b"\x00\xff raw".to_vec(), false),
            (b"cookie".to_vec(), b"secret=1".to_vec(), true),
            (b"x-custom".to_vec(), b"\x00\xff raw".to_vec(), false),
        ],
    );
    vec![
        (
            4096,
            vec![
                hex("828684418cf1e3c2e5f23a6ba0ab90f4ff"),
                hex("828684be5886a8eb10649cbf"),
                hex("828785bf408825a849e95ba97d7f8925a849e95bb8e8b4bf"),
            ],
        ),
        (
            256,
            vec![
                hex("488264025885aec3771a4b6196d07abe941054d444a8200595040b8166e082a62d1bff6e919d29ad171863c78f0b97c8e9ae82ae43d3"),
                hex("4883640effc1c0bf"),
                hex("88c16196d07abe941054d444a8200595040b8166e084a62d1bffc05a839bd9ab77ad94e7821dd7f2e6c7b335dfdfcd5b3960d5af27087f3672c1ab270fb5291f9587316065c003ed4ee5b1063d5007"),
            ],
        ),
        (4096, vec![ours]),
    ]
}

#[test]
fn every_truncation_fails_or_ends_on_a_field() {
    for (table_size, blocks) in valid_blocks() {
        for (i, block) in blocks.iter().enumerate() {
            let fresh = || {
                let mut d = Decoder::new(table_size);
                for earlier in &blocks[..i] {
                    decode(&mut d, earlier, usize::MAX).unwrap();
                }
                d
            };
            let whole = decode(&mut fresh(), block, usize::MAX).unwrap();
            for cut in 0..block.len() {
                match decode(&mut fresh(), &block[..cut], usize::MAX) {
                    // Cut between two representations: a valid, shorter block.
                    Ok(fields) => assert_eq!(fields[..], whole[..fields.len()]),
                    Err(e) => assert_eq!(e, DecodeError::Truncated, "block {i} cut at {cut}"),
                }
            }
        }
    }
}

fn error(block: &[u8]) -> DecodeError {
    decode(&mut Decoder::new(4096), block, usize::MAX).unwrap_err()
}

#[test]
fn truncated() {
    // A literal name with its length but not its bytes.
    assert_eq!(error(&[0x40, 0x05, b'a']), DecodeError::Truncated);
    // An integer whose continuation never comes.
    assert_eq!(error(&[0xff]), DecodeError::Truncated);
    assert_eq!(error(&[0x82, 0x40]), DecodeError::Truncated);
    // A name, then no value.
    assert_eq!(error(&[0x40, 0x01, b'a']), DecodeError::Truncated);
}

#[test]
fn integer_overflow() {
    assert_eq!(
        error(&[0xff, 0xff, 0xff, 0xff, 0xff, 0x7f]),
        DecodeError::IntegerOverflow
    );
    // Zero-valued continuation bytes that never end.
    assert_eq!(
        error(&[0xff, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01]),
        DecodeError::IntegerOverflow
    );
    // A string length.
    assert_eq!(
        error(&[0x40, 0x7f, 0xff, 0xff, 0xff, 0xff, 0x7f]),
        DecodeError::IntegerOverflow
    );
}

#[test]
fn invalid_index() {
    assert_eq!(error(&[0x80]), DecodeError::InvalidIndex(0));
    // 62: the dynamic table is empty.
    assert_eq!(error(&[0xbe]), DecodeError::InvalidIndex(62));
    // A literal's name index, 63.
    assert_eq!(error(&[0x7f, 0x00, 0x00]), DecodeError::InvalidIndex(63));
    // Large, but within u32.
    assert_eq!(
        error(&[0xff, 0xff, 0xff, 0xff, 0x07]),
        DecodeError::InvalidIndex(127 + 0x7f + (0x7f << 7) + (0x7f << 14) + (0x07 << 21))
    );
}

#[test]
fn invalid_huffman() {
    // Eight ones of padding.
    assert_eq!(
        error(&[0x00, 0x81, 0xff, 0x00]),
        DecodeError::InvalidHuffman
    );
    // EOS (30 ones) inside a value.
    assert_eq!(
        error(&[0x00, 0x01, b'a', 0x84, 0xff, 0xff, 0xff, 0xff]),
        DecodeError::InvalidHuffman
    );
    // '0' (00000) padded with zeros.
    assert_eq!(
        error(&[0x00, 0x01, b'a', 0x81, 0x00]),
        DecodeError::InvalidHuffman
    );
}

#[test]
fn table_size_updates() {
    // 4097 > 4096.
    assert_eq!(
        error(&[0x3f, 0xe2, 0x1f]),
        DecodeError::TableSizeUpdateTooLarge {
            asked: 4097,
            max: 4096
        }
    );
    assert_eq!(error(&[0x82, 0x20]), DecodeError::TableSizeUpdateNotAtStart);
    // Two updates at the start are fine, and so is 4096.
    let mut d = Decoder::new(4096);
    assert!(decode(&mut d, &[0x20, 0x3f, 0xe1, 0x1f, 0x82], usize::MAX).is_ok());

    // Lowered below the table's size: the next block must say so first.
    let mut d = Decoder::new(4096);
    d.set_max_table_size(100);
    assert_eq!(
        decode(&mut d, &[0x82], usize::MAX),
        Err(DecodeError::TableSizeUpdateMissing)
    );
    let mut d = Decoder::new(4096);
    d.set_max_table_size(100);
    assert_eq!(
        decode(&mut d, &[0x3f, 0x46], usize::MAX),
        Err(DecodeError::TableSizeUpdateTooLarge {
            asked: 101,
            max: 100
        })
    );
    assert!(decode(&mut d, &[0x3f, 0x45, 0x82], usize::MAX).is_ok());
    // Raised: no update owed.
    d.set_max_table_size(8192);
    assert!(decode(&mut d, &[0x82], usize::MAX).is_ok());
}

#[test]
fn list_too_large() {
    let mut d = Decoder::new(4096);
    // ":method: GET" counts 7 + 3 + 32 = 42.
    assert_eq!(decode(&mut d, &[0x82, 0x82], 84).unwrap().len(), 2);
    assert_eq!(
        decode(&mut d, &[0x82, 0x82], 83),
        Err(DecodeError::ListTooLarge { limit: 83 })
    );
    // A Huffman-coded value stops growing the scratch at the limit.
    let mut encoder = Encoder::new();
    let big = vec![b'a'; 10_000];
    let block = encode(&mut encoder, &[(b"x".to_vec(), big, false)]);
    assert_eq!(
        decode(&mut Decoder::new(4096), &block, 1000),
        Err(DecodeError::ListTooLarge { limit: 1000 })
    );
    // Raw strings too.
    let block = [0x00, 0x01, b'x', 0x05, b'a', b'b', b'c', b'd', b'e'];
    assert_eq!(
        decode(&mut Decoder::new(4096), &block, 37),
        Err(DecodeError::ListTooLarge { limit: 37 })
    );
    assert!(decode(&mut Decoder::new(4096), &block, 38).is_ok());
}

#[test]
fn errors_display() {
    let all = [
        DecodeError::Truncated,
        DecodeError::IntegerOverflow,
        DecodeError::InvalidIndex(70),
        DecodeError::InvalidHuffman,
        DecodeError::TableSizeUpdateTooLarge { asked: 2, max: 1 },
        DecodeError::TableSizeUpdateNotAtStart,
        DecodeError::TableSizeUpdateMissing,
        DecodeError::ListTooLarge { limit: 9 },
    ];
    for e in all {
        let text = e.to_string();
        assert!(!text.is_empty());
        let _: &dyn std::error::Error = &e;
    }
}

#[test]
fn encoder_table_size_updates() {
    let mut e = Encoder::new();
    let mut d = Decoder::new(4096);
    let fields = vec![(b"x-long".to_vec(), vec![b'v'; 60], false)];
    let block = encode(&mut e, &fields);
    assert_eq!(decode(&mut d, &block, usize::MAX).unwrap(), fields);
    // Down to 10 and back up to 300 before the next block: both updates, smallest first.
    e.set_max_table_size(10);
    e.set_max_table_size(300);
    d.set_max_table_size(10);
    d.set_max_table_size(300);
    let block = encode(&mut e, &fields);
    assert_eq!(&block[..4], &[0x2a, 0x3f, 0x8d, 0x02]);
    assert_eq!(decode(&mut d, &block, usize::MAX).unwrap(), fields);
    // Unchanged: no update.
    e.set_max_table_size(300);
    let block = encode(&mut e, &fields);
    assert_eq!(block, [0xbe]);
    // An empty block still carries an owed update.
    e.set_max_table_size(0);
    assert_eq!(encode(&mut e, &[]), [0x20]);
}
