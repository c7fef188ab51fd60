//! Why a header block does not decode.

use std::fmt;

/// A header block that breaks RFC 7541 or exceeds a limit.
///
/// Every variant is a connection error of type `COMPRESSION_ERROR` (RFC 9113 section 4.3):
/// after one, the decoder's dynamic table no longer matches the peer's, so the connection
/// cannot go on. [`ListTooLarge`](DecodeError::ListTooLarge) is the exception a server may
/// prefer to answer with `431` first, but the table is just as unusable afterwards.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum DecodeError {
    /// The block ends inside a representation: an integer, or a string longer than what is
    /// left of the block.
    Truncated,
    /// An integer (section 5.1) above `u32::MAX`, or encoded with more continuation bytes
    /// than such a value needs.
    IntegerOverflow,
    /// An index of 0, or past the end of the static and dynamic tables (section 2.3.3).
    InvalidIndex(u64),
    /// A Huffman-coded string that contains EOS, or ends in padding longer than 7 bits or
    /// not made of the most significant bits of EOS (section 5.2).
    InvalidHuffman,
    /// A dynamic table size update above the `SETTINGS_HEADER_TABLE_SIZE` we advertise
    /// (section 6.3).
    TableSizeUpdateTooLarge {
        /// The size the update asked for.
        asked: u64,
        /// Our bound.
        max: u64,
    },
    /// A dynamic table size update after the first field of a block (section 4.2).
    TableSizeUpdateNotAtStart,
    /// The first block after we lowered the table size below the peer's current size does
    /// not start with a size update that acknowledges it (section 4.2).
    TableSizeUpdateMissing,
    /// The decoded list is larger than the limit, counted as RFC 9113 section 6.5.2 counts
    /// it: name length plus value length plus 32 for each field.
    ListTooLarge {
        /// The limit in bytes.
        limit: u64,
    },
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DecodeError::Truncated => f.write_str("header block ends inside a representation"),
            DecodeError::IntegerOverflow => f.write_str("HPACK integer too large"),
            DecodeError::InvalidIndex(i) => write!(f, "invalid HPACK table index {i}"),
            DecodeError::InvalidHuffman => f.write_str("invalid Huffman-coded string"),
            DecodeError::TableSizeUpdateTooLarge { asked, max } => write!(
                f,
                "dynamic table size update to {asked} above the advertised {max}"
            ),
            DecodeError::TableSizeUpdateNotAtStart => {
                f.write_str("dynamic table size update after the start of a header block")
            }
            DecodeError::TableSizeUpdateMissing => {
                f.write_str("header block without the dynamic table size update it owes")
            }
            DecodeError::ListTooLarge { limit } => {
                write!(f, "header list larger than the limit of {limit} bytes")
            }
        }
    }
}

impl std::error::Error for DecodeError {}
