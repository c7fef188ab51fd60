//! The client side of the Autobahn test suite: run every case of a
//! `wstest -m fuzzingserver` as an echo client, then ask it to write its
//! reports (see `scripts/autobahn/run.sh server`).
//!
//! ```text
//! cargo run --release -p ringwire-ws --features tokio --example autobahn_client -- ws://127.0.0.1:9001 ringwire
//! ```

use ringwire_ws::handshake::Offer;
use std::sync::Arc;

use ringwire_io::tokio::{AsyncRecvTransport, AsyncSendTransport};
use ringwire_io::TransportConfig;
use ringwire_ws::socket::{SocketError, WebSocket};
use ringwire_ws::{DeflateConfig, Limits, Message};
use tokio::net::TcpStream;

/// Opens a WebSocket on `path`; the socket owns its stream (an `Arc`).
async fn connect(
    authority: &str,
    path: &str,
    deflate: Option<DeflateConfig>,
) -> Result<WebSocket<Arc<TcpStream>>, SocketError> {
    let stream = Arc::new(TcpStream::connect(authority).await?);
    stream.set_nodelay(true)?;
    // Room for Autobahn's largest messages (16 MiB) and their frames.
    let ring = TransportConfig::new(64 << 10, 64 << 20);
    let (socket, _) = WebSocket::connect(
        AsyncRecvTransport::new(ring, Arc::clone(&stream))?,
        AsyncSendTransport::new(ring, stream)?,
        authority,
        path,
        &Offer {
            deflate,
            ..Offer::default()
        },
        Limits::default(),
    )
    .await?;
    Ok(socket)
}

/// Echoes every text and binary message until the connection closes.
async fn run_case(authority: &str, path: &str) -> Result<(), SocketError> {
    let mut socket = connect(authority, path, Some(DeflateConfig::default())).await?;
    while let Some(received) = socket.recv().await {
        if let (message @ (Message::Text(_) | Message::Binary(_)), mut reply) = received? {
            reply.send(&message).await?;
        }
    }
    Ok(())
}

/// The text a control URL answers with.
async fn ask(authority: &str, path: &str) -> Result<String, SocketError> {
    let mut socket = connect(authority, path, None).await?;
    let mut text = String::new();
    while let Some(received) = socket.recv().await {
        if let (Message::Text(t), _) = received? {
            text.push_str(t);
        }
    }
    Ok(text)
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let url = args
        .next()
        .unwrap_or_else(|| "ws://127.0.0.1:9001".to_owned());
    let agent = args.next().unwrap_or_else(|| "ringwire".to_owned());
    let authority = url
        .strip_prefix("ws://")
        .ok_or("the fuzzing server's URL must be ws://HOST:PORT")?
        .trim_end_matches('/');
    let count: u32 = ask(authority, "/getCaseCount").await?.trim().parse()?;
    eprintln!("autobahn_client: {count} cases");
    for case in 1..=count {
        if let Err(e) = run_case(authority, &format!("/runCase?case={case}&agent={agent}")).await {
            // A case that ends in a protocol error is the suite's to judge.
            eprintln!("case {case}: {e}");
        }
    }
    ask(authority, &format!("/updateReports?agent={agent}")).await?;
    Ok(())
}
