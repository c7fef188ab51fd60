//! RFC 7541 Appendix C: every example, checking the fields and the dynamic table after each
//! block, and the encoder reproducing the byte sequences its policy matches.

use super::{Decoder, Encoder, Field};

fn hex(s: &str) -> Vec<u8> {
    let s: Vec<u8> = s.bytes().filter(|b| !b.is_ascii_whitespace()).collect();
    s.chunks(2)
        .map(|pair| u8::from_str_radix(std::str::from_utf8(pair).unwrap(), 16).unwrap())
        .collect()
}

type Fields = Vec<(Vec<u8>, Vec<u8>, bool)>;

fn decode(decoder: &mut Decoder, block: &[u8]) -> Fields {
    let mut fields = vec![];
    decoder
        .decode(block, usize::MAX, |f| {
            fields.push((f.name.to_vec(), f.value.to_vec(), f.sensitive));
        })
        .unwrap();
    fields
}

fn plain(fields: &[(&str, &str)]) -> Fields {
    fields
        .iter()
        .map(|(n, v)| (n.as_bytes().to_vec(), v.as_bytes().to_vec(), false))
        .collect()
}

/// The dynamic table, newest first, and its size.
fn table(decoder: &Decoder) -> (Vec<(String, String)>, usize) {
    let t = decoder.table();
    let entries = (0..t.len())
        .map(|i| {
            let (n, v) = t.get(i).unwrap();
            (
                String::from_utf8(n.to_vec()).unwrap(),
                String::from_utf8(v.to_vec()).unwrap(),
            )
        })
        .collect();
    (entries, t.size())
}

fn entries(list: &[(&str, &str)]) -> Vec<(String, String)> {
    list.iter()
        .map(|(n, v)| (n.to_string(), v.to_string()))
        .collect()
}

#[test]
fn c2_1_literal_with_indexing() {
    let mut d = Decoder::new(4096);
    let block = hex("400a 6375 7374 6f6d 2d6b 6579 0d63 7573 746f 6d2d 6865 6164 6572");
    assert_eq!(
        decode(&mut d, &block),
        plain(&[("custom-key", "custom-header")])
    );
    assert_eq!(table(&d), (entries(&[("custom-key", "custom-header")]), 55));
}

#[test]
fn c2_2_literal_without_indexing() {
    let mut d = Decoder::new(4096);
    let block = hex("040c 2f73 616d 706c 652f 7061 7468");
    assert_eq!(decode(&mut d, &block), plain(&[(":path", "/sample/path")]));
    assert_eq!(table(&d), (vec![], 0));
}

#[test]
fn c2_3_never_indexed() {
    let mut d = Decoder::new(4096);
    let block = hex("1008 7061 7373 776f 7264 0673 6563 7265 74");
    let fields = decode(&mut d, &block);
    assert_eq!(fields, [(b"password".to_vec(), b"secret".to_vec(), true)]);
    assert_eq!(table(&d), (vec![], 0));
}

#[test]
fn c2_4_indexed() {
    let mut d = Decoder::new(4096);
    assert_eq!(decode(&mut d, &[0x82]), plain(&[(":method", "GET")]));
    assert_eq!(table(&d), (vec![], 0));
}

const REQUESTS: [&[(&str, &str)]; 3] = [
    &[
        (":method", "GET"),
        (":scheme", "http"),
        (":path", "/"),
        (":authority", "www.example.com"),
    ],
    &[
        (":method", "GET"),
        (":scheme", "http"),
        (":path", "/"),
        (":authority", "www.example.com"),
        ("cache-control", "no-cache"),
    ],
    &[
        (":method", "GET"),
        (":scheme", "https"),
        (":path", "/index.html"),
        (":authority", "www.example.com"),
        ("custom-key", "custom-value"),
    ],
];

const REQUEST_TABLES: [(&[(&str, &str)], usize); 3] = [
    (&[(":authority", "www.example.com")], 57),
    (
        &[
            ("cache-control", "no-cache"),
            (":authority", "www.example.com"),
        ],
        110,
    ),
    (
        &[
            ("custom-key", "custom-value"),
            ("cache-control", "no-cache"),
            (":authority", "www.example.com"),
        ],
        164,
    ),
];

const C3: [&str; 3] = [
    "8286 8441 0f77 7777 2e65 7861 6d70 6c65 2e63 6f6d",
    "8286 84be 5808 6e6f 2d63 6163 6865",
    "8287 85bf 400a 6375 7374 6f6d 2d6b 6579 0c63 7573 746f 6d2d 7661 6c75 65",
];

const C4: [&str; 3] = [
    "8286 8441 8cf1 e3c2 e5f2 3a6b a0ab 90f4 ff",
    "8286 84be 5886 a8eb 1064 9cbf",
    "8287 85bf 4088 25a8 49e9 5ba9 7d7f 8925 a849 e95b b8e8 b4bf",
];

const RESPONSES: [&[(&str, &str)]; 3] = [
    &[
        (":status", "302"),
        ("cache-control", "private"),
        ("date", "Mon, 21 Oct 2013 20:13:21 GMT"),
        ("location", "https://www.example.com"),
    ],
    &[
        (":status", "307"),
        ("cache-control", "private"),
        ("date", "Mon, 21 Oct 2013 20:13:21 GMT"),
        ("location", "https://www.example.com"),
    ],
    &[
        (":status", "200"),
        ("cache-control", "private"),
        ("date", "Mon, 21 Oct 2013 20:13:22 GMT"),
        ("location", "https://www.example.com"),
        ("content-encoding", "gzip"),
        (
            "set-cookie",
            "foo=ASDJKHQKBZXOQWEOPIUAXQWEOIU; max-age=3600; version=1",
        ),
    ],
];

const RESPONSE_TABLES: [(&[(&str, &str)], usize); 3] = [
    (
        &[
            ("location", "https://www.example.com"),
            ("date", "Mon, 21 Oct 2013 20:13:21 GMT"),
            ("cache-control", "private"),
            (":status", "302"),
        ],
        222,
    ),
    (
        &[
            (":status", "307"),
            ("location", "https://www.example.com"),
            ("date", "Mon, 21 Oct 2013 20:13:21 GMT"),
            ("cache-control", "private"),
        ],
        222,
    ),
    (
        &[
            (
                "set-cookie",
                "foo=ASDJKHQKBZXOQWEOPIUAXQWEOIU; max-age=3600; version=1",
            ),
            ("content-encoding", "gzip"),
            ("date", "Mon, 21 Oct 2013 20:13:22 GMT"),
        ],
        215,
    ),
];

const C5: [&str; 3] = [
    "4803 3330 3258 0770 7269 7661 7465 611d 4d6f 6e2c 2032 3120 4f63 7420 3230 3133 2032 303a
     3133 3a32 3120 474d 546e 1768 7474 7073 3a2f 2f77 7777 2e65 7861 6d70 6c65 2e63 6f6d",
    "4803 3330 37c1 c0bf",
    "88c1 611d 4d6f 6e2c 2032 3120 4f63 7420 3230 3133 2032 303a 3133 3a32 3220 474d 54c0 5a04
     677a 6970 7738 666f 6f3d 4153 444a 4b48 514b 425a 584f 5157 454f 5049 5541 5851 5745 4f49
     553b 206d 6178 2d61 6765 3d33 3630 303b 2076 6572 7369 6f6e 3d31",
];

const C6: [&str; 3] = [
    "4882 6402 5885 aec3 771a 4b61 96d0 7abe 9410 54d4 44a8 2005 9504 0b81 66e0 82a6 2d1b ff6e
     919d 29ad 1718 63c7 8f0b 97c8 e9ae 82ae 43d3",
    "4883 640e ffc1 c0bf",
    "88c1 6196 d07a be94 1054 d444 a820 0595 040b 8166 e084 a62d 1bff c05a 839b d9ab 77ad 94e7
     821d d7f2 e6c7 b335 dfdf cd5b 3960 d5af 2708 7f36 72c1 ab27 0fb5 291f 9587 3160 65c0 03ed
     4ee5 b106 3d50 07",
];

type Tables<'a> = [(&'a [(&'a str, &'a str)], usize); 3];

fn sequence(
    table_size: usize,
    blocks: [&str; 3],
    fields: [&[(&str, &str)]; 3],
    tables: Tables<'_>,
) {
    let mut d = Decoder::new(table_size);
    for ((block, want), (entries_want, size)) in blocks.iter().zip(fields).zip(tables) {
        assert_eq!(decode(&mut d, &hex(block)), plain(want));
        assert_eq!(table(&d), (entries(entries_want), size));
    }
}

#[test]
fn c3_requests() {
    sequence(4096, C3, REQUESTS, REQUEST_TABLES);
}

#[test]
fn c4_requests_huffman() {
    sequence(4096, C4, REQUESTS, REQUEST_TABLES);
}

#[test]
fn c5_responses() {
    sequence(256, C5, RESPONSES, RESPONSE_TABLES);
}

#[test]
fn c6_responses_huffman() {
    sequence(256, C6, RESPONSES, RESPONSE_TABLES);
}

fn encode_sequence(mut encoder: Encoder, blocks: [&str; 3], fields: [&[(&str, &str)]; 3]) {
    for (block, list) in blocks.iter().zip(fields) {
        let mut out = vec![];
        let fields = list.iter().map(|(n, v)| Field {
            name: n.as_bytes(),
            value: v.as_bytes(),
            sensitive: false,
        });
        encoder.encode(fields, &mut out);
        assert_eq!(out, hex(block));
    }
}

#[test]
fn encoder_reproduces_c4() {
    encode_sequence(Encoder::new(), C4, REQUESTS);
}

#[test]
fn encoder_reproduces_c6() {
    // Except for "307": Huffman-coded it is as long as raw (3 bytes), and on a tie the encoder
    // keeps it raw (the decoder then hands it out without copying), as C.5.2 does.
    let blocks = [C6[0], C5[1], C6[2]];
    encode_sequence(Encoder::with_table_size(256), blocks, RESPONSES);
}

#[test]
fn encoder_never_indexes_sensitive() {
    // C.2.3's field, marked sensitive, encodes as C.2.3 does but Huffman-coded.
    let mut e = Encoder::new();
    let mut out = vec![];
    let field = Field {
        name: b"password",
        value: b"secret",
        sensitive: true,
    };
    e.encode([field], &mut out);
    assert_eq!(out[0], 0x10);
    let mut d = Decoder::new(4096);
    let fields = decode(&mut d, &out);
    assert_eq!(fields, [(b"password".to_vec(), b"secret".to_vec(), true)]);
    assert_eq!(table(&d), (vec![], 0));
}

#[test]
fn a_reserved_decoder_decodes_usual_fields_in_the_room_it_was_given() {
    // A warm-up sees the first answers' fields; later ones (each second's `date`, a field
    // named afresh with a longer value) must fit the room given at once too.
    let mut encoder = Encoder::new();
    let mut decoder = Decoder::new(4096);
    decoder.reserve_table();
    let room = decoder.scratch_capacity();
    let trace = "0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331";
    for second in 0..5 {
        let date = format!("Sun, 29 Nov 2026 06:40:0{second} GMT");
        let mut fields = vec![(":status", "200"), ("date", date.as_str())];
        if second > 2 {
            fields.push(("x-cloud-trace-context", trace));
        }
        let mut block = vec![];
        encoder.encode(
            fields.iter().map(|(n, v)| Field {
                name: n.as_bytes(),
                value: v.as_bytes(),
                sensitive: false,
            }),
            &mut block,
        );
        assert_eq!(decode(&mut decoder, &block), plain(&fields));
        assert_eq!(decoder.scratch_capacity(), room, "second {second}");
    }
}
