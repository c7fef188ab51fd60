//! The axum example's application, unchanged, on ringwire, against curl; and request bodies
//! streamed to axum handlers as they arrive (`TowerHandler::streaming`) over HTTP/1.1 too.

mod common;

#[allow(dead_code)]
#[path = "../examples/axum.rs"]
mod example;

use std::io::{Read as _, Write as _};
use std::time::Duration;

use axum::body::{Body as AxumBody, Bytes};
use common::{curl, curl_text, start};
use futures_util::StreamExt as _;
use ringwire_server::{ServerConfig, TowerHandler};

#[test]
fn an_axum_router_runs_unchanged() {
    let addr = start(ServerConfig::default(), TowerHandler::new(example::app()));
    let base = format!("http://{addr}");
    assert_eq!(
        curl_text(&[&format!("{base}/")]),
        "hello from axum on ringwire\n"
    );
    assert_eq!(
        curl_text(&[&format!("{base}/users/7")]),
        r#"{"id":7,"name":"user 7"}"#
    );
    let created = curl(
        &[
            "-H",
            "content-type: application/json",
            "--data-binary",
            "@-",
            "-w",
            " %{http_code}",
            &format!("{base}/users"),
        ],
        br#"{"name":"ada"}"#,
    );
    assert_eq!(created, br#"{"id":42,"name":"ada"} 201"#);
    // axum's own answers pass through: a bad path parameter, an unknown route.
    let out = curl_text(&[
        "-o",
        "/dev/null",
        "-w",
        "%{http_code}",
        &format!("{base}/users/x"),
    ]);
    assert_eq!(out, "400");
    let out = curl_text(&[
        "-o",
        "/dev/null",
        "-w",
        "%{http_code}",
        &format!("{base}/nope"),
    ]);
    assert_eq!(out, "404");
    // Keep-alive holds across axum responses.
    let url = format!("{base}/");
    let out = curl_text(&["-w", "%{num_connects}\n", &url, &url]);
    assert_eq!(
        out,
        "hello from axum on ringwire\n1\nhello from axum on ringwire\n0\n"
    );
}

#[test]
fn axum_sees_the_protocol_a_request_came_over() {
    let app = axum::Router::new().route(
        "/",
        axum::routing::get(|version: axum::http::Version| async move { format!("{version:?}") }),
    );
    let addr = start(ServerConfig::default(), TowerHandler::new(app));
    let url = format!("http://{addr}/");
    assert_eq!(curl_text(&["--http2-prior-knowledge", &url]), "HTTP/2.0");
    assert_eq!(curl_text(&["--http1.1", &url]), "HTTP/1.1");
}

/// Answers the size of its first piece of body as soon as it has it.
async fn first_piece(body: AxumBody) -> String {
    let mut arriving = body.into_data_stream();
    match arriving.next().await {
        Some(Ok(piece)) => format!("first {}\n", piece.len()),
        other => format!("{other:?}\n"),
    }
}

/// Counts the body as it streams by.
async fn count(body: AxumBody) -> String {
    let mut arriving = body.into_data_stream();
    let mut total = 0;
    while let Some(piece) = arriving.next().await {
        match piece {
            Ok(piece) => total += piece.len(),
            Err(e) => return format!("failed after {total}: {e}\n"),
        }
    }
    format!("{total}\n")
}

async fn whole(body: Bytes) -> String {
    format!("{}\n", body.len())
}

fn streaming_app() -> axum::Router {
    use axum::routing::post;
    axum::Router::new()
        .route("/first", post(first_piece))
        .route("/count", post(count))
        .route("/whole", post(whole))
        .route("/echo", post(|body: AxumBody| async move { body }))
}

#[test]
fn an_http11_body_reaches_a_streaming_axum_handler_as_it_arrives() {
    let addr = start(
        ServerConfig::default(),
        TowerHandler::streaming(streaming_app()),
    );
    // Ten bytes of a 100,000-byte body: the handler has them, and answers, with the rest
    // still to come (read whole first, this would wait for all of it).
    let mut s = std::net::TcpStream::connect(addr).expect("connect");
    s.set_read_timeout(Some(Duration::from_secs(5)))
        .expect("timeout");
    s.write_all(b"POST /first HTTP/1.1\r\nhost: x\r\ncontent-length: 100000\r\n\r\n0123456789")
        .expect("send");
    let mut answer = Vec::new();
    let mut buf = [0; 1024];
    while !answer.ends_with(b"first 10\n") {
        let n = s
            .read(&mut buf)
            .expect("an answer before the body is whole");
        assert!(n > 0, "closed: {}", String::from_utf8_lossy(&answer));
        answer.extend_from_slice(&buf[..n]);
    }

    let url = |path: &str| format!("http://{addr}{path}");
    // Past the server's 8 MiB buffering bound: streamed through, in fixed size and chunked.
    let upload = vec![b'u'; 20 << 20];
    let count = url("/count");
    for framing in [&[][..], &["-H", "transfer-encoding: chunked"]] {
        let args = [&["--http1.1", "--data-binary", "@-"], framing, &[&count]].concat();
        assert_eq!(curl(&args, &upload), b"20971520\n");
    }
    // axum's own bound applies to its extractors (2 MiB by default).
    let args = [
        "--http1.1",
        "--data-binary",
        "@-",
        "-w",
        " %{http_code}",
        &url("/whole"),
    ];
    assert_eq!(curl(&args, &[b'w'; 1 << 20]), b"1048576\n 200");
    let out = String::from_utf8(curl(&args, &vec![b'w'; 3 << 20])).expect("utf-8");
    assert!(out.ends_with(" 413"), "{out}");
    // A body the answer itself carries back is read to its end before the answer goes out.
    let body: Vec<u8> = (0..3 << 20).map(|i: u32| (i % 251) as u8).collect();
    let echoed = curl(&["--http1.1", "--data-binary", "@-", &url("/echo")], &body);
    assert!(
        echoed == body,
        "the echo came back changed ({} bytes)",
        echoed.len()
    );
    // And over HTTP/2 as it was.
    let args = [
        "--http2-prior-knowledge",
        "--data-binary",
        "@-",
        &url("/count"),
    ];
    assert_eq!(curl(&args, &upload), b"20971520\n");
}
