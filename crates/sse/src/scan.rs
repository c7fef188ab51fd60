//! Finding where an event ends (its blank line), resumable across pieces so no byte is
//! looked at twice.

use memchr::memchr2;

/// Where the scan stands between two bytes of the stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Edge {
    /// The next byte starts a line.
    line_start: bool,
    /// The last byte was a CR: an LF right after it ends no line of its own.
    after_cr: bool,
}

impl Edge {
    /// The start of an event.
    pub(crate) const START: Edge = Edge {
        line_start: true,
        after_cr: false,
    };
}

impl Default for Edge {
    fn default() -> Self {
        Edge::START
    }
}

/// Scans `bytes`, which follow `edge`: the length up to and including the line terminator of
/// the blank line that ends the event, if `bytes` hold it. `edge` is left where `bytes` end
/// (or just past that terminator).
///
/// A blank line ended by a CR is taken as ended there: an LF after it then opens the next
/// event as a blank line of its own, which holds no data and dispatches nothing.
pub(crate) fn event_end(bytes: &[u8], edge: &mut Edge) -> Option<usize> {
    let mut at = 0;
    while let Some(found) = memchr2(b'\r', b'\n', &bytes[at..]) {
        let i = at + found;
        if i > at {
            *edge = Edge {
                line_start: false,
                after_cr: false,
            };
        }
        let cr = bytes[i] == b'\r';
        if !cr && edge.after_cr {
            // The LF of a CRLF: the CR ended the line.
            edge.after_cr = false;
            at = i + 1;
            continue;
        }
        if edge.line_start {
            *edge = Edge::START;
            return Some(i + 1);
        }
        *edge = Edge {
            line_start: true,
            after_cr: cr,
        };
        at = i + 1;
    }
    if at < bytes.len() {
        *edge = Edge {
            line_start: false,
            after_cr: false,
        };
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Where the first event of `stream` ends, scanned whole and fed in every split.
    fn end(stream: &[u8]) -> Option<usize> {
        let whole = event_end(stream, &mut { Edge::START });
        for cut in 0..=stream.len() {
            let mut edge = Edge::START;
            let split = match event_end(&stream[..cut], &mut edge) {
                Some(end) => Some(end),
                None => event_end(&stream[cut..], &mut edge).map(|end| cut + end),
            };
            assert_eq!(split, whole, "{stream:?} cut at {cut}");
        }
        whole
    }

    #[test]
    fn every_line_terminator_and_their_mixes() {
        assert_eq!(end(b"data: a\n\n"), Some(9));
        assert_eq!(end(b"data: a\r\n\r\n"), Some(10));
        // A blank line ended by CR ends there; its LF belongs to the next event.
        assert_eq!(end(b"data: a\r\r\n"), Some(9));
        assert_eq!(end(b"data: a\r\n\n"), Some(10));
        assert_eq!(end(b"data: a\n\r\n"), Some(9));
        assert_eq!(end(b"\n"), Some(1));
        assert_eq!(end(b"\r\n"), Some(1));
        // No blank line yet: a CRLF is one terminator, not two.
        assert_eq!(end(b"data: a\r\ndata: b\r\n"), None);
        assert_eq!(end(b"data: a\r\n"), None);
        assert_eq!(end(b"data: a"), None);
        assert_eq!(end(b""), None);
        assert_eq!(end(b"a\nb\rc\r\nd\n\ne"), Some(10));
    }
}
