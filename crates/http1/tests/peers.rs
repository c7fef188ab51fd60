//! The codec against real peers over real sockets: curl as the client of a
//! small blocking server built from the codec, and Python's `http.server`
//! as the server for the client side. Nothing is mocked.

use std::io::Write as _;
use std::net::{TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, SystemTime};
use std::{error, thread};

use ringwire_http1::encode::{DateCache, RequestWriter, ResponseWriter};
use ringwire_http1::{
    BodyDecoder, BodyKind, Decoded, Limits, Method, RequestParser, ResponseParser, Status, Version,
};
use ringwire_io::{Duplex, RecvTransport, TransportConfig};

type Result<T> = std::result::Result<T, Box<dyn error::Error + Send + Sync>>;

fn config() -> TransportConfig {
    TransportConfig::new(64 * 1024, 16 << 20)
}

/// A body and its trailer fields.
type Body = (Vec<u8>, Vec<(String, String)>);

/// Reads one body through the decoder, however it is framed.
fn read_body<R: std::io::Read>(rx: &mut RecvTransport<R>, kind: BodyKind) -> Result<Body> {
    let mut decoder = BodyDecoder::new(kind, &Limits::default());
    let mut body = Vec::new();
    loop {
        // Decode until the decoder needs more; only then read.
        let (consumed, more) = match decoder.decode(rx.data())? {
            Decoded::Data { data, consumed } => {
                body.extend_from_slice(data);
                (consumed, false)
            }
            Decoded::Partial { consumed } => (consumed, true),
            Decoded::Done { consumed, trailers } => {
                let trailers = trailers
                    .iter()
                    .map(|h| {
                        (
                            h.name.to_string(),
                            String::from_utf8_lossy(h.value).into_owned(),
                        )
                    })
                    .collect();
                rx.consume(consumed);
                return Ok((body, trailers));
            }
        };
        rx.consume(consumed);
        if more && rx.fill(rx.data().len() + 1)? == 0 {
            decoder.finish_eof()?;
            return Ok((body, Vec::new()));
        }
    }
}

/// One connection of the test server: answers every request with a line
/// describing what it parsed, keep-alive and pipelining included.
fn serve_connection(stream: TcpStream) -> Result<()> {
    let Duplex { mut rx, mut tx } = Duplex::tcp(config(), &stream)?;
    let mut parser = RequestParser::default();
    let mut date = DateCache::new();
    loop {
        let (line, head_len, kind, keep_alive, expects_continue) = loop {
            match parser.parse(rx.data()) {
                Ok(Status::Complete(r, n)) => {
                    let line = format!(
                        "{} {} {} te={:?} ua={}",
                        r.method(),
                        String::from_utf8_lossy(r.target().as_bytes()),
                        r.version(),
                        r.body(),
                        String::from_utf8_lossy(r.header("user-agent").unwrap_or_default()),
                    );
                    break (line, n, r.body(), r.keep_alive(), r.expects_continue());
                }
                Ok(Status::Partial { at_least }) => {
                    if rx.fill(at_least)? == 0 {
                        return Ok(());
                    }
                }
                Err(e) => {
                    let reply = format!(
                        "HTTP/1.1 {} {}\r\nconnection: close\r\ncontent-length: 0\r\n\r\n",
                        e.status(),
                        e.reason()
                    );
                    tx.write(reply.as_bytes())?;
                    tx.flush()?;
                    return Ok(());
                }
            }
        };
        rx.consume(head_len);
        if expects_continue {
            tx.write(b"HTTP/1.1 100 Continue\r\n\r\n")?;
            tx.flush()?;
        }
        let (body, _) = read_body(&mut rx, kind)?;
        let reply = format!("{line} body={}\n", body.len());
        let buf = tx.reserve(1024)?;
        let mut head = ResponseWriter::new(buf, Version::Http11, 200, None)?;
        date.update(SystemTime::now());
        head.date(&date)?;
        head.header("content-type", "text/plain")?;
        head.content_length(reply.len() as u64)?;
        if !keep_alive {
            head.header("connection", "close")?;
        }
        let n = head.finish()?;
        tx.commit(n);
        tx.write(reply.as_bytes())?;
        // Pipelined requests already buffered are answered in one send.
        if rx.data().is_empty() || !keep_alive {
            tx.flush()?;
        }
        if !keep_alive {
            return Ok(());
        }
    }
}

/// A server on an ephemeral loopback port, one thread per connection.
fn server() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().expect("addr").port();
    thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            thread::spawn(move || {
                if let Err(e) = serve_connection(stream) {
                    eprintln!("test server: {e}");
                }
            });
        }
    });
    port
}

fn curl(args: &[&str], stdin: &[u8]) -> String {
    let mut child = Command::new("curl")
        .args(["--silent", "--show-error", "--max-time", "10"])
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("curl is installed (.ci/run installs it)");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(stdin)
        .expect("write stdin");
    let out = child.wait_with_output().expect("curl");
    assert!(
        out.status.success(),
        "curl {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("utf-8")
}

#[test]
fn curl_keep_alive_reuses_one_connection() {
    let port = server();
    let a = format!("http://127.0.0.1:{port}/a?x=1");
    let b = format!("http://127.0.0.1:{port}/b");
    let out = curl(&["-A", "probe", "-w", "%{num_connects}\n", &a, &b], b"");
    let lines: Vec<_> = out.lines().collect();
    assert_eq!(
        lines,
        [
            "GET /a?x=1 HTTP/1.1 te=Empty ua=probe body=0",
            "1",
            "GET /b HTTP/1.1 te=Empty ua=probe body=0",
            "0"
        ],
        "the second request reuses the connection"
    );
}

#[test]
fn curl_uploads_chunked_and_with_expect_continue() {
    let port = server();
    let url = format!("http://127.0.0.1:{port}/up");
    let body = vec![b'x'; 300_000];
    let chunked = curl(
        &[
            "-A",
            "c",
            "-H",
            "Transfer-Encoding: chunked",
            "--data-binary",
            "@-",
            &url,
        ],
        &body,
    );
    assert_eq!(chunked, "POST /up HTTP/1.1 te=Chunked ua=c body=300000\n");
    // curl sends `Expect: 100-continue` for bodies over 1 MiB and waits for the 100.
    let big = vec![b'y'; 2 << 20];
    let expect = curl(
        &[
            "-A",
            "e",
            "--expect100-timeout",
            "30",
            "--data-binary",
            "@-",
            &url,
        ],
        &big,
    );
    assert_eq!(
        expect,
        format!(
            "POST /up HTTP/1.1 te=Length({}) ua=e body={}\n",
            big.len(),
            big.len()
        )
    );
}

#[test]
fn curl_http10_closes_after_the_response() {
    let port = server();
    let url = format!("http://127.0.0.1:{port}/old");
    let out = curl(&["--http1.0", "-A", "o", "-i", &url], b"");
    assert!(out.starts_with("HTTP/1.1 200 OK\r\n"), "{out}");
    assert!(out.contains("connection: close\r\n"), "{out}");
    assert!(
        out.ends_with("GET /old HTTP/1.0 te=Empty ua=o body=0\n"),
        "{out}"
    );
}

#[test]
fn pipelined_requests_get_responses_in_order() {
    let port = server();
    let mut stream = TcpStream::connect(("127.0.0.1", port)).expect("connect");
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .expect("timeout");
    let requests = "GET /1 HTTP/1.1\r\nHost: h\r\n\r\n\
        POST /2 HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\n\r\nabc\
        POST /3 HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nhi\r\n0\r\n\r\n\
        GET /4 HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n";
    stream.write_all(requests.as_bytes()).expect("write");
    let mut rx = RecvTransport::new(config(), &stream).expect("ring");
    let mut parser = ResponseParser::default();
    let mut bodies = Vec::new();
    while bodies.len() < 4 {
        let (len, kind) = match parser.parse(rx.data(), Method::Get).expect("response") {
            Status::Complete(r, n) => (n, r.body()),
            Status::Partial { at_least } => {
                assert!(rx.fill(at_least).expect("read") > 0, "server closed early");
                continue;
            }
        };
        rx.consume(len);
        bodies.push(String::from_utf8(read_body(&mut rx, kind).expect("body").0).expect("utf-8"));
    }
    let targets: Vec<_> = bodies
        .iter()
        .map(|b| b.split(' ').nth(1).unwrap_or_default())
        .collect();
    assert_eq!(targets, ["/1", "/2", "/3", "/4"]);
    assert!(
        bodies[1].ends_with("body=3\n") && bodies[2].ends_with("body=2\n"),
        "{bodies:?}"
    );
    assert_eq!(
        rx.fill(1).expect("read"),
        0,
        "closed after Connection: close"
    );
}

#[test]
fn malformed_request_gets_its_status_and_a_close() {
    let port = server();
    for (request, status) in [
        ("GET / HTTP/1.1\r\nHost: h\r\nBad Name: x\r\n\r\n", "400"),
        ("GET / HTTP/2.0\r\nHost: h\r\n\r\n", "505"),
        (
            "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: gzip, chunked\r\n\r\n",
            "501",
        ),
    ] {
        let mut stream = TcpStream::connect(("127.0.0.1", port)).expect("connect");
        stream
            .set_read_timeout(Some(Duration::from_secs(10)))
            .expect("timeout");
        stream.write_all(request.as_bytes()).expect("write");
        let mut reply = String::new();
        std::io::Read::read_to_string(&mut stream, &mut reply).expect("read until close");
        assert!(
            reply.starts_with(&format!("HTTP/1.1 {status} ")),
            "{request:?} -> {reply:?}"
        );
    }
}

/// Python's `http.server` serving chunked responses with a trailer, over
/// HTTP/1.1 keep-alive, plus a plain HTTP/1.0 file response.
const PYTHON_SERVER: &str = r#"
import http.server, sys
class H(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def log_message(self, *a): pass
    def do_GET(self):
        path = self.path.split("?")[0]
        if path == "/chunked":
            self.send_response(200)
            self.send_header("Transfer-Encoding", "chunked")
            self.send_header("Trailer", "X-Sum")
            self.end_headers()
            for part in (b"hello ", b"chunked ", b"world"):
                self.wfile.write(b"%x\r\n%s\r\n" % (len(part), part))
            self.wfile.write(b"0\r\nX-Sum: 19\r\n\r\n")
        elif path == "/close":
            self.protocol_version = "HTTP/1.0"
            self.send_response(200)
            self.end_headers()
            self.wfile.write(b"until close")
            self.close_connection = True
        else:
            body = ("you asked for " + self.path).encode()
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
s = http.server.HTTPServer(("127.0.0.1", 0), H)
print(s.server_address[1], flush=True)
s.serve_forever()
"#;

struct Python(Child);

impl Drop for Python {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn python_server() -> (Python, u16) {
    let mut child = Command::new("python3")
        .args(["-c", PYTHON_SERVER])
        .stdout(Stdio::piped())
        .spawn()
        .expect("python3 is installed");
    let mut line = String::new();
    let stdout = child.stdout.take().expect("stdout");
    std::io::BufRead::read_line(&mut std::io::BufReader::new(stdout), &mut line).expect("port");
    let port = line.trim().parse().expect("port number");
    (Python(child), port)
}

#[derive(Debug)]
struct Reply {
    status: u16,
    body: Vec<u8>,
    trailers: Vec<(String, String)>,
    keep_alive: bool,
}

/// Sends one GET through the request encoder and reads the response.
fn get(
    duplex: &mut Duplex<&TcpStream, &TcpStream>,
    parser: &mut ResponseParser,
    path: &str,
) -> Result<Reply> {
    let buf = duplex.tx.reserve(512)?;
    let mut writer = RequestWriter::new(buf, "GET", path)?;
    writer.query("q", "a b&c")?;
    let mut head = writer.headers(Version::Http11)?;
    head.header("host", "127.0.0.1")?;
    let n = head.finish()?;
    duplex.tx.commit(n);
    duplex.tx.flush()?;
    let rx = &mut duplex.rx;
    let (len, status, kind, keep_alive) = loop {
        match parser.parse(rx.data(), Method::Get)? {
            Status::Complete(r, n) => break (n, r.status(), r.body(), r.keep_alive()),
            Status::Partial { at_least } => {
                if rx.fill(at_least)? == 0 {
                    return Err("closed before the response head".into());
                }
            }
        }
    };
    rx.consume(len);
    let (body, trailers) = read_body(rx, kind)?;
    Ok(Reply {
        status,
        body,
        trailers,
        keep_alive,
    })
}

#[test]
fn client_side_against_python_http_server() {
    let (_python, port) = python_server();
    let stream = TcpStream::connect(("127.0.0.1", port)).expect("connect");
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .expect("timeout");
    let mut duplex = Duplex::tcp(config(), &stream).expect("duplex");
    let mut parser = ResponseParser::default();

    let plain = get(&mut duplex, &mut parser, "/plain").expect("plain");
    assert_eq!((plain.status, plain.keep_alive), (200, true));
    assert_eq!(plain.body, b"you asked for /plain?q=a%20b%26c");

    let chunked = get(&mut duplex, &mut parser, "/chunked").expect("chunked");
    assert_eq!((chunked.status, chunked.keep_alive), (200, true));
    assert_eq!(chunked.body, b"hello chunked world");
    assert_eq!(chunked.trailers, [("X-Sum".to_string(), "19".to_string())]);

    let close = get(&mut duplex, &mut parser, "/close").expect("close-delimited");
    assert_eq!((close.status, close.keep_alive), (200, false));
    assert_eq!(close.body, b"until close");
}
