//! `server_files`: the file server's answer to a `GET` or `HEAD` under arbitrary
//! conditional fields (`If-Match`, `If-None-Match`, `If-Modified-Since`,
//! `If-Unmodified-Since`, `If-Range`) and `Range` fields, for a file of 10,000 bytes; see
//! `ringwire_server::files::fuzzing::file_answer` for what must hold.
//!
//! Input: a request head.

#![no_main]

use libfuzzer_sys::fuzz_target;
use ringwire_server::files::fuzzing::file_answer;

fuzz_target!(|data: &[u8]| file_answer(data));
