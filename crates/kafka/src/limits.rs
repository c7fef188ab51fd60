//! Named bounds on what the peer can make this crate hold.

/// Default bound on a response frame: a Fetch answer sized by the client's `max_bytes` plus
/// room for the first batch the broker always returns whole.
pub const DEFAULT_MAX_RESPONSE_LEN: usize = 64 * 1024 * 1024;

/// Default bound on a decompressed record batch (Kafka's own default `message.max.bytes` is
/// about 1 MiB; producers may batch more, so this leaves a wide margin).
pub const DEFAULT_MAX_DECOMPRESSED_LEN: usize = 64 * 1024 * 1024;

/// Bounds on what a peer may make this crate buffer or allocate. Every wire length is also
/// bounded by the frame or batch that contains it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Largest response frame accepted, size prefix excluded.
    pub max_response_len: usize,
    /// Largest record batch payload after decompression.
    pub max_decompressed_len: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_response_len: DEFAULT_MAX_RESPONSE_LEN,
            max_decompressed_len: DEFAULT_MAX_DECOMPRESSED_LEN,
        }
    }
}
