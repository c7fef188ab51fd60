//! The connection state machine: automatic replies and the closing handshake, with a client
//! and a server driven against each other in memory.

use ringwire_ws::{
    CloseCode, CloseFrame, Connection, EncodeError, Error, Limits, Message, Role, State, Status,
};

fn conn(role: Role) -> Connection {
    Connection::new(role, Limits::default(), None).unwrap()
}

/// Feeds `wire` to `conn` and returns what it delivered (as debug strings) and any error.
fn feed(conn: &mut Connection, wire: &mut Vec<u8>) -> (Vec<String>, Option<Error>) {
    let mut seen = Vec::new();
    loop {
        match conn.handle_read(wire) {
            Ok(Status::Complete(m, n)) => {
                if let Some(m) = m {
                    seen.push(format!("{m:?}"));
                }
                wire.drain(..n);
            }
            Ok(Status::Partial { .. }) => return (seen, None),
            Err(e) => return (seen, Some(e)),
        }
    }
}

fn transmit(conn: &mut Connection) -> Vec<u8> {
    let mut out = [0; 512];
    let n = conn.sender().poll_transmit(&mut out).unwrap();
    out[..n].to_vec()
}

fn send(conn: &mut Connection, m: &Message<'_>) -> Vec<u8> {
    let mut out = [0; 512];
    let n = conn.sender().send(m, &mut out).unwrap();
    out[..n].to_vec()
}

#[test]
fn ping_gets_a_pong_with_its_payload() {
    let (mut client, mut server) = (conn(Role::Client), conn(Role::Server));
    let mut wire = send(&mut client, &Message::Ping(b"are you there"));
    let (seen, err) = feed(&mut server, &mut wire);
    assert_eq!(
        (seen, err),
        (vec![format!("{:?}", Message::Ping(b"are you there"))], None)
    );
    assert!(server.sender().wants_transmit());
    let mut reply = transmit(&mut server);
    assert_eq!(&reply[..2], b"\x8a\x0d");
    let (seen, _) = feed(&mut client, &mut reply);
    assert_eq!(seen, vec![format!("{:?}", Message::Pong(b"are you there"))]);
    assert!(!server.sender().wants_transmit());
}

#[test]
fn closing_handshake_started_by_the_client() {
    let (mut client, mut server) = (conn(Role::Client), conn(Role::Server));
    let mut out = [0; 64];
    let close = CloseFrame {
        code: CloseCode::GOING_AWAY,
        reason: "bye",
    };
    let n = client
        .sender()
        .send(&Message::Close(Some(close)), &mut out)
        .unwrap();
    assert_eq!(client.state(), State::CloseSent);
    assert_eq!(
        client.sender().send(&Message::Text("late"), &mut out),
        Err(EncodeError::Closed)
    );
    let mut wire = out[..n].to_vec();
    feed(&mut server, &mut wire);
    assert_eq!(server.state(), State::CloseReceived);
    assert!(!server.sender().may_close_tcp());
    let mut echo = transmit(&mut server);
    assert_eq!(echo, b"\x88\x02\x03\xe9", "the code is echoed");
    assert!(server.sender().may_close_tcp());
    assert_eq!(
        server.sender().send(&Message::Text("late"), &mut out),
        Err(EncodeError::Closed)
    );
    let (seen, _) = feed(&mut client, &mut echo);
    assert_eq!(seen.len(), 1);
    assert_eq!(client.state(), State::Closed);
    assert!(client.sender().may_close_tcp());
}

#[test]
fn a_close_without_code_is_echoed_without_code() {
    let mut server = conn(Role::Server);
    let mut wire = b"\x88\x80\x01\x02\x03\x04".to_vec();
    feed(&mut server, &mut wire);
    assert_eq!(transmit(&mut server), b"\x88\x00");
}

#[test]
fn a_protocol_error_queues_a_close_with_its_code() {
    for (wire, code) in [
        (&b"\x82\x01x"[..], 1002u16),        // unmasked from a client
        (b"\x81\x82\0\0\0\0\xc3\x28", 1007), // bad UTF-8
        (b"\x82\xff\x00\x00\x00\x10\x00\x00\x00\x00\0\0\0\0", 1009), // 64 GiB frame
    ] {
        let mut server = conn(Role::Server);
        let (_, err) = feed(&mut server, &mut wire.to_vec());
        assert_eq!(err.map(|e| e.close_code().0), Some(code));
        let close = transmit(&mut server);
        assert_eq!(close[..2], [0x88, 0x02]);
        assert_eq!(u16::from_be_bytes([close[2], close[3]]), code);
        assert!(server.sender().may_close_tcp());
        // Later input is ignored, not parsed again.
        let (seen, err) = feed(&mut server, &mut b"\x81\x80\0\0\0\0".to_vec());
        assert_eq!((seen.len(), err), (0, None));
    }
}

#[test]
fn poll_transmit_needs_room_for_a_whole_frame() {
    let mut server = conn(Role::Server);
    let mut wire = b"\x89\x85\0\0\0\0hello".to_vec();
    feed(&mut server, &mut wire);
    let mut tiny = [0; 3];
    assert_eq!(
        server.sender().poll_transmit(&mut tiny),
        Err(EncodeError::BufferFull { needed: 7 })
    );
    assert_eq!(transmit(&mut server), b"\x8a\x05hello");
}
