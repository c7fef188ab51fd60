//! Sending a [`FileBody`]: the queued head (with any pipelined answers
//! before it) and then the file's bytes by `sendfile`, from the page cache
//! to the socket without a copy through user space.
//!
//! The head must not leave in a segment of its own ahead of the body: the
//! ring is flushed with `MSG_MORE`, so the kernel holds the partial segment
//! for the file's first bytes, and `sendfile` pushes its last segment out
//! itself. No extra system call per response (corking would cost two).

use std::io;

use ringwire_io::tokio::AsyncSendTransport;
use ringwire_io::TransportError;

use crate::{FileBody, Socket};

type Tx<'s> = AsyncSendTransport<&'s Socket>;

/// Sends what `tx` has queued, then `body`: by `sendfile` over a plain socket on
/// Linux, otherwise through the send ring (a TLS session must encrypt it).
pub(crate) async fn send_file(tx: &mut Tx<'_>, body: &FileBody) -> Result<(), TransportError> {
    #[cfg(target_os = "linux")]
    if let Socket::Plain(tcp) = tx.get_ref() {
        tx.flush_more().await?;
        return copy(tx, tcp, body).await;
    }
    through_ring(tx, body).await
}

/// `sendfile` until the range is sent, waiting for the socket to drain
/// whenever it is full.
#[cfg(target_os = "linux")]
async fn copy(
    tx: &Tx<'_>,
    stream: &ringwire_io::tokio::AsyncNetStream,
    body: &FileBody,
) -> Result<(), TransportError> {
    use tokio::io::Interest;

    // Linux sends at most this much per call anyway.
    const MAX_CALL: u64 = 0x7fff_f000;

    let mut offset = body.offset();
    let end = offset + body.len();
    let file = &**body.file();
    while offset < end {
        let count = (end - offset).min(MAX_CALL) as usize;
        // `try_io` clears tokio's write readiness when the socket is full,
        // so `writable` below really waits.
        let sent = stream.try_io(Interest::WRITABLE, || {
            rustix::fs::sendfile(stream, file, Some(&mut offset), count).map_err(io::Error::from)
        });
        match sent {
            Ok(0) => return Err(shrank()),
            Ok(_) => {}
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => tx.writable().await?,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e.into()),
        }
    }
    Ok(())
}

/// Reads the range into the send ring piece by piece (one copy), behind
/// whatever is queued; the ring is flushed whenever it fills. A piece is
/// one TLS record's worth of plaintext.
async fn through_ring(tx: &mut Tx<'_>, body: &FileBody) -> Result<(), TransportError> {
    use std::os::unix::fs::FileExt as _;

    const PIECE: u64 = 16 << 10;

    let mut offset = body.offset();
    let end = offset + body.len();
    let file = &**body.file();
    while offset < end {
        let want = (end - offset).min(PIECE) as usize;
        let buf = &mut tx.reserve(want).await?[..want];
        // `pread`: the file is shared through the cache, its offset is not ours.
        let n = file.read_at(buf, offset)?;
        if n == 0 {
            return Err(shrank());
        }
        tx.commit(n);
        offset += n as u64;
    }
    Ok(())
}

/// The file ended before the promised length: the response cannot be
/// completed, so the connection ends.
fn shrank() -> TransportError {
    io::Error::new(io::ErrorKind::UnexpectedEof, "file shrank while being sent").into()
}
