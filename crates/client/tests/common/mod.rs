//! Peers for the client's tests, all on 127.0.0.1: ringwire's own server,
//! Python's `http.server`, a scripted raw server for the bytes no
//! well-behaved server sends, certificates for the TLS peers, and body sources.

#![allow(dead_code, unreachable_pub)]

use std::io::{Read as _, Write as _};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use ringwire_server::{Handler, Request, Response, Server, ServerConfig};

/// Starts `handler` on a ringwire server on a loopback port.
pub fn ringwire(handler: impl Handler) -> SocketAddr {
    serve(handler, None)
}

/// Starts `handler` on a ringwire HTTPS server on a loopback port, with a
/// self-signed certificate for localhost; returns the certificate too.
pub fn ringwire_tls(handler: impl Handler) -> (SocketAddr, Vec<u8>) {
    let identity = localhost();
    (
        ringwire_offering(handler, &identity, &[b"http/1.1"]),
        identity.0,
    )
}

/// As [`ringwire_tls`], offering `h2` before `http/1.1` by ALPN.
pub fn ringwire_h2(handler: impl Handler) -> (SocketAddr, Vec<u8>) {
    let identity = localhost();
    let alpn: &[&[u8]] = &[b"h2", b"http/1.1"];
    (ringwire_offering(handler, &identity, alpn), identity.0)
}

/// A self-signed certificate for localhost and its key, in PEM.
pub fn localhost() -> (Vec<u8>, Vec<u8>) {
    ringwire_tls::self_signed(&["localhost"]).expect("certificate")
}

/// Starts `handler` on a ringwire HTTPS server on a loopback port, with the
/// certificate and key of `identity`, offering `alpn`.
pub fn ringwire_offering(
    handler: impl Handler,
    (cert, key): &(Vec<u8>, Vec<u8>),
    alpn: &[&[u8]],
) -> SocketAddr {
    let config = ringwire_tls::ServerConfig::from_pem(cert, key)
        .expect("PEM")
        .alpn(alpn);
    let acceptor = ringwire_tls::TlsAcceptor::new(&config).expect("acceptor");
    serve(handler, Some(acceptor))
}

/// Serves `handler` on a free port, over TLS through `tls` if given.
pub fn serve(handler: impl Handler, tls: Option<ringwire_tls::TlsAcceptor>) -> SocketAddr {
    serve_with(ServerConfig::default(), handler, tls)
}

/// [`serve`] with `config`, but on a free loopback port.
pub fn serve_with(
    config: ServerConfig,
    handler: impl Handler,
    tls: Option<ringwire_tls::TlsAcceptor>,
) -> SocketAddr {
    let config = ServerConfig {
        addr: "127.0.0.1:0".parse().expect("addr"),
        ..config
    };
    let mut server = Server::bind(config).expect("bind");
    if let Some(acceptor) = tls {
        server = server.with_tls(acceptor);
    }
    let addr = server.local_addr();
    thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .expect("runtime");
        runtime.block_on(server.serve(handler)).expect("serve");
    });
    addr
}

/// Answers `METHOD target body=N`, a newline, then the body itself (and
/// the `x-test` and `authorization` fields); `/peer` with the client's
/// port, one per connection; `/redirect/NNN/path` with status NNN to
/// `/path`; `/loop` with a redirect to itself; `/slow/MS` after MS
/// milliseconds.
#[derive(Debug)]
pub struct Echo;

impl Handler for Echo {
    async fn call(&self, request: &Request<'_>) -> Response {
        if let Some(ms) = request.target().as_bytes().strip_prefix(b"/slow/") {
            let ms = std::str::from_utf8(ms).unwrap().parse().unwrap();
            tokio::time::sleep(Duration::from_millis(ms)).await;
        }
        let mut out = format!(
            "{} {} body={}\n",
            request.method(),
            String::from_utf8_lossy(request.target().as_bytes()),
            request.body().len()
        )
        .into_bytes();
        out.extend_from_slice(request.body());
        for name in ["x-test", "authorization"] {
            if let Some(value) = request.header(name) {
                out.extend_from_slice(format!("\n{name}: ").as_bytes());
                out.extend_from_slice(value);
            }
        }
        let mut response = Response::new(200).body(out);
        if let Some(to) = request.target().as_bytes().strip_prefix(b"/redirect/") {
            // `/redirect/307/echo` answers 307 with `Location: /echo`.
            let (status, location) = to.split_at(3);
            let status = std::str::from_utf8(status).unwrap().parse().unwrap();
            response = Response::new(status).header("location", location.to_vec());
        }
        if request.target().as_bytes() == b"/peer" {
            let port = request.peer().map_or(0, |peer| peer.port());
            response = Response::new(200).body(port.to_string());
        }
        if request.target().as_bytes() == b"/loop" {
            response = Response::new(302).header("location", "/loop");
        }
        response
    }
}

/// Python's `http.server`, HTTP/1.1 with keep-alive, answering:
/// `/port` with the client's port (one per connection), `/chunked` with a
/// chunked body, `/close` with a body delimited by closing the connection,
/// `/big` with 4 MiB of chunked data, `/redirect` with a 302 to `/port`; a
/// `POST /json` with the JSON `{"got": <its body, parsed by Python's json>,
/// "type": <its content-type>}`, to `/not-json` with text.
pub struct Python {
    child: Child,
    pub addr: SocketAddr,
}

const PYTHON_SERVER: &str = r#"
import http.server, sys
class H(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def log_message(self, *args):
        pass
    def do_HEAD(self):
        self.do_GET()
    def do_GET(self):
        if self.path == "/port":
            body = str(self.client_address[1]).encode()
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(body)
        elif self.path in ("/chunked", "/big"):
            parts = [b"hello ", b"chunked ", b"world"] if self.path == "/chunked" else [b"x" * 65536] * 64
            self.send_response(200)
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            for part in parts:
                self.wfile.write(b"%X;ext=1\r\n%s\r\n" % (len(part), part))
            self.wfile.write(b"0\r\nx-trailer: yes\r\n\r\n")
        elif self.path == "/close":
            self.send_response(200)
            self.end_headers()
            self.wfile.write(b"until the server closes")
            self.close_connection = True
        elif self.path == "/redirect":
            self.send_response(302)
            self.send_header("Location", "/port")
            self.send_header("Content-Length", "0")
            self.end_headers()
        else:
            self.send_error(404)
    def do_POST(self):
        import json
        sent = self.rfile.read(int(self.headers["Content-Length"]))
        if self.path == "/json":
            got = {"got": json.loads(sent), "type": self.headers["Content-Type"]}
            body, kind = json.dumps(got).encode(), "application/json"
        else:
            body, kind = b"this is not JSON", "text/plain"
        self.send_response(200)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
print(srv.server_address[1], flush=True)
srv.serve_forever()
"#;

impl Python {
    pub fn start() -> Python {
        let (child, port) = ringwire_testkit::python_listening(PYTHON_SERVER, &[]);
        Python {
            child,
            addr: SocketAddr::from(([127, 0, 0, 1], port)),
        }
    }

    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }
}

impl Drop for Python {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// What the raw server does after reading a request.
pub enum Reply {
    /// Writes these bytes and waits for the next request.
    Send(Vec<u8>),
    /// Writes these bytes and closes.
    SendAndClose(Vec<u8>),
    /// Writes these bytes one at a time, each in its own segment.
    Trickle(Vec<u8>),
    /// Closes without answering (a keep-alive connection the server
    /// dropped just as the request arrived).
    Close,
    /// Writes nothing and never answers.
    Silence,
}

/// A server that reads request heads (and `content-length` bodies) and
/// answers each with whatever `reply` returns for it; counts connections.
pub struct Raw {
    pub addr: SocketAddr,
    pub connections: Arc<AtomicUsize>,
    pub requests: Arc<Mutex<Vec<String>>>,
}

impl Raw {
    pub fn start(reply: impl Fn(&str) -> Reply + Send + Sync + 'static) -> Raw {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        let addr = listener.local_addr().expect("addr");
        let connections = Arc::new(AtomicUsize::new(0));
        let requests = Arc::new(Mutex::new(Vec::new()));
        let reply = Arc::new(reply);
        let (count, log) = (Arc::clone(&connections), Arc::clone(&requests));
        thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(stream) = stream else { return };
                count.fetch_add(1, Ordering::SeqCst);
                let (reply, log) = (Arc::clone(&reply), Arc::clone(&log));
                thread::spawn(move || serve_raw(stream, &*reply, &log));
            }
        });
        Raw {
            addr,
            connections,
            requests,
        }
    }

    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    pub fn connections(&self) -> usize {
        self.connections.load(Ordering::SeqCst)
    }

    pub fn requests(&self) -> Vec<String> {
        self.requests.lock().unwrap().clone()
    }
}

fn serve_raw(mut stream: TcpStream, reply: &dyn Fn(&str) -> Reply, log: &Mutex<Vec<String>>) {
    let mut buf = Vec::new();
    loop {
        let Some(end) = find(&buf, b"\r\n\r\n") else {
            let mut more = [0; 4096];
            match stream.read(&mut more) {
                Ok(0) | Err(_) => return,
                Ok(n) => buf.extend_from_slice(&more[..n]),
            }
            continue;
        };
        let head = String::from_utf8_lossy(&buf[..end + 4]).into_owned();
        let body_len = head
            .lines()
            .find_map(|l| {
                l.to_ascii_lowercase()
                    .strip_prefix("content-length: ")
                    .map(str::to_owned)
            })
            .map_or(0, |n| n.trim().parse().unwrap_or(0));
        while buf.len() < end + 4 + body_len {
            let mut more = [0; 4096];
            match stream.read(&mut more) {
                Ok(0) | Err(_) => return,
                Ok(n) => buf.extend_from_slice(&more[..n]),
            }
        }
        let request: Vec<u8> = buf.drain(..end + 4 + body_len).collect();
        let request = String::from_utf8_lossy(&request).into_owned();
        log.lock().unwrap().push(request.clone());
        match reply(&request) {
            Reply::Send(bytes) => {
                if stream.write_all(&bytes).is_err() {
                    return;
                }
            }
            Reply::SendAndClose(bytes) => {
                let _ = stream.write_all(&bytes);
                return;
            }
            Reply::Trickle(bytes) => {
                let _ = stream.set_nodelay(true);
                for byte in bytes {
                    if stream.write_all(&[byte]).is_err() {
                        return;
                    }
                    thread::sleep(Duration::from_micros(200));
                }
            }
            Reply::Close => return,
            Reply::Silence => {
                thread::sleep(Duration::from_secs(30));
                return;
            }
        }
    }
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

/// `HTTP/1.1 200 OK` with `body` and its length.
pub fn ok(body: &str) -> Vec<u8> {
    format!(
        "HTTP/1.1 200 OK\r\ncontent-length: {}\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

/// A certificate to make: its file name in the directory, the host it is
/// for, and whether it has expired.
pub struct Leaf<'a> {
    pub file: &'a str,
    pub host: &'a str,
    pub expired: bool,
}

/// Makes a CA and, in `dir`, `FILE.pem` and `FILE.key` for each leaf it
/// signs; returns the CA's certificate (PEM), for clients to trust.
pub fn certificates(dir: &std::path::Path, leaves: &[Leaf<'_>]) -> Vec<u8> {
    use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, KeyPair};
    let mut ca = CertificateParams::new(Vec::<String>::new()).unwrap();
    ca.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca.distinguished_name
        .push(DnType::CommonName, "ringwire client test CA");
    let ca_key = KeyPair::generate().unwrap();
    let ca = ca.self_signed(&ca_key).unwrap();
    for leaf in leaves {
        let mut params = CertificateParams::new(vec![leaf.host.to_owned()]).unwrap();
        params
            .distinguished_name
            .push(DnType::CommonName, leaf.host);
        if leaf.expired {
            params.not_before = time::OffsetDateTime::UNIX_EPOCH + time::Duration::days(10_000);
            params.not_after = time::OffsetDateTime::UNIX_EPOCH + time::Duration::days(10_001);
        }
        let key = KeyPair::generate().unwrap();
        let cert = params.signed_by(&key, &ca, &ca_key).unwrap();
        std::fs::write(dir.join(format!("{}.pem", leaf.file)), cert.pem()).unwrap();
        std::fs::write(dir.join(format!("{}.key", leaf.file)), key.serialize_pem()).unwrap();
    }
    ca.pem().into_bytes()
}

/// A server that reads only a request's head, answers `413` and closes
/// with the body unread (so the kernel resets the connection): a server
/// refusing an upload early. Serves connections one after another.
pub fn refuse_early() -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = listener.local_addr().expect("addr");
    thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { return };
            let mut head = Vec::new();
            let mut more = [0; 4096];
            while find(&head, b"\r\n\r\n").is_none() {
                match stream.read(&mut more) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => head.extend_from_slice(&more[..n]),
                }
            }
            let _ = stream
                .write_all(b"HTTP/1.1 413 Content Too Large\r\ncontent-length: 9\r\n\r\ntoo large");
        }
    });
    addr
}

/// A server for one connection that reads a request head (a byte at a time,
/// so nothing after it), hands it and the stream to `answer`, then reads
/// until the client closes (5 s at most). Joined, it gives the head and
/// what came after `answer`.
pub fn once(
    answer: impl FnOnce(&mut TcpStream, &str) + Send + 'static,
) -> (SocketAddr, thread::JoinHandle<(String, Vec<u8>)>) {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = listener.local_addr().expect("addr");
    let server = thread::spawn(move || {
        let (mut stream, _) = listener.accept().expect("accept");
        // A watchdog: no read waits longer.
        stream
            .set_read_timeout(Some(Duration::from_secs(5)))
            .unwrap();
        let mut head = Vec::new();
        let mut byte = [0];
        while !head.ends_with(b"\r\n\r\n") {
            match stream.read(&mut byte) {
                Ok(1) => head.push(byte[0]),
                _ => break,
            }
        }
        let head = String::from_utf8_lossy(&head).into_owned();
        answer(&mut stream, &head);
        let mut rest = Vec::new();
        let _ = stream.read_to_end(&mut rest);
        (head, rest)
    });
    (addr, server)
}

/// Reads the `content-length` body that follows `head`.
fn read_body(stream: &mut TcpStream, head: &str) -> Vec<u8> {
    let len = head
        .lines()
        .find_map(|l| {
            l.to_ascii_lowercase()
                .strip_prefix("content-length: ")?
                .parse()
                .ok()
        })
        .unwrap_or(0);
    let mut body = vec![0; len];
    stream.read_exact(&mut body).expect("the body");
    body
}

/// `Expect: 100-continue` refused at once: `413` (the connection kept, as
/// far as the server is concerned), the body never read.
pub fn refuses_at_the_head() -> (SocketAddr, thread::JoinHandle<(String, Vec<u8>)>) {
    once(|stream, _| {
        let _ = stream
            .write_all(b"HTTP/1.1 413 Content Too Large\r\ncontent-length: 9\r\n\r\ntoo large");
    })
}

/// A server that knows nothing of `100 Continue`: it reads the body and
/// answers `N bytes after MS ms`, the time it waited for them.
pub fn never_continues() -> (SocketAddr, thread::JoinHandle<(String, Vec<u8>)>) {
    once(|stream, head| {
        let started = Instant::now();
        let body = read_body(stream, head);
        let waited = started.elapsed().as_millis();
        let _ = stream.write_all(&ok(&format!("{} bytes after {waited} ms", body.len())));
    })
}

/// A server that says `100 Continue` once no body has come for 200 ms,
/// then reads the body and answers `N bytes`; a body that came before is
/// answered `the body came before 100 Continue`.
pub fn continues() -> (SocketAddr, thread::JoinHandle<(String, Vec<u8>)>) {
    once(|stream, head| {
        stream
            .set_read_timeout(Some(Duration::from_millis(200)))
            .unwrap();
        let early = stream.read(&mut [0]).unwrap_or(0) > 0;
        stream
            .set_read_timeout(Some(Duration::from_secs(5)))
            .unwrap();
        if early {
            let _ = stream.write_all(&ok("the body came before 100 Continue"));
            return;
        }
        let _ = stream.write_all(b"HTTP/1.1 100 Continue\r\n\r\n");
        let body = read_body(stream, head);
        let _ = stream.write_all(&ok(&format!("{} bytes", body.len())));
    })
}

/// A `method` request to `url` whose `body` waits for `100 Continue`, encoded into `buffer`.
pub fn expecting<'a>(
    buffer: &mut ringwire_client::RequestBuffer,
    method: &'a str,
    url: &'a ringwire_client::Url,
    body: &'a [u8],
) -> ringwire_client::Request<'a> {
    buffer
        .request(method, url)
        .unwrap()
        .headers()
        .unwrap()
        .expect_continue()
        .body(body)
        .unwrap()
}

/// A server (or a proxy) that will not take `Expect: 100-continue`: `417` to a request
/// carrying it, `N bytes` (the body's length) to any other.
pub fn refuses_expectations() -> Raw {
    Raw::start(|request| {
        if request
            .to_ascii_lowercase()
            .contains("\r\nexpect: 100-continue\r\n")
        {
            return Reply::Send(
                b"HTTP/1.1 417 Expectation Failed\r\ncontent-length: 0\r\n\r\n".to_vec(),
            );
        }
        let body = request.split_once("\r\n\r\n").map_or("", |(_, b)| b);
        Reply::Send(ok(&format!("{} bytes", body.len())))
    })
}

/// A Python program (`python3 -m MODULE ...`, PyPI's `package` installed when missing)
/// listening on a free loopback port, in a process group of its own, killed whole when
/// dropped: these proxies fork workers that would outlive their parent.
pub struct PyListener {
    child: Child,
    pub port: u16,
}

impl PyListener {
    fn start(module: &str, package: &str, args: &dyn Fn(u16) -> Vec<String>) -> PyListener {
        ringwire_testkit::ensure_python_module(module, package);
        let port = TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("a free port")
            .port();
        let mut command = Command::new("python3");
        command
            .args(["-m", module])
            .args(args(port))
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        std::os::unix::process::CommandExt::process_group(&mut command, 0);
        let child = command.spawn().expect("python3 is installed");
        let deadline = Instant::now() + Duration::from_secs(20);
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(Instant::now() < deadline, "{module} did not start");
            thread::sleep(Duration::from_millis(50));
        }
        PyListener { child, port }
    }
}

impl Drop for PyListener {
    fn drop(&mut self) {
        let group = format!("-{}", self.child.id());
        let _ = Command::new("kill").args(["-KILL", "--", &group]).status();
        let _ = self.child.wait();
    }
}

/// proxy.py, a forward proxy: absolute-form requests and `CONNECT` tunnels, Basic
/// credentials if given.
pub struct ProxyPy(PyListener);

impl ProxyPy {
    pub fn start(credentials: Option<&str>) -> ProxyPy {
        let args = |port: u16| {
            let mut args: Vec<String> = ["--hostname", "127.0.0.1", "--port", &port.to_string()]
                .into_iter()
                .chain(["--num-workers", "1", "--num-acceptors", "1"])
                .chain(["--log-level", "ERROR"])
                .map(str::to_owned)
                .collect();
            if let Some(credentials) = credentials {
                args.extend(["--basic-auth".to_owned(), credentials.to_owned()]);
            }
            args
        };
        ProxyPy(PyListener::start("proxy", "proxy.py", &args))
    }

    pub fn port(&self) -> u16 {
        self.0.port
    }

    /// Its URL, with `credentials` (`user:password`) if given.
    pub fn url(&self, credentials: Option<&str>) -> String {
        match credentials {
            Some(c) => format!("http://{c}@127.0.0.1:{}", self.0.port),
            None => format!("http://127.0.0.1:{}", self.0.port),
        }
    }
}

/// pproxy as a SOCKS server speaking `protocol` (`socks5`, or `socks4`: SOCKS4 without
/// SOCKS4a's names).
pub fn socks(protocol: &'static str) -> PyListener {
    let args = move |port: u16| vec!["-l".to_owned(), format!("{protocol}://127.0.0.1:{port}")];
    PyListener::start("pproxy", "pproxy", &args)
}

/// A blocking source as tokio's `AsyncRead`, always ready: a streamed body's source for
/// the async client's tests.
pub struct Ready<R>(pub R);

impl<R: std::io::Read + Unpin> tokio::io::AsyncRead for Ready<R> {
    fn poll_read(
        self: std::pin::Pin<&mut Self>,
        _: &mut std::task::Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        let n = self.get_mut().0.read(buf.initialize_unfilled())?;
        buf.advance(n);
        std::task::Poll::Ready(Ok(()))
    }
}

/// A body's length and checksum, as [`Sum`] answers them.
pub fn summed(body: &[u8]) -> String {
    let sum = body
        .iter()
        .fold(0u64, |s, &b| s.wrapping_mul(31) + u64::from(b));
    format!("{} {sum}", body.len())
}

/// Counts and checksums the body it reads as it arrives.
#[derive(Debug)]
pub struct Sum;

impl Handler for Sum {
    fn streams_body(&self, _: &ringwire_http1::Request<'_>) -> bool {
        true
    }

    async fn call(&self, request: &Request<'_>) -> Response {
        let Some(mut reader) = request.body_reader() else {
            return Response::new(400);
        };
        let (mut len, mut sum) = (0u64, 0u64);
        let mut buf = vec![0; 1 << 16];
        loop {
            match reader.read(&mut buf).await {
                Ok(0) => break,
                Ok(n) => {
                    len += n as u64;
                    sum = buf[..n]
                        .iter()
                        .fold(sum, |s, &b| s.wrapping_mul(31) + u64::from(b));
                }
                Err(_) => return Response::new(400),
            }
        }
        Response::text(format!("{len} {sum}"))
    }
}
