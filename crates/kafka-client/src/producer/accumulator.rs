//! The batches a producer holds: one filling per partition, sealed ones waiting to be routed,
//! failed ones waiting out their backoff.
//!
//! A partition's batches leave in the order they were sealed, retries included: while one
//! waits out its backoff, the partition's later batches wait behind it. An idempotent
//! producer's broker insists on that order (it refuses a sequence with a gap before it), and
//! every producer's records land in the order they were sent unless a batch fails for good.

use std::mem;
use std::sync::Arc;
use std::time::{Duration, Instant};

use ringwire_kafka::record::{restamp, BatchBuilder, BatchOptions, NewRecord};

use super::{Ack, ProduceError, ProducerConfig, ProducerRecord};
use crate::{partitioner, ClientError};

/// A sealed batch on its way to its partition's leader.
#[derive(Debug)]
pub(super) struct Batch {
    pub(super) topic: Arc<str>,
    pub(super) partition: i32,
    /// The encoded record batch.
    pub(super) bytes: Vec<u8>,
    /// Buffered bytes it accounts for (its records before compression).
    charge: usize,
    pub(super) ack: Arc<Ack>,
    /// Records sealed in the partition before this batch's first: its place in line.
    first: u64,
    records: u64,
    /// The producer id and epoch in its header (-1: not idempotent).
    stamped: (i64, i16),
    sealed: Instant,
    not_before: Instant,
}

impl Batch {
    fn same_partition(&self, other: &Batch) -> bool {
        self.partition == other.partition && self.topic == other.topic
    }
}

/// A batch filling up.
#[derive(Debug)]
struct Open {
    builder: BatchBuilder,
    ack: Arc<Ack>,
    stamped: (i64, i16),
    since: Instant,
}

/// A partition's place in its producer's sequence.
#[derive(Debug, Clone, Copy)]
struct Line {
    /// Records sealed so far in the partition.
    sealed: u64,
    /// The producer id and epoch the partition's batches from `since` on carry (-1: not
    /// idempotent).
    producer: (i64, i16),
    /// The record count at which `producer` took over: the batches from there on number their
    /// records from 0 under it.
    since: u64,
    /// A batch failed for good and left a gap in the sequence that the broker would refuse
    /// every later batch for: those wait for a fresh producer id.
    needs_id: bool,
}

impl Line {
    /// Whether `batch` must wait for a fresh producer id.
    fn holds(&self, batch: &Batch) -> bool {
        self.needs_id && batch.first >= self.since
    }
}

#[derive(Debug)]
struct Topic {
    name: Arc<str>,
    partitions: Vec<Option<Open>>,
    lines: Vec<Line>,
    /// Where records without a key go until that partition's batch is sealed.
    sticky: usize,
}

/// What [`State::append`] did.
#[derive(Debug)]
pub(super) struct Appended<T> {
    /// What the caller made of the record's batch outcome, partition and offset delta.
    pub(super) delivery: T,
    /// A batch was opened (its linger starts) or sealed.
    pub(super) wake_sender: bool,
}

/// What the sender should do now.
#[derive(Debug)]
pub(super) struct Work {
    pub(super) batches: Vec<Batch>,
    /// When a lingering batch or a retry falls due.
    pub(super) deadline: Option<Instant>,
    /// The metadata may be stale: refresh it before routing.
    pub(super) stale: bool,
    /// Batches wait for a fresh producer id: get one and [`install`](State::install) it.
    pub(super) needs_id: bool,
}

#[derive(Debug)]
pub(super) struct State {
    options: BatchOptions,
    idempotent: bool,
    batch_size: usize,
    linger: Duration,
    retry_backoff: Duration,
    delivery_timeout: Duration,
    /// Few, so a scan that compares lengths first beats hashing every record's topic name.
    topics: Vec<Topic>,
    ready: Vec<Batch>,
    retry: Vec<Batch>,
    buffered: usize,
    /// Sealed batches not yet delivered or failed.
    unfinished: usize,
    stale: bool,
    failure: Option<ProduceError>,
    /// Buffers of delivered batches, for new batches to fill without page faults: as many
    /// as `buffer_memory` has batches.
    spare: Vec<Vec<u8>>,
    spare_max: usize,
}

impl State {
    /// Batches for `config`, stamped with `producer` (id and epoch) when idempotent.
    pub(super) fn new(config: &ProducerConfig, producer: Option<(i64, i16)>) -> Self {
        let (producer_id, producer_epoch) = producer.unwrap_or((-1, -1));
        State {
            options: BatchOptions {
                compression: config.compression,
                producer_id,
                producer_epoch,
                transactional: config.transactional_id.is_some(),
                ..BatchOptions::default()
            },
            idempotent: producer.is_some(),
            batch_size: config.batch_size,
            linger: config.linger,
            retry_backoff: config.retry_backoff,
            delivery_timeout: config.delivery_timeout,
            topics: Vec::new(),
            ready: Vec::new(),
            retry: Vec::new(),
            buffered: 0,
            unfinished: 0,
            stale: false,
            failure: None,
            spare: Vec::new(),
            spare_max: config.buffer_memory / config.batch_size.max(1),
        }
    }

    /// Record bytes held and not yet acknowledged.
    pub(super) fn buffered(&self) -> usize {
        self.buffered
    }

    /// Whether every sealed batch has finished.
    pub(super) fn idle(&self) -> bool {
        self.unfinished == 0
    }

    pub(super) fn take_failure(&mut self) -> Option<ProduceError> {
        self.failure.take()
    }

    /// Starts keeping batches for `topic`, which has `partitions` partitions.
    pub(super) fn add_topic(&mut self, topic: &str, partitions: usize) {
        if !self.topics.iter().any(|t| *t.name == *topic) {
            let entry = Topic {
                name: topic.into(),
                partitions: (0..partitions).map(|_| None).collect(),
                lines: vec![
                    Line {
                        sealed: 0,
                        producer: (self.options.producer_id, self.options.producer_epoch),
                        since: 0,
                        needs_id: false,
                    };
                    partitions
                ],
                sticky: 0,
            };
            self.topics.push(entry);
        }
    }

    /// Appends `record` to its partition's batch, sealing the batch first if the record would
    /// overfill it, and after if it is full. `None` when the topic is not known yet
    /// ([`add_topic`](Self::add_topic)).
    #[inline]
    pub(super) fn append<T>(
        &mut self,
        record: &ProducerRecord<'_>,
        timestamp: i64,
        deliver: impl FnOnce(&Arc<Ack>, i32, i64) -> T,
    ) -> Result<Option<Appended<T>>, ClientError> {
        let Some(t) = self.topics.iter_mut().find(|t| *t.name == *record.topic) else {
            return Ok(None);
        };
        let partitions = t.partitions.len();
        let partition = match (record.partition, record.key) {
            (Some(p), _) if usize::try_from(p).is_ok_and(|p| p < partitions) => p,
            (Some(p), _) => {
                return Err(ClientError::NoPartition {
                    topic: record.topic.to_owned(),
                    partition: p,
                })
            }
            (None, Some(key)) => partitioner::for_key(key, partitions),
            (None, None) => (t.sticky % partitions) as i32,
        };
        let index = partition as usize;
        let new = NewRecord {
            timestamp,
            key: record.key,
            value: record.value,
            headers: record.headers,
        };
        let incoming = new.key.map_or(0, <[u8]>::len)
            + new.value.map_or(0, <[u8]>::len)
            + new
                .headers
                .iter()
                .map(|h| h.key.len() + h.value.map_or(0, <[u8]>::len))
                .sum::<usize>();
        let overfull = t.partitions[index].as_ref().is_some_and(|open| {
            open.builder.records() > 0 && open.builder.size() + incoming > self.batch_size
        });
        let before = overfull.then(|| seal(t, index));
        if overfull {
            move_sticky(t, index);
        }
        let mut wake_sender = overfull;
        let spare = &mut self.spare;
        let mut options = self.options;
        if self.idempotent {
            let line = &t.lines[index];
            (options.producer_id, options.producer_epoch) = line.producer;
            options.base_sequence = sequence(line.sealed - line.since);
        }
        let open = t.partitions[index].get_or_insert_with(|| {
            wake_sender = true;
            let buf = spare.pop().unwrap_or_default();
            Open {
                builder: BatchBuilder::with_buffer(options, buf),
                ack: Arc::default(),
                stamped: (options.producer_id, options.producer_epoch),
                since: Instant::now(),
            }
        });
        let size = open.builder.size();
        let pushed = open.builder.push(&new);
        self.buffered += open.builder.size() - size;
        let delivery = deliver(&open.ack, partition, open.builder.records() as i64 - 1);
        let full = open.builder.size() >= self.batch_size;
        let after = full.then(|| seal(t, index));
        if full {
            move_sticky(t, index);
        }
        wake_sender |= after.is_some();
        for sealed in before.into_iter().chain(after) {
            self.push_sealed(sealed);
        }
        pushed?;
        Ok(Some(Appended {
            delivery,
            wake_sender,
        }))
    }

    /// Seals every batch, lingering or not.
    pub(super) fn seal_all(&mut self) {
        let mut sealed = Vec::new();
        for t in self.topics.iter_mut() {
            for index in 0..t.partitions.len() {
                if t.partitions[index].is_some() {
                    sealed.push(seal(t, index));
                }
            }
            let sticky = t.sticky % t.partitions.len().max(1);
            move_sticky(t, sticky);
        }
        for s in sealed {
            self.push_sealed(s);
        }
    }

    /// Seals the batches whose linger has passed, takes them and the retries that fell due,
    /// and says when to look again.
    pub(super) fn take_work(&mut self, now: Instant) -> Work {
        let mut deadline: Option<Instant> = None;
        let mut due = |at: Instant| deadline = Some(deadline.map_or(at, |d| d.min(at)));
        let mut sealed = Vec::new();
        for t in self.topics.iter_mut() {
            // Sealing several batches in one pass moves the sticky partition once.
            let sticky = t.sticky % t.partitions.len().max(1);
            let mut moved = false;
            for index in 0..t.partitions.len() {
                let Some(open) = &t.partitions[index] else {
                    continue;
                };
                let at = open.since + self.linger;
                if at <= now {
                    sealed.push(seal(t, index));
                    moved |= index == sticky;
                } else {
                    due(at);
                }
            }
            if moved {
                move_sticky(t, sticky);
            }
        }
        for s in sealed {
            self.push_sealed(s);
        }
        // Retries first: a partition's new batches queue behind its retries.
        let retries = mem::take(&mut self.retry).into_iter().map(|b| (b, true));
        let sealed = mem::take(&mut self.ready).into_iter().map(|b| (b, false));
        let candidates: Vec<(Batch, bool)> = retries.chain(sealed).collect();
        let mut ready = Vec::with_capacity(candidates.len());
        let mut waiting: Vec<Batch> = Vec::new();
        for (batch, retry) in candidates {
            let backing_off = retry && batch.not_before > now;
            // Behind a batch of its partition that is still waiting, a batch waits too.
            let held = waiting.iter().any(|w| w.same_partition(&batch))
                || self.line(&batch).is_some_and(|line| line.holds(&batch));
            if backing_off {
                due(batch.not_before);
            }
            if backing_off || held {
                waiting.push(batch);
            } else {
                ready.push(batch);
            }
        }
        self.retry = waiting;
        for batch in &mut ready {
            self.stamp(batch);
        }
        Work {
            batches: ready,
            deadline,
            stale: mem::take(&mut self.stale),
            needs_id: self.needs_id(),
        }
    }

    /// The partition line of `batch`.
    fn line(&mut self, batch: &Batch) -> Option<&mut Line> {
        let t = self.topics.iter_mut().find(|t| t.name == batch.topic)?;
        t.lines.get_mut(usize::try_from(batch.partition).ok()?)
    }

    /// Re-stamps `batch` if its partition moved to another producer id or epoch since it was
    /// sealed.
    fn stamp(&mut self, batch: &mut Batch) {
        if !self.idempotent {
            return;
        }
        let Some(&mut line) = self.line(batch) else {
            return;
        };
        if batch.first >= line.since && batch.stamped != line.producer {
            let (id, epoch) = line.producer;
            // The bytes are a whole batch from `BatchBuilder`: long enough.
            let _ = restamp(
                &mut batch.bytes,
                id,
                epoch,
                sequence(batch.first - line.since),
            );
            batch.stamped = line.producer;
        }
    }

    /// Whether a partition waits for a fresh producer id.
    pub(super) fn needs_id_any(&self) -> bool {
        self.needs_id()
    }

    /// Whether a partition waits for a fresh producer id.
    fn needs_id(&self) -> bool {
        self.topics
            .iter()
            .any(|t| t.lines.iter().any(|line| line.needs_id))
    }

    /// A fresh producer id and epoch for the partitions that wait for one: their batches
    /// from the gap on are numbered from 0 under it.
    pub(super) fn install(&mut self, producer: (i64, i16)) {
        for t in &mut self.topics {
            for line in t.lines.iter_mut().filter(|line| line.needs_id) {
                line.producer = producer;
                line.needs_id = false;
            }
        }
    }

    /// The producer id and epoch (bumped: a transactional producer's after an abort) under
    /// which every partition's next records go, numbered from 0.
    pub(super) fn install_all(&mut self, producer: (i64, i16)) {
        for t in &mut self.topics {
            for line in &mut t.lines {
                line.producer = producer;
                line.since = line.sealed;
                line.needs_id = false;
            }
        }
    }

    /// Seals every batch, and takes out those that wait for a fresh producer id (behind a
    /// batch that failed for good): a transaction being aborted fails them.
    pub(super) fn take_held(&mut self) -> Vec<Batch> {
        self.seal_all();
        let mut held = Vec::new();
        for retry in [false, true] {
            let queue = if retry {
                &mut self.retry
            } else {
                &mut self.ready
            };
            for batch in mem::take(queue) {
                if self.line(&batch).is_some_and(|line| line.holds(&batch)) {
                    held.push(batch);
                } else if retry {
                    self.retry.push(batch);
                } else {
                    self.ready.push(batch);
                }
            }
        }
        held
    }

    /// Puts `batch` in the retry line before any later batch of its partition.
    fn requeue(&mut self, batch: Batch) {
        let at = self
            .retry
            .iter()
            .position(|w| w.same_partition(&batch) && w.first > batch.first)
            .unwrap_or(self.retry.len());
        self.retry.insert(at, batch);
    }

    /// Queues `batch` to be sent again after the backoff, or fails it with `error` once its
    /// delivery timeout has passed. Either way the metadata is refreshed before the next route.
    pub(super) fn retry(
        &mut self,
        mut batch: Batch,
        error: ClientError,
    ) -> Option<(Batch, ProduceError)> {
        self.stale = true;
        let now = Instant::now();
        if now.duration_since(batch.sealed) >= self.delivery_timeout {
            return Some((batch, ProduceError(Arc::new(error))));
        }
        batch.not_before = now + self.retry_backoff;
        self.requeue(batch);
        None
    }

    /// Books a batch as finished: delivered, or failed with `error`. Its buffer is kept for
    /// a new batch.
    pub(super) fn finish(&mut self, batch: Batch, error: Option<&ProduceError>) -> Arc<Ack> {
        self.buffered -= batch.charge;
        self.unfinished -= 1;
        if let Some(e) = error {
            self.failure.get_or_insert_with(|| e.clone());
            let idempotent = self.idempotent;
            if let Some(line) = self.line(&batch).filter(|_| idempotent) {
                // The batch may or may not be in the log; the ones after it go out under a
                // fresh producer id either way.
                let end = batch.first + batch.records;
                if end > line.since {
                    line.since = end;
                    line.needs_id = true;
                }
            }
        }
        if self.spare.len() < self.spare_max {
            self.spare.push(batch.bytes);
        }
        batch.ack
    }

    fn push_sealed(&mut self, sealed: Result<Batch, (Arc<Ack>, usize, ClientError)>) {
        match sealed {
            Ok(batch) => {
                self.unfinished += 1;
                self.ready.push(batch);
            }
            Err((ack, charge, error)) => {
                let error = ProduceError(Arc::new(error));
                self.buffered -= charge;
                ack.complete(Err(error.clone()));
                self.failure.get_or_insert(error);
            }
        }
    }
}

/// After the batch of `sealed` was sealed: if it was the sticky partition's, records without
/// a key go to the next partition from now on.
fn move_sticky(t: &mut Topic, sealed: usize) {
    if t.sticky % t.partitions.len().max(1) == sealed {
        t.sticky = sealed + 1;
    }
}

/// The base sequence of a batch after `records` records: Kafka's sequences count records
/// and wrap from `i32::MAX` to 0.
fn sequence(records: u64) -> i32 {
    (records % (1 << 31)) as i32
}

/// Takes the open batch of `index` and finishes it.
fn seal(t: &mut Topic, index: usize) -> Result<Batch, (Arc<Ack>, usize, ClientError)> {
    let open = t.partitions[index].take().expect("an open batch");
    let charge = open.builder.size();
    let records = open.builder.records() as u64;
    match open.builder.finish() {
        Ok(bytes) => {
            let now = Instant::now();
            let first = t.lines[index].sealed;
            t.lines[index].sealed += records;
            Ok(Batch {
                topic: Arc::clone(&t.name),
                partition: index as i32,
                bytes,
                charge,
                ack: open.ack,
                first,
                records,
                stamped: open.stamped,
                sealed: now,
                not_before: now,
            })
        }
        Err(e) => Err((open.ack, charge, e.into())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unkeyed(state: &mut State) -> i32 {
        let record = ProducerRecord::new("t", b"v");
        state
            .append(&record, 0, |_, partition, _| partition)
            .unwrap()
            .unwrap()
            .delivery
    }

    /// Producer id, epoch and base sequence in a sealed batch's header.
    fn stamp_of(batch: &Batch) -> (i64, i16, i32) {
        let mut batches = ringwire_kafka::record::Batches::new(&batch.bytes);
        let header = batches.next().unwrap().unwrap();
        header.verify_crc().unwrap();
        (
            header.producer_id(),
            header.producer_epoch(),
            header.base_sequence(),
        )
    }

    /// Seals one batch of `records` records in partition 0 and takes it.
    fn one_batch(state: &mut State, records: usize) -> Batch {
        for _ in 0..records {
            let record = ProducerRecord::new("t", b"v").partition(0);
            state.append(&record, 0, |_, _, _| ()).unwrap().unwrap();
        }
        state.seal_all();
        let mut work = state.take_work(Instant::now());
        assert_eq!(work.batches.len(), 1);
        work.batches.pop().unwrap()
    }

    #[test]
    fn a_partition_keeps_its_order_through_retries_and_a_fresh_producer_id() {
        let mut state = State::new(&ProducerConfig::default(), Some((5, 2)));
        state.add_topic("t", 1);
        let first = one_batch(&mut state, 3);
        let second = one_batch(&mut state, 4);
        let third = one_batch(&mut state, 2);
        assert_eq!(
            [&first, &second, &third].map(stamp_of),
            [(5, 2, 0), (5, 2, 3), (5, 2, 7)]
        );
        let error = || ClientError::RequestTimeout(Duration::ZERO);
        // The third comes back before the second (answers from two connections): the second
        // still goes first, and a new batch waits behind both.
        assert!(state.retry(third, error()).is_none());
        assert!(state.retry(second, error()).is_none());
        let record = ProducerRecord::new("t", b"v").partition(0);
        state.append(&record, 0, |_, _, _| ()).unwrap().unwrap();
        state.seal_all();
        let now = Instant::now();
        let work = state.take_work(now);
        assert!(work.batches.is_empty(), "sent during the backoff");
        let later = now + Duration::from_secs(1);
        let order: Vec<u64> = state
            .take_work(later)
            .batches
            .into_iter()
            .map(|b| b.first)
            .collect();
        assert_eq!(order, [3, 7, 9]);

        // The first fails for good: what follows it waits for a fresh id, then goes out
        // re-stamped, numbered from 0 under it.
        let ack = state.finish(first, Some(&ProduceError(Arc::new(error()))));
        assert!(ack.result.get().is_none(), "the caller completes the ack");
        let held = one_batch_held(&mut state);
        assert!(state.take_work(later).needs_id);
        state.install((6, 0));
        let work = state.take_work(later);
        assert!(!work.needs_id);
        assert_eq!(work.batches.len(), 1);
        assert_eq!(stamp_of(&work.batches[0]), (6, 0, 10 - 3));
        assert_eq!(held, 10);
    }

    /// Seals one more batch of partition 0 and checks that it is held back.
    fn one_batch_held(state: &mut State) -> u64 {
        let record = ProducerRecord::new("t", b"v").partition(0);
        state.append(&record, 0, |_, _, _| ()).unwrap().unwrap();
        state.seal_all();
        let work = state.take_work(Instant::now());
        assert!(work.batches.is_empty() && work.needs_id);
        state.retry.last().unwrap().first
    }

    #[test]
    fn sealing_every_batch_at_once_moves_the_sticky_partition_once() {
        let config = ProducerConfig {
            linger: Duration::ZERO,
            ..ProducerConfig::default()
        };
        let mut state = State::new(&config, None);
        assert!(state
            .append(&ProducerRecord::new("t", b"v"), 0, |_, _, _| ())
            .unwrap()
            .is_none());
        state.add_topic("t", 3);
        for p in 0..3 {
            let record = ProducerRecord::new("t", b"v").partition(p);
            state.append(&record, 0, |_, _, _| ()).unwrap().unwrap();
        }
        assert_eq!(unkeyed(&mut state), 0);
        let work = state.take_work(Instant::now());
        assert_eq!(work.batches.len(), 3);
        assert_eq!(unkeyed(&mut state), 1);
        state.seal_all();
        assert_eq!(unkeyed(&mut state), 2);
    }

    #[test]
    fn a_full_batch_is_sealed_and_the_sticky_partition_moves_on() {
        let config = ProducerConfig {
            batch_size: 64,
            ..ProducerConfig::default()
        };
        let mut state = State::new(&config, None);
        state.add_topic("t", 2);
        let mut partitions = Vec::new();
        for _ in 0..12 {
            partitions.push(unkeyed(&mut state));
        }
        // Records of about 10 bytes: a 64-byte batch holds a handful, then the next partition.
        assert!(
            partitions.contains(&0) && partitions.contains(&1),
            "{partitions:?}"
        );
        assert!(partitions
            .windows(2)
            .all(|w| w[0] == w[1] || w[1] == 1 - w[0]));
        let sealed = state.take_work(Instant::now()).batches;
        assert!(!sealed.is_empty());
        assert!(state.buffered() > 0);
    }
}
