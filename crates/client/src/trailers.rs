//! A response's trailer fields: what a chunked HTTP/1.1 body or an HTTP/2 stream sends after
//! its body (gRPC's `grpc-status`, a checksum computed as the body went out). Copied out as
//! the body ends, since the ring moves on past them; a response without any allocates
//! nothing.

/// The trailer fields a response's body ended with, in the order received: empty until the
/// body has been read to its end, and for a body that had none.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Trailers {
    /// Names and values, back to back.
    bytes: Vec<u8>,
    /// Where each field's name and value end in `bytes`.
    ends: Vec<(usize, usize)>,
}

impl Trailers {
    pub(crate) const fn new() -> Trailers {
        Trailers {
            bytes: Vec::new(),
            ends: Vec::new(),
        }
    }

    /// Trailers of `fields`, names and values, in order.
    pub(crate) fn of<'f>(fields: impl IntoIterator<Item = (&'f [u8], &'f [u8])>) -> Trailers {
        let mut trailers = Trailers::new();
        for (name, value) in fields {
            trailers.push(name, value);
        }
        trailers
    }

    pub(crate) fn push(&mut self, name: &[u8], value: &[u8]) {
        self.bytes.extend_from_slice(name);
        let name_end = self.bytes.len();
        self.bytes.extend_from_slice(value);
        self.ends.push((name_end, self.bytes.len()));
    }

    /// How many fields there are.
    #[must_use]
    pub fn len(&self) -> usize {
        self.ends.len()
    }

    /// Whether there are none.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    /// Every field, as name and value, in the order received.
    pub fn iter(&self) -> impl Iterator<Item = (&[u8], &[u8])> {
        let mut start = 0;
        self.ends.iter().map(move |&(name_end, end)| {
            let field = (&self.bytes[start..name_end], &self.bytes[name_end..end]);
            start = end;
            field
        })
    }

    /// The value of the first field named `name` (ASCII case-insensitive).
    #[must_use]
    pub fn get(&self, name: &str) -> Option<&[u8]> {
        self.iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name.as_bytes()))
            .map(|(_, value)| value)
    }
}

#[cfg(test)]
mod tests {
    use super::Trailers;

    #[test]
    fn fields_are_kept_in_order_and_found_by_name() {
        let mut t = Trailers::new();
        assert!(t.is_empty() && t.get("grpc-status").is_none());
        t.push(b"grpc-status", b"0");
        t.push(b"Grpc-Message", b"");
        t.push(b"grpc-status", b"2");
        assert_eq!(t.len(), 3);
        assert_eq!(t.get("GRPC-STATUS"), Some(&b"0"[..]));
        assert_eq!(t.get("grpc-message"), Some(&b""[..]));
        let all: Vec<_> = t.iter().collect();
        assert_eq!(
            all,
            [
                (&b"grpc-status"[..], &b"0"[..]),
                (&b"Grpc-Message"[..], &b""[..]),
                (&b"grpc-status"[..], &b"2"[..]),
            ]
        );
    }
}
