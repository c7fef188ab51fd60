//! The router and streamed response bodies, over loopback with curl and raw
//! sockets.

mod common;

use std::collections::BTreeMap;
use std::io;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use common::{curl_text, raw, start};
use ringwire_http1::Method;
use ringwire_server::cookie::{SameSite, SetCookie};
use ringwire_server::{with_state, Body, Request, Response, Router, ServerConfig};

async fn user(request: &Request<'_>) -> Response {
    let name = request.params().decoded("name").expect("routed");
    Response::text(format!(
        "user {} named {}\n",
        request.param("id").unwrap_or("?"),
        name.to_str().expect("utf-8")
    ))
}

async fn created(request: &Request<'_>) -> Response {
    Response::new(201).body(Bytes::copy_from_slice(request.body()))
}

async fn rest(request: &Request<'_>) -> Response {
    Response::text(format!("file {}\n", request.param("path").unwrap_or("")))
}

/// Three chunks from a producer task, with pauses between them.
async fn ticks(_: &Request<'_>) -> Response {
    let (sender, body) = Body::channel(2);
    tokio::spawn(async move {
        for i in 0..3 {
            if sender.send(format!("tick {i}\n")).await.is_err() {
                return;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    });
    Response::text(body)
}

/// A stream that fails after its first chunk.
async fn broken(_: &Request<'_>) -> Response {
    let (sender, body) = Body::channel(2);
    tokio::spawn(async move {
        let _ = sender.send("partial\n").await;
        sender.fail(io::Error::other("backend went away")).await;
    });
    Response::text(body)
}

async fn fallback(request: &Request<'_>) -> Response {
    Response::new(404).body(format!(
        "no route for {}\n",
        String::from_utf8_lossy(request.target().path())
    ))
}

fn router() -> Router {
    Router::new()
        .get("/users/:id/:name", user)
        .post("/users", created)
        .get("/static/*path", rest)
        .get("/ticks", ticks)
        .get("/broken", broken)
}

#[test]
fn routes_by_method_and_path_with_parameters() {
    let addr = start(ServerConfig::default(), router());
    let base = format!("http://{addr}");
    assert_eq!(
        curl_text(&[&format!("{base}/users/7/caf%C3%A9")]),
        "user 7 named café\n"
    );
    assert_eq!(
        curl_text(&["-d", "hi", &format!("{base}/users"), "-w", " %{http_code}"]),
        "hi 201"
    );
    assert_eq!(
        curl_text(&[&format!("{base}/static/css/site.css")]),
        "file css/site.css\n"
    );
    // The path exists for other methods: 405 and what is allowed.
    let out = raw(
        addr,
        b"DELETE /users HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
    );
    assert!(out.starts_with("HTTP/1.1 405 "), "{out}");
    assert!(out.contains("\r\nallow: POST\r\n"), "{out}");
    // No such path.
    let out = curl_text(&[
        "-o",
        "/dev/null",
        "-w",
        "%{http_code}",
        &format!("{base}/nope"),
    ]);
    assert_eq!(out, "404");
    // HEAD on a GET route: the head, no body.
    let out = raw(
        addr,
        b"HEAD /users/1/a HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
    );
    assert!(out.starts_with("HTTP/1.1 200 "), "{out}");
    assert!(out.ends_with("\r\n\r\n"), "{out}");
}

/// An application's state, shared by its routes.
#[derive(Default)]
struct Store {
    items: Mutex<BTreeMap<String, String>>,
}

/// `PUT /items/:name`: keeps the body under the name; `201` when it is new.
async fn put_item(request: &Request<'_>, store: &Arc<Store>) -> Response {
    let name = request.param("name").expect("routed").to_owned();
    let body = String::from_utf8_lossy(request.body()).into_owned();
    let mut items = store.items.lock().unwrap();
    match items.insert(name, body) {
        None => Response::new(201),
        Some(_) => Response::new(204),
    }
}

/// `GET /items/:name`: what was kept, or `404`.
async fn get_item(request: &Request<'_>, store: &Arc<Store>) -> Response {
    let name = request.param("name").expect("routed");
    let found = store.items.lock().unwrap().get(name).cloned();
    found.map_or_else(|| Response::new(404), Response::text)
}

/// `GET /items`: every name, with how many there are.
async fn list_items(_: &Request<'_>, store: &Arc<Store>) -> Response {
    let items = store.items.lock().unwrap();
    let names: Vec<&str> = items.keys().map(String::as_str).collect();
    Response::text(format!("{} {}\n", items.len(), names.join(",")))
}

#[test]
fn handlers_share_the_applications_state() {
    let store = Arc::new(Store::default());
    let router = Router::new()
        .route(
            Method::Put,
            "/items/:name",
            with_state(Arc::clone(&store), put_item),
        )
        .route(
            Method::Get,
            "/items/:name",
            with_state(Arc::clone(&store), get_item),
        )
        .route(
            Method::Get,
            "/items",
            with_state(Arc::clone(&store), list_items),
        );
    let addr = start(ServerConfig::default(), router);
    let base = format!("http://{addr}/items");
    let put = |name: &str, body: &str| {
        let url = format!("{base}/{name}");
        curl_text(&[
            "-X",
            "PUT",
            "-d",
            body,
            "-o",
            "/dev/null",
            "-w",
            "%{http_code}",
            &url,
        ])
    };
    assert_eq!(put("a", "one"), "201");
    assert_eq!(put("b", "two"), "201");
    assert_eq!(put("a", "uno"), "204");
    assert_eq!(curl_text(&[&format!("{base}/a")]), "uno");
    assert_eq!(curl_text(&[&base]), "2 a,b\n");
    let missing = curl_text(&[
        "-o",
        "/dev/null",
        "-w",
        "%{http_code}",
        &format!("{base}/c"),
    ]);
    assert_eq!(missing, "404");
    // The state is the application's own: what the handlers did is there.
    assert_eq!(
        store.items.lock().unwrap().get("b").map(String::as_str),
        Some("two")
    );
}

/// `/login?as=NAME`: a session cookie for NAME and a preference; a NAME that would add an
/// attribute is refused (`500`), nothing set.
async fn login(request: &Request<'_>) -> Response {
    let name = request.query("as").and_then(|v| v.to_str().ok());
    let name = name.unwrap_or_default();
    let session = SetCookie::new("session", &name)
        .path("/")
        .http_only()
        .same_site(SameSite::Lax);
    let theme = SetCookie::new("theme", "dark").max_age(Duration::from_secs(86_400));
    Response::text("in\n").cookie(&session).cookie(&theme)
}

/// `/logout`: the session cookie removed.
async fn logout(_: &Request<'_>) -> Response {
    Response::text("out\n").cookie(&SetCookie::removal("session").path("/"))
}

/// `/whoami`: the cookies the request carries.
async fn whoami(request: &Request<'_>) -> Response {
    let cookie = |name| String::from_utf8_lossy(request.cookie(name).unwrap_or(b"-")).into_owned();
    Response::text(format!("{} {}\n", cookie("session"), cookie("theme")))
}

/// Cookies set by handlers, kept and sent back by curl's cookie engine, removed again; one
/// whose value would add an attribute is a `500`.
#[test]
fn cookies_set_kept_by_curl_and_removed() {
    let router = Router::new()
        .get("/login", login)
        .get("/logout", logout)
        .get("/whoami", whoami);
    let addr = start(ServerConfig::default(), router);
    let base = format!("http://{addr}");
    let login = curl_text(&["-i", &format!("{base}/login?as=ada")]);
    assert!(
        login.contains("\r\nset-cookie: session=ada; Path=/; HttpOnly; SameSite=Lax\r\n"),
        "{login}"
    );
    assert!(
        login.contains("\r\nset-cookie: theme=dark; Max-Age=86400\r\n"),
        "{login}"
    );
    let jar = std::env::temp_dir().join(format!("ringwire-cookies-{}", std::process::id()));
    let jar = jar.to_str().unwrap();
    let with_jar = |path: &str| curl_text(&["-b", jar, "-c", jar, &format!("{base}{path}")]);
    let _ = std::fs::remove_file(jar);
    assert_eq!(with_jar("/whoami"), "- -\n");
    assert_eq!(with_jar("/login?as=ada"), "in\n");
    assert_eq!(with_jar("/whoami"), "ada dark\n");
    assert_eq!(with_jar("/logout"), "out\n");
    assert_eq!(with_jar("/whoami"), "- dark\n");
    let _ = std::fs::remove_file(jar);
    let injected = curl_text(&[
        "-o",
        "/dev/null",
        "-w",
        "%{http_code}",
        &format!("{base}/login?as=x%3B%20Domain%3Devil.com"),
    ]);
    assert_eq!(injected, "500");
}

async fn moved(_: &Request<'_>) -> Response {
    Response::redirect(308, "/users/1/moved")
}

async fn misdirected(_: &Request<'_>) -> Response {
    Response::redirect(200, "/users/1/moved")
}

/// curl follows a redirect where it leads; a redirect with a status that is not one is a
/// `500`.
#[test]
fn redirects_lead_where_they_say() {
    let router = router().get("/old", moved).get("/bad", misdirected);
    let addr = start(ServerConfig::default(), router);
    let followed = curl_text(&[
        "-L",
        "-w",
        "%{num_redirects}",
        &format!("http://{addr}/old"),
    ]);
    assert_eq!(followed, "user 1 named moved\n1");
    let head = raw(
        addr,
        b"GET /old HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n",
    );
    assert!(head.starts_with("HTTP/1.1 308 "), "{head}");
    assert!(head.contains("\r\nlocation: /users/1/moved\r\n"), "{head}");
    let bad = curl_text(&[
        "-o",
        "/dev/null",
        "-w",
        "%{http_code}",
        &format!("http://{addr}/bad"),
    ]);
    assert_eq!(bad, "500");
}

#[test]
fn a_fallback_answers_what_no_route_matches() {
    let addr = start(
        ServerConfig::default(),
        router().fallback(ringwire_server::handler_fn(fallback)),
    );
    let out = curl_text(&[&format!("http://{addr}/elsewhere/x")]);
    assert_eq!(out, "no route for /elsewhere/x\n");
}

#[test]
fn a_streamed_body_goes_out_chunked() {
    let addr = start(ServerConfig::default(), router());
    let out = raw(
        addr,
        b"GET /ticks HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
    );
    assert!(out.contains("\r\ntransfer-encoding: chunked\r\n"), "{out}");
    assert!(!out.contains("content-length"), "{out}");
    assert!(
        out.ends_with("\r\n\r\n7\r\ntick 0\n\r\n7\r\ntick 1\n\r\n7\r\ntick 2\n\r\n0\r\n\r\n"),
        "{out}"
    );
    // curl decodes it, twice on one connection (the stream kept it open).
    let url = format!("http://{addr}/ticks");
    let out = curl_text(&["-w", "%{num_connects}\n", &url, &url]);
    assert_eq!(
        out,
        "tick 0\ntick 1\ntick 2\n1\ntick 0\ntick 1\ntick 2\n0\n"
    );
}

#[test]
fn a_streamed_body_to_http10_ends_with_the_close() {
    let addr = start(ServerConfig::default(), router());
    let out = raw(
        addr,
        b"GET /ticks HTTP/1.0\r\nConnection: keep-alive\r\n\r\n",
    );
    assert!(out.contains("\r\nconnection: close\r\n"), "{out}");
    assert!(!out.contains("transfer-encoding"), "{out}");
    assert!(out.ends_with("\r\n\r\ntick 0\ntick 1\ntick 2\n"), "{out}");
}

#[test]
fn a_failed_stream_cuts_the_body_short() {
    let addr = start(ServerConfig::default(), router());
    let out = raw(addr, b"GET /broken HTTP/1.1\r\nHost: x\r\n\r\n");
    assert!(out.ends_with("\r\n\r\n8\r\npartial\n\r\n"), "{out}");
}
