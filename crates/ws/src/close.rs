//! Close codes and the close frame payload (RFC 6455 sections 5.5.1 and 7.4).

use std::fmt;

use crate::error::Error;

/// A close status code.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct CloseCode(pub u16);

impl CloseCode {
    /// 1000: the purpose of the connection was fulfilled.
    pub const NORMAL: CloseCode = CloseCode(1000);
    /// 1001: the endpoint is going away (server shutdown, page navigation).
    pub const GOING_AWAY: CloseCode = CloseCode(1001);
    /// 1002: protocol error.
    pub const PROTOCOL_ERROR: CloseCode = CloseCode(1002);
    /// 1003: a data type the endpoint cannot accept.
    pub const UNSUPPORTED: CloseCode = CloseCode(1003);
    /// 1005: no code was present (never sent; reported when a close frame had no payload).
    pub const NO_STATUS: CloseCode = CloseCode(1005);
    /// 1007: message data inconsistent with its type (text that is not UTF-8).
    pub const INVALID_DATA: CloseCode = CloseCode(1007);
    /// 1008: a message violates the endpoint's policy.
    pub const POLICY: CloseCode = CloseCode(1008);
    /// 1009: a message too big to process.
    pub const TOO_BIG: CloseCode = CloseCode(1009);
    /// 1010: the server did not negotiate an extension the client requires.
    pub const EXTENSION_REQUIRED: CloseCode = CloseCode(1010);
    /// 1011: the server met an unexpected condition.
    pub const INTERNAL_ERROR: CloseCode = CloseCode(1011);
    /// 1012: the service is restarting (registered with IANA after RFC 6455).
    pub const SERVICE_RESTART: CloseCode = CloseCode(1012);
    /// 1013: try again later, the server is overloaded (IANA).
    pub const TRY_AGAIN_LATER: CloseCode = CloseCode(1013);
    /// 1014: a gateway or proxy got an invalid response upstream (IANA).
    pub const BAD_GATEWAY: CloseCode = CloseCode(1014);

    /// Whether the code may appear in a close frame: 1000-1003 and 1007-1011 (the codes RFC
    /// 6455 defines for the wire), 1012-1014 (registered with IANA since) and 3000-4999
    /// (registered and private use). 1004-1006 and 1015 are reserved or local-only; the rest
    /// of 0-2999 is unassigned.
    #[must_use]
    pub fn is_valid_on_wire(self) -> bool {
        matches!(self.0, 1000..=1003 | 1007..=1014 | 3000..=4999)
    }
}

impl fmt::Display for CloseCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

/// The payload of a close frame that had one: a code and a UTF-8 reason (maybe empty).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CloseFrame<'a> {
    /// Why the peer closes.
    pub code: CloseCode,
    /// Human-readable text; at most 123 bytes on the wire.
    pub reason: &'a str,
}

impl<'a> CloseFrame<'a> {
    /// Parses a close payload: empty (no code), or a valid code and a UTF-8 reason.
    pub(crate) fn parse(payload: &'a [u8]) -> Result<Option<Self>, Error> {
        match payload {
            [] => Ok(None),
            [_] => Err(Error::InvalidClosePayload),
            [hi, lo, reason @ ..] => {
                let code = CloseCode(u16::from_be_bytes([*hi, *lo]));
                if !code.is_valid_on_wire() {
                    return Err(Error::InvalidCloseCode(code.0));
                }
                let reason = simdutf8::basic::from_utf8(reason).map_err(|_| Error::InvalidUtf8)?;
                Ok(Some(CloseFrame { code, reason }))
            }
        }
    }

    /// Bytes of the close payload: 2 for the code plus the reason.
    #[must_use]
    pub fn payload_len(&self) -> usize {
        2 + self.reason.len()
    }
}

#[cfg(test)]
mod tests {
    use super::CloseCode;

    /// Every code a close frame may carry, and none other: RFC 6455's, IANA's later
    /// 1012-1014 (a server restarting or overloaded sends them), and 3000-4999.
    #[test]
    fn codes_valid_on_the_wire() {
        let valid: Vec<u16> = (0..=u16::MAX)
            .filter(|&code| CloseCode(code).is_valid_on_wire())
            .collect();
        let expected: Vec<u16> = [1000..=1003, 1007..=1014, 3000..=4999]
            .into_iter()
            .flatten()
            .collect();
        assert_eq!(valid, expected);
    }
}
