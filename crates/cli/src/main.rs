//! `ringwire`: serve a directory, or the built-in demo site, over HTTP/1.1.

mod get;
mod logger;
mod websocket;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::{Args, Parser, Subcommand, ValueEnum};
use ringwire_server::files::{EmbeddedSite, StaticFiles};
use ringwire_server::middleware::{AccessLog, Compress};
use ringwire_server::{ws, Handler, Router, Server, ServerConfig, Threading, Timeouts};

#[derive(Debug, Parser)]
#[command(name = "ringwire", version, about = "HTTP/1.1 over a magic ring")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Fetch URL over HTTP/1.1; the body goes to stdout (or -o FILE).
    Get(get::GetArgs),
    /// Talk to a WebSocket: stdin lines out as text, messages in to stdout.
    Ws(websocket::WsArgs),
    /// Serve DIR over HTTP/1.1, or the built-in demo site without one.
    Serve(ServeArgs),
}

#[derive(Debug, Args)]
struct ServeArgs {
    /// Directory to serve.
    dir: Option<PathBuf>,
    /// Directory to serve (the same as DIR).
    #[arg(long, value_name = "DIR", conflicts_with = "dir")]
    root: Option<PathBuf>,
    /// Address to listen on (port 0 picks a free port).
    #[arg(long, default_value = "127.0.0.1:8080")]
    addr: SocketAddr,
    /// Worker threads (default: available parallelism).
    #[arg(long)]
    threads: Option<usize>,
    /// How threads share the work: a runtime and a listening socket
    /// per thread (per-core), or one runtime whose workers share one
    /// listener (shared).
    #[arg(long, value_enum, default_value_t = Runtime::PerCore)]
    runtime: Runtime,
    /// Print an access log line per request on stderr.
    #[arg(long)]
    log: bool,
    /// Seconds a request head may take to arrive, from its first byte.
    #[arg(long, value_name = "SECS", default_value_t = Timeouts::DEFAULT_HEAD.as_secs())]
    head_timeout: u64,
    /// Seconds a keep-alive connection may wait for its next request.
    #[arg(long, value_name = "SECS", default_value_t = Timeouts::DEFAULT_IDLE.as_secs())]
    idle_timeout: u64,
    /// Milliseconds a connection keeps its buffers after an answer,
    /// waiting for the next request, before idling without them (0:
    /// at once; less memory per idle connection, more work per request).
    #[arg(long, value_name = "MS", default_value_t = Timeouts::DEFAULT_WARM.as_millis() as u64)]
    warm_ms: u64,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum Runtime {
    PerCore,
    Shared,
}

const INDEX: &[u8] = include_bytes!("../site/index.html");
const WS_PAGE: &[u8] = include_bytes!("../site/ws.html");

/// The built-in site: pages, and a WebSocket echo at `/ws/echo`.
fn demo_site() -> Router {
    let pages = EmbeddedSite::new()
        .page("/", "text/html; charset=utf-8", INDEX)
        .page("/index.html", "text/html; charset=utf-8", INDEX)
        .page("/ws.html", "text/html; charset=utf-8", WS_PAGE)
        .page(
            "/hello",
            "text/plain; charset=utf-8",
            b"Hello from ringwire!\n",
        );
    Router::new().get("/ws/echo", ws::echo).fallback(pages)
}

fn main() -> ExitCode {
    let args = match Cli::parse().command {
        Command::Get(args) => return get::run(&args),
        Command::Ws(args) => return websocket::run(&args),
        Command::Serve(args) => args,
    };
    let ServeArgs {
        dir,
        root,
        addr,
        threads,
        runtime,
        log,
        head_timeout,
        idle_timeout,
        warm_ms,
    } = args;
    logger::init(log);
    let mut config = ServerConfig::new(addr);
    config.timeouts.head = Duration::from_secs(head_timeout);
    config.timeouts.idle = Duration::from_secs(idle_timeout);
    config.timeouts.warm = Duration::from_millis(warm_ms);
    let threads =
        threads.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, usize::from));
    config.threading = match runtime {
        Runtime::PerCore => Threading::PerCore(threads),
        Runtime::Shared => Threading::Shared(threads),
    };
    match serve(dir.or(root), config) {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("ringwire: {message}");
            ExitCode::FAILURE
        }
    }
}

fn serve(dir: Option<PathBuf>, config: ServerConfig) -> Result<(), String> {
    let addr = config.addr;
    let files = match &dir {
        Some(dir) => Some(
            StaticFiles::new(dir.clone())
                .map_err(|e| format!("cannot serve {}: {}", dir.display(), describe(&e)))?,
        ),
        None => None,
    };
    let server =
        Server::bind(config).map_err(|e| format!("cannot listen on {addr}: {}", describe(&e)))?;
    let what = match &files {
        Some(files) => files.root().display().to_string(),
        None => "the demo site".to_owned(),
    };
    eprintln!(
        "ringwire: serving {what} on http://{}/",
        server.local_addr()
    );
    let result = match files {
        Some(files) => run(server, files),
        None => run(server, demo_site()),
    };
    result.map_err(|e| format!("server failed: {e}"))
}

/// Serves `site` with compression and the access log (which costs nothing
/// unless `--log` turned it on).
fn run<H: Handler>(server: Server, site: H) -> std::io::Result<()> {
    server.run(AccessLog::new(Compress::new(site)), shutdown_signal())
}

/// Resolves on Ctrl-C or SIGTERM.
async fn shutdown_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        match signal(SignalKind::terminate()) {
            Ok(mut term) => {
                tokio::select! {
                    _ = tokio::signal::ctrl_c() => {}
                    _ = term.recv() => {}
                }
            }
            Err(_) => {
                let _ = tokio::signal::ctrl_c().await;
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
    eprintln!("ringwire: shutting down");
}

/// An I/O error as a short lowercase phrase, without the OS error number.
fn describe(e: &std::io::Error) -> String {
    use std::io::ErrorKind;
    match e.kind() {
        ErrorKind::AddrInUse => "address already in use".to_owned(),
        ErrorKind::AddrNotAvailable => "address not available".to_owned(),
        ErrorKind::PermissionDenied => "permission denied".to_owned(),
        ErrorKind::NotFound => "no such directory".to_owned(),
        ErrorKind::NotADirectory => "not a directory".to_owned(),
        _ => e.to_string(),
    }
}
