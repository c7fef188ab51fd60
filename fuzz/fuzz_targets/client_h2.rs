//! `client_h2`: the HTTP client's HTTP/2 exchange (`ringwire_client::fuzzing::h2_exchange`)
//! on arbitrary server bytes, in pieces: the request head sent as fields, the response head
//! rewritten as HTTP/1.1 and parsed, `DATA` handed out in place, a body held back for
//! `100 Continue`. It must end without a panic, each step within the bytes it was given.
//!
//! Input: a setup byte (the request, the largest piece), then the server's bytes.

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Some((&setup, server)) = data.split_first() {
        ringwire_client::fuzzing::h2_exchange(setup, server);
    }
});
