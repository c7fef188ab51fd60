//! Drives a reader through the ring transport with every way of splitting its input.

#![allow(dead_code, unreachable_pub)] // each test binary uses part of this

use ringwire_io::{Chunks, RecvTransport, TransportConfig};
use ringwire_ws::{Error, Message, Reader, Status};

/// A message copied out of the ring, to compare across deliveries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Owned {
    Text(String),
    Binary(Vec<u8>),
    Ping(Vec<u8>),
    Pong(Vec<u8>),
    Close(Option<(u16, String)>),
}

impl From<Message<'_>> for Owned {
    fn from(m: Message<'_>) -> Self {
        match m {
            Message::Text(t) => Owned::Text(t.to_owned()),
            Message::Binary(b) => Owned::Binary(b.to_vec()),
            Message::Ping(p) => Owned::Ping(p.to_vec()),
            Message::Pong(p) => Owned::Pong(p.to_vec()),
            Message::Close(c) => Owned::Close(c.map(|c| (c.code.0, c.reason.to_owned()))),
        }
    }
}

/// What a reader made of a whole input: the messages before the end or the first error.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outcome {
    pub messages: Vec<Owned>,
    pub error: Option<Error>,
    /// Bytes left unconsumed at the end of the input (an unfinished frame).
    pub leftover: usize,
}

/// Every way a test delivers `input`: whole, split once at each byte, and one byte per read.
pub fn deliveries(input: &[u8]) -> impl Iterator<Item = (String, Chunks)> + '_ {
    let whole = std::iter::once(("whole".to_string(), Chunks::new([input])));
    let splits =
        (1..input.len()).map(move |at| (format!("split at {at}"), Chunks::split_at(input, at)));
    let bytes = std::iter::once(("1-byte reads".to_string(), Chunks::every(input, 1)));
    whole.chain(splits).chain(bytes)
}

/// Receives `chunks` into a ring (4 KiB, growing) and reads with `reader` until EOF or error.
pub fn drive(reader: &mut Reader, chunks: Chunks) -> Outcome {
    let mut rx = RecvTransport::new(TransportConfig::new(4096, 1 << 26), chunks).expect("ring");
    let mut messages = Vec::new();
    loop {
        let status = reader.read(rx.ring_mut().readable_mut());
        match status {
            Ok(Status::Complete(message, n)) => {
                assert!(n > 0, "Complete must consume");
                messages.extend(message.map(Owned::from));
                rx.consume(n);
            }
            Ok(Status::Partial { at_least }) => {
                assert!(at_least > rx.data().len(), "Partial must ask for more");
                if rx.fill(at_least).expect("fixture never fails") == 0 {
                    return Outcome {
                        messages,
                        error: None,
                        leftover: rx.data().len(),
                    };
                }
            }
            Err(error) => {
                return Outcome {
                    messages,
                    error: Some(error),
                    leftover: rx.data().len(),
                }
            }
        }
    }
}

/// Runs a fresh reader from `new` over every delivery of `input`; all must agree with the
/// whole delivery's messages and error, which is returned.
pub fn agree(input: &[u8], new: impl Fn() -> Reader) -> Outcome {
    let whole = drive(&mut new(), Chunks::new([input]));
    for (how, chunks) in deliveries(input).skip(1) {
        let got = drive(&mut new(), chunks);
        assert_eq!(got.messages, whole.messages, "{how}");
        assert_eq!(got.error, whole.error, "{how}");
    }
    whole
}
