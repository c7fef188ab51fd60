//! Sans-IO WebSocket (RFC 6455) with permessage-deflate (RFC 7692), on the ring.
//!
//! ringwire receives into a magic ring, so buffered bytes are one contiguous span. The
//! [`Reader`] parses frames from the front of that span and unmasks payloads where they lie
//! (a word-at-a-time XOR the compiler vectorizes), so an unfragmented message is handed out as
//! a slice of the ring: never copied. Fragments are assembled, and compressed messages
//! inflated, into buffers the reader keeps. Text is validated as it arrives, once.
//!
//! - [`Reader`]: frames in, [`Message`]s out, every violation an [`Error`] that names the
//!   close code to send.
//! - [`Writer`]: messages into a caller's buffer (a send-ring reservation), masked with a
//!   fresh key per frame as a client, compressed and fragmented on request.
//! - [`Connection`]: both, plus the closing handshake and automatic pong and close replies.
//! - [`handshake`]: the HTTP/1.1 upgrade for both roles, over `ringwire-http1` heads.
//! - [`DeflateConfig`]: the permessage-deflate offer, choice and check.
//!
//! No I/O, no clock, no runtime: the caller moves bytes.
//!
//! ```
//! use ringwire_ws::{Limits, Message, Reader, Role, Status, Writer};
//!
//! // A client masks; the server unmasks in place, in the buffer the bytes arrived in.
//! let mut wire = [0u8; 64];
//! let n = Writer::client().unwrap().write(&Message::Text("hi"), &mut wire).unwrap();
//! let mut reader = Reader::new(Role::Server, Limits::default(), None);
//! match reader.read(&mut wire[..n]) {
//!     Ok(Status::Complete(Some(Message::Text(text)), used)) => assert_eq!((text, used), ("hi", n)),
//!     other => panic!("{other:?}"),
//! }
//! ```

#![forbid(unsafe_code)]

#[cfg(feature = "blocking")]
pub mod blocking;
mod close;
mod conn;
mod deflate;
#[cfg(any(feature = "tokio", feature = "blocking"))]
mod drive;
mod error;
mod frame;
pub mod handshake;
mod limits;
mod mask;
mod message;
mod read;
#[cfg(feature = "tokio")]
pub mod socket;
mod utf8;
mod write;

pub use close::{CloseCode, CloseFrame};
pub use conn::{Connection, Receiver, Sender, State};
pub use deflate::{DeflateConfig, DeflateParams, NegotiationError};
pub use error::{EncodeError, Error};
pub use frame::{FrameHeader, OpCode, MAX_CONTROL_PAYLOAD, MAX_HEADER_LEN};
pub use limits::Limits;
pub use mask::apply_mask;
pub use message::Message;
pub use read::Reader;
pub use ringwire_wire::Status;
pub use write::Writer;

/// Which end of the connection this is: it decides who masks (RFC 6455 section 5.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Role {
    /// Accepted the connection; reads masked frames, writes unmasked ones.
    Server,
    /// Opened the connection; writes masked frames, reads unmasked ones.
    Client,
}
