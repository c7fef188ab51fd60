//! HPACK header compression (RFC 7541).
//!
//! [`Decoder`] turns header blocks from the peer into [`Field`]s, borrowed from the block
//! where possible; [`Encoder`] turns fields into header blocks. Each keeps one dynamic table,
//! so a connection has one of each, fed every block in order. Framing (`HEADERS`,
//! `CONTINUATION`) and the field rules of RFC 9113 section 8 are the caller's.

mod decoder;
mod encoder;
mod error;
mod huffman;
mod integer;
mod table;

#[cfg(test)]
mod tests;

pub use decoder::Decoder;
pub use encoder::Encoder;
pub use error::DecodeError;

/// One header field.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Field<'a> {
    /// The name: lowercase in HTTP/2 (RFC 9113 section 8.2.1).
    pub name: &'a [u8],
    /// The value.
    pub value: &'a [u8],
    /// A never-indexed literal (RFC 7541 section 7.1.3): decoded from one, or to be encoded
    /// as one, so that no table along the way keeps it (cookies, credentials).
    pub sensitive: bool,
}
