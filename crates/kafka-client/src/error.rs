//! Why a client call failed.

use std::fmt;
use std::time::Duration;

use ringwire_io::TransportError;
use ringwire_ring::RingError;

use ringwire_kafka::api::produce::ProducePartitionResponse;
use ringwire_kafka::{ApiKey, DecodeError, EncodeError, ErrorCode};

/// A failed client call.
#[derive(Debug)]
pub enum ClientError {
    /// Connecting, sending or receiving failed.
    Transport(TransportError),
    /// A response larger than the receive ring may grow. Raise
    /// `ClientConfig::transport.rx` ([`RingConfig::max_capacity`](ringwire_io::RingConfig::max_capacity)) or ask for less (Fetch
    /// `max_bytes`; the broker still returns a first batch whole even past it).
    ResponseTooLarge {
        /// Bytes the response needed buffered.
        requested: usize,
        /// The receive ring's bound.
        max: usize,
    },
    /// A response longer than [`Limits::max_response_len`](ringwire_kafka::Limits) (from its
    /// length prefix, before it is read). Raise `ClientConfig::limits.max_response_len` (and
    /// the receive ring's bound with it) or ask for less.
    ResponseOverLimit {
        /// The response's length.
        len: usize,
        /// The limit.
        max: usize,
    },
    /// The broker closed the connection, `buffered` bytes into a response.
    Closed {
        /// Bytes of the unfinished response received.
        buffered: usize,
    },
    /// The broker sent bytes that are not a valid response.
    Decode(DecodeError),
    /// A request could not be encoded.
    Encode(EncodeError),
    /// The broker serves no version of this API that this crate speaks.
    UnsupportedApi(ApiKey),
    /// The broker answered with an error code.
    Kafka {
        /// The API.
        api: ApiKey,
        /// The code.
        code: ErrorCode,
        /// What the broker said about it, for the APIs whose answers carry an
        /// `error_message` (CreateTopics, Produce v8+), when it sent one; for Produce, with
        /// the records it named.
        message: Option<String>,
    },
    /// The response does not mention the partition asked about.
    MissingPartition,
    /// The response does not mention the resource (a topic's or a broker's configuration)
    /// asked about.
    MissingResource,
    /// No bootstrap address or known broker answered.
    NoBroker,
    /// The cluster names no leader for the partition (yet).
    NoLeader {
        /// Topic.
        topic: String,
        /// Partition.
        partition: i32,
    },
    /// The topic has no such partition.
    NoPartition {
        /// Topic.
        topic: String,
        /// Partition.
        partition: i32,
    },
    /// A request waited this long without an answer; its connection counts as broken.
    RequestTimeout(Duration),
    /// The TCP connection (and the TLS handshake, with TLS) was not established within this.
    ConnectTimeout(Duration),
    /// The TLS handshake with the broker at `addr` failed (an untrusted or mismatched
    /// certificate, a broker port that does not speak TLS, ...).
    Tls {
        /// The broker's address.
        addr: String,
        /// Why.
        source: ringwire_tls::TlsError,
    },
    /// [`ClientConfig::with_tls`](crate::ClientConfig::with_tls) could not make a connector.
    TlsConfig(ringwire_tls::TlsError),
    /// A SASL exchange failed on the client's side (a SCRAM broker whose messages do not
    /// parse or whose signature is wrong); the broker's refusals are [`ClientError::Kafka`].
    Sasl(String),
    /// The peer at `addr` accepted the TCP connection but sent no answer to ApiVersions (the
    /// first request) within `after`: a port that is not Kafka's, or a broker that hangs.
    ApiVersionsTimeout {
        /// The address connected to.
        addr: String,
        /// The connect timeout.
        after: Duration,
    },
    /// The peer at `addr` answered the first request with bytes that are no Kafka response
    /// (a size prefix past the limits, or a frame that does not decode): not a Kafka broker,
    /// such as an HTTP server.
    NotKafka {
        /// The address connected to.
        addr: String,
        /// The first bytes it sent (up to 16).
        first_bytes: Vec<u8>,
    },
    /// The connection a request was on broke, for this reason.
    Broken(String),
    /// A consumer polled before any partition was assigned.
    NothingAssigned,
    /// A consumer was asked about a partition it does not read.
    NotAssigned {
        /// The partition's topic.
        topic: String,
        /// The partition.
        partition: i32,
    },
    /// A wait for a response with no request in flight that gets one (none was sent, or
    /// only requests that get no answer, such as a Produce with acks = 0): it would wait
    /// forever.
    NoResponseAwaited,
    /// A client configuration that cannot work, and why.
    Config(&'static str),
    /// Committed offsets were asked for or committed by a consumer with no
    /// [`ConsumerConfig::group`](crate::ConsumerConfig::group).
    NoGroup,
    /// A transactional producer used out of order (a record sent outside a transaction, a
    /// transaction begun inside another, or ended with none open), or a producer without a
    /// transactional id asked for a transaction.
    TransactionState(&'static str),
    /// A transaction cannot commit: one of its records was not delivered. Abort it.
    Undelivered(crate::ProduceError),
    /// The system's random source failed (a consumer group member's id is random).
    NoRandom(String),
}

impl ClientError {
    /// Whether the connection the request was on is gone or unusable (a new one may work).
    pub(crate) fn is_connection(&self) -> bool {
        matches!(
            self,
            Self::Transport(_) | Self::Closed { .. } | Self::Broken(_) | Self::RequestTimeout(_)
        )
    }

    /// Whether trying again later may work: the connection broke or could not be made (a
    /// broker restarting, moving or overloaded), or the broker answered with a retriable
    /// error. A consumer's next [`poll`](crate::Consumer::poll) reconnects, a commit can be
    /// made again.
    #[must_use]
    pub fn is_transient(&self) -> bool {
        self.is_connection()
            || matches!(
                self,
                Self::ConnectTimeout(_) | Self::ApiVersionsTimeout { .. }
            )
            || matches!(self, Self::Kafka { code, .. } if code.is_retriable())
    }

    /// Whether the broker closed or reset the connection: a new one is likely to work at once
    /// (unlike a broker that stopped answering, whose timeout a retry would only repeat).
    pub(crate) fn is_closed_by_broker(&self) -> bool {
        matches!(self, Self::Transport(_) | Self::Closed { .. })
    }

    /// Whether a consumer group's coordinator moved, is still being elected or loading, or
    /// its connection broke: find it again and retry.
    pub(crate) fn is_coordinator_gone(&self) -> bool {
        self.is_connection()
            || self.is_not_coordinator()
            || matches!(self, Self::Kafka { code, .. }
                if *code == ErrorCode::COORDINATOR_LOAD_IN_PROGRESS)
    }

    /// Whether a broker answered that it is not the group's coordinator (or not yet, or no
    /// longer): the group's coordinator is to be looked up again.
    pub(crate) fn is_not_coordinator(&self) -> bool {
        matches!(self, Self::Kafka { code, .. }
            if *code == ErrorCode::NOT_COORDINATOR || *code == ErrorCode::COORDINATOR_NOT_AVAILABLE)
    }

    /// Whether the consumer group rebalanced under the member (or forgot it): it must join
    /// again, which its next [`poll`](crate::Consumer::poll) does, and what it handed out
    /// since its last commit may go to another member. A commit behind the member's own
    /// epoch (`STALE_MEMBER_EPOCH`) counts too, but there the member stays as it is: a
    /// commit made again after a poll carries the epoch it has moved on to.
    #[must_use]
    pub fn is_rebalance(&self) -> bool {
        matches!(self, Self::Kafka { code, .. } if [
            ErrorCode::REBALANCE_IN_PROGRESS,
            ErrorCode::ILLEGAL_GENERATION,
            ErrorCode::UNKNOWN_MEMBER_ID,
            ErrorCode::FENCED_MEMBER_EPOCH,
            ErrorCode::STALE_MEMBER_EPOCH,
        ]
        .contains(code))
    }

    /// Whether the coordinator refused a commit for carrying an epoch older than the
    /// member's (consumer protocol): the heartbeat answer that moved the member on was
    /// still on its way.
    pub(crate) fn is_stale_epoch(&self) -> bool {
        matches!(self, Self::Kafka { code, .. } if *code == ErrorCode::STALE_MEMBER_EPOCH)
    }

    /// Whether the group's coordinator does not know the member (its session ended, or it
    /// left): it can only join again as a new one.
    pub(crate) fn is_unknown_member(&self) -> bool {
        matches!(self, Self::Kafka { code, .. } if *code == ErrorCode::UNKNOWN_MEMBER_ID)
    }

    /// Whether another consumer joined the group with this one's static membership id
    /// ([`ConsumerConfig::group_instance_id`](crate::ConsumerConfig)): this one is out of
    /// the group for good.
    #[must_use]
    pub fn is_fenced(&self) -> bool {
        matches!(self, Self::Kafka { code, .. } if *code == ErrorCode::FENCED_INSTANCE_ID)
    }

    /// `Ok` for no error, else `code` as the broker's answer to `api`.
    pub(crate) fn check(api: ApiKey, code: ErrorCode) -> Result<(), ClientError> {
        Self::check_said(api, code, None)
    }

    /// [`check`](Self::check) keeping the `error_message` the broker sent with `code`.
    pub(crate) fn check_said(
        api: ApiKey,
        code: ErrorCode,
        message: Option<&str>,
    ) -> Result<(), ClientError> {
        code.check().map_err(|code| ClientError::Kafka {
            api,
            code,
            message: message.map(str::to_owned),
        })
    }
}

/// What a broker said about a partition it refused a Produce for: each record it named
/// (`record 3: Compacted topic cannot accept message without key ...`), else its
/// `error_message` (which, when it names records, only repeats them in Java's notation).
/// `None`, with nothing allocated, when it said nothing (every delivered batch).
pub(crate) fn produce_message(p: &ProducePartitionResponse<'_>) -> Option<String> {
    if p.record_errors.is_empty() {
        return p.error_message.map(str::to_owned);
    }
    let records: Vec<String> = p
        .record_errors
        .iter()
        .map(|e| {
            format!(
                "record {}: {}",
                e.batch_index,
                e.message.unwrap_or("refused")
            )
        })
        .collect();
    Some(records.join("; "))
}

impl ClientError {
    /// `Ok` when the broker took the partition's records, else its refusal with what it said.
    pub(crate) fn check_produce(p: &ProducePartitionResponse<'_>) -> Result<(), ClientError> {
        p.error_code.check().map_err(|code| ClientError::Kafka {
            api: ApiKey::Produce,
            code,
            message: produce_message(p),
        })
    }
}

impl fmt::Display for ClientError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Transport(e) => e.fmt(f),
            Self::ResponseTooLarge { requested, max } => write!(
                f,
                "response needs {requested} bytes but the receive ring may grow to {max}: raise \
                 ClientConfig.transport.rx max_capacity, or lower the fetch max_bytes"
            ),
            Self::ResponseOverLimit { len, max } => write!(
                f,
                "response of {len} bytes exceeds ClientConfig.limits.max_response_len ({max}): \
                 raise it (and ClientConfig.transport.rx max_capacity with it), or lower the \
                 fetch max_bytes"
            ),
            Self::Closed { buffered } => write!(
                f,
                "broker closed the connection ({buffered} bytes into a response)"
            ),
            Self::Decode(e) => write!(f, "bad response: {e}"),
            Self::Encode(e) => write!(f, "request not encoded: {e}"),
            Self::UnsupportedApi(key) => write!(
                f,
                "the broker serves no version of {key} that ringwire-kafka implements"
            ),
            Self::Kafka { api, code, message } => {
                write!(f, "{api}: {code}")?;
                match message {
                    Some(message) => write!(f, ": {message}"),
                    None => Ok(()),
                }
            }
            Self::MissingPartition => f.write_str("response does not mention the partition"),
            Self::MissingResource => f.write_str("response does not mention the resource"),
            Self::NoBroker => f.write_str("no broker answered"),
            Self::NoLeader { topic, partition } => {
                write!(f, "no leader for {topic}/{partition}")
            }
            Self::NoPartition { topic, partition } => {
                write!(f, "topic {topic} has no partition {partition}")
            }
            Self::RequestTimeout(after) => write!(f, "no answer within {after:?}"),
            Self::ConnectTimeout(after) => write!(f, "no connection within {after:?}"),
            Self::Tls { addr, source } => write!(f, "TLS with {addr}: {source}"),
            Self::TlsConfig(e) => write!(f, "TLS settings: {e}"),
            Self::Sasl(why) => write!(f, "SASL: {why}"),
            Self::ApiVersionsTimeout { addr, after } => write!(
                f,
                "{addr} accepted the connection but did not answer ApiVersions within {after:?}"
            ),
            Self::NotKafka { addr, first_bytes } => write!(
                f,
                "{addr} does not answer as a Kafka broker (its first bytes look like \"{}\")",
                first_bytes.escape_ascii()
            ),
            Self::Broken(why) => write!(f, "connection broke: {why}"),
            Self::NoRandom(why) => write!(f, "no random bytes for a member id: {why}"),
            Self::NothingAssigned => f.write_str("no partition assigned"),
            Self::NotAssigned { topic, partition } => {
                write!(f, "partition {partition} of {topic} is not assigned")
            }
            Self::NoResponseAwaited => f.write_str(
                "no request in flight gets an answer (a Produce with acks = 0 gets none)",
            ),
            Self::Config(why) => write!(f, "invalid configuration: {why}"),
            Self::NoGroup => {
                f.write_str("committed offsets need a consumer group (ConsumerConfig::group)")
            }
            Self::TransactionState(why) => write!(f, "transaction: {why}"),
            Self::Undelivered(e) => {
                write!(f, "the transaction cannot commit, abort it: {e}")
            }
        }
    }
}

impl std::error::Error for ClientError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Transport(e) => Some(e),
            Self::Decode(e) => Some(e),
            Self::Encode(e) => Some(e),
            Self::Kafka { code, .. } => Some(code),
            _ => None,
        }
    }
}

impl From<TransportError> for ClientError {
    fn from(e: TransportError) -> Self {
        match e {
            TransportError::Ring(RingError::TooLarge { requested, max }) => {
                ClientError::ResponseTooLarge { requested, max }
            }
            e => ClientError::Transport(e),
        }
    }
}

impl From<DecodeError> for ClientError {
    fn from(e: DecodeError) -> Self {
        match e {
            // The response frame's own bound, the one setting a caller may need to raise.
            DecodeError::Limit(l) if l.name == ringwire_wire::FRAME_LENGTH => {
                ClientError::ResponseOverLimit {
                    len: l.len,
                    max: l.max,
                }
            }
            e => ClientError::Decode(e),
        }
    }
}

impl From<EncodeError> for ClientError {
    fn from(e: EncodeError) -> Self {
        ClientError::Encode(e)
    }
}
