//! `ringwire kafka`: produce stdin lines to a topic, print a topic's
//! records, create topics; against a real broker with ringwire-kafka-client's
//! pipelined producer and consumer.

use std::io::{self, Write};
use std::process::ExitCode;

use clap::{Args, Subcommand, ValueEnum};
use ringwire_kafka::api::create_topics::NewTopic;
use ringwire_kafka::record::{Compression, Record};
use ringwire_kafka_client::{
    ClientConfig, ClientError, Connection, Consumer, ConsumerConfig, Producer, ProducerConfig,
    ProducerRecord, Start,
};
use tokio::io::AsyncReadExt as _;

use crate::request::line;

#[derive(Debug, Args)]
pub(crate) struct KafkaArgs {
    /// A broker to start from.
    #[arg(long, value_name = "HOST:PORT", default_value = "127.0.0.1:9092")]
    bootstrap: String,
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
        /// The partition [default: from the key, else 0].
        #[arg(long)]
        partition: Option<i32>,
        /// Batch compression.
        #[arg(long, value_enum, default_value_t = Codec::None)]
        compression: Codec,
    },
    /// Print records, one per line: the value (a null one as nothing), after the key with -K.
    Consume {
        topic: String,
        /// Start at the oldest record instead of the newest.
        #[arg(long)]
        from_beginning: bool,
        /// Exit after this many records.
        #[arg(long, value_name = "N")]
        count: Option<usize>,
        /// Exit at the end of every partition (where its log ended when first fetched), as
        /// kcat -e does; with --count, at whichever comes first.
        #[arg(short = 'e', long)]
        exit_at_end: bool,
        /// Print each record's key (a null one as nothing), then DELIM, then its value (as
        /// kcat -K); `-K $'\t'` puts a tab between them.
        #[arg(short = 'K', long, value_name = "DELIM")]
        key_delimiter: Option<String>,
    },
    /// Manage topics.
    Topics {
        #[command(subcommand)]
        command: TopicsCommand,
    },
}

#[derive(Debug, Subcommand)]
enum TopicsCommand {
    /// Create a topic.
    Create {
        name: String,
        #[arg(long, default_value_t = 1)]
        partitions: i32,
        /// Replicas per partition [default: the broker's].
        #[arg(long)]
        replication_factor: Option<i16>,
    },
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
    let runtime = tokio::runtime::Builder::new_current_thread()
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
    match &args.command {
        KafkaCommand::Topics {
            command:
                TopicsCommand::Create {
                    name,
                    partitions,
                    replication_factor,
                },
        } => {
            let mut conn = Connection::connect(bootstrap, &ClientConfig::default())
                .await
                .map_err(|e| not_connected(bootstrap, &e))?;
            conn.create_topic(NewTopic {
                name,
                num_partitions: *partitions,
                replication_factor: replication_factor.unwrap_or(-1),
                configs: &[],
            })
            .await
            .map_err(|e| format!("cannot create {name}: {}", line(e)))
        }
        KafkaCommand::Produce {
            topic,
            key,
            partition,
            compression,
        } => produce(bootstrap, topic, key.as_deref(), *partition, *compression).await,
        KafkaCommand::Consume {
            topic,
            from_beginning,
            count,
            exit_at_end,
            key_delimiter,
        } => {
            let key_delimiter = key_delimiter.as_deref().map(str::as_bytes);
            let start = if *from_beginning {
                Start::Earliest
            } else {
                Start::Latest
            };
            consume(bootstrap, topic, start, *count, *exit_at_end, key_delimiter).await
        }
    }
}

async fn produce(
    bootstrap: &str,
    topic: &str,
    key: Option<&str>,
    partition: Option<i32>,
    codec: Codec,
) -> Result<(), String> {
    let config = ProducerConfig {
        compression: match codec {
            Codec::None => Compression::None,
            Codec::Gzip => Compression::Gzip,
            Codec::Snappy => Compression::Snappy,
            Codec::Lz4 => Compression::Lz4,
            Codec::Zstd => Compression::Zstd,
        },
        ..ProducerConfig::default()
    };
    let producer = Producer::connect(bootstrap, config)
        .await
        .map_err(|e| not_connected(bootstrap, &e))?;
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
            let records = lines.map(|line| {
                let mut record = ProducerRecord::new(topic, line);
                if let Some(key) = key {
                    record = record.key(key.as_bytes());
                }
                if let Some(partition) = partition {
                    record = record.partition(partition);
                }
                record
            });
            // Delivery failures surface in the `flush` below.
            let _ = producer
                .send_all(records)
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

/// Prints `topic`'s records from `start` until `count` of them, or with `exit_at_end` the
/// end of every partition, whichever comes first (else forever).
async fn consume(
    bootstrap: &str,
    topic: &str,
    start: Start,
    count: Option<usize>,
    exit_at_end: bool,
    key_delimiter: Option<&[u8]>,
) -> Result<(), String> {
    let mut consumer = Consumer::connect(bootstrap, ConsumerConfig::default())
        .await
        .map_err(|e| not_connected(bootstrap, &e))?;
    let partitions = consumer
        .assign(topic, start)
        .await
        .map_err(|e| format!("topic {topic}: {}", line(e)))?;
    let mut left = count.unwrap_or(usize::MAX);
    let mut ends = vec![None; partitions];
    let mut out = std::io::stdout().lock();
    while left > 0 {
        let mut failed = None;
        consumer
            .poll(|_, _, record| {
                if left == 0 || failed.is_some() {
                    return;
                }
                if let Err(e) = print(&mut out, &record, key_delimiter) {
                    failed = Some(e);
                }
                left -= 1;
            })
            .await
            .map_err(|e| format!("fetch from {topic}: {}", line(e)))?;
        match failed.map_or_else(|| out.flush(), Err) {
            Ok(()) => {}
            // The reader left (`| head`): the end, quietly, as for cat and kcat.
            Err(e) if e.kind() == io::ErrorKind::BrokenPipe => return Ok(()),
            Err(e) => return Err(format!("cannot write: {}", line(e))),
        }
        if exit_at_end && at_end(&consumer, topic, &mut ends) {
            break;
        }
    }
    Ok(())
}

/// One record's line: its value, after its key and `key_delimiter` when there is one.
fn print(
    out: &mut impl Write,
    record: &Record<'_>,
    key_delimiter: Option<&[u8]>,
) -> io::Result<()> {
    if let Some(delimiter) = key_delimiter {
        out.write_all(record.key.unwrap_or_default())?;
        out.write_all(delimiter)?;
    }
    out.write_all(record.value.unwrap_or_default())?;
    out.write_all(b"\n")
}

/// Whether every partition of `topic` has reached its entry in `ends`: its end as the first
/// Fetch answer for it found it, noted here as answers come (later records do not count).
fn at_end(consumer: &Consumer, topic: &str, ends: &mut [Option<i64>]) -> bool {
    let mut reached = true;
    for (partition, end) in (0..).zip(ends.iter_mut()) {
        if end.is_none() {
            *end = consumer.end_offset(topic, partition);
        }
        let at = consumer.position(topic, partition);
        reached &= matches!((*end, at), (Some(end), Some(at)) if at >= end);
    }
    reached
}

/// Why connecting through `bootstrap` failed, as one line.
fn not_connected(bootstrap: &str, e: &ClientError) -> String {
    match e {
        // These name the address that failed, one of several maybe.
        ClientError::NotKafka { .. } | ClientError::ApiVersionsTimeout { .. } => line(e),
        _ => format!("cannot connect to {bootstrap}: {}", line(e)),
    }
}
