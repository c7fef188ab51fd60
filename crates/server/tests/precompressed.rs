//! A file's precompressed forms (`X.br`, `X.zst`, `X.gz` beside it, the zstd and gzip ones
//! made by the `zstd` and `gzip` commands) sent to curl as its `accept-encoding` asks, with
//! their own tags and ranges.

mod common;

use std::fs;
use std::io::Write as _;
use std::net::SocketAddr;
use std::path::Path;
use std::process::Command;

use common::{curl, start};
use ringwire_server::files::StaticFiles;
use ringwire_server::middleware::Compress;
use ringwire_server::ServerConfig;

/// 100 KB of script: past the size the file cache keeps in memory, so sent by `sendfile`.
fn script() -> Vec<u8> {
    (0..2500)
        .flat_map(|i| format!("function f{i}(x) {{ return x + {i}; }}\n").into_bytes())
        .take(100_000)
        .collect()
}

fn brotli(data: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    let mut writer = brotli::CompressorWriter::new(&mut out, 4096, 9, 22);
    writer.write_all(data).unwrap();
    drop(writer);
    out
}

fn gzip_beside(path: &Path) {
    let made = Command::new("gzip").arg("-k").arg(path).status();
    assert!(made.expect("gzip is installed").success());
}

fn zstd_beside(path: &Path) {
    let made = Command::new("zstd").args(["-q", "-k"]).arg(path).status();
    assert!(made.expect("zstd is installed").success());
}

/// `app.js` with all three forms, `small.css` with a gzip one only, `plain.txt` with none,
/// `evil.txt` whose `.br` leads out of the root.
fn root() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("root");
    fs::create_dir(&root).unwrap();
    fs::write(root.join("app.js"), script()).unwrap();
    fs::write(root.join("app.js.br"), brotli(&script())).unwrap();
    gzip_beside(&root.join("app.js"));
    zstd_beside(&root.join("app.js"));
    fs::write(
        root.join("small.css"),
        "body { color: black; }\n".repeat(40),
    )
    .unwrap();
    gzip_beside(&root.join("small.css"));
    fs::write(root.join("plain.txt"), "plain\n").unwrap();
    fs::write(root.join("evil.txt"), "evil\n").unwrap();
    fs::write(dir.path().join("secret"), "secret\n").unwrap();
    std::os::unix::fs::symlink(dir.path().join("secret"), root.join("evil.txt.br")).unwrap();
    dir
}

/// curl's head (lowercased names) and body for `path` with `args`.
fn fetch(addr: SocketAddr, path: &str, args: &[&str]) -> (String, Vec<u8>) {
    let url = format!("http://{addr}{path}");
    let body = curl(&[args, &[&url]].concat(), b"");
    let head = curl(&[args, &["-o", "/dev/null", "-D", "-", &url]].concat(), b"");
    (String::from_utf8(head).unwrap().to_ascii_lowercase(), body)
}

fn field<'h>(head: &'h str, name: &str) -> Option<&'h str> {
    head.lines()
        .find_map(|l| l.strip_prefix(name)?.strip_prefix(": "))
        .map(str::trim_end)
}

#[test]
fn the_form_the_client_prefers_goes_by_sendfile() {
    let dir = root();
    let root = dir.path().join("root");
    let addr = start(
        ServerConfig::default(),
        StaticFiles::new(root.clone()).unwrap(),
    );
    let br = fs::read(root.join("app.js.br")).unwrap();
    let gz = fs::read(root.join("app.js.gz")).unwrap();

    // curl --compressed offers every coding it decodes: brotli comes, decoded to the file.
    let (head, body) = fetch(addr, "/app.js", &["--compressed"]);
    assert_eq!(field(&head, "content-encoding"), Some("br"), "{head}");
    assert_eq!(body, script());
    assert_eq!(field(&head, "content-length"), Some(&*br.len().to_string()));
    assert_eq!(field(&head, "vary"), Some("accept-encoding"));
    let br_tag = field(&head, "etag").unwrap().to_owned();

    let (head, body) = fetch(addr, "/app.js", &["-H", "accept-encoding: gzip"]);
    assert_eq!(field(&head, "content-encoding"), Some("gzip"), "{head}");
    assert_eq!(body, gz);
    let gz_tag = field(&head, "etag").unwrap().to_owned();

    let zst = fs::read(root.join("app.js.zst")).unwrap();
    let (head, body) = fetch(addr, "/app.js", &["-H", "accept-encoding: gzip, zstd"]);
    assert_eq!(field(&head, "content-encoding"), Some("zstd"), "{head}");
    assert_eq!(body, zst);
    let zst_tag = field(&head, "etag").unwrap().to_owned();
    let (_, body) = fetch(
        addr,
        "/app.js",
        &["--compressed", "-H", "accept-encoding: zstd"],
    );
    assert_eq!(body, script(), "curl decodes the zstd form");

    // Asking for none, or for one refused: the file as it is, still varying.
    for args in [
        &[][..],
        &["-H", "accept-encoding: identity"],
        &["-H", "accept-encoding: br;q=0, gzip;q=0"],
    ] {
        let (head, body) = fetch(addr, "/app.js", args);
        assert_eq!(field(&head, "content-encoding"), None, "{args:?}: {head}");
        assert_eq!(body, script());
        assert_eq!(field(&head, "vary"), Some("accept-encoding"));
        let tag = field(&head, "etag").unwrap();
        assert!(
            tag != br_tag && tag != gz_tag && tag != zst_tag,
            "one tag per form: {tag}"
        );
    }

    // A range of the coded form, and a conditional request against its tag.
    let (head, body) = fetch(
        addr,
        "/app.js",
        &["-H", "accept-encoding: br", "-r", "10-19"],
    );
    assert!(head.starts_with("http/1.1 206"), "{head}");
    assert_eq!(body, br[10..20]);
    let matching = format!("if-none-match: {br_tag}");
    let (head, _) = fetch(
        addr,
        "/app.js",
        &["-H", "accept-encoding: br", "-H", &matching],
    );
    assert!(head.starts_with("http/1.1 304"), "{head}");
    assert_eq!(field(&head, "vary"), Some("accept-encoding"));
    let (head, _) = fetch(
        addr,
        "/app.js",
        &["-H", "accept-encoding: gzip", "-H", &matching],
    );
    assert!(
        head.starts_with("http/1.1 200"),
        "a brotli tag is not the gzip form's: {head}"
    );
}

#[test]
fn only_forms_that_exist_inside_the_root() {
    let dir = root();
    let root = dir.path().join("root");
    let addr = start(
        ServerConfig::default(),
        StaticFiles::new(root.clone()).unwrap(),
    );
    let css = fs::read(root.join("small.css")).unwrap();
    let (head, body) = fetch(addr, "/small.css", &["-H", "accept-encoding: br, gzip"]);
    assert_eq!(field(&head, "content-encoding"), Some("gzip"), "{head}");
    assert_eq!(body, fs::read(root.join("small.css.gz")).unwrap());
    let (head, body) = fetch(addr, "/small.css", &["-H", "accept-encoding: br"]);
    assert_eq!(field(&head, "content-encoding"), None, "{head}");
    assert_eq!(body, css);
    for path in ["/plain.txt", "/evil.txt"] {
        let (head, _) = fetch(addr, path, &["--compressed"]);
        assert_eq!(field(&head, "content-encoding"), None, "{path}: {head}");
        assert_eq!(field(&head, "vary"), None, "{path}: {head}");
    }

    // Turned off, none.
    let files = StaticFiles::new(root).unwrap().precompressed(false);
    let addr = start(ServerConfig::default(), files);
    let (head, body) = fetch(addr, "/app.js", &["--compressed"]);
    assert_eq!(field(&head, "content-encoding"), None, "{head}");
    assert_eq!(body, script());
}

#[test]
fn compress_leaves_them_alone_and_says_vary_once() {
    let dir = root();
    let files = StaticFiles::new(dir.path().join("root")).unwrap();
    let addr = start(ServerConfig::default(), Compress::new(files));
    let (head, body) = fetch(addr, "/app.js", &["--compressed"]);
    assert_eq!(field(&head, "content-encoding"), Some("br"), "{head}");
    assert_eq!(body, script());
    // In memory, with a gzip form: a client taking neither gets it as it is, one `vary`.
    let (head, _) = fetch(addr, "/small.css", &["-H", "accept-encoding: identity"]);
    assert_eq!(head.matches("vary:").count(), 1, "{head}");
    assert_eq!(field(&head, "vary"), Some("accept-encoding"));
}
