//! HTTP client round trips over loopback (issue 7): ringwire-client
//! (blocking and tokio) against reqwest (no TLS) and hyper's
//! connection-level clients, each on one keep-alive connection to the same
//! ringwire server (its own thread and runtime); over HTTP/1.1, then over
//! HTTP/2 with prior knowledge (the `h2` rows).
//!
//! The exchange is the issue's REST call: a POST with a ~100 B JSON body and
//! four header fields, answered `200` with a small JSON body. ringwire reads
//! the answer in place in its receive ring; reqwest and hyper collect it
//! into `Bytes`, as their users do.
//!
//! After criterion's runs, a latency pass prints p50 / p99, requests per
//! second and the client's CPU time per request, from sequential requests
//! timed one by one. reqwest's blocking client runs on a thread of its own
//! besides the caller's, so its CPU is the process's less the server's.
//!
//! On a small VM an idle vCPU takes ~100 µs to wake, which swamps a
//! loopback round trip when client and server sit on different cores; pin
//! the whole process to one core so every hand-off is a plain context
//! switch and the numbers measure work:
//!
//! `cargo bench -p ringwire-bench --bench client --no-run`, then
//! `taskset -c 1 target/release/deps/client-* --bench`

use std::hint::black_box;
use std::net::SocketAddr;
use std::time::{Duration, Instant};

use bytes::Bytes;
use criterion::Criterion;
use http_body_util::{BodyExt as _, Full};
use ringwire_client::{blocking, tokio as ring_async, ClientConfig, Http2, RequestBuffer, Url};
use ringwire_server::{Body, Handler, Request, Response, Server, ServerConfig, Threading};

const BODY: &[u8] = br#"{"symbol":"RING","side":"buy","qty":100,"price":"12.50","client_order_id":"c-0000000001","tif":"gtc"}"#;
const ANSWER: &[u8] =
    br#"{"id":123456789,"status":"accepted","filled":0,"remaining":100,"ts":1700000000123}"#;
const HEADERS: [(&str, &str); 4] = [
    ("content-type", "application/json"),
    ("accept", "application/json"),
    ("authorization", "Bearer 0123456789abcdef0123456789abcdef"),
    ("x-request-id", "7f9c2ba4-e88f-4f1a-9e2d-3b1c5d6e7f80"),
];

/// The REST call, written into `buffer` by ringwire's builder.
fn rest_call<'a>(buffer: &mut RequestBuffer, url: &'a Url) -> ringwire_client::Request<'a> {
    let mut request = buffer.request("POST", url).unwrap().headers().unwrap();
    for (name, value) in HEADERS {
        request = request.header(name, value).unwrap();
    }
    request.body(BODY).unwrap()
}

struct Orders;

impl Handler for Orders {
    async fn call(&self, _request: &Request<'_>) -> Response {
        Response::new(200)
            .header("content-type", "application/json")
            .body(Body::Static(ANSWER))
    }
}

/// One ringwire server thread with one worker: the client gets the other core.
fn server() -> SocketAddr {
    let mut config = ServerConfig {
        addr: "127.0.0.1:0".parse().expect("addr"),
        threading: Threading::Shared(1),
        ..ServerConfig::default()
    };
    // Connections wait idle between the runs of the other clients.
    config.timeouts.idle = Duration::from_secs(600);
    let server = Server::bind(config).expect("bind");
    let addr = server.local_addr();
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("runtime");
        runtime.block_on(server.serve(Orders)).expect("serve");
    });
    addr
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime")
}

/// A client that can do `n` round trips, returning the time each took.
trait Round {
    fn name(&self) -> &'static str;
    /// Runs `n` round trips; `each` gets each one's duration.
    fn run(&mut self, n: u64, each: &mut dyn FnMut(Duration));
    /// The name (as `/proc` truncates it) of a thread of the client's own
    /// besides the caller, whose CPU time is the client's too.
    fn helper_thread(&self) -> Option<&'static str> {
        None
    }
}

struct RingBlocking {
    name: &'static str,
    client: blocking::Client,
    buffer: RequestBuffer,
    url: Url,
}

impl Round for RingBlocking {
    fn name(&self) -> &'static str {
        self.name
    }
    fn run(&mut self, n: u64, each: &mut dyn FnMut(Duration)) {
        for _ in 0..n {
            let start = Instant::now();
            let request = rest_call(&mut self.buffer, &self.url);
            let mut response = self.client.send(&mut self.buffer, &request).unwrap();
            assert_eq!(response.status(), 200);
            while let Some(chunk) = response.chunk().unwrap() {
                black_box(chunk);
            }
            each(start.elapsed());
        }
    }
}

/// ringwire's tokio client, one request at a time.
struct RingAsync<S> {
    name: &'static str,
    runtime: tokio::runtime::Runtime,
    sender: S,
    buffer: RequestBuffer,
    url: Url,
}

impl RingAsync<std::sync::Arc<ring_async::Client>> {
    fn new(name: &'static str, url: Url, config: ClientConfig) -> Self {
        RingAsync {
            name,
            runtime: runtime(),
            sender: std::sync::Arc::new(ring_async::Client::new(config)),
            buffer: RequestBuffer::new().unwrap(),
            url,
        }
    }
}

impl<S: RingSend> Round for RingAsync<S> {
    fn name(&self) -> &'static str {
        self.name
    }
    fn run(&mut self, n: u64, each: &mut dyn FnMut(Duration)) {
        let (sender, buffer, url) = (&self.sender, &mut self.buffer, &self.url);
        self.runtime.block_on(async {
            for _ in 0..n {
                let start = Instant::now();
                sender.call(buffer, url).await;
                each(start.elapsed());
            }
        });
    }
}

struct Reqwest {
    name: &'static str,
    runtime: tokio::runtime::Runtime,
    client: reqwest::Client,
    url: String,
}

impl Round for Reqwest {
    fn name(&self) -> &'static str {
        self.name
    }
    fn run(&mut self, n: u64, each: &mut dyn FnMut(Duration)) {
        let (client, url) = (&self.client, &self.url);
        self.runtime.block_on(async {
            for _ in 0..n {
                let start = Instant::now();
                let mut request = client.post(url);
                for (name, value) in HEADERS {
                    request = request.header(name, value);
                }
                let response = request.body(BODY).send().await.unwrap();
                assert_eq!(response.status(), 200);
                black_box(response.bytes().await.unwrap());
                each(start.elapsed());
            }
        });
    }
}

/// reqwest's blocking API: requests handed to a runtime on a thread of its
/// own, which the calling thread waits for.
struct ReqwestBlocking {
    client: reqwest::blocking::Client,
    url: String,
}

impl Round for ReqwestBlocking {
    fn name(&self) -> &'static str {
        "reqwest (blocking)"
    }
    fn helper_thread(&self) -> Option<&'static str> {
        Some("reqwest-interna")
    }
    fn run(&mut self, n: u64, each: &mut dyn FnMut(Duration)) {
        for _ in 0..n {
            let start = Instant::now();
            let mut request = self.client.post(&self.url);
            for (name, value) in HEADERS {
                request = request.header(name, value);
            }
            let response = request.body(BODY).send().unwrap();
            assert_eq!(response.status(), 200);
            black_box(response.bytes().unwrap());
            each(start.elapsed());
        }
    }
}

struct HyperConn {
    runtime: tokio::runtime::Runtime,
    addr: SocketAddr,
    /// Opened on first use, and again if the server closed it.
    sender: Option<hyper::client::conn::http1::SendRequest<Full<Bytes>>>,
    uri: hyper::Uri,
    host: String,
}

impl HyperConn {
    fn new(addr: SocketAddr) -> Self {
        HyperConn {
            runtime: runtime(),
            addr,
            sender: None,
            uri: "/orders".parse().unwrap(),
            host: addr.to_string(),
        }
    }
}

async fn hyper_connect(addr: SocketAddr) -> hyper::client::conn::http1::SendRequest<Full<Bytes>> {
    let stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    stream.set_nodelay(true).unwrap();
    let io = hyper_util::rt::TokioIo::new(stream);
    let (sender, conn) = hyper::client::conn::http1::handshake(io).await.unwrap();
    tokio::spawn(conn);
    sender
}

/// The REST call for hyper: `host` for HTTP/1.1, where HTTP/2 sends the URI's authority.
fn hyper_request(uri: &hyper::Uri, host: Option<&str>) -> hyper::Request<Full<Bytes>> {
    let mut request = hyper::Request::post(uri.clone());
    if let Some(host) = host {
        request = request.header("host", host);
    }
    for (name, value) in HEADERS {
        request = request.header(name, value);
    }
    request.body(Full::new(Bytes::from_static(BODY))).unwrap()
}

/// Checks hyper's answer and collects its body, as its users do.
async fn read_hyper_answer(response: hyper::Response<hyper::body::Incoming>) {
    assert_eq!(response.status(), 200);
    black_box(response.into_body().collect().await.unwrap().to_bytes());
}

/// hyper's connection-level HTTP/2 client.
struct HyperH2 {
    runtime: tokio::runtime::Runtime,
    addr: SocketAddr,
    /// Opened on first use, and again if the server closed it.
    sender: Option<hyper::client::conn::http2::SendRequest<Full<Bytes>>>,
    /// Absolute: HTTP/2 sends its scheme and authority.
    uri: hyper::Uri,
}

async fn hyper_h2_connect(
    addr: SocketAddr,
) -> hyper::client::conn::http2::SendRequest<Full<Bytes>> {
    let stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    stream.set_nodelay(true).unwrap();
    let io = hyper_util::rt::TokioIo::new(stream);
    let executor = hyper_util::rt::TokioExecutor::new();
    let (sender, conn) = hyper::client::conn::http2::handshake(executor, io)
        .await
        .unwrap();
    tokio::spawn(conn);
    sender
}

impl Round for HyperH2 {
    fn name(&self) -> &'static str {
        "hyper (conn::http2) h2"
    }
    fn run(&mut self, n: u64, each: &mut dyn FnMut(Duration)) {
        let (slot, uri, addr) = (&mut self.sender, &self.uri, self.addr);
        self.runtime.block_on(async {
            if slot.as_ref().is_none_or(|s| s.is_closed()) {
                *slot = Some(hyper_h2_connect(addr).await);
            }
            let Some(sender) = slot.as_mut() else {
                return;
            };
            for _ in 0..n {
                let start = Instant::now();
                sender.ready().await.unwrap();
                let response = sender.send_request(hyper_request(uri, None)).await;
                read_hyper_answer(response.unwrap()).await;
                each(start.elapsed());
            }
        });
    }
}

impl Round for HyperConn {
    fn name(&self) -> &'static str {
        "hyper (conn::http1)"
    }
    fn run(&mut self, n: u64, each: &mut dyn FnMut(Duration)) {
        let (slot, uri, host, addr) = (&mut self.sender, &self.uri, &self.host, self.addr);
        self.runtime.block_on(async {
            if slot.as_ref().is_none_or(|s| s.is_closed()) {
                *slot = Some(hyper_connect(addr).await);
            }
            let Some(sender) = slot.as_mut() else {
                return;
            };
            for _ in 0..n {
                let start = Instant::now();
                sender.ready().await.unwrap();
                let response = sender.send_request(hyper_request(uri, Some(host))).await;
                read_hyper_answer(response.unwrap()).await;
                each(start.elapsed());
            }
        });
    }
}

fn clients(addr: SocketAddr) -> Vec<Box<dyn Round>> {
    let url = Url::parse(&format!("http://{addr}/orders")).unwrap();
    let h2 = ClientConfig {
        http2: Http2::PriorKnowledge,
        ..ClientConfig::default()
    };
    let own_h2 = ClientConfig {
        http2_multiplex: false,
        ..h2
    };
    vec![
        Box::new(RingBlocking {
            name: "ringwire blocking",
            client: blocking::Client::default(),
            buffer: RequestBuffer::new().unwrap(),
            url: url.clone(),
        }),
        Box::new(RingAsync::new(
            "ringwire tokio",
            url.clone(),
            ClientConfig::default(),
        )),
        Box::new(HyperConn::new(addr)),
        Box::new(Reqwest {
            name: "reqwest",
            runtime: runtime(),
            client: reqwest::Client::builder()
                .tcp_nodelay(true)
                .build()
                .unwrap(),
            url: format!("http://{addr}/orders"),
        }),
        Box::new(ReqwestBlocking {
            client: reqwest::blocking::Client::builder()
                .tcp_nodelay(true)
                .build()
                .unwrap(),
            url: format!("http://{addr}/orders"),
        }),
        Box::new(RingBlocking {
            name: "ringwire blocking h2",
            client: blocking::Client::new(h2),
            buffer: RequestBuffer::new().unwrap(),
            url: url.clone(),
        }),
        // On the origin's shared connection (its task sorts the frames, the request's
        // task waits for its stream), and on a connection of its own.
        Box::new(RingAsync::new("ringwire tokio h2", url.clone(), h2)),
        Box::new(RingAsync::new("ringwire tokio h2 (own)", url, own_h2)),
        Box::new(HyperH2 {
            runtime: runtime(),
            addr,
            sender: None,
            uri: format!("http://{addr}/orders").parse().unwrap(),
        }),
        Box::new(Reqwest {
            name: "reqwest h2",
            runtime: runtime(),
            client: reqwest::Client::builder()
                .tcp_nodelay(true)
                .http2_prior_knowledge()
                .build()
                .unwrap(),
            url: format!("http://{addr}/orders"),
        }),
    ]
}

fn round_trips(c: &mut Criterion, clients: &mut [Box<dyn Round>]) {
    let mut group = c.benchmark_group("client_round_trip");
    for client in clients.iter_mut() {
        group.bench_function(client.name(), |b| {
            b.iter_custom(|iters| {
                let start = Instant::now();
                client.run(iters, &mut |_| {});
                start.elapsed()
            });
        });
    }
    group.finish();
}

/// CPU time this thread has run, from `/proc/thread-self/schedstat` (in
/// nanoseconds, unlike the 10 ms ticks of `stat`).
fn thread_cpu() -> Option<Duration> {
    let stat = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    let nanos = stat.split_whitespace().next()?.parse().ok()?;
    Some(Duration::from_nanos(nanos))
}

/// CPU time of this process's threads called `name`.
fn threads_cpu(name: &str) -> Option<Duration> {
    let mut total = Duration::ZERO;
    for task in std::fs::read_dir("/proc/self/task").ok()?.flatten() {
        let path = task.path();
        let comm = std::fs::read_to_string(path.join("comm")).unwrap_or_default();
        if comm.trim_end() == name {
            let stat = std::fs::read_to_string(path.join("schedstat")).ok()?;
            total += Duration::from_nanos(stat.split_whitespace().next()?.parse().ok()?);
        }
    }
    Some(total)
}

/// Sequential round trips timed one by one: p50, p99, requests per second,
/// and the client's own CPU time per request. Every client here runs on
/// the calling thread (the async ones on a current-thread runtime), so that
/// thread's CPU time is the client's whole cost, kernel time included; the
/// server's is not in it.
fn latency(clients: &mut [Box<dyn Round>]) {
    const WARM: u64 = 2_000;
    const N: u64 = 20_000;
    println!(
        "\n{:<22} {:>9} {:>9} {:>10} {:>14}",
        "client", "p50 µs", "p99 µs", "req/s", "client CPU µs"
    );
    for client in clients.iter_mut() {
        client.run(WARM, &mut |_| {});
        let mut times = Vec::with_capacity(N as usize);
        let helper_thread = client.helper_thread();
        let client_cpu = || {
            let helper = helper_thread.map_or(Some(Duration::ZERO), threads_cpu);
            Some(thread_cpu()? + helper?)
        };
        let (start, cpu) = (Instant::now(), client_cpu());
        client.run(N, &mut |d| times.push(d));
        let total = start.elapsed();
        let cpu = client_cpu().zip(cpu).map_or(f64::NAN, |(end, start)| {
            (end - start).as_secs_f64() * 1e6 / N as f64
        });
        times.sort_unstable();
        let at = |q: f64| times[((times.len() - 1) as f64 * q) as usize].as_secs_f64() * 1e6;
        println!(
            "{:<22} {:>9.1} {:>9.1} {:>10.0} {:>14.2}",
            client.name(),
            at(0.50),
            at(0.99),
            N as f64 / total.as_secs_f64(),
            cpu
        );
    }
}

/// Tasks sending at once in [`shared_connection`].
const TASKS: usize = 16;

/// A client's many requests at once: `TASKS` tasks on a current-thread runtime, each
/// sending `per_task` REST calls one after another; every call's time.
type Spread = Box<dyn FnMut(&tokio::runtime::Runtime, u64) -> Vec<Duration>>;

/// Runs `TASKS` copies of `task(per_task)` at once on `runtime`; the times they report.
fn spread<F, T>(runtime: &tokio::runtime::Runtime, per_task: u64, task: T) -> Vec<Duration>
where
    F: std::future::Future<Output = Vec<Duration>> + Send + 'static,
    T: Fn(u64) -> F,
{
    runtime.block_on(async {
        let tasks: Vec<_> = (0..TASKS).map(|_| tokio::spawn(task(per_task))).collect();
        let mut times = Vec::new();
        for handle in tasks {
            times.extend(handle.await.unwrap());
        }
        times
    })
}

/// ringwire's two ways for many tasks to send the REST call and read its answer.
trait RingSend: Clone + Send + Sync + 'static {
    fn call<'a>(
        &'a self,
        buffer: &'a mut RequestBuffer,
        url: &'a Url,
    ) -> impl std::future::Future<Output = ()> + Send + 'a;
}

/// `RingSend` for a type whose `send` answers with a response read by `chunk` (the
/// client's and the shared connection's are different types, alike in use).
macro_rules! ring_send {
    ($sender:ty) => {
        impl RingSend for $sender {
            fn call<'a>(
                &'a self,
                buffer: &'a mut RequestBuffer,
                url: &'a Url,
            ) -> impl std::future::Future<Output = ()> + Send + 'a {
                async move {
                    let request = rest_call(buffer, url);
                    let mut response = self.send(buffer, &request).await.unwrap();
                    assert_eq!(response.status(), 200);
                    while let Some(chunk) = response.chunk().await.unwrap() {
                        black_box(chunk);
                    }
                }
            }
        }
    };
}

ring_send!(ring_async::Http2Connection);
ring_send!(std::sync::Arc<ring_async::Client>);

/// `TASKS` tasks sending the REST call through `sender` at once.
fn ring_spread(sender: impl RingSend, url: Url) -> Spread {
    Box::new(move |runtime, per_task| {
        spread(runtime, per_task, |per_task| {
            let (sender, url) = (sender.clone(), url.clone());
            async move {
                let mut buffer = RequestBuffer::new().unwrap();
                let mut times = Vec::with_capacity(per_task as usize);
                for _ in 0..per_task {
                    let start = Instant::now();
                    sender.call(&mut buffer, &url).await;
                    times.push(start.elapsed());
                }
                times
            }
        })
    })
}

/// The HTTP/2 clients that multiplex: ringwire's client (on the origin's shared
/// connection), a shared connection it opened, and the client with connections of its
/// own that carry one exchange at a time (it opens one per exchange under way); the
/// client again with a keepalive.
fn spreads(addr: SocketAddr, runtime: &tokio::runtime::Runtime) -> Vec<(&'static str, Spread)> {
    let url = Url::parse(&format!("http://{addr}/orders")).unwrap();
    let h2 = ClientConfig {
        http2: Http2::PriorKnowledge,
        ..ClientConfig::default()
    };
    let client = std::sync::Arc::new(ring_async::Client::new(h2));
    let shared = runtime.block_on(client.http2_connection(&url)).unwrap();
    let ringwire_shared = ring_spread(shared, url.clone());
    let ringwire_client = ring_spread(client, url.clone());
    // A keepalive's clock runs on every frame the connection reads.
    let keepalive = ClientConfig {
        http2_keepalive: Some(Duration::from_secs(30)),
        ..h2
    };
    let keepalive = std::sync::Arc::new(ring_async::Client::new(keepalive));
    let ringwire_keepalive = ring_spread(keepalive, url.clone());
    let own = ClientConfig {
        http2_multiplex: false,
        ..h2
    };
    let ringwire_own = ring_spread(std::sync::Arc::new(ring_async::Client::new(own)), url);
    let sender = runtime.block_on(hyper_h2_connect(addr));
    let uri: hyper::Uri = format!("http://{addr}/orders").parse().unwrap();
    let hyper: Spread = Box::new(move |runtime, per_task| {
        spread(runtime, per_task, |per_task| {
            let (mut sender, uri) = (sender.clone(), uri.clone());
            async move {
                let mut times = Vec::with_capacity(per_task as usize);
                for _ in 0..per_task {
                    let start = Instant::now();
                    sender.ready().await.unwrap();
                    let response = sender.send_request(hyper_request(&uri, None)).await;
                    read_hyper_answer(response.unwrap()).await;
                    times.push(start.elapsed());
                }
                times
            }
        })
    });
    let reqwest_client = reqwest::Client::builder()
        .tcp_nodelay(true)
        .http2_prior_knowledge()
        .build()
        .unwrap();
    let reqwest_url = format!("http://{addr}/orders");
    let reqwest: Spread = Box::new(move |runtime, per_task| {
        spread(runtime, per_task, |per_task| {
            let (client, url) = (reqwest_client.clone(), reqwest_url.clone());
            async move {
                let mut times = Vec::with_capacity(per_task as usize);
                for _ in 0..per_task {
                    let start = Instant::now();
                    let mut request = client.post(&url);
                    for (name, value) in HEADERS {
                        request = request.header(name, value);
                    }
                    let response = request.body(BODY).send().await.unwrap();
                    assert_eq!(response.status(), 200);
                    black_box(response.bytes().await.unwrap());
                    times.push(start.elapsed());
                }
                times
            }
        })
    });
    vec![
        ("ringwire tokio h2", ringwire_client),
        ("ringwire shared h2", ringwire_shared),
        ("ringwire tokio h2 keepalive", ringwire_keepalive),
        ("ringwire tokio h2 (own)", ringwire_own),
        ("hyper (conn::http2) h2", hyper),
        ("reqwest h2", reqwest),
    ]
}

/// `TASKS` tasks sending at once over HTTP/2, each client on one runtime thread (the
/// calling one): requests per second, each request's p50 and p99, and the client's CPU
/// time per request. Three rounds per client, alternating; the median round's figures.
fn shared_connection(addr: SocketAddr) {
    const PER_TASK: u64 = 1_000;
    const ROUNDS: usize = 3;
    let runtime = runtime();
    let mut clients = spreads(addr, &runtime);
    let mut results: Vec<Vec<(f64, f64, f64, f64)>> = vec![Vec::new(); clients.len()];
    for (_, run) in &mut clients {
        run(&runtime, PER_TASK / 10);
    }
    for _ in 0..ROUNDS {
        for ((_, run), rounds) in clients.iter_mut().zip(&mut results) {
            let (start, cpu) = (Instant::now(), thread_cpu());
            let mut times = run(&runtime, PER_TASK);
            let total = start.elapsed();
            let n = times.len() as f64;
            let cpu = thread_cpu().zip(cpu).map_or(f64::NAN, |(end, start)| {
                (end - start).as_secs_f64() * 1e6 / n
            });
            times.sort_unstable();
            let at = |q: f64| times[((times.len() - 1) as f64 * q) as usize].as_secs_f64() * 1e6;
            rounds.push((n / total.as_secs_f64(), at(0.5), at(0.99), cpu));
        }
    }
    println!(
        "\n{TASKS} tasks at once, {} requests a round, median of {ROUNDS} rounds",
        PER_TASK * TASKS as u64
    );
    println!(
        "{:<26} {:>10} {:>9} {:>9} {:>14}",
        "client", "req/s", "p50 µs", "p99 µs", "client CPU µs"
    );
    for ((name, _), rounds) in clients.iter().zip(&mut results) {
        rounds.sort_by(|a, b| a.0.total_cmp(&b.0));
        let (rate, p50, p99, cpu) = rounds[ROUNDS / 2];
        println!("{name:<26} {rate:>10.0} {p50:>9.1} {p99:>9.1} {cpu:>14.2}");
    }
}

fn main() {
    let addr = server();
    let mut clients = clients(addr);
    let mut criterion = Criterion::default()
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3))
        .configure_from_args();
    round_trips(&mut criterion, &mut clients);
    criterion.final_summary();
    latency(&mut clients);
    shared_connection(addr);
}
