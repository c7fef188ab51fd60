//! The io_uring driver over real loopback sockets: many connections echoed through their
//! rings, growth past the ring's size and past its bound, short sends finished by the driver,
//! and rings kept from the caller (and from the heap) while the kernel holds them, even
//! across a close or the driver's drop.
#![cfg(all(feature = "uring", target_os = "linux"))]

use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::thread;
use std::time::Duration;

use ringwire_io::uring::{Conn, Driver, Event, Op};
use ringwire_io::TransportConfig;

/// Rings of 4 KiB that may grow to 64 KiB.
fn small() -> TransportConfig {
    TransportConfig::new(4096, 64 << 10)
}

/// A connected pair: the driver's end registered, the other a plain socket.
fn pair(driver: &mut Driver) -> (Conn, TcpStream) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let peer = TcpStream::connect(listener.local_addr().unwrap()).unwrap();
    let (ours, _) = listener.accept().unwrap();
    (driver.register(ours).unwrap(), peer)
}

/// Waits for events until `done` says so, with a bound so a lost completion fails the test.
fn until(driver: &mut Driver, mut done: impl FnMut(&mut Driver, Event) -> bool) {
    for _ in 0..10_000 {
        driver.wait(Some(Duration::from_millis(10))).unwrap();
        while let Some(event) = driver.next_event() {
            if done(driver, event) {
                return;
            }
        }
    }
    panic!("no such event within 100 s");
}

/// Echoes everything every connection sends until all `clients` have closed.
fn echo_server(driver: &mut Driver, clients: usize) {
    let mut closed = 0;
    until(driver, |driver, event| {
        match event {
            Event::Accepted(conn) => driver.recv(conn, 1).unwrap(),
            Event::Received(conn, 0) => driver.close(conn).unwrap(),
            Event::Received(conn, _) | Event::Sent(conn) => echo(driver, conn),
            Event::Failed(conn, op, e) => panic!("{conn:?} {op:?}: {e}"),
            Event::AcceptFailed(e) => panic!("accept: {e}"),
            Event::Connected(conn) => panic!("{conn:?}: connected to nothing"),
            Event::Closed { .. } => closed += 1,
        }
        closed == clients
    });
}

/// Moves what was received to the send ring (unless a send holds it) and lends both again.
fn echo(driver: &mut Driver, conn: Conn) {
    let rings = driver.rings(conn).unwrap();
    let (Some(rx), Some(tx)) = (rings.rx, rings.tx) else {
        return;
    };
    let data = rx.readable();
    let n = data.len();
    tx.reserve(n).unwrap()[..n].copy_from_slice(data);
    tx.commit(n);
    rx.consume(n);
    driver.send(conn).unwrap();
    driver.recv(conn, 1).unwrap();
}

#[test]
fn many_connections_are_echoed_byte_for_byte() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let mut driver = Driver::new(64, small()).unwrap();
    driver.listen(listener).unwrap();
    const CLIENTS: usize = 40;
    let clients: Vec<_> = (0..CLIENTS)
        .map(|c| {
            thread::spawn(move || {
                let mut socket = TcpStream::connect(addr).unwrap();
                // Sizes from 1 byte to past the ring's starting size, each message distinct.
                for i in 0..200usize {
                    let len = 1 + (i * 97 + c * 13) % 6000;
                    let message: Vec<u8> = (0..len).map(|j| (i + j + c) as u8).collect();
                    socket.write_all(&message).unwrap();
                    let mut back = vec![0; len];
                    socket.read_exact(&mut back).unwrap();
                    assert_eq!(back, message, "client {c}, message {i}");
                }
                socket.shutdown(Shutdown::Write).unwrap();
                let mut rest = Vec::new();
                socket.read_to_end(&mut rest).unwrap();
                assert!(rest.is_empty());
            })
        })
        .collect();
    echo_server(&mut driver, CLIENTS);
    for client in clients {
        client.join().unwrap();
    }
}

#[test]
fn a_message_larger_than_the_ring_grows_it_and_one_past_the_bound_is_a_typed_error() {
    let mut driver = Driver::new(8, small()).unwrap();
    let (conn, mut peer) = pair(&mut driver);
    // A 40 KiB message: ten times the ring, within its 64 KiB bound.
    let message: Vec<u8> = (0..40 << 10).map(|i: usize| (i % 251) as u8).collect();
    let writer = {
        let message = message.clone();
        thread::spawn(move || peer.write_all(&message).map(|()| peer))
    };
    driver.recv(conn, message.len()).unwrap();
    until(&mut driver, |driver, event| {
        let Event::Received(conn, n) = event else {
            panic!("{event:?}");
        };
        assert!(n > 0);
        let rx = driver.rings(conn).unwrap().rx.unwrap();
        if rx.len() < message.len() {
            driver.recv(conn, message.len()).unwrap();
            return false;
        }
        assert_eq!(rx.readable(), &message[..]);
        assert!(rx.capacity() >= message.len());
        rx.consume(message.len());
        true
    });
    let _peer = writer.join().unwrap().unwrap();
    let error = driver.recv(conn, 100 << 10).unwrap_err();
    assert!(error.is_too_large(), "{error}");
    // The connection still works at its size.
    driver.recv(conn, 1).unwrap();
}

#[test]
fn a_lent_ring_is_out_of_reach_until_its_completion() {
    let mut driver = Driver::new(8, small()).unwrap();
    let (conn, mut peer) = pair(&mut driver);
    driver.recv(conn, 1).unwrap();
    driver.wait(Some(Duration::from_millis(20))).unwrap();
    assert!(driver.next_event().is_none());
    let rings = driver.rings(conn).unwrap();
    assert!(rings.rx.is_none(), "the receive ring is the kernel's");
    assert!(rings.tx.is_some());
    let busy = driver.recv(conn, 1).unwrap_err();
    assert!(busy.to_string().contains("in flight"), "{busy}");
    peer.write_all(b"ping").unwrap();
    until(
        &mut driver,
        |_, event| matches!(event, Event::Received(c, 4) if c == conn),
    );
    assert_eq!(driver.rings(conn).unwrap().rx.unwrap().readable(), b"ping");
}

#[test]
fn a_send_larger_than_the_socket_takes_is_finished_by_the_driver() {
    let config = TransportConfig::new(4096, 16 << 20);
    let mut driver = Driver::new(8, config).unwrap();
    let (conn, mut peer) = pair(&mut driver);
    // 8 MiB: far more than loopback's socket buffers take at once, so the kernel's sends come
    // back short while the peer reads slowly.
    let message: Vec<u8> = (0..8 << 20).map(|i: usize| (i % 253) as u8).collect();
    let tx = driver.rings(conn).unwrap().tx.unwrap();
    tx.reserve(message.len()).unwrap()[..message.len()].copy_from_slice(&message);
    tx.commit(message.len());
    driver.send(conn).unwrap();
    let reader = thread::spawn(move || {
        let mut got = vec![0; 8 << 20];
        for piece in got.chunks_mut(1 << 20) {
            thread::sleep(Duration::from_millis(5));
            peer.read_exact(piece).unwrap();
        }
        got
    });
    until(
        &mut driver,
        |_, event| matches!(event, Event::Sent(c) if c == conn),
    );
    assert!(driver.rings(conn).unwrap().tx.unwrap().is_empty());
    assert_eq!(reader.join().unwrap(), message);
}

#[test]
fn closing_with_a_receive_in_flight_waits_for_it_then_closes_the_socket() {
    let mut driver = Driver::new(8, small()).unwrap();
    let (conn, mut peer) = pair(&mut driver);
    driver.recv(conn, 1).unwrap();
    driver.close(conn).unwrap();
    // Closing: stale for the caller at once, the socket kept until the kernel lets go.
    assert!(driver.rings(conn).is_none());
    assert!(driver.recv(conn, 1).is_err());
    until(&mut driver, |_, event| match event {
        Event::Closed {
            conn: closed, rx, ..
        } => {
            assert_eq!(closed, conn);
            assert_eq!(rx.capacity(), 4096, "the rings come back");
            true
        }
        other => panic!("{other:?}"),
    });
    peer.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    assert_eq!(
        peer.read(&mut [0; 8]).unwrap(),
        0,
        "the peer sees the close"
    );
    // The slot is reused; the old handle stays stale.
    let (again, _peer) = pair(&mut driver);
    assert_ne!(again, conn);
    assert_eq!(
        again.index(),
        conn.index(),
        "the slot, and so the index, is reused"
    );
    assert!(driver.rings(conn).is_none());
    assert!(driver.rings(again).is_some());
}

#[test]
fn the_peer_finishing_is_a_zero_length_receive_and_a_reset_a_failure() {
    let mut driver = Driver::new(8, small()).unwrap();
    let (conn, peer) = pair(&mut driver);
    driver.recv(conn, 1).unwrap();
    peer.shutdown(Shutdown::Write).unwrap();
    until(
        &mut driver,
        |_, event| matches!(event, Event::Received(c, 0) if c == conn),
    );

    let (conn, peer) = pair(&mut driver);
    // Unread data at close makes the kernel reset the connection.
    let tx = driver.rings(conn).unwrap().tx.unwrap();
    tx.reserve(3).unwrap()[..3].copy_from_slice(b"hey");
    tx.commit(3);
    driver.send(conn).unwrap();
    until(&mut driver, |_, event| matches!(event, Event::Sent(_)));
    drop(peer);
    thread::sleep(Duration::from_millis(20));
    driver.recv(conn, 1).unwrap();
    until(&mut driver, |_, event| match event {
        Event::Failed(c, Op::Recv, e) => {
            assert_eq!(c, conn);
            assert_eq!(e.kind(), std::io::ErrorKind::ConnectionReset, "{e}");
            true
        }
        Event::Received(_, 0) => panic!("a reset, not an orderly close"),
        _ => false,
    });
}

#[test]
fn waiting_with_nothing_in_flight_returns_at_once() {
    let mut driver = Driver::new(8, small()).unwrap();
    let (conn, mut peer) = pair(&mut driver);
    driver.wait(None).unwrap();
    assert!(driver.next_event().is_none());
    // Once something is lent, waiting waits for it.
    driver.recv(conn, 1).unwrap();
    let writer = thread::spawn(move || {
        thread::sleep(Duration::from_millis(50));
        peer.write_all(b"late").unwrap();
        peer
    });
    driver.wait(None).unwrap();
    assert!(matches!(driver.next_event(), Some(Event::Received(c, 4)) if c == conn));
    let _peer = writer.join().unwrap();
    driver.wait(None).unwrap();
}

#[test]
fn dropping_the_driver_with_receives_in_flight_waits_for_the_kernel() {
    let mut peers = Vec::new();
    let mut driver = Driver::new(8, small()).unwrap();
    for _ in 0..20 {
        let (conn, peer) = pair(&mut driver);
        driver.recv(conn, 1).unwrap();
        peers.push(peer);
    }
    driver.wait(Some(Duration::from_millis(1))).unwrap();
    // Data racing the drop: whatever lands, lands in rings that are still alive.
    let writers: Vec<_> = peers
        .into_iter()
        .map(|mut peer| {
            thread::spawn(move || {
                let _ = peer.write_all(&[7; 1000]);
                peer
            })
        })
        .collect();
    drop(driver);
    for writer in writers {
        let mut peer = writer.join().unwrap();
        peer.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        // Closed by the drop: end of stream, or a reset if our bytes were unread.
        assert!(matches!(peer.read(&mut [0; 8]), Ok(0) | Err(_)));
    }
}

/// A connect the driver makes: no transfer until it is made, then both ways.
#[test]
fn connects_then_talks() {
    let mut driver = Driver::new(8, small()).unwrap();
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let conn = driver.connect(listener.local_addr().unwrap()).unwrap();
    // Queued, not yet submitted: certainly not made.
    assert!(driver.recv(conn, 1).is_err());
    assert!(driver.send(conn).is_err());
    until(&mut driver, |_, event| match event {
        Event::Connected(c) => c == conn,
        other => panic!("{other:?}"),
    });
    let (mut peer, _) = listener.accept().unwrap();
    let tx = driver.rings(conn).unwrap().tx.unwrap();
    tx.reserve(5).unwrap()[..5].copy_from_slice(b"hello");
    tx.commit(5);
    driver.send(conn).unwrap();
    driver.recv(conn, 1).unwrap();
    until(&mut driver, |_, event| match event {
        Event::Sent(c) => c == conn,
        other => panic!("{other:?}"),
    });
    let mut got = [0; 5];
    peer.read_exact(&mut got).unwrap();
    assert_eq!(&got, b"hello");
    peer.write_all(b"world").unwrap();
    let mut received = 0;
    until(&mut driver, |_, event| match event {
        Event::Received(c, n) => {
            assert_eq!(c, conn);
            received += n;
            true
        }
        other => panic!("{other:?}"),
    });
    assert_eq!(received, 5);
    assert_eq!(driver.rings(conn).unwrap().rx.unwrap().readable(), b"world");
}

/// A refused connect is an error of its connection, which closes as any other.
#[test]
fn a_refused_connect_fails_its_connection() {
    let mut driver = Driver::new(8, small()).unwrap();
    let gone = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap();
    let conn = driver.connect(gone).unwrap();
    until(&mut driver, |driver, event| match event {
        Event::Failed(c, Op::Connect, e) => {
            assert_eq!((c, e.kind()), (conn, std::io::ErrorKind::ConnectionRefused));
            driver.close(conn).unwrap();
            false
        }
        Event::Closed { conn: c, rx, tx } => {
            assert_eq!(c, conn);
            assert!(rx.capacity() > 0 && tx.capacity() > 0);
            true
        }
        other => panic!("{other:?}"),
    });
    assert!(driver.rings(conn).is_none());
}

/// Closing a connection whose connect is still under way (its SYN unanswered: the listener's
/// queue is full) cancels the connect and hands the rings back.
#[test]
fn closing_cancels_a_connect_under_way() {
    let listener =
        socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None).unwrap();
    listener
        .bind(
            &"127.0.0.1:0"
                .parse::<std::net::SocketAddr>()
                .unwrap()
                .into(),
        )
        .unwrap();
    listener.listen(0).unwrap();
    let addr = listener.local_addr().unwrap().as_socket().unwrap();
    // Fill the accept queue; the kernel drops SYNs past it.
    let fillers: Vec<socket2::Socket> = (0..4)
        .map(|_| {
            let s =
                socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None).unwrap();
            s.set_nonblocking(true).unwrap();
            let _ = s.connect(&addr.into());
            s
        })
        .collect();
    thread::sleep(Duration::from_millis(50));
    let mut driver = Driver::new(8, small()).unwrap();
    let conn = driver.connect(addr).unwrap();
    driver.wait(Some(Duration::from_millis(200))).unwrap();
    assert!(
        driver.next_event().is_none(),
        "the connect ended on its own"
    );
    driver.close(conn).unwrap();
    let mut closed = false;
    until(&mut driver, |_, event| match event {
        Event::Closed { conn: c, .. } => {
            closed = c == conn;
            true
        }
        other => panic!("{other:?}"),
    });
    assert!(closed);
    drop(fillers);
}
