//! Kafka's error codes: the ones a client acts on are named, every other stays typed.

use std::fmt;

/// An `error_code` field from a response. Zero is success; codes this crate does not name are
/// kept as numbers and are still errors.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ErrorCode(pub i16);

/// Known codes: (code, name, retriable). From the Kafka protocol guide's error table.
const KNOWN: &[(i16, &str, bool)] = &[
    (-1, "UNKNOWN_SERVER_ERROR", false),
    (1, "OFFSET_OUT_OF_RANGE", false),
    (2, "CORRUPT_MESSAGE", true),
    (3, "UNKNOWN_TOPIC_OR_PARTITION", true),
    (4, "INVALID_FETCH_SIZE", false),
    (5, "LEADER_NOT_AVAILABLE", true),
    (6, "NOT_LEADER_OR_FOLLOWER", true),
    (7, "REQUEST_TIMED_OUT", true),
    (10, "MESSAGE_TOO_LARGE", false),
    (12, "OFFSET_METADATA_TOO_LARGE", false),
    (13, "NETWORK_EXCEPTION", true),
    (14, "COORDINATOR_LOAD_IN_PROGRESS", true),
    (15, "COORDINATOR_NOT_AVAILABLE", true),
    (16, "NOT_COORDINATOR", true),
    (17, "INVALID_TOPIC_EXCEPTION", false),
    (18, "RECORD_LIST_TOO_LARGE", false),
    (19, "NOT_ENOUGH_REPLICAS", true),
    (20, "NOT_ENOUGH_REPLICAS_AFTER_APPEND", true),
    (21, "INVALID_REQUIRED_ACKS", false),
    (22, "ILLEGAL_GENERATION", false),
    (24, "INVALID_GROUP_ID", false),
    (25, "UNKNOWN_MEMBER_ID", false),
    (27, "REBALANCE_IN_PROGRESS", false),
    (28, "INVALID_COMMIT_OFFSET_SIZE", false),
    (29, "TOPIC_AUTHORIZATION_FAILED", false),
    (30, "GROUP_AUTHORIZATION_FAILED", false),
    (33, "UNSUPPORTED_SASL_MECHANISM", false),
    (34, "ILLEGAL_SASL_STATE", false),
    (35, "UNSUPPORTED_VERSION", false),
    (36, "TOPIC_ALREADY_EXISTS", false),
    (37, "INVALID_PARTITIONS", false),
    (38, "INVALID_REPLICATION_FACTOR", false),
    (39, "INVALID_REPLICA_ASSIGNMENT", false),
    (40, "INVALID_CONFIG", false),
    (41, "NOT_CONTROLLER", true),
    (42, "INVALID_REQUEST", false),
    (43, "UNSUPPORTED_FOR_MESSAGE_FORMAT", false),
    (44, "POLICY_VIOLATION", false),
    (45, "OUT_OF_ORDER_SEQUENCE_NUMBER", false),
    (46, "DUPLICATE_SEQUENCE_NUMBER", false),
    (47, "INVALID_PRODUCER_EPOCH", false),
    (48, "INVALID_TXN_STATE", false),
    (49, "INVALID_PRODUCER_ID_MAPPING", false),
    (51, "CONCURRENT_TRANSACTIONS", true),
    (52, "TRANSACTION_COORDINATOR_FENCED", false),
    (53, "TRANSACTIONAL_ID_AUTHORIZATION_FAILED", false),
    (59, "UNKNOWN_PRODUCER_ID", false),
    (68, "NON_EMPTY_GROUP", false),
    (69, "GROUP_ID_NOT_FOUND", false),
    (56, "KAFKA_STORAGE_ERROR", true),
    (58, "SASL_AUTHENTICATION_FAILED", false),
    (74, "FENCED_LEADER_EPOCH", true),
    (75, "UNKNOWN_LEADER_EPOCH", true),
    (76, "UNSUPPORTED_COMPRESSION_TYPE", false),
    (78, "OFFSET_NOT_AVAILABLE", true),
    (79, "MEMBER_ID_REQUIRED", false),
    (82, "FENCED_INSTANCE_ID", false),
    (87, "INVALID_RECORD", false),
    (88, "UNSTABLE_OFFSET_COMMIT", true),
    (90, "PRODUCER_FENCED", false),
    (100, "UNKNOWN_TOPIC_ID", true),
    (81, "GROUP_MAX_SIZE_REACHED", false),
    (110, "FENCED_MEMBER_EPOCH", false),
    (111, "UNRELEASED_INSTANCE_ID", false),
    (112, "UNSUPPORTED_ASSIGNOR", false),
    (113, "STALE_MEMBER_EPOCH", false),
    (128, "INVALID_REGULAR_EXPRESSION", false),
];

impl ErrorCode {
    /// No error.
    pub const NONE: ErrorCode = ErrorCode(0);
    /// A topic's new partition count is not more than it has (CreatePartitions).
    pub const INVALID_PARTITIONS: ErrorCode = ErrorCode(37);
    /// A configuration entry that does not exist, or a value it does not take.
    pub const INVALID_CONFIG: ErrorCode = ErrorCode(40);
    /// The topic or partition does not exist (yet: it is retriable while metadata propagates).
    pub const UNKNOWN_TOPIC_OR_PARTITION: ErrorCode = ErrorCode(3);
    /// The request named a version the broker does not serve.
    pub const UNSUPPORTED_VERSION: ErrorCode = ErrorCode(35);
    /// CreateTopics for a name that exists.
    pub const TOPIC_ALREADY_EXISTS: ErrorCode = ErrorCode(36);
    /// The group's coordinator is loading its state (retriable).
    pub const COORDINATOR_LOAD_IN_PROGRESS: ErrorCode = ErrorCode(14);
    /// No coordinator yet, as while the offsets topic is created (retriable).
    pub const COORDINATOR_NOT_AVAILABLE: ErrorCode = ErrorCode(15);
    /// The broker asked is not the group's coordinator (any more): find it again.
    pub const NOT_COORDINATOR: ErrorCode = ErrorCode(16);
    /// A group member's generation is not the group's (it must join again).
    pub const ILLEGAL_GENERATION: ErrorCode = ErrorCode(22);
    /// The coordinator does not know the member (it must join again, without its id).
    pub const UNKNOWN_MEMBER_ID: ErrorCode = ErrorCode(25);
    /// The group is rebalancing: its members must join again.
    pub const REBALANCE_IN_PROGRESS: ErrorCode = ErrorCode(27);
    /// A first JoinGroup (v4+) is answered with a member id to join again with.
    pub const MEMBER_ID_REQUIRED: ErrorCode = ErrorCode(79);
    /// Another consumer joined with this member's static id (`group.instance.id`): this one
    /// is out of the group for good.
    pub const FENCED_INSTANCE_ID: ErrorCode = ErrorCode(82);
    /// The broker does not take the SASL mechanism asked for.
    pub const UNSUPPORTED_SASL_MECHANISM: ErrorCode = ErrorCode(33);
    /// Wrong SASL credentials.
    pub const SASL_AUTHENTICATION_FAILED: ErrorCode = ErrorCode(58);
    /// A fetch offset outside the log.
    pub const OFFSET_OUT_OF_RANGE: ErrorCode = ErrorCode(1);
    /// An idempotent batch whose sequence does not follow the partition's last one: an
    /// earlier batch of the same producer has not arrived (yet).
    pub const OUT_OF_ORDER_SEQUENCE_NUMBER: ErrorCode = ErrorCode(45);
    /// An idempotent batch the broker already has (older brokers; newer ones answer it as
    /// delivered, with its first offset).
    pub const DUPLICATE_SEQUENCE_NUMBER: ErrorCode = ErrorCode(46);
    /// The transaction coordinator is still ending the id's last transaction: ask again.
    pub const CONCURRENT_TRANSACTIONS: ErrorCode = ErrorCode(51);
    /// A topic id the broker does not know (or a client could not name).
    pub const UNKNOWN_TOPIC_ID: ErrorCode = ErrorCode(100);
    /// A member of a KIP-848 group beat with an epoch the coordinator moved on from (or
    /// let go): it lost its partitions and joins again.
    pub const FENCED_MEMBER_EPOCH: ErrorCode = ErrorCode(110);
    /// A KIP-848 member committed with an epoch older than its current one.
    pub const STALE_MEMBER_EPOCH: ErrorCode = ErrorCode(113);
    /// A group that does not exist (or, to ConsumerGroupDescribe, is not of its protocol).
    pub const GROUP_ID_NOT_FOUND: ErrorCode = ErrorCode(69);
    /// A group still has members, so it cannot be deleted.
    pub const NON_EMPTY_GROUP: ErrorCode = ErrorCode(68);

    /// `Ok` for 0, the code as an error otherwise.
    pub fn check(self) -> Result<(), ErrorCode> {
        if self == ErrorCode::NONE {
            Ok(())
        } else {
            Err(self)
        }
    }

    /// The protocol guide's name, when this crate knows the code.
    #[must_use]
    pub fn name(self) -> Option<&'static str> {
        KNOWN
            .iter()
            .find(|(code, ..)| *code == self.0)
            .map(|(_, name, _)| *name)
    }

    /// Whether the same request may succeed if retried (after a metadata refresh). Unknown
    /// codes are not retriable: retrying blindly could loop forever.
    #[must_use]
    pub fn is_retriable(self) -> bool {
        KNOWN
            .iter()
            .any(|(code, _, retriable)| *code == self.0 && *retriable)
    }
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.name() {
            Some(name) => write!(f, "Kafka error {name} ({})", self.0),
            None => write!(f, "unknown Kafka error code {}", self.0),
        }
    }
}

impl std::error::Error for ErrorCode {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_and_unknown_codes() {
        assert_eq!(ErrorCode(0).check(), Ok(()));
        assert_eq!(
            ErrorCode(3).check(),
            Err(ErrorCode::UNKNOWN_TOPIC_OR_PARTITION)
        );
        assert!(ErrorCode(3).is_retriable());
        assert!(!ErrorCode(36).is_retriable());
        assert_eq!(
            ErrorCode(36).to_string(),
            "Kafka error TOPIC_ALREADY_EXISTS (36)"
        );
        let unknown = ErrorCode(12345);
        assert_eq!(unknown.name(), None);
        assert!(!unknown.is_retriable());
        assert_eq!(unknown.check(), Err(unknown));
        assert_eq!(unknown.to_string(), "unknown Kafka error code 12345");
    }
}
