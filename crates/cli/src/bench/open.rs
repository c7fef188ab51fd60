//! Opening a connection: why a try failed, the pause before the next, and
//! what the tries count. A connection that cannot open is tried again every
//! [`PAUSE`] until it opens or the run ends; those tries are one failed
//! connection, a single connect error, not one per try: counted per try,
//! the error count would measure the pause (a refused port gave 100 errors a
//! second per connection), not the server. The report lists each cause once,
//! with how many connections and tries it failed.

use std::path::Path;
use std::time::Duration;
use std::{fmt, io};

use ringwire_io::tokio::AsyncNetStream;
use ringwire_io::unix_socket_name;
use tokio::net::TcpStream;

use rustix::io::Errno;
use rustix::process::{getrlimit, setrlimit, Resource};

use super::stats::{AtEnd, Stats};
use crate::request::line;

/// The pause after a connection's first failed try; it doubles with each
/// failure after that, up to [`MAX_PAUSE`]: a server that is away, or a
/// process out of descriptors, is not hammered a hundred times a second per
/// connection (which would also spend the CPU this tool measures with).
pub(crate) const PAUSE: Duration = Duration::from_millis(10);
/// The longest pause between tries.
const MAX_PAUSE: Duration = Duration::from_secs(1);

/// Why a try at opening a connection failed.
#[derive(Debug)]
pub(crate) enum OpenError {
    /// TCP or TLS: refused, reset, unreachable, a certificate.
    Connect(String),
    /// No file descriptor left for the socket: the process is at its limit
    /// on open files (EMFILE; the system's, ENFILE, says so in its message).
    OutOfFiles(String),
    /// The server did not upgrade to WebSocket (a status other than 101,
    /// say); a protocol error.
    Upgrade(String),
    /// Not open within `--timeout`.
    Timeout,
}

impl fmt::Display for OpenError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            OpenError::Connect(message) | OpenError::OutOfFiles(message) => f.write_str(message),
            OpenError::Upgrade(message) => write!(f, "handshake: {message}"),
            OpenError::Timeout => f.write_str("connecting timed out"),
        }
    }
}

/// A connection to `host`:`port` without Nagle's delay, or to the Unix socket at `unix`
/// if given (`--unix-socket`).
pub(crate) async fn socket(
    host: &str,
    port: u16,
    unix: Option<&Path>,
) -> Result<AsyncNetStream, OpenError> {
    if let Some(path) = unix {
        // Waits for room in a full queue (the caller's timeout bounds it).
        let unix = AsyncNetStream::connect_unix(path).await;
        let place = format!("unix:{}", unix_socket_name(path));
        return unix.map_err(|e| OpenError::connect(&place, &e));
    }
    let tcp = TcpStream::connect((host, port)).await;
    let tcp = tcp.map_err(|e| OpenError::connect(&format!("{host}:{port}"), &e))?;
    tcp.set_nodelay(true)
        .map_err(|e| OpenError::Connect(line(e)))?;
    Ok(tcp.into())
}

impl OpenError {
    /// A connect to `addr` that failed with `e`.
    pub(crate) fn connect(addr: &str, e: &io::Error) -> OpenError {
        let message = format!("cannot connect to {addr}: {}", line(e));
        match Errno::from_io_error(e) {
            Some(Errno::MFILE) => OpenError::OutOfFiles(message),
            _ => OpenError::Connect(message),
        }
    }
}

/// The limit on open files (`None`: unlimited).
#[derive(Debug, Clone, Copy)]
pub(crate) struct FilesLimit {
    pub(crate) soft: Option<u64>,
    pub(crate) hard: Option<u64>,
}

/// Raises the soft limit on open files to the hard one: each connection
/// holds a descriptor (more while its rings get memfds), and the soft limit,
/// often 1024, is what a large `-c` runs into first. The limit now.
pub(crate) fn raise_open_files_limit() -> FilesLimit {
    let mut limit = getrlimit(Resource::Nofile);
    if limit.current != limit.maximum {
        limit.current = limit.maximum;
        // Refused, the soft limit stays; the report says what it was.
        let _ = setrlimit(Resource::Nofile, limit);
    }
    let limit = getrlimit(Resource::Nofile);
    FilesLimit {
        soft: limit.current,
        hard: limit.maximum,
    }
}

/// One connection's failed tries since it was last open.
#[derive(Debug, Default)]
pub(crate) struct Tries {
    /// Their distinct causes: each counts this connection once.
    causes: Vec<String>,
    /// Whether the connection was ever open.
    opened: bool,
    /// Tries failed in a row.
    failures: u32,
}

impl Tries {
    /// Counts a failed try: the connection's first failure since it was last
    /// open is its connect (or protocol) error; every try counts under its
    /// cause.
    pub(crate) fn failed(&mut self, error: &OpenError, stats: &mut Stats) {
        let cause = error.to_string();
        if self.causes.is_empty() {
            match error {
                OpenError::Upgrade(_) => stats.protocol_error(&cause),
                OpenError::Connect(_) | OpenError::OutOfFiles(_) | OpenError::Timeout => {
                    stats.connect_error(&cause);
                }
            }
        }
        self.failures += 1;
        stats.out_of_files |= matches!(error, OpenError::OutOfFiles(_));
        let new = !self.causes.contains(&cause);
        stats.failed_try(&cause, new);
        if new {
            self.causes.push(cause);
        }
    }

    /// What the connection was doing when the run ended, `open` or not,
    /// counted.
    pub(crate) fn ended(&self, open: bool, stats: &mut Stats) {
        let at = match (open, self.causes.is_empty()) {
            (true, _) => AtEnd::Open,
            (false, true) => AtEnd::Connecting,
            (false, false) => AtEnd::Retrying,
        };
        stats.ended(at, self.opened);
    }

    /// How long to wait before the next try: [`PAUSE`], doubled for each
    /// failure in a row after the first, at most [`MAX_PAUSE`].
    pub(crate) fn pause(&self) -> Duration {
        let doublings = self.failures.saturating_sub(1).min(10);
        PAUSE.saturating_mul(1 << doublings).min(MAX_PAUSE)
    }

    /// The connection is open: later failures are a new failed connection.
    pub(crate) fn opened(&mut self, stats: &mut Stats) {
        self.failures = 0;
        self.causes.clear();
        self.opened = true;
        stats.connects += 1;
    }
}
