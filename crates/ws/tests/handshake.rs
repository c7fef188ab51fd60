//! The opening handshake, both roles, through ringwire-http1's parsers.

use ringwire_http1::{Method, RequestParser, ResponseParser, Status};
use ringwire_ws::handshake::{
    accept, accept_extended_connect, accept_key, ClientHandshake, HandshakeError,
};
use ringwire_ws::{DeflateConfig, NegotiationError};

fn request_with(extra: &str) -> Vec<u8> {
    format!(
        "GET /chat HTTP/1.1\r\nHost: server.example.com\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
         Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n{extra}\r\n"
    )
    .into_bytes()
}

fn server_accepts(
    raw: &[u8],
    protocols: &[&'static str],
    deflate: Option<&DeflateConfig>,
) -> Result<String, HandshakeError> {
    let mut parser = RequestParser::default();
    let Status::Complete(req, _) = parser.parse(raw).unwrap() else {
        panic!("partial request");
    };
    let accepted = accept(&req, protocols, deflate)?;
    let mut out = [0; 512];
    let n = accepted.write_response(&mut out).unwrap();
    Ok(String::from_utf8(out[..n].to_vec()).unwrap())
}

#[test]
fn rfc6455_sample_key_gives_the_sample_accept() {
    assert_eq!(
        accept_key(b"dGhlIHNhbXBsZSBub25jZQ=="),
        "s3pPLMBiTxaQ9kYGzzhZRbK+xOo="
    );
}

#[test]
fn server_writes_the_101_with_protocol_and_extensions() {
    let raw = request_with(
        "Sec-WebSocket-Protocol: chat, superchat\r\nSec-WebSocket-Extensions: permessage-deflate; client_max_window_bits\r\n",
    );
    let response = server_accepts(
        &raw,
        &["superchat", "chat"],
        Some(&DeflateConfig::default()),
    )
    .unwrap();
    assert_eq!(
        response,
        "HTTP/1.1 101 Switching Protocols\r\nupgrade: websocket\r\nconnection: Upgrade\r\n\
         sec-websocket-accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\nsec-websocket-protocol: superchat\r\n\
         sec-websocket-extensions: permessage-deflate\r\n\r\n"
    );
    let plain = server_accepts(&request_with(""), &[], None).unwrap();
    assert!(!plain.contains("sec-websocket-protocol") && !plain.contains("extensions"));
}

#[test]
fn over_http2_the_request_has_no_key_and_the_answer_none() {
    // An extended CONNECT's HTTP/1.1 form, as ringwire-http2 writes it.
    let raw = b"GET /chat HTTP/1.1\r\nhost: server.example.com\r\nconnection: upgrade\r\n\
                upgrade: websocket\r\nsec-websocket-version: 13\r\n\
                sec-websocket-protocol: chat\r\nsec-websocket-extensions: permessage-deflate\r\n\r\n";
    let mut parser = RequestParser::default();
    let Status::Complete(req, _) = parser.parse(raw).unwrap() else {
        panic!("partial request");
    };
    // A key is what an HTTP/1.1 upgrade must have.
    assert_eq!(accept(&req, &[], None), Err(HandshakeError::InvalidKey));
    let accepted =
        accept_extended_connect(&req, &["chat"], Some(&DeflateConfig::default())).unwrap();
    assert_eq!(accepted.protocol(), Some("chat"));
    assert!(accepted.deflate().is_some());
    let mut out = [0; 512];
    let n = accepted.write_response(&mut out).unwrap();
    assert!(!String::from_utf8_lossy(&out[..n]).contains("accept"));
    // The version is still checked.
    let old = String::from_utf8_lossy(raw).replace("version: 13", "version: 8");
    let mut parser = RequestParser::default();
    let Status::Complete(req, _) = parser.parse(old.as_bytes()).unwrap() else {
        panic!("partial request");
    };
    assert_eq!(
        accept_extended_connect(&req, &[], None),
        Err(HandshakeError::UnsupportedVersion)
    );
}

#[test]
fn server_refuses_bad_upgrades_with_their_status() {
    let cases = [
        (b"POST /chat HTTP/1.1\r\nHost: a\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nContent-Length: 0\r\n\r\n".to_vec(), HandshakeError::NotGet, 400),
        (b"GET /chat HTTP/1.1\r\nHost: a\r\nSec-WebSocket-Version: 13\r\n\r\n".to_vec(), HandshakeError::NotUpgrade, 426),
        (request_with("").replace_version("12"), HandshakeError::UnsupportedVersion, 426),
        (request_with("").replace_key("dG9vIHNob3J0"), HandshakeError::InvalidKey, 400),
        (request_with("").replace_key("not base64 at all!!!!!!="), HandshakeError::InvalidKey, 400),
        (request_with("Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"), HandshakeError::InvalidKey, 400),
    ];
    for (raw, error, status) in cases {
        assert_eq!(
            server_accepts(&raw, &[], None),
            Err(error),
            "{}",
            String::from_utf8_lossy(&raw)
        );
        assert_eq!(error.status(), status);
    }
}

trait Edit {
    fn replace_version(self, v: &str) -> Vec<u8>;
    fn replace_key(self, k: &str) -> Vec<u8>;
}

impl Edit for Vec<u8> {
    fn replace_version(self, v: &str) -> Vec<u8> {
        String::from_utf8(self)
            .unwrap()
            .replace("Version: 13", &format!("Version: {v}"))
            .into_bytes()
    }
    fn replace_key(self, k: &str) -> Vec<u8> {
        String::from_utf8(self)
            .unwrap()
            .replace("dGhlIHNhbXBsZSBub25jZQ==", k)
            .into_bytes()
    }
}

/// A client's request, answered by the server code, verified by the client.
#[test]
fn client_and_server_agree() {
    let config = DeflateConfig {
        client_no_context_takeover: true,
        client_max_window_bits: 12,
        ..DeflateConfig::default()
    };
    let client = ClientHandshake::new(&["v2", "v1"], Some(config)).unwrap();
    assert_eq!(client.key().len(), 24);
    let mut out = [0; 512];
    let n = client
        .write_request("localhost:9001", "/echo", &mut out)
        .unwrap();
    let response = server_accepts(&out[..n], &["v1"], Some(&DeflateConfig::default())).unwrap();
    let mut parser = ResponseParser::default();
    let Status::Complete(resp, _) = parser.parse(response.as_bytes(), Method::Get).unwrap() else {
        panic!("partial response");
    };
    let agreed = client.verify(&resp).unwrap();
    assert_eq!(agreed.protocol.as_deref(), Some("v1"));
    let deflate = agreed.deflate.unwrap();
    assert!(deflate.client_no_context_takeover);
    assert_eq!(deflate.client_max_window_bits, 12);
}

/// The caller's fields go in the request, checked as any field; those the handshake writes
/// itself are refused.
#[test]
fn client_fields_go_in_the_request() {
    let client = ClientHandshake::new(&[], None)
        .unwrap()
        .with_headers(&[("Authorization", "Bearer t"), ("Origin", "http://a")]);
    let mut out = [0; 512];
    let n = client.write_request("h", "/", &mut out).unwrap();
    let head = String::from_utf8_lossy(&out[..n]);
    assert!(
        head.contains("\r\nAuthorization: Bearer t\r\nOrigin: http://a\r\n"),
        "{head}"
    );
    assert!(head.ends_with("\r\n\r\n"));
    assert!(server_accepts(&out[..n], &[], None).is_ok());
    for (name, value) in [
        ("Host", "x"),
        ("sec-websocket-key", "k"),
        ("X-Bad", "a\r\nb"),
    ] {
        let client = ClientHandshake::new(&[], None)
            .unwrap()
            .with_headers(&[(name, value)]);
        assert!(client.write_request("h", "/", &mut out).is_err(), "{name}");
    }
}

#[test]
fn client_refuses_a_bad_answer() {
    let client = ClientHandshake::new(&["v1"], None).unwrap();
    let good = accept_key(client.key().as_bytes());
    let answer = |extra: &str, accept: &str| {
        format!(
            "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: {accept}\r\n{extra}\r\n"
        )
    };
    let cases = [
        (
            answer("", "s3pPLMBiTxaQ9kYGzzhZRbK+xOo="),
            HandshakeError::AcceptMismatch,
        ),
        (
            answer("Sec-WebSocket-Protocol: v2\r\n", &good),
            HandshakeError::UnexpectedProtocol,
        ),
        (
            answer("Sec-WebSocket-Extensions: permessage-deflate\r\n", &good),
            HandshakeError::Extensions(NegotiationError::UnexpectedExtension),
        ),
        (
            "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n".to_string(),
            HandshakeError::NotSwitching(200),
        ),
        (
            answer("", &good).replace("Connection: Upgrade\r\n", ""),
            HandshakeError::NotUpgrade,
        ),
    ];
    for (raw, error) in cases {
        let mut parser = ResponseParser::default();
        let Status::Complete(resp, _) = parser.parse(raw.as_bytes(), Method::Get).unwrap() else {
            panic!("partial response");
        };
        assert_eq!(client.verify(&resp), Err(error), "{raw}");
    }
    let mut parser = ResponseParser::default();
    let raw = answer("Sec-WebSocket-Protocol: v1\r\n", &good);
    let Status::Complete(resp, _) = parser.parse(raw.as_bytes(), Method::Get).unwrap() else {
        panic!("partial response");
    };
    assert_eq!(
        client.verify(&resp).unwrap().protocol.as_deref(),
        Some("v1")
    );
}

#[test]
fn over_http2_the_client_asks_without_a_key_and_takes_a_2xx() {
    let client = ClientHandshake::new(&["v1", "v2"], Some(DeflateConfig::default()))
        .unwrap()
        .with_headers(&[("origin", "https://app.example")]);
    let fields = client.extended_connect_fields().unwrap();
    let names: Vec<&str> = fields.iter().map(|(name, _)| *name).collect();
    assert_eq!(
        names,
        [
            "sec-websocket-version",
            "sec-websocket-protocol",
            "sec-websocket-extensions",
            "origin"
        ]
    );
    assert_eq!(&*fields[1].1, b"v1, v2");
    let managed = ClientHandshake::new(&[], None)
        .unwrap()
        .with_headers(&[("Sec-WebSocket-Key", "x")]);
    assert!(managed.extended_connect_fields().is_err());

    let verdict = |raw: &str| {
        let mut parser = ResponseParser::default();
        let Status::Complete(resp, _) = parser.parse(raw.as_bytes(), Method::Get).unwrap() else {
            panic!("partial response");
        };
        client.verify_extended_connect(&resp)
    };
    // No key, so no accept to check; the upgrade's 101 is no answer here.
    let agreed = verdict(
        "HTTP/1.1 200 \r\nsec-websocket-protocol: v2\r\n\
         sec-websocket-extensions: permessage-deflate\r\nset-cookie: a=1\r\n\r\n",
    )
    .unwrap();
    assert_eq!(agreed.protocol.as_deref(), Some("v2"));
    assert!(agreed.deflate.is_some());
    assert_eq!(agreed.set_cookies, ["a=1"]);
    assert_eq!(
        verdict("HTTP/1.1 101 \r\nupgrade: websocket\r\nconnection: upgrade\r\n\r\n"),
        Err(HandshakeError::NotSwitching(101))
    );
    assert_eq!(
        verdict("HTTP/1.1 404 \r\ncontent-length: 0\r\n\r\n"),
        Err(HandshakeError::NotSwitching(404))
    );
    assert_eq!(
        verdict("HTTP/1.1 200 \r\nsec-websocket-protocol: v3\r\n\r\n"),
        Err(HandshakeError::UnexpectedProtocol)
    );
}
