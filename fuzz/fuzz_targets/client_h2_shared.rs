//! `client_h2_shared`: exchanges sharing one HTTP/2 connection
//! (`ringwire_client::fuzzing::h2_shared`) on arbitrary server bytes, in pieces: frames
//! sorted into each stream's slot, heads rewritten and parsed, bodies copied out and given
//! back to flow control, a stream given up midway, a tunnel (extended `CONNECT`) read and
//! written beside them. It must end without a panic.
//!
//! Input: a setup byte (how many requests, the largest piece, whether a tunnel opens,
//! whether one is given up), then the server's bytes.

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Some((&setup, server)) = data.split_first() {
        ringwire_client::fuzzing::h2_shared(setup, server);
    }
});
