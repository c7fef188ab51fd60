//! Chunked body framing (RFC 9112 section 7.1).
//!
//! A body goes out as `chunk_header(len)`, `len` bytes of data, and
//! [`CHUNK_END`], for each chunk, then [`last_chunk`]. The data never
//! passes through the encoder, so it can be written (or spliced) straight
//! from where it lies.

use super::buf::{check_field, HeadBuf};
use super::{digits, EncodeError};

/// The CRLF that follows each chunk's data.
pub const CHUNK_END: &[u8] = b"\r\n";

/// Writes the size line of a chunk of `len` bytes: `len` in hex, then CRLF.
///
/// # Errors
///
/// [`EmptyChunk`](EncodeError::EmptyChunk) for `len == 0`, which would end
/// the body (use [`last_chunk`]); [`BufferFull`](EncodeError::BufferFull).
pub fn chunk_header(len: usize, buf: &mut [u8]) -> Result<usize, EncodeError> {
    if len == 0 {
        return Err(EncodeError::EmptyChunk);
    }
    let mut hex = [0; 20];
    let mut out = HeadBuf::new(buf, 0);
    out.put(&[digits::<16>(len as u64, &mut hex), CHUNK_END])?;
    Ok(out.len())
}

/// Writes a whole chunk, size line, `data` and CRLF, copying `data`.
/// Empty `data` writes nothing, since an empty chunk would end the body.
///
/// # Errors
///
/// [`BufferFull`](EncodeError::BufferFull).
pub fn encode_chunk(data: &[u8], buf: &mut [u8]) -> Result<usize, EncodeError> {
    if data.is_empty() {
        return Ok(0);
    }
    let mut hex = [0; 20];
    let mut out = HeadBuf::new(buf, 0);
    out.put(&[
        digits::<16>(data.len() as u64, &mut hex),
        CHUNK_END,
        data,
        CHUNK_END,
    ])?;
    Ok(out.len())
}

/// Fields a sender must not put in a trailer section (RFC 9110 section 6.5.1):
/// those that frame the message, route it, or control the connection; a
/// receiver that merged them into the head could be misled.
const FORBIDDEN_TRAILERS: &[&str] = &[
    "content-length",
    "transfer-encoding",
    "trailer",
    "host",
    "connection",
    "keep-alive",
    "upgrade",
    "te",
    "content-encoding",
    "content-type",
    "content-range",
];

/// Writes the last chunk (`0` CRLF), the trailer fields, and the empty line
/// that ends the body.
///
/// # Errors
///
/// [`InvalidHeaderName`](EncodeError::InvalidHeaderName) or
/// [`InvalidHeaderValue`](EncodeError::InvalidHeaderValue) for a trailer
/// field that a head would refuse, [`ForbiddenTrailer`](EncodeError::ForbiddenTrailer)
/// for one that frames, routes or controls the message (all checked before
/// anything is written); [`BufferFull`](EncodeError::BufferFull).
pub fn last_chunk(trailers: &[(&str, &[u8])], buf: &mut [u8]) -> Result<usize, EncodeError> {
    for (name, value) in trailers {
        check_field(name, value)?;
        if FORBIDDEN_TRAILERS
            .iter()
            .any(|f| f.eq_ignore_ascii_case(name))
        {
            return Err(EncodeError::ForbiddenTrailer);
        }
    }
    let mut out = HeadBuf::new(buf, 2);
    out.put(&[b"0\r\n"])?;
    for (name, value) in trailers {
        // Checked again, but trailers are few and short.
        out.field(name, value)?;
    }
    out.finish()
}

#[cfg(test)]
mod tests {
    use super::super::assert_every_size;
    use super::*;

    #[test]
    fn size_lines() {
        for (len, line) in [
            (1, "1\r\n"),
            (15, "F\r\n"),
            (16, "10\r\n"),
            (4096, "1000\r\n"),
        ] {
            assert_every_size(line.as_bytes(), |buf| chunk_header(len, buf));
        }
        let max = format!("{:X}\r\n", usize::MAX);
        assert_every_size(max.as_bytes(), |buf| chunk_header(usize::MAX, buf));
        assert_eq!(chunk_header(0, &mut [0; 8]), Err(EncodeError::EmptyChunk));
    }

    #[test]
    fn whole_chunks() {
        assert_every_size(b"5\r\nhello\r\n", |buf| encode_chunk(b"hello", buf));
        assert_every_size(b"", |buf| encode_chunk(b"", buf));
    }

    #[test]
    fn last_chunk_with_and_without_trailers() {
        assert_every_size(b"0\r\n\r\n", |buf| last_chunk(&[], buf));
        let trailers: [(&str, &[u8]); 2] = [("grpc-status", b"0"), ("x-sum", b"ab cd")];
        assert_every_size(b"0\r\ngrpc-status: 0\r\nx-sum: ab cd\r\n\r\n", |buf| {
            last_chunk(&trailers, buf)
        });
    }

    #[test]
    fn trailers_are_validated_before_writing() {
        let mut buf = [0; 64];
        let injected: [(&str, &[u8]); 2] = [("ok", b"1"), ("x", b"1\r\n\r\nGET / HTTP/1.1")];
        assert_eq!(
            last_chunk(&injected, &mut buf),
            Err(EncodeError::InvalidHeaderValue)
        );
        // Validation wins over a too-small buffer, whatever its size.
        let named: [(&str, &[u8]); 1] = [("bad name", b"1")];
        assert_eq!(
            last_chunk(&named, &mut []),
            Err(EncodeError::InvalidHeaderName)
        );
        assert_eq!(buf, [0; 64]);
        for name in [
            "Content-Length",
            "transfer-encoding",
            "Host",
            "trailer",
            "Connection",
        ] {
            let framing: [(&str, &[u8]); 2] = [("ok", b"1"), (name, b"5")];
            assert_eq!(
                last_chunk(&framing, &mut buf),
                Err(EncodeError::ForbiddenTrailer),
                "{name}"
            );
        }
        assert_eq!(buf, [0; 64]);
    }

    #[test]
    fn frames_decode_with_httparse() {
        let mut body = Vec::new();
        let mut buf = [0; 32];
        for data in [&b"hello "[..], b"", b"chunked world"] {
            let n = encode_chunk(data, &mut buf).unwrap();
            body.extend_from_slice(&buf[..n]);
        }
        let n = last_chunk(&[], &mut buf).unwrap();
        body.extend_from_slice(&buf[..n]);
        let mut at = 0;
        let mut decoded = Vec::new();
        loop {
            let httparse::Status::Complete((used, len)) =
                httparse::parse_chunk_size(&body[at..]).unwrap()
            else {
                panic!("partial size line");
            };
            at += used;
            if len == 0 {
                break;
            }
            let len = usize::try_from(len).unwrap();
            decoded.extend_from_slice(&body[at..at + len]);
            assert_eq!(&body[at + len..at + len + 2], CHUNK_END);
            at += len + 2;
        }
        assert_eq!(decoded, b"hello chunked world");
        assert_eq!(&body[at..], b"\r\n");
    }
}
