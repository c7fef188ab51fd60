//! `ringwire kafka topics`: topics created, listed, described (partitions with their leaders
//! and replicas, configuration entries with where each value comes from), changed (more
//! partitions, entries set or deleted) and deleted: what `kafka-topics.sh` and
//! `kafka-configs.sh --entity-type topics` do.

use std::io::{self, Write};

use clap::Subcommand;
use ringwire_kafka::api::create_topics::NewTopic;
use ringwire_kafka::api::describe_configs::{ConfigSource, ResourceType};
use ringwire_kafka::api::incremental_alter_configs::{AlterableConfig, ConfigOperation};
use ringwire_kafka::ErrorCode;
use ringwire_kafka_client::ClientConfig;

use super::{connect, topic_config};
use crate::request::line;

#[derive(Debug, Subcommand)]
pub(super) enum TopicsCommand {
    /// Create a topic.
    Create {
        name: String,
        #[arg(long, default_value_t = 1)]
        partitions: i32,
        /// Replicas per partition [default: the broker's].
        #[arg(long)]
        replication_factor: Option<i16>,
        /// A topic setting, as kafka-topics.sh takes it (repeatable):
        /// `--config cleanup.policy=compact`.
        #[arg(long = "config", value_name = "NAME=VALUE", value_parser = topic_config)]
        configs: Vec<(String, String)>,
    },
    /// Delete topics.
    Delete {
        #[arg(required = true)]
        names: Vec<String>,
    },
    /// Print each topic and its partition count, tab-separated, by name.
    List {
        /// Internal topics too (`__consumer_offsets`, ...).
        #[arg(long)]
        internal: bool,
    },
    /// Print a topic, tab-separated: its partition count, replication factor and the
    /// settings made on it, then each partition's leader, replicas and in-sync replicas.
    Describe { name: String },
    /// Print every setting of a topic, tab-separated: its name, value (`-` for a secret one)
    /// and where the value comes from (`DYNAMIC_TOPIC_CONFIG`: set on the topic;
    /// `DEFAULT_CONFIG`, `STATIC_BROKER_CONFIG`, ...: the broker's), by name.
    Configs { name: String },
    /// Change a topic: more partitions (never fewer; keyed records then hash elsewhere),
    /// settings set or deleted (back to the broker's), the others left as they are.
    Alter {
        name: String,
        /// The partition count it is to have in all.
        #[arg(long, value_name = "N")]
        partitions: Option<i32>,
        /// Set a setting (repeatable): `--config retention.ms=86400000`.
        #[arg(long = "config", value_name = "NAME=VALUE", value_parser = topic_config)]
        configs: Vec<(String, String)>,
        /// Delete a setting made on the topic (repeatable).
        #[arg(long = "delete-config", value_name = "NAME")]
        deletes: Vec<String>,
    },
}

pub(super) async fn run(
    bootstrap: &str,
    client: &ClientConfig,
    command: &TopicsCommand,
) -> Result<(), String> {
    let mut conn = connect(bootstrap, client).await?;
    let out = match command {
        TopicsCommand::Create {
            name,
            partitions,
            replication_factor,
            configs,
        } => {
            let configs: Vec<(&str, Option<&str>)> = configs
                .iter()
                .map(|(name, value)| (name.as_str(), Some(value.as_str())))
                .collect();
            conn.create_topic(NewTopic {
                name,
                num_partitions: *partitions,
                replication_factor: replication_factor.unwrap_or(-1),
                configs: &configs,
            })
            .await
            .map_err(|e| format!("cannot create {name}: {}", line(e)))?;
            return Ok(());
        }
        TopicsCommand::Delete { names } => {
            for name in names {
                conn.delete_topic(name)
                    .await
                    .map_err(|e| format!("cannot delete {name}: {}", line(e)))?;
            }
            return Ok(());
        }
        TopicsCommand::List { internal } => {
            let mut topics = conn
                .metadata(None, |m| {
                    m.topics
                        .iter()
                        .filter(|t| *internal || !t.is_internal)
                        .filter_map(|t| Some((t.name?.to_owned(), t.partitions.len())))
                        .collect::<Vec<_>>()
                })
                .await
                .map_err(|e| format!("cannot list topics: {}", line(e)))?;
            topics.sort();
            topics
                .iter()
                .map(|(name, partitions)| format!("{name}\t{partitions}\n"))
                .collect()
        }
        TopicsCommand::Describe { name } => {
            let cannot = |e| format!("cannot describe {name}: {}", line(e));
            let topic = conn
                .metadata(Some(&[name]), |m| {
                    m.topics.first().map(|t| {
                        let mut partitions: Vec<_> = t
                            .partitions
                            .iter()
                            .map(|p| {
                                let (replicas, isr) = (ids(&p.replica_nodes), ids(&p.isr_nodes));
                                (p.partition_index, p.leader_id, replicas, isr)
                            })
                            .collect();
                        partitions.sort();
                        let replication = t.partitions.first().map_or(0, |p| p.replica_nodes.len());
                        (t.error_code, partitions, replication)
                    })
                })
                .await
                .map_err(cannot)?;
            let (partitions, replication) = match topic {
                Some((code, partitions, replication)) if code == ErrorCode::NONE => {
                    (partitions, replication)
                }
                Some((code, ..)) => return Err(format!("cannot describe {name}: {code}")),
                None => return Err(format!("cannot describe {name}: no answer for it")),
            };
            let set_here = conn
                .describe_configs(ResourceType::TOPIC, name, |configs| {
                    configs
                        .iter()
                        .filter(|c| c.config_source == ConfigSource::DYNAMIC_TOPIC_CONFIG)
                        .map(|c| format!("{}={}", c.name, c.value.unwrap_or("-")))
                        .collect::<Vec<_>>()
                })
                .await
                .map_err(cannot)?;
            let mut out = format!(
                "TOPIC\tPARTITIONS\tREPLICATION\tCONFIGS\n{name}\t{}\t{replication}\t{}\n\n\
                 PARTITION\tLEADER\tREPLICAS\tISR\n",
                partitions.len(),
                set_here.join(",")
            );
            for (index, leader, replicas, isr) in &partitions {
                out.push_str(&format!("{index}\t{leader}\t{replicas}\t{isr}\n"));
            }
            out
        }
        TopicsCommand::Configs { name } => {
            let mut entries = conn
                .describe_configs(ResourceType::TOPIC, name, |configs| {
                    configs
                        .iter()
                        .map(|c| {
                            let value = c.value.filter(|_| !c.is_sensitive).unwrap_or("-");
                            (c.name.to_owned(), value.to_owned(), c.config_source.name())
                        })
                        .collect::<Vec<_>>()
                })
                .await
                .map_err(|e| format!("cannot describe {name}: {}", line(e)))?;
            entries.sort();
            let mut out = String::from("NAME\tVALUE\tSOURCE\n");
            for (name, value, source) in entries {
                out.push_str(&format!("{name}\t{value}\t{source}\n"));
            }
            out
        }
        TopicsCommand::Alter {
            name,
            partitions,
            configs,
            deletes,
        } => {
            if partitions.is_none() && configs.is_empty() && deletes.is_empty() {
                return Err(
                    "topics alter: nothing to change (--partitions, --config or --delete-config)"
                        .into(),
                );
            }
            let cannot = |e| format!("cannot alter {name}: {}", line(e));
            let changes: Vec<AlterableConfig<'_>> = configs
                .iter()
                .map(|(entry, value)| AlterableConfig {
                    name: entry,
                    operation: ConfigOperation::Set,
                    value: Some(value),
                })
                .chain(deletes.iter().map(|entry| AlterableConfig {
                    name: entry,
                    operation: ConfigOperation::Delete,
                    value: None,
                }))
                .collect();
            // Both checked first, so that neither is made when the other would be refused.
            for validate_only in [true, false] {
                if !changes.is_empty() {
                    conn.alter_configs(ResourceType::TOPIC, name, &changes, validate_only)
                        .await
                        .map_err(cannot)?;
                }
                if let Some(count) = partitions {
                    conn.create_partitions(name, *count, validate_only)
                        .await
                        .map_err(cannot)?;
                }
            }
            return Ok(());
        }
    };
    io::stdout()
        .write_all(out.as_bytes())
        .map_err(|e| format!("cannot write: {}", line(e)))
}

/// Broker ids as Kafka's tools print them: `1,2,3`.
fn ids(ids: &[i32]) -> String {
    let ids: Vec<String> = ids.iter().map(i32::to_string).collect();
    ids.join(",")
}
