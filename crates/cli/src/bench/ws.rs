//! WebSocket echo load on one connection: `depth` binary messages queued and
//! sent as one write, then their echoes read (each checked for its size).

use ringwire_client::ws::{self as client_ws, DeflateConfig, Message, WsOptions, WsUrl};
use ringwire_tls::{MaybeTls, TlsConnector};
use std::path::PathBuf;

use super::guard::Board;
use super::open::OpenError;
use super::pace::Pace;
use super::stats::Stats;
use super::{failed, interrupted, next_batch, End, Socket};
use crate::request::line;

/// Where every connection sends what.
#[derive(Debug)]
pub(crate) struct Target {
    pub(crate) url: WsUrl,
    /// Present for `wss://`.
    pub(crate) tls: Option<TlsConnector>,
    /// The Unix socket connections go to, if not the URL's host.
    pub(crate) unix: Option<PathBuf>,
    /// Every message's payload.
    pub(crate) payload: Vec<u8>,
    /// Messages in flight per connection.
    pub(crate) depth: usize,
    /// Offer permessage-deflate.
    pub(crate) deflate: bool,
}

/// A connection to the target's host, TLS for `wss://`.
pub(crate) async fn open(target: &Target) -> Result<Socket, OpenError> {
    let origin = target.url.http().origin();
    let socket = super::open::socket(origin.host(), origin.port(), target.unix.as_deref()).await?;
    match &target.tls {
        Some(connector) => {
            let session = connector
                .connect(origin.host(), socket)
                .await
                .map_err(|e| OpenError::Connect(line(e)))?;
            Ok(MaybeTls::Tls(Box::new(session)))
        }
        None => Ok(MaybeTls::Plain(socket)),
    }
}

/// A WebSocket over a connection's stream.
pub(crate) type WebSocket<'a> = client_ws::WebSocket<&'a Socket>;

/// The upgrade of an open connection.
pub(crate) async fn upgrade<'a>(
    target: &Target,
    stream: &'a Socket,
) -> Result<WebSocket<'a>, OpenError> {
    let options = WsOptions {
        deflate: target.deflate.then(DeflateConfig::default),
        ..WsOptions::default()
    };
    let (socket, _) = client_ws::handshake(stream, &target.url, &options)
        .await
        .map_err(|e| OpenError::Upgrade(line(e)))?;
    Ok(socket)
}

/// Batches of messages until the run stops or the connection ends.
pub(crate) async fn load(
    target: &Target,
    mut socket: WebSocket<'_>,
    board: &Board,
    slot: usize,
    pace: &mut Pace,
    stats: &mut Stats,
) -> End {
    let message = Message::Binary(&target.payload);
    loop {
        let sent = match next_batch(board, slot, pace, stats).await {
            Ok(due) => due,
            Err(end) => return end,
        };
        let send = async {
            for _ in 0..target.depth {
                socket.queue(&message).await?;
            }
            socket.flush().await
        };
        match board.guard(slot, send).await {
            Ok(Ok(())) => {}
            Ok(Err(e)) => return failed(stats, "send", &e),
            Err(interrupt) => return interrupted(stats, interrupt),
        }
        let mut echoed = 0;
        while echoed < target.depth {
            match board.guard(slot, socket.recv()).await {
                Ok(Some(Ok((Message::Binary(echo), _)))) if echo.len() == target.payload.len() => {
                    stats.message(echo.len() as u64, sent.elapsed());
                    echoed += 1;
                }
                // Answered by the socket itself.
                Ok(Some(Ok((Message::Ping(_) | Message::Pong(_), _)))) => {}
                Ok(Some(Ok((Message::Binary(echo), _)))) => {
                    let sizes = (echo.len(), target.payload.len());
                    stats.protocol_error(&format!(
                        "an echo of {} bytes for a message of {}",
                        sizes.0, sizes.1
                    ));
                    return End::Again;
                }
                Ok(Some(Ok((other, _)))) => {
                    stats
                        .protocol_error(&format!("a {} message instead of the echo", kind(&other)));
                    return End::Again;
                }
                Ok(Some(Err(e))) => return failed(stats, "receive", &e),
                Ok(None) => {
                    stats.read_error("the server closed the WebSocket");
                    return End::Again;
                }
                Err(interrupt) => return interrupted(stats, interrupt),
            }
        }
        board.disarm(slot);
    }
}

fn kind(message: &Message<'_>) -> &'static str {
    match message {
        Message::Text(_) => "text",
        Message::Binary(_) => "binary",
        Message::Close(_) => "close",
        Message::Ping(_) | Message::Pong(_) => "control",
    }
}
