//! Why a transport operation failed.

use std::{fmt, io};

use ringwire_ring::RingError;

/// A transport failure: the peer or OS (`Io`), or a message too large for the ring (`Ring`).
#[derive(Debug)]
pub enum TransportError {
    /// recv, send or shutdown failed.
    Io(io::Error),
    /// The ring could not hold what was asked (see [`RingError::TooLarge`]).
    Ring(RingError),
}

impl fmt::Display for TransportError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Io(e) => write!(f, "transport I/O: {e}"),
            Self::Ring(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for TransportError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Io(e) => Some(e),
            Self::Ring(e) => Some(e),
        }
    }
}

impl From<io::Error> for TransportError {
    fn from(e: io::Error) -> Self {
        Self::Io(e)
    }
}

impl From<RingError> for TransportError {
    fn from(e: RingError) -> Self {
        Self::Ring(e)
    }
}

impl TransportError {
    /// Whether what was asked is past the ring's growth bound ([`RingError::TooLarge`]): the
    /// message is too big for this connection, rather than the connection broken.
    #[must_use]
    pub fn is_too_large(&self) -> bool {
        matches!(self, Self::Ring(RingError::TooLarge { .. }))
    }

    /// Whether a blocking stream's read or write timeout ended the call (`WouldBlock` or
    /// `TimedOut`, by platform); the stream stays usable.
    #[must_use]
    pub fn is_timeout(&self) -> bool {
        matches!(self, Self::Io(e)
            if matches!(e.kind(), io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut))
    }

    /// True for the nonblocking "try again after readiness" case.
    #[cfg(feature = "tokio")]
    pub(crate) fn is_would_block(&self) -> bool {
        matches!(self, Self::Io(e) if e.kind() == io::ErrorKind::WouldBlock)
    }
}
