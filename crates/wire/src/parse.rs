//! The parser trait, byte sources, and the loops driving one with the other.

use std::fmt;
use std::ops::ControlFlow;

use crate::status::Status;

/// A resumable parser of messages from the front of a contiguous span.
pub trait Parse {
    /// A parsed message; may borrow from the span (zero-copy).
    type Output<'a>;
    /// Why bytes can never form a valid message.
    type Error;

    /// Parse one message from the front of `buf` (a contiguous ring span).
    ///
    /// Returns `Ok(Status::Partial { .. })` if `buf` is a valid prefix that
    /// is too short, and `Err` only for bytes that can never become valid.
    /// May be called again with the same bytes plus more; parsers may keep
    /// state between calls to avoid rescanning. A `Complete` count must be
    /// in `1..=buf.len()`: consuming nothing would make drivers spin.
    fn parse<'a>(&mut self, buf: &'a [u8]) -> Result<Status<Self::Output<'a>>, Self::Error>;
}

/// What a message handler wants the driving loop to do next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Control {
    /// Keep parsing.
    Continue,
    /// Return [`Finish::Stopped`] after consuming this message.
    Stop,
}

/// Something a parser reads from: implemented by ringwire-io's receive
/// transports (a ring fed by recv).
pub trait Source {
    /// Why receiving failed.
    type Error;

    /// Buffered bytes, contiguous.
    fn data(&self) -> &[u8];

    /// Drop the first n buffered bytes (they will never be shown again).
    fn consume(&mut self, n: usize);

    /// Receive more bytes so that, if the peer sends them, `data().len()`
    /// can reach `at_least` (growing storage if `at_least` exceeds
    /// capacity, or failing with a typed error past a bound). Returns bytes
    /// added; `Ok(0)` means end of stream.
    fn fill(&mut self, at_least: usize) -> Result<usize, Self::Error>;
}

/// Async twin of [`Source`], for tokio-style drivers.
// `async fn` in a public trait leaves callers unable to require a `Send`
// future; that is accepted so single-threaded runtimes (and `!Send` ring
// handles) can implement it, and it keeps the trait runtime-agnostic.
#[allow(async_fn_in_trait)]
pub trait AsyncSource {
    /// Why receiving failed.
    type Error;

    /// Buffered bytes, contiguous.
    fn data(&self) -> &[u8];

    /// Drop the first n buffered bytes (they will never be shown again).
    fn consume(&mut self, n: usize);

    /// Same contract as [`Source::fill`], awaiting instead of blocking.
    async fn fill(&mut self, at_least: usize) -> Result<usize, Self::Error>;
}

/// Why [`run`] or [`run_async`] gave up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunError<P, S> {
    /// The parser rejected the buffered bytes.
    Parse(P),
    /// The source failed to receive.
    Source(S),
    /// The stream ended in the middle of a message.
    UnexpectedEof {
        /// Bytes of the unfinished message that were received.
        buffered: usize,
    },
}

impl<P: fmt::Display, S: fmt::Display> fmt::Display for RunError<P, S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RunError::Parse(err) => write!(f, "parse error: {err}"),
            RunError::Source(err) => write!(f, "receive error: {err}"),
            RunError::UnexpectedEof { buffered } => write!(
                f,
                "stream ended inside a message ({buffered} bytes buffered)"
            ),
        }
    }
}

impl<P, S> std::error::Error for RunError<P, S>
where
    P: std::error::Error + 'static,
    S: std::error::Error + 'static,
{
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            RunError::Parse(err) => Some(err),
            RunError::Source(err) => Some(err),
            RunError::UnexpectedEof { .. } => None,
        }
    }
}

/// How [`run`] or [`run_async`] ended successfully.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Finish {
    /// The handler returned [`Control::Stop`].
    Stopped,
    /// Clean end of stream between messages.
    Eof,
}

/// Feeds `parser` from `src`, calling `handler` with each message, until
/// the handler stops, the stream ends, or something fails.
///
/// Each message is consumed from `src` after `handler` returns, so the
/// output may borrow the source's buffer. After a `Partial` the parser is
/// not called again until `at_least` bytes are buffered.
pub fn run<S, P, H>(
    src: &mut S,
    parser: &mut P,
    mut handler: H,
) -> Result<Finish, RunError<P::Error, S::Error>>
where
    S: Source + ?Sized,
    P: Parse + ?Sized,
    H: for<'a> FnMut(P::Output<'a>) -> Control,
{
    let mut driver = Driver::default();
    loop {
        match driver.step(src, S::data, S::consume, parser, &mut handler)? {
            ControlFlow::Break(finish) => return Ok(finish),
            ControlFlow::Continue(at_least) => {
                driver.filled(src.fill(at_least).map_err(RunError::Source)?);
            }
        }
    }
}

/// Async twin of [`run`], with the same semantics.
pub async fn run_async<S, P, H>(
    src: &mut S,
    parser: &mut P,
    mut handler: H,
) -> Result<Finish, RunError<P::Error, S::Error>>
where
    S: AsyncSource + ?Sized,
    P: Parse + ?Sized,
    H: for<'a> FnMut(P::Output<'a>) -> Control,
{
    let mut driver = Driver::default();
    loop {
        match driver.step(src, S::data, S::consume, parser, &mut handler)? {
            ControlFlow::Break(finish) => return Ok(finish),
            ControlFlow::Continue(at_least) => {
                driver.filled(src.fill(at_least).await.map_err(RunError::Source)?);
            }
        }
    }
}

/// The loop logic shared by [`run`] and [`run_async`], which differ only
/// in how they call `fill`.
#[derive(Default)]
struct Driver {
    /// Buffered length the parser asked for last; below it, parsing again
    /// cannot make progress.
    need: usize,
    /// The last fill returned 0.
    ended: bool,
}

impl Driver {
    /// Handles every message already buffered, then says how many bytes to
    /// fill up to, or how the run ends. `data` and `consume` are the
    /// source's methods, passed in because the sync and async source
    /// traits are distinct.
    fn step<S, P, H, SE>(
        &mut self,
        src: &mut S,
        data: impl Fn(&S) -> &[u8],
        consume: impl Fn(&mut S, usize),
        parser: &mut P,
        handler: &mut H,
    ) -> Result<ControlFlow<Finish, usize>, RunError<P::Error, SE>>
    where
        S: ?Sized,
        P: Parse + ?Sized,
        H: for<'a> FnMut(P::Output<'a>) -> Control,
    {
        let buffered = data(src).len();
        if self.ended {
            // The parser already saw these bytes and wanted more.
            return match buffered {
                0 => Ok(ControlFlow::Break(Finish::Eof)),
                _ => Err(RunError::UnexpectedEof { buffered }),
            };
        }
        if buffered < self.need {
            return Ok(ControlFlow::Continue(self.need));
        }
        loop {
            let buf = data(src);
            let (consumed, control) = match parser.parse(buf).map_err(RunError::Parse)? {
                Status::Complete(output, consumed) => {
                    debug_assert!(
                        0 < consumed && consumed <= buf.len(),
                        "parser consumed {consumed} of {} bytes",
                        buf.len()
                    );
                    // The handler's borrow of `buf` ends here, before consume.
                    (consumed, handler(output))
                }
                Status::Partial { at_least } => {
                    // A hint that is already met would make the loop spin: a
                    // Partial always means at least one more byte.
                    self.need = at_least.max(buf.len() + 1);
                    return Ok(ControlFlow::Continue(self.need));
                }
            };
            consume(src, consumed);
            if control == Control::Stop {
                return Ok(ControlFlow::Break(Finish::Stopped));
            }
        }
    }

    /// Records the outcome of a fill.
    fn filled(&mut self, added: usize) {
        self.ended = added == 0;
    }
}
