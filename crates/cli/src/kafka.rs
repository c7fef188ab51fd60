//! `ringwire kafka`: produce stdin lines to a topic, print a topic's
//! records, create topics; against a real broker with ringwire-kafka-client's
//! pipelined producer and consumer.

use std::collections::HashMap;
use std::io::{self, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::{Args, Subcommand, ValueEnum};
use ringwire_kafka::api::produce::Acks;
use ringwire_kafka::record::{Compression, Header};
use ringwire_kafka_client::{
    ClientConfig, ClientError, Connection, Consumer, ConsumerConfig, GroupProtocol, Isolation,
    Producer, ProducerConfig, ProducerRecord, Reset, Sasl, Start, TokenSource,
};
use tokio::io::AsyncReadExt as _;

use crate::request::{line, TlsArgs};
use format::Format;

mod format;
mod groups;
mod topics;

#[derive(Debug, Args)]
pub(crate) struct KafkaArgs {
    /// A broker to start from.
    #[arg(long, value_name = "HOST:PORT", default_value = "127.0.0.1:9092")]
    bootstrap: String,
    /// Reach the brokers over TLS (Kafka's security.protocol=SSL; implied by --cacert and
    /// -k), their certificates checked against the system's roots and --cacert.
    #[arg(long)]
    tls: bool,
    #[command(flatten)]
    tls_args: TlsArgs,
    /// Authenticate with SASL as USER (PLAIN over TLS unless the network is trusted); the
    /// password after a colon, else from $RINGWIRE_KAFKA_PASSWORD (kept out of the process
    /// list).
    #[arg(long, value_name = "USER[:PASSWORD]")]
    sasl: Option<String>,
    /// The SASL mechanism.
    #[arg(long, value_enum, default_value_t = Mechanism::Plain, requires = "sasl")]
    sasl_mechanism: Mechanism,
    /// Authenticate with SASL OAUTHBEARER, the bearer token (a JWT) read from FILE at each
    /// connection, so that whatever renews the token can replace the file.
    #[arg(long, value_name = "FILE", conflicts_with = "sasl")]
    oauth_token_file: Option<PathBuf>,
    #[command(subcommand)]
    command: KafkaCommand,
}

#[derive(Debug, Subcommand)]
enum KafkaCommand {
    /// One record per stdin line: its bytes but the `\n` that ends it (a `\r` before it
    /// stays, as with kcat -P).
    Produce {
        topic: String,
        /// The records' key (without --partition, it picks the partition
        /// as Java's producer does: murmur2 of the key).
        #[arg(long)]
        key: Option<String>,
        /// Split each line at the first DELIM into its key and its value, as kcat -K: (a
        /// line without one is a value with no key).
        #[arg(short = 'K', long, value_name = "DELIM", conflicts_with = "key")]
        key_delimiter: Option<String>,
        /// A header on every record, as kcat -H (repeatable): `NAME=VALUE`, or `NAME` for a
        /// null value.
        #[arg(short = 'H', long = "header", value_name = "NAME=VALUE")]
        headers: Vec<String>,
        /// The partition [default: from the key, else 0].
        #[arg(long)]
        partition: Option<i32>,
        /// Batch compression.
        #[arg(long, value_enum, default_value_t = Codec::None)]
        compression: Codec,
        /// Send an empty line as a null value (a tombstone, which deletes its key from a
        /// compacted topic), as kcat -Z does.
        #[arg(short = 'Z', long)]
        null: bool,
        /// A producer setting, by its Kafka name, as kcat -X takes it (repeatable):
        /// `transactional.id` (every line in one transaction, committed at the end of
        /// stdin, aborted on an error: `read_committed` consumers see all of them or none),
        /// `transaction.timeout.ms`, `acks` (`all`, `1`, `0`), `enable.idempotence`,
        /// `linger.ms`, `batch.size`.
        #[arg(short = 'X', long = "property", value_name = "NAME=VALUE", value_parser = topic_config)]
        properties: Vec<(String, String)>,
    },
    /// Print records, one per line: the value (a null one as nothing, or NULL with -Z),
    /// after the key with -K.
    Consume {
        /// The topic; with -G and `-X group.protocol=consumer`, `^REGEX` reads every topic
        /// the pattern matches, later ones included (as kcat's `^` topics).
        topic: String,
        /// Start at the oldest record instead of the newest (with --group, where the group
        /// committed nothing).
        #[arg(long)]
        from_beginning: bool,
        /// Start at the first record stamped at or after this time, in milliseconds since
        /// the Unix epoch (`date +%s%3N`), as kcat's `-o s@MS`; at the end where none is.
        #[arg(long, value_name = "MS", conflicts_with_all = ["from_beginning", "group"])]
        from_time: Option<i64>,
        /// Start at this offset, or with -N that many before the end of each partition
        /// read (kcat's `-o N` and `-o -N`: `-o -10` the last ten).
        #[arg(
            short = 'o',
            long,
            value_name = "OFFSET",
            allow_negative_numbers = true,
            conflicts_with_all = ["from_beginning", "from_time", "group"]
        )]
        offset: Option<i64>,
        /// Read only this partition (kcat -p).
        #[arg(short = 'p', long, value_name = "P", conflicts_with = "group")]
        partition: Option<i32>,
        /// Consume as a member of this consumer group, as kcat -G does: the group's members
        /// share the partitions, each read from where the group committed; what is printed
        /// is committed as it goes.
        #[arg(short = 'G', long, value_name = "GROUP")]
        group: Option<String>,
        /// A consumer setting, by its Kafka name, as kcat -X takes it (repeatable):
        /// `isolation.level` (`read_committed`: records of transactions committed only;
        /// `read_uncommitted`, the default: every record) and, for a group member,
        /// `group.instance.id` (a static member, which keeps its partitions across a restart
        /// within its session and so does not leave the group on exit),
        /// `group.protocol` (`consumer`: KIP-848's, on Kafka 4.0+, where the coordinator
        /// assigns and moves only the partitions that must move; `classic`, the default),
        /// `group.remote.assignor` (the consumer protocol's `uniform` or `range`),
        /// `session.timeout.ms`, `heartbeat.interval.ms`, `max.poll.interval.ms`.
        #[arg(short = 'X', long = "property", value_name = "NAME=VALUE", value_parser = topic_config)]
        properties: Vec<(String, String)>,
        /// Exit after this many records.
        #[arg(long, value_name = "N")]
        count: Option<usize>,
        /// Exit at the end of every partition (where its log ended when first fetched), as
        /// kcat -e does; with --count, at whichever comes first.
        #[arg(short = 'e', long)]
        exit_at_end: bool,
        /// Print each record's key (a null one as nothing), then DELIM, then its value (as
        /// kcat -K); `-K $'\t'` puts a tab between them.
        #[arg(short = 'K', long, value_name = "DELIM", conflicts_with = "format")]
        key_delimiter: Option<String>,
        /// Print each record as kcat's -f FORMAT does: `%s` value, `%S` its length (-1 for
        /// null), `%R` that length as a big-endian 32-bit integer, `%k` key, `%K` its
        /// length, `%T` timestamp (ms), `%h` headers (`n=v,...`), `%t` topic, `%p`
        /// partition, `%o` offset, `%%`; `\n`, `\r`, `\t` and `\xHH` escapes. Nothing ends
        /// a record but what FORMAT writes: `-f '%o %s\n'`.
        #[arg(short = 'f', long, value_name = "FORMAT")]
        format: Option<String>,
        /// Print a null key or value as NULL, not as nothing (as kcat -Z), so that it
        /// differs from an empty one.
        #[arg(short = 'Z', long)]
        null: bool,
    },
    /// How far a consumer group is behind on each partition of a topic: its committed
    /// offset, the log's end, and the records between (`-` where it committed nothing).
    Lag {
        topic: String,
        #[arg(short = 'G', long, value_name = "GROUP")]
        group: String,
    },
    /// List, describe and delete consumer groups.
    Groups {
        #[command(subcommand)]
        command: groups::GroupsCommand,
    },
    /// Manage topics.
    Topics {
        #[command(subcommand)]
        command: topics::TopicsCommand,
    },
}

/// A SASL mechanism, as Kafka names them (`--sasl-mechanism scram-sha-512`).
#[derive(Debug, Clone, Copy, ValueEnum)]
enum Mechanism {
    Plain,
    #[value(name = "scram-sha-256")]
    ScramSha256,
    #[value(name = "scram-sha-512")]
    ScramSha512,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum Codec {
    None,
    Gzip,
    Snappy,
    Lz4,
    Zstd,
}

pub(crate) fn run(args: &KafkaArgs) -> ExitCode {
    // The command runs on this thread, which blocks on stdin and stdout; the clients'
    // tasks (a group member's heartbeats, the producer's senders) on a worker, so that a
    // slow reader of stdout does not hold up the heartbeats and cost the member its group.
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build();
    let done = match runtime {
        Ok(runtime) => runtime.block_on(command(args)),
        Err(e) => Err(format!("cannot start the runtime: {e}")),
    };
    match done {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("ringwire: {message}");
            ExitCode::FAILURE
        }
    }
}

async fn command(args: &KafkaArgs) -> Result<(), String> {
    let bootstrap = args.bootstrap.as_str();
    let mut client = if args.tls || args.tls_args.given() {
        ClientConfig::default()
            .with_tls(&args.tls_args.config()?)
            .map_err(line)?
    } else {
        ClientConfig::default()
    };
    client.sasl = args
        .sasl
        .as_deref()
        .map(|arg| sasl(arg, args.sasl_mechanism))
        .transpose()?;
    if let Some(file) = args.oauth_token_file.clone() {
        let token = TokenSource::new(move || {
            std::fs::read_to_string(&file)
                .map(|token| token.trim().to_owned())
                .map_err(|e| format!("cannot read {}: {}", file.display(), line(e)))
        });
        client.sasl = Some(Sasl::OAuthBearer {
            token,
            extensions: Vec::new(),
        });
    }
    let client = &client;
    match &args.command {
        KafkaCommand::Topics { command } => topics::run(bootstrap, client, command).await,
        KafkaCommand::Produce {
            topic,
            key,
            key_delimiter,
            headers,
            partition,
            compression,
            null,
            properties,
        } => {
            let headers: Vec<Header<'_>> = headers
                .iter()
                .map(|header| match header.split_once('=') {
                    Some((key, value)) => Header {
                        key,
                        value: Some(value.as_bytes()),
                    },
                    None => Header {
                        key: header,
                        value: None,
                    },
                })
                .collect();
            if key_delimiter.as_deref() == Some("") {
                return Err("-K: an empty delimiter splits nothing".into());
            }
            let records = Records {
                key: key.as_deref(),
                key_delimiter: key_delimiter.as_deref().map(str::as_bytes),
                headers: &headers,
                partition: *partition,
                empty_is_null: *null,
            };
            let config = producer_config(client, *compression, properties)?;
            produce(bootstrap, config, topic, records).await
        }
        KafkaCommand::Groups { command } => groups::run(bootstrap, client, command).await,
        KafkaCommand::Lag { topic, group } => {
            let lags = lag(bootstrap, client, topic, group).await?;
            let mut out = String::from("PARTITION\tCOMMITTED\tEND\tLAG\n");
            for (partition, committed, end) in lags {
                let (committed, behind) = match committed {
                    Some(c) => (c.to_string(), (end - c).max(0).to_string()),
                    None => ("-".to_owned(), "-".to_owned()),
                };
                out.push_str(&format!("{partition}\t{committed}\t{end}\t{behind}\n"));
            }
            io::stdout()
                .write_all(out.as_bytes())
                .map_err(|e| format!("cannot write: {}", line(e)))
        }
        KafkaCommand::Consume {
            topic,
            from_beginning,
            from_time,
            offset,
            partition,
            group,
            properties,
            count,
            exit_at_end,
            key_delimiter,
            format,
            null,
        } => {
            let config = member_config(client, group.as_deref(), properties)?;
            let format = match format {
                Some(format) => Format::parse(format, *null)?,
                None => Format::lines(key_delimiter.as_deref(), *null),
            };
            let from = match (offset, from_time, from_beginning) {
                (Some(n @ 0..), ..) => Start::At(*n),
                (Some(n), ..) => Start::BeforeEnd(n.unsigned_abs()),
                (None, Some(ms), _) => Start::Time(*ms),
                (None, None, true) => Start::Earliest,
                (None, None, false) => Start::Latest,
            };
            let until = Until {
                count: *count,
                at_end: *exit_at_end,
            };
            let read = Read {
                topic,
                partition: *partition,
                from,
            };
            consume(bootstrap, read, config, until, &format).await
        }
    }
}

/// What `produce` makes of each stdin line besides its value.
struct Records<'a> {
    key: Option<&'a str>,
    /// Splits a line into its key and its value.
    key_delimiter: Option<&'a [u8]>,
    headers: &'a [Header<'a>],
    partition: Option<i32>,
    /// An empty line is a null value.
    empty_is_null: bool,
}

/// The producer's settings: `codec`, then each of `properties` by its Kafka name.
fn producer_config(
    client: &ClientConfig,
    codec: Codec,
    properties: &[(String, String)],
) -> Result<ProducerConfig, String> {
    let mut config = ProducerConfig {
        compression: match codec {
            Codec::None => Compression::None,
            Codec::Gzip => Compression::Gzip,
            Codec::Snappy => Compression::Snappy,
            Codec::Lz4 => Compression::Lz4,
            Codec::Zstd => Compression::Zstd,
        },
        client: client.clone(),
        ..ProducerConfig::default()
    };
    for (name, value) in properties {
        let number = || {
            value
                .parse::<u64>()
                .map_err(|_| format!("{name}: expected a number, got {value:?}"))
        };
        match name.as_str() {
            "transactional.id" => config.transactional_id = Some(value.clone()),
            "transaction.timeout.ms" => {
                config.transaction_timeout = Duration::from_millis(number()?);
            }
            "linger.ms" => config.linger = Duration::from_millis(number()?),
            "batch.size" => config.batch_size = number()? as usize,
            "acks" => {
                config.acks = match value.as_str() {
                    "all" | "-1" => Acks::All,
                    "1" => Acks::Leader,
                    "0" => Acks::None,
                    _ => return Err(format!("acks: all, 1 or 0, got {value:?}")),
                }
            }
            "enable.idempotence" => {
                config.idempotence = match value.as_str() {
                    "true" => true,
                    "false" => false,
                    _ => return Err(format!("enable.idempotence: true or false, got {value:?}")),
                }
            }
            _ => {
                return Err(format!(
                    "unknown property {name} (known: transactional.id, transaction.timeout.ms, \
                     acks, enable.idempotence, linger.ms, batch.size)"
                ))
            }
        }
    }
    Ok(config)
}

/// Sends stdin's lines to `topic`, in one transaction if `config` has a transactional id.
async fn produce(
    bootstrap: &str,
    config: ProducerConfig,
    topic: &str,
    records: Records<'_>,
) -> Result<(), String> {
    let transactional = config.transactional_id.is_some();
    let producer = Producer::connect(bootstrap, config)
        .await
        .map_err(|e| not_connected(bootstrap, &e))?;
    let failed = |e: ClientError| format!("produce to {topic}: {}", line(e));
    if transactional {
        producer.begin_transaction().map_err(failed)?;
    }
    let sent = send_lines(&producer, topic, records).await;
    match (sent, transactional) {
        (Ok(()), true) => producer.commit_transaction().await.map_err(failed),
        (Ok(()), false) => Ok(()),
        (Err(e), true) => {
            // Nothing of it becomes visible to `read_committed` consumers.
            if let Err(abort) = producer.abort_transaction().await {
                return Err(format!("{e}; aborting the transaction: {}", line(abort)));
            }
            Err(format!("{e} (transaction aborted)"))
        }
        (Err(e), false) => Err(e),
    }
}

/// Sends stdin's lines to `topic`, each a record, until stdin ends and every one is
/// delivered.
async fn send_lines(producer: &Producer, topic: &str, records: Records<'_>) -> Result<(), String> {
    // The lines of each read go to `send_all` together, borrowed from the
    // read buffer; a line cut by the end of a read waits for the next one.
    let mut stdin = tokio::io::stdin();
    let mut pending = Vec::with_capacity(STDIN_READ);
    loop {
        let start = pending.len();
        pending.resize(start + STDIN_READ, 0);
        let n = stdin
            .read(&mut pending[start..])
            .await
            .map_err(|e| format!("reading stdin: {}", line(e)))?;
        pending.truncate(start + n);
        let complete = match pending.iter().rposition(|&b| b == b'\n') {
            _ if n == 0 => pending.len(),
            Some(last) => last + 1,
            None => continue,
        };
        if complete > 0 {
            let text = &pending[..complete];
            let lines = text
                .strip_suffix(b"\n")
                .unwrap_or(text)
                .split(|&b| b == b'\n');
            let batch = lines.map(|line| {
                let (key, value) = match records.key_delimiter {
                    Some(delimiter) => match memchr::memmem::find(line, delimiter) {
                        Some(at) => (Some(&line[..at]), &line[at + delimiter.len()..]),
                        None => (None, line),
                    },
                    None => (records.key.map(str::as_bytes), line),
                };
                let mut record = ProducerRecord::new(topic, value).headers(records.headers);
                if records.empty_is_null && value.is_empty() {
                    record.value = None;
                }
                if let Some(key) = key {
                    record = record.key(key);
                }
                if let Some(partition) = records.partition {
                    record = record.partition(partition);
                }
                record
            });
            // Delivery failures surface in the `flush` below.
            let _ = producer
                .send_all(batch)
                .await
                .map_err(|e| format!("produce to {topic}: {}", line(e)))?;
            pending.drain(..complete);
        }
        if n == 0 {
            break;
        }
    }
    producer
        .flush()
        .await
        .map_err(|e| format!("produce to {topic}: {}", line(e)))
}

/// Bytes read from stdin at a time by `produce`.
const STDIN_READ: usize = 256 << 10;

/// Each partition of `topic`: its number, `group`'s committed offset, and the log's end (the
/// next offset to be written).
async fn lag(
    bootstrap: &str,
    client: &ClientConfig,
    topic: &str,
    group: &str,
) -> Result<Vec<(i32, Option<i64>, i64)>, String> {
    let config = ConsumerConfig {
        client: client.clone(),
        group: Some(group.to_owned()),
        ..ConsumerConfig::default()
    };
    let mut consumer = Consumer::connect(bootstrap, config)
        .await
        .map_err(|e| not_connected(bootstrap, &e))?;
    let failed = |e: ClientError| format!("topic {topic}: {}", line(e));
    // Assigned at the end of each partition: its position is the log's end.
    let partitions = consumer
        .assign(topic, Start::Latest)
        .await
        .map_err(failed)?;
    let mut lags = Vec::with_capacity(partitions);
    for partition in (0..).take(partitions) {
        let committed = consumer.committed(topic, partition).await.map_err(failed)?;
        let end = consumer.position(topic, partition).unwrap_or(0);
        lags.push((partition, committed, end));
    }
    Ok(lags)
}

/// When `consume` stops: after `count` records, or with `at_end` at the end of every
/// partition, whichever comes first (neither: never).
#[derive(Clone, Copy)]
struct Until {
    count: Option<usize>,
    at_end: bool,
}

/// A consumer's settings: connections as `client` says, of a member of `group` (if any),
/// with `properties` (Kafka's names for them, as `-X` gives them).
fn member_config(
    client: &ClientConfig,
    group: Option<&str>,
    properties: &[(String, String)],
) -> Result<ConsumerConfig, String> {
    let mut config = ConsumerConfig {
        client: client.clone(),
        group: group.map(str::to_owned),
        ..ConsumerConfig::default()
    };
    let member_only = properties
        .iter()
        .find(|(name, _)| name != "isolation.level");
    if let (None, Some((name, _))) = (group, member_only) {
        return Err(format!(
            "-X {name} is a group member's property: give the group with -G"
        ));
    }
    for (name, value) in properties {
        let millis = || {
            value
                .parse()
                .map(Duration::from_millis)
                .map_err(|_| format!("{name}: expected milliseconds, got {value:?}"))
        };
        match name.as_str() {
            "group.instance.id" => config.group_instance_id = Some(value.clone()),
            "session.timeout.ms" => config.session_timeout = millis()?,
            "heartbeat.interval.ms" => config.heartbeat_interval = millis()?,
            "max.poll.interval.ms" => config.max_poll_interval = millis()?,
            "group.protocol" => {
                config.group_protocol = choice(
                    name,
                    value,
                    &[
                        ("classic", GroupProtocol::Classic),
                        ("consumer", GroupProtocol::Consumer),
                    ],
                )?;
            }
            "group.remote.assignor" => config.group_remote_assignor = Some(value.clone()),
            "isolation.level" => {
                config.isolation = choice(
                    name,
                    value,
                    &[
                        ("read_committed", Isolation::ReadCommitted),
                        ("read_uncommitted", Isolation::ReadUncommitted),
                    ],
                )?;
            }
            _ => {
                return Err(format!(
                    "unknown property {name} (known: isolation.level, group.instance.id, \
                     group.protocol, group.remote.assignor, session.timeout.ms, \
                     heartbeat.interval.ms, max.poll.interval.ms)"
                ))
            }
        }
    }
    Ok(config)
}

/// Prints `topic`'s records until `until` says. As a member of `config`'s group if it has
/// one: its share of the partitions, each from where the group committed (else from the
/// end `from` names), committing the offset past each record printed after every answer
/// and before it stops, then leaving the group unless it is a static member; without, every
/// partition from `from`.
/// What `consume` reads, from where.
struct Read<'a> {
    topic: &'a str,
    /// One partition, else all.
    partition: Option<i32>,
    from: Start,
}

async fn consume(
    bootstrap: &str,
    read: Read<'_>,
    config: ConsumerConfig,
    until: Until,
    format: &Format,
) -> Result<(), String> {
    let Read {
        topic,
        partition,
        from,
    } = read;
    let group = config.group.clone();
    let comes_back = config.group_instance_id.is_some();
    // A topic starting with `^` is a pattern, as kcat reads one; the coordinator resolves it.
    let pattern = topic.starts_with('^');
    if pattern && (group.is_none() || config.group_protocol != GroupProtocol::Consumer) {
        return Err(format!(
            "topic {topic}: a pattern is read by a group member on the consumer protocol \
             (-G GROUP -X group.protocol=consumer)"
        ));
    }
    let mut consumer = Consumer::connect(bootstrap, config)
        .await
        .map_err(|e| not_connected(bootstrap, &e))?;
    // A group member starts where its group committed, else at the end `from` names.
    let reset = match from {
        Start::Earliest => Reset::Earliest,
        _ => Reset::Latest,
    };
    let joined = match &group {
        Some(_) if pattern => consumer.subscribe_pattern(topic, reset).await,
        Some(_) => consumer.subscribe(&[topic], reset).await,
        None => match partition {
            Some(partition) => consumer.assign_partition(topic, partition, from).await,
            None => consumer.assign(topic, from).await.map(drop),
        },
    };
    joined.map_err(|e| format!("topic {topic}: {}", line(e)))?;
    let mut left = until.count.unwrap_or(usize::MAX);
    let mut ends = HashMap::new();
    // Per topic and partition, the offset after the last record printed and not yet
    // committed.
    let mut printed: Offsets = HashMap::new();
    let mut out = std::io::stdout().lock();
    // A member stopped by Ctrl-C or SIGTERM commits and leaves, so the group shares its
    // partitions at once rather than when its session runs out.
    let stop = crate::signal::stop_requested();
    let mut backoff = RETRY_FIRST;
    let run = async {
        loop {
            if left == 0 {
                break Ok(());
            }
            let mut failed = None;
            let polled = consumer
                .poll(|topic, partition, record| {
                    if left == 0 || failed.is_some() {
                        return;
                    }
                    if let Err(e) = format.print(&mut out, topic, partition, &record) {
                        failed = Some(e);
                        return;
                    }
                    note(&mut printed, topic, partition, record.offset + 1);
                    left -= 1;
                })
                .await;
            match polled {
                Ok(_) => backoff = RETRY_FIRST,
                // A broker restarting or moving: said, waited out, and tried again, as kcat
                // rides it out.
                Err(e) if e.is_transient() && left > 0 => {
                    eprintln!("ringwire: fetch from {topic}: {}; trying again", line(e));
                    tokio::time::sleep(backoff).await;
                    backoff = (backoff * 2).min(RETRY_MAX);
                    continue;
                }
                Err(e) => break Err(format!("fetch from {topic}: {}", line(e))),
            }
            match failed.map_or_else(|| out.flush(), Err) {
                Ok(()) => {}
                // The reader left (`| head`): the end, quietly, as for cat and kcat.
                Err(e) if e.kind() == io::ErrorKind::BrokenPipe => break Ok(()),
                Err(e) => break Err(format!("cannot write: {}", line(e))),
            }
            if group.is_some() {
                commit(&mut consumer, &mut printed).await?;
            }
            if until.at_end && at_end(&consumer, &mut ends) {
                break Ok(());
            }
        }
    };
    let outcome = tokio::select! {
        outcome = run => outcome,
        () = stop => Ok(()),
    };
    if group.is_some() {
        commit(&mut consumer, &mut printed).await?;
        // A static member is coming back, its partitions kept for it until its session ends.
        if !comes_back {
            consumer
                .leave()
                .await
                .map_err(|e| format!("leave the group: {}", line(e)))?;
        }
    }
    outcome
}

/// The first wait before polling again after a transient failure, and the longest.
const RETRY_FIRST: Duration = Duration::from_millis(250);
const RETRY_MAX: Duration = Duration::from_secs(4);

/// Commits the offsets in `printed` to the consumer's group, and forgets them. Those of
/// partitions the group moved to another member are that member's to commit: dropped.
/// A commit the group refuses because it is rebalancing is left for the next call (after
/// the next poll joined again), as is one that could not reach the coordinator.
async fn commit(consumer: &mut Consumer, printed: &mut Offsets) -> Result<(), String> {
    let mine = consumer.assignment();
    for (topic, partitions) in printed.iter_mut() {
        partitions.retain(|p, _| mine.iter().any(|(t, m)| t == topic && m == p));
    }
    printed.retain(|_, partitions| !partitions.is_empty());
    if printed.is_empty() {
        return Ok(());
    }
    let offsets: Vec<(&str, i32, i64)> = printed
        .iter()
        .flat_map(|(topic, partitions)| partitions.iter().map(|(&p, &o)| (topic.as_str(), p, o)))
        .collect();
    match consumer.commit_offsets(&offsets).await {
        Ok(()) => {
            printed.clear();
            Ok(())
        }
        Err(e) if e.is_rebalance() => Ok(()),
        // Kept for the next call, once the coordinator can be reached again.
        Err(e) if e.is_transient() => {
            eprintln!("ringwire: commit to the group: {}; trying again", line(e));
            Ok(())
        }
        Err(e) => Err(format!("commit to the group: {}", line(e))),
    }
}

/// Offsets by topic and partition.
type Offsets = HashMap<String, HashMap<i32, i64>>;

/// Notes `offset` for `topic`'s `partition` (the topic's name copied once).
fn note(offsets: &mut Offsets, topic: &str, partition: i32, offset: i64) {
    match offsets.get_mut(topic) {
        Some(partitions) => partitions.insert(partition, offset),
        None => offsets
            .entry(topic.to_owned())
            .or_default()
            .insert(partition, offset),
    };
}

/// Whether every partition the consumer reads has reached its entry in `ends`: its end as
/// the first Fetch answer for it found it, noted here as answers come (later records do not
/// count). A group member with no partitions yet (a pattern not yet resolved, more members
/// than partitions) is not at the end of anything.
fn at_end(consumer: &Consumer, ends: &mut Offsets) -> bool {
    let assigned = consumer.assignment();
    !assigned.is_empty() && assigned.iter().all(|(topic, partition)| {
        let end = match ends.get(topic).and_then(|p| p.get(partition)) {
            Some(&end) => Some(end),
            None => consumer
                .end_offset(topic, *partition)
                .inspect(|&end| note(ends, topic, *partition, end)),
        };
        matches!((end, consumer.position(topic, *partition)), (Some(end), Some(at)) if at >= end)
    })
}

/// The setting `value` of property `name` names among `choices`; else an error listing them.
fn choice<T: Copy>(name: &str, value: &str, choices: &[(&str, T)]) -> Result<T, String> {
    choices
        .iter()
        .find_map(|&(word, setting)| (word == value).then_some(setting))
        .ok_or_else(|| {
            let words: Vec<&str> = choices.iter().map(|(word, _)| *word).collect();
            format!("{name}: {}, got {value:?}", words.join(" or "))
        })
}

/// `NAME=VALUE`, split at the first `=`.
fn topic_config(arg: &str) -> Result<(String, String), String> {
    match arg.split_once('=') {
        Some((name, value)) if !name.is_empty() => Ok((name.to_owned(), value.to_owned())),
        _ => Err(format!("expected NAME=VALUE, got {arg:?}")),
    }
}

/// SASL credentials for `mechanism` from `USER:PASSWORD`, or `USER` and
/// $RINGWIRE_KAFKA_PASSWORD.
fn sasl(arg: &str, mechanism: Mechanism) -> Result<Sasl, String> {
    let (username, password) = match arg.split_once(':') {
        Some((user, password)) => (user.to_owned(), password.to_owned()),
        None => match std::env::var("RINGWIRE_KAFKA_PASSWORD") {
            Ok(password) => (arg.to_owned(), password),
            Err(_) => {
                return Err(format!(
                    "--sasl {arg}: no password (USER:PASSWORD, or $RINGWIRE_KAFKA_PASSWORD)"
                ))
            }
        },
    };
    Ok(match mechanism {
        Mechanism::Plain => Sasl::Plain { username, password },
        Mechanism::ScramSha256 => Sasl::ScramSha256 { username, password },
        Mechanism::ScramSha512 => Sasl::ScramSha512 { username, password },
    })
}

/// A connection to `bootstrap`, or why not as one line.
async fn connect(bootstrap: &str, client: &ClientConfig) -> Result<Connection, String> {
    Connection::connect(bootstrap, client)
        .await
        .map_err(|e| not_connected(bootstrap, &e))
}

/// Why connecting through `bootstrap` failed, as one line.
fn not_connected(bootstrap: &str, e: &ClientError) -> String {
    match e {
        // These name the address that failed, one of several maybe.
        ClientError::NotKafka { .. } | ClientError::ApiVersionsTimeout { .. } => line(e),
        _ => format!("cannot connect to {bootstrap}: {}", line(e)),
    }
}
