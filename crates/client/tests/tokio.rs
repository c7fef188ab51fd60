//! The async client on the tokio driver against the same real servers.

mod common;

use std::sync::Arc;
use std::time::Duration;

use common::{Echo, Python, Raw, Reply};
use ringwire_client::tokio::Client;
use ringwire_client::{ClientConfig, Error, Phase, RequestBuffer, Url};

async fn get(client: &Client, url: &str) -> Result<(u16, String), Error> {
    let mut response = client.get(url).await?;
    Ok((response.status(), response.text().await?))
}

#[tokio::test]
async fn round_trips_and_keep_alive_on_ringwire_server() {
    let addr = common::ringwire(Echo);
    let client = Client::default();
    let url = Url::parse(&format!("http://{addr}/echo")).unwrap();
    let mut buffer = RequestBuffer::new().unwrap();
    let request = buffer
        .request("POST", &url)
        .unwrap()
        .query("a", "1 2")
        .unwrap()
        .headers()
        .unwrap()
        .header("x-test", "async")
        .unwrap()
        .body(b"payload")
        .unwrap();
    let mut response = client.send(&mut buffer, &request).await.unwrap();
    assert_eq!(response.status(), 200);
    assert_eq!(
        response.text().await.unwrap(),
        "POST /echo?a=1%202 body=7\npayload\nx-test: async"
    );

    let peer = format!("http://{addr}/peer");
    let first = get(&client, &peer).await.unwrap().1;
    for _ in 0..3 {
        assert_eq!(get(&client, &peer).await.unwrap().1, first);
    }
    assert_eq!(client.idle_connections(&url), 1);
}

#[tokio::test]
async fn python_chunked_streams_through_the_ring() {
    let python = Python::start();
    let client = Client::default();
    assert_eq!(
        get(&client, &python.url("/chunked")).await.unwrap(),
        (200, "hello chunked world".into())
    );
    let url = Url::parse(&python.url("/big")).unwrap();
    let mut buffer = RequestBuffer::new().unwrap();
    let request = buffer
        .request("GET", &url)
        .unwrap()
        .headers()
        .unwrap()
        .finish()
        .unwrap();
    let mut response = client.send(&mut buffer, &request).await.unwrap();
    let mut total = 0;
    while let Some(chunk) = response.chunk().await.unwrap() {
        total += chunk.len();
    }
    assert_eq!(total, 4 << 20);
    drop(response);
    // Both chunked bodies went over one kept-alive connection...
    assert_eq!(client.idle_connections(&url), 1);
    assert_eq!(
        get(&client, &python.url("/close")).await.unwrap().1,
        "until the server closes"
    );
    // ...which the close-delimited body then used up.
    assert_eq!(client.idle_connections(&url), 0);
}

#[tokio::test]
async fn redirects_timeouts_and_malformed_responses() {
    let python = Python::start();
    let client = Client::new(ClientConfig {
        max_redirects: Some(2),
        request_timeout: Some(Duration::from_millis(300)),
        ..ClientConfig::default()
    });
    let (status, port) = get(&client, &python.url("/redirect")).await.unwrap();
    assert_eq!(status, 200);
    assert!(port.parse::<u16>().is_ok(), "{port}");
    // Following none is not the same as not following: the redirect is an error.
    let none = Client::new(ClientConfig {
        max_redirects: Some(0),
        ..ClientConfig::default()
    });
    let err = get(&none, &python.url("/redirect")).await.unwrap_err();
    assert!(matches!(err, Error::TooManyRedirects { max: 0 }), "{err}");

    // Port 1 on IPv6 loopback: refused, or no IPv6 here; either way named with brackets.
    let err = get(&client, "http://[::1]:1/").await.unwrap_err();
    assert!(
        err.to_string().starts_with("cannot connect to [::1]:1: "),
        "{err}"
    );

    let silent = Raw::start(|_| Reply::Silence);
    let err = get(&client, &silent.url("/")).await.unwrap_err();
    assert!(matches!(err, Error::Timeout(Phase::Request)), "{err}");

    let broken = Raw::start(|_| {
        Reply::SendAndClose(b"HTTP/1.1 200 OK\r\ncontent-length: 5\r\n\r\nab".to_vec())
    });
    let err = get(&client, &broken.url("/")).await.unwrap_err();
    assert!(
        matches!(
            err,
            Error::IncompleteBody {
                received: 2,
                expected: Some(5),
                without_close_notify: false
            }
        ),
        "{err}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_requests_on_spawned_tasks() {
    let addr = common::ringwire(Echo);
    let client = std::sync::Arc::new(Client::default());
    let url = Url::parse(&format!("http://{addr}/echo")).unwrap();
    let tasks: Vec<_> = (0..8)
        .map(|task| {
            let (client, url) = (std::sync::Arc::clone(&client), url.clone());
            // `spawn` needs the client's futures to be `Send`, a streamed body's too.
            tokio::spawn(async move {
                let body = format!("task {task}");
                let mut buffer = RequestBuffer::new()?;
                let head = buffer.request("POST", &url)?.headers()?;
                let mut response = if task % 2 == 0 {
                    let request = head.body(body.as_bytes())?;
                    client.send(&mut buffer, &request).await?
                } else {
                    let request = head.body_stream(Some(body.len() as u64))?;
                    client
                        .send_streamed(&mut buffer, &request, body.as_bytes())
                        .await?
                };
                response.text().await
            })
        })
        .collect();
    for (task, handle) in tasks.into_iter().enumerate() {
        let text = handle.await.unwrap().unwrap();
        assert_eq!(text, format!("POST /echo body=6\ntask {task}"));
    }
    let idle = client.idle_connections(&url);
    assert!((1..=8).contains(&idle), "{idle}");
}

#[tokio::test]
async fn an_upload_refused_early_gets_the_servers_answer() {
    let addr = common::refuse_early();
    let client = Client::default();
    let url = Url::parse(&format!("http://{addr}/upload")).unwrap();
    let body = vec![b'x'; 32 << 20];
    let mut buffer = RequestBuffer::new().unwrap();
    let request = buffer
        .request("POST", &url)
        .unwrap()
        .headers()
        .unwrap()
        .body(&body)
        .unwrap();
    let mut response = client.send(&mut buffer, &request).await.unwrap();
    assert_eq!(response.status(), 413);
    assert_eq!(response.text().await.unwrap(), "too large");
    drop(response);
    // The request was cut short: the connection is not kept.
    assert_eq!(client.idle_connections(&url), 0);
}

#[tokio::test]
async fn obsolete_line_folds_in_a_response_become_spaces() {
    let raw = Raw::start(|_| {
        Reply::Send(
            b"HTTP/1.1 200 OK\r\nx-folded: a\r\n\tb\r\ncontent-length: 2\r\n\r\nok".to_vec(),
        )
    });
    let client = Client::default();
    let url = Url::parse(&raw.url("/")).unwrap();
    let mut buffer = RequestBuffer::new().unwrap();
    let request = buffer
        .request("GET", &url)
        .unwrap()
        .headers()
        .unwrap()
        .finish()
        .unwrap();
    let mut response = client.send(&mut buffer, &request).await.unwrap();
    assert_eq!(response.header("x-folded"), Some(&b"a  \tb"[..]));
    assert_eq!(response.text().await.unwrap(), "ok");
}

/// A PUT of `body` to `addr` holding the body for `100 Continue`: the
/// status and the answer's text.
async fn put_expecting(client: &Client, addr: std::net::SocketAddr, body: &[u8]) -> (u16, String) {
    let url = Url::parse(&format!("http://{addr}/upload")).unwrap();
    let mut buffer = RequestBuffer::new().unwrap();
    let request = common::expecting(&mut buffer, "PUT", &url, body);
    let mut response = client.send(&mut buffer, &request).await.unwrap();
    (response.status(), response.text().await.unwrap())
}

#[tokio::test]
async fn expect_continue_waits_for_the_go_ahead_the_wait_or_a_refusal() {
    let body = vec![b'z'; 1 << 20];
    let client = |wait| {
        Client::new(ClientConfig {
            expect_continue_timeout: wait,
            ..ClientConfig::default()
        })
    };
    let patient = client(Duration::from_secs(10));
    let started = std::time::Instant::now();

    let (addr, server) = common::refuses_at_the_head();
    let answer = put_expecting(&patient, addr, &body).await;
    assert_eq!(answer, (413, "too large".into()));
    let (_, rest) = tokio::task::spawn_blocking(|| server.join().unwrap())
        .await
        .unwrap();
    assert!(rest.is_empty(), "{} bytes after the head", rest.len());

    let (addr, _server) = common::continues();
    let answer = put_expecting(&patient, addr, &body).await;
    assert_eq!(answer, (200, "1048576 bytes".into()));
    let url = Url::parse(&format!("http://{addr}/upload")).unwrap();
    assert_eq!(patient.idle_connections(&url), 1);

    let ringwire = common::ringwire(Echo);
    let (status, text) = put_expecting(&patient, ringwire, &body).await;
    assert_eq!(status, 200);
    assert!(
        text.starts_with("PUT /upload body=1048576\nzzz"),
        "{}",
        &text[..40]
    );
    // None of them waited out the ten seconds.
    assert!(started.elapsed() < Duration::from_secs(5));

    let (addr, _server) = common::never_continues();
    let (status, text) = put_expecting(&client(Duration::from_millis(600)), addr, &body).await;
    assert_eq!(status, 200);
    let waited: u64 = text
        .strip_prefix("1048576 bytes after ")
        .and_then(|t| t.strip_suffix(" ms"))
        .and_then(|ms| ms.parse().ok())
        .unwrap_or_else(|| panic!("{text}"));
    assert!(waited >= 300, "the body came after {waited} ms");
}

/// A `417 Expectation Failed`: the request goes again without the expectation.
#[tokio::test]
async fn a_417_is_answered_by_the_request_without_its_expectation() {
    let raw = common::refuses_expectations();
    let client = Client::new(ClientConfig {
        expect_continue_timeout: Duration::from_millis(50),
        ..ClientConfig::default()
    });
    let url = Url::parse(&raw.url("/upload")).unwrap();
    let mut buffer = RequestBuffer::new().unwrap();
    let request = common::expecting(&mut buffer, "PUT", &url, b"twelve bytes");
    let mut response = client.send(&mut buffer, &request).await.unwrap();
    assert_eq!(response.status(), 200);
    assert_eq!(response.text().await.unwrap(), "12 bytes");
    assert_eq!(raw.requests().len(), 2);
}

/// What `send_traced` shows, step by step, from a task of its own (the trace is `Send`):
/// resolving, connecting and the handshake once per connection, each request head and
/// answer of a redirect chain, and an early hint before its answer.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_traced_exchange_shows_each_step() {
    use ringwire_client::tokio::Trace;
    fn seen(event: Trace<'_>) -> String {
        match event {
            Trace::Resolved => "resolved".into(),
            Trace::Connected(addr) => format!("connected {}", addr.ip()),
            Trace::Handshaken => "handshaken".into(),
            Trace::Protocol(p) => format!("{p:?}"),
            Trace::Request(head) => {
                let head = String::from_utf8_lossy(head);
                head.lines().next().unwrap_or_default().to_owned()
            }
            Trace::Interim(head) => format!("interim {}", head.status()),
            Trace::Response(response) => format!("answer {}", response.status()),
            other => format!("{other:?}"),
        }
    }
    let python = Python::start();
    let client = std::sync::Arc::new(Client::new(ClientConfig {
        max_redirects: Some(2),
        ..ClientConfig::default()
    }));
    let traced = |client: std::sync::Arc<Client>, url: String| async move {
        let url = Url::parse(&url).unwrap();
        let mut buffer = RequestBuffer::new().unwrap();
        let request = buffer.request("GET", &url).unwrap().headers().unwrap();
        let request = request.finish().unwrap();
        let mut events = Vec::new();
        let sent = client.send_traced(&mut buffer, &request, |e| events.push(seen(e)));
        sent.await.unwrap().bytes().await.unwrap();
        events
    };
    let events = tokio::spawn(traced(Arc::clone(&client), python.url("/redirect")));
    let events = events.await.unwrap();
    assert_eq!(
        events,
        [
            "resolved",
            "connected 127.0.0.1",
            "Http1",
            "GET /redirect HTTP/1.1",
            "answer 302",
            "Http1",
            "GET /port HTTP/1.1",
            "answer 200",
        ]
    );
    // The connection is pooled: nothing to resolve or connect the second time.
    let again = traced(Arc::clone(&client), python.url("/port")).await;
    assert_eq!(again, ["Http1", "GET /port HTTP/1.1", "answer 200"]);

    // Over TLS the handshake shows; an early hint before its answer.
    async fn hinting(request: &ringwire_server::Request<'_>) -> ringwire_server::Response {
        let hints = ringwire_http1::encode::FieldBlock::new([("link", &b"</a.css>"[..])]);
        request.early_hints(&hints.unwrap()).await.unwrap();
        ringwire_server::Response::text("page")
    }
    let (addr, cert) = common::ringwire_tls(ringwire_server::handler_fn(hinting));
    let tls = ringwire_tls::ClientConfig::default().add_root_pem(&cert);
    let client = Arc::new(Client::with_tls(ClientConfig::default(), tls));
    let url = format!("https://localhost:{}/", addr.port());
    let events = traced(client, url).await;
    let from = events
        .iter()
        .position(|e| e == "handshaken")
        .expect("handshaken");
    assert!(
        events[..from].iter().any(|e| e == "connected 127.0.0.1"),
        "{events:?}"
    );
    assert_eq!(
        events[from..],
        [
            "handshaken",
            "Http1",
            "GET / HTTP/1.1",
            "interim 103",
            "answer 200"
        ]
    );

    // The same on the origin's shared HTTP/2 connection.
    let (addr, cert) = common::ringwire_h2(ringwire_server::handler_fn(hinting));
    let tls = ringwire_tls::ClientConfig::default().add_root_pem(&cert);
    let config = ClientConfig {
        http2: ringwire_client::Http2::Negotiate,
        ..ClientConfig::default()
    };
    let client = Arc::new(Client::with_tls(config, tls));
    let url = format!("https://localhost:{}/", addr.port());
    let events = traced(Arc::clone(&client), url.clone()).await;
    assert_eq!(
        events[events.len() - 4..],
        ["Http2", "GET / HTTP/1.1", "interim 103", "answer 200"],
        "{events:?}"
    );
    let again = traced(client, url).await;
    assert_eq!(
        again,
        ["Http2", "GET / HTTP/1.1", "interim 103", "answer 200"]
    );
}
