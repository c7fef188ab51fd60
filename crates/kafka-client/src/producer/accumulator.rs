//! The batches a producer holds: one filling per partition, sealed ones waiting to be routed,
//! failed ones waiting out their backoff.

use std::mem;
use std::sync::Arc;
use std::time::{Duration, Instant};

use ringwire_kafka::record::{BatchBuilder, BatchOptions, NewRecord};

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
    sealed: Instant,
    not_before: Instant,
}

/// A batch filling up.
#[derive(Debug)]
struct Open {
    builder: BatchBuilder,
    ack: Arc<Ack>,
    since: Instant,
}

#[derive(Debug)]
struct Topic {
    name: Arc<str>,
    partitions: Vec<Option<Open>>,
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
}

#[derive(Debug)]
pub(super) struct State {
    options: BatchOptions,
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
    pub(super) fn new(config: &ProducerConfig) -> Self {
        State {
            options: BatchOptions {
                compression: config.compression,
                ..BatchOptions::default()
            },
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
                sticky: 0,
            };
            self.topics.push(entry);
        }
    }

    /// Appends `record` to its partition's batch, sealing the batch first if the record would
    /// overfill it, and after if it is full. `None` when the topic is not known yet
    /// ([`add_topic`](Self::add_topic)).
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
        let open = t.partitions[index].get_or_insert_with(|| {
            wake_sender = true;
            let buf = spare.pop().unwrap_or_default();
            Open {
                builder: BatchBuilder::with_buffer(self.options, buf),
                ack: Arc::default(),
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
        let mut waiting = Vec::with_capacity(self.retry.len());
        for batch in self.retry.drain(..) {
            if batch.not_before <= now {
                self.ready.push(batch);
            } else {
                due(batch.not_before);
                waiting.push(batch);
            }
        }
        self.retry = waiting;
        Work {
            batches: mem::take(&mut self.ready),
            deadline,
            stale: mem::take(&mut self.stale),
        }
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
        self.retry.push(batch);
        None
    }

    /// Books a batch as finished: delivered, or failed with `error`. Its buffer is kept for
    /// a new batch.
    pub(super) fn finish(&mut self, batch: Batch, error: Option<&ProduceError>) -> Arc<Ack> {
        self.buffered -= batch.charge;
        self.unfinished -= 1;
        if let Some(e) = error {
            self.failure.get_or_insert_with(|| e.clone());
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

/// Takes the open batch of `index` and finishes it.
fn seal(t: &mut Topic, index: usize) -> Result<Batch, (Arc<Ack>, usize, ClientError)> {
    let open = t.partitions[index].take().expect("an open batch");
    let charge = open.builder.size();
    match open.builder.finish() {
        Ok(bytes) => {
            let now = Instant::now();
            Ok(Batch {
                topic: Arc::clone(&t.name),
                partition: index as i32,
                bytes,
                charge,
                ack: open.ack,
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

    #[test]
    fn sealing_every_batch_at_once_moves_the_sticky_partition_once() {
        let config = ProducerConfig {
            linger: Duration::ZERO,
            ..ProducerConfig::default()
        };
        let mut state = State::new(&config);
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
        let mut state = State::new(&config);
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
