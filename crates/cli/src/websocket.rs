//! `ringwire ws URL`: lines from stdin go out as messages (text, or binary
//! with `-b`); what arrives is written to stdout as it came, one message per
//! line. `ws://` or `wss://` (TLS, certificates checked unless `-k`), on a
//! connection of its own or, with `--http2`, on a stream of an HTTP/2 one.

use std::io::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use clap::Args;
use ringwire_client::tokio::Client;
use ringwire_client::ws::{CloseCode, DeflateConfig, Limits, Message, WebSocket, WsOptions, WsUrl};
use ringwire_client::{ClientConfig, Http2, UrlError};
use ringwire_io::tokio::AsyncStream;
use ringwire_ws::State;
use tokio::io::AsyncBufReadExt as _;

use crate::cookies::Cookies;
use crate::request::{header_flag, line, seconds, RouteArgs, TlsArgs};

/// How long the server has to answer the close sent when stdin ends.
const CLOSE_TIMEOUT: Duration = Duration::from_secs(5);

#[derive(Debug, Args)]
pub(crate) struct WsArgs {
    // `help`, not a doc comment: rustdoc would read `[:PORT]` as a link.
    #[arg(help = "ws://HOST[:PORT]/PATH or wss://...")]
    url: String,
    /// Offer this subprotocol (repeatable).
    #[arg(long = "protocol", value_name = "NAME")]
    protocols: Vec<String>,
    /// Send this field with the upgrade request, `NAME: VALUE` (repeatable): an
    /// `Authorization`, a `Cookie`, an `Origin`, ...
    #[arg(short = 'H', long = "header", value_name = "NAME: VALUE")]
    headers: Vec<String>,
    /// Cookies to send with the upgrade, as curl --cookie: `NAME=VALUE[; NAME=VALUE...]` as
    /// it is, or a cookie file (Netscape's format) whose cookies go where they match.
    #[arg(long = "cookie", value_name = "DATA|FILE")]
    cookie: Option<String>,
    /// Keep the cookies the upgrade's answer sets in FILE (Netscape's format, as curl
    /// --cookie-jar), written when the session ends.
    #[arg(long = "cookie-jar", value_name = "FILE")]
    cookie_jar: Option<PathBuf>,
    /// Do not offer permessage-deflate.
    #[arg(long)]
    no_deflate: bool,
    /// Open the WebSocket on a stream of an HTTP/2 connection (RFC 8441's extended
    /// CONNECT): `h2` by ALPN for wss://, prior knowledge for ws://.
    #[arg(long)]
    http2: bool,
    /// Send each stdin line as a binary message (any bytes), not as text.
    #[arg(short, long)]
    binary: bool,
    /// Ping the server once it has been quiet this long, and end with an
    /// error when not even the pong comes as long again (keeps connections
    /// that proxies would close for idling).
    #[arg(long, value_name = "SECS")]
    keepalive: Option<f64>,
    /// The largest message (and frame) accepted from the server, in bytes
    /// [default: 64 MiB messages, 16 MiB frames].
    #[arg(long, value_name = "BYTES")]
    max_message: Option<u64>,
    #[command(flatten)]
    tls: TlsArgs,
    #[command(flatten)]
    route: RouteArgs,
}

pub(crate) fn run(args: &WsArgs) -> ExitCode {
    let result = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the runtime: {e}"))
        .and_then(|runtime| {
            let ended = runtime.block_on(session(args));
            // A read of stdin may still wait on a blocking thread, which cannot be
            // cancelled: do not wait for it (the user's next line) once the socket is done.
            runtime.shutdown_background();
            ended
        });
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("ringwire: {message}");
            ExitCode::FAILURE
        }
    }
}

async fn session(args: &WsArgs) -> Result<(), String> {
    let url = WsUrl::parse(&args.url).map_err(|e| match e {
        // The URL parser's own words name http:// and https://.
        UrlError::MissingScheme => {
            format!("invalid URL {:?}: no ws:// or wss:// in front", args.url)
        }
        e => format!("invalid URL {:?}: {e}", args.url),
    })?;
    // Connecting (TCP, TLS, the upgrade) within the client's default 10 s.
    let http2 = match (args.http2, url.is_tls()) {
        (false, _) => Http2::Off,
        (true, true) => Http2::Negotiate,
        (true, false) => Http2::PriorKnowledge,
    };
    let config = ClientConfig {
        http2,
        ..ClientConfig::default()
    };
    let client = Client::with_tls(config, args.tls.config()?);
    let mut client = args.route.route(
        client,
        Client::with_proxies,
        Client::resolve_to_addrs,
        |client, path| client.unix_socket(path),
    )?;
    let cookies = Cookies::new(args.cookie.as_deref(), args.cookie_jar.as_deref());
    if let Some(jar) = &cookies.jar {
        client = client.with_cookies(Arc::clone(jar));
    }
    let protocols: Vec<&str> = args.protocols.iter().map(String::as_str).collect();
    let mut headers = args
        .headers
        .iter()
        .map(|h| header_flag(h).map(|(name, value)| (name, value.unwrap_or_default())))
        .collect::<Result<Vec<_>, _>>()?;
    if let Some(field) = cookies.field {
        headers.push(("cookie", field));
    }
    let mut options = WsOptions {
        protocols: &protocols,
        headers: &headers,
        deflate: (!args.no_deflate).then(DeflateConfig::default),
        keepalive: args
            .keepalive
            .map(|s| seconds(s, "--keepalive"))
            .transpose()?,
        ..WsOptions::default()
    };
    if let Some(max) = args.max_message {
        options.limits = Limits {
            max_frame_len: max,
            max_message_len: max,
        };
    }
    // The upgrade's refusal names the URL; connection and TLS errors name the peer.
    let failed = |e| match e {
        ringwire_client::Error::WebSocket(_) => format!("{}: {}", args.url, line(e)),
        e => line(e),
    };
    if args.http2 {
        let (socket, _) = client
            .websocket_http2(&url, &options)
            .await
            .map_err(failed)?;
        converse(socket, args.binary).await
    } else {
        let (socket, _) = client.websocket(&url, &options).await.map_err(failed)?;
        converse(socket, args.binary).await
    }
}

/// Stdin's lines out on `socket` (binary messages if `binary`), what arrives to stdout,
/// until either side closes.
async fn converse(mut socket: WebSocket<impl AsyncStream>, binary: bool) -> Result<(), String> {
    let mut lines = tokio::io::BufReader::new(tokio::io::stdin()).split(b'\n');
    let mut stdin_open = true;
    let mut number = 0;
    // The peer's close, once it came: `Some(None)` for one without a code.
    let mut peer_close = None;
    // Once stdin ends and the close is sent, how long the server has to answer it.
    let closing = tokio::time::sleep(Duration::MAX);
    tokio::pin!(closing);
    loop {
        tokio::select! {
            () = &mut closing => {
                return Err(format!(
                    "the server did not answer the close within {} s",
                    CLOSE_TIMEOUT.as_secs()
                ));
            }
            line = lines.next_segment(), if stdin_open => match line {
                // Once the server closed, what is left of stdin has nowhere to go; the
                // session ends as the server ended it.
                Ok(Some(_)) if socket.state() != State::Open => stdin_open = false,
                Ok(Some(line)) => {
                    number += 1;
                    let message = outgoing(&line, binary, number)?;
                    socket.send(&message).await.map_err(|e| e.to_string())?;
                }
                Err(e) => return Err(format!("cannot read stdin: {e}")),
                // End of input: close (nothing to send if the server did, and the
                // socket answered it already, even if `recv` has not handed its close
                // out yet), and print what is still coming.
                Ok(None) => {
                    stdin_open = false;
                    socket
                        .close(CloseCode::NORMAL, "")
                        .await
                        .map_err(|e| e.to_string())?;
                    closing.as_mut().reset(tokio::time::Instant::now() + CLOSE_TIMEOUT);
                }
            },
            received = socket.recv() => match received {
                None => return ended(peer_close.take()),
                Some(Err(e)) => return Err(e.to_string()),
                // The socket answered it: nothing more goes out, the rest of stdin is
                // not read.
                Some(Ok((Message::Close(frame), _))) => {
                    peer_close = Some(frame.map(|f| (f.code, f.reason.to_owned())));
                    stdin_open = false;
                }
                Some(Ok((message, _))) => print(&message),
            },
        }
    }
}

/// How a session the peer ended went: an error unless the peer closed with a close frame
/// saying all went well (1000 or 1001, or no code at all).
fn ended(peer_close: Option<Option<(CloseCode, String)>>) -> Result<(), String> {
    match peer_close {
        None => Err("the connection ended without a close frame (1006)".into()),
        Some(None) => Ok(()),
        Some(Some((code, _))) if code == CloseCode::NORMAL || code == CloseCode::GOING_AWAY => {
            Ok(())
        }
        Some(Some((code, reason))) if reason.is_empty() => {
            Err(format!("the server closed the connection with {code}"))
        }
        Some(Some((code, reason))) => Err(format!(
            "the server closed the connection with {code}: {reason}"
        )),
    }
}

/// Stdin line `number`, its `\n` gone, as the message to send: binary as it is, text
/// without a `\r` before the `\n`.
fn outgoing(line: &[u8], binary: bool, number: usize) -> Result<Message<'_>, String> {
    if binary {
        return Ok(Message::Binary(line));
    }
    std::str::from_utf8(line.strip_suffix(b"\r").unwrap_or(line))
        .map(Message::Text)
        .map_err(|_| format!("stdin line {number} is not UTF-8 (send it with --binary)"))
}

/// A data message's bytes as they came, then a newline.
fn print(message: &Message<'_>) {
    let bytes = match message {
        Message::Text(text) => text.as_bytes(),
        Message::Binary(bytes) => bytes,
        _ => return,
    };
    let mut out = std::io::stdout().lock();
    let _ = out
        .write_all(bytes)
        .and_then(|()| out.write_all(b"\n"))
        .and_then(|()| out.flush());
}
