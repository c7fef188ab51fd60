//! `client_cookie`: the HTTP client's cookie jar. Arbitrary `Set-Cookie` fields from an
//! arbitrary URL must be stored or ignored, never panic; the `Cookie` field made from them
//! must hold no control character, and the jar written as a cookie file and read back must
//! send no cookie the jar did not hold.
//!
//! Input: a byte picking the URL the fields came from, then the fields, one per line.

#![no_main]

use libfuzzer_sys::fuzz_target;
use ringwire_client::{CookieJar, Url};

const URLS: [&str; 6] = [
    "http://example.com/",
    "https://www.example.com/app/login?next=/",
    "http://a.b.example.com/x/y/z",
    "http://127.0.0.1:8080/",
    "https://[::1]/p",
    "http://localhost/deep/path/",
];

fuzz_target!(|data: &[u8]| {
    let Some((&pick, fields)) = data.split_first() else {
        return;
    };
    let from = Url::parse(URLS[pick as usize % URLS.len()]).expect("a valid URL");
    let jar = CookieJar::new();
    for field in fields.split(|&b| b == b'\n') {
        jar.store(&from, field);
    }
    let again = CookieJar::new();
    again.load_netscape(&jar.to_netscape());
    for url in URLS {
        let url = Url::parse(url).expect("a valid URL");
        let sent = jar.header(&url);
        if let Some(header) = &sent {
            assert!(!header.bytes().any(|b| b < 0x20 || b == 0x7f), "{header:?}");
        }
        // Read back, a cookie may only have expired meanwhile.
        if let Some(read_back) = again.header(&url) {
            let all = sent.as_deref().unwrap_or_default();
            for cookie in read_back.split("; ") {
                assert!(
                    all.split("; ").any(|c| c == cookie),
                    "{cookie:?} not in {all:?}"
                );
            }
        }
    }
});
