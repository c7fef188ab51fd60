//! The producer's tasks: one routes sealed batches to their partitions' leaders, and one per
//! leader broker pipelines Produce requests on its connection.

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::Ordering;
use std::sync::Arc;

use ringwire_kafka::api::produce::{
    Acks, ProducePartition, ProduceRequest, ProduceResponse, ProduceTopic,
};
use ringwire_kafka::{ApiKey, ErrorCode};
use tokio::sync::mpsc::{self, error::SendError, UnboundedReceiver, UnboundedSender};
use tokio::time::{sleep_until, Instant};

use super::accumulator::Batch;
use super::transaction::Txn;
use super::{topic_runs, ProduceError, Shared};
use crate::error::produce_message;
use crate::{ClientError, Connection};

impl Shared {
    /// Finishes `batch`: delivered at `base_offset`, or failed.
    pub(super) fn finish(&self, batch: Batch, result: Result<i64, ProduceError>) {
        let failed = result.is_err();
        let ack = self.state().finish(batch, result.as_ref().err());
        ack.complete(result);
        self.progress.notify_waiters();
        if failed && self.config.idempotence {
            // The partition may now wait for a fresh producer id.
            self.wake_sender.notify_one();
        }
    }

    /// Sends `batch` again later, unless its delivery timeout has passed.
    fn retry(&self, batch: Batch, error: ClientError) {
        self.retries.fetch_add(1, Ordering::Relaxed);
        let expired = self.state().retry(batch, error);
        match expired {
            Some((batch, error)) => self.finish(batch, Err(error)),
            None => self.wake_sender.notify_one(),
        }
    }
}

/// Routes batches as they are sealed or fall due for a retry, until the producer is dropped.
pub(super) async fn run(shared: Arc<Shared>) {
    let mut brokers: HashMap<i32, UnboundedSender<Batch>> = HashMap::new();
    loop {
        let mut work = shared.state().take_work(std::time::Instant::now());
        if let Some(txn) = &shared.txn {
            work.batches = admit(&shared, txn, work.batches).await;
        }
        if !work.batches.is_empty() {
            route(&shared, &mut brokers, work.batches, work.stale).await;
        }
        // A transactional producer's fresh epoch comes when its transaction is aborted.
        if work.needs_id && shared.txn.is_none() {
            match shared.cluster.init_producer_id().await {
                Ok(producer) => {
                    shared.producer_ids.fetch_add(1, Ordering::Relaxed);
                    shared.state().install(producer);
                    continue;
                }
                Err(_) => {
                    let again = std::time::Instant::now() + shared.config.retry_backoff;
                    work.deadline = Some(work.deadline.map_or(again, |d| d.min(again)));
                }
            }
        }
        let notified = shared.wake_sender.notified();
        match work.deadline {
            Some(at) => {
                tokio::select! {
                    () = notified => {}
                    () = sleep_until(Instant::from_std(at)) => {}
                }
            }
            None => notified.await,
        }
    }
}

/// The batches whose partitions are in `txn`'s open transaction (added now if new); the
/// others are sent again later (the coordinator busy or moving) or fail.
async fn admit(shared: &Arc<Shared>, txn: &Txn, batches: Vec<Batch>) -> Vec<Batch> {
    let partitions = batches.iter().map(|b| (Arc::clone(&b.topic), b.partition));
    match txn.add_partitions(partitions).await {
        Ok(()) => batches,
        Err(e) => {
            let retriable = e.is_coordinator_gone()
                || matches!(&e, ClientError::Kafka { code, .. } if code.is_retriable());
            let failed = ProduceError(Arc::new(e));
            for batch in batches {
                if retriable {
                    shared.retry(batch, ClientError::Broken(failed.error().to_string()));
                } else {
                    shared.finish(batch, Err(failed.clone()));
                }
            }
            Vec::new()
        }
    }
}

async fn route(
    shared: &Arc<Shared>,
    brokers: &mut HashMap<i32, UnboundedSender<Batch>>,
    batches: Vec<Batch>,
    stale: bool,
) {
    let unknown = |b: &Batch| shared.cluster.leader(&b.topic, b.partition).is_none();
    if stale || batches.iter().any(unknown) {
        let mut topics: Vec<&str> = batches.iter().map(|b| &*b.topic).collect();
        topics.sort_unstable();
        topics.dedup();
        // On failure the batches wait out a backoff and this runs again.
        let _ = shared.cluster.refresh(&topics).await;
    }
    for batch in batches {
        let Some(node) = shared.cluster.leader(&batch.topic, batch.partition) else {
            let error = ClientError::NoLeader {
                topic: batch.topic.to_string(),
                partition: batch.partition,
            };
            shared.retry(batch, error);
            continue;
        };
        let mut batch = batch;
        loop {
            let tx = brokers.entry(node).or_insert_with(|| {
                let (tx, rx) = mpsc::unbounded_channel();
                tokio::spawn(broker(Arc::clone(shared), node, rx));
                tx
            });
            match tx.send(batch) {
                Ok(()) => break,
                // That broker's task ended (its connection broke): start another.
                Err(SendError(back)) => {
                    brokers.remove(&node);
                    batch = back;
                }
            }
        }
    }
}

/// Pipelines the batches routed to broker `node` on one connection. When the connection breaks
/// every batch it holds goes back for a retry, and the task ends.
async fn broker(shared: Arc<Shared>, node: i32, mut rx: UnboundedReceiver<Batch>) {
    let config = &shared.config;
    let mut conn = match connect(&shared, node).await {
        Ok(conn) => conn,
        Err(e) => return give_back(&shared, &mut rx, VecDeque::new(), Vec::new(), &e),
    };
    // Requests in flight, oldest first: when each was sent and its batches.
    let mut in_flight: VecDeque<(Instant, Vec<Batch>)> = VecDeque::new();
    // Batches that could not join the last request (a request takes one batch per partition).
    let mut deferred: VecDeque<Batch> = VecDeque::new();
    let mut outcomes: Vec<Option<Outcome>> = Vec::new();
    loop {
        let timeout = in_flight
            .front()
            .map(|(sent, _)| *sent + config.request_timeout);
        // A session near its end: the answers in flight come in first, and the next send
        // renews it.
        let room =
            in_flight.len() < config.max_in_flight && (in_flight.is_empty() || !conn.renewal_due());
        let failure = tokio::select! {
            len = conn.next_frame(), if !in_flight.is_empty() => {
                let (_, batches) = in_flight.pop_front().expect("a request in flight");
                match len {
                    Ok(len) => {
                        let read = read_response(&mut conn, len, &batches, &mut outcomes);
                        conn.rx.consume(len);
                        match read {
                            Ok(()) => {
                                complete(&shared, batches, &mut outcomes);
                                continue;
                            }
                            Err(e) => {
                                in_flight.push_front((Instant::now(), batches));
                                e
                            }
                        }
                    }
                    Err(e) => {
                        in_flight.push_front((Instant::now(), batches));
                        e
                    }
                }
            }
            first = next(&mut deferred, &mut rx), if room => {
                let Some(first) = first else {
                    return; // the producer is gone
                };
                let batches = gather(first, &mut deferred, &mut rx, config.max_request_size);
                let id = config.transactional_id.as_deref();
                match send(&mut conn, &batches, config.acks, id).await {
                    Ok(()) if config.acks == Acks::None => {
                        for batch in batches {
                            shared.finish(batch, Ok(-1));
                        }
                        continue;
                    }
                    Ok(()) => {
                        in_flight.push_back((Instant::now(), batches));
                        continue;
                    }
                    Err(e) => {
                        in_flight.push_back((Instant::now(), batches));
                        e
                    }
                }
            }
            () = sleep_until(timeout.unwrap_or_else(Instant::now)), if timeout.is_some() => {
                ClientError::RequestTimeout(config.request_timeout)
            }
        };
        let in_flight = in_flight.into_iter().flat_map(|(_, b)| b).collect();
        return give_back(&shared, &mut rx, deferred, in_flight, &failure);
    }
}

async fn connect(shared: &Shared, node: i32) -> Result<Connection, ClientError> {
    let address = shared.cluster.address(node).ok_or(ClientError::NoBroker)?;
    Connection::connect(&address, &shared.cluster.config).await
}

/// The next batch for this broker: a deferred one first.
async fn next(deferred: &mut VecDeque<Batch>, rx: &mut UnboundedReceiver<Batch>) -> Option<Batch> {
    match deferred.pop_front() {
        Some(batch) => Some(batch),
        None => rx.recv().await,
    }
}

/// `first` and the batches already waiting, one per partition, up to `max_bytes` in all.
fn gather(
    first: Batch,
    deferred: &mut VecDeque<Batch>,
    rx: &mut UnboundedReceiver<Batch>,
    max_bytes: usize,
) -> Vec<Batch> {
    let mut size = first.bytes.len();
    let mut batches = vec![first];
    let mut skipped = VecDeque::new();
    while let Some(batch) = deferred.pop_front().or_else(|| rx.try_recv().ok()) {
        let taken = batches
            .iter()
            .any(|b| b.partition == batch.partition && b.topic == batch.topic);
        if taken {
            skipped.push_back(batch);
        } else if size + batch.bytes.len() > max_bytes {
            skipped.push_back(batch);
            break;
        } else {
            size += batch.bytes.len();
            batches.push(batch);
        }
    }
    skipped.append(deferred);
    *deferred = skipped;
    // Topics contiguous, as the request groups partitions by topic.
    batches.sort_by(|a, b| (&a.topic, a.partition).cmp(&(&b.topic, b.partition)));
    batches
}

/// Sends one Produce request for `batches`, the batches from where they lie.
async fn send(
    conn: &mut Connection,
    batches: &[Batch],
    acks: Acks,
    transactional_id: Option<&str>,
) -> Result<(), ClientError> {
    let partitions: Vec<ProducePartition<'_>> = batches
        .iter()
        .map(|b| ProducePartition {
            index: b.partition,
            records: &b.bytes,
        })
        .collect();
    let topics: Vec<ProduceTopic<'_>> = topic_runs(batches, |b| &b.topic)
        .map(|run| ProduceTopic {
            name: &batches[run.start].topic,
            partitions: &partitions[run],
        })
        .collect();
    let request = ProduceRequest {
        transactional_id,
        acks,
        timeout_ms: 30_000,
        topics: &topics,
    };
    // The request holds the partitions in this order.
    let records: Vec<&[u8]> = partitions.iter().map(|p| p.records).collect();
    conn.send_spliced(&request, &records).await?;
    Ok(())
}

/// A broker's answer for one batch.
#[derive(Clone)]
struct Outcome {
    code: ErrorCode,
    base_offset: i64,
    /// What the broker said about a refusal.
    message: Option<String>,
}

/// Reads the Produce response of `batches` into `outcomes`, one per batch (`None`: the
/// response did not mention it).
fn read_response(
    conn: &mut Connection,
    len: usize,
    batches: &[Batch],
    outcomes: &mut Vec<Option<Outcome>>,
) -> Result<(), ClientError> {
    outcomes.clear();
    outcomes.resize(batches.len(), None);
    let frame = conn.frame(len)?;
    let response = frame.decode::<ProduceResponse<'_>>()?;
    for topic in &response.topics {
        for p in &topic.partitions {
            let found = batches
                .iter()
                .position(|b| b.partition == p.index && *b.topic == *topic.name);
            if let Some(i) = found {
                outcomes[i] = Some(Outcome {
                    code: p.error_code,
                    base_offset: p.base_offset,
                    message: produce_message(p),
                });
            }
        }
    }
    Ok(())
}

/// Delivers, retries or fails each batch of an answered request.
fn complete(shared: &Shared, batches: Vec<Batch>, outcomes: &mut [Option<Outcome>]) {
    for (batch, outcome) in batches.into_iter().zip(outcomes) {
        let idempotent = shared.config.idempotence;
        let Some(Outcome {
            code,
            base_offset,
            message,
        }) = outcome.take()
        else {
            let error = ClientError::MissingPartition;
            shared.finish(batch, Err(ProduceError(Arc::new(error))));
            continue;
        };
        match code {
            ErrorCode::NONE => shared.finish(batch, Ok(base_offset)),
            // Already in the log (an older broker's answer to a retry).
            ErrorCode::DUPLICATE_SEQUENCE_NUMBER if idempotent => {
                shared.finish(batch, Ok(base_offset));
            }
            code => {
                let error = ClientError::Kafka {
                    api: ApiKey::Produce,
                    code,
                    message,
                };
                // Out of order: an earlier batch of the partition is being retried.
                let reordered = idempotent && code == ErrorCode::OUT_OF_ORDER_SEQUENCE_NUMBER;
                if code.is_retriable() || reordered {
                    shared.retry(batch, error);
                } else {
                    shared.finish(batch, Err(ProduceError(Arc::new(error))));
                }
            }
        }
    }
}

/// After the connection failed with `error`: every batch this task holds or has been sent
/// goes back for a retry.
fn give_back(
    shared: &Shared,
    rx: &mut UnboundedReceiver<Batch>,
    deferred: VecDeque<Batch>,
    in_flight: Vec<Batch>,
    error: &ClientError,
) {
    rx.close();
    let queued = std::iter::from_fn(|| rx.try_recv().ok());
    for batch in in_flight.into_iter().chain(deferred).chain(queued) {
        shared.retry(batch, ClientError::Broken(error.to_string()));
    }
}
