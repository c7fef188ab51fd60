//! What the fuzz targets drive that is the file server's own (built only under
//! `cfg(fuzzing)`, which `cargo fuzz` sets): the answer to a `GET` or `HEAD` of a file under
//! arbitrary conditional and `Range` fields.

use std::sync::OnceLock;

use ringwire_http1::{Limits, Method, RequestParser, Status};

use super::cache::Entry;
use super::{answer, MAX_MULTIPART, MAX_RANGES};
use crate::{Body, Request};

/// The file's length: small enough to be kept in memory, as the cache keeps small files.
const LEN: usize = 10_000;

/// The file's bytes, each `i % 251` (no run repeats at the file's period).
fn contents() -> &'static [u8] {
    static CONTENTS: OnceLock<Vec<u8>> = OnceLock::new();
    CONTENTS.get_or_init(|| (0..LEN).map(|i| (i % 251) as u8).collect())
}

/// The file, written once to a temporary directory and opened as the cache opens files.
fn entry() -> &'static Entry {
    static ENTRY: OnceLock<Entry> = OnceLock::new();
    ENTRY.get_or_init(|| {
        let dir = std::env::temp_dir().join(format!("ringwire-fuzz-files-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("a temporary directory");
        let path = dir.join("file.txt");
        std::fs::write(&path, contents()).expect("the file written");
        let runtime = tokio::runtime::Builder::new_current_thread()
            .build()
            .expect("a runtime");
        let entry = runtime
            .block_on(Entry::open(&path, &[]))
            .expect("the file opened");
        let _ = std::fs::remove_dir_all(&dir);
        entry
    })
}

/// The answer's body, which a small file's answers hold in memory.
fn body(body: &Body) -> &[u8] {
    match body {
        Body::Empty => &[],
        Body::Bytes(bytes) => bytes,
        other => panic!("a small file answered with {other:?}"),
    }
}

/// `head` (whatever its target) as a request for the file, answered as the file server
/// answers. Nothing may panic; the status must be one the conditions and ranges allow; a
/// whole answer holds the file, a single range exactly the bytes its `content-range`
/// names, within the file; several ranges at most [`MAX_RANGES`] parts of at most
/// [`MAX_MULTIPART`] bytes in all; a `304`, `412` or `416` no body.
pub fn file_answer(head: &[u8]) {
    let mut parser = RequestParser::new(Limits::default());
    let Ok(Status::Complete(view, _)) = parser.parse(head) else {
        return;
    };
    let request = Request::new(view, b"");
    if !matches!(request.method(), Method::Get | Method::Head) {
        return;
    }
    let response = answer(entry(), &request);
    let got = body(response.body_ref());
    let header = |name| {
        response
            .header_value(name)
            .map(|v| String::from_utf8_lossy(v))
    };
    match response.status() {
        200 => assert_eq!(got, contents()),
        206 => match header("content-range") {
            Some(range) => {
                let (first, last) = range_of(&range);
                assert_eq!(got, &contents()[first..=last], "{range}");
            }
            None => {
                let kind = header("content-type").unwrap_or_default();
                assert!(
                    kind.starts_with("multipart/byteranges; boundary="),
                    "{kind}"
                );
                // Each part: its `content-range`, a blank line, then the bytes it names.
                const FIELD: &[u8] = b"content-range: ";
                let (mut parts, mut total) = (0, 0);
                let mut rest = got;
                while let Some(at) = rest.windows(FIELD.len()).position(|w| w == FIELD) {
                    rest = &rest[at + FIELD.len()..];
                    let end = rest
                        .windows(4)
                        .position(|w| w == b"\r\n\r\n")
                        .expect("a part's head");
                    let (first, last) = range_of(&String::from_utf8_lossy(&rest[..end]));
                    rest = &rest[end + 4..];
                    assert_eq!(&rest[..=last - first], &contents()[first..=last]);
                    (parts, total) = (parts + 1, total + last - first + 1);
                }
                assert!((2..=MAX_RANGES).contains(&parts), "{parts} parts");
                assert!(total as u64 <= MAX_MULTIPART, "{total} bytes");
            }
        },
        304 | 412 => assert!(got.is_empty()),
        416 => {
            assert!(got.is_empty());
            assert_eq!(
                header("content-range").as_deref(),
                Some(&*format!("bytes */{LEN}"))
            );
        }
        status => panic!("answered {status}"),
    }
}

/// `bytes FIRST-LAST/LEN`, within the file.
fn range_of(range: &str) -> (usize, usize) {
    let (first, last) = range
        .strip_prefix("bytes ")
        .and_then(|r| r.strip_suffix(&format!("/{LEN}")))
        .and_then(|r| r.split_once('-'))
        .and_then(|(f, l)| Some((f.parse::<usize>().ok()?, l.parse::<usize>().ok()?)))
        .unwrap_or_else(|| panic!("content-range {range:?}"));
    assert!(first <= last && last < LEN, "{range}");
    (first, last)
}
