//! API keys, the version ranges this crate implements, and which header each version uses.

use std::fmt;
use std::ops::RangeInclusive;

/// The APIs this crate speaks, with their wire keys.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(i16)]
pub enum ApiKey {
    /// Produce (0).
    Produce = 0,
    /// Fetch (1).
    Fetch = 1,
    /// ListOffsets (2).
    ListOffsets = 2,
    /// Metadata (3).
    Metadata = 3,
    /// OffsetCommit (8).
    OffsetCommit = 8,
    /// OffsetFetch (9).
    OffsetFetch = 9,
    /// FindCoordinator (10).
    FindCoordinator = 10,
    /// JoinGroup (11).
    JoinGroup = 11,
    /// Heartbeat (12).
    Heartbeat = 12,
    /// LeaveGroup (13).
    LeaveGroup = 13,
    /// SyncGroup (14).
    SyncGroup = 14,
    /// DescribeGroups (15).
    DescribeGroups = 15,
    /// ListGroups (16).
    ListGroups = 16,
    /// SaslHandshake (17).
    SaslHandshake = 17,
    /// ApiVersions (18).
    ApiVersions = 18,
    /// CreateTopics (19).
    CreateTopics = 19,
    /// DeleteTopics (20).
    DeleteTopics = 20,
    /// InitProducerId (22).
    InitProducerId = 22,
    /// AddPartitionsToTxn (24).
    AddPartitionsToTxn = 24,
    /// AddOffsetsToTxn (25).
    AddOffsetsToTxn = 25,
    /// EndTxn (26).
    EndTxn = 26,
    /// TxnOffsetCommit (28).
    TxnOffsetCommit = 28,
    /// DescribeConfigs (32).
    DescribeConfigs = 32,
    /// SaslAuthenticate (36).
    SaslAuthenticate = 36,
    /// CreatePartitions (37).
    CreatePartitions = 37,
    /// DeleteGroups (42).
    DeleteGroups = 42,
    /// IncrementalAlterConfigs (44).
    IncrementalAlterConfigs = 44,
    /// ConsumerGroupHeartbeat (68).
    ConsumerGroupHeartbeat = 68,
    /// ConsumerGroupDescribe (69).
    ConsumerGroupDescribe = 69,
}

impl ApiKey {
    /// Every API this crate implements.
    pub const ALL: [ApiKey; 29] = [
        ApiKey::Produce,
        ApiKey::Fetch,
        ApiKey::ListOffsets,
        ApiKey::Metadata,
        ApiKey::OffsetCommit,
        ApiKey::OffsetFetch,
        ApiKey::FindCoordinator,
        ApiKey::JoinGroup,
        ApiKey::Heartbeat,
        ApiKey::LeaveGroup,
        ApiKey::SyncGroup,
        ApiKey::DescribeGroups,
        ApiKey::ListGroups,
        ApiKey::SaslHandshake,
        ApiKey::ApiVersions,
        ApiKey::CreateTopics,
        ApiKey::DeleteTopics,
        ApiKey::InitProducerId,
        ApiKey::AddPartitionsToTxn,
        ApiKey::AddOffsetsToTxn,
        ApiKey::EndTxn,
        ApiKey::TxnOffsetCommit,
        ApiKey::DescribeConfigs,
        ApiKey::SaslAuthenticate,
        ApiKey::CreatePartitions,
        ApiKey::DeleteGroups,
        ApiKey::IncrementalAlterConfigs,
        ApiKey::ConsumerGroupHeartbeat,
        ApiKey::ConsumerGroupDescribe,
    ];

    /// The wire value.
    #[must_use]
    pub fn code(self) -> i16 {
        self as i16
    }

    /// The key for a wire value, if this crate implements it.
    #[must_use]
    pub fn from_code(code: i16) -> Option<ApiKey> {
        ApiKey::ALL.into_iter().find(|key| key.code() == code)
    }

    /// Versions this crate can encode and decode. Kafka 4.x dropped Produce below v3, Fetch
    /// below v4, ListOffsets v0, OffsetCommit and JoinGroup below v2, OffsetFetch and
    /// FindCoordinator v0, CreateTopics below v2 and DeleteTopics v0; the tops stop before the
    /// first version that names topics by id (Fetch 13, Produce 13, OffsetCommit 10,
    /// DeleteTopics 6), asks for several groups at once (OffsetFetch 8)
    /// or adds fields this crate does not send (ListOffsets 10, InitProducerId 5,
    /// FindCoordinator 5), or belongs to the transactions of KIP-890's second part
    /// (AddPartitionsToTxn 4 batches transactions for brokers, AddOffsetsToTxn 4 and EndTxn
    /// 4-5 and TxnOffsetCommit 4-5 go with transaction version 2, which this crate does not
    /// speak: it adds each partition to its transaction itself). Produce 12 has v11's layout (it only changes how brokers add
    /// partitions to transactions, which this crate does not use) and is served by Kafka 4.x
    /// but not 3.9, so the two brokers negotiate differently.
    #[must_use]
    pub fn versions(self) -> RangeInclusive<i16> {
        match self {
            ApiKey::Produce => 3..=12,
            ApiKey::Fetch => 4..=12,
            ApiKey::ListOffsets => 1..=9,
            ApiKey::Metadata => 4..=12,
            // 9 is 8 again, for members of KIP-848's groups (which must use it).
            ApiKey::OffsetCommit => 2..=9,
            ApiKey::OffsetFetch => 1..=7,
            ApiKey::FindCoordinator => 1..=4,
            ApiKey::JoinGroup => 2..=9,
            ApiKey::Heartbeat => 0..=4,
            ApiKey::LeaveGroup => 0..=5,
            ApiKey::SyncGroup => 0..=5,
            ApiKey::DescribeGroups => 0..=6,
            ApiKey::ListGroups => 0..=5,
            ApiKey::SaslHandshake => 1..=1,
            ApiKey::ApiVersions => 0..=4,
            ApiKey::CreateTopics => 2..=7,
            ApiKey::DeleteTopics => 1..=5,
            ApiKey::InitProducerId => 0..=4,
            ApiKey::AddPartitionsToTxn => 0..=3,
            ApiKey::AddOffsetsToTxn => 0..=3,
            ApiKey::EndTxn => 0..=3,
            ApiKey::TxnOffsetCommit => 0..=3,
            ApiKey::SaslAuthenticate => 0..=2,
            ApiKey::DeleteGroups => 0..=2,
            // Kafka 4.x dropped v0.
            ApiKey::DescribeConfigs => 1..=4,
            ApiKey::CreatePartitions => 0..=3,
            ApiKey::IncrementalAlterConfigs => 0..=1,
            // 0 (Kafka 3.7+) takes the id a member chooses too; 1 requires one.
            ApiKey::ConsumerGroupHeartbeat => 0..=1,
            // 1 (Kafka 4.0+) tells each member's protocol.
            ApiKey::ConsumerGroupDescribe => 0..=1,
        }
    }

    /// First version using compact encodings and tagged fields (KIP-482).
    #[must_use]
    pub fn first_flexible(self) -> i16 {
        match self {
            ApiKey::Produce => 9,
            ApiKey::Fetch => 12,
            ApiKey::ListOffsets => 6,
            ApiKey::Metadata => 9,
            ApiKey::OffsetCommit => 8,
            ApiKey::OffsetFetch => 6,
            ApiKey::FindCoordinator => 3,
            ApiKey::JoinGroup => 6,
            ApiKey::Heartbeat => 4,
            ApiKey::LeaveGroup => 4,
            ApiKey::SyncGroup => 4,
            ApiKey::DescribeGroups => 5,
            ApiKey::ListGroups => 3,
            // Never flexible.
            ApiKey::SaslHandshake => i16::MAX,
            ApiKey::ApiVersions => 3,
            ApiKey::CreateTopics => 5,
            ApiKey::DeleteTopics => 4,
            ApiKey::InitProducerId => 2,
            ApiKey::AddPartitionsToTxn
            | ApiKey::AddOffsetsToTxn
            | ApiKey::EndTxn
            | ApiKey::TxnOffsetCommit => 3,
            ApiKey::SaslAuthenticate | ApiKey::DeleteGroups | ApiKey::CreatePartitions => 2,
            ApiKey::DescribeConfigs => 4,
            ApiKey::IncrementalAlterConfigs => 1,
            ApiKey::ConsumerGroupHeartbeat | ApiKey::ConsumerGroupDescribe => 0,
        }
    }

    /// Whether `version` of this API is flexible.
    #[must_use]
    pub fn is_flexible(self, version: i16) -> bool {
        version >= self.first_flexible()
    }

    /// Whether the response header carries tagged fields (header v1). ApiVersions answers with
    /// header v0 at every version, so a client that does not yet know the broker's versions can
    /// always read the correlation id.
    #[must_use]
    pub fn response_header_is_flexible(self, version: i16) -> bool {
        self != ApiKey::ApiVersions && self.is_flexible(version)
    }
}

impl fmt::Display for ApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self, f)
    }
}
