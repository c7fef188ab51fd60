//! `ws://` and `wss://` clients (feature `ws`), tokio and blocking, against ringwire's server
//! and its echo route: messages both ways, the closing handshake, and each way the connection
//! can fail.

mod common;

use ringwire_client::blocking;
use ringwire_client::tokio::{Client, Http2Connection};
use ringwire_client::ws::{
    CloseCode, HandshakeError, Message, SocketError, WebSocket, WsOptions, WsUrl,
};
use ringwire_client::{ClientConfig, Error, Http2, RequestBuffer, Url};
use ringwire_io::tokio::AsyncStream;
use ringwire_server::{Router, ServerConfig};

/// Echoes messages on `/echo`; anything else is a plain 404.
fn router() -> Router {
    Router::new().get("/echo", ringwire_server::ws::echo)
}

/// A client configuration that offers `h2` to `https://` servers.
fn h2_offered() -> ClientConfig {
    ClientConfig {
        http2: Http2::Negotiate,
        ..ClientConfig::default()
    }
}

async fn echo_and_close(client: &Client, url: &str) {
    let url = WsUrl::parse(url).unwrap();
    let (socket, negotiated) = client.websocket(&url, &WsOptions::default()).await.unwrap();
    assert!(
        negotiated.deflate.is_some(),
        "the server takes the deflate offer"
    );
    echoes_then_closes(socket).await;
}

/// Messages both ways on `socket` (one larger than every flow-control window), then the
/// closing handshake.
async fn echoes_then_closes(mut socket: WebSocket<impl AsyncStream>) {
    let big = "x".repeat(200_000);
    // Bytes no deflate shrinks (xorshift), so that they fill the windows.
    let mut x = 0x9E37_79B9_7F4A_7C15_u64;
    let random: Vec<u8> = (0..300_000)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect();
    for message in [
        Message::Text("over the ring"),
        Message::Binary(&[0, 1, 2, 255]),
        Message::Text(&big),
        Message::Binary(&random),
    ] {
        socket.send(&message).await.unwrap();
        let (echo, _) = socket.recv().await.expect("open").expect("echo");
        assert!(echo == message, "the echo differs");
    }
    socket.close(CloseCode::NORMAL, "done").await.unwrap();
    // Under way already: nothing more is sent.
    socket.close(CloseCode::NORMAL, "again").await.unwrap();
    while let Some(received) = socket.recv().await {
        assert!(matches!(received.unwrap().0, Message::Close(_)));
    }
}

#[tokio::test]
async fn ws_and_wss_echo_and_close() {
    let plain = common::ringwire(router());
    echo_and_close(&Client::default(), &format!("ws://{plain}/echo")).await;
    // A client that offers `h2` for its requests offers only `http/1.1` for
    // a WebSocket, even to a server that prefers `h2`.
    let (tls, cert) = common::ringwire_h2(router());
    let trusted = ringwire_tls::ClientConfig::default().add_root_pem(&cert);
    let client = Client::with_tls(h2_offered(), trusted);
    echo_and_close(&client, &format!("wss://localhost:{}/echo", tls.port())).await;
}

#[tokio::test]
async fn failures_are_typed() {
    let (tls, _) = common::ringwire_tls(router());
    let untrusted = WsUrl::parse(&format!("wss://localhost:{}/echo", tls.port())).unwrap();
    let err = Client::default()
        .websocket(&untrusted, &WsOptions::default())
        .await
        .unwrap_err();
    assert!(matches!(err, Error::Tls(_)), "{err}");

    let plain = common::ringwire(router());
    let refused = WsUrl::parse(&format!("ws://{plain}/nowhere")).unwrap();
    let err = Client::default()
        .websocket(&refused, &WsOptions::default())
        .await
        .unwrap_err();
    assert!(matches!(err, Error::WebSocket(_)), "{err}");
    assert!(err.to_string().contains("404"), "{err}");

    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let closed = WsUrl::parse(&format!("ws://127.0.0.1:{port}/")).unwrap();
    let err = Client::default()
        .websocket(&closed, &WsOptions::default())
        .await
        .unwrap_err();
    assert!(matches!(err, Error::Connect { .. }), "{err}");

    for bad in ["http://host/", "wss//host", "ws://"] {
        assert!(WsUrl::parse(bad).is_err(), "{bad}");
    }
}

/// The blocking client's WebSockets, plain and over TLS (both directions sharing one TLS
/// session), echo and close; an untrusted certificate is a TLS error.
#[test]
fn blocking_ws_and_wss_echo_and_close() {
    let plain = common::ringwire(router());
    let (tls, cert) = common::ringwire_h2(router());
    let trusted = ringwire_tls::ClientConfig::default().add_root_pem(&cert);
    for (client, url) in [
        (blocking::Client::default(), format!("ws://{plain}/echo")),
        (
            blocking::Client::with_tls(h2_offered(), trusted),
            format!("wss://localhost:{}/echo", tls.port()),
        ),
    ] {
        let url = WsUrl::parse(&url).unwrap();
        let (mut socket, negotiated) = client.websocket(&url, &WsOptions::default()).unwrap();
        assert!(negotiated.deflate.is_some());
        let big = vec![9u8; 300_000];
        for message in [Message::Text("blocking"), Message::Binary(&big)] {
            socket.send(&message).unwrap();
            let (echo, _) = socket.recv().expect("open").expect("echo");
            assert!(echo == message, "{url:?}: the echo differs");
        }
        socket.close(CloseCode::NORMAL, "done").unwrap();
        while let Some(received) = socket.recv() {
            assert!(matches!(received.unwrap().0, Message::Close(_)));
        }
    }
    let untrusted = WsUrl::parse(&format!("wss://localhost:{}/echo", tls.port())).unwrap();
    let err = blocking::Client::default()
        .websocket(&untrusted, &WsOptions::default())
        .unwrap_err();
    assert!(matches!(err, Error::Tls(_)), "{err}");

    // A server that accepts and never answers the upgrade: the connect timeout ends it.
    let silent = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = WsUrl::parse(&format!("ws://{}/", silent.local_addr().unwrap())).unwrap();
    let config = ClientConfig {
        connect_timeout: Some(std::time::Duration::from_millis(300)),
        ..ClientConfig::default()
    };
    let started = std::time::Instant::now();
    let err = blocking::Client::new(config)
        .websocket(&url, &WsOptions::default())
        .unwrap_err();
    assert!(
        matches!(err, Error::Timeout(ringwire_client::Phase::Connect)),
        "{err}"
    );
    assert!(started.elapsed() < std::time::Duration::from_secs(5));
    drop(silent);
}

/// Accepts a WebSocket and never reads from it: pings go unanswered.
async fn deaf(request: &ringwire_server::Request<'_>) -> ringwire_server::Response {
    use ringwire_server::ws::{self, WsConfig};
    ws::accept(request, &WsConfig::default(), |socket| {
        Box::pin(async move {
            tokio::time::sleep(std::time::Duration::from_secs(10)).await;
            drop(socket);
        })
    })
}

/// With a keepalive, a quiet but live server (its socket answers pings) keeps the
/// connection; a deaf one is noticed after two intervals.
#[tokio::test]
async fn keepalive_pings_keep_a_live_peer_and_find_a_deaf_one() {
    use ringwire_client::ws::SocketError;
    use std::time::{Duration, Instant};

    let addr = common::ringwire(router().get("/deaf", deaf));
    let options = WsOptions {
        keepalive: Some(Duration::from_millis(100)),
        ..WsOptions::default()
    };
    let client = Client::default();
    let live = WsUrl::parse(&format!("ws://{addr}/echo")).unwrap();
    let (mut socket, _) = client.websocket(&live, &options).await.unwrap();
    // Six intervals of quiet: pings out, pongs back, nothing to hand out.
    let quiet = tokio::time::timeout(Duration::from_millis(600), socket.recv()).await;
    assert!(
        quiet.is_err(),
        "recv ended: {:?}",
        quiet.map(|r| r.map(|r| r.map(|_| ())))
    );
    socket.send(&Message::Text("still here")).await.unwrap();
    let (echo, _) = socket.recv().await.expect("open").expect("echo");
    assert!(echo == Message::Text("still here"));

    let deaf = WsUrl::parse(&format!("ws://{addr}/deaf")).unwrap();
    let (mut socket, _) = client.websocket(&deaf, &options).await.unwrap();
    let started = Instant::now();
    let ended = tokio::time::timeout(Duration::from_secs(5), socket.recv())
        .await
        .expect("noticed");
    assert!(
        matches!(ended, Some(Err(SocketError::PeerSilent(d))) if d == Duration::from_millis(200)),
        "{:?}",
        ended.map(|r| r.map(|_| ()))
    );
    assert!(started.elapsed() >= Duration::from_millis(200));

    // Once the close is out, its answer is awaited, not pinged for: still `PeerSilent`.
    let (mut socket, _) = client.websocket(&deaf, &options).await.unwrap();
    socket.close(CloseCode::NORMAL, "bye").await.unwrap();
    let ended = tokio::time::timeout(Duration::from_secs(5), socket.recv())
        .await
        .expect("noticed");
    assert!(
        matches!(ended, Some(Err(SocketError::PeerSilent(_)))),
        "{:?}",
        ended.map(|r| r.map(|_| ()))
    );
}

/// Accepts a WebSocket, stays quiet for 600 ms (answering pings all along), then says
/// "late".
async fn late(request: &ringwire_server::Request<'_>) -> ringwire_server::Response {
    use ringwire_server::ws::{self, WsConfig};
    ws::accept(request, &WsConfig::default(), |mut socket| {
        Box::pin(async move {
            let quiet = tokio::time::Instant::now() + std::time::Duration::from_millis(600);
            // Reading meanwhile is what answers the client's pings (each one handed out).
            while let Ok(Some(_)) = tokio::time::timeout_at(quiet, socket.recv()).await {}
            let _ = socket.send(&Message::Text("late")).await;
            while socket.recv().await.is_some() {}
        })
    })
}

/// The blocking client's keepalive, plain and over TLS: the pings a quiet but live server
/// answers keep the socket waiting (its reads time out each interval, the pongs are not
/// handed out), and a deaf server is noticed after two intervals.
#[test]
fn blocking_keepalive_pings_keep_a_live_peer_and_find_a_deaf_one() {
    use ringwire_client::ws::SocketError;
    use std::time::{Duration, Instant};

    let routes = || router().get("/late", late).get("/deaf", deaf);
    let plain = common::ringwire(routes());
    let (tls, cert) = common::ringwire_h2(routes());
    let trusted = ringwire_tls::ClientConfig::default().add_root_pem(&cert);
    let options = WsOptions {
        keepalive: Some(Duration::from_millis(100)),
        ..WsOptions::default()
    };
    for (client, base) in [
        (blocking::Client::default(), format!("ws://{plain}")),
        (
            blocking::Client::with_tls(ClientConfig::default(), trusted),
            format!("wss://localhost:{}", tls.port()),
        ),
    ] {
        let live = WsUrl::parse(&format!("{base}/late")).unwrap();
        let (mut socket, _) = client.websocket(&live, &options).unwrap();
        let started = Instant::now();
        let (said, _) = socket.recv().expect("open").expect("a message");
        assert!(said == Message::Text("late"), "{base}: {said:?}");
        assert!(started.elapsed() >= Duration::from_millis(500), "{base}");
        socket.close(CloseCode::NORMAL, "done").unwrap();

        let deaf = WsUrl::parse(&format!("{base}/deaf")).unwrap();
        let (mut socket, _) = client.websocket(&deaf, &options).unwrap();
        let started = Instant::now();
        let ended = socket.recv();
        assert!(
            matches!(ended, Some(Err(SocketError::PeerSilent(d))) if d == Duration::from_millis(200)),
            "{base}: {:?}",
            ended.map(|r| r.map(|_| ()))
        );
        let waited = started.elapsed();
        assert!(
            (Duration::from_millis(200)..Duration::from_secs(3)).contains(&waited),
            "{base}: {waited:?}"
        );
    }
}

/// A server that sends 4 MiB of a 1 GiB frame (past every default limit) and more than the
/// socket buffers hold, half-closes, and returns everything the client sent after the
/// upgrade request. Its writes fail if the client resets the connection.
fn flooding_server() -> (String, std::thread::JoinHandle<Vec<u8>>) {
    use std::io::{Read as _, Write as _};

    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    let peer = std::thread::spawn(move || {
        let (mut stream, _) = listener.accept().unwrap();
        let mut head = Vec::new();
        let mut byte = [0];
        while !head.ends_with(b"\r\n\r\n") {
            stream.read_exact(&mut byte).unwrap();
            head.push(byte[0]);
        }
        let head = String::from_utf8(head).unwrap();
        let key = head
            .lines()
            .find_map(|line| line.strip_prefix("sec-websocket-key: "))
            .expect("a key");
        let accept = ringwire_ws::handshake::accept_key(key.trim().as_bytes());
        let mut out = format!(
            "HTTP/1.1 101 Switching Protocols\r\nupgrade: websocket\r\n\
             connection: upgrade\r\nsec-websocket-accept: {accept}\r\n\r\n"
        )
        .into_bytes();
        out.extend_from_slice(&[0x82, 0x7f]);
        out.extend_from_slice(&(1u64 << 30).to_be_bytes());
        out.resize(out.len() + (4 << 20), 0x55);
        stream.write_all(&out).expect("drained, not reset");
        stream.shutdown(std::net::Shutdown::Write).unwrap();
        stream
            .set_read_timeout(Some(std::time::Duration::from_secs(20)))
            .unwrap();
        let mut answer = Vec::new();
        stream.read_to_end(&mut answer).expect("a clean end");
        answer
    });
    (addr, peer)
}

/// The close code of the one masked close frame in `answer`, and nothing after it.
fn masked_close_code(answer: &[u8]) -> u16 {
    assert_eq!(answer[0], 0x88, "{answer:?}");
    assert_eq!(
        usize::from(answer[1] & 0x7f) + 6,
        answer.len(),
        "{answer:?}"
    );
    let mask = &answer[2..6];
    u16::from_be_bytes([answer[6] ^ mask[0], answer[7] ^ mask[1]])
}

/// A client failed for a frame past its limit while more of it is on its way: its `1009`
/// close reaches the server, followed by a clean end, not a reset that fails the server's
/// writes and may destroy the close (the client drains what is left before it closes).
#[tokio::test]
async fn a_close_after_an_error_is_not_destroyed_by_a_reset() {
    let (addr, peer) = flooding_server();
    let url = WsUrl::parse(&format!("ws://{addr}/")).unwrap();
    let (mut socket, _) = Client::default()
        .websocket(&url, &WsOptions::default())
        .await
        .unwrap();
    let err = socket.recv().await.expect("an error").unwrap_err();
    assert!(err.to_string().contains("1009"), "{err}");
    drop(socket);
    let answer = tokio::task::spawn_blocking(|| peer.join().unwrap())
        .await
        .unwrap();
    assert_eq!(masked_close_code(&answer), 1009);
}

/// As [`a_close_after_an_error_is_not_destroyed_by_a_reset`], with the blocking client.
#[test]
fn a_blocking_close_after_an_error_is_not_destroyed_by_a_reset() {
    let (addr, peer) = flooding_server();
    let url = WsUrl::parse(&format!("ws://{addr}/")).unwrap();
    let (mut socket, _) = blocking::Client::default()
        .websocket(&url, &WsOptions::default())
        .unwrap();
    let err = socket.recv().expect("an error").unwrap_err();
    assert!(err.to_string().contains("1009"), "{err}");
    drop(socket);
    assert_eq!(masked_close_code(&peer.join().unwrap()), 1009);
}

/// WebSockets through a forward proxy (proxy.py), `ws://` and `wss://` alike through a
/// `CONNECT` tunnel (a forwarded request could not be upgraded), with both clients; without
/// the proxy's credentials, its refusal.
#[test]
fn through_a_proxy() {
    use ringwire_client::{Proxies, Proxy};
    let proxy = common::ProxyPy::start(Some("ws:pass"));
    let proxies = |credentials| Proxies::all(Proxy::parse(&proxy.url(credentials)).unwrap());
    let plain = common::ringwire(router());
    let (tls, cert) = common::ringwire_h2(router());
    let trusted = || ringwire_tls::ClientConfig::default().add_root_pem(&cert);
    let urls = [
        format!("ws://{plain}/echo"),
        format!("wss://localhost:{}/echo", tls.port()),
    ];
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    for url in &urls {
        let client = Client::with_tls(ClientConfig::default(), trusted())
            .with_proxies(proxies(Some("ws:pass")));
        runtime.block_on(echo_and_close(&client, url));
        let client = blocking::Client::with_tls(ClientConfig::default(), trusted())
            .with_proxies(proxies(Some("ws:pass")));
        let (mut socket, _) = client
            .websocket(&WsUrl::parse(url).unwrap(), &WsOptions::default())
            .unwrap();
        socket.send(&Message::Text("tunnelled")).unwrap();
        let (echo, _) = socket.recv().expect("open").expect("echo");
        assert!(echo == Message::Text("tunnelled"), "{url}");

        let refused =
            Client::with_tls(ClientConfig::default(), trusted()).with_proxies(proxies(None));
        let err = runtime
            .block_on(refused.websocket(&WsUrl::parse(url).unwrap(), &WsOptions::default()))
            .unwrap_err();
        assert!(
            matches!(err, Error::Proxy { status: 407, .. }),
            "{url}: {err}"
        );
    }
}

/// Admits the upgrade only with `authorization: Bearer t0ken` and `cookie: a=b`, as a
/// WebSocket API behind a login does; 401 otherwise.
async fn guarded(request: &ringwire_server::Request<'_>) -> ringwire_server::Response {
    let bearer = request.header("authorization") == Some(&b"Bearer t0ken"[..]);
    if bearer && request.header("cookie") == Some(&b"a=b"[..]) {
        ringwire_server::ws::echo(request).await
    } else {
        ringwire_server::Response::new(401)
    }
}

/// Opens `url` with `options` from both clients (`client`, `blocking`): each upgrade must
/// be admitted and its socket echo.
fn both_echo(url: &WsUrl, options: &WsOptions<'_>, client: &Client, blocking: &blocking::Client) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let (mut socket, _) = runtime.block_on(client.websocket(url, options)).unwrap();
    runtime.block_on(socket.send(&Message::Text("in"))).unwrap();
    let (echo, _) = runtime
        .block_on(socket.recv())
        .expect("open")
        .expect("echo");
    assert!(echo == Message::Text("in"));
    let (mut socket, _) = blocking.websocket(url, options).unwrap();
    socket.send(&Message::Text("in")).unwrap();
    let (echo, _) = socket.recv().expect("open").expect("echo");
    assert!(echo == Message::Text("in"));
}

/// The caller's fields go with the upgrade request, from both clients; without them the
/// server's 401 is the error; a field the handshake writes itself is refused before
/// anything is sent.
#[test]
fn headers_go_with_the_upgrade() {
    let addr = common::ringwire(Router::new().get("/guarded", guarded));
    let url = WsUrl::parse(&format!("ws://{addr}/guarded")).unwrap();
    let headers = [("Authorization", "Bearer t0ken"), ("Cookie", "a=b")];
    let with = WsOptions {
        headers: &headers,
        ..WsOptions::default()
    };
    both_echo(
        &url,
        &with,
        &Client::default(),
        &blocking::Client::default(),
    );

    let err = blocking::Client::default()
        .websocket(&url, &WsOptions::default())
        .unwrap_err();
    assert!(err.to_string().contains("401"), "{err}");
    let managed = WsOptions {
        headers: &[("Sec-WebSocket-Key", "x")],
        ..WsOptions::default()
    };
    let err = blocking::Client::default()
        .websocket(&url, &managed)
        .unwrap_err();
    assert!(
        matches!(err, Error::ManagedHeader("sec-websocket-key")),
        "{err}"
    );
}

/// A client's cookie jar goes with the upgrade request too (a WebSocket API behind a login
/// session), after the caller's own cookies.
#[test]
fn a_cookie_jar_goes_with_the_upgrade() {
    use std::sync::Arc;
    let addr = common::ringwire(Router::new().get("/guarded", guarded));
    let url = WsUrl::parse(&format!("ws://{addr}/guarded")).unwrap();
    let jar = Arc::new(ringwire_client::CookieJar::new());
    let session = ringwire_client::Url::parse(&format!("http://{addr}/login")).unwrap();
    jar.store(&session, b"a=b; Path=/");
    let headers = [("Authorization", "Bearer t0ken")];
    let options = WsOptions {
        headers: &headers,
        ..WsOptions::default()
    };
    let blocking = blocking::Client::default().with_cookies(Arc::clone(&jar));
    both_echo(
        &url,
        &options,
        &Client::default().with_cookies(jar),
        &blocking,
    );
    // Without the jar, refused; with the caller's own cookie too, its cookies come first
    // and the guard (which wants exactly `a=b`) refuses.
    let err = blocking::Client::default()
        .websocket(&url, &options)
        .unwrap_err();
    assert!(err.to_string().contains("401"), "{err}");
    let both = [("Authorization", "Bearer t0ken"), ("Cookie", "c=d")];
    let with_own = WsOptions {
        headers: &both,
        ..WsOptions::default()
    };
    let err = blocking.websocket(&url, &with_own).unwrap_err();
    assert!(err.to_string().contains("401"), "{err}");
}

/// A cookie the upgrade's `101` sets is kept by the jar, as a browser keeps it: the next
/// upgrade (to a route that wants it) carries it, from either client.
#[test]
fn a_cookie_set_by_the_upgrade_is_kept() {
    use std::sync::Arc;
    async fn welcome(request: &ringwire_server::Request<'_>) -> ringwire_server::Response {
        let upgrade = ringwire_server::ws::echo(request).await;
        upgrade.header("set-cookie", "ticket=42; Path=/; HttpOnly")
    }
    async fn members(request: &ringwire_server::Request<'_>) -> ringwire_server::Response {
        match request.cookie("ticket") {
            Some(b"42") => ringwire_server::ws::echo(request).await,
            _ => ringwire_server::Response::new(401),
        }
    }
    let router = Router::new()
        .get("/welcome", welcome)
        .get("/members", members);
    let addr = common::ringwire(router);
    let url = |path: &str| WsUrl::parse(&format!("ws://{addr}{path}")).unwrap();
    let options = WsOptions::default();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    for async_client in [true, false] {
        let jar = Arc::new(ringwire_client::CookieJar::new());
        let tokio_client = Client::default().with_cookies(Arc::clone(&jar));
        let blocking_client = blocking::Client::default().with_cookies(Arc::clone(&jar));
        let refused = blocking_client
            .websocket(&url("/members"), &options)
            .unwrap_err();
        assert!(refused.to_string().contains("401"), "{refused}");
        let welcome = url("/welcome");
        let set_cookies = if async_client {
            let opened = tokio_client.websocket(&welcome, &options);
            runtime.block_on(opened).unwrap().1.set_cookies
        } else {
            let opened = blocking_client.websocket(&welcome, &options);
            opened.unwrap().1.set_cookies
        };
        assert_eq!(set_cookies, ["ticket=42; Path=/; HttpOnly"]);
        both_echo(&url("/members"), &options, &tokio_client, &blocking_client);
    }
}

/// `GET url` on `conn`: the status.
async fn get(conn: &Http2Connection, url: &Url) -> u16 {
    let mut buffer = RequestBuffer::new().unwrap();
    let request = buffer
        .request("GET", url)
        .unwrap()
        .headers()
        .unwrap()
        .finish()
        .unwrap();
    let mut response = conn.send(&mut buffer, &request).await.unwrap();
    response.bytes().await.unwrap();
    response.status()
}

/// WebSockets on streams of one HTTP/2 connection (RFC 8441's extended `CONNECT`), over
/// TLS (`h2` by ALPN) and cleartext (prior knowledge): two at once beside plain requests,
/// each with messages larger than every flow-control window both ways and a closing
/// handshake; a refused one is the upgrade's error, and the connection goes on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn websockets_on_streams_of_an_http2_connection() {
    let (tls, cert) = common::ringwire_h2(router());
    let trusted = ringwire_tls::ClientConfig::default().add_root_pem(&cert);
    let tls_client = Client::with_tls(h2_offered(), trusted);
    let plain = common::ringwire(router());
    let prior = Client::new(ClientConfig {
        http2: Http2::PriorKnowledge,
        ..ClientConfig::default()
    });
    let places = [
        (
            &tls_client,
            format!("localhost:{}", tls.port()),
            "https",
            "wss",
        ),
        (&prior, plain.to_string(), "http", "ws"),
    ];
    for (client, authority, http, ws) in places {
        let base = Url::parse(&format!("{http}://{authority}/")).unwrap();
        let conn = client.http2_connection(&base).await.unwrap();
        let url = WsUrl::parse(&format!("{ws}://{authority}/echo")).unwrap();
        let options = WsOptions::default();
        let plain = WsOptions {
            deflate: None,
            ..WsOptions::default()
        };
        let (first, second) =
            tokio::join!(conn.websocket(&url, &options), conn.websocket(&url, &plain));
        let ((first, deflated), (second, not)) = (first.unwrap(), second.unwrap());
        assert!(deflated.deflate.is_some() && not.deflate.is_none());
        assert_eq!(get(&conn, &base).await, 404);
        tokio::join!(echoes_then_closes(first), echoes_then_closes(second));

        let nowhere = WsUrl::parse(&format!("{ws}://{authority}/nowhere")).unwrap();
        let refused = conn.websocket(&nowhere, &options).await.unwrap_err();
        assert!(
            matches!(
                refused,
                Error::WebSocket(SocketError::Handshake(HandshakeError::NotSwitching(404)))
            ),
            "{refused}"
        );
        // A socket dropped while open resets its stream alone.
        drop(conn.websocket(&url, &options).await.unwrap());
        assert_eq!(get(&conn, &base).await, 404);
        assert!(conn.is_open());
    }
}

/// A server whose `SETTINGS` do not welcome extended `CONNECT` gets no WebSocket on its
/// HTTP/2 connection: a clear error, and the connection goes on.
#[tokio::test]
async fn an_http2_server_without_extended_connect_is_told_apart() {
    let config = ServerConfig {
        http2: Some(ringwire_http2::Config::default()),
        ..ServerConfig::default()
    };
    let plain = common::serve_with(config, router(), None);
    let client = Client::new(ClientConfig {
        http2: Http2::PriorKnowledge,
        ..ClientConfig::default()
    });
    let base = Url::parse(&format!("http://{plain}/")).unwrap();
    let conn = client.http2_connection(&base).await.unwrap();
    let url = WsUrl::parse(&format!("ws://{plain}/echo")).unwrap();
    let refused = conn
        .websocket(&url, &WsOptions::default())
        .await
        .unwrap_err();
    assert!(matches!(refused, Error::NoExtendedConnect), "{refused}");
    assert_eq!(get(&conn, &base).await, 404);
}

/// WebSockets on an HTTP/2 connection whose server takes two streams at once: each one
/// closed or dropped gives its stream back, so that one after another they keep opening.
#[tokio::test]
async fn websockets_on_http2_give_their_streams_back() {
    let config = ServerConfig {
        http2: Some(ringwire_http2::Config {
            max_concurrent_streams: 2,
            enable_connect_protocol: true,
            ..ringwire_http2::Config::default()
        }),
        ..ServerConfig::default()
    };
    let plain = common::serve_with(config, router(), None);
    let client = Client::new(ClientConfig {
        http2: Http2::PriorKnowledge,
        request_timeout: Some(std::time::Duration::from_secs(5)),
        ..ClientConfig::default()
    });
    let base = Url::parse(&format!("http://{plain}/")).unwrap();
    let conn = client.http2_connection(&base).await.unwrap();
    let url = WsUrl::parse(&format!("ws://{plain}/echo")).unwrap();
    let options = WsOptions::default();
    for round in 0..3 {
        let (mut closed, _) = conn.websocket(&url, &options).await.expect("opens");
        closed.close(CloseCode::NORMAL, "done").await.unwrap();
        while closed.recv().await.is_some() {}
        drop(closed);
        let (mut dropped, _) = conn.websocket(&url, &options).await.expect("opens");
        dropped.send(&Message::Text("and gone")).await.unwrap();
        drop(dropped);
        assert_eq!(get(&conn, &base).await, 404, "round {round}");
    }
}

/// The client's own WebSocket over HTTP/2 goes on the origin's shared connection (the one
/// its requests took), with the jar's cookies both ways; a server that chose HTTP/1.1 is
/// told apart, its connection pooled for what comes next.
#[tokio::test]
async fn the_clients_websocket_over_http2_shares_the_origins_connection_and_jar() {
    use std::sync::atomic::{AtomicU16, Ordering};
    use std::sync::Arc;
    // The port of the connection the last `/members` socket came on.
    static MEMBER_PORT: AtomicU16 = AtomicU16::new(0);
    async fn welcome(request: &ringwire_server::Request<'_>) -> ringwire_server::Response {
        let upgrade = ringwire_server::ws::echo(request).await;
        upgrade.header("set-cookie", "ticket=42; Path=/")
    }
    async fn members(request: &ringwire_server::Request<'_>) -> ringwire_server::Response {
        MEMBER_PORT.store(request.peer().map_or(0, |p| p.port()), Ordering::SeqCst);
        match request.cookie("ticket") {
            Some(b"42") => ringwire_server::ws::echo(request).await,
            _ => ringwire_server::Response::new(401),
        }
    }
    async fn peer(request: &ringwire_server::Request<'_>) -> ringwire_server::Response {
        let port = request.peer().map_or(0, |p| p.port());
        ringwire_server::Response::text(port.to_string())
    }
    let router = || {
        Router::new()
            .get("/welcome", welcome)
            .get("/members", members)
            .get("/peer", peer)
    };
    let addr = common::ringwire(router());
    let jar = Arc::new(ringwire_client::CookieJar::new());
    let client = Client::new(ClientConfig {
        http2: Http2::PriorKnowledge,
        ..ClientConfig::default()
    })
    .with_cookies(jar);
    let mut buffer = RequestBuffer::new().unwrap();
    let url = Url::parse(&format!("http://{addr}/peer")).unwrap();
    let request = buffer.request("GET", &url).unwrap().headers().unwrap();
    let request = request.finish().unwrap();
    let port = client
        .send(&mut buffer, &request)
        .await
        .unwrap()
        .text()
        .await;
    let ws = |path: &str| WsUrl::parse(&format!("ws://{addr}{path}")).unwrap();
    let options = WsOptions::default();
    let (_, agreed) = client
        .websocket_http2(&ws("/welcome"), &options)
        .await
        .unwrap();
    assert_eq!(agreed.set_cookies, ["ticket=42; Path=/"]);
    let (socket, _) = client
        .websocket_http2(&ws("/members"), &options)
        .await
        .unwrap();
    assert_eq!(
        port.unwrap(),
        MEMBER_PORT.load(Ordering::SeqCst).to_string()
    );
    echoes_then_closes(socket).await;
    assert_eq!(client.idle_connections(&url), 0);

    let (tls, cert) = common::ringwire_tls(router());
    let trusted = ringwire_tls::ClientConfig::default().add_root_pem(&cert);
    let client = Client::with_tls(h2_offered(), trusted);
    let url = WsUrl::parse(&format!("wss://localhost:{}/welcome", tls.port())).unwrap();
    let refused = client.websocket_http2(&url, &options).await.unwrap_err();
    assert!(matches!(refused, Error::NotHttp2), "{refused}");
    assert_eq!(client.idle_connections(url.http()), 1);
}
