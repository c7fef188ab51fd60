//! `kafka_scram`: the Kafka client's side of SCRAM (`ringwire_kafka_client::fuzzing::scram`) on
//! arbitrary broker messages: nothing may panic, and no final message made without the
//! password may pass the client's check of the broker's signature.
//!
//! Input: a setup byte (SHA-256 or SHA-512), a length byte `n`, the broker's first message
//! (`n` bytes), then its final message.

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let [setup, n, rest @ ..] = data else {
        return;
    };
    let (first, last) = rest.split_at(usize::from(*n).min(rest.len()));
    ringwire_kafka_client::fuzzing::scram(*setup, first, last);
});
