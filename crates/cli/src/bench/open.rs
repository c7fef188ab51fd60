//! Opening a connection: why a try failed, the pause before the next, and
//! what the tries count. A connection that cannot open is tried again every
//! [`PAUSE`] until it opens or the run ends; those tries are one failed
//! connection, a single connect error, not one per try: counted per try,
//! the error count would measure the pause (a refused port gave 100 errors a
//! second per connection), not the server. The report lists each cause once,
//! with how many connections and tries it failed.

use std::fmt;
use std::time::Duration;

use super::stats::{AtEnd, Stats};

/// The pause between a failed try and the next: a refused port is not
/// hammered while the server is away.
pub(crate) const PAUSE: Duration = Duration::from_millis(10);

/// Why a try at opening a connection failed.
#[derive(Debug)]
pub(crate) enum OpenError {
    /// TCP or TLS: refused, reset, unreachable, a certificate.
    Connect(String),
    /// The server did not upgrade to WebSocket (a status other than 101,
    /// say); a protocol error.
    Upgrade(String),
    /// Not open within `--timeout`.
    Timeout,
}

impl fmt::Display for OpenError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            OpenError::Connect(message) => f.write_str(message),
            OpenError::Upgrade(message) => write!(f, "handshake: {message}"),
            OpenError::Timeout => f.write_str("connecting timed out"),
        }
    }
}

/// One connection's failed tries since it was last open.
#[derive(Debug, Default)]
pub(crate) struct Tries {
    /// Their distinct causes: each counts this connection once.
    causes: Vec<String>,
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
                OpenError::Connect(_) | OpenError::Timeout => stats.connect_error(&cause),
            }
        }
        let new = !self.causes.contains(&cause);
        stats.failed_try(&cause, new);
        if new {
            self.causes.push(cause);
        }
    }

    /// What a connection that is not open was doing when the run ended.
    pub(crate) fn at_end(&self) -> AtEnd {
        match self.causes.is_empty() {
            true => AtEnd::Connecting,
            false => AtEnd::Retrying,
        }
    }

    /// The connection is open: later failures are a new failed connection.
    pub(crate) fn opened(&mut self, stats: &mut Stats) {
        self.causes.clear();
        stats.connects += 1;
    }
}
