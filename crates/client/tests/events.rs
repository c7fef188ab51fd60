//! Server-sent events read by both clients: from ringwire's server (`Response::events`)
//! over HTTP/1.1 (a chunked body, each event a chunk), HTTP/2 with prior knowledge and (the
//! tokio client's shared connection) over TLS, and from a raw server that writes its stream a
//! byte at a time, so every event is cut everywhere.

mod common;

use std::sync::Arc;
use std::time::Duration;

use common::{ringwire, ringwire_h2, Raw, Reply};
use ringwire_client::tokio::Client;
use ringwire_client::{ClientConfig, Http2, RequestBuffer, Url};
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
