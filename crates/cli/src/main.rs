//! `ringwire`: serve a directory or the built-in demo site, fetch, talk
//! WebSocket and Kafka, and load a server.

mod bench;
mod cookies;
mod events;
mod get;
mod kafka;
mod logger;
mod netrc;
mod request;
mod serve;
mod signal;
mod upload;
mod websocket;
mod write_out;

use std::process::ExitCode;

use clap::{CommandFactory as _, FromArgMatches as _, Parser, Subcommand, ValueEnum};

#[derive(Debug, Parser)]
#[command(
    name = "ringwire",
    version,
    about = "HTTP/1.1, HTTP/2, WebSocket and Kafka over a magic ring"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Fetch URL over HTTP/1.1 or HTTP/2 (offered to https:// servers by ALPN); the body goes to stdout (or -o FILE).
    Get(Box<get::GetArgs>),
    /// Talk to a WebSocket: stdin lines out as text, messages in to stdout.
    Ws(websocket::WsArgs),
    /// Serve DIR over HTTP/1.1 and HTTP/2, or the built-in demo site without one.
    Serve(serve::ServeArgs),
    /// Produce to and consume from Kafka topics, create topics.
    Kafka(kafka::KafkaArgs),
    /// Load an HTTP server (or a WebSocket echo server): N connections for
    /// D seconds, then requests/s, latency percentiles, statuses and errors.
    Bench(bench::BenchArgs),
}

fn main() -> ExitCode {
    let matches = Cli::command().get_matches();
    let mut cli = Cli::from_arg_matches(&matches).unwrap_or_else(|e| e.exit());
    if let Some((_, given)) = matches.subcommand() {
        match &mut cli.command {
            Command::Get(args) => args.request.keep_order(given),
            Command::Bench(args) => args.request.keep_order(given),
            _ => {}
        }
    }
    match cli.command {
        Command::Get(args) => get::run(&args),
        Command::Ws(args) => websocket::run(&args),
        Command::Serve(args) => serve::run(args),
        Command::Kafka(args) => kafka::run(&args),
        Command::Bench(args) => bench::run(&args),
    }
}

/// The TLS library behind `serve`'s HTTPS, `get https://` and `ws wss://`.
#[derive(Debug, Clone, Copy, Default, ValueEnum)]
enum TlsLibrary {
    /// The system's OpenSSL (plaintext decrypted straight into the ring).
    #[default]
    Openssl,
    /// rustls, pure Rust (one copy more).
    Rustls,
}

impl From<TlsLibrary> for ringwire_tls::Backend {
    fn from(library: TlsLibrary) -> Self {
        match library {
            TlsLibrary::Openssl => ringwire_tls::Backend::OpenSsl,
            TlsLibrary::Rustls => ringwire_tls::Backend::Rustls,
        }
    }
}
