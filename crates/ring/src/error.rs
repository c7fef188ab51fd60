//! The ways a ring operation can fail.

use std::{fmt, io};

/// A ring operation that could not be done.
#[derive(Debug)]
pub enum RingError {
    /// A span of `requested` bytes was needed but the ring may not grow past `max`.
    /// Raise `RingConfig::max_capacity` or reject the peer's message.
    TooLarge {
        /// Bytes the caller needed contiguous (buffered data plus the new span).
        requested: usize,
        /// The configured growth bound.
        max: usize,
    },
    /// The OS refused memory for a mirrored ring (memfd, mmap or ftruncate failed).
    Os(io::Error),
}

impl fmt::Display for RingError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::TooLarge { requested, max } => write!(
                f,
                "ring needs {requested} contiguous bytes but may grow to at most {max}"
            ),
            Self::Os(e) => write!(f, "ring memory: {e}"),
        }
    }
}

impl std::error::Error for RingError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Os(e) => Some(e),
            Self::TooLarge { .. } => None,
        }
    }
}

impl From<RingError> for io::Error {
    fn from(e: RingError) -> Self {
        match e {
            RingError::Os(e) => e,
            too_large => io::Error::new(io::ErrorKind::OutOfMemory, too_large),
        }
    }
}
