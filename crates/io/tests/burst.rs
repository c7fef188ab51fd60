//! Rings grow by themselves for bursts, up to `BURST_CAPACITY` and their own bound: a read
//! that fills the ring, or output that fills it, means the next burst would otherwise take
//! several system calls.

use ringwire_io::{send_fn, Chunks, RecvTransport, SendTransport, TransportConfig, BURST_CAPACITY};

const PAGE: usize = 4096;

/// Capacities seen after each `fill` of a receiver whose reads deliver up to `chunk` bytes.
fn capacities(config: TransportConfig, chunk: usize, reads: usize) -> Vec<usize> {
    let data = vec![7; chunk * reads];
    let mut rx = RecvTransport::new(config, Chunks::every(&data, chunk)).unwrap();
    (0..reads)
        .map(|_| {
            rx.fill(1).unwrap();
            let unread = rx.data().len();
            rx.consume(unread);
            rx.ring().capacity()
        })
        .collect()
}

#[test]
fn a_read_that_fills_the_ring_doubles_it_up_to_the_burst_size() {
    let seen = capacities(TransportConfig::new(PAGE, 1 << 20), 1 << 20, 10);
    let mut expected = Vec::new();
    let mut cap = PAGE;
    for _ in 0..10 {
        cap = (2 * cap).min(BURST_CAPACITY);
        expected.push(cap);
    }
    assert_eq!(seen, expected);
}

#[test]
fn a_read_with_room_to_spare_leaves_the_ring_alone() {
    let seen = capacities(TransportConfig::new(PAGE, 1 << 20), PAGE - 1, 4);
    assert_eq!(seen, [PAGE; 4]);
}

#[test]
fn a_ring_bounded_below_the_burst_size_keeps_its_size() {
    let seen = capacities(TransportConfig::new(PAGE, PAGE), 1 << 20, 4);
    assert_eq!(seen, [PAGE; 4]);
}

/// Queues `total` bytes in 1 KiB writes into a transport over a recording writer, flushes;
/// returns the sizes of the writes the stream saw and the ring's final capacity.
fn queue(config: TransportConfig, total: usize) -> (Vec<usize>, usize) {
    let message: Vec<u8> = (0..1024).map(|i| i as u8).collect();
    let (mut writes, mut sent) = (Vec::new(), Vec::new());
    let io = send_fn(
        |bytes: &[u8]| {
            writes.push(bytes.len());
            sent.extend_from_slice(bytes);
            Ok(bytes.len())
        },
        || Ok(()),
    );
    let mut tx = SendTransport::new(config, io).unwrap();
    for _ in 0..total / message.len() {
        tx.write(&message).unwrap();
    }
    tx.flush().unwrap();
    let capacity = tx.into_parts().0.capacity();
    assert!(
        sent == message.repeat(total / message.len()),
        "bytes lost or reordered"
    );
    (writes, capacity)
}

#[test]
fn output_larger_than_the_ring_leaves_in_one_write() {
    let (writes, capacity) = queue(TransportConfig::new(PAGE, 1 << 20), 40 << 10);
    assert_eq!(writes, [40 << 10]);
    assert_eq!(capacity, 64 << 10);
}

#[test]
fn past_the_burst_size_the_ring_is_flushed_as_it_fills() {
    let total = BURST_CAPACITY * 5 / 2;
    let (writes, capacity) = queue(TransportConfig::new(PAGE, 16 << 20), total);
    assert_eq!(capacity, BURST_CAPACITY);
    assert_eq!(writes.iter().sum::<usize>(), total);
    assert!(writes.len() >= 3, "{writes:?}");
    assert!(writes.iter().all(|&n| n <= BURST_CAPACITY), "{writes:?}");
}

#[test]
fn a_send_ring_bounded_below_the_burst_size_flushes_at_its_size() {
    let (writes, capacity) = queue(TransportConfig::new(PAGE, PAGE), 16 << 10);
    assert_eq!(capacity, PAGE);
    assert_eq!(writes, [PAGE; 4]);
}
