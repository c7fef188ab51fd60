//! A minimal blocking client: one connection to one broker over `ringwire-io`'s transports.
//!
//! Requests are encoded straight into the send ring and responses parsed in the receive ring,
//! so a Fetch's records reach the callback as slices of the ring. Several requests may be sent
//! before their responses are read ([`Connection::send`], [`Connection::flush`],
//! [`Connection::recv`]); the convenience calls send one and wait for it.

mod error;

use std::net::{TcpStream, ToSocketAddrs};

use ringwire_io::{Duplex, RecvTransport, RingConfig, TransportConfig, TransportError};
use ringwire_wire::Status;

pub use error::ClientError;

use crate::api::api_versions::{ApiVersionsRequest, ApiVersionsResponse, Negotiated};
use crate::api::create_topics::{CreateTopicsRequest, CreateTopicsResponse, NewTopic};
use crate::api::fetch::{FetchPartition, FetchRequest, FetchResponse, FetchTopic};
use crate::api::list_offsets::{
    ListOffsetsPartition, ListOffsetsRequest, ListOffsetsResponse, ListOffsetsTopic,
};
use crate::api::metadata::{MetadataRequest, MetadataResponse};
use crate::api::produce::{Acks, ProducePartition, ProduceRequest, ProduceResponse, ProduceTopic};
use crate::record::{walk, Record, Walk};
use crate::{ApiKey, Correlator, ErrorCode, Limits, Request, ResponseFrame, Sent};

/// Receive ring size: Fetch responses are large, and untouched pages cost nothing.
pub const DEFAULT_RX_RING: usize = 16 * 1024 * 1024;
/// Receive ring bound: a response up to this size grows the ring instead of failing.
pub const DEFAULT_RX_RING_MAX: usize = 64 * 1024 * 1024;

/// Connection settings.
#[derive(Debug, Clone)]
pub struct ClientConfig {
    /// Sent in every request header.
    pub client_id: String,
    /// Ring sizes; `transport.rx.max_capacity` bounds the largest response.
    pub transport: TransportConfig,
    /// Decoding bounds.
    pub limits: Limits,
}

impl Default for ClientConfig {
    fn default() -> Self {
        let rx = RingConfig::with_capacity(DEFAULT_RX_RING).max_capacity(DEFAULT_RX_RING_MAX);
        let tx = RingConfig::with_capacity(1024 * 1024).max_capacity(DEFAULT_RX_RING_MAX);
        ClientConfig {
            client_id: "ringwire".into(),
            transport: TransportConfig { rx, tx },
            limits: Limits::default(),
        }
    }
}

/// One broker connection with negotiated API versions.
#[derive(Debug)]
pub struct Connection {
    io: Duplex<TcpStream, TcpStream>,
    correlator: Correlator,
    versions: Negotiated,
    broker: ApiVersionsResponse,
    limits: Limits,
    scratch: Vec<u8>,
}

impl Connection {
    /// Connects, then negotiates versions with ApiVersions (at this crate's newest version,
    /// falling back to v0 when the broker says it does not serve that one).
    pub fn connect(addr: impl ToSocketAddrs, config: &ClientConfig) -> Result<Self, ClientError> {
        let stream = TcpStream::connect(addr).map_err(TransportError::from)?;
        stream.set_nodelay(true).map_err(TransportError::from)?;
        let reader = stream.try_clone().map_err(TransportError::from)?;
        let mut conn = Connection {
            io: Duplex::new(config.transport, reader, stream)?,
            correlator: Correlator::new(Some(&config.client_id), &config.limits),
            versions: Negotiated::default(),
            broker: ApiVersionsResponse {
                error_code: ErrorCode::NONE,
                api_keys: Vec::new(),
                throttle_time_ms: 0,
            },
            limits: config.limits,
            scratch: Vec::new(),
        };
        let mut broker = conn.api_versions(*ApiKey::ApiVersions.versions().end())?;
        if broker.error_code == ErrorCode::UNSUPPORTED_VERSION {
            broker = conn.api_versions(0)?;
        }
        broker
            .error_code
            .check()
            .map_err(|code| ClientError::Kafka {
                api: ApiKey::ApiVersions,
                code,
            })?;
        conn.versions = Negotiated::new(&broker.api_keys);
        conn.broker = broker;
        Ok(conn)
    }

    fn api_versions(&mut self, version: i16) -> Result<ApiVersionsResponse, ClientError> {
        self.send_at(&ApiVersionsRequest::default(), version)?;
        self.flush()?;
        self.recv(|frame| Ok(frame.decode::<ApiVersionsResponse>()?))
    }

    /// The versions negotiated with the broker.
    #[must_use]
    pub fn versions(&self) -> &Negotiated {
        &self.versions
    }

    /// The broker's ApiVersions answer.
    #[must_use]
    pub fn broker_versions(&self) -> &ApiVersionsResponse {
        &self.broker
    }

    /// The transports, to inspect ring sizes.
    #[must_use]
    pub fn transport(&self) -> &Duplex<TcpStream, TcpStream> {
        &self.io
    }

    /// Requests sent and not yet answered.
    #[must_use]
    pub fn in_flight(&self) -> usize {
        self.correlator.in_flight()
    }

    /// Queues `request` at the negotiated version (sent at the next [`flush`](Self::flush)).
    pub fn send<Q: Request>(&mut self, request: &Q) -> Result<Sent, ClientError> {
        let version = self
            .versions
            .version(Q::API_KEY)
            .ok_or(ClientError::UnsupportedApi(Q::API_KEY))?;
        self.send_at(request, version)
    }

    fn send_at<Q: Request>(&mut self, request: &Q, version: i16) -> Result<Sent, ClientError> {
        let len = self.correlator.request_len(request, version)?;
        let span = self.io.tx.reserve(len)?;
        let sent = self.correlator.encode(request, version, span)?;
        self.io.tx.commit(sent.len);
        Ok(sent)
    }

    /// Sends everything queued.
    pub fn flush(&mut self) -> Result<(), ClientError> {
        Ok(self.io.tx.flush()?)
    }

    /// Waits for the oldest response in flight and hands it, borrowed from the receive ring,
    /// to `handle`; it is consumed when `handle` returns.
    pub fn recv<T>(
        &mut self,
        handle: impl FnOnce(ResponseFrame<'_>) -> Result<T, ClientError>,
    ) -> Result<T, ClientError> {
        recv(&mut self.correlator, &mut self.io.rx, handle)
    }

    /// Sends one request and decodes its response with `handle`.
    pub fn call<Q: Request, T>(
        &mut self,
        request: &Q,
        handle: impl FnOnce(ResponseFrame<'_>) -> Result<T, ClientError>,
    ) -> Result<T, ClientError> {
        self.send(request)?;
        self.flush()?;
        self.recv(handle)
    }

    /// Creates a topic; an existing one is `TOPIC_ALREADY_EXISTS`.
    pub fn create_topic(&mut self, topic: NewTopic<'_>) -> Result<(), ClientError> {
        let request = CreateTopicsRequest {
            topics: &[topic],
            timeout_ms: 30_000,
            validate_only: false,
        };
        self.call(&request, |frame| {
            let response = frame.decode::<CreateTopicsResponse<'_>>()?;
            response
                .topics
                .iter()
                .try_for_each(|t| t.error_code.check())
                .map_err(|code| ClientError::Kafka {
                    api: ApiKey::CreateTopics,
                    code,
                })
        })
    }

    /// Metadata for `topics` (`None`: all), passed to `handle` borrowed.
    pub fn metadata<T>(
        &mut self,
        topics: Option<&[&str]>,
        handle: impl FnOnce(MetadataResponse<'_>) -> T,
    ) -> Result<T, ClientError> {
        let request = MetadataRequest {
            topics,
            allow_auto_topic_creation: false,
        };
        self.call(&request, |frame| Ok(handle(frame.decode()?)))
    }

    /// Produces encoded batches to one partition. Returns the base offset the broker gave them,
    /// or `None` with [`Acks::None`] (no response comes).
    pub fn produce(
        &mut self,
        topic: &str,
        partition: i32,
        batches: &[u8],
        acks: Acks,
    ) -> Result<Option<i64>, ClientError> {
        let partitions = [ProducePartition {
            index: partition,
            records: batches,
        }];
        let request = ProduceRequest {
            transactional_id: None,
            acks,
            timeout_ms: 30_000,
            topics: &[ProduceTopic {
                name: topic,
                partitions: &partitions,
            }],
        };
        let sent = self.send(&request)?;
        self.flush()?;
        if !sent.expects_response {
            return Ok(None);
        }
        self.recv(|frame| {
            let response = frame.decode::<ProduceResponse<'_>>()?;
            let p = response
                .topics
                .iter()
                .flat_map(|t| &t.partitions)
                .find(|p| p.index == partition)
                .ok_or(ClientError::MissingPartition)?;
            p.error_code.check().map_err(|code| ClientError::Kafka {
                api: ApiKey::Produce,
                code,
            })?;
            Ok(Some(p.base_offset))
        })
    }

    /// Fetches from `offset` in one partition and calls `on_record` for each data record at or
    /// after it, borrowed from the receive ring (or, for compressed batches, a scratch buffer).
    pub fn fetch(
        &mut self,
        topic: &str,
        partition: i32,
        offset: i64,
        max_bytes: i32,
        max_wait_ms: i32,
        mut on_record: impl FnMut(Record<'_>),
    ) -> Result<Walk, ClientError> {
        let partitions = [FetchPartition {
            partition,
            fetch_offset: offset,
            partition_max_bytes: max_bytes,
        }];
        let request = FetchRequest {
            max_wait_ms,
            min_bytes: 1,
            max_bytes,
            isolation_level: 0,
            topics: &[FetchTopic {
                name: topic,
                partitions: &partitions,
            }],
        };
        self.send(&request)?;
        self.flush()?;
        let (limits, scratch) = (self.limits, &mut self.scratch);
        // The fields one by one: the handler needs `scratch` while the frame borrows the ring.
        recv(&mut self.correlator, &mut self.io.rx, |frame| {
            walk_fetch(frame, partition, offset, scratch, &limits, &mut on_record)
        })
    }

    /// The offset for `timestamp` ([`crate::api::list_offsets::EARLIEST`], `LATEST`, or ms).
    pub fn list_offset(
        &mut self,
        topic: &str,
        partition: i32,
        timestamp: i64,
    ) -> Result<i64, ClientError> {
        let partitions = [ListOffsetsPartition {
            partition_index: partition,
            timestamp,
        }];
        let request = ListOffsetsRequest {
            isolation_level: 0,
            topics: &[ListOffsetsTopic {
                name: topic,
                partitions: &partitions,
            }],
        };
        self.call(&request, |frame| {
            let response = frame.decode::<ListOffsetsResponse<'_>>()?;
            let p = response
                .topics
                .iter()
                .flat_map(|t| &t.partitions)
                .find(|p| p.partition_index == partition)
                .ok_or(ClientError::MissingPartition)?;
            p.error_code.check().map_err(|code| ClientError::Kafka {
                api: ApiKey::ListOffsets,
                code,
            })?;
            Ok(p.offset)
        })
    }
}

/// Waits for the oldest response in flight, growing the ring for a large one, and hands it to
/// `handle` before consuming it.
fn recv<T>(
    correlator: &mut Correlator,
    rx: &mut RecvTransport<TcpStream>,
    handle: impl FnOnce(ResponseFrame<'_>) -> Result<T, ClientError>,
) -> Result<T, ClientError> {
    loop {
        let at_least = match correlator.parse_response(rx.data())? {
            Status::Complete(frame, consumed) => {
                let out = handle(frame);
                rx.consume(consumed);
                return out;
            }
            Status::Partial { at_least } => at_least,
        };
        let buffered = rx.data().len();
        if rx.fill(at_least.max(buffered + 1))? == 0 {
            return Err(ClientError::Closed { buffered });
        }
    }
}

fn walk_fetch(
    frame: ResponseFrame<'_>,
    partition: i32,
    offset: i64,
    scratch: &mut Vec<u8>,
    limits: &Limits,
    on_record: &mut impl FnMut(Record<'_>),
) -> Result<Walk, ClientError> {
    let response = frame.decode::<FetchResponse<'_>>()?;
    let fetch_error = |code| ClientError::Kafka {
        api: ApiKey::Fetch,
        code,
    };
    response.error_code.check().map_err(fetch_error)?;
    let p = response
        .topics
        .iter()
        .flat_map(|t| &t.partitions)
        .find(|p| p.partition_index == partition)
        .ok_or(ClientError::MissingPartition)?;
    p.error_code.check().map_err(fetch_error)?;
    Ok(walk(p.records, offset, scratch, limits, |_, record| {
        on_record(record)
    })?)
}
