//! Server-sent events read from a body's pieces: ringwire-sse against eventsource-stream
//! (the reader under reqwest-eventsource and async-openai), on the same bytes, each event's
//! type and data handed to `black_box` and every event checked before timing.
//!
//! - `sse/tokens_16k/*`: 1,000 events of about 120 B (a chat model's streamed tokens,
//!   OpenAI's shape), in 16 KiB pieces cut wherever they fall (some events span two).
//! - `sse/tokens_each/*`: the same events, each a piece of its own (a server flushing every
//!   event as it is made, as the demo site's does).
//! - `sse/large_16k/*`: 100 events of 8 KiB of data on one line, in 16 KiB pieces.
//!
//! `ringwire` feeds `Parser::next` the pieces where they lie (an event whole in a piece is
//! read in place); `eventsource_stream` gets the same pieces as a stream of `Bytes` (what a
//! body stream gives it) on a current-thread runtime.

mod common;

use std::hint::black_box;

use bytes::Bytes;
use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use eventsource_stream::Eventsource as _;
use futures_util::StreamExt as _;
use ringwire_sse::{Event, Parser, Step};

const PIECE: usize = 16 << 10;

/// Events read, and the bytes of their data.
fn ringwire(pieces: &[Bytes]) -> (usize, usize) {
    let mut parser = Parser::default();
    let (mut events, mut bytes) = (0, 0);
    for piece in pieces {
        let mut rest = &piece[..];
        while let Step::Message(message, used) = parser.next(rest).unwrap() {
            black_box(message.event);
            bytes += black_box(message.data).len();
            events += 1;
            rest = &rest[used..];
        }
    }
    (events, bytes)
}

fn eventsource_stream(runtime: &tokio::runtime::Runtime, pieces: &[Bytes]) -> (usize, usize) {
    runtime.block_on(async {
        let stream = futures_util::stream::iter(
            pieces
                .iter()
                .cloned()
                .map(Ok::<_, std::convert::Infallible>),
        );
        let mut events = stream.eventsource();
        let (mut count, mut bytes) = (0, 0);
        while let Some(event) = events.next().await {
            let event = event.unwrap();
            black_box(&event.event);
            bytes += black_box(&event.data).len();
            count += 1;
        }
        (count, bytes)
    })
}

fn readers(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let token = |i: usize| {
        format!(
            "{{\"id\":\"chatcmpl-{i:06}\",\"object\":\"chat.completion.chunk\",\
             \"choices\":[{{\"index\":0,\"delta\":{{\"content\":\" tok{i}\"}}}}]}}"
        )
    };
    let tokens: Vec<Vec<u8>> = (0..1000)
        .map(|i| Event::new(&token(i)).to_vec().unwrap())
        .collect();
    let line = "x".repeat(8 << 10);
    let large: Vec<Vec<u8>> = (0..100)
        .map(|i| Event::new(&line).id(&i.to_string()).to_vec().unwrap())
        .collect();
    let cut = |events: &[Vec<u8>]| -> Vec<Bytes> {
        events
            .concat()
            .chunks(PIECE)
            .map(Bytes::copy_from_slice)
            .collect()
    };
    let each = |events: &[Vec<u8>]| -> Vec<Bytes> {
        events.iter().map(|e| Bytes::copy_from_slice(e)).collect()
    };
    let cases = [
        ("tokens_16k", cut(&tokens), tokens.len()),
        ("tokens_each", each(&tokens), tokens.len()),
        ("large_16k", cut(&large), large.len()),
    ];
    let mut group = c.benchmark_group("sse");
    for (name, pieces, events) in &cases {
        let read = ringwire(pieces);
        assert_eq!(read.0, *events);
        assert_eq!(eventsource_stream(&runtime, pieces), read);
        group.throughput(Throughput::Elements(*events as u64));
        group.bench_function(format!("{name}/ringwire"), |b| {
            b.iter(|| ringwire(black_box(pieces)));
        });
        group.bench_function(format!("{name}/eventsource_stream"), |b| {
            b.iter(|| eventsource_stream(&runtime, black_box(pieces)));
        });
    }
    group.finish();
}

criterion_group! {
    name = benches;
    config = common::short_criterion();
    targets = readers
}
criterion_main!(benches);
