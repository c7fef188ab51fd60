//! Connecting to peers that are not Kafka brokers: stand-in TCP servers, no broker needed.

use std::io::{Read as _, Write as _};
use std::net::TcpListener;
use std::time::{Duration, Instant};

use ringwire_kafka_client::{ClientConfig, ClientError, Connection};

/// A server that answers the first request it reads with `reply`, then closes (with no
/// reply, it reads until the client leaves): its address.
fn stand_in(reply: Option<&'static [u8]>) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    std::thread::spawn(move || {
        let (mut socket, _) = listener.accept().unwrap();
        let mut request = [0; 512];
        let _ = socket.read(&mut request);
        match reply {
            Some(reply) => socket.write_all(reply).unwrap(),
            None => while socket.read(&mut request).is_ok_and(|n| n > 0) {},
        }
    });
    addr
}

async fn connect(addr: &str) -> ClientError {
    let config = ClientConfig {
        connect_timeout: Duration::from_millis(300),
        ..ClientConfig::default()
    };
    Connection::connect(addr, &config).await.unwrap_err()
}

#[tokio::test]
async fn an_http_server_is_not_kafka() {
    let addr = stand_in(Some(
        b"HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\n\r\n",
    ));
    let err = connect(&addr).await;
    assert!(
        matches!(&err, ClientError::NotKafka { addr: a, first_bytes } if *a == addr && first_bytes == b"HTTP/1.1 400 Bad"),
        "{err:?}"
    );
    assert_eq!(
        err.to_string(),
        format!(
            "{addr} does not answer as a Kafka broker (its first bytes look like \"HTTP/1.1 400 Bad\")"
        )
    );
}

#[tokio::test]
async fn a_frame_that_does_not_decode_is_not_kafka() {
    // A plausible size prefix, but no answer to the request sent (its correlation id is 0).
    let addr = stand_in(Some(b"\0\0\0\x06hello\n"));
    let err = connect(&addr).await;
    assert!(
        matches!(&err, ClientError::NotKafka { first_bytes, .. } if first_bytes == b"\0\0\0\x06hello\n"),
        "{err:?}"
    );
    assert!(
        err.to_string().ends_with(r#""\x00\x00\x00\x06hello\n")"#),
        "{err}"
    );
}

#[tokio::test]
async fn a_short_reply_then_close_is_not_kafka() {
    let addr = stand_in(Some(b"no\n"));
    let err = connect(&addr).await;
    assert!(
        matches!(&err, ClientError::NotKafka { first_bytes, .. } if first_bytes == b"no\n"),
        "{err:?}"
    );
}

#[tokio::test]
async fn a_silent_peer_times_out_on_api_versions() {
    let addr = stand_in(None);
    let started = Instant::now();
    let err = connect(&addr).await;
    assert!(started.elapsed() < Duration::from_secs(5));
    assert!(
        matches!(&err, ClientError::ApiVersionsTimeout { addr: a, after } if *a == addr && *after == Duration::from_millis(300)),
        "{err:?}"
    );
    assert_eq!(
        err.to_string(),
        format!("{addr} accepted the connection but did not answer ApiVersions within 300ms")
    );
}
