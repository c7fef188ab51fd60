//! Named size limits, so an oversize input says which bound it broke.

use std::fmt;

/// An upper bound on some size, with the name reported when it is broken.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limit {
    /// What is limited, e.g. `"frame length"`; appears in error messages.
    pub name: &'static str,
    /// Largest accepted size in bytes.
    pub max: usize,
}

impl Limit {
    /// A limit called `name` accepting sizes up to and including `max`.
    #[must_use]
    pub const fn new(name: &'static str, max: usize) -> Self {
        Limit { name, max }
    }

    /// Accepts `len` if it is at most `max`.
    #[inline]
    pub fn check(self, len: usize) -> Result<(), LimitExceeded> {
        if len > self.max {
            return Err(LimitExceeded {
                name: self.name,
                len,
                max: self.max,
            });
        }
        Ok(())
    }
}

/// A size asked for by the input broke a [`Limit`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LimitExceeded {
    /// Name of the broken limit.
    pub name: &'static str,
    /// Size the input asked for.
    pub len: usize,
    /// The limit's maximum.
    pub max: usize,
}

impl fmt::Display for LimitExceeded {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} of {} bytes exceeds the limit of {}",
            self.name, self.len, self.max
        )
    }
}

impl std::error::Error for LimitExceeded {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn check_is_inclusive() {
        let limit = Limit::new("header", 10);
        assert_eq!(limit.check(0), Ok(()));
        assert_eq!(limit.check(10), Ok(()));
        assert_eq!(
            limit.check(11),
            Err(LimitExceeded {
                name: "header",
                len: 11,
                max: 10
            })
        );
    }

    #[test]
    fn display() {
        let err = Limit::new("frame length", 16).check(17).unwrap_err();
        assert_eq!(
            err.to_string(),
            "frame length of 17 bytes exceeds the limit of 16"
        );
    }
}
