//! The [`Connection`](crate::Connection) calls for code without a runtime: each one runs the
//! async call to completion on a current-thread runtime of its own.

use ringwire_kafka::api::api_versions::{ApiVersionsResponse, Negotiated};
use ringwire_kafka::api::create_topics::NewTopic;
use ringwire_kafka::api::describe_configs::{ConfigEntry, ResourceType};
use ringwire_kafka::api::incremental_alter_configs::AlterableConfig;
use ringwire_kafka::api::metadata::MetadataResponse;
use ringwire_kafka::api::offset_commit::OffsetCommitRequest;
use ringwire_kafka::api::produce::Acks;
use ringwire_kafka::record::{Record, Walk};
use ringwire_kafka::{Request, ResponseFrame, Sent};
use tokio::runtime::{Builder, Runtime};

use crate::{ClientConfig, ClientError};

/// One broker connection, blocking.
#[derive(Debug)]
pub struct Connection {
    runtime: Runtime,
    inner: crate::Connection,
}

impl Connection {
    /// Connects and negotiates versions ([`crate::Connection::connect`]).
    pub fn connect(addr: &str, config: &ClientConfig) -> Result<Self, ClientError> {
        let runtime = Builder::new_current_thread()
            .enable_io()
            .enable_time()
            .build()
            .map_err(|e| ClientError::Transport(e.into()))?;
        let inner = runtime.block_on(crate::Connection::connect(addr, config))?;
        Ok(Connection { runtime, inner })
    }

    /// The versions negotiated with the broker.
    #[must_use]
    pub fn versions(&self) -> &Negotiated {
        self.inner.versions()
    }

    /// The broker's ApiVersions answer.
    #[must_use]
    pub fn broker_versions(&self) -> &ApiVersionsResponse {
        self.inner.broker_versions()
    }

    /// The receive ring's capacity now.
    #[must_use]
    pub fn rx_capacity(&self) -> usize {
        self.inner.rx_capacity()
    }

    /// Requests sent and not yet answered.
    #[must_use]
    pub fn in_flight(&self) -> usize {
        self.inner.in_flight()
    }

    /// [`crate::Connection::send`].
    pub fn send<Q: Request>(&mut self, request: &Q) -> Result<Sent, ClientError> {
        self.runtime.block_on(self.inner.send(request))
    }

    /// [`crate::Connection::flush`].
    pub fn flush(&mut self) -> Result<(), ClientError> {
        self.runtime.block_on(self.inner.flush())
    }

    /// [`crate::Connection::recv`].
    pub fn recv<T>(
        &mut self,
        handle: impl FnOnce(ResponseFrame<'_>) -> Result<T, ClientError>,
    ) -> Result<T, ClientError> {
        self.runtime.block_on(self.inner.recv(handle))
    }

    /// [`crate::Connection::call`].
    pub fn call<Q: Request, T>(
        &mut self,
        request: &Q,
        handle: impl FnOnce(ResponseFrame<'_>) -> Result<T, ClientError>,
    ) -> Result<T, ClientError> {
        self.runtime.block_on(self.inner.call(request, handle))
    }

    /// [`crate::Connection::create_topic`].
    pub fn create_topic(&mut self, topic: NewTopic<'_>) -> Result<(), ClientError> {
        self.runtime.block_on(self.inner.create_topic(topic))
    }

    /// [`crate::Connection::delete_topic`].
    pub fn delete_topic(&mut self, name: &str) -> Result<(), ClientError> {
        self.runtime.block_on(self.inner.delete_topic(name))
    }

    /// [`crate::Connection::create_partitions`].
    pub fn create_partitions(
        &mut self,
        topic: &str,
        count: i32,
        validate_only: bool,
    ) -> Result<(), ClientError> {
        self.runtime
            .block_on(self.inner.create_partitions(topic, count, validate_only))
    }

    /// [`crate::Connection::describe_configs`].
    pub fn describe_configs<T>(
        &mut self,
        resource_type: ResourceType,
        name: &str,
        handle: impl FnOnce(&[ConfigEntry<'_>]) -> T,
    ) -> Result<T, ClientError> {
        self.runtime
            .block_on(self.inner.describe_configs(resource_type, name, handle))
    }

    /// [`crate::Connection::alter_configs`].
    pub fn alter_configs(
        &mut self,
        resource_type: ResourceType,
        name: &str,
        changes: &[AlterableConfig<'_>],
        validate_only: bool,
    ) -> Result<(), ClientError> {
        let altered = self
            .inner
            .alter_configs(resource_type, name, changes, validate_only);
        self.runtime.block_on(altered)
    }

    /// [`crate::Connection::init_producer_id`].
    pub fn init_producer_id(&mut self) -> Result<(i64, i16), ClientError> {
        self.runtime.block_on(self.inner.init_producer_id())
    }

    /// [`crate::Connection::metadata`].
    pub fn metadata<T>(
        &mut self,
        topics: Option<&[&str]>,
        handle: impl FnOnce(MetadataResponse<'_>) -> T,
    ) -> Result<T, ClientError> {
        self.runtime.block_on(self.inner.metadata(topics, handle))
    }

    /// [`crate::Connection::produce`].
    pub fn produce(
        &mut self,
        topic: &str,
        partition: i32,
        batches: &[u8],
        acks: Acks,
    ) -> Result<Option<i64>, ClientError> {
        self.runtime
            .block_on(self.inner.produce(topic, partition, batches, acks))
    }

    /// [`crate::Connection::fetch`].
    pub fn fetch(
        &mut self,
        topic: &str,
        partition: i32,
        offset: i64,
        max_bytes: i32,
        max_wait_ms: i32,
        on_record: impl FnMut(Record<'_>),
    ) -> Result<Walk, ClientError> {
        self.runtime.block_on(self.inner.fetch(
            topic,
            partition,
            offset,
            max_bytes,
            max_wait_ms,
            on_record,
        ))
    }

    /// [`crate::Connection::list_offset`].
    pub fn list_offset(
        &mut self,
        topic: &str,
        partition: i32,
        timestamp: i64,
    ) -> Result<i64, ClientError> {
        self.runtime
            .block_on(self.inner.list_offset(topic, partition, timestamp))
    }

    /// [`crate::Connection::find_group_coordinator`].
    pub fn find_group_coordinator(&mut self, group: &str) -> Result<(i32, String), ClientError> {
        self.runtime
            .block_on(self.inner.find_group_coordinator(group))
    }

    /// [`crate::Connection::commit_offsets`].
    pub fn commit_offsets(&mut self, request: &OffsetCommitRequest<'_>) -> Result<(), ClientError> {
        self.runtime.block_on(self.inner.commit_offsets(request))
    }

    /// [`crate::Connection::committed_offsets`].
    pub fn committed_offsets(
        &mut self,
        group: &str,
        topic: &str,
        partitions: &[i32],
    ) -> Result<Vec<Option<i64>>, ClientError> {
        self.runtime
            .block_on(self.inner.committed_offsets(group, topic, partitions))
    }
}
