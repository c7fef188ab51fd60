//! WebSocket frame reading: ringwire-ws against nexus-web, tungstenite and fastwebsockets, the same frames
//! delivered in 64 KiB reads from an in-memory stream (the `Chunks` fixture, which copies each
//! read into the caller's buffer as `recv` would).
//!
//! Groups `ws/read/{40b,1k,64k,64k_masked,1k_text_8_fragments}`, each with `ringwire`,
//! `ringwire_socket`, `ringwire_tokio_socket`, `nexus-web`, `tungstenite` and `fastwebsockets`. One iteration reads a whole stream of about 1 MiB of
//! identical messages and touches every payload through `black_box`; throughput is in messages,
//! so criterion's `elem/s` inverts to the time per message. Unmasked streams are server frames
//! read by a client; the masked stream is client frames read by a server (unmasking included).
//!
//! - `ringwire`: `RecvTransport` (mirrored ring) + `Reader::read` on the ring's readable span,
//!   unmasking in place; unfragmented messages are slices of the ring.
//! - `ringwire_socket`: ringwire-ws's blocking `WebSocket` (its `recv`) over the same transport
//!   and reads, the fixture cycling so the socket is kept: what the socket's loop around the
//!   reader (replies queued for pings and closes, the close handshake's state) costs.
//! - `ringwire_tokio_socket`: the same with ringwire-ws's tokio `WebSocket` (its `recv().await`)
//!   on a current-thread runtime, over the fixture as an always-ready stream.
//! - `nexus-web`: its sans-IO `FrameReader` with its default (1 MiB) buffer, driven as its
//!   `Client::recv` drives it: `poll` + `next` while a message is ready, else `read_from` the
//!   stream (which compacts when the buffer's spare room runs out). Unfragmented messages borrow
//!   its buffer; payloads that span reads, and fragments, are copied into its message buffer.
//! - `tungstenite`: `WebSocket::read` over a `Read + Write` stream, kept across iterations (the
//!   stream answers `WouldBlock` at its end, which leaves the socket usable), as a connection
//!   keeps it.
//! - `fastwebsockets`: `WebSocket::read_frame` (`FragmentCollector` for fragments) on a
//!   current-thread tokio runtime, over an `AsyncRead` of the same fixture. Its socket cannot
//!   give its stream back without being consumed, so it is rebuilt each iteration (an 8 KiB
//!   buffer, small next to 1 MiB of frames).
//!
//! Readers and their buffers are built once, outside the timed loop, except where noted.

mod common;

use std::hint::black_box;
use std::io::{self, Read, Write};
use std::num::NonZeroUsize;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use ringwire_io::{Chunks, RecvTransport, RingConfig, TransportConfig};
use ringwire_ring::Backing;
use ringwire_ws::{Limits, Message, Reader, Role, Status, Writer};

/// Bytes per read, on every path.
const READ: usize = 64 << 10;
/// Roughly how much each iteration reads.
const STREAM: usize = 1 << 20;

/// One scenario: a message, how it is framed, and who sends it.
struct Case {
    name: &'static str,
    payload: Vec<u8>,
    text: bool,
    fragments: usize,
    /// Client frames (masked), read by a server.
    masked: bool,
}

impl Case {
    /// `count` copies of the message, framed.
    fn stream(&self) -> (Vec<u8>, usize) {
        let mut writer = if self.masked {
            Writer::client().expect("seed")
        } else {
            Writer::server()
        };
        if self.fragments > 1 {
            writer.set_fragment_size(NonZeroUsize::new(self.payload.len() / self.fragments));
        }
        let text = std::str::from_utf8(&self.payload).expect("ASCII payloads");
        let message = if self.text {
            Message::Text(text)
        } else {
            Message::Binary(&self.payload)
        };
        let mut frame = vec![0; writer.max_encoded_len(&message)];
        let mut stream = Vec::new();
        let mut count = 0;
        while stream.len() < STREAM {
            let n = writer.write(&message, &mut frame).expect("sized");
            stream.extend_from_slice(&frame[..n]);
            count += 1;
        }
        (stream, count)
    }

    fn reader_role(&self) -> Role {
        if self.masked {
            Role::Server
        } else {
            Role::Client
        }
    }
}

/// ringwire's rings: mirrored, one read's size, room to grow for a frame.
fn rings() -> TransportConfig {
    let ring = RingConfig::with_capacity(READ)
        .max_capacity(4 * READ)
        .backing(Backing::Mirrored);
    TransportConfig { rx: ring, tx: ring }
}

/// ringwire: the ring receives, the reader parses and unmasks in place.
struct RingwireRead {
    rx: RecvTransport<Chunks>,
    reader: Reader,
}

impl RingwireRead {
    fn new(stream: &[u8], role: Role) -> Self {
        let config = rings();
        Self {
            rx: RecvTransport::new(config, Chunks::every(stream, READ)).expect("ring"),
            reader: Reader::new(role, Limits::default(), None),
        }
    }

    /// Reads the whole stream; returns the messages seen.
    fn run(&mut self) -> usize {
        self.rx.get_mut().rewind();
        let mut count = 0;
        loop {
            match self.reader.read(self.rx.ring_mut().readable_mut()) {
                Ok(Status::Complete(message, n)) => {
                    count += usize::from(message.is_some());
                    black_box(&message);
                    self.rx.consume(n);
                }
                Ok(Status::Partial { at_least }) => {
                    if self.rx.fill(at_least).expect("fixture") == 0 {
                        return count;
                    }
                }
                Err(e) => panic!("ringwire: {e}"),
            }
        }
    }
}

/// ringwire's blocking socket, kept across iterations over a fixture that starts again at its
/// end (the stream holds whole messages, so the socket never sees the seam).
struct RingwireSocket(ringwire_ws::blocking::WebSocket<Cycle, Discard>);

impl RingwireSocket {
    fn new(stream: &[u8], role: Role) -> Self {
        let config = rings();
        let rx = RecvTransport::new(config, Cycle(Chunks::every(stream, READ))).expect("ring");
        let tx = ringwire_io::SendTransport::new(config, Discard).expect("ring");
        let conn = ringwire_ws::Connection::new(role, Limits::default(), None).expect("conn");
        Self(ringwire_ws::blocking::WebSocket::from_parts(rx, tx, conn))
    }

    /// Receives `count` messages.
    fn run(&mut self, count: usize) -> usize {
        for _ in 0..count {
            match self.0.recv() {
                Some(Ok((message, _))) => {
                    black_box(&message);
                }
                other => panic!("ringwire socket: {other:?}"),
            }
        }
        count
    }
}

/// ringwire's tokio socket, as [`RingwireSocket`], on a current-thread runtime: what the
/// async `recv` around the same reader costs.
struct RingwireTokioSocket(ringwire_ws::socket::WebSocket<Arc<AsyncCycle>>);

impl RingwireTokioSocket {
    fn new(stream: &[u8], role: Role) -> Self {
        let config = rings();
        let io = Arc::new(AsyncCycle(Mutex::new(Cycle(Chunks::every(stream, READ)))));
        let rx =
            ringwire_io::tokio::AsyncRecvTransport::new(config, Arc::clone(&io)).expect("ring");
        let tx = ringwire_io::tokio::AsyncSendTransport::new(config, io).expect("ring");
        let conn = ringwire_ws::Connection::new(role, Limits::default(), None).expect("conn");
        Self(ringwire_ws::socket::WebSocket::from_parts(rx, tx, conn))
    }

    /// Receives `count` messages.
    fn run(&mut self, rt: &tokio::runtime::Runtime, count: usize) -> usize {
        rt.block_on(async {
            for _ in 0..count {
                match self.0.recv().await {
                    Some(Ok((message, _))) => {
                        black_box(&message);
                    }
                    other => panic!("ringwire tokio socket: {other:?}"),
                }
            }
        });
        count
    }
}

/// [`Cycle`] as a tokio stream: always ready, writes discarded.
struct AsyncCycle(Mutex<Cycle>);

impl ringwire_io::tokio::AsyncStream for AsyncCycle {
    fn readable(&self) -> impl std::future::Future<Output = io::Result<()>> + Send {
        std::future::ready(Ok(()))
    }
    fn try_read(&self, buf: &mut [u8]) -> io::Result<usize> {
        self.0.lock().expect("fixture").read(buf)
    }
    fn writable(&self) -> impl std::future::Future<Output = io::Result<()>> + Send {
        std::future::ready(Ok(()))
    }
    fn try_write(&self, buf: &[u8]) -> io::Result<usize> {
        Ok(buf.len())
    }
    fn try_write_vectored(&self, bufs: &[io::IoSlice<'_>]) -> io::Result<usize> {
        Ok(bufs.iter().map(|b| b.len()).sum())
    }
    fn shutdown_write(&self) -> io::Result<()> {
        Ok(())
    }
}

/// The fixture, from its start again after its end.
struct Cycle(Chunks);

impl Read for Cycle {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self.0.read(buf)? {
            0 => {
                self.0.rewind();
                self.0.read(buf)
            }
            n => Ok(n),
        }
    }
}

/// A sink for the socket's send side (nothing is sent while reading).
struct Discard;

impl Write for Discard {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        Ok(buf.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl ringwire_io::ShutdownWrite for Discard {
    fn shutdown_write(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// The fixture as a socket: reads in 64 KiB pieces, `WouldBlock` at the end, writes discarded.
struct MemStream(Chunks);

impl Read for MemStream {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self.0.read(buf)? {
            0 => Err(io::ErrorKind::WouldBlock.into()),
            n => Ok(n),
        }
    }
}

impl Write for MemStream {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        Ok(buf.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl tokio::io::AsyncRead for MemStream {
    fn poll_read(
        self: Pin<&mut Self>,
        _: &mut Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let n = self.get_mut().0.read(buf.initialize_unfilled())?;
        buf.advance(n);
        Poll::Ready(Ok(()))
    }
}

impl tokio::io::AsyncWrite for MemStream {
    fn poll_write(
        self: Pin<&mut Self>,
        _: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Poll::Ready(Ok(buf.len()))
    }
    fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }
    fn poll_shutdown(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }
}

/// nexus-web: reads messages until the stream ends.
fn nexus_run(reader: &mut nexus_web::ws::FrameReader, stream: &mut Chunks) -> usize {
    stream.rewind();
    reader.reset();
    let mut count = 0;
    loop {
        if reader.poll().expect("nexus-web") {
            black_box(&reader.next().expect("nexus-web"));
            count += 1;
        } else if reader.read_from(stream).expect("nexus-web buffer") == 0 {
            return count;
        }
    }
}

/// tungstenite: reads messages until the stream would block.
fn tungstenite_run(ws: &mut tungstenite::WebSocket<MemStream>) -> usize {
    ws.get_mut().0.rewind();
    let mut count = 0;
    loop {
        match ws.read() {
            Ok(m) => {
                black_box(&m);
                count += 1;
            }
            Err(tungstenite::Error::Io(e)) if e.kind() == io::ErrorKind::WouldBlock => {
                return count
            }
            Err(e) => panic!("tungstenite: {e}"),
        }
    }
}

/// fastwebsockets: reads `count` messages (whole frames, or fragments collected).
fn fastwebsockets_run(
    rt: &tokio::runtime::Runtime,
    stream: &mut Option<MemStream>,
    role: fastwebsockets::Role,
    fragmented: bool,
    count: usize,
) -> usize {
    let mut s = stream.take().expect("stream");
    s.0.rewind();
    let ws = fastwebsockets::WebSocket::after_handshake(s, role);
    rt.block_on(async {
        let ws = if fragmented {
            let mut ws = fastwebsockets::FragmentCollector::new(ws);
            for _ in 0..count {
                black_box(ws.read_frame().await.expect("fastwebsockets").payload.len());
            }
            ws.into_inner()
        } else {
            let mut ws = ws;
            for _ in 0..count {
                black_box(ws.read_frame().await.expect("fastwebsockets").payload.len());
            }
            ws.into_inner()
        };
        *stream = Some(ws);
    });
    count
}

fn bench_read(c: &mut Criterion) {
    let ascii = |len: usize| (0..len).map(|i| b'a' + (i % 26) as u8).collect::<Vec<u8>>();
    let cases = [
        Case {
            name: "40b",
            payload: ascii(40),
            text: false,
            fragments: 1,
            masked: false,
        },
        Case {
            name: "1k",
            payload: ascii(1024),
            text: false,
            fragments: 1,
            masked: false,
        },
        Case {
            name: "64k",
            payload: ascii(64 << 10),
            text: false,
            fragments: 1,
            masked: false,
        },
        Case {
            name: "64k_masked",
            payload: ascii(64 << 10),
            text: false,
            fragments: 1,
            masked: true,
        },
        Case {
            name: "1k_text_8_fragments",
            payload: ascii(1024),
            text: true,
            fragments: 8,
            masked: false,
        },
    ];
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("runtime");
    for case in cases {
        let (stream, count) = case.stream();
        let mut group = c.benchmark_group(format!("ws/read/{}", case.name));
        group.throughput(Throughput::Elements(count as u64));

        let mut ringwire = RingwireRead::new(&stream, case.reader_role());
        assert_eq!(ringwire.run(), count);
        group.bench_function("ringwire", |b| b.iter(|| ringwire.run()));

        let mut socket = RingwireSocket::new(&stream, case.reader_role());
        group.bench_function("ringwire_socket", |b| b.iter(|| socket.run(count)));

        let mut tokio_socket = RingwireTokioSocket::new(&stream, case.reader_role());
        group.bench_function("ringwire_tokio_socket", |b| {
            b.iter(|| tokio_socket.run(&rt, count))
        });

        let mut nexus = nexus_web::ws::FrameReader::builder()
            .role(match case.reader_role() {
                Role::Server => nexus_web::ws::Role::Server,
                Role::Client => nexus_web::ws::Role::Client,
            })
            .build();
        let mut chunks = Chunks::every(&stream, READ);
        assert_eq!(nexus_run(&mut nexus, &mut chunks), count);
        group.bench_function("nexus-web", |b| {
            b.iter(|| nexus_run(&mut nexus, &mut chunks))
        });

        let role = match case.reader_role() {
            Role::Server => tungstenite::protocol::Role::Server,
            Role::Client => tungstenite::protocol::Role::Client,
        };
        let mut ws = tungstenite::WebSocket::from_raw_socket(
            MemStream(Chunks::every(&stream, READ)),
            role,
            None,
        );
        assert_eq!(tungstenite_run(&mut ws), count);
        group.bench_function("tungstenite", |b| b.iter(|| tungstenite_run(&mut ws)));

        let role = match case.reader_role() {
            Role::Server => fastwebsockets::Role::Server,
            Role::Client => fastwebsockets::Role::Client,
        };
        let mut fws = Some(MemStream(Chunks::every(&stream, READ)));
        let fragmented = case.fragments > 1;
        assert_eq!(
            fastwebsockets_run(&rt, &mut fws, role, fragmented, count),
            count
        );
        group.bench_function("fastwebsockets", |b| {
            b.iter(|| fastwebsockets_run(&rt, &mut fws, role, fragmented, count))
        });
        group.finish();
    }
}

criterion_group! {
    name = benches;
    config = common::short_criterion();
    targets = bench_read
}
criterion_main!(benches);
