//! `http1_target`: a request target's lazy views (`ringwire_http1::target`), which routers
//! and the file server read, against a plain model written here. Any bytes: the form is
//! judged and the views split without a panic. For an origin-form target (`/…`): the path
//! is what precedes `?` (the fragment, if any, cut first), the query what follows; the
//! segments, joined by `/`, give back the path; every decoded view (the path, each
//! segment, each query key and value, with `+` as a space there) is the model's decoding,
//! through `bytes`, `to_cow`, `to_str`, `eq_str` and `is_encoded` alike.
//!
//! Input: the target's bytes.

#![no_main]

use libfuzzer_sys::fuzz_target;
use ringwire_http1::target::PercentDecoded;
use ringwire_http1::{Target, TargetForm};

/// `%` and two hex digits is that byte; anything else, a cut-short or non-hex escape
/// included, passes through; `+` is a space if `plus_as_space`.
fn decode(raw: &[u8], plus_as_space: bool) -> Vec<u8> {
    let hex = |b: u8| char::from(b).to_digit(16).map(|d| d as u8);
    let mut out = Vec::with_capacity(raw.len());
    let mut i = 0;
    while i < raw.len() {
        match raw[i] {
            b'%' => match (
                raw.get(i + 1).and_then(|&b| hex(b)),
                raw.get(i + 2).and_then(|&b| hex(b)),
            ) {
                (Some(high), Some(low)) => {
                    out.push(high << 4 | low);
                    i += 3;
                    continue;
                }
                _ => out.push(b'%'),
            },
            b'+' if plus_as_space => out.push(b' '),
            b => out.push(b),
        }
        i += 1;
    }
    out
}

/// Every way to read `view` agrees with the model's decoding of its raw bytes.
fn agrees(view: &PercentDecoded<'_>, plus_as_space: bool) {
    let expected = decode(view.raw(), plus_as_space);
    assert_eq!(view.bytes().collect::<Vec<u8>>(), expected);
    assert_eq!(&view.to_cow()[..], &expected[..]);
    if !view.is_encoded() {
        assert_eq!(view.raw(), &expected[..]);
    }
    match (view.to_str(), std::str::from_utf8(&expected)) {
        (Ok(text), Ok(model)) => {
            assert_eq!(text, model);
            assert!(view.eq_str(model));
        }
        (Err(_), Err(_)) => {}
        (got, model) => panic!("to_str {got:?} against {model:?}"),
    }
}

fuzz_target!(|raw: &[u8]| {
    let target = Target::new(raw);
    let form = target.form();
    let (path, query) = (target.path(), target.query());
    let _ = (target.segments().count(), target.query_pairs().count());
    if form != TargetForm::Origin {
        return;
    }
    let before_fragment = raw.split(|&b| b == b'#').next().unwrap_or_default();
    let (model_path, model_query) = match before_fragment.iter().position(|&b| b == b'?') {
        Some(q) => (&before_fragment[..q], Some(&before_fragment[q + 1..])),
        None => (before_fragment, None),
    };
    assert_eq!((path, query), (model_path, model_query));
    agrees(&target.decoded_path(), false);
    assert_eq!(target.decoded_path().raw(), path);
    let mut joined = Vec::new();
    for segment in target.segments() {
        joined.push(b'/');
        joined.extend_from_slice(segment.raw());
        agrees(&segment, false);
    }
    assert_eq!(joined, path);
    let pieces = query.map_or(0, |q| {
        q.split(|&b| b == b'&').filter(|p| !p.is_empty()).count()
    });
    assert_eq!(target.query_pairs().count(), pieces);
    for (key, value) in target.query_pairs() {
        agrees(&key, true);
        agrees(&value, true);
    }
});
