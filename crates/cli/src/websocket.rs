//! `ringwire ws URL`: lines from stdin go out as text messages; what arrives
//! is printed, one message per line (binary ones as a byte count). `ws://`
//! or `wss://` (TLS, certificates checked unless `-k`).

use std::io::Write as _;
use std::process::ExitCode;
use std::time::Duration;

use clap::Args;
use ringwire_io::tokio::{AsyncRecvTransport, AsyncSendTransport};
use ringwire_io::TransportConfig;
use ringwire_server::ws::{CloseCode, DeflateConfig, Limits, Message};
use ringwire_tls::{MaybeTls, TlsConnector};
use ringwire_ws::socket::WebSocket;
use tokio::io::AsyncBufReadExt as _;
use tokio::net::TcpStream;

use crate::request::{line, TlsArgs};

/// How long connecting (TCP, TLS, the upgrade) may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
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
    /// Do not offer permessage-deflate.
    #[arg(long)]
    no_deflate: bool,
    #[command(flatten)]
    tls: TlsArgs,
}

/// The parts of a `ws://` or `wss://` URL.
#[derive(Debug)]
pub(crate) struct Target {
    tls: bool,
    authority: String,
    path: String,
}

impl Target {
    /// The host, without the port.
    fn host(&self) -> &str {
        match self.authority.rsplit_once(':') {
            Some((host, port)) if !port.contains(']') => host,
            _ => &self.authority,
        }
    }

    /// `host:port`, with the scheme's port when the URL names none.
    fn addr(&self) -> String {
        if self.authority.contains(':') && !self.authority.ends_with(']') {
            self.authority.clone()
        } else {
            format!("{}:{}", self.authority, if self.tls { 443 } else { 80 })
        }
    }
}

/// Splits a `ws://` or `wss://` URL.
pub(crate) fn parse(url: &str) -> Result<Target, String> {
    let (tls, rest) = if let Some(rest) = url.strip_prefix("ws://") {
        (false, rest)
    } else if let Some(rest) = url.strip_prefix("wss://") {
        (true, rest)
    } else {
        return Err(format!("not a ws:// or wss:// URL: {url}"));
    };
    let (authority, path) = match rest.find('/') {
        Some(i) => (&rest[..i], &rest[i..]),
        None => (rest, "/"),
    };
    if authority.is_empty() {
        return Err(format!("no host in {url}"));
    }
    Ok(Target {
        tls,
        authority: authority.to_owned(),
        path: path.to_owned(),
    })
}

pub(crate) fn run(args: &WsArgs) -> ExitCode {
    let result = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the runtime: {e}"))
        .and_then(|runtime| runtime.block_on(session(args)));
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("ringwire: {message}");
            ExitCode::FAILURE
        }
    }
}

/// A connection to `target`'s host: TCP, then TLS through `connector`
/// for `wss://`.
pub(crate) async fn open(
    target: &Target,
    connector: Option<&TlsConnector>,
) -> Result<MaybeTls<TcpStream>, String> {
    let addr = target.addr();
    let tcp = TcpStream::connect(&addr)
        .await
        .map_err(|e| format!("cannot connect to {addr}: {}", line(e)))?;
    tcp.set_nodelay(true).map_err(line)?;
    match connector {
        Some(connector) if target.tls => {
            let session = connector.connect(target.host(), tcp).await.map_err(line)?;
            Ok(MaybeTls::Tls(Box::new(session)))
        }
        _ => Ok(MaybeTls::Plain(tcp)),
    }
}

/// The WebSocket handshake for `target` over `stream`.
pub(crate) async fn handshake<'s>(
    stream: &'s MaybeTls<TcpStream>,
    target: &Target,
    protocols: &[&str],
    deflate: Option<DeflateConfig>,
) -> Result<WebSocket<&'s MaybeTls<TcpStream>>, String> {
    let config = TransportConfig::new(64 << 10, 64 << 20);
    let rx = AsyncRecvTransport::new(config, stream).map_err(line)?;
    let tx = AsyncSendTransport::new(config, stream).map_err(line)?;
    let (socket, _) = WebSocket::connect(
        rx,
        tx,
        &target.authority,
        &target.path,
        protocols,
        deflate,
        Limits::default(),
    )
    .await
    .map_err(line)?;
    Ok(socket)
}

/// The connector `wss://` needs, `None` for `ws://`.
pub(crate) fn connector(target: &Target, tls: &TlsArgs) -> Result<Option<TlsConnector>, String> {
    if !target.tls {
        return Ok(None);
    }
    let config = tls.config()?.alpn(&[b"http/1.1"]);
    TlsConnector::new(&config).map(Some).map_err(line)
}

async fn session(args: &WsArgs) -> Result<(), String> {
    let target = parse(&args.url)?;
    let connector = connector(&target, &args.tls)?;
    let within = |limit: Duration, what: &'static str| {
        move |_| format!("{what} took longer than {} s", limit.as_secs())
    };
    let stream = tokio::time::timeout(CONNECT_TIMEOUT, open(&target, connector.as_ref()))
        .await
        .map_err(within(CONNECT_TIMEOUT, "connecting"))??;
    let protocols: Vec<&str> = args.protocols.iter().map(String::as_str).collect();
    let deflate = (!args.no_deflate).then(DeflateConfig::default);
    let mut socket = tokio::time::timeout(
        CONNECT_TIMEOUT,
        handshake(&stream, &target, &protocols, deflate),
    )
    .await
    .map_err(within(CONNECT_TIMEOUT, "the WebSocket handshake"))?
    .map_err(|e| format!("{}: {e}", args.url))?;
    let mut lines = tokio::io::BufReader::new(tokio::io::stdin()).lines();
    let mut stdin_open = true;
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
            line = lines.next_line(), if stdin_open => match line {
                Ok(Some(line)) => socket
                    .send(&Message::Text(&line))
                    .await
                    .map_err(|e| e.to_string())?,
                // End of input: close, and print what is still coming.
                _ => {
                    stdin_open = false;
                    socket
                        .close(CloseCode::NORMAL, "")
                        .await
                        .map_err(|e| e.to_string())?;
                    closing.as_mut().reset(tokio::time::Instant::now() + CLOSE_TIMEOUT);
                }
            },
            received = socket.recv() => match received {
                None => return Ok(()),
                Some(Err(e)) => return Err(e.to_string()),
                Some(Ok((message, _))) => print(&message),
            },
        }
    }
}

fn print(message: &Message<'_>) {
    let mut out = std::io::stdout().lock();
    let _ = match message {
        Message::Text(text) => writeln!(out, "{text}"),
        Message::Binary(bytes) => writeln!(out, "[{} bytes]", bytes.len()),
        _ => Ok(()),
    };
    let _ = out.flush();
}
