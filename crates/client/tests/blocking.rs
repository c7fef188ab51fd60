//! The blocking client against real servers on loopback: ringwire's own,
//! Python's `http.server`, and a scripted raw server.

mod common;

use std::io::Write as _;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use common::{ok, Echo, Python, Raw, Reply};
use ringwire_client::blocking::{Client, Trace};
use ringwire_client::{ClientConfig, Error, Phase, RequestBuffer, Url};
use ringwire_http1::Error as WireError;

/// One GET: the status and the body as text.
fn get(client: &Client, url: &str) -> Result<(u16, String), Error> {
    let mut response = client.get(url)?;
    Ok((response.status(), response.text()?))
}

fn config(edit: impl FnOnce(&mut ClientConfig)) -> ClientConfig {
    let mut config = ClientConfig::default();
    edit(&mut config);
    config
}

#[test]
fn every_body_kind_reaches_ringwire_server() {
    let addr = common::ringwire(Echo);
    let client = Client::default();
    let url = Url::parse(&format!("http://{addr}/echo")).unwrap();
    let mut buffer = RequestBuffer::new().unwrap();

    let request = buffer
        .request("GET", &url)
        .unwrap()
        .query("q", "zero copy")
        .unwrap()
        .query("k", "a&b=c")
        .unwrap()
        .headers()
        .unwrap()
        .header("x-test", "yes")
        .unwrap()
        .finish()
        .unwrap();
    let mut response = client.send(&mut buffer, &request).unwrap();
    assert_eq!(response.status(), 200);
    let head = response.head().expect("head before the body");
    assert_eq!(head.header("content-type"), None);
    assert_eq!(
        response.text().unwrap(),
        "GET /echo?q=zero%20copy&k=a%26b%3Dc body=0\n\nx-test: yes"
    );
    assert!(
        response.head().is_none(),
        "the head is consumed with the body"
    );
    drop(response);

    let request = buffer
        .request("POST", &url)
        .unwrap()
        .headers()
        .unwrap()
        .body(b"slice")
        .unwrap();
    let text = client.send(&mut buffer, &request).unwrap().text().unwrap();
    assert_eq!(text, "POST /echo body=5\nslice");

    let request = buffer
        .request("PUT", &url)
        .unwrap()
        .headers()
        .unwrap()
        .body_fixed(5, |buf| buf.copy_from_slice(b"fixed"))
        .unwrap();
    let text = client.send(&mut buffer, &request).unwrap().text().unwrap();
    assert_eq!(text, "PUT /echo body=5\nfixed");

    let request = buffer
        .request("PATCH", &url)
        .unwrap()
        .headers()
        .unwrap()
        .body_with(|w| write!(w, "{{\"n\":{}}}", 42))
        .unwrap();
    let text = client.send(&mut buffer, &request).unwrap().text().unwrap();
    assert_eq!(text, "PATCH /echo body=8\n{\"n\":42}");

    // A body larger than the send ring leaves from where it lies.
    let large = vec![b'z'; 256 << 10];
    let request = buffer
        .request("POST", &url)
        .unwrap()
        .headers()
        .unwrap()
        .body(&large)
        .unwrap();
    let body = client.send(&mut buffer, &request).unwrap().bytes().unwrap();
    assert!(body.starts_with(b"POST /echo body=262144\nzzz"));
    assert_eq!(body.len(), large.len() + "POST /echo body=262144\n".len());

    // All of it on one connection.
    assert_eq!(client.idle_connections(&url), 1);
}

#[test]
fn keep_alive_reuses_connections_and_bounds_the_pool() {
    let addr = common::ringwire(Echo);
    let client = Client::new(config(|c| c.max_idle_per_host = 1));
    let url = format!("http://{addr}/peer");
    let ports: Vec<String> = (0..3).map(|_| get(&client, &url).unwrap().1).collect();
    assert!(ports.iter().all(|p| *p == ports[0]), "{ports:?}");

    // Two responses open at once need two connections; one stays pooled.
    let url = Url::parse(&url).unwrap();
    let (mut a, mut b) = (RequestBuffer::new().unwrap(), RequestBuffer::new().unwrap());
    let request_a = a
        .request("GET", &url)
        .unwrap()
        .headers()
        .unwrap()
        .finish()
        .unwrap();
    let request_b = b
        .request("GET", &url)
        .unwrap()
        .headers()
        .unwrap()
        .finish()
        .unwrap();
    let mut first = client.send(&mut a, &request_a).unwrap();
    let mut second = client.send(&mut b, &request_b).unwrap();
    assert_ne!(first.text().unwrap(), second.text().unwrap());
    drop((first, second));
    assert_eq!(client.idle_connections(&url), 1);
}

#[test]
fn raw_server_counts_one_connection_and_a_closed_one_is_replaced() {
    let raw = Raw::start(|request| {
        if request.starts_with("GET /bye") {
            // Says nothing about closing, then closes: the pooled
            // connection is stale.
            Reply::SendAndClose(ok("bye"))
        } else {
            Reply::Send(ok("hi"))
        }
    });
    let client = Client::default();
    for _ in 0..3 {
        assert_eq!(get(&client, &raw.url("/")).unwrap(), (200, "hi".into()));
    }
    assert_eq!(raw.connections(), 1);
    assert_eq!(get(&client, &raw.url("/bye")).unwrap().1, "bye");
    assert_eq!(get(&client, &raw.url("/")).unwrap().1, "hi");
    assert_eq!(raw.connections(), 2);
}

#[test]
fn python_chunked_close_delimited_and_streamed() {
    let python = Python::start();
    let client = Client::default();
    assert_eq!(
        get(&client, &python.url("/chunked")).unwrap(),
        (200, "hello chunked world".into())
    );
    let url = Url::parse(&python.url("/chunked")).unwrap();
    assert_eq!(client.idle_connections(&url), 1);

    assert_eq!(
        get(&client, &python.url("/close")).unwrap(),
        (200, "until the server closes".into())
    );

    // 4 MiB streams through the 64 KiB receive ring a chunk at a time.
    let url = Url::parse(&python.url("/big")).unwrap();
    let mut buffer = RequestBuffer::new().unwrap();
    let request = buffer
        .request("GET", &url)
        .unwrap()
        .headers()
        .unwrap()
        .finish()
        .unwrap();
    let mut response = client.send(&mut buffer, &request).unwrap();
    let (mut total, mut largest) = (0, 0);
    while let Some(chunk) = response.chunk().unwrap() {
        assert!(chunk.iter().all(|&b| b == b'x'));
        total += chunk.len();
        largest = largest.max(chunk.len());
    }
    assert_eq!(total, 4 << 20);
    assert!(largest <= 64 << 10, "{largest}");
    // Python's chunked bodies end with a trailer field.
    let fields: Vec<_> = response.trailers().iter().collect();
    assert_eq!(fields, [(&b"x-trailer"[..], &b"yes"[..])]);

    // HEAD has no body, whatever content-length says.
    let url = Url::parse(&python.url("/port")).unwrap();
    let request = buffer
        .request("HEAD", &url)
        .unwrap()
        .headers()
        .unwrap()
        .finish()
        .unwrap();
    let mut response = client.send(&mut buffer, &request).unwrap();
    assert!(response.header("content-length").is_some());
    assert_eq!(response.bytes().unwrap(), b"");
}

#[test]
fn interim_and_bodiless_responses_keep_the_connection() {
    let raw = Raw::start(|request| {
        let path = request.split(' ').nth(1).unwrap_or_default();
        Reply::Send(match path {
            "/interim" => {
                let mut out =
                    b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nlink: </a>\r\n\r\n"
                        .to_vec();
                out.extend(ok("final"));
                out
            }
            "/204" => b"HTTP/1.1 204 No Content\r\n\r\n".to_vec(),
            "/304" => b"HTTP/1.1 304 Not Modified\r\ncontent-length: 9\r\n\r\n".to_vec(),
            "/head" => b"HTTP/1.1 200 OK\r\ncontent-length: 9\r\n\r\n".to_vec(),
            _ => ok("after"),
        })
    });
    let client = Client::default();
    assert_eq!(
        get(&client, &raw.url("/interim")).unwrap(),
        (200, "final".into())
    );
    assert_eq!(
        get(&client, &raw.url("/204")).unwrap(),
        (204, String::new())
    );
    assert_eq!(
        get(&client, &raw.url("/304")).unwrap(),
        (304, String::new())
    );
    let url = Url::parse(&raw.url("/head")).unwrap();
    let mut buffer = RequestBuffer::new().unwrap();
    let request = buffer
        .request("HEAD", &url)
        .unwrap()
        .headers()
        .unwrap()
        .finish()
        .unwrap();
    assert_eq!(
        client.send(&mut buffer, &request).unwrap().text().unwrap(),
        ""
    );
    assert_eq!(
        get(&client, &raw.url("/next")).unwrap(),
        (200, "after".into())
    );
    assert_eq!(raw.connections(), 1);
}

#[test]
fn redirects_are_opt_in_and_bounded() {
    let addr = common::ringwire(Echo);
    let send = |client: &Client, method: &str, path: &str, body: &[u8]| {
        let url = Url::parse(&format!("http://{addr}{path}")).unwrap();
        let mut buffer = RequestBuffer::new().unwrap();
        let request = buffer
            .request(method, &url)
            .unwrap()
            .headers()
            .unwrap()
            .header("authorization", "Bearer t")
            .unwrap()
            .body(body)
            .unwrap();
        let mut response = client.send(&mut buffer, &request)?;
        Ok::<_, Error>((response.status(), response.text()?))
    };

    let off = Client::default();
    assert_eq!(
        send(&off, "POST", "/redirect/302/echo", b"data").unwrap().0,
        302
    );

    let on = Client::new(config(|c| c.max_redirects = Some(3)));
    let text = |status: &str, method: &str| {
        send(&on, method, &format!("/redirect/{status}/echo"), b"data")
            .unwrap()
            .1
    };
    for status in ["301", "302", "303"] {
        assert_eq!(
            text(status, "POST"),
            "GET /echo body=0\n\nauthorization: Bearer t"
        );
    }
    for status in ["307", "308"] {
        assert_eq!(
            text(status, "POST"),
            "POST /echo body=4\ndata\nauthorization: Bearer t"
        );
    }
    // A `://` in the `Location`'s query is no scheme: the path is on the same origin.
    assert_eq!(
        send(&on, "GET", "/redirect/302/echo?next=http://elsewhere/", b"")
            .unwrap()
            .1,
        "GET /echo?next=http://elsewhere/ body=0\n\nauthorization: Bearer t"
    );
    assert!(matches!(
        send(&on, "GET", "/loop", b""),
        Err(Error::TooManyRedirects { max: 3 })
    ));
    // Following none is not the same as not following: the redirect is an error.
    let none = Client::new(config(|c| c.max_redirects = Some(0)));
    let err = send(&none, "GET", "/redirect/301/echo", b"").unwrap_err();
    assert_eq!(err.to_string(), "maximum (0) redirects followed");

    // Credentials do not follow a redirect to another origin.
    let location = format!("http://{addr}/echo");
    let raw = Raw::start(move |_| {
        Reply::Send(
            format!("HTTP/1.1 302 Found\r\nlocation: {location}\r\ncontent-length: 0\r\n\r\n")
                .into_bytes(),
        )
    });
    let url = Url::parse(&raw.url("/start")).unwrap();
    let mut buffer = RequestBuffer::new().unwrap();
    let request = buffer
        .request("GET", &url)
        .unwrap()
        .headers()
        .unwrap()
        .header("authorization", "Bearer t")
        .unwrap()
        .header("x-test", "kept")
        .unwrap()
        .finish()
        .unwrap();
    let text = on.send(&mut buffer, &request).unwrap().text().unwrap();
    assert_eq!(text, "GET /echo body=0\n\nx-test: kept");

    // Unless the client is told what the new origin gets: its own, asked for by its URL.
    let asked = Arc::new(Mutex::new(Vec::new()));
    let authorized = Client::new(config(|c| c.max_redirects = Some(3))).authorize_redirects({
        let asked = Arc::clone(&asked);
        move |url| {
            asked.lock().unwrap().push(url.to_string());
            Some(format!("Basic for-{}", url.origin().port()))
        }
    });
    let text = authorized
        .send(&mut buffer, &request)
        .unwrap()
        .text()
        .unwrap();
    assert_eq!(
        text,
        format!(
            "GET /echo body=0\n\nx-test: kept\nauthorization: Basic for-{}",
            addr.port()
        )
    );
    assert_eq!(*asked.lock().unwrap(), [format!("http://{addr}/echo")]);
    // A redirect within the origin keeps the request's own field and asks nothing.
    let text = send(&authorized, "POST", "/redirect/307/echo", b"data")
        .unwrap()
        .1;
    assert_eq!(text, "POST /echo body=4\ndata\nauthorization: Bearer t");
    assert_eq!(asked.lock().unwrap().len(), 1);
    // A field that could smuggle a line is refused, not sent.
    let smuggler = Client::new(config(|c| c.max_redirects = Some(3)))
        .authorize_redirects(|_| Some("x\r\nx-evil: 1".to_owned()));
    assert!(smuggler.send(&mut buffer, &request).is_err());
}

#[test]
fn a_server_that_never_answers_times_out() {
    let raw = Raw::start(|_| Reply::Silence);
    let client = Client::new(config(|c| {
        c.request_timeout = Some(Duration::from_millis(300))
    }));
    let started = Instant::now();
    let err = get(&client, &raw.url("/")).unwrap_err();
    assert!(matches!(err, Error::Timeout(Phase::Request)), "{err}");
    assert!(started.elapsed() < Duration::from_secs(5));
}

/// A head trickled in a byte at a time for longer than the request may take: the deadline
/// holds across the head's reads, not only for each read.
#[test]
fn a_trickled_head_is_held_to_the_deadline() {
    let head = format!(
        "HTTP/1.1 200 OK\r\nx-pad: {}\r\ncontent-length: 0\r\n\r\n",
        "p".repeat(4000)
    );
    let raw = Raw::start(move |_| Reply::Trickle(head.clone().into_bytes()));
    let client = Client::new(config(|c| {
        c.request_timeout = Some(Duration::from_millis(300))
    }));
    let started = Instant::now();
    let err = get(&client, &raw.url("/")).unwrap_err();
    assert!(matches!(err, Error::Timeout(Phase::Request)), "{err}");
    // 4,000 bytes at 200 µs or more each: well past a second when the deadline is not kept.
    assert!(
        started.elapsed() < Duration::from_millis(600),
        "{:?}",
        started.elapsed()
    );
}

#[test]
fn malformed_responses_are_typed_errors() {
    type Expected = fn(&Error) -> bool;
    let cases: [(&[u8], Expected); 11] = [
        (b"HTTP/1.1 2000 OK\r\n\r\n", |e| {
            matches!(e, Error::Response(WireError::InvalidStatus))
        }),
        (b"HTTX/1.1 200 OK\r\n\r\n", |e| {
            matches!(e, Error::Response(WireError::InvalidVersion))
        }),
        (b"HTTP/1.1 200 OK\r\ncontent-length: x\r\n\r\n", |e| {
            matches!(e, Error::Response(WireError::InvalidContentLength))
        }),
        (b"HTTP/1.1 200 OK\r\nx : y\r\n\r\n", |e| {
            matches!(e, Error::Response(WireError::WhitespaceBeforeColon))
        }),
        (b"HTTP/1.1 200 OK\nx: y\n\n", |e| {
            matches!(e, Error::Response(WireError::BareLf))
        }),
        (
            b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\nzz\r\n",
            |e| matches!(e, Error::Response(WireError::InvalidChunkSize)),
        ),
        (b"HTTP/1.1 200 OK\r\ncontent-length: 10\r\n\r\nabc", |e| {
            e.to_string() == "the body ended after 3 of 10 bytes"
                && matches!(
                    e,
                    Error::IncompleteBody {
                        received: 3,
                        expected: Some(10),
                        without_close_notify: false
                    }
                )
        }),
        (
            b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n3\r\nabc\r\n",
            |e| e.to_string() == "the body ended after 3 bytes, before its last chunk",
        ),
        (b"HTTP/1.1 200", |e| matches!(e, Error::Closed)),
        (b"", |e| matches!(e, Error::Closed)),
        (
            b"HTTP/1.1 101 Switching Protocols\r\nupgrade: x\r\n\r\n",
            |e| matches!(e, Error::UnexpectedUpgrade),
        ),
    ];
    for (reply, expected) in cases {
        let raw = Raw::start(move |_| Reply::SendAndClose(reply.to_vec()));
        let err = get(&Client::default(), &raw.url("/")).unwrap_err();
        assert!(
            expected(&err),
            "{:?}: {err:?}",
            String::from_utf8_lossy(reply)
        );
    }
}

#[test]
fn limits_on_heads_and_bodies() {
    let raw = Raw::start(|request| {
        Reply::SendAndClose(match request.split(' ').nth(1).unwrap_or_default() {
            "/head" => format!("HTTP/1.1 200 OK\r\nx: {}\r\n\r\n", "a".repeat(2000)).into_bytes(),
            "/length" => ok("eleven byte"),
            _ => b"HTTP/1.1 200 OK\r\n\r\ntwenty bytes of body".to_vec(),
        })
    });
    let client = Client::new(config(|c| {
        c.limits.max_head_len = 1024;
        c.limits.max_body_len = 10;
    }));
    let err = get(&client, &raw.url("/head")).unwrap_err();
    assert!(
        matches!(
            err,
            Error::Response(WireError::HeadTooLarge { limit: 1024 })
        ),
        "{err}"
    );
    for path in ["/length", "/close"] {
        let err = get(&client, &raw.url(path)).unwrap_err();
        assert!(
            matches!(err, Error::Response(WireError::BodyTooLarge { limit: 10 })),
            "{err}"
        );
    }
}

/// The connect timeout bounds the TLS handshake, not the requests after it: with no request
/// timeout, an answer slower than the connect timeout still arrives, on a new connection and
/// on a pooled one.
#[test]
fn a_slow_https_answer_outlives_the_connect_timeout() {
    let (addr, cert) = common::ringwire_tls(Echo);
    let tls = ringwire_tls::ClientConfig::default().add_root_pem(&cert);
    let client = Client::with_tls(
        config(|c| c.connect_timeout = Some(Duration::from_millis(200))),
        tls,
    );
    let url = format!("https://localhost:{}/slow/600", addr.port());
    for _ in 0..2 {
        let (status, body) = get(&client, &url).unwrap();
        assert_eq!((status, body.as_str()), (200, "GET /slow/600 body=0\n"));
    }
}

#[test]
fn unreachable_hosts_and_https_are_clear_errors() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let err = get(&Client::default(), &format!("http://127.0.0.1:{port}/")).unwrap_err();
    assert!(matches!(err, Error::Connect { .. }), "{err}");
    assert!(
        err.to_string()
            .starts_with(&format!("cannot connect to 127.0.0.1:{port}: ")),
        "{err}"
    );

    // Port 1 on IPv6 loopback: refused, or no IPv6 here; either way named with brackets.
    let err = get(&Client::default(), "http://[::1]:1/").unwrap_err();
    assert!(
        err.to_string().starts_with("cannot connect to [::1]:1: "),
        "{err}"
    );

    let err = get(&Client::default(), "ftp://127.0.0.1/").unwrap_err();
    assert_eq!(err.to_string(), "invalid URL: unsupported scheme \"ftp\"");
}

#[test]
fn connect_timeout() {
    // A listener that never accepts: once its backlog is full the kernel
    // drops further SYNs, so a connect hangs until its timeout.
    let socket = socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None).unwrap();
    socket
        .bind(&std::net::SocketAddr::from(([127, 0, 0, 1], 0)).into())
        .unwrap();
    socket.listen(0).unwrap();
    let addr = socket.local_addr().unwrap().as_socket().unwrap();
    let mut held = Vec::new();
    let full = (0..64).any(|_| {
        match std::net::TcpStream::connect_timeout(&addr, Duration::from_millis(200)) {
            Ok(stream) => {
                held.push(stream);
                false
            }
            Err(_) => true,
        }
    });
    assert!(full, "the backlog never filled");
    let client = Client::new(config(|c| {
        c.connect_timeout = Some(Duration::from_millis(300))
    }));
    let started = Instant::now();
    let err = get(&client, &format!("http://{addr}/")).unwrap_err();
    assert!(matches!(err, Error::Timeout(Phase::Connect)), "{err}");
    assert!(started.elapsed() < Duration::from_secs(5));
}

#[test]
fn a_response_split_at_every_byte() {
    let response = b"HTTP/1.1 100 Continue\r\n\r\n\
        HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\nx-a: 1\r\n\r\n\
        5;ext=1\r\nhello\r\n1\r\n \r\n6\r\nsplit!\r\n0\r\nx-trailer: t\r\n\r\n";
    let raw = Raw::start(|_| Reply::Trickle(response.to_vec()));
    let client = Client::default();
    for _ in 0..2 {
        assert_eq!(
            get(&client, &raw.url("/")).unwrap(),
            (200, "hello split!".into())
        );
    }
    assert_eq!(raw.connections(), 1);
}

#[test]
fn a_pooled_connection_closed_under_a_request_is_retried_if_idempotent() {
    use std::sync::atomic::{AtomicUsize, Ordering};
    // The second request of the test (on the pooled connection) finds it
    // closed with no answer; the third is answered again.
    let seen = AtomicUsize::new(0);
    let raw = Raw::start(move |_| match seen.fetch_add(1, Ordering::SeqCst) {
        1 => Reply::Close,
        _ => Reply::Send(ok("fine")),
    });
    let client = Client::default();
    assert_eq!(get(&client, &raw.url("/")).unwrap().1, "fine");
    // GET: the probe finds the socket quiet, the server drops it, the
    // client retries once on a fresh connection.
    assert_eq!(get(&client, &raw.url("/")).unwrap().1, "fine");
    assert_eq!(raw.connections(), 2);
    assert_eq!(raw.requests().len(), 3);

    // POST is not retried: the server may have acted on it.
    let seen = AtomicUsize::new(0);
    let raw = Raw::start(move |_| match seen.fetch_add(1, Ordering::SeqCst) {
        1 => Reply::Close,
        _ => Reply::Send(ok("fine")),
    });
    let url = Url::parse(&raw.url("/")).unwrap();
    let mut buffer = RequestBuffer::new().unwrap();
    for expect_closed in [false, true] {
        let request = buffer
            .request("POST", &url)
            .unwrap()
            .headers()
            .unwrap()
            .body(b"x")
            .unwrap();
        match client.send(&mut buffer, &request) {
            Ok(mut response) if !expect_closed => assert_eq!(response.text().unwrap(), "fine"),
            Err(Error::Closed) if expect_closed => {}
            other => panic!("{:?}", other.map(|r| r.status())),
        }
    }
    assert_eq!(raw.connections(), 1);
}

#[test]
fn an_upload_refused_early_gets_the_servers_answer() {
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
    let mut response = client.send(&mut buffer, &request).unwrap();
    assert_eq!(response.status(), 413);
    assert_eq!(response.text().unwrap(), "too large");
    drop(response);
    // The request was cut short: the connection is not kept.
    assert_eq!(client.idle_connections(&url), 0);
}

#[test]
fn a_virtual_host_is_sent_and_kept_within_the_origin() {
    let other = Raw::start(|_| Reply::Send(ok("other")));
    let elsewhere = other.url("/end");
    let raw = Raw::start(move |request| {
        let location = if request.starts_with("GET /start ") {
            "/next"
        } else {
            &elsewhere
        };
        Reply::Send(
            format!("HTTP/1.1 302 Found\r\nlocation: {location}\r\ncontent-length: 0\r\n\r\n")
                .into_bytes(),
        )
    });
    let client = Client::new(config(|c| c.max_redirects = Some(3)));
    let url = Url::parse(&raw.url("/start")).unwrap();
    let mut buffer = RequestBuffer::new().unwrap();
    let request = buffer
        .request("GET", &url)
        .unwrap()
        .headers_with_host("vhost.example")
        .unwrap()
        .finish()
        .unwrap();
    let text = client.send(&mut buffer, &request).unwrap().text().unwrap();
    assert_eq!(text, "other");
    let hosts = |server: &Raw| -> Vec<String> {
        server
            .requests()
            .iter()
            .map(|r| r.lines().nth(1).unwrap_or_default().to_owned())
            .collect()
    };
    assert_eq!(hosts(&raw), ["host: vhost.example", "host: vhost.example"]);
    assert_eq!(hosts(&other), [format!("host: {}", other.addr)]);
}

#[test]
fn obsolete_line_folds_in_a_response_become_spaces() {
    let folded = b"HTTP/1.1 200 OK\r\nx-folded: a\r\n b\r\ncontent-length: 2\r\n\r\nok".to_vec();
    for reply in [Reply::Send as fn(Vec<u8>) -> Reply, Reply::Trickle] {
        let raw = Raw::start({
            let folded = folded.clone();
            move |_| reply(folded.clone())
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
        let mut response = client.send(&mut buffer, &request).unwrap();
        assert_eq!(response.header("x-folded"), Some(&b"a   b"[..]));
        assert_eq!(response.text().unwrap(), "ok");
    }
    // A fold right after the status line is still refused.
    let raw = Raw::start(|_| Reply::Send(b"HTTP/1.1 200 OK\r\n x: a\r\n\r\n".to_vec()));
    let err = get(&Client::default(), &raw.url("/")).unwrap_err();
    assert!(matches!(err, Error::Response(WireError::ObsFold)), "{err}");
}

/// A PUT of `body` to `addr` holding the body for `100 Continue`: the
/// status and the answer's text.
fn put_expecting(client: &Client, addr: std::net::SocketAddr, body: &[u8]) -> (u16, String) {
    let url = Url::parse(&format!("http://{addr}/upload")).unwrap();
    let mut buffer = RequestBuffer::new().unwrap();
    let request = common::expecting(&mut buffer, "PUT", &url, body);
    let mut response = client.send(&mut buffer, &request).unwrap();
    (response.status(), response.text().unwrap())
}

#[test]
fn expect_continue_spares_the_body_a_server_refuses_at_the_head() {
    let (addr, server) = common::refuses_at_the_head();
    let client = Client::new(config(|c| {
        c.expect_continue_timeout = Duration::from_secs(10)
    }));
    let started = Instant::now();
    let answer = put_expecting(&client, addr, &[b'z'; 1 << 20]);
    assert_eq!(answer, (413, "too large".into()));
    assert!(started.elapsed() < Duration::from_secs(5));
    // The server waits for the body the head announced: the connection
    // cannot carry another request, and closes.
    let url = Url::parse(&format!("http://{addr}/upload")).unwrap();
    assert_eq!(client.idle_connections(&url), 0);
    let (head, rest) = server.join().unwrap();
    assert!(head.contains("\r\nexpect: 100-continue\r\n"), "{head}");
    assert!(rest.is_empty(), "{} bytes after the head", rest.len());
}

#[test]
fn expect_continue_sends_the_body_after_the_wait_or_the_go_ahead() {
    let body = vec![b'z'; 1 << 20];
    let waiting = Client::new(config(|c| {
        c.expect_continue_timeout = Duration::from_millis(600)
    }));
    let (addr, _server) = common::never_continues();
    let (status, text) = put_expecting(&waiting, addr, &body);
    assert_eq!(status, 200);
    let waited: u64 = text
        .strip_prefix("1048576 bytes after ")
        .and_then(|t| t.strip_suffix(" ms"))
        .and_then(|ms| ms.parse().ok())
        .unwrap_or_else(|| panic!("{text}"));
    assert!(waited >= 300, "the body came after {waited} ms");

    // A go-ahead ends a long wait at once; the connection is kept.
    let patient = Client::new(config(|c| {
        c.expect_continue_timeout = Duration::from_secs(10)
    }));
    let (addr, _server) = common::continues();
    let started = Instant::now();
    let answer = put_expecting(&patient, addr, &body);
    assert_eq!(answer, (200, "1048576 bytes".into()));
    assert!(started.elapsed() < Duration::from_secs(5));
    let url = Url::parse(&format!("http://{addr}/upload")).unwrap();
    assert_eq!(patient.idle_connections(&url), 1);
}

#[test]
fn expect_continue_with_ringwire_server() {
    let addr = common::ringwire(Echo);
    let client = Client::new(config(|c| {
        c.expect_continue_timeout = Duration::from_secs(10)
    }));
    let url = Url::parse(&format!("http://{addr}/upload")).unwrap();
    let body = vec![b'z'; 2 << 20];
    let mut buffer = RequestBuffer::new().unwrap();
    let request = common::expecting(&mut buffer, "PUT", &url, &body);
    let started = Instant::now();
    let mut seen = Vec::new();
    let mut response = client
        .send_traced(&mut buffer, &request, |event| match event {
            Trace::Request(head) => seen.push(String::from_utf8_lossy(head).into_owned()),
            Trace::Interim(head) => seen.push(head.status().to_string()),
            Trace::Response(response) => seen.push(response.status().to_string()),
            _ => {}
        })
        .unwrap();
    let text = response.text().unwrap();
    drop(response);
    assert!(
        text.starts_with("PUT /upload body=2097152\nzzz"),
        "{}",
        &text[..40]
    );
    // It said `100 Continue` as the body was not there yet, and the trace
    // shows it between the request and the response.
    assert!(started.elapsed() < Duration::from_secs(5));
    assert_eq!(seen.len(), 3, "{seen:?}");
    assert!(
        seen[0].contains("\r\nexpect: 100-continue\r\n"),
        "{}",
        seen[0]
    );
    assert_eq!(seen[1..], ["100", "200"]);
    assert_eq!(client.idle_connections(&url), 1);

    // Past its 8 MiB for a body, it refuses at the head.
    let (status, _) = put_expecting(&client, addr, &vec![b'z'; 9 << 20]);
    assert_eq!(status, 413);
    assert!(started.elapsed() < Duration::from_secs(5));
    assert_eq!(client.idle_connections(&url), 0);
}

#[test]
fn a_redirect_keeps_the_expectation_only_with_the_body() {
    let raw = Raw::start(|request| {
        let moved = |status| {
            let head =
                format!("HTTP/1.1 {status} Moved\r\nlocation: /end\r\ncontent-length: 0\r\n\r\n");
            Reply::Send(head.into_bytes())
        };
        match request.split(' ').nth(1).unwrap_or_default() {
            "/see-other" => moved(303),
            "/temporary" => moved(307),
            _ => Reply::Send(ok("end")),
        }
    });
    // The raw server never says `100 Continue`: each body waits 50 ms.
    let client = Client::new(config(|c| {
        c.max_redirects = Some(1);
        c.expect_continue_timeout = Duration::from_millis(50);
    }));
    for path in ["/see-other", "/temporary"] {
        let url = Url::parse(&raw.url(path)).unwrap();
        let mut buffer = RequestBuffer::new().unwrap();
        let request = common::expecting(&mut buffer, "POST", &url, b"data");
        let text = client.send(&mut buffer, &request).unwrap().text().unwrap();
        assert_eq!(text, "end");
    }
    let requests = raw.requests();
    let followed: Vec<(&str, bool)> = requests
        .iter()
        .map(|r| {
            (
                r.lines().next().unwrap(),
                r.contains("expect: 100-continue"),
            )
        })
        .collect();
    assert_eq!(
        followed,
        [
            ("POST /see-other HTTP/1.1", true),
            ("GET /end HTTP/1.1", false),
            ("POST /temporary HTTP/1.1", true),
            ("POST /end HTTP/1.1", true),
        ]
    );
}

/// A `417 Expectation Failed`: the request goes again without the expectation, its body at
/// once (RFC 9110 section 10.1.1), and the answer to that is the response.
#[test]
fn a_417_is_answered_by_the_request_without_its_expectation() {
    let raw = common::refuses_expectations();
    let client = Client::new(config(|c| {
        c.expect_continue_timeout = Duration::from_millis(50)
    }));
    let url = Url::parse(&raw.url("/upload")).unwrap();
    let mut buffer = RequestBuffer::new().unwrap();
    let request = common::expecting(&mut buffer, "PUT", &url, b"twelve bytes");
    let mut response = client.send(&mut buffer, &request).unwrap();
    assert_eq!(response.status(), 200);
    assert_eq!(response.text().unwrap(), "12 bytes");
    let requests = raw.requests();
    assert_eq!(requests.len(), 2, "{requests:?}");
    assert!(
        !requests[1].to_ascii_lowercase().contains("expect"),
        "{requests:?}"
    );
}
