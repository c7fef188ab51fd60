//! `ringwire kafka` against a real Apache Kafka broker: the one
//! `RINGWIRE_KAFKA_BOOTSTRAP` names (CI starts one), or one this test
//! starts with `scripts/kafka/broker.sh` and stops. Records produced by the
//! command are read back by it and by kcat, which no one here wrote.

use std::io::{BufRead as _, BufReader, Write as _};
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_ringwire");

/// The broker's address, and the run directory of one this test started.
struct Broker {
    bootstrap: String,
    started: Option<PathBuf>,
}

impl Broker {
    fn get() -> Broker {
        if let Ok(bootstrap) = std::env::var("RINGWIRE_KAFKA_BOOTSTRAP") {
            return Broker {
                bootstrap,
                started: None,
            };
        }
        // A run directory of its own, apart from other tests' brokers.
        let run = std::env::temp_dir().join(format!("ringwire-cli-kafka-{}", std::process::id()));
        let out = broker_sh("start", &run);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        Broker {
            bootstrap: String::from_utf8(out.stdout).unwrap().trim().to_owned(),
            started: Some(run),
        }
    }
}

impl Drop for Broker {
    fn drop(&mut self) {
        if let Some(run) = &self.started {
            broker_sh("stop", run);
            let _ = std::fs::remove_dir_all(run);
        }
    }
}

impl Broker {
    /// The words `broker.sh ACTION` prints about this broker.
    fn says(&self, action: &str) -> Vec<String> {
        let mut command = Command::new("bash");
        command.args([SCRIPT, action]);
        // A broker of the environment's is the script's, in its default run directory.
        if let Some(run) = &self.started {
            command.env("KAFKA_RUN_DIR", run);
        }
        let out = command.output().expect("run broker.sh");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let text = String::from_utf8(out.stdout).unwrap();
        text.split_whitespace().map(str::to_owned).collect()
    }

    /// The broker's TLS listener and the PEM file of the CA that signed its certificate.
    fn tls(&self) -> (String, String) {
        let [addr, ca] = <[String; 2]>::try_from(self.says("tls")).expect("ADDRESS CA_FILE");
        (addr, ca)
    }

    /// The broker's mutual-TLS listener, its CA's PEM file, and a client certificate and key
    /// (PEM files) it accepts.
    fn mtls(&self) -> [String; 4] {
        <[String; 4]>::try_from(self.says("mtls")).expect("ADDRESS CA_FILE CERT_FILE KEY_FILE")
    }

    /// The broker's SASL listener (PLAIN), a user and its password.
    fn sasl(&self) -> (String, String, String) {
        let [addr, user, password] =
            <[String; 3]>::try_from(self.says("sasl")).expect("ADDRESS USER PASSWORD");
        (addr, user, password)
    }
}

const SCRIPT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../scripts/kafka/broker.sh");

fn broker_sh(what: &str, run: &PathBuf) -> Output {
    Command::new("bash")
        .args([SCRIPT, what])
        .env("KAFKA_RUN_DIR", run)
        .stderr(Stdio::piped())
        .output()
        .expect("run broker.sh")
}

/// `ringwire kafka --bootstrap B ARGS`, with `stdin` as its input.
fn kafka(bootstrap: &str, args: &[&str], stdin: &[u8]) -> Output {
    let out = run_kafka(bootstrap, args, stdin);
    assert!(
        out.status.success(),
        "ringwire kafka {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// The one stderr line of `ringwire kafka --bootstrap B ARGS`, which must fail.
fn kafka_fails(bootstrap: &str, args: &[&str]) -> String {
    let out = run_kafka(bootstrap, args, b"");
    assert_eq!(out.status.code(), Some(1), "ringwire kafka {args:?}");
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    stderr
}

fn run_kafka(bootstrap: &str, args: &[&str], stdin: &[u8]) -> Output {
    let mut child = Command::new(BIN)
        .args(["kafka", "--bootstrap", bootstrap])
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run ringwire kafka");
    child.stdin.take().unwrap().write_all(stdin).unwrap();
    child.wait_with_output().unwrap()
}

/// What kcat, which no one here wrote, prints for `args`; it must succeed.
fn kcat(args: &[&str]) -> Vec<u8> {
    let out = Command::new("kcat")
        .args(args)
        .output()
        .expect("kcat is installed");
    assert!(
        out.status.success(),
        "kcat {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

/// Waits for `child` (a `ringwire kafka` run), which must end with success and nothing on
/// stderr.
fn ended_quietly(child: std::process::Child) {
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success() && out.stderr.is_empty(),
        "{:?}: {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The `\n`-separated lines of `bytes` (a `\r` before a `\n` is kept), sorted.
fn sorted_lines(bytes: &[u8]) -> Vec<String> {
    let text = String::from_utf8_lossy(bytes);
    let mut lines: Vec<String> = text
        .strip_suffix('\n')
        .unwrap_or(&text)
        .split('\n')
        .map(str::to_owned)
        .collect();
    lines.sort();
    lines
}

#[test]
fn creates_produces_and_consumes_against_a_real_broker() {
    let broker = Broker::get();
    let b = broker.bootstrap.as_str();
    let topic = format!("ringwire-cli-{}", std::process::id());
    kafka(b, &["topics", "create", &topic, "--partitions", "3"], b"");
    // A refusal carries the broker's words, not only the code.
    let refused = kafka_fails(
        b,
        &[
            "topics",
            "create",
            &format!("{topic}-r3"),
            "--replication-factor",
            "3",
        ],
    );
    assert!(
        refused.contains("INVALID_REPLICATION_FACTOR") && refused.contains("Unable to replicate"),
        "{refused}"
    );

    // 2,500 lines (three batches) to partition 1, zstd-compressed; then
    // keyed lines, which go where Java's producer would send them.
    let plain: Vec<String> = (0..2500)
        .map(|i| format!("line {i} {}", "x".repeat(i % 50)))
        .collect();
    let input = plain.join("\n") + "\n";
    kafka(
        b,
        &[
            "produce",
            &topic,
            "--partition",
            "1",
            "--compression",
            "zstd",
        ],
        input.as_bytes(),
    );
    kafka(
        b,
        &["produce", &topic, "--key", "user-42"],
        b"keyed one\nkeyed two\n",
    );
    // Every byte but the `\n` (a CRLF line keeps its `\r`, as kcat -P keeps it), and a last
    // line without one.
    kafka(
        b,
        &["produce", &topic, "--partition", "0"],
        b"crlf line\r\nlast line",
    );

    let total = plain.len() + 4;
    let count = total.to_string();
    let ours = kafka(
        b,
        &["consume", &topic, "--from-beginning", "--count", &count],
        b"",
    );
    let mut expected = plain.clone();
    expected.extend(["keyed one", "keyed two", "crlf line\r", "last line"].map(str::to_owned));
    expected.sort();
    assert_eq!(sorted_lines(&ours.stdout), expected);

    // kcat reads the same records; keyed ones carry their key.
    let theirs = sorted_lines(&kcat(&[
        "-C", "-b", b, "-t", &topic, "-e", "-q", "-f", "%k|%s\n",
    ]));
    assert_eq!(theirs.len(), total);
    assert!(
        theirs.contains(&"user-42|keyed one".to_owned()),
        "{theirs:?}"
    );
    assert!(theirs.contains(&"|crlf line\r".to_owned()), "{theirs:?}");
    // -e: each partition to its end, then exit; -K: keys as kcat's %k prints them.
    let keyed = kafka(
        b,
        &["consume", &topic, "--from-beginning", "-e", "-K", "|"],
        b"",
    );
    assert_eq!(sorted_lines(&keyed.stdout), theirs);
    // With --count, whichever comes first.
    let three = kafka(
        b,
        &["consume", &topic, "--from-beginning", "-e", "--count", "3"],
        b"",
    );
    assert_eq!(three.stdout.iter().filter(|&&b| b == b'\n').count(), 3);
    // From the newest record: already at the end.
    let none = kafka(b, &["consume", &topic, "--exit-at-end"], b"");
    assert!(none.stdout.is_empty());
    assert!(
        theirs.contains(&"|line 0 ".to_owned()),
        "{:?}",
        &theirs[..3]
    );
    // Both keyed records in one partition, the one murmur2 picks.
    let partition_of = |line: &str| {
        let out = kcat(&["-C", "-b", b, "-t", &topic, "-e", "-q", "-f", "%p|%s\n"]);
        String::from_utf8_lossy(&out)
            .lines()
            .find(|l| l.ends_with(line))
            .map(|l| l.split('|').next().unwrap().to_owned())
    };
    assert_eq!(partition_of("keyed one"), partition_of("keyed two"));

    from_a_time(b, &format!("{topic}-time"));
    from_an_offset(b, &format!("{topic}-offset"));
    read_committed_as_kcat(&broker, &format!("{topic}-txn"));
    produce_in_a_transaction(b, &format!("{topic}-ptxn"));
    ends_quietly_when_its_reader_leaves(b, &format!("{topic}-pipe"));
    tombstones_on_a_compacted_topic(b, &format!("{topic}-compacted"));
    formats_records_as_kcat(b, &format!("{topic}-format"));
    produces_keys_and_headers_as_kcat(b, &format!("{topic}-keyed"));
    a_group_goes_on_where_it_stopped(b, &format!("{topic}-group"));
    a_consumer_protocol_group_goes_on(b, &format!("{topic}-modern"));
    a_member_whose_reader_stalls_leaves(b, &format!("{topic}-stall"));
    topics_are_listed_and_deleted(b, &format!("{topic}-admin"));
    over_tls(&broker, &format!("{topic}-tls"));
    with_a_client_certificate(&broker, &format!("{topic}-mtls"));
    with_sasl(&broker, &format!("{topic}-sasl"));
}

/// `consume --from-time MS`: the records stamped from then on, none before.
fn from_a_time(b: &str, topic: &str) {
    kafka(b, &["topics", "create", topic, "--partitions", "1"], b"");
    kafka(b, &["produce", topic], b"before 1\nbefore 2\n");
    std::thread::sleep(std::time::Duration::from_millis(20));
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis()
        .to_string();
    std::thread::sleep(std::time::Duration::from_millis(20));
    kafka(b, &["produce", topic], b"after 1\nafter 2\n");
    let since = kafka(b, &["consume", topic, "--from-time", &now, "-e"], b"");
    assert_eq!(sorted_lines(&since.stdout), ["after 1", "after 2"]);
    let later = (now.parse::<i64>().unwrap() + 60_000).to_string();
    let none = kafka(b, &["consume", topic, "--from-time", &later, "-e"], b"");
    assert!(none.stdout.is_empty());
}

/// `consume -o N` starts at offset N, `-o -N` N before each partition's end (never before
/// its start), `-p P` reads one partition, as kcat's `-o` and `-p`.
fn from_an_offset(b: &str, topic: &str) {
    kafka(b, &["topics", "create", topic, "--partitions", "2"], b"");
    kafka(b, &["produce", topic, "--partition", "0"], b"a\nb\nc\nd\n");
    kafka(b, &["produce", topic, "--partition", "1"], b"x\ny\n");
    let read = |args: &[&str]| {
        let args = [&["consume", topic, "-e"][..], args].concat();
        sorted_lines(&kafka(b, &args, b"").stdout)
    };
    assert_eq!(read(&["-p", "0", "-o", "2"]), ["c", "d"]);
    assert_eq!(read(&["-o", "1"]), ["b", "c", "d", "y"]);
    assert_eq!(read(&["-o", "-1"]), ["d", "y"]);
    assert_eq!(read(&["-o", "-3", "-p", "1"]), ["x", "y"]);
    assert_eq!(read(&["-p", "1", "--from-beginning"]), ["x", "y"]);
    let missing = kafka_fails(b, &["consume", topic, "-p", "2", "-e"]);
    assert!(missing.contains("has no partition 2"), "{missing}");
    // A group member starts where its group committed: no offset of its own.
    let refused = run_kafka(b, &["consume", topic, "-o", "-1", "-G", "g"], b"");
    assert_eq!(refused.status.code(), Some(2));
    let said = String::from_utf8_lossy(&refused.stderr);
    assert!(said.contains("cannot be used with"), "{said}");
}

/// Kafka's own Java producer commits a transaction and aborts one; `consume -X
/// isolation.level=read_committed` prints the committed records only, as kcat does with the
/// same setting, and without it both; `-X` of a group member's alone wants `-G`.
fn read_committed_as_kcat(broker: &Broker, topic: &str) {
    let b = broker.bootstrap.as_str();
    kafka(b, &["topics", "create", topic, "--partitions", "1"], b"");
    let program = SCRIPT.replace("broker.sh", "Transactions.java");
    let mut java = Command::new("bash");
    java.args([SCRIPT, "java", &program, b, topic, "2"]);
    if let Some(run) = &broker.started {
        java.env("KAFKA_RUN_DIR", run);
    }
    let out = java.output().expect("run Transactions.java");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    let committed = ["-X", "isolation.level=read_committed"];
    let ours = kafka(
        b,
        &[
            &["consume", topic, "--from-beginning", "-e"],
            &committed[..],
        ]
        .concat(),
        b"",
    );
    let expected: String = (0..10).map(|i| format!("committed 0 {i}\n")).collect();
    assert_eq!(String::from_utf8_lossy(&ours.stdout), expected);
    let theirs = kcat(&[&["-C", "-b", b, "-t", topic, "-e", "-q"], &committed[..]].concat());
    assert_eq!(ours.stdout, theirs);
    let all = kafka(b, &["consume", topic, "--from-beginning", "-e"], b"");
    assert_eq!(all.stdout.iter().filter(|&&c| c == b'\n').count(), 20);
    let refused = kafka_fails(b, &["consume", topic, "-X", "session.timeout.ms=6000"]);
    assert!(refused.contains("give the group with -G"), "{refused}");
}

/// `produce -X transactional.id=..` sends stdin's lines in one transaction, committed when
/// stdin ends: delivered meanwhile, yet invisible to `read_committed` consumers (ours and
/// kcat), which then see all of them.
fn produce_in_a_transaction(b: &str, topic: &str) {
    kafka(b, &["topics", "create", topic, "--partitions", "1"], b"");
    let mut producer = Command::new(BIN)
        .args(["kafka", "--bootstrap", b, "produce", topic])
        .args([
            "-X",
            &format!("transactional.id={topic}"),
            "-X",
            "linger.ms=1",
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run ringwire kafka produce");
    let mut stdin = producer.stdin.take().unwrap();
    stdin.write_all(b"one\ntwo\n").unwrap();
    let everything = ["consume", topic, "--from-beginning", "-e"];
    let committed = [&everything[..], &["-X", "isolation.level=read_committed"]].concat();
    // Delivered: a read_uncommitted consumer sees them while the transaction is open.
    let deadline = Instant::now() + Duration::from_secs(30);
    while kafka(b, &everything, b"").stdout != b"one\ntwo\n" {
        assert!(Instant::now() < deadline, "the records never came");
        std::thread::sleep(Duration::from_millis(100));
    }
    assert_eq!(kafka(b, &committed, b"").stdout, b"");
    stdin.write_all(b"three\n").unwrap();
    drop(stdin);
    ended_quietly(producer);
    let ours = kafka(b, &committed, b"");
    assert_eq!(ours.stdout, b"one\ntwo\nthree\n");
    let kcat_committed = ["-X", "isolation.level=read_committed"];
    let theirs = kcat(
        &[
            &["-C", "-b", b, "-t", topic, "-e", "-q"],
            &kcat_committed[..],
        ]
        .concat(),
    );
    assert_eq!(ours.stdout, theirs);
    let refused = kafka_fails(b, &["produce", topic, "-X", "retries=3"]);
    assert!(refused.contains("unknown property retries"), "{refused}");
}

/// `consume -f FORMAT` prints what kcat's `-f` prints for the same records (keys, headers
/// from kcat, one of them null, a null key and a null value), every token and
/// escape in one format; an unknown token is refused.
fn formats_records_as_kcat(b: &str, topic: &str) {
    kafka(b, &["topics", "create", topic, "--partitions", "2"], b"");
    let produce = |args: &[&str], stdin: &[u8]| {
        let mut child = Command::new("kcat")
            .args(["-P", "-b", b, "-t", topic])
            .args(args)
            .stdin(Stdio::piped())
            .spawn()
            .expect("kcat is installed");
        child.stdin.take().unwrap().write_all(stdin).unwrap();
        assert!(child.wait().unwrap().success());
    };
    // No empty value: kcat -Z prints one as NULL too, where ringwire tells them apart.
    produce(
        &["-p", "0", "-K:", "-H", "h1=a", "-H", "h2"],
        b"k1:one\nk2:two\n",
    );
    // A null value (kcat -P drops an empty line even with -Z), and no key.
    kafka(
        b,
        &["produce", topic, "--partition", "1", "-Z"],
        b"\nplain\n",
    );
    let format = "%t/%p@%o [%k|%K] [%s|%S] {%h} %T %R\\x41\\x7e\\t%%\\n";
    for null in [false, true] {
        let mut ours = vec!["consume", topic, "--from-beginning", "-e", "-f", format];
        let mut theirs = vec!["-C", "-b", b, "-t", topic, "-e", "-q", "-f", format];
        if null {
            ours.push("-Z");
            theirs.push("-Z");
        }
        let ours = sorted_lines(&kafka(b, &ours, b"").stdout);
        assert_eq!(ours.len(), 4, "{ours:?}");
        assert_eq!(ours, sorted_lines(&kcat(&theirs)), "-Z: {null}");
    }
    let refused = kafka_fails(b, &["consume", topic, "-e", "-f", "%s %Q"]);
    assert!(refused.contains("unsupported formatter %Q"), "{refused}");
}

/// `produce -K DELIM -H NAME=VALUE -H NAME` makes the records kcat -P makes of the same lines
/// with the same flags (a line without the delimiter a value without a key; a header without
/// `=` a null one), as kcat reads both back.
fn produces_keys_and_headers_as_kcat(b: &str, topic: &str) {
    kafka(b, &["topics", "create", topic, "--partitions", "2"], b"");
    let lines = b"k1:one\nnokey\nk3:x:y\n";
    let flags = ["-K", ":", "-H", "h1=a", "-H", "h2"];
    let ours = [&["produce", topic, "--partition", "0"][..], &flags[..]].concat();
    kafka(b, &ours, lines);
    let mut kcat_p = Command::new("kcat")
        .args(["-P", "-b", b, "-t", topic, "-p", "1"])
        .args(flags)
        .stdin(Stdio::piped())
        .spawn()
        .expect("kcat is installed");
    kcat_p.stdin.take().unwrap().write_all(lines).unwrap();
    assert!(kcat_p.wait().unwrap().success());
    let read = |partition: &str| {
        let args = ["-C", "-b", b, "-t", topic, "-p", partition, "-e", "-q"];
        String::from_utf8(kcat(&[&args[..], &["-f", "%k|%K|%s|%h\\n"]].concat())).unwrap()
    };
    let want = "k1|2|one|h1=a,h2=NULL\n|-1|nokey|h1=a,h2=NULL\nk3|2|x:y|h1=a,h2=NULL\n";
    assert_eq!(read("0"), want);
    assert_eq!(read("1"), want);
}

/// `topics list` shows a topic with its partitions until `topics delete` deletes it; a
/// second delete is one line with the broker's error.
fn topics_are_listed_and_deleted(b: &str, topic: &str) {
    kafka(b, &["topics", "create", topic, "--partitions", "3"], b"");
    topics_are_described_and_altered(b, topic);
    let listed = |args: &[&str]| {
        let out = kafka(b, args, b"");
        String::from_utf8(out.stdout).unwrap()
    };
    let line = format!("{topic}\t5\n");
    assert!(listed(&["topics", "list"]).contains(&line));
    assert!(!listed(&["topics", "list"]).contains("__consumer_offsets"));
    assert!(listed(&["topics", "list", "--internal"]).contains("__consumer_offsets\t"));
    kafka(b, &["topics", "delete", topic], b"");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while listed(&["topics", "list"]).contains(&line) {
        assert!(std::time::Instant::now() < deadline, "{topic} still listed");
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    let refused = kafka_fails(b, &["topics", "delete", topic]);
    assert!(
        refused.starts_with(&format!("ringwire: cannot delete {topic}:"))
            && refused.contains("UNKNOWN_TOPIC"),
        "{refused}"
    );
}

/// `topics describe`, `configs` and `alter` on a topic of 3 partitions: settings made and
/// deleted, partitions added; fewer partitions or an unknown setting refused in one line.
fn topics_are_described_and_altered(b: &str, topic: &str) {
    let text = |args: &[&str]| String::from_utf8(kafka(b, args, b"").stdout).unwrap();
    let described = |configs: &str, partitions: u32| {
        let mut want = format!(
            "TOPIC\tPARTITIONS\tREPLICATION\tCONFIGS\n{topic}\t{partitions}\t1\t{configs}\n\n\
             PARTITION\tLEADER\tREPLICAS\tISR\n"
        );
        let leader = text(&["topics", "describe", topic]);
        let leader = leader.lines().nth(4).and_then(|l| l.split('\t').nth(1));
        let leader = leader.expect("a partition line").to_owned();
        for p in 0..partitions {
            want.push_str(&format!("{p}\t{leader}\t{leader}\t{leader}\n"));
        }
        want
    };
    assert_eq!(text(&["topics", "describe", topic]), described("", 3));
    let alter = ["topics", "alter", topic, "--partitions", "5"];
    let settings = [
        "--config",
        "retention.ms=600000",
        "--config",
        "cleanup.policy=compact",
    ];
    kafka(b, &[&alter[..], &settings[..]].concat(), b"");
    assert_eq!(
        text(&["topics", "describe", topic]),
        described("cleanup.policy=compact,retention.ms=600000", 5)
    );
    let configs = text(&["topics", "configs", topic]);
    assert!(configs.starts_with("NAME\tVALUE\tSOURCE\n"), "{configs}");
    assert!(
        configs.contains("\nretention.ms\t600000\tDYNAMIC_TOPIC_CONFIG\n"),
        "{configs}"
    );
    assert!(configs.contains("\nsegment.bytes\t"), "{configs}");
    kafka(
        b,
        &["topics", "alter", topic, "--delete-config", "retention.ms"],
        b"",
    );
    assert_eq!(
        text(&["topics", "describe", topic]),
        described("cleanup.policy=compact", 5)
    );
    // A refused partition count changes no setting either.
    let fewer = [
        "topics",
        "alter",
        topic,
        "--partitions",
        "4",
        "--config",
        "retention.ms=1",
    ];
    let fewer = kafka_fails(b, &fewer);
    assert!(fewer.contains("INVALID_PARTITIONS"), "{fewer}");
    assert_eq!(
        text(&["topics", "describe", topic]),
        described("cleanup.policy=compact", 5)
    );
    let unknown = kafka_fails(b, &["topics", "alter", topic, "--config", "no.such=1"]);
    assert!(unknown.contains("INVALID_CONFIG"), "{unknown}");
    let missing = kafka_fails(b, &["topics", "describe", &format!("{topic}-none")]);
    assert!(missing.contains("UNKNOWN_TOPIC_OR_PARTITION"), "{missing}");
}

/// `--sasl USER:PASSWORD` (or the password from $RINGWIRE_KAFKA_PASSWORD) at the broker's
/// SASL listener, PLAIN and SCRAM; a wrong password is one line with the broker's error.
fn with_sasl(broker: &Broker, topic: &str) {
    let (sasl, user, password) = broker.sasl();
    let credentials = format!("{user}:{password}");
    let as_user = ["--sasl", credentials.as_str()];
    let run = |extra: &[&str], stdin: &[u8]| {
        let args: Vec<&str> = as_user.iter().chain(extra).copied().collect();
        kafka(&sasl, &args, stdin)
    };
    run(&["topics", "create", topic], b"");
    run(&["produce", topic], b"signed in\n");
    for mechanism in ["plain", "scram-sha-256", "scram-sha-512"] {
        let out = run(
            &[
                "--sasl-mechanism",
                mechanism,
                "consume",
                topic,
                "--from-beginning",
                "-e",
            ],
            b"",
        );
        assert_eq!(
            String::from_utf8_lossy(&out.stdout),
            "signed in\n",
            "{mechanism}"
        );
    }
    let out = Command::new(BIN)
        .args(["kafka", "--bootstrap", &sasl, "--sasl", &user])
        .args(["consume", topic, "--from-beginning", "-e"])
        .env("RINGWIRE_KAFKA_PASSWORD", &password)
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout), "signed in\n");
    let wrong = format!("{user}:wrong");
    let args = [
        "--sasl",
        &wrong,
        "--sasl-mechanism",
        "scram-sha-256",
        "consume",
        topic,
    ];
    let refused = kafka_fails(&sasl, &args);
    assert!(refused.contains("SASL_AUTHENTICATION_FAILED"), "{refused}");

    // OAUTHBEARER, the token read from a file at each connection: Kafka's unsecured
    // development tokens (no signature), one current and one expired.
    let file = std::env::temp_dir().join(format!("ringwire-oauth-{}", std::process::id()));
    let path = file.to_str().unwrap();
    std::fs::write(&file, format!("{}\n", unsecured_jwt(3600))).unwrap();
    let out = kafka(
        &sasl,
        &[
            "--oauth-token-file",
            path,
            "consume",
            topic,
            "--from-beginning",
            "-e",
        ],
        b"",
    );
    assert_eq!(String::from_utf8_lossy(&out.stdout), "signed in\n");
    std::fs::write(&file, unsecured_jwt(-600)).unwrap();
    let refused = kafka_fails(&sasl, &["--oauth-token-file", path, "consume", topic]);
    assert!(refused.contains("invalid_token"), "{refused}");
    std::fs::remove_file(&file).unwrap();
    let refused = kafka_fails(&sasl, &["--oauth-token-file", path, "consume", topic]);
    assert!(refused.contains("cannot read"), "{refused}");
}

/// An unsecured JWT (`"alg": "none"`) for the subject `ringwire`, expiring `lifetime`
/// seconds from now.
fn unsecured_jwt(lifetime: i64) -> String {
    use base64::engine::general_purpose::URL_SAFE_NO_PAD as B64;
    use base64::Engine as _;
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64;
    let claims = format!(r#"{{"sub":"ringwire","exp":{}}}"#, now + lifetime);
    format!(
        "{}.{}.",
        B64.encode(r#"{"alg":"none"}"#),
        B64.encode(claims)
    )
}

/// `--cacert` (or `--tls`, `-k`): every command over the broker's TLS listener; without the
/// CA, an untrusted certificate is one plain line.
fn over_tls(broker: &Broker, topic: &str) {
    let (tls, ca) = broker.tls();
    let secure = |args: &[&str]| {
        let mut all = vec!["--cacert", ca.as_str()];
        all.extend_from_slice(args);
        all.into_iter().map(str::to_owned).collect::<Vec<_>>()
    };
    let run = |args: Vec<String>, stdin: &[u8]| {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        kafka(&tls, &args, stdin)
    };
    run(
        secure(&["topics", "create", topic, "--partitions", "2"]),
        b"",
    );
    run(secure(&["produce", topic]), b"one\ntwo\nthree\n");
    let out = run(secure(&["consume", topic, "--from-beginning", "-e"]), b"");
    assert_eq!(sorted_lines(&out.stdout), ["one", "three", "two"]);
    // -k: no certificate check, the same records.
    let out = kafka(
        &tls,
        &["-k", "consume", topic, "--from-beginning", "-e"],
        b"",
    );
    assert_eq!(sorted_lines(&out.stdout), ["one", "three", "two"]);
    let refused = kafka_fails(&tls, &["--tls", "consume", topic]);
    assert!(
        refused.contains("TLS") && refused.contains(&tls),
        "{refused}"
    );
}

/// `--cert F --key F` at the broker's listener that requires a client certificate; without
/// them, one line that says what is missing.
fn with_a_client_certificate(broker: &Broker, topic: &str) {
    let [addr, ca, cert, key] = broker.mtls();
    let identity = ["--cacert", &ca, "--cert", &cert, "--key", &key];
    let run = |extra: &[&str], stdin: &[u8]| {
        let args: Vec<&str> = identity.iter().chain(extra).copied().collect();
        kafka(&addr, &args, stdin)
    };
    run(&["topics", "create", topic], b"");
    run(&["produce", topic], b"certified\n");
    let out = run(&["consume", topic, "--from-beginning", "-e"], b"");
    assert_eq!(String::from_utf8_lossy(&out.stdout), "certified\n");
    let refused = kafka_fails(&addr, &["--cacert", &ca, "consume", topic]);
    assert!(
        refused.contains("the server requires a client certificate") && refused.contains(&addr),
        "{refused}"
    );
}

/// `consume -G` whose reader stops reading (its stdout pipe full, the command blocked
/// writing): its heartbeat task still runs, so `-X max.poll.interval.ms` makes it leave
/// the group, and the next member joins at once instead of waiting for it (its session, set
/// with `-X session.timeout.ms`, being far from over). Bad `-X` input is one plain line.
fn a_member_whose_reader_stalls_leaves(b: &str, topic: &str) {
    kafka(b, &["topics", "create", topic, "--partitions", "2"], b"");
    // Far more than a pipe holds.
    let lines: String = (0..20_000).map(|i| format!("{i:0>99}\n")).collect();
    for partition in ["0", "1"] {
        kafka(
            b,
            &["produce", topic, "--partition", partition],
            lines.as_bytes(),
        );
    }
    let group = format!("{topic}-members");
    let member = |extra: &[&str]| {
        let mut args = vec!["kafka", "--bootstrap", b, "consume", topic, "-G", &group];
        args.extend_from_slice(&["--from-beginning", "-X", "session.timeout.ms=30000"]);
        args.extend_from_slice(extra);
        args.into_iter().map(str::to_owned).collect::<Vec<_>>()
    };
    let mut stalled = Command::new(BIN)
        .args(member(&["-X", "max.poll.interval.ms=1000"]))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run ringwire kafka consume");
    let mut stdout = BufReader::new(stalled.stdout.take().unwrap());
    let mut first = String::new();
    stdout.read_line(&mut first).unwrap();
    // Not read from now on: the member fills the pipe and blocks.
    std::thread::sleep(Duration::from_millis(2500));
    let started = Instant::now();
    let next = Command::new(BIN)
        .args(member(&["-e", "--count", "10"]))
        .output()
        .unwrap();
    assert!(
        next.status.success(),
        "{}",
        String::from_utf8_lossy(&next.stderr)
    );
    assert!(
        started.elapsed() < Duration::from_secs(15),
        "the next member waited {:?} for the stalled one",
        started.elapsed()
    );
    // Its reader gone, it ends at its next write, quietly.
    drop(stdout);
    ended_quietly(stalled);

    let bad = kafka_fails(
        b,
        &["consume", topic, "-G", &group, "-X", "session.timeout=1"],
    );
    assert!(bad.contains("unknown property session.timeout"), "{bad}");
    let bad = kafka_fails(b, &["consume", topic, "-X", "session.timeout.ms=1"]);
    assert!(bad.contains("give the group with -G"), "{bad}");
}

/// `consume -G -X group.protocol=consumer`: members on KIP-848's protocol, each run going on
/// where the last one's printed records end; a `^` topic is a pattern; an unknown protocol,
/// or a pattern on the classic one, is refused. A broker that does not run that protocol
/// (Kafka 3.9 unless told to) must say so, and the rest is skipped.
fn a_consumer_protocol_group_goes_on(b: &str, topic: &str) {
    kafka(b, &["topics", "create", topic, "--partitions", "2"], b"");
    let probe = format!("{topic}-probe");
    let args = [
        "consume",
        topic,
        "-G",
        &probe,
        "-e",
        "-X",
        "group.protocol=consumer",
    ];
    let probed = run_kafka(b, &args, b"");
    if !probed.status.success() {
        let said = String::from_utf8_lossy(&probed.stderr);
        assert!(
            said.contains("does not run the consumer group protocol"),
            "{said}"
        );
        eprintln!("skipped: the broker does not run the consumer group protocol");
        return;
    }
    for (partition, prefix) in [("0", "a"), ("1", "b")] {
        let lines: String = (0..6).map(|i| format!("{prefix}{i}\n")).collect();
        kafka(
            b,
            &["produce", topic, "--partition", partition],
            lines.as_bytes(),
        );
    }
    let group = format!("{topic}-readers");
    let consume = |extra: &[&str]| {
        let mut args = vec!["consume", topic, "-G", &group, "--from-beginning"];
        args.extend_from_slice(&["-X", "group.protocol=consumer"]);
        args.extend_from_slice(extra);
        sorted_lines(&kafka(b, &args, b"").stdout)
    };
    let first = consume(&["--count", "5"]);
    assert_eq!(first.len(), 5, "{first:?}");
    let rest = consume(&["-e"]);
    let mut all: Vec<String> = first.into_iter().chain(rest).collect();
    all.sort();
    let want: Vec<String> = ["a", "b"]
        .iter()
        .flat_map(|p| (0..6).map(move |i| format!("{p}{i}")))
        .collect();
    assert_eq!(all, want);
    let bad = kafka_fails(
        b,
        &["consume", topic, "-G", &group, "-X", "group.protocol=eager"],
    );
    assert!(bad.contains("group.protocol: classic or consumer"), "{bad}");

    // `^` makes the topic a pattern, which the coordinator resolves: both of these topics.
    let (first, second) = (format!("{topic}-p1"), format!("{topic}-p2"));
    for (name, value) in [(&first, "one\n"), (&second, "two\n")] {
        kafka(b, &["topics", "create", name], b"");
        kafka(b, &["produce", name], value.as_bytes());
    }
    let pattern = format!("^{topic}-p[0-9]");
    let args = [
        "consume",
        &pattern,
        "-G",
        &group,
        "--from-beginning",
        "--count",
        "2",
        "-X",
        "group.protocol=consumer",
    ];
    assert_eq!(sorted_lines(&kafka(b, &args, b"").stdout), ["one", "two"]);
    // To the end of both, for a group of its own (the coordinator resolves the pattern after
    // the join: no partition at first is not the end).
    let fresh = format!("{group}-fresh");
    let args = [
        "consume",
        &pattern,
        "-G",
        &fresh,
        "--from-beginning",
        "-e",
        "-X",
        "group.protocol=consumer",
    ];
    assert_eq!(sorted_lines(&kafka(b, &args, b"").stdout), ["one", "two"]);
    let bad = kafka_fails(b, &["consume", &pattern, "-G", &group]);
    assert!(bad.contains("a pattern is read by a group member"), "{bad}");
}

/// `consume -G`: each run starts where the last one's printed records end (not where its
/// last Fetch ended), and kcat's balanced consumer of the same group goes on from there.
fn a_group_goes_on_where_it_stopped(b: &str, topic: &str) {
    kafka(b, &["topics", "create", topic, "--partitions", "2"], b"");
    let lines =
        |prefix: &str, n: usize| -> String { (0..n).map(|i| format!("{prefix}{i}\n")).collect() };
    kafka(
        b,
        &["produce", topic, "--partition", "0"],
        lines("a", 10).as_bytes(),
    );
    kafka(
        b,
        &["produce", topic, "--partition", "1"],
        lines("b", 5).as_bytes(),
    );
    let group = format!("{topic}-readers");
    let consume = |extra: &[&str]| {
        let mut args = vec!["consume", topic, "-G", &group, "--from-beginning"];
        args.extend_from_slice(extra);
        sorted_lines(&kafka(b, &args, b"").stdout)
    };
    let first = consume(&["--count", "4"]);
    assert_eq!(first.len(), 4, "{first:?}");
    let rest = consume(&["-e"]);
    let mut all: Vec<String> = first.into_iter().chain(rest).collect();
    all.sort();
    let mut want = sorted_lines((lines("a", 10) + &lines("b", 5)).as_bytes());
    want.sort();
    assert_eq!(all, want);
    assert_eq!(consume(&["-e"]), [""]);

    kafka(
        b,
        &["produce", topic, "--partition", "1"],
        b"late one\nlate two\n",
    );
    // `lag` sees them: partition 1 is two records behind.
    let lag = kafka(b, &["lag", topic, "-G", &group], b"");
    assert_eq!(
        String::from_utf8_lossy(&lag.stdout),
        "PARTITION\tCOMMITTED\tEND\tLAG\n0\t10\t10\t0\n1\t5\t7\t2\n"
    );
    let theirs = kcat(&["-b", b, "-G", &group, "-e", "-q", "-f", "%s\n", topic]);
    assert_eq!(sorted_lines(&theirs), ["late one", "late two"]);
    // kcat committed as it left: nothing new for the next run.
    assert_eq!(consume(&["-e"]), [""]);
    interrupted_member_leaves(b, topic);
    // A group that never committed has no lag to tell.
    let lag = kafka(b, &["lag", topic, "-G", "nobody"], b"");
    let none_committed = "PARTITION\tCOMMITTED\tEND\tLAG\n0\t-\t10\t-\n1\t-\t7\t-\n";
    assert_eq!(String::from_utf8_lossy(&lag.stdout), none_committed);
    groups_listed_described_and_deleted(b, topic, &group, none_committed);
}

/// `groups`: the members gone, `group` is listed and described as empty, its offsets move;
/// deleting it takes its committed offsets with it (`lag` then prints `none_committed`).
fn groups_listed_described_and_deleted(b: &str, topic: &str, group: &str, none_committed: &str) {
    let listed = String::from_utf8(kafka(b, &["groups", "list"], b"").stdout).unwrap();
    assert!(
        listed.starts_with("GROUP\tTYPE\tPROTOCOL\tSTATE\n"),
        "{listed}"
    );
    let line = format!("{group}\tclassic\tconsumer\tEmpty");
    assert!(listed.lines().any(|l| l == line), "{listed}");
    let described = kafka(b, &["groups", "describe", group], b"");
    assert_eq!(
        String::from_utf8_lossy(&described.stdout),
        format!(
            "GROUP\tTYPE\tSTATE\tASSIGNOR\tMEMBERS\n{group}\tclassic\tEmpty\t-\t0\n\n\
             MEMBER\tINSTANCE\tCLIENT\tHOST\tTOPICS\tASSIGNMENT\tTARGET\n"
        )
    );
    // `reset` prints where the group would start, and moves it there with --execute.
    let reset = |args: &[&str]| {
        let mut all = vec!["groups", "reset", group, topic];
        all.extend_from_slice(args);
        String::from_utf8(kafka(b, &all, b"").stdout).unwrap()
    };
    let lag_now = || String::from_utf8(kafka(b, &["lag", topic, "-G", group], b"").stdout);
    let before = lag_now().unwrap();
    assert_eq!(
        reset(&["--to-earliest"]),
        "PARTITION\tNEW-OFFSET\n0\t0\n1\t0\n"
    );
    assert_eq!(lag_now().unwrap(), before);
    assert_eq!(
        reset(&["--to-offset", "4", "--execute"]),
        "PARTITION\tNEW-OFFSET\n0\t4\n1\t4\n"
    );
    assert_eq!(
        lag_now().unwrap(),
        "PARTITION\tCOMMITTED\tEND\tLAG\n0\t4\t10\t6\n1\t4\t7\t3\n"
    );
    // Shifted from the commits, within each partition's log.
    assert_eq!(
        reset(&["--shift-by", "5"]),
        "PARTITION\tNEW-OFFSET\n0\t9\n1\t7\n"
    );
    assert_eq!(
        reset(&["--shift-by", "-6"]),
        "PARTITION\tNEW-OFFSET\n0\t0\n1\t0\n"
    );
    assert_eq!(
        reset(&["--shift-by", "-1", "--execute"]),
        "PARTITION\tNEW-OFFSET\n0\t3\n1\t3\n"
    );
    assert_eq!(
        lag_now().unwrap(),
        "PARTITION\tCOMMITTED\tEND\tLAG\n0\t3\t10\t7\n1\t3\t7\t4\n"
    );
    kafka(b, &["groups", "delete", group], b"");
    let listed = String::from_utf8(kafka(b, &["groups", "list"], b"").stdout).unwrap();
    assert!(!listed.contains(group), "{listed}");
    let lag = kafka(b, &["lag", topic, "-G", group], b"");
    assert_eq!(String::from_utf8_lossy(&lag.stdout), none_committed);
    let gone = kafka_fails(b, &["groups", "describe", group]);
    assert!(gone.contains("GROUP_ID_NOT_FOUND"), "{gone}");
}

/// A `consume -G` stopped by Ctrl-C commits what it printed and leaves its group: the next
/// member joins at once (a member that did not leave would hold the join up for its 45 s
/// session) and finds nothing left to read.
fn interrupted_member_leaves(b: &str, topic: &str) {
    let group = format!("{topic}-interrupted");
    let mut child = Command::new(BIN)
        .args(["kafka", "--bootstrap", b, "consume", topic, "-G", &group])
        .args(["--from-beginning"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run ringwire kafka consume");
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    // Every record of both partitions (10 and 7), then Ctrl-C.
    for _ in 0..17 {
        let mut line = String::new();
        stdout.read_line(&mut line).unwrap();
    }
    let pid = child.id().to_string();
    assert!(Command::new("kill")
        .args(["-INT", &pid])
        .status()
        .unwrap()
        .success());
    ended_quietly(child);
    let started = Instant::now();
    let next = kafka(b, &["consume", topic, "-G", &group, "-e"], b"");
    assert!(
        next.stdout.is_empty(),
        "{}",
        String::from_utf8_lossy(&next.stdout)
    );
    assert!(
        started.elapsed() < Duration::from_secs(15),
        "{:?}",
        started.elapsed()
    );
}

/// `topics create --config`, `produce -Z` (an empty line is a null value) and `consume -Z`
/// (a null printed as NULL), checked against kcat -Z; and a refused record says why.
fn tombstones_on_a_compacted_topic(b: &str, topic: &str) {
    kafka(
        b,
        &[
            "topics",
            "create",
            topic,
            "--config",
            "cleanup.policy=compact",
        ],
        b"",
    );
    kafka(b, &["produce", topic, "--key", "k", "-Z"], b"v1\n\n");
    let nulls = kafka(
        b,
        &["consume", topic, "--from-beginning", "-e", "-Z", "-K", "|"],
        b"",
    );
    assert_eq!(String::from_utf8_lossy(&nulls.stdout), "k|v1\nk|NULL\n");
    let plain = kafka(b, &["consume", topic, "--from-beginning", "-e"], b"");
    assert_eq!(String::from_utf8_lossy(&plain.stdout), "v1\n\n");
    let theirs = kcat(&[
        "-C", "-b", b, "-t", topic, "-e", "-q", "-Z", "-f", "%k|%s\n",
    ]);
    assert_eq!(String::from_utf8_lossy(&theirs), "k|v1\nk|NULL\n");
    // The topic is compacted (the setting took): a record without a key is refused, in the
    // broker's words.
    let out = run_kafka(b, &["produce", topic], b"no key\n");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && stderr.contains("without key"),
        "{:?}: {stderr}",
        out.status
    );
}

/// `consume | head -1`: once the reader has gone, the next write ends the command, with
/// success and no message, as cat and kcat end.
fn ends_quietly_when_its_reader_leaves(b: &str, topic: &str) {
    kafka(b, &["topics", "create", topic], b"");
    kafka(b, &["produce", topic], b"first\n");
    let mut child = Command::new(BIN)
        .args([
            "kafka",
            "--bootstrap",
            b,
            "consume",
            topic,
            "--from-beginning",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run ringwire kafka consume");
    let mut first = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut first)
        .unwrap();
    assert_eq!(first, "first\n");
    // The pipe's read end is closed (dropped above): this record's write fails.
    kafka(b, &["produce", topic], b"second\n");
    let deadline = Instant::now() + Duration::from_secs(30);
    while child.try_wait().unwrap().is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("consume kept running with no reader");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    ended_quietly(child);
}

/// The three commands, each of which connects first.
const EVERY_COMMAND: [&[&str]; 3] = [
    &["topics", "create", "t"],
    &["produce", "t"],
    &["consume", "t"],
];

#[test]
fn an_http_server_is_not_taken_for_a_broker() {
    // Answers whatever it reads as an HTTP server would, for as many connections as come.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    std::thread::spawn(move || {
        for mut socket in listener.incoming().flatten() {
            let _ = std::io::Read::read(&mut socket, &mut [0; 512]);
            let _ = socket.write_all(b"HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\n\r\n");
        }
    });
    for args in EVERY_COMMAND {
        assert_eq!(
            kafka_fails(&addr, args),
            format!(
                "ringwire: {addr} does not answer as a Kafka broker \
                 (its first bytes look like \"HTTP/1.1 400 Bad\")\n"
            ),
            "{args:?}"
        );
    }
}

#[test]
fn a_refused_connection_is_one_plain_line() {
    let addr = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().to_string()
    };
    for args in EVERY_COMMAND {
        assert_eq!(
            kafka_fails(&addr, args),
            format!("ringwire: cannot connect to {addr}: transport I/O: Connection refused\n"),
            "{args:?}"
        );
    }
}

/// `consume` goes on through a broker restart (a broker of its own, restarted on the same
/// storage and port): it says it is trying again, and prints the record produced after.
#[test]
fn consume_rides_out_a_broker_restart() {
    let run = std::env::temp_dir().join(format!("ringwire-cli-restart-{}", std::process::id()));
    let out = broker_sh("start", &run);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // Stopped when dropped, however the test ends.
    let broker = Broker {
        bootstrap: String::from_utf8(out.stdout).unwrap().trim().to_owned(),
        started: Some(run.clone()),
    };
    let b = broker.bootstrap.as_str();
    kafka(b, &["topics", "create", "restarted"], b"");
    kafka(b, &["produce", "restarted"], b"before\n");
    let mut consumer = Command::new(BIN)
        .args(["kafka", "--bootstrap", b, "consume", "restarted"])
        .args(["--from-beginning", "--count", "2"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(consumer.stdout.take().unwrap()).lines();
    assert_eq!(lines.next().unwrap().unwrap(), "before");
    let out = broker_sh("restart", &run);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    kafka(b, &["produce", "restarted"], b"after\n");
    let deadline = Instant::now() + Duration::from_secs(60);
    while consumer.try_wait().unwrap().is_none() {
        if Instant::now() > deadline {
            let _ = consumer.kill();
            panic!("consume did not end");
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    assert_eq!(lines.next().unwrap().unwrap(), "after");
    let out = consumer.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("; trying again"), "{stderr}");
}
