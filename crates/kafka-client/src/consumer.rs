//! A pipelined consumer of assigned partitions.
//!
//! Partitions come from the caller ([`Consumer::assign`]) or from a consumer group
//! ([`Consumer::subscribe`]: the group's members share the topics' partitions, and share them
//! again as members come and go; Kafka's classic protocol with the range assignor, so
//! ringwire, Java and librdkafka consumers can be members of one group, or with
//! [`GroupProtocol::Consumer`] KIP-848's, where the coordinator assigns and a member joining
//! or leaving stops only the partitions that move). Offsets are the
//! caller's to keep, or the group's ([`ConsumerConfig::group`]): the consumer starts where
//! the group committed ([`Start::Committed`]) and commits to the group's coordinator
//! ([`Consumer::commit`]), which other Kafka clients of that group read.
//!
//! Each leader broker has one Fetch in flight. When its answer arrives, the next Fetch is
//! computed from the batch headers alone and sent before any record is handed out, so the
//! broker reads the log while the caller handles records borrowed from the receive ring.

use std::collections::HashMap;
use std::future::{poll_fn, Future};
use std::sync::Arc;
use std::task::Poll;
use std::time::{Duration, Instant};

use ringwire_kafka::api::consumer_protocol::{
    encode_assignment, encode_subscription, PROTOCOL_TYPE,
};
use ringwire_kafka::api::fetch::{FetchPartition, FetchRequest, FetchResponse, FetchTopic};
use ringwire_kafka::api::find_coordinator::GROUP;
use ringwire_kafka::api::join_group::{JoinGroupProtocol, JoinGroupRequest};
use ringwire_kafka::api::leave_group::LeaveGroupRequest;
use ringwire_kafka::api::list_offsets::{EARLIEST, LATEST};
use ringwire_kafka::api::offset_commit::{
    OffsetCommitPartition, OffsetCommitRequest, OffsetCommitTopic,
};
use ringwire_kafka::api::sync_group::{SyncGroupAssignment, SyncGroupRequest};
use ringwire_kafka::record::{walk, walk_committed, Batch, Batches, Record};
use ringwire_kafka::{ApiKey, ErrorCode};

use crate::cluster::Cluster;
use crate::connection::queue;
use crate::coordinator::Coordinator;
use crate::group::{range_assign, Assignment, RANGE};
use crate::heartbeat::{self, Heartbeat, News};
use crate::modern_group::{self, Identity};
use crate::{ClientConfig, ClientError, Connection, Isolation};

/// The wait before asking a partition's leader again after the cluster said it is moving.
const LEADER_BACKOFF: Duration = Duration::from_millis(100);

/// Commits made again after `STALE_MEMBER_EPOCH` while the member's epoch moves on.
const STALE_RETRIES: usize = 2;

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
    /// The consumer group [`Consumer::subscribe`] joins, and whose committed offsets
    /// [`Start::Committed`] reads and [`Consumer::commit`] writes. A consumer that assigns
    /// its partitions itself commits outside the group's membership, which the coordinator
    /// takes only while the group has no members.
    pub group: Option<String>,
    /// A static membership id (Kafka's `group.instance.id`, KIP-345), unique in the group and
    /// kept across restarts (a pod's name, say): a member that comes back with it within the
    /// session timeout takes up its partitions again without a rebalance of the group. Give
    /// such members a session timeout as long as a restart takes, and drop the consumer
    /// rather than [`leave`](Consumer::leave) when it is coming back. A second consumer with
    /// the same id fences the first out of the group for good
    /// ([`ClientError::is_fenced`]). `None`, the default: a dynamic member.
    pub group_instance_id: Option<String>,
    /// A group member not heard from for this long is dropped from the group, its partitions
    /// shared among the others. Within the broker's `group.min.session.timeout.ms` and
    /// `group.max.session.timeout.ms` (6 s and 30 min by default).
    pub session_timeout: Duration,
    /// How often a member tells the coordinator it is alive (a third of the session timeout,
    /// as Kafka's clients). A task on the runtime sends the heartbeats, so the consumer may
    /// take its time with what it polled; a caller that blocks the runtime's threads holds
    /// them up. A poll that finds no heartbeat answered for one and a half intervals (the
    /// process was stopped, or the runtime busy) beats first and hands out nothing until
    /// the answer says the member is still in the group: a member dropped meanwhile does not
    /// hand out records of partitions that are others' now.
    pub heartbeat_interval: Duration,
    /// A member whose consumer is not [`poll`](Consumer::poll)ed for this long is taken for
    /// stuck and leaves the group, so that the others take its partitions; its next poll
    /// joins again (Kafka's `max.poll.interval.ms`).
    pub max_poll_interval: Duration,
    /// How long the coordinator waits for every member to join again when the group changes.
    pub rebalance_timeout: Duration,
    /// How often the group's leader asks the cluster again how many partitions the group's
    /// topics have, and has the group share them again when that changed: a topic created
    /// after the members subscribed, or given more partitions (Kafka's `metadata.max.age.ms`).
    pub metadata_max_age: Duration,
    /// Whether a member commits its positions (what [`poll`](Consumer::poll) handed out)
    /// before it joins again in a rebalance, so that whichever member gets a partition next
    /// goes on from there, as Java's consumer does with auto-commit on. Off, records handed
    /// out since the last [`commit`](Consumer::commit) are handed out again to the partition's
    /// next owner (at least once).
    pub commit_on_rebalance: bool,
    /// Commits the positions (what [`poll`](Consumer::poll) handed out) this often, from a
    /// poll, and on [`leave`](Consumer::leave) and before a rebalance as
    /// [`commit_on_rebalance`](Self::commit_on_rebalance) does: Kafka's `enable.auto.commit`
    /// with `auto.commit.interval.ms` (on, 5 s, in Java's consumer). What a poll handed out is
    /// committed by a later poll, so a consumer done with each record before its next poll
    /// handles every record at least once across restarts and rebalances; only positions
    /// that moved since their last commit are sent. A commit the group refuses while it
    /// rebalances, or one that fails on the way, is left for the next interval. `None`, the
    /// default: commits are the caller's ([`commit`](Consumer::commit),
    /// [`commit_offsets`](Consumer::commit_offsets)).
    pub auto_commit: Option<Duration>,
    /// Where a partition goes on from when its position is out of its log's range (records
    /// deleted by retention while the consumer was away, or a [`seek`](Consumer::seek) past
    /// the end): Kafka's `auto.offset.reset`, `Latest` by default as there. `None`: the
    /// poll fails with `OFFSET_OUT_OF_RANGE`.
    pub offset_reset: Option<Reset>,
    /// The protocol [`subscribe`](Consumer::subscribe) joins the group with.
    pub group_protocol: GroupProtocol,
    /// On [`GroupProtocol::Consumer`], the coordinator's assignor (`uniform` or `range`,
    /// Kafka's `group.remote.assignor`); `None`: the broker's default (`uniform`).
    pub group_remote_assignor: Option<String>,
}

/// How a consumer group's members share its partitions (Kafka's `group.protocol`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum GroupProtocol {
    /// JoinGroup and SyncGroup, the range assignor run by the group's leader: every Kafka;
    /// members of Java's and librdkafka's `classic` protocol share the group. A member
    /// joining or leaving has every member give up its partitions and join again.
    #[default]
    Classic,
    /// KIP-848 (Kafka 4.0+): the coordinator assigns and moves a partition only once its
    /// owner gave it up, so a member joining or leaving stops only the partitions that move;
    /// members beat with ConsumerGroupHeartbeat at the interval the broker sets
    /// (`group.consumer.heartbeat.interval.ms`), and the broker's
    /// `group.consumer.session.timeout.ms` stands in for
    /// [`session_timeout`](ConsumerConfig::session_timeout). Java's
    /// `group.protocol=consumer` members share the group.
    Consumer,
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
            group_instance_id: None,
            session_timeout: Duration::from_secs(45),
            heartbeat_interval: Duration::from_secs(3),
            max_poll_interval: Duration::from_secs(300),
            rebalance_timeout: Duration::from_secs(60),
            metadata_max_age: Duration::from_secs(300),
            commit_on_rebalance: false,
            auto_commit: None,
            offset_reset: Some(Reset::Latest),
            group_protocol: GroupProtocol::Classic,
            group_remote_assignor: None,
        }
    }
}

/// Who a consumer is in its group, for offsets committed by a transactional producer
/// ([`Producer::send_offsets_to_transaction`](crate::Producer::send_offsets_to_transaction)):
/// the coordinator takes them only from the group's current generation, so a member the
/// group moved on from (a zombie) cannot commit. Kafka's `ConsumerGroupMetadata`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GroupMetadata {
    /// The group.
    pub group_id: String,
    /// The member's generation (-1 outside membership).
    pub generation_id: i32,
    /// The member's id (empty outside membership).
    pub member_id: String,
    /// Its static membership id, if any.
    pub group_instance_id: Option<String>,
}

impl GroupMetadata {
    /// A group whose offsets a consumer that assigns its partitions itself commits (no
    /// membership to check).
    #[must_use]
    pub fn standalone(group_id: &str) -> GroupMetadata {
        GroupMetadata {
            group_id: group_id.to_owned(),
            generation_id: -1,
            member_id: String::new(),
            group_instance_id: None,
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
    /// This many offsets before the end of the log, or its oldest record kept if it holds
    /// fewer: about the last records (kcat's `-o -N`; a transaction's markers and a
    /// compacted log's gaps take offsets too).
    BeforeEnd(u64),
    /// The first record stamped at or after this time, in milliseconds since the Unix epoch
    /// (Java's `offsetsForTimes`, kcat's `-o s@`); after the newest record if none is.
    Time(i64),
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

impl Reset {
    /// The ListOffsets timestamp that finds this end of the log.
    fn timestamp(self) -> i64 {
        match self {
            Reset::Earliest => EARLIEST,
            Reset::Latest => LATEST,
        }
    }
}

impl From<Reset> for Start {
    fn from(reset: Reset) -> Start {
        match reset {
            Reset::Earliest => Start::Earliest,
            Reset::Latest => Start::Latest,
        }
    }
}

/// `d` in milliseconds, as the protocol's 32-bit fields hold it.
fn millis(d: Duration) -> i32 {
    i32::try_from(d.as_millis()).unwrap_or(i32::MAX)
}

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
    /// The Fetch in flight asked for the partition from before a [`seek`](Consumer::seek):
    /// its records are dropped, and the next Fetch asks from `position`.
    sought: bool,
    /// Not fetched until resumed ([`pause`](Consumer::pause)).
    paused: bool,
    /// The offset this consumer last committed for the partition, if any.
    committed: Option<i64>,
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
    cluster: Arc<Cluster>,
    config: ConsumerConfig,
    assigned: Vec<Assigned>,
    fetchers: HashMap<i32, Fetcher>,
    /// Rotates the leader whose answer is looked for first.
    turn: usize,
    scratch: Vec<u8>,
    /// [`ConsumerConfig::group`]'s coordinator.
    coordinator: Option<Arc<Coordinator>>,
    /// The group membership [`subscribe`](Consumer::subscribe) began.
    membership: Option<Membership>,
    /// When a poll commits next, with [`ConsumerConfig::auto_commit`].
    next_auto_commit: Instant,
}

/// A member of the group: what it subscribed to, and who it is in the current generation.
#[derive(Debug)]
struct Membership {
    topics: Vec<String>,
    reset: Reset,
    /// Empty until the coordinator names it.
    member_id: String,
    /// The generation of the last join (`None` before the first).
    generation: Option<i32>,
    /// Join again before the next Fetch: the group is rebalancing, or forgot this member.
    rejoin: bool,
    /// Beating while the member is in the group.
    heartbeat: Option<Heartbeat>,
    /// As the group's leader, the partition count of every topic the group subscribes to
    /// when it assigned them (empty for the other members).
    watched: HashMap<String, usize>,
    /// When the leader asks for those counts again.
    next_metadata_check: Instant,
    /// On [`GroupProtocol::Consumer`]: who the member is, and its task while it is in the
    /// group (`generation` holds its epoch, which the task keeps up to date).
    modern: Option<(Identity, Option<modern_group::Member>)>,
}

impl Membership {
    /// The consumer polls: the member is not stuck.
    fn polled(&self) {
        match &self.modern {
            Some((_, Some(member))) => member.polled(),
            Some((_, None)) => {}
            None => {
                if let Some(heartbeat) = &self.heartbeat {
                    heartbeat.polled();
                }
            }
        }
    }

    /// Waits until the member's task has news for the consumer; without a task, forever.
    async fn news(&self) {
        match (&self.modern, &self.heartbeat) {
            (Some((_, Some(member))), _) => member.arrived().await,
            (None, Some(heartbeat)) => heartbeat.arrived().await,
            _ => std::future::pending().await,
        }
    }

    /// The member's id: the coordinator's (classic), or its own (consumer protocol).
    fn id(&self) -> &str {
        match &self.modern {
            Some((who, _)) => &who.id,
            None => &self.member_id,
        }
    }

    /// The member's generation (its epoch on the consumer protocol), once it joined.
    fn generation(&self) -> Option<i32> {
        match &self.modern {
            Some((_, Some(member))) => Some(member.epoch()),
            Some((_, None)) => None,
            None => self.generation,
        }
    }

    /// The group forgot the member (or it left): it joins again as a new one.
    fn forget(&mut self) {
        self.member_id.clear();
        self.generation = None;
        self.rejoin = true;
    }
}

impl Consumer {
    /// Connects to the cluster through `bootstrap` (`HOST:PORT[,HOST:PORT...]`).
    pub async fn connect(bootstrap: &str, config: ConsumerConfig) -> Result<Self, ClientError> {
        let cluster = Arc::new(Cluster::connect(bootstrap, config.client.clone()).await?);
        Ok(Consumer::on(cluster, config))
    }

    /// A consumer on a cluster already reached.
    pub(crate) fn on(cluster: Arc<Cluster>, config: ConsumerConfig) -> Self {
        let coordinator = config
            .group
            .clone()
            .map(|group| Arc::new(Coordinator::new(group, GROUP, Arc::clone(&cluster))));
        let next_auto_commit = Instant::now() + config.auto_commit.unwrap_or_default();
        Consumer {
            cluster,
            config,
            assigned: Vec::new(),
            fetchers: HashMap::new(),
            turn: 0,
            scratch: Vec::new(),
            coordinator,
            membership: None,
            next_auto_commit,
        }
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
        let partitions = self.cluster.partitions(topic).await?;
        if usize::try_from(partition).map_or(true, |p| p >= partitions) {
            return Err(ClientError::NoPartition {
                topic: topic.to_owned(),
                partition,
            });
        }
        let committed = match start {
            Start::Committed(_) => self.committed(topic, partition).await?,
            _ => None,
        };
        let offset = match (start, committed) {
            (_, Some(offset)) | (Start::At(offset), _) => offset,
            (Start::Earliest, _) => self.log_offset(topic, partition, EARLIEST).await?,
            (Start::Latest, _) => self.log_offset(topic, partition, LATEST).await?,
            (Start::BeforeEnd(n), _) => {
                let end = self.log_offset(topic, partition, LATEST).await?;
                let oldest = self.log_offset(topic, partition, EARLIEST).await?;
                end.saturating_sub_unsigned(n).max(oldest)
            }
            (Start::Time(ms), _) => self.offset_at(topic, partition, time(ms)).await?,
            (Start::Committed(reset), None) => {
                self.log_offset(topic, partition, reset.timestamp()).await?
            }
        };
        self.assigned
            .retain(|a| !(a.partition == partition && *a.topic == *topic));
        for fetcher in self.fetchers.values_mut() {
            settle(fetcher).await?;
        }
        for a in &mut self.assigned {
            a.fetching = a.position;
            a.sought = false;
        }
        self.assigned.push(Assigned {
            topic: topic.into(),
            partition,
            position: offset,
            fetching: offset,
            end: None,
            sought: false,
            paused: false,
            committed,
        });
        Ok(())
    }

    /// Moves an assigned partition's position: the next records handed out for it start at
    /// `offset`, to handle records again (after a failure downstream, say) or to skip ahead.
    /// At once, without a request: records of a Fetch already in flight for the partition
    /// are dropped when they come, and the next Fetch asks from `offset`. An offset out of
    /// the log's range goes where [`ConsumerConfig::offset_reset`] says.
    ///
    /// # Errors
    ///
    /// [`ClientError::NotAssigned`]: the consumer does not read the partition.
    pub fn seek(&mut self, topic: &str, partition: i32, offset: i64) -> Result<(), ClientError> {
        let a = self.refetch(topic, partition)?;
        a.position = offset;
        a.fetching = offset;
        Ok(())
    }

    /// Stops fetching a partition, its position kept, until [`resume`](Self::resume): a
    /// pipeline whose next stage is full holds back its input while it goes on polling (and
    /// stays in its group). Records of a Fetch already in flight for the partition are
    /// dropped, to be fetched again once resumed. A rebalance forgets pauses, as Java's
    /// consumer does.
    ///
    /// # Errors
    ///
    /// [`ClientError::NotAssigned`]: the consumer does not read the partition.
    pub fn pause(&mut self, topic: &str, partition: i32) -> Result<(), ClientError> {
        let a = self.refetch(topic, partition)?;
        a.fetching = a.position;
        a.paused = true;
        Ok(())
    }

    /// Fetches a [`pause`](Self::pause)d partition again, from its position.
    ///
    /// # Errors
    ///
    /// [`ClientError::NotAssigned`]: the consumer does not read the partition.
    pub fn resume(&mut self, topic: &str, partition: i32) -> Result<(), ClientError> {
        let a = find(&mut self.assigned, topic, partition)
            .ok_or_else(|| not_assigned(topic, partition))?;
        a.paused = false;
        Ok(())
    }

    /// The partition, its records from a Fetch in flight (if any) marked to be dropped: what
    /// it hands out next is to come from a new Fetch.
    fn refetch(&mut self, topic: &str, partition: i32) -> Result<&mut Assigned, ClientError> {
        let in_flight = self
            .cluster
            .leader(topic, partition)
            .and_then(|node| self.fetchers.get(&node))
            .is_some_and(|f| f.in_flight);
        let a = find(&mut self.assigned, topic, partition)
            .ok_or_else(|| not_assigned(topic, partition))?;
        a.sought |= in_flight;
        Ok(a)
    }

    /// The offset of a partition's log at `at`: [`log_offset`](Self::log_offset)'s, and for a
    /// time with no record that late, the log's end.
    async fn offset_at(
        &mut self,
        topic: &str,
        partition: i32,
        at: i64,
    ) -> Result<i64, ClientError> {
        match self.log_offset(topic, partition, at).await? {
            -1 if at >= 0 => self.log_offset(topic, partition, LATEST).await,
            offset => Ok(offset),
        }
    }

    /// The offset of a partition's log at `at` (`EARLIEST`, `LATEST` or a time), asked of its
    /// leader; asked again (the leaders looked up anew) while the cluster says it is moving
    /// or electing that leader, as it does for a moment after the topic is created, up to
    /// the request timeout.
    async fn log_offset(
        &mut self,
        topic: &str,
        partition: i32,
        at: i64,
    ) -> Result<i64, ClientError> {
        let isolation = self.config.isolation;
        let deadline = Instant::now() + self.cluster.config.request_timeout;
        loop {
            let fetcher = self.fetcher(topic, partition).await?;
            // A Fetch in flight would answer first: drop it (nothing was handed out).
            settle(fetcher).await?;
            let answer = fetcher
                .conn
                .list_offset_isolated(topic, partition, at, isolation)
                .await;
            match answer {
                Err(ClientError::Kafka { code, .. })
                    if code.is_retriable() && Instant::now() < deadline =>
                {
                    tokio::time::sleep(LEADER_BACKOFF).await;
                    // On failure the next try finds out again.
                    let _ = self.cluster.refresh(&[topic]).await;
                }
                answer => return answer,
            }
        }
    }

    /// The offset [`ConsumerConfig::group`] committed for a partition, if any.
    pub async fn committed(
        &mut self,
        topic: &str,
        partition: i32,
    ) -> Result<Option<i64>, ClientError> {
        let offsets = self
            .with_coordinator(|mut conn, group| async move {
                let offsets = conn.committed_offsets(group, topic, &[partition]).await;
                (conn, offsets)
            })
            .await?;
        Ok(offsets.first().copied().flatten())
    }

    /// Commits every assigned partition's [`position`](Self::position) (the next offset to
    /// hand out) for [`ConsumerConfig::group`]: a consumer of that group started with
    /// [`Start::Committed`] goes on from there.
    pub async fn commit(&mut self) -> Result<(), ClientError> {
        self.commit_positions(|_| true).await
    }

    /// Commits the positions of the assigned partitions `pick` chooses.
    async fn commit_positions(
        &mut self,
        pick: impl Fn(&Assigned) -> bool,
    ) -> Result<(), ClientError> {
        let positions: Vec<(Arc<str>, i32, i64)> = self
            .assigned
            .iter()
            .filter(|a| pick(a))
            .map(|a| (Arc::clone(&a.topic), a.partition, a.position))
            .collect();
        let offsets: Vec<(&str, i32, i64)> =
            positions.iter().map(|(t, p, o)| (&**t, *p, *o)).collect();
        self.commit_offsets(&offsets).await
    }

    /// Whether positions are committed before a rebalance and on leaving.
    fn commits_on_rebalance(&self) -> bool {
        self.config.commit_on_rebalance || self.config.auto_commit.is_some()
    }

    /// With [`ConsumerConfig::auto_commit`], once its interval passed, commits the positions
    /// that moved since their last commit.
    async fn auto_commit(&mut self) -> Result<(), ClientError> {
        let Some(every) = self.config.auto_commit else {
            return Ok(());
        };
        let now = Instant::now();
        if self.coordinator.is_none() || now < self.next_auto_commit {
            return Ok(());
        }
        self.next_auto_commit = now + every;
        let moved = |a: &Assigned| a.committed != Some(a.position);
        if !self.assigned.iter().any(moved) {
            return Ok(());
        }
        match self.commit_positions(moved).await {
            // The group moves on (the poll joins again) or the way failed: the next
            // interval commits what moved by then.
            Err(e) if e.is_rebalance() || e.is_transient() => Ok(()),
            committed => committed,
        }
    }

    /// Commits, for [`ConsumerConfig::group`], each `(topic, partition, offset)`: the offset is
    /// the next one to consume (one past the last record handled), as Kafka clients commit.
    /// For a caller that handled fewer records than [`poll`](Self::poll) handed out.
    ///
    /// On [`GroupProtocol::Consumer`], a commit the coordinator refuses for carrying an epoch
    /// the member has just left behind (`STALE_MEMBER_EPOCH`: the heartbeat answer that
    /// moved it on was on its way) is made again with the new epoch, as Java's consumer
    /// does. With the epoch unchanged, the error is returned and the member stays as it is
    /// (its task keeps the membership): commit again after the next poll.
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
        let instance = self.config.group_instance_id.as_deref();
        let mut retries = 0;
        loop {
            let member = self.member().map(|(id, epoch)| (id.to_owned(), epoch));
            let committed = self
                .with_coordinator(|mut conn, group| async {
                    let request = match &member {
                        Some((member_id, generation)) => OffsetCommitRequest {
                            generation_id: *generation,
                            member_id,
                            group_instance_id: instance,
                            ..OffsetCommitRequest::standalone(group, &topics)
                        },
                        None => OffsetCommitRequest::standalone(group, &topics),
                    };
                    let committed = conn.commit_offsets(&request).await;
                    (conn, committed)
                })
                .await;
            let sent = member.map(|(_, epoch)| epoch);
            let now = self.member().map(|(_, epoch)| epoch);
            if retries < STALE_RETRIES && commit_again(&committed, sent, now) {
                retries += 1;
                continue;
            }
            if committed.is_ok() {
                for &(topic, partition, offset) in &offsets {
                    if let Some(a) = find(&mut self.assigned, topic, partition) {
                        a.committed = Some(offset);
                    }
                }
            }
            return self.note_group_error(committed);
        }
    }

    /// This consumer's group, generation and member id, for a transactional producer that
    /// commits its offsets; `None` without [`ConsumerConfig::group`].
    #[must_use]
    pub fn group_metadata(&self) -> Option<GroupMetadata> {
        let group_id = self.config.group.clone()?;
        let member = self.membership.as_ref();
        Some(GroupMetadata {
            group_id,
            generation_id: member.and_then(Membership::generation).unwrap_or(-1),
            member_id: member.map(|m| m.id().to_owned()).unwrap_or_default(),
            group_instance_id: self.config.group_instance_id.clone(),
        })
    }

    /// Joins [`ConsumerConfig::group`] as a member consuming `topics`: the group's members
    /// share the topics' partitions (range assignment), each partition starting where the
    /// group committed, or where `reset` says. Returns once this member has its share (maybe
    /// none, with more members than partitions). From then on a task of its own sends the
    /// heartbeats (the consumer may take its time between polls, up to
    /// [`ConsumerConfig::max_poll_interval`]), and when the group changes (a member joins,
    /// leaves or goes silent for the session timeout) [`poll`](Self::poll) joins again and
    /// takes up its new share, dropping Fetch answers not yet handed out. Partitions
    /// [`assign`](Self::assign)ed before are dropped; called again, it changes the member's
    /// subscription.
    ///
    /// On [`GroupProtocol::Consumer`] the coordinator assigns: this returns once it answered
    /// the join, with the partitions no other member holds; those others give up come at
    /// later polls, and a change in the group moves only the partitions that must move
    /// (given up at a poll, committed first with [`ConsumerConfig::commit_on_rebalance`]),
    /// the rest flowing on.
    pub async fn subscribe(&mut self, topics: &[&str], reset: Reset) -> Result<(), ClientError> {
        let topics = topics.iter().map(|t| (*t).to_owned()).collect();
        self.subscribe_to(topics, None, reset).await
    }

    /// As [`subscribe`](Self::subscribe), to every topic whose name matches `pattern` (a
    /// regular expression in RE2/J syntax, as Java's `subscribe(SubscriptionPattern)`),
    /// topics created later included: the coordinator resolves it (every
    /// `group.consumer.regex.refresh.interval.ms`), so this needs
    /// [`GroupProtocol::Consumer`]. A pattern the coordinator cannot compile is
    /// `INVALID_REGULAR_EXPRESSION`.
    pub async fn subscribe_pattern(
        &mut self,
        pattern: &str,
        reset: Reset,
    ) -> Result<(), ClientError> {
        if self.config.group_protocol != GroupProtocol::Consumer {
            return Err(ClientError::Config(
                "a subscription by pattern needs GroupProtocol::Consumer",
            ));
        }
        self.subscribe_to(Vec::new(), Some(pattern.to_owned()), reset)
            .await
    }

    async fn subscribe_to(
        &mut self,
        topics: Vec<String>,
        pattern: Option<String>,
        reset: Reset,
    ) -> Result<(), ClientError> {
        if self.config.group.is_none() {
            return Err(ClientError::NoGroup);
        }
        let modern = match self.config.group_protocol {
            GroupProtocol::Classic => None,
            GroupProtocol::Consumer => {
                let id = match self.membership.as_ref().and_then(|m| m.modern.as_ref()) {
                    Some((who, _)) => who.id.clone(),
                    None => Identity::random_id()?,
                };
                let who = Identity {
                    id,
                    instance: self.config.group_instance_id.clone(),
                    topics: topics.clone(),
                    pattern,
                    assignor: self.config.group_remote_assignor.clone(),
                    rebalance_timeout: self.config.rebalance_timeout,
                    max_poll_interval: self.config.max_poll_interval,
                };
                Some((who, None))
            }
        };
        match &mut self.membership {
            // Already a member: the same member, subscribed anew (a new member id would
            // leave the old one in the group, holding up the join until its session ends).
            Some(m) => {
                m.topics = topics;
                m.reset = reset;
                // The same member id joins again with the new subscription.
                if let Some((_, Some(old))) = std::mem::replace(&mut m.modern, modern) {
                    old.stop();
                }
            }
            None => {
                self.membership = Some(Membership {
                    topics,
                    reset,
                    member_id: String::new(),
                    generation: None,
                    rejoin: true,
                    heartbeat: None,
                    watched: HashMap::new(),
                    next_metadata_check: Instant::now(),
                    modern,
                });
            }
        }
        self.join().await
    }

    /// Leaves the group [`subscribe`](Self::subscribe) joined, so that the other members take
    /// this one's partitions at once: a member dropped without leaving stays in the group
    /// until its session times out, and the group's next rebalance waits for it. With
    /// [`ConsumerConfig::commit_on_rebalance`], commits its positions first. The consumer
    /// then has no partitions. A static member
    /// ([`group_instance_id`](ConsumerConfig::group_instance_id)) leaves for good too: drop it
    /// instead when it is coming back.
    pub async fn leave(&mut self) -> Result<(), ClientError> {
        if self.commits_on_rebalance() && !self.assigned.is_empty() {
            match self.commit().await {
                // The group moved on without this member: nothing of it to commit.
                Err(e) if !e.is_rebalance() => return Err(e),
                _ => {}
            }
        }
        let Some(membership) = self.membership.take() else {
            return Ok(());
        };
        if let Some((_, member)) = membership.modern {
            self.drop_assignment().await?;
            return match member {
                Some(member) => member.leave().await,
                None => Ok(()),
            };
        }
        // Beating no more, before the member is gone.
        let Membership {
            member_id,
            heartbeat,
            ..
        } = membership;
        // Left already, for a consumer not polled in time.
        let left = matches!(
            heartbeat.as_ref().and_then(Heartbeat::news),
            Some(News::Left)
        );
        drop(heartbeat);
        self.drop_assignment().await?;
        if member_id.is_empty() || left {
            return Ok(());
        }
        let instance = self.config.group_instance_id.as_deref();
        let left = self
            .with_coordinator(|mut conn, group| async {
                let request = LeaveGroupRequest {
                    group_id: group,
                    member_id: &member_id,
                    group_instance_id: instance,
                    reason: Some("the consumer left"),
                };
                let left = conn.leave_group(&request).await;
                (conn, left)
            })
            .await;
        match left {
            // Forgotten by the group already (its session ended): out, as asked.
            Err(e) if e.is_unknown_member() => Ok(()),
            left => left,
        }
    }

    /// Who this consumer is in its group, once it joined: the member id the coordinator gave
    /// it and the generation it joined (both change when it joins again as a new member).
    #[must_use]
    pub fn member(&self) -> Option<(&str, i32)> {
        let m = self.membership.as_ref()?;
        Some((m.id(), m.generation()?))
    }

    /// The partitions this consumer reads, by topic and partition.
    #[must_use]
    pub fn assignment(&self) -> Vec<(String, i32)> {
        let mut out: Vec<(String, i32)> = self
            .assigned
            .iter()
            .map(|a| (a.topic.to_string(), a.partition))
            .collect();
        out.sort_unstable();
        out
    }

    /// Joins again when the group asks (as the heartbeat task found out), or as its leader
    /// when the subscribed topics' partition counts changed: before each Fetch.
    async fn keep_membership(&mut self) -> Result<(), ClientError> {
        let Some(m) = &mut self.membership else {
            return Ok(());
        };
        if m.modern.is_some() {
            return self.keep_modern_membership().await;
        }
        if let Some(heartbeat) = &m.heartbeat {
            heartbeat.confirm().await;
        }
        match m.heartbeat.as_ref().and_then(Heartbeat::news) {
            Some(News::Rebalance(e)) => drop(self.note_group_error::<()>(Err(e))),
            Some(News::Left) => m.forget(),
            Some(News::Failed(e)) => {
                if e.is_fenced() {
                    // Out of the group for good, as is what it had.
                    self.membership = None;
                    self.drop_assignment().await?;
                }
                return Err(e);
            }
            None => {}
        }
        let Some(m) = &self.membership else {
            return Ok(());
        };
        if m.generation.is_none() || m.rejoin {
            return self.join().await;
        }
        if !m.watched.is_empty() && Instant::now() >= m.next_metadata_check {
            let topics: Vec<String> = m.watched.keys().cloned().collect();
            let counts = self.partition_counts(&topics).await?;
            let m = self.membership.as_mut().expect("a member");
            m.next_metadata_check = Instant::now() + self.config.metadata_max_age;
            if counts != m.watched {
                // The leader joining again has the coordinator rebalance the whole group.
                m.rejoin = true;
                return self.join().await;
            }
        }
        Ok(())
    }

    /// Notes from `result` whether the member must join again (the next poll does).
    fn note_group_error<T>(&mut self, result: Result<T, ClientError>) -> Result<T, ClientError> {
        if let (Err(e), Some(m)) = (&result, &mut self.membership) {
            // A commit behind the member's own epoch: its task keeps the membership, and
            // joining again would give up every partition for nothing.
            let behind = m.modern.is_some() && e.is_stale_epoch();
            if e.is_rebalance() && !behind {
                m.rejoin = true;
                if e.is_unknown_member() {
                    m.forget();
                }
            }
        }
        result
    }

    /// Joins the group (again) and takes up this member's share of the partitions; the
    /// leader assigns everyone's.
    async fn join(&mut self) -> Result<(), ClientError> {
        if self.membership.as_ref().is_some_and(|m| m.modern.is_some()) {
            return self.join_modern().await;
        }
        // No heartbeats while joining: the join itself says the member is alive. Until it
        // succeeds, the next poll joins again.
        if let Some(m) = &mut self.membership {
            m.heartbeat = None;
            m.rejoin = true;
        }
        let deadline =
            Instant::now() + self.config.rebalance_timeout + self.config.client.request_timeout;
        if self.commits_on_rebalance()
            && !self.assigned.is_empty()
            && self
                .membership
                .as_ref()
                .is_some_and(|m| m.generation.is_some())
        {
            // Best effort: a member the group forgot can no longer commit, and the join
            // below says what went wrong if anything is.
            let _ = self.commit().await;
        }
        // Partitions this member keeps go on from where it is, not from the last commit.
        let kept: HashMap<(Arc<str>, i32), i64> = self
            .assigned
            .iter()
            .map(|a| ((Arc::clone(&a.topic), a.partition), a.position))
            .collect();
        let instance = self.config.group_instance_id.clone();
        loop {
            self.drop_assignment().await?;
            let m = self.membership.as_ref().expect("joining a subscription");
            let (topics, mut member_id) = (m.topics.clone(), m.member_id.clone());
            let subscribed: Vec<&str> = topics.iter().map(String::as_str).collect();
            let metadata = encode_subscription(&subscribed)?;
            let config = &self.config;
            let (session, rebalance) = (
                millis(config.session_timeout),
                millis(config.rebalance_timeout),
            );
            let limit = config.rebalance_timeout + config.client.request_timeout;
            let joined = self
                .with_coordinator(|mut conn, group| async {
                    let request = JoinGroupRequest {
                        group_id: group,
                        session_timeout_ms: session,
                        rebalance_timeout_ms: rebalance,
                        member_id: &member_id,
                        group_instance_id: instance.as_deref(),
                        protocol_type: PROTOCOL_TYPE,
                        protocols: &[JoinGroupProtocol {
                            name: RANGE,
                            metadata: &metadata,
                        }],
                        reason: None,
                    };
                    let joined = conn.join_group(&request, limit).await;
                    (conn, joined)
                })
                .await;
            let joined = match self.note_group_error(joined) {
                Err(e) if e.is_rebalance() && Instant::now() < deadline => continue,
                other => other?,
            };
            member_id.clone_from(&joined.member_id);
            if let Some(m) = &mut self.membership {
                m.member_id.clone_from(&member_id);
            }
            if joined.error_code != ErrorCode::NONE {
                // MEMBER_ID_REQUIRED: again, now with the id the coordinator gave.
                continue;
            }
            let (assignments, watched) = if joined.leader == member_id {
                self.assign_members(&joined.members).await?
            } else {
                (Vec::new(), HashMap::new())
            };
            let shares: Vec<SyncGroupAssignment<'_>> = assignments
                .iter()
                .map(|(member_id, bytes)| SyncGroupAssignment {
                    member_id,
                    assignment: bytes,
                })
                .collect();
            let generation = joined.generation;
            let protocol = joined.protocol.as_deref();
            let mine = self
                .with_coordinator(|mut conn, group| async {
                    let request = SyncGroupRequest {
                        group_id: group,
                        generation_id: generation,
                        member_id: &member_id,
                        group_instance_id: instance.as_deref(),
                        protocol_type: Some(PROTOCOL_TYPE),
                        protocol_name: protocol,
                        assignments: &shares,
                    };
                    let mine = conn.sync_group(&request, limit).await;
                    (conn, mine)
                })
                .await;
            let mine: Assignment = match self.note_group_error(mine) {
                Err(e) if e.is_rebalance() && Instant::now() < deadline => continue,
                other => other?,
            };
            let reset = self.membership.as_ref().map_or(Reset::Latest, |m| m.reset);
            for (topic, partitions) in &mine {
                for &partition in partitions {
                    let start = match kept.get(&(Arc::from(topic.as_str()), partition)) {
                        Some(&position) => Start::At(position),
                        None => Start::Committed(reset),
                    };
                    self.assign_partition(topic, partition, start).await?;
                }
            }
            if let Some(m) = &mut self.membership {
                m.generation = Some(generation);
                m.rejoin = false;
                m.watched = watched;
                m.next_metadata_check = Instant::now() + self.config.metadata_max_age;
                let coordinator = self.coordinator.clone().ok_or(ClientError::NoGroup)?;
                m.heartbeat = Some(Heartbeat::start(
                    coordinator,
                    heartbeat::Member {
                        id: member_id,
                        instance: self.config.group_instance_id.clone(),
                        generation,
                        every: self.config.heartbeat_interval,
                        max_poll_interval: self.config.max_poll_interval,
                    },
                ));
            }
            return Ok(());
        }
    }

    /// Joins the group on the consumer protocol (again, as the same member, owning nothing)
    /// and takes up what the join brought; partitions other members must give up first
    /// come at later polls.
    async fn join_modern(&mut self) -> Result<(), ClientError> {
        let coordinator = self.coordinator.clone().ok_or(ClientError::NoGroup)?;
        let m = self.membership.as_mut().expect("joining a subscription");
        let who = match &mut m.modern {
            Some((who, member)) => {
                // The old task stops: joining again gives up whatever it owned.
                if let Some(old) = member.take() {
                    old.stop();
                }
                who.clone()
            }
            None => unreachable!("a member of the consumer protocol"),
        };
        if self.commits_on_rebalance() && !self.assigned.is_empty() {
            // Best effort, as before a classic join.
            let _ = self.commit().await;
        }
        self.drop_assignment().await?;
        let member =
            modern_group::Member::join(coordinator, Arc::clone(&self.cluster), who).await?;
        let target = member.take_target();
        if let Some(m) = &mut self.membership {
            if let Some((_, slot)) = &mut m.modern {
                *slot = Some(member);
            }
        }
        match target {
            Some(target) => self.take_up(target).await,
            None => Ok(()),
        }
    }

    /// Follows the consumer protocol's task: takes up a new target, drops what a fenced
    /// member lost, joins again after leaving for not being polled.
    async fn keep_modern_membership(&mut self) -> Result<(), ClientError> {
        let Some(Membership {
            modern: Some((_, member)),
            ..
        }) = &mut self.membership
        else {
            return Ok(());
        };
        let Some(running) = member else {
            return self.join_modern().await;
        };
        running.confirm().await;
        match running.news() {
            // Owned by others now: nothing to commit. The task is joining again.
            Some(modern_group::News::Lost) => self.drop_assignment().await?,
            Some(modern_group::News::Left) => return self.join_modern().await,
            Some(modern_group::News::Failed(e)) => {
                if let Some(stopped) = member.take() {
                    stopped.stop();
                }
                self.drop_assignment().await?;
                return Err(e);
            }
            None => {}
        }
        let target = self
            .running_member()
            .and_then(modern_group::Member::take_target);
        match target {
            Some(target) => self.take_up(target).await,
            None => Ok(()),
        }
    }

    /// Owns `target` from now on: partitions not in it are committed (with
    /// [`ConsumerConfig::commit_on_rebalance`]) and dropped, new ones start where the group
    /// committed; then the coordinator hears at once what the member owns, which lets it
    /// give the dropped partitions to others.
    async fn take_up(&mut self, target: Assignment) -> Result<(), ClientError> {
        let taken = self.take_up_once(&target).await;
        if taken.is_err() {
            // The next poll takes it up again (what was done stays done).
            if let Some(member) = self.running_member() {
                member.retarget(target);
            }
        }
        taken
    }

    async fn take_up_once(&mut self, target: &Assignment) -> Result<(), ClientError> {
        let kept = |a: &Assigned| {
            target
                .iter()
                .any(|(topic, partitions)| *topic == *a.topic && partitions.contains(&a.partition))
        };
        if self.assigned.iter().any(|a| !kept(a)) {
            if self.commits_on_rebalance() {
                // Best effort: a member fenced meanwhile can no longer commit.
                let _ = self.commit_positions(|a| !kept(a)).await;
            }
            // Fetch answers in flight may hold records of the partitions dropped: they go,
            // and the kept partitions fetch again from their positions.
            for fetcher in self.fetchers.values_mut() {
                settle(fetcher).await?;
            }
            self.assigned.retain(kept);
            for a in &mut self.assigned {
                a.fetching = a.position;
                a.sought = false;
            }
        }
        let reset = self.membership.as_ref().map_or(Reset::Latest, |m| m.reset);
        for (topic, partitions) in target {
            for &partition in partitions {
                if self.partition(topic, partition).is_none() {
                    self.assign_partition(topic, partition, Start::Committed(reset))
                        .await?;
                }
            }
        }
        let mut owned: Vec<([u8; 16], Vec<i32>)> = Vec::new();
        for a in &self.assigned {
            let Some(id) = self.cluster.topic_id(&a.topic) else {
                continue;
            };
            match owned.iter_mut().find(|(t, _)| *t == id) {
                Some((_, partitions)) => partitions.push(a.partition),
                None => owned.push((id, vec![a.partition])),
            }
        }
        if let Some(member) = self.running_member() {
            member.owns(owned);
        }
        Ok(())
    }

    /// The consumer protocol's running member, if this consumer is one.
    fn running_member(&self) -> Option<&modern_group::Member> {
        match &self.membership {
            Some(Membership {
                modern: Some((_, Some(member))),
                ..
            }) => Some(member),
            _ => None,
        }
    }

    /// The leader's work: every member's share of the partitions of the topics they
    /// subscribed to, encoded for SyncGroup, and the partition counts it was made from.
    async fn assign_members(
        &mut self,
        members: &[(String, Vec<String>)],
    ) -> Result<(Vec<(String, Vec<u8>)>, HashMap<String, usize>), ClientError> {
        let mut topics: Vec<String> = members.iter().flat_map(|(_, t)| t).cloned().collect();
        topics.sort_unstable();
        topics.dedup();
        let counts = self.partition_counts(&topics).await?;
        let shares = range_assign(members, &counts)
            .into_iter()
            .map(|(member, share)| {
                let share: Vec<(&str, &[i32])> = share
                    .iter()
                    .map(|(topic, partitions)| (topic.as_str(), partitions.as_slice()))
                    .collect();
                Ok((member, encode_assignment(&share)?))
            })
            .collect::<Result<_, ClientError>>()?;
        Ok((shares, counts))
    }

    /// How many partitions each of `topics` has, the cluster asked now; 0 for a topic that
    /// does not exist (yet), which is assigned to no one.
    async fn partition_counts(
        &self,
        topics: &[String],
    ) -> Result<HashMap<String, usize>, ClientError> {
        let names: Vec<&str> = topics.iter().map(String::as_str).collect();
        self.cluster.refresh(&names).await?;
        Ok(topics
            .iter()
            .map(|t| (t.clone(), self.cluster.known_partitions(t).unwrap_or(0)))
            .collect())
    }

    /// Drops every partition, and the Fetch answers not yet handed out.
    async fn drop_assignment(&mut self) -> Result<(), ClientError> {
        for fetcher in self.fetchers.values_mut() {
            settle(fetcher).await?;
        }
        self.assigned.clear();
        Ok(())
    }

    /// Runs `call` on the connection to the group's coordinator ([`Coordinator::call`]).
    async fn with_coordinator<'s, T, Fut>(
        &'s self,
        call: impl FnMut(Connection, &'s str) -> Fut,
    ) -> Result<T, ClientError>
    where
        Fut: Future<Output = (Connection, Result<T, ClientError>)>,
    {
        let coordinator = self.coordinator.as_ref().ok_or(ClientError::NoGroup)?;
        coordinator.call(call).await
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
    /// hold none (the broker waited `max_wait` for `min_bytes`). A SASL session near its end
    /// (KIP-368) is renewed on its connection between two Fetches. A connection the broker
    /// closed (a restart, an idle one) is opened again within the same poll, once; after an
    /// error the next poll starts again from the positions reached.
    pub async fn poll(
        &mut self,
        mut on_record: impl FnMut(&str, i32, Record<'_>),
    ) -> Result<usize, ClientError> {
        if let Some(membership) = &self.membership {
            membership.polled();
        }
        self.auto_commit().await?;
        let mut handed = false;
        let mut retried = false;
        loop {
            let counting = &mut |topic: &str, partition, record: Record<'_>| {
                handed = true;
                on_record(topic, partition, record);
            };
            let result = self.poll_once(counting).await;
            let Err(e) = &result else { return result };
            // Whatever broke, the next try reconnects, refreshes leaders and refetches from
            // what was handed out.
            self.fetchers.clear();
            for a in &mut self.assigned {
                a.fetching = a.position;
                a.sought = false;
            }
            // Once more at once, if nothing was handed out: a fresh connection usually works.
            if retried || !e.is_closed_by_broker() || handed {
                return result;
            }
            retried = true;
        }
    }

    async fn poll_once(
        &mut self,
        on_record: &mut impl FnMut(&str, i32, Record<'_>),
    ) -> Result<usize, ClientError> {
        self.keep_membership().await?;
        if self.assigned.is_empty() {
            if self.membership.is_none() {
                return Err(ClientError::NothingAssigned);
            }
            // A member with no share.
            self.idle().await;
            return Ok(0);
        }
        let leaders = self.leaders().await?;
        if leaders.is_empty() {
            // Every partition paused.
            self.idle().await;
            return Ok(0);
        }
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
        let answer =
            tokio::time::timeout(limit, first_answer(&mut self.fetchers, &leaders, self.turn));
        let news = group_news(self.membership.as_ref());
        let (node, len) = tokio::select! {
            answer = answer => answer.map_err(|_| ClientError::RequestTimeout(limit))??,
            // The group changes: the next poll joins again at once rather than after this
            // Fetch (still in flight, settled by the join).
            () = news => return Ok(0),
        };
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
                if a.sought || a.paused {
                    // Asked from before a seek or pause: the next Fetch asks from the
                    // position, if the partition is fetched at all.
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
        // A session near its end is renewed by the next poll's Fetch, with nothing in flight.
        if !moved && !conn.renewal_due() {
            let version = conn
                .versions()
                .version(ApiKey::Fetch)
                .ok_or(ClientError::UnsupportedApi(ApiKey::Fetch))?;
            let list = fetch_list(assigned, cluster, node, config.partition_max_bytes, |a| {
                a.fetching
            });
            // None when every partition of the leader is paused.
            if !list.partitions.is_empty() {
                let topics = list.topics();
                let request = fetch_request(config, &topics);
                queue(&mut conn.tx, &mut conn.correlator, &request, version).await?;
                // In flight from here: a poll dropped during the flush leaves it queued, and
                // the next poll flushes it rather than sending another.
                fetcher.in_flight = true;
                conn.tx.flush().await?;
            }
        }
        // Then the records.
        let mut delivered = 0;
        let mut out_of_range = Vec::new();
        let limits = conn.limits;
        for topic in &response.topics {
            for p in &topic.partitions {
                let Some(a) = find(assigned, topic.name, p.partition_index) else {
                    continue;
                };
                if a.sought || a.paused {
                    a.sought = false;
                    continue;
                }
                if p.error_code != ErrorCode::NONE {
                    if p.error_code.is_retriable() {
                        continue;
                    }
                    if p.error_code == ErrorCode::OFFSET_OUT_OF_RANGE
                        && config.offset_reset.is_some()
                    {
                        out_of_range.push((Arc::clone(&a.topic), a.partition));
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
        if let Some(reset) = self.config.offset_reset {
            for (topic, partition) in out_of_range {
                self.move_to(&topic, partition, reset.timestamp()).await?;
            }
        }
        Ok(delivered)
    }

    /// Moves an assigned partition to the first record stamped at or after `ms`
    /// (milliseconds since the Unix epoch), or to its log's end if none is: where
    /// [`Start::Time`] starts, to handle records again from a point in time. Asks the
    /// partition's leader; records of a Fetch in flight are dropped, as by
    /// [`seek`](Self::seek).
    ///
    /// # Errors
    ///
    /// [`ClientError::NotAssigned`]: the consumer does not read the partition; or the
    /// leader's refusal.
    pub async fn seek_to_time(
        &mut self,
        topic: &str,
        partition: i32,
        ms: i64,
    ) -> Result<(), ClientError> {
        if self.partition(topic, partition).is_none() {
            return Err(not_assigned(topic, partition));
        }
        self.move_to(topic, partition, time(ms)).await
    }

    /// Moves an assigned partition to [`offset_at`](Self::offset_at) `at`: where a position
    /// out of the log's range goes, and [`seek_to_time`](Self::seek_to_time).
    async fn move_to(&mut self, topic: &str, partition: i32, at: i64) -> Result<(), ClientError> {
        let offset = self.offset_at(topic, partition, at).await?;
        // Asking dropped the leader's Fetch in flight, answers of other partitions with it.
        for a in &mut self.assigned {
            a.fetching = a.position;
            a.sought = false;
        }
        let a = find(&mut self.assigned, topic, partition)
            .ok_or_else(|| not_assigned(topic, partition))?;
        a.position = offset;
        a.fetching = offset;
        Ok(())
    }

    /// Waits as a Fetch with nothing new would (`max_wait`), or until the group changes.
    async fn idle(&self) {
        let news = group_news(self.membership.as_ref());
        let _ = tokio::time::timeout(self.config.max_wait, news).await;
    }

    /// The leaders of the assigned partitions not paused, asking the cluster for unknown ones.
    async fn leaders(&self) -> Result<Vec<i32>, ClientError> {
        let unknown: Vec<&str> = self
            .assigned
            .iter()
            .filter(|a| !a.paused && self.cluster.leader(&a.topic, a.partition).is_none())
            .map(|a| &*a.topic)
            .collect();
        if !unknown.is_empty() {
            self.cluster.refresh(&unknown).await?;
        }
        let mut leaders = Vec::new();
        for a in self.assigned.iter().filter(|a| !a.paused) {
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

/// Whether a commit `committed` with epoch `sent` is made again: refused for an epoch the
/// member has left behind, which is `now` another.
fn commit_again(committed: &Result<(), ClientError>, sent: Option<i32>, now: Option<i32>) -> bool {
    committed.as_ref().is_err_and(ClientError::is_stale_epoch) && now.is_some() && now != sent
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

/// Waits until the task of `membership` has news; without one, forever.
async fn group_news(membership: Option<&Membership>) {
    match membership {
        Some(m) => m.news().await,
        None => std::future::pending().await,
    }
}

/// `ms` as a ListOffsets time: one before the epoch is the epoch (-1 and -2 name the log's
/// ends there).
fn time(ms: i64) -> i64 {
    ms.max(0)
}

fn not_assigned(topic: &str, partition: i32) -> ClientError {
    ClientError::NotAssigned {
        topic: topic.to_owned(),
        partition,
    }
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
        .filter(|a| !a.paused && cluster.leader(&a.topic, a.partition) == Some(node))
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

#[cfg(test)]
mod tests {
    use ringwire_kafka::{ApiKey, ErrorCode};

    use super::*;

    #[test]
    fn a_commit_behind_the_members_epoch_is_made_again_once_it_moved() {
        let refused = |code| {
            Err(ClientError::Kafka {
                api: ApiKey::OffsetCommit,
                code,
                message: None,
            })
        };
        let stale = refused(ErrorCode::STALE_MEMBER_EPOCH);
        assert!(commit_again(&stale, Some(4), Some(5)));
        // The heartbeat's answer has not come: the same epoch would be refused again.
        assert!(!commit_again(&stale, Some(4), Some(4)));
        // No longer a member: nothing to make it with.
        assert!(!commit_again(&stale, Some(4), None));
        // Other refusals are the caller's, as is success.
        assert!(!commit_again(
            &refused(ErrorCode::FENCED_MEMBER_EPOCH),
            Some(4),
            Some(5)
        ));
        assert!(!commit_again(
            &refused(ErrorCode::UNKNOWN_MEMBER_ID),
            Some(4),
            Some(5)
        ));
        assert!(!commit_again(&Ok(()), Some(4), Some(5)));
    }
}
