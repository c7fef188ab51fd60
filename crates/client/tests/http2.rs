//! Both clients over HTTP/2: against ringwire's server (ALPN `h2`
//! over TLS, and prior knowledge over cleartext), and against a scripted
//! HTTP/2 server for what a well-behaved one does rarely (refusing and
//! resetting streams, closing mid-body). nginx over `h2` is in
//! `tests/nginx.rs`.

mod common;

use std::io::{Read as _, Write as _};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::Duration;

use bytes::Bytes;
use common::{summed, Echo, Sum};
use ringwire_client::blocking::Client;
use ringwire_client::tokio::Client as AsyncClient;
use ringwire_client::{ClientConfig, Error, Http2, Protocol, RequestBuffer, Url};
use ringwire_http2::frame::StreamId;
use ringwire_http2::{Connection, ErrorCode, Event};

fn client(http2: Http2, cert: Option<&[u8]>) -> Client {
    let config = ClientConfig {
        http2,
        max_redirects: Some(2),
        expect_continue_timeout: Duration::from_millis(100),
        request_timeout: Some(Duration::from_secs(20)),
        ..ClientConfig::default()
    };
    let tls = ringwire_tls::ClientConfig::default().without_system_roots();
    Client::with_tls(config, cert.map_or(tls.clone(), |c| tls.add_root_pem(c)))
}

/// Sends `method` to `url` with `body` (none for `None`) and returns the
/// protocol, status and body.
fn send(
    client: &Client,
    buffer: &mut RequestBuffer,
    method: &str,
    url: &Url,
    body: Option<&[u8]>,
) -> Result<(Protocol, u16, Vec<u8>), Error> {
    let request = buffer
        .request(method, url)?
        .headers()?
        .header("x-test", "over h2")?;
    let request = match body {
        Some(body) => request.body(body)?,
        None => request.finish()?,
    };
    let mut response = client.send(buffer, &request)?;
    let (protocol, status) = (response.protocol(), response.status());
    Ok((protocol, status, response.bytes()?))
}

/// Bytes that show where they were cut.
fn pattern(len: usize) -> Vec<u8> {
    (0..len).map(|i| (i % 251) as u8).collect()
}

/// The same exchanges over whichever HTTP/2 `client` and `base` give.
fn exchanges(client: &Client, base: &str) {
    let mut buffer = RequestBuffer::new().unwrap();
    let url = |path: &str| Url::parse(&format!("{base}{path}")).unwrap();

    let (protocol, status, body) = send(client, &mut buffer, "GET", &url("/hello"), None).unwrap();
    assert_eq!((protocol, status), (Protocol::Http2, 200));
    assert_eq!(
        String::from_utf8(body).unwrap(),
        "GET /hello body=0\n\nx-test: over h2"
    );

    // One connection carries them all, one after another.
    let ports: Vec<_> = (0..3)
        .map(|_| {
            send(client, &mut buffer, "GET", &url("/peer"), None)
                .unwrap()
                .2
        })
        .collect();
    assert!(ports.iter().all(|p| *p == ports[0]), "{ports:?}");
    assert_eq!(client.idle_connections(&url("/")), 1);

    // Past every flow-control window, both ways: 3 MiB up and echoed back.
    buffer.reserve(3 << 20).unwrap();
    let upload = pattern(3 << 20);
    let (_, status, body) = send(client, &mut buffer, "POST", &url("/up"), Some(&upload)).unwrap();
    assert_eq!(status, 200);
    let prefix = format!("POST /up body={}\n", upload.len());
    assert_eq!(&body[..prefix.len()], prefix.as_bytes());
    assert!(
        body[prefix.len()..].starts_with(&upload),
        "the echo differs"
    );

    let (_, status, body) = send(client, &mut buffer, "HEAD", &url("/hello"), None).unwrap();
    assert_eq!((status, body.len()), (200, 0));

    // A 307 keeps method and body.
    let (_, status, body) = send(
        client,
        &mut buffer,
        "PUT",
        &url("/redirect/307/moved"),
        Some(b"kept"),
    )
    .unwrap();
    assert_eq!(status, 200);
    assert!(body.starts_with(b"PUT /moved body=4\nkept"), "{body:?}");

    // A body held back for `100 Continue` goes when the wait ends (ringwire's
    // server sends none over HTTP/2).
    let expecting = url("/expecting");
    let request = buffer
        .request("PUT", &expecting)
        .unwrap()
        .headers()
        .unwrap()
        .expect_continue()
        .body(b"waited")
        .unwrap();
    let mut response = client.send(&mut buffer, &request).unwrap();
    assert_eq!(response.status(), 200);
    assert_eq!(response.bytes().unwrap(), b"PUT /expecting body=6\nwaited");

    assert_eq!(
        send(client, &mut buffer, "GET", &url("/peer"), None)
            .unwrap()
            .2,
        ports[0]
    );
}

#[test]
fn negotiated_by_alpn_with_ringwire_over_tls() {
    let (addr, cert) = common::ringwire_h2(Echo);
    let client = client(Http2::Negotiate, Some(&cert));
    exchanges(&client, &format!("https://localhost:{}", addr.port()));
}

#[test]
fn with_prior_knowledge_over_cleartext() {
    let addr = common::ringwire(Echo);
    let client = client(Http2::PriorKnowledge, None);
    exchanges(&client, &format!("http://{addr}"));
}

#[test]
fn a_server_that_declines_h2_is_spoken_to_in_http1() {
    let (addr, cert) = common::ringwire_tls(Echo);
    let client = client(Http2::Negotiate, Some(&cert));
    let url = Url::parse(&format!("https://localhost:{}/", addr.port())).unwrap();
    let mut buffer = RequestBuffer::new().unwrap();
    let (protocol, status, _) = send(&client, &mut buffer, "GET", &url, None).unwrap();
    assert_eq!((protocol, status), (Protocol::Http1, 200));

    // Negotiating is for TLS: cleartext stays HTTP/1.1.
    let addr = common::ringwire(Echo);
    let url = Url::parse(&format!("http://{addr}/")).unwrap();
    let (protocol, _, _) = send(&client, &mut buffer, "GET", &url, None).unwrap();
    assert_eq!(protocol, Protocol::Http1);
}

/// The tokio client's exchanges over HTTP/2 to `base`: the same as
/// [`exchanges`] but redirects (the redirect logic is the drivers' shared
/// part), on the origin's shared connection if `multiplexed`, else on one
/// pooled.
async fn async_exchanges(client: &AsyncClient, base: &str, multiplexed: bool) {
    let mut buffer = RequestBuffer::new().unwrap();
    let url = |path: &str| Url::parse(&format!("{base}{path}")).unwrap();
    let mut peers = Vec::new();
    buffer.reserve(3 << 20).unwrap();
    let upload = pattern(3 << 20);
    for (method, path, body) in [
        ("GET", "/peer", None),
        ("POST", "/up", Some(&upload[..])),
        ("HEAD", "/hello", None),
        ("GET", "/peer", None),
    ] {
        let url = url(path);
        let request = buffer.request(method, &url).unwrap().headers().unwrap();
        let request = match body {
            Some(body) => request.body(body).unwrap(),
            None => request.finish().unwrap(),
        };
        let mut response = client.send(&mut buffer, &request).await.unwrap();
        assert_eq!(
            (response.protocol(), response.status()),
            (Protocol::Http2, 200)
        );
        let got = response.bytes().await.unwrap();
        match (path, body) {
            ("/peer", _) => peers.push(got),
            (_, Some(body)) => assert!(got.ends_with(body), "the echo differs"),
            _ => assert!(got.is_empty()),
        }
    }
    assert_eq!(peers[0], peers[1], "one connection");
    assert_eq!(
        client.idle_connections(&url("/")),
        usize::from(!multiplexed)
    );

    let expecting = url("/expecting");
    let request = buffer
        .request("PUT", &expecting)
        .unwrap()
        .headers()
        .unwrap();
    let request = request.expect_continue().body(b"waited").unwrap();
    let mut response = client.send(&mut buffer, &request).await.unwrap();
    assert_eq!(
        response.bytes().await.unwrap(),
        b"PUT /expecting body=6\nwaited"
    );
}

fn async_client(http2: Http2, cert: Option<&[u8]>) -> AsyncClient {
    async_client_sharing(http2, true, cert)
}

/// [`async_client`], its requests to an HTTP/2 origin on a shared connection if
/// `multiplex`.
fn async_client_sharing(http2: Http2, multiplex: bool, cert: Option<&[u8]>) -> AsyncClient {
    let config = ClientConfig {
        http2,
        http2_multiplex: multiplex,
        expect_continue_timeout: Duration::from_millis(100),
        request_timeout: Some(Duration::from_secs(20)),
        ..ClientConfig::default()
    };
    let tls = ringwire_tls::ClientConfig::default().without_system_roots();
    AsyncClient::with_tls(config, cert.map_or(tls.clone(), |c| tls.add_root_pem(c)))
}

#[tokio::test]
async fn the_tokio_client_too_by_alpn_and_with_prior_knowledge() {
    let (tls, cert) = common::ringwire_h2(Echo);
    let cleartext = common::ringwire(Echo);
    for multiplex in [true, false] {
        let client = async_client_sharing(Http2::Negotiate, multiplex, Some(&cert));
        let base = format!("https://localhost:{}", tls.port());
        async_exchanges(&client, &base, multiplex).await;
        let client = async_client_sharing(Http2::PriorKnowledge, multiplex, None);
        async_exchanges(&client, &format!("http://{cleartext}"), multiplex).await;
    }

    // Refused unprocessed: sent again, even a POST.
    let client = async_client(Http2::PriorKnowledge, None);
    let (addr, accepted) = scripted(|n| {
        if n == 0 {
            Act::Reset(ErrorCode::REFUSED_STREAM)
        } else {
            Act::Answer
        }
    });
    let url = Url::parse(&format!("http://{addr}/")).unwrap();
    let mut buffer = RequestBuffer::new().unwrap();
    let request = buffer.request("POST", &url).unwrap().headers().unwrap();
    let request = request.body(b"once").unwrap();
    let mut response = client.send(&mut buffer, &request).await.unwrap();
    assert_eq!(response.bytes().await.unwrap(), b"0123456789");
    assert_eq!(accepted.load(Ordering::SeqCst), 2);
}

/// What the scripted server does with a request on the `n`th connection.
#[derive(Clone, Copy)]
enum Act {
    Answer,
    /// The answer, then a `GOAWAY`: no request after this one.
    AnswerAndGoAway,
    Reset(ErrorCode),
    /// A head announcing 10 bytes, 5 of them, then the connection closed.
    CutShort,
    /// A head at once, then the body echoed piece by piece as it comes, ending with it.
    Echo,
}

/// An HTTP/2 server on cleartext that acts on each connection's requests
/// as `act` says for that connection's number; returns its address and
/// how many connections it accepted.
fn scripted(act: fn(usize) -> Act) -> (SocketAddr, Arc<AtomicUsize>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let accepted = Arc::new(AtomicUsize::new(0));
    let count = accepted.clone();
    thread::spawn(move || {
        for sock in listener.incoming() {
            let n = count.fetch_add(1, Ordering::SeqCst);
            let sock = sock.unwrap();
            thread::spawn(move || serve(sock, act(n)));
        }
    });
    (addr, accepted)
}

fn serve(mut sock: TcpStream, act: Act) {
    let mut conn = Connection::server(ringwire_http2::Config::default());
    let mut input = Vec::new();
    let mut chunk = [0u8; 16 << 10];
    loop {
        let mut used = 0;
        loop {
            let (n, event) = conn.recv(&input[used..]).expect("a valid client");
            used += n;
            let ended = match event {
                Some(Event::Request {
                    stream, end_stream, ..
                }) => {
                    if let Act::Echo = act {
                        conn.send_response(stream, 200, [], false).unwrap();
                    }
                    end_stream.then_some(stream)
                }
                Some(Event::Data {
                    stream,
                    end_stream,
                    data,
                }) => {
                    let piece = Bytes::copy_from_slice(data);
                    conn.release(stream, piece.len());
                    if let Act::Echo = act {
                        let _ = conn.send_data(stream, piece, end_stream);
                        None
                    } else {
                        end_stream.then_some(stream)
                    }
                }
                None if n == 0 => break,
                _ => None,
            };
            if let Some(stream) = ended {
                if !respond(&mut conn, stream, act) {
                    // Closed with a FIN, not a reset: the rest read and dropped.
                    while !conn.transmit().is_empty() {
                        let _ = sock.write_all(conn.transmit());
                        conn.advance(conn.transmit().len());
                    }
                    let _ = sock.shutdown(std::net::Shutdown::Write);
                    while sock.read(&mut chunk).is_ok_and(|n| n > 0) {}
                    return;
                }
            }
        }
        input.drain(..used);
        while !conn.transmit().is_empty() {
            if sock.write_all(conn.transmit()).is_err() {
                return;
            }
            conn.advance(conn.transmit().len());
        }
        match sock.read(&mut chunk) {
            Ok(0) | Err(_) => return,
            Ok(n) => input.extend_from_slice(&chunk[..n]),
        }
    }
}

/// Acts on a whole request; `false` when the connection is to close.
fn respond(conn: &mut Connection, stream: StreamId, act: Act) -> bool {
    let length: &[(&[u8], &[u8])] = &[(b"content-length", b"10")];
    match act {
        Act::Answer => {
            conn.send_response(stream, 200, length.iter().copied(), false)
                .unwrap();
            conn.send_data(stream, Bytes::from_static(b"0123456789"), true)
                .unwrap();
        }
        Act::AnswerAndGoAway => {
            respond(conn, stream, Act::Answer);
            conn.go_away();
        }
        Act::Reset(code) => conn.reset_stream(stream, code),
        // A request with no body: nothing to echo.
        Act::Echo => conn.send_data(stream, Bytes::new(), true).unwrap(),
        Act::CutShort => {
            conn.send_response(stream, 200, length.iter().copied(), false)
                .unwrap();
            conn.send_data(stream, Bytes::from_static(b"01234"), false)
                .unwrap();
            return false;
        }
    }
    true
}

#[test]
fn a_refused_request_goes_again_on_a_fresh_connection_even_a_post() {
    let (addr, accepted) = scripted(|n| {
        if n == 0 {
            Act::Reset(ErrorCode::REFUSED_STREAM)
        } else {
            Act::Answer
        }
    });
    let client = client(Http2::PriorKnowledge, None);
    let url = Url::parse(&format!("http://{addr}/")).unwrap();
    let mut buffer = RequestBuffer::new().unwrap();
    let (_, status, body) = send(&client, &mut buffer, "GET", &url, None).unwrap();
    assert_eq!((status, &body[..]), (200, &b"0123456789"[..]));
    // A POST, not idempotent, is sent again only because the server said
    // it never acted on it.
    let (addr, accepted_post) = scripted(|n| {
        if n == 0 {
            Act::Reset(ErrorCode::REFUSED_STREAM)
        } else {
            Act::Answer
        }
    });
    let url = Url::parse(&format!("http://{addr}/")).unwrap();
    let (_, status, _) = send(&client, &mut buffer, "POST", &url, Some(b"once")).unwrap();
    assert_eq!(status, 200);
    assert_eq!(accepted.load(Ordering::SeqCst), 2);
    assert_eq!(accepted_post.load(Ordering::SeqCst), 2);
}

#[test]
fn a_reset_stream_and_a_body_cut_short_are_errors() {
    let (addr, accepted) = scripted(|_| Act::Reset(ErrorCode::CANCEL));
    let client = client(Http2::PriorKnowledge, None);
    let url = Url::parse(&format!("http://{addr}/")).unwrap();
    let mut buffer = RequestBuffer::new().unwrap();
    let failed = send(&client, &mut buffer, "GET", &url, None);
    assert!(
        matches!(failed, Err(Error::Http2Reset(code)) if code == ErrorCode::CANCEL),
        "{failed:?}"
    );
    assert_eq!(accepted.load(Ordering::SeqCst), 1, "not sent again");

    let (addr, _) = scripted(|_| Act::CutShort);
    let url = Url::parse(&format!("http://{addr}/")).unwrap();
    let failed = send(&client, &mut buffer, "GET", &url, None);
    assert!(
        matches!(
            failed,
            Err(Error::IncompleteBody {
                received: 5,
                expected: None,
                ..
            })
        ),
        "{failed:?}"
    );
    assert_eq!(client.idle_connections(&url), 0);
}

/// ringwire's server on cleartext HTTP/2 (prior knowledge) with `h2`'s settings,
/// answering with `handler` on a runtime of its own; the URL of `path` on it.
fn h2c_server(
    h2: ringwire_http2::Config,
    handler: impl ringwire_server::Handler,
    path: &str,
) -> Url {
    let config = ringwire_server::ServerConfig {
        addr: "127.0.0.1:0".parse().unwrap(),
        http2: Some(h2),
        ..ringwire_server::ServerConfig::default()
    };
    let server = ringwire_server::Server::bind(config).unwrap();
    let url = Url::parse(&format!("http://{}{path}", server.local_addr())).unwrap();
    thread::spawn(move || {
        let runtime = tokio::runtime::Runtime::new().unwrap();
        runtime.block_on(server.serve(handler)).unwrap();
    });
    url
}

/// A streamed body over HTTP/2, each piece framed in place when the server's frames are
/// large enough to take it whole (the frame written from the send ring) and copied into
/// frames of the server's size when they are not: the server reads the same bytes either way,
/// from both clients, with a length and without.
#[test]
fn streamed_bodies_framed_in_place_or_copied_arrive_whole() {
    let body = pattern(3 << 20);
    let expected = summed(&body);
    for frame in [16 << 10, 1 << 20] {
        let h2 = ringwire_http2::Config {
            max_frame_size: frame,
            ..ringwire_http2::Config::default()
        };
        let url = h2c_server(h2, Sum, "/sum");
        let blocking = client(Http2::PriorKnowledge, None);
        let tokio_client = async_client(Http2::PriorKnowledge, None);
        let runtime = tokio::runtime::Runtime::new().unwrap();
        for len in [Some(body.len() as u64), None] {
            let mut buffer = RequestBuffer::new().unwrap();
            let head = buffer.request("PUT", &url).unwrap().headers().unwrap();
            let request = head.body_stream(len).unwrap();
            let mut response = blocking
                .send_streamed(&mut buffer, &request, &body[..])
                .unwrap();
            assert_eq!(response.protocol(), Protocol::Http2);
            assert_eq!(response.text().unwrap(), expected, "{frame} {len:?}");
            drop(response);
            let head = buffer.request("PUT", &url).unwrap().headers().unwrap();
            let request = head.body_stream(len).unwrap();
            let answer = runtime.block_on(async {
                let sent = tokio_client.send_streamed(&mut buffer, &request, &body[..]);
                sent.await.unwrap().text().await.unwrap()
            });
            assert_eq!(answer, expected, "{frame} {len:?}");
        }
    }
}

/// A shared connection to `url`'s origin from a client of the tests' settings.
async fn connect_shared(url: &Url) -> ringwire_client::tokio::Http2Connection {
    let client = async_client(Http2::Off, None);
    client.http2_connection(url).await.unwrap()
}

/// A server's HTTP/2 settings with at most `streams` at once.
fn stream_limit(streams: u32) -> ringwire_http2::Config {
    ringwire_http2::Config {
        max_concurrent_streams: streams,
        ..ringwire_http2::Config::default()
    }
}

/// A request on a shared connection, and its whole answer.
async fn shared(
    conn: &ringwire_client::tokio::Http2Connection,
    method: &str,
    url: &Url,
    body: &[u8],
) -> Result<Vec<u8>, Error> {
    let mut buffer = RequestBuffer::new()?;
    buffer.reserve(body.len())?;
    let request = buffer.request(method, url)?.headers()?.body(body)?;
    let mut response = conn.send(&mut buffer, &request).await?;
    assert_eq!(response.status(), 200);
    response.bytes().await
}

/// Many tasks' exchanges at once on one connection to `base`: slow answers overlap,
/// uploads past every window go both ways at once, and every request came over the same
/// connection.
async fn shared_exchanges(client: &AsyncClient, base: &str) {
    let url = |path: &str| Url::parse(&format!("{base}{path}")).unwrap();
    let conn = client.http2_connection(&url("/")).await.unwrap();
    let start = std::time::Instant::now();
    let slow: Vec<_> = (0..16)
        .map(|_| {
            let (conn, url) = (conn.clone(), url("/slow/300"));
            tokio::spawn(async move { shared(&conn, "GET", &url, b"").await })
        })
        .collect();
    for task in slow {
        assert!(task
            .await
            .unwrap()
            .unwrap()
            .starts_with(b"GET /slow/300 body=0"));
    }
    // One after another they take 4.8 s.
    let took = start.elapsed();
    assert!(took < Duration::from_millis(2400), "{took:?}");

    let upload = Arc::new(pattern(1 << 20));
    let uploads: Vec<_> = (0..4)
        .map(|i| {
            let (conn, url, upload) = (conn.clone(), url(&format!("/up/{i}")), upload.clone());
            tokio::spawn(async move {
                let echo = shared(&conn, "POST", &url, &upload).await.unwrap();
                assert!(echo.starts_with(format!("POST /up/{i} body=1048576\n").as_bytes()));
                assert!(echo.ends_with(&upload), "the echo differs");
            })
        })
        .collect();
    let peers: Vec<_> = (0..4)
        .map(|_| {
            let (conn, url) = (conn.clone(), url("/peer"));
            tokio::spawn(async move { shared(&conn, "GET", &url, b"").await.unwrap() })
        })
        .collect();
    for task in uploads {
        task.await.unwrap();
    }
    let mut ports = Vec::new();
    for task in peers {
        ports.push(task.await.unwrap());
    }
    assert!(ports.iter().all(|p| *p == ports[0]), "{ports:?}");
    assert!(conn.is_open());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_shared_connection_carries_many_exchanges_at_once() {
    let (addr, cert) = common::ringwire_h2(Echo);
    let client = async_client(Http2::Off, Some(&cert));
    shared_exchanges(&client, &format!("https://localhost:{}", addr.port())).await;
    let addr = common::ringwire(Echo);
    shared_exchanges(&client, &format!("http://{addr}")).await;

    // A server that speaks HTTP/1.1 only is told apart.
    let (addr, cert) = common::ringwire_tls(Echo);
    let client = async_client(Http2::Off, Some(&cert));
    let url = Url::parse(&format!("https://localhost:{}/", addr.port())).unwrap();
    let declined = client.http2_connection(&url).await;
    assert!(matches!(declined, Err(Error::NotHttp2)), "{declined:?}");
}

/// The server's limit on concurrent streams holds requests back until streams close.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn requests_past_the_servers_stream_limit_wait_their_turn() {
    let url = h2c_server(stream_limit(2), Echo, "/slow/200");
    let conn = connect_shared(&url).await;
    // The server's SETTINGS first.
    shared(&conn, "GET", &url, b"").await.unwrap();
    let start = std::time::Instant::now();
    let tasks: Vec<_> = (0..8)
        .map(|_| {
            let (conn, url) = (conn.clone(), url.clone());
            tokio::spawn(async move { shared(&conn, "GET", &url, b"").await })
        })
        .collect();
    for task in tasks {
        task.await.unwrap().unwrap();
    }
    // Two at a time: four rounds of 200 ms.
    let took = start.elapsed();
    assert!(took >= Duration::from_millis(750), "{took:?}");
}

/// A response given up midway resets its stream alone; one the server resets fails alone;
/// and the connection closes once nothing holds it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn streams_end_alone_and_the_connection_with_its_last_holder() {
    let addr = common::ringwire(Echo);
    let client = async_client(Http2::Off, None);
    let url = Url::parse(&format!("http://{addr}/up")).unwrap();
    let conn = client.http2_connection(&url).await.unwrap();
    let upload = pattern(3 << 20);
    let mut buffer = RequestBuffer::new().unwrap();
    buffer.reserve(upload.len()).unwrap();
    let request = buffer.request("POST", &url).unwrap().headers().unwrap();
    let request = request.body(&upload).unwrap();
    let mut response = conn.send(&mut buffer, &request).await.unwrap();
    assert!(response.chunk().await.unwrap().is_some());
    drop(response);
    for _ in 0..3 {
        let echo = shared(&conn, "POST", &url, b"after").await.unwrap();
        assert_eq!(echo, b"POST /up body=5\nafter");
    }

    let (closed_tx, closed) = std::sync::mpsc::channel();
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    thread::spawn(move || {
        let (sock, _) = listener.accept().unwrap();
        serve(sock, Act::Reset(ErrorCode::CANCEL));
        closed_tx.send(()).unwrap();
    });
    let url = Url::parse(&format!("http://{addr}/")).unwrap();
    let conn = client.http2_connection(&url).await.unwrap();
    let other = conn.clone();
    for conn in [&conn, &other] {
        let failed = shared(conn, "GET", &url, b"").await;
        assert!(
            matches!(failed, Err(Error::Http2Reset(code)) if code == ErrorCode::CANCEL),
            "{failed:?}"
        );
        assert!(conn.is_open());
    }
    drop(conn);
    assert!(closed.try_recv().is_err(), "a clone still holds it");
    drop(other);
    let waited = tokio::task::spawn_blocking(move || closed.recv_timeout(Duration::from_secs(5)));
    assert!(waited.await.unwrap().is_ok(), "the connection stayed open");
}

/// Streamed bodies on a shared connection: several at once, past every window, with a
/// length and without, each read by the server whole; a source that ends short of its
/// length fails its own request alone.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn streamed_bodies_share_a_connection_too() {
    let url = h2c_server(ringwire_http2::Config::default(), Sum, "/sum");
    let body = Arc::new(pattern(3 << 20));
    let expected = summed(&body);
    let client = async_client(Http2::Off, None);
    let conn = client.http2_connection(&url).await.unwrap();
    let uploads: Vec<_> = [Some(body.len() as u64), None, Some(body.len() as u64), None]
        .into_iter()
        .map(|len| {
            let (conn, url, body) = (conn.clone(), url.clone(), body.clone());
            tokio::spawn(async move {
                let mut buffer = RequestBuffer::new().unwrap();
                let head = buffer.request("PUT", &url).unwrap().headers().unwrap();
                let request = head.body_stream(len).unwrap();
                let mut response = conn
                    .send_streamed(&mut buffer, &request, &body[..])
                    .await
                    .unwrap();
                assert_eq!(response.status(), 200);
                response.text().await.unwrap()
            })
        })
        .collect();
    for upload in uploads {
        assert_eq!(upload.await.unwrap(), expected);
    }

    let mut buffer = RequestBuffer::new().unwrap();
    let head = buffer.request("PUT", &url).unwrap().headers().unwrap();
    let request = head.body_stream(Some(10)).unwrap();
    let short = conn
        .send_streamed(&mut buffer, &request, &b"four"[..])
        .await;
    assert!(
        matches!(
            short,
            Err(Error::BodySourceEnded {
                sent: 4,
                expected: 10
            })
        ),
        "{short:?}"
    );
    let head = buffer.request("PUT", &url).unwrap().headers().unwrap();
    let request = head.body_stream(None).unwrap();
    let mut response = conn
        .send_streamed(&mut buffer, &request, &b"after"[..])
        .await
        .unwrap();
    assert_eq!(response.text().await.unwrap(), summed(b"after"));
}

/// With a keepalive, a shared connection to a server that went silent fails its exchanges
/// once a `PING` goes unanswered, and one to a live server stays open through its idle time.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_keepalive_tells_a_silent_server_from_a_live_one() {
    let keepalive = ClientConfig {
        http2_keepalive: Some(Duration::from_millis(100)),
        ..ClientConfig::default()
    };
    let client = AsyncClient::new(keepalive);
    // Reads all, answers nothing (not even SETTINGS), never closes.
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    thread::spawn(move || {
        let (mut sock, _) = listener.accept().unwrap();
        let mut chunk = [0; 4096];
        while sock.read(&mut chunk).is_ok_and(|n| n > 0) {}
    });
    let url = Url::parse(&format!("http://{addr}/")).unwrap();
    let conn = client.http2_connection(&url).await.unwrap();
    let start = std::time::Instant::now();
    let silent = tokio::time::timeout(Duration::from_secs(10), shared(&conn, "GET", &url, b""));
    let failed = silent.await.expect("the keepalive gave up");
    assert!(
        matches!(failed, Err(Error::Timeout(ringwire_client::Phase::Request))),
        "{failed:?}"
    );
    assert!(
        start.elapsed() >= Duration::from_millis(150),
        "{:?}",
        start.elapsed()
    );
    assert!(!conn.is_open());

    let addr = common::ringwire(Echo);
    let url = Url::parse(&format!("http://{addr}/peer")).unwrap();
    let conn = client.http2_connection(&url).await.unwrap();
    let first = shared(&conn, "GET", &url, b"").await.unwrap();
    tokio::time::sleep(Duration::from_millis(600)).await;
    assert!(conn.is_open());
    assert_eq!(shared(&conn, "GET", &url, b"").await.unwrap(), first);
}

/// Full duplex on a shared connection: each piece comes back before the next goes (a
/// client that sent the whole body first would wait forever), and a body past every
/// window goes from one task while another reads its echo.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_duplex_exchange_reads_while_it_sends() {
    let (addr, _) = scripted(|_| Act::Echo);
    let url = Url::parse(&format!("http://{addr}/echo")).unwrap();
    let client = async_client(Http2::Off, None);
    let conn = client.http2_connection(&url).await.unwrap();
    let mut buffer = RequestBuffer::new().unwrap();
    let head = buffer.request("POST", &url).unwrap().headers().unwrap();
    let request = head.body_stream(None).unwrap();
    let (mut upload, answer) = conn.send_duplex(&mut buffer, &request).await.unwrap();
    let mut response = answer.response().await.unwrap();
    assert_eq!(response.status(), 200);
    for i in 0..5 {
        let piece = format!("piece {i}");
        upload.send(piece.as_bytes()).await.unwrap();
        let mut echo = Vec::new();
        while echo.len() < piece.len() {
            echo.extend_from_slice(response.chunk().await.unwrap().unwrap());
        }
        assert_eq!(echo, piece.as_bytes());
    }
    upload.finish();
    assert!(response.chunk().await.unwrap().is_none());

    let body = Arc::new(pattern(3 << 20));
    let request = buffer
        .request("POST", &url)
        .unwrap()
        .headers()
        .unwrap()
        .body_stream(None)
        .unwrap();
    let (mut upload, answer) = conn.send_duplex(&mut buffer, &request).await.unwrap();
    let sending = {
        let body = body.clone();
        tokio::spawn(async move {
            upload.send(&body).await.unwrap();
            upload.finish();
        })
    };
    let echo = answer.response().await.unwrap().bytes().await.unwrap();
    sending.await.unwrap();
    assert!(echo == *body, "the echo differs");

    // An upload given up resets its stream: the response half learns.
    let request = buffer
        .request("POST", &url)
        .unwrap()
        .headers()
        .unwrap()
        .body_stream(None)
        .unwrap();
    let (upload, answer) = conn.send_duplex(&mut buffer, &request).await.unwrap();
    let mut response = answer.response().await.unwrap();
    drop(upload);
    let failed = response.chunk().await.map(|c| c.map(<[u8]>::to_vec));
    assert!(
        matches!(failed, Err(Error::Http2Reset(code)) if code == ErrorCode::CANCEL),
        "{failed:?}"
    );
    assert!(conn.is_open());
}

/// Refuses every request at its head, the body unread, but for small ones, which it sums.
#[derive(Debug)]
struct Refuse;

impl ringwire_server::Handler for Refuse {
    fn streams_body(&self, _: &ringwire_http1::Request<'_>) -> bool {
        true
    }

    async fn call(&self, request: &ringwire_server::Request<'_>) -> ringwire_server::Response {
        match request.header("content-length") {
            Some(b"5") => Sum.call(request).await,
            _ => ringwire_server::Response::new(413),
        }
    }
}

/// A streamed upload the server refuses at its head stops, its answer read; the shared
/// connection goes on, the refused stream closed rather than left half open.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_upload_stops_and_the_connection_goes_on() {
    let url = h2c_server(stream_limit(1), Refuse, "/sum");
    let conn = connect_shared(&url).await;
    let body = pattern(3 << 20);
    let mut buffer = RequestBuffer::new().unwrap();
    // One stream at a time: each request waits for the one before to close (a stream
    // left half open would hold the next until the server's own body timeout).
    let refused = async {
        for _ in 0..3 {
            let head = buffer.request("PUT", &url).unwrap().headers().unwrap();
            let request = head.body_stream(None).unwrap();
            let mut response = conn
                .send_streamed(&mut buffer, &request, &body[..])
                .await
                .unwrap();
            assert_eq!(response.status(), 413);
            response.bytes().await.unwrap();
        }
        shared(&conn, "PUT", &url, b"small").await.unwrap()
    };
    let answer = tokio::time::timeout(Duration::from_secs(5), refused)
        .await
        .expect("a refused stream was left open");
    assert!(answer.starts_with(b"5 "), "{answer:?}");

    // A duplex upload refused so: this piece fails, and every later one.
    let head = buffer.request("PUT", &url).unwrap().headers().unwrap();
    let request = head.body_stream(None).unwrap();
    let (mut upload, answer) = conn.send_duplex(&mut buffer, &request).await.unwrap();
    let response = answer.response().await.unwrap();
    assert_eq!(response.status(), 413);
    for piece in [&body[..], b"more"] {
        let refused = upload.send(piece).await;
        assert!(
            matches!(refused, Err(Error::Http2Reset(code)) if code == ErrorCode::NO_ERROR),
            "{refused:?}"
        );
    }
}

/// A server going away: the shared connection says it is no longer open, and a request
/// sent after is refused at once (`REFUSED_STREAM`, for the caller to send elsewhere).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_shared_connection_the_server_leaves_refuses_new_requests() {
    let (addr, _) = scripted(|_| Act::AnswerAndGoAway);
    let url = Url::parse(&format!("http://{addr}/")).unwrap();
    let conn = connect_shared(&url).await;
    assert_eq!(
        shared(&conn, "GET", &url, b"").await.unwrap(),
        b"0123456789"
    );
    for _ in 0..200 {
        if !conn.is_open() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert!(!conn.is_open(), "the GOAWAY went unnoticed");
    let refused = shared(&conn, "GET", &url, b"").await;
    assert!(
        matches!(refused, Err(Error::Http2Reset(code)) if code == ErrorCode::REFUSED_STREAM),
        "{refused:?}"
    );
}

/// `GET url` with `client`, and the whole answer.
async fn get(client: &AsyncClient, url: &Url) -> Result<Vec<u8>, Error> {
    let mut buffer = RequestBuffer::new().unwrap();
    let request = buffer.request("GET", url)?.headers()?.finish()?;
    client.send(&mut buffer, &request).await?.bytes().await
}

/// `GET url` from `n` tasks at once with `client`: their answers.
async fn gets_at_once(
    client: &Arc<AsyncClient>,
    url: &Url,
    n: usize,
) -> Vec<Result<Vec<u8>, Error>> {
    let tasks: Vec<_> = (0..n)
        .map(|_| {
            let (client, url) = (client.clone(), url.clone());
            tokio::spawn(async move { get(&client, &url).await })
        })
        .collect();
    let mut answers = Vec::new();
    for task in tasks {
        answers.push(task.await.unwrap());
    }
    answers
}

/// The client's own requests to an origin that speaks HTTP/2 go on one connection at
/// once: its streams, up to the server's limit (past it, they wait their turn); with
/// `http2_multiplex` off, each takes a connection of its own.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_clients_requests_to_an_h2_origin_share_its_connection() {
    let url = h2c_server(stream_limit(2), Echo, "/peer");
    for multiplex in [true, false] {
        let client = Arc::new(async_client_sharing(Http2::PriorKnowledge, multiplex, None));
        let first = get(&client, &url).await.unwrap();
        let answers = gets_at_once(&client, &url, 16).await;
        let same = answers
            .iter()
            .filter(|a| *a.as_ref().unwrap() == first)
            .count();
        if multiplex {
            assert_eq!(same, 16, "every request on the first one's connection");
            assert_eq!(client.idle_connections(&url), 0);
        } else {
            assert!(same < 16, "tasks at once on one connection of its own");
            assert!(client.idle_connections(&url) > 1);
        }
    }
    // Two at a time: four rounds of 200 ms.
    let slow = url.join("/slow/200").unwrap();
    let client = Arc::new(async_client(Http2::PriorKnowledge, None));
    get(&client, &slow).await.unwrap();
    let start = std::time::Instant::now();
    for answer in gets_at_once(&client, &slow, 8).await {
        answer.unwrap();
    }
    let took = start.elapsed();
    assert!(took >= Duration::from_millis(750), "{took:?}");
}

/// A shared connection the server leaves (`GOAWAY`), or the client's idle timeout
/// passes, is replaced by a new one; a request the server refused on it goes again there.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_clients_shared_connection_is_replaced_when_it_goes() {
    let (addr, accepted) = scripted(|_| Act::AnswerAndGoAway);
    let url = Url::parse(&format!("http://{addr}/")).unwrap();
    let client = async_client(Http2::PriorKnowledge, None);
    for _ in 0..3 {
        assert_eq!(get(&client, &url).await.unwrap(), b"0123456789");
    }
    assert_eq!(accepted.load(Ordering::SeqCst), 3);

    let (addr, accepted) = scripted(|_| Act::Answer);
    let url = Url::parse(&format!("http://{addr}/")).unwrap();
    let config = ClientConfig {
        http2: Http2::PriorKnowledge,
        idle_timeout: Duration::from_millis(100),
        ..ClientConfig::default()
    };
    let client = AsyncClient::new(config);
    get(&client, &url).await.unwrap();
    get(&client, &url).await.unwrap();
    assert_eq!(accepted.load(Ordering::SeqCst), 1);
    tokio::time::sleep(Duration::from_millis(300)).await;
    get(&client, &url).await.unwrap();
    assert_eq!(accepted.load(Ordering::SeqCst), 2);
}

/// A client used from one runtime after another: the shared connection begun on the
/// first ended with it, and the next request opens another instead of waiting on it.
#[test]
fn a_client_outlives_the_runtime_its_shared_connection_began_on() {
    let (addr, accepted) = scripted(|_| Act::Answer);
    let url = Url::parse(&format!("http://{addr}/")).unwrap();
    let client = async_client(Http2::PriorKnowledge, None);
    for _ in 0..2 {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let answer = runtime.block_on(get(&client, &url));
        assert_eq!(answer.unwrap(), b"0123456789");
    }
    assert_eq!(accepted.load(Ordering::SeqCst), 2);
}

/// Requests to an origin known to speak HTTP/2 (here by prior knowledge) that has no
/// connection wait for one task's dial instead of each dialing its own; when that dial
/// fails, each fails (or dials) on its own rather than wait on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn requests_at_once_to_an_h2_origin_wait_for_one_dial() {
    let (addr, accepted) = scripted(|_| Act::Answer);
    let url = Url::parse(&format!("http://{addr}/")).unwrap();
    let client = Arc::new(async_client(Http2::PriorKnowledge, None));
    for answer in gets_at_once(&client, &url, 16).await {
        assert_eq!(answer.unwrap(), b"0123456789");
    }
    assert_eq!(accepted.load(Ordering::SeqCst), 1);

    let nobody = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap();
    let url = Url::parse(&format!("http://{nobody}/")).unwrap();
    for failed in gets_at_once(&client, &url, 8).await {
        assert!(matches!(failed, Err(Error::Connect { .. })), "{failed:?}");
    }
}

/// A port that forwards each connection to one of two servers (an origin's server
/// replaced behind its address), counting what each was given.
struct Balancer {
    addr: SocketAddr,
    /// Which server new connections go to.
    to: Arc<AtomicUsize>,
    accepted: Arc<[AtomicUsize; 2]>,
    /// Both ends of every connection forwarded, to end them.
    forwarded: Arc<Mutex<Vec<TcpStream>>>,
}

impl Balancer {
    fn new(servers: [SocketAddr; 2]) -> Balancer {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let balancer = Balancer {
            addr: listener.local_addr().unwrap(),
            to: Arc::default(),
            accepted: Arc::default(),
            forwarded: Arc::default(),
        };
        let (to, accepted) = (balancer.to.clone(), balancer.accepted.clone());
        let forwarded = balancer.forwarded.clone();
        thread::spawn(move || {
            for client in listener.incoming() {
                let client = client.unwrap();
                let to = to.load(Ordering::SeqCst);
                accepted[to].fetch_add(1, Ordering::SeqCst);
                let server = TcpStream::connect(servers[to]).unwrap();
                let mut forwarded = forwarded.lock().unwrap();
                forwarded.extend([client.try_clone().unwrap(), server.try_clone().unwrap()]);
                for (mut from, mut into) in [
                    (client.try_clone().unwrap(), server.try_clone().unwrap()),
                    (server, client),
                ] {
                    thread::spawn(move || {
                        let _ = std::io::copy(&mut from, &mut into);
                        let _ = into.shutdown(std::net::Shutdown::Write);
                    });
                }
            }
        });
        balancer
    }

    /// Sends new connections to server `to`, ending those forwarded so far.
    fn switch(&self, to: usize) {
        self.to.store(to, Ordering::SeqCst);
        for stream in self.forwarded.lock().unwrap().drain(..) {
            let _ = stream.shutdown(std::net::Shutdown::Both);
        }
    }

    fn accepted(&self) -> [usize; 2] {
        let accepted = |i: usize| self.accepted[i].load(Ordering::SeqCst);
        [accepted(0), accepted(1)]
    }
}

/// An origin that spoke HTTP/2, then HTTP/1.1 only (its server replaced): once a
/// connection to it says so, its requests go to pooled HTTP/1.1 connections again,
/// rather than each dial a new one for the others to wait on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_origin_that_stops_speaking_h2_gets_the_pool_back() {
    let identity = common::localhost();
    let balancer = Balancer::new([
        common::ringwire_offering(Echo, &identity, &[b"h2", b"http/1.1"]),
        common::ringwire_offering(Echo, &identity, &[b"http/1.1"]),
    ]);
    let url = Url::parse(&format!("https://localhost:{}/", balancer.addr.port())).unwrap();
    let client = Arc::new(async_client(Http2::Negotiate, Some(&identity.0)));
    get(&client, &url).await.unwrap();
    balancer.switch(1);
    for _ in 0..4 {
        get(&client, &url).await.unwrap();
    }
    assert_eq!(balancer.accepted(), [1, 1]);
    assert_eq!(client.idle_connections(&url), 1);
}
