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
    /// 16 MiB frames, 64 MiB messages: a browser's large message fits, a bomb does not.
    pub const DEFAULT: Limits = Limits {
        max_frame_len: 16 << 20,
        max_message_len: 64 << 20,
    };
}

impl Default for Limits {
    fn default() -> Self {
        Limits::DEFAULT
    }
}
