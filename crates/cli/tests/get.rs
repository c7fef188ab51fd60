//! `ringwire get` end to end: against `ringwire serve` (over HTTP and
//! HTTPS) and Python's `http.server`, over loopback.

use std::io::Write as _;
use std::net::TcpListener;
use std::process::{Command, Output, Stdio};

mod common;

use common::{python, serve, Running, BIN};

/// `ringwire serve` on the demo site, on a free port, with `args`.
fn ringwire_serve(args: &[&str]) -> Running {
    serve(&[&["--addr", "127.0.0.1:0"], args].concat())
}

/// Python's `http.server` answering `/echo` (method, then `x-test`, then
/// the body), `/headers` (`host`, `accept` and `content-type`),
/// `/header/NAME` (the value of field NAME), `/big` (2 MiB), `/big.gz`
/// (the same, gzip-encoded), `/redirect` (302 to `/echo`), `/to/HOST/PATH` (302 to `/PATH` on
/// HOST, at this server's port), `/login` (302 to `/header/Cookie`, setting two cookies), 404
/// otherwise.
const PYTHON_SERVER: &str = r#"
import gzip, http.server
class H(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def log_message(self, *args):
        pass
    def answer(self):
        if self.path == "/echo":
            length = int(self.headers.get("Content-Length", "0"))
            body = self.rfile.read(length)
            agent = self.headers.get("User-Agent", "")
            out = ("%s %s %s\n" % (self.command, self.headers.get("X-Test", "-"), agent)).encode() + body
            self.send_response(200)
            self.send_header("Content-Length", str(len(out)))
            self.end_headers()
            self.wfile.write(out)
        elif self.path == "/headers":
            self.rfile.read(int(self.headers.get("Content-Length", "0")))
            names = ("Host", "Accept", "Content-Type")
            out = "".join("%s: %s\n" % (n, self.headers.get(n, "-")) for n in names).encode()
            self.send_response(200)
            self.send_header("Content-Length", str(len(out)))
            self.end_headers()
            self.wfile.write(out)
        elif self.path.startswith("/header/"):
            self.rfile.read(int(self.headers.get("Content-Length", "0")))
            out = self.headers.get(self.path[len("/header/"):], "-").encode()
            self.send_response(200)
            self.send_header("Content-Length", str(len(out)))
            self.end_headers()
            self.wfile.write(out)
        elif self.path == "/big":
            out = bytes(range(256)) * 8192
            self.send_response(200)
            self.send_header("Content-Length", str(len(out)))
            self.end_headers()
            self.wfile.write(out)
        elif self.path == "/big.gz":
            out = gzip.compress(bytes(range(256)) * 8192)
            self.send_response(200)
            self.send_header("Content-Encoding", "gzip")
            self.send_header("Content-Length", str(len(out)))
            self.end_headers()
            self.wfile.write(out)
        elif self.path == "/redirect":
            self.send_response(302)
            self.send_header("Location", "/echo")
            self.send_header("Content-Length", "0")
            self.end_headers()
        elif self.path.startswith("/to/"):
            host, _, rest = self.path[len("/to/"):].partition("/")
            self.send_response(302)
            self.send_header("Location", "http://%s:%d/%s" % (host, self.server.server_address[1], rest))
            self.send_header("Content-Length", "0")
            self.end_headers()
        elif self.path == "/login":
            self.send_response(302)
            self.send_header("Location", "/header/Cookie")
            self.send_header("Set-Cookie", "sid=abc; Path=/; HttpOnly")
            self.send_header("Set-Cookie", "theme=dark; Max-Age=3600")
            self.send_header("Content-Length", "0")
            self.end_headers()
        else:
            self.send_error(404)
    do_GET = do_POST = do_PUT = answer
srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
print(srv.server_address[1], flush=True)
srv.serve_forever()
"#;

fn get(args: &[&str]) -> Output {
    Command::new(BIN)
        .arg("get")
        .args(args)
        .output()
        .expect("run ringwire get")
}

fn text(bytes: &[u8]) -> &str {
    std::str::from_utf8(bytes).expect("utf-8")
}

/// The `User-Agent` ringwire sends, for curl to send the same.
const USER_AGENT: &str = concat!("ringwire/", env!("CARGO_PKG_VERSION"));

/// `curl args`, which `ringwire get` is compared with.
fn curl(args: &[&str]) -> Output {
    Command::new("curl")
        .args(args)
        .output()
        .expect("curl is installed")
}

/// `ringwire get -s ARGS` succeeds and writes what `curl -s ARGS` writes (curl sending
/// ringwire's `user-agent`), heads (`-i`) less their `date` lines: the two answers may come
/// a second apart.
fn same_as_curl(args: &[&str]) {
    let ours = get(&[&["-s"], args].concat());
    let theirs = curl(&[&["-s", "-A", USER_AGENT], args].concat());
    assert!(ours.status.success(), "{args:?}: {}", text(&ours.stderr));
    assert_eq!(undated(&ours.stdout), undated(&theirs.stdout), "{args:?}");
}

/// Output with heads in it, less their `date` lines (which differ from one
/// answer to the next).
fn undated(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes)
        .split_inclusive('\n')
        .filter(|line| !line.to_ascii_lowercase().starts_with("date: "))
        .collect()
}

#[test]
fn fetches_from_ringwire_serve_with_the_exchange_on_stderr() {
    let server = ringwire_serve(&[]);
    let url = format!("http://{}/hello", server.addr);
    let out = get(&[&url]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "Hello from ringwire!\n");
    assert_eq!(text(&out.stderr), "");

    let out = get(&["-v", &url]);
    assert!(out.status.success());
    assert_eq!(text(&out.stdout), "Hello from ringwire!\n");
    let stderr = text(&out.stderr);
    let (ip, port) = server.addr.rsplit_once(':').expect("IP:PORT");
    let connected = format!("* Connected to {ip} port {port}\n");
    assert!(
        stderr.starts_with(&format!("{connected}> GET /hello HTTP/1.1\n> host: ")),
        "{stderr}"
    );
    assert!(stderr.contains("\n< HTTP/1.1 200 OK\n"), "{stderr}");
    assert!(stderr.contains("\n< content-length: 21\n"), "{stderr}");
}

/// `--unix-socket PATH`: `ringwire get` and `ringwire ws` reach `ringwire serve --unix`
/// whatever the URL's host, as curl does; a missing socket is named.
#[test]
fn reaches_a_server_on_a_unix_socket() {
    let dir = scratch("unix");
    let path = dir.join("site.sock");
    let sock = path.to_str().expect("utf-8");
    let _server = serve(&["--unix", sock]);
    same_as_curl(&["--unix-socket", sock, "http://localhost/hello"]);
    same_as_curl(&["--unix-socket", sock, "-i", "http://example.invalid/nope"]);
    let out = get(&["-v", "--unix-socket", sock, "http://localhost/hello"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stderr = text(&out.stderr);
    assert!(
        stderr.starts_with(&format!(
            "* Connected to unix:{sock}\n> GET /hello HTTP/1.1\n"
        )),
        "{stderr}"
    );
    // HTTP/2 by prior knowledge (nothing to negotiate over plain text).
    let out = get(&[
        "--http2-prior-knowledge",
        "--unix-socket",
        sock,
        "-w",
        " %{http_version}",
        "http://localhost/hello",
    ]);
    assert_eq!(
        text(&out.stdout),
        "Hello from ringwire!\n 2",
        "{}",
        text(&out.stderr)
    );

    let mut ws = Command::new(BIN)
        .args(["ws", "--unix-socket", sock, "ws://localhost/ws/echo"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run ringwire ws");
    ws.stdin
        .take()
        .expect("stdin")
        .write_all(b"over a Unix socket\n")
        .expect("write");
    let out = ws.wait_with_output().expect("ws");
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "over a Unix socket\n");

    let missing = dir.join("missing.sock");
    let missing = missing.to_str().expect("utf-8");
    let out = get(&["--unix-socket", missing, "http://localhost/"]);
    assert!(!out.status.success());
    assert!(
        text(&out.stderr).starts_with(&format!("ringwire: cannot connect to unix:{missing}: ")),
        "{}",
        text(&out.stderr)
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// `--abstract-unix-socket NAME`: `ringwire get` (as curl), `ringwire ws` and `ringwire
/// bench` reach `ringwire serve --unix @NAME`, a socket in Linux's abstract namespace (no
/// file), shown as `unix:@NAME`; a second server is refused the name, a mode refused, and a
/// name nobody serves is named in the error.
#[test]
fn reaches_a_server_on_an_abstract_socket() {
    let name = format!("ringwire-get-{}", std::process::id());
    let at = format!("@{name}");
    let server = serve(&["--unix", &at]);
    assert_eq!(server.addr, format!("unix:{at}"));
    same_as_curl(&["--abstract-unix-socket", &name, "http://localhost/hello"]);
    let out = get(&[
        "-v",
        "--abstract-unix-socket",
        &name,
        "http://localhost/hello",
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stderr = text(&out.stderr);
    assert!(
        stderr.starts_with(&format!(
            "* Connected to unix:{at}\n> GET /hello HTTP/1.1\n"
        )),
        "{stderr}"
    );
    let out = Command::new(BIN)
        .args([
            "ws",
            "--abstract-unix-socket",
            &name,
            "ws://localhost/ws/echo",
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .and_then(|mut ws| {
            ws.stdin.take().expect("stdin").write_all(b"abstract\n")?;
            ws.wait_with_output()
        })
        .expect("ringwire ws");
    assert_eq!(text(&out.stdout), "abstract\n", "{}", text(&out.stderr));
    let out = Command::new(BIN)
        .args([
            "bench",
            "--abstract-unix-socket",
            &name,
            "-c",
            "2",
            "-D",
            "0.3",
        ])
        .arg("http://localhost/hello")
        .output()
        .expect("ringwire bench");
    let report = text(&out.stdout);
    assert!(out.status.success(), "{report}{}", text(&out.stderr));
    assert!(report.contains("statuses   2xx"), "{report}");

    let second = Command::new(BIN)
        .args(["serve", "--unix", &at])
        .output()
        .expect("serve");
    assert_eq!(
        text(&second.stderr),
        format!("ringwire: cannot listen on unix:{at}: address already in use\n")
    );
    let moded = Command::new(BIN)
        .args(["serve", "--unix", &at, "--unix-mode", "600"])
        .output()
        .expect("serve");
    assert_eq!(
        text(&moded.stderr),
        format!("ringwire: unix:{at}: an abstract socket has no file to set a mode on\n")
    );
    drop(server);

    let out = get(&["--abstract-unix-socket", &name, "http://localhost/"]);
    assert!(
        text(&out.stderr).starts_with(&format!("ringwire: cannot connect to unix:{at}: ")),
        "{}",
        text(&out.stderr)
    );
}

/// A directory of its own for one test.
fn scratch(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("ringwire-get-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("mkdir");
    dir
}

/// The cookie lines of a cookie file, sorted, each expiry that is not 0 (a session's) as `T`
/// (two clients set the same cookie a second apart).
fn cookie_lines(path: &std::path::Path) -> Vec<String> {
    let text = std::fs::read_to_string(path).expect("a cookie file");
    let mut lines: Vec<String> = text
        .lines()
        .filter(|l| l.contains('\t'))
        .map(|l| {
            let mut fields: Vec<&str> = l.split('\t').collect();
            if fields.len() == 7 && fields[4] != "0" {
                fields[4] = "T";
            }
            fields.join("\t")
        })
        .collect();
    lines.sort();
    lines
}

#[test]
fn cookies_as_curl_keeps_and_sends_them() {
    let server = python(PYTHON_SERVER);
    let url = |path: &str| format!("http://{}{path}", server.addr);
    let dir = std::env::temp_dir().join(format!("ringwire-get-cookies-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (ours, theirs) = (dir.join("ours.txt"), dir.join("theirs.txt"));
    let (ours_s, theirs_s) = (ours.to_str().unwrap(), theirs.to_str().unwrap());

    // Set by the redirect, sent with the request it leads to, written to the jar.
    let login = url("/login");
    let out = get(&["-s", "-L", "-c", ours_s, &login]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "sid=abc; theme=dark");
    let curl_out = curl(&["-s", "-L", "-c", theirs_s, &login]);
    // The same cookies; in the order they were set (RFC 6265 section 5.4), where curl puts
    // the longer name first.
    let sorted = |cookies: &[u8]| {
        let mut all: Vec<String> = text(cookies).split("; ").map(str::to_owned).collect();
        all.sort();
        all
    };
    assert_eq!(sorted(&out.stdout), sorted(&curl_out.stdout));
    let lines = cookie_lines(&ours);
    assert_eq!(lines, cookie_lines(&theirs));
    assert_eq!(lines.len(), 2, "{lines:?}");

    // Read back with -b FILE; a literal with -b NAME=VALUE.
    let echo = url("/header/Cookie");
    for args in [&["-b", ours_s][..], &["-b", "a=1; b=2"]] {
        let ours = get(&[args, &[&echo]].concat());
        assert!(ours.status.success(), "{}", text(&ours.stderr));
        let theirs = curl(&[args, &[&echo]].concat()).stdout;
        assert_eq!(sorted(&ours.stdout), sorted(&theirs), "{args:?}");
    }
    assert_eq!(
        text(&get(&["-b", ours_s, &echo]).stdout),
        "sid=abc; theme=dark"
    );
    // Without either, none.
    assert_eq!(text(&get(&[&echo]).stdout), "-");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn no_cookie_for_a_public_suffix_as_curl_with_libpsl() {
    use ringwire_server::{Handler, Request, Response};
    struct Setting;
    impl Handler for Setting {
        async fn call(&self, _: &Request<'_>) -> Response {
            [
                "reg=1; Domain=co.uk",
                "tld=1; Domain=uk",
                "gh=1; Domain=github.io",
            ]
            .into_iter()
            .chain(["site=1; Domain=example.co.uk", "own=1"])
            .fold(Response::text("set\n"), |r, c| r.header("set-cookie", c))
        }
    }
    let port = serve_in_process(Setting).port();
    let dir = std::env::temp_dir().join(format!("ringwire-get-psl-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (ours, theirs) = (dir.join("ours.txt"), dir.join("theirs.txt"));
    for host in ["www.example.co.uk", "me.github.io"] {
        let url = format!("http://{host}:{port}/");
        let resolve = format!("{host}:{port}:127.0.0.1");
        for (command, jar) in [
            (&get as &dyn Fn(&[&str]) -> Output, &ours),
            (&curl, &theirs),
        ] {
            let jar = jar.to_str().unwrap();
            let out = command(&["-s", "--resolve", &resolve, "-b", jar, "-c", jar, &url]);
            assert!(out.status.success(), "{}", text(&out.stderr));
        }
    }
    let lines = cookie_lines(&ours);
    assert_eq!(lines, cookie_lines(&theirs));
    let names: Vec<&str> = lines.iter().filter_map(|l| l.split('\t').nth(5)).collect();
    assert_eq!(names, ["site", "own", "own"], "{lines:?}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn methods_headers_and_bodies() {
    let server = python(PYTHON_SERVER);
    let url = format!("http://{}/echo", server.addr);
    let agent = concat!("ringwire/", env!("CARGO_PKG_VERSION"));

    let out = get(&["-d", "inline body", "-H", "X-Test: one", &url]);
    assert_eq!(text(&out.stdout), format!("POST one {agent}\ninline body"));

    let dir = std::env::temp_dir().join(format!("ringwire-get-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("body.json");
    std::fs::write(&file, br#"{"from":"file"}"#).unwrap();
    let at_file = format!("@{}", file.display());
    let out = get(&["-X", "PUT", "-d", &at_file, "-H", "user-agent: mine", &url]);
    assert_eq!(text(&out.stdout), "PUT - mine\n{\"from\":\"file\"}");

    let missing = format!("@{}", dir.join("missing").display());
    let out = get(&["-d", &missing, &url]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).starts_with("ringwire: cannot read "),
        "{}",
        text(&out.stderr)
    );

    let output = dir.join("big.bin");
    let big = format!("http://{}/big", server.addr);
    let out = get(&["-o", output.to_str().unwrap(), &big]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(out.stdout, b"");
    // stderr is not a terminal here: no progress bar.
    assert_eq!(text(&out.stderr), "");
    let written = std::fs::read(&output).unwrap();
    assert_eq!(written.len(), 2 << 20);
    assert!(written.chunks(256).all(|c| c.iter().copied().eq(0..=255)));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn host_accept_and_content_type_as_curl_sends_them() {
    let server = python(PYTHON_SERVER);
    let url = format!("http://{}/headers", server.addr);
    let out = get(&[&url]);
    assert_eq!(
        text(&out.stdout),
        format!("Host: {}\nAccept: */*\nContent-Type: -\n", server.addr)
    );
    let out = get(&["-H", "Host: vhost.example", "-d", "a=1", &url]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(
        text(&out.stdout),
        "Host: vhost.example\nAccept: */*\nContent-Type: application/x-www-form-urlencoded\n"
    );
    let out = get(&[
        "-H",
        "accept: text/plain",
        "-H",
        "content-type: application/json",
        "-d",
        "{}",
        &url,
    ]);
    assert_eq!(
        text(&out.stdout),
        format!(
            "Host: {}\nAccept: text/plain\nContent-Type: application/json\n",
            server.addr
        )
    );
    // A field without a value is left out, as with curl...
    let out = get(&["-H", "Accept:", "-H", "content-type:", "-d", "a=1", &url]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(
        text(&out.stdout),
        format!("Host: {}\nAccept: -\nContent-Type: -\n", server.addr)
    );
    // ...but not host, without which the request is not HTTP/1.1.
    let out = get(&["-H", "Host:", &url]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(out.stdout, b"");
    assert_eq!(
        text(&out.stderr),
        "ringwire: cannot leave out the host header (-H 'Host:'): HTTP/1.1 requests must have one\n"
    );
}

#[test]
fn stdin_and_stdout_as_dash() {
    let server = python(PYTHON_SERVER);
    let url = format!("http://{}/echo", server.addr);
    let dir = std::env::temp_dir().join(format!("ringwire-get-dash-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut child = Command::new(BIN)
        .current_dir(&dir)
        .args([
            "get",
            "-d",
            "@-",
            "-o",
            "-",
            "-H",
            "user-agent: piped",
            &url,
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run ringwire get");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b"from stdin")
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "POST - piped\nfrom stdin");
    assert!(!dir.join("-").exists(), "-o - wrote a file named -");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn redirects_and_http_errors() {
    let server = python(PYTHON_SERVER);
    let redirect = format!("http://{}/redirect", server.addr);
    let out = get(&[&redirect]);
    assert!(out.status.success());
    assert_eq!(out.stdout, b"");

    let out = get(&["-L", "-H", "x-test: kept", &redirect]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).starts_with("GET kept "),
        "{}",
        text(&out.stdout)
    );
    // -v shows every hop: the redirect's exchange, then the one it led to.
    let out = get(&["-v", "-L", &redirect]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let hops: Vec<&str> = text(&out.stderr)
        .lines()
        .filter(|l| l.starts_with("> GET ") || l.starts_with("< HTTP/"))
        .collect();
    assert_eq!(
        hops,
        [
            "> GET /redirect HTTP/1.1",
            "< HTTP/1.1 302 Found",
            "> GET /echo HTTP/1.1",
            "< HTTP/1.1 200 OK"
        ],
        "{}",
        text(&out.stderr)
    );

    // -L with the limit reached is an error, as curl's exit 47.
    let out = get(&["-L", "--max-redirs", "0", &redirect]);
    assert_eq!(out.status.code(), Some(47));
    assert_eq!(out.stdout, b"");
    assert_eq!(
        text(&out.stderr),
        "ringwire: maximum (0) redirects followed\n"
    );

    let missing = format!("http://{}/missing", server.addr);
    let out = get(&[&missing]);
    assert_eq!(out.status.code(), Some(0));
    assert!(text(&out.stdout).contains("404"));

    let out = get(&["--fail", &missing]);
    assert_eq!(out.status.code(), Some(22));
    assert_eq!(out.stdout, b"");
    assert_eq!(
        text(&out.stderr),
        "ringwire: the server answered 404 Not Found\n"
    );
}

#[test]
fn failures_are_one_line_and_non_zero() {
    let closed = {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap()
    };
    // Accepted by the kernel, never answered.
    let silent = TcpListener::bind("127.0.0.1:0").unwrap();
    let silent_url = format!("http://{}/", silent.local_addr().unwrap());
    let closed_url = format!("http://{closed}/");
    let cases: [(&[&str], String); 4] = [
        (
            &[&closed_url],
            format!("ringwire: cannot connect to {closed}: Connection refused\n"),
        ),
        (
            &["127.0.0.1/"],
            "ringwire: invalid URL \"127.0.0.1/\": no http:// or https:// in front\n".into(),
        ),
        (
            &["-H", "x-bad: a\u{1}b", &closed_url],
            "ringwire: invalid request: field value with a control character or surrounding whitespace\n".into(),
        ),
        (
            &["--max-time", "0.3", &silent_url],
            "ringwire: request timed out\n".into(),
        ),
    ];
    for (args, expected) in cases {
        let out = get(args);
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        assert_eq!(text(&out.stderr), expected, "{args:?}");
        assert_eq!(out.stdout, b"", "{args:?}");
    }
}

#[test]
fn https_to_a_plain_http_port_says_so() {
    let server = python(PYTHON_SERVER);
    let url = format!("https://{}/echo", server.addr);
    for library in ["openssl", "rustls"] {
        let out = get(&["-k", "--tls-library", library, &url]);
        assert_eq!(out.status.code(), Some(1), "{library}");
        assert_eq!(
            text(&out.stderr),
            "ringwire: the peer does not speak TLS (is it plain http?)\n",
            "{library}"
        );
    }
}

/// What `command` writes on a pseudo-terminal (stderr a tty), run by `script`; it must
/// succeed.
fn on_terminal(command: &str) -> String {
    let out = Command::new("script")
        .args(["--quiet", "--return", "--command", command, "/dev/null"])
        .stdin(Stdio::null())
        .output()
        .expect("script (util-linux) is installed");
    assert!(out.status.success(), "{}", text(&out.stderr));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn progress_bar_only_on_a_terminal() {
    let server = python(PYTHON_SERVER);
    let dir = std::env::temp_dir().join(format!("ringwire-get-tty-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let output = dir.join("big.bin");
    let command = format!(
        "{BIN} get -o {} http://{}/big",
        output.display(),
        server.addr
    );
    let terminal = on_terminal(&command);
    assert!(terminal.contains("2.0 / 2.0 MiB"), "{terminal:?}");
    assert!(
        terminal.contains("[##############################]"),
        "{terminal:?}"
    );
    assert_eq!(std::fs::metadata(&output).unwrap().len(), 2 << 20);

    // Decoded, 2 MiB of unknown length come of a few KiB.
    let terminal = on_terminal(&format!("{command}.gz --compressed"));
    assert!(terminal.contains("\r2.0 MiB"), "{terminal:?}");
    assert_eq!(std::fs::metadata(&output).unwrap().len(), 2 << 20);

    // An upload draws its own bar as it goes (the answer is a few bytes: none for it).
    let upload = dir.join("up.bin");
    std::fs::write(&upload, vec![b'u'; 3 << 20]).unwrap();
    let sending = format!(
        "{BIN} get -T {} http://{}/headers",
        upload.display(),
        server.addr
    );
    let terminal = on_terminal(&sending);
    assert!(terminal.contains("#]   3.0 / 3.0 MiB"), "{terminal:?}");
    assert!(terminal.contains("Host: "), "{terminal:?}");

    // -s: none, even on a terminal.
    let terminal = on_terminal(&format!("{command} -s"));
    assert!(!terminal.contains("MiB"), "{terminal:?}");
    assert_eq!(std::fs::metadata(&output).unwrap().len(), 2 << 20);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn fetches_over_https_trusting_or_skipping_the_certificate() {
    let server = ringwire_serve(&["--self-signed"]);
    let port = server.addr.rsplit_once(':').expect("port").1;
    let url = format!("https://localhost:{port}/hello");
    let untrusted = get(&[&url]);
    assert_eq!(untrusted.status.code(), Some(1));
    assert_eq!(
        text(&untrusted.stderr),
        "ringwire: the peer's certificate is not signed by a trusted authority\n"
    );
    let skipped = get(&["-k", &url]);
    assert!(skipped.status.success(), "{}", text(&skipped.stderr));
    assert_eq!(text(&skipped.stdout), "Hello from ringwire!\n");
    let cert = std::env::temp_dir().join(format!("ringwire-self-signed-{}.pem", server.addr));
    let trusted = get(&["--cacert", cert.to_str().expect("utf-8"), &url]);
    assert!(trusted.status.success(), "{}", text(&trusted.stderr));
    assert_eq!(text(&trusted.stdout), "Hello from ringwire!\n");
}

#[test]
fn speaks_http2_where_the_server_does_as_curl() {
    let server = ringwire_serve(&["--self-signed"]);
    let port = server.addr.rsplit_once(':').expect("port").1;
    let url = format!("https://localhost:{port}/hello");
    // Offered by ALPN, and taken.
    let h2 = get(&["-k", "-i", "-v", &url]);
    assert!(h2.status.success(), "{}", text(&h2.stderr));
    let out = text(&h2.stdout);
    assert!(out.starts_with("HTTP/2 200\r\n"), "{out}");
    assert!(out.ends_with("\r\n\r\nHello from ringwire!\n"), "{out}");
    let err = text(&h2.stderr);
    assert!(
        err.contains("* using HTTP/2\n> GET /hello HTTP/2\n"),
        "{err}"
    );
    assert!(err.contains("< HTTP/2 200\n"), "{err}");

    let h1 = get(&["-k", "-i", "--http1.1", &url]);
    assert!(text(&h1.stdout).starts_with("HTTP/1.1 200 OK\r\n"));
    // curl's --http2 is taken: what is offered anyway.
    let asked = get(&["-k", "-i", "--http2", &url]);
    assert!(
        text(&asked.stdout).starts_with("HTTP/2 200\r\n"),
        "{}",
        text(&asked.stderr)
    );

    // Cleartext: HTTP/1.1 unless HTTP/2 is known to be there.
    let plain = ringwire_serve(&[]);
    let url = format!("http://{}/hello", plain.addr);
    assert!(text(&get(&["-i", &url]).stdout).starts_with("HTTP/1.1 200 OK\r\n"));
    let asked = get(&["-i", "--http2", &url]);
    assert!(text(&asked.stdout).starts_with("HTTP/1.1 200 OK\r\n"));
    let h2c = get(&["-i", "--http2-prior-knowledge", &url]);
    assert!(text(&h2c.stdout).starts_with("HTTP/2 200\r\n"));
    assert!(text(&h2c.stdout).ends_with("Hello from ringwire!\n"));
}

/// Serves `handler` with a ringwire server in this process, on a free loopback port.
fn serve_in_process(handler: impl ringwire_server::Handler) -> std::net::SocketAddr {
    use ringwire_server::{Server, ServerConfig};
    let server = Server::bind(ServerConfig::new("127.0.0.1:0".parse().unwrap())).unwrap();
    let addr = server.local_addr();
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        runtime.block_on(server.serve(handler)).unwrap();
    });
    addr
}

/// A ringwire server (in this process) answering `N bytes`, the length of
/// the request body it read.
fn counting_server() -> std::net::SocketAddr {
    use ringwire_server::{Handler, Request, Response};
    struct Count;
    impl Handler for Count {
        async fn call(&self, request: &Request<'_>) -> Response {
            Response::new(200).body(format!("{} bytes", request.body().len()))
        }
    }
    serve_in_process(Count)
}

/// A ringwire server (in this process) answering a body in two chunks and a checksum in
/// its trailer fields, over HTTP/1.1 and HTTP/2.
fn trailing_server() -> std::net::SocketAddr {
    use ringwire_server::{Body, Handler, Request, Response};
    struct Trailing;
    impl Handler for Trailing {
        async fn call(&self, _: &Request<'_>) -> Response {
            let (sender, body) = Body::channel(2);
            tokio::spawn(async move {
                for part in ["hello ", "world\n"] {
                    let _ = sender.send(part).await;
                }
                let fields = [("x-checksum", &b"5eb63bbb"[..])];
                let fields = ringwire_http1::encode::FieldBlock::new(fields).unwrap();
                let _ = sender.trailers(fields).await;
            });
            Response::new(200).body(body)
        }
    }
    serve_in_process(Trailing)
}

#[test]
fn include_writes_the_trailers_after_the_body_as_curl() {
    let url = format!("http://{}/", trailing_server());
    for protocol in ["--http1.1", "--http2-prior-knowledge"] {
        let ours = get(&["-i", protocol, &url]);
        assert!(ours.status.success(), "{}", text(&ours.stderr));
        let out = undated(&ours.stdout);
        assert!(
            out.ends_with("\r\n\r\nhello world\nx-checksum: 5eb63bbb\r\n"),
            "{out}"
        );
        // (After the status line: curl 7.88 writes `HTTP/2 200 `, a space at the end.)
        let theirs = undated(&curl(&["-s", "-i", protocol, &url]).stdout);
        let fields = |head: &str| head.split_once("\r\n").map(|(_, rest)| rest.to_owned());
        assert_eq!(fields(&out), fields(&theirs));
        // Without -i, the body alone.
        assert_eq!(text(&get(&[protocol, &url]).stdout), "hello world\n");
    }
}

#[test]
fn an_upload_over_a_mebibyte_waits_for_100_continue() {
    let url = format!("http://{}/upload", counting_server());
    let dir = std::env::temp_dir().join(format!("ringwire-get-expect-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let upload = |len: usize| {
        let file = dir.join(format!("{len}.bin"));
        std::fs::write(&file, vec![b'z'; len]).unwrap();
        format!("@{}", file.display())
    };
    let (large, small) = (upload(2 << 20), upload(1 << 20));

    let out = get(&["-v", "-d", &large, &url]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "2097152 bytes");
    let stderr = text(&out.stderr);
    let asked = stderr.find("\n> expect: 100-continue\n");
    let go = stderr.find("\n< HTTP/1.1 100 Continue\n<\n");
    let answer = stderr.find("\n< HTTP/1.1 200 OK\n");
    assert!(asked.is_some() && asked < go && go < answer, "{stderr}");

    // Left out with -H 'Expect:', and not asked for 1 MiB.
    for args in [&["-H", "Expect:", "-d", &large][..], &["-d", &small]] {
        let out = get(&[&["-v"], args, &[&url]].concat());
        assert!(out.status.success(), "{}", text(&out.stderr));
        assert!(
            text(&out.stdout).ends_with(" bytes"),
            "{}",
            text(&out.stdout)
        );
        let stderr = text(&out.stderr);
        assert!(!stderr.contains("expect:"), "{stderr}");
        assert!(!stderr.contains("100 Continue"), "{stderr}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn compressed_bodies_are_written_decoded_as_curl_writes_them() {
    let server = ringwire_serve(&[]);
    // The demo's index page: text the server compresses when asked.
    let url = format!("http://{}/", server.addr);
    let plain = get(&[&url]);
    assert!(plain.status.success(), "{}", text(&plain.stderr));
    assert!(plain.stdout.len() > 1000);

    let out = get(&["--compressed", "-v", &url]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(out.stdout == plain.stdout, "{}", text(&out.stdout));
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains("\n> accept-encoding: gzip, deflate, br, zstd\n"),
        "{stderr}"
    );
    assert!(stderr.contains("\n< content-encoding: br\n"), "{stderr}");
    let curl_out = curl(&["-s", "--compressed", &url]);
    assert!(curl_out.stdout == out.stdout);
    // The head as curl shows it: the server's, content-encoding included.
    let out = get(&["-i", "--compressed", &url]);
    let curl_out = curl(&["-si", "--compressed", &url]);
    assert_eq!(undated(&out.stdout), undated(&curl_out.stdout));
    assert!(undated(&out.stdout).contains("\r\ncontent-encoding: br\r\n"));

    // An accept-encoding of one's own is sent instead, and decoded all the same.
    let out = get(&["--compressed", "-H", "Accept-Encoding: gzip", "-i", &url]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let got = undated(&out.stdout);
    assert!(got.contains("\r\ncontent-encoding: gzip\r\n"), "{got}");
    assert!(out.stdout.ends_with(&plain.stdout));
    // Without --compressed, the server's bytes as they came.
    let out = get(&["-H", "Accept-Encoding: gzip", &url]);
    assert!(out.stdout.starts_with(b"\x1f\x8b"));
    assert!(out.stdout.len() < plain.stdout.len());
}

#[test]
fn a_zstd_form_made_by_the_zstd_command_is_written_decoded() {
    let dir = std::env::temp_dir().join(format!("ringwire-get-zstd-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let log: String = (0..20_000).map(|i| format!("{i} GET /x 200\n")).collect();
    let path = dir.join("access.log");
    std::fs::write(&path, &log).unwrap();
    // Level 19: an 8 MiB window, the most RFC 9659 allows.
    let made = Command::new("zstd")
        .args(["-q", "-k", "-19"])
        .arg(&path)
        .status();
    assert!(made.expect("zstd is installed").success());
    let server = ringwire_serve(&[dir.to_str().unwrap()]);
    let url = format!("http://{}/access.log", server.addr);

    let out = get(&["--compressed", "-v", &url]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stderr = text(&out.stderr);
    assert!(stderr.contains("\n< content-encoding: zstd\n"), "{stderr}");
    assert!(out.stdout == log.as_bytes(), "{} bytes", out.stdout.len());
    let curl_out = curl(&["-s", "--compressed", &url]);
    assert!(curl_out.stdout == out.stdout);
    // Without --compressed: the file the zstd command made.
    let out = get(&["-H", "Accept-Encoding: zstd", &url]);
    assert_eq!(
        out.stdout,
        std::fs::read(dir.join("access.log.zst")).unwrap()
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn include_writes_every_head_before_the_body_as_curl() {
    let server = ringwire_serve(&[]);
    let hello = format!("http://{}/hello", server.addr);
    let out = get(&["-i", &hello]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let got = undated(&out.stdout);
    assert!(got.starts_with("HTTP/1.1 200 OK\r\n"), "{got:?}");
    assert!(
        got.ends_with("\r\ncontent-length: 21\r\n\r\nHello from ringwire!\n"),
        "{got:?}"
    );
    assert_eq!(got, undated(&curl(&["-si", &hello]).stdout));

    // Every hop of a redirect chain, as curl -iL.
    let python = python(PYTHON_SERVER);
    let redirect = format!("http://{}/redirect", python.addr);
    let out = get(&["-i", "-L", &redirect]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let got = undated(&out.stdout);
    assert!(got.starts_with("HTTP/1.1 302 Found\r\n"), "{got:?}");
    assert!(got.contains("\r\n\r\nHTTP/1.1 200 OK\r\n"), "{got:?}");
    let curl_out = curl(&["-siL", "-A", USER_AGENT, &redirect]);
    assert_eq!(got, undated(&curl_out.stdout));

    // With --fail, the head goes out and the body does not, as curl's.
    let missing = format!("http://{}/missing", server.addr);
    let out = get(&["-i", "--fail", &missing]);
    assert_eq!(out.status.code(), Some(22));
    let got = undated(&out.stdout);
    assert!(got.starts_with("HTTP/1.1 404 Not Found\r\n"), "{got:?}");
    assert!(got.ends_with("\r\n\r\n"), "{got:?}");
    assert_eq!(got, undated(&curl(&["-si", "--fail", &missing]).stdout));
}

#[test]
fn include_shows_the_100_continue_too() {
    let url = format!("http://{}/upload", counting_server());
    let dir = std::env::temp_dir().join(format!("ringwire-get-include-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("large.bin");
    std::fs::write(&file, vec![b'z'; 2 << 20]).unwrap();
    let data = format!("@{}", file.display());
    let out = get(&["-i", "-d", &data, &url]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let got = undated(&out.stdout);
    assert!(
        got.starts_with("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\n"),
        "{got:?}"
    );
    assert!(got.ends_with("\r\n\r\n2097152 bytes"), "{got:?}");
    assert_eq!(
        got,
        undated(&curl(&["-si", "--data-binary", &data, &url]).stdout)
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn include_and_verbose_show_early_hints_as_curl() {
    use ringwire_http1::encode::FieldBlock;
    use ringwire_server::{Handler, Request, Response};
    struct Hinting(FieldBlock);
    impl Handler for Hinting {
        async fn call(&self, request: &Request<'_>) -> Response {
            request.early_hints(&self.0).await.expect("hints sent");
            Response::text("page\n")
        }
    }
    let link = "</style.css>; rel=preload; as=style";
    let hints = FieldBlock::new([("link", link.as_bytes())]).unwrap();
    let url = format!("http://{}/", serve_in_process(Hinting(hints)));
    for (flags, first) in [
        (&[][..], "HTTP/1.1 103 Early Hints\r\n"),
        (&["--http2-prior-knowledge"][..], "HTTP/2 103\r\n"),
    ] {
        let out = get(&[flags, &["-i", "-v", &url]].concat());
        assert!(out.status.success(), "{}", text(&out.stderr));
        let got = undated(&out.stdout);
        assert!(got.starts_with(first), "{got:?}");
        assert!(got.contains(&format!("link: {link}\r\n\r\n")), "{got:?}");
        assert!(got.ends_with("\r\n\r\npage\n"), "{got:?}");
        // (curl 7.88 ends an HTTP/2 status line with a space.)
        let curl_out = undated(&curl(&[flags, &["-si", &url]].concat()).stdout);
        assert_eq!(got, curl_out.replace(" \r\n", "\r\n"));
        assert!(text(&out.stderr).contains(&format!("< link: {link}\n")));
    }
}

#[test]
fn head_sends_head_and_writes_the_head_as_curl() {
    let server = ringwire_serve(&[]);
    let url = format!("http://{}/", server.addr);
    let out = get(&["-I", "-v", &url]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stderr = text(&out.stderr);
    assert!(stderr.contains("\n> HEAD / HTTP/1.1\n"), "{stderr}");
    let got = undated(&out.stdout);
    assert!(got.starts_with("HTTP/1.1 200 OK\r\n"), "{got:?}");
    assert!(got.ends_with("\r\n\r\n"), "{got:?}");
    assert_eq!(got, undated(&curl(&["-sI", &url]).stdout));

    // HEAD has no body to send: -I with -d or -X is refused, as by curl.
    for other in [&["-d", "x"][..], &["-X", "GET"]] {
        let out = get(&[&["-I"], other, &[&url]].concat());
        assert_eq!(out.status.code(), Some(2), "{other:?}");
        assert!(
            text(&out.stderr).contains("cannot be used with"),
            "{}",
            text(&out.stderr)
        );
    }
}

#[test]
fn user_sends_basic_authorization() {
    let server = python(PYTHON_SERVER);
    let url = format!("http://{}/header/Authorization", server.addr);
    let out = get(&["-u", "alice:s3cr:et", &url]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "Basic YWxpY2U6czNjcjpldA==");
    assert_eq!(
        out.stdout,
        curl(&["-s", "-u", "alice:s3cr:et", &url]).stdout
    );
    // A field of one's own goes instead.
    let out = get(&["-u", "alice:x", "-H", "Authorization: Bearer t0k", &url]);
    assert_eq!(text(&out.stdout), "Bearer t0k");
    // No prompt for a password: refused.
    let out = get(&["-u", "alice", &url]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(out.stdout, b"");
    assert_eq!(
        text(&out.stderr),
        "ringwire: -u wants USER:PASSWORD (there is no prompt for the password)\n"
    );
}

/// A server that knows nothing of `100 Continue`: for each connection it
/// reads a head, then the `content-length` body, and answers `waited N
/// ms`, how long after the head the body started to come.
fn never_continues() -> std::net::SocketAddr {
    use std::io::Read as _;
    use std::time::{Duration, Instant};
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { return };
            // A watchdog: no read waits longer.
            stream
                .set_read_timeout(Some(Duration::from_secs(10)))
                .unwrap();
            let mut head = Vec::new();
            let mut byte = [0];
            while !head.ends_with(b"\r\n\r\n") && stream.read(&mut byte).unwrap_or(0) == 1 {
                head.push(byte[0]);
            }
            let started = Instant::now();
            let len: usize = String::from_utf8_lossy(&head)
                .lines()
                .find_map(|l| {
                    l.to_ascii_lowercase()
                        .strip_prefix("content-length: ")?
                        .parse()
                        .ok()
                })
                .unwrap_or(0);
            let mut body = vec![0; len];
            if stream.read_exact(&mut body[..1]).is_err() {
                continue;
            }
            let waited = started.elapsed().as_millis();
            let _ = stream.read_exact(&mut body[1..]);
            let answer = format!("waited {waited} ms");
            let _ = stream.write_all(
                format!(
                    "HTTP/1.1 200 OK\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{answer}",
                    answer.len()
                )
                .as_bytes(),
            );
        }
    });
    addr
}

#[test]
fn expect100_timeout_bounds_the_wait_for_100_continue() {
    let url = format!("http://{}/upload", never_continues());
    let dir = std::env::temp_dir().join(format!("ringwire-get-expect100-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("large.bin");
    std::fs::write(&file, vec![b'z'; 2 << 20]).unwrap();
    let data = format!("@{}", file.display());
    let waited = |args: &[&str]| -> u128 {
        let out = get(&[&["--max-time", "10", "-d", &data], args, &[&url]].concat());
        assert!(out.status.success(), "{}", text(&out.stderr));
        let ms = text(&out.stdout)
            .strip_prefix("waited ")
            .and_then(|t| t.strip_suffix(" ms"));
        ms.and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("{}", text(&out.stdout)))
    };
    // One second by default, as curl's.
    let default = waited(&[]);
    assert!(default >= 900, "{default} ms");
    let short = waited(&["--expect100-timeout", "0.1"]);
    assert!(short < 800, "{short} ms");
    let out = get(&["--expect100-timeout", "0", &url]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        text(&out.stderr),
        "ringwire: --expect100-timeout wants a positive number of seconds\n"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `ringwire get` with proxy settings, a proxy that is not there standing in for one (the
/// client's own tests go through a real one): `-x` and the environment's `http_proxy` and
/// `https_proxy` send requests to it, and the error names it; `--noproxy` and `no_proxy`
/// send them directly; a proxy URL the client cannot use is one line.
#[test]
fn proxy_settings_as_curl_reads_them() {
    let (plain, tls) = (ringwire_serve(&[]), ringwire_serve(&["--self-signed"]));
    let port = |server: &Running| server.addr.rsplit_once(':').expect("port").1.to_owned();
    let (http, https) = (
        format!("http://127.0.0.1:{}/hello", port(&plain)),
        format!("https://localhost:{}/hello", port(&tls)),
    );
    let nowhere = "127.0.0.1:1";
    let run = |args: &[&str], env: &[(&str, &str)]| {
        let mut command = Command::new(BIN);
        command.arg("get").args(args);
        for name in [
            "http_proxy",
            "https_proxy",
            "HTTPS_PROXY",
            "all_proxy",
            "ALL_PROXY",
        ] {
            command.env_remove(name);
        }
        command.env_remove("no_proxy").env_remove("NO_PROXY");
        command.envs(env.iter().copied());
        command.output().expect("run ringwire get")
    };
    let through_nowhere = |out: Output| {
        out.status.code() == Some(1)
            && text(&out.stderr).starts_with(&format!("ringwire: cannot connect to {nowhere}:"))
    };
    assert!(through_nowhere(run(&["-x", nowhere, &http], &[])));
    assert!(through_nowhere(run(&["-k", "-x", nowhere, &https], &[])));
    for socks in ["socks5h", "socks4a", "socks4"] {
        let socks = format!("{socks}://{nowhere}");
        assert!(through_nowhere(run(&["-x", &socks, &http], &[])));
    }
    for flag in ["--socks5", "--socks5-hostname", "--socks4", "--socks4a"] {
        assert!(through_nowhere(run(&[flag, nowhere, &http], &[])), "{flag}");
    }
    let both = run(&["-x", nowhere, "--socks5", nowhere, &http], &[]);
    assert!(
        text(&both.stderr).contains("cannot be used with"),
        "{both:?}"
    );
    let direct = run(&["-x", nowhere, "--noproxy", "127.0.0.1", &http], &[]);
    assert_eq!(text(&direct.stdout), "Hello from ringwire!\n");
    let proxy = format!("http://{nowhere}");
    assert!(through_nowhere(run(&[&http], &[("http_proxy", &proxy)])));
    assert!(through_nowhere(run(
        &["-k", &https],
        &[("https_proxy", &proxy)]
    )));
    assert!(through_nowhere(run(
        &["-k", &https],
        &[("ALL_PROXY", &proxy)]
    )));
    let bypassed = [("https_proxy", proxy.as_str()), ("no_proxy", "localhost")];
    assert_eq!(
        text(&run(&["-k", &https], &bypassed).stdout),
        "Hello from ringwire!\n"
    );
    // Only http_proxy in lower case, as curl (a CGI server sets HTTP_PROXY from a header).
    let upper = run(&[&http], &[("HTTP_PROXY", &proxy)]);
    assert_eq!(text(&upper.stdout), "Hello from ringwire!\n");

    let refused = run(&["-x", "https://proxy.example", &http], &[]);
    assert_eq!(refused.status.code(), Some(1));
    assert_eq!(
        text(&refused.stderr),
        "ringwire: --proxy \"https://proxy.example\": unsupported scheme \"https\"\n"
    );
    let refused = run(&[&http], &[("http_proxy", "ftp://proxy")]);
    assert_eq!(
        text(&refused.stderr),
        "ringwire: $http_proxy: unsupported scheme \"ftp\"\n"
    );
}

/// `-F` as curl's: text, text read from a file, and files (with a type and a file name of
/// their own), read back by Python's email package (`scripts/form_echo.py`) the same from
/// `ringwire get` as from curl; a missing file is one line.
#[test]
fn forms_as_curl_sends_them() {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/../../scripts/form_echo.py");
    let echo = common::python(&std::fs::read_to_string(script).expect("the script"));
    let url = format!("http://{}/upload", echo.addr);
    let dir = std::env::temp_dir().join(format!("ringwire-form-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (note, blob) = (dir.join("note.txt"), dir.join("blob.bin"));
    std::fs::write(&note, "from a file\n").unwrap();
    let bytes: Vec<u8> = (0..=255u8).cycle().take(100_000).collect();
    std::fs::write(&blob, &bytes).unwrap();
    let fields = [
        "title=ring wire".to_owned(),
        format!("note=<{}", note.display()),
        format!("doc=@{};type=text/plain", note.display()),
        format!("blob=@{};filename=renamed.bin", blob.display()),
        // A field, not a file, though its bytes are not text.
        format!("raw=<{}", blob.display()),
    ];
    let args: Vec<&str> = fields.iter().flat_map(|f| ["-F", f.as_str()]).collect();
    let ours = get(&[&args[..], &[url.as_str()]].concat());
    assert!(ours.status.success(), "{}", text(&ours.stderr));
    let theirs = curl(&[&["-s"][..], &args, &[url.as_str()]].concat());
    assert_eq!(text(&ours.stdout), text(&theirs.stdout));
    assert!(
        text(&ours.stdout).starts_with("title|-|-|"),
        "{}",
        text(&ours.stdout)
    );
    assert!(text(&ours.stdout).contains("|renamed.bin|application/octet-stream|"));
    // `ringwire serve`'s demo `/upload` reads the same fields as Python's email package:
    // names, file names, types and sizes.
    let demo = serve(&["--addr", "127.0.0.1:0"]);
    let upload = format!("http://{}/upload", demo.addr);
    let read = get(&[&args[..], &[upload.as_str()]].concat());
    assert!(read.status.success(), "{}", text(&read.stderr));
    let read: Vec<String> = text(&read.stdout)
        .lines()
        .map(|line| line.split('\t').take(4).collect::<Vec<_>>().join("|"))
        .collect();
    let python: Vec<String> = text(&ours.stdout)
        .lines()
        .map(|line| {
            let (head, hex) = line.rsplit_once('|').unwrap();
            format!("{head}|{}", hex.len() / 2)
        })
        .collect();
    assert_eq!(read, python);

    // A file far larger than the send ring goes as it is read, as curl sends it.
    let big = dir.join("big.bin");
    let data: Vec<u8> = (0..5 << 20).map(|i: usize| (i * 7 % 253) as u8).collect();
    std::fs::write(&big, &data).unwrap();
    let crc = format!("http://{}/crc", echo.addr);
    let field = format!("video=@{};type=video/mp4", big.display());
    let ours = get(&["-F", "t=x", "-F", &field, &crc]);
    assert!(ours.status.success(), "{}", text(&ours.stderr));
    let theirs = curl(&["-s", "-F", "t=x", "-F", &field, &crc]);
    assert_eq!(text(&ours.stdout), text(&theirs.stdout));
    assert!(
        text(&ours.stdout).contains("\nvideo|big.bin|video/mp4|5242880|"),
        "{}",
        text(&ours.stdout)
    );

    let missing = get(&["-F", "f=@/nonexistent/file", &url]);
    assert_eq!(missing.status.code(), Some(1));
    assert!(
        text(&missing.stderr).starts_with("ringwire: cannot read /nonexistent/file:"),
        "{}",
        text(&missing.stderr)
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `-w` as curl's `--write-out`: the same line from both for a redirect followed, a plain
/// answer and a 404 (the times aside, which differ: they come in order).
#[test]
fn write_out_as_curl() {
    let server = python(PYTHON_SERVER);
    let format = "%{http_code} %{response_code} %{http_version} %{size_download} \
                  [%{content_type}] %{num_redirects} %{url_effective} %{remote_ip} \
                  %{remote_port}\\n";
    for path in ["/redirect", "/headers", "/nowhere"] {
        let url = format!("http://{}{path}", server.addr);
        // One agent for both: /echo, where /redirect leads, answers with it.
        let args = [
            "-s",
            "-L",
            "-H",
            "User-Agent: test",
            "-o",
            "/dev/null",
            "-w",
            format,
            &url,
        ];
        let ours = get(&args[1..]);
        let theirs = curl(&args);
        assert_eq!(text(&ours.stdout), text(&theirs.stdout), "{path}");
    }
    let times = "%{time_connect} %{time_appconnect} %{time_pretransfer} \
                 %{time_starttransfer} %{time_total}";
    let timed = |url: &str| seconds(&get(&["-k", "-o", "/dev/null", "-w", times, url]));
    // Over HTTP, no handshake: its time stays zero, as curl's.
    let [connect, appconnect, pretransfer, starttransfer, total] =
        timed(&format!("http://{}/headers", server.addr))[..]
    else {
        panic!("five times")
    };
    assert!(appconnect == 0.0, "{appconnect}");
    assert!(
        0.0 < connect && connect <= pretransfer,
        "{connect} {pretransfer}"
    );
    assert!(pretransfer < starttransfer && starttransfer <= total && total < 10.0);
    let tls = ringwire_serve(&["--self-signed"]);
    let [connect, appconnect, pretransfer, starttransfer, total] =
        timed(&format!("https://{}/hello", tls.addr))[..]
    else {
        panic!("five times")
    };
    assert!(
        0.0 < connect && connect < appconnect,
        "{connect} {appconnect}"
    );
    assert!(appconnect <= pretransfer && pretransfer < starttransfer);
    assert!(starttransfer <= total && total < 10.0);
    // The name looked up before connecting; a redirect followed before the last request.
    let names = "%{time_namelookup} %{time_connect} %{time_redirect} %{time_pretransfer} \
                 %{time_total}";
    let timed = |url: &str| seconds(&get(&["-L", "-o", "/dev/null", "-w", names, url]));
    let port = server.addr.rsplit_once(':').expect("port").1;
    for (path, redirects) in [("/headers", false), ("/redirect", true)] {
        let url = format!("http://localhost:{port}{path}");
        let [namelookup, connect, redirect, pretransfer, total] = timed(&url)[..] else {
            panic!("five times")
        };
        assert!(
            0.0 < namelookup && namelookup <= connect,
            "{namelookup} {connect}"
        );
        assert_eq!(redirect > 0.0, redirects, "{path}: {redirect}");
        assert!(
            redirect < pretransfer && pretransfer < total,
            "{path}: {redirect} {pretransfer}"
        );
    }
}

/// The seconds `get -w` wrote, separated by spaces.
fn seconds(out: &Output) -> Vec<f64> {
    let seconds = text(&out.stdout);
    seconds
        .split(' ')
        .map(|s| s.parse().unwrap_or_else(|_| panic!("{seconds:?}")))
        .collect()
}

/// `--resolve` as curl's: the request goes to the pinned address under its name.
#[test]
fn resolve_pins_a_name_as_curl() {
    let server = python(PYTHON_SERVER);
    let port = server.addr.rsplit_once(':').expect("port").1;
    let url = format!("http://api.example:{port}/headers");
    let pin = format!("api.example:{port}:127.0.0.1");
    let ours = get(&["--resolve", &pin, &url]);
    assert!(ours.status.success(), "{}", text(&ours.stderr));
    let theirs = curl(&["-s", "-H", "User-Agent: x", "--resolve", &pin, &url]);
    assert_eq!(text(&ours.stdout), text(&theirs.stdout));
    assert!(text(&ours.stdout).contains(&format!("Host: api.example:{port}")));
    // Several addresses: the first refuses (nothing listens on 127.0.0.2), the next serves.
    let pins = format!("api.example:{port}:127.0.0.2,127.0.0.1");
    let ours = get(&["--resolve", &pins, &url]);
    assert!(ours.status.success(), "{}", text(&ours.stderr));
    let theirs = curl(&["-s", "-H", "User-Agent: x", "--resolve", &pins, &url]);
    assert_eq!(text(&ours.stdout), text(&theirs.stdout));
    let bad = get(&["--resolve", "api.example:x:127.0.0.1", &url]);
    assert_eq!(
        text(&bad.stderr),
        "ringwire: --resolve \"api.example:x:127.0.0.1\": \
         expected HOST:PORT:ADDRESS[,ADDRESS...]\n"
    );
}

/// A ringwire server (in this process) answering each request with what it received:
/// method, target, framing (`length`, `chunked`, or `none`), whether it expected
/// `100-continue`, the body's length and a checksum; over HTTP/1.1 and HTTP/2 (prior
/// knowledge).
fn receipt_server() -> std::net::SocketAddr {
    use ringwire_server::{Handler, Request, Response};
    struct Receipt;
    impl Handler for Receipt {
        async fn call(&self, request: &Request<'_>) -> Response {
            let head = request.head();
            let framing = if head.header("content-length").is_some() {
                "length"
            } else if head.header("transfer-encoding").is_some() {
                "chunked"
            } else {
                "none"
            };
            let expect = head.header("expect").is_some();
            let body = request.body();
            let sum = body
                .iter()
                .fold(0u32, |sum, &b| sum.rotate_left(5) ^ u32::from(b));
            let target = head.target().as_bytes();
            Response::new(200).body(format!(
                "{} {} {framing} expect={expect} {} {sum:08x}\n",
                head.method().as_str(),
                String::from_utf8_lossy(target),
                body.len()
            ))
        }
    }
    serve_in_process(Receipt)
}

#[test]
fn upload_file_sends_a_file_or_stdin_as_curl_does() {
    let addr = receipt_server();
    let dir = std::env::temp_dir().join(format!("ringwire-get-upload-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    // Far larger than the client's 64 KiB send ring.
    let data: Vec<u8> = (0..(3 << 20) + 11)
        .map(|i: usize| (i % 251) as u8)
        .collect();
    let file = dir.join("a file.bin");
    std::fs::write(&file, &data).unwrap();
    let small = dir.join("small.txt");
    std::fs::write(&small, "hello\n").unwrap();
    let (file, small) = (file.to_str().unwrap(), small.to_str().unwrap());

    let cases: [(&[&str], &str); 5] = [
        // The file's name after a URL that ends in `/`, percent-encoded.
        (&["-T", file], "/up/"),
        (&["-T", small], "/up/named?x=1"),
        (&["-X", "POST", "-T", small], "/"),
        (&["--http2-prior-knowledge", "-T", file], "/h2/"),
        (&["--http2-prior-knowledge", "-T", small], "/h2/small"),
    ];
    for (args, path) in cases {
        let url = format!("http://{addr}{path}");
        let ours = get(&[args, &["-s", &url]].concat());
        let curl = curl(&[args, &["-s", &url]].concat());
        assert!(ours.status.success(), "{}", text(&ours.stderr));
        // curl 7.88 asks for `100-continue` before a few bytes too; ringwire only before
        // a body over 1 MiB or of unknown length, as it does for -d.
        let unexpected = |out: &Output| text(&out.stdout).replace(" expect=true", " expect=false");
        assert_eq!(unexpected(&ours), unexpected(&curl), "{args:?} {path}");
    }
    let ours = text(&get(&["-s", "-T", file, &format!("http://{addr}/up/")]).stdout).to_owned();
    assert!(
        ours.starts_with("PUT /up/a%20file.bin length expect=true 3145739 "),
        "{ours}"
    );

    // Stdin goes chunked, over HTTP/1.1, as curl sends it.
    let url = format!("http://{addr}/stdin");
    let piped = |command: &mut Command| {
        let mut child = command
            .args(["-s", "-T", "-", &url])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let mut stdin = child.stdin.take().unwrap();
        let data = data.clone();
        let writer = std::thread::spawn(move || stdin.write_all(&data).unwrap());
        let out = child.wait_with_output().unwrap();
        writer.join().unwrap();
        out
    };
    let ours = piped(Command::new(BIN).arg("get"));
    let curl = piped(&mut Command::new("curl"));
    assert!(ours.status.success(), "{}", text(&ours.stderr));
    assert_eq!(text(&ours.stdout), text(&curl.stdout));
    assert!(
        text(&ours.stdout).starts_with("PUT /stdin chunked expect=true 3145739 "),
        "{}",
        text(&ours.stdout)
    );

    let out = get(&["-T", &format!("{}/missing", dir.display()), &url]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).starts_with("ringwire: cannot read "),
        "{}",
        text(&out.stderr)
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn continue_at_and_remote_name_resume_a_download_as_curl() {
    let dir = std::env::temp_dir().join(format!("ringwire-get-resume-{}", std::process::id()));
    let (site, ours_dir, curl_dir) = (dir.join("site"), dir.join("ours"), dir.join("curl"));
    for d in [&site, &ours_dir, &curl_dir] {
        std::fs::create_dir_all(d).unwrap();
    }
    let data: Vec<u8> = (0..300_007).map(|i: usize| (i * 7 % 253) as u8).collect();
    std::fs::write(site.join("data.bin"), &data).unwrap();
    let server = ringwire_serve(&[site.to_str().unwrap()]);
    let url = format!("http://{}/data.bin", server.addr);
    let in_dir = |command: &str, dir: &std::path::Path, args: &[&str]| {
        let mut c = Command::new(if command == "curl" { "curl" } else { BIN });
        if command != "curl" {
            c.arg("get");
        }
        c.current_dir(dir).args(args).output().unwrap()
    };

    // A partial file, resumed where it ends, into the file named by the URL: both the same.
    for (command, dir) in [("ringwire", &ours_dir), ("curl", &curl_dir)] {
        std::fs::write(dir.join("data.bin"), &data[..1000]).unwrap();
        let out = in_dir(command, dir, &["-sS", "-C", "-", "-O", &url]);
        assert!(out.status.success(), "{command}: {}", text(&out.stderr));
        assert!(
            std::fs::read(dir.join("data.bin")).unwrap() == data,
            "{command}"
        );
        // Nothing left (416): success, the file untouched.
        let out = in_dir(command, dir, &["-sS", "-C", "-", "-O", &url]);
        assert!(out.status.success(), "{command}: {}", text(&out.stderr));
        assert!(
            std::fs::read(dir.join("data.bin")).unwrap() == data,
            "{command}"
        );
    }
    // curl -f calls that 416 an error; the file is whole, so ringwire does not.
    let out = in_dir("ringwire", &ours_dir, &["-fsS", "-C", "-", "-O", &url]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    // -w is written for it, as curl writes it.
    let code = ["-s", "-C", "-", "-O", "-w", "%{http_code}", &url];
    let ours = in_dir("ringwire", &ours_dir, &code);
    let theirs = in_dir("curl", &curl_dir, &code);
    assert_eq!(text(&ours.stdout), "416");
    assert_eq!(text(&ours.stdout), text(&theirs.stdout));

    // An offset given, and no file yet with `-C -` (a plain download).
    let part = ours_dir.join("part");
    std::fs::write(&part, &data[..77]).unwrap();
    let out = get(&["-s", "-C", "77", "-o", part.to_str().unwrap(), &url]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(std::fs::read(&part).unwrap() == data);
    let fresh = ours_dir.join("fresh");
    let out = get(&["-s", "-C", "-", "-o", fresh.to_str().unwrap(), &url]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(std::fs::read(&fresh).unwrap() == data);

    // A server that ignores `range` (Python's /big sends it all): exit 33 as curl's, the
    // partial file untouched.
    let python = python(PYTHON_SERVER);
    let big = format!("http://{}/big", python.addr);
    for (command, dir) in [("ringwire", &ours_dir), ("curl", &curl_dir)] {
        std::fs::write(dir.join("big"), b"0123").unwrap();
        let out = in_dir(command, dir, &["-sS", "-C", "-", "-O", &big]);
        assert_eq!(out.status.code(), Some(33), "{command}");
        assert_eq!(
            std::fs::read(dir.join("big")).unwrap(),
            b"0123",
            "{command}"
        );
    }
    // An error status while resuming: reported, nothing appended (curl would append the
    // error page).
    let missing = format!("http://{}/missing.bin", server.addr);
    std::fs::write(ours_dir.join("missing.bin"), b"kept").unwrap();
    let out = in_dir("ringwire", &ours_dir, &["-sS", "-C", "-", "-O", &missing]);
    assert_eq!(out.status.code(), Some(22));
    assert!(text(&out.stderr).contains("404"), "{}", text(&out.stderr));
    assert_eq!(
        std::fs::read(ours_dir.join("missing.bin")).unwrap(),
        b"kept"
    );

    // `-O` needs a name; `-C -` needs a file; curl's `-fsSL` is taken.
    let root = format!("http://{}/", server.addr);
    let out = in_dir("ringwire", &ours_dir, &["-s", "-O", &root]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("names no file"),
        "{}",
        text(&out.stderr)
    );
    let out = get(&["-s", "-C", "-", &url]);
    assert_eq!(out.status.code(), Some(1));
    let out = get(&["-fsSL", &url]);
    assert!(out.status.success() && out.stdout == data);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Python's `http.server` failing on purpose: `/flaky/KEY/N` answers `503` (with
/// `retry-after: 0`) to its first N requests, then `200` with `ok LENGTH` (the request
/// body's length); `/cut/KEY` sends half of a 1,000-byte body and closes the first time, the
/// whole body after. Each KEY counts apart.
const FAILING_SERVER: &str = r#"
import http.server, threading
seen, lock = {}, threading.Lock()
class H(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def log_message(self, *args):
        pass
    def answer(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        parts = self.path.split("/")
        with lock:
            n = seen[self.path] = seen.get(self.path, 0) + 1
        if parts[1] == "flaky" and n <= int(parts[3]):
            out = b"busy\n"
            self.send_response(503)
            self.send_header("Retry-After", "0")
        elif parts[1] == "flaky":
            out = b"ok %d\n" % len(body)
            self.send_response(200)
        else:
            out = bytes(range(250)) * 4
            self.send_response(200)
            self.send_header("Content-Length", "1000")
            if self.path.endswith("/named"):
                self.send_header("Content-Disposition", "attachment; filename=named.bin")
            self.end_headers()
            self.wfile.write(out[: 500 if n == 1 else 1000])
            self.close_connection = True
            return
        self.send_header("Content-Length", str(len(out)))
        self.end_headers()
        self.wfile.write(out)
    do_GET = do_PUT = answer
srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
print(srv.server_address[1], flush=True)
srv.serve_forever()
"#;

#[test]
fn retry_tries_transient_failures_again_as_curl() {
    let server = python(FAILING_SERVER);
    let url = |path: &str| format!("http://{}{path}", server.addr);
    let retries = |out: &Output| text(&out.stderr).matches("trying again").count();

    // Two 503s, then the answer; `retry-after: 0` says not to wait.
    let out = get(&["--retry", "2", &url("/flaky/a/2")]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "ok 0\n");
    assert_eq!(retries(&out), 2, "{}", text(&out.stderr));
    // Too few attempts: the last answer is written, or with -f exit 22.
    let out = get(&["-s", "--retry", "1", &url("/flaky/b/2")]);
    assert!(out.status.success());
    assert_eq!(text(&out.stdout), "busy\n");
    assert_eq!(retries(&out), 0, "-s keeps it quiet");
    let out = get(&["-fs", "--retry", "1", &url("/flaky/c/2")]);
    assert_eq!(out.status.code(), Some(22));
    // As curl does it (curl waits its second: it takes `retry-after: 0` as none), but
    // curl writes the 503's body to stdout too before it tries again; ringwire writes
    // only the answer it keeps.
    let ours = get(&["-s", "--retry", "1", &url("/flaky/d/1")]);
    let theirs = curl(&["-s", "--retry", "1", &url("/flaky/e/1")]);
    assert_eq!(text(&ours.stdout), "ok 0\n");
    assert_eq!(text(&theirs.stdout), "busy\nok 0\n");

    // An uploaded file is sent whole again; stdin cannot be.
    let dir = std::env::temp_dir().join(format!("ringwire-get-retry-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("up.bin");
    std::fs::write(&file, vec![b'x'; 200_000]).unwrap();
    let out = get(&[
        "-s",
        "--retry",
        "1",
        "-T",
        file.to_str().unwrap(),
        &url("/flaky/f/1"),
    ]);
    assert_eq!(text(&out.stdout), "ok 200000\n", "{}", text(&out.stderr));
    let mut child = Command::new(BIN)
        .args(["get", "-s", "--retry", "1", "-T", "-", &url("/flaky/g/1")])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(b"once").unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("stdin"), "{}", text(&out.stderr));

    // A body cut short: an error, unless --retry-all-errors, which takes back what the
    // file got and fetches it again.
    let saved = dir.join("cut.bin");
    let saved_arg = saved.to_str().unwrap();
    let out = get(&["-s", "--retry", "1", "-o", saved_arg, &url("/cut/h")]);
    assert_eq!(out.status.code(), Some(1));
    let all = ["-s", "--retry", "1", "--retry-all-errors", "-o", saved_arg];
    let out = get(&[&all[..], &[&url("/cut/i")]].concat());
    assert!(out.status.success(), "{}", text(&out.stderr));
    let whole: Vec<u8> = (0..1000).map(|i| (i % 250) as u8).collect();
    assert!(std::fs::read(&saved).unwrap() == whole);
    // A file named by the answer (-OJ, new-file-only) is removed, not kept half, to be made
    // again.
    let out = Command::new(BIN)
        .current_dir(&dir)
        .args([
            "get",
            "-s",
            "-OJ",
            "--retry",
            "1",
            "--retry-all-errors",
            &url("/cut/j/named"),
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(std::fs::read(dir.join("named.bin")).unwrap() == whole);

    // A refused connection is tried again only with --retry-connrefused.
    let closed = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap();
    let refused = format!("http://{closed}/");
    let out = get(&["--retry", "2", "--retry-delay", "0.01", &refused]);
    assert_eq!((out.status.code(), retries(&out)), (Some(1), 0));
    let connrefused = [
        "--retry",
        "2",
        "--retry-delay",
        "0.01",
        "--retry-connrefused",
    ];
    let out = get(&[&connrefused[..], &[&refused]].concat());
    assert_eq!((out.status.code(), retries(&out)), (Some(1), 2));
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Python's `http.server` answering every request with its request line, some of its
/// fields and its body; `/dl/...` also names a file by `content-disposition` (a path that
/// climbs out, which -J must not follow).
const MIRROR_SERVER: &str = r#"
import http.server
class H(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def log_message(self, *args):
        pass
    def answer(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        out = ("%s %s\n" % (self.command, self.path)).encode()
        for name in ("User-Agent", "Referer", "Accept", "Content-Type", "Content-Length"):
            out += ("%s: %s\n" % (name, self.headers.get(name, "-"))).encode()
        out += body
        self.send_response(200)
        if self.path.startswith("/dl/"):
            self.send_header("Content-Disposition", 'attachment; filename="../report 1.txt"')
        self.send_header("Content-Length", str(len(out)))
        self.end_headers()
        self.wfile.write(out)
    do_GET = do_POST = do_PUT = answer
srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
print(srv.server_address[1], flush=True)
srv.serve_forever()
"#;

#[test]
fn data_query_and_identity_flags_as_curl_sends_them() {
    let server = python(MIRROR_SERVER);
    let url = |path: &str| format!("http://{}{path}", server.addr);
    let dir = std::env::temp_dir().join(format!("ringwire-get-data-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("part.txt");
    std::fs::write(&file, "line one é\n").unwrap();
    let from_file = format!("n@{}", file.display());
    let cases: Vec<Vec<String>> = [
        // Parts joined with `&` in the command line's order, the encoded ones with a space
        // as `+` (as curl 7.88).
        vec!["-d", "a=1", "-d", "b=2"],
        vec![
            "--data-urlencode",
            "q=a b",
            "-d",
            "z=1",
            "--data-urlencode",
            "=x/y",
            "-d",
            "w",
        ],
        vec![
            "-d",
            "z=1",
            "--data-urlencode",
            "q=a&b=c d%",
            "--data-urlencode",
            "=x/y",
        ],
        vec!["--data-urlencode", &from_file],
        vec!["--data-urlencode", "plain text"],
        // -G: the data in the query, by GET, no body.
        vec!["-G", "-d", "a=1", "--data-urlencode", "q=hello world"],
        // --json: its parts as they are, with both fields.
        vec!["--json", "{\"a\":1}", "--json", "[2]"],
        vec!["--json", "{}", "-H", "Accept: text/plain"],
        vec!["-A", "agent/1.0", "-e", "https://example.com/from"],
        vec!["-A", "agent/1.0", "-H", "User-Agent: wins"],
    ]
    .iter()
    .map(|case| case.iter().map(|s| s.to_string()).collect())
    .collect();
    for (i, case) in cases.iter().enumerate() {
        let case: Vec<&str> = case.iter().map(String::as_str).collect();
        let target = url(&format!("/c{i}?x=1"));
        same_as_curl(&[&case[..], &[&target]].concat());
    }
    let ours = get(&["-s", "-G", "--data-urlencode", "q=a b", &url("/g")]);
    assert!(
        text(&ours.stdout).starts_with("GET /g?q=a+b\n"),
        "{}",
        text(&ours.stdout)
    );
    assert!(text(&ours.stdout).contains("Content-Length: -\n"));

    // -D writes the heads -i would, elsewhere; -OJ names the file as the answer says,
    // without its path, and never over a file that is there (curl refuses too).
    let heads = dir.join("heads.txt");
    let out = get(&["-s", "-D", heads.to_str().unwrap(), &url("/d")]);
    assert!(text(&out.stdout).starts_with("GET /d\n"));
    let dumped = std::fs::read_to_string(&heads).unwrap();
    assert!(dumped.starts_with("HTTP/1.1 200 OK\r\n"), "{dumped}");
    assert!(dumped.ends_with("\r\n\r\n"), "{dumped}");
    let ours = Command::new(BIN)
        .current_dir(&dir)
        .args(["get", "-s", "-OJ", &url("/dl/file.bin")])
        .output()
        .unwrap();
    assert!(ours.status.success(), "{}", text(&ours.stderr));
    let saved = std::fs::read_to_string(dir.join("report 1.txt")).unwrap();
    assert!(saved.starts_with("GET /dl/file.bin\n"), "{saved}");
    let again = Command::new(BIN)
        .current_dir(&dir)
        .args(["get", "-s", "-OJ", &url("/dl/other.bin")])
        .output()
        .unwrap();
    assert_eq!(again.status.code(), Some(1));
    assert!(
        text(&again.stderr).contains("exists"),
        "{}",
        text(&again.stderr)
    );
    let theirs = Command::new("curl")
        .current_dir(&dir)
        .args(["-s", "-OJ", &url("/dl/other.bin")])
        .output()
        .unwrap();
    assert!(!theirs.status.success());
    assert_eq!(
        std::fs::read_to_string(dir.join("report 1.txt")).unwrap(),
        saved
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn netrc_credentials_as_curl_reads_them() {
    let server = python(PYTHON_SERVER);
    let port = server.addr.rsplit(':').next().unwrap().to_owned();
    let dir = std::env::temp_dir().join(format!("ringwire-get-netrc-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let netrc = dir.join("netrc");
    std::fs::write(
        &netrc,
        "macdef init\nmachine 127.0.0.1 login trap\n\n\
         machine 127.0.0.1 login \"al ice\" password \"p\\\"w d\"\n\
         machine localhost login bob password b0b\n\
         default login anyone password guest\n",
    )
    .unwrap();
    let file = netrc.to_str().unwrap();
    let by_address = format!("http://127.0.0.1:{port}/header/Authorization");
    let by_name = format!("http://localhost:{port}/header/Authorization");
    let missing = dir.join("missing");
    // A redirect to another host gets that host's entry (curl's test 257); -u's
    // credentials stay with the first.
    let to_name = format!("http://127.0.0.1:{port}/to/localhost/header/Authorization");
    let to_address = format!("http://localhost:{port}/to/127.0.0.1/header/Authorization");
    // --location-trusted sends the credentials given (-u, -H) to every host; netrc's stay
    // per host.
    let trusted = "--location-trusted";
    let cases: [&[&str]; 13] = [
        &["--netrc-file", file, &by_address],
        &["--netrc-file", file, &by_name],
        &["-u", "x:y", "--netrc-file", file, &by_address],
        &["--netrc-file", missing.to_str().unwrap(), &by_address],
        &["-L", "--netrc-file", file, &to_name],
        &["-L", "--netrc-file", file, &to_address],
        &["-L", "-u", "x:y", &to_name],
        &["-L", "-u", "x:y", "--netrc-file", file, &to_name],
        &["--netrc-file", file, &to_name],
        &[trusted, "-u", "x:y", &to_name],
        &[trusted, "--netrc-file", file, &to_name],
        &[trusted, "-u", "x:y", "--netrc-file", file, &to_name],
        &[trusted, "-H", "authorization: Bearer t", &to_name],
    ];
    for case in cases {
        same_as_curl(case);
    }
    // -n reads ~/.netrc.
    std::fs::copy(&netrc, dir.join(".netrc")).unwrap();
    let home = |command: &mut Command| {
        command
            .env("HOME", &dir)
            .args(["-s", "-n", &by_address])
            .output()
            .unwrap()
    };
    let ours = home(Command::new(BIN).arg("get"));
    assert_eq!(
        text(&ours.stdout),
        text(&home(&mut Command::new("curl")).stdout)
    );
    assert_eq!(text(&ours.stdout), "Basic YWwgaWNlOnAidyBk");
    // A quoted value left open: an error (curl's exit 26).
    std::fs::write(&netrc, "machine 127.0.0.1 login \"open\n").unwrap();
    let out = get(&["-s", "--netrc-file", file, &by_address]);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("netrc"), "{}", text(&out.stderr));
    std::fs::remove_dir_all(&dir).unwrap();
}
