//! One broker connection over the tokio driver: requests encoded straight into the send ring,
//! responses parsed where they landed in the receive ring, many requests in flight.

use std::sync::Arc;
use std::time::Duration;

use ringwire_io::tokio::{AsyncRecvTransport, AsyncSendTransport};
use ringwire_io::{RingConfig, TransportConfig, TransportError};
use ringwire_kafka::api::add_offsets_to_txn::{AddOffsetsToTxnRequest, AddOffsetsToTxnResponse};
use ringwire_kafka::api::add_partitions_to_txn::{
    AddPartitionsToTxnRequest, AddPartitionsToTxnResponse, AddPartitionsToTxnTopic,
};
use ringwire_kafka::api::api_versions::{ApiVersionsRequest, ApiVersionsResponse, Negotiated};
use ringwire_kafka::api::create_partitions::{
    CreatePartitionsRequest, CreatePartitionsResponse, NewPartitions,
};
use ringwire_kafka::api::create_topics::{CreateTopicsRequest, CreateTopicsResponse, NewTopic};
use ringwire_kafka::api::delete_topics::{DeleteTopicsRequest, DeleteTopicsResponse};
use ringwire_kafka::api::describe_configs::{
    ConfigEntry, DescribeConfigsRequest, DescribeConfigsResource, DescribeConfigsResponse,
    ResourceType,
};
use ringwire_kafka::api::end_txn::{EndTxnRequest, EndTxnResponse};
use ringwire_kafka::api::fetch::{FetchPartition, FetchRequest, FetchResponse, FetchTopic};
use ringwire_kafka::api::find_coordinator::{
    self, FindCoordinatorRequest, FindCoordinatorResponse,
};
use ringwire_kafka::api::incremental_alter_configs::{
    AlterConfigsResource, AlterableConfig, IncrementalAlterConfigsRequest,
    IncrementalAlterConfigsResponse,
};
use ringwire_kafka::api::init_producer_id::{InitProducerIdRequest, InitProducerIdResponse};
use ringwire_kafka::api::list_offsets::{
    ListOffsetsPartition, ListOffsetsRequest, ListOffsetsResponse, ListOffsetsTopic,
};
use ringwire_kafka::api::metadata::{MetadataRequest, MetadataResponse};
use ringwire_kafka::api::offset_commit::{OffsetCommitRequest, OffsetCommitResponse};
use ringwire_kafka::api::offset_fetch::{
    OffsetFetchRequest, OffsetFetchResponse, OffsetFetchTopic,
};
use ringwire_kafka::api::produce::{
    Acks, ProducePartition, ProduceRequest, ProduceResponse, ProduceTopic,
};
use ringwire_kafka::api::txn_offset_commit::{TxnOffsetCommitRequest, TxnOffsetCommitResponse};
use ringwire_kafka::record::{walk, Record, Walk};
use ringwire_kafka::{ApiKey, Correlator, ErrorCode, Limits, Request, ResponseFrame, Sent};
use ringwire_tls::{MaybeTls, TlsConnector, TlsError};
use ringwire_wire::Status;
use tokio::net::TcpStream;

use crate::sasl::SaslSession;
use crate::{ClientError, Sasl};

/// Receive ring size: Fetch responses are large, and untouched pages cost nothing.
pub const DEFAULT_RX_RING: usize = 16 * 1024 * 1024;
/// Receive ring bound: a response up to this size grows the ring instead of failing.
pub const DEFAULT_RX_RING_MAX: usize = 64 * 1024 * 1024;

/// A broker connection's stream: TCP, or TLS over it.
pub(crate) type Socket = MaybeTls<TcpStream>;

/// Connection settings.
#[derive(Debug, Clone)]
pub struct ClientConfig {
    /// Sent in every request header.
    pub client_id: String,
    /// Ring sizes; `transport.rx.max_capacity` bounds the largest response.
    pub transport: TransportConfig,
    /// Decoding bounds.
    pub limits: Limits,
    /// How long connecting may take, version negotiation included.
    pub connect_timeout: Duration,
    /// How long a one-shot call (metadata, `list_offset`, `fetch`, ...) or a consumer's Fetch
    /// (on top of its `max_wait`) waits for its answer; past it the connection counts as
    /// broken. The producer's Produce requests have
    /// [`ProducerConfig::request_timeout`](crate::ProducerConfig::request_timeout).
    pub request_timeout: Duration,
    /// TLS to every broker (Kafka's `security.protocol=SSL`): the bootstrap brokers and those
    /// the cluster names, each certificate checked against the host connected to (an IP
    /// address too) as the connector's settings say ([`with_tls`](Self::with_tls) makes one).
    /// The handshake counts in the connect timeout. `None`, the default: plaintext.
    pub tls: Option<Arc<TlsConnector>>,
    /// SASL authentication on every connection, after TLS if any (Kafka's `SASL_SSL` or
    /// `SASL_PLAINTEXT`), within the connect timeout. `None`, the default: none.
    pub sasl: Option<Sasl>,
}

impl ClientConfig {
    /// This configuration with TLS to every broker, as `tls` says (its trusted roots,
    /// certificate checks or not, and the client certificate for brokers that require one:
    /// [`ringwire_tls::ClientConfig::identity`], Kafka's `ssl.client.auth=required`).
    ///
    /// # Errors
    ///
    /// [`ClientError::TlsConfig`]: `tls` cannot make a connector (a root that does not parse).
    pub fn with_tls(self, tls: &ringwire_tls::ClientConfig) -> Result<Self, ClientError> {
        let connector = TlsConnector::new(tls).map_err(ClientError::TlsConfig)?;
        Ok(ClientConfig {
            tls: Some(Arc::new(connector)),
            ..self
        })
    }
}

/// A TLS 1.3 broker checks the client's certificate after the client's handshake is done,
/// so its refusal comes with the first answer: reported as a failed handshake would be.
fn refused_by_tls(e: ClientError, addr: &str) -> ClientError {
    match e {
        ClientError::Transport(TransportError::Io(io)) => match io.downcast::<TlsError>() {
            Ok(source) => ClientError::Tls {
                addr: addr.to_owned(),
                source,
            },
            Err(io) => ClientError::Transport(TransportError::Io(io)),
        },
        e => e,
    }
}

/// The host of a `HOST:PORT` address (`[::1]:9093` too): the name a certificate must carry.
fn host_of(addr: &str) -> &str {
    let host = addr.rsplit_once(':').map_or(addr, |(host, _)| host);
    host.strip_prefix('[')
        .and_then(|h| h.strip_suffix(']'))
        .unwrap_or(host)
}

impl Default for ClientConfig {
    fn default() -> Self {
        let rx = RingConfig::with_capacity(DEFAULT_RX_RING).max_capacity(DEFAULT_RX_RING_MAX);
        let tx = RingConfig::with_capacity(1024 * 1024).max_capacity(DEFAULT_RX_RING_MAX);
        ClientConfig {
            client_id: "ringwire".into(),
            transport: TransportConfig { rx, tx },
            limits: Limits::default(),
            connect_timeout: Duration::from_secs(10),
            request_timeout: Duration::from_secs(30),
            tls: None,
            sasl: None,
        }
    }
}

/// Which records of transactional producers a reader sees.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Isolation {
    /// Every record, aborted transactions' included.
    ReadUncommitted,
    /// Only committed records: the broker answers up to the last stable offset (the first
    /// record of a transaction still open), and the batches of aborted transactions are
    /// skipped.
    ReadCommitted,
}

impl Isolation {
    /// The wire value (Fetch and ListOffsets `isolation_level`).
    pub(crate) fn level(self) -> i8 {
        match self {
            Isolation::ReadUncommitted => 0,
            Isolation::ReadCommitted => 1,
        }
    }
}

/// One broker connection with negotiated API versions.
///
/// [`send`](Self::send) queues a request in the send ring, [`flush`](Self::flush) sends what is
/// queued, and [`recv`](Self::recv) hands the oldest response, borrowed from the receive ring,
/// to a closure: as many requests may be in flight as the caller likes (Kafka answers them in
/// order). The other calls send one request and wait for its answer; one dropped while it
/// waits (a timeout around it) has its answer dropped when it comes, and one dropped while
/// [`produce`](Self::produce) or [`send_spliced`](Self::send_spliced) is halfway through
/// sending a batch from the caller's buffer leaves the connection refusing every later call
/// ([`ClientError::Broken`]): connect again. So does a one-shot call left unanswered past
/// [`ClientConfig::request_timeout`] (it fails with [`ClientError::RequestTimeout`]).
#[derive(Debug)]
pub struct Connection {
    pub(crate) rx: AsyncRecvTransport<Arc<Socket>>,
    pub(crate) tx: AsyncSendTransport<Arc<Socket>>,
    pub(crate) correlator: Correlator,
    versions: Negotiated,
    broker: ApiVersionsResponse,
    pub(crate) limits: Limits,
    pub(crate) scratch: Vec<u8>,
    /// Where [`send_spliced`](Self::send_spliced) puts each payload (kept for its capacity).
    splices: Vec<usize>,
    /// Why nothing more can be sent or matched on this connection, once something broke
    /// it: a spliced send stopped midway (part of a request may be on the wire), or a
    /// request went unanswered past its timeout.
    broken: Option<&'static str>,
    /// How long a one-shot call waits for its answer.
    request_timeout: Duration,
    /// The request a one-shot call (`call`, `produce`, `fetch`, ...) waits to be answered;
    /// still set when the next receive starts, that call was dropped.
    awaiting: Option<i32>,
    /// Requests of dropped one-shot calls: their answers are read and dropped.
    abandoned: Vec<i32>,
    /// The SASL session, when the broker ends it: renewed before requests.
    pub(crate) session: Option<SaslSession>,
}

impl Connection {
    /// Connects, then negotiates versions with ApiVersions (at this crate's newest version,
    /// falling back to v0 when the broker says it does not serve that one), all within
    /// `config.connect_timeout`. A peer that answers with no Kafka response is
    /// [`ClientError::NotKafka`]; one that does not answer, [`ClientError::ApiVersionsTimeout`].
    pub async fn connect(addr: &str, config: &ClientConfig) -> Result<Self, ClientError> {
        let limit = config.connect_timeout;
        let deadline = tokio::time::Instant::now() + limit;
        let tcp = tokio::time::timeout_at(deadline, TcpStream::connect(addr))
            .await
            .map_err(|_| ClientError::ConnectTimeout(limit))?
            .map_err(TransportError::from)?;
        tcp.set_nodelay(true).map_err(TransportError::from)?;
        let stream = match &config.tls {
            None => MaybeTls::Plain(tcp),
            Some(connector) => {
                let handshake = connector.connect(host_of(addr), tcp);
                let tls = tokio::time::timeout_at(deadline, handshake)
                    .await
                    .map_err(|_| ClientError::ConnectTimeout(limit))?
                    .map_err(|source| ClientError::Tls {
                        addr: addr.to_owned(),
                        source,
                    })?;
                MaybeTls::Tls(Box::new(tls))
            }
        };
        let mut conn =
            match tokio::time::timeout_at(deadline, Self::negotiate(stream, addr, config)).await {
                // The negotiation's own wait is bounded by the same limit.
                Err(_) | Ok(Err(ClientError::RequestTimeout(_))) => {
                    return Err(ClientError::ApiVersionsTimeout {
                        addr: addr.to_owned(),
                        after: limit,
                    })
                }
                Ok(negotiated) => negotiated.map_err(|e| refused_by_tls(e, addr))?,
            };
        if let Some(sasl) = &config.sasl {
            tokio::time::timeout_at(deadline, conn.authenticate(sasl))
                .await
                .map_err(|_| ClientError::ConnectTimeout(limit))??;
        }
        Ok(conn)
    }

    async fn negotiate(
        stream: Socket,
        addr: &str,
        config: &ClientConfig,
    ) -> Result<Self, ClientError> {
        let stream = Arc::new(stream);
        let mut conn = Connection {
            rx: AsyncRecvTransport::new(config.transport, Arc::clone(&stream))?,
            tx: AsyncSendTransport::new(config.transport, stream)?,
            correlator: Correlator::new(Some(&config.client_id), &config.limits),
            versions: Negotiated::default(),
            broker: ApiVersionsResponse {
                error_code: ErrorCode::NONE,
                api_keys: Vec::new(),
                throttle_time_ms: 0,
            },
            limits: config.limits,
            scratch: Vec::new(),
            splices: Vec::new(),
            broken: None,
            request_timeout: config.connect_timeout,
            awaiting: None,
            abandoned: Vec::new(),
            session: None,
        };
        let mut broker = conn
            .api_versions(addr, *ApiKey::ApiVersions.versions().end())
            .await?;
        if broker.error_code == ErrorCode::UNSUPPORTED_VERSION {
            broker = conn.api_versions(addr, 0).await?;
        }
        ClientError::check(ApiKey::ApiVersions, broker.error_code)?;
        conn.versions = Negotiated::new(&broker.api_keys);
        conn.broker = broker;
        conn.request_timeout = config.request_timeout;
        Ok(conn)
    }

    /// Asks the peer at `addr` for its API versions. Whatever does not frame or decode as the
    /// answer means the peer is no Kafka broker (an HTTP server's "HTTP" reads as a size
    /// prefix of 1.2 GB): [`ClientError::NotKafka`] with the first bytes it sent.
    async fn api_versions(
        &mut self,
        addr: &str,
        version: i16,
    ) -> Result<ApiVersionsResponse, ClientError> {
        let sent = self
            .send_at(&ApiVersionsRequest::default(), version)
            .await?;
        let answer = self
            .answer_len(sent, self.request_timeout)
            .await
            .and_then(|len| {
                let response = self.frame(len)?.decode::<ApiVersionsResponse>()?;
                Ok((response, len))
            });
        match answer {
            Ok((response, len)) => {
                self.rx.consume(len);
                Ok(response)
            }
            Err(
                ClientError::ResponseOverLimit { .. }
                | ClientError::ResponseTooLarge { .. }
                | ClientError::Decode(_)
                | ClientError::Closed { buffered: 1.. },
            ) => {
                // Not consumed: the ring still holds what came instead of an answer.
                let data = self.rx.data();
                Err(ClientError::NotKafka {
                    addr: addr.to_owned(),
                    first_bytes: data[..data.len().min(16)].to_vec(),
                })
            }
            Err(e) => Err(e),
        }
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

    /// The receive ring's capacity now (it grows for a response larger than it).
    #[must_use]
    pub fn rx_capacity(&self) -> usize {
        self.rx.ring().capacity()
    }

    /// Requests sent and not yet answered.
    #[must_use]
    pub fn in_flight(&self) -> usize {
        self.correlator.in_flight()
    }

    /// Queues `request` at the negotiated version (sent at the next [`flush`](Self::flush), or
    /// earlier when the send ring fills).
    pub async fn send<Q: Request>(&mut self, request: &Q) -> Result<Sent, ClientError> {
        let version = self.version::<Q>()?;
        self.send_at(request, version).await
    }

    /// The version negotiated for `Q`'s API.
    fn version<Q: Request>(&self) -> Result<i16, ClientError> {
        self.versions
            .version(Q::API_KEY)
            .ok_or(ClientError::UnsupportedApi(Q::API_KEY))
    }

    async fn send_at<Q: Request>(
        &mut self,
        request: &Q,
        version: i16,
    ) -> Result<Sent, ClientError> {
        self.settle();
        self.intact()?;
        self.renew_session().await?;
        queue(&mut self.tx, &mut self.correlator, request, version).await
    }

    /// Sends `request` (with anything queued before it) at once, its `records` fields' payloads
    /// (`records`, in the order the request holds them) from where they lie: record batches
    /// are not copied into the send ring.
    pub async fn send_spliced<Q: Request>(
        &mut self,
        request: &Q,
        records: &[&[u8]],
    ) -> Result<Sent, ClientError> {
        self.settle();
        self.intact()?;
        self.renew_session().await?;
        let version = self.version::<Q>()?;
        let len = self.correlator.spliced_len(request, version)?;
        let span = self.tx.reserve(len).await?;
        self.splices.clear();
        let sent = self
            .correlator
            .encode_spliced(request, version, span, &mut self.splices)?;
        self.tx.commit(sent.len);
        // Offsets into the queued bytes, which may hold earlier requests.
        let before = self.tx.pending() - sent.len;
        self.splices.iter_mut().for_each(|at| *at += before);
        // Not cancel-safe: the batches are the caller's, so a send dropped midway cannot
        // leave the rest queued. The connection is marked broken until it completes.
        self.broken = Some("a send stopped midway (dropped or failed)");
        self.tx.send_spliced(&self.splices, records).await?;
        self.broken = None;
        Ok(sent)
    }

    /// An error once a spliced send stopped midway.
    fn intact(&self) -> Result<(), ClientError> {
        if let Some(why) = self.broken {
            return Err(ClientError::Broken(format!("{why}; connect again")));
        }
        Ok(())
    }

    /// Sends everything queued.
    pub async fn flush(&mut self) -> Result<(), ClientError> {
        self.settle();
        self.intact()?;
        Ok(self.tx.flush().await?)
    }

    /// Waits for the oldest response in flight and hands it, borrowed from the receive ring,
    /// to `handle`; it is consumed when `handle` returns. Cancel-safe: a wait dropped midway
    /// loses nothing (what arrived stays in the ring).
    ///
    /// Answers to the requests of one-shot calls (`call`, `produce`, `fetch`, ...) that were
    /// dropped before their answer came are read and dropped on the way, here and in those
    /// calls, so a call cut short by a timeout never hands its answer to the next one. With
    /// no request in flight that gets an answer, fails at once with
    /// [`ClientError::NoResponseAwaited`].
    pub async fn recv<T>(
        &mut self,
        handle: impl FnOnce(ResponseFrame<'_>) -> Result<T, ClientError>,
    ) -> Result<T, ClientError> {
        self.settle();
        let consumed = self.next_frame().await?;
        let frame = self.frame(consumed)?;
        let out = handle(frame);
        self.rx.consume(consumed);
        out
    }

    /// Flushes, then waits for the answer to `sent` (the request a one-shot call just queued)
    /// and hands it to `handle`. Dropped midway, the call's answer is dropped when it comes.
    async fn answer<T>(
        &mut self,
        sent: Sent,
        limit: Duration,
        handle: impl FnOnce(ResponseFrame<'_>) -> Result<T, ClientError>,
    ) -> Result<T, ClientError> {
        let len = self.answer_len(sent, limit).await?;
        let out = self.frame(len).and_then(handle);
        self.rx.consume(len);
        out
    }

    /// [`answer`](Self::answer)'s wait, up to `limit`: the length of the answer to `sent`, whole
    /// at the front of the receive ring.
    async fn answer_len(&mut self, sent: Sent, limit: Duration) -> Result<usize, ClientError> {
        self.awaiting = Some(sent.correlation_id);
        self.intact()?;
        let Ok(len) = tokio::time::timeout(limit, self.flush_and_wait()).await else {
            self.broken = Some("a request went unanswered past its timeout");
            return Err(ClientError::RequestTimeout(limit));
        };
        let len = len?;
        self.awaiting = None;
        Ok(len)
    }

    /// Sends what is queued, then waits for the next whole answer: its length.
    async fn flush_and_wait(&mut self) -> Result<usize, ClientError> {
        self.tx.flush().await?;
        self.next_frame().await
    }

    /// Notes that a one-shot call still awaiting its answer was dropped (a call on `&mut
    /// self` starts only once the last one ended): its answer is dropped when it comes.
    fn settle(&mut self) {
        if let Some(dropped) = self.awaiting.take() {
            self.abandoned.push(dropped);
        }
    }

    /// Waits until the oldest response in flight that someone waits for is whole in the
    /// receive ring: its length. [`frame`](Self::frame) then reads it, and `rx.consume` drops
    /// it. Answers to dropped one-shot calls are read and dropped first.
    pub(crate) async fn next_frame(&mut self) -> Result<usize, ClientError> {
        loop {
            let len = self.whole_frame().await?;
            let Some(pos) = self
                .correlator
                .next_answer()
                .and_then(|id| self.abandoned.iter().position(|&a| a == id))
            else {
                return Ok(len);
            };
            self.abandoned.swap_remove(pos);
            self.frame(len)?;
            self.rx.consume(len);
        }
    }

    /// Waits until the oldest response in flight is whole in the receive ring: its length.
    async fn whole_frame(&mut self) -> Result<usize, ClientError> {
        self.intact()?;
        if self.correlator.in_flight() == 0 {
            return Err(ClientError::NoResponseAwaited);
        }
        loop {
            let at_least = match self.correlator.frame_len(self.rx.data())? {
                Status::Complete((), consumed) => return Ok(consumed),
                Status::Partial { at_least } => at_least,
            };
            let buffered = self.rx.data().len();
            if self.rx.fill(at_least.max(buffered + 1)).await? == 0 {
                return Err(ClientError::Closed { buffered });
            }
        }
    }

    /// The whole response [`next_frame`](Self::next_frame) waited for, its header matched to
    /// the oldest request in flight.
    pub(crate) fn frame(&mut self, len: usize) -> Result<ResponseFrame<'_>, ClientError> {
        match self.correlator.parse_response(&self.rx.data()[..len])? {
            Status::Complete(frame, _) => Ok(frame),
            Status::Partial { .. } => unreachable!("next_frame saw {len} bytes whole"),
        }
    }

    /// Sends one request and decodes its response with `handle`. A request that gets no
    /// response (a Produce with acks = 0) is refused unsent with
    /// [`ClientError::NoResponseAwaited`]: queue it with [`send`](Self::send) instead.
    pub async fn call<Q: Request, T>(
        &mut self,
        request: &Q,
        handle: impl FnOnce(ResponseFrame<'_>) -> Result<T, ClientError>,
    ) -> Result<T, ClientError> {
        self.call_within(request, self.request_timeout, handle)
            .await
    }

    /// [`call`](Self::call), waiting up to `limit` for the answer: for a request the broker
    /// holds on purpose (a JoinGroup waits for the group's other members).
    pub(crate) async fn call_within<Q: Request, T>(
        &mut self,
        request: &Q,
        limit: Duration,
        handle: impl FnOnce(ResponseFrame<'_>) -> Result<T, ClientError>,
    ) -> Result<T, ClientError> {
        if !request.expects_response() {
            return Err(ClientError::NoResponseAwaited);
        }
        let sent = self.send(request).await?;
        self.answer(sent, limit, handle).await
    }

    /// Creates a topic; an existing one is `TOPIC_ALREADY_EXISTS`.
    pub async fn create_topic(&mut self, topic: NewTopic<'_>) -> Result<(), ClientError> {
        let request = CreateTopicsRequest {
            topics: &[topic],
            timeout_ms: 30_000,
            validate_only: false,
        };
        self.call(&request, |frame| {
            let response = frame.decode::<CreateTopicsResponse<'_>>()?;
            response.topics.iter().try_for_each(|t| {
                ClientError::check_said(ApiKey::CreateTopics, t.error_code, t.error_message)
            })
        })
        .await
    }

    /// Deletes a topic; an unknown one is `UNKNOWN_TOPIC_OR_PARTITION`.
    pub async fn delete_topic(&mut self, name: &str) -> Result<(), ClientError> {
        let request = DeleteTopicsRequest {
            topic_names: &[name],
            timeout_ms: 30_000,
        };
        self.call(&request, |frame| {
            let response = frame.decode::<DeleteTopicsResponse<'_>>()?;
            response.topics.iter().try_for_each(|t| {
                ClientError::check_said(ApiKey::DeleteTopics, t.error_code, t.error_message)
            })
        })
        .await
    }

    /// Gives `topic` `count` partitions in all (more than it has: `INVALID_PARTITIONS`
    /// otherwise), the controller placing the new ones; with `validate_only`, only checks
    /// that it would. Records with keys then hash to other partitions than before.
    pub async fn create_partitions(
        &mut self,
        topic: &str,
        count: i32,
        validate_only: bool,
    ) -> Result<(), ClientError> {
        let request = CreatePartitionsRequest {
            topics: &[NewPartitions {
                name: topic,
                count,
                assignments: None,
            }],
            timeout_ms: 30_000,
            validate_only,
        };
        self.call(&request, |frame| {
            let response = frame.decode::<CreatePartitionsResponse<'_>>()?;
            response.results.iter().try_for_each(|t| {
                ClientError::check_said(ApiKey::CreatePartitions, t.error_code, t.error_message)
            })
        })
        .await
    }

    /// The configuration of a resource (a topic, by name, from any broker; a broker, by id,
    /// from that broker), passed to `handle` borrowed: every entry, with where its value
    /// comes from ([`ConfigEntry::config_source`]).
    pub async fn describe_configs<T>(
        &mut self,
        resource_type: ResourceType,
        name: &str,
        handle: impl FnOnce(&[ConfigEntry<'_>]) -> T,
    ) -> Result<T, ClientError> {
        let request = DescribeConfigsRequest {
            resources: &[DescribeConfigsResource {
                resource_type,
                resource_name: name,
                configuration_keys: None,
            }],
            include_synonyms: false,
            include_documentation: false,
        };
        self.call(&request, |frame| {
            let response = frame.decode::<DescribeConfigsResponse<'_>>()?;
            let result = response.results.first();
            let result = result.ok_or(ClientError::MissingResource)?;
            let (code, message) = (result.error_code, result.error_message);
            ClientError::check_said(ApiKey::DescribeConfigs, code, message)?;
            Ok(handle(&result.configs))
        })
        .await
    }

    /// Changes single entries of a resource's configuration (set, delete, append to or
    /// subtract from a list), the others left as they are (`INVALID_CONFIG` for an unknown
    /// entry or a value it does not take, and then nothing changes); with `validate_only`,
    /// only checks that it would.
    pub async fn alter_configs(
        &mut self,
        resource_type: ResourceType,
        name: &str,
        changes: &[AlterableConfig<'_>],
        validate_only: bool,
    ) -> Result<(), ClientError> {
        let request = IncrementalAlterConfigsRequest {
            resources: &[AlterConfigsResource {
                resource_type,
                resource_name: name,
                configs: changes,
            }],
            validate_only,
        };
        self.call(&request, |frame| {
            let response = frame.decode::<IncrementalAlterConfigsResponse<'_>>()?;
            response.responses.iter().try_for_each(|r| {
                let api = ApiKey::IncrementalAlterConfigs;
                ClientError::check_said(api, r.error_code, r.error_message)
            })
        })
        .await
    }

    /// A new producer id and epoch, for an idempotent producer's batches.
    pub async fn init_producer_id(&mut self) -> Result<(i64, i16), ClientError> {
        self.init_producer_id_with(&InitProducerIdRequest::default())
            .await
    }

    /// The producer id and epoch of transactional id `id` (this broker must be its
    /// transaction coordinator: [`find_coordinator`](Self::find_coordinator) with key type
    /// 1): the id it had, its epoch bumped (`current`, or the coordinator's record of it),
    /// which fences any producer that had it before and aborts its open transaction.
    /// `CONCURRENT_TRANSACTIONS` (retriable) while a transaction of the id is still ending.
    pub async fn init_transactional_producer_id(
        &mut self,
        id: &str,
        timeout: std::time::Duration,
        current: Option<(i64, i16)>,
    ) -> Result<(i64, i16), ClientError> {
        let (producer_id, producer_epoch) = current.unwrap_or((-1, -1));
        let request = InitProducerIdRequest {
            transactional_id: Some(id),
            transaction_timeout_ms: i32::try_from(timeout.as_millis()).unwrap_or(i32::MAX),
            producer_id,
            producer_epoch,
        };
        self.init_producer_id_with(&request).await
    }

    async fn init_producer_id_with(
        &mut self,
        request: &InitProducerIdRequest<'_>,
    ) -> Result<(i64, i16), ClientError> {
        self.call(request, |frame| {
            let response = frame.decode::<InitProducerIdResponse>()?;
            ClientError::check(ApiKey::InitProducerId, response.error_code)?;
            Ok((response.producer_id, response.producer_epoch))
        })
        .await
    }

    /// Metadata for `topics` (`None`: all), passed to `handle` borrowed.
    pub async fn metadata<T>(
        &mut self,
        topics: Option<&[&str]>,
        handle: impl FnOnce(MetadataResponse<'_>) -> T,
    ) -> Result<T, ClientError> {
        let request = MetadataRequest {
            topics,
            allow_auto_topic_creation: false,
        };
        self.call(&request, |frame| Ok(handle(frame.decode()?)))
            .await
    }

    /// Produces encoded batches to one partition (sent from where they lie, not copied).
    /// Returns the base offset the broker gave them, or `None` with [`Acks::None`] (no
    /// response comes).
    pub async fn produce(
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
        let sent = self.send_spliced(&request, &[batches]).await?;
        if !sent.expects_response {
            return Ok(None);
        }
        self.answer(sent, self.request_timeout, |frame| {
            let response = frame.decode::<ProduceResponse<'_>>()?;
            let p = one_partition(
                &response.topics,
                |t| &t.partitions,
                |p| p.index == partition,
            )?;
            ClientError::check_produce(p)?;
            Ok(Some(p.base_offset))
        })
        .await
    }

    /// Fetches from `offset` in one partition and calls `on_record` for each data record at or
    /// after it, borrowed from the receive ring (or, for compressed batches, a scratch buffer).
    pub async fn fetch(
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
        let sent = self.send(&request).await?;
        let (limits, mut scratch) = (self.limits, std::mem::take(&mut self.scratch));
        let limit = self.request_timeout;
        let walked = self
            .answer(sent, limit, |frame| {
                let response = frame.decode::<FetchResponse<'_>>()?;
                ClientError::check(ApiKey::Fetch, response.error_code)?;
                let p = one_partition(
                    &response.topics,
                    |t| &t.partitions,
                    |p| p.partition_index == partition,
                )?;
                ClientError::check(ApiKey::Fetch, p.error_code)?;
                Ok(walk(
                    p.records,
                    offset,
                    &mut scratch,
                    &limits,
                    |_, record| on_record(record),
                )?)
            })
            .await;
        self.scratch = scratch;
        walked
    }

    /// The offset for `timestamp` ([`EARLIEST`](ringwire_kafka::api::list_offsets::EARLIEST),
    /// `LATEST`, or ms), read uncommitted: `LATEST` is the end of the log.
    pub async fn list_offset(
        &mut self,
        topic: &str,
        partition: i32,
        timestamp: i64,
    ) -> Result<i64, ClientError> {
        self.list_offset_isolated(topic, partition, timestamp, Isolation::ReadUncommitted)
            .await
    }

    /// [`list_offset`](Self::list_offset) seen with `isolation`: read committed, `LATEST` is the
    /// last stable offset.
    pub async fn list_offset_isolated(
        &mut self,
        topic: &str,
        partition: i32,
        timestamp: i64,
        isolation: Isolation,
    ) -> Result<i64, ClientError> {
        let partitions = [ListOffsetsPartition {
            partition_index: partition,
            timestamp,
        }];
        let request = ListOffsetsRequest {
            isolation_level: isolation.level(),
            topics: &[ListOffsetsTopic {
                name: topic,
                partitions: &partitions,
            }],
        };
        self.call(&request, |frame| {
            let response = frame.decode::<ListOffsetsResponse<'_>>()?;
            let p = one_partition(
                &response.topics,
                |t| &t.partitions,
                |p| p.partition_index == partition,
            )?;
            ClientError::check(ApiKey::ListOffsets, p.error_code)?;
            Ok(p.offset)
        })
        .await
    }

    /// The coordinator of consumer group `group`, the broker that keeps its committed
    /// offsets: its id and `HOST:PORT`. On a group's first use the cluster answers
    /// `COORDINATOR_NOT_AVAILABLE` (retriable) while it creates its offsets topic.
    pub async fn find_group_coordinator(
        &mut self,
        group: &str,
    ) -> Result<(i32, String), ClientError> {
        self.find_coordinator(group, find_coordinator::GROUP).await
    }

    /// The coordinator of `key`: a consumer group's ([`find_coordinator::GROUP`]) or a
    /// transactional id's ([`find_coordinator::TRANSACTION`]), its id and `HOST:PORT`.
    pub async fn find_coordinator(
        &mut self,
        key: &str,
        key_type: i8,
    ) -> Result<(i32, String), ClientError> {
        let request = FindCoordinatorRequest { key, key_type };
        self.call(&request, |frame| {
            let response = frame.decode::<FindCoordinatorResponse<'_>>()?;
            let Some(c) = response.coordinators.first() else {
                return Err(ClientError::Kafka {
                    api: ApiKey::FindCoordinator,
                    code: ErrorCode::COORDINATOR_NOT_AVAILABLE,
                    message: Some("no coordinator in the answer".into()),
                });
            };
            ClientError::check_said(ApiKey::FindCoordinator, c.error_code, c.error_message)?;
            Ok((c.node_id, format!("{}:{}", c.host, c.port)))
        })
        .await
    }

    /// Adds `topics`' partitions to the open transaction of transactional id `id` (this
    /// broker must be its coordinator), before the first batch to each; the first partition
    /// refused is the error (`CONCURRENT_TRANSACTIONS`, retriable, while the last transaction
    /// is still ending).
    pub async fn add_partitions_to_txn(
        &mut self,
        id: &str,
        (producer_id, producer_epoch): (i64, i16),
        topics: &[AddPartitionsToTxnTopic<'_>],
    ) -> Result<(), ClientError> {
        let request = AddPartitionsToTxnRequest {
            transactional_id: id,
            producer_id,
            producer_epoch,
            topics,
        };
        self.call(&request, |frame| {
            let response = frame.decode::<AddPartitionsToTxnResponse<'_>>()?;
            let mut codes = response.0.topics.iter().flat_map(|t| &t.partitions);
            codes.try_for_each(|p| ClientError::check(ApiKey::AddPartitionsToTxn, p.error_code))
        })
        .await
    }

    /// Tells the transaction coordinator of `id` that its open transaction commits consumer
    /// group `group`'s offsets (sent next to the group's coordinator,
    /// [`txn_offset_commit`](Self::txn_offset_commit)).
    pub async fn add_offsets_to_txn(
        &mut self,
        id: &str,
        (producer_id, producer_epoch): (i64, i16),
        group: &str,
    ) -> Result<(), ClientError> {
        let request = AddOffsetsToTxnRequest {
            transactional_id: id,
            producer_id,
            producer_epoch,
            group_id: group,
        };
        self.call(&request, |frame| {
            let response = frame.decode::<AddOffsetsToTxnResponse>()?;
            ClientError::check(ApiKey::AddOffsetsToTxn, response.error_code)
        })
        .await
    }

    /// Commits consumer offsets as part of a transaction (this broker must be the group's
    /// coordinator); the first partition refused is the error.
    pub async fn txn_offset_commit(
        &mut self,
        request: &TxnOffsetCommitRequest<'_>,
    ) -> Result<(), ClientError> {
        self.call(request, |frame| {
            let response = frame.decode::<TxnOffsetCommitResponse<'_>>()?;
            let mut codes = response.0.topics.iter().flat_map(|t| &t.partitions);
            codes.try_for_each(|p| ClientError::check(ApiKey::TxnOffsetCommit, p.error_code))
        })
        .await
    }

    /// Commits (`commit`) or aborts the open transaction of transactional id `id` (this
    /// broker must be its coordinator).
    pub async fn end_txn(
        &mut self,
        id: &str,
        (producer_id, producer_epoch): (i64, i16),
        commit: bool,
    ) -> Result<(), ClientError> {
        let request = EndTxnRequest {
            transactional_id: id,
            producer_id,
            producer_epoch,
            committed: commit,
        };
        self.call(&request, |frame| {
            let response = frame.decode::<EndTxnResponse>()?;
            ClientError::check(ApiKey::EndTxn, response.error_code)
        })
        .await
    }

    /// Commits consumer offsets ([`OffsetCommitRequest::standalone`] for a consumer that
    /// assigns its partitions itself, or with a member's generation and id). This broker must
    /// be the group's coordinator ([`find_group_coordinator`](Self::find_group_coordinator));
    /// the first partition it refuses is the error (`NOT_COORDINATOR` when it is not, any
    /// more; `ILLEGAL_GENERATION` or `REBALANCE_IN_PROGRESS` for a member that must join
    /// again).
    pub async fn commit_offsets(
        &mut self,
        request: &OffsetCommitRequest<'_>,
    ) -> Result<(), ClientError> {
        self.call(request, |frame| {
            let response = frame.decode::<OffsetCommitResponse<'_>>()?;
            response
                .topics
                .iter()
                .flat_map(|t| &t.partitions)
                .try_for_each(|p| ClientError::check(ApiKey::OffsetCommit, p.error_code))
        })
        .await
    }

    /// The offsets consumer group `group` committed for `partitions` of `topic`, in that
    /// order: `None` where it committed none. Asked of the group's coordinator.
    pub async fn committed_offsets(
        &mut self,
        group: &str,
        topic: &str,
        partitions: &[i32],
    ) -> Result<Vec<Option<i64>>, ClientError> {
        let request = OffsetFetchRequest {
            group_id: group,
            topics: &[OffsetFetchTopic {
                name: topic,
                partition_indexes: partitions,
            }],
            require_stable: false,
        };
        self.call(&request, |frame| {
            let response = frame.decode::<OffsetFetchResponse<'_>>()?;
            ClientError::check(ApiKey::OffsetFetch, response.error_code)?;
            partitions
                .iter()
                .map(|&partition| {
                    let p = one_partition(
                        &response.topics,
                        |t| &t.partitions,
                        |p| p.partition_index == partition,
                    )?;
                    ClientError::check(ApiKey::OffsetFetch, p.error_code)?;
                    Ok((p.committed_offset >= 0).then_some(p.committed_offset))
                })
                .collect()
        })
        .await
    }
}

/// Encodes `request` straight into the send ring: the fields one by one, so that a response
/// borrowed from the receive ring may still be read while the next request goes out.
pub(crate) async fn queue<Q: Request>(
    tx: &mut AsyncSendTransport<Arc<Socket>>,
    correlator: &mut Correlator,
    request: &Q,
    version: i16,
) -> Result<Sent, ClientError> {
    let len = correlator.request_len(request, version)?;
    let span = tx.reserve(len).await?;
    let sent = correlator.encode(request, version, span)?;
    tx.commit(sent.len);
    Ok(sent)
}

/// The entry of the one partition a call asked about, among a response's topics.
fn one_partition<'a, T, P>(
    topics: &'a [T],
    partitions: impl Fn(&'a T) -> &'a Vec<P>,
    is_it: impl Fn(&P) -> bool,
) -> Result<&'a P, ClientError> {
    topics
        .iter()
        .flat_map(partitions)
        .find(|p| is_it(p))
        .ok_or(ClientError::MissingPartition)
}
