//! Incremental UTF-8 validation: each byte is checked once, as it arrives, and a character
//! split between two pieces is carried (at most 3 bytes) instead of rescanning.

/// Bytes were not UTF-8, or could never become UTF-8 whatever follows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct InvalidUtf8;

/// Validates a text message piece by piece (fragments, or a frame's payload as it arrives).
#[derive(Debug, Default, Clone)]
pub(crate) struct Utf8Stream {
    carry: [u8; 4],
    carry_len: usize,
}

impl Utf8Stream {
    /// Validates the next piece. Complete characters are passed to `sink` as `&str` (so an
    /// assembling caller copies validated text without a second pass); an incomplete character
    /// at the end is kept for the next piece. Fails as soon as the bytes seen cannot be UTF-8.
    #[inline]
    pub(crate) fn feed(
        &mut self,
        mut piece: &[u8],
        mut sink: impl FnMut(&str),
    ) -> Result<(), InvalidUtf8> {
        if self.carry_len > 0 {
            let width = char_width(self.carry[0]);
            let take = (width - self.carry_len).min(piece.len());
            self.carry[self.carry_len..self.carry_len + take].copy_from_slice(&piece[..take]);
            self.carry_len += take;
            piece = &piece[take..];
            match simdutf8::compat::from_utf8(&self.carry[..self.carry_len]) {
                Ok(s) => {
                    sink(s);
                    self.carry_len = 0;
                }
                Err(e) if e.error_len().is_none() => return Ok(()),
                Err(_) => return Err(InvalidUtf8),
            }
        }
        let cut = incomplete_tail_start(piece);
        let (whole, tail) = piece.split_at(cut);
        sink(simdutf8::basic::from_utf8(whole).map_err(|_| InvalidUtf8)?);
        if !tail.is_empty() {
            match simdutf8::compat::from_utf8(tail) {
                Err(e) if e.error_len().is_none() && e.valid_up_to() == 0 => {}
                _ => return Err(InvalidUtf8),
            }
            self.carry[..tail.len()].copy_from_slice(tail);
            self.carry_len = tail.len();
        }
        Ok(())
    }

    /// Ends the message: a character still incomplete makes it invalid.
    pub(crate) fn finish(&mut self) -> Result<(), InvalidUtf8> {
        let complete = self.carry_len == 0;
        self.carry_len = 0;
        if complete {
            Ok(())
        } else {
            Err(InvalidUtf8)
        }
    }

    /// Forgets a message that was abandoned.
    pub(crate) fn reset(&mut self) {
        self.carry_len = 0;
    }
}

/// Length of a sequence from its lead byte; 1 for bytes that cannot lead one (the validator
/// rejects those, so the value only has to be harmless).
#[inline]
fn char_width(lead: u8) -> usize {
    match lead {
        0xc2..=0xdf => 2,
        0xe0..=0xef => 3,
        0xf0..=0xf4 => 4,
        _ => 1,
    }
}

/// Where a character that runs past the end of `piece` starts (`piece.len()` if none does).
/// Looks at the last 3 bytes only.
#[inline]
fn incomplete_tail_start(piece: &[u8]) -> usize {
    let len = piece.len();
    if piece.last().is_none_or(u8::is_ascii) {
        return len;
    }
    for back in 1..=3.min(len) {
        let i = len - back;
        if piece[i] & 0xc0 != 0x80 {
            return if char_width(piece[i]) > back { i } else { len };
        }
    }
    len
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(pieces: &[&[u8]]) -> Result<String, InvalidUtf8> {
        let mut v = Utf8Stream::default();
        let mut out = String::new();
        for p in pieces {
            v.feed(p, |s| out.push_str(s))?;
        }
        v.finish()?;
        Ok(out)
    }

    #[test]
    fn every_split_of_valid_text_rebuilds_it() {
        let text = "aé€𝄞z κόσμε";
        let bytes = text.as_bytes();
        for i in 0..=bytes.len() {
            for j in i..=bytes.len() {
                let got = check(&[&bytes[..i], &bytes[i..j], &bytes[j..]]);
                assert_eq!(got.as_deref(), Ok(text), "split {i} {j}");
            }
        }
    }

    #[test]
    fn fails_fast_on_a_prefix_that_can_never_be_valid() {
        let mut v = Utf8Stream::default();
        // F4 90 is above U+10FFFF: invalid before the sequence is complete.
        assert_eq!(v.feed(b"ok\xf4\x90", |_| ()), Err(InvalidUtf8));
        let mut v = Utf8Stream::default();
        assert_eq!(v.feed(b"\xce", |_| ()), Ok(()));
        assert_eq!(v.feed(b"\xff", |_| ()), Err(InvalidUtf8));
        let mut v = Utf8Stream::default();
        assert_eq!(v.feed(b"\xed\xa0", |_| ()), Err(InvalidUtf8)); // surrogate
    }

    #[test]
    fn an_unfinished_character_fails_at_the_end() {
        assert_eq!(check(&[b"abc\xe2\x82"]), Err(InvalidUtf8));
        assert_eq!(check(&[b"\xf0", b"\x9f", b"\x98"]), Err(InvalidUtf8));
        assert_eq!(
            check(&[b"\xf0", b"\x9f", b"\x98", b"\x80"]).as_deref(),
            Ok("😀")
        );
    }
}
