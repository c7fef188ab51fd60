//! `ringwire kafka groups`: a cluster's consumer groups listed, one described member by
//! member, a stopped one's offsets moved, empty ones deleted (what
//! `kafka-consumer-groups.sh --list`, `--describe --members --verbose`, `--reset-offsets` and
//! `--delete` do).

use std::io::{self, Write};

use clap::{Args, Subcommand};
use ringwire_kafka_client::admin::{GroupDescription, MemberDescription};
use ringwire_kafka_client::{Admin, ClientConfig, GroupProtocol, Reset, Start};

use super::not_connected;
use crate::request::line;

#[derive(Debug, Subcommand)]
pub(super) enum GroupsCommand {
    /// Print every group of the cluster, tab-separated: its id, type (`classic` or
    /// `consumer`), protocol type (`consumer` for consumer groups) and state, by id.
    List,
    /// Print a group: its protocol, state, assignor and member count, then each member (id,
    /// static instance id, client id, host, topics, the partitions it owns and, on the
    /// consumer protocol, those it is moving to).
    Describe { group: String },
    /// Move a stopped group's offsets on every partition of a topic: print where it would
    /// start, and commit that with --execute (as `kafka-consumer-groups.sh --reset-offsets`).
    Reset {
        group: String,
        topic: String,
        #[command(flatten)]
        to: ResetTo,
        /// Commit the new offsets (without it, only print them).
        #[arg(long)]
        execute: bool,
    },
    /// Delete groups without members, with their committed offsets.
    Delete {
        #[arg(required = true)]
        groups: Vec<String>,
    },
}

/// Where `groups reset` moves the group to: one of the four.
#[derive(Debug, Args)]
#[group(required = true, multiple = false)]
pub(super) struct ResetTo {
    /// The oldest record kept.
    #[arg(long)]
    to_earliest: bool,
    /// After the newest record.
    #[arg(long)]
    to_latest: bool,
    /// This offset.
    #[arg(long, value_name = "OFFSET")]
    to_offset: Option<i64>,
    /// The first record stamped at or after this time (ms since the epoch).
    #[arg(long, value_name = "MS")]
    to_time: Option<i64>,
    /// N records on from where the group committed (back with -N), within the log: a
    /// replay of the last hundred is `--shift-by -100` (where nothing was committed, from
    /// the log's end).
    #[arg(long, value_name = "N", allow_negative_numbers = true)]
    shift_by: Option<i64>,
}

impl ResetTo {
    fn start(&self) -> Start {
        match (self.to_offset, self.to_time) {
            (Some(offset), _) => Start::At(offset),
            (_, Some(ms)) => Start::Time(ms),
            _ if self.to_earliest => Start::Earliest,
            _ => Start::Latest,
        }
    }
}

pub(super) async fn run(
    bootstrap: &str,
    client: &ClientConfig,
    command: &GroupsCommand,
) -> Result<(), String> {
    let admin = Admin::connect(bootstrap, client.clone())
        .await
        .map_err(|e| not_connected(bootstrap, &e))?;
    let out = match command {
        GroupsCommand::List => {
            let groups = admin
                .list_groups()
                .await
                .map_err(|e| format!("cannot list groups: {}", line(e)))?;
            let mut out = String::from("GROUP\tTYPE\tPROTOCOL\tSTATE\n");
            for g in groups {
                let known = |v: Option<&str>| dash(v.unwrap_or_default()).to_owned();
                out.push_str(&format!(
                    "{}\t{}\t{}\t{}\n",
                    g.group_id,
                    known(g.group_type.as_deref()),
                    dash(&g.protocol_type),
                    known(g.state.as_deref()),
                ));
            }
            out
        }
        GroupsCommand::Describe { group } => {
            let described = admin
                .describe_group(group)
                .await
                .map_err(|e| format!("group {group}: {}", line(e)))?;
            describe(&described)
        }
        GroupsCommand::Reset {
            group,
            topic,
            to,
            execute,
        } => {
            let failed = |e| format!("group {group}, topic {topic}: {}", line(e));
            let offsets = match to.shift_by {
                Some(n) => shifted(&admin, group, topic, n).await,
                None => admin.offsets(group, topic, to.start()).await,
            };
            let offsets = offsets.map_err(failed)?;
            if *execute {
                admin
                    .commit_offsets(group, topic, &offsets)
                    .await
                    .map_err(failed)?;
            } else {
                eprintln!("ringwire: not committed: --execute commits these offsets");
            }
            let mut out = String::from("PARTITION\tNEW-OFFSET\n");
            for (partition, offset) in offsets {
                out.push_str(&format!("{partition}\t{offset}\n"));
            }
            out
        }
        GroupsCommand::Delete { groups } => {
            for group in groups {
                admin
                    .delete_group(group)
                    .await
                    .map_err(|e| format!("cannot delete group {group}: {}", line(e)))?;
            }
            String::new()
        }
    };
    io::stdout()
        .write_all(out.as_bytes())
        .map_err(|e| format!("cannot write: {}", line(e)))
}

/// Each partition's committed offset (its end where none is) moved by `n`, kept within the
/// log (Java's `--shift-by`).
async fn shifted(
    admin: &Admin,
    group: &str,
    topic: &str,
    n: i64,
) -> Result<Vec<(i32, i64)>, ringwire_kafka_client::ClientError> {
    let committed = admin
        .offsets(group, topic, Start::Committed(Reset::Latest))
        .await?;
    let earliest = admin.offsets(group, topic, Start::Earliest).await?;
    let latest = admin.offsets(group, topic, Start::Latest).await?;
    let of = |offsets: &[(i32, i64)], partition| {
        offsets
            .iter()
            .find(|(p, _)| *p == partition)
            .map(|(_, o)| *o)
    };
    Ok(committed
        .iter()
        .map(|&(partition, at)| {
            let first = of(&earliest, partition).unwrap_or(0);
            let end = of(&latest, partition).unwrap_or(at).max(first);
            (partition, at.saturating_add(n).clamp(first, end))
        })
        .collect())
}

fn describe(g: &GroupDescription) -> String {
    let protocol = match g.protocol {
        GroupProtocol::Classic => "classic",
        GroupProtocol::Consumer => "consumer",
    };
    let mut out = format!(
        "GROUP\tTYPE\tSTATE\tASSIGNOR\tMEMBERS\n{}\t{protocol}\t{}\t{}\t{}\n\n\
         MEMBER\tINSTANCE\tCLIENT\tHOST\tTOPICS\tASSIGNMENT\tTARGET\n",
        g.group_id,
        g.state,
        dash(&g.assignor),
        g.members.len(),
    );
    for m in &g.members {
        out.push_str(&member(m));
    }
    out
}

/// One member's line.
fn member(m: &MemberDescription) -> String {
    let mut topics = m.topics.join(",");
    if let Some(regex) = &m.topic_regex {
        topics.push_str(if topics.is_empty() { "" } else { "," });
        topics.push_str(regex);
    }
    let target = m
        .target_assignment
        .as_deref()
        .map_or("-".into(), partitions);
    format!(
        "{}\t{}\t{}\t{}\t{}\t{}\t{target}\n",
        m.member_id,
        dash(m.instance_id.as_deref().unwrap_or_default()),
        dash(&m.client_id),
        m.client_host,
        dash(&topics),
        partitions(&m.assignment),
    )
}

/// `topic:0,1 other:3`, or `-` for none.
fn partitions(topics: &[(String, Vec<i32>)]) -> String {
    let named: Vec<String> = topics
        .iter()
        .map(|(topic, partitions)| {
            let list: Vec<String> = partitions.iter().map(i32::to_string).collect();
            format!("{topic}:{}", list.join(","))
        })
        .collect();
    dash(&named.join(" ")).to_owned()
}

/// `-` for an empty field, so every line has its columns.
fn dash(field: &str) -> &str {
    if field.is_empty() {
        "-"
    } else {
        field
    }
}
