//! `kafka_frame`: Kafka response framing and headers, then the body decoders, on arbitrary
//! bytes. Nothing may panic; every strict prefix of a frame that parses whole must be `Partial`
//! (so a driver waits instead of failing); frames come out in request order.
//!
//! Input layout:
//!
//! | bytes   | meaning                                                                  |
//! |---------|--------------------------------------------------------------------------|
//! | 0       | `n`: requests in flight, `1 + b % 8`                                      |
//! | 1..1+n  | each request: API `b % k` (of the `k` in `ApiKey::ALL`), version `b / k` within its range |
//! | 1+n     | a cut point: the stream is also parsed from a prefix of this many bytes     |
//! | rest    | the response stream                                                        |

#![no_main]

use libfuzzer_sys::fuzz_target;
use ringwire_kafka::api::add_offsets_to_txn::{AddOffsetsToTxnRequest, AddOffsetsToTxnResponse};
use ringwire_kafka::api::add_partitions_to_txn::{
    AddPartitionsToTxnRequest, AddPartitionsToTxnResponse,
};
use ringwire_kafka::api::api_versions::{ApiVersionsRequest, ApiVersionsResponse};
use ringwire_kafka::api::consumer_group_describe::{
    ConsumerGroupDescribeRequest, ConsumerGroupDescribeResponse,
};
use ringwire_kafka::api::consumer_group_heartbeat::{
    ConsumerGroupHeartbeatRequest, ConsumerGroupHeartbeatResponse,
};
use ringwire_kafka::api::consumer_protocol;
use ringwire_kafka::api::create_partitions::{
    CreatePartitionsRequest, CreatePartitionsResponse, NewPartitions,
};
use ringwire_kafka::api::create_topics::{CreateTopicsRequest, CreateTopicsResponse};
use ringwire_kafka::api::delete_groups::{DeleteGroupsRequest, DeleteGroupsResponse};
use ringwire_kafka::api::delete_topics::{DeleteTopicsRequest, DeleteTopicsResponse};
use ringwire_kafka::api::describe_configs::{
    DescribeConfigsRequest, DescribeConfigsResource, DescribeConfigsResponse, ResourceType,
};
use ringwire_kafka::api::describe_groups::{DescribeGroupsRequest, DescribeGroupsResponse};
use ringwire_kafka::api::end_txn::{EndTxnRequest, EndTxnResponse};
use ringwire_kafka::api::fetch::{FetchRequest, FetchResponse};
use ringwire_kafka::api::find_coordinator::{FindCoordinatorRequest, FindCoordinatorResponse};
use ringwire_kafka::api::heartbeat::{HeartbeatRequest, HeartbeatResponse};
use ringwire_kafka::api::incremental_alter_configs::{
    AlterConfigsResource, AlterableConfig, ConfigOperation, IncrementalAlterConfigsRequest,
    IncrementalAlterConfigsResponse,
};
use ringwire_kafka::api::init_producer_id::{InitProducerIdRequest, InitProducerIdResponse};
use ringwire_kafka::api::join_group::{JoinGroupRequest, JoinGroupResponse};
use ringwire_kafka::api::leave_group::{LeaveGroupRequest, LeaveGroupResponse};
use ringwire_kafka::api::list_groups::{ListGroupsRequest, ListGroupsResponse};
use ringwire_kafka::api::list_offsets::{ListOffsetsRequest, ListOffsetsResponse};
use ringwire_kafka::api::metadata::{MetadataRequest, MetadataResponse};
use ringwire_kafka::api::offset_commit::{OffsetCommitRequest, OffsetCommitResponse};
use ringwire_kafka::api::offset_fetch::{OffsetFetchRequest, OffsetFetchResponse};
use ringwire_kafka::api::produce::{Acks, ProduceRequest, ProduceResponse};
use ringwire_kafka::api::sasl_authenticate::{SaslAuthenticateRequest, SaslAuthenticateResponse};
use ringwire_kafka::api::sasl_handshake::{SaslHandshakeRequest, SaslHandshakeResponse};
use ringwire_kafka::api::sync_group::{SyncGroupRequest, SyncGroupResponse};
use ringwire_kafka::api::txn_offset_commit::{TxnOffsetCommitRequest, TxnOffsetCommitResponse};
use ringwire_kafka::record::{walk, walk_committed};
use ringwire_kafka::{ApiKey, Correlator, Limits, Request, ResponseFrame};
use ringwire_wire::Status;

/// Small bounds so hostile lengths hit limits quickly.
const LIMITS: Limits = Limits {
    max_response_len: 1 << 20,
    max_decompressed_len: 1 << 20,
};

fn send<Q: Request>(c: &mut Correlator, request: &Q, version: i16) {
    let len = c.request_len(request, version).expect("measure");
    let mut out = vec![0; len];
    c.encode(request, version, &mut out).expect("encode");
}

fn queue(c: &mut Correlator, key: ApiKey, version: i16) {
    match key {
        ApiKey::ApiVersions => send(c, &ApiVersionsRequest::default(), version),
        ApiKey::Metadata => send(c, &MetadataRequest::default(), version),
        ApiKey::CreateTopics => send(
            c,
            &CreateTopicsRequest {
                topics: &[],
                timeout_ms: 0,
                validate_only: false,
            },
            version,
        ),
        ApiKey::DeleteTopics => send(
            c,
            &DeleteTopicsRequest {
                topic_names: &[],
                timeout_ms: 0,
            },
            version,
        ),
        ApiKey::Produce => send(
            c,
            &ProduceRequest {
                transactional_id: None,
                acks: Acks::Leader,
                timeout_ms: 0,
                topics: &[],
            },
            version,
        ),
        ApiKey::Fetch => send(
            c,
            &FetchRequest {
                max_wait_ms: 0,
                min_bytes: 0,
                max_bytes: 0,
                isolation_level: 0,
                topics: &[],
            },
            version,
        ),
        ApiKey::ListOffsets => send(
            c,
            &ListOffsetsRequest {
                isolation_level: 0,
                topics: &[],
            },
            version,
        ),
        ApiKey::InitProducerId => send(c, &InitProducerIdRequest::default(), version),
        ApiKey::SaslHandshake => send(c, &SaslHandshakeRequest { mechanism: "PLAIN" }, version),
        ApiKey::SaslAuthenticate => send(
            c,
            &SaslAuthenticateRequest {
                auth_bytes: b"\0u\0p",
            },
            version,
        ),
        ApiKey::OffsetCommit => send(c, &OffsetCommitRequest::standalone("g", &[]), version),
        ApiKey::OffsetFetch => send(
            c,
            &OffsetFetchRequest {
                group_id: "g",
                topics: &[],
                require_stable: false,
            },
            version,
        ),
        ApiKey::FindCoordinator => send(c, &FindCoordinatorRequest::group("g"), version),
        ApiKey::JoinGroup => send(
            c,
            &JoinGroupRequest {
                group_id: "g",
                session_timeout_ms: 0,
                rebalance_timeout_ms: 0,
                member_id: "",
                group_instance_id: None,
                protocol_type: "consumer",
                protocols: &[],
                reason: None,
            },
            version,
        ),
        ApiKey::SyncGroup => send(
            c,
            &SyncGroupRequest {
                group_id: "g",
                generation_id: 0,
                member_id: "m",
                group_instance_id: None,
                protocol_type: None,
                protocol_name: None,
                assignments: &[],
            },
            version,
        ),
        ApiKey::ConsumerGroupHeartbeat => send(
            c,
            &ConsumerGroupHeartbeatRequest::beat("g", "m", 1),
            version,
        ),
        ApiKey::DescribeGroups => send(
            c,
            &DescribeGroupsRequest {
                groups: &["g"],
                include_authorized_operations: false,
            },
            version,
        ),
        ApiKey::ListGroups => send(c, &ListGroupsRequest::default(), version),
        ApiKey::DeleteGroups => send(
            c,
            &DeleteGroupsRequest {
                groups_names: &["g"],
            },
            version,
        ),
        ApiKey::DescribeConfigs => send(
            c,
            &DescribeConfigsRequest {
                resources: &[DescribeConfigsResource {
                    resource_type: ResourceType::TOPIC,
                    resource_name: "t",
                    configuration_keys: None,
                }],
                include_synonyms: true,
                include_documentation: false,
            },
            version,
        ),
        ApiKey::IncrementalAlterConfigs => send(
            c,
            &IncrementalAlterConfigsRequest {
                resources: &[AlterConfigsResource {
                    resource_type: ResourceType::TOPIC,
                    resource_name: "t",
                    configs: &[AlterableConfig {
                        name: "retention.ms",
                        operation: ConfigOperation::Set,
                        value: Some("1"),
                    }],
                }],
                validate_only: false,
            },
            version,
        ),
        ApiKey::CreatePartitions => send(
            c,
            &CreatePartitionsRequest {
                topics: &[NewPartitions {
                    name: "t",
                    count: 2,
                    assignments: None,
                }],
                timeout_ms: 1,
                validate_only: false,
            },
            version,
        ),
        ApiKey::ConsumerGroupDescribe => send(
            c,
            &ConsumerGroupDescribeRequest {
                group_ids: &["g"],
                include_authorized_operations: false,
            },
            version,
        ),
        ApiKey::Heartbeat => send(
            c,
            &HeartbeatRequest {
                group_id: "g",
                generation_id: 0,
                member_id: "m",
                group_instance_id: None,
            },
            version,
        ),
        ApiKey::LeaveGroup => send(
            c,
            &LeaveGroupRequest {
                group_id: "g",
                member_id: "m",
                group_instance_id: None,
                reason: None,
            },
            version,
        ),
        ApiKey::AddPartitionsToTxn => send(
            c,
            &AddPartitionsToTxnRequest {
                transactional_id: "t",
                producer_id: 1,
                producer_epoch: 0,
                topics: &[],
            },
            version,
        ),
        ApiKey::AddOffsetsToTxn => send(
            c,
            &AddOffsetsToTxnRequest {
                transactional_id: "t",
                producer_id: 1,
                producer_epoch: 0,
                group_id: "g",
            },
            version,
        ),
        ApiKey::EndTxn => send(
            c,
            &EndTxnRequest {
                transactional_id: "t",
                producer_id: 1,
                producer_epoch: 0,
                committed: true,
            },
            version,
        ),
        ApiKey::TxnOffsetCommit => send(
            c,
            &TxnOffsetCommitRequest {
                transactional_id: "t",
                group_id: "g",
                producer_id: 1,
                producer_epoch: 0,
                generation_id: -1,
                member_id: "",
                group_instance_id: None,
                topics: &[],
            },
            version,
        ),
    }
}

/// Decodes the body with its API's decoder; for Fetch, walks every partition's batches, read
/// uncommitted and read committed.
fn decode(frame: &ResponseFrame<'_>) {
    match frame.api_key {
        ApiKey::ApiVersions => drop(frame.decode::<ApiVersionsResponse>()),
        ApiKey::Metadata => drop(frame.decode::<MetadataResponse<'_>>()),
        ApiKey::CreateTopics => drop(frame.decode::<CreateTopicsResponse<'_>>()),
        ApiKey::DeleteTopics => drop(frame.decode::<DeleteTopicsResponse<'_>>()),
        ApiKey::Produce => drop(frame.decode::<ProduceResponse<'_>>()),
        ApiKey::ListOffsets => drop(frame.decode::<ListOffsetsResponse<'_>>()),
        ApiKey::InitProducerId => drop(frame.decode::<InitProducerIdResponse>()),
        ApiKey::SaslHandshake => drop(frame.decode::<SaslHandshakeResponse<'_>>()),
        ApiKey::SaslAuthenticate => drop(frame.decode::<SaslAuthenticateResponse<'_>>()),
        ApiKey::OffsetCommit => drop(frame.decode::<OffsetCommitResponse<'_>>()),
        ApiKey::OffsetFetch => drop(frame.decode::<OffsetFetchResponse<'_>>()),
        ApiKey::FindCoordinator => drop(frame.decode::<FindCoordinatorResponse<'_>>()),
        ApiKey::JoinGroup => {
            if let Ok(join) = frame.decode::<JoinGroupResponse<'_>>() {
                for member in &join.members {
                    drop(consumer_protocol::decode_subscription(member.metadata));
                }
            }
        }
        ApiKey::SyncGroup => {
            if let Ok(sync) = frame.decode::<SyncGroupResponse<'_>>() {
                drop(consumer_protocol::decode_assignment(sync.assignment));
            }
        }
        ApiKey::DescribeGroups => {
            if let Ok(described) = frame.decode::<DescribeGroupsResponse<'_>>() {
                for member in described.groups.iter().flat_map(|g| &g.members) {
                    drop(consumer_protocol::decode_subscription(
                        member.member_metadata,
                    ));
                    drop(consumer_protocol::decode_assignment(
                        member.member_assignment,
                    ));
                }
            }
        }
        ApiKey::ListGroups => drop(frame.decode::<ListGroupsResponse<'_>>()),
        ApiKey::DeleteGroups => drop(frame.decode::<DeleteGroupsResponse<'_>>()),
        ApiKey::DescribeConfigs => drop(frame.decode::<DescribeConfigsResponse<'_>>()),
        ApiKey::IncrementalAlterConfigs => {
            drop(frame.decode::<IncrementalAlterConfigsResponse<'_>>());
        }
        ApiKey::CreatePartitions => drop(frame.decode::<CreatePartitionsResponse<'_>>()),
        ApiKey::ConsumerGroupDescribe => {
            drop(frame.decode::<ConsumerGroupDescribeResponse<'_>>());
        }
        ApiKey::Heartbeat => drop(frame.decode::<HeartbeatResponse>()),
        ApiKey::ConsumerGroupHeartbeat => {
            drop(frame.decode::<ConsumerGroupHeartbeatResponse<'_>>());
        }
        ApiKey::LeaveGroup => drop(frame.decode::<LeaveGroupResponse<'_>>()),
        ApiKey::AddPartitionsToTxn => drop(frame.decode::<AddPartitionsToTxnResponse<'_>>()),
        ApiKey::AddOffsetsToTxn => drop(frame.decode::<AddOffsetsToTxnResponse>()),
        ApiKey::EndTxn => drop(frame.decode::<EndTxnResponse>()),
        ApiKey::TxnOffsetCommit => drop(frame.decode::<TxnOffsetCommitResponse<'_>>()),
        ApiKey::Fetch => {
            if let Ok(response) = frame.decode::<FetchResponse<'_>>() {
                let mut scratch = Vec::new();
                for p in response.topics.iter().flat_map(|t| &t.partitions) {
                    let range = frame.body.as_ptr_range();
                    assert!(p.records.is_empty() || range.contains(&p.records.as_ptr()));
                    let all = walk(p.records, 0, &mut scratch, &LIMITS, |_, _| {});
                    // Read committed, with the frame's own aborted transactions: a subset.
                    let aborted = &p.aborted_transactions;
                    let committed =
                        walk_committed(p.records, 0, aborted, &mut scratch, &LIMITS, |_, _| {});
                    if let (Ok(all), Ok(committed)) = (all, committed) {
                        assert!(committed.records <= all.records);
                        assert_eq!(committed.next_offset, all.next_offset);
                    }
                }
            }
        }
    }
}

fn correlator(data: &[u8]) -> (Correlator, Vec<(ApiKey, i16)>, usize, &[u8]) {
    let mut c = Correlator::new(Some("fuzz"), &LIMITS);
    let n = 1 + usize::from(data.first().copied().unwrap_or(0) % 8);
    let mut sent = Vec::new();
    for i in 0..n {
        let b = data.get(1 + i).copied().unwrap_or(0);
        let apis = ApiKey::ALL.len() as u8;
        let key = ApiKey::ALL[usize::from(b % apis)];
        let range = key.versions();
        let span = (range.end() - range.start() + 1) as u8;
        let version = range.start() + i16::from((b / apis) % span);
        queue(&mut c, key, version);
        sent.push((key, version));
    }
    let cut = usize::from(data.get(1 + n).copied().unwrap_or(0));
    (c, sent, cut, data.get(2 + n..).unwrap_or(&[]))
}

fuzz_target!(|data: &[u8]| {
    let (mut whole, sent, cut, stream) = correlator(data);
    let (mut split, ..) = correlator(data);
    let mut rest = stream;
    let mut answered = 0;
    loop {
        match whole.parse_response(rest) {
            Ok(Status::Complete(frame, consumed)) => {
                assert!(consumed >= 8 && consumed <= rest.len());
                assert_eq!((frame.api_key, frame.version), sent[answered]);
                assert_eq!(frame.correlation_id, answered as i32);
                decode(&frame);
                // A prefix of this frame is only ever "wait for more".
                let prefix = &rest[..cut.min(consumed - 1)];
                assert!(matches!(
                    split.parse_response(prefix),
                    Ok(Status::Partial { .. })
                ));
                let Ok(Status::Complete(again, n)) = split.parse_response(rest) else {
                    panic!("the second correlator disagrees");
                };
                assert_eq!((again.correlation_id, n), (frame.correlation_id, consumed));
                answered += 1;
                rest = &rest[consumed..];
            }
            Ok(Status::Partial { at_least }) => {
                assert!(at_least > rest.len());
                break;
            }
            Err(_) => break,
        }
    }
    assert_eq!(whole.in_flight(), sent.len() - answered);
});
