//! `ringwire bench URL`: a load generator in the manner of `wrk`, on
//! ringwire's own client path. `http://` and `https://`: requests encoded
//! once, answers parsed in place in each connection's receive ring; with
//! `--http2`, streams on HTTP/2 connections, as `h2load` loads them.
//! `ws://` and `wss://`: binary messages echoed back. Connections are
//! spread over worker threads, each a current-thread runtime; `--pipeline
//! N` keeps N requests (or messages) in flight per connection, written as
//! one batch.

mod guard;
mod h2;
mod http;
mod open;
mod pace;
mod stats;
mod ws;

use std::future::Future;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};

use clap::Args;
use ringwire_client::ws::WsUrl;
use ringwire_client::{RequestBuffer, Scheme, Url};
use ringwire_io::tokio::AsyncNetStream;
use ringwire_io::TransportError;
use ringwire_tls::{MaybeTls, TlsConnector};

use crate::request::{line, seconds, Extras, RequestArgs, TlsArgs, UnixArgs, USER_AGENT};

use guard::{Board, Interrupt};
use open::{OpenError, Tries};
use pace::Pace;
use stats::{Run, Stats};

/// How often the watchdog looks for connections past the timeout.
const SWEEP: Duration = Duration::from_millis(50);

#[derive(Debug, Args)]
pub(crate) struct BenchArgs {
    /// The URL: http://, https://, or ws:// and wss:// for an echo server.
    url: String,
    /// Connections kept open (the soft limit on open files is raised to the
    /// hard one first; connections past it are reported as never opened,
    /// out of file descriptors). One that cannot open (refused, reset, timed
    /// out, its WebSocket upgrade refused) is tried again after 10 ms, the
    /// pause doubling with each failure up to 1 s, until it opens or the run
    /// ends: the report counts it once as a connect error
    /// (a protocol error for the upgrade) however often it was tried, and
    /// lists each cause once with its connections and tries.
    #[arg(short = 'c', long, default_value_t = 64)]
    connections: usize,
    /// Seconds to run.
    #[arg(
        short = 'D',
        long = "duration",
        value_name = "SECS",
        default_value_t = 10.0
    )]
    duration: f64,
    /// Worker threads (each a runtime of its own), connections spread
    /// evenly over them.
    #[arg(short = 't', long, default_value_t = 1)]
    threads: usize,
    /// Requests (or messages) in flight per connection, sent as one batch
    /// (with --http2, streams kept open, each one that ends replaced at once,
    /// as h2load's -m; no more than the server allows).
    #[arg(short = 'p', long, default_value_t = 1)]
    pipeline: usize,
    /// Speak HTTP/2: with prior knowledge over http:// (h2c), offered alone
    /// by ALPN over https:// (a server that does not choose it is a
    /// protocol error).
    #[arg(long)]
    http2: bool,
    /// Requests (or messages) per second over all connections, each
    /// connection on a fixed schedule, latency counted from when a request
    /// was due (wrk2's correction for coordinated omission); without it,
    /// each connection sends as soon as its last answer came.
    #[arg(short = 'R', long, value_name = "PER_SEC")]
    rate: Option<f64>,
    /// Seconds a batch may wait for its answers (or a connection to open)
    /// before the connection is dropped and counted as a timeout.
    #[arg(long, value_name = "SECS", default_value_t = 2.0)]
    timeout: f64,
    /// ws://: bytes per binary message.
    #[arg(long, value_name = "BYTES", default_value_t = 40)]
    size: usize,
    /// ws://: offer permessage-deflate.
    #[arg(long)]
    deflate: bool,
    /// Print the report as one JSON object (and nothing else on stdout):
    /// latencies and CPU per answer in microseconds, every fraction to at
    /// most 3 decimals.
    #[arg(long)]
    json: bool,
    /// A Unix domain socket (`ringwire serve --unix`, nginx's `listen unix:`) to connect
    /// to instead of the URL's host.
    #[command(flatten)]
    pub(crate) unix: UnixArgs,
    #[command(flatten)]
    pub(crate) request: RequestArgs,
    #[command(flatten)]
    tls: TlsArgs,
}

/// A connection's stream: a socket (TCP or Unix), or TLS over it.
type Socket = MaybeTls<AsyncNetStream>;

/// What the connections load.
#[derive(Debug)]
enum Target {
    Http(http::Target),
    H2(h2::Target),
    Ws(ws::Target),
}

impl Target {
    fn new(args: &BenchArgs) -> Result<Target, String> {
        if args.url.starts_with("ws://") || args.url.starts_with("wss://") {
            if args.http2 {
                return Err("--http2 is for http:// and https:// URLs".to_owned());
            }
            let url =
                WsUrl::parse(&args.url).map_err(|e| format!("invalid URL {:?}: {e}", args.url))?;
            let tls = match url.is_tls() {
                true => {
                    let config = args.tls.config()?.alpn(&[b"http/1.1"]);
                    Some(TlsConnector::new(&config).map_err(line)?)
                }
                false => None,
            };
            return Ok(Target::Ws(ws::Target {
                tls,
                url,
                unix: args.unix.path(),
                payload: vec![b'x'; args.size],
                depth: args.pipeline,
                deflate: args.deflate,
            }));
        }
        let url = Url::parse(&args.url).map_err(|e| format!("invalid URL {:?}: {e}", args.url))?;
        let (body, form_type) = args.request.body()?;
        let mut buffer = RequestBuffer::new().map_err(line)?;
        let mut defaults = vec![("user-agent", USER_AGENT)];
        if let Some(form_type) = &form_type {
            defaults.push(("content-type", form_type));
        }
        let extras = Extras {
            defaults,
            ..Extras::default()
        };
        let body = (args.request.has_data() || !body.is_empty()).then_some(&body[..]);
        let request = args.request.encode(&mut buffer, &url, body, &extras)?;
        let (head, body) = buffer.bytes(&request).map_err(line)?;
        let alpn: &[u8] = if args.http2 { b"h2" } else { b"http/1.1" };
        let tls = match url.scheme() {
            Scheme::Https => {
                let config = args.tls.config()?.alpn(&[alpn]);
                Some(TlsConnector::new(&config).map_err(line)?)
            }
            Scheme::Http => None,
        };
        if args.http2 {
            let origin = url.origin().clone();
            let mut target = h2::Target::new(origin, tls, head, body, args.pipeline)?;
            target.unix = args.unix.path();
            return Ok(Target::H2(target));
        }
        let one = [head, body].concat();
        Ok(Target::Http(http::Target {
            origin: url.origin().clone(),
            tls,
            unix: args.unix.path(),
            batch: one.repeat(args.pipeline),
            depth: args.pipeline,
            method: args.request.method().to_owned(),
        }))
    }

    /// What the report counts.
    fn unit(&self) -> &'static str {
        match self {
            Target::Http(_) | Target::H2(_) => "requests",
            Target::Ws(_) => "messages",
        }
    }

    async fn open(&self) -> Result<Socket, OpenError> {
        match self {
            Target::Http(target) => {
                http::open(&target.origin, target.tls.as_ref(), target.unix.as_deref()).await
            }
            Target::H2(target) => h2::open(target).await,
            Target::Ws(target) => ws::open(target).await,
        }
    }

    /// What an open connection needs before its load: for `ws://`, the
    /// upgrade.
    async fn start<'a>(&'a self, socket: &'a Socket) -> Result<Session<'a>, OpenError> {
        match self {
            Target::Http(target) => Ok(Session::Http(target, socket)),
            Target::H2(target) => Ok(Session::H2(target, socket)),
            Target::Ws(target) => Ok(Session::Ws(target, ws::upgrade(target, socket).await?)),
        }
    }
}

/// A connection ready for its load.
// The size gap is accepted: a session is built once per connection and moved
// into its load, while boxing the WebSocket would add an indirection to every
// message.
#[allow(clippy::large_enum_variant)]
enum Session<'a> {
    Http(&'a http::Target, &'a Socket),
    H2(&'a h2::Target, &'a Socket),
    Ws(&'a ws::Target, ws::WebSocket<'a>),
}

impl Session<'_> {
    async fn load(self, board: &Board, slot: usize, pace: &mut Pace, stats: &mut Stats) -> End {
        match self {
            Session::Http(target, socket) => {
                http::load(target, socket, board, slot, pace, stats).await
            }
            Session::H2(target, socket) => h2::load(target, socket, board, slot, pace, stats).await,
            Session::Ws(target, socket) => ws::load(target, socket, board, slot, pace, stats).await,
        }
    }
}

/// How a connection ended.
enum End {
    /// The run is over.
    Stop,
    /// Timed out, failed or closed: counted, and a new connection follows.
    Again,
}

/// Why a connection's batch went unanswered.
enum Failure {
    /// The server said it would answer no more (HTTP/1.1's `Connection:
    /// close`, HTTP/2's `GOAWAY` without an error): counted as a close.
    Done,
    /// The server closed before the batch was answered.
    Closed,
    Protocol(String),
    /// Receiving failed.
    Io(TransportError),
    /// Sending failed.
    Send(TransportError),
}

impl From<TransportError> for Failure {
    fn from(e: TransportError) -> Self {
        Failure::Io(e)
    }
}

impl Failure {
    /// Counted; a new connection follows.
    fn count(self, stats: &mut Stats) -> End {
        match self {
            Failure::Done => stats.closed += 1,
            Failure::Closed => stats.read_error("the server closed the connection"),
            Failure::Protocol(message) => stats.protocol_error(&message),
            Failure::Io(e) => return failed(stats, "receive", &e),
            Failure::Send(e) => return failed(stats, "send", &e),
        }
        End::Again
    }
}

fn failed(stats: &mut Stats, what: &str, e: &dyn std::fmt::Display) -> End {
    stats.read_error(&format!("{what}: {}", line(e)));
    End::Again
}

fn interrupted(stats: &mut Stats, interrupt: Interrupt) -> End {
    match interrupt {
        Interrupt::Stop => End::Stop,
        Interrupt::Timeout => {
            stats.timeouts += 1;
            End::Again
        }
    }
}

/// Waits until the next batch is due (at once without `--rate`) and starts
/// its timeout (the slot is disarmed between batches); returns the time its
/// latency counts from.
async fn next_batch(
    board: &Board,
    slot: usize,
    pace: &mut Pace,
    stats: &mut Stats,
) -> Result<Instant, End> {
    if board.stopped() {
        return Err(End::Stop);
    }
    let due = board
        .guard(slot, pace.due())
        .await
        .map_err(|interrupt| interrupted(stats, interrupt))?;
    board.arm(slot);
    Ok(due)
}

/// Why a step of opening a connection went no further.
enum Halt {
    /// It failed: counted, and the connection tries again.
    Retry,
    /// The run is over.
    Stop,
}

/// One step of opening connection `slot` (connect, upgrade) within its
/// timeout; a failure is counted and followed by the pause before the next
/// try.
async fn step<T>(
    board: &Board,
    slot: usize,
    tries: &mut Tries,
    stats: &mut Stats,
    step: impl Future<Output = Result<T, OpenError>>,
) -> Result<T, Halt> {
    let error = match board.guard(slot, step).await {
        Ok(Ok(done)) => return Ok(done),
        Ok(Err(error)) => error,
        Err(Interrupt::Stop) => return Err(Halt::Stop),
        // The timeout was the pause.
        Err(Interrupt::Timeout) => {
            tries.failed(&OpenError::Timeout, stats);
            return Err(Halt::Retry);
        }
    };
    tries.failed(&error, stats);
    board.disarm(slot);
    match board.guard(slot, tokio::time::sleep(tries.pause())).await {
        Err(Interrupt::Stop) => Err(Halt::Stop),
        _ => Err(Halt::Retry),
    }
}

/// Connection `slot`'s whole run: connect (and upgrade), load, reconnect
/// after a failure or a close, until the board stops; then counts what it
/// was doing.
async fn connection(
    target: &Target,
    board: &Board,
    slot: usize,
    mut pace: Pace,
    stats: &mut Stats,
) {
    let mut tries = Tries::default();
    let open = loop {
        if board.stopped() {
            break false;
        }
        // One timeout for connecting and upgrading.
        board.arm(slot);
        let socket = match step(board, slot, &mut tries, stats, target.open()).await {
            Ok(socket) => socket,
            Err(Halt::Retry) => continue,
            Err(Halt::Stop) => break false,
        };
        let session = match step(board, slot, &mut tries, stats, target.start(&socket)).await {
            Ok(session) => session,
            Err(Halt::Retry) => continue,
            Err(Halt::Stop) => break false,
        };
        // Armed again for each batch: with `--rate` the first may be due
        // well after the timeout.
        board.disarm(slot);
        tries.opened(stats);
        if let End::Stop = session.load(board, slot, &mut pace, stats).await {
            break true;
        }
    };
    tries.ended(open, stats);
}

/// Runs `ringwire bench`; the report goes to stdout, errors to stderr as
/// one line. Fails when nothing was answered.
pub(crate) fn run(args: &BenchArgs) -> ExitCode {
    match bench(args) {
        Ok(code) => code,
        Err(message) => {
            eprintln!("ringwire: {message}");
            ExitCode::FAILURE
        }
    }
}

fn bench(args: &BenchArgs) -> Result<ExitCode, String> {
    let duration = seconds(args.duration, "--duration")?;
    let timeout = seconds(args.timeout, "--timeout")?;
    if args.connections == 0 || args.threads == 0 || args.pipeline == 0 {
        return Err("--connections, --threads and --pipeline want at least 1".to_owned());
    }
    if args.rate.is_some_and(|r| !(r.is_finite() && r > 0.0)) {
        return Err("--rate wants a positive number of requests per second".to_owned());
    }
    if args.rate.is_some() && args.pipeline > 1 {
        return Err("--rate sends one request at a time: leave out --pipeline".to_owned());
    }
    let threads = args.threads.min(args.connections);
    let target = Arc::new(Target::new(args)?);
    let open_files = open::raise_open_files_limit();
    let board = Arc::new(Board::new(args.connections));

    let pacing = match args.rate {
        Some(rate) => format!("{rate} per second"),
        None if args.http2 => format!("{} streams each", args.pipeline),
        None => format!("pipeline {}", args.pipeline),
    };
    if !args.json {
        println!(
            "ringwire bench {}{}: {} connections, {} thread{}, {pacing}, {:.1} s",
            args.url,
            if args.http2 { " (HTTP/2)" } else { "" },
            args.connections,
            threads,
            if threads == 1 { "" } else { "s" },
            duration.as_secs_f64()
        );
    }
    let start = Instant::now();
    let workers: Vec<_> = (0..threads)
        .map(|t| {
            // Connection i runs on worker i % threads.
            let slots: Vec<usize> = (t..args.connections).step_by(threads).collect();
            let (target, board, rate) = (Arc::clone(&target), Arc::clone(&board), args.rate);
            std::thread::Builder::new()
                .name(format!("bench-{t}"))
                .spawn(move || worker(&target, &board, &slots, rate))
                .map_err(|e| format!("cannot start a worker thread: {e}"))
        })
        .collect::<Result<_, _>>()?;
    while start.elapsed() < duration {
        std::thread::sleep(SWEEP.min(duration.saturating_sub(start.elapsed())));
        board.sweep(timeout);
    }
    board.stop();
    let elapsed = start.elapsed();
    let mut total = Stats::default();
    for worker in workers {
        total.merge(worker.join().map_err(|_| "a worker thread panicked")??);
    }
    let run = Run {
        elapsed,
        unit: target.unit(),
        connections: args.connections,
        open_files,
    };
    if args.json {
        let mut report = total.json(&run);
        report["url"] = args.url.as_str().into();
        report["connections"] = args.connections.into();
        report["threads"] = threads.into();
        report["pipeline"] = args.pipeline.into();
        report["http2"] = args.http2.into();
        report["rate"] = args.rate.into();
        println!("{report}");
    } else {
        print!("{}", total.report(&run));
    }
    if total.answers() == 0 {
        let connecting = total.at_end.connecting;
        let why = match (&total.first_error, total.timeouts) {
            (Some(error), _) => error.clone(),
            (None, 0) if connecting > 0 => format!(
                "{connecting} of {} connections still connecting at the end",
                args.connections
            ),
            (None, 0) => "no answer".to_owned(),
            (None, n) => format!("{n} requests timed out (--timeout {}s)", args.timeout),
        };
        return Err(format!("nothing was answered: {why}"));
    }
    Ok(ExitCode::SUCCESS)
}

/// One worker thread: its connections on a current-thread runtime, then
/// its counts and CPU time.
fn worker(
    target: &Arc<Target>,
    board: &Arc<Board>,
    slots: &[usize],
    rate: Option<f64>,
) -> Result<Stats, String> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the runtime: {e}"))?;
    let mut stats = runtime.block_on(async {
        let mut connections = tokio::task::JoinSet::new();
        for &slot in slots {
            let (target, board) = (Arc::clone(target), Arc::clone(board));
            let pace = Pace::new(rate, board.connections(), slot);
            connections.spawn(async move {
                let mut stats = Stats::default();
                connection(&target, &board, slot, pace, &mut stats).await;
                stats
            });
        }
        let mut stats = Stats::default();
        while let Some(one) = connections.join_next().await {
            stats.merge(one.map_err(|e| format!("a connection task failed: {e}"))?);
        }
        Ok::<_, String>(stats)
    })?;
    stats.latency = stats::take_thread_latency();
    stats.cpu = thread_cpu();
    Ok(stats)
}

/// The calling thread's CPU time so far, from the scheduler's accounting
/// (Linux); `None` elsewhere.
fn thread_cpu() -> Option<Duration> {
    let schedstat = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    let ns = schedstat.split_whitespace().next()?.parse().ok()?;
    Some(Duration::from_nanos(ns))
}
