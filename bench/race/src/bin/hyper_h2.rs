//! hyper 1.x, HTTP/2 connections in cleartext with prior knowledge
//! (`hyper::server::conn::http2`, h2c as h2load and `curl
//! --http2-prior-knowledge` connect) on a current-thread tokio runtime, a
//! task per connection, with `hyper_util::rt::TokioExecutor` as the executor
//! hyper's HTTP/2 server spawns each stream's service future on (on this
//! runtime: the same thread). The answers are race-hyper's
//! ([`ringwire_race::hyper_answer`]): `/index.html` from memory.
//!
//! HTTP/2 settings: hyper's defaults (as of hyper 1.12: at most 200
//! concurrent streams, 1 MiB flow-control windows, 16 KiB frames, no adaptive window,
//! no keep-alive pings, a `date` header). hyper's docs recommend no
//! server-side change for throughput; they only say the stream limit's
//! default may change and encourage setting one's own — the race's 16
//! streams per connection are well under it, so it stays as it is.

use std::convert::Infallible;

use bytes::Bytes;
use hyper::server::conn::http2;
use hyper::service::service_fn;
use hyper_util::rt::{TokioExecutor, TokioIo};
use ringwire_race::{args, hyper_answer};
use tokio::net::TcpListener;

fn main() -> std::io::Result<()> {
    let (addr, www) = args();
    let index = Bytes::from(std::fs::read(www.join("index.html"))?);
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?
        .block_on(async move {
            let listener = TcpListener::bind(addr).await?;
            eprintln!("race-hyper-h2 on http://{}/ (h2c)", listener.local_addr()?);
            let http = http2::Builder::new(TokioExecutor::new());
            loop {
                let (stream, _) = match listener.accept().await {
                    Ok(accepted) => accepted,
                    Err(e) => {
                        eprintln!("accept: {e}");
                        continue;
                    }
                };
                let _ = stream.set_nodelay(true);
                let index = index.clone();
                let service = service_fn(move |request| {
                    let response = hyper_answer(&request, &index);
                    async move { Ok::<_, Infallible>(response) }
                });
                let http = http.clone();
                tokio::spawn(async move {
                    let _ = http.serve_connection(TokioIo::new(stream), service).await;
                });
            }
        })
}
