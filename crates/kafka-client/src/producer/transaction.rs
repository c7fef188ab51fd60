//! A transactional producer's side of transactions (KIP-98): its transaction coordinator, the
//! partitions its open transaction has written to, and the calls that begin, add to, commit
//! and abort it. The coordinator is the broker that keeps the transactional id's state,
//! found like a consumer group's; each partition joins the transaction (AddPartitionsToTxn)
//! before the first batch goes to it, which the sender waits for.

use std::collections::HashSet;
use std::future::Future;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use ringwire_kafka::api::add_partitions_to_txn::AddPartitionsToTxnTopic;
use ringwire_kafka::api::find_coordinator::TRANSACTION;
use ringwire_kafka::ErrorCode;

use super::topic_runs;
use crate::cluster::Cluster;
use crate::coordinator::Coordinator;
use crate::{ClientError, Connection};

/// A transactional id's coordinator and its producer's transaction.
#[derive(Debug)]
pub(super) struct Txn {
    coordinator: Coordinator,
    timeout: Duration,
    /// A transaction is open.
    open: AtomicBool,
    /// It is being committed or aborted: records may not be sent.
    ending: AtomicBool,
    state: Mutex<State>,
}

#[derive(Debug)]
struct State {
    /// The producer id and epoch the coordinator gave.
    producer: (i64, i16),
    /// Partitions the open transaction has added.
    added: HashSet<(Arc<str>, i32)>,
    /// Consumer groups whose offsets it commits.
    groups: HashSet<String>,
}

/// How long to wait before asking again while the coordinator is still ending the last
/// transaction (`CONCURRENT_TRANSACTIONS`).
const BUSY_BACKOFF: Duration = Duration::from_millis(20);

impl Txn {
    /// The coordinator of transactional id `id`, and the producer id and epoch it gives
    /// (bumped, which fences any producer that had the id before and aborts what it left
    /// open).
    pub(super) async fn connect(
        cluster: Arc<Cluster>,
        id: String,
        timeout: Duration,
    ) -> Result<Txn, ClientError> {
        let coordinator = Coordinator::new(id, TRANSACTION, cluster);
        let producer = init(&coordinator, timeout, None).await?;
        Ok(Txn {
            coordinator,
            timeout,
            open: AtomicBool::new(false),
            ending: AtomicBool::new(false),
            state: Mutex::new(State {
                producer,
                added: HashSet::new(),
                groups: HashSet::new(),
            }),
        })
    }

    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    pub(super) fn producer(&self) -> (i64, i16) {
        self.state().producer
    }

    /// Whether a transaction is open and not ending: records may be sent.
    pub(super) fn is_open(&self) -> bool {
        self.open.load(Ordering::Acquire) && !self.ending.load(Ordering::Acquire)
    }

    /// Marks the open transaction as ending (committed or aborted): until the returned guard
    /// goes, records are refused, and so is another commit or abort.
    pub(super) fn start_ending(&self) -> Result<Ending<'_>, ClientError> {
        if !self.open.load(Ordering::Acquire) {
            return Err(ClientError::TransactionState("no transaction is open"));
        }
        if self.ending.swap(true, Ordering::AcqRel) {
            return Err(ClientError::TransactionState(
                "the transaction is already being committed or aborted",
            ));
        }
        Ok(Ending(self))
    }

    pub(super) fn begin(&self) -> Result<(), ClientError> {
        if self.open.swap(true, Ordering::AcqRel) {
            return Err(ClientError::TransactionState(
                "a transaction is already open",
            ));
        }
        Ok(())
    }

    /// Adds to the open transaction those of `partitions` it has not written to yet.
    pub(super) async fn add_partitions(
        &self,
        partitions: impl IntoIterator<Item = (Arc<str>, i32)>,
    ) -> Result<(), ClientError> {
        let (producer, mut new): (_, Vec<(Arc<str>, i32)>) = {
            let state = self.state();
            let new = partitions
                .into_iter()
                .filter(|p| !state.added.contains(p))
                .collect();
            (state.producer, new)
        };
        if new.is_empty() {
            return Ok(());
        }
        new.sort_unstable();
        new.dedup();
        let call = || {
            let new = new.clone();
            move |mut conn: Connection, id: &str| {
                let (id, new) = (id.to_owned(), new.clone());
                async move {
                    let grouped = by_topic(&new);
                    let topics: Vec<AddPartitionsToTxnTopic<'_>> = grouped
                        .iter()
                        .map(|(name, partitions)| AddPartitionsToTxnTopic { name, partitions })
                        .collect();
                    let answer = conn.add_partitions_to_txn(&id, producer, &topics).await;
                    (conn, answer)
                }
            }
        };
        self.busy_retrying(|| self.coordinator.call(call())).await?;
        self.state().added.extend(new);
        Ok(())
    }

    /// Tells the coordinator that the open transaction commits `group`'s offsets (once per
    /// group and transaction).
    pub(super) async fn add_group(&self, group: &str) -> Result<(i64, i16), ClientError> {
        let (producer, known) = {
            let state = self.state();
            (state.producer, state.groups.contains(group))
        };
        if !known {
            let call = || {
                let group = group.to_owned();
                move |mut conn: Connection, id: &str| {
                    let (id, group) = (id.to_owned(), group.clone());
                    async move {
                        let answer = conn.add_offsets_to_txn(&id, producer, &group).await;
                        (conn, answer)
                    }
                }
            };
            self.busy_retrying(|| self.coordinator.call(call())).await?;
            self.state().groups.insert(group.to_owned());
        }
        Ok(producer)
    }

    /// Commits (`commit`) or aborts the open transaction; then, if `bump`, takes the id's
    /// next epoch (after a batch that failed for good left a gap in a partition's
    /// sequence). The producer id and epoch to go on with.
    pub(super) async fn end(
        &self,
        _ending: &Ending<'_>,
        commit: bool,
        bump: bool,
    ) -> Result<(i64, i16), ClientError> {
        let producer = self.producer();
        let call = || {
            move |mut conn: Connection, id: &str| {
                let id = id.to_owned();
                async move {
                    let answer = conn.end_txn(&id, producer, commit).await;
                    (conn, answer)
                }
            }
        };
        self.busy_retrying(|| self.coordinator.call(call())).await?;
        let producer = if bump {
            init(&self.coordinator, self.timeout, Some(producer)).await?
        } else {
            producer
        };
        let mut state = self.state();
        state.producer = producer;
        state.added.clear();
        state.groups.clear();
        self.open.store(false, Ordering::Release);
        Ok(producer)
    }

    /// `call()`'s answer, asked again while the coordinator says it is still ending the last
    /// transaction, up to the transaction timeout.
    async fn busy_retrying<T, F: Future<Output = Result<T, ClientError>>>(
        &self,
        call: impl Fn() -> F,
    ) -> Result<T, ClientError> {
        busy_retrying(self.timeout, call).await
    }
}

/// A transaction being committed or aborted ([`Txn::start_ending`]); when it goes the
/// transaction is closed (ended) or open again (the end failed).
pub(super) struct Ending<'t>(&'t Txn);

impl Drop for Ending<'_> {
    fn drop(&mut self) {
        self.0.ending.store(false, Ordering::Release);
    }
}

/// The producer id and epoch of the coordinator's transactional id (its epoch bumped from
/// `current`, or from what the coordinator kept).
async fn init(
    coordinator: &Coordinator,
    timeout: Duration,
    current: Option<(i64, i16)>,
) -> Result<(i64, i16), ClientError> {
    let call = || {
        move |mut conn: Connection, id: &str| {
            let id = id.to_owned();
            async move {
                let answer = conn
                    .init_transactional_producer_id(&id, timeout, current)
                    .await;
                (conn, answer)
            }
        }
    };
    busy_retrying(timeout, || coordinator.call(call())).await
}

async fn busy_retrying<T, F: Future<Output = Result<T, ClientError>>>(
    timeout: Duration,
    call: impl Fn() -> F,
) -> Result<T, ClientError> {
    let deadline = tokio::time::Instant::now() + timeout;
    loop {
        match call().await {
            Err(ClientError::Kafka { code, .. })
                if code == ErrorCode::CONCURRENT_TRANSACTIONS
                    && tokio::time::Instant::now() < deadline =>
            {
                tokio::time::sleep(BUSY_BACKOFF).await;
            }
            answer => return answer,
        }
    }
}

/// `partitions` (sorted) grouped by topic.
fn by_topic(partitions: &[(Arc<str>, i32)]) -> Vec<(&str, Vec<i32>)> {
    let runs = topic_runs(partitions, |p| &p.0);
    let run_of = |run: std::ops::Range<usize>| {
        let topic = &*partitions[run.start].0;
        (topic, partitions[run].iter().map(|p| p.1).collect())
    };
    runs.map(run_of).collect()
}
