//! Files sent with `sendfile`, validators, ranges and the open-file cache,
//! over loopback with curl.

mod common;

use std::fs;
use std::net::SocketAddr;
use std::path::Path;
use std::time::Duration;

use common::{curl, raw, start, statuses};
use ringwire_server::files::StaticFiles;
use ringwire_server::ServerConfig;

const BIG: usize = 5 << 20;

/// Bytes that differ at every offset a range test looks at.
fn pattern(len: usize) -> Vec<u8> {
    (0..len)
        .map(|i| (i as u32).wrapping_mul(2_654_435_761).to_le_bytes()[1])
        .collect()
}

fn site(ttl: Duration) -> (tempfile::TempDir, SocketAddr, Vec<u8>) {
    let dir = tempfile::tempdir().expect("tempdir");
    let big = pattern(BIG);
    fs::write(dir.path().join("big.bin"), &big).expect("write");
    fs::write(dir.path().join("a.txt"), "one\n").expect("write");
    fs::write(dir.path().join("empty.txt"), "").expect("write");
    let files = StaticFiles::new(dir.path().to_path_buf())
        .expect("root")
        .cache(ttl, 16);
    let addr = start(ServerConfig::default(), files);
    (dir, addr, big)
}

/// One response: its head (lower-case field names as the server writes
/// them) and its body.
fn fetch(addr: SocketAddr, path: &str, extra: &[&str]) -> (String, Vec<u8>) {
    let url = format!("http://{addr}{path}");
    let mut args = vec!["-i"];
    args.extend_from_slice(extra);
    args.push(&url);
    let out = curl(&args, b"");
    let split = out
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .expect("a head");
    let head = String::from_utf8(out[..split + 4].to_vec()).expect("ascii head");
    (head, out[split + 4..].to_vec())
}

fn status(head: &str) -> u16 {
    statuses(head).first().copied().unwrap_or(0)
}

fn field<'h>(head: &'h str, name: &str) -> Option<&'h str> {
    head.lines()
        .find_map(|line| line.strip_prefix(name)?.strip_prefix(": "))
}

#[test]
fn a_large_file_whole_and_by_head() {
    let (_dir, addr, big) = site(Duration::from_secs(1));
    let (head, body) = fetch(addr, "/big.bin", &[]);
    assert_eq!(status(&head), 200, "{head}");
    assert_eq!(field(&head, "content-length"), Some("5242880"), "{head}");
    assert_eq!(
        field(&head, "content-type"),
        Some("application/octet-stream")
    );
    assert_eq!(field(&head, "accept-ranges"), Some("bytes"), "{head}");
    let etag = field(&head, "etag").expect("etag");
    assert!(
        etag.starts_with("\"500000-") && etag.ends_with('"'),
        "{etag}"
    );
    let modified = field(&head, "last-modified").expect("last-modified");
    assert!(
        modified.ends_with(" GMT") && modified.len() == 29,
        "{modified}"
    );
    assert!(body == big, "the body differs from the file");

    // Twice on one connection: the second answer comes from the cache.
    let url = format!("http://{addr}/big.bin");
    let twice = curl(&[&url, &url], b"");
    assert_eq!(twice.len(), 2 * BIG);
    assert!(twice[..BIG] == big[..] && twice[BIG..] == big[..]);

    let (head, body) = fetch(addr, "/big.bin", &["-I"]);
    assert_eq!(status(&head), 200, "{head}");
    assert_eq!(field(&head, "content-length"), Some("5242880"), "{head}");
    assert_eq!(field(&head, "etag"), Some(etag));
    assert!(body.is_empty(), "HEAD has no body");

    let (head, body) = fetch(addr, "/empty.txt", &[]);
    assert_eq!(status(&head), 200, "{head}");
    assert_eq!(field(&head, "content-length"), Some("0"), "{head}");
    assert!(body.is_empty());
}

#[test]
fn validators_answer_304() {
    let (_dir, addr, _) = site(Duration::from_secs(1));
    let (head, _) = fetch(addr, "/a.txt", &[]);
    assert_eq!(
        field(&head, "content-type"),
        Some("text/plain; charset=utf-8")
    );
    let etag = field(&head, "etag").expect("etag").to_owned();
    let modified = field(&head, "last-modified").expect("date").to_owned();

    for matching in [
        etag.clone(),
        format!("W/{etag}"),
        format!("\"nope\", {etag}"),
        "*".to_owned(),
    ] {
        let (head, body) = fetch(
            addr,
            "/a.txt",
            &["-H", &format!("If-None-Match: {matching}")],
        );
        assert_eq!(status(&head), 304, "{matching}: {head}");
        assert_eq!(field(&head, "etag"), Some(&etag[..]), "{head}");
        assert!(body.is_empty(), "{head}");
    }
    let (head, body) = fetch(addr, "/a.txt", &["-H", "If-None-Match: \"other\""]);
    assert_eq!(status(&head), 200, "{head}");
    assert_eq!(body, b"one\n");

    let ims = format!("If-Modified-Since: {modified}");
    let (head, body) = fetch(addr, "/a.txt", &["-H", &ims]);
    assert_eq!(status(&head), 304, "{head}");
    assert!(body.is_empty());
    let old = "If-Modified-Since: Sun, 06 Nov 1994 08:49:37 GMT";
    assert_eq!(status(&fetch(addr, "/a.txt", &["-H", old]).0), 200);
    // If-None-Match decides alone when both are sent.
    let (head, _) = fetch(
        addr,
        "/a.txt",
        &["-H", &ims, "-H", "If-None-Match: \"other\""],
    );
    assert_eq!(status(&head), 200, "{head}");
    // HEAD is conditional too.
    let inm = format!("If-None-Match: {etag}");
    assert_eq!(status(&fetch(addr, "/a.txt", &["-I", "-H", &inm]).0), 304);
}

/// If-Match and If-Unmodified-Since (RFC 9110 13.1.1, 13.1.4), in the order of 13.2.2.
#[test]
fn failed_preconditions_answer_412() {
    let (_dir, addr, _) = site(Duration::from_secs(1));
    let (head, _) = fetch(addr, "/a.txt", &[]);
    let etag = field(&head, "etag").expect("etag").to_owned();
    let modified = field(&head, "last-modified").expect("date").to_owned();
    let old = "Sun, 06 Nov 1994 08:49:37 GMT";

    let expect = |status_code: u16, fields: &[String]| {
        let mut args = vec![];
        for f in fields {
            args.extend(["-H", f]);
        }
        let (head, body) = fetch(addr, "/a.txt", &args);
        assert_eq!(status(&head), status_code, "{fields:?}: {head}");
        if status_code == 412 {
            assert_eq!(field(&head, "etag"), Some(&etag[..]), "{head}");
            assert!(body.is_empty(), "{head}");
        }
    };
    let im = |tags: &str| format!("If-Match: {tags}");
    let ius = |date: &str| format!("If-Unmodified-Since: {date}");

    for holds in [etag.clone(), "*".to_owned(), format!("\"x\", {etag}")] {
        expect(200, &[im(&holds)]);
    }
    // Strong comparison: a weak tag never matches.
    for fails in ["\"x\"".to_owned(), format!("W/{etag}"), format!("{etag}x")] {
        expect(412, &[im(&fails)]);
    }
    // Several fields make one list.
    expect(200, &[im("\"x\""), im(&etag)]);
    expect(412, &[ius(old)]);
    expect(200, &[ius(&modified)]);
    expect(200, &[ius("yesterday")]);
    // If-Unmodified-Since is ignored when If-Match is there.
    expect(200, &[im(&etag), ius(old)]);
    // Decided before If-None-Match: 412, not 304.
    expect(412, &[im("\"x\""), format!("If-None-Match: {etag}")]);
    expect(304, &[im(&etag), format!("If-None-Match: {etag}")]);
    // and before a range.
    let (head, _) = fetch(addr, "/a.txt", &["-r", "0-1", "-H", &ius(old)]);
    assert_eq!(status(&head), 412, "{head}");
    let (head, body) = fetch(addr, "/a.txt", &["-r", "0-1", "-H", &im(&etag)]);
    assert_eq!((status(&head), &body[..]), (206, &b"on"[..]), "{head}");
    // HEAD too.
    let (head, _) = fetch(addr, "/a.txt", &["-I", "-H", &im("\"x\"")]);
    assert_eq!(status(&head), 412, "{head}");
}

#[test]
fn single_ranges() {
    let (_dir, addr, big) = site(Duration::from_secs(1));
    let len = big.len();
    for (arg, first, last) in [
        ("100-199", 100, 199),
        ("-10", len - 10, len - 1),
        ("100-", 100, len - 1),
        ("0-0", 0, 0),
        ("5242000-9999999", 5_242_000, len - 1),
    ] {
        let (head, body) = fetch(addr, "/big.bin", &["-r", arg]);
        assert_eq!(status(&head), 206, "{arg}: {head}");
        let range = format!("bytes {first}-{last}/{len}");
        assert_eq!(field(&head, "content-range"), Some(&range[..]), "{head}");
        let n = (last - first + 1).to_string();
        assert_eq!(field(&head, "content-length"), Some(&n[..]), "{head}");
        assert!(body == big[first..=last], "{arg}: wrong bytes");
    }
    for unsatisfiable in ["5242880-", "9999999-10000000", "-0"] {
        let (head, body) = fetch(addr, "/big.bin", &["-r", unsatisfiable]);
        assert_eq!(status(&head), 416, "{unsatisfiable}: {head}");
        let star = format!("bytes */{len}");
        assert_eq!(field(&head, "content-range"), Some(&star[..]), "{head}");
        assert!(body.is_empty());
    }
    // An empty file: `-3` is satisfiable (RFC 9110 14.1.2) but no 206 can
    // say so, and 14.2 lets a server ignore any range of an empty file, as
    // nginx does: 200, empty.
    for arg in ["-3", "0-", "-0"] {
        let (head, body) = fetch(addr, "/empty.txt", &["-r", arg]);
        assert_eq!(status(&head), 200, "{arg}: {head}");
        assert_eq!(field(&head, "content-length"), Some("0"), "{head}");
        assert!(body.is_empty());
    }
    // A malformed or foreign range is ignored.
    let (head, _) = fetch(addr, "/a.txt", &["-H", "Range: lines=1-2"]);
    assert_eq!(status(&head), 200, "{head}");

    // If-Range: the current tag keeps the range, another one drops it.
    let etag = field(&fetch(addr, "/a.txt", &["-I"]).0, "etag")
        .expect("etag")
        .to_owned();
    let (head, body) = fetch(
        addr,
        "/a.txt",
        &["-r", "1-2", "-H", &format!("If-Range: {etag}")],
    );
    assert_eq!(status(&head), 206, "{head}");
    assert_eq!(body, b"ne");
    let (head, body) = fetch(addr, "/a.txt", &["-r", "1-2", "-H", "If-Range: \"old\""]);
    assert_eq!(status(&head), 200, "{head}");
    assert_eq!(body, b"one\n");
}

/// Reads a `multipart/byteranges` body with Python's own MIME parser: each part's
/// `content-type`, `content-range` and bytes.
fn parts(content_type: &str, body: &[u8]) -> Vec<(String, String, Vec<u8>)> {
    const READ: &str = r#"
import email, sys
content_type, body = sys.stdin.buffer.read().split(b"\n", 1)
message = email.message_from_bytes(b"Content-Type: " + content_type + b"\r\n\r\n" + body)
assert message.is_multipart(), "not multipart"
for part in message.get_payload():
    print(part["content-type"], part["content-range"], part.get_payload(decode=True).hex(), sep="|")
"#;
    let mut child = std::process::Command::new("python3")
        .args(["-c", READ])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("python3");
    let mut input = child.stdin.take().expect("stdin");
    std::io::Write::write_all(&mut input, &[content_type.as_bytes(), b"\n", body].concat())
        .expect("write");
    drop(input);
    let out = child.wait_with_output().expect("python3");
    assert!(out.status.success(), "the parts do not parse");
    String::from_utf8(out.stdout)
        .expect("utf-8")
        .lines()
        .map(|line| {
            let mut fields = line.split('|');
            let mut next = || fields.next().expect("three fields").to_owned();
            let (kind, range, hex) = (next(), next(), next());
            let bytes = (0..hex.len())
                .step_by(2)
                .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).expect("hex"))
                .collect();
            (kind, range, bytes)
        })
        .collect()
}

/// Several ranges: a `multipart/byteranges` body, its parts in the order asked, from a file
/// read for them and from one the cache holds, over HTTP/1.1 and HTTP/2; overlapping ranges,
/// or more than the server answers in parts, get the whole file.
#[test]
fn several_ranges_in_parts() {
    let (_dir, addr, big) = site(Duration::from_secs(1));
    let len = big.len();
    for protocol in ["--http1.1", "--http2-prior-knowledge"] {
        let (head, body) = fetch(addr, "/big.bin", &[protocol, "-r", "5000-5099,100-199,-10"]);
        // `HTTP/1.1 206` or `HTTP/2 206`.
        assert_eq!(head.split(' ').nth(1), Some("206"), "{head}");
        let kind = field(&head, "content-type").expect("content-type");
        assert!(
            kind.starts_with("multipart/byteranges; boundary="),
            "{head}"
        );
        if let Some(n) = field(&head, "content-length") {
            assert_eq!(n, body.len().to_string(), "{head}");
        }
        assert!(field(&head, "etag").is_some(), "{head}");
        let got = parts(kind, &body);
        let want: Vec<(String, String, Vec<u8>)> = [(5000, 5099), (100, 199), (len - 10, len - 1)]
            .into_iter()
            .map(|(first, last)| {
                (
                    "application/octet-stream".to_owned(),
                    format!("bytes {first}-{last}/{len}"),
                    big[first..=last].to_vec(),
                )
            })
            .collect();
        assert!(got == want, "{protocol}: {} parts", got.len());
    }
    let (head, body) = fetch(addr, "/a.txt", &["-r", "0-0,2-,9-"]);
    assert_eq!(status(&head), 206, "{head}");
    let got = parts(field(&head, "content-type").expect("type"), &body);
    let text = "text/plain; charset=utf-8";
    assert_eq!(
        got,
        [
            (text.to_owned(), "bytes 0-0/4".to_owned(), b"o".to_vec()),
            (text.to_owned(), "bytes 2-3/4".to_owned(), b"e\n".to_vec()),
        ]
    );
    for whole in [
        "0-1,1-2",
        &(0..20)
            .map(|i| format!("{i}-{i}"))
            .collect::<Vec<_>>()
            .join(","),
    ] {
        let (head, body) = fetch(addr, "/a.txt", &["-r", whole]);
        assert_eq!(
            (status(&head), &body[..]),
            (200, &b"one\n"[..]),
            "{whole}: {head}"
        );
    }
}

#[test]
fn pipelined_answers_go_out_before_the_file() {
    let (_dir, addr, _) = site(Duration::from_secs(1));
    let out = raw(
        addr,
        b"GET /a.txt HTTP/1.1\r\nHost: x\r\n\r\n\
          HEAD /a.txt HTTP/1.1\r\nHost: x\r\n\r\n\
          GET /a.txt HTTP/1.1\r\nHost: x\r\nRange: bytes=-2\r\n\r\n\
          GET /missing HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
    );
    assert_eq!(statuses(&out), [200, 200, 206, 404], "{out}");
    let bodies: Vec<&str> = out.split("\r\n\r\n").skip(1).collect();
    assert!(bodies[0].starts_with("one\nHTTP/1.1 200"), "{out}");
    assert!(
        bodies[1].starts_with("HTTP/1.1 206"),
        "HEAD has no body: {out}"
    );
    assert!(bodies[2].starts_with("e\nHTTP/1.1 404"), "{out}");
}

#[test]
fn a_replaced_file_is_seen_after_the_cache_expires() {
    let ttl = Duration::from_millis(400);
    let (dir, addr, _) = site(ttl);
    let (_, body) = fetch(addr, "/a.txt", &[]);
    assert_eq!(body, b"one\n");
    replace(&dir.path().join("a.txt"), b"two, longer\n");
    let (_, body) = fetch(addr, "/a.txt", &[]);
    assert_eq!(body, b"one\n", "still the cached file");
    std::thread::sleep(ttl + Duration::from_millis(100));
    let (head, body) = fetch(addr, "/a.txt", &[]);
    assert_eq!(body, b"two, longer\n", "{head}");
    assert_eq!(field(&head, "content-length"), Some("12"));

    // Without a cache every request sees the disk.
    let files = StaticFiles::new(dir.path().to_path_buf())
        .expect("root")
        .cache(Duration::ZERO, 0);
    let uncached = start(ServerConfig::default(), files);
    replace(&dir.path().join("a.txt"), b"three\n");
    assert_eq!(fetch(uncached, "/a.txt", &[]).1, b"three\n");
}

/// Replaces `path` by a new file (a new inode), as editors and deploys do.
fn replace(path: &Path, contents: &[u8]) {
    let next = path.with_extension("next");
    fs::write(&next, contents).expect("write");
    fs::rename(&next, path).expect("rename");
}
