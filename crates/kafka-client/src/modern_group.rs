//! Consumer group membership, the consumer protocol of KIP-848 (Kafka 4.0+; Java's
//! `group.protocol=consumer`). The coordinator assigns, and gives a partition to a member
//! only once its owner let go of it: a member joining or leaving stops the partitions that
//! move, not the whole group. A member joins and beats with ConsumerGroupHeartbeat, from a
//! task of its own after the join; an answer may bring the partitions the member may use now
//! (its target), which the consumer takes up at its next poll, the task then telling the
//! coordinator at once what the member owns.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::sync::Notify;
use tokio::task::JoinHandle;

use ringwire_kafka::api::consumer_group_heartbeat::{
    ConsumerGroupHeartbeatRequest, ConsumerGroupHeartbeatResponse, TopicPartitions, JOIN_EPOCH,
    LEAVE_EPOCH, STATIC_LEAVE_EPOCH,
};
use ringwire_kafka::{ApiKey, ErrorCode};

use crate::cluster::Cluster;
use crate::coordinator::Coordinator;
use crate::group::Assignment;
use crate::heartbeat::{confirm, lock, until, Pulse};
use crate::{ClientError, Connection};

/// Why a broker refuses the protocol: it is too old, or (Kafka 3.7 to 3.9) it was not turned on.
const UNSUPPORTED: &str = "the broker does not run the consumer group protocol (Kafka 4.0 and \
                           later do; 3.7 to 3.9 with group.coordinator.rebalance.protocols \
                           including consumer): use GroupProtocol::Classic";

/// What a beat's answer said.
#[derive(Debug)]
struct Beat {
    epoch: i32,
    interval: Duration,
    /// The partitions the member may use now, by topic id; `None` when unchanged.
    target: Option<Vec<([u8; 16], Vec<i32>)>>,
}

impl Connection {
    /// One ConsumerGroupHeartbeat.
    async fn consumer_group_heartbeat(
        &mut self,
        request: &ConsumerGroupHeartbeatRequest<'_>,
    ) -> Result<Beat, ClientError> {
        self.call(request, |frame| {
            let r = frame.decode::<ConsumerGroupHeartbeatResponse<'_>>()?;
            ClientError::check_said(
                ApiKey::ConsumerGroupHeartbeat,
                r.error_code,
                r.error_message,
            )?;
            Ok(Beat {
                epoch: r.member_epoch,
                interval: Duration::from_millis(
                    u64::try_from(r.heartbeat_interval_ms).unwrap_or(0),
                ),
                target: r.assignment.map(|topics| {
                    topics
                        .into_iter()
                        .map(|t| (t.topic_id, t.partitions))
                        .collect()
                }),
            })
        })
        .await
    }
}

/// Who the member is and what it subscribes to; kept across joins.
#[derive(Debug, Clone)]
pub(crate) struct Identity {
    /// Chosen by the member, once per consumer (KIP-1082).
    pub(crate) id: String,
    /// Static membership id.
    pub(crate) instance: Option<String>,
    pub(crate) topics: Vec<String>,
    /// A regular expression naming the topics instead (RE2/J syntax, resolved by the
    /// coordinator, which adds topics created later that match).
    pub(crate) pattern: Option<String>,
    /// The coordinator's assignor, or its default.
    pub(crate) assignor: Option<String>,
    pub(crate) rebalance_timeout: Duration,
    pub(crate) max_poll_interval: Duration,
}

impl Identity {
    /// A fresh member id: 16 random bytes, base64url as Kafka's `Uuid` prints them.
    pub(crate) fn random_id() -> Result<String, ClientError> {
        use base64::Engine as _;

        let mut bytes = [0u8; 16];
        getrandom::fill(&mut bytes).map_err(|e| ClientError::NoRandom(e.to_string()))?;
        Ok(base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes))
    }
}

/// What the task found out, for the consumer's next poll.
#[derive(Debug)]
pub(crate) enum News {
    /// The coordinator let go of the member (fenced, or forgot it): its partitions are
    /// others' now. The task is joining again.
    Lost,
    /// The member left the group: the consumer was not polled for the max poll interval.
    Left,
    /// The coordinator refused the member for good (no such protocol, not authorized, the
    /// group full): the task stopped.
    Failed(ClientError),
}

/// The member's beating task; dropped, it stops. A dynamic member goes quietly (the group
/// drops it when its session ends); a static one says it is coming back (epoch -2), so that
/// the coordinator keeps its partitions for its instance id until its session ends, and a
/// consumer with that id takes them up at once.
#[derive(Debug)]
pub(crate) struct Member {
    task: JoinHandle<()>,
    shared: Arc<Shared>,
    /// For a static member's goodbye.
    coordinator: Arc<Coordinator>,
    who: Identity,
}

#[derive(Debug)]
struct Shared {
    state: Mutex<State>,
    /// Wakes a poll waiting for news or a target.
    arrived: Notify,
    /// Wakes the task to beat now (the member owns something new).
    nudge: Notify,
}

#[derive(Debug)]
struct State {
    epoch: i32,
    /// How often the coordinator wants a beat.
    interval: Duration,
    pulse: Pulse,
    polled: Instant,
    /// Partitions to own now, not yet taken up by the consumer.
    target: Option<Assignment>,
    /// What the consumer owns since it took up the last target, not yet told.
    owned: Option<Vec<([u8; 16], Vec<i32>)>>,
    news: Option<News>,
}

impl Member {
    /// Joins `coordinator`'s group as `who` (epoch 0; the partitions it owns, if it is
    /// joining again, are none) and starts beating. The target the join brought, if any,
    /// waits in [`take_target`](Self::take_target).
    pub(crate) async fn join(
        coordinator: Arc<Coordinator>,
        cluster: Arc<Cluster>,
        who: Identity,
    ) -> Result<Member, ClientError> {
        let pulse = Pulse::new();
        let beat = match beat(&coordinator, &who, JOIN_EPOCH, Some(Vec::new())).await {
            Err(ClientError::Kafka { api, code, .. }) if code == ErrorCode::UNSUPPORTED_VERSION => {
                return Err(ClientError::Kafka {
                    api,
                    code,
                    message: Some(UNSUPPORTED.into()),
                })
            }
            beat => beat?,
        };
        let target = match &beat.target {
            Some(target) => Some(named(&cluster, &who, target).await?),
            None => None,
        };
        let shared = Arc::new(Shared {
            state: Mutex::new(State {
                epoch: beat.epoch,
                interval: beat.interval,
                pulse,
                polled: Instant::now(),
                target,
                owned: None,
                news: None,
            }),
            arrived: Notify::new(),
            nudge: Notify::new(),
        });
        let task = tokio::spawn(beating(
            Arc::clone(&coordinator),
            cluster,
            who.clone(),
            Arc::clone(&shared),
        ));
        Ok(Member {
            task,
            shared,
            coordinator,
            who,
        })
    }

    /// The member's epoch, which its commits carry.
    pub(crate) fn epoch(&self) -> i32 {
        self.state().epoch
    }

    /// The consumer polls.
    pub(crate) fn polled(&self) {
        self.state().polled = Instant::now();
    }

    /// What the task found out since the last call, if anything.
    pub(crate) fn news(&self) -> Option<News> {
        self.state().news.take()
    }

    /// The partitions the member may use now, if they changed since the last call.
    pub(crate) fn take_target(&self) -> Option<Assignment> {
        self.state().target.take()
    }

    /// A target the consumer could not take up whole, for its next poll (unless a newer one
    /// came meanwhile).
    pub(crate) fn retarget(&self, target: Assignment) {
        self.state().target.get_or_insert(target);
    }

    /// The consumer took up its target and owns `owned` now: the task tells the coordinator
    /// at once.
    pub(crate) fn owns(&self, owned: Vec<([u8; 16], Vec<i32>)>) {
        self.state().owned = Some(owned);
        self.shared.nudge.notify_one();
    }

    /// Makes sure the member is still in the group, if it may not be (see [`confirm`]).
    pub(crate) async fn confirm(&self) {
        let every = self.state().interval;
        let state = || {
            let state = self.state();
            (state.pulse, state.news.is_some())
        };
        let shared = &self.shared;
        confirm(
            &shared.arrived,
            &shared.nudge,
            every,
            self.task.is_finished(),
            state,
        )
        .await;
    }

    /// Waits until the task has news or a target (at once if it has).
    pub(crate) async fn arrived(&self) {
        until(&self.shared.arrived, || {
            let state = self.state();
            state.news.is_some() || state.target.is_some()
        })
        .await;
    }

    /// Stops beating without a word, for a member about to join again (a static member's
    /// goodbye would take the new membership out).
    pub(crate) fn stop(mut self) {
        self.who.instance = None;
    }

    /// Stops beating and leaves the group (epoch -1), so that its partitions go to the
    /// others at once.
    pub(crate) async fn leave(mut self) -> Result<(), ClientError> {
        self.task.abort();
        // Gone for good: no goodbye from `drop`.
        let who = Identity {
            instance: None,
            ..self.who.clone()
        };
        let left = beat(&self.coordinator, &who, LEAVE_EPOCH, None).await;
        self.who = who;
        match left {
            // Forgotten already (its session ended, or it was fenced): out, as asked.
            Err(e) if e.is_rebalance() => Ok(()),
            left => left.map(drop),
        }
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        lock(&self.shared.state)
    }
}

impl Drop for Member {
    fn drop(&mut self) {
        self.task.abort();
        if self.who.instance.is_none() || self.epoch() == JOIN_EPOCH {
            return;
        }
        // Best effort, on the runtime if there still is one.
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            let (coordinator, who) = (Arc::clone(&self.coordinator), self.who.clone());
            runtime.spawn(async move {
                let _ = beat(&coordinator, &who, STATIC_LEAVE_EPOCH, None).await;
            });
        }
    }
}

/// Beats for `who` at `epoch`, telling `owned` if given; a join (epoch 0) tells everything
/// the coordinator keeps of a member, a static member's goodbye (-2) its instance id.
async fn beat(
    coordinator: &Coordinator,
    who: &Identity,
    epoch: i32,
    owned: Option<Vec<([u8; 16], Vec<i32>)>>,
) -> Result<Beat, ClientError> {
    let topics: Vec<&str> = who.topics.iter().map(String::as_str).collect();
    let owned: Option<Vec<TopicPartitions<'_>>> = owned.as_ref().map(|owned| {
        owned
            .iter()
            .map(|(topic_id, partitions)| TopicPartitions {
                topic_id: *topic_id,
                partitions,
            })
            .collect()
    });
    let rebalance_timeout = i32::try_from(who.rebalance_timeout.as_millis()).unwrap_or(i32::MAX);
    coordinator
        .call(|mut conn, group| async {
            let mut request = ConsumerGroupHeartbeatRequest {
                owned: owned.as_deref(),
                ..ConsumerGroupHeartbeatRequest::beat(group, &who.id, epoch)
            };
            if epoch == JOIN_EPOCH || epoch == STATIC_LEAVE_EPOCH {
                // Who is coming back, or is back.
                request.instance_id = who.instance.as_deref();
            }
            if epoch == JOIN_EPOCH {
                request.rebalance_timeout_ms = rebalance_timeout;
                match &who.pattern {
                    Some(pattern) => request.subscribed_topic_regex = Some(pattern),
                    None => request.subscribed_topic_names = Some(&topics),
                }
                request.server_assignor = who.assignor.as_deref();
            }
            let answer = conn.consumer_group_heartbeat(&request).await;
            (conn, answer)
        })
        .await
}

/// `target` by topic name, asking the cluster for the ids of the topics `who` subscribed to
/// (of every topic, for a pattern) when one is unknown (a topic created after the last
/// refresh).
async fn named(
    cluster: &Cluster,
    who: &Identity,
    target: &[([u8; 16], Vec<i32>)],
) -> Result<Assignment, ClientError> {
    if target
        .iter()
        .any(|(id, _)| cluster.topic_name(id).is_none())
    {
        if who.pattern.is_some() {
            cluster.refresh_all().await?;
        } else {
            let names: Vec<&str> = who.topics.iter().map(String::as_str).collect();
            cluster.refresh(&names).await?;
        }
    }
    target
        .iter()
        .map(|(id, partitions)| {
            let name = cluster.topic_name(id).ok_or(ClientError::Kafka {
                api: ApiKey::ConsumerGroupHeartbeat,
                code: ErrorCode::UNKNOWN_TOPIC_ID,
                message: Some("an assigned topic the cluster does not name".into()),
            })?;
            Ok((name, partitions.clone()))
        })
        .collect()
}

/// The task: a beat every interval the coordinator asked for, or at once when the member
/// owns something new; a member not polled for the max poll interval leaves.
async fn beating(
    coordinator: Arc<Coordinator>,
    cluster: Arc<Cluster>,
    who: Identity,
    shared: Arc<Shared>,
) {
    let tell = |state: &mut State, news| {
        state.news = Some(news);
        shared.arrived.notify_one();
    };
    loop {
        let interval = lock(&shared.state).interval;
        tokio::select! {
            () = tokio::time::sleep(interval) => {}
            () = shared.nudge.notified() => {}
        }
        let (epoch, owned, stuck) = {
            let mut state = lock(&shared.state);
            let owned = match state.epoch {
                // Joining again: it owns nothing.
                JOIN_EPOCH => Some(Vec::new()),
                _ => state.owned.take(),
            };
            let stuck = state.polled.elapsed() > who.max_poll_interval;
            (state.epoch, owned, stuck)
        };
        if stuck {
            // Best effort: a member that fails to leave is dropped when its session ends.
            let _ = beat(&coordinator, &who, LEAVE_EPOCH, None).await;
            return tell(&mut lock(&shared.state), News::Left);
        }
        let sent = Instant::now();
        let answer = beat(&coordinator, &who, epoch, owned.clone()).await;
        let named = match &answer {
            Ok(Beat {
                target: Some(target),
                ..
            }) => Some(named(&cluster, &who, target).await),
            _ => None,
        };
        let mut state = lock(&shared.state);
        state.pulse.answered(sent, answer.is_ok());
        shared.arrived.notify_one();
        match (answer, named) {
            (Ok(_), Some(Err(e))) => tell(&mut state, News::Failed(e)),
            (Ok(beat), named) => {
                state.epoch = beat.epoch;
                if !beat.interval.is_zero() {
                    state.interval = beat.interval;
                }
                if let Some(Ok(target)) = named {
                    state.target = Some(target);
                    shared.arrived.notify_one();
                }
            }
            // Its partitions are gone; the next beat joins again.
            (Err(e), _) if e.is_rebalance() => {
                state.epoch = JOIN_EPOCH;
                state.target = None;
                state.owned = None;
                tell(&mut state, News::Lost);
                shared.nudge.notify_one();
            }
            // Tried again at the next beat, with what the member owns if that was not told.
            (Err(e), _) if e.is_transient() => {
                if epoch != JOIN_EPOCH && state.owned.is_none() {
                    state.owned = owned;
                }
            }
            (Err(e), _) => return tell(&mut state, News::Failed(e)),
        }
    }
}
