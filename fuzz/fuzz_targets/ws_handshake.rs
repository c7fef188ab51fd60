//! `ws_handshake`: the WebSocket opening handshake on both sides (RFC 6455 section 4, with
//! permessage-deflate's negotiation, RFC 7692). A server checks an arbitrary upgrade request
//! (as an HTTP/1.1 upgrade and as RFC 8441's extended `CONNECT`); a client checks an
//! arbitrary `101` answer. Neither may panic; what a server accepts it must answer with a
//! `101` head that parses, naming one of its own subprotocols and deflate parameters within
//! the RFC's bounds; what a client accepts must be what it offered.
//!
//! Input: a byte (bit 0: the server's side, else the client's; bit 1: deflate configured),
//! then the head.

#![no_main]

use libfuzzer_sys::fuzz_target;
use ringwire_http1::{Limits, Method, RequestParser, ResponseParser, Status};
use ringwire_ws::handshake::{self, ClientHandshake};
use ringwire_ws::{DeflateConfig, DeflateParams};

const PROTOCOLS: [&str; 2] = ["chat", "superchat"];

fn within_bounds(params: &DeflateParams) {
    assert!(
        (8..=15).contains(&params.server_max_window_bits),
        "{params:?}"
    );
    assert!(
        (8..=15).contains(&params.client_max_window_bits),
        "{params:?}"
    );
}

fn server(head: &[u8], deflate: Option<&DeflateConfig>) {
    let mut parser = RequestParser::new(Limits::default());
    let Ok(Status::Complete(request, _)) = parser.parse(head) else {
        return;
    };
    let answers = [
        handshake::accept(&request, &PROTOCOLS, deflate),
        handshake::accept_extended_connect(&request, &PROTOCOLS, deflate),
    ];
    for accepted in answers {
        let accepted = match accepted {
            Ok(accepted) => accepted,
            Err(e) => {
                assert!((400..600).contains(&e.status()), "{e:?}");
                continue;
            }
        };
        if let Some(protocol) = accepted.protocol() {
            assert!(PROTOCOLS.contains(&protocol), "{protocol}");
        }
        if let Some(params) = accepted.deflate() {
            assert!(deflate.is_some(), "deflate accepted unconfigured");
            within_bounds(params);
        }
        let mut out = [0; 512];
        let n = accepted
            .write_response(&mut out)
            .expect("room for the head");
        let mut response = ResponseParser::new(Limits::default());
        match response.parse(&out[..n], Method::Get) {
            Ok(Status::Complete(head, len)) => {
                assert_eq!((head.status(), len), (101, n));
            }
            other => panic!("the answer does not parse: {other:?}"),
        }
    }
}

fn client(head: &[u8], deflate: Option<DeflateConfig>) {
    let Ok(handshake) = ClientHandshake::new(&PROTOCOLS, deflate) else {
        return;
    };
    let mut parser = ResponseParser::new(Limits::default());
    let Ok(Status::Complete(response, _)) = parser.parse(head, Method::Get) else {
        return;
    };
    // The key is fresh, so the answer's accept value matches only by chance; what is
    // checked before it (and any panic) is what this reaches.
    if let Ok(negotiated) = handshake.verify(&response) {
        if let Some(protocol) = &negotiated.protocol {
            assert!(PROTOCOLS.contains(&protocol.as_str()), "{protocol}");
        }
        if let Some(params) = &negotiated.deflate {
            assert!(deflate.is_some(), "deflate accepted unoffered");
            within_bounds(params);
        }
    }
}

fuzz_target!(|data: &[u8]| {
    let Some((&setup, head)) = data.split_first() else {
        return;
    };
    let deflate = (setup & 2 != 0).then(DeflateConfig::default);
    if setup & 1 != 0 {
        server(head, deflate.as_ref());
    } else {
        client(head, deflate);
    }
});
