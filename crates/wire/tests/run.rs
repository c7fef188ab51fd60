//! `run` and `run_async` driving `LengthPrefixed` (and a line parser built
//! on `Scan`) over sources that deliver a stream in pieces.

use std::convert::Infallible;
use std::fmt;
use std::future::Future;
use std::pin::pin;
use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker};

use proptest::prelude::*;
use ringwire_wire::{
    run, run_async, AsyncSource, Control, Finish, FrameError, LengthPrefixed, LimitExceeded, Parse,
    RunError, Scan, Source, Status,
};

type Outcome<E> = (Vec<Vec<u8>>, Result<Finish, RunError<FrameError, E>>);

/// Delivers `stream` in pieces whose sizes cycle through `chunks`, through
/// a window that slides on consume (like a ring).
#[derive(Debug)]
struct Chunked {
    stream: Vec<u8>,
    start: usize,
    end: usize,
    chunks: Vec<usize>,
    fills: usize,
    /// Largest `at_least` ever requested.
    max_request: usize,
    /// Yield to the executor once before each async fill.
    yield_first: bool,
}

impl Chunked {
    fn new(stream: Vec<u8>, chunks: Vec<usize>) -> Self {
        assert!(chunks.iter().all(|&c| c > 0));
        Chunked {
            stream,
            start: 0,
            end: 0,
            chunks,
            fills: 0,
            max_request: 0,
            yield_first: false,
        }
    }

    fn fill_now(&mut self, at_least: usize) -> usize {
        assert!(
            at_least > self.end - self.start,
            "fill asked for bytes already buffered"
        );
        self.max_request = self.max_request.max(at_least);
        let chunk = self.chunks[self.fills % self.chunks.len()];
        self.fills += 1;
        let added = chunk.min(self.stream.len() - self.end);
        self.end += added;
        added
    }
}

impl Source for Chunked {
    type Error = Infallible;

    fn data(&self) -> &[u8] {
        &self.stream[self.start..self.end]
    }

    fn consume(&mut self, n: usize) {
        assert!(n <= self.end - self.start);
        self.start += n;
    }

    fn fill(&mut self, at_least: usize) -> Result<usize, Infallible> {
        Ok(self.fill_now(at_least))
    }
}

impl AsyncSource for Chunked {
    type Error = Infallible;

    fn data(&self) -> &[u8] {
        Source::data(self)
    }

    fn consume(&mut self, n: usize) {
        Source::consume(self, n);
    }

    async fn fill(&mut self, at_least: usize) -> Result<usize, Infallible> {
        if self.yield_first {
            YieldOnce(false).await;
        }
        Ok(self.fill_now(at_least))
    }
}

/// Pends once, waking itself, so `run_async` really suspends mid-loop.
struct YieldOnce(bool);

impl Future for YieldOnce {
    type Output = ();

    fn poll(mut self: std::pin::Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if self.0 {
            return Poll::Ready(());
        }
        self.0 = true;
        cx.waker().wake_by_ref();
        Poll::Pending
    }
}

/// Receives into a `Vec` that grows to exactly what the parser asked for,
/// and shifts bytes out on consume.
#[derive(Debug)]
struct Growing<'s> {
    input: &'s [u8],
    buf: Vec<u8>,
    peak: usize,
}

impl Source for Growing<'_> {
    type Error = Infallible;

    fn data(&self) -> &[u8] {
        &self.buf
    }

    fn consume(&mut self, n: usize) {
        self.buf.drain(..n);
    }

    fn fill(&mut self, at_least: usize) -> Result<usize, Infallible> {
        let want = at_least - self.buf.len();
        let (now, later) = self.input.split_at(want.min(self.input.len()));
        self.buf.extend_from_slice(now);
        self.input = later;
        self.peak = self.peak.max(self.buf.len());
        Ok(now.len())
    }
}

/// A source whose receive fails.
#[derive(Debug)]
struct Broken;

#[derive(Debug, PartialEq)]
struct ConnectionReset;

impl fmt::Display for ConnectionReset {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("connection reset")
    }
}

impl std::error::Error for ConnectionReset {}

impl Source for Broken {
    type Error = ConnectionReset;

    fn data(&self) -> &[u8] {
        b"\0\0"
    }

    fn consume(&mut self, _: usize) {
        unreachable!("nothing complete is ever buffered");
    }

    fn fill(&mut self, _: usize) -> Result<usize, ConnectionReset> {
        Err(ConnectionReset)
    }
}

/// Polls `future` to completion with a waker that does nothing: the test
/// sources are never waiting on anything external.
fn block_on<F: Future>(future: F) -> F::Output {
    struct Noop;
    impl Wake for Noop {
        fn wake(self: Arc<Self>) {}
    }
    let waker = Waker::from(Arc::new(Noop));
    let mut cx = Context::from_waker(&waker);
    let mut future = pin!(future);
    for _ in 0..1_000_000 {
        if let Poll::Ready(output) = future.as_mut().poll(&mut cx) {
            return output;
        }
    }
    panic!("future did not complete");
}

fn frame(body: &[u8]) -> Vec<u8> {
    let mut out = u32::try_from(body.len()).unwrap().to_be_bytes().to_vec();
    out.extend_from_slice(body);
    out
}

/// The obvious whole-buffer parse the drivers must agree with.
fn reference(stream: &[u8], max_len: usize) -> Outcome<Infallible> {
    let mut bodies = Vec::new();
    let mut rest = stream;
    while let Some((header, after)) = rest.split_first_chunk::<4>() {
        let len = u32::from_be_bytes(*header) as usize;
        if len > max_len {
            let exceeded = LimitExceeded {
                name: "frame length",
                len,
                max: max_len,
            };
            return (bodies, Err(RunError::Parse(FrameError::TooLong(exceeded))));
        }
        if after.len() < len {
            break;
        }
        bodies.push(after[..len].to_vec());
        rest = &after[len..];
    }
    let end = match rest.len() {
        0 => Ok(Finish::Eof),
        buffered => Err(RunError::UnexpectedEof { buffered }),
    };
    (bodies, end)
}

fn collect<S: Source>(src: &mut S, max_len: usize) -> Outcome<S::Error> {
    let mut bodies = Vec::new();
    let end = run(src, &mut LengthPrefixed::new(max_len), |body: &[u8]| {
        bodies.push(body.to_vec());
        Control::Continue
    });
    (bodies, end)
}

fn collect_async<S: AsyncSource>(src: &mut S, max_len: usize) -> Outcome<S::Error> {
    let mut bodies = Vec::new();
    let end = block_on(run_async(
        src,
        &mut LengthPrefixed::new(max_len),
        |body: &[u8]| {
            bodies.push(body.to_vec());
            Control::Continue
        },
    ));
    (bodies, end)
}

/// Frames with bodies of 0..=40 bytes, so boundaries fall everywhere.
fn sample_stream() -> Vec<u8> {
    (0..=40u8)
        .flat_map(|len| {
            frame(
                &(0..len)
                    .map(|b| b.wrapping_mul(31) ^ len)
                    .collect::<Vec<_>>(),
            )
        })
        .collect()
}

#[test]
fn every_chunk_size_matches_reference() {
    let mut stream = sample_stream();
    for tail in [&b""[..], b"\0\0", b"\0\0\0\x05abc"] {
        stream.extend_from_slice(tail);
        let want = reference(&stream, 64);
        for k in 1..=17 {
            let mut sync = Chunked::new(stream.clone(), vec![k]);
            assert_eq!(collect(&mut sync, 64), want, "sync, chunk {k}");
            let mut asynchronous = Chunked::new(stream.clone(), vec![k]);
            asynchronous.yield_first = k % 2 == 0;
            assert_eq!(
                collect_async(&mut asynchronous, 64),
                want,
                "async, chunk {k}"
            );
        }
        let mut growing = Growing {
            input: &stream,
            buf: Vec::new(),
            peak: 0,
        };
        assert_eq!(collect(&mut growing, 64), want, "growing vec");
        // Asked only for what each frame needed.
        assert!(growing.peak <= 4 + 40);
    }
}

#[test]
fn stream_end_inside_a_message_is_unexpected() {
    let mut stream = frame(b"whole");
    stream.extend_from_slice(&frame(b"cut off")[..6]);
    let mut src = Chunked::new(stream.clone(), vec![3]);
    assert_eq!(
        collect(&mut src, 64),
        (
            vec![b"whole".to_vec()],
            Err(RunError::UnexpectedEof { buffered: 6 })
        )
    );
    let mut src = Chunked::new(b"\0\0".to_vec(), vec![1]);
    assert_eq!(
        collect_async(&mut src, 64).1,
        Err(RunError::UnexpectedEof { buffered: 2 })
    );
    let mut empty = Chunked::new(Vec::new(), vec![1]);
    assert_eq!(collect(&mut empty, 64), (Vec::new(), Ok(Finish::Eof)));
}

#[test]
fn oversize_length_fails_without_waiting_for_the_body() {
    let mut stream = frame(b"ok");
    stream.extend_from_slice(&1001u32.to_be_bytes());
    // The body never arrives; the run must not wait for it.
    let mut src = Chunked::new(stream.clone(), vec![1]);
    let (bodies, end) = collect(&mut src, 1000);
    assert_eq!(bodies, [b"ok".to_vec()]);
    let Err(RunError::Parse(FrameError::TooLong(exceeded))) = end else {
        panic!("expected TooLong, got {end:?}");
    };
    assert_eq!((exceeded.len, exceeded.max), (1001, 1000));
    assert!(
        src.max_request <= 6 + 4,
        "asked for {} bytes",
        src.max_request
    );

    let mut growing = Growing {
        input: &stream,
        buf: Vec::new(),
        peak: 0,
    };
    assert!(matches!(
        collect(&mut growing, 1000).1,
        Err(RunError::Parse(FrameError::TooLong(_)))
    ));
    assert!(growing.peak <= 6);
}

#[test]
fn stop_ends_the_run_after_consuming_the_message() {
    let stream = sample_stream();
    for k in [1, 7, stream.len()] {
        let mut src = Chunked::new(stream.clone(), vec![k]);
        let mut seen = 0;
        let end = run(&mut src, &mut LengthPrefixed::default(), |_: &[u8]| {
            seen += 1;
            if seen == 3 {
                Control::Stop
            } else {
                Control::Continue
            }
        });
        assert_eq!((end, seen), (Ok(Finish::Stopped), 3));
        // Bodies 0, 1 and 2 bytes long were consumed, nothing more.
        assert_eq!(src.start, 3 * 4 + 1 + 2);

        let mut src = Chunked::new(stream.clone(), vec![k]);
        let end = block_on(run_async(
            &mut src,
            &mut LengthPrefixed::default(),
            |_: &[u8]| Control::Stop,
        ));
        assert_eq!((end, src.start), (Ok(Finish::Stopped), 4));
    }
}

#[test]
fn source_errors_are_passed_through() {
    let end = run(&mut Broken, &mut LengthPrefixed::default(), |_: &[u8]| {
        Control::Continue
    });
    let err = end.unwrap_err();
    assert_eq!(err, RunError::Source(ConnectionReset));
    assert_eq!(err.to_string(), "receive error: connection reset");
    assert!(std::error::Error::source(&err).is_some());
}

#[test]
fn run_error_display() {
    let eof: RunError<FrameError, ConnectionReset> = RunError::UnexpectedEof { buffered: 3 };
    assert_eq!(
        eof.to_string(),
        "stream ended inside a message (3 bytes buffered)"
    );
    let too_long: RunError<FrameError, ConnectionReset> =
        RunError::Parse(LengthPrefixed::new(1).parse(&[0, 0, 0, 2]).unwrap_err());
    assert_eq!(
        too_long.to_string(),
        "parse error: frame length of 2 bytes exceeds the limit of 1"
    );
}

#[test]
fn bodies_borrow_from_the_source_buffer() {
    let stream = [frame(b"abc"), frame(b"defg")].concat();
    let mut src = Chunked::new(stream, vec![2]);
    let base = src.stream.as_ptr();
    let mut offsets = Vec::new();
    let end = run(&mut src, &mut LengthPrefixed::default(), |body: &[u8]| {
        offsets.push(body.as_ptr() as usize - base as usize);
        Control::Continue
    });
    assert_eq!(end, Ok(Finish::Eof));
    // Each body is the stream's own bytes, right after its length prefix.
    assert_eq!(offsets, [4, 4 + 3 + 4]);
}

/// Newline-terminated lines, found with a resumable [`Scan`].
#[derive(Debug)]
struct Lines {
    scan: Scan,
}

impl Parse for Lines {
    type Output<'a> = &'a [u8];
    type Error = Infallible;

    fn parse<'a>(&mut self, buf: &'a [u8]) -> Result<Status<&'a [u8]>, Infallible> {
        Ok(match self.scan.find(buf) {
            Some(end) => Status::Complete(&buf[..end], end + self.scan.needle().len()),
            None => Status::Partial {
                at_least: buf.len() + 1,
            },
        })
    }
}

#[test]
fn scan_based_parser_resumes_without_rescanning() {
    let lines: Vec<Vec<u8>> = (0..50).map(|i| vec![b'x'; i * 7]).collect();
    let stream: Vec<u8> = lines
        .iter()
        .flat_map(|l| [&l[..], b"\r\n"].concat())
        .collect();
    for k in [1, 2, 5, 64] {
        let mut parser = Lines {
            scan: Scan::new(b"\r\n"),
        };
        let mut src = Chunked::new(stream.clone(), vec![k]);
        let mut out = Vec::new();
        let end = run(&mut src, &mut parser, |line: &[u8]| {
            out.push(line.to_vec());
            Control::Continue
        });
        assert_eq!((end, &out), (Ok(Finish::Eof), &lines), "chunk {k}");
        // One overlap byte per parse call at most, on top of the stream.
        assert!(parser.scan.scanned() <= 2 * stream.len(), "chunk {k}");
    }
}

/// Miri runs ~1000x slower; a handful of cases still exercises the code.
fn config() -> ProptestConfig {
    if cfg!(miri) {
        ProptestConfig {
            cases: 4,
            failure_persistence: None,
            ..ProptestConfig::default()
        }
    } else {
        ProptestConfig::with_cases(256)
    }
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn random_frames_and_splits(
        bodies in prop::collection::vec(prop::collection::vec(any::<u8>(), 0..48), 0..16),
        chunks in prop::collection::vec(1usize..40, 1..8),
        cut in any::<prop::sample::Index>(),
        max_len in 24usize..64,
    ) {
        let mut stream: Vec<u8> = bodies.iter().flat_map(|b| frame(b)).collect();
        // Sometimes end mid-frame too.
        if bodies.len() % 3 == 0 && !stream.is_empty() {
            stream.truncate(cut.index(stream.len()));
        }
        let want = reference(&stream, max_len);
        let mut src = Chunked::new(stream.clone(), chunks.clone());
        prop_assert_eq!(collect(&mut src, max_len), want.clone());
        let mut src = Chunked::new(stream, chunks);
        src.yield_first = true;
        prop_assert_eq!(collect_async(&mut src, max_len), want);
    }
}
