//! Consumer groups on KIP-848's consumer protocol (`GroupProtocol::Consumer`): the
//! coordinator assigns, and a member joining or leaving moves partitions one at a time, the
//! others' kept partitions flowing on; handed over with their commits, every record is read
//! once.

use std::cell::{Cell, RefCell};
use std::collections::BTreeSet;
use std::future::Future;
use std::time::{Duration, Instant};

use ringwire_kafka::api::create_topics::NewTopic;
use ringwire_kafka::api::produce::Acks;
use ringwire_kafka_client::{Consumer, ConsumerConfig, GroupProtocol, Reset};

use super::groups::{connect_async, poll_until, produce};
use super::{connect, create, runtime, script, unique};

/// A member of `group` on the consumer protocol that commits what it gives up.
pub(crate) fn member(group: &str) -> ConsumerConfig {
    ConsumerConfig {
        group: Some(group.to_owned()),
        group_protocol: GroupProtocol::Consumer,
        max_wait: Duration::from_millis(200),
        commit_on_rebalance: true,
        ..ConsumerConfig::default()
    }
}

/// Whether the broker runs the consumer protocol (Kafka 4.x does; 3.9, which `.ci/run` tests
/// too, does not unless told to): a member of a new group joins, or is refused saying why.
pub(crate) async fn protocol_offered(bootstrap: &str, topic: &str) -> bool {
    let mut probe = Consumer::connect(bootstrap, member(&unique("probe")))
        .await
        .unwrap();
    match probe.subscribe(&[topic], Reset::Earliest).await {
        Ok(()) => {
            probe.leave().await.unwrap();
            true
        }
        Err(e) => {
            let said = e.to_string();
            assert!(
                said.contains("UNSUPPORTED_VERSION")
                    && said.contains("does not run the consumer group protocol"),
                "{said}"
            );
            println!("    the broker does not run the consumer protocol: {said}");
            false
        }
    }
}

/// Runs `test` with a new topic of `partitions` partitions (named after `name`) and a new
/// group's name, on a runtime, if the broker runs the consumer protocol (else
/// [`protocol_offered`] checks that it says so).
fn on_new_topic<F: Future<Output = ()>>(
    bootstrap: &str,
    name: &str,
    partitions: i32,
    test: impl FnOnce(String, String) -> F,
) {
    let mut conn = connect(bootstrap);
    let topic = unique(name);
    create(&mut conn, &topic, partitions, &[]);
    runtime().block_on(async {
        if protocol_offered(bootstrap, &topic).await {
            test(topic, unique(name)).await;
        }
    });
}

fn partitions(consumer: &Consumer) -> BTreeSet<i32> {
    consumer.assignment().iter().map(|(_, p)| *p).collect()
}

/// Polls both until each has one partition at the same time.
async fn one_each_at_once(a: &mut Consumer, b: &mut Consumer, got: &RefCell<Vec<String>>) {
    let (a_one, b_one) = (Cell::new(false), Cell::new(false));
    tokio::join!(
        poll_until(a, got, |c| {
            a_one.set(partitions(c).len() == 1);
            a_one.get() && b_one.get()
        }),
        poll_until(b, got, |c| {
            b_one.set(partitions(c).len() == 1);
            a_one.get() && b_one.get()
        })
    );
}

pub(crate) fn members_move_partitions_one_at_a_time(bootstrap: &str) {
    on_new_topic(bootstrap, "modern-members", 4, |topic, group| async move {
        let mut producer = connect_async(bootstrap).await;
        produce(&mut producer, &topic, 0..5).await;
        let got = RefCell::new(Vec::new());
        let at_end = |c: &Consumer, end: i64| {
            let mine = partitions(c);
            !mine.is_empty() && mine.iter().all(|&p| c.position(&topic, p) == Some(end))
        };

        let mut a = Consumer::connect(bootstrap, member(&group)).await.unwrap();
        a.subscribe(&[&topic], Reset::Earliest).await.unwrap();
        // The member chose its id (16 random bytes, as Kafka's clients print them); the
        // coordinator gave it an epoch.
        let (id, epoch) = a.member().expect("a member");
        assert!(id.len() == 22 && epoch > 0, "{id} {epoch}");
        poll_until(&mut a, &got, |c| partitions(c).len() == 4 && at_end(c, 5)).await;
        assert_eq!(got.borrow().len(), 20);

        // A second member joins: the coordinator moves two partitions to it once the first
        // gave them up (committing them), and the first keeps reading the other two.
        produce(&mut producer, &topic, 5..8).await;
        let mut b = Consumer::connect(bootstrap, member(&group)).await.unwrap();
        b.subscribe(&[&topic], Reset::Earliest).await.unwrap();
        let shared = Cell::new(false);
        let split = |c: &Consumer| partitions(c).len() == 2;
        tokio::join!(
            async {
                poll_until(&mut a, &got, |c| shared.get() && split(c) && at_end(c, 8)).await;
            },
            async {
                poll_until(&mut b, &got, |c| split(c) && at_end(c, 8)).await;
                shared.set(true);
            }
        );
        let (kept, moved) = (partitions(&a), partitions(&b));
        assert_eq!(
            kept.union(&moved).copied().collect::<Vec<_>>(),
            [0, 1, 2, 3]
        );

        // The second leaves: its partitions go back to the first, from its commits.
        produce(&mut producer, &topic, 8..10).await;
        poll_until(&mut b, &got, |c| at_end(c, 10)).await;
        b.commit().await.unwrap();
        b.leave().await.unwrap();
        assert!(b.assignment().is_empty());
        poll_until(&mut a, &got, |c| partitions(c).len() == 4 && at_end(c, 10)).await;
        a.leave().await.unwrap();

        // Every record once: the partitions moved with their commits.
        let mut all = got.into_inner();
        all.sort();
        let mut want: Vec<String> = (0..4)
            .flat_map(|p| (0..10).map(move |i| format!("{p}:p{p}-{i}")))
            .collect();
        want.sort();
        assert_eq!(all, want);
    });
}

/// A consumer-protocol member that stops polling for its max poll interval leaves, its
/// partitions going to the other member; its next poll joins again and takes some back.
pub(crate) fn a_member_not_polled_leaves_and_comes_back(bootstrap: &str) {
    on_new_topic(bootstrap, "modern-stuck", 2, |topic, group| async move {
        let got = RefCell::new(Vec::new());
        let stuck_config = ConsumerConfig {
            max_poll_interval: Duration::from_millis(1500),
            ..member(&group)
        };
        let mut stuck = Consumer::connect(bootstrap, stuck_config).await.unwrap();
        stuck.subscribe(&[&topic], Reset::Earliest).await.unwrap();
        let mut other = Consumer::connect(bootstrap, member(&group)).await.unwrap();
        other.subscribe(&[&topic], Reset::Earliest).await.unwrap();
        one_each_at_once(&mut stuck, &mut other, &got).await;
        // `stuck` is not polled: `other` gets both partitions once it left.
        poll_until(&mut other, &got, |c| partitions(c).len() == 2).await;
        // Polled again, it joins again and the coordinator shares the partitions anew.
        one_each_at_once(&mut stuck, &mut other, &got).await;
        stuck.leave().await.unwrap();
        other.leave().await.unwrap();
    });
}

/// Kafka's own Java consumer (`group.protocol=consumer`) joins beside a ringwire member:
/// the coordinator moves two partitions to it, committed; one new record goes to each
/// partition, Java reads its two (and leaves, committing), ringwire the other two, then
/// takes every partition back from Java's commits.
pub(crate) fn a_java_member_shares_the_group(bootstrap: &str) {
    on_new_topic(bootstrap, "modern-java", 4, |topic, group| async move {
        let mut producer = connect_async(bootstrap).await;
        produce(&mut producer, &topic, 0..5).await;
        let got = RefCell::new(Vec::new());
        let at = |c: &Consumer, n: usize, end: i64| {
            let mine = partitions(c);
            mine.len() == n && mine.iter().all(|&p| c.position(&topic, p) == Some(end))
        };
        let mut a = Consumer::connect(bootstrap, member(&group)).await.unwrap();
        a.subscribe(&[&topic], Reset::Earliest).await.unwrap();
        poll_until(&mut a, &got, |c| at(c, 4, 5)).await;
        got.borrow_mut().clear();

        let java = std::process::Command::new("bash")
            .arg(script())
            .arg("java")
            .arg(script().with_file_name("GroupMember.java"))
            .args([bootstrap, &topic, &group, "2"])
            .stdout(std::process::Stdio::piped())
            .spawn()
            .expect("run GroupMember.java");
        let java = tokio::task::spawn_blocking(move || java.wait_with_output());
        poll_until(&mut a, &got, |c| at(c, 2, 5)).await;
        produce(&mut producer, &topic, 5..6).await;
        poll_until(&mut a, &got, |c| at(c, 2, 6)).await;
        let out = java.await.unwrap().unwrap();
        assert!(out.status.success(), "GroupMember.java failed");
        poll_until(&mut a, &got, |c| at(c, 4, 6)).await;
        a.leave().await.unwrap();

        let theirs: Vec<String> = String::from_utf8(out.stdout)
            .unwrap()
            .lines()
            .map(str::to_owned)
            .collect();
        let mine = got.into_inner();
        assert_eq!((theirs.len(), mine.len()), (2, 2), "{theirs:?} {mine:?}");
        let mut all: Vec<String> = theirs.into_iter().chain(mine).collect();
        all.sort();
        assert_eq!(all, ["0:p0-5", "1:p1-5", "2:p2-5", "3:p3-5"]);
    });
}

/// A static member (`group_instance_id`) dropped without leaving says it is coming back: a
/// consumer with its instance id takes its partition up at once (without that goodbye the
/// coordinator refuses the id until the old member's session ends), and the other member's
/// share never moves.
pub(crate) fn a_static_member_comes_back_to_its_partition(bootstrap: &str) {
    on_new_topic(bootstrap, "modern-static", 2, |topic, group| async move {
        let got = RefCell::new(Vec::new());
        let pod = ConsumerConfig {
            group_instance_id: Some(unique("pod")),
            ..member(&group)
        };
        let mut first = Consumer::connect(bootstrap, pod.clone()).await.unwrap();
        first.subscribe(&[&topic], Reset::Earliest).await.unwrap();
        let mut other = Consumer::connect(bootstrap, member(&group)).await.unwrap();
        other.subscribe(&[&topic], Reset::Earliest).await.unwrap();
        one_each_at_once(&mut first, &mut other, &got).await;
        let (its, theirs) = (partitions(&first), partitions(&other));
        drop(first);
        // The goodbye goes out from a task; the other member polls on meanwhile.
        let until = Instant::now() + Duration::from_millis(700);
        poll_until(&mut other, &got, |_| Instant::now() >= until).await;

        let started = Instant::now();
        let mut again = Consumer::connect(bootstrap, pod).await.unwrap();
        again.subscribe(&[&topic], Reset::Earliest).await.unwrap();
        let (back, stays) = (Cell::new(false), Cell::new(true));
        tokio::join!(
            poll_until(&mut again, &got, |c| {
                back.set(partitions(c) == its);
                back.get()
            }),
            poll_until(&mut other, &got, |c| {
                stays.set(stays.get() && partitions(c) == theirs);
                back.get()
            })
        );
        assert!(
            started.elapsed() < Duration::from_secs(3),
            "{:?}: waited for the old session to end",
            started.elapsed()
        );
        assert!(stays.get(), "the other member's share moved");
        again.leave().await.unwrap();
        other.leave().await.unwrap();
    });
}

/// A subscription by pattern (`subscribe_pattern`): the coordinator resolves it, so the
/// member reads every matching topic and not the others, takes up a matching topic created
/// later, and a pattern it cannot compile is refused.
pub(crate) fn a_pattern_takes_in_topics_created_later(bootstrap: &str) {
    let mut conn = connect(bootstrap);
    let prefix = unique("pattern");
    let (one, two, other) = (
        format!("{prefix}-one"),
        format!("{prefix}-two"),
        format!("other-{prefix}"),
    );
    create(&mut conn, &one, 1, &[]);
    create(&mut conn, &two, 2, &[]);
    create(&mut conn, &other, 1, &[]);
    let rt = runtime();
    rt.block_on(async {
        if !protocol_offered(bootstrap, &one).await {
            return;
        }
        let got = RefCell::new(Vec::new());
        let mut consumer = Consumer::connect(bootstrap, member(&unique("pattern")))
            .await
            .unwrap();
        consumer
            .subscribe_pattern(&format!("{prefix}-.*"), Reset::Earliest)
            .await
            .unwrap();
        let topics = |c: &Consumer| {
            let mut names: Vec<String> = c.assignment().into_iter().map(|(t, _)| t).collect();
            names.dedup();
            names
        };
        poll_until(&mut consumer, &got, |c| c.assignment().len() == 3).await;
        assert_eq!(topics(&consumer), [one.clone(), two.clone()]);

        let three = format!("{prefix}-three");
        let mut producer = connect_async(bootstrap).await;
        producer
            .create_topic(NewTopic {
                name: &three,
                num_partitions: 1,
                replication_factor: 1,
                configs: &[],
            })
            .await
            .unwrap();
        poll_until(&mut consumer, &got, |c| c.assignment().len() == 4).await;
        producer
            .produce(&three, 0, &super::one_record(b"late"), Acks::Leader)
            .await
            .unwrap();
        poll_until(&mut consumer, &got, |c| c.position(&three, 0) == Some(1)).await;
        assert_eq!(got.borrow().last().map(String::as_str), Some("0:late"));
        consumer.leave().await.unwrap();

        let mut refused = Consumer::connect(bootstrap, member(&unique("pattern")))
            .await
            .unwrap();
        let err = refused
            .subscribe_pattern("(unclosed", Reset::Earliest)
            .await
            .unwrap_err();
        assert!(
            err.to_string().contains("INVALID_REGULAR_EXPRESSION"),
            "{err}"
        );
    });
}

/// Members that go silent past the session timeout (their runtime blocked, heartbeats and
/// all) are fenced by the coordinator: each hears so at its next beat, drops the partitions
/// it lost without committing, joins again as the same member, and the two share the
/// partitions again, reading what came meanwhile.
pub(crate) fn fenced_members_join_again(bootstrap: &str) {
    on_new_topic(bootstrap, "modern-fenced", 2, |topic, group| async move {
        let got = RefCell::new(Vec::new());
        let mut a = Consumer::connect(bootstrap, member(&group)).await.unwrap();
        a.subscribe(&[&topic], Reset::Earliest).await.unwrap();
        let mut b = Consumer::connect(bootstrap, member(&group)).await.unwrap();
        b.subscribe(&[&topic], Reset::Earliest).await.unwrap();
        one_each_at_once(&mut a, &mut b, &got).await;
        let epochs = (a.member().unwrap().1, b.member().unwrap().1);
        let ids = (
            a.member().unwrap().0.to_owned(),
            b.member().unwrap().0.to_owned(),
        );

        let mut producer = connect_async(bootstrap).await;
        for partition in 0..2 {
            producer
                .produce(
                    &topic,
                    partition,
                    &super::one_record(b"after"),
                    Acks::Leader,
                )
                .await
                .unwrap();
        }
        // Past the test broker's 6 s sessions, with nothing running; then the first thing
        // the members do is poll, the records waiting: a member must not hand out what it
        // reads of partitions the coordinator took from it meanwhile.
        std::thread::sleep(Duration::from_secs(8));
        got.borrow_mut().clear();
        // Done once in the group again (a member that heard of its fencing is joining, at
        // epoch 0) with one partition read.
        let read_both = |c: &Consumer, before: i32| {
            c.member()
                .is_some_and(|(_, epoch)| epoch > 0 && epoch != before)
                && partitions(c).len() == 1
                && partitions(c)
                    .iter()
                    .all(|&p| c.position(&topic, p) == Some(1))
        };
        let (a_done, b_done) = (Cell::new(false), Cell::new(false));
        tokio::join!(
            poll_until(&mut a, &got, |c| {
                a_done.set(read_both(c, epochs.0));
                a_done.get() && b_done.get()
            }),
            poll_until(&mut b, &got, |c| {
                b_done.set(read_both(c, epochs.1));
                a_done.get() && b_done.get()
            })
        );
        // The same members (in new epochs), each record handed out once.
        assert_eq!(
            (a.member().unwrap().0, b.member().unwrap().0),
            (ids.0.as_str(), ids.1.as_str())
        );
        let mut all = got.into_inner();
        all.sort();
        assert_eq!(all, ["0:after", "1:after"]);
        a.leave().await.unwrap();
        b.leave().await.unwrap();
    });
}

/// A rolling upgrade: a classic member's group takes in a consumer-protocol member (Kafka
/// turns the group into a consumer group and speaks the classic protocol to the old member),
/// the two share the partitions, and once the classic member leaves the new one has them all.
pub(crate) fn a_classic_group_takes_in_a_consumer_protocol_member(bootstrap: &str) {
    on_new_topic(bootstrap, "modern-upgrade", 2, |topic, group| async move {
        let got = RefCell::new(Vec::new());
        let classic = ConsumerConfig {
            group_protocol: GroupProtocol::Classic,
            heartbeat_interval: Duration::from_millis(200),
            ..member(&group)
        };
        let mut old = Consumer::connect(bootstrap, classic).await.unwrap();
        old.subscribe(&[&topic], Reset::Earliest).await.unwrap();
        assert_eq!(partitions(&old).len(), 2);
        let mut new = Consumer::connect(bootstrap, member(&group)).await.unwrap();
        new.subscribe(&[&topic], Reset::Earliest).await.unwrap();
        one_each_at_once(&mut old, &mut new, &got).await;
        old.leave().await.unwrap();
        poll_until(&mut new, &got, |c| partitions(c).len() == 2).await;
        new.leave().await.unwrap();
    });
}
