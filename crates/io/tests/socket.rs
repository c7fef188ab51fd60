//! Transports over real loopback sockets (blocking std and tokio) and the in-memory pipe.

mod common;

use std::io::Read;
use std::net::{TcpListener, TcpStream};

use common::{frames, within};
use ringwire_io::{Duplex, RecvTransport, SendTransport, TransportConfig};
use ringwire_wire::{run, Control, Finish, LengthPrefixed};

fn loopback() -> (TcpStream, TcpStream) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let client = TcpStream::connect(listener.local_addr().unwrap()).unwrap();
    let (server, _) = listener.accept().unwrap();
    (client, server)
}

fn collect(rx: &mut RecvTransport<impl Read>) -> (Vec<Vec<u8>>, Finish) {
    let mut out = Vec::new();
    let finish = run(rx, &mut LengthPrefixed::default(), |body| {
        out.push(body.to_vec());
        Control::Continue
    })
    .unwrap();
    (out, finish)
}

#[test]
fn reserve_commit_flush_over_tcp() {
    within(20, || {
        let (client, server) = loopback();
        let sizes: Vec<usize> = (0..2000).map(|i| (i * 37) % 5000).collect();
        let expected = sizes.clone();
        let writer = std::thread::spawn(move || {
            let mut tx = SendTransport::new(TransportConfig::new(4096, 1 << 20), client).unwrap();
            for (i, &size) in sizes.iter().enumerate() {
                let span = tx.reserve(4 + size).unwrap();
                span[..4].copy_from_slice(&(size as u32).to_be_bytes());
                span[4..4 + size]
                    .iter_mut()
                    .enumerate()
                    .for_each(|(j, b)| *b = (i + j) as u8);
                tx.commit(4 + size);
            }
            tx.shutdown_write().unwrap();
        });
        let mut rx = RecvTransport::new(TransportConfig::new(4096, 1 << 20), server).unwrap();
        let (got, finish) = collect(&mut rx);
        writer.join().unwrap();
        assert_eq!(finish, Finish::Eof);
        assert_eq!(got.iter().map(Vec::len).collect::<Vec<_>>(), expected);
        assert!(got[3] == (0..expected[3]).map(|j| (3 + j) as u8).collect::<Vec<_>>());
    });
}

#[test]
fn vectored_send_of_many_slices_over_tcp() {
    within(20, || {
        let (client, server) = loopback();
        // More slices than one writev batch, and more bytes than a socket buffer holds.
        let wire = frames(&(0..300).map(|i| i * 17).collect::<Vec<_>>());
        let expected = wire.clone();
        let writer = std::thread::spawn(move || {
            let mut tx = SendTransport::new(TransportConfig::default(), client).unwrap();
            tx.write(b"").unwrap();
            let slices: Vec<&[u8]> = wire.chunks(1013).collect();
            tx.write(slices[0]).unwrap(); // queued bytes go first
            tx.send_vectored(&slices[1..]).unwrap();
            assert_eq!(tx.pending(), 0);
            tx.shutdown_write().unwrap();
        });
        let mut received = Vec::new();
        let mut server = server;
        server.read_to_end(&mut received).unwrap();
        writer.join().unwrap();
        assert!(received == expected, "gathered bytes differ");
    });
}

#[test]
fn duplex_echo_over_tcp_and_pipe() {
    fn echo<R: Read, W: std::io::Write + ringwire_io::ShutdownWrite>(mut end: Duplex<R, W>) {
        let Duplex { rx, tx } = &mut end;
        run(rx, &mut LengthPrefixed::default(), |body| {
            let span = tx.reserve(4 + body.len()).unwrap();
            span[..4].copy_from_slice(&(body.len() as u32).to_be_bytes());
            span[4..4 + body.len()].copy_from_slice(body);
            tx.commit(4 + body.len());
            tx.flush().unwrap();
            Control::Continue
        })
        .unwrap();
        tx.shutdown_write().unwrap();
    }
    fn client<R: Read, W: std::io::Write + ringwire_io::ShutdownWrite>(mut end: Duplex<R, W>) {
        let wire = frames(&[3, 70_000, 0, 12]);
        end.tx.write(&wire).unwrap();
        end.tx.shutdown_write().unwrap();
        let (got, finish) = collect(&mut end.rx);
        assert_eq!(finish, Finish::Eof);
        assert_eq!(
            got.iter().map(Vec::len).collect::<Vec<_>>(),
            [3, 70_000, 0, 12]
        );
    }
    within(20, || {
        let config = TransportConfig::new(4096, 1 << 20);
        let (a, b) = Duplex::pipe(config).unwrap();
        let server = std::thread::spawn(move || echo(b));
        client(a);
        server.join().unwrap();

        let (c, s) = loopback();
        let server = std::thread::spawn(move || echo(Duplex::tcp(config, &s).unwrap()));
        client(Duplex::tcp(config, &c).unwrap());
        server.join().unwrap();
    });
}

#[test]
fn pipe_write_after_peer_dropped_is_broken_pipe() {
    let (a, b) = Duplex::pipe(TransportConfig::new(4096, 4096)).unwrap();
    drop(b);
    let mut a = a;
    a.tx.write(b"hello").unwrap();
    let err = a.tx.flush().unwrap_err();
    assert!(
        err.to_string().contains("Broken pipe") || err.to_string().contains("broken pipe"),
        "{err}"
    );
}

#[cfg(feature = "tokio")]
#[tokio::test]
async fn tokio_duplex_streams_frames_and_grows() {
    use ringwire_io::tokio::{AsyncDuplex, AsyncRecvTransport, AsyncSendTransport};
    use ringwire_wire::run_async;

    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let config = TransportConfig::new(4096, 1 << 20);
    let sizes = [5usize, 200_000, 0, 64, 9000];
    let server = tokio::spawn(async move {
        let (stream, _) = listener.accept().await.unwrap();
        let mut end = AsyncDuplex::new(config, &stream).unwrap();
        let mut bodies = Vec::new();
        let finish = run_async(&mut end.rx, &mut LengthPrefixed::default(), |body| {
            bodies.push(body.to_vec());
            Control::Continue
        })
        .await
        .unwrap();
        assert_eq!(finish, Finish::Eof);
        // Echo them back in one gathered write.
        let mut wire = Vec::new();
        for body in &bodies {
            wire.push((body.len() as u32).to_be_bytes().to_vec());
            wire.push(body.clone());
        }
        let slices: Vec<&[u8]> = wire.iter().map(Vec::as_slice).collect();
        end.tx.send_vectored(&slices).await.unwrap();
        end.tx.shutdown_write().await.unwrap();
    });
    let stream = std::sync::Arc::new(tokio::net::TcpStream::connect(addr).await.unwrap());
    let mut tx = AsyncSendTransport::new(config, stream.clone()).unwrap();
    let wire = frames(&sizes);
    for piece in wire.chunks(3000) {
        tx.write(piece).await.unwrap();
    }
    tx.shutdown_write().await.unwrap();
    let mut rx = AsyncRecvTransport::new(config, stream).unwrap();
    let mut got = Vec::new();
    run_async(&mut rx, &mut LengthPrefixed::default(), |body| {
        got.push(body.to_vec());
        Control::Continue
    })
    .await
    .unwrap();
    server.await.unwrap();
    assert_eq!(got.iter().map(Vec::len).collect::<Vec<_>>(), sizes);
    assert!(got[1] == (0..200_000).map(|j| (1 + j) as u8).collect::<Vec<_>>());
}

#[cfg(feature = "tokio")]
#[tokio::test]
async fn tokio_spliced_send_puts_each_slice_in_its_place() {
    use ringwire_io::tokio::AsyncSendTransport;
    use tokio::io::AsyncReadExt;

    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let reader = tokio::spawn(async move {
        let (mut stream, _) = listener.accept().await.unwrap();
        let mut got = Vec::new();
        stream.read_to_end(&mut got).await.unwrap();
        got
    });
    let stream = std::sync::Arc::new(tokio::net::TcpStream::connect(addr).await.unwrap());
    let mut tx = AsyncSendTransport::new(TransportConfig::new(4096, 1 << 20), stream).unwrap();
    // More than a socket buffer takes at once, so the send waits for the reader midway.
    let big: Vec<u8> = (0..3_000_000u32).map(|i| (i % 251) as u8).collect();
    let slices: [&[u8]; 4] = [b"one", b"", &big, b"four"];
    tx.write(b"0123456789").await.unwrap();
    tx.send_spliced(&[0, 4, 4, 10], &slices).await.unwrap();
    assert_eq!(tx.pending(), 0);
    tx.shutdown_write().await.unwrap();
    let mut expected = b"one0123".to_vec();
    expected.extend_from_slice(&big);
    expected.extend_from_slice(b"456789four");
    let got = reader.await.unwrap();
    assert!(
        got == expected,
        "spliced bytes differ ({} received)",
        got.len()
    );
}

#[cfg(feature = "tokio")]
#[tokio::test]
async fn tokio_ring_goes_back_to_the_pool_while_idle() {
    use ringwire_io::tokio::{AsyncRecvTransport, AsyncSendTransport};
    use ringwire_io::{RingConfig, RingPool};
    use tokio::io::AsyncWriteExt;

    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let mut client = tokio::net::TcpStream::connect(listener.local_addr().unwrap())
        .await
        .unwrap();
    let (stream, _) = listener.accept().await.unwrap();
    let pool = RingPool::new(RingConfig::with_capacity(4096), 2);

    client.write_all(b"one").await.unwrap();
    stream.readable().await.unwrap();
    let mut rx = AsyncRecvTransport::with_ring(pool.take().unwrap(), &stream);
    assert_eq!(rx.try_fill(1).unwrap(), Some(3));
    assert_eq!(rx.data(), b"one");
    rx.consume(3);
    // Nothing more: no wait, and the readiness is cleared.
    assert_eq!(rx.try_fill(1).unwrap(), None);
    let (ring, _) = rx.into_parts();
    pool.give(ring);
    assert_eq!(pool.idle(), 1);
    let tx = AsyncSendTransport::with_ring(pool.take().unwrap(), &stream);
    let (ring, _) = tx.into_parts();
    pool.give(ring);

    // Idle with no ring: the readable wait sleeps until the peer sends.
    let waited = tokio::time::timeout(std::time::Duration::from_millis(50), stream.readable());
    assert!(
        waited.await.is_err(),
        "stale readiness after try_fill said None"
    );
    client.write_all(b"two").await.unwrap();
    stream.readable().await.unwrap();
    let mut rx = AsyncRecvTransport::with_ring(pool.take().unwrap(), &stream);
    assert_eq!(pool.idle(), 0);
    assert_eq!(rx.try_fill(1).unwrap(), Some(3));
    assert_eq!(rx.data(), b"two");
    drop(client);
    rx.consume(3);
    stream.readable().await.unwrap();
    assert_eq!(rx.try_fill(1).unwrap(), Some(0));
}
