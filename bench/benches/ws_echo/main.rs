//! Loopback echo throughput: a client sends a binary message over
//! 127.0.0.1 TCP and waits for its echo, `n` times in a row, for 40 B,
//! 128 B, 4 KiB and 64 KiB messages. Each library runs its own server
//! (`servers.rs`) and its own client (`clients.rs`); ringwire's blocking
//! client is measured against ringwire's server as well.
//!
//! Not criterion: on a shared machine, load that comes and goes would fall
//! on whichever library criterion measured at the time. Here each round
//! runs every library in turn on its own connection, after a warm-up, and
//! the median of the rounds is reported with the spread.
//!
//! ```sh
//! cargo bench -p ringwire-bench --bench ws_echo
//! ```

mod clients;
mod servers;

use std::time::Instant;

use clients::{Client, FastWebSockets, Nexus, Ringwire, RingwireBlocking, Sockudo, Tungstenite};

/// Message sizes, and round trips per round (about a quarter second).
const SIZES: [(usize, usize); 4] = [
    (40, 20_000),
    (128, 20_000),
    (4 << 10, 10_000),
    (64 << 10, 2_000),
];
/// Rounds per size.
const ROUNDS: usize = 7;

fn main() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let started = |name| servers::start(name).expect("a server of that name");
    let ringwire = started("ringwire");
    let mut contenders: Vec<(&str, Box<dyn Client>)> = vec![
        ("ringwire", Box::new(Ringwire::connect(&runtime, ringwire))),
        (
            "ringwire, blocking client",
            Box::new(RingwireBlocking::connect(ringwire)),
        ),
        (
            "tokio-tungstenite",
            Box::new(Tungstenite::connect(&runtime, started("tokio-tungstenite"))),
        ),
        (
            "fastwebsockets",
            Box::new(FastWebSockets::connect(&runtime, started("fastwebsockets"))),
        ),
        (
            "sockudo-ws",
            Box::new(Sockudo::connect(&runtime, started("sockudo-ws"))),
        ),
        (
            "nexus-web (blocking)",
            Box::new(Nexus::connect(started("nexus-web"))),
        ),
    ];
    println!("| message | library | median msg/s | min-max msg/s | vs ringwire |");
    println!("|---|---|---|---|---|");
    for (size, n) in SIZES {
        let mut payload: Vec<u8> = (0..size).map(|i| (i % 251) as u8).collect();
        for (_, client) in &mut contenders {
            client.echo(&runtime, &mut payload, n / 10);
        }
        let mut rates = vec![Vec::with_capacity(ROUNDS); contenders.len()];
        for _ in 0..ROUNDS {
            for ((_, client), rates) in contenders.iter_mut().zip(&mut rates) {
                let start = Instant::now();
                client.echo(&runtime, &mut payload, n);
                rates.push(n as f64 / start.elapsed().as_secs_f64());
            }
        }
        for rates in &mut rates {
            rates.sort_by(f64::total_cmp);
        }
        let ringwire = rates[0][ROUNDS / 2];
        for ((name, _), rates) in contenders.iter().zip(&rates) {
            let median = rates[ROUNDS / 2];
            println!(
                "| {} | {name} | {median:.0} | {:.0}-{:.0} | {:.2}x |",
                label(size),
                rates[0],
                rates[ROUNDS - 1],
                median / ringwire,
            );
        }
    }
}

fn label(size: usize) -> String {
    if size >= 1 << 10 {
        format!("{} KiB", size >> 10)
    } else {
        format!("{size} B")
    }
}
