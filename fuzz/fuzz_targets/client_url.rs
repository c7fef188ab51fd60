//! `client_url`: the HTTP client's URLs, which come from users and from servers (a
//! redirect's `Location`, a proxy setting). Arbitrary text must parse or be refused, never
//! panic; a parsed URL written out must parse back to itself; a `Location` resolved against
//! a URL must be a URL that does the same, on the same scheme when it names none, and one
//! that is a path or a query must resolve; `ws://` and proxy URLs the same. The text is
//! also a no-proxy list, asked about the base and the resolved URL (see
//! `ringwire_client::fuzzing::no_proxy` for what must hold).
//!
//! Input: a byte picking the base URL, then the text (lossily UTF-8), which is parsed as a
//! URL and resolved as a `Location` against the base.

#![no_main]

use libfuzzer_sys::fuzz_target;
use ringwire_client::fuzzing::no_proxy;
use ringwire_client::ws::WsUrl;
use ringwire_client::{Proxy, Url};

const BASES: [&str; 4] = [
    "http://example.com/",
    "https://www.example.com:8443/app/login?next=/",
    "http://[::1]:8080/a/b/c?x=1",
    "https://h/",
];

/// `url` written out parses back to itself.
fn round_trips(url: &Url) {
    let text = url.to_string();
    assert_eq!(Url::parse(&text).as_ref(), Ok(url), "{text}");
    // What goes on the wire holds no byte a request line cannot carry.
    assert!(url.target().starts_with('/'), "{text}");
    assert!(
        url.target().bytes().all(|b| (0x21..=0x7e).contains(&b)),
        "{text}"
    );
    assert!(
        !url.authority()
            .bytes()
            .any(|b| b.is_ascii_whitespace() || b == b'/'),
        "{text}"
    );
}

fuzz_target!(|data: &[u8]| {
    let Some((&pick, text)) = data.split_first() else {
        return;
    };
    let text = String::from_utf8_lossy(text);
    if let Ok(url) = Url::parse(&text) {
        round_trips(&url);
    }
    let base = Url::parse(BASES[usize::from(pick) % BASES.len()]).expect("a valid base");
    let on_base = (text.starts_with('/') && !text.starts_with("//")) || text.starts_with('?');
    // A path or a query on the base's authority cannot be refused, whatever it holds (a
    // `://` in a query, say).
    assert!(!on_base || base.join(&text).is_ok(), "{text}");
    no_proxy(&text, &base);
    if let Ok(joined) = base.join(&text) {
        round_trips(&joined);
        no_proxy(&text, &joined);
        if !text.contains(':') {
            assert_eq!(joined.scheme(), base.scheme(), "{text}");
        }
        if !text.contains("//") && !text.contains(':') {
            assert_eq!(joined.origin(), base.origin(), "{text}");
        }
    }
    if let Ok(ws) = WsUrl::parse(&text) {
        round_trips(ws.http());
    }
    let _ = Proxy::parse(&text);
});
