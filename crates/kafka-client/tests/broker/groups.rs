//! Consumer groups: committed offsets that ringwire commits and reads back, and that
//! librdkafka (kcat's balanced consumer, `-G`) picks up and commits in turn; members that
//! share a topic's partitions and take them over as others leave, ringwire's and
//! librdkafka's in one group.

use std::cell::{Cell, RefCell};
use std::future::Future;
use std::pin::Pin;
use std::time::{Duration, Instant};

use ringwire_kafka::api::produce::Acks;
use ringwire_kafka::record::Record;
use ringwire_kafka_client::{ClientConfig, ClientError, Consumer, ConsumerConfig, Reset, Start};

use super::{connect, create, kcat, kcat_run, one_record, runtime, unique};

fn grouped(group: &str) -> ConsumerConfig {
    ConsumerConfig {
        group: Some(group.to_owned()),
        ..ConsumerConfig::default()
    }
}

/// Polls until each `(partition, end)` of `topic` reached its end; the values handed out,
/// `partition:value`.
async fn consume_to(consumer: &mut Consumer, topic: &str, ends: &[(i32, i64)]) -> Vec<String> {
    let mut got = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(30);
    let reached = |c: &Consumer| {
        ends.iter()
            .all(|&(p, end)| c.position(topic, p) >= Some(end))
    };
    while !reached(consumer) {
        assert!(Instant::now() < deadline, "stopped at {got:?}");
        consumer
            .poll(|_, partition, r| {
                let value = String::from_utf8_lossy(r.value.unwrap_or_default());
                got.push(format!("{partition}:{value}"));
            })
            .await
            .unwrap();
    }
    got
}

pub(crate) fn committed_offsets_shared_with_kcat(bootstrap: &str) {
    kcat();
    let mut conn = connect(bootstrap);
    let topic = unique("group-offsets");
    let group = unique("group");
    create(&mut conn, &topic, 2, &[]);
    for partition in 0..2 {
        for i in 0..10 {
            let value = format!("p{partition}-{i}");
            conn.produce(
                &topic,
                partition,
                &one_record(value.as_bytes()),
                Acks::Leader,
            )
            .unwrap();
        }
    }
    let rt = runtime();
    rt.block_on(async {
        // Without a group there is nothing to commit to.
        let mut loose = Consumer::connect(bootstrap, ConsumerConfig::default())
            .await
            .unwrap();
        loose.assign(&topic, Start::Earliest).await.unwrap();
        assert!(matches!(loose.commit().await, Err(ClientError::NoGroup)));

        // Nothing committed yet: Reset decides, and the group's first use (which creates the
        // offsets topic on a fresh broker) is waited out.
        let mut first = Consumer::connect(bootstrap, grouped(&group)).await.unwrap();
        assert_eq!(first.committed(&topic, 0).await.unwrap(), None);
        first
            .assign(&topic, Start::Committed(Reset::Earliest))
            .await
            .unwrap();
        assert_eq!(first.position(&topic, 0), Some(0));
        consume_to(&mut first, &topic, &[(0, 10), (1, 10)]).await;
        // Only what was handled: 4 records of partition 0, 7 of partition 1.
        first
            .commit_offsets(&[(&topic, 0, 4), (&topic, 1, 7)])
            .await
            .unwrap();
        assert_eq!(first.committed(&topic, 0).await.unwrap(), Some(4));
        assert_eq!(first.committed(&topic, 1).await.unwrap(), Some(7));

        // A second consumer of the group goes on from there, whatever its Reset.
        let mut second = Consumer::connect(bootstrap, grouped(&group)).await.unwrap();
        second
            .assign(&topic, Start::Committed(Reset::Latest))
            .await
            .unwrap();
        assert_eq!(second.position(&topic, 0), Some(4));
        assert_eq!(second.position(&topic, 1), Some(7));
        let mut got = consume_to(&mut second, &topic, &[(0, 10), (1, 10)]).await;
        got.sort();
        let want = ["0:p0-4", "0:p0-5", "0:p0-6", "0:p0-7", "0:p0-8", "0:p0-9"]
            .into_iter()
            .chain(["1:p1-7", "1:p1-8", "1:p1-9"]);
        assert_eq!(got, want.collect::<Vec<_>>());
        // Commit 6 of 10 on partition 0 again, then everything handed out.
        second.commit_offsets(&[(&topic, 0, 6)]).await.unwrap();
        assert_eq!(second.committed(&topic, 0).await.unwrap(), Some(6));
        second.commit().await.unwrap();
        assert_eq!(second.committed(&topic, 0).await.unwrap(), Some(10));
        assert_eq!(second.committed(&topic, 1).await.unwrap(), Some(10));
    });

    // librdkafka reads ringwire's commit: only what came after it.
    for i in 10..13 {
        let value = format!("p0-{i}");
        conn.produce(&topic, 0, &one_record(value.as_bytes()), Acks::Leader)
            .unwrap();
    }
    let out = kcat_run(
        &[
            "-b", bootstrap, "-G", &group, "-e", "-q", "-f", "%p:%s\n", &topic,
        ],
        b"",
    );
    let mut lines: Vec<&str> = std::str::from_utf8(&out).unwrap().lines().collect();
    lines.sort_unstable();
    assert_eq!(lines, ["0:p0-10", "0:p0-11", "0:p0-12"]);

    // And ringwire reads librdkafka's commit, made as kcat left the group.
    rt.block_on(async {
        let mut third = Consumer::connect(bootstrap, grouped(&group)).await.unwrap();
        assert_eq!(third.committed(&topic, 0).await.unwrap(), Some(13));
        assert_eq!(third.committed(&topic, 1).await.unwrap(), Some(10));
    });
}

pub(crate) async fn connect_async(bootstrap: &str) -> ringwire_kafka_client::Connection {
    ringwire_kafka_client::Connection::connect(bootstrap, &ClientConfig::default())
        .await
        .unwrap()
}

/// Records `p{partition}-{i}` for each `i` of `round`, to each of partitions 0 to 3.
pub(crate) async fn produce(
    conn: &mut ringwire_kafka_client::Connection,
    topic: &str,
    round: std::ops::Range<usize>,
) {
    for partition in 0..4 {
        for i in round.clone() {
            let value = format!("p{partition}-{i}");
            conn.produce(
                topic,
                partition,
                &one_record(value.as_bytes()),
                Acks::Leader,
            )
            .await
            .unwrap();
        }
    }
}

/// A member config for `group` that heartbeats often, so rebalances are noticed quickly.
pub(crate) fn member(group: &str) -> ConsumerConfig {
    ConsumerConfig {
        heartbeat_interval: Duration::from_millis(200),
        max_wait: Duration::from_millis(200),
        commit_on_rebalance: true,
        ..grouped(group)
    }
}

/// Polls `consumer` until `done` is set: how many records it handed out.
async fn keep_polling(consumer: &mut Consumer, done: &Cell<bool>) -> usize {
    let mut records = 0;
    while !done.get() {
        records += consumer.poll(|_, _, _| {}).await.unwrap();
    }
    records
}

/// Subscribes `joining` to `topic` while every one of `members` keeps polling (a join waits
/// for the group's members to join again, which they do from poll, each on its own): how
/// many records the members handed out meanwhile.
pub(crate) async fn join_beside(
    joining: &mut Consumer,
    topic: &str,
    members: &mut [&mut Consumer],
) -> usize {
    let done = Cell::new(false);
    let (joined, records) = tokio::join!(
        async {
            let joined = joining.subscribe(&[topic], Reset::Earliest).await;
            done.set(true);
            joined
        },
        all_polling(members, &done)
    );
    joined.unwrap();
    records
}

/// [`keep_polling`] on every one of `members` at once.
fn all_polling<'a>(
    members: &'a mut [&mut Consumer],
    done: &'a Cell<bool>,
) -> Pin<Box<dyn Future<Output = usize> + 'a>> {
    Box::pin(async move {
        match members {
            [] => 0,
            [first, rest @ ..] => {
                let (one, others) =
                    tokio::join!(keep_polling(first, done), all_polling(rest, done));
                one + others
            }
        }
    })
}

pub(crate) fn members_share_partitions_and_take_them_over(bootstrap: &str) {
    kcat();
    let mut conn = connect(bootstrap);
    let topic = unique("group-members");
    let group = unique("members");
    create(&mut conn, &topic, 4, &[]);
    let rt = runtime();
    let mut producer = rt.block_on(connect_async(bootstrap));
    rt.block_on(produce(&mut producer, &topic, 0..5));
    let all_four: Vec<(String, i32)> = (0..4).map(|p| (topic.clone(), p)).collect();
    let everything = |ends: i64| -> Vec<(i32, i64)> { (0..4).map(|p| (p, ends)).collect() };
    // Members that commit only when told to, here.
    let explicit = ConsumerConfig {
        commit_on_rebalance: false,
        ..member(&group)
    };
    rt.block_on(async {
        let mut a = Consumer::connect(bootstrap, explicit.clone())
            .await
            .unwrap();
        a.subscribe(&[&topic], Reset::Earliest).await.unwrap();
        assert_eq!(
            a.assignment(),
            all_four,
            "alone, a member has every partition"
        );
        assert_eq!(consume_to(&mut a, &topic, &everything(5)).await.len(), 20);
        a.commit().await.unwrap();
        // One more record each, read and not committed.
        produce(&mut producer, &topic, 5..6).await;
        assert_eq!(consume_to(&mut a, &topic, &everything(6)).await.len(), 4);

        // A second member's join waits until the first joins again, which the first does
        // from poll once its heartbeat hears of the rebalance.
        let mut b = Consumer::connect(bootstrap, explicit).await.unwrap();
        let again = join_beside(&mut b, &topic, &mut [&mut a]).await;
        assert_eq!(again, 0, "records the first member had read came again");
        let (mine, theirs) = (a.assignment(), b.assignment());
        assert_eq!((mine.len(), theirs.len()), (2, 2), "{mine:?} {theirs:?}");
        let mut both: Vec<_> = mine.iter().chain(&theirs).cloned().collect();
        both.sort_unstable();
        assert_eq!(both, all_four);
        // The first keeps its share from where it was; the second takes its share from the
        // group's commit, so it gets the uncommitted record again (at least once).
        let partitions =
            |share: &[(String, i32)]| -> Vec<i32> { share.iter().map(|(_, p)| *p).collect() };
        for p in partitions(&mine) {
            assert_eq!(a.position(&topic, p), Some(6), "kept partition {p}");
        }
        for p in partitions(&theirs) {
            assert_eq!(b.position(&topic, p), Some(5), "moved partition {p}");
        }
        produce(&mut producer, &topic, 6..10).await;
        let ends = |share: &[(String, i32)]| -> Vec<(i32, i64)> {
            share.iter().map(|(_, p)| (*p, 10)).collect()
        };
        let got_a = consume_to(&mut a, &topic, &ends(&mine)).await;
        let got_b = consume_to(&mut b, &topic, &ends(&theirs)).await;
        let share_of = |got: &[String]| -> Vec<i32> {
            let mut ps: Vec<i32> = got.iter().map(|r| r[..1].parse().unwrap()).collect();
            ps.sort_unstable();
            ps.dedup();
            ps
        };
        assert_eq!(share_of(&got_a), partitions(&mine));
        assert_eq!(share_of(&got_b), partitions(&theirs));
        let mut got: Vec<String> = got_a.into_iter().chain(got_b).collect();
        got.sort();
        let moved = partitions(&theirs);
        let mut want: Vec<String> = (0..4)
            .flat_map(|p| {
                let from = if moved.contains(&p) { 5 } else { 6 };
                (from..10).map(move |i| format!("{p}:p{p}-{i}"))
            })
            .collect();
        want.sort();
        assert_eq!(got, want);

        // The second commits and leaves: the first takes its partitions, from its commit.
        b.commit().await.unwrap();
        b.leave().await.unwrap();
        assert!(b.assignment().is_empty());
        let deadline = Instant::now() + Duration::from_secs(30);
        while a.assignment().len() < 4 {
            assert!(
                Instant::now() < deadline,
                "never took over: {:?}",
                a.assignment()
            );
            a.poll(|_, _, _| {}).await.unwrap();
        }
        for p in 0..4 {
            assert_eq!(a.position(&topic, p), Some(10), "partition {p}");
        }
        // Leaving spares the next member a wait for this one's session to run out.
        a.commit().await.unwrap();
        a.leave().await.unwrap();
    });

    // librdkafka joins as a member beside ringwire's: once the group shares the partitions
    // between them, one new record goes to each partition; kcat reads the two of its share
    // (and leaves, committing), ringwire the other two, then takes every partition back.
    rt.block_on(async {
        let mut a = Consumer::connect(bootstrap, member(&group)).await.unwrap();
        a.subscribe(&[&topic], Reset::Earliest).await.unwrap();
        // Subscribing again is the same member, so no one is waited for.
        let started = Instant::now();
        a.subscribe(&[&topic], Reset::Earliest).await.unwrap();
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "{:?}",
            started.elapsed()
        );
        assert_eq!(a.assignment(), all_four);
        let done = Cell::new(false);
        let mut seen = Vec::new();
        let (bootstrap, group_id, name) = (bootstrap.to_owned(), group.clone(), topic.clone());
        let kcat = tokio::task::spawn_blocking(move || {
            let args = [
                "-b", &bootstrap, "-G", &group_id, "-c", "2", "-q", "-f", "%p:%s\n", &name,
            ];
            kcat_run(&args, b"")
        });
        let kcat = async {
            let out = kcat.await.unwrap();
            done.set(true);
            out
        };
        let mut record = |p: i32, r: Record<'_>| {
            seen.push(format!("{p}:{}", String::from_utf8_lossy(r.value.unwrap())));
        };
        let (out, ()) = tokio::join!(kcat, async {
            let deadline = Instant::now() + Duration::from_secs(30);
            while a.assignment().len() != 2 {
                assert!(Instant::now() < deadline, "kcat never joined");
                a.poll(|_, p, r| record(p, r)).await.unwrap();
            }
            produce(&mut producer, &topic, 10..11).await;
            while !done.get() {
                a.poll(|_, p, r| record(p, r)).await.unwrap();
            }
            // kcat left: every partition again, kcat's from its commits.
            while a.assignment().len() < 4 {
                assert!(
                    Instant::now() < deadline,
                    "never took over: {:?}",
                    a.assignment()
                );
                a.poll(|_, p, r| record(p, r)).await.unwrap();
            }
        });
        let mut theirs: Vec<String> = String::from_utf8(out)
            .unwrap()
            .lines()
            .map(str::to_owned)
            .collect();
        theirs.sort();
        seen.sort();
        assert_eq!((theirs.len(), seen.len()), (2, 2), "{theirs:?} {seen:?}");
        let mut got: Vec<String> = theirs.into_iter().chain(seen).collect();
        got.sort();
        assert_eq!(got, ["0:p0-10", "1:p1-10", "2:p2-10", "3:p3-10"]);
        for p in 0..4 {
            assert_eq!(a.position(&topic, p), Some(11), "partition {p}");
        }
        a.leave().await.unwrap();
    });
}

pub(crate) fn a_member_that_vanishes_is_replaced(bootstrap: &str) {
    let mut conn = connect(bootstrap);
    let topic = unique("group-failover");
    let group = unique("failover");
    create(&mut conn, &topic, 2, &[]);
    // The broker's shortest session (group.min.session.timeout.ms).
    let config = ConsumerConfig {
        session_timeout: Duration::from_secs(6),
        ..member(&group)
    };
    runtime().block_on(async {
        let mut a = Consumer::connect(bootstrap, config.clone()).await.unwrap();
        a.subscribe(&[&topic], Reset::Earliest).await.unwrap();
        let mut b = Consumer::connect(bootstrap, config.clone()).await.unwrap();
        join_beside(&mut b, &topic, &mut [&mut a]).await;
        // A third member over two partitions: one of the three has none, and polls idle.
        let mut c = Consumer::connect(bootstrap, config).await.unwrap();
        join_beside(&mut c, &topic, &mut [&mut a, &mut b]).await;
        let mut members = vec![a, b, c];
        let mut sizes: Vec<usize> = members.iter().map(|m| m.assignment().len()).collect();
        sizes.sort_unstable();
        assert_eq!(sizes, [0, 1, 1]);
        let idle = members
            .iter()
            .position(|m| m.assignment().is_empty())
            .unwrap();
        let started = Instant::now();
        assert_eq!(members[idle].poll(|_, _, _| {}).await.unwrap(), 0);
        assert!(
            started.elapsed() < Duration::from_secs(2),
            "an idle poll waits a heartbeat"
        );

        // One with a partition vanishes without leaving: once its session runs out, the
        // group shares the partitions between the two left, the idle one included.
        let gone = (idle + 1) % 3;
        drop(members.remove(gone));
        let (mut x, mut y) = (members.remove(0), members.remove(0));
        let started = Instant::now();
        // Both keep polling, each on its own (see `poll_until_shared`).
        let shares = [x.assignment().len(), y.assignment().len()].map(Cell::new);
        let settled = tokio::time::timeout(Duration::from_secs(30), async {
            tokio::join!(
                poll_until_shared(&mut x, &shares, 0),
                poll_until_shared(&mut y, &shares, 1)
            )
        })
        .await;
        assert!(settled.is_ok(), "stuck at {shares:?}");
        let mut both: Vec<_> = x.assignment().into_iter().chain(y.assignment()).collect();
        both.sort_unstable();
        assert_eq!(both, [(topic.clone(), 0), (topic.clone(), 1)]);
        assert!(
            started.elapsed() >= Duration::from_secs(3),
            "taken over before the session could end: {:?}",
            started.elapsed()
        );
        x.leave().await.unwrap();
        y.leave().await.unwrap();
    });
}

/// `auto_commit`: a poll commits what earlier polls handed out once the interval passed,
/// `leave` commits too, and the group's next member goes on from there.
pub(crate) fn auto_commit_commits_what_polls_handed_out(bootstrap: &str) {
    let mut conn = connect(bootstrap);
    let topic = unique("group-auto");
    create(&mut conn, &topic, 1, &[]);
    for i in 0..10 {
        let value = format!("{i}");
        conn.produce(&topic, 0, &one_record(value.as_bytes()), Acks::Leader)
            .unwrap();
    }
    let every_poll = unique("auto-every");
    let hourly = unique("auto-hourly");
    let config = |group: &str, every: u64| ConsumerConfig {
        auto_commit: Some(Duration::from_secs(every)),
        commit_on_rebalance: false,
        ..member(group)
    };
    runtime().block_on(async {
        // Every poll commits where the polls before it got to: the one after the last
        // record commits past it.
        let mut a = Consumer::connect(bootstrap, config(&every_poll, 0))
            .await
            .unwrap();
        a.subscribe(&[&topic], Reset::Earliest).await.unwrap();
        assert_eq!(consume_to(&mut a, &topic, &[(0, 10)]).await.len(), 10);
        let before = a.committed(&topic, 0).await.unwrap();
        assert!(before.is_some_and(|offset| offset < 10), "{before:?}");
        a.poll(|_, _, _| {}).await.unwrap();
        assert_eq!(a.committed(&topic, 0).await.unwrap(), Some(10));

        // Not due within the hour: nothing committed until the member leaves.
        let mut b = Consumer::connect(bootstrap, config(&hourly, 3600))
            .await
            .unwrap();
        b.subscribe(&[&topic], Reset::Earliest).await.unwrap();
        assert_eq!(consume_to(&mut b, &topic, &[(0, 10)]).await.len(), 10);
        b.poll(|_, _, _| {}).await.unwrap();
        assert_eq!(b.committed(&topic, 0).await.unwrap(), None);
        b.leave().await.unwrap();
        assert_eq!(b.committed(&topic, 0).await.unwrap(), Some(10));
        a.leave().await.unwrap();
    });
    conn.produce(&topic, 0, &one_record(b"later"), Acks::Leader)
        .unwrap();
    runtime().block_on(async {
        let mut c = Consumer::connect(bootstrap, config(&every_poll, 0))
            .await
            .unwrap();
        c.subscribe(&[&topic], Reset::Earliest).await.unwrap();
        assert_eq!(consume_to(&mut c, &topic, &[(0, 11)]).await, ["0:later"]);
        c.leave().await.unwrap();
    });
}

/// Members silent past their session (their runtime blocked, heartbeats and all) are
/// dropped by the coordinator while records wait for them. Each hears so before its next
/// poll hands anything out (a member's Fetch would still be answered), joins again, and
/// every record is handed out once.
pub(crate) fn members_dropped_while_paused_hand_out_nothing_twice(bootstrap: &str) {
    let mut conn = connect(bootstrap);
    let topic = unique("group-paused");
    let group = unique("paused");
    create(&mut conn, &topic, 2, &[]);
    let config = ConsumerConfig {
        session_timeout: Duration::from_secs(2),
        ..member(&group)
    };
    runtime().block_on(async {
        let mut a = Consumer::connect(bootstrap, config.clone()).await.unwrap();
        a.subscribe(&[&topic], Reset::Earliest).await.unwrap();
        let mut b = Consumer::connect(bootstrap, config).await.unwrap();
        join_beside(&mut b, &topic, &mut [&mut a]).await;
        let generation = |c: &Consumer| c.member().map(|(_, generation)| generation);
        let before = generation(&a);
        let mut producer = connect_async(bootstrap).await;
        for partition in 0..2 {
            let record = one_record(b"after");
            producer
                .produce(&topic, partition, &record, Acks::Leader)
                .await
                .unwrap();
        }
        std::thread::sleep(Duration::from_secs(4));

        let got = RefCell::new(Vec::new());
        let done = [Cell::new(false), Cell::new(false)];
        let rejoined = |c: &Consumer| {
            generation(c).is_some_and(|g| Some(g) != before)
                && c.assignment().len() == 1
                && c.assignment()
                    .iter()
                    .all(|(_, p)| c.position(&topic, *p) == Some(1))
        };
        let all = || done.iter().all(Cell::get);
        tokio::join!(
            poll_until(&mut a, &got, |c| {
                done[0].set(rejoined(c));
                all()
            }),
            poll_until(&mut b, &got, |c| {
                done[1].set(rejoined(c));
                all()
            })
        );
        let mut all = got.into_inner();
        all.sort();
        assert_eq!(all, ["0:after", "1:after"]);
        a.leave().await.unwrap();
        b.leave().await.unwrap();
    });
}

/// Polls `consumer` until `done` says so (checked before each poll), adding what it hands
/// out to `got` as `partition:value`.
pub(crate) async fn poll_until(
    consumer: &mut Consumer,
    got: &RefCell<Vec<String>>,
    done: impl Fn(&Consumer) -> bool,
) {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        if done(consumer) {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "stuck with {:?}",
            consumer.assignment()
        );
        consumer
            .poll(|_, partition, r| {
                let value = String::from_utf8_lossy(r.value.unwrap_or_default());
                got.borrow_mut().push(format!("{partition}:{value}"));
            })
            .await
            .unwrap();
    }
}

pub(crate) fn a_topic_created_after_subscribing_is_shared(bootstrap: &str) {
    let topic = unique("group-later");
    let group = unique("later");
    let config = ConsumerConfig {
        metadata_max_age: Duration::from_millis(300),
        ..member(&group)
    };
    let rt = runtime();
    let mut a = rt.block_on(async {
        let mut a = Consumer::connect(bootstrap, config).await.unwrap();
        a.subscribe(&[&topic], Reset::Earliest).await.unwrap();
        assert!(a.assignment().is_empty(), "{:?}", a.assignment());
        assert_eq!(a.poll(|_, _, _| {}).await.unwrap(), 0);
        a
    });
    let mut conn = connect(bootstrap);
    create(&mut conn, &topic, 2, &[]);
    conn.produce(&topic, 1, &one_record(b"first"), Acks::Leader)
        .unwrap();
    rt.block_on(async {
        // The leader (the only member) sees the new topic at its next look and shares it.
        let got = consume_to(&mut a, &topic, &[(0, 0), (1, 1)]).await;
        assert_eq!(got, ["1:first"]);
        assert_eq!(a.assignment(), [(topic.clone(), 0), (topic.clone(), 1)]);
        a.leave().await.unwrap();
    });
}

/// A member busy with what it polled for longer than its session timeout stays in the
/// group: its heartbeats come from a task of their own. Run in a spawned task, as a
/// pipeline's consumer would be.
pub(crate) fn a_busy_member_stays_in_the_group(bootstrap: &str) {
    let mut conn = connect(bootstrap);
    let topic = unique("group-busy");
    let group = unique("busy");
    create(&mut conn, &topic, 2, &[]);
    let config = ConsumerConfig {
        session_timeout: Duration::from_secs(1),
        heartbeat_interval: Duration::from_millis(200),
        ..member(&group)
    };
    let bootstrap = bootstrap.to_owned();
    runtime().block_on(async {
        let busy = tokio::spawn(async move {
            let mut a = Consumer::connect(&bootstrap, config).await.unwrap();
            a.subscribe(&[&topic], Reset::Earliest).await.unwrap();
            let joined = a
                .member()
                .map(|(id, generation)| (id.to_owned(), generation));
            a.poll(|_, _, _| {}).await.unwrap();
            // Three sessions' worth of work between polls.
            tokio::time::sleep(Duration::from_secs(3)).await;
            a.poll(|_, _, _| {}).await.unwrap();
            let after = a
                .member()
                .map(|(id, generation)| (id.to_owned(), generation));
            assert_eq!(after, joined, "the member was dropped and joined again");
            assert_eq!(a.assignment().len(), 2);
            a.leave().await.unwrap();
        });
        busy.await.unwrap();
    });
}

/// A member not polled for `max_poll_interval` leaves the group, though its session is far
/// from over: a member joining later takes every partition at once instead of waiting out the
/// stuck one. Polled again, the stuck one joins as a new member and gets its share back.
pub(crate) fn a_member_not_polled_leaves_the_group(bootstrap: &str) {
    let mut conn = connect(bootstrap);
    let topic = unique("group-stuck");
    let group = unique("stuck");
    create(&mut conn, &topic, 2, &[]);
    let config = ConsumerConfig {
        session_timeout: Duration::from_secs(20),
        rebalance_timeout: Duration::from_secs(20),
        max_poll_interval: Duration::from_secs(1),
        ..member(&group)
    };
    runtime().block_on(async {
        let mut stuck = Consumer::connect(bootstrap, config.clone()).await.unwrap();
        stuck.subscribe(&[&topic], Reset::Earliest).await.unwrap();
        let (first_id, _) = stuck.member().map(|(id, g)| (id.to_owned(), g)).unwrap();
        tokio::time::sleep(Duration::from_secs(2)).await;
        let mut late = Consumer::connect(bootstrap, config).await.unwrap();
        let started = Instant::now();
        late.subscribe(&[&topic], Reset::Earliest).await.unwrap();
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "the join waited {:?} for the stuck member",
            started.elapsed()
        );
        assert_eq!(late.assignment().len(), 2);

        let shares = [Cell::new(0), Cell::new(2)];
        let settled = tokio::time::timeout(Duration::from_secs(30), async {
            tokio::join!(
                poll_until_shared(&mut stuck, &shares, 0),
                poll_until_shared(&mut late, &shares, 1)
            )
        })
        .await;
        assert!(settled.is_ok(), "stuck at {shares:?}");
        let (id, _) = stuck.member().unwrap();
        assert_ne!(id, first_id, "joined again as a new member");
        stuck.leave().await.unwrap();
        late.leave().await.unwrap();
    });
}

/// Polls `consumer` until every member of `shares` has one partition; its own count is
/// `shares[me]`. Each member polls on its own: members polled in turns (both polls ended
/// before either starts again) can hold up a rebalance, one member waiting in its join for
/// the other, whose next poll would join, until the rebalance times out.
async fn poll_until_shared(consumer: &mut Consumer, shares: &[Cell<usize>], me: usize) {
    while shares.iter().any(|share| share.get() != 1) {
        consumer.poll(|_, _, _| {}).await.unwrap();
        shares[me].set(consumer.assignment().len());
    }
}

/// Static membership (`group_instance_id`): a member restarted within its session takes up
/// its partitions again at once, the group not rebalancing (the other member keeps its
/// generation without polling), whether the restarted one led the group or not; a second
/// consumer with the same id fences the first out.
pub(crate) fn a_static_member_comes_back_without_a_rebalance(bootstrap: &str) {
    for leader in [false, true] {
        static_restart(bootstrap, leader);
    }
}

/// One restart of [`a_static_member_comes_back_without_a_rebalance`], of the group's
/// `leader` (the first to join) or not.
fn static_restart(bootstrap: &str, leader: bool) {
    let mut conn = connect(bootstrap);
    let topic = unique("group-static");
    let group = unique("static");
    create(&mut conn, &topic, 2, &[]);
    let config = |instance: &str| ConsumerConfig {
        group_instance_id: Some(instance.to_owned()),
        session_timeout: Duration::from_secs(20),
        ..member(&group)
    };
    runtime().block_on(async {
        let mut a = Consumer::connect(bootstrap, config("a")).await.unwrap();
        let mut b = Consumer::connect(bootstrap, config("b")).await.unwrap();
        let (first, second) = if leader {
            (&mut a, &mut b)
        } else {
            (&mut b, &mut a)
        };
        first.subscribe(&[&topic], Reset::Earliest).await.unwrap();
        join_beside(second, &topic, &mut [first]).await;
        let (share, b_member) = (a.assignment(), b.member().map(|(id, g)| (id.to_owned(), g)));
        assert_eq!((share.len(), b.assignment().len()), (1, 1));

        // A restart: dropped without leaving, then the same instance again.
        drop(a);
        let mut again = Consumer::connect(bootstrap, config("a")).await.unwrap();
        let started = Instant::now();
        again.subscribe(&[&topic], Reset::Earliest).await.unwrap();
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "took {:?} (leader: {leader}): a rebalance waited for the other member",
            started.elapsed()
        );
        assert_eq!(again.assignment(), share);
        b.poll(|_, _, _| {}).await.unwrap();
        let b_after = b.member().map(|(id, g)| (id.to_owned(), g));
        assert_eq!(b_after, b_member, "the other member joined again");

        // A second consumer with the id takes over; the first is fenced at its next beat.
        let mut twin = Consumer::connect(bootstrap, config("a")).await.unwrap();
        twin.subscribe(&[&topic], Reset::Earliest).await.unwrap();
        let deadline = Instant::now() + Duration::from_secs(10);
        let err = loop {
            assert!(Instant::now() < deadline, "never fenced");
            if let Err(e) = again.poll(|_, _, _| {}).await {
                break e;
            }
        };
        assert!(err.is_fenced(), "{err}");
        assert!(again.assignment().is_empty());
        twin.leave().await.unwrap();
        b.leave().await.unwrap();
    });
}
