//! An in-memory byte pipe pair that behaves like a connected socket pair: blocking reads,
//! bounded buffering (a writer waits while the peer's buffer is full), half-close and EOF.

use std::collections::VecDeque;
use std::io::{self, Read, Write};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};

use crate::ShutdownWrite;

/// Bytes a direction buffers before the writer blocks, like a socket's send buffer.
const PIPE_BUFFER: usize = 256 * 1024;

#[derive(Debug, Default)]
struct State {
    bytes: VecDeque<u8>,
    /// The writer closed (or dropped): readers see EOF once `bytes` drains.
    write_closed: bool,
    /// The reader dropped: writes fail with `BrokenPipe`.
    read_closed: bool,
}

/// One direction of the pipe.
#[derive(Debug, Default)]
struct Channel {
    state: Mutex<State>,
    changed: Condvar,
}

impl Channel {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state
            .lock()
            .unwrap_or_else(|poison| poison.into_inner())
    }

    fn wait<'a>(&self, guard: MutexGuard<'a, State>) -> MutexGuard<'a, State> {
        self.changed
            .wait(guard)
            .unwrap_or_else(|poison| poison.into_inner())
    }

    fn update(&self, f: impl FnOnce(&mut State)) {
        f(&mut self.lock());
        self.changed.notify_all();
    }
}

/// The receiving half of one pipe end.
#[derive(Debug)]
pub struct PipeReader(Arc<Channel>);

/// The sending half of one pipe end.
#[derive(Debug)]
pub struct PipeWriter(Arc<Channel>);

/// Two connected ends, each a (reader, writer): what one end writes the other reads.
pub fn pair() -> ((PipeReader, PipeWriter), (PipeReader, PipeWriter)) {
    let (a_to_b, b_to_a) = (Arc::<Channel>::default(), Arc::<Channel>::default());
    (
        (PipeReader(b_to_a.clone()), PipeWriter(a_to_b.clone())),
        (PipeReader(a_to_b), PipeWriter(b_to_a)),
    )
}

impl Read for PipeReader {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        let mut state = self.0.lock();
        while state.bytes.is_empty() && !state.write_closed {
            state = self.0.wait(state);
        }
        let n = buf.len().min(state.bytes.len());
        let (front, back) = state.bytes.as_slices();
        let from_front = n.min(front.len());
        buf[..from_front].copy_from_slice(&front[..from_front]);
        buf[from_front..n].copy_from_slice(&back[..n - from_front]);
        state.bytes.drain(..n);
        drop(state);
        self.0.changed.notify_all();
        Ok(n)
    }
}

impl Drop for PipeReader {
    fn drop(&mut self) {
        self.0.update(|s| s.read_closed = true);
    }
}

impl Write for PipeWriter {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let mut state = self.0.lock();
        loop {
            if state.read_closed {
                return Err(io::ErrorKind::BrokenPipe.into());
            }
            if state.write_closed {
                return Err(io::Error::new(
                    io::ErrorKind::BrokenPipe,
                    "pipe shut down for writing",
                ));
            }
            if state.bytes.len() < PIPE_BUFFER || buf.is_empty() {
                break;
            }
            state = self.0.wait(state);
        }
        let n = buf.len().min(PIPE_BUFFER - state.bytes.len());
        state.bytes.extend(&buf[..n]);
        drop(state);
        self.0.changed.notify_all();
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl ShutdownWrite for PipeWriter {
    fn shutdown_write(&mut self) -> io::Result<()> {
        self.0.update(|s| s.write_closed = true);
        Ok(())
    }
}

impl Drop for PipeWriter {
    fn drop(&mut self) {
        self.0.update(|s| s.write_closed = true);
    }
}
