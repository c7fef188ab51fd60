//! A group member's heartbeats, sent by a task of their own: a consumer busy with what it
//! polled (for longer than its session timeout, even) stays in the group. A consumer that
//! stops polling for [`max_poll_interval`](crate::ConsumerConfig::max_poll_interval) is
//! taken for stuck, as Java's is: the task leaves the group for it, so that the others take
//! its partitions, and its next poll joins again.

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
}

#[derive(Debug)]
struct Shared {
    /// When the consumer last polled.
    polled: Mutex<Instant>,
    news: Mutex<Option<News>>,
    /// Wakes a poll waiting for news.
    arrived: Notify,
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
            arrived: Notify::new(),
        });
        let task = tokio::spawn(beat(coordinator, member, Arc::clone(&shared)));
        Heartbeat { task, shared }
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
        tokio::time::sleep(member.every).await;
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
        match beat {
            Ok(()) => {}
            Err(e) if e.is_rebalance() => return tell(News::Rebalance(e)),
            // Out of the group for good: nothing more to beat for.
            Err(e) if e.is_fenced() => return tell(News::Failed(e)),
            Err(e) => tell(News::Failed(e)),
        }
    }
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
