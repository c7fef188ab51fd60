//! `103 Early Hints` from a handler, seen by curl over HTTP/1.1, HTTP/2 and TLS while the
//! handler still works on its answer; HTTP/1.0 clients are sent none.

mod common;

use std::io::{BufRead as _, BufReader, Read as _};
use std::net::SocketAddr;
use std::process::{Command, Stdio};
use std::sync::Arc;

use common::{raw, start, start_tls};
use ringwire_http1::encode::FieldBlock;
use ringwire_server::{Handler, InformationalError, Request, Response, ServerConfig};
use tokio::sync::Notify;

const LINK: &str = "</style.css>; rel=preload; as=style";

/// Sends its hints (two heads on `/twice`), then answers once the test releases it.
#[derive(Debug)]
struct Hinting {
    release: Arc<Notify>,
    hints: FieldBlock,
}

impl Handler for Hinting {
    async fn call(&self, request: &Request<'_>) -> Response {
        let heads = if request.target().path() == b"/twice" {
            2
        } else {
            1
        };
        for _ in 0..heads {
            request.early_hints(&self.hints).await.expect("hints sent");
        }
        for status in [100, 101, 200, 99] {
            let refused = request.send_informational(status, &self.hints).await;
            assert!(matches!(refused, Err(InformationalError::Status(s)) if s == status));
        }
        if request.target().path() != b"/now" {
            self.release.notified().await;
        }
        Response::text("page\n")
    }
}

fn hinting() -> (Hinting, Arc<Notify>) {
    let release = Arc::new(Notify::new());
    let hints = FieldBlock::new([("link", LINK.as_bytes())]).expect("valid fields");
    let handler = Hinting {
        release: Arc::clone(&release),
        hints,
    };
    (handler, release)
}

/// Runs `curl -v` on `url`: the `103` head must be on its standard error before the
/// handler is released, and the final answer after. curl's verbose lines, and its output.
fn hints_come_first(args: &[&str], url: &str, release: &Notify) -> (String, String) {
    let mut child = Command::new("curl")
        .args(["--silent", "--verbose", "--max-time", "20"])
        .args(args)
        .arg(url)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("curl is installed");
    let mut stderr = BufReader::new(child.stderr.take().expect("stderr"));
    let mut seen = String::new();
    // Up to the 103 head's `link` field (curl prints no line after an informational head).
    let mut in_hints = false;
    loop {
        let mut line = String::new();
        let n = stderr.read_line(&mut line).expect("curl's stderr");
        assert!(n > 0, "curl ended before the hints:\n{seen}");
        seen.push_str(&line);
        if line.starts_with("< HTTP/") {
            assert!(
                line.contains(" 103"),
                "a final head before the hints:\n{seen}"
            );
            in_hints = true;
        } else if in_hints && line.starts_with("< link: ") {
            break;
        }
    }
    release.notify_one();
    stderr.read_to_string(&mut seen).expect("curl's stderr");
    let out = child.wait_with_output().expect("curl");
    assert!(out.status.success(), "curl failed:\n{seen}");
    (seen, String::from_utf8(out.stdout).expect("UTF-8"))
}

fn heads(verbose: &str) -> Vec<&str> {
    verbose
        .lines()
        .filter_map(|line| line.strip_prefix("< "))
        .map(str::trim_end)
        .filter(|line| !line.is_empty() && !line.starts_with("date:"))
        .collect()
}

#[test]
fn hints_reach_curl_over_http11_before_the_answer() {
    let (handler, release) = hinting();
    let addr = start(ServerConfig::default(), handler);
    let url = format!("http://{addr}/page");
    let (verbose, out) = hints_come_first(&[], &url, &release);
    assert_eq!(out, "page\n");
    let heads = heads(&verbose);
    assert_eq!(
        heads[..2],
        ["HTTP/1.1 103 Early Hints", &*format!("link: {LINK}")]
    );
    assert_eq!(heads[2], "HTTP/1.1 200 OK");
}

#[test]
fn hints_reach_curl_over_http2_before_the_answer() {
    let (handler, release) = hinting();
    let addr = start(ServerConfig::default(), handler);
    let url = format!("http://{addr}/twice");
    let (verbose, out) = hints_come_first(&["--http2-prior-knowledge"], &url, &release);
    assert_eq!(out, "page\n");
    let heads = heads(&verbose);
    let link = format!("link: {LINK}");
    assert_eq!(heads[..4], ["HTTP/2 103", &*link, "HTTP/2 103", &*link]);
    assert_eq!(heads[4], "HTTP/2 200");
    // Hints and the answer from one poll of the handler: the hints still go first.
    let url = format!("http://{addr}/now");
    let dumped = common::curl_text(&["--http2-prior-knowledge", "-D", "-", &url]);
    let statuses: Vec<&str> = dumped.lines().filter(|l| l.starts_with("HTTP/")).collect();
    assert_eq!(statuses, ["HTTP/2 103 ", "HTTP/2 200 "], "{dumped}");
    assert!(dumped.contains(LINK), "{dumped}");
}

#[test]
fn hints_reach_curl_over_tls_with_alpn() {
    let (handler, release) = hinting();
    let acceptor = common::acceptor(&[b"h2", b"http/1.1"]);
    let addr = start_tls(ServerConfig::default(), handler, acceptor);
    for (args, version) in [(["--http2"], "HTTP/2 "), (["--http1.1"], "HTTP/1.1 ")] {
        let url = format!("https://localhost:{}/page", addr.port());
        let resolve = format!("localhost:{}:127.0.0.1", addr.port());
        let all = [&args[..], &["-k", "--resolve", &resolve]].concat();
        let (verbose, out) = hints_come_first(&all, &url, &release);
        assert_eq!(out, "page\n");
        let heads = heads(&verbose);
        assert!(heads[0].starts_with(&format!("{version}103")), "{heads:?}");
        assert!(heads[2].starts_with(&format!("{version}200")), "{heads:?}");
    }
}

#[test]
fn pipelined_answers_keep_their_order_around_hints() {
    let (handler, _release) = hinting();
    let addr = start(ServerConfig::default(), handler);
    let one = "GET /now HTTP/1.1\r\nhost: a\r\n\r\n";
    let last = "GET /now HTTP/1.1\r\nhost: a\r\nconnection: close\r\n\r\n";
    let text = raw(addr, [one, one, last].concat().as_bytes());
    assert_eq!(common::statuses(&text), [103, 200, 103, 200, 103, 200]);
}

#[test]
fn an_http10_client_is_sent_no_hints() {
    let (handler, _release) = hinting();
    let addr: SocketAddr = start(ServerConfig::default(), handler);
    let text = raw(addr, b"GET /now HTTP/1.0\r\n\r\n");
    assert!(text.starts_with("HTTP/1.1 200 OK\r\n"), "{text}");
    assert!(!text.contains("103"), "{text}");
}
