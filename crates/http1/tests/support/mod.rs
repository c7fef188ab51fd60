//! Feeds test inputs through the ring transport in every split, so each
//! table case also runs with its bytes arriving in pieces.

#![allow(dead_code, unreachable_pub)] // each test binary uses part of this

use ringwire_http1::{Error, Status};
use ringwire_io::{Chunks, RecvTransport, TransportConfig};

/// Every way a test delivers `input`: whole, split once at each byte, and
/// one byte per read.
pub fn deliveries(input: &[u8]) -> impl Iterator<Item = (String, Chunks)> + '_ {
    let whole = std::iter::once(("whole".to_string(), Chunks::new([input])));
    let splits =
        (1..input.len()).map(move |at| (format!("split at {at}"), Chunks::split_at(input, at)));
    let bytes = std::iter::once(("1-byte reads".to_string(), Chunks::every(input, 1)));
    whole.chain(splits).chain(bytes)
}

/// Receives from `chunks` into a ring and calls `step` on the buffered
/// bytes after every read until it completes or fails. `None` means the
/// input ended first.
pub fn drive<T>(
    chunks: Chunks,
    mut step: impl FnMut(&[u8]) -> Result<Status<T>, Error>,
) -> Result<Option<(T, usize)>, Error> {
    let config = TransportConfig::new(4096, 1 << 20);
    let mut rx = RecvTransport::new(config, chunks).expect("ring");
    loop {
        if let Status::Complete(value, n) = step(rx.data())? {
            return Ok(Some((value, n)));
        }
        if rx.fill(rx.data().len() + 1).expect("fixture never fails") == 0 {
            return Ok(None);
        }
    }
}

/// Runs `parse` over every delivery of `input` and checks they all agree
/// with the whole delivery, which it returns.
pub fn agree<T: PartialEq + std::fmt::Debug>(
    input: &[u8],
    mut parse: impl FnMut(Chunks) -> Result<Option<(T, usize)>, Error>,
) -> Result<Option<(T, usize)>, Error> {
    let mut outcomes = deliveries(input).map(|(how, chunks)| (how, parse(chunks)));
    let (_, whole) = outcomes.next().expect("whole delivery");
    for (how, outcome) in outcomes {
        assert_eq!(
            outcome,
            whole,
            "{how} of {:?}",
            String::from_utf8_lossy(input)
        );
    }
    whole
}

/// Bytes shown as text, for comparing parsed values.
pub fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}
