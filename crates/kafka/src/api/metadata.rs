//! Metadata (3): brokers, topics, partitions and their leaders.

use super::{ApiKey, Request, Response};
use crate::codec::{Reader, Writer};
use crate::{DecodeError, ErrorCode};

/// Metadata request: `topics = None` asks for every topic.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct MetadataRequest<'a> {
    /// Topics to describe; `None` for all.
    pub topics: Option<&'a [&'a str]>,
    /// Let the broker create missing topics (if its config allows).
    pub allow_auto_topic_creation: bool,
}

impl Request for MetadataRequest<'_> {
    const API_KEY: ApiKey = ApiKey::Metadata;

    fn encode(&self, w: &mut Writer<'_>, version: i16) {
        w.array_len("metadata topics", self.topics.map(<[&str]>::len));
        for name in self.topics.unwrap_or_default() {
            if version >= 10 {
                w.uuid(&[0; 16]);
            }
            w.string("topic name", name);
            w.tagged_fields();
        }
        w.bool(self.allow_auto_topic_creation);
        if (8..=10).contains(&version) {
            w.bool(false); // include_cluster_authorized_operations
        }
        if version >= 8 {
            w.bool(false); // include_topic_authorized_operations
        }
        w.tagged_fields();
    }
}

/// A broker in the cluster.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Broker<'a> {
    /// Node id.
    pub node_id: i32,
    /// Host name, borrowed.
    pub host: &'a str,
    /// Port.
    pub port: i32,
    /// Rack, if configured.
    pub rack: Option<&'a str>,
}

/// A partition and its replicas.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MetadataPartition {
    /// Partition error.
    pub error_code: ErrorCode,
    /// Partition number.
    pub partition_index: i32,
    /// Leader's node id (-1 while none).
    pub leader_id: i32,
    /// Leader epoch (v7+; -1 before).
    pub leader_epoch: i32,
    /// Replicas.
    pub replica_nodes: Vec<i32>,
    /// In-sync replicas.
    pub isr_nodes: Vec<i32>,
    /// Offline replicas (v5+).
    pub offline_replicas: Vec<i32>,
}

/// A topic.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MetadataTopic<'a> {
    /// Topic error.
    pub error_code: ErrorCode,
    /// Name (null only from v12, for a topic asked for by id).
    pub name: Option<&'a str>,
    /// Topic id (v10+; zero before).
    pub topic_id: [u8; 16],
    /// Internal topic (`__consumer_offsets`, ...).
    pub is_internal: bool,
    /// Partitions.
    pub partitions: Vec<MetadataPartition>,
}

/// Metadata response.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MetadataResponse<'a> {
    /// Quota throttle.
    pub throttle_time_ms: i32,
    /// Brokers.
    pub brokers: Vec<Broker<'a>>,
    /// Cluster id.
    pub cluster_id: Option<&'a str>,
    /// Controller's node id.
    pub controller_id: i32,
    /// Topics.
    pub topics: Vec<MetadataTopic<'a>>,
}

impl MetadataResponse<'_> {
    /// The broker with `node_id`.
    #[must_use]
    pub fn broker(&self, node_id: i32) -> Option<&Broker<'_>> {
        self.brokers.iter().find(|b| b.node_id == node_id)
    }
}

impl<'a> Response<'a> for MetadataResponse<'a> {
    const API_KEY: ApiKey = ApiKey::Metadata;

    fn decode(r: &mut Reader<'a>, version: i16) -> Result<Self, DecodeError> {
        let throttle_time_ms = r.i32()?;
        let brokers = r.array("brokers", |r| {
            let broker = Broker {
                node_id: r.i32()?,
                host: r.string("broker host")?,
                port: r.i32()?,
                rack: r.nullable_string("broker rack")?,
            };
            r.tagged_fields()?;
            Ok(broker)
        })?;
        let cluster_id = r.nullable_string("cluster id")?;
        let controller_id = r.i32()?;
        let topics = r.array("metadata topics", |r| decode_topic(r, version))?;
        if (8..=10).contains(&version) {
            let _cluster_authorized_operations = r.i32()?;
        }
        r.tagged_fields()?;
        Ok(MetadataResponse {
            throttle_time_ms,
            brokers,
            cluster_id,
            controller_id,
            topics,
        })
    }
}

fn decode_topic<'a>(r: &mut Reader<'a>, version: i16) -> Result<MetadataTopic<'a>, DecodeError> {
    let error_code = ErrorCode(r.i16()?);
    let name = if version >= 12 {
        r.nullable_string("topic name")?
    } else {
        Some(r.string("topic name")?)
    };
    let topic_id = if version >= 10 { r.uuid()? } else { [0; 16] };
    let is_internal = r.bool()?;
    let partitions = r.array("metadata partitions", |r| {
        let error_code = ErrorCode(r.i16()?);
        let partition_index = r.i32()?;
        let leader_id = r.i32()?;
        let leader_epoch = if version >= 7 { r.i32()? } else { -1 };
        let replica_nodes = r.array("replica nodes", Reader::i32)?;
        let isr_nodes = r.array("isr nodes", Reader::i32)?;
        let offline_replicas = if version >= 5 {
            r.array("offline replicas", Reader::i32)?
        } else {
            Vec::new()
        };
        r.tagged_fields()?;
        Ok(MetadataPartition {
            error_code,
            partition_index,
            leader_id,
            leader_epoch,
            replica_nodes,
            isr_nodes,
            offline_replicas,
        })
    })?;
    if version >= 8 {
        let _topic_authorized_operations = r.i32()?;
    }
    r.tagged_fields()?;
    Ok(MetadataTopic {
        error_code,
        name,
        topic_id,
        is_internal,
        partitions,
    })
}
