//! `ringwire kafka`: produce stdin lines to a topic, print a topic's
//! records, create topics; against a real broker with ringwire-kafka's
//! blocking client, each partition's requests sent to its leader.

use std::collections::HashMap;
use std::io::{BufRead as _, Write as _};
use std::process::ExitCode;
use std::time::{SystemTime, UNIX_EPOCH};

use clap::{Args, Subcommand, ValueEnum};
use ringwire_kafka::api::create_topics::NewTopic;
use ringwire_kafka::api::list_offsets::{EARLIEST, LATEST};
use ringwire_kafka::api::produce::Acks;
use ringwire_kafka::client::{ClientConfig, Connection};
use ringwire_kafka::record::{BatchEncoder, BatchOptions, Compression, NewRecord};
use ringwire_kafka::ErrorCode;

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
    /// One record per stdin line.
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
    /// Print record values, one per line.
    Consume {
        topic: String,
        /// Start at the oldest record instead of the newest.
        #[arg(long)]
        from_beginning: bool,
        /// Exit after this many records.
        #[arg(long, value_name = "N")]
        count: Option<usize>,
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

/// Records per produced batch (lines are batched as they are read).
const BATCH_RECORDS: usize = 1000;

pub(crate) fn run(args: &KafkaArgs) -> ExitCode {
    match command(args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("ringwire: {message}");
            ExitCode::FAILURE
        }
    }
}

fn command(args: &KafkaArgs) -> Result<(), String> {
    let mut cluster = Cluster::connect(&args.bootstrap)?;
    match &args.command {
        KafkaCommand::Topics {
            command:
                TopicsCommand::Create {
                    name,
                    partitions,
                    replication_factor,
                },
        } => cluster
            .bootstrap
            .create_topic(NewTopic {
                name,
                num_partitions: *partitions,
                replication_factor: replication_factor.unwrap_or(-1),
                configs: &[],
            })
            .map_err(|e| format!("cannot create {name}: {e}")),
        KafkaCommand::Produce {
            topic,
            key,
            partition,
            compression,
        } => produce(
            &mut cluster,
            topic,
            key.as_deref(),
            *partition,
            *compression,
        ),
        KafkaCommand::Consume {
            topic,
            from_beginning,
            count,
        } => consume(&mut cluster, topic, *from_beginning, *count),
    }
}

/// The bootstrap connection, and one to each partition leader met.
struct Cluster {
    bootstrap: Connection,
    config: ClientConfig,
    leaders: HashMap<String, Connection>,
}

impl Cluster {
    fn connect(bootstrap: &str) -> Result<Cluster, String> {
        let config = ClientConfig::default();
        let connection = Connection::connect(bootstrap, &config)
            .map_err(|e| format!("cannot connect to {bootstrap}: {e}"))?;
        Ok(Cluster {
            bootstrap: connection,
            config,
            leaders: HashMap::new(),
        })
    }

    /// Each partition of `topic` with its leader's address, in order.
    fn partitions(&mut self, topic: &str) -> Result<Vec<(i32, String)>, String> {
        let found = self
            .bootstrap
            .metadata(Some(&[topic]), |metadata| {
                let t = metadata.topics.first()?;
                if t.error_code != ErrorCode::NONE {
                    return Some(Err(t.error_code));
                }
                let address = |id| {
                    metadata
                        .brokers
                        .iter()
                        .find(|b| b.node_id == id)
                        .map(|b| format!("{}:{}", b.host, b.port))
                };
                let mut partitions: Vec<_> = t
                    .partitions
                    .iter()
                    .filter_map(|p| Some((p.partition_index, address(p.leader_id)?)))
                    .collect();
                partitions.sort_unstable();
                Some(Ok(partitions))
            })
            .map_err(|e| e.to_string())?;
        match found {
            Some(Ok(partitions)) if !partitions.is_empty() => Ok(partitions),
            Some(Err(code)) => Err(format!("topic {topic}: {code}")),
            _ => Err(format!("topic {topic}: no partitions with a leader")),
        }
    }

    /// The connection to the broker at `address`.
    fn leader(&mut self, address: &str) -> Result<&mut Connection, String> {
        if !self.leaders.contains_key(address) {
            let connection = Connection::connect(address, &self.config)
                .map_err(|e| format!("cannot connect to {address}: {e}"))?;
            self.leaders.insert(address.to_owned(), connection);
        }
        Ok(self.leaders.get_mut(address).expect("inserted above"))
    }
}

fn produce(
    cluster: &mut Cluster,
    topic: &str,
    key: Option<&str>,
    partition: Option<i32>,
    codec: Codec,
) -> Result<(), String> {
    let partitions = cluster.partitions(topic)?;
    let index = match (partition, key) {
        (Some(p), _) => p,
        (None, Some(key)) => {
            (murmur2(key.as_bytes()) & 0x7fff_ffff) as i32 % partitions.len() as i32
        }
        (None, None) => 0,
    };
    let address = partitions
        .iter()
        .find(|(p, _)| *p == index)
        .map(|(_, a)| a.clone())
        .ok_or_else(|| format!("topic {topic} has no partition {index}"))?;
    let leader = cluster.leader(&address)?;
    let options = BatchOptions {
        compression: match codec {
            Codec::None => Compression::None,
            Codec::Gzip => Compression::Gzip,
            Codec::Snappy => Compression::Snappy,
            Codec::Lz4 => Compression::Lz4,
            Codec::Zstd => Compression::Zstd,
        },
        ..BatchOptions::default()
    };
    let mut encoder = BatchEncoder::new();
    let (mut lines, mut batch) = (Vec::new(), Vec::new());
    let mut stdin = std::io::stdin().lock();
    loop {
        lines.clear();
        for _ in 0..BATCH_RECORDS {
            let mut line = String::new();
            if stdin.read_line(&mut line).map_err(|e| e.to_string())? == 0 {
                break;
            }
            let trimmed = line.trim_end_matches(['\n', '\r']).len();
            line.truncate(trimmed);
            lines.push(line);
        }
        if lines.is_empty() {
            return Ok(());
        }
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as i64);
        let records: Vec<NewRecord<'_>> = lines
            .iter()
            .map(|line| NewRecord {
                timestamp: now,
                key: key.map(str::as_bytes),
                value: Some(line.as_bytes()),
                headers: &[],
            })
            .collect();
        batch.clear();
        encoder
            .encode(&options, &records, &mut batch)
            .map_err(|e| e.to_string())?;
        leader
            .produce(topic, index, &batch, Acks::All)
            .map_err(|e| format!("produce to {topic}/{index}: {e}"))?;
    }
}

fn consume(
    cluster: &mut Cluster,
    topic: &str,
    from_beginning: bool,
    count: Option<usize>,
) -> Result<(), String> {
    let partitions = cluster.partitions(topic)?;
    let start = if from_beginning { EARLIEST } else { LATEST };
    let mut positions = Vec::with_capacity(partitions.len());
    for (index, address) in &partitions {
        let offset = cluster
            .leader(address)?
            .list_offset(topic, *index, start)
            .map_err(|e| format!("offsets of {topic}/{index}: {e}"))?;
        positions.push(offset);
    }
    let mut left = count.unwrap_or(usize::MAX);
    let mut out = std::io::stdout().lock();
    while left > 0 {
        for ((index, address), offset) in partitions.iter().zip(&mut positions) {
            let mut failed = None;
            let walk = cluster
                .leader(address)?
                .fetch(topic, *index, *offset, 8 << 20, 500, |record| {
                    if left == 0 || failed.is_some() {
                        return;
                    }
                    let value = record.value.unwrap_or_default();
                    if let Err(e) = out.write_all(value).and_then(|()| out.write_all(b"\n")) {
                        failed = Some(e);
                    }
                    left -= 1;
                })
                .map_err(|e| format!("fetch from {topic}/{index}: {e}"))?;
            if let Some(e) = failed {
                return Err(format!("cannot write: {e}"));
            }
            *offset = walk.next_offset;
            if left == 0 {
                break;
            }
        }
        out.flush().map_err(|e| e.to_string())?;
    }
    Ok(())
}

/// Kafka's murmur2 (the Java client's `Utils.murmur2`, seed 0x9747b28c), so
/// that a key lands in the partition Java's producer would pick.
fn murmur2(data: &[u8]) -> u32 {
    const M: u32 = 0x5bd1_e995;
    const R: u32 = 24;
    let mut h: u32 = 0x9747_b28c ^ data.len() as u32;
    let mut chunks = data.chunks_exact(4);
    for chunk in &mut chunks {
        let mut k = u32::from_le_bytes([chunk[0], chunk[1], chunk[2], chunk[3]]);
        k = k.wrapping_mul(M);
        k ^= k >> R;
        k = k.wrapping_mul(M);
        h = h.wrapping_mul(M);
        h ^= k;
    }
    let rest = chunks.remainder();
    if rest.len() >= 3 {
        h ^= u32::from(rest[2]) << 16;
    }
    if rest.len() >= 2 {
        h ^= u32::from(rest[1]) << 8;
    }
    if !rest.is_empty() {
        h ^= u32::from(rest[0]);
        h = h.wrapping_mul(M);
    }
    h ^= h >> 13;
    h = h.wrapping_mul(M);
    h ^= h >> 15;
    h
}

#[cfg(test)]
mod tests {
    use super::murmur2;

    #[test]
    fn murmur2_matches_the_java_client() {
        // Values from Kafka's own `UtilsTest.testMurmur2`.
        let cases: [(&[u8], i32); 4] = [
            (b"21", -973_932_308),
            (b"foobar", -790_332_482),
            (b"a-little-bit-long-string", -985_981_536),
            (b"a-little-bit-longer-string", -1_486_304_829),
        ];
        for (key, expected) in cases {
            assert_eq!(murmur2(key) as i32, expected, "{key:?}");
        }
    }
}
