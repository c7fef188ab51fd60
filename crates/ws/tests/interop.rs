//! Against real peers over loopback TCP, each as the client of a ringwire-ws echo server and
//! as the echo server of a ringwire-ws client. ringwire runs on the blocking `ringwire-io`
//! transports, receiving straight into the ring.
//!
//! - tungstenite 0.28 (no permessage-deflate: ringwire's client offers it and must accept the
//!   server declining).
//! - Python `websockets` (`tests/peers/websockets_peer.py`) with permessage-deflate: window
//!   sizes and context takeover negotiated both ways. Needs `python3 -m pip install websockets`.

use std::io::{BufRead, BufReader};
use std::net::{TcpListener, TcpStream};
use std::num::NonZeroUsize;
use std::process::{Command, Stdio};
use std::thread;

use ringwire_http1::{Method, RequestParser, ResponseParser};
use ringwire_io::{Duplex, TransportConfig};
use ringwire_ws::handshake::{accept, ClientHandshake};
use ringwire_ws::{
    CloseCode, CloseFrame, Connection, DeflateConfig, DeflateParams, Limits, Message, Role, State,
    Status, MAX_CONTROL_PAYLOAD, MAX_HEADER_LEN,
};
use tungstenite::Message as TMessage;

type Io<'s> = Duplex<&'s TcpStream, &'s TcpStream>;

fn config() -> TransportConfig {
    TransportConfig::new(64 << 10, 64 << 20)
}

/// Messages of every length encoding and both types, some large.
fn corpus() -> Vec<TMessage> {
    let mut out = vec![
        TMessage::text("Hello"),
        TMessage::text(""),
        TMessage::binary(Vec::new()),
        TMessage::text("κόσμε € 𝄞 ".repeat(5000)),
    ];
    for len in [
        1usize,
        125,
        126,
        127,
        65_535,
        65_536,
        65_537,
        1 << 20,
        5 << 20,
    ] {
        out.push(TMessage::binary(
            (0..len).map(|i| (i * 31 % 253) as u8).collect::<Vec<u8>>(),
        ));
    }
    out
}

/// Flushes queued control frames into the send ring.
fn transmit(conn: &mut Connection, io: &mut Io<'_>) {
    let out = io
        .tx
        .reserve(MAX_HEADER_LEN + MAX_CONTROL_PAYLOAD + 64)
        .unwrap();
    let n = conn.sender().poll_transmit(out).unwrap();
    io.tx.commit(n);
}

/// ringwire's server: handshake, then echo data messages until the closing handshake ends.
fn serve_echo(stream: &TcpStream) -> (Vec<String>, Option<DeflateParams>) {
    let mut io = Duplex::tcp(config(), stream).unwrap();
    let mut parser = RequestParser::default();
    let (accepted, head_len) = loop {
        match parser.parse(io.rx.data()).unwrap() {
            Status::Complete(req, n) => {
                let accepted = accept(&req, &["echo"], Some(&DeflateConfig::default())).unwrap();
                break (accepted, n);
            }
            Status::Partial { at_least } => assert!(io.rx.fill(at_least).unwrap() > 0),
        }
    };
    let out = io.tx.reserve(512).unwrap();
    let n = accepted.write_response(out).unwrap();
    io.tx.commit(n);
    io.rx.consume(head_len);
    let params = accepted.deflate().copied();
    let deflate = params.as_ref().map(|p| (p, 1));
    let mut conn = Connection::new(Role::Server, Limits::default(), deflate).unwrap();
    let mut log = Vec::new();
    loop {
        let (receiver, sender) = conn.split();
        match receiver.handle_read(io.rx.ring_mut().readable_mut(), sender) {
            Ok(Status::Complete(message, n)) => {
                if let Some(m) = message {
                    log.push(match m {
                        Message::Text(t) => format!("text {}", t.len()),
                        Message::Binary(b) => format!("binary {}", b.len()),
                        other => format!("{other:?}"),
                    });
                    if matches!(m, Message::Text(_) | Message::Binary(_)) {
                        let out = io.tx.reserve(sender.max_encoded_len(&m)).unwrap();
                        let written = sender.send(&m, out).unwrap();
                        io.tx.commit(written);
                    }
                }
                io.rx.consume(n);
                transmit(&mut conn, &mut io);
            }
            Ok(Status::Partial { at_least }) => {
                io.tx.flush().unwrap();
                if conn.sender().may_close_tcp() || io.rx.fill(at_least).unwrap() == 0 {
                    break;
                }
            }
            Err(e) => panic!("server read failed: {e}"),
        }
    }
    io.tx.flush().unwrap();
    assert_eq!(conn.state(), State::Closed);
    (log, params)
}

#[test]
fn tungstenite_client_against_ringwire_server() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let server = thread::spawn(move || {
        let (stream, _) = listener.accept().unwrap();
        serve_echo(&stream)
    });
    let stream = TcpStream::connect(addr).unwrap();
    let mut request =
        tungstenite::client::IntoClientRequest::into_client_request(format!("ws://{addr}/echo"))
            .unwrap();
    request
        .headers_mut()
        .insert("sec-websocket-protocol", "chat, echo".parse().unwrap());
    let (mut ws, response) = tungstenite::client::client(request, stream).unwrap();
    assert_eq!(response.headers()["sec-websocket-protocol"], "echo");
    for message in corpus() {
        ws.send(message.clone()).unwrap();
        assert_eq!(ws.read().unwrap(), message);
    }
    ws.send(TMessage::Ping(b"ping payload".to_vec().into()))
        .unwrap();
    assert_eq!(
        ws.read().unwrap(),
        TMessage::Pong(b"ping payload".to_vec().into())
    );
    ws.close(Some(tungstenite::protocol::CloseFrame {
        code: tungstenite::protocol::frame::coding::CloseCode::Away,
        reason: "done".into(),
    }))
    .unwrap();
    loop {
        match ws.read() {
            Ok(TMessage::Close(Some(frame))) => assert_eq!(u16::from(frame.code), 1001),
            Ok(other) => panic!("unexpected {other:?}"),
            Err(tungstenite::Error::ConnectionClosed) => break,
            Err(e) => panic!("{e}"),
        }
    }
    let (log, deflate) = server.join().unwrap();
    assert_eq!(deflate, None, "tungstenite offers no compression");
    assert_eq!(log.len(), corpus().len() + 2);
    assert_eq!(log[0], "text 5");
}

/// tungstenite's echo server: echoes data, answers pings and closes by itself.
fn tungstenite_echo(stream: TcpStream) {
    let mut ws = tungstenite::accept(stream).unwrap();
    loop {
        match ws.read() {
            Ok(m @ (TMessage::Text(_) | TMessage::Binary(_))) => ws.send(m).unwrap(),
            Ok(_) => {}
            Err(tungstenite::Error::ConnectionClosed) => return,
            Err(e) => panic!("tungstenite server: {e}"),
        }
    }
}

/// Reads until one message arrives; returns it as a tungstenite message for comparison.
fn receive(conn: &mut Connection, io: &mut Io<'_>) -> Option<TMessage> {
    loop {
        let status = conn.handle_read(io.rx.ring_mut().readable_mut()).unwrap();
        match status {
            Status::Complete(message, n) => {
                let owned = message.map(|m| match m {
                    Message::Text(t) => TMessage::text(t),
                    Message::Binary(b) => TMessage::binary(b.to_vec()),
                    Message::Ping(p) => TMessage::Ping(p.to_vec().into()),
                    Message::Pong(p) => TMessage::Pong(p.to_vec().into()),
                    Message::Close(c) => {
                        TMessage::Close(c.map(|c| tungstenite::protocol::CloseFrame {
                            code: c.code.0.into(),
                            reason: c.reason.into(),
                        }))
                    }
                });
                io.rx.consume(n);
                transmit(conn, io);
                if owned.is_some() {
                    return owned;
                }
            }
            Status::Partial { at_least } => {
                io.tx.flush().unwrap();
                if io.rx.fill(at_least).unwrap() == 0 {
                    return None;
                }
            }
        }
    }
}

/// ringwire's client: handshake offering `deflate`, every corpus message echoed (every other
/// one sent in fragments), then the closing handshake. Returns what was negotiated.
fn run_client(addr: std::net::SocketAddr, deflate: Option<DeflateConfig>) -> Option<DeflateParams> {
    let stream = TcpStream::connect(addr).unwrap();
    let mut io = Duplex::tcp(config(), &stream).unwrap();
    let handshake = ClientHandshake::new(&[], deflate).unwrap();
    let out = io.tx.reserve(512).unwrap();
    let n = handshake
        .write_request(&addr.to_string(), "/", out)
        .unwrap();
    io.tx.commit(n);
    io.tx.flush().unwrap();
    let mut parser = ResponseParser::default();
    let (agreed, head_len) = loop {
        match parser.parse(io.rx.data(), Method::Get).unwrap() {
            Status::Complete(resp, n) => break (handshake.verify(&resp).unwrap(), n),
            Status::Partial { at_least } => assert!(io.rx.fill(at_least).unwrap() > 0),
        }
    };
    io.rx.consume(head_len);
    let level = deflate.map_or(1, |d| d.level);
    let params = agreed.deflate;
    let mut conn = Connection::new(
        Role::Client,
        Limits::default(),
        params.as_ref().map(|p| (p, level)),
    )
    .unwrap();

    for (i, expected) in corpus().into_iter().enumerate() {
        // Every other message goes out in fragments, which the peer must reassemble.
        let fragment = if i % 2 == 1 {
            NonZeroUsize::new(1000)
        } else {
            None
        };
        conn.sender().writer_mut().set_fragment_size(fragment);
        let bytes = expected.clone().into_data();
        let message = match &expected {
            TMessage::Text(t) => Message::Text(t.as_str()),
            _ => Message::Binary(&bytes),
        };
        let out = io
            .tx
            .reserve(conn.sender().max_encoded_len(&message))
            .unwrap();
        let n = conn.sender().send(&message, out).unwrap();
        io.tx.commit(n);
        io.tx.flush().unwrap();
        assert_eq!(receive(&mut conn, &mut io), Some(expected), "message {i}");
    }

    let out = io.tx.reserve(64).unwrap();
    let close = Message::Close(Some(CloseFrame {
        code: CloseCode::NORMAL,
        reason: "bye",
    }));
    let n = conn.sender().send(&close, out).unwrap();
    io.tx.commit(n);
    io.tx.flush().unwrap();
    assert_eq!(conn.state(), State::CloseSent);
    let echo = receive(&mut conn, &mut io);
    assert!(
        matches!(echo, Some(TMessage::Close(Some(ref f))) if u16::from(f.code) == 1000),
        "{echo:?}"
    );
    assert_eq!(conn.state(), State::Closed);
    assert!(conn.sender().may_close_tcp());
    // The server closes TCP after the handshake: end of stream.
    assert_eq!(receive(&mut conn, &mut io), None);
    params
}

#[test]
fn ringwire_client_against_tungstenite_server() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let server = thread::spawn(move || tungstenite_echo(listener.accept().unwrap().0));
    let agreed = run_client(addr, Some(DeflateConfig::default()));
    assert_eq!(agreed, None, "tungstenite declines compression");
    server.join().unwrap();
}

/// `tests/peers/websockets_peer.py` with `args`; fails with the install hint if the Python
/// package is missing.
fn python_peer(args: &[&str]) -> std::process::Child {
    let script = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/peers/websockets_peer.py"
    );
    let has = || {
        Command::new("python3")
            .args(["-c", "import websockets"])
            .status()
            .expect("python3 on the PATH")
            .success()
    };
    // A fresh machine gets the peer from PyPI, as `cargo test` must pass there.
    if !has() {
        let _ = Command::new("python3")
            .args(["-m", "pip", "install", "--quiet", "websockets"])
            .status();
    }
    assert!(
        has(),
        "the Python peer needs: python3 -m pip install websockets"
    );
    Command::new("python3")
        .arg(script)
        .args(args)
        .stdout(Stdio::piped())
        .spawn()
        .expect("python3 on the PATH")
}

fn params(snct: bool, cnct: bool, server_bits: u8, client_bits: u8) -> DeflateParams {
    DeflateParams {
        server_no_context_takeover: snct,
        client_no_context_takeover: cnct,
        server_max_window_bits: server_bits,
        client_max_window_bits: client_bits,
    }
}

/// Python's client offers, ringwire's server chooses; both compress; Python checks every echo.
#[test]
fn python_websockets_client_with_deflate_against_ringwire_server() {
    let cases = [
        ("{}", "permessage-deflate", params(false, false, 15, 15)),
        (
            r#"{"server_max_window_bits": 10, "client_max_window_bits": 9,
                "server_no_context_takeover": true, "client_no_context_takeover": true}"#,
            "permessage-deflate; server_no_context_takeover; client_no_context_takeover; \
             server_max_window_bits=10; client_max_window_bits=9",
            params(true, true, 10, 9),
        ),
        (
            r#"{"server_max_window_bits": 12, "client_max_window_bits": null}"#,
            "permessage-deflate; server_max_window_bits=12",
            params(false, false, 12, 15),
        ),
    ];
    for (config, header, expected) in cases {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port().to_string();
        let server = thread::spawn(move || serve_echo(&listener.accept().unwrap().0));
        let peer = python_peer(&["client", &port, config]);
        let output = peer.wait_with_output().unwrap();
        assert!(output.status.success(), "python client failed for {config}");
        assert_eq!(
            String::from_utf8_lossy(&output.stdout).trim(),
            header,
            "{config}"
        );
        let (_, agreed) = server.join().unwrap();
        assert_eq!(agreed, Some(expected), "{config}");
    }
}

/// ringwire's client offers, Python's server chooses; the corpus echoes through both.
#[test]
fn ringwire_client_with_deflate_against_python_websockets_server() {
    let cases = [
        ("{}", DeflateConfig::default(), params(false, false, 15, 15)),
        (
            r#"{"server_no_context_takeover": true, "client_no_context_takeover": true}"#,
            DeflateConfig {
                server_max_window_bits: 11,
                ..DeflateConfig::default()
            },
            params(true, true, 11, 15),
        ),
        (
            r#"{"client_max_window_bits": 10}"#,
            DeflateConfig {
                client_no_context_takeover: true,
                level: 6,
                ..DeflateConfig::default()
            },
            params(false, true, 15, 10),
        ),
    ];
    for (config, offer, expected) in cases {
        let mut peer = python_peer(&["server", config]);
        let mut line = String::new();
        BufReader::new(peer.stdout.as_mut().unwrap())
            .read_line(&mut line)
            .unwrap();
        let port: u16 = line.trim().parse().expect("the peer prints its port");
        let agreed = run_client(([127, 0, 0, 1], port).into(), Some(offer));
        assert_eq!(agreed, Some(expected), "{config}");
        assert!(
            peer.wait().unwrap().success(),
            "python server failed for {config}"
        );
    }
}
