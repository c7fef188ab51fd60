//! Form bodies from curl, over HTTP/1.1 (a length, chunked) and HTTP/2: URL-encoded ones
//! (`-d`, `--data-urlencode`) read in place with `Request::form`; `multipart/form-data`
//! uploads (`-F`) read whole in place with `Request::multipart`, and as the body arrives
//! with `Multipart::read` over a `BodyReader` (an upload of any size); bad bodies
//! answered 400.

mod common;

use std::fmt::Write as _;

use common::{curl_text, start};
use ringwire_server::multipart::{Event, Limits, Multipart, PartHead};
use ringwire_server::{handler_fn, streaming, Request, Response, ServerConfig};

/// FNV-1a, to compare data without sending it back.
fn fnv(data: &[u8], mut hash: u64) -> u64 {
    for &b in data {
        hash = (hash ^ u64::from(b)).wrapping_mul(0x100_0000_01b3);
    }
    hash
}

const FNV_START: u64 = 0xcbf2_9ce4_8422_2325;

/// One line per field: name, file name, type, length, hash.
fn line(
    out: &mut String,
    name: &str,
    file: Option<&str>,
    kind: Option<&str>,
    len: usize,
    hash: u64,
) {
    let _ = writeln!(
        out,
        "{name}|{}|{}|{len}|{hash:x}",
        file.unwrap_or("-"),
        kind.unwrap_or("-")
    );
}

async fn buffered(request: &Request<'_>) -> Response {
    let fields = match request.multipart() {
        Ok(fields) => fields,
        Err(e) => return Response::text(format!("{e}\n")).status_code(e.status()),
    };
    let body = request.body().as_ptr_range();
    let mut out = String::new();
    for field in fields {
        let field = match field {
            Ok(field) => field,
            Err(e) => return Response::text(format!("{e}\n")).status_code(e.status()),
        };
        let h = &field.head;
        let len = field.data.len();
        line(
            &mut out,
            h.name,
            h.filename,
            h.content_type,
            len,
            fnv(field.data, FNV_START),
        );
        // In place: the data is a slice of the body.
        assert!(len == 0 || body.contains(&field.data.as_ptr()));
    }
    Response::text(out)
}

async fn streamed(request: &Request<'_>) -> Response {
    let content_type = request.head().header("content-type").unwrap_or_default();
    let mut reader = match Multipart::new(content_type, Limits::default()) {
        Ok(reader) => reader,
        Err(e) => return Response::text(format!("{e}\n")).status_code(e.status()),
    };
    let mut body = request.body_reader().expect("a streamed body");
    let mut out = String::new();
    let mut field: Option<Seen> = None;
    let read = reader
        .read(&mut body, |event| match event {
            Event::Part(head) => {
                if let Some(f) = field.replace(Seen::new(&head)) {
                    f.line(&mut out);
                }
            }
            Event::Data(data) => {
                let f = field.as_mut().expect("data in a part");
                f.len += data.len();
                f.hash = fnv(data, f.hash);
            }
            Event::End => {
                if let Some(f) = field.take() {
                    f.line(&mut out);
                }
            }
        })
        .await;
    match read {
        Ok(()) => Response::text(out),
        Err(e) => Response::text(format!("{e}\n")).status_code(e.status()),
    }
}

/// A field read as it arrives: its head, and its data's length and hash so far.
struct Seen {
    name: String,
    file: Option<String>,
    kind: Option<String>,
    len: usize,
    hash: u64,
}

impl Seen {
    fn new(head: &PartHead<'_>) -> Seen {
        Seen {
            name: head.name.to_owned(),
            file: head.filename.map(str::to_owned),
            kind: head.content_type.map(str::to_owned),
            len: 0,
            hash: FNV_START,
        }
    }

    fn line(&self, out: &mut String) {
        let (file, kind) = (self.file.as_deref(), self.kind.as_deref());
        line(out, &self.name, file, kind, self.len, self.hash);
    }
}

#[test]
fn curl_uploads_are_read_whole_and_as_they_arrive() {
    let dir = tempfile::tempdir().unwrap();
    // 3 MiB of bytes that are not text, CR and LF and dashes among them.
    let data: Vec<u8> = (0..3u32 << 20)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect();
    let file = dir.path().join("data.bin");
    std::fs::write(&file, &data).unwrap();
    let expected = format!(
        "title|-|-|11|{:x}\nempty|-|-|0|{:x}\nupload|data.bin|application/x-test|{}|{:x}\n",
        fnv(b"hello world", FNV_START),
        FNV_START,
        data.len(),
        fnv(&data, FNV_START),
    );
    let upload = format!("upload=@{};type=application/x-test", file.display());
    let form = ["-F", "title=hello world", "-F", "empty=", "-F", &upload];

    let whole = start(ServerConfig::default(), handler_fn(buffered));
    let arriving = start(ServerConfig::default(), streaming(handler_fn(streamed)));
    for addr in [whole, arriving] {
        let url = format!("http://{addr}/upload");
        for extra in [
            &[][..],
            &["-H", "transfer-encoding: chunked"],
            &["--http2-prior-knowledge"],
        ] {
            let got = curl_text(&[&form[..], extra, &[&url]].concat());
            assert_eq!(got, expected, "{addr} {extra:?}");
        }
    }
}

/// Malformed bodies are answered 400; a text field over the default 1 MiB, 413 (curl sends
/// a file given as `<FILE` as a field without a file name), while a file of that size passes.
#[test]
fn bad_bodies_are_answered_400_and_large_fields_413() {
    let whole = start(ServerConfig::default(), handler_fn(buffered));
    let arriving = start(ServerConfig::default(), streaming(handler_fn(streamed)));
    let cut = "--b\r\ncontent-disposition: form-data; name=a\r\n\r\nno end";
    let dir = tempfile::tempdir().unwrap();
    let large = dir.path().join("large.txt");
    let text = vec![b'x'; (1 << 20) + 1];
    std::fs::write(&large, &text).unwrap();
    let passed = format!(
        "text|large.txt|text/plain|{}|{:x}\n200",
        text.len(),
        fnv(&text, FNV_START)
    );
    let as_field = format!("text=<{}", large.display());
    let as_file = format!("text=@{}", large.display());
    for addr in [whole, arriving] {
        let url = format!("http://{addr}/upload");
        let form = |field: &str| curl_text(&["-w", "%{http_code}", "-F", field, &url]);
        assert_eq!(form(&as_field), "multipart part too large\n413");
        assert_eq!(form(&as_file), passed, "{addr}");
        let url = format!("http://{addr}/upload");
        let post = |kind: &str, body: &str| {
            let header = format!("content-type: {kind}");
            curl_text(&[
                "-w",
                "%{http_code}",
                "-H",
                &header,
                "--data-binary",
                body,
                &url,
            ])
        };
        assert_eq!(
            post("text/plain", "x"),
            "not multipart/form-data with a boundary\n400"
        );
        assert_eq!(
            post("multipart/form-data; boundary=b", cut),
            "multipart body ended before its closing delimiter\n400"
        );
    }
}

async fn url_encoded(request: &Request<'_>) -> Response {
    let Some(pairs) = request.form() else {
        return Response::text("not a form\n").status_code(415);
    };
    let body = request.body().as_ptr_range();
    let mut out = String::new();
    for (name, value) in pairs {
        let in_place = !value.is_encoded() && body.contains(&value.raw().as_ptr());
        let (name, value) = (name.to_str().unwrap(), value.to_str().unwrap());
        let _ = writeln!(
            out,
            "{name}={value} {}",
            if in_place { "in place" } else { "decoded" }
        );
    }
    Response::text(out)
}

#[test]
fn url_encoded_forms_are_read_in_place() {
    let addr = start(ServerConfig::default(), handler_fn(url_encoded));
    let url = format!("http://{addr}/form");
    let expected = "plain=tea in place\nspaced=caf\u{e9} & cream decoded\nempty= in place\n";
    for extra in [
        &[][..],
        &["-H", "transfer-encoding: chunked"],
        &["--http2-prior-knowledge"],
    ] {
        let form = [
            "-d",
            "plain=tea",
            "--data-urlencode",
            "spaced=caf\u{e9} & cream",
            "-d",
            "empty=",
            "-d",
            "",
        ];
        let got = curl_text(&[&form[..], extra, &[&url]].concat());
        assert_eq!(got, expected, "{extra:?}");
    }
    let json = curl_text(&["-w", "%{http_code}", "--json", "{}", &url]);
    assert_eq!(json, "not a form\n415");
}
