//! What the tokio and the blocking socket share: the sans-IO steps between
//! their reads and writes (a client's upgrade, one read of the ring, how a
//! message leaves), so that each driver only moves bytes.

use std::fmt;
use std::io;

use ringwire_http1::{Method, ResponseParser, Status as HeadStatus};
use ringwire_io::{Ring, TransportError};

use crate::handshake::{ClientHandshake, HandshakeError, Negotiated, Offer};
use crate::{
    CloseCode, Connection, EncodeError, FrameHeader, Limits, Message, OpCode, Role, Sender, State,
    Status, MAX_CONTROL_PAYLOAD, MAX_HEADER_LEN,
};

/// Why a WebSocket stopped.
#[derive(Debug)]
pub enum SocketError {
    /// The peer broke the protocol; the close frame with the matching code
    /// was sent.
    Protocol(crate::Error),
    /// The connection failed, or a message does not fit the rings.
    Transport(TransportError),
    /// A message could not be encoded (the socket is closing, or a control
    /// frame over 125 bytes).
    Encode(EncodeError),
    /// The server's answer to a client's upgrade request was refused.
    Handshake(HandshakeError),
    /// Nothing came from the peer for this long, a ping included
    /// ([`keepalive`](crate::socket::WebSocket::keepalive)): it is gone, or
    /// something between dropped the connection.
    PeerSilent(std::time::Duration),
}

impl fmt::Display for SocketError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            // Named as the close code sent for it names it.
            SocketError::Protocol(e) => {
                let code = e.close_code();
                let kind = match code {
                    CloseCode::TOO_BIG => "message too big",
                    CloseCode::INVALID_DATA => "invalid data",
                    _ => "protocol error",
                };
                write!(f, "{kind} ({code}): {e}")
            }
            SocketError::Transport(e) => write!(f, "transport: {e}"),
            SocketError::Encode(e) => write!(f, "cannot send: {e}"),
            SocketError::Handshake(e) => write!(f, "handshake: {e}"),
            SocketError::PeerSilent(quiet) => write!(
                f,
                "the peer sent nothing for {quiet:?}, not even a pong to a ping"
            ),
        }
    }
}

impl std::error::Error for SocketError {}

impl From<TransportError> for SocketError {
    fn from(e: TransportError) -> Self {
        SocketError::Transport(e)
    }
}

impl From<io::Error> for SocketError {
    fn from(e: io::Error) -> Self {
        SocketError::Transport(e.into())
    }
}

impl From<EncodeError> for SocketError {
    fn from(e: EncodeError) -> Self {
        SocketError::Encode(e)
    }
}

/// The keepalive's ping payload: the pong that echoes it is not handed out.
pub(crate) const KEEPALIVE_PING: &[u8] = b"ringwire keepalive";

/// Pings sent while the peer is quiet ([`keepalive`](crate::socket::WebSocket::keepalive)).
pub(crate) struct Keepalive {
    every: std::time::Duration,
    /// A ping went out, and nothing has come since.
    pinged: bool,
}

impl Keepalive {
    pub(crate) fn new(every: std::time::Duration) -> Keepalive {
        Keepalive {
            every,
            pinged: false,
        }
    }

    /// How long the peer may be quiet before a ping.
    #[cfg(feature = "tokio")]
    pub(crate) fn every(&self) -> std::time::Duration {
        self.every
    }

    /// Something came from the peer.
    pub(crate) fn heard(&mut self) {
        self.pinged = false;
    }

    /// The peer was quiet for the interval: a ping is due, unless one went
    /// out already and nothing came since.
    pub(crate) fn quiet(&mut self) -> Result<(), SocketError> {
        if self.pinged {
            return Err(SocketError::PeerSilent(self.every * 2));
        }
        self.pinged = true;
        Ok(())
    }
}

/// Whether `message` answers the keepalive's own ping (not the caller's to see).
#[inline]
pub(crate) fn is_keepalive_pong(message: &Message<'_>, keepalive: Option<&Keepalive>) -> bool {
    keepalive.is_some() && *message == Message::Pong(KEEPALIVE_PING)
}

/// A client's upgrade: the request to send, then the server's answer, read
/// as it arrives.
pub(crate) struct Upgrade {
    handshake: ClientHandshake,
    parser: ResponseParser,
    /// The zlib level for what this end compresses.
    level: u32,
    limits: Limits,
}

/// How far the server's answer has come.
pub(crate) enum Answer {
    /// A valid `101`: the connection, what was agreed, and the head's length
    /// (frames may follow it in the ring). Boxed: the connection is large
    /// and `More` the common answer.
    Open(Box<Connection>, Negotiated, usize),
    /// This many bytes buffered in all.
    More(usize),
}

impl Upgrade {
    pub(crate) fn new(offer: &Offer<'_>, limits: Limits) -> Result<Self, SocketError> {
        Ok(Upgrade {
            handshake: ClientHandshake::new(offer.protocols, offer.deflate)
                .map_err(io::Error::other)?
                .with_headers(offer.headers),
            parser: ResponseParser::default(),
            level: offer.deflate.map_or(1, |d| d.level),
            limits,
        })
    }

    /// Room the request needs in the send ring.
    pub(crate) fn request_len(&self, host: &str, path: &str) -> usize {
        512 + host.len() + path.len() + self.handshake.headers_len()
    }

    /// Writes the request for `path` on `host` into `out`; returns its length.
    pub(crate) fn write_request(
        &self,
        host: &str,
        path: &str,
        out: &mut [u8],
    ) -> Result<usize, SocketError> {
        self.handshake
            .write_request(host, path, out)
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e.to_string()).into())
    }

    /// Reads the answer from the receive ring's unread bytes.
    pub(crate) fn read_response(&mut self, data: &[u8]) -> Result<Answer, SocketError> {
        match self.parser.parse(data, Method::Get) {
            Ok(HeadStatus::Complete(response, head_len)) => {
                let negotiated = self
                    .handshake
                    .verify(&response)
                    .map_err(SocketError::Handshake)?;
                let deflate = negotiated.deflate.as_ref().map(|p| (p, self.level));
                let conn = Connection::new(Role::Client, self.limits, deflate)
                    .map_err(io::Error::other)?;
                Ok(Answer::Open(Box::new(conn), negotiated, head_len))
            }
            Ok(HeadStatus::Partial { at_least }) => Ok(Answer::More(at_least)),
            Err(e) => Err(io::Error::new(io::ErrorKind::InvalidData, e.to_string()).into()),
        }
    }
}

/// The end of stream where the server's answer should be.
pub(crate) fn eof_in_upgrade() -> SocketError {
    io::Error::from(io::ErrorKind::UnexpectedEof).into()
}

/// One read of the receive ring's unread bytes.
pub(crate) enum Step<'a> {
    /// A message (pings and closes included, their answers queued) and the
    /// sender to answer it by.
    Message(Message<'a>, &'a mut Sender),
    /// A frame was taken in without a message (a fragment, or input after
    /// the close): read the next one.
    Again,
    /// This many bytes buffered in all.
    More(usize),
    /// The closing handshake is over: close TCP.
    Closed,
    Failed(SocketError),
}

/// Reads the next frame from `data`; `consumed` becomes the bytes it spans,
/// which the driver drops from its ring before the next step (the message
/// borrows them until then). Inlined into both sockets' loops, the commonest frame's
/// message built in registers: returned through memory (as [`Receiver::handle_read`]
/// returns it), it costs a stack copy whose wide loads stall on the narrower stores just
/// before them (the tokio socket's `recv` of 40 B messages in memory: 29-32 to 19 ns).
///
/// [`Receiver::handle_read`]: crate::Receiver::handle_read
#[cfg(any(feature = "blocking", feature = "tokio"))]
#[inline]
pub(crate) fn step<'a>(
    conn: &'a mut Connection,
    data: &'a mut [u8],
    consumed: &mut usize,
) -> Step<'a> {
    let (receiver, sender) = conn.split();
    if sender.may_close_tcp() {
        return Step::Closed;
    }
    if let Some((text, payload)) = receiver.whole_data_frame(data, sender) {
        let end = payload.end;
        return match receiver.data_message(&data[payload], text, sender) {
            Ok(message) => {
                *consumed = end;
                Step::Message(message, sender)
            }
            Err(e) => Step::Failed(SocketError::Protocol(e)),
        };
    }
    match receiver.handle_read(data, sender) {
        Ok(Status::Complete(message, n)) => {
            *consumed = n;
            match message {
                Some(message) => Step::Message(message, sender),
                None => Step::Again,
            }
        }
        Ok(Status::Partial { at_least }) => Step::More(at_least),
        Err(e) => Step::Failed(SocketError::Protocol(e)),
    }
}

/// After failing the connection (its close sent, the sending side shut down), what the
/// peer still sends is read and dropped until it closes, up to this many bytes: a socket
/// closed with bytes unread resets the connection, and a reset may destroy the close
/// before the peer reads it (or fail the peer's writes of the rest of a refused frame).
pub(crate) const LINGER_BYTES: usize = 16 << 20;

/// How long the tokio socket lingers so at most (the blocking one: as long as its stream's
/// read timeout lets each read wait).
#[cfg(feature = "tokio")]
pub(crate) const LINGER_TIME: std::time::Duration = std::time::Duration::from_secs(2);

/// Send-ring room for what a connection queues by itself: a pong and a
/// close.
pub(crate) const REPLIES_LEN: usize = 2 * (MAX_HEADER_LEN + MAX_CONTROL_PAYLOAD);

/// Messages larger than this skip the copy into the send ring.
const LARGE: usize = 64 << 10;

/// Raises the receive ring's growth bound to hold the largest frame `limits` allow, whole
/// (an unfragmented message is read where it lies): the limits are the one setting, and a
/// frame within them never fails for want of ring.
pub(crate) fn fit_frames(ring: &mut Ring, limits: &Limits) {
    let frame = usize::try_from(limits.max_frame_len).unwrap_or(usize::MAX);
    ring.raise_max_capacity(frame.saturating_add(MAX_HEADER_LEN));
}

/// How a message leaves.
pub(crate) enum Outgoing<'m> {
    /// Encoded into a send-ring reservation of this many bytes.
    Ring(usize),
    /// Large, unmasked and uncompressed: this header through the ring, then
    /// the payload from where it lies (a gathered write), uncopied.
    Gathered(FrameHeader, &'m [u8]),
    /// Large and masked or compressed: encoded into a buffer of its own.
    Apart(Vec<u8>),
}

/// Decides how `message` leaves, encoding it when it goes apart.
pub(crate) fn outgoing<'m>(
    sender: &mut Sender,
    message: &Message<'m>,
) -> Result<Outgoing<'m>, SocketError> {
    let need = sender.max_encoded_len(message);
    if need <= LARGE {
        return Ok(Outgoing::Ring(need));
    }
    let (opcode, payload) = match message {
        Message::Text(text) => (OpCode::Text, text.as_bytes()),
        Message::Binary(bytes) => (OpCode::Binary, *bytes),
        // Control frames are at most 125 bytes: never large.
        _ => return Err(EncodeError::ControlFrameTooLong.into()),
    };
    if sender.state() != State::Open {
        return Err(EncodeError::Closed.into());
    }
    // Uncompressed, `need` is exact; one frame unless a fragment size splits it.
    let whole = sender
        .writer_mut()
        .fragment_size()
        .is_none_or(|size| payload.len() <= size.get());
    if whole && need <= payload.len() + MAX_HEADER_LEN {
        let header = sender
            .writer_mut()
            .header(opcode, true, payload.len() as u64);
        if header.mask.is_none() {
            return Ok(Outgoing::Gathered(header, payload));
        }
    }
    let mut encoded = vec![0; need];
    let n = sender.send(message, &mut encoded)?;
    encoded.truncate(n);
    Ok(Outgoing::Apart(encoded))
}

#[cfg(test)]
mod tests {
    use std::num::NonZeroUsize;

    use super::*;
    use crate::{Connection, Error, Limits, Reader, Role};

    /// A protocol failure is named as its close code names it, with the setting to change
    /// when a limit was hit.
    #[test]
    fn failures_say_what_the_close_code_says() {
        let cases = [
            (
                Error::FrameTooLarge { limit: 10 },
                "message too big (1009): a frame past the limit of 10 bytes (max_frame_len)",
            ),
            (
                Error::InvalidUtf8,
                "invalid data (1007): text that is not UTF-8",
            ),
            (
                Error::InvalidCloseCode(1004),
                "protocol error (1002): invalid close code 1004",
            ),
        ];
        for (error, text) in cases {
            assert_eq!(SocketError::Protocol(error).to_string(), text);
        }
    }

    /// A large message leaves from where it lies as one frame, unless a fragment size is set:
    /// then it is encoded apart, in frames of that size (a gathered write would have sent
    /// one frame whenever the extra headers fit in one header's room).
    #[test]
    fn a_fragment_size_splits_large_messages_however_they_leave() {
        let payload = vec![7u8; LARGE + 1000];
        let message = Message::Binary(&payload);
        let mut conn = Connection::new(Role::Server, Limits::default(), None).unwrap();
        assert!(matches!(
            outgoing(conn.sender(), &message).unwrap(),
            Outgoing::Gathered(..)
        ));
        for size in [LARGE / 2 + 500, 40_000, 1000] {
            let size = NonZeroUsize::new(size).unwrap();
            conn.sender().writer_mut().set_fragment_size(Some(size));
            let Outgoing::Apart(mut bytes) = outgoing(conn.sender(), &message).unwrap() else {
                panic!("fragments of {size} left whole");
            };
            // The frames, walked by their headers (a server's: unmasked)...
            let mut frames = Vec::new();
            let mut at = 0;
            while at < bytes.len() {
                let (fin, len) = (bytes[at] & 0x80 != 0, usize::from(bytes[at + 1] & 0x7f));
                let (len, header) = match len {
                    126 => (
                        usize::from(u16::from_be_bytes([bytes[at + 2], bytes[at + 3]])),
                        4,
                    ),
                    127 => (
                        u64::from_be_bytes(bytes[at + 2..at + 10].try_into().unwrap()) as usize,
                        10,
                    ),
                    len => (len, 2),
                };
                frames.push((fin, len));
                at += header + len;
            }
            let sizes: Vec<usize> = frames.iter().map(|&(_, len)| len).collect();
            assert!(
                sizes.iter().all(|&len| len <= size.get()),
                "{size}: {sizes:?}"
            );
            assert_eq!(sizes.iter().sum::<usize>(), payload.len());
            assert!(frames.iter().rev().skip(1).all(|&(fin, _)| !fin) && frames.last().unwrap().0);
            // ...and read back by a client as the message whole.
            let mut reader = Reader::new(Role::Client, Limits::default(), None);
            let mut at = 0;
            let got = loop {
                match reader.read(&mut bytes[at..]).unwrap() {
                    Status::Complete(Some(Message::Binary(got)), _) => break got.len(),
                    Status::Complete(_, n) => at += n,
                    Status::Partial { .. } => panic!("cut short at {at}"),
                }
            };
            assert_eq!(got, payload.len());
            let frames = frames.len();
            assert_eq!(frames, payload.len().div_ceil(size.get()), "{size}");
        }
    }
}
