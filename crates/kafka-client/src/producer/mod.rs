//! A pipelined producer: records are appended to a batch per partition as they are sent, a
//! batch is sealed when it is full or has lingered, and a task per leader broker keeps up to
//! `max_in_flight` Produce requests on its connection. Retriable failures (a leader moved, a
//! broker restarted) refresh the metadata and send the batch again until it is acknowledged or
//! the delivery timeout passes; each record's [`Delivery`] tells which.
//!
//! **Idempotence** (on by default, as in Kafka's Java client since 3.0): the producer takes a
//! producer id from the cluster (InitProducerId) and numbers each partition's records; the
//! broker drops a batch it already has and refuses one that skips ahead, so a retry after a
//! lost answer or a broken connection writes nothing twice, and a partition's batches land in
//! the order they were sealed. A batch that fails for good (refused as too large, or out of
//! time) leaves a gap the broker would refuse every later batch for; the partition's later
//! batches then go out under a fresh producer id, numbered from 0 (the epoch bump of
//! KIP-360, by a new id instead).
//!
//! **Transactions** (with [`ProducerConfig::transactional_id`]): records sent between
//! [`Producer::begin_transaction`] and [`Producer::commit_transaction`] become visible to
//! `read_committed` consumers together, or (after [`Producer::abort_transaction`]) never,
//! together with the consumer offsets [`Producer::send_offsets_to_transaction`] adds: a
//! consume-transform-produce loop then handles each record exactly once. The producer takes
//! its id from the transactional id's coordinator, which fences any producer that had the id
//! before; each partition joins the open transaction before its first batch is sent. A
//! batch that fails for good dooms the transaction: commit says so, and abort takes the
//! id's next epoch so that the next transaction's batches number from 0.
//!
//! Without idempotence a retried batch may be written twice. Either way a partition's batches
//! are sent in order, retries included; without idempotence, batches in flight together may
//! still land out of order when an earlier one fails. Nothing acknowledged is lost.

mod accumulator;
mod sender;
mod transaction;

use std::collections::HashMap;
use std::fmt;
use std::future::{Future, IntoFuture};
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, PoisonError};
use std::time::Duration;

use ringwire_kafka::api::produce::Acks;
use ringwire_kafka::record::{Compression, Header};
use tokio::sync::Notify;
use tokio::task::JoinHandle;

use ringwire_kafka::api::find_coordinator::GROUP;
use ringwire_kafka::api::offset_commit::{OffsetCommitPartition, OffsetCommitTopic};
use ringwire_kafka::api::txn_offset_commit::TxnOffsetCommitRequest;

use crate::cluster::Cluster;
use crate::coordinator::Coordinator;
use crate::{ClientConfig, ClientError, GroupMetadata};
use accumulator::State;

/// Producer settings. The defaults suit throughput on a LAN; `linger` trades latency for
/// larger batches.
#[derive(Debug, Clone)]
pub struct ProducerConfig {
    /// Connections.
    pub client: ClientConfig,
    /// Replicas that must have a batch before it counts as delivered.
    pub acks: Acks,
    /// Batch codec.
    pub compression: Compression,
    /// How long a batch that is not full waits for more records.
    pub linger: Duration,
    /// A batch is sealed when its records reach this many bytes (before compression).
    pub batch_size: usize,
    /// Batches for one broker share a request up to this many bytes.
    pub max_request_size: usize,
    /// Produce requests on one connection waiting for their answer.
    pub max_in_flight: usize,
    /// Record bytes buffered and not yet acknowledged; past it, [`Producer::send`] waits.
    pub buffer_memory: usize,
    /// How long a batch may take, retries included, before its records fail.
    pub delivery_timeout: Duration,
    /// Pause before a failed batch is sent again.
    pub retry_backoff: Duration,
    /// How long a Produce request may wait for its answer before its connection counts as
    /// broken (other requests: [`ClientConfig::request_timeout`]).
    pub request_timeout: Duration,
    /// Idempotent delivery (see the [module docs](self)): needs `acks` [`Acks::All`] and at
    /// most 5 requests in flight (the batches a broker remembers per producer).
    pub idempotence: bool,
    /// Transactions under this id (see the [module docs](self)); needs idempotence. `None`:
    /// no transactions.
    pub transactional_id: Option<String>,
    /// How long the coordinator lets a transaction stay open before it aborts it.
    pub transaction_timeout: Duration,
}

impl Default for ProducerConfig {
    fn default() -> Self {
        ProducerConfig {
            client: ClientConfig::default(),
            acks: Acks::All,
            compression: Compression::None,
            linger: Duration::from_millis(5),
            batch_size: 256 << 10,
            max_request_size: 1 << 20,
            max_in_flight: 5,
            buffer_memory: 64 << 20,
            delivery_timeout: Duration::from_secs(120),
            retry_backoff: Duration::from_millis(100),
            request_timeout: Duration::from_secs(30),
            idempotence: true,
            transactional_id: None,
            transaction_timeout: Duration::from_secs(60),
        }
    }
}

impl ProducerConfig {
    /// Why this configuration cannot work, if it cannot.
    fn check(&self) -> Result<(), ClientError> {
        if self.idempotence && self.acks != Acks::All {
            return Err(ClientError::Config(
                "idempotence needs acks = All (or turn idempotence off)",
            ));
        }
        if self.idempotence && self.max_in_flight > 5 {
            return Err(ClientError::Config(
                "idempotence allows at most 5 requests in flight (or turn idempotence off)",
            ));
        }
        if self.transactional_id.is_some() && !self.idempotence {
            return Err(ClientError::Config("transactions need idempotence"));
        }
        if self.max_in_flight == 0 {
            return Err(ClientError::Config("max_in_flight must be at least 1"));
        }
        Ok(())
    }
}

/// What a producer has done so far ([`Producer::stats`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct ProducerStats {
    /// Batches sent again after a retriable error, a broken connection or a timeout.
    pub retries: u64,
    /// Producer ids taken from the cluster (idempotence: one at start, one more after each
    /// gap left by a batch that failed for good).
    pub producer_ids: u64,
}

/// A record to produce, borrowed: [`Producer::send`] copies it into its partition's batch.
#[derive(Debug, Clone, Copy)]
pub struct ProducerRecord<'a> {
    /// Topic.
    pub topic: &'a str,
    /// Partition; `None` picks one from the key (murmur2, as Java's producer does), or the
    /// partition whose batch is filling for records without a key.
    pub partition: Option<i32>,
    /// Key.
    pub key: Option<&'a [u8]>,
    /// Value; `None` is a tombstone.
    pub value: Option<&'a [u8]>,
    /// Headers.
    pub headers: &'a [Header<'a>],
    /// Create time in ms since the epoch; `None` is now (from a clock of a few ms resolution).
    pub timestamp: Option<i64>,
}

impl<'a> ProducerRecord<'a> {
    /// A record with a value, no key and no headers.
    #[must_use]
    pub fn new(topic: &'a str, value: &'a [u8]) -> Self {
        ProducerRecord {
            topic,
            partition: None,
            key: None,
            value: Some(value),
            headers: &[],
            timestamp: None,
        }
    }

    /// With a key.
    #[must_use]
    pub fn key(self, key: &'a [u8]) -> Self {
        ProducerRecord {
            key: Some(key),
            ..self
        }
    }

    /// To one partition.
    #[must_use]
    pub fn partition(self, partition: i32) -> Self {
        ProducerRecord {
            partition: Some(partition),
            ..self
        }
    }

    /// With headers.
    #[must_use]
    pub fn headers(self, headers: &'a [Header<'a>]) -> Self {
        ProducerRecord { headers, ..self }
    }
}

/// Where a delivered record landed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RecordMetadata {
    /// Partition.
    pub partition: i32,
    /// Offset; -1 with [`Acks::None`], which gets no answer.
    pub offset: i64,
}

/// Why records were not delivered: the last error of their batch. Shared by every record of
/// the batch.
#[derive(Debug, Clone)]
pub struct ProduceError(Arc<ClientError>);

impl ProduceError {
    /// The error.
    #[must_use]
    pub fn error(&self) -> &ClientError {
        &self.0
    }
}

impl fmt::Display for ProduceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "record not delivered: {}", self.0)
    }
}

impl std::error::Error for ProduceError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&*self.0)
    }
}

/// The outcome of one batch, waited on by each of its records.
#[derive(Debug, Default)]
struct Ack {
    result: OnceLock<Result<i64, ProduceError>>,
    done: Notify,
}

impl Ack {
    fn complete(&self, result: Result<i64, ProduceError>) {
        let _ = self.result.set(result);
        self.done.notify_waiters();
    }

    /// The batch's base offset (negative without an answer), once it is delivered.
    async fn wait(&self) -> Result<i64, ProduceError> {
        loop {
            let notified = self.done.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            if let Some(result) = self.result.get() {
                return result.clone();
            }
            notified.await;
        }
    }
}

/// One record's delivery: await it for the offset the broker gave it.
#[derive(Debug)]
pub struct Delivery {
    ack: Arc<Ack>,
    partition: i32,
    offset_delta: i64,
}

impl Delivery {
    fn new(ack: &Arc<Ack>, partition: i32, offset_delta: i64) -> Self {
        Delivery {
            ack: Arc::clone(ack),
            partition,
            offset_delta,
        }
    }

    /// The partition the record went to.
    #[must_use]
    pub fn partition(&self) -> i32 {
        self.partition
    }

    async fn wait(self) -> Result<RecordMetadata, ProduceError> {
        let base = self.ack.wait().await?;
        Ok(RecordMetadata {
            partition: self.partition,
            offset: if base < 0 {
                -1
            } else {
                base + self.offset_delta
            },
        })
    }
}

impl IntoFuture for Delivery {
    type Output = Result<RecordMetadata, ProduceError>;
    type IntoFuture = Pin<Box<dyn Future<Output = Self::Output> + Send>>;

    fn into_future(self) -> Self::IntoFuture {
        Box::pin(self.wait())
    }
}

/// The delivery of every record of one [`Producer::send_all`]: await it to learn that all of
/// them were delivered, or the first failure.
#[derive(Debug)]
pub struct Deliveries {
    /// The batches the records went into (each once, in order).
    acks: Vec<Arc<Ack>>,
}

impl Deliveries {
    /// Counts `ack` in, unless one of the last few batches is already it.
    fn note(&mut self, ack: &Arc<Ack>) {
        if !self.acks.iter().rev().take(8).any(|a| Arc::ptr_eq(a, ack)) {
            self.acks.push(Arc::clone(ack));
        }
    }
}

impl IntoFuture for Deliveries {
    type Output = Result<(), ProduceError>;
    type IntoFuture = Pin<Box<dyn Future<Output = Self::Output> + Send>>;

    fn into_future(self) -> Self::IntoFuture {
        Box::pin(async move {
            for ack in &self.acks {
                ack.wait().await?;
            }
            Ok(())
        })
    }
}

/// Now, in ms since the epoch: on Linux from the coarse clock, which is read without a
/// system call or a timestamp-counter read (its resolution, a few ms, is what Kafka's
/// `CreateTime` needs; a fine clock read was a tenth of the producer's time per record).
fn now_ms() -> i64 {
    #[cfg(target_os = "linux")]
    {
        let now = rustix::time::clock_gettime(rustix::time::ClockId::RealtimeCoarse);
        now.tv_sec * 1000 + now.tv_nsec / 1_000_000
    }
    #[cfg(not(target_os = "linux"))]
    {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as i64)
    }
}

/// The producer id to start with, asked for again while the broker says it is not ready to
/// give one (a fresh broker loads its producer-id state first), up to the delivery timeout.
async fn first_producer_id(
    cluster: &Cluster,
    config: &ProducerConfig,
) -> Result<(i64, i16), ClientError> {
    let deadline = tokio::time::Instant::now() + config.delivery_timeout;
    loop {
        match cluster.init_producer_id().await {
            Err(ClientError::Kafka { code, .. })
                if code.is_retriable() && tokio::time::Instant::now() < deadline =>
            {
                tokio::time::sleep(config.retry_backoff).await;
            }
            answer => return answer,
        }
    }
}

/// The ranges of `items` (grouped by topic) that share a topic, in order: how a request
/// lists each topic once with its partitions.
fn topic_runs<'a, T>(
    items: &'a [T],
    topic: impl Fn(&T) -> &str + 'a,
) -> impl Iterator<Item = std::ops::Range<usize>> + 'a {
    let mut start = 0;
    std::iter::from_fn(move || {
        let first = topic(items.get(start)?);
        let len = items[start..]
            .iter()
            .take_while(|item| topic(item) == first)
            .count();
        start += len;
        Some(start - len..start)
    })
}

/// `offsets` (sorted by topic) of the consumer `group` names, committed in the transaction of
/// transactional id `id` (`conn` is the group's coordinator).
async fn commit_in_txn(
    conn: &mut crate::Connection,
    id: &str,
    group: &GroupMetadata,
    (producer_id, producer_epoch): (i64, i16),
    offsets: &[(String, i32, i64)],
) -> Result<(), ClientError> {
    let partitions: Vec<OffsetCommitPartition<'_>> = offsets
        .iter()
        .map(|(_, partition, offset)| OffsetCommitPartition {
            partition_index: *partition,
            committed_offset: *offset,
            committed_leader_epoch: -1,
            committed_metadata: None,
        })
        .collect();
    let topics: Vec<OffsetCommitTopic<'_>> = topic_runs(offsets, |o| &o.0)
        .map(|run| OffsetCommitTopic {
            name: &offsets[run.start].0,
            partitions: &partitions[run],
        })
        .collect();
    let request = TxnOffsetCommitRequest {
        transactional_id: id,
        group_id: &group.group_id,
        producer_id,
        producer_epoch,
        generation_id: group.generation_id,
        member_id: &group.member_id,
        group_instance_id: group.group_instance_id.as_deref(),
        topics: &topics,
    };
    conn.txn_offset_commit(&request).await
}

/// What the producer handle and its tasks share.
#[derive(Debug)]
struct Shared {
    cluster: Arc<Cluster>,
    config: ProducerConfig,
    state: Mutex<State>,
    /// New work for the sender: a batch sealed or opened, a retry queued.
    wake_sender: Notify,
    /// A batch finished (delivered or failed): for `flush` and for `send` waiting for room.
    progress: Notify,
    retries: AtomicU64,
    producer_ids: AtomicU64,
    /// A transactional producer's transaction.
    txn: Option<transaction::Txn>,
    /// The coordinators of the groups whose offsets transactions commit, kept (each with its
    /// connection) from one transaction to the next.
    groups: Mutex<HashMap<String, Arc<Coordinator>>>,
}

impl Shared {
    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// Stops the sender when the last producer handle goes.
#[derive(Debug)]
struct Task(JoinHandle<()>);

impl Drop for Task {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// A producer; clones share batches, connections and the sender task. Records not yet
/// delivered when the last clone is dropped are lost: [`flush`](Self::flush) first.
#[derive(Debug, Clone)]
pub struct Producer {
    shared: Arc<Shared>,
    _task: Arc<Task>,
}

impl Producer {
    /// Connects to the cluster through `bootstrap` (`HOST:PORT[,HOST:PORT...]`) and starts the
    /// sender task on the current tokio runtime.
    ///
    /// # Errors
    ///
    /// No broker answers, the configuration cannot work ([`ClientError::Config`]), or an
    /// idempotent producer gets no producer id.
    pub async fn connect(bootstrap: &str, config: ProducerConfig) -> Result<Self, ClientError> {
        config.check()?;
        let cluster = Arc::new(Cluster::connect(bootstrap, config.client.clone()).await?);
        let txn = match &config.transactional_id {
            Some(id) => {
                let (cluster, timeout) = (Arc::clone(&cluster), config.transaction_timeout);
                Some(transaction::Txn::connect(cluster, id.clone(), timeout).await?)
            }
            None => None,
        };
        let producer = match &txn {
            Some(txn) => Some(txn.producer()),
            None if config.idempotence => Some(first_producer_id(&cluster, &config).await?),
            None => None,
        };
        let shared = Arc::new(Shared {
            cluster,
            txn,
            state: Mutex::new(State::new(&config, producer)),
            config,
            wake_sender: Notify::new(),
            progress: Notify::new(),
            retries: AtomicU64::new(0),
            producer_ids: AtomicU64::new(u64::from(producer.is_some())),
            groups: Mutex::default(),
        });
        let task = tokio::spawn(sender::run(Arc::clone(&shared)));
        Ok(Producer {
            shared,
            _task: Arc::new(Task(task)),
        })
    }

    /// Appends `record` to its partition's batch. Waits only to learn a new topic's partitions,
    /// or while `buffer_memory` bytes wait for acknowledgement.
    pub async fn send(&self, record: ProducerRecord<'_>) -> Result<Delivery, ClientError> {
        self.inside_transaction()?;
        let timestamp = record.timestamp.unwrap_or_else(now_ms);
        match self.try_append(&record, timestamp)? {
            Some((delivery, false)) => Ok(delivery),
            // A batch was opened or sealed: let the sender task see it now, even on a
            // current-thread runtime whose caller never waits otherwise.
            Some((delivery, true)) => {
                tokio::task::yield_now().await;
                Ok(delivery)
            }
            None => self.send_waiting(&record, timestamp).await,
        }
    }

    /// The record appended, and whether the sender was woken; `None` when the buffer is full
    /// or the topic new.
    fn try_append(
        &self,
        record: &ProducerRecord<'_>,
        timestamp: i64,
    ) -> Result<Option<(Delivery, bool)>, ClientError> {
        let shared = &*self.shared;
        let appended = {
            let mut state = shared.state();
            if state.buffered() >= shared.config.buffer_memory {
                return Ok(None);
            }
            state.append(record, timestamp, Delivery::new)?
        };
        Ok(appended.map(|appended| {
            if appended.wake_sender {
                shared.wake_sender.notify_one();
            }
            (appended.delivery, appended.wake_sender)
        }))
    }

    /// Appends `records` in order, as [`send`](Self::send) would one by one, but under one
    /// lock and one clock read for as many as the buffer takes, and without a [`Delivery`]
    /// each: for pipelines that hand records over in bulk. Waits like `send` when the
    /// buffer is full or a topic is new. After an error, the records before the failing one
    /// are appended and go out with the next batches ([`flush`](Self::flush) waits for them).
    pub async fn send_all<'r>(
        &self,
        records: impl IntoIterator<Item = ProducerRecord<'r>>,
    ) -> Result<Deliveries, ClientError> {
        self.inside_transaction()?;
        let shared = &*self.shared;
        let mut deliveries = Deliveries { acks: Vec::new() };
        let mut records = records.into_iter().peekable();
        while records.peek().is_some() {
            let now = now_ms();
            // Under the lock until a batch opens or seals (the sender must see it), the
            // buffer is full, or a topic is new.
            let (woke, waiting) = {
                let mut state = shared.state();
                loop {
                    let Some(record) = records.peek() else {
                        break (false, None);
                    };
                    let timestamp = record.timestamp.unwrap_or(now);
                    if state.buffered() >= shared.config.buffer_memory {
                        break (false, records.next());
                    }
                    match state.append(record, timestamp, |ack, _, _| deliveries.note(ack))? {
                        None => break (false, records.next()),
                        Some(appended) => {
                            records.next();
                            if appended.wake_sender {
                                break (true, None);
                            }
                        }
                    }
                }
            };
            if woke {
                shared.wake_sender.notify_one();
                tokio::task::yield_now().await;
            }
            if let Some(record) = waiting {
                let timestamp = record.timestamp.unwrap_or_else(now_ms);
                let delivery = self.send_waiting(&record, timestamp).await?;
                deliveries.note(&delivery.ack);
            }
        }
        Ok(deliveries)
    }

    /// [`send`](Self::send) once the record has to wait: for room, or for the topic's
    /// partitions.
    async fn send_waiting(
        &self,
        record: &ProducerRecord<'_>,
        timestamp: i64,
    ) -> Result<Delivery, ClientError> {
        let shared = &*self.shared;
        loop {
            // Created before the check, so it sees any progress made after it.
            let progress = shared.progress.notified();
            if shared.state().buffered() >= shared.config.buffer_memory {
                progress.await;
                continue;
            }
            if let Some((delivery, _)) = self.try_append(record, timestamp)? {
                return Ok(delivery);
            }
            let partitions = shared.cluster.partitions(record.topic).await?;
            if partitions == 0 {
                return Err(ClientError::NoLeader {
                    topic: record.topic.to_owned(),
                    partition: 0,
                });
            }
            shared.state().add_topic(record.topic, partitions);
        }
    }

    /// Refuses a record of a transactional producer outside a transaction.
    #[inline]
    fn inside_transaction(&self) -> Result<(), ClientError> {
        match &self.shared.txn {
            Some(txn) if !txn.is_open() => Err(ClientError::TransactionState(
                "a transactional producer sends inside a transaction (begin_transaction)",
            )),
            _ => Ok(()),
        }
    }

    fn txn(&self) -> Result<&transaction::Txn, ClientError> {
        self.shared
            .txn
            .as_ref()
            .ok_or(ClientError::TransactionState(
                "transactions need ProducerConfig::transactional_id",
            ))
    }

    /// Opens a transaction: the records sent from now on, until it is committed or aborted,
    /// are its.
    ///
    /// # Errors
    ///
    /// [`ClientError::TransactionState`] for a producer without a transactional id, or with a
    /// transaction open already.
    pub fn begin_transaction(&self) -> Result<(), ClientError> {
        self.txn()?.begin()
    }

    /// Commits the `offsets` (topic, partition, next offset to read) of the consumer `group`
    /// says ([`Consumer::group_metadata`](crate::Consumer::group_metadata), or
    /// [`GroupMetadata::standalone`] for one that assigns its partitions itself) with the
    /// open transaction: they count once, and only if, it commits; and only while that
    /// member is in the group's current generation (a zombie's are refused).
    ///
    /// # Errors
    ///
    /// [`ClientError::TransactionState`] without an open transaction; the coordinators'
    /// refusals (`ILLEGAL_GENERATION`, `UNKNOWN_MEMBER_ID` for a member the group moved on
    /// from).
    pub async fn send_offsets_to_transaction(
        &self,
        group: &GroupMetadata,
        offsets: &[(&str, i32, i64)],
    ) -> Result<(), ClientError> {
        let txn = self.txn()?;
        if !txn.is_open() {
            return Err(ClientError::TransactionState("no transaction is open"));
        }
        let producer = txn.add_group(&group.group_id).await?;
        let coordinator = {
            let mut groups = self
                .shared
                .groups
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            let cluster = &self.shared.cluster;
            let found = groups.entry(group.group_id.clone()).or_insert_with(|| {
                Arc::new(Coordinator::new(
                    group.group_id.clone(),
                    GROUP,
                    Arc::clone(cluster),
                ))
            });
            Arc::clone(found)
        };
        let id = self
            .shared
            .config
            .transactional_id
            .clone()
            .unwrap_or_default();
        let mut offsets: Vec<(String, i32, i64)> = offsets
            .iter()
            .map(|&(topic, partition, offset)| (topic.to_owned(), partition, offset))
            .collect();
        // Each topic once in the request.
        offsets.sort_unstable();
        coordinator
            .call(|mut conn, _| {
                let (id, group, offsets) = (id.clone(), group.clone(), offsets.clone());
                async move {
                    let answer = commit_in_txn(&mut conn, &id, &group, producer, &offsets).await;
                    (conn, answer)
                }
            })
            .await
    }

    /// Commits the open transaction once every record of it is delivered: they (and the
    /// offsets sent with it) become visible to `read_committed` consumers together. Records
    /// sent meanwhile are refused.
    ///
    /// # Errors
    ///
    /// [`ClientError::Undelivered`] when a record of it was not delivered (abort it then);
    /// [`ClientError::TransactionState`] without an open transaction; the coordinator's
    /// refusals (`PRODUCER_FENCED` once another producer took the transactional id: this one
    /// can do nothing more).
    pub async fn commit_transaction(&self) -> Result<(), ClientError> {
        let txn = self.txn()?;
        let ending = txn.start_ending()?;
        self.flush().await.map_err(ClientError::Undelivered)?;
        txn.end(&ending, true, false).await.map(drop)
    }

    /// Aborts the open transaction: its records (delivered or not) and offsets never become
    /// visible to `read_committed` consumers. Records still waiting are failed; records sent
    /// meanwhile are refused.
    ///
    /// # Errors
    ///
    /// [`ClientError::TransactionState`] without an open transaction; the coordinator's
    /// refusals.
    pub async fn abort_transaction(&self) -> Result<(), ClientError> {
        let txn = self.txn()?;
        let ending = txn.start_ending()?;
        let shared = &*self.shared;
        let held = shared.state().take_held();
        let aborted = ProduceError(Arc::new(ClientError::TransactionState(
            "the transaction was aborted",
        )));
        for batch in held {
            shared.finish(batch, Err(aborted.clone()));
        }
        // Delivered or failed, each; what failed is the transaction's, and it is aborted.
        let _ = self.flush().await;
        let bump = shared.state().needs_id_any();
        let producer = txn.end(&ending, false, bump).await?;
        if bump {
            shared.producer_ids.fetch_add(1, Ordering::Relaxed);
            shared.state().install_all(producer);
        }
        Ok(())
    }

    /// What the producer has done so far.
    #[must_use]
    pub fn stats(&self) -> ProducerStats {
        ProducerStats {
            retries: self.shared.retries.load(Ordering::Relaxed),
            producer_ids: self.shared.producer_ids.load(Ordering::Relaxed),
        }
    }

    /// Sends every batch now, lingering or not, and waits until each has been delivered or has
    /// failed: the first failure since the last flush, if any.
    pub async fn flush(&self) -> Result<(), ProduceError> {
        let shared = &*self.shared;
        shared.state().seal_all();
        shared.wake_sender.notify_one();
        loop {
            let notified = shared.progress.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            {
                let mut state = shared.state();
                if state.idle() {
                    return state.take_failure().map_or(Ok(()), Err);
                }
            }
            notified.await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::topic_runs;

    #[test]
    fn topic_runs_split_where_the_topic_changes() {
        let items = [("a", 0), ("a", 1), ("b", 0), ("c", 2), ("c", 0)];
        let runs: Vec<_> = topic_runs(&items, |i| i.0).collect();
        assert_eq!(runs, [0..2, 2..3, 3..5]);
        let none: [(&str, i32); 0] = [];
        assert_eq!(topic_runs(&none, |i| i.0).count(), 0);
    }
}
