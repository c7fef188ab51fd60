//! The blocking socket (feature `blocking`) as a client of tungstenite's
//! echo server over loopback TCP: every length encoding, both types, the
//! large-message paths, a ping, and the closing handshake.

use ringwire_ws::handshake::Offer;
use std::net::{TcpListener, TcpStream};
use std::thread;

use ringwire_io::{Duplex, TransportConfig};
use ringwire_ws::blocking::WebSocket;
use ringwire_ws::{CloseCode, DeflateConfig, Limits, Message, State};
use tungstenite::Message as TMessage;

/// tungstenite's echo server for one connection: echoes data, answers
/// pings and closes by itself.
fn tungstenite_echo() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = listener.local_addr().expect("addr").to_string();
    thread::spawn(move || {
        let (stream, _) = listener.accept().expect("accept");
        let mut ws = tungstenite::accept(stream).expect("handshake");
        loop {
            match ws.read() {
                Ok(m @ (TMessage::Text(_) | TMessage::Binary(_))) => ws.send(m).expect("echo"),
                Ok(_) => {}
                Err(tungstenite::Error::ConnectionClosed) => return,
                Err(e) => panic!("tungstenite server: {e}"),
            }
        }
    });
    addr
}

#[test]
fn the_blocking_client_against_tungstenite() {
    let addr = tungstenite_echo();
    let stream = TcpStream::connect(&addr).expect("connect");
    let Duplex { rx, tx } =
        Duplex::tcp(TransportConfig::new(64 << 10, 32 << 20), &stream).expect("rings");
    // tungstenite declines permessage-deflate: the offer must not matter.
    let (mut socket, negotiated) = WebSocket::connect(
        rx,
        tx,
        &addr,
        "/",
        &Offer {
            deflate: Some(DeflateConfig::default()),
            ..Offer::default()
        },
        Limits::default(),
    )
    .expect("handshake");
    assert_eq!(negotiated.deflate, None);
    let text = "κόσμε € 𝄞 ".repeat(20_000);
    for len in [0, 1, 125, 126, 65_535, 65_536, 70_000, 1 << 20, 16 << 20] {
        let bytes: Vec<u8> = (0..len).map(|i| (i * 31 % 253) as u8).collect();
        let mut end = len.min(text.len());
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        for message in [Message::Binary(&bytes), Message::Text(&text[..end])] {
            socket.send(&message).expect("send");
            let (echoed, _) = socket.recv().expect("open").expect("echo");
            assert!(echoed == message, "{len} B: the echo differs");
        }
    }
    // Sent as 16 KiB frames, the large ones too: tungstenite reassembles them.
    socket.set_fragment_size(std::num::NonZeroUsize::new(16 << 10));
    let bytes: Vec<u8> = (0..1 << 20).map(|i| (i * 7 % 251) as u8).collect();
    for message in [Message::Binary(&bytes), Message::Text(&text)] {
        socket.send(&message).expect("send fragmented");
        let (echoed, _) = socket.recv().expect("open").expect("echo");
        assert!(echoed == message, "a fragmented message's echo differs");
    }
    socket.set_fragment_size(None);
    socket.send(&Message::Text(&text)).expect("send");
    assert_eq!(
        socket.recv().expect("open").expect("echo").0,
        Message::Text(&text)
    );
    socket.send(&Message::Ping(b"there?")).expect("ping");
    assert_eq!(
        socket.recv().expect("open").expect("pong").0,
        Message::Pong(b"there?")
    );
    socket.close(CloseCode::NORMAL, "done").expect("close");
    assert_eq!(socket.state(), State::CloseSent);
    // The handshake is under way: a second close starts nothing and sends nothing.
    socket
        .close(CloseCode::GOING_AWAY, "again")
        .expect("a second close");
    let mut closes = 0;
    while let Some(received) = socket.recv() {
        match received.expect("closing handshake") {
            (Message::Close(_), _) => closes += 1,
            (other, _) => panic!("after close: {other:?}"),
        }
    }
    assert_eq!(closes, 1, "the server's close arrives once");
    assert_eq!(socket.state(), State::Closed);
}

/// A close after the server's own (the race a program meets when its input ends as the
/// server closes) is no error: the socket has answered the server already.
#[test]
fn closing_after_the_server_closed_is_no_error() {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = listener.local_addr().expect("addr").to_string();
    let server = thread::spawn(move || {
        let (stream, _) = listener.accept().expect("accept");
        let mut ws = tungstenite::accept(stream).expect("handshake");
        ws.close(None).expect("close");
        // Reads until the client's answer ends the handshake; a second close frame
        // from the client would be a protocol error here.
        loop {
            match ws.read() {
                Ok(_) => {}
                Err(tungstenite::Error::ConnectionClosed) => return,
                Err(e) => panic!("tungstenite server: {e}"),
            }
        }
    });
    let stream = TcpStream::connect(&addr).expect("connect");
    let Duplex { rx, tx } =
        Duplex::tcp(TransportConfig::new(64 << 10, 1 << 20), &stream).expect("rings");
    let (mut socket, _) =
        WebSocket::connect(rx, tx, &addr, "/", &Offer::default(), Limits::default())
            .expect("handshake");
    match socket.recv() {
        Some(Ok((Message::Close(_), _))) => {}
        other => panic!("expected the server's close, got {other:?}"),
    }
    assert_ne!(socket.state(), State::Open);
    socket
        .close(CloseCode::NORMAL, "bye")
        .expect("close after the server's");
    while let Some(received) = socket.recv() {
        received.expect("the end of the handshake");
    }
    assert_eq!(socket.state(), State::Closed);
    server.join().expect("the server saw one close");
}

#[test]
fn a_refused_upgrade_is_a_handshake_error() {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = listener.local_addr().expect("addr").to_string();
    thread::spawn(move || {
        use std::io::{Read as _, Write as _};
        let (mut stream, _) = listener.accept().expect("accept");
        let mut head = [0; 1024];
        let _ = stream.read(&mut head);
        let _ = stream.write_all(b"HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\n\r\n");
    });
    let stream = TcpStream::connect(&addr).expect("connect");
    let Duplex { rx, tx } =
        Duplex::tcp(TransportConfig::new(4 << 10, 64 << 10), &stream).expect("rings");
    let refused = WebSocket::connect(rx, tx, &addr, "/", &Offer::default(), Limits::default());
    assert!(
        matches!(
            refused,
            Err(ringwire_ws::blocking::SocketError::Handshake(_))
        ),
        "{refused:?}"
    );
}

/// A tungstenite server for one connection that runs `send` after the handshake, then
/// reads until the client's close: its address, and the close code it got.
fn closing_peer(
    send: impl FnOnce(&mut tungstenite::WebSocket<TcpStream>) + Send + 'static,
) -> (String, thread::JoinHandle<Option<u16>>) {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = listener.local_addr().expect("addr").to_string();
    let peer = thread::spawn(move || {
        let (stream, _) = listener.accept().expect("accept");
        let mut ws = tungstenite::accept(stream).expect("handshake");
        send(&mut ws);
        loop {
            match ws.read() {
                Ok(TMessage::Close(frame)) => return frame.map(|f| u16::from(f.code)),
                Ok(_) => {}
                Err(e) => panic!("no close frame: {e}"),
            }
        }
    });
    (addr, peer)
}

/// Limits that allow more than the transport's receive ring may hold: the limits rule. A
/// frame within them grows the ring past its configured bound; one past them is refused
/// with a 1009 close the peer sees.
#[test]
fn the_limits_not_the_ring_bound_decide_what_fits() {
    let (addr, peer) = closing_peer(|ws| {
        ws.send(TMessage::binary(vec![7u8; 1 << 20])).expect("send");
        ws.send(TMessage::binary(vec![8u8; (2 << 20) + 1]))
            .expect("send");
    });
    let stream = TcpStream::connect(&addr).expect("connect");
    let Duplex { rx, tx } =
        Duplex::tcp(TransportConfig::new(64 << 10, 256 << 10), &stream).expect("rings");
    let limits = Limits {
        max_frame_len: 2 << 20,
        max_message_len: 2 << 20,
    };
    let (mut socket, _) =
        WebSocket::connect(rx, tx, &addr, "/", &Offer::default(), limits).expect("handshake");
    match socket.recv() {
        Some(Ok((Message::Binary(b), _))) => {
            assert!(b.len() == 1 << 20 && b.iter().all(|&x| x == 7))
        }
        other => panic!("the 1 MiB frame: {other:?}"),
    }
    let err = socket.recv().expect("an error").unwrap_err();
    assert!(err.to_string().contains("1009"), "{err}");
    // The peer may still be writing the refused frame: the socket read and dropped it
    // until the peer closed, so closing now resets nothing under the close frame.
    drop(socket);
    drop(stream);
    assert_eq!(peer.join().unwrap(), Some(1009));
}

#[test]
fn a_whole_text_frame_that_is_not_utf8_fails_with_1007() {
    use std::io::Write as _;
    let (addr, peer) = closing_peer(|ws| {
        ws.send(TMessage::text("fine")).expect("send");
        // A whole, unfragmented text frame (the sockets' inline path) of bad UTF-8.
        ws.get_mut().write_all(b"\x81\x02\xc3\x28").expect("write");
    });
    let stream = TcpStream::connect(&addr).expect("connect");
    let Duplex { rx, tx } =
        Duplex::tcp(TransportConfig::new(64 << 10, 64 << 10), &stream).expect("rings");
    let (mut socket, _) =
        WebSocket::connect(rx, tx, &addr, "/", &Offer::default(), Limits::default())
            .expect("handshake");
    match socket.recv() {
        Some(Ok((Message::Text("fine"), _))) => {}
        other => panic!("the valid message: {other:?}"),
    }
    let err = socket.recv().expect("an error").unwrap_err();
    assert!(err.to_string().contains("UTF-8"), "{err}");
    assert_eq!(socket.recv().map(|r| r.is_ok()), None);
    drop(socket);
    drop(stream);
    assert_eq!(peer.join().unwrap(), Some(1007));
}
