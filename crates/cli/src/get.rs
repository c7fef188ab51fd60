//! `ringwire get URL`: a curl-like client on `ringwire-client`'s blocking
//! API. The body goes from the receive ring to stdout (or `-o FILE`) a
//! chunk at a time, never collected.

use std::fs::File;
use std::io::{self, IsTerminal as _, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use clap::Args;
use ringwire_client::blocking::{Client, Response};
use ringwire_client::{ClientConfig, RequestBuffer, Url};

/// The exit status for an HTTP error with `--fail`, as curl's.
const HTTP_ERROR_EXIT: u8 = 22;
/// Sent unless a `-H user-agent: ...` replaces it.
const USER_AGENT: &str = concat!("ringwire/", env!("CARGO_PKG_VERSION"));
/// Bodies shorter than this get no progress bar.
const PROGRESS_FROM: u64 = 1 << 20;

#[derive(Debug, Args)]
pub(crate) struct GetArgs {
    /// The URL (http:// only for now).
    url: String,
    /// The method [default: GET, or POST with -d].
    #[arg(short = 'X', long = "request", value_name = "METHOD")]
    method: Option<String>,
    /// A request header, `NAME: VALUE` (repeatable).
    #[arg(short = 'H', long = "header", value_name = "NAME: VALUE")]
    headers: Vec<String>,
    /// The request body; `@FILE` reads it from FILE.
    #[arg(short = 'd', long = "data", value_name = "DATA")]
    data: Option<String>,
    /// Write the body to FILE instead of stdout.
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    output: Option<PathBuf>,
    /// Print the request and response heads to stderr.
    #[arg(short = 'v', long)]
    verbose: bool,
    /// Follow redirects (301/302/303 as GET, 307/308 as sent).
    #[arg(short = 'L', long = "location")]
    follow: bool,
    /// Most redirects followed with -L.
    #[arg(long = "max-redirs", value_name = "N", default_value_t = 10)]
    max_redirects: u32,
    /// Exit with status 22, writing no body, when the status is 400 or above.
    #[arg(long)]
    fail: bool,
    /// Skip certificate and host name checks (https://; for testing).
    #[arg(short = 'k', long = "insecure")]
    insecure: bool,
    /// The TLS library.
    #[arg(long, value_enum, default_value_t)]
    tls_library: crate::TlsLibrary,
    /// Also trust the CA certificates in FILE (PEM).
    #[arg(long = "cacert", value_name = "FILE")]
    cacert: Option<PathBuf>,
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
    let body = match args.data.as_deref() {
        Some(data) => match data.strip_prefix('@') {
            Some(path) => {
                std::fs::read(path).map_err(|e| format!("cannot read {path}: {}", line(e)))?
            }
            None => data.as_bytes().to_vec(),
        },
        None => Vec::new(),
    };
    let method = match &args.method {
        Some(method) => method.as_str(),
        None if args.data.is_some() => "POST",
        None => "GET",
    };
    let headers = args
        .headers
        .iter()
        .map(|h| {
            h.split_once(':')
                .map(|(name, value)| (name.trim(), value.trim()))
                .ok_or_else(|| format!("invalid header {h:?} (expected NAME: VALUE)"))
        })
        .collect::<Result<Vec<_>, _>>()?;

    let mut tls = ringwire_tls::ClientConfig::default()
        .insecure(args.insecure)
        .backend(args.tls_library.into());
    if let Some(path) = &args.cacert {
        let pem =
            std::fs::read(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        tls = tls.add_root_pem(&pem);
    }
    let client = Client::with_tls(
        ClientConfig {
            max_redirects: if args.follow { args.max_redirects } else { 0 },
            connect_timeout: Some(seconds(args.connect_timeout, "--connect-timeout")?),
            request_timeout: args
                .max_time
                .map(|s| seconds(s, "--max-time"))
                .transpose()?,
            ..ClientConfig::default()
        },
        tls,
    );

    let mut buffer = RequestBuffer::new().map_err(line)?;
    let mut request = buffer
        .request(method, &url)
        .map_err(line)?
        .headers()
        .map_err(line)?;
    if !headers
        .iter()
        .any(|(name, _)| name.eq_ignore_ascii_case("user-agent"))
    {
        request = request.header("user-agent", USER_AGENT).map_err(line)?;
    }
    for (name, value) in headers {
        request = request.header(name, value).map_err(line)?;
    }
    let request = if body.is_empty() && args.data.is_none() {
        request.finish()
    } else {
        request.body(&body)
    }
    .map_err(line)?;
    if args.verbose {
        let (head, _) = buffer.bytes(&request).map_err(line)?;
        print_head("> ", head);
    }
    let mut response = client.send(&mut buffer, &request).map_err(line)?;
    if args.verbose {
        print_response_head(&response);
    }
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
    let total = response
        .header("content-length")
        .and_then(|v| std::str::from_utf8(v).ok()?.parse::<u64>().ok());
    let mut out: Box<dyn Write> = match &args.output {
        Some(path) => Box::new(
            File::create(path)
                .map_err(|e| format!("cannot write {}: {}", path.display(), line(e)))?,
        ),
        None => Box::new(io::stdout().lock()),
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

/// A positive number of seconds as a `Duration`.
fn seconds(secs: f64, flag: &str) -> Result<Duration, String> {
    Duration::try_from_secs_f64(secs)
        .ok()
        .filter(|d| !d.is_zero())
        .ok_or_else(|| format!("{flag} wants a positive number of seconds"))
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

fn print_response_head(response: &Response<'_>) {
    let Some(head) = response.head() else {
        return;
    };
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

/// An error as one line, without the OS error number.
fn line(e: impl std::fmt::Display) -> String {
    let text = e.to_string();
    match text.find(" (os error") {
        Some(at) => text[..at].to_owned(),
        None => text,
    }
}
