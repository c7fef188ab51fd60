//! The router and streamed response bodies, over loopback with curl and raw
//! sockets.

mod common;

use std::io;
use std::time::Duration;

use bytes::Bytes;
use common::{curl_text, raw, start};
use ringwire_server::{Body, Request, Response, Router, ServerConfig};

async fn user(request: &Request<'_>) -> Response {
    let name = request.params().decoded("name").expect("routed");
    Response::text(format!(
        "user {} named {}\n",
        request.param("id").unwrap_or("?"),
        name.to_str().expect("utf-8")
    ))
}

async fn created(request: &Request<'_>) -> Response {
    Response::new(201).body(Bytes::copy_from_slice(request.body()))
}

async fn rest(request: &Request<'_>) -> Response {
    Response::text(format!("file {}\n", request.param("path").unwrap_or("")))
}

/// Three chunks from a producer task, with pauses between them.
async fn ticks(_: &Request<'_>) -> Response {
    let (sender, body) = Body::channel(2);
    tokio::spawn(async move {
        for i in 0..3 {
            if sender.send(format!("tick {i}\n")).await.is_err() {
                return;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    });
    Response::text(body)
}

/// A stream that fails after its first chunk.
async fn broken(_: &Request<'_>) -> Response {
    let (sender, body) = Body::channel(2);
    tokio::spawn(async move {
        let _ = sender.send("partial\n").await;
        sender.fail(io::Error::other("backend went away")).await;
    });
    Response::text(body)
}

async fn fallback(request: &Request<'_>) -> Response {
    Response::new(404).body(format!(
        "no route for {}\n",
        String::from_utf8_lossy(request.target().path())
    ))
}

fn router() -> Router {
    Router::new()
        .get("/users/:id/:name", user)
        .post("/users", created)
        .get("/static/*path", rest)
        .get("/ticks", ticks)
        .get("/broken", broken)
}

#[test]
fn routes_by_method_and_path_with_parameters() {
    let addr = start(ServerConfig::default(), router());
    let base = format!("http://{addr}");
    assert_eq!(
        curl_text(&[&format!("{base}/users/7/caf%C3%A9")]),
        "user 7 named café\n"
    );
    assert_eq!(
        curl_text(&["-d", "hi", &format!("{base}/users"), "-w", " %{http_code}"]),
        "hi 201"
    );
    assert_eq!(
        curl_text(&[&format!("{base}/static/css/site.css")]),
        "file css/site.css\n"
    );
    // The path exists for other methods: 405 and what is allowed.
    let out = raw(
        addr,
        b"DELETE /users HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
    );
    assert!(out.starts_with("HTTP/1.1 405 "), "{out}");
    assert!(out.contains("\r\nallow: POST\r\n"), "{out}");
    // No such path.
    let out = curl_text(&[
        "-o",
        "/dev/null",
        "-w",
        "%{http_code}",
        &format!("{base}/nope"),
    ]);
    assert_eq!(out, "404");
    // HEAD on a GET route: the head, no body.
    let out = raw(
        addr,
        b"HEAD /users/1/a HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
    );
    assert!(out.starts_with("HTTP/1.1 200 "), "{out}");
    assert!(out.ends_with("\r\n\r\n"), "{out}");
}

#[test]
fn a_fallback_answers_what_no_route_matches() {
    let addr = start(
        ServerConfig::default(),
        router().fallback(ringwire_server::handler_fn(fallback)),
    );
    let out = curl_text(&[&format!("http://{addr}/elsewhere/x")]);
    assert_eq!(out, "no route for /elsewhere/x\n");
}

#[test]
fn a_streamed_body_goes_out_chunked() {
    let addr = start(ServerConfig::default(), router());
    let out = raw(
        addr,
        b"GET /ticks HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
    );
    assert!(out.contains("\r\ntransfer-encoding: chunked\r\n"), "{out}");
    assert!(!out.contains("content-length"), "{out}");
    assert!(
        out.ends_with("\r\n\r\n7\r\ntick 0\n\r\n7\r\ntick 1\n\r\n7\r\ntick 2\n\r\n0\r\n\r\n"),
        "{out}"
    );
    // curl decodes it, twice on one connection (the stream kept it open).
    let url = format!("http://{addr}/ticks");
    let out = curl_text(&["-w", "%{num_connects}\n", &url, &url]);
    assert_eq!(
        out,
        "tick 0\ntick 1\ntick 2\n1\ntick 0\ntick 1\ntick 2\n0\n"
    );
}

#[test]
fn a_streamed_body_to_http10_ends_with_the_close() {
    let addr = start(ServerConfig::default(), router());
    let out = raw(
        addr,
        b"GET /ticks HTTP/1.0\r\nConnection: keep-alive\r\n\r\n",
    );
    assert!(out.contains("\r\nconnection: close\r\n"), "{out}");
    assert!(!out.contains("transfer-encoding"), "{out}");
    assert!(out.ends_with("\r\n\r\ntick 0\ntick 1\ntick 2\n"), "{out}");
}

#[test]
fn a_failed_stream_cuts_the_body_short() {
    let addr = start(ServerConfig::default(), router());
    let out = raw(addr, b"GET /broken HTTP/1.1\r\nHost: x\r\n\r\n");
    assert!(out.ends_with("\r\n\r\n8\r\npartial\n\r\n"), "{out}");
}
