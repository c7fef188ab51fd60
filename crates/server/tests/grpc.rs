//! gRPC over HTTP/2 against Python's grpcio: unary calls (each fails without its
//! `grpc-status` trailer) and a client-streaming one (the request body read as it arrives);
//! and the trailer fields gRPC needs elsewhere: HTTP/1.1's chunked trailer section on a raw
//! socket, and an axum body's trailers through the tower bridge.

mod common;

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};

use bytes::Bytes;
use common::{python, start};
use ringwire_http1::encode::FieldBlock;
use ringwire_http1::Method;
use ringwire_server::{
    handler_fn, streaming, Body, BodyFrame, Request, Response, Router, ServerConfig, TowerHandler,
};
use tokio::io::{AsyncRead, AsyncReadExt as _};

fn fields(pairs: &[(&str, &str)]) -> FieldBlock {
    FieldBlock::new(pairs.iter().map(|(n, v)| (*n, v.as_bytes()))).expect("valid fields")
}

/// A unary gRPC method on raw bytes (no protobuf: the Python side passes bytes through):
/// `Upper` answers its message in capitals, `Missing` fails with `NOT_FOUND` (status 5).
/// The message is sent before the status is known, as a streaming server does: the status
/// can only go in the trailers.
async fn grpc(request: &Request<'_>) -> Response {
    let body = request.body();
    let message = match body {
        [0, _, _, _, _, ..] => &body[5..],
        _ => return Response::new(400),
    };
    let (sender, answer) = Body::channel(2);
    let reply = message.to_ascii_uppercase();
    let failing = request.head().target().as_bytes().ends_with(b"/Missing");
    tokio::spawn(async move {
        let status = if failing {
            fields(&[("grpc-status", "5"), ("grpc-message", "no such thing")])
        } else {
            sender.send(framed(&reply)).await.expect("the call is open");
            fields(&[("grpc-status", "0")])
        };
        sender.trailers(status).await.expect("the call is open");
    });
    grpc_answer(answer)
}

const GRPCIO_CLIENT: &str = r#"
import sys, grpc
channel = grpc.insecure_channel(sys.argv[1])
same = lambda b: b
upper = channel.unary_unary("/ringwire.Echo/Upper", request_serializer=same, response_deserializer=same)
print(upper(b"hello grpc", timeout=10).decode())
missing = channel.unary_unary("/ringwire.Echo/Missing", request_serializer=same, response_deserializer=same)
try:
    missing(b"x", timeout=10)
    print("no error")
except grpc.RpcError as e:
    print(e.code().name, e.details())
"#;

#[test]
fn grpc_calls_from_grpcio_get_their_status_in_trailers() {
    ringwire_testkit::ensure_python_module("grpc", "grpcio");
    let router = Router::new()
        .post("/ringwire.Echo/Upper", grpc)
        .post("/ringwire.Echo/Missing", grpc);
    let addr = start(ServerConfig::default(), router);
    let out = python(GRPCIO_CLIENT, &[&addr.to_string()]);
    assert_eq!(out, "HELLO GRPC\nNOT_FOUND no such thing\n");
}

/// The next gRPC message from `body` (its 5-byte prefix read off); `None` at the body's end.
async fn next_message<R: AsyncRead + Unpin>(body: &mut R) -> std::io::Result<Option<Vec<u8>>> {
    let mut prefix = [0; 5];
    if body.read(&mut prefix[..1]).await? == 0 {
        return Ok(None);
    }
    body.read_exact(&mut prefix[1..]).await?;
    let len = u32::from_be_bytes([prefix[1], prefix[2], prefix[3], prefix[4]]);
    let mut message = vec![0; len as usize];
    body.read_exact(&mut message).await?;
    Ok(Some(message))
}

/// A gRPC call's answer: its messages and status come in `body`.
fn grpc_answer(body: Body) -> Response {
    Response::new(200)
        .header("content-type", "application/grpc")
        .body(body)
}

/// `message` framed for gRPC (uncompressed).
fn framed(message: &[u8]) -> Bytes {
    let mut frame = vec![0];
    frame.extend_from_slice(&(message.len() as u32).to_be_bytes());
    frame.extend_from_slice(message);
    frame.into()
}

/// A client-streaming method: reads the call's messages as they arrive (the request body
/// through a `BodyReader`; the server buffers no more than 1 KiB of a body itself) and
/// answers how many there were and their total length.
async fn count(request: &Request<'_>) -> Response {
    let Some(mut body) = request.body_reader() else {
        return Response::new(400);
    };
    let (mut messages, mut bytes) = (0, 0);
    loop {
        match next_message(&mut body).await {
            Ok(Some(message)) => (messages, bytes) = (messages + 1, bytes + message.len()),
            Ok(None) => break,
            Err(_) => return Response::new(400),
        }
    }
    let reply = format!("{messages} messages, {bytes} bytes");
    let frames = [
        Ok(BodyFrame::Data(framed(reply.as_bytes()))),
        Ok(BodyFrame::Trailers(fields(&[("grpc-status", "0")]))),
    ];
    grpc_answer(Body::frames(futures_util::stream::iter(frames)))
}

/// A bidirectional method: answers at once, and a task echoes each message in capitals as
/// it comes, reading the request body after the handler has returned.
async fn chat(request: &Request<'_>) -> Response {
    let Some(mut body) = request.body_stream() else {
        return Response::new(400);
    };
    let (sender, answer) = Body::channel(4);
    tokio::spawn(async move {
        while let Ok(Some(message)) = next_message(&mut body).await {
            if sender
                .send(framed(&message.to_ascii_uppercase()))
                .await
                .is_err()
            {
                return;
            }
        }
        let _ = sender.trailers(fields(&[("grpc-status", "0")])).await;
    });
    grpc_answer(answer)
}

const GRPCIO_BIDI_CLIENT: &str = r#"
import sys, grpc, queue
channel = grpc.insecure_channel(sys.argv[1])
same = lambda b: b
chat = channel.stream_stream("/ringwire.Echo/Chat", request_serializer=same, response_deserializer=same)
echoed = queue.Queue()
def requests():
    for word in [b"one", b"two", b"three"]:
        yield word
        echoed.get(timeout=10)  # the next only once this one came back
replies = []
for reply in chat(requests(), timeout=20):
    replies.append(reply.decode())
    echoed.put(None)
print(" ".join(replies))
"#;

/// Lockstep: the client sends each message only once the last one's echo came back, so the
/// call deadlocks unless the server answers while the request is still arriving.
#[test]
fn a_bidirectional_grpc_call_echoes_each_message_as_it_comes() {
    ringwire_testkit::ensure_python_module("grpc", "grpcio");
    let router = Router::new().route(
        Method::Post,
        "/ringwire.Echo/Chat",
        streaming(handler_fn(chat)),
    );
    let addr = start(ServerConfig::default(), router);
    let out = python(GRPCIO_BIDI_CLIENT, &[&addr.to_string()]);
    assert_eq!(out, "ONE TWO THREE\n");
}

const GRPCIO_STREAMING_CLIENT: &str = r#"
import sys, grpc
channel = grpc.insecure_channel(sys.argv[1])
same = lambda b: b
count = channel.stream_unary("/ringwire.Echo/Count", request_serializer=same, response_deserializer=same)
print(count((b"m" * 10_000 for _ in range(200)), timeout=20).decode())
"#;

#[test]
fn a_client_streaming_grpc_call_is_read_as_it_arrives() {
    ringwire_testkit::ensure_python_module("grpc", "grpcio");
    let config = ServerConfig {
        max_buffered_body: 1 << 10,
        ..ServerConfig::default()
    };
    let router = Router::new().route(
        Method::Post,
        "/ringwire.Echo/Count",
        streaming(handler_fn(count)),
    );
    let addr = start(config, router);
    let out = python(GRPCIO_STREAMING_CLIENT, &[&addr.to_string()]);
    assert_eq!(out, "200 messages, 2000000 bytes\n");
}

/// The raw answer to `request`, read to the close.
fn exchange(addr: SocketAddr, request: &str) -> String {
    let mut stream = TcpStream::connect(addr).expect("connect");
    stream.write_all(request.as_bytes()).expect("send");
    let mut answer = Vec::new();
    stream.read_to_end(&mut answer).expect("read");
    String::from_utf8(answer).expect("utf-8")
}

async fn checksummed(_: &Request<'_>) -> Response {
    let frames = [
        Ok(BodyFrame::Data(Bytes::from_static(b"hello "))),
        Ok(BodyFrame::Data(Bytes::from_static(b"world"))),
        Ok(BodyFrame::Trailers(fields(&[("x-checksum", "5eb63bbb")]))),
        // Past the trailers: never read.
        Ok(BodyFrame::Data(Bytes::from_static(b"lost"))),
    ];
    Response::new(200).body(Body::frames(futures_util::stream::iter(frames)))
}

#[test]
fn chunked_answers_end_with_their_trailer_section() {
    let addr = start(ServerConfig::default(), Router::new().get("/", checksummed));
    let answer = exchange(
        addr,
        "GET / HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n",
    );
    let body = answer.split_once("\r\n\r\n").expect("a head").1;
    assert_eq!(
        body,
        "6\r\nhello \r\n5\r\nworld\r\n0\r\nx-checksum: 5eb63bbb\r\n\r\n"
    );
    // HTTP/1.0 has no chunks, so no trailers: the body is delimited by the close.
    let answer = exchange(addr, "GET / HTTP/1.0\r\n\r\n");
    assert_eq!(
        answer.split_once("\r\n\r\n").expect("a head").1,
        "hello world"
    );
}

#[test]
fn an_axum_bodys_trailers_go_out() {
    use axum::routing::get;
    use futures_util::stream;
    use http_body_util::StreamBody;

    async fn handler() -> axum::body::Body {
        let mut trailers = http::HeaderMap::new();
        trailers.insert("grpc-status", http::HeaderValue::from_static("0"));
        let frames = stream::iter([
            Ok::<_, std::convert::Infallible>(http_body::Frame::data(Bytes::from_static(
                b"payload",
            ))),
            Ok(http_body::Frame::trailers(trailers)),
        ]);
        axum::body::Body::new(StreamBody::new(frames))
    }
    let app = axum::Router::new().route("/", get(handler));
    let addr = start(ServerConfig::default(), TowerHandler::new(app));
    let answer = exchange(
        addr,
        "GET / HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n",
    );
    assert!(
        answer.ends_with("\r\n\r\n7\r\npayload\r\n0\r\ngrpc-status: 0\r\n\r\n"),
        "{answer}"
    );
}

/// An axum service behind `TowerHandler::streaming`, written as a gRPC server built on the
/// `http` types is (tonic's are): the request body as an `http_body` that yields messages as
/// they come, the answer streamed and ended by trailers. grpcio's lockstep call needs both.
#[test]
fn a_tower_service_answers_a_bidirectional_call() {
    use axum::body::Body as AxumBody;
    use bytes::{Buf as _, BytesMut};
    use futures_util::StreamExt as _;

    async fn chat(request: AxumBody) -> axum::response::Response {
        let mut arriving = request.into_data_stream();
        let (tx, rx) = tokio::sync::mpsc::channel(4);
        tokio::spawn(async move {
            let mut pending = BytesMut::new();
            while let Some(Ok(chunk)) = arriving.next().await {
                pending.extend_from_slice(&chunk);
                while pending.len() >= 5 {
                    let len = u32::from_be_bytes([pending[1], pending[2], pending[3], pending[4]]);
                    if pending.len() < 5 + len as usize {
                        break;
                    }
                    pending.advance(5);
                    let message = pending.split_to(len as usize).to_ascii_uppercase();
                    let frame = http_body::Frame::data(framed(&message));
                    if tx.send(frame).await.is_err() {
                        return;
                    }
                }
            }
            let mut status = http::HeaderMap::new();
            status.insert("grpc-status", http::HeaderValue::from_static("0"));
            let _ = tx.send(http_body::Frame::trailers(status)).await;
        });
        let frames = futures_util::stream::unfold(rx, |mut rx| async move {
            let frame = rx.recv().await?;
            Some((Ok::<_, std::convert::Infallible>(frame), rx))
        });
        axum::response::Response::builder()
            .header("content-type", "application/grpc")
            .body(AxumBody::new(http_body_util::StreamBody::new(frames)))
            .expect("a response")
    }

    ringwire_testkit::ensure_python_module("grpc", "grpcio");
    let app = axum::Router::new().route("/ringwire.Echo/Chat", axum::routing::post(chat));
    let addr = start(ServerConfig::default(), TowerHandler::streaming(app));
    let out = python(GRPCIO_BIDI_CLIENT, &[&addr.to_string()]);
    assert_eq!(out, "ONE TWO THREE\n");
}
