//! DescribeConfigs (32): a topic's or a broker's configuration, each entry with where its
//! value comes from.

use super::{ApiKey, Request, Response};
use crate::codec::{Reader, Writer};
use crate::{DecodeError, ErrorCode};

/// What a configuration belongs to (DescribeConfigs, IncrementalAlterConfigs).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ResourceType(pub i8);

impl ResourceType {
    /// A topic, by name.
    pub const TOPIC: ResourceType = ResourceType(2);
    /// A broker, by id (empty: the cluster-wide defaults).
    pub const BROKER: ResourceType = ResourceType(4);
    /// A broker's loggers, by broker id.
    pub const BROKER_LOGGER: ResourceType = ResourceType(8);
    /// A consumer group (Kafka 4.0+).
    pub const GROUP: ResourceType = ResourceType(32);
}

/// Where a configuration's value comes from, as Kafka's tools name it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ConfigSource(pub i8);

impl ConfigSource {
    /// Set on the topic itself.
    pub const DYNAMIC_TOPIC_CONFIG: ConfigSource = ConfigSource(1);
    /// The broker's own file (`server.properties`), or its default as the broker reports it.
    pub const STATIC_BROKER_CONFIG: ConfigSource = ConfigSource(5);
    /// The broker's default, unchanged.
    pub const DEFAULT_CONFIG: ConfigSource = ConfigSource(6);

    /// The name Kafka's tools print (`DYNAMIC_TOPIC_CONFIG`, `STATIC_BROKER_CONFIG`, ...).
    #[must_use]
    pub fn name(self) -> &'static str {
        match self.0 {
            1 => "DYNAMIC_TOPIC_CONFIG",
            2 => "DYNAMIC_BROKER_LOGGER_CONFIG",
            3 => "DYNAMIC_BROKER_CONFIG",
            4 => "DYNAMIC_DEFAULT_BROKER_CONFIG",
            5 => "STATIC_BROKER_CONFIG",
            6 => "DEFAULT_CONFIG",
            7 => "DYNAMIC_CLIENT_METRICS_CONFIG",
            8 => "DYNAMIC_GROUP_CONFIG",
            _ => "UNKNOWN",
        }
    }
}

/// One resource whose configuration is asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DescribeConfigsResource<'a> {
    /// What it is.
    pub resource_type: ResourceType,
    /// Its name (a topic's name, a broker's id).
    pub resource_name: &'a str,
    /// The entries wanted; `None`: every one.
    pub configuration_keys: Option<&'a [&'a str]>,
}

/// DescribeConfigs request, sent to any broker for a topic (to the broker itself for its own
/// configuration).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DescribeConfigsRequest<'a> {
    /// The resources.
    pub resources: &'a [DescribeConfigsResource<'a>],
    /// Also each entry's synonyms: every level that sets it, highest first.
    pub include_synonyms: bool,
    /// Also each entry's documentation (v3+).
    pub include_documentation: bool,
}

impl Request for DescribeConfigsRequest<'_> {
    const API_KEY: ApiKey = ApiKey::DescribeConfigs;

    fn encode(&self, w: &mut Writer<'_>, version: i16) {
        w.array("resources", self.resources, |w, resource| {
            w.i8(resource.resource_type.0);
            w.string("resource name", resource.resource_name);
            match resource.configuration_keys {
                Some(keys) => w.array("configuration keys", keys, |w, key| {
                    w.string("configuration key", key);
                }),
                None => w.array_len("configuration keys", None),
            }
            w.tagged_fields();
        });
        w.bool(self.include_synonyms);
        if version >= 3 {
            w.bool(self.include_documentation);
        }
        w.tagged_fields();
    }
}

/// A level that sets an entry ([`DescribeConfigsRequest::include_synonyms`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConfigSynonym<'a> {
    /// Its name at that level (`log.retention.ms` for a topic's `retention.ms`).
    pub name: &'a str,
    /// Its value there (`None` for a sensitive one).
    pub value: Option<&'a str>,
    /// The level.
    pub source: ConfigSource,
}

/// One configuration entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigEntry<'a> {
    /// Its name.
    pub name: &'a str,
    /// Its value (`None` for a sensitive one).
    pub value: Option<&'a str>,
    /// Whether it cannot be changed.
    pub read_only: bool,
    /// Where the value comes from.
    pub config_source: ConfigSource,
    /// Whether its value is a secret (and so not sent).
    pub is_sensitive: bool,
    /// Every level that sets it, highest first (when asked for).
    pub synonyms: Vec<ConfigSynonym<'a>>,
    /// Its data type (v3+; 0 unknown, then `BOOLEAN`, `STRING`, `INT`, `SHORT`, `LONG`,
    /// `DOUBLE`, `LIST`, `CLASS`, `PASSWORD` from 1).
    pub config_type: i8,
    /// Its documentation (v3+, when asked for).
    pub documentation: Option<&'a str>,
}

/// One resource's configuration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigsResult<'a> {
    /// Error: `UNKNOWN_TOPIC_OR_PARTITION`, `INVALID_REQUEST`, ...
    pub error_code: ErrorCode,
    /// Error detail.
    pub error_message: Option<&'a str>,
    /// What it is.
    pub resource_type: ResourceType,
    /// Its name.
    pub resource_name: &'a str,
    /// Its entries.
    pub configs: Vec<ConfigEntry<'a>>,
}

/// DescribeConfigs response.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DescribeConfigsResponse<'a> {
    /// Quota throttle.
    pub throttle_time_ms: i32,
    /// One result per resource asked about.
    pub results: Vec<ConfigsResult<'a>>,
}

impl<'a> Response<'a> for DescribeConfigsResponse<'a> {
    const API_KEY: ApiKey = ApiKey::DescribeConfigs;

    fn decode(r: &mut Reader<'a>, version: i16) -> Result<Self, DecodeError> {
        let throttle_time_ms = r.i32()?;
        let results = r.array("config results", |r| {
            let error_code = ErrorCode(r.i16()?);
            let error_message = r.nullable_string("error message")?;
            let resource_type = ResourceType(r.i8()?);
            let resource_name = r.string("resource name")?;
            let configs = r.array("configs", |r| config_entry(r, version))?;
            r.tagged_fields()?;
            Ok(ConfigsResult {
                error_code,
                error_message,
                resource_type,
                resource_name,
                configs,
            })
        })?;
        r.tagged_fields()?;
        Ok(DescribeConfigsResponse {
            throttle_time_ms,
            results,
        })
    }
}

fn config_entry<'a>(r: &mut Reader<'a>, version: i16) -> Result<ConfigEntry<'a>, DecodeError> {
    let name = r.string("config name")?;
    let value = r.nullable_string("config value")?;
    let read_only = r.bool()?;
    let config_source = ConfigSource(r.i8()?);
    let is_sensitive = r.bool()?;
    let synonyms = r.array("synonyms", |r| {
        let synonym = ConfigSynonym {
            name: r.string("synonym name")?,
            value: r.nullable_string("synonym value")?,
            source: ConfigSource(r.i8()?),
        };
        r.tagged_fields()?;
        Ok(synonym)
    })?;
    let (mut config_type, mut documentation) = (0, None);
    if version >= 3 {
        config_type = r.i8()?;
        documentation = r.nullable_string("documentation")?;
    }
    r.tagged_fields()?;
    Ok(ConfigEntry {
        name,
        value,
        read_only,
        config_source,
        is_sensitive,
        synonyms,
        config_type,
        documentation,
    })
}
