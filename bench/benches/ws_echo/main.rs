//! Loopback echo over 127.0.0.1 TCP, binary messages, in two parts.
//!
//! 1. **Each library's own client, one connection**: the client sends a
//!    message and waits for its echo from its own library's server, `n`
//!    times in a row (40 B, 1 KiB, 64 KiB); ringwire's blocking client is
//!    measured against ringwire's server as well, and ringwire-client's
//!    socket on a stream of an HTTP/2 connection (RFC 8441).
//! 2. **One load generator, 1 and 64 connections** (`load.rs`): the same
//!    cheap client in front of every server, each connection echoing in a
//!    loop, all connections at once (40 B and 1 KiB).
//! 3. **The same, pipelined**: each connection sends 16 messages in one
//!    write and reads the 16 echoes. tokio-tungstenite and sockudo-ws run
//!    twice here, as their per-message `send` loop (a flush each) and as a
//!    `forward` from their stream into their sink (a flush when no message
//!    is ready), the idiom that batches.
//! 4. **Over HTTP/2** (RFC 8441): the load generator's sockets as the
//!    streams of one HTTP/2 connection (the `h2` crate as client), against
//!    ringwire's server and hyper's with tokio-tungstenite, and against
//!    ringwire's server with a connection per socket; then one socket
//!    echoing beside 127 quiet ones (a connection's default stream limit),
//!    what a page holding many sockets costs the one that talks.
//!
//! All report messages per second and the server's CPU time per message,
//! from the scheduler's accounting of the server's own threads (steady where
//! the rate swings with the machine's load), and the bench thread's: the
//! client's (every client runs on it, the async ones on its current-thread
//! runtime) or the load generator's.
//!
//! Not criterion: on a shared machine, load that comes and goes would fall
//! on whichever library criterion measured at the time. Here each round
//! runs every library in turn, after a warm-up, and the median of the
//! rounds is reported with the spread.
//!
//! ```sh
//! cargo bench -p ringwire-bench --bench ws_echo            # every part
//! cargo bench -p ringwire-bench --bench ws_echo -- http2   # one: own, shared, pipelined, http2
//! ```

mod clients;
mod load;
mod servers;

use std::time::{Duration, Instant};

use clients::{
    Client, FastWebSockets, Nexus, Ringwire, RingwireBlocking, RingwireHttp2, Sockudo, Tungstenite,
};
use load::{Frames, H2Load, Load};
use servers::Running;

/// Message sizes with each library's own client, and round trips per round.
const OWN_CLIENT: [(usize, usize); 3] = [(40, 20_000), (1 << 10, 20_000), (64 << 10, 2_000)];
/// Message sizes with the common load generator, and round trips per round.
const SHARED_CLIENT: [(usize, usize); 2] = [(40, 64_000), (1 << 10, 64_000)];
/// Connection counts with the common load generator.
const CONNECTIONS: [usize; 2] = [1, 64];
/// Part 4's sockets that echo, and sockets beside them that stay quiet.
const OVER_HTTP2: [(usize, usize); 3] = [(1, 0), (64, 0), (1, 127)];
/// Messages each connection sends at once in part 3, and messages per round.
const PIPELINED: (usize, usize) = (16, 320_000);
/// Rounds per size.
const ROUNDS: usize = 7;

/// The servers: all in part 3, the first six in parts 1 and 2.
const SERVERS: [&str; 8] = [
    "ringwire",
    "ringwire-ws, bare",
    "tokio-tungstenite",
    "fastwebsockets",
    "sockudo-ws",
    "nexus-web",
    "tokio-tungstenite, forward",
    "sockudo-ws, forward",
];

fn main() {
    // Every part, or the one the first argument that is no option names.
    let only = std::env::args().skip(1).find(|a| !a.starts_with('-'));
    let runs = |part: &str| only.as_deref().is_none_or(|o| o == part);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let servers: Vec<Running> = SERVERS
        .iter()
        .map(|name| servers::start(name).expect("a server of that name"))
        .collect();
    if runs("own") {
        own_clients(&runtime, &servers);
    }
    if runs("shared") {
        for connections in CONNECTIONS {
            println!("\nThe common load generator, {connections} connection(s):\n");
            shared_client(&runtime, &servers[..6], connections, 1);
        }
    }
    if runs("pipelined") {
        let depth = PIPELINED.0;
        for connections in CONNECTIONS {
            println!("\nThe common load generator, {connections} connection(s), {depth} messages in flight on each:\n");
            shared_client(&runtime, &servers, connections, depth);
        }
    }
    if runs("http2") {
        over_http2(&runtime, servers[0]);
    }
}

/// Part 4: the load generator's sockets on the streams of one HTTP/2 connection, against
/// ringwire's server and hyper's; and against ringwire's server with a connection each.
fn over_http2(runtime: &tokio::runtime::Runtime, ringwire: Running) {
    let hyper = servers::start("hyper + tokio-tungstenite, HTTP/2").expect("hyper's server");
    let names = [
        "ringwire, HTTP/1.1 (a connection each)",
        "ringwire, HTTP/2 (a stream each)",
        "hyper + tokio-tungstenite, HTTP/2",
    ];
    let servers = [ringwire, ringwire, hyper];
    for (sockets, idle) in OVER_HTTP2 {
        let beside = if idle > 0 {
            format!(" beside {idle} quiet ones")
        } else {
            String::new()
        };
        println!("\nOver HTTP/2, {sockets} WebSocket(s){beside} on one connection (HTTP/1.1: a connection each):\n");
        header();
        let mut h1 = Load::connect(runtime, ringwire.addr, sockets);
        let _quiet = Load::connect(runtime, ringwire.addr, idle);
        let mut h2 = [
            H2Load::connect(runtime, ringwire.addr, sockets, idle),
            H2Load::connect(runtime, hyper.addr, sockets, idle),
        ];
        for (size, n) in SHARED_CLIENT {
            let payload: Vec<u8> = (0..size).map(|i| (i % 251) as u8).collect();
            let frames = Frames::new(&payload, 1);
            h1.echo(runtime, &frames, n / 10);
            for load in &mut h2 {
                load.echo(runtime, &frames, n / 10);
            }
            let results = rounds(servers.len(), n, |i| {
                measure(servers[i], || match i {
                    0 => h1.echo(runtime, &frames, n),
                    _ => h2[i - 1].echo(runtime, &frames, n),
                })
            });
            report(&label(size), names.into_iter(), &results);
        }
    }
}

/// Part 1: each library's client against its own server, one connection.
fn own_clients(runtime: &tokio::runtime::Runtime, servers: &[Running]) {
    let [ringwire, _, tungstenite, fastwebsockets, sockudo, nexus, ..] = servers else {
        unreachable!("eight servers")
    };
    let mut contenders: Vec<(&str, Running, Box<dyn Client>)> = vec![
        (
            "ringwire",
            *ringwire,
            Box::new(Ringwire::connect(runtime, ringwire.addr)),
        ),
        (
            "ringwire, blocking client",
            *ringwire,
            Box::new(RingwireBlocking::connect(ringwire.addr)),
        ),
        (
            "ringwire, HTTP/2 stream",
            *ringwire,
            Box::new(RingwireHttp2::connect(runtime, ringwire.addr)),
        ),
        (
            "tokio-tungstenite",
            *tungstenite,
            Box::new(Tungstenite::connect(runtime, tungstenite.addr)),
        ),
        (
            "fastwebsockets",
            *fastwebsockets,
            Box::new(FastWebSockets::connect(runtime, fastwebsockets.addr)),
        ),
        (
            "sockudo-ws",
            *sockudo,
            Box::new(Sockudo::connect(runtime, sockudo.addr)),
        ),
        (
            "nexus-web (blocking)",
            *nexus,
            Box::new(Nexus::connect(nexus.addr)),
        ),
    ];
    println!("Each library's own client, one connection:\n");
    header();
    for (size, n) in OWN_CLIENT {
        let mut payload: Vec<u8> = (0..size).map(|i| (i % 251) as u8).collect();
        for (_, _, client) in &mut contenders {
            client.echo(runtime, &mut payload, n / 10);
        }
        let results = rounds(contenders.len(), n, |i| {
            let (_, server, client) = &mut contenders[i];
            measure(*server, || client.echo(runtime, &mut payload, n))
        });
        let names = contenders.iter().map(|(name, ..)| *name);
        report(&label(size), names, &results);
    }
}

/// Parts 2 and 3: the common load generator against `servers`, with
/// `connections` connections and `depth` messages in flight on each.
fn shared_client(
    runtime: &tokio::runtime::Runtime,
    servers: &[Running],
    connections: usize,
    depth: usize,
) {
    header();
    let mut loads: Vec<Load> = servers
        .iter()
        .map(|s| Load::connect(runtime, s.addr, connections))
        .collect();
    for (size, n) in SHARED_CLIENT {
        let n = if depth > 1 { PIPELINED.1 } else { n };
        let payload: Vec<u8> = (0..size).map(|i| (i % 251) as u8).collect();
        let frames = Frames::new(&payload, depth);
        for load in &mut loads {
            load.echo(runtime, &frames, n / 10);
        }
        let results = rounds(servers.len(), n, |i| {
            measure(servers[i], || loads[i].echo(runtime, &frames, n))
        });
        report(&label(size), SERVERS.into_iter(), &results);
    }
}

/// What one run took: wall time, the server's CPU time and the calling thread's (the
/// client's, or the load generator's).
struct Run {
    wall: Duration,
    server: Duration,
    client: Duration,
}

fn measure(server: Running, run: impl FnOnce()) -> Run {
    let (server_cpu, client_cpu) = (server.cpu_time(), thread_cpu());
    let start = Instant::now();
    run();
    Run {
        wall: start.elapsed(),
        server: server.cpu_time() - server_cpu,
        client: thread_cpu() - client_cpu,
    }
}

/// The calling thread's CPU time, from the scheduler's accounting.
fn thread_cpu() -> Duration {
    let stat = std::fs::read_to_string("/proc/thread-self/schedstat").unwrap_or_default();
    let nanos = stat.split_whitespace().next().and_then(|n| n.parse().ok());
    Duration::from_nanos(nanos.unwrap_or(0))
}

/// Per contender, sorted: messages per second, and server and client CPU per message.
struct Results {
    rates: Vec<f64>,
    cpu_ns: Vec<f64>,
    client_ns: Vec<f64>,
}

/// [`ROUNDS`] rounds, each running every contender in turn once.
fn rounds(contenders: usize, n: usize, mut run: impl FnMut(usize) -> Run) -> Vec<Results> {
    let mut results: Vec<Results> = (0..contenders)
        .map(|_| Results {
            rates: Vec::with_capacity(ROUNDS),
            cpu_ns: Vec::with_capacity(ROUNDS),
            client_ns: Vec::with_capacity(ROUNDS),
        })
        .collect();
    let per_message = |d: Duration| d.as_nanos() as f64 / n as f64;
    for _ in 0..ROUNDS {
        for (i, result) in results.iter_mut().enumerate() {
            let Run {
                wall,
                server,
                client,
            } = run(i);
            result.rates.push(n as f64 / wall.as_secs_f64());
            result.cpu_ns.push(per_message(server));
            result.client_ns.push(per_message(client));
        }
    }
    for result in &mut results {
        result.rates.sort_by(f64::total_cmp);
        result.cpu_ns.sort_by(f64::total_cmp);
        result.client_ns.sort_by(f64::total_cmp);
    }
    results
}

fn header() {
    println!(
        "| message | library | median msg/s | min-max msg/s | vs ringwire | \
         server CPU per message | vs ringwire | client CPU per message |"
    );
    println!("|---|---|---|---|---|---|---|---|");
}

fn report<'a>(size: &str, names: impl Iterator<Item = &'a str>, results: &[Results]) {
    let median = |v: &[f64]| v[ROUNDS / 2];
    let (rate0, cpu0) = (median(&results[0].rates), median(&results[0].cpu_ns));
    for (name, r) in names.zip(results) {
        let (rate, cpu, client) = (median(&r.rates), median(&r.cpu_ns), median(&r.client_ns));
        println!(
            "| {size} | {name} | {rate:.0} | {:.0}-{:.0} | {:.2}x | {cpu:.0} ns | {:.2}x | {client:.0} ns |",
            r.rates[0],
            r.rates[ROUNDS - 1],
            rate / rate0,
            cpu / cpu0,
        );
    }
}

fn label(size: usize) -> String {
    if size >= 1 << 10 {
        format!("{} KiB", size >> 10)
    } else {
        format!("{size} B")
    }
}
