//! Trailer fields after a response body: a chunked HTTP/1.1 body's trailer section and an
//! HTTP/2 stream's trailing `HEADERS`, from ringwire's server to both clients, and gRPC's
//! status from Python's grpcio server (which only an HTTP/2 client that reads trailers can
//! know).

mod common;

use std::io::{BufRead as _, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use bytes::Bytes;
use common::ringwire;
use ringwire_client::blocking::Client;
use ringwire_client::tokio::Client as AsyncClient;
use ringwire_client::{ClientConfig, Http2, Protocol, RequestBuffer, Trailers, Url};
use ringwire_http1::encode::FieldBlock;
use ringwire_server::{Body, Request, Response, Router};

/// `hello world` in two chunks, then a checksum in the trailers; `/plain` has none.
async fn checksummed(_: &Request<'_>) -> Response {
    let (sender, body) = Body::channel(4);
    tokio::spawn(async move {
        let fields = [("x-checksum", &b"5eb63bbb"[..]), ("x-parts", b"2")];
        let fields = FieldBlock::new(fields).expect("valid fields");
        for part in ["hello ", "world"] {
            sender.send(Bytes::from(part)).await.expect("open");
        }
        sender.trailers(fields).await.expect("open");
    });
    Response::new(200).body(body)
}

async fn plain(_: &Request<'_>) -> Response {
    Response::new(200).body("hello world")
}

fn config(http2: Http2) -> ClientConfig {
    ClientConfig {
        http2,
        request_timeout: Some(Duration::from_secs(20)),
        ..ClientConfig::default()
    }
}

fn get<'u>(buffer: &mut RequestBuffer, url: &'u Url) -> ringwire_client::Request<'u> {
    let request = buffer.request("GET", url).and_then(|r| r.headers());
    request.and_then(|r| r.finish()).expect("request")
}

fn owned(trailers: &Trailers) -> Vec<(String, String)> {
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    trailers.iter().map(|(n, v)| (text(n), text(v))).collect()
}

fn checksum() -> Vec<(String, String)> {
    vec![
        ("x-checksum".into(), "5eb63bbb".into()),
        ("x-parts".into(), "2".into()),
    ]
}

#[test]
fn both_protocols_hand_the_trailers_over_once_the_body_is_read() {
    let addr = ringwire(Router::new().get("/", checksummed).get("/plain", plain));
    for (http2, protocol) in [
        (Http2::Off, Protocol::Http1),
        (Http2::PriorKnowledge, Protocol::Http2),
    ] {
        let client = Client::new(config(http2));
        let mut buffer = RequestBuffer::new().expect("buffer");
        for _ in 0..2 {
            let url = Url::parse(&format!("http://{addr}/")).expect("url");
            let request = get(&mut buffer, &url);
            let mut response = client.send(&mut buffer, &request).expect("answer");
            assert_eq!(response.protocol(), protocol);
            let mut body = Vec::new();
            while let Some(piece) = response.chunk().expect("body").map(<[u8]>::to_vec) {
                // Not before the body's end.
                assert!(response.trailers().is_empty());
                body.extend_from_slice(&piece);
            }
            assert_eq!(body, b"hello world");
            assert_eq!(owned(response.trailers()), checksum(), "{protocol:?}");
            assert_eq!(
                response.trailers().get("X-Checksum"),
                Some(&b"5eb63bbb"[..])
            );

            // The next answer on the same connection has none.
            let url = Url::parse(&format!("http://{addr}/plain")).expect("url");
            let request = get(&mut buffer, &url);
            let mut response = client.send(&mut buffer, &request).expect("answer");
            assert_eq!(response.bytes().expect("body"), b"hello world");
            assert!(response.trailers().is_empty());
        }
        assert_eq!(
            client.idle_connections(&Url::parse(&format!("http://{addr}/")).unwrap()),
            1
        );
    }
}

#[tokio::test]
async fn the_tokio_client_too() {
    let addr = ringwire(Router::new().get("/", checksummed));
    for http2 in [Http2::Off, Http2::PriorKnowledge] {
        let client = AsyncClient::new(config(http2));
        let mut buffer = RequestBuffer::new().expect("buffer");
        let url = Url::parse(&format!("http://{addr}/")).expect("url");
        let request = get(&mut buffer, &url);
        let mut response = client.send(&mut buffer, &request).await.expect("answer");
        assert_eq!(response.bytes().await.expect("body"), b"hello world");
        assert_eq!(owned(response.trailers()), checksum(), "{http2:?}");
    }
}

/// A grpcio server on a loopback port with two unary methods on raw bytes: `t.T/Echo`
/// answers its message, `t.T/Fail` fails with `NOT_FOUND`. Prints its port, then serves
/// until its standard input closes.
const GRPCIO_SERVER: &str = r#"
import sys, grpc
from concurrent import futures

def echo(request, context):
    return request

def fail(request, context):
    context.abort(grpc.StatusCode.NOT_FOUND, "no such thing")

methods = {
    "Echo": grpc.unary_unary_rpc_method_handler(echo),
    "Fail": grpc.unary_unary_rpc_method_handler(fail),
}
server = grpc.server(futures.ThreadPoolExecutor(max_workers=2))
server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler("t.T", methods),))
port = server.add_insecure_port("127.0.0.1:0")
server.start()
print(port, flush=True)
sys.stdin.read()
server.stop(0)
"#;

/// The grpcio server and its port; it stops when dropped.
struct Grpcio(Child, u16);

impl Grpcio {
    fn start() -> Grpcio {
        ringwire_testkit::ensure_python_module("grpc", "grpcio");
        let mut child = Command::new("python3")
            .args(["-c", GRPCIO_SERVER])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("python3 runs");
        let mut line = String::new();
        let stdout = child.stdout.take().expect("stdout");
        BufReader::new(stdout).read_line(&mut line).expect("port");
        let port = line.trim().parse().expect("a port");
        Grpcio(child, port)
    }
}

impl Drop for Grpcio {
    fn drop(&mut self) {
        drop(self.0.stdin.take());
        let _ = self.0.wait();
    }
}

/// A gRPC message: uncompressed, its length, its bytes.
fn grpc_message(message: &[u8]) -> Vec<u8> {
    let mut framed = vec![0];
    framed.extend_from_slice(&(message.len() as u32).to_be_bytes());
    framed.extend_from_slice(message);
    framed
}

#[test]
fn grpc_status_comes_in_grpcio_s_trailers() {
    let server = Grpcio::start();
    let client = Client::new(config(Http2::PriorKnowledge));
    let mut buffer = RequestBuffer::new().expect("buffer");
    let message = grpc_message(b"ping");
    let call = |buffer: &mut RequestBuffer, method: &str| {
        let url = Url::parse(&format!("http://127.0.0.1:{}/t.T/{method}", server.1)).unwrap();
        let request = buffer
            .request("POST", &url)
            .and_then(|r| r.headers())
            .and_then(|r| r.header("content-type", "application/grpc"))
            .and_then(|r| r.header("te", "trailers"))
            .and_then(|r| r.body(&message))
            .expect("request");
        let mut response = client.send(buffer, &request).expect("answer");
        assert_eq!(response.status(), 200);
        let head_status = response.header("grpc-status").map(<[u8]>::to_vec);
        let body = response.bytes().expect("body");
        (head_status, body, owned(response.trailers()))
    };

    let (head_status, body, trailers) = call(&mut buffer, "Echo");
    assert_eq!((head_status, body), (None, grpc_message(b"ping")));
    let ok = [("grpc-status", "0"), ("grpc-message", "")];
    assert_eq!(trailers, ok.map(|(n, v)| (n.to_owned(), v.to_owned())));

    // A call that fails before any message is answered "trailers-only": one HEADERS frame
    // that ends the stream, the status in it; so no trailers.
    let (head_status, body, trailers) = call(&mut buffer, "Fail");
    assert_eq!((head_status.as_deref(), body.len()), (Some(&b"5"[..]), 0));
    assert!(trailers.is_empty(), "{trailers:?}");
}
