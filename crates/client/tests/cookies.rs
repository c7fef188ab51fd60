//! Both clients with a cookie jar: cookies set by an answer (a redirect's included) go with
//! the next requests to that host, after the request's own `cookie` field; a removal
//! removes; another host gets none; one jar serves both clients.

mod common;

use std::sync::Arc;
use std::time::Duration;

use common::{ok, Raw, Reply};
use ringwire_client::blocking::Client;
use ringwire_client::tokio::Client as AsyncClient;
use ringwire_client::{ClientConfig, CookieJar, RequestBuffer, Url};

/// `/login` redirects to `/home` setting two cookies, `/logout` removes one, and anything
/// else answers the `cookie` field it got (`none` without one).
fn server() -> Raw {
    Raw::start(|request| {
        let path = request.split(' ').nth(1).unwrap_or_default();
        let reply = match path {
            "/login" => "HTTP/1.1 302 Found\r\nlocation: /home\r\n\
                         set-cookie: sid=abc; Path=/; HttpOnly\r\n\
                         set-cookie: theme=dark; Max-Age=3600\r\ncontent-length: 0\r\n\r\n"
                .as_bytes()
                .to_vec(),
            "/logout" => {
                b"HTTP/1.1 200 OK\r\nset-cookie: sid=; Max-Age=0\r\ncontent-length: 0\r\n\r\n"
                    .to_vec()
            }
            _ => {
                let cookie = request
                    .lines()
                    .find_map(|l| l.strip_prefix("cookie: "))
                    .unwrap_or("none");
                ok(cookie)
            }
        };
        Reply::Send(reply)
    })
}

fn config() -> ClientConfig {
    ClientConfig {
        max_redirects: Some(5),
        request_timeout: Some(Duration::from_secs(10)),
        ..ClientConfig::default()
    }
}

fn get(client: &Client, url: &str, cookie: Option<&str>) -> String {
    let mut buffer = RequestBuffer::new().expect("buffer");
    let url = Url::parse(url).expect("url");
    let mut request = buffer.request("GET", &url).and_then(|r| r.headers());
    if let Some(cookie) = cookie {
        request = request.and_then(|r| r.header("cookie", cookie));
    }
    let request = request.and_then(|r| r.finish()).expect("request");
    let mut response = client.send(&mut buffer, &request).expect("answer");
    String::from_utf8(response.bytes().expect("body")).expect("utf-8")
}

#[test]
fn cookies_set_by_answers_go_with_the_next_requests() {
    let server = server();
    let jar = Arc::new(CookieJar::new());
    let client = Client::new(config()).with_cookies(Arc::clone(&jar));

    // Set by the redirect, sent with the request it leads to.
    assert_eq!(
        get(&client, &server.url("/login"), None),
        "sid=abc; theme=dark"
    );
    // After the request's own.
    assert_eq!(
        get(&client, &server.url("/home"), Some("mine=1")),
        "mine=1; sid=abc; theme=dark"
    );
    // A body keeps its framing.
    let mut buffer = RequestBuffer::new().expect("buffer");
    let url = Url::parse(&server.url("/form")).expect("url");
    let request = buffer.request("POST", &url).and_then(|r| r.headers());
    let request = request.and_then(|r| r.body(b"hello")).expect("request");
    let mut response = client.send(&mut buffer, &request).expect("answer");
    assert_eq!(response.bytes().expect("body"), b"sid=abc; theme=dark");
    let sent = server.requests().pop().expect("a request");
    assert!(sent.starts_with("POST /form HTTP/1.1\r\n"), "{sent}");
    assert!(sent.contains("\r\ncontent-length: 5\r\n"), "{sent}");
    assert!(
        sent.ends_with("\r\ncookie: sid=abc; theme=dark\r\n\r\nhello"),
        "{sent}"
    );
    assert_eq!(get(&client, &server.url("/logout"), None), "");
    assert_eq!(get(&client, &server.url("/home"), None), "theme=dark");
    // Host-only cookies of 127.0.0.1 do not go to localhost.
    let localhost = server.url("/home").replace("127.0.0.1", "localhost");
    assert_eq!(get(&client, &localhost, None), "none");
    // A client without the jar sends none.
    assert_eq!(
        get(&Client::new(config()), &server.url("/home"), None),
        "none"
    );

    assert_eq!(jar.len(), 1);
    let file = jar.to_netscape();
    assert!(file.contains("127.0.0.1\tFALSE\t/\tFALSE\t"), "{file}");
    assert!(file.ends_with("\ttheme\tdark\n"), "{file}");
}

#[tokio::test]
async fn the_tokio_client_shares_a_jar_with_the_blocking_one() {
    let server = server();
    let jar = Arc::new(CookieJar::new());
    let url = server.url("/login");
    let blocking = Client::new(config()).with_cookies(Arc::clone(&jar));
    let logged_in = tokio::task::spawn_blocking(move || get(&blocking, &url, None));
    assert_eq!(logged_in.await.expect("joined"), "sid=abc; theme=dark");

    let client = AsyncClient::new(config()).with_cookies(Arc::clone(&jar));
    let mut buffer = RequestBuffer::new().expect("buffer");
    let url = Url::parse(&server.url("/home")).expect("url");
    let request = buffer
        .request("GET", &url)
        .and_then(|r| r.headers())
        .and_then(|r| r.finish())
        .expect("request");
    let mut response = client.send(&mut buffer, &request).await.expect("answer");
    assert_eq!(
        response.bytes().await.expect("body"),
        b"sid=abc; theme=dark"
    );
}
