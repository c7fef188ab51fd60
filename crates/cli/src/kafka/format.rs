//! How `ringwire kafka consume` prints a record: the value on a line (after the key and a
//! delimiter with `-K`), or as a kcat `-f` format string says, with kcat's tokens and escapes.

use std::io::{self, Write};

use ringwire_kafka::record::Record;

/// A record's output, as pieces written in turn.
#[derive(Debug, PartialEq, Eq)]
pub(super) struct Format {
    pieces: Vec<Piece>,
    /// What a null key, value or header value prints as.
    null: &'static [u8],
}

/// One part of a format.
#[derive(Debug, PartialEq, Eq)]
enum Piece {
    Text(Vec<u8>),
    /// `%s`
    Value,
    /// `%S`: its length, -1 for null.
    ValueLen,
    /// `%R`: its length as a big-endian `i32`.
    ValueLenBinary,
    /// `%k`
    Key,
    /// `%K`
    KeyLen,
    /// `%T`: milliseconds since the epoch.
    Timestamp,
    /// `%h`: `name=value` pairs joined by commas.
    Headers,
    /// `%t`
    Topic,
    /// `%p`
    Partition,
    /// `%o`
    Offset,
}

impl Format {
    /// The value on a line; with `key_delimiter`, after the key and the delimiter (kcat -K).
    /// With `null`, a null key or value prints as `NULL` (kcat -Z).
    pub(super) fn lines(key_delimiter: Option<&str>, null: bool) -> Format {
        let mut pieces = Vec::new();
        if let Some(delimiter) = key_delimiter {
            pieces.extend([Piece::Key, Piece::Text(delimiter.as_bytes().to_vec())]);
        }
        pieces.extend([Piece::Value, Piece::Text(b"\n".to_vec())]);
        Format::new(pieces, null)
    }

    /// A kcat `-f` format: `%s` value, `%S` its length (-1 for null), `%R` that length as a
    /// big-endian 32-bit integer, `%k` key, `%K` its length, `%T` timestamp, `%h` headers
    /// (`n=v` comma-separated), `%t` topic, `%p` partition, `%o` offset, `%%` a `%`; `\n`,
    /// `\r`, `\t` and `\xHH` escapes (another backslash stays as it is).
    pub(super) fn parse(format: &str, null: bool) -> Result<Format, String> {
        let mut pieces = Vec::new();
        let mut text = Vec::new();
        let mut bytes = format.as_bytes().iter().copied().peekable();
        while let Some(byte) = bytes.next() {
            match byte {
                b'%' => {
                    let piece = match bytes.next() {
                        Some(b'%') => {
                            text.push(b'%');
                            continue;
                        }
                        Some(b's') => Piece::Value,
                        Some(b'S') => Piece::ValueLen,
                        Some(b'R') => Piece::ValueLenBinary,
                        Some(b'k') => Piece::Key,
                        Some(b'K') => Piece::KeyLen,
                        Some(b'T') => Piece::Timestamp,
                        Some(b'h') => Piece::Headers,
                        Some(b't') => Piece::Topic,
                        Some(b'p') => Piece::Partition,
                        Some(b'o') => Piece::Offset,
                        Some(other) => {
                            let other = char::from(other);
                            return Err(format!("-f: unsupported formatter %{other}"));
                        }
                        None => return Err("-f: a % at the end".to_owned()),
                    };
                    if !text.is_empty() {
                        pieces.push(Piece::Text(std::mem::take(&mut text)));
                    }
                    pieces.push(piece);
                }
                b'\\' => {
                    let escaped = match bytes.peek() {
                        Some(b'n') => b'\n',
                        Some(b'r') => b'\r',
                        Some(b't') => b'\t',
                        Some(b'x') => {
                            bytes.next();
                            // One or two hex digits; none: the two characters as they are.
                            let mut value = None;
                            for _ in 0..2 {
                                let Some(digit) = bytes.peek().and_then(|b| hex(*b)) else {
                                    break;
                                };
                                bytes.next();
                                value = Some(value.unwrap_or(0) * 16 + digit);
                            }
                            match value {
                                Some(v) => text.push(v),
                                None => text.extend_from_slice(b"\\x"),
                            }
                            continue;
                        }
                        // Not an escape: the backslash stays.
                        _ => {
                            text.push(b'\\');
                            continue;
                        }
                    };
                    bytes.next();
                    text.push(escaped);
                }
                _ => text.push(byte),
            }
        }
        if !text.is_empty() {
            pieces.push(Piece::Text(text));
        }
        Ok(Format::new(pieces, null))
    }

    fn new(pieces: Vec<Piece>, null: bool) -> Format {
        Format {
            pieces,
            null: if null { b"NULL" } else { b"" },
        }
    }

    /// Writes `record` of `topic`'s `partition`.
    pub(super) fn print(
        &self,
        out: &mut impl Write,
        topic: &str,
        partition: i32,
        record: &Record<'_>,
    ) -> io::Result<()> {
        let len = |field: Option<&[u8]>| field.map_or(-1, |f| f.len() as i64);
        for piece in &self.pieces {
            match piece {
                Piece::Text(text) => out.write_all(text)?,
                Piece::Value => out.write_all(record.value.unwrap_or(self.null))?,
                Piece::ValueLen => write!(out, "{}", len(record.value))?,
                Piece::ValueLenBinary => {
                    let len = i32::try_from(len(record.value)).unwrap_or(i32::MAX);
                    out.write_all(&len.to_be_bytes())?;
                }
                Piece::Key => out.write_all(record.key.unwrap_or(self.null))?,
                Piece::KeyLen => write!(out, "{}", len(record.key))?,
                Piece::Timestamp => write!(out, "{}", record.timestamp)?,
                Piece::Headers => {
                    for (i, header) in record.headers.enumerate() {
                        if i > 0 {
                            out.write_all(b",")?;
                        }
                        out.write_all(header.key.as_bytes())?;
                        out.write_all(b"=")?;
                        // kcat prints a null header value as NULL, with -Z or without.
                        out.write_all(header.value.unwrap_or(b"NULL"))?;
                    }
                }
                Piece::Topic => out.write_all(topic.as_bytes())?,
                Piece::Partition => write!(out, "{partition}")?,
                Piece::Offset => write!(out, "{}", record.offset)?,
            }
        }
        Ok(())
    }
}

/// A hex digit's value.
fn hex(byte: u8) -> Option<u8> {
    char::from(byte).to_digit(16).map(|d| d as u8)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(bytes: &[u8]) -> Piece {
        Piece::Text(bytes.to_vec())
    }

    #[test]
    fn kcat_tokens_and_escapes() {
        let format = Format::parse(
            "%t [%p] @%o: %k=%s (%S,%K) %T %h%R%%\\n\\t\\r\\x41\\x4\\q\\",
            false,
        );
        let want = vec![
            Piece::Topic,
            text(b" ["),
            Piece::Partition,
            text(b"] @"),
            Piece::Offset,
            text(b": "),
            Piece::Key,
            text(b"="),
            Piece::Value,
            text(b" ("),
            Piece::ValueLen,
            text(b","),
            Piece::KeyLen,
            text(b") "),
            Piece::Timestamp,
            text(b" "),
            Piece::Headers,
            Piece::ValueLenBinary,
            text(b"%\n\t\rA\x04\\q\\"),
        ];
        assert_eq!(format, Ok(Format::new(want, false)));
        assert_eq!(
            Format::parse("\\x414", false),
            Ok(Format::new(vec![text(b"A4")], false))
        );
        assert_eq!(
            Format::parse("a\\xg", false),
            Ok(Format::new(vec![text(b"a\\xg")], false))
        );
        assert_eq!(
            Format::parse("%s %X", false),
            Err("-f: unsupported formatter %X".to_owned())
        );
        assert_eq!(
            Format::parse("%s%", false),
            Err("-f: a % at the end".to_owned())
        );
        assert_eq!(
            Format::lines(Some("\t"), true),
            Format::new(
                vec![Piece::Key, text(b"\t"), Piece::Value, text(b"\n")],
                true
            )
        );
    }
}
