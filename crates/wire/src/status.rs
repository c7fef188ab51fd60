//! The result of one parse attempt.

use crate::cursor::Incomplete;

/// Outcome of one parse attempt. Not enough bytes yet is success, not an error.
///
/// Parsers return `Ok(Status::Partial { .. })` while a message is still
/// arriving and reserve `Err` for bytes that can never become valid.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status<T> {
    /// A whole message was parsed from the front of the buffer, which must
    /// then be advanced by the given number of bytes.
    Complete(T, usize),
    /// More bytes are needed before the parser can make progress.
    Partial {
        /// Lower bound on the total number of buffered bytes (counted from
        /// the start of the buffer passed to `parse`) the parser needs.
        /// Use `buf.len() + 1` when nothing better is known.
        at_least: usize,
    },
}

impl<T> Status<T> {
    /// Returns `true` for [`Status::Complete`].
    #[must_use]
    pub fn is_complete(&self) -> bool {
        matches!(self, Status::Complete(..))
    }

    /// Returns `true` for [`Status::Partial`].
    #[must_use]
    pub fn is_partial(&self) -> bool {
        matches!(self, Status::Partial { .. })
    }

    /// Transforms the parsed value, keeping the consumed count and the
    /// `Partial` hint unchanged.
    pub fn map<U, F: FnOnce(T) -> U>(self, f: F) -> Status<U> {
        match self {
            Status::Complete(value, consumed) => Status::Complete(f(value), consumed),
            Status::Partial { at_least } => Status::Partial { at_least },
        }
    }
}

/// Lets parsers turn a cursor shortfall into `Partial` with `?`-like ease:
/// `Err(e) => return Ok(e.into())`.
impl<T> From<Incomplete> for Status<T> {
    #[inline]
    fn from(incomplete: Incomplete) -> Self {
        Status::Partial {
            at_least: incomplete.at_least,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn predicates() {
        let complete: Status<u8> = Status::Complete(1, 2);
        let partial: Status<u8> = Status::Partial { at_least: 3 };
        assert!(complete.is_complete() && !complete.is_partial());
        assert!(partial.is_partial() && !partial.is_complete());
    }

    #[test]
    fn map_keeps_counts() {
        assert_eq!(
            Status::Complete(2, 5).map(|v| v * 10),
            Status::Complete(20, 5)
        );
        assert_eq!(
            Status::<u8>::Partial { at_least: 7 }.map(u32::from),
            Status::Partial { at_least: 7 }
        );
    }

    #[test]
    fn from_incomplete() {
        let status: Status<()> = Incomplete { at_least: 9 }.into();
        assert_eq!(status, Status::Partial { at_least: 9 });
    }
}
