//! `proxy_protocol`: a PROXY protocol header (versions 1 and 2) read from the front of
//! arbitrary bytes never panics and never looks past itself: a header found in the
//! input is found the same in the input cut right after it, every shorter prefix is
//! `Partial` with a hint no larger than the header, and an error on a prefix is the
//! error on the whole (errors are final).
//!
//! Input: the bytes a connection starts with.

#![no_main]

use libfuzzer_sys::fuzz_target;
use ringwire_http1::Status;
use ringwire_server::proxy_protocol::{parse, V2_MAX_LEN};

fuzz_target!(|data: &[u8]| {
    let whole = parse(data);
    match whole {
        Ok(Status::Complete(proxied, len)) => {
            assert!(len <= data.len() && len <= V2_MAX_LEN && len >= 15);
            assert_eq!(parse(&data[..len]), Ok(Status::Complete(proxied, len)));
            for cut in 0..len {
                match parse(&data[..cut]) {
                    Ok(Status::Partial { at_least }) => {
                        assert!(
                            at_least > cut && at_least <= len,
                            "{cut}: {at_least} of {len}"
                        )
                    }
                    other => panic!("{cut} bytes of a {len}-byte header: {other:?}"),
                }
            }
        }
        Ok(Status::Partial { at_least }) => assert!(at_least > data.len()),
        Err(_) => {}
    }
    for cut in 0..data.len().min(V2_MAX_LEN + 1) {
        if let Err(e) = parse(&data[..cut]) {
            assert_eq!(whole, Err(e), "an error on {cut} bytes");
        }
    }
});
