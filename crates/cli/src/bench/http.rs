//! HTTP/1.1 load on one connection: its requests written as one batch, the answers
//! read in place from its receive ring, head and body, as a client would
//! (the body is framed and skipped, never copied).

use std::path::{Path, PathBuf};

use ringwire_client::{Origin, Scheme};
use ringwire_http1::{BodyDecoder, Decoded, Limits, Method, ResponseParser, Status};
use ringwire_io::tokio::{AsyncRecvTransport, AsyncSendTransport, AsyncStream};
use ringwire_ring::{Ring, RingConfig, RingError};
use ringwire_tls::{MaybeTls, TlsConnector};

use super::guard::Board;
use super::open::OpenError;
use super::pace::Pace;
use super::stats::Stats;
use super::{interrupted, next_batch, End, Failure, Socket};
use crate::request::line;

/// What every connection sends, and where.
#[derive(Debug)]
pub(crate) struct Target {
    pub(crate) origin: Origin,
    /// Present for `https://`.
    pub(crate) tls: Option<TlsConnector>,
    /// The Unix socket connections go to, if not the origin.
    pub(crate) unix: Option<PathBuf>,
    /// The request, `depth` times over: one write per batch.
    pub(crate) batch: Vec<u8>,
    /// Requests in flight per connection.
    pub(crate) depth: usize,
    /// The request's method, which decides whether answers have bodies.
    pub(crate) method: String,
}

/// A receive ring large enough for any head; bodies are read through it
/// piece by piece, so it need not hold one whole.
const RX: RingConfig = RingConfig {
    capacity: 64 << 10,
    max_capacity: 1 << 20,
    backing: ringwire_ring::Backing::Auto,
};

/// A connection to `origin` (or through the Unix socket at `unix`), TLS for `https://`.
pub(crate) async fn open(
    origin: &Origin,
    tls: Option<&TlsConnector>,
    unix: Option<&Path>,
) -> Result<Socket, OpenError> {
    let socket = super::open::socket(origin.host(), origin.port(), unix).await?;
    match (tls, origin.scheme()) {
        (Some(connector), Scheme::Https) => connector
            .connect(origin.host(), socket)
            .await
            .map(|tls| MaybeTls::Tls(Box::new(tls)))
            .map_err(|e| OpenError::Connect(line(e))),
        _ => Ok(MaybeTls::Plain(socket)),
    }
}

/// Batches on one connection until the run stops or the connection ends.
pub(crate) async fn load(
    target: &Target,
    socket: &Socket,
    board: &Board,
    slot: usize,
    pace: &mut Pace,
    stats: &mut Stats,
) -> End {
    let (mut rx, mut tx) = match transports(socket) {
        Ok(transports) => transports,
        Err(e) => {
            stats.read_error(&e.to_string());
            return End::Again;
        }
    };
    let limits = Limits::default();
    let mut parser = ResponseParser::new(limits);
    let method = Method::from(target.method.as_str());
    loop {
        let sent = match next_batch(board, slot, pace, stats).await {
            Ok(due) => due,
            Err(end) => return end,
        };
        match board.guard(slot, tx.send_vectored(&[&target.batch])).await {
            Ok(Ok(())) => {}
            Ok(Err(e)) => return Failure::Send(e).count(stats),
            Err(interrupt) => return interrupted(stats, interrupt),
        }
        for _ in 0..target.depth {
            let answer = board
                .guard(slot, read_answer(&mut rx, &mut parser, method, &limits))
                .await;
            match answer {
                Ok(Ok(answer)) => {
                    stats.answer(answer.status, answer.body, sent.elapsed());
                    if !answer.keep_alive {
                        return Failure::Done.count(stats);
                    }
                }
                Ok(Err(failure)) => return failure.count(stats),
                Err(interrupt) => return interrupted(stats, interrupt),
            }
        }
        board.disarm(slot);
    }
}

/// One answer, read to its end.
struct Answer {
    status: u16,
    /// Body bytes.
    body: u64,
    keep_alive: bool,
}

impl From<ringwire_http1::Error> for Failure {
    fn from(e: ringwire_http1::Error) -> Self {
        Failure::Protocol(e.to_string())
    }
}

/// A connection's transports: a receive ring large enough for any head
/// (bodies are read through it piece by piece), and a send ring left empty,
/// as everything goes out from where it lies.
pub(super) fn transports(
    socket: &Socket,
) -> Result<(AsyncRecvTransport<&Socket>, AsyncSendTransport<&Socket>), RingError> {
    let rx = Ring::new(RX)?;
    let tx = Ring::new(RingConfig::with_capacity(0))?;
    Ok((
        AsyncRecvTransport::with_ring(rx, socket),
        AsyncSendTransport::with_ring(tx, socket),
    ))
}

async fn read_answer<S: AsyncStream>(
    rx: &mut AsyncRecvTransport<S>,
    parser: &mut ResponseParser,
    method: Method<'_>,
    limits: &Limits,
) -> Result<Answer, Failure> {
    let (status, mut keep_alive, mut decoder) = loop {
        match parser.parse(rx.data(), method)? {
            Status::Partial { at_least } => {
                if rx.fill(at_least).await? == 0 {
                    return Err(Failure::Closed);
                }
            }
            Status::Complete(head, len) if head.is_interim() => rx.consume(len),
            Status::Complete(head, len) => {
                let answer = (
                    head.status(),
                    head.keep_alive(),
                    BodyDecoder::new(head.body(), limits),
                );
                rx.consume(len);
                break answer;
            }
        }
    };
    loop {
        let consumed = match decoder.decode(rx.data())? {
            Decoded::Data { consumed, .. } => {
                rx.consume(consumed);
                continue;
            }
            Decoded::Done { consumed, .. } => {
                rx.consume(consumed);
                break;
            }
            Decoded::Partial { consumed } => consumed,
        };
        rx.consume(consumed);
        if rx.fill(rx.data().len() + 1).await? == 0 {
            // The end of a close-delimited body; an error for any other.
            decoder.finish_eof()?;
            keep_alive = false;
            break;
        }
    }
    Ok(Answer {
        status,
        body: decoder.delivered(),
        keep_alive,
    })
}
