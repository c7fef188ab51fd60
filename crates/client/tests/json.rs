//! JSON bodies both ways (`HeaderBuilder::json`, `Response::json`), against Python's
//! `http.server` and its `json` module, with both clients; answers read with borrowed
//! fields.

mod common;

use std::collections::HashMap;

use common::Python;
use ringwire_client::{blocking, tokio as async_client, Error, RequestBuffer, Url};
use serde::{Deserialize, Serialize};

#[derive(Debug, Serialize)]
struct Order<'a> {
    item: &'a str,
    quantity: u32,
    note: Option<&'a str>,
}

/// What the server answers: the order as Python's `json` read it, and its content type.
#[derive(Debug, Deserialize, PartialEq)]
struct Receipt {
    got: serde_json::Value,
    #[serde(rename = "type")]
    content_type: String,
}

const ORDER: Order<'static> = Order {
    item: "caf\u{e9} \"noir\"",
    quantity: 2,
    note: None,
};

fn expected(content_type: &str) -> Receipt {
    let got = serde_json::json!({"item": "caf\u{e9} \"noir\"", "quantity": 2, "note": null});
    Receipt {
        got,
        content_type: content_type.to_owned(),
    }
}

#[test]
fn the_blocking_client_sends_and_reads_json() {
    let python = Python::start();
    let client = blocking::Client::default();
    let url = Url::parse(&python.url("/json")).unwrap();
    let mut buffer = RequestBuffer::new().unwrap();
    let request = buffer.request("POST", &url).unwrap().headers().unwrap();
    let request = request.json(&ORDER).unwrap();
    let receipt: Receipt = client.send(&mut buffer, &request).unwrap().json().unwrap();
    assert_eq!(receipt, expected("application/json"));

    // A content type of the caller's stays the only one.
    let request = buffer.request("POST", &url).unwrap().headers().unwrap();
    let request = request
        .header("content-type", "application/vnd.order+json")
        .unwrap();
    let request = request.json(&ORDER).unwrap();
    let receipt: Receipt = client.send(&mut buffer, &request).unwrap().json().unwrap();
    assert_eq!(receipt, expected("application/vnd.order+json"));

    // A body that is not JSON, and a value that cannot be written as JSON.
    let text = Url::parse(&python.url("/not-json")).unwrap();
    let request = buffer.request("POST", &text).unwrap().headers().unwrap();
    let request = request.json(&ORDER).unwrap();
    let answer = client
        .send(&mut buffer, &request)
        .unwrap()
        .json::<Receipt>();
    assert!(
        matches!(answer, Err(Error::Json(ref e)) if e.is_syntax()),
        "{answer:?}"
    );
    let keyed: HashMap<(u8, u8), u8> = HashMap::from([((1, 2), 3)]);
    let request = buffer.request("POST", &url).unwrap().headers().unwrap();
    let refused = request.json(&keyed);
    assert!(matches!(refused, Err(Error::Json(_))), "{refused:?}");
    // Past the send ring's room: the ring's error, not JSON's.
    let huge = vec!["x".repeat(1000); 100];
    let request = buffer.request("POST", &url).unwrap().headers().unwrap();
    let refused = request.json(&huge);
    assert!(
        matches!(refused, Err(Error::BodyExceedsSendRing { .. })),
        "{refused:?}"
    );
}

#[tokio::test]
async fn the_tokio_client_sends_and_reads_json() {
    let python = Python::start();
    let client = async_client::Client::default();
    let url = Url::parse(&python.url("/json")).unwrap();
    let mut buffer = RequestBuffer::new().unwrap();
    let request = buffer.request("POST", &url).unwrap().headers().unwrap();
    let request = request.json(&ORDER).unwrap();
    let mut response = client.send(&mut buffer, &request).await.unwrap();
    let receipt: Receipt = response.json().await.unwrap();
    assert_eq!(receipt, expected("application/json"));
}

/// What the server answers, its strings borrowed from the body.
#[derive(Debug, Deserialize, PartialEq)]
struct Seen<'a> {
    #[serde(rename = "type")]
    content_type: &'a str,
}

/// The answer of `/json` as a ringwire server sends it.
struct Answer;

impl ringwire_server::Handler for Answer {
    async fn call(&self, _: &ringwire_server::Request<'_>) -> ringwire_server::Response {
        ringwire_server::Response::new(200).body(&br#"{"type":"application/json"}"#[..])
    }
}

#[test]
fn borrowed_fields_in_place_or_from_a_collected_body() {
    let python = Python::start();
    let addr = common::ringwire(Answer);
    let mut buffer = RequestBuffer::new().unwrap();
    let h2 = ringwire_client::ClientConfig {
        http2: ringwire_client::Http2::PriorKnowledge,
        ..Default::default()
    };
    // In place over HTTP/1.1 (Python's length-framed answer); collected over HTTP/2, whose
    // frame headers lie between the body's pieces.
    for (client, url) in [
        (blocking::Client::default(), python.url("/json")),
        (blocking::Client::new(h2), format!("http://{addr}/json")),
    ] {
        let url = Url::parse(&url).unwrap();
        let request = buffer.request("POST", &url).unwrap().headers().unwrap();
        let request = request.json(&ORDER).unwrap();
        let mut response = client.send(&mut buffer, &request).unwrap();
        let seen: Seen<'_> = response.json().unwrap();
        assert_eq!(seen.content_type, "application/json");
        drop(response);
        assert_eq!(client.idle_connections(&url), 1, "{url}");
    }
}
