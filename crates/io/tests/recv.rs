//! Receive transport: split-anywhere delivery, growth, bounded failure.

mod common;

use common::{frames, within};
use ringwire_io::{Chunks, RecvTransport, TransportConfig, TransportError};
use ringwire_ring::RingError;
use ringwire_wire::{run, Control, Finish, LengthPrefixed, RunError};

type Outcome = Result<Finish, RunError<ringwire_wire::FrameError, TransportError>>;

fn parse_all(config: TransportConfig, source: Chunks, max_frame: usize) -> (Vec<Vec<u8>>, Outcome) {
    let mut rx = RecvTransport::new(config, source).unwrap();
    let mut out = Vec::new();
    let outcome = run(&mut rx, &mut LengthPrefixed::new(max_frame), |body| {
        out.push(body.to_vec());
        Control::Continue
    });
    (out, outcome)
}

fn small() -> TransportConfig {
    TransportConfig::new(4096, 1 << 20)
}

#[test]
fn split_at_every_byte_gives_identical_frames() {
    let sizes = [0, 1, 5, 300, 4000, 7, 0, 9000, 2];
    let wire = frames(&sizes);
    let (whole, outcome) = parse_all(small(), Chunks::new([&wire]), 1 << 20);
    assert!(matches!(outcome, Ok(Finish::Eof)));
    assert_eq!(whole.iter().map(Vec::len).collect::<Vec<_>>(), sizes);
    for at in 0..=wire.len() {
        let (split, outcome) = parse_all(small(), Chunks::split_at(&wire, at), 1 << 20);
        assert!(
            matches!(outcome, Ok(Finish::Eof)),
            "split at {at}: {outcome:?}"
        );
        assert!(split == whole, "split at {at} differs");
    }
    for size in [1, 2, 3, 4, 5, 64, 4095, 4096, 4097] {
        let (chunked, _) = parse_all(small(), Chunks::every(&wire, size), 1 << 20);
        assert!(chunked == whole, "chunks of {size} differ");
    }
}

#[test]
fn frame_larger_than_the_ring_grows_it() {
    let wire = frames(&[10, 100_000, 10]);
    let (frames, outcome) = within(10, move || {
        parse_all(small(), Chunks::every(&wire, 1000), 1 << 20)
    });
    assert!(matches!(outcome, Ok(Finish::Eof)), "{outcome:?}");
    assert_eq!(frames[1].len(), 100_000);
    assert!(frames[1] == (0..100_000).map(|j| (1 + j) as u8).collect::<Vec<_>>());
}

#[test]
fn frame_larger_than_the_bound_is_a_typed_error_not_a_hang() {
    let wire = frames(&[10, 2 << 20]);
    let (frames, outcome) = within(10, move || {
        parse_all(small(), Chunks::every(&wire, 8192), 16 << 20)
    });
    assert_eq!(frames.len(), 1);
    match outcome {
        Err(RunError::Source(TransportError::Ring(RingError::TooLarge { requested, max }))) => {
            assert_eq!(requested, 4 + (2 << 20));
            assert_eq!(max, 1 << 20);
        }
        other => panic!("expected TooLarge, got {other:?}"),
    }
}

#[test]
fn truncated_stream_is_unexpected_eof() {
    let mut wire = frames(&[10, 10]);
    wire.truncate(wire.len() - 3);
    let (frames, outcome) = parse_all(small(), Chunks::every(&wire, 3), 1 << 20);
    assert_eq!(frames.len(), 1);
    assert!(
        matches!(outcome, Err(RunError::UnexpectedEof { buffered: 11 })),
        "{outcome:?}"
    );
}

#[test]
fn recv_callback_and_heap_ring_behave_the_same() {
    let wire = frames(&[1, 2, 3000, 4]);
    let mut source = Chunks::every(&wire, 7);
    let recv = ringwire_io::recv_fn(move |buf| std::io::Read::read(&mut source, buf));
    let mut config = small();
    config.rx = config.rx.backing(ringwire_ring::Backing::Heap);
    let mut rx = RecvTransport::new(config, recv).unwrap();
    let mut sizes = Vec::new();
    let outcome = run(&mut rx, &mut LengthPrefixed::default(), |body| {
        sizes.push(body.len());
        Control::Continue
    });
    assert!(matches!(outcome, Ok(Finish::Eof)));
    assert_eq!(sizes, [1, 2, 3000, 4]);
}
