//! Why bytes could not be decoded or a request could not be encoded.

use std::fmt;

use ringwire_wire::{Incomplete, LimitExceeded, VarintError};

use crate::record::Compression;

/// Bytes that can never become a valid response, record batch or record.
///
/// Every variant is final: feeding more bytes cannot fix it. Where it came from says what
/// survives: from [`Correlator`](crate::Correlator) or a [`Response`](crate::Response) decoder,
/// the response stream is out of step or the peer is broken (close the connection); from
/// [`record`](crate::record) (batches, records, decompression), only that partition's data is
/// corrupt (the connection survives; do not move the fetch offset past it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DecodeError {
    /// A structure ends past the end of its enclosing frame, batch or record.
    Truncated {
        /// Length the enclosing span would need.
        at_least: usize,
    },
    /// A varint is longer or wider than its type allows.
    VarintOverflow,
    /// A length or count below -1 (or -1 where null is not allowed).
    InvalidLength {
        /// The field.
        what: &'static str,
        /// The value read.
        len: i64,
    },
    /// A size or count broke a named limit.
    Limit(LimitExceeded),
    /// A string field is not UTF-8.
    InvalidUtf8 {
        /// The field.
        what: &'static str,
    },
    /// A boolean byte other than 0 or 1.
    InvalidBool,
    /// A response arrived with no request waiting for it.
    UnexpectedResponse {
        /// Its correlation id.
        correlation_id: i32,
    },
    /// Responses came back out of request order.
    CorrelationMismatch {
        /// The oldest request in flight.
        expected: i32,
        /// What the response carries.
        got: i32,
    },
    /// A frame was decoded as the response to another API.
    WrongApi {
        /// API of the request the frame answers.
        request: i16,
        /// API the caller decoded it as.
        decoded_as: i16,
    },
    /// A record batch's stored CRC-32C differs from the one computed.
    Crc {
        /// CRC stored in the batch header.
        stored: u32,
        /// CRC computed over attributes..end.
        computed: u32,
    },
    /// A batch in a message format other than v2 (magic 2).
    UnsupportedMagic(i8),
    /// Compression codec bits 5..7, not defined by Kafka.
    UnknownCompression(u8),
    /// A compressed batch failed to decompress.
    Decompress {
        /// The codec.
        codec: Compression,
        /// What the decoder said.
        reason: String,
    },
    /// A record's declared length differs from the bytes its fields took.
    RecordLength {
        /// Declared length.
        declared: usize,
        /// Bytes its fields took.
        actual: usize,
    },
    /// A batch declared a record count that its records do not match.
    RecordCount {
        /// Count in the batch header.
        declared: i32,
        /// Records actually present (or present before the bytes ran out).
        found: i32,
    },
}

impl From<Incomplete> for DecodeError {
    fn from(incomplete: Incomplete) -> Self {
        DecodeError::Truncated {
            at_least: incomplete.at_least,
        }
    }
}

impl From<VarintError> for DecodeError {
    fn from(err: VarintError) -> Self {
        match err {
            VarintError::Incomplete(incomplete) => incomplete.into(),
            VarintError::Overflow => DecodeError::VarintOverflow,
        }
    }
}

impl From<LimitExceeded> for DecodeError {
    fn from(exceeded: LimitExceeded) -> Self {
        DecodeError::Limit(exceeded)
    }
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Truncated { at_least } => {
                write!(f, "truncated: the enclosing span needs {at_least} bytes")
            }
            Self::VarintOverflow => f.write_str("varint overflows its type"),
            Self::InvalidLength { what, len } => write!(f, "invalid {what} length {len}"),
            Self::Limit(exceeded) => exceeded.fmt(f),
            Self::InvalidUtf8 { what } => write!(f, "{what} is not UTF-8"),
            Self::InvalidBool => f.write_str("boolean byte is neither 0 nor 1"),
            Self::UnexpectedResponse { correlation_id } => write!(
                f,
                "response with correlation id {correlation_id} but no request in flight"
            ),
            Self::CorrelationMismatch { expected, got } => write!(
                f,
                "response correlation id {got} does not answer the oldest request ({expected})"
            ),
            Self::WrongApi {
                request,
                decoded_as,
            } => write!(
                f,
                "response to API {request} decoded as a response to API {decoded_as}"
            ),
            Self::Crc { stored, computed } => write!(
                f,
                "record batch CRC-32C mismatch: stored {stored:#010x}, computed {computed:#010x}"
            ),
            Self::UnsupportedMagic(magic) => {
                write!(f, "record batch magic {magic} (only v2 is supported)")
            }
            Self::UnknownCompression(bits) => write!(f, "unknown compression codec {bits}"),
            Self::Decompress { codec, reason } => write!(f, "{codec} decompression: {reason}"),
            Self::RecordLength { declared, actual } => write!(
                f,
                "record declares {declared} bytes but its fields take {actual}"
            ),
            Self::RecordCount { declared, found } => {
                write!(f, "batch declares {declared} records but holds {found}")
            }
        }
    }
}

impl std::error::Error for DecodeError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Limit(exceeded) => Some(exceeded),
            _ => None,
        }
    }
}

/// Why a request or record batch could not be encoded: the caller's mistake, never the peer's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EncodeError {
    /// The output span is shorter than the message.
    BufferTooSmall {
        /// Bytes the message takes.
        need: usize,
    },
    /// A string, byte field or array longer than its wire length field can say.
    TooLong {
        /// The field.
        what: &'static str,
        /// Its length.
        len: usize,
    },
    /// The API version is outside what this crate implements.
    UnsupportedVersion {
        /// API key.
        api_key: i16,
        /// Version asked for.
        version: i16,
    },
    /// Compressing a batch failed.
    Compress {
        /// The codec.
        codec: Compression,
        /// What the encoder said.
        reason: String,
    },
}

impl fmt::Display for EncodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::BufferTooSmall { need } => {
                write!(f, "output buffer too small: need {need} bytes")
            }
            Self::TooLong { what, len } => {
                write!(f, "{what} of {len} bytes is too long for its length field")
            }
            Self::UnsupportedVersion { api_key, version } => write!(
                f,
                "API {api_key} version {version} is not implemented by ringwire-kafka"
            ),
            Self::Compress { codec, reason } => write!(f, "{codec} compression: {reason}"),
        }
    }
}

impl std::error::Error for EncodeError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display() {
        let batch = DecodeError::Crc {
            stored: 1,
            computed: 2,
        };
        assert_eq!(
            batch.to_string(),
            "record batch CRC-32C mismatch: stored 0x00000001, computed 0x00000002"
        );
        let err: DecodeError = VarintError::Overflow.into();
        assert_eq!(err.to_string(), "varint overflows its type");
    }
}
