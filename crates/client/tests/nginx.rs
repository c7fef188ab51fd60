//! The client against nginx (Debian's, `/usr/sbin/nginx`) on loopback,
//! over HTTP and over HTTPS (a certificate for localhost from a CA made for
//! the test): keep-alive counted by nginx's own connection serial, static
//! files, chunked (gzip) bodies, HEAD and redirects; and bodies streamed from a
//! source, stored by nginx's WebDAV `PUT` and compared with what was sent; all of it
//! through nginx's Unix socket too (curl's `--unix-socket`).

use std::io::Read;
use std::net::TcpListener;
use std::path::PathBuf;
use std::time::{Duration, Instant};

mod common;

use common::{Leaf, Ready};
use ringwire_client::{
    blocking, tokio as async_client, ClientConfig, Encoding, Error, Http2, Protocol, RequestBuffer,
    Url,
};

const FILE_LEN: usize = 3 << 20;

/// nginx in the foreground, in one process, with everything under a
/// temporary directory; killed (by pid) when dropped.
struct Nginx {
    process: ringwire_testkit::Nginx,
    dir: PathBuf,
    port: u16,
    /// The CA that signed nginx's certificate, when it speaks TLS.
    ca: Option<Vec<u8>>,
    /// Whether it offers `h2`.
    h2: bool,
}

/// How nginx listens.
#[derive(Clone, Copy, PartialEq)]
enum Listen {
    Plain,
    Tls,
    /// TLS, offering `h2` by ALPN.
    TlsH2,
}

impl Nginx {
    /// `name` keeps the directories of tests running at once apart.
    fn start(name: &str, listen: Listen) -> Nginx {
        let tls = listen != Listen::Plain;
        let port = TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let dir = std::env::temp_dir().join(format!(
            "ringwire-client-nginx-{}-{name}",
            std::process::id()
        ));
        std::fs::create_dir_all(dir.join("root")).unwrap();
        let file: Vec<u8> = (0..FILE_LEN).map(|i| (i % 251) as u8).collect();
        std::fs::write(dir.join("root/big.bin"), file).unwrap();
        std::fs::write(dir.join("root/text.txt"), "ringwire ".repeat(2000)).unwrap();
        let localhost = Leaf {
            file: "cert",
            host: "localhost",
            expired: false,
        };
        let ca = tls.then(|| common::certificates(&dir, &[localhost]));
        let d = dir.display();
        let http2 = if listen == Listen::TlsH2 {
            " http2"
        } else {
            ""
        };
        let (address, unix) = if tls {
            let certificate =
                format!("ssl_certificate {d}/cert.pem; ssl_certificate_key {d}/cert.key");
            (
                format!("{port} ssl{http2}; {certificate}"),
                format!("unix:{d}/nginx.sock ssl{http2}"),
            )
        } else {
            (port.to_string(), format!("unix:{d}/nginx.sock"))
        };
        let http = format!(
            "    default_type application/octet-stream;
    gzip on;
    gzip_min_length 0;
    gzip_types text/plain;
    types {{ text/plain txt; }}
    server {{
        listen 127.0.0.1:{address};
        listen {unix};
        root {d}/root;
        location = /via {{ return 200 \"$server_addr\"; }}
        location = /conn {{ return 200 \"$connection\"; }}
        location = /moved {{ return 301 /conn; }}
        location /up/ {{ dav_methods PUT; create_full_put_path on; client_max_body_size 0; }}
        location /small/ {{ dav_methods PUT; client_max_body_size 1k; }}
        location = /again {{ client_max_body_size 0; return 307 /up/again; }}
        location = /elsewhere {{ return 303 /conn; }}
    }}"
        );
        let process = ringwire_testkit::Nginx::start(&dir, &http, port, None);
        // Started once its TCP port answers; its sockets are opened one after another, so
        // the Unix one may not be there yet.
        let deadline = Instant::now() + Duration::from_secs(10);
        while std::os::unix::net::UnixStream::connect(dir.join("nginx.sock")).is_err() {
            assert!(Instant::now() < deadline, "no Unix socket");
            std::thread::sleep(Duration::from_millis(20));
        }
        Nginx {
            process,
            dir,
            port,
            ca,
            h2: listen == Listen::TlsH2,
        }
    }

    fn url(&self, path: &str) -> Url {
        let scheme = if self.ca.is_some() {
            "https://localhost"
        } else {
            "http://127.0.0.1"
        };
        Url::parse(&format!("{scheme}:{}{path}", self.port)).unwrap()
    }

    /// The client's TLS settings: trust the test's CA.
    fn tls(&self) -> ringwire_tls::ClientConfig {
        let config = ringwire_tls::ClientConfig::default().without_system_roots();
        match &self.ca {
            Some(ca) => config.add_root_pem(ca),
            None => config,
        }
    }
}

impl Drop for Nginx {
    fn drop(&mut self) {
        self.process.stop();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

#[test]
fn blocking_client_against_nginx() {
    blocking_client(&Nginx::start("blocking", Listen::Plain), Http2::Off);
}

#[test]
fn blocking_client_against_nginx_over_tls() {
    blocking_client(&Nginx::start("blocking-tls", Listen::Tls), Http2::Off);
}

#[test]
fn blocking_client_against_nginx_over_tls_declining_h2() {
    blocking_client(
        &Nginx::start("blocking-tls-h1", Listen::Tls),
        Http2::Negotiate,
    );
}

#[test]
fn blocking_client_against_nginx_over_h2() {
    blocking_client(
        &Nginx::start("blocking-h2", Listen::TlsH2),
        Http2::Negotiate,
    );
}

/// The same exchanges whatever the protocol: `http2` is what the client
/// offers, and nginx's `listen` decides what it gets.
fn blocking_client(nginx: &Nginx, http2: Http2) {
    let config = ClientConfig {
        max_redirects: Some(1),
        http2,
        ..ClientConfig::default()
    };
    let protocol = if nginx.h2 {
        Protocol::Http2
    } else {
        Protocol::Http1
    };
    let client = blocking::Client::with_tls(config, nginx.tls());
    let mut buffer = RequestBuffer::new().unwrap();
    let mut fetch = |method: &str, url: &Url, gzip: bool| {
        let mut request = buffer.request(method, url).unwrap().headers().unwrap();
        if gzip {
            request = request.header("accept-encoding", "gzip").unwrap();
        }
        let request = request.finish().unwrap();
        let mut response = client.send(&mut buffer, &request).unwrap();
        assert_eq!(response.protocol(), protocol);
        let chunked = response.header("transfer-encoding").is_some();
        (response.status(), chunked, response.bytes().unwrap())
    };

    // nginx numbers its connections: one serial for all of these.
    let conn = nginx.url("/conn");
    let serials: Vec<_> = (0..5).map(|_| fetch("GET", &conn, false).2).collect();
    assert!(serials.iter().all(|s| *s == serials[0]), "{serials:?}");

    let (status, _, body) = fetch("GET", &nginx.url("/big.bin"), false);
    assert_eq!(status, 200);
    assert_eq!(body.len(), FILE_LEN);
    assert!(body.iter().enumerate().all(|(i, &b)| b == (i % 251) as u8));

    let (status, _, body) = fetch("HEAD", &nginx.url("/big.bin"), false);
    assert_eq!((status, body.len()), (200, 0));

    let (status, chunked, body) = fetch("GET", &nginx.url("/text.txt"), true);
    assert_eq!(status, 200);
    // HTTP/2 frames every body; HTTP/1.1 needs chunks for one of unknown length.
    assert_eq!(
        chunked,
        protocol == Protocol::Http1,
        "gzip makes nginx chunk the body"
    );
    assert_eq!(body[..2], [0x1f, 0x8b]);

    let (status, _, body) = fetch("GET", &nginx.url("/moved"), false);
    assert_eq!((status, &body), (200, &serials[0]));

    let (status, _, _) = fetch("GET", &nginx.url("/missing"), false);
    assert_eq!(status, 404);
    assert_eq!(fetch("GET", &conn, false).2, serials[0]);
    assert_eq!(client.idle_connections(&conn), 1);

    // Decoded as it is read, from chunks or from frames.
    let url = nginx.url("/text.txt");
    let request = buffer.request("GET", &url).unwrap().headers().unwrap();
    let request = request.decompress().finish().unwrap();
    let mut response = client.send(&mut buffer, &request).unwrap();
    assert_eq!(response.decoding(), Some(Encoding::Gzip));
    assert_eq!(response.text().unwrap(), "ringwire ".repeat(2000));
}

#[test]
fn async_client_against_nginx() {
    async_client(&Nginx::start("async", Listen::Plain), Http2::Off);
}

#[test]
fn async_client_against_nginx_over_tls() {
    async_client(&Nginx::start("async-tls", Listen::Tls), Http2::Off);
}

#[test]
fn async_client_against_nginx_over_h2() {
    async_client(&Nginx::start("async-h2", Listen::TlsH2), Http2::Negotiate);
}

fn async_client(nginx: &Nginx, http2: Http2) {
    let protocol = if nginx.h2 {
        Protocol::Http2
    } else {
        Protocol::Http1
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let config = ClientConfig {
            http2,
            ..ClientConfig::default()
        };
        let client = async_client::Client::with_tls(config, nginx.tls());
        let mut buffer = RequestBuffer::new().unwrap();
        let mut serials = Vec::new();
        for path in ["/conn", "/big.bin", "/conn"] {
            let url = nginx.url(path);
            let request = buffer
                .request("GET", &url)
                .unwrap()
                .headers()
                .unwrap()
                .finish()
                .unwrap();
            let mut response = client.send(&mut buffer, &request).await.unwrap();
            assert_eq!((response.status(), response.protocol()), (200, protocol));
            let body = response.bytes().await.unwrap();
            if path == "/conn" {
                serials.push(body);
            } else {
                assert_eq!(body.len(), FILE_LEN);
            }
        }
        assert_eq!(serials[0], serials[1]);
        if nginx.h2 {
            shared_h2(nginx, &client).await;
        }
    });
}

/// Large files and small answers at once on one shared HTTP/2 connection to nginx, held by
/// the caller and the client's own: every body whole and alike, every answer from the
/// same connection.
async fn shared_h2(nginx: &Nginx, client: &async_client::Client) {
    let conn = client.http2_connection(&nginx.url("/")).await.unwrap();
    let tasks: Vec<_> = ["/big.bin", "/conn"]
        .iter()
        .cycle()
        .take(8)
        .map(|path| {
            let (conn, url) = (conn.clone(), nginx.url(path));
            tokio::spawn(async move {
                let mut buffer = RequestBuffer::new().unwrap();
                let request = buffer.request("GET", &url).unwrap().headers().unwrap();
                let request = request.finish().unwrap();
                let mut response = conn.send(&mut buffer, &request).await.unwrap();
                assert_eq!(response.status(), 200);
                response.bytes().await.unwrap()
            })
        })
        .collect();
    let mut bodies = Vec::new();
    for task in tasks {
        bodies.push(task.await.unwrap());
    }
    files_and_serials(&bodies);
    let paths = ["/big.bin", "/conn"].iter().cycle().take(8);
    let bodies = futures_util::future::join_all(paths.map(|path| async move {
        let url = nginx.url(path);
        let mut buffer = RequestBuffer::new().unwrap();
        let request = buffer.request("GET", &url).unwrap().headers().unwrap();
        let request = request.finish().unwrap();
        let mut response = client.send(&mut buffer, &request).await.unwrap();
        assert_eq!(
            (response.status(), response.protocol()),
            (200, Protocol::Http2)
        );
        response.bytes().await.unwrap()
    }));
    files_and_serials(&bodies.await);
}

/// `bodies` are four of the same file and four serials of the same connection.
fn files_and_serials(bodies: &[Vec<u8>]) {
    let (files, serials): (Vec<_>, Vec<_>) = bodies.iter().partition(|b| b.len() == FILE_LEN);
    assert_eq!((files.len(), serials.len()), (4, 4));
    assert!(files.iter().all(|f| f == &files[0]), "the files differ");
    assert!(serials.iter().all(|s| s == &serials[0]), "{serials:?}");
}

/// A source of `len` bytes of a pattern, given in pieces of varying sizes (1 byte up to
/// 70 KB), as a pipe or a slow producer gives them.
struct Trickle {
    len: usize,
    at: usize,
    reads: usize,
}

impl Trickle {
    fn new(len: usize) -> Trickle {
        Trickle {
            len,
            at: 0,
            reads: 0,
        }
    }
}

/// Byte `i` of every uploaded body.
fn pattern(i: usize) -> u8 {
    (i * 7 % 253) as u8
}

impl Read for Trickle {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        self.reads += 1;
        let step = [1, 70_000, 13, 4096, 65_536, 999][self.reads % 6];
        let n = step.min(buf.len()).min(self.len - self.at);
        for (i, b) in buf[..n].iter_mut().enumerate() {
            *b = pattern(self.at + i);
        }
        self.at += n;
        Ok(n)
    }
}

/// A source that fails after `after` bytes.
struct Failing {
    after: usize,
}

impl Read for Failing {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.after == 0 {
            return Err(std::io::Error::other("disk on fire"));
        }
        let n = self.after.min(buf.len());
        buf[..n].fill(b'x');
        self.after -= n;
        Ok(n)
    }
}

/// The file nginx stored at `name` under its root is the pattern, `len` bytes.
fn assert_stored(nginx: &Nginx, name: &str, len: usize) {
    let stored = std::fs::read(nginx.dir.join("root").join(name)).unwrap();
    assert_eq!(stored.len(), len, "{name}");
    assert!(
        stored.iter().enumerate().all(|(i, &b)| b == pattern(i)),
        "{name} differs"
    );
}

#[test]
fn blocking_uploads_to_nginx() {
    blocking_uploads(&Nginx::start("up", Listen::Plain), Http2::Off);
}

#[test]
fn blocking_uploads_to_nginx_over_h2() {
    blocking_uploads(&Nginx::start("up-h2", Listen::TlsH2), Http2::Negotiate);
}

/// Bodies streamed from sources, of known length and not, whole or refused.
fn blocking_uploads(nginx: &Nginx, http2: Http2) {
    let config = ClientConfig {
        max_redirects: Some(2),
        http2,
        ..ClientConfig::default()
    };
    let client = blocking::Client::with_tls(config, nginx.tls());
    let mut buffer = RequestBuffer::new().unwrap();
    let mut put = |path: &str, len: Option<u64>, expect: bool, source: &mut dyn Read| {
        let url = nginx.url(path);
        let mut head = buffer.request("PUT", &url).unwrap().headers().unwrap();
        if expect {
            head = head.expect_continue();
        }
        let request = head.body_stream(len).unwrap();
        assert_eq!(request.body_len(), len);
        let mut response = client.send_streamed(&mut buffer, &request, source)?;
        let status = response.status();
        let body = response.bytes()?;
        Ok::<_, Error>((status, body))
    };

    // Far larger than the send ring: it goes through it piece by piece.
    let len = 8 << 20;
    let (status, _) = put("/up/known", Some(len as u64), false, &mut Trickle::new(len)).unwrap();
    assert_eq!(status, 201);
    assert_stored(nginx, "up/known", len);

    // Of unknown length: chunked over HTTP/1.1, frames until the end over HTTP/2.
    let len = (5 << 20) + 7;
    let (status, _) = put("/up/unknown", None, false, &mut Trickle::new(len)).unwrap();
    assert_eq!(status, 201);
    assert_stored(nginx, "up/unknown", len);

    // Sent once the server says so; an empty one too.
    let len = 300_000;
    let (status, _) = put("/up/expected", None, true, &mut Trickle::new(len)).unwrap();
    assert_eq!(status, 201);
    assert_stored(nginx, "up/expected", len);
    let (status, _) = put("/up/empty", Some(0), false, &mut Trickle::new(0)).unwrap();
    assert_eq!(status, 201);
    assert_stored(nginx, "up/empty", 0);

    // Refused early: nginx answers 413 without reading the rest.
    let len = 4 << 20;
    let (status, _) = put(
        "/small/big",
        Some(len as u64),
        false,
        &mut Trickle::new(len),
    )
    .unwrap();
    assert_eq!(status, 413);
    let (status, _) = put("/small/big", None, false, &mut Trickle::new(len)).unwrap();
    assert_eq!(status, 413);

    // A redirect that would send the body again is the answer; one that drops it is followed.
    let (status, _) = put("/again", Some(10), false, &mut Trickle::new(10)).unwrap();
    assert_eq!(status, 307);
    let (status, body) = put("/elsewhere", Some(10), false, &mut Trickle::new(10)).unwrap();
    assert_eq!(status, 200);
    assert!(!body.is_empty(), "nginx's connection serial");

    // A source short of its length, or failing: an error, and the client carries on.
    let ended = put("/up/short", Some(1 << 20), false, &mut Trickle::new(1000));
    assert!(
        matches!(
            ended,
            Err(Error::BodySourceEnded {
                sent: 1000,
                expected: 1_048_576
            })
        ),
        "{ended:?}"
    );
    let failed = put("/up/failed", None, false, &mut Failing { after: 100_000 });
    assert!(matches!(failed, Err(Error::BodySource(_))), "{failed:?}");
    assert!(!nginx.dir.join("root/up/failed").exists());
    let (status, _) = put("/up/after", Some(5), false, &mut Trickle::new(5)).unwrap();
    assert_eq!(status, 201);
    assert_stored(nginx, "up/after", 5);
}

#[test]
fn async_uploads_to_nginx() {
    async_uploads(&Nginx::start("async-up", Listen::Plain), Http2::Off);
}

#[test]
fn async_uploads_to_nginx_over_h2() {
    async_uploads(
        &Nginx::start("async-up-h2", Listen::TlsH2),
        Http2::Negotiate,
    );
}

fn async_uploads(nginx: &Nginx, http2: Http2) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let config = ClientConfig {
            http2,
            ..ClientConfig::default()
        };
        let client = async_client::Client::with_tls(config, nginx.tls());
        let mut buffer = RequestBuffer::new().unwrap();
        for (name, len, known) in [("a", 6 << 20, true), ("b", (3 << 20) + 1, false)] {
            let url = nginx.url(&format!("/up/{name}"));
            let head = buffer.request("PUT", &url).unwrap().headers().unwrap();
            let request = head.body_stream(known.then_some(len as u64)).unwrap();
            let response = client
                .send_streamed(&mut buffer, &request, Ready(Trickle::new(len)))
                .await
                .unwrap();
            assert_eq!(response.status(), 201);
            drop(response);
            assert_stored(nginx, &format!("up/{name}"), len);
        }
        // From a file, as tokio reads one.
        let path = nginx.dir.join("root/up/a");
        let file = tokio::fs::File::open(&path).await.unwrap();
        let len = file.metadata().await.unwrap().len();
        let url = nginx.url("/up/copy");
        let head = buffer.request("PUT", &url).unwrap().headers().unwrap();
        let request = head.body_stream(Some(len)).unwrap();
        let response = client
            .send_streamed(&mut buffer, &request, file)
            .await
            .unwrap();
        assert_eq!(response.status(), 201);
        drop(response);
        assert_stored(nginx, "up/copy", len as usize);
    });
}

/// Read system calls this thread has made so far (`syscr` in `/proc/thread-self/io`).
fn reads_so_far() -> u64 {
    let io = std::fs::read_to_string("/proc/thread-self/io").unwrap();
    io.lines()
        .find_map(|l| l.strip_prefix("syscr: "))
        .unwrap()
        .parse()
        .unwrap()
}

#[test]
fn files_go_by_sendfile_over_plain_http1() {
    let nginx = Nginx::start("file", Listen::Plain);
    let len = 8 << 20;
    let path = nginx.dir.join("source.bin");
    let data: Vec<u8> = (0..len).map(pattern).collect();
    std::fs::write(&path, data).unwrap();
    let client = blocking::Client::with_tls(ClientConfig::default(), nginx.tls());
    let mut buffer = RequestBuffer::new().unwrap();
    let url = nginx.url("/up/sent");
    let request = buffer.request("PUT", &url).unwrap().headers().unwrap();
    let request = request.body_stream(Some(len as u64)).unwrap();
    let file = std::fs::File::open(&path).unwrap();
    let before = reads_so_far();
    let response = client.send_file(&mut buffer, &request, &file).unwrap();
    // Read through the send ring, 8 MiB would take at least 150 reads of the file.
    let reads = reads_so_far() - before;
    assert_eq!(response.status(), 201);
    drop(response);
    assert!(
        reads < 20,
        "{reads} reads: the file went through the process"
    );
    assert_stored(&nginx, "up/sent", len);

    // From where the file's offset is; chunked, it goes through the ring.
    let mut file = std::fs::File::open(&path).unwrap();
    std::io::Seek::seek(&mut file, std::io::SeekFrom::Start(1000)).unwrap();
    let url = nginx.url("/up/chunked");
    let request = buffer.request("PUT", &url).unwrap().headers().unwrap();
    let request = request.body_stream(None).unwrap();
    let response = client.send_file(&mut buffer, &request, &file).unwrap();
    assert_eq!(response.status(), 201);
    drop(response);
    let stored = std::fs::read(nginx.dir.join("root/up/chunked")).unwrap();
    assert_eq!(stored.len(), len - 1000);
    assert!(stored
        .iter()
        .enumerate()
        .all(|(i, &b)| b == pattern(i + 1000)));

    // A redirect that keeps the body: the file goes again from where it started.
    let follows = ClientConfig {
        max_redirects: Some(1),
        ..ClientConfig::default()
    };
    let redirected = blocking::Client::with_tls(follows, nginx.tls());
    let url = nginx.url("/again");
    let request = buffer.request("PUT", &url).unwrap().headers().unwrap();
    let request = request.body_stream(Some(len as u64 - 1000)).unwrap();
    let mut file = std::fs::File::open(&path).unwrap();
    std::io::Seek::seek(&mut file, std::io::SeekFrom::Start(1000)).unwrap();
    let response = redirected.send_file(&mut buffer, &request, &file).unwrap();
    assert_eq!(response.status(), 201);
    drop(response);
    let stored = std::fs::read(nginx.dir.join("root/up/again")).unwrap();
    assert_eq!(stored.len(), len - 1000);
    assert!(stored
        .iter()
        .enumerate()
        .all(|(i, &b)| b == pattern(i + 1000)));

    // A pipe, which `sendfile` may refuse: read instead.
    let fifo = nginx.dir.join("fifo");
    let made = std::process::Command::new("mkfifo").arg(&fifo).status();
    assert!(made.unwrap().success());
    let writer = {
        let fifo = fifo.clone();
        std::thread::spawn(move || {
            let data: Vec<u8> = (0..300_000).map(pattern).collect();
            std::fs::write(fifo, data).unwrap();
        })
    };
    let url = nginx.url("/up/piped");
    let request = buffer.request("PUT", &url).unwrap().headers().unwrap();
    let request = request.body_stream(Some(300_000)).unwrap();
    let pipe = std::fs::File::open(&fifo).unwrap();
    let response = client.send_file(&mut buffer, &request, &pipe).unwrap();
    assert_eq!(response.status(), 201);
    drop(response);
    writer.join().unwrap();
    assert_stored(&nginx, "up/piped", 300_000);

    // A file shorter than announced.
    let url = nginx.url("/up/short");
    let request = buffer.request("PUT", &url).unwrap().headers().unwrap();
    let request = request.body_stream(Some(len as u64 + 1)).unwrap();
    let file = std::fs::File::open(&path).unwrap();
    let ended = client.send_file(&mut buffer, &request, &file);
    assert!(
        matches!(ended, Err(Error::BodySourceEnded { sent, .. }) if sent == len as u64),
        "{ended:?}"
    );

    // The async client, by sendfile too.
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let client = async_client::Client::with_tls(ClientConfig::default(), nginx.tls());
        let url = nginx.url("/up/async");
        let request = buffer.request("PUT", &url).unwrap().headers().unwrap();
        let request = request.body_stream(Some(len as u64)).unwrap();
        let file = std::fs::File::open(&path).unwrap();
        let before = reads_so_far();
        let response = client
            .send_file(&mut buffer, &request, &file)
            .await
            .unwrap();
        let reads = reads_so_far() - before;
        assert_eq!(response.status(), 201);
        drop(response);
        assert!(
            reads < 20,
            "{reads} reads: the file went through the process"
        );
    });
    assert_stored(&nginx, "up/async", len);
}

#[test]
fn files_go_through_the_ring_over_tls_and_h2() {
    let nginx = Nginx::start("file-h2", Listen::TlsH2);
    let len = (3 << 20) + 5;
    let path = nginx.dir.join("source.bin");
    let data: Vec<u8> = (0..len).map(pattern).collect();
    std::fs::write(&path, data).unwrap();
    let config = ClientConfig {
        http2: Http2::Negotiate,
        ..ClientConfig::default()
    };
    let client = blocking::Client::with_tls(config, nginx.tls());
    let mut buffer = RequestBuffer::new().unwrap();
    let url = nginx.url("/up/blocking");
    let request = buffer.request("PUT", &url).unwrap().headers().unwrap();
    let request = request.body_stream(Some(len as u64)).unwrap();
    let file = std::fs::File::open(&path).unwrap();
    let response = client.send_file(&mut buffer, &request, &file).unwrap();
    assert_eq!(
        (response.status(), response.protocol()),
        (201, Protocol::Http2)
    );
    drop(response);
    assert_stored(&nginx, "up/blocking", len);

    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let config = ClientConfig {
            max_redirects: Some(1),
            ..config
        };
        let client = async_client::Client::with_tls(config, nginx.tls());
        // Redirected, the file goes again from its start.
        let url = nginx.url("/again");
        let request = buffer.request("PUT", &url).unwrap().headers().unwrap();
        let request = request.body_stream(Some(len as u64)).unwrap();
        let file = std::fs::File::open(&path).unwrap();
        let response = client
            .send_file(&mut buffer, &request, &file)
            .await
            .unwrap();
        assert_eq!(
            (response.status(), response.protocol()),
            (201, Protocol::Http2)
        );
    });
    assert_stored(&nginx, "up/again", len);
}

/// Both clients through nginx's Unix socket (`unix_socket`), whatever the URL's host names
/// (one that resolves nowhere here; over TLS the certificate's): keep-alive, a large
/// body, an upload by `sendfile` over the plain socket.
#[test]
fn through_a_unix_socket() {
    for listen in [Listen::Plain, Listen::TlsH2] {
        let nginx = Nginx::start(&format!("unix-{}", listen as u8), listen);
        let socket = nginx.dir.join("nginx.sock");
        let host = match listen {
            Listen::Plain => "http://nowhere.invalid",
            Listen::Tls | Listen::TlsH2 => "https://localhost",
        };
        let url = |path: &str| Url::parse(&format!("{host}{path}")).unwrap();
        let protocol = match listen {
            Listen::TlsH2 => Protocol::Http2,
            Listen::Plain | Listen::Tls => Protocol::Http1,
        };
        let config = ClientConfig {
            http2: Http2::Negotiate,
            ..ClientConfig::default()
        };
        let client = blocking::Client::with_tls(config, nginx.tls()).unix_socket(&socket);
        let mut buffer = RequestBuffer::new().unwrap();
        let mut get = |path: &str| {
            let url = url(path);
            let request = buffer.request("GET", &url).unwrap().headers().unwrap();
            let request = request.finish().unwrap();
            let mut response = client.send(&mut buffer, &request).unwrap();
            assert_eq!((response.status(), response.protocol()), (200, protocol));
            response.bytes().unwrap()
        };
        assert!(
            get("/via").starts_with(b"unix:/"),
            "nginx's Unix socket answered"
        );
        let serials: Vec<_> = (0..3).map(|_| get("/conn")).collect();
        assert!(serials.iter().all(|s| *s == serials[0]), "{serials:?}");
        assert!(get("/big.bin")
            .iter()
            .enumerate()
            .all(|(i, &b)| b == (i % 251) as u8));

        let len = 2 << 20;
        let path = nginx.dir.join("source.bin");
        std::fs::write(&path, (0..len).map(pattern).collect::<Vec<_>>()).unwrap();
        let up = url("/up/unix");
        let request = buffer.request("PUT", &up).unwrap().headers().unwrap();
        let request = request.body_stream(Some(len as u64)).unwrap();
        let file = std::fs::File::open(&path).unwrap();
        let before = reads_so_far();
        let response = client.send_file(&mut buffer, &request, &file).unwrap();
        assert_eq!(response.status(), 201);
        drop(response);
        if listen == Listen::Plain {
            let reads = reads_so_far() - before;
            assert!(
                reads < 20,
                "{reads} reads: the file went through the process"
            );
        }
        assert_stored(&nginx, "up/unix", len);

        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        runtime.block_on(async {
            let client = async_client::Client::with_tls(config, nginx.tls()).unix_socket(&socket);
            let mut bodies = Vec::new();
            for path in ["/via", "/conn", "/big.bin", "/conn"] {
                let url = url(path);
                let request = buffer.request("GET", &url).unwrap().headers().unwrap();
                let request = request.finish().unwrap();
                let mut response = client.send(&mut buffer, &request).await.unwrap();
                assert_eq!(response.status(), 200);
                bodies.push(response.bytes().await.unwrap());
            }
            assert!(bodies[0].starts_with(b"unix:/"));
            assert_eq!(bodies[1], bodies[3], "one connection");
            assert_eq!(bodies[2].len(), FILE_LEN);
        });
    }
}

/// A client whose Unix socket is not there says which socket it could not reach.
#[test]
fn a_missing_unix_socket_is_named() {
    let client = blocking::Client::default().unix_socket("/nonexistent/ringwire.sock");
    let mut buffer = RequestBuffer::new().unwrap();
    let url = Url::parse("http://localhost/").unwrap();
    let request = buffer.request("GET", &url).unwrap().headers().unwrap();
    let request = request.finish().unwrap();
    let err = client.send(&mut buffer, &request).unwrap_err();
    assert!(
        err.to_string()
            .starts_with("cannot connect to unix:/nonexistent/ringwire.sock: "),
        "{err}"
    );
}
