//! `ringwire ws URL`: lines from stdin go out as text messages; what arrives
//! is printed, one message per line (binary ones as a byte count). `ws://`
//! or `wss://` (TLS, certificates checked unless `-k`).

use std::io::Write as _;
use std::process::ExitCode;

use clap::Args;
use ringwire_io::tokio::{AsyncRecvTransport, AsyncSendTransport};
use ringwire_io::TransportConfig;
use ringwire_server::ws::{CloseCode, DeflateConfig, Limits, Message};
use ringwire_tls::{MaybeTls, TlsConnector};
use ringwire_ws::socket::WebSocket;
use tokio::io::AsyncBufReadExt as _;
use tokio::net::TcpStream;

#[derive(Debug, Args)]
pub(crate) struct WsArgs {
    /// ws://HOST[:PORT]/PATH or wss://...
    url: String,
    /// Offer this subprotocol (repeatable).
    #[arg(long = "protocol", value_name = "NAME")]
    protocols: Vec<String>,
    /// Do not offer permessage-deflate.
    #[arg(long)]
    no_deflate: bool,
    #[command(flatten)]
    tls: crate::request::TlsArgs,
}

/// The parts of a `ws://` or `wss://` URL.
struct Target {
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

fn parse(url: &str) -> Result<Target, String> {
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

async fn session(args: &WsArgs) -> Result<(), String> {
    let target = parse(&args.url)?;
    let addr = target.addr();
    let tcp = TcpStream::connect(&addr)
        .await
        .map_err(|e| format!("cannot connect to {addr}: {e}"))?;
    tcp.set_nodelay(true).map_err(|e| e.to_string())?;
    let stream = if target.tls {
        let tls = args.tls.config()?.alpn(&[b"http/1.1"]);
        let connector = TlsConnector::new(&tls).map_err(|e| e.to_string())?;
        let session = connector
            .connect(target.host(), tcp)
            .await
            .map_err(|e| e.to_string())?;
        MaybeTls::Tls(Box::new(session))
    } else {
        MaybeTls::Plain(tcp)
    };
    let config = TransportConfig::new(64 << 10, 64 << 20);
    let rx = AsyncRecvTransport::new(config, &stream).map_err(|e| e.to_string())?;
    let tx = AsyncSendTransport::new(config, &stream).map_err(|e| e.to_string())?;
    let protocols: Vec<&str> = args.protocols.iter().map(String::as_str).collect();
    let deflate = (!args.no_deflate).then(DeflateConfig::default);
    let (mut socket, _) = WebSocket::connect(
        rx,
        tx,
        &target.authority,
        &target.path,
        &protocols,
        deflate,
        Limits::default(),
    )
    .await
    .map_err(|e| format!("{}: {e}", args.url))?;
    let mut lines = tokio::io::BufReader::new(tokio::io::stdin()).lines();
    let mut stdin_open = true;
    loop {
        tokio::select! {
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
