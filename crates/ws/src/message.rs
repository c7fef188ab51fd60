//! Messages as the reader delivers them and the writer takes them.

use crate::close::CloseFrame;

/// A whole message or control frame.
///
/// From the reader, slices borrow the receive ring (an unfragmented, uncompressed message:
/// zero-copy, unmasked in place) or the reader's reusable buffer (fragments assembled, or a
/// message inflated); they live until the caller consumes the bytes the reader counted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Message<'a> {
    /// A UTF-8 text message, validated.
    Text(&'a str),
    /// A binary message.
    Binary(&'a [u8]),
    /// A ping; the peer expects a pong with the same payload.
    Ping(&'a [u8]),
    /// A pong (a reply, or an unsolicited heartbeat).
    Pong(&'a [u8]),
    /// A close frame, with its code and reason if it had a payload.
    Close(Option<CloseFrame<'a>>),
}
