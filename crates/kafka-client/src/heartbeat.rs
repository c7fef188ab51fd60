//! A group member's heartbeats, sent by a task of their own: a consumer busy with what it
//! polled (for longer than its session timeout, even) stays in the group. A consumer that
//! stops polling for [`max_poll_interval`](crate::ConsumerConfig::max_poll_interval) is
//! taken for stuck, as Java's is: the task leaves the group for it, so that the others take
//! its partitions, and its next poll joins again. A consumer whose task could not beat for a
//! while (the process was stopped, or the runtime did not let the task run) may have been
//! dropped from the group without hearing so: its next poll waits for a beat before it hands
//! out records of partitions that may be others' now.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use tokio::sync::Notify;
use tokio::task::JoinHandle;

use ringwire_kafka::api::heartbeat::HeartbeatRequest;
use ringwire_kafka::api::leave_group::LeaveGroupRequest;

use crate::coordinator::Coordinator;
use crate::ClientError;

/// What the task found out, for the consumer's next poll.
#[derive(Debug)]
pub(crate) enum News {
    /// The group rebalances or forgot the member: the error that said so.
    Rebalance(ClientError),
    /// The member left the group: the consumer was not polled for the max poll interval.
    Left,
    /// A heartbeat failed otherwise (the task goes on beating, unless the member was fenced).
    Failed(ClientError),
}

/// The running task; dropped, it stops.
#[derive(Debug)]
pub(crate) struct Heartbeat {
    task: JoinHandle<()>,
    shared: Arc<Shared>,
    every: Duration,
}

#[derive(Debug)]
struct Shared {
    /// When the consumer last polled.
    polled: Mutex<Instant>,
    news: Mutex<Option<News>>,
    pulse: Mutex<Pulse>,
    /// Wakes a poll waiting for news or a beat's answer.
    arrived: Notify,
    /// Wakes the task to beat now.
    nudge: Notify,
}

/// Who beats, how often, and when a consumer that does not poll counts as stuck.
pub(crate) struct Member {
    pub(crate) id: String,
    /// Its static membership id ([`ConsumerConfig::group_instance_id`](crate::ConsumerConfig)).
    pub(crate) instance: Option<String>,
    pub(crate) generation: i32,
    pub(crate) every: Duration,
    pub(crate) max_poll_interval: Duration,
}

impl Heartbeat {
    /// Starts beating for `member` of `coordinator`'s group, the first beat `every` from now.
    pub(crate) fn start(coordinator: Arc<Coordinator>, member: Member) -> Heartbeat {
        let shared = Arc::new(Shared {
            polled: Mutex::new(Instant::now()),
            news: Mutex::new(None),
            pulse: Mutex::new(Pulse::new()),
            arrived: Notify::new(),
            nudge: Notify::new(),
        });
        let every = member.every;
        let task = tokio::spawn(beat(coordinator, member, Arc::clone(&shared)));
        Heartbeat {
            task,
            shared,
            every,
        }
    }

    /// The consumer polls.
    pub(crate) fn polled(&self) {
        *lock(&self.shared.polled) = Instant::now();
    }

    /// What the task found out since the last call, if anything.
    pub(crate) fn news(&self) -> Option<News> {
        lock(&self.shared.news).take()
    }

    /// Waits until the task has news (at once if it has).
    pub(crate) async fn arrived(&self) {
        until(&self.shared.arrived, || lock(&self.shared.news).is_some()).await;
    }

    /// Makes sure the member is still in the group, if it may not be (see [`confirm`]).
    pub(crate) async fn confirm(&self) {
        let shared = &self.shared;
        let state = || (*lock(&shared.pulse), lock(&shared.news).is_some());
        let finished = self.task.is_finished();
        confirm(&shared.arrived, &shared.nudge, self.every, finished, state).await;
    }
}

impl Drop for Heartbeat {
    fn drop(&mut self) {
        self.task.abort();
    }
}

async fn beat(coordinator: Arc<Coordinator>, member: Member, shared: Arc<Shared>) {
    let tell = |news| {
        *lock(&shared.news) = Some(news);
        shared.arrived.notify_one();
    };
    loop {
        tokio::select! {
            () = tokio::time::sleep(member.every) => {}
            () = shared.nudge.notified() => {}
        }
        if lock(&shared.polled).elapsed() > member.max_poll_interval {
            // Best effort: a member that fails to leave is dropped when its session ends.
            let _ = coordinator
                .call(|mut conn, group| async {
                    let request = LeaveGroupRequest {
                        group_id: group,
                        member_id: &member.id,
                        group_instance_id: member.instance.as_deref(),
                        reason: Some("not polled for max.poll.interval"),
                    };
                    let left = conn.leave_group(&request).await;
                    (conn, left)
                })
                .await;
            return tell(News::Left);
        }
        let sent = Instant::now();
        let beat = coordinator
            .call(|mut conn, group| async {
                let request = HeartbeatRequest {
                    group_id: group,
                    generation_id: member.generation,
                    member_id: &member.id,
                    group_instance_id: member.instance.as_deref(),
                };
                let beat = conn.heartbeat(&request).await;
                (conn, beat)
            })
            .await;
        lock(&shared.pulse).answered(sent, beat.is_ok());
        shared.arrived.notify_one();
        match beat {
            Ok(()) => {}
            Err(e) if e.is_rebalance() => return tell(News::Rebalance(e)),
            // Out of the group for good: nothing more to beat for.
            Err(e) if e.is_fenced() => return tell(News::Failed(e)),
            Err(e) => tell(News::Failed(e)),
        }
    }
}

/// When a member's beats were last answered, for a poll after a pause.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Pulse {
    /// The last beat that found the member in the group was sent then.
    heard: Instant,
    /// The last beat answered at all was sent then.
    answered: Instant,
}

impl Pulse {
    /// A member that was in the group a moment ago (it just joined).
    pub(crate) fn new() -> Pulse {
        let now = Instant::now();
        Pulse {
            heard: now,
            answered: now,
        }
    }

    /// A beat sent at `sent` was answered; `in_group` if the answer said so.
    pub(crate) fn answered(&mut self, sent: Instant, in_group: bool) {
        self.answered = self.answered.max(sent);
        if in_group {
            self.heard = self.heard.max(sent);
        }
    }

    /// Whether the member may have been dropped without hearing: no beat, due `every`, found
    /// it in the group for half an interval more than that.
    fn doubtful(&self, every: Duration, now: Instant) -> bool {
        now.saturating_duration_since(self.heard) > every + every / 2
    }
}

/// For a member in doubt (its beats, due `every`, were not answered for a while: the
/// process was stopped, or the runtime did not let the task run), wakes the task with
/// `nudge` to beat now and waits, woken by `arrived`, for the answer or the task's news;
/// `state` gives the pulse and whether news waits. A member the coordinator dropped
/// meanwhile thus hears so before its poll hands out records of partitions that are others'
/// now, not after (sessions end on the coordinator's clock, whatever the member's process
/// did). A task that stopped beating (`finished`) has told its news already.
pub(crate) async fn confirm(
    arrived: &Notify,
    nudge: &Notify,
    every: Duration,
    finished: bool,
    state: impl Fn() -> (Pulse, bool),
) {
    let asked = Instant::now();
    if finished || !state().0.doubtful(every, asked) {
        return;
    }
    nudge.notify_one();
    until(arrived, || {
        let (pulse, news) = state();
        news || pulse.answered >= asked
    })
    .await;
}

/// Waits until `ready` holds, woken by `told` (at once if it holds now): a poll waiting for
/// what a group's task finds out.
pub(crate) async fn until(told: &Notify, ready: impl Fn() -> bool) {
    loop {
        // Made before the check: what is told in between still wakes it.
        let notified = told.notified();
        if ready() {
            return;
        }
        notified.await;
    }
}

/// `mutex` locked; what it guards stays whole even if a holder panicked (plain values).
pub(crate) fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}
