//! Server-sent events read by both clients: from ringwire's server (`Response::events`)
//! over HTTP/1.1 (a chunked body, each event a chunk), HTTP/2 with prior knowledge and (the
//! tokio client's shared connection) over TLS, and from a raw server that writes its stream a
//! byte at a time, so every event is cut everywhere.

mod common;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::{ringwire, ringwire_h2, Raw, Reply};
use ringwire_client::tokio::Client;
use ringwire_client::{ClientConfig, Error, Http2, RequestBuffer, Url};
use ringwire_server::events::Event;
use ringwire_server::{Request, Response, Router};

/// Five events: plain, typed and numbered, of several lines, a reconnection time with one,
/// then 200 quick ones; the stream then ends.
async fn ticks(_: &Request<'_>) -> Response {
    let (events, response) = Response::events(4);
    tokio::spawn(async move {
        let sent = async {
            events.send(Event::new("hello")).await?;
            events
                .send(Event::new("{\"n\":1}").event("tick").id("1"))
                .await?;
            events.comment("still here").await?;
            events
                .send(Event::new("two\nlines").event("tick").id("2"))
                .await?;
            events.send(Event::new("").retry(1500)).await?;
            for i in 0..200 {
                events.send(Event::new(&format!("quick {i}"))).await?;
            }
            Ok::<_, ringwire_server::events::SendError>(())
        };
        sent.await.expect("the client reads them all");
    });
    response
}

type Got = Vec<(String, String, String)>;

/// Every event of `url`'s answer, and the stream's reconnection time.
async fn read(client: &Client, url: &str) -> (Got, Option<u64>) {
    let mut buffer = RequestBuffer::new().expect("buffer");
    let url = Url::parse(url).expect("url");
    let request = buffer.request("GET", &url).and_then(|r| r.headers());
    let request = request.and_then(|r| r.finish()).expect("request");
    let mut response = client.send(&mut buffer, &request).await.expect("answer");
    assert_eq!(response.status(), 200);
    assert_eq!(
        response.header("content-type"),
        Some(&b"text/event-stream"[..])
    );
    let mut events = response.events();
    let mut got = Vec::new();
    while let Some(m) = events.next().await.expect("events") {
        got.push((m.event.into(), m.data.into(), m.last_event_id.into()));
    }
    (got, events.retry())
}

fn want() -> Got {
    let mut want: Got = [
        ("message", "hello", ""),
        ("tick", "{\"n\":1}", "1"),
        ("tick", "two\nlines", "2"),
        ("message", "", "2"),
    ]
    .iter()
    .map(|(e, d, i)| ((*e).into(), (*d).into(), (*i).into()))
    .collect();
    want.extend((0..200).map(|i| ("message".into(), format!("quick {i}"), "2".into())));
    want
}

fn config(http2: Http2) -> ClientConfig {
    ClientConfig {
        http2,
        request_timeout: Some(Duration::from_secs(20)),
        ..ClientConfig::default()
    }
}

#[tokio::test]
async fn events_from_ringwire_over_both_protocols() {
    let addr = ringwire(Router::new().get("/ticks", ticks));
    for http2 in [Http2::Off, Http2::PriorKnowledge] {
        let client = Client::new(config(http2));
        for _ in 0..2 {
            let (got, retry) = read(&client, &format!("http://{addr}/ticks")).await;
            assert_eq!((got, retry), (want(), Some(1500)), "{http2:?}");
        }
    }

    let (addr, cert) = ringwire_h2(Router::new().get("/ticks", ticks));
    let tls = ringwire_tls::ClientConfig::default().add_root_pem(&cert);
    let client = Arc::new(Client::with_tls(config(Http2::Negotiate), tls));
    let url = format!("https://localhost:{}/ticks", addr.port());
    assert_eq!(read(&client, &url).await, (want(), Some(1500)));
}

/// A stream written a byte at a time (each its own segment): a byte order mark, CRLF, CR and
/// LF line ends, comments, a field without a colon, and an event never ended.
#[tokio::test]
async fn events_cut_everywhere_are_joined() {
    let stream: &[u8] = b"\xef\xbb\xbf: hello\r\n\r\nevent: a\r\ndata: 1\r\ndata:  2\r\n\r\n\
                          data\rid: x\r\rretry: 20\ndata: last\n\ndata: never";
    let mut answer = format!(
        "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncontent-length: {}\r\n\r\n",
        stream.len()
    )
    .into_bytes();
    answer.extend_from_slice(stream);
    let raw = Raw::start(move |_| Reply::Trickle(answer.clone()));
    let client = Client::new(config(Http2::Off));
    let (got, retry) = read(&client, &raw.url("/")).await;
    let want: Got = [
        ("a", "1\n 2", ""),
        ("message", "", "x"),
        ("message", "last", "x"),
    ]
    .iter()
    .map(|(e, d, i)| ((*e).into(), (*d).into(), (*i).into()))
    .collect();
    assert_eq!((got, retry), (want, Some(20)));
}

/// The blocking client: the same events from ringwire's server over both protocols, and
/// from the raw server that cuts them everywhere.
#[test]
fn the_blocking_client_too() {
    let addr = ringwire(Router::new().get("/ticks", ticks));
    let read = |client: &ringwire_client::blocking::Client, url: &str| {
        let mut buffer = RequestBuffer::new().expect("buffer");
        let url = Url::parse(url).expect("url");
        let request = buffer.request("GET", &url).and_then(|r| r.headers());
        let request = request.and_then(|r| r.finish()).expect("request");
        let mut response = client.send(&mut buffer, &request).expect("answer");
        let mut events = response.events();
        let mut got: Got = Vec::new();
        while let Some(m) = events.next().expect("events") {
            got.push((m.event.into(), m.data.into(), m.last_event_id.into()));
        }
        (got, events.retry())
    };
    for http2 in [Http2::Off, Http2::PriorKnowledge] {
        let client = ringwire_client::blocking::Client::new(config(http2));
        let got = read(&client, &format!("http://{addr}/ticks"));
        assert_eq!(got, (want(), Some(1500)), "{http2:?}");
    }
    let raw = Raw::start(|_| {
        let stream = "data: a\r\ndata: b\r\n\r\nid: 9\rdata: c\n\n";
        let head = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n";
        let answer = format!("{head}content-length: {}\r\n\r\n{stream}", stream.len());
        Reply::Trickle(answer.into_bytes())
    });
    let client = ringwire_client::blocking::Client::new(config(Http2::Off));
    let want: Got = vec![
        ("message".into(), "a\nb".into(), String::new()),
        ("message".into(), "c".into(), "9".into()),
    ];
    assert_eq!(read(&client, &raw.url("/")), (want, None));
}

/// A raw server whose stream stops three ways: its first answer ends (close-delimited) with
/// an event cut short, which is dropped; its second breaks off inside its chunked body; its
/// third is `204`, no more. Each stream asks for 50 ms between reconnections.
fn resumable_raw() -> Raw {
    let served = AtomicUsize::new(0);
    Raw::start(move |_| {
        let head = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream; charset=utf-8\r\n";
        let answer = match served.fetch_add(1, Ordering::SeqCst) {
            0 => format!("{head}\r\nretry: 50\nid: 1\ndata: one\n\nid: 2\ndata: two\n\ndata: cut"),
            1 => {
                let event = "retry: 50\nid: 3\ndata: three\n\n";
                format!(
                    "{head}transfer-encoding: chunked\r\n\r\n{:x}\r\n{event}\r\n",
                    event.len()
                )
            }
            _ => "HTTP/1.1 204 No Content\r\n\r\n".to_owned(),
        };
        Reply::SendAndClose(answer.into_bytes())
    })
}

/// What [`resumable_raw`] gives, and the `Last-Event-ID` of each request it had.
fn check_resumed(raw: &Raw, got: &Got, elapsed: Duration) {
    let want: Got = [("one", "1"), ("two", "2"), ("three", "3")]
        .iter()
        .map(|(d, i)| ("message".into(), (*d).into(), (*i).into()))
        .collect();
    assert_eq!(got, &want);
    let requests = raw.requests();
    let last_ids: Vec<Option<&str>> = requests
        .iter()
        .map(|r| r.lines().find_map(|l| l.strip_prefix("last-event-id: ")))
        .collect();
    assert_eq!(last_ids, [None, Some("2"), Some("3")]);
    for request in &requests {
        assert!(request.starts_with("GET /events HTTP/1.1\r\n"), "{request}");
        assert!(request.contains("\r\naccept: text/event-stream\r\n"));
        assert!(request.contains("\r\ncache-control: no-cache\r\n"));
        assert!(request.contains("\r\nauthorization: Bearer t\r\n"));
    }
    assert!(elapsed >= Duration::from_millis(100), "{elapsed:?}");
}

#[tokio::test]
async fn an_event_source_resumes_where_its_stream_stopped() {
    let raw = resumable_raw();
    let client = Client::new(config(Http2::Off));
    let source = client.event_source(&raw.url("/events")).expect("source");
    let mut source = source.header("authorization", "Bearer t");
    let started = Instant::now();
    let mut got: Got = Vec::new();
    let mut errors = Vec::new();
    while let Some(m) = source.next().await.expect("events") {
        got.push((m.event.into(), m.data.into(), m.last_event_id.into()));
        errors.push(source.last_error().map(ToString::to_string));
    }
    check_resumed(&raw, &got, started.elapsed());
    // The first stream ended by the server's choice, the second broke off.
    assert_eq!(errors, [None, None, None]);
    let broke = source.last_error().map(ToString::to_string);
    let broke = broke.expect("the second stream broke");
    assert!(broke.contains("before its last chunk"), "{broke}");
    assert_eq!((source.reconnects(), source.last_event_id()), (2, "3"));
    assert!(source.next().await.expect("done").is_none());
    assert_eq!(raw.connections(), 3);
}

#[test]
fn a_blocking_event_source_too() {
    let raw = resumable_raw();
    let client = ringwire_client::blocking::Client::new(config(Http2::Off));
    let source = client.event_source(&raw.url("/events")).expect("source");
    let mut source = source.header("authorization", "Bearer t");
    let started = Instant::now();
    let mut got: Got = Vec::new();
    while let Some(m) = source.next().expect("events") {
        got.push((m.event.into(), m.data.into(), m.last_event_id.into()));
    }
    check_resumed(&raw, &got, started.elapsed());
    assert!(source.next().expect("done").is_none());
}

/// Counts from the `Last-Event-ID` asked for: two events a stream, `204` past 6.
async fn counting(request: &Request<'_>) -> Response {
    let last = request.head().header("last-event-id");
    let from: u32 = last
        .and_then(|id| std::str::from_utf8(id).ok()?.parse().ok())
        .unwrap_or(0);
    if from >= 6 {
        return Response::new(204);
    }
    let (events, response) = Response::events(4);
    tokio::spawn(async move {
        for n in from + 1..=from + 2 {
            let id = n.to_string();
            let event = Event::new(&id).id(&id).retry(10);
            if events.send(event).await.is_err() {
                return;
            }
        }
    });
    response
}

/// From ringwire's server, over HTTP/1.1 and over streams of one shared HTTP/2 connection.
#[tokio::test]
async fn an_event_source_resumes_on_ringwire_over_both_protocols() {
    let addr = ringwire(Router::new().get("/count", counting));
    for http2 in [Http2::Off, Http2::PriorKnowledge] {
        let client = Client::new(config(http2));
        let mut source = client
            .event_source(&format!("http://{addr}/count"))
            .expect("source");
        let mut got = Vec::new();
        while let Some(m) = source.next().await.expect("events") {
            assert_eq!(m.data, m.last_event_id);
            got.push(m.data.to_owned());
            assert!(got.len() <= 6, "{got:?}");
        }
        assert_eq!(got, ["1", "2", "3", "4", "5", "6"], "{http2:?}");
        assert_eq!(source.reconnects(), 3, "{http2:?}");
    }
}

#[tokio::test]
async fn an_event_source_stops_at_an_answer_that_is_no_stream() {
    for (answer, status, content_type) in [
        (
            "HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\n\r\n",
            200,
            Some("text/plain"),
        ),
        ("HTTP/1.1 503 Unavailable\r\n\r\n", 503, None),
    ] {
        let raw = Raw::start(move |_| Reply::SendAndClose(answer.as_bytes().to_vec()));
        let client = Client::new(config(Http2::Off));
        let mut source = client.event_source(&raw.url("/")).expect("source");
        match source.next().await {
            Err(Error::NotEventStream {
                status: s,
                content_type: t,
            }) => assert_eq!((s, t.as_deref()), (status, content_type)),
            other => panic!(
                "{answer}: {:?}",
                other.map(|m| m.map(|m| m.data.to_owned()))
            ),
        }
        assert!(source.next().await.expect("ended").is_none());
        assert_eq!((raw.connections(), source.reconnects()), (1, 0));
    }
}

/// Nothing listens: each attempt fails, the waits double from the reconnection time, and
/// the source gives up after the attempts allowed.
#[tokio::test]
async fn an_event_source_backs_off_and_gives_up() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port();
    let client = Client::new(config(Http2::Off));
    let source = client
        .event_source(&format!("http://127.0.0.1:{port}/"))
        .expect("source");
    let mut source = source.retry(Duration::from_millis(40)).max_attempts(3);
    let started = Instant::now();
    let failed = source.next().await.map(|m| m.map(|m| m.data.to_owned()));
    assert!(matches!(failed, Err(Error::Connect { .. })), "{failed:?}");
    // Waits of 40 and 80 ms between the three attempts.
    assert!(
        started.elapsed() >= Duration::from_millis(120),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(source.reconnects(), 2);
    assert!(source.next().await.expect("ended").is_none());
}
