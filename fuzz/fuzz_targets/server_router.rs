//! `server_router`: route patterns, and the paths of requests matched against them (the
//! paths come from the network); see `ringwire_server::router::fuzzing::route` for what
//! must hold.
//!
//! Input: a byte picking parameters among the path's segments, then the pattern (lossily
//! UTF-8) up to the first line feed, then the request target.

#![no_main]

use libfuzzer_sys::fuzz_target;
use ringwire_server::router::fuzzing::route;

fuzz_target!(|data: &[u8]| {
    let Some((&pick, rest)) = data.split_first() else {
        return;
    };
    let (pattern, target) = match rest.iter().position(|&b| b == b'\n') {
        Some(end) => (&rest[..end], &rest[end + 1..]),
        None => (rest, &b"/"[..]),
    };
    route(pick, &String::from_utf8_lossy(pattern), target);
});
