//! A pipelined consumer of assigned partitions.
//!
//! The caller assigns partitions (no group membership or rebalancing). Offsets are the
//! caller's to keep, or a consumer group's: with [`ConsumerConfig::group`] the consumer
//! starts where the group committed ([`Start::Committed`]) and commits to the group's
//! coordinator ([`Consumer::commit`]), which other Kafka clients of that group read.
//!
//! Each leader broker has one Fetch in flight. When its answer arrives, the next Fetch is
//! computed from the batch headers alone and sent before any record is handed out, so the
//! broker reads the log while the caller handles records borrowed from the receive ring.

use std::collections::HashMap;
use std::future::{poll_fn, Future};
use std::sync::Arc;
use std::task::Poll;
use std::time::{Duration, Instant};

use ringwire_kafka::api::fetch::{FetchPartition, FetchRequest, FetchResponse, FetchTopic};
use ringwire_kafka::api::list_offsets::{EARLIEST, LATEST};
use ringwire_kafka::api::offset_commit::{OffsetCommitPartition, OffsetCommitTopic};
use ringwire_kafka::record::{walk, walk_committed, Batch, Batches, Record};
use ringwire_kafka::{ApiKey, ErrorCode};

use crate::cluster::Cluster;
use crate::connection::queue;
use crate::{ClientConfig, ClientError, Connection, Isolation};

/// Consumer settings.
#[derive(Debug, Clone)]
pub struct ConsumerConfig {
    /// Connections. Two Fetch answers of `max_bytes` may sit in the receive ring at once.
    pub client: ClientConfig,
    /// How long the broker may wait for `min_bytes`.
    pub max_wait: Duration,
    /// Bytes the broker waits for before answering.
    pub min_bytes: i32,
    /// Bytes per Fetch answer (the broker still sends a first batch larger than this whole).
    pub max_bytes: i32,
    /// Bytes per partition in one answer.
    pub partition_max_bytes: i32,
    /// Whether records of open and aborted transactions are handed out.
    pub isolation: Isolation,
    /// The consumer group whose committed offsets [`Start::Committed`] reads and
    /// [`Consumer::commit`] writes. Offsets only: the consumer does not join the group, and
    /// the group must have no members while it commits (the coordinator refuses commits
    /// outside a running group's generation).
    pub group: Option<String>,
}

impl Default for ConsumerConfig {
    fn default() -> Self {
        ConsumerConfig {
            client: ClientConfig::default(),
            max_wait: Duration::from_millis(500),
            min_bytes: 1,
            max_bytes: 8 << 20,
            partition_max_bytes: 2 << 20,
            isolation: Isolation::ReadUncommitted,
            group: None,
        }
    }
}

/// Where an assigned partition starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Start {
    /// The oldest record kept.
    Earliest,
    /// After the newest record: only what is produced from now on.
    Latest,
    /// This offset.
    At(i64),
    /// Where [`ConsumerConfig::group`] committed; where `Reset` says if it committed nothing
    /// for the partition.
    Committed(Reset),
}

/// Where a partition starts when its group committed no offset for it (Kafka's
/// `auto.offset.reset`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reset {
    /// The oldest record kept.
    Earliest,
    /// After the newest record.
    Latest,
}

/// The wait before asking again for a group's coordinator that is moving or loading.
const COORDINATOR_BACKOFF: Duration = Duration::from_millis(100);

/// The first whole Fetch answer from any of `leaders` (each has a Fetch in flight): its
/// leader and length. Whichever answers first: a leader with nothing new holds its Fetch for
/// `max_wait`, which must not hold back the others' records. Looks at the leaders from
/// `turn` on (cancel-safe: a frame read in part stays in its receive ring).
async fn first_answer(
    fetchers: &mut HashMap<i32, Fetcher>,
    leaders: &[i32],
    turn: usize,
) -> Result<(i32, usize), ClientError> {
    let mut waiting = fetchers
        .iter_mut()
        .filter(|(node, fetcher)| fetcher.in_flight && leaders.contains(node));
    let first = waiting.next().ok_or(ClientError::NothingAssigned)?;
    let Some(second) = waiting.next() else {
        // One leader (the common case): its answer, with nothing to race or box.
        let (&node, fetcher) = first;
        return Ok((node, fetcher.conn.next_frame().await?));
    };
    let mut waits: Vec<_> = [first, second]
        .into_iter()
        .chain(waiting)
        .map(|(&node, fetcher)| Box::pin(async move { (node, fetcher.conn.next_frame().await) }))
        .collect();
    let n = waits.len();
    let (node, len) = poll_fn(|cx| {
        for k in 0..n {
            if let Poll::Ready(answer) = waits[(turn + k) % n].as_mut().poll(cx) {
                return Poll::Ready(answer);
            }
        }
        Poll::Pending
    })
    .await;
    Ok((node, len?))
}

/// A partition being consumed.
#[derive(Debug)]
struct Assigned {
    topic: Arc<str>,
    partition: i32,
    /// The next offset to hand out.
    position: i64,
    /// The offset the Fetch in flight asked for.
    fetching: i64,
    /// Where the log ended by the last Fetch answer for the partition.
    end: Option<i64>,
}

/// One leader's connection and the Fetch in flight on it, if any.
#[derive(Debug)]
struct Fetcher {
    conn: Connection,
    in_flight: bool,
}

/// A consumer; see the module documentation.
#[derive(Debug)]
pub struct Consumer {
    cluster: Cluster,
    config: ConsumerConfig,
    assigned: Vec<Assigned>,
    fetchers: HashMap<i32, Fetcher>,
    /// Rotates the leader whose answer is looked for first.
    turn: usize,
    scratch: Vec<u8>,
    /// The connection to [`ConsumerConfig::group`]'s coordinator, once found.
    coordinator: Option<Connection>,
}

impl Consumer {
    /// Connects to the cluster through `bootstrap` (`HOST:PORT[,HOST:PORT...]`).
    pub async fn connect(bootstrap: &str, config: ConsumerConfig) -> Result<Self, ClientError> {
        Ok(Consumer {
            cluster: Cluster::connect(bootstrap, config.client.clone()).await?,
            config,
            assigned: Vec::new(),
            fetchers: HashMap::new(),
            turn: 0,
            scratch: Vec::new(),
            coordinator: None,
        })
    }

    /// Consumes every partition of `topic` from `start`: how many it has (numbered from 0).
    pub async fn assign(&mut self, topic: &str, start: Start) -> Result<usize, ClientError> {
        let partitions = self.cluster.partitions(topic).await?;
        for partition in 0..partitions as i32 {
            self.assign_partition(topic, partition, start).await?;
        }
        Ok(partitions)
    }

    /// Consumes one partition from `start`.
    pub async fn assign_partition(
        &mut self,
        topic: &str,
        partition: i32,
        start: Start,
    ) -> Result<(), ClientError> {
        let offset = match start {
            Start::At(offset) => offset,
            Start::Earliest => self.log_offset(topic, partition, EARLIEST).await?,
            Start::Latest => self.log_offset(topic, partition, LATEST).await?,
            Start::Committed(reset) => match self.committed(topic, partition).await? {
                Some(offset) => offset,
                None if reset == Reset::Earliest => {
                    self.log_offset(topic, partition, EARLIEST).await?
                }
                None => self.log_offset(topic, partition, LATEST).await?,
            },
        };
        self.assigned
            .retain(|a| !(a.partition == partition && *a.topic == *topic));
        for fetcher in self.fetchers.values_mut() {
            settle(fetcher).await?;
        }
        for a in &mut self.assigned {
            a.fetching = a.position;
        }
        self.assigned.push(Assigned {
            topic: topic.into(),
            partition,
            position: offset,
            fetching: offset,
            end: None,
        });
        Ok(())
    }

    /// The offset of a partition's log at `at` (`EARLIEST` or `LATEST`), asked of its leader.
    async fn log_offset(
        &mut self,
        topic: &str,
        partition: i32,
        at: i64,
    ) -> Result<i64, ClientError> {
        let isolation = self.config.isolation;
        let fetcher = self.fetcher(topic, partition).await?;
        // A Fetch in flight would answer first: drop it (nothing was handed out).
        settle(fetcher).await?;
        fetcher
            .conn
            .list_offset_isolated(topic, partition, at, isolation)
            .await
    }

    /// The offset [`ConsumerConfig::group`] committed for a partition, if any.
    pub async fn committed(
        &mut self,
        topic: &str,
        partition: i32,
    ) -> Result<Option<i64>, ClientError> {
        let offsets = self
            .with_coordinator(async |conn, group| {
                conn.committed_offsets(group, topic, &[partition]).await
            })
            .await?;
        Ok(offsets.first().copied().flatten())
    }

    /// Commits every assigned partition's [`position`](Self::position) (the next offset to
    /// hand out) for [`ConsumerConfig::group`]: a consumer of that group started with
    /// [`Start::Committed`] goes on from there.
    pub async fn commit(&mut self) -> Result<(), ClientError> {
        let positions: Vec<(Arc<str>, i32, i64)> = self
            .assigned
            .iter()
            .map(|a| (Arc::clone(&a.topic), a.partition, a.position))
            .collect();
        let offsets: Vec<(&str, i32, i64)> =
            positions.iter().map(|(t, p, o)| (&**t, *p, *o)).collect();
        self.commit_offsets(&offsets).await
    }

    /// Commits, for [`ConsumerConfig::group`], each `(topic, partition, offset)`: the offset is
    /// the next one to consume (one past the last record handled), as Kafka clients commit.
    /// For a caller that handled fewer records than [`poll`](Self::poll) handed out.
    pub async fn commit_offsets(
        &mut self,
        offsets: &[(&str, i32, i64)],
    ) -> Result<(), ClientError> {
        let mut offsets = offsets.to_vec();
        offsets.sort_unstable();
        let partitions: Vec<OffsetCommitPartition<'_>> = offsets
            .iter()
            .map(|&(_, partition, offset)| OffsetCommitPartition {
                partition_index: partition,
                committed_offset: offset,
                committed_leader_epoch: -1,
                committed_metadata: None,
            })
            .collect();
        let mut topics = Vec::new();
        let mut at = 0;
        for run in offsets.chunk_by(|a, b| a.0 == b.0) {
            topics.push(OffsetCommitTopic {
                name: run[0].0,
                partitions: &partitions[at..at + run.len()],
            });
            at += run.len();
        }
        self.with_coordinator(async |conn, group| conn.commit_offsets(group, &topics).await)
            .await
    }

    /// Runs `call` on the connection to the group's coordinator, found (again) when there is
    /// none or it moved, and retried while the coordinator is being elected or loads, up to
    /// the request timeout.
    async fn with_coordinator<T>(
        &mut self,
        mut call: impl AsyncFnMut(&mut Connection, &str) -> Result<T, ClientError>,
    ) -> Result<T, ClientError> {
        let group = self.config.group.clone().ok_or(ClientError::NoGroup)?;
        let deadline = Instant::now() + self.config.client.request_timeout;
        loop {
            let conn = match &mut self.coordinator {
                Some(conn) => conn,
                None => match self.cluster.coordinator(&group).await {
                    Ok(address) => match Connection::connect(&address, &self.config.client).await {
                        Ok(conn) => self.coordinator.insert(conn),
                        Err(e) => {
                            self.coordinator_failed(e, deadline).await?;
                            continue;
                        }
                    },
                    Err(e) => {
                        self.coordinator_failed(e, deadline).await?;
                        continue;
                    }
                },
            };
            match call(conn, &group).await {
                Ok(out) => return Ok(out),
                Err(e) => self.coordinator_failed(e, deadline).await?,
            }
        }
    }

    /// After `e` from the group's coordinator (or from finding it): waits a moment and returns
    /// `Ok` to try again when it moved, is loading or its connection broke, and `deadline` is
    /// not past; else `e`.
    async fn coordinator_failed(
        &mut self,
        e: ClientError,
        deadline: Instant,
    ) -> Result<(), ClientError> {
        if !e.is_coordinator_gone() {
            return Err(e);
        }
        self.coordinator = None;
        if Instant::now() >= deadline {
            return Err(e);
        }
        tokio::time::sleep(COORDINATOR_BACKOFF).await;
        Ok(())
    }

    /// The next offset to be handed out for a partition.
    #[must_use]
    pub fn position(&self, topic: &str, partition: i32) -> Option<i64> {
        self.partition(topic, partition).map(|a| a.position)
    }

    /// Where a partition's log ended when the last Fetch answer for it was read: its high
    /// watermark, or with [`Isolation::ReadCommitted`] its last stable offset. `None` before
    /// the first answer. A [`position`](Self::position) that has reached it has, for now,
    /// nothing more to hand out.
    #[must_use]
    pub fn end_offset(&self, topic: &str, partition: i32) -> Option<i64> {
        self.partition(topic, partition).and_then(|a| a.end)
    }

    fn partition(&self, topic: &str, partition: i32) -> Option<&Assigned> {
        self.assigned
            .iter()
            .find(|a| a.partition == partition && *a.topic == *topic)
    }

    /// Waits for one Fetch answer and calls `on_record` with each of its records (topic,
    /// partition, record borrowed from the receive ring); how many there were. An answer may
    /// hold none (the broker waited `max_wait` for `min_bytes`). After an error the next poll
    /// starts again from the positions reached.
    pub async fn poll(
        &mut self,
        mut on_record: impl FnMut(&str, i32, Record<'_>),
    ) -> Result<usize, ClientError> {
        let result = self.poll_once(&mut on_record).await;
        if result.is_err() {
            // Whatever broke, the next poll reconnects, refreshes leaders and refetches from
            // what was handed out.
            self.fetchers.clear();
            for a in &mut self.assigned {
                a.fetching = a.position;
            }
        }
        result
    }

    async fn poll_once(
        &mut self,
        on_record: &mut impl FnMut(&str, i32, Record<'_>),
    ) -> Result<usize, ClientError> {
        if self.assigned.is_empty() {
            return Err(ClientError::NothingAssigned);
        }
        let leaders = self.leaders().await?;
        for &node in &leaders {
            let fetcher = self.fetcher_of(node).await?;
            if fetcher.in_flight {
                // Nothing to send, unless a poll dropped midway left its Fetch queued.
                fetcher.conn.flush().await?;
            } else {
                let fetcher = self.fetchers.get_mut(&node).expect("connected above");
                send_fetch(fetcher, &self.config, &self.assigned, node, &self.cluster).await?;
            }
        }
        // Rotating where the search starts, so no leader is favoured.
        self.turn = self.turn.wrapping_add(1);
        // The broker holds a Fetch up to `max_wait`; past that plus the request timeout, the
        // connections are dropped (an error here) and the next poll connects again.
        let limit = self.config.max_wait + self.config.client.request_timeout;
        let (node, len) =
            tokio::time::timeout(limit, first_answer(&mut self.fetchers, &leaders, self.turn))
                .await
                .map_err(|_| ClientError::RequestTimeout(limit))??;
        let Consumer {
            cluster,
            config,
            assigned,
            fetchers,
            scratch,
            ..
        } = self;
        let fetcher = fetchers.get_mut(&node).expect("connected above");
        fetcher.in_flight = false;
        let conn = &mut fetcher.conn;
        let frame = match conn.correlator.parse_response(&conn.rx.data()[..len])? {
            ringwire_wire::Status::Complete(frame, _) => frame,
            ringwire_wire::Status::Partial { .. } => unreachable!("next_frame saw it whole"),
        };
        let response = frame.decode::<FetchResponse<'_>>()?;
        ClientError::check(ApiKey::Fetch, response.error_code)?;
        // The next Fetch first, from the batch headers alone.
        let mut moved = false;
        for topic in &response.topics {
            for p in &topic.partitions {
                let Some(a) = find(assigned, topic.name, p.partition_index) else {
                    continue;
                };
                if p.error_code != ErrorCode::NONE {
                    moved |= p.error_code.is_retriable();
                    continue;
                }
                a.end = Some(match config.isolation {
                    // -1 from a broker too old to say.
                    Isolation::ReadCommitted if p.last_stable_offset >= 0 => p.last_stable_offset,
                    _ => p.high_watermark,
                });
                for batch in Batches::new(p.records) {
                    let Ok(batch) = batch else { break };
                    a.fetching = a.fetching.max(batch.last_offset().saturating_add(1));
                }
            }
        }
        if !moved {
            let version = conn
                .versions()
                .version(ApiKey::Fetch)
                .ok_or(ClientError::UnsupportedApi(ApiKey::Fetch))?;
            let list = fetch_list(assigned, cluster, node, config.partition_max_bytes, |a| {
                a.fetching
            });
            let topics = list.topics();
            let request = fetch_request(config, &topics);
            queue(&mut conn.tx, &mut conn.correlator, &request, version).await?;
            // In flight from here: a poll dropped during the flush leaves it queued, and the
            // next poll flushes it rather than sending another.
            fetcher.in_flight = true;
            conn.tx.flush().await?;
        }
        // Then the records.
        let mut delivered = 0;
        let limits = conn.limits;
        for topic in &response.topics {
            for p in &topic.partitions {
                let Some(a) = find(assigned, topic.name, p.partition_index) else {
                    continue;
                };
                if p.error_code != ErrorCode::NONE {
                    if p.error_code.is_retriable() {
                        continue;
                    }
                    ClientError::check(ApiKey::Fetch, p.error_code)?;
                }
                let on_record = |_: &Batch<'_>, record: Record<'_>| {
                    on_record(topic.name, p.partition_index, record);
                };
                let walked = match config.isolation {
                    Isolation::ReadUncommitted => {
                        walk(p.records, a.position, scratch, &limits, on_record)?
                    }
                    Isolation::ReadCommitted => walk_committed(
                        p.records,
                        a.position,
                        &p.aborted_transactions,
                        scratch,
                        &limits,
                        on_record,
                    )?,
                };
                delivered += walked.records;
                a.position = walked.next_offset;
            }
        }
        let stale: Vec<String> = if moved {
            response.topics.iter().map(|t| t.name.to_owned()).collect()
        } else {
            Vec::new()
        };
        conn.rx.consume(len);
        if moved {
            // A leader moved: ask where before the next Fetch.
            let stale: Vec<&str> = stale.iter().map(String::as_str).collect();
            cluster.refresh(&stale).await?;
        }
        Ok(delivered)
    }

    /// The leaders of the assigned partitions, asking the cluster for unknown ones.
    async fn leaders(&self) -> Result<Vec<i32>, ClientError> {
        let unknown: Vec<&str> = self
            .assigned
            .iter()
            .filter(|a| self.cluster.leader(&a.topic, a.partition).is_none())
            .map(|a| &*a.topic)
            .collect();
        if !unknown.is_empty() {
            self.cluster.refresh(&unknown).await?;
        }
        let mut leaders = Vec::new();
        for a in &self.assigned {
            let leader = self.cluster.leader(&a.topic, a.partition).ok_or_else(|| {
                ClientError::NoLeader {
                    topic: a.topic.to_string(),
                    partition: a.partition,
                }
            })?;
            if !leaders.contains(&leader) {
                leaders.push(leader);
            }
        }
        leaders.sort_unstable();
        Ok(leaders)
    }

    async fn fetcher_of(&mut self, node: i32) -> Result<&mut Fetcher, ClientError> {
        if !self.fetchers.contains_key(&node) {
            let address = self.cluster.address(node).ok_or(ClientError::NoBroker)?;
            let conn = Connection::connect(&address, &self.config.client).await?;
            self.fetchers.insert(
                node,
                Fetcher {
                    conn,
                    in_flight: false,
                },
            );
        }
        Ok(self.fetchers.get_mut(&node).expect("inserted above"))
    }

    /// The connection to the leader of `topic`/`partition`.
    async fn fetcher(&mut self, topic: &str, partition: i32) -> Result<&mut Fetcher, ClientError> {
        if self.cluster.leader(topic, partition).is_none() {
            self.cluster.refresh(&[topic]).await?;
        }
        let node = self
            .cluster
            .leader(topic, partition)
            .ok_or_else(|| ClientError::NoLeader {
                topic: topic.to_owned(),
                partition,
            })?;
        self.fetcher_of(node).await
    }
}

fn find<'a>(assigned: &'a mut [Assigned], topic: &str, partition: i32) -> Option<&'a mut Assigned> {
    assigned
        .iter_mut()
        .find(|a| a.partition == partition && *a.topic == *topic)
}

/// Waits out the Fetch in flight on `fetcher`, if any, and drops its answer.
async fn settle(fetcher: &mut Fetcher) -> Result<(), ClientError> {
    if fetcher.in_flight {
        fetcher.conn.recv(|_| Ok(())).await?;
        fetcher.in_flight = false;
    }
    Ok(())
}

/// Sends a Fetch for every assigned partition led by `node`, from its position.
async fn send_fetch(
    fetcher: &mut Fetcher,
    config: &ConsumerConfig,
    assigned: &[Assigned],
    node: i32,
    cluster: &Cluster,
) -> Result<(), ClientError> {
    let list = fetch_list(assigned, cluster, node, config.partition_max_bytes, |a| {
        a.position
    });
    let topics = list.topics();
    fetcher.conn.send(&fetch_request(config, &topics)).await?;
    fetcher.in_flight = true;
    fetcher.conn.flush().await?;
    Ok(())
}

/// The partitions of one Fetch, grouped by topic.
#[derive(Debug)]
struct FetchList<'a> {
    names: Vec<&'a str>,
    /// `names[i]`'s partitions are `partitions[ranges[i].0..ranges[i].1]`.
    ranges: Vec<(usize, usize)>,
    partitions: Vec<FetchPartition>,
}

fn fetch_list<'a>(
    assigned: &'a [Assigned],
    cluster: &Cluster,
    node: i32,
    partition_max_bytes: i32,
    offset: impl Fn(&Assigned) -> i64,
) -> FetchList<'a> {
    let mut led: Vec<&Assigned> = assigned
        .iter()
        .filter(|a| cluster.leader(&a.topic, a.partition) == Some(node))
        .collect();
    led.sort_by(|a, b| (&a.topic, a.partition).cmp(&(&b.topic, b.partition)));
    let mut list = FetchList {
        names: Vec::new(),
        ranges: Vec::new(),
        partitions: Vec::with_capacity(led.len()),
    };
    for a in led {
        if list.names.last() != Some(&&*a.topic) {
            list.names.push(&a.topic);
            let at = list.partitions.len();
            list.ranges.push((at, at));
        }
        list.partitions.push(FetchPartition {
            partition: a.partition,
            fetch_offset: offset(a),
            partition_max_bytes,
        });
        list.ranges.last_mut().expect("pushed above").1 += 1;
    }
    list
}

impl FetchList<'_> {
    fn topics(&self) -> Vec<FetchTopic<'_>> {
        self.names
            .iter()
            .zip(&self.ranges)
            .map(|(name, &(start, end))| FetchTopic {
                name,
                partitions: &self.partitions[start..end],
            })
            .collect()
    }
}

fn fetch_request<'a>(config: &ConsumerConfig, topics: &'a [FetchTopic<'a>]) -> FetchRequest<'a> {
    FetchRequest {
        max_wait_ms: config.max_wait.as_millis().min(i32::MAX as u128) as i32,
        min_bytes: config.min_bytes,
        max_bytes: config.max_bytes,
        isolation_level: config.isolation.level(),
        topics,
    }
}
