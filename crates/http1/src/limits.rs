//! Named bounds on everything whose size comes from the wire.

/// Bounds the parsers enforce; past any of them, a typed [`Error`](crate::Error).
///
/// The defaults suit a public-facing server: generous enough for browsers
/// with large cookies, small enough that a connection cannot pin much memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Longest head (request or status line, fields, final CRLF); also bounds
    /// a chunked body's trailer section. Past it: 431.
    pub max_head_len: usize,
    /// Most header fields in one head, or trailer fields in one body. Past it: 431.
    pub max_headers: usize,
    /// Longest request target. Past it: 414.
    pub max_target_len: usize,
    /// Longest body, declared or decoded. Past it: 413.
    pub max_body_len: u64,
    /// Longest run of extensions on one chunk-size line. Past it: 400.
    pub max_chunk_ext_len: usize,
}

impl Limits {
    /// 64 KiB of head: more than browsers send (nginx stops at 32 KiB, hyper at ~400 KiB).
    pub const DEFAULT_MAX_HEAD_LEN: usize = 64 * 1024;
    /// 100 fields, as hyper and h2 allow by default.
    pub const DEFAULT_MAX_HEADERS: usize = 100;
    /// 8 KiB, the length RFC 9112 section 3 recommends every party accept.
    pub const DEFAULT_MAX_TARGET_LEN: usize = 8 * 1024;
    /// 1 GiB: a backstop; applications set their own.
    pub const DEFAULT_MAX_BODY_LEN: u64 = 1 << 30;
    /// 1 KiB of extensions per chunk; nothing common sends any.
    pub const DEFAULT_MAX_CHUNK_EXT_LEN: usize = 1024;
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_head_len: Self::DEFAULT_MAX_HEAD_LEN,
            max_headers: Self::DEFAULT_MAX_HEADERS,
            max_target_len: Self::DEFAULT_MAX_TARGET_LEN,
            max_body_len: Self::DEFAULT_MAX_BODY_LEN,
            max_chunk_ext_len: Self::DEFAULT_MAX_CHUNK_EXT_LEN,
        }
    }
}
