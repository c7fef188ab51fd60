//! The access log, compression and CORS middleware, against curl.

mod common;

use std::io::{Read as _, Write as _};
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

use common::{curl, curl_text, start};
use ringwire_server::files::EmbeddedSite;
use ringwire_server::middleware::{AccessLog, Compress, Cors};
use ringwire_server::{Request, Response, Router, ServerConfig, Upgraded};

static PAGE: &str = include_str!("../../cli/site/ws.html");

fn site() -> EmbeddedSite {
    EmbeddedSite::new()
        .page("/", "text/html; charset=utf-8", PAGE.as_bytes())
        .page("/tiny", "text/plain", b"tiny\n")
        .page("/logo.png", "image/png", &[0x89; 4096])
}

#[test]
fn bodies_are_compressed_as_the_client_prefers() {
    assert!(PAGE.len() > 1024, "the demo page is big enough to compress");
    let addr = start(ServerConfig::default(), Compress::new(site()));
    let url = format!("http://{addr}/");
    for (accept, coding) in [
        ("br", "br"),
        ("gzip", "gzip"),
        ("zstd", "zstd"),
        ("gzip, br", "br"),
        ("gzip, zstd", "zstd"),
        ("br;q=0.5, zstd", "zstd"),
        // A browser's field: a static body is compressed once, so the smallest form.
        ("gzip, deflate, br, zstd", "br"),
    ] {
        let out = curl_text(&[
            "-s",
            "-o",
            "/dev/null",
            "-H",
            &format!("accept-encoding: {accept}"),
            "-w",
            "%{content_type} %{header_json}",
            &url,
        ]);
        assert!(
            out.contains(&format!("\"content-encoding\":[\"{coding}\"]")),
            "{accept}: {out}"
        );
        assert!(out.contains("\"vary\":[\"accept-encoding\"]"), "{out}");
        // curl decodes it back to the page.
        let decoded = curl(
            &[
                "--compressed",
                "-H",
                &format!("accept-encoding: {accept}"),
                &url,
            ],
            b"",
        );
        assert_eq!(decoded, PAGE.as_bytes(), "{accept}");
    }
    // No accept-encoding, a tiny body, an image: sent as they are.
    for (path, accept) in [("/", "identity"), ("/tiny", "gzip"), ("/logo.png", "gzip")] {
        let out = curl_text(&[
            "-s",
            "-o",
            "/dev/null",
            "-H",
            &format!("accept-encoding: {accept}"),
            "-w",
            "%{header_json}",
            &format!("http://{addr}{path}"),
        ]);
        assert!(!out.contains("content-encoding"), "{path}: {out}");
    }
}

/// The coding of an answer to `accept-encoding: gzip, deflate, br, zstd`, as a browser asks.
fn browser_coding(url: &str) -> String {
    let out = curl_text(&[
        "-s",
        "-o",
        "/dev/null",
        "-H",
        "accept-encoding: gzip, deflate, br, zstd",
        "-w",
        "%{header_json}",
        url,
    ]);
    let field = "\"content-encoding\":[\"";
    let start = out.find(field).map(|at| at + field.len());
    let coding = start.and_then(|start| Some(&out[start..start + out[start..].find('"')?]));
    coding.unwrap_or("none").to_owned()
}

#[test]
fn an_answer_made_once_is_compressed_with_least_work_and_a_repeated_one_smallest() {
    async fn fresh(request: &Request<'_>) -> Response {
        let n = request.param("n").unwrap_or("0");
        Response::new(200)
            .header("content-type", "application/json")
            .body(format!(
                "{{\"n\":{n},\"rows\":[{}0]}}",
                "1234567890,".repeat(200)
            ))
    }
    let app = Router::new().get("/fresh/:n", fresh);
    let addr = start(ServerConfig::default(), Compress::new(app));
    // Each body new: zstd, at a fraction of brotli's cost.
    for n in 0..3 {
        assert_eq!(browser_coding(&format!("http://{addr}/fresh/{n}")), "zstd");
    }
    // The same body again: from its second answer on, the form kept is the smallest.
    let again = format!("http://{addr}/fresh/7");
    assert_eq!(browser_coding(&again), "zstd");
    for _ in 0..3 {
        assert_eq!(browser_coding(&again), "br");
    }
}

/// Collects `ringwire::access` lines.
struct Lines(Mutex<Vec<String>>);

impl log::Log for Lines {
    fn enabled(&self, metadata: &log::Metadata<'_>) -> bool {
        metadata.target() == "ringwire::access"
    }

    fn log(&self, record: &log::Record<'_>) {
        if self.enabled(record.metadata()) {
            self.0
                .lock()
                .expect("lines")
                .push(record.args().to_string());
        }
    }

    fn flush(&self) {}
}

#[test]
fn the_access_log_has_a_line_per_request() {
    static LINES: OnceLock<&'static Lines> = OnceLock::new();
    let logger = *LINES.get_or_init(|| Box::leak(Box::new(Lines(Mutex::new(Vec::new())))));
    log::set_logger(logger).expect("first logger");
    log::set_max_level(log::LevelFilter::Info);
    let app = Router::new().get("/upgrade", upgrade).fallback(site());
    let addr = start(ServerConfig::default(), AccessLog::new(app));
    curl_text(&[&format!("http://{addr}/tiny?a=1")]);
    curl_text(&["-o", "/dev/null", &format!("http://{addr}/missing")]);
    curl_text(&["-I", &format!("http://{addr}/tiny")]);
    // Refused by the connection itself, before any handler.
    let mut bad = std::net::TcpStream::connect(addr).expect("connect");
    bad.write_all(b"GET / HTTP/9.9\r\nHost: a\r\n\r\n")
        .expect("request");
    let _ = bad.read_to_end(&mut Vec::new());
    let lines = logger.0.lock().expect("lines").clone();
    assert_eq!(lines.len(), 4, "{lines:?}");
    assert!(
        lines[2].contains(" \"HEAD /tiny HTTP/1.1\" 200 0 "),
        "{lines:?}"
    );
    assert!(lines[3].ends_with(" \"-\" 505 0 -"), "{lines:?}");
    assert!(lines[0].starts_with("127.0.0.1:"), "{lines:?}");
    assert!(
        lines[0].contains(" \"GET /tiny?a=1 HTTP/1.1\" 200 5 "),
        "{lines:?}"
    );
    assert!(
        lines[1].contains(" \"GET /missing HTTP/1.1\" 404 "),
        "{lines:?}"
    );
    // An upgrade is logged with the status the connection sent: 101 over HTTP/1.1, 500 to
    // a request that cannot take one (HTTP/1.0; HTTP/2 but for an extended CONNECT).
    let upgrading =
        b"GET /upgrade HTTP/1.1\r\nHost: a\r\nConnection: upgrade\r\nUpgrade: x\r\n\r\n";
    let mut s = std::net::TcpStream::connect(addr).expect("connect");
    s.write_all(upgrading).expect("request");
    let _ = s.read_to_end(&mut Vec::new());
    let mut s = std::net::TcpStream::connect(addr).expect("connect");
    s.write_all(b"GET /upgrade HTTP/1.0\r\n\r\n")
        .expect("request");
    let _ = s.read_to_end(&mut Vec::new());
    curl_text(&["--http2-prior-knowledge", &format!("http://{addr}/upgrade")]);
    let lines = logger.0.lock().expect("lines").clone();
    assert_eq!(lines.len(), 7, "{lines:?}");
    assert!(
        lines[4].contains(" \"GET /upgrade HTTP/1.1\" 101 "),
        "{lines:?}"
    );
    assert!(
        lines[5].contains(" \"GET /upgrade HTTP/1.0\" 500 "),
        "{lines:?}"
    );
    assert!(
        lines[6].contains(" \"GET /upgrade HTTP/2\" 500 "),
        "{lines:?}"
    );
}

/// Upgrades to a protocol that ends at once.
async fn upgrade(_: &Request<'_>) -> Response {
    Response::upgrade("x", |_: Upgraded<'_>| Box::pin(async {}))
}

/// The head of curl's answer to `args`, lower-cased, its lines without their CRLF.
fn head_of(args: &[&str]) -> Vec<String> {
    let out = curl_text(&[&["-s", "-D", "-", "-o", "/dev/null"][..], args].concat());
    out.lines()
        .map(|l| l.trim_end().to_ascii_lowercase())
        .filter(|l| !l.starts_with("date:"))
        .collect()
}

/// The CORS fields of a head, in order.
fn cors_fields(head: &[String]) -> Vec<&str> {
    head.iter()
        .map(String::as_str)
        .filter(|l| l.starts_with("access-control-") || l.starts_with("vary:"))
        .collect()
}

async fn items(_: &Request<'_>) -> Response {
    Response::text("a,b\n").header("x-total", "2")
}

/// Named origins with credentials: a preflight answered for an allowed origin with what it
/// may do, and for another with nothing; answers marked for the allowed origin only; a
/// request without `Origin` untouched.
#[test]
fn cors_answers_preflights_and_marks_answers_for_allowed_origins() {
    let api = Router::new().get("/items", items);
    let cors = Cors::origins(api, &["http://app.test"])
        .allow_methods(&["GET", "PUT"])
        .expose_headers(&["x-total"])
        .allow_credentials()
        .max_age(Duration::from_secs(600));
    let addr = start(ServerConfig::default(), cors);
    let url = format!("http://{addr}/items");
    let preflight = |origin: &str| {
        head_of(&[
            "-X",
            "OPTIONS",
            "-H",
            &format!("origin: {origin}"),
            "-H",
            "access-control-request-method: PUT",
            "-H",
            "access-control-request-headers: x-token, content-type",
            &url,
        ])
    };
    let allowed = preflight("http://app.test");
    assert_eq!(allowed[0], "http/1.1 204 no content");
    assert_eq!(
        cors_fields(&allowed),
        [
            "vary: origin, access-control-request-method, access-control-request-headers",
            "access-control-allow-origin: http://app.test",
            "access-control-allow-credentials: true",
            "access-control-allow-methods: get, put",
            "access-control-allow-headers: x-token, content-type",
            "access-control-max-age: 600",
        ]
    );
    let other = preflight("http://evil.test");
    assert_eq!(other[0], "http/1.1 204 no content");
    assert_eq!(
        cors_fields(&other),
        ["vary: origin, access-control-request-method, access-control-request-headers"]
    );

    let get = |origin: Option<&str>| {
        let header = origin.map(|o| format!("origin: {o}")).unwrap_or_default();
        head_of(&["-H", &header, &url])
    };
    assert_eq!(
        cors_fields(&get(Some("http://app.test"))),
        [
            "vary: origin",
            "access-control-allow-origin: http://app.test",
            "access-control-allow-credentials: true",
            "access-control-expose-headers: x-total",
        ]
    );
    assert_eq!(
        cors_fields(&get(Some("http://evil.test"))),
        ["vary: origin"]
    );
    let plain = get(None);
    assert_eq!(plain[0], "http/1.1 200 ok");
    assert!(cors_fields(&plain).is_empty(), "{plain:?}");
    // The body is the handler's whatever the origin.
    let body = curl_text(&["-H", "origin: http://evil.test", &url]);
    assert_eq!(body, "a,b\n");
}

/// Any origin: `*`, nothing to vary on; naming no origins and allowing credentials is a
/// programming error.
#[test]
fn cors_for_any_origin() {
    let addr = start(
        ServerConfig::default(),
        Cors::any(Router::new().get("/items", items)),
    );
    let head = head_of(&[
        "-H",
        "origin: http://elsewhere.test",
        &format!("http://{addr}/items"),
    ]);
    assert_eq!(cors_fields(&head), ["access-control-allow-origin: *"]);
    let credentials = std::panic::catch_unwind(|| {
        Cors::any(Router::new().get("/items", items)).allow_credentials()
    });
    assert!(credentials.is_err());
}
