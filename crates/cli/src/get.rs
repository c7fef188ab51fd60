//! `ringwire get URL`: a curl-like client on `ringwire-client`'s blocking
//! API. The body goes from the receive ring to stdout (or `-o FILE`) a
//! chunk at a time, never collected.

use std::fs::File;
use std::io::{self, IsTerminal as _, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use clap::Args;
use ringwire_client::blocking::{Client, Trace};
use ringwire_client::{ClientConfig, Error, RequestBuffer, Url};

use crate::request::{line, seconds, Extras, RequestArgs, TlsArgs, USER_AGENT};

/// The exit status for an HTTP error with `--fail`, as curl's.
const HTTP_ERROR_EXIT: u8 = 22;
/// The exit status for a redirect past `--max-redirs` with `-L`, as curl's.
const TOO_MANY_REDIRECTS_EXIT: u8 = 47;
/// Bodies shorter than this get no progress bar.
const PROGRESS_FROM: u64 = 1 << 20;
/// Bodies larger than this wait for the server's `100 Continue`, as curl's.
const EXPECT_CONTINUE_OVER: usize = 1 << 20;

#[derive(Debug, Args)]
pub(crate) struct GetArgs {
    /// The URL (http:// or https://).
    url: String,
    #[command(flatten)]
    request: RequestArgs,
    /// Write the body to FILE instead of stdout (`-` is stdout).
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    output: Option<PathBuf>,
    /// Print the request and response heads to stderr.
    #[arg(short = 'v', long)]
    verbose: bool,
    /// Ask for the body compressed (gzip, deflate, br) and write it decoded.
    #[arg(long)]
    compressed: bool,
    /// Follow redirects (301/302/303 as GET, 307/308 as sent).
    #[arg(short = 'L', long = "location")]
    follow: bool,
    /// Most redirects followed with -L.
    #[arg(long = "max-redirs", value_name = "N", default_value_t = 10)]
    max_redirects: u32,
    /// Exit with status 22, writing no body, when the status is 400 or above.
    #[arg(long)]
    fail: bool,
    #[command(flatten)]
    tls: TlsArgs,
    /// Seconds the whole request may take.
    #[arg(long = "max-time", value_name = "SECS")]
    max_time: Option<f64>,
    /// Seconds connecting may take.
    #[arg(long = "connect-timeout", value_name = "SECS", default_value_t = 10.0)]
    connect_timeout: f64,
}

/// Runs `ringwire get`; errors are one line on stderr.
pub(crate) fn run(args: &GetArgs) -> ExitCode {
    match get(args) {
        Ok(code) => code,
        Err(message) => {
            eprintln!("ringwire: {message}");
            ExitCode::FAILURE
        }
    }
}

fn get(args: &GetArgs) -> Result<ExitCode, String> {
    let url = Url::parse(&args.url).map_err(|e| format!("invalid URL {:?}: {e}", args.url))?;
    let body = args.request.body()?;
    let client = Client::with_tls(
        ClientConfig {
            max_redirects: args.follow.then_some(args.max_redirects),
            connect_timeout: Some(seconds(args.connect_timeout, "--connect-timeout")?),
            request_timeout: args
                .max_time
                .map(|s| seconds(s, "--max-time"))
                .transpose()?,
            ..ClientConfig::default()
        },
        args.tls.config()?,
    );

    let mut buffer = RequestBuffer::new().map_err(line)?;
    // What curl sends unless told otherwise.
    let mut defaults = vec![("user-agent", USER_AGENT), ("accept", "*/*")];
    if args.request.has_data() {
        defaults.push(("content-type", "application/x-www-form-urlencoded"));
    }
    // A server that refuses the upload (401, 413, a redirect) can say so
    // before all of it is sent.
    if body.len() > EXPECT_CONTINUE_OVER {
        defaults.push(("expect", "100-continue"));
    }
    let extras = Extras {
        defaults,
        decompress: args.compressed,
    };
    let request = args.request.encode(&mut buffer, &url, &body, &extras)?;
    // With -v, every hop of a redirect chain: each request head, then its answers'.
    let trace = |event: Trace<'_>| {
        if args.verbose {
            match event {
                Trace::Request(head) => print_head("> ", head),
                Trace::Interim(head) => print_response_head(&head),
                Trace::Response(response) => {
                    if let Some(head) = response.head() {
                        print_response_head(&head);
                    }
                }
                _ => {}
            }
        }
    };
    let mut response = match client.send_traced(&mut buffer, &request, trace) {
        Ok(response) => response,
        Err(e @ Error::TooManyRedirects { .. }) => {
            eprintln!("ringwire: {e}");
            return Ok(ExitCode::from(TOO_MANY_REDIRECTS_EXIT));
        }
        Err(e) => return Err(line(e)),
    };
    let status = response.status();
    if args.fail && status >= 400 {
        let reason = response
            .head()
            .map(|h| String::from_utf8_lossy(h.reason()).into_owned())
            .unwrap_or_default();
        let answer = format!("{status} {reason}");
        eprintln!("ringwire: the server answered {}", answer.trim_end());
        return Ok(ExitCode::from(HTTP_ERROR_EXIT));
    }
    // A decoded body's length is not the one the head gives.
    let total = response
        .header("content-length")
        .filter(|_| response.decoding().is_none())
        .and_then(|v| std::str::from_utf8(v).ok()?.parse::<u64>().ok());
    let mut out: Box<dyn Write> = match &args.output {
        Some(path) if path.as_os_str() != "-" => Box::new(
            File::create(path)
                .map_err(|e| format!("cannot write {}: {}", path.display(), line(e)))?,
        ),
        _ => Box::new(io::stdout().lock()),
    };
    let mut progress = Progress::new(total);
    while let Some(chunk) = response.chunk().map_err(line)? {
        out.write_all(chunk)
            .map_err(|e| format!("cannot write the body: {}", line(e)))?;
        progress.advance(chunk.len());
    }
    progress.finish();
    out.flush()
        .map_err(|e| format!("cannot write the body: {}", line(e)))?;
    Ok(ExitCode::SUCCESS)
}

/// Prints a head's lines with `prefix`, as `curl -v` does.
fn print_head(prefix: &str, head: &[u8]) {
    let text = String::from_utf8_lossy(head);
    let mut err = io::stderr().lock();
    for line in text.split("\r\n").take_while(|l| !l.is_empty()) {
        let _ = writeln!(err, "{prefix}{line}");
    }
    let _ = writeln!(err, "{prefix}");
}

fn print_response_head(head: &ringwire_http1::Response<'_>) {
    let mut err = io::stderr().lock();
    let _ = writeln!(
        err,
        "< {} {} {}",
        head.version(),
        head.status(),
        String::from_utf8_lossy(head.reason())
    );
    for field in head.headers() {
        let _ = writeln!(
            err,
            "< {}: {}",
            field.name,
            String::from_utf8_lossy(field.value)
        );
    }
    let _ = writeln!(err, "<");
}

/// A one-line progress bar on stderr, drawn only when stderr is a
/// terminal and the body is large, at most ten times a second.
struct Progress {
    total: Option<u64>,
    done: u64,
    terminal: bool,
    drawn: Option<Instant>,
}

impl Progress {
    fn new(total: Option<u64>) -> Self {
        Progress {
            total,
            done: 0,
            terminal: io::stderr().is_terminal(),
            drawn: None,
        }
    }

    fn advance(&mut self, n: usize) {
        self.done += n as u64;
        let large = self.total.unwrap_or(self.done) >= PROGRESS_FROM;
        let due = self
            .drawn
            .is_none_or(|at| at.elapsed() >= Duration::from_millis(100));
        if self.terminal && large && due {
            self.draw();
            self.drawn = Some(Instant::now());
        }
    }

    fn draw(&self) {
        const WIDTH: u64 = 30;
        let mib = |n: u64| n as f64 / f64::from(1 << 20);
        let line = match self.total {
            Some(total) if total > 0 => {
                let filled = (self.done.min(total) * WIDTH / total) as usize;
                format!(
                    "\r[{}{}] {:5.1} / {:.1} MiB",
                    "#".repeat(filled),
                    " ".repeat(WIDTH as usize - filled),
                    mib(self.done),
                    mib(total)
                )
            }
            _ => format!("\r{:.1} MiB", mib(self.done)),
        };
        let _ = io::stderr().lock().write_all(line.as_bytes());
    }

    fn finish(&self) {
        if self.drawn.is_some() {
            self.draw();
            eprintln!();
        }
    }
}
