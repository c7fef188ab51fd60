//! The axum example's application, unchanged, on ringwire, against curl.

mod common;

#[allow(dead_code)]
#[path = "../examples/axum.rs"]
mod example;

use common::{curl, curl_text, start};
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
