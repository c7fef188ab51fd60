//! A broker that stops answering without closing its connections (paused, or cut off by a
//! partition): every wait on it ends at its timeout, and the clients carry on once it is back.

use std::time::{Duration, Instant};

use ringwire_kafka::api::list_offsets::LATEST;
use ringwire_kafka::api::produce::Acks;
use ringwire_kafka_client::{
    ClientConfig, ClientError, Connection, Consumer, ConsumerConfig, Start,
};

use super::{broker_in, connect, create, one_record, runtime, unique, PrivateBroker};

/// Stops a process with SIGSTOP; continues it when dropped, however the test ends.
struct Paused(String);

impl Paused {
    /// Returns once every thread of the process has stopped: `kill` returns when the signal
    /// is sent, and a broker thread still running for a moment after it can answer a request
    /// that was meant to wait.
    fn new(pid: &str) -> Paused {
        signal(pid, "-STOP");
        let paused = Paused(pid.to_owned());
        let deadline = Instant::now() + Duration::from_secs(10);
        while !all_stopped(pid) {
            assert!(Instant::now() < deadline, "{pid} did not stop");
            std::thread::sleep(Duration::from_millis(5));
        }
        paused
    }
}

/// Whether every thread of `pid` is in the stopped state (`T` in its `stat`).
fn all_stopped(pid: &str) -> bool {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return false;
    };
    tasks.flatten().all(|task| {
        std::fs::read_to_string(task.path().join("stat")).is_ok_and(|stat| {
            // The state follows the command name, which is in parentheses.
            stat.rsplit_once(')')
                .and_then(|(_, rest)| rest.trim_start().chars().next())
                .is_some_and(|state| state == 'T')
        })
    })
}

impl Drop for Paused {
    fn drop(&mut self) {
        signal(&self.0, "-CONT");
    }
}

fn signal(pid: &str, signal: &str) {
    let sent = std::process::Command::new("kill")
        .args([signal, pid])
        .status();
    assert!(sent.expect("kill").success(), "kill {signal} {pid}");
}

/// A one-shot call, a consumer's poll and a connect to a paused broker fail with their
/// timeouts (the call's connection refusing every later call), and once the broker runs
/// again a new connection produces and the same consumer reads on.
pub(crate) fn a_paused_broker_times_out_every_wait(_shared: &str) {
    let dir = std::env::temp_dir().join(unique("ringwire-kafka-paused"));
    let private = PrivateBroker(dir);
    let addr = broker_in(&private.0, "start");
    let pid = std::fs::read_to_string(private.0.join("pid")).expect("the broker's pid");
    let topic = unique("paused");
    create(&mut connect(&addr), &topic, 1, &[]);
    let client = ClientConfig {
        connect_timeout: Duration::from_secs(1),
        request_timeout: Duration::from_secs(1),
        ..ClientConfig::default()
    };
    // Bounded as a whole: a wait that no timeout ends fails the test instead of hanging it.
    let bounded = |test| async { tokio::time::timeout(Duration::from_secs(90), test).await };
    runtime()
        .block_on(bounded(async {
            let mut conn = Connection::connect(&addr, &client).await.unwrap();
            conn.produce(&topic, 0, &one_record(b"before"), Acks::All)
                .await
                .unwrap();
            let config = ConsumerConfig {
                client: client.clone(),
                max_wait: Duration::from_millis(200),
                ..ConsumerConfig::default()
            };
            let mut consumer = Consumer::connect(&addr, config).await.unwrap();
            consumer.assign(&topic, Start::Earliest).await.unwrap();
            let mut got = Vec::new();
            while got.is_empty() {
                consumer.poll(|_, _, r| got.push(r.offset)).await.unwrap();
            }

            let paused = Paused::new(pid.trim());
            let started = Instant::now();
            let err = conn.list_offset(&topic, 0, LATEST).await.unwrap_err();
            assert!(matches!(err, ClientError::RequestTimeout(_)), "{err}");
            let err = conn.list_offset(&topic, 0, LATEST).await.unwrap_err();
            assert!(matches!(err, ClientError::Broken(_)), "{err}");
            let err = consumer
                .poll(|_, _, r| got.push(r.offset))
                .await
                .unwrap_err();
            assert!(matches!(err, ClientError::RequestTimeout(_)), "{err}");
            let err = Connection::connect(&addr, &client).await.unwrap_err();
            // A stopped broker's socket still accepts connections (the kernel does): no ApiVersions.
            assert!(
                matches!(err, ClientError::ApiVersionsTimeout { .. }),
                "{err}"
            );
            assert!(
                started.elapsed() < Duration::from_secs(15),
                "{:?}",
                started.elapsed()
            );
            drop(paused);

            let mut conn = Connection::connect(&addr, &client).await.unwrap();
            conn.produce(&topic, 0, &one_record(b"after"), Acks::All)
                .await
                .unwrap();
            let deadline = Instant::now() + Duration::from_secs(30);
            while got.len() < 2 {
                assert!(Instant::now() < deadline, "only {got:?}");
                // A poll may still meet the timeouts of requests sent while the broker was paused.
                let _ = consumer.poll(|_, _, r| got.push(r.offset)).await;
            }
            assert_eq!(got, [0, 1]);
        }))
        .expect("every wait ends");
}
