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
use tokio::net::TcpStream;

use crate::FileBody;

type Tx<'s> = AsyncSendTransport<&'s TcpStream>;

/// Sends what `tx` has queued, then `body`.
pub(crate) async fn send_file(tx: &mut Tx<'_>, body: &FileBody) -> Result<(), TransportError> {
    tx.flush_more().await?;
    copy(tx, body).await
}

/// `sendfile` until the range is sent, waiting for the socket to drain
/// whenever it is full.
#[cfg(target_os = "linux")]
async fn copy(tx: &Tx<'_>, body: &FileBody) -> Result<(), TransportError> {
    use tokio::io::Interest;

    let stream: &TcpStream = tx.get_ref();
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

/// Elsewhere: read the range in pieces and write them (one copy).
#[cfg(not(target_os = "linux"))]
async fn copy(tx: &Tx<'_>, body: &FileBody) -> Result<(), TransportError> {
    use std::io::{Read as _, Seek as _, SeekFrom};

    let stream: &TcpStream = tx.get_ref();
    let mut file = &**body.file();
    file.seek(SeekFrom::Start(body.offset()))?;
    let mut left = body.len();
    let mut buf = vec![0; 64 << 10];
    while left > 0 {
        let want = left.min(buf.len() as u64) as usize;
        let n = file.read(&mut buf[..want])?;
        if n == 0 {
            return Err(shrank());
        }
        let mut chunk = &buf[..n];
        while !chunk.is_empty() {
            tx.writable().await?;
            match stream.try_write(chunk) {
                Ok(w) => chunk = &chunk[w..],
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                Err(e) => return Err(e.into()),
            }
        }
        left -= n as u64;
    }
    Ok(())
}

/// The file ended before the promised length: the response cannot be
/// completed, so the connection ends.
fn shrank() -> TransportError {
    io::Error::new(io::ErrorKind::UnexpectedEof, "file shrank while being sent").into()
}
