//! Streamed uploads over loopback HTTP/1.1 (issue 7): one large body
//! (256 MiB, `UPLOAD_MIB` to change it) `PUT` to one nginx that every client
//! talks to, from two sources:
//!
//! - **memory**: a reader that copies from a 1 MiB pattern into whatever
//!   buffer it is handed (`Read` and `AsyncRead`), so the source costs one
//!   copy and what differs is the client;
//! - **file**: a file of that size in the temporary directory, page-cached
//!   (written just before), read with `std::fs::File` by the blocking
//!   clients and `tokio::fs::File` by the async ones, and by curl.
//!
//! The clients: ringwire's blocking and tokio clients (`send_streamed`,
//! `content-length`; the blocking one chunked too; each also with its send
//! ring grown by `reserve(1 MiB)`, which makes the ring 2 MiB, a power of
//! two, so pieces of ~2 MiB; and for the file `send_file`, by `sendfile`),
//! reqwest's blocking client (`blocking::Body::sized`, which reads 8 KiB at
//! a time), reqwest's async client (`Body::wrap_stream` over a
//! `ReaderStream` of 64 KiB reads, and for the file also
//! `Body::from(tokio::fs::File)`, reqwest's own file body, 4 KiB reads),
//! hyper's connection-level client (`client::conn::http1`, an
//! http-body-util `StreamBody` over the same `ReaderStream`), and curl
//! (`-T FILE` and `--data-binary @FILE`, file only, as a child process).
//! The async clients run on a current-thread runtime.
//!
//! The sink is nginx's WebDAV `PUT` into a tmpfs (`/dev/shm` when there is
//! one), in a process of its own: nginx answers a `PUT` only after the whole
//! body is stored, whereas `return 204` answers at once and discards the
//! body afterwards, which would let a client that returns on the answer
//! (reqwest, hyper) stop its clock early. Every upload is checked: the
//! stored file has the body's length, and is removed before the next one.
//!
//! Reported per client and source: the median throughput over the rounds
//! (each round runs every client once, in an order rotated from round to
//! round, after one warm-up round), and the client's CPU time per GiB: the
//! process's own (`getrusage(RUSAGE_SELF)`, every thread: reqwest's
//! blocking client runs a runtime on a thread of its own, tokio's files a
//! blocking pool) plus its waited children's (`RUSAGE_CHILDREN`: curl),
//! with the user part and the context switches (`ru_nvcsw + ru_nivcsw`).
//! Over loopback the kernel's TCP work for a segment runs in whichever
//! process's context sends it, the client's or, when the client's data
//! waits for window, nginx's as its window updates arrive: so the client's
//! figure moves from run to run with where that work fell, and the client's
//! and nginx's CPU together (nginx's from `/proc/PID/schedstat`) is the
//! steadier sum. "nginx busy" is nginx's CPU time over the upload's wall
//! time: near 100%, nginx set the pace.
//!
//! The process pins itself to one core and nginx to another (`UPLOAD_CPUS`,
//! `client,sink`, default `1,0`; `none` to leave both unpinned): a streaming
//! upload keeps both ends busy at once, so each gets a core of its own, and
//! every client's threads share the client's core.
//!
//! ```sh
//! cargo bench -p ringwire-bench --bench upload
//! UPLOAD_MIB=64 UPLOAD_ROUNDS=3 UPLOAD_SOURCE=file UPLOAD_ONLY='ringwire tokio;curl -T' \
//!     cargo bench -p ringwire-bench --bench upload
//! ```
//!
//! `UPLOAD_ONLY` takes client names as the table prints them, separated by `;`;
//! `UPLOAD_SOURCE` is `memory` or `file`.

use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpListener};
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::process::{Command, Stdio};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use bytes::Bytes;
use futures_util::TryStreamExt as _;
use http_body_util::combinators::UnsyncBoxBody;
use http_body_util::{BodyExt as _, StreamBody};
use hyper::body::Frame;
use ringwire_client::{blocking, tokio as ring_async, RequestBuffer, Url};
use tokio::io::{AsyncRead, ReadBuf};
use tokio_util::io::ReaderStream;

/// The pattern the memory source repeats.
const PATTERN_LEN: usize = 1 << 20;
/// What reqwest's and hyper's streams read at a time: ringwire's default send ring.
const STREAM_PIECE: usize = 64 << 10;
/// What the larger rows `RequestBuffer::reserve`: with the 8 KiB kept for
/// the head, the ring grows to the next power of two, 2 MiB.
const LARGE_PIECE: usize = 1 << 20;
/// Where nginx stores each upload, under its root.
const SINK_PATH: &str = "/sink/up";

/// Where the body comes from.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Source {
    Memory,
    File,
}

impl Source {
    fn name(self) -> &'static str {
        match self {
            Source::Memory => "memory",
            Source::File => "file",
        }
    }
}

/// What every upload needs.
struct Job {
    len: u64,
    pattern: &'static [u8],
    file: PathBuf,
    /// `http://127.0.0.1:PORT/sink/up`
    url: String,
    addr: SocketAddr,
}

/// `len` bytes of the pattern, copied into each buffer it is handed.
struct Memory {
    pattern: &'static [u8],
    at: usize,
    left: u64,
}

impl Memory {
    fn new(job: &Job) -> Memory {
        Memory {
            pattern: job.pattern,
            at: 0,
            left: job.len,
        }
    }

    /// The next at most `max` bytes, in runs of the pattern, to `put`.
    fn give(&mut self, max: usize, mut put: impl FnMut(&[u8])) -> usize {
        let want = max.min(usize::try_from(self.left).unwrap_or(usize::MAX));
        let mut n = 0;
        while n < want {
            let run = &self.pattern[self.at..];
            let k = run.len().min(want - n);
            put(&run[..k]);
            n += k;
            self.at = (self.at + k) % self.pattern.len();
        }
        self.left -= n as u64;
        n
    }
}

impl Read for Memory {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let mut at = 0;
        Ok(self.give(buf.len(), |run| {
            buf[at..at + run.len()].copy_from_slice(run);
            at += run.len();
        }))
    }
}

impl AsyncRead for Memory {
    fn poll_read(
        self: Pin<&mut Self>,
        _: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        // `put_slice` copies into memory not yet initialized without zeroing it first.
        self.get_mut()
            .give(buf.remaining(), |run| buf.put_slice(run));
        Poll::Ready(Ok(()))
    }
}

/// A client that can upload the job's body.
trait Uploader {
    fn name(&self) -> &str;
    /// Whether it reads from `source`.
    fn takes(&self, source: Source) -> bool {
        let _ = source;
        true
    }
    /// One upload of the whole body from `source`; the answer's status.
    fn upload(&mut self, job: &Job, source: Source) -> u16;
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime")
}

fn buffer(reserve: Option<usize>) -> RequestBuffer {
    let mut buffer = RequestBuffer::new().expect("send ring");
    if let Some(len) = reserve {
        buffer.reserve(len).expect("a larger send ring");
    }
    buffer
}

struct RingBlocking {
    name: &'static str,
    client: blocking::Client,
    buffer: RequestBuffer,
    url: Url,
    chunked: bool,
    /// The file by `send_file` (`sendfile`), not by `send_streamed`.
    send_file: bool,
}

impl Uploader for RingBlocking {
    fn name(&self) -> &str {
        self.name
    }
    fn takes(&self, source: Source) -> bool {
        !self.send_file || source == Source::File
    }
    fn upload(&mut self, job: &Job, source: Source) -> u16 {
        let len = (!self.chunked).then_some(job.len);
        let request = self
            .buffer
            .request("PUT", &self.url)
            .unwrap()
            .headers()
            .unwrap()
            .body_stream(len)
            .unwrap();
        let mut response = match source {
            Source::Memory => {
                self.client
                    .send_streamed(&mut self.buffer, &request, Memory::new(job))
            }
            Source::File if self.send_file => {
                let file = std::fs::File::open(&job.file).unwrap();
                self.client.send_file(&mut self.buffer, &request, &file)
            }
            Source::File => {
                let file = std::fs::File::open(&job.file).unwrap();
                self.client.send_streamed(&mut self.buffer, &request, file)
            }
        }
        .unwrap();
        let status = response.status();
        while response.chunk().unwrap().is_some() {}
        status
    }
}

struct RingAsync {
    name: &'static str,
    runtime: tokio::runtime::Runtime,
    client: ring_async::Client,
    buffer: RequestBuffer,
    url: Url,
    /// The file by `send_file` (`sendfile`), not by `send_streamed` over
    /// `tokio::fs::File`.
    send_file: bool,
}

impl Uploader for RingAsync {
    fn name(&self) -> &str {
        self.name
    }
    fn takes(&self, source: Source) -> bool {
        !self.send_file || source == Source::File
    }
    fn upload(&mut self, job: &Job, source: Source) -> u16 {
        let (client, buffer, url) = (&self.client, &mut self.buffer, &self.url);
        let send_file = self.send_file;
        self.runtime.block_on(async {
            let request = buffer
                .request("PUT", url)
                .unwrap()
                .headers()
                .unwrap()
                .body_stream(Some(job.len))
                .unwrap();
            let mut response = match source {
                Source::Memory => {
                    client
                        .send_streamed(buffer, &request, Memory::new(job))
                        .await
                }
                Source::File if send_file => {
                    let file = std::fs::File::open(&job.file).unwrap();
                    client.send_file(buffer, &request, &file).await
                }
                Source::File => {
                    let file = tokio::fs::File::open(&job.file).await.unwrap();
                    client.send_streamed(buffer, &request, file).await
                }
            }
            .unwrap();
            let status = response.status();
            while response.chunk().await.unwrap().is_some() {}
            status
        })
    }
}

/// reqwest's blocking API: `Body::sized` over the reader; reqwest reads it
/// 8 KiB at a time on the calling thread and hands each piece to its
/// runtime's thread, which writes it.
struct ReqwestBlocking {
    client: reqwest::blocking::Client,
}

impl Uploader for ReqwestBlocking {
    fn name(&self) -> &str {
        "reqwest blocking"
    }
    fn upload(&mut self, job: &Job, source: Source) -> u16 {
        let body = match source {
            Source::Memory => reqwest::blocking::Body::sized(Memory::new(job), job.len),
            Source::File => {
                let file = std::fs::File::open(&job.file).unwrap();
                reqwest::blocking::Body::sized(file, job.len)
            }
        };
        let response = self.client.put(&job.url).body(body).send().unwrap();
        let status = response.status().as_u16();
        response.bytes().unwrap();
        status
    }
}

/// How reqwest's async client gets the body.
#[derive(Clone, Copy)]
enum ReqwestBody {
    /// `Body::wrap_stream(ReaderStream::with_capacity(source, 64 KiB))`,
    /// `content-length` set.
    Stream,
    /// `Body::from(tokio::fs::File)` (reqwest's `ReaderStream::new`: 4 KiB
    /// reads), `content-length` set.
    FromFile,
}

struct Reqwest {
    name: &'static str,
    runtime: tokio::runtime::Runtime,
    client: reqwest::Client,
    body: ReqwestBody,
}

impl Uploader for Reqwest {
    fn name(&self) -> &str {
        self.name
    }
    fn takes(&self, source: Source) -> bool {
        matches!(self.body, ReqwestBody::Stream) || source == Source::File
    }
    fn upload(&mut self, job: &Job, source: Source) -> u16 {
        let (client, body) = (&self.client, self.body);
        self.runtime.block_on(async {
            let body = match (source, body) {
                (Source::Memory, _) => reqwest::Body::wrap_stream(ReaderStream::with_capacity(
                    Memory::new(job),
                    STREAM_PIECE,
                )),
                (Source::File, ReqwestBody::Stream) => {
                    let file = tokio::fs::File::open(&job.file).await.unwrap();
                    reqwest::Body::wrap_stream(ReaderStream::with_capacity(file, STREAM_PIECE))
                }
                (Source::File, ReqwestBody::FromFile) => {
                    reqwest::Body::from(tokio::fs::File::open(&job.file).await.unwrap())
                }
            };
            let response = client
                .put(&job.url)
                .header("content-length", job.len)
                .body(body)
                .send()
                .await
                .unwrap();
            let status = response.status().as_u16();
            response.bytes().await.unwrap();
            status
        })
    }
}

type HyperBody = UnsyncBoxBody<Bytes, io::Error>;

/// hyper's connection-level client, one keep-alive connection, the body a
/// `StreamBody` of a `ReaderStream` (64 KiB reads), `content-length` set.
struct Hyper {
    runtime: tokio::runtime::Runtime,
    /// Opened on first use, and again if the server closed it.
    sender: Option<hyper::client::conn::http1::SendRequest<HyperBody>>,
}

fn hyper_body<R: AsyncRead + Send + 'static>(source: R) -> HyperBody {
    let stream = ReaderStream::with_capacity(source, STREAM_PIECE).map_ok(Frame::data);
    StreamBody::new(stream).boxed_unsync()
}

impl Uploader for Hyper {
    fn name(&self) -> &str {
        "hyper (conn::http1)"
    }
    fn upload(&mut self, job: &Job, source: Source) -> u16 {
        let slot = &mut self.sender;
        self.runtime.block_on(async {
            if slot.as_ref().is_none_or(|s| s.is_closed()) {
                let stream = tokio::net::TcpStream::connect(job.addr).await.unwrap();
                stream.set_nodelay(true).unwrap();
                let io = hyper_util::rt::TokioIo::new(stream);
                let (sender, conn) = hyper::client::conn::http1::handshake(io).await.unwrap();
                tokio::spawn(conn);
                *slot = Some(sender);
            }
            let sender = slot.as_mut().expect("connected");
            let body = match source {
                Source::Memory => hyper_body(Memory::new(job)),
                Source::File => hyper_body(tokio::fs::File::open(&job.file).await.unwrap()),
            };
            let request = hyper::Request::put(SINK_PATH)
                .header("host", job.addr.to_string())
                .header("content-length", job.len)
                .body(body)
                .unwrap();
            sender.ready().await.unwrap();
            let response = sender.send_request(request).await.unwrap();
            let status = response.status().as_u16();
            response.into_body().collect().await.unwrap();
            status
        })
    }
}

/// curl as a child process, a fresh one (and connection) per upload.
struct Curl {
    name: &'static str,
    /// The arguments that send the file, before its path.
    args: &'static [&'static str],
    /// The path's prefix (`@` for `--data-binary`).
    at: &'static str,
}

impl Uploader for Curl {
    fn name(&self) -> &str {
        self.name
    }
    fn takes(&self, source: Source) -> bool {
        source == Source::File
    }
    fn upload(&mut self, job: &Job, _: Source) -> u16 {
        let out = Command::new("curl")
            .args(["-sS", "-o", "/dev/null", "-w", "%{http_code}"])
            .args(self.args)
            .arg(format!("{}{}", self.at, job.file.display()))
            .arg(&job.url)
            .stderr(Stdio::inherit())
            .output()
            .expect("curl is installed");
        assert!(out.status.success(), "curl: {:?}", out.status);
        String::from_utf8_lossy(&out.stdout)
            .parse()
            .expect("a status")
    }
}

fn clients(addr: SocketAddr) -> Vec<Box<dyn Uploader>> {
    let url = Url::parse(&format!("http://{addr}{SINK_PATH}")).unwrap();
    let ring_blocking = |name, reserve, chunked, send_file| -> Box<dyn Uploader> {
        Box::new(RingBlocking {
            name,
            client: blocking::Client::default(),
            buffer: buffer(reserve),
            url: url.clone(),
            chunked,
            send_file,
        })
    };
    let ring_async = |name, reserve, send_file| -> Box<dyn Uploader> {
        Box::new(RingAsync {
            name,
            runtime: runtime(),
            client: ring_async::Client::default(),
            buffer: buffer(reserve),
            url: url.clone(),
            send_file,
        })
    };
    let reqwest = |name, body| -> Box<dyn Uploader> {
        let runtime = runtime();
        // Built inside the runtime: its pool's timers belong to it.
        let client = runtime.block_on(async { reqwest::Client::new() });
        Box::new(Reqwest {
            name,
            runtime,
            client,
            body,
        })
    };
    vec![
        ring_blocking("ringwire blocking", None, false, false),
        ring_blocking(
            "ringwire blocking, reserve 1 MiB",
            Some(LARGE_PIECE),
            false,
            false,
        ),
        ring_blocking("ringwire blocking, chunked", None, true, false),
        ring_blocking("ringwire blocking, send_file", None, false, true),
        ring_async("ringwire tokio", None, false),
        ring_async("ringwire tokio, reserve 1 MiB", Some(LARGE_PIECE), false),
        ring_async("ringwire tokio, send_file", None, true),
        Box::new(ReqwestBlocking {
            client: reqwest::blocking::Client::new(),
        }),
        reqwest("reqwest", ReqwestBody::Stream),
        reqwest("reqwest, Body::from(File)", ReqwestBody::FromFile),
        Box::new(Hyper {
            runtime: runtime(),
            sender: None,
        }),
        Box::new(Curl {
            name: "curl -T",
            args: &["-T"],
            at: "",
        }),
        Box::new(Curl {
            name: "curl --data-binary @",
            args: &["-X", "PUT", "--data-binary"],
            at: "@",
        }),
    ]
}

/// nginx in the foreground, one process, storing `PUT`s under a private
/// directory; killed by pid, and its directory removed, when dropped.
struct Nginx {
    process: ringwire_testkit::Nginx,
    dir: PathBuf,
    addr: SocketAddr,
}

impl Nginx {
    fn start(cpu: Option<&str>) -> Nginx {
        let port = TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let shm = Path::new("/dev/shm");
        let base = if shm.is_dir() {
            shm.to_path_buf()
        } else {
            std::env::temp_dir()
        };
        let dir = base.join(format!("ringwire-upload-nginx-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("root/sink")).unwrap();
        let d = dir.display();
        // The body temp files and the root on one file system: a stored
        // body is renamed into place, not copied.
        let http = format!(
            "    keepalive_timeout 600s;
    keepalive_requests 100000;
    server {{
        listen 127.0.0.1:{port};
        root {d}/root;
        location /sink/ {{
            dav_methods PUT;
            client_max_body_size 0;
            client_body_buffer_size 1m;
        }}
    }}"
        );
        let process = ringwire_testkit::Nginx::start(&dir, &http, port, cpu);
        Nginx {
            process,
            dir,
            addr: SocketAddr::from(([127, 0, 0, 1], port)),
        }
    }

    /// nginx's CPU time so far (one process, one thread).
    fn cpu(&self) -> Duration {
        let stat = std::fs::read_to_string(format!("/proc/{}/schedstat", self.process.pid()))
            .expect("nginx's schedstat");
        let nanos = stat.split_whitespace().next().unwrap().parse().unwrap();
        Duration::from_nanos(nanos)
    }

    /// The last upload was stored whole: checks, and removes it.
    fn check_stored(&self, len: u64, client: &str) {
        let path = self.dir.join("root").join(&SINK_PATH[1..]);
        let stored = std::fs::metadata(&path)
            .unwrap_or_else(|e| panic!("{client}: nothing stored: {e}"))
            .len();
        assert_eq!(stored, len, "{client}: stored {stored} of {len} bytes");
        std::fs::remove_file(&path).unwrap();
    }
}

impl Drop for Nginx {
    fn drop(&mut self) {
        self.process.stop();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// The source file, removed when dropped.
struct TempFile(PathBuf);

impl TempFile {
    fn write(len: u64, pattern: &[u8]) -> TempFile {
        let path = std::env::temp_dir().join(format!("ringwire-upload-{}.bin", std::process::id()));
        let file = TempFile(path);
        let mut out = io::BufWriter::new(std::fs::File::create(&file.0).unwrap());
        let mut left = len;
        while left > 0 {
            let n = pattern
                .len()
                .min(usize::try_from(left).unwrap_or(usize::MAX));
            out.write_all(&pattern[..n]).unwrap();
            left -= n as u64;
        }
        out.into_inner().unwrap().sync_all().unwrap();
        file
    }
}

impl Drop for TempFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// What the kernel accounts to this process's threads, live and ended, and
/// to its children that ended and were waited for (curl).
#[derive(Clone, Copy)]
struct Usage {
    /// User and system time.
    cpu: Duration,
    /// User time alone.
    user: Duration,
    /// Context switches, voluntary (waits) and not.
    switches: i64,
}

impl Usage {
    fn now() -> Usage {
        let of = |who| {
            // SAFETY: `rusage` is plain data that all zeroes make valid, and
            // `getrusage` writes only into the one it is given.
            let usage = unsafe {
                let mut usage: libc::rusage = std::mem::zeroed();
                assert_eq!(libc::getrusage(who, &mut usage), 0, "getrusage");
                usage
            };
            let tv = |t: libc::timeval| {
                Duration::from_secs(t.tv_sec as u64) + Duration::from_micros(t.tv_usec as u64)
            };
            Usage {
                cpu: tv(usage.ru_utime) + tv(usage.ru_stime),
                user: tv(usage.ru_utime),
                switches: usage.ru_nvcsw + usage.ru_nivcsw,
            }
        };
        let (own, children) = (of(libc::RUSAGE_SELF), of(libc::RUSAGE_CHILDREN));
        Usage {
            cpu: own.cpu + children.cpu,
            user: own.user + children.user,
            switches: own.switches + children.switches,
        }
    }

    /// What was spent since `earlier`.
    fn since(self, earlier: Usage) -> Usage {
        Usage {
            cpu: self.cpu - earlier.cpu,
            user: self.user - earlier.user,
            switches: self.switches - earlier.switches,
        }
    }
}

/// One upload's figures.
struct Sample {
    mib_s: f64,
    cpu_s_gib: f64,
    user_s_gib: f64,
    /// The client's and nginx's CPU time together.
    both_s_gib: f64,
    switches_mib: f64,
    sink_busy: f64,
}

fn env_or<T: std::str::FromStr>(name: &str, default: T) -> T {
    match std::env::var(name) {
        Ok(v) => v
            .parse()
            .unwrap_or_else(|_| panic!("{name}={v}: not a number")),
        Err(_) => default,
    }
}

/// `UPLOAD_CPUS`: the client's core and the sink's, or `none`.
fn cpus() -> Option<(String, String)> {
    let spec = std::env::var("UPLOAD_CPUS").unwrap_or_else(|_| "1,0".to_owned());
    if spec == "none" {
        return None;
    }
    let (client, sink) = spec
        .split_once(',')
        .expect("UPLOAD_CPUS=CLIENT,SINK or none");
    Some((client.to_owned(), sink.to_owned()))
}

/// Pins this process (its only thread so far: every later thread inherits)
/// to `cpu`.
fn pin_self(cpu: &str) {
    let status = Command::new("taskset")
        .args(["-p", "-c", cpu, &std::process::id().to_string()])
        .stdout(Stdio::null())
        .status()
        .expect("taskset is installed");
    assert!(status.success(), "taskset -p -c {cpu}");
}

fn machine() {
    println!("Machine:\n");
    println!("```");
    if let Ok(out) = Command::new("lscpu").output() {
        for line in String::from_utf8_lossy(&out.stdout).lines().take(10) {
            println!("{line}");
        }
    }
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    println!("load average: {}", load.trim_end());
    println!("```");
}

fn main() {
    let mib: u64 = env_or("UPLOAD_MIB", 256);
    let rounds: usize = env_or("UPLOAD_ROUNDS", 5);
    let only: Vec<String> = std::env::var("UPLOAD_ONLY")
        .map(|v| v.split(';').map(str::to_owned).collect())
        .unwrap_or_default();
    let sources = std::env::var("UPLOAD_SOURCE").ok();
    let cpus = cpus();
    if let Some((client, _)) = &cpus {
        pin_self(client);
    }
    machine();
    let nginx = Nginx::start(cpus.as_ref().map(|(_, sink)| sink.as_str()));
    let pattern: &'static [u8] = Box::leak(
        (0..PATTERN_LEN)
            .map(|i| (i % 251) as u8)
            .collect::<Vec<_>>()
            .into(),
    );
    let len = mib << 20;
    let file = TempFile::write(len, pattern);
    let job = Job {
        len,
        pattern,
        file: file.0.clone(),
        url: format!("http://{}{SINK_PATH}", nginx.addr),
        addr: nginx.addr,
    };
    let mut clients = clients(nginx.addr);
    let rows: Vec<(usize, Source)> = [Source::Memory, Source::File]
        .into_iter()
        .flat_map(|source| {
            let clients = &clients;
            (0..clients.len())
                .filter(move |&i| clients[i].takes(source))
                .map(move |i| (i, source))
        })
        .filter(|&(i, source)| {
            let name = clients[i].name();
            (only.is_empty() || only.iter().any(|o| o == name))
                && sources.as_deref().is_none_or(|s| s == source.name())
        })
        .collect();
    match &cpus {
        Some((client, sink)) => println!(
            "\n{mib} MiB per upload, {rounds} rounds after 1 warm-up, client on CPU {client}, \
             nginx (pid {}) on CPU {sink}\n",
            nginx.process.pid()
        ),
        None => println!(
            "\n{mib} MiB per upload, {rounds} rounds after 1 warm-up, unpinned, nginx pid {}\n",
            nginx.process.pid()
        ),
    }
    let mut samples: Vec<Vec<Sample>> = rows.iter().map(|_| Vec::new()).collect();
    for round in 0..=rounds {
        for k in 0..rows.len() {
            let row = (k + round) % rows.len();
            let (i, source) = rows[row];
            let client = &mut clients[i];
            let (usage, sink, start) = (Usage::now(), nginx.cpu(), Instant::now());
            let status = client.upload(&job, source);
            let wall = start.elapsed();
            let (usage, sink) = (Usage::now().since(usage), nginx.cpu() - sink);
            assert!(
                matches!(status, 201 | 204),
                "{}: status {status}",
                client.name()
            );
            nginx.check_stored(len, client.name());
            let gib = len as f64 / f64::from(1 << 30);
            if round > 0 {
                samples[row].push(Sample {
                    mib_s: mib as f64 / wall.as_secs_f64(),
                    cpu_s_gib: usage.cpu.as_secs_f64() / gib,
                    user_s_gib: usage.user.as_secs_f64() / gib,
                    both_s_gib: (usage.cpu + sink).as_secs_f64() / gib,
                    switches_mib: usage.switches as f64 / mib as f64,
                    sink_busy: sink.as_secs_f64() / wall.as_secs_f64(),
                });
            }
        }
        if round == 0 {
            println!("(warm-up done)");
        }
    }
    report(&rows, &clients, &samples);
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    println!("\nload average at the end: {}", load.trim_end());
}

/// A row's medians (and the throughput's range) over the rounds.
struct Figures {
    mib_s: f64,
    min: f64,
    max: f64,
    cpu_s_gib: f64,
    user_s_gib: f64,
    /// The client's and nginx's CPU time together.
    both_s_gib: f64,
    switches_mib: f64,
    sink_busy: f64,
}

impl Figures {
    fn of(samples: &[Sample]) -> Figures {
        let median = |f: fn(&Sample) -> f64| {
            let mut v: Vec<f64> = samples.iter().map(f).collect();
            v.sort_by(f64::total_cmp);
            let n = v.len();
            if n % 2 == 1 {
                v[n / 2]
            } else {
                (v[n / 2 - 1] + v[n / 2]) / 2.0
            }
        };
        let rates = samples.iter().map(|s| s.mib_s);
        Figures {
            mib_s: median(|s| s.mib_s),
            min: rates.clone().fold(f64::INFINITY, f64::min),
            max: rates.fold(0.0, f64::max),
            cpu_s_gib: median(|s| s.cpu_s_gib),
            user_s_gib: median(|s| s.user_s_gib),
            both_s_gib: median(|s| s.both_s_gib),
            switches_mib: median(|s| s.switches_mib),
            sink_busy: median(|s| s.sink_busy),
        }
    }
}

fn report(rows: &[(usize, Source)], clients: &[Box<dyn Uploader>], samples: &[Vec<Sample>]) {
    let figures: Vec<Figures> = samples.iter().map(|s| Figures::of(s)).collect();
    // The CPU ratio is to ringwire blocking's with the same source.
    let base = |source: Source| {
        rows.iter()
            .position(|&(i, s)| s == source && clients[i].name() == "ringwire blocking")
            .map(|row| figures[row].cpu_s_gib)
    };
    println!(
        "| client | source | median MiB/s | min-max MiB/s | client CPU s/GiB | of it user | \
         CPU vs ringwire blocking | client + nginx CPU s/GiB | context switches / MiB | \
         nginx busy |"
    );
    println!("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|");
    for (f, &(i, source)) in figures.iter().zip(rows) {
        let ratio = base(source).map_or("-".to_owned(), |b| format!("{:.2}x", f.cpu_s_gib / b));
        println!(
            "| {} | {} | {:.0} | {:.0}-{:.0} | {:.3} | {:.3} | {ratio} | {:.3} | {:.1} | {:.0}% |",
            clients[i].name(),
            source.name(),
            f.mib_s,
            f.min,
            f.max,
            f.cpu_s_gib,
            f.user_s_gib,
            f.both_s_gib,
            f.switches_mib,
            f.sink_busy * 100.0
        );
    }
}
