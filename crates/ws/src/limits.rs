//! Size limits on what a peer may make the reader hold.

/// Bounds on frames and messages from the peer. Past either, the reader fails with close code
/// 1009 (message too big) before buffering anything for it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Longest frame payload accepted. An unfragmented message is one frame, and its payload
    /// stays in the receive ring until it is consumed, so this also bounds the ring's growth.
    pub max_frame_len: u64,
    /// Longest message accepted: fragments assembled, or a compressed message once inflated
    /// (the bound that stops decompression bombs).
    pub max_message_len: u64,
}

impl Limits {
    /// 16 MiB messages in one frame, compressed or not, and 64 MiB messages: a browser's large
    /// message fits, a bomb does not.
    pub const DEFAULT: Limits = Limits {
        max_frame_len: (16 << 20) + DEFLATE_SLACK,
        max_message_len: 64 << 20,
    };
}

/// What deflating can add to an incompressible message: zlib's stored blocks cost 5 bytes per
/// 16 KiB at the lowest levels, about 5 KiB on 16 MiB of noise (npm `ws` sends such frames).
const DEFLATE_SLACK: u64 = 64 << 10;

impl Default for Limits {
    fn default() -> Self {
        Limits::DEFAULT
    }
}
