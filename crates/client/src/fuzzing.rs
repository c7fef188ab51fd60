//! What the fuzz targets drive that is the crate's own (built only under `cfg(fuzzing)`,
//! which `cargo fuzz` sets): the HTTP/2 exchange on arbitrary server bytes.

use crate::h2::{BodyStep, HeadStep, H2};
use crate::{ClientConfig, Url};

/// A request body past the default 65,535-byte windows, so part of it waits for them.
static BODY: [u8; 70_000] = [b'x'; 70_000];

/// One exchange of the client's HTTP/2 layer, as either driver runs it, with `server` as
/// everything the server sends, arriving in pieces. `setup`'s low two bits pick the request
/// (a GET, a HEAD, a POST of 70,000 bytes, the same POST held back until a `100 Continue`);
/// the next three the largest piece (`1 << 2n` bytes).
///
/// It must end (an answer read to its end, an error, or the bytes run out) without a panic,
/// and every step must stay within the bytes it was given.
pub fn h2_exchange(setup: u8, server: &[u8]) {
    let mut h2 = H2::new(&ClientConfig::default());
    let Ok(url) = Url::parse("http://example.com/x") else {
        return;
    };
    let (head, body, held): (&[u8], &[u8], bool) = match setup & 3 {
        0 => (
            b"GET /x HTTP/1.1\r\nhost: example.com\r\naccept: */*\r\n\r\n",
            b"",
            false,
        ),
        1 => (b"HEAD /x HTTP/1.1\r\nhost: example.com\r\n\r\n", b"", false),
        mode => (
            b"POST /x HTTP/1.1\r\nhost: example.com\r\ncontent-length: 70000\r\n\r\n",
            &BODY,
            mode == 3,
        ),
    };
    if h2.send(&url, head, (!held).then_some(body)).is_err() {
        return;
    }
    let piece = 1 << (2 * ((setup >> 2) & 7));
    let mut rest = server;
    let mut buf = Vec::new();
    // Appends the next piece; false once the server's bytes are all in.
    let mut feed = |buf: &mut Vec<u8>| {
        let n = piece.min(rest.len());
        buf.extend_from_slice(&rest[..n]);
        rest = &rest[n..];
        n > 0
    };
    let mut waiting = held;
    loop {
        h2.advance(h2.pending());
        match h2.head(&buf) {
            Err(_) => return,
            Ok(HeadStep::Need(used)) => {
                buf.drain(..used);
                if !feed(&mut buf) {
                    return;
                }
            }
            Ok(HeadStep::Interim { consumed, status }) => {
                assert!(consumed > 0, "an interim head of no bytes");
                let _ = h2.head_view().status();
                buf.drain(..consumed);
                if waiting && status == 100 {
                    waiting = false;
                    if h2.send_body(body).is_err() {
                        return;
                    }
                }
            }
            Ok(HeadStep::Final {
                consumed,
                end_stream,
            }) => {
                let view = h2.head_view();
                let _ = (view.status(), view.header("content-length"));
                buf.drain(..consumed);
                if end_stream {
                    return;
                }
                break;
            }
        }
    }
    loop {
        h2.advance(h2.pending());
        match h2.body(&buf) {
            Err(_) => return,
            Ok(BodyStep::Data { piece, consumed }) => {
                assert!(
                    piece.start <= piece.end && piece.end <= consumed,
                    "a piece outside its frame"
                );
                let _ = &buf[piece];
                buf.drain(..consumed);
            }
            Ok(BodyStep::Need(used)) => {
                buf.drain(..used);
                if !feed(&mut buf) {
                    return;
                }
            }
            Ok(BodyStep::Done(used)) => {
                buf.drain(..used);
                return;
            }
        }
    }
}
