//! `server_accept`: the `accept-encoding` field the compression middleware picks a coding
//! by; see `ringwire_server::middleware::fuzzing::accept_encoding` for what must hold.
//!
//! Input: a byte whose low three bits offer brotli, zstd and gzip and whose fourth picks
//! the order ties are broken in, then the field's value.

#![no_main]

use libfuzzer_sys::fuzz_target;
use ringwire_server::middleware::fuzzing::accept_encoding;

fuzz_target!(|data: &[u8]| {
    if let Some((&setup, accept)) = data.split_first() {
        accept_encoding(setup, accept);
    }
});
