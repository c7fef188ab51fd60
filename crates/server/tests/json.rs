//! JSON request bodies read where they lie in the receive ring, and JSON answers, with curl
//! as the client over HTTP/1.1 (a length and chunked) and HTTP/2.

mod common;

use std::borrow::Cow;

use common::{curl_text, start};
use ringwire_server::{Request, Response, ServerConfig};
use serde::{Deserialize, Serialize};

#[derive(Deserialize)]
struct Order<'a> {
    #[serde(borrow)]
    item: Cow<'a, str>,
    quantity: u32,
    note: &'a str,
}

#[derive(Serialize, Deserialize, Debug, PartialEq)]
struct Receipt {
    item: String,
    quantity: u32,
    /// Whether `item` was read without a copy.
    item_borrowed: bool,
    /// Whether `note` points into the request's body.
    note_in_body: bool,
}

async fn order(request: &Request<'_>) -> Response {
    let order: Order<'_> = match request.json() {
        Ok(order) => order,
        Err(e) => return Response::text(format!("{e}\n")).status_code(400),
    };
    let body = request.body().as_ptr_range();
    Response::json(&Receipt {
        item: order.item.to_string(),
        quantity: order.quantity,
        item_borrowed: matches!(order.item, Cow::Borrowed(_)),
        note_in_body: body.contains(&order.note.as_ptr()),
    })
}

fn post(url: &str, body: &str, extra: &[&str]) -> String {
    let json = [
        "-H",
        "content-type: application/json",
        "--data-binary",
        body,
    ];
    curl_text(&[&json[..], extra, &[url]].concat())
}

#[test]
fn bodies_are_read_in_place_and_answered_in_json() {
    let addr = start(ServerConfig::default(), ringwire_server::handler_fn(order));
    let url = format!("http://{addr}/orders");
    let plain = r#"{"item": "tea", "quantity": 2, "note": "no sugar"}"#;
    let escaped = r#"{"item": "caf\u00e9 \"noir\"", "quantity": 1, "note": "hot"}"#;
    for extra in [
        &[][..],
        &["-H", "transfer-encoding: chunked"],
        &["--http2-prior-knowledge"],
    ] {
        let receipt: Receipt = serde_json::from_str(&post(&url, plain, extra)).unwrap();
        let expected = Receipt {
            item: "tea".into(),
            quantity: 2,
            item_borrowed: true,
            note_in_body: true,
        };
        assert_eq!(receipt, expected, "{extra:?}");
        // An escaped string is decoded into a string of its own; the rest still borrow.
        let receipt: Receipt = serde_json::from_str(&post(&url, escaped, extra)).unwrap();
        assert_eq!(receipt.item, "caf\u{e9} \"noir\"");
        assert!(!receipt.item_borrowed && receipt.note_in_body, "{extra:?}");
    }
    let refused = post(
        &url,
        r#"{"item": "tea", "quantity": -1}"#,
        &["-w", "%{http_code}"],
    );
    assert!(refused.starts_with("invalid value"), "{refused}");
    assert!(
        refused.contains("line 1 column") && refused.ends_with("400"),
        "{refused}"
    );
}
