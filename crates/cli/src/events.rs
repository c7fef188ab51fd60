//! The demo site's `GET /events`: server-sent events. A `tick` every second, numbered, with
//! the server's clock on a second data line, for as long as the client listens (a client
//! that reconnects goes on after the `Last-Event-ID` it sends); with `?n=N`, N ticks at once
//! and then a `done` event, which the events page's self-test counts.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use ringwire_server::events::{Event, EventSender, SendError};
use ringwire_server::{Request, Response};

/// The most ticks `?n=` asks for.
const MAX_TICKS: u64 = 100_000;

pub(crate) async fn events(request: &Request<'_>) -> Response {
    let count = request
        .query("n")
        .and_then(|n| n.to_str().ok()?.parse::<u64>().ok());
    let count = match count {
        Some(n) if n <= MAX_TICKS => Some(n),
        Some(_) => return Response::text(format!("n: at most {MAX_TICKS}\n")).status_code(400),
        None => None,
    };
    let resumed = request
        .head()
        .header("last-event-id")
        .and_then(|id| std::str::from_utf8(id).ok()?.parse::<u64>().ok());
    let (sender, response) = Response::events(16);
    tokio::spawn(async move {
        // Ends when the client leaves (or the count is out).
        let _ = match count {
            Some(n) => burst(&sender, n).await,
            None => every_second(&sender, resumed.unwrap_or(0)).await,
        };
    });
    response
}

/// Tick number `i`: its number, then the time in ms since the epoch.
async fn tick(sender: &EventSender, i: u64) -> Result<(), SendError> {
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis());
    let id = i.to_string();
    let data = format!("{i}\n{now}");
    sender.send(Event::new(&data).event("tick").id(&id)).await
}

async fn burst(sender: &EventSender, n: u64) -> Result<(), SendError> {
    for i in 1..=n {
        tick(sender, i).await?;
    }
    sender.send(Event::new("bye").event("done")).await
}

/// Ticks after number `last`, until the client leaves (noticed between ticks).
async fn every_second(sender: &EventSender, last: u64) -> Result<(), SendError> {
    // Browsers reconnect after 3 s by default; 1 s suits a clock.
    sender.send(Event::new("hello").retry(1000)).await?;
    let mut ticks = tokio::time::interval(Duration::from_secs(1));
    for i in last + 1.. {
        tokio::select! {
            _ = ticks.tick() => tick(sender, i).await?,
            () = sender.closed() => break,
        }
    }
    Ok(())
}
