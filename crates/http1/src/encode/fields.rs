//! Field lines encoded once and validated once, for answers sent many
//! times: a static file's `content-type`, `etag` and `last-modified` go
//! out on every request for it, and checking and copying them field by
//! field each time is most of the cost of writing its head.

use std::fmt;
use std::sync::Arc;

use super::buf::check_field;
use super::EncodeError;

/// Encoded, validated field lines (`name: value` CRLF each), shared by
/// reference count; written into a head with one copy
/// ([`ResponseWriter::fields`](super::ResponseWriter::fields)).
///
/// Framing fields (`content-length`, `transfer-encoding`) are refused: the
/// writer that knows the body adds them.
#[derive(Clone, PartialEq, Eq)]
pub struct FieldBlock(Arc<[u8]>);

impl FieldBlock {
    /// Encodes `fields` in order.
    ///
    /// # Errors
    ///
    /// [`InvalidHeaderName`](EncodeError::InvalidHeaderName) or
    /// [`InvalidHeaderValue`](EncodeError::InvalidHeaderValue) as a writer
    /// would say, and [`FramingInBlock`](EncodeError::FramingInBlock) for
    /// a framing field.
    pub fn new<'a>(
        fields: impl IntoIterator<Item = (&'a str, &'a [u8])>,
    ) -> Result<FieldBlock, EncodeError> {
        let mut out = Vec::new();
        for (name, value) in fields {
            check_field(name, value)?;
            if name.eq_ignore_ascii_case("content-length")
                || name.eq_ignore_ascii_case("transfer-encoding")
            {
                return Err(EncodeError::FramingInBlock);
            }
            out.extend_from_slice(name.as_bytes());
            out.extend_from_slice(b": ");
            out.extend_from_slice(value);
            out.extend_from_slice(b"\r\n");
        }
        Ok(FieldBlock(out.into()))
    }

    /// The encoded lines.
    pub fn as_bytes(&self) -> &[u8] {
        &self.0
    }

    /// The fields, as they were given.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &[u8])> {
        self.0
            .split(|&b| b == b'\n')
            .filter_map(|line| line.strip_suffix(b"\r"))
            .filter_map(|line| {
                let colon = line.iter().position(|&b| b == b':')?;
                // Names were checked to be tokens: ASCII.
                let name = std::str::from_utf8(&line[..colon]).ok()?;
                Some((name, &line[colon + 2..]))
            })
    }
}

impl fmt::Debug for FieldBlock {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map()
            .entries(self.iter().map(|(n, v)| (n, String::from_utf8_lossy(v))))
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_round_trip_and_are_checked() {
        let fields: [(&str, &[u8]); 3] = [
            ("content-type", b"text/html"),
            ("etag", b"\"97-1\""),
            ("x-empty", b""),
        ];
        let block = FieldBlock::new(fields).unwrap();
        assert_eq!(
            block.as_bytes(),
            b"content-type: text/html\r\netag: \"97-1\"\r\nx-empty: \r\n"
        );
        assert_eq!(block.iter().collect::<Vec<_>>(), fields);
        assert_eq!(
            FieldBlock::new([("x", &b"a\r\nb: c"[..])]),
            Err(EncodeError::InvalidHeaderValue)
        );
        assert_eq!(
            FieldBlock::new([("a b", &b"c"[..])]),
            Err(EncodeError::InvalidHeaderName)
        );
        assert_eq!(
            FieldBlock::new([("Content-Length", &b"5"[..])]),
            Err(EncodeError::FramingInBlock)
        );
    }
}
