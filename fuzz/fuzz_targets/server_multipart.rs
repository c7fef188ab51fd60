//! `server_multipart`: `multipart/form-data` bodies (they come from the network), read
//! whole with `Fields` and in pieces with `Multipart::feed`: neither may panic, and both
//! must find the same fields (name, file name, type, data) and the same error.
//!
//! Input: a byte setting the piece size (1 to 64) and the limits (with bit 6, small bounds on
//! each field's and file's data), then the body. The boundary is `b` when the size byte is
//! even, else `--x`.

#![no_main]

use libfuzzer_sys::fuzz_target;
use ringwire_server::multipart::{Event, Fields, Limits, Multipart, MultipartError};

type Field = (String, Option<String>, Option<String>, Vec<u8>);

fuzz_target!(|data: &[u8]| {
    let Some((&setup, body)) = data.split_first() else {
        return;
    };
    let content_type: &[u8] = if setup % 2 == 0 {
        b"multipart/form-data; boundary=b"
    } else {
        b"multipart/form-data; boundary=\"--x\""
    };
    // With bit 6, small bounds on a part's data too.
    let (max_field_len, max_file_len) = if setup & 0x40 == 0 {
        (u64::MAX, u64::MAX)
    } else {
        (u64::from(setup & 0x1f) * 4, u64::from(setup >> 7) * 64 + 8)
    };
    let limits = Limits {
        max_parts: 1 + usize::from(setup >> 5),
        max_head: 16 + usize::from(setup & 0x3f) * 4,
        max_field_len,
        max_file_len,
    };
    let piece = 1 + usize::from(setup & 0x3f);
    let whole = whole(content_type, body, limits);
    let pieces = in_pieces(content_type, body, limits, piece);
    assert_eq!(whole, pieces, "pieces of {piece}");
});

fn whole(content_type: &[u8], body: &[u8], limits: Limits) -> Result<Vec<Field>, MultipartError> {
    Fields::new(content_type, body, limits)?
        .map(|f| {
            let f = f?;
            Ok((
                f.head.name.to_owned(),
                f.head.filename.map(str::to_owned),
                f.head.content_type.map(str::to_owned),
                f.data.to_vec(),
            ))
        })
        .collect()
}

fn in_pieces(
    content_type: &[u8],
    body: &[u8],
    limits: Limits,
    piece: usize,
) -> Result<Vec<Field>, MultipartError> {
    let mut reader = Multipart::new(content_type, limits)?;
    let (mut carry, mut fields) = (Vec::new(), Vec::<Field>::new());
    let mut on_event = |event: Event<'_>| match event {
        Event::Part(h) => fields.push((
            h.name.to_owned(),
            h.filename.map(str::to_owned),
            h.content_type.map(str::to_owned),
            Vec::new(),
        )),
        Event::Data(d) => {
            assert!(!d.is_empty());
            fields
                .last_mut()
                .expect("data in a part")
                .3
                .extend_from_slice(d);
        }
        Event::End => {}
    };
    let mut pieces = body.chunks(piece).peekable();
    if pieces.peek().is_none() {
        reader.feed(&mut carry, &[], true, &mut on_event)?;
    }
    while let Some(bytes) = pieces.next() {
        let eof = pieces.peek().is_none();
        if reader.feed(&mut carry, bytes, eof, &mut on_event)? {
            break;
        }
    }
    Ok(fields)
}
