//! Requests and responses against an independent implementation (the `kafka-protocol` crate)
//! at every version this crate implements, fixed byte vectors for the headers and flexible
//! encodings, and every truncation of every response.

use bytes::{Bytes, BytesMut};
use kafka_protocol::messages as kp;
use kafka_protocol::protocol::{Decodable, Encodable, HeaderVersion, StrBytes};
use ringwire_kafka::api::add_offsets_to_txn::{AddOffsetsToTxnRequest, AddOffsetsToTxnResponse};
use ringwire_kafka::api::add_partitions_to_txn::{
    AddPartitionsToTxnRequest, AddPartitionsToTxnResponse, AddPartitionsToTxnTopic,
};
use ringwire_kafka::api::api_versions::{ApiVersionsRequest, ApiVersionsResponse};
use ringwire_kafka::api::consumer_group_describe::{
    ConsumerGroupDescribeRequest, ConsumerGroupDescribeResponse,
};
use ringwire_kafka::api::consumer_group_heartbeat::{
    AssignedPartitions, ConsumerGroupHeartbeatRequest, ConsumerGroupHeartbeatResponse,
    TopicPartitions,
};
use ringwire_kafka::api::consumer_protocol::{
    decode_assignment, decode_subscription, encode_assignment, encode_subscription,
};
use ringwire_kafka::api::create_partitions::{
    CreatePartitionsRequest, CreatePartitionsResponse, NewPartitions,
};
use ringwire_kafka::api::create_topics::{CreateTopicsRequest, CreateTopicsResponse, NewTopic};
use ringwire_kafka::api::delete_groups::{DeleteGroupsRequest, DeleteGroupsResponse};
use ringwire_kafka::api::delete_topics::{DeleteTopicsRequest, DeleteTopicsResponse};
use ringwire_kafka::api::describe_configs::{
    ConfigSource, ConfigSynonym, DescribeConfigsRequest, DescribeConfigsResource,
    DescribeConfigsResponse, ResourceType,
};
use ringwire_kafka::api::describe_groups::{DescribeGroupsRequest, DescribeGroupsResponse};
use ringwire_kafka::api::end_txn::{EndTxnRequest, EndTxnResponse};
use ringwire_kafka::api::fetch::{FetchPartition, FetchRequest, FetchResponse, FetchTopic};
use ringwire_kafka::api::find_coordinator::{
    FindCoordinatorRequest, FindCoordinatorResponse, GROUP,
};
use ringwire_kafka::api::heartbeat::{HeartbeatRequest, HeartbeatResponse};
use ringwire_kafka::api::incremental_alter_configs::{
    AlterConfigsResource, AlterableConfig, ConfigOperation, IncrementalAlterConfigsRequest,
    IncrementalAlterConfigsResponse,
};
use ringwire_kafka::api::init_producer_id::{InitProducerIdRequest, InitProducerIdResponse};
use ringwire_kafka::api::join_group::{JoinGroupProtocol, JoinGroupRequest, JoinGroupResponse};
use ringwire_kafka::api::leave_group::{LeaveGroupRequest, LeaveGroupResponse};
use ringwire_kafka::api::list_groups::{ListGroupsRequest, ListGroupsResponse};
use ringwire_kafka::api::list_offsets::{
    ListOffsetsPartition, ListOffsetsRequest, ListOffsetsResponse, ListOffsetsTopic,
};
use ringwire_kafka::api::metadata::{MetadataRequest, MetadataResponse};
use ringwire_kafka::api::offset_commit::{
    OffsetCommitPartition, OffsetCommitRequest, OffsetCommitResponse, OffsetCommitTopic,
};
use ringwire_kafka::api::offset_fetch::{
    OffsetFetchRequest, OffsetFetchResponse, OffsetFetchTopic,
};
use ringwire_kafka::api::produce::{
    Acks, ProducePartition, ProduceRequest, ProduceResponse, ProduceTopic,
};
use ringwire_kafka::api::sasl_authenticate::{SaslAuthenticateRequest, SaslAuthenticateResponse};
use ringwire_kafka::api::sasl_handshake::{SaslHandshakeRequest, SaslHandshakeResponse};
use ringwire_kafka::api::sync_group::{SyncGroupAssignment, SyncGroupRequest, SyncGroupResponse};
use ringwire_kafka::api::txn_offset_commit::{TxnOffsetCommitRequest, TxnOffsetCommitResponse};
use ringwire_kafka::codec::Reader;
use ringwire_kafka::{
    ApiKey, Correlator, DecodeError, EncodeError, ErrorCode, Limits, Request, Response,
};
use ringwire_wire::Status;

fn s(v: &str) -> StrBytes {
    StrBytes::from_string(v.to_owned())
}

fn topic(v: &str) -> kp::TopicName {
    kp::TopicName(s(v))
}

/// Encodes `request` with a fresh correlator, then decodes header and body with kafka-protocol.
fn round_trip_request<Q: Request, K: Decodable + HeaderVersion>(
    request: &Q,
    version: i16,
) -> (kp::RequestHeader, K) {
    let mut correlator = Correlator::new(Some("ringwire-test"), &Limits::default());
    let len = correlator.request_len(request, version).unwrap();
    let mut out = vec![0; len];
    let sent = correlator.encode(request, version, &mut out).unwrap();
    assert_eq!(sent.len, len);
    let size = i32::from_be_bytes(out[..4].try_into().unwrap());
    assert_eq!(size as usize, len - 4);
    let mut buf = Bytes::copy_from_slice(&out[4..]);
    let header = kp::RequestHeader::decode(&mut buf, K::header_version(version)).unwrap();
    assert_eq!(header.request_api_key, Q::API_KEY.code());
    assert_eq!(header.request_api_version, version);
    assert_eq!(header.correlation_id, sent.correlation_id);
    assert_eq!(header.client_id.as_deref(), Some("ringwire-test"));
    let body = K::decode(&mut buf, version).unwrap();
    assert!(buf.is_empty(), "{} bytes left after the body", buf.len());
    (header, body)
}

/// Encodes `response` with kafka-protocol at `version`.
fn encode_response<K: Encodable>(response: &K, version: i16) -> Vec<u8> {
    let mut buf = BytesMut::new();
    response.encode(&mut buf, version).unwrap();
    buf.to_vec()
}

/// Decodes `body` as `R`, then checks every strict prefix is a typed error.
fn decode_response<'a, R: Response<'a>>(body: &'a [u8], version: i16) -> R {
    let flexible = R::API_KEY.is_flexible(version);
    for cut in 0..body.len() {
        let mut r = Reader::new(&body[..cut], flexible);
        match R::decode(&mut r, version) {
            Err(DecodeError::Truncated { .. } | DecodeError::Limit(_)) => {}
            Err(e) => panic!("{:?} v{version} cut at {cut}: {e}", R::API_KEY),
            Ok(_) => panic!(
                "{:?} v{version} decoded from {cut} of {} bytes",
                R::API_KEY,
                body.len()
            ),
        }
    }
    R::decode(&mut Reader::new(body, flexible), version).unwrap()
}

#[test]
fn header_byte_vectors() {
    let mut c = Correlator::new(Some("ab"), &Limits::default());
    let request = MetadataRequest::default();
    // v12, flexible: header v2 (client id stays a classic string, then an empty tag section),
    // a compact null array (0), two booleans, an empty tag section.
    let mut out = vec![0; 21];
    c.encode(&request, 12, &mut out).unwrap();
    assert_eq!(
        out,
        [0, 0, 0, 17, 0, 3, 0, 12, 0, 0, 0, 0, 0, 2, b'a', b'b', 0, 0, 0, 0, 0]
    );
    // v8, classic: header v1, the null array as int32 -1, three booleans.
    let mut out = vec![0; 23];
    c.encode(&request, 8, &mut out).unwrap();
    assert_eq!(
        out,
        [0, 0, 0, 19, 0, 3, 0, 8, 0, 0, 0, 1, 0, 2, b'a', b'b', 0xff, 0xff, 0xff, 0xff, 0, 0, 0]
    );
    // A null client id.
    let mut c = Correlator::new(None, &Limits::default());
    let mut out = vec![0; 14];
    c.encode(&ApiVersionsRequest::default(), 0, &mut out)
        .unwrap();
    assert_eq!(out, [0, 0, 0, 10, 0, 18, 0, 0, 0, 0, 0, 0, 0xff, 0xff]);
}

#[test]
fn compact_encodings_byte_vectors() {
    let names = ["t"];
    let request = MetadataRequest {
        topics: Some(&names),
        allow_auto_topic_creation: true,
    };
    let mut c = Correlator::new(Some(""), &Limits::default());
    let len = c.request_len(&request, 12).unwrap();
    let mut out = vec![0; len];
    c.encode(&request, 12, &mut out).unwrap();
    // After the 15-byte header: array of 1 (2), uuid (16 zeros), compact "t" (2, 't'), tags,
    // allow_auto (1), include_topic_authorized_operations (0), tags.
    let mut want = vec![2];
    want.extend([0; 16]);
    want.extend([2, b't', 0, 1, 0, 0]);
    assert_eq!(&out[15..], want);
}

#[test]
fn encode_errors_are_typed() {
    let mut c = Correlator::new(None, &Limits::default());
    let request = MetadataRequest::default();
    assert_eq!(
        c.encode(&request, 3, &mut [0; 64]),
        Err(EncodeError::UnsupportedVersion {
            api_key: 3,
            version: 3
        })
    );
    assert_eq!(
        c.encode(&request, 12, &mut [0; 5]),
        Err(EncodeError::BufferTooSmall { need: 19 })
    );
    let long = "x".repeat(40_000);
    let names = [long.as_str()];
    let request = MetadataRequest {
        topics: Some(&names),
        allow_auto_topic_creation: false,
    };
    assert!(matches!(
        c.request_len(&request, 8),
        Err(EncodeError::TooLong { len: 40_000, .. })
    ));
    // The compact form has no such bound.
    assert!(c.request_len(&request, 12).is_ok());
    assert_eq!(c.in_flight(), 0, "failed encodes queue nothing");
}

/// A Fetch of nothing: a request whose response header is flexible from v12.
const EMPTY_FETCH: FetchRequest<'static> = FetchRequest {
    max_wait_ms: 0,
    min_bytes: 1,
    max_bytes: 1,
    isolation_level: 0,
    topics: &[],
};

/// A response frame: size, correlation id, optional header tags, body.
fn frame(correlation_id: i32, header_tags: Option<&[u8]>, body: &[u8]) -> Vec<u8> {
    let mut inner = correlation_id.to_be_bytes().to_vec();
    if let Some(tags) = header_tags {
        inner.extend_from_slice(tags);
    }
    inner.extend_from_slice(body);
    let mut out = (inner.len() as u32).to_be_bytes().to_vec();
    out.extend(inner);
    out
}

#[test]
fn response_headers_follow_the_request_queue() {
    let mut c = Correlator::new(None, &Limits::default());
    let mut buf = [0; 256];
    c.encode(&ApiVersionsRequest::default(), 3, &mut buf)
        .unwrap();
    let fetch = EMPTY_FETCH;
    c.encode(&fetch, 12, &mut buf).unwrap();
    c.encode(&fetch, 11, &mut buf).unwrap();
    c.encode(&fetch, 12, &mut buf).unwrap();
    let produce = ProduceRequest {
        transactional_id: None,
        acks: Acks::None,
        timeout_ms: 0,
        topics: &[],
    };
    let sent = c.encode(&produce, 9, &mut buf).unwrap();
    assert!(!sent.expects_response);
    assert_eq!(c.in_flight(), 4, "acks=0 is never queued");

    // ApiVersions v3: header v0 (no tag section), whatever the body version.
    let mut stream = frame(0, None, b"body0");
    // Fetch v12: header v1 with one tagged field (tag 7, 2 bytes) to skip.
    stream.extend(frame(1, Some(&[1, 7, 2, 0xaa, 0xbb]), b"body1"));
    // Fetch v11: header v0.
    stream.extend(frame(2, None, b"body2"));
    // Fetch v12 again: header v1 with the usual empty tag section.
    stream.extend(frame(3, Some(&[0]), b"body3"));
    let mut at = 0;
    for (id, key, body) in [
        (0, ApiKey::ApiVersions, b"body0"),
        (1, ApiKey::Fetch, b"body1"),
        (2, ApiKey::Fetch, b"body2"),
        (3, ApiKey::Fetch, b"body3"),
    ] {
        // Every prefix of the frame is Partial, never an error or a dequeue.
        let end = at + 4 + u32::from_be_bytes(stream[at..at + 4].try_into().unwrap()) as usize;
        for cut in at..end {
            assert!(matches!(
                c.parse_response(&stream[at..cut]),
                Ok(Status::Partial { .. })
            ));
        }
        let Ok(Status::Complete(f, n)) = c.parse_response(&stream[at..]) else {
            panic!("frame {id}");
        };
        assert_eq!((f.correlation_id, f.api_key, f.body), (id, key, &body[..]));
        assert_eq!(n, end - at);
        at = end;
    }
    assert_eq!(c.in_flight(), 0);
    assert_eq!(
        c.parse_response(&frame(5, None, b"")),
        Err(DecodeError::UnexpectedResponse { correlation_id: 5 })
    );
}

#[test]
fn framing_errors_are_typed() {
    let limits = Limits {
        max_response_len: 16,
        ..Limits::default()
    };
    let mut c = Correlator::new(None, &limits);
    let mut buf = [0; 64];
    c.encode(&ApiVersionsRequest::default(), 0, &mut buf)
        .unwrap();
    assert!(matches!(
        c.parse_response(&[0, 0, 0, 17]),
        Err(DecodeError::Limit(l)) if l.name == "frame length" && l.len == 17
    ));
    assert_eq!(
        c.parse_response(&frame(9, None, b"")),
        Err(DecodeError::CorrelationMismatch {
            expected: 0,
            got: 9
        })
    );
    // A frame too short for its correlation id.
    assert!(matches!(
        c.parse_response(&[0, 0, 0, 2, 0, 0]),
        Err(DecodeError::Truncated { .. })
    ));
    assert_eq!(c.in_flight(), 1, "errors dequeue nothing");
    // Decoding a frame as another API's response.
    let bytes = frame(0, None, &[0, 0, 0, 0, 0, 0]);
    let Ok(Status::Complete(f, _)) = c.parse_response(&bytes) else {
        panic!()
    };
    assert_eq!(
        f.decode::<MetadataResponse<'_>>(),
        Err(DecodeError::WrongApi {
            request: 18,
            decoded_as: 3
        })
    );
    assert_eq!(f.decode::<ApiVersionsResponse>().unwrap().api_keys, []);

    // A flexible header whose tag section is missing or cut short.
    let fetch = EMPTY_FETCH;
    c.encode(&fetch, 12, &mut buf).unwrap();
    let f = frame(1, Some(&[]), b"");
    assert_eq!(
        c.parse_response(&f),
        Err(DecodeError::Truncated { at_least: 1 })
    );
    let f = frame(1, Some(&[1]), b"");
    assert!(matches!(
        c.parse_response(&f),
        Err(DecodeError::Limit(l)) if l.name == "tagged field count"
    ));
    let f = frame(1, Some(&[1, 7, 3, 0xaa]), b"");
    assert!(matches!(
        c.parse_response(&f),
        Err(DecodeError::Truncated { .. })
    ));
    assert_eq!(c.in_flight(), 1, "errors dequeue nothing");
}

#[test]
fn api_versions_against_kafka_protocol() {
    for version in ApiKey::ApiVersions.versions() {
        let (_, req) = round_trip_request::<_, kp::ApiVersionsRequest>(
            &ApiVersionsRequest::default(),
            version,
        );
        if version >= 3 {
            assert_eq!(req.client_software_name.as_str(), "ringwire-kafka");
        }
        let mut resp = kp::ApiVersionsResponse::default();
        resp.error_code = 0;
        resp.throttle_time_ms = if version >= 1 { 7 } else { 0 };
        resp.api_keys = (0..3)
            .map(|k| {
                let mut v = kp::api_versions_response::ApiVersion::default();
                v.api_key = k;
                v.min_version = k;
                v.max_version = k + 4;
                v
            })
            .collect();
        let body = encode_response(&resp, version);
        let ours: ApiVersionsResponse = decode_response(&body, version);
        assert_eq!(ours.throttle_time_ms, resp.throttle_time_ms);
        let ranges: Vec<_> = ours
            .api_keys
            .iter()
            .map(|r| (r.api_key, r.min_version, r.max_version))
            .collect();
        assert_eq!(ranges, [(0, 0, 4), (1, 1, 5), (2, 2, 6)]);
    }
}

#[test]
fn metadata_against_kafka_protocol() {
    for version in ApiKey::Metadata.versions() {
        let names = ["alpha", "beta"];
        let request = MetadataRequest {
            topics: Some(&names),
            allow_auto_topic_creation: true,
        };
        let (_, req) = round_trip_request::<_, kp::MetadataRequest>(&request, version);
        let got: Vec<_> = req
            .topics
            .unwrap()
            .iter()
            .map(|t| t.name.as_ref().unwrap().0.to_string())
            .collect();
        assert_eq!(got, names);
        assert!(req.allow_auto_topic_creation);

        let mut resp = kp::MetadataResponse::default();
        resp.throttle_time_ms = 3;
        let mut broker = kp::metadata_response::MetadataResponseBroker::default();
        broker.node_id = kp::BrokerId(4);
        broker.host = s("broker.example");
        broker.port = 9092;
        broker.rack = Some(s("r1"));
        resp.brokers = vec![broker];
        resp.cluster_id = Some(s("cluster"));
        resp.controller_id = kp::BrokerId(4);
        let mut t = kp::metadata_response::MetadataResponseTopic::default();
        t.error_code = 0;
        t.name = Some(topic("alpha"));
        if version >= 10 {
            t.topic_id = uuid::Uuid::from_bytes([9; 16]);
        }
        let mut p = kp::metadata_response::MetadataResponsePartition::default();
        p.partition_index = 2;
        p.leader_id = kp::BrokerId(4);
        p.leader_epoch = if version >= 7 { 5 } else { -1 };
        p.replica_nodes = vec![kp::BrokerId(4), kp::BrokerId(5)];
        p.isr_nodes = vec![kp::BrokerId(4)];
        p.offline_replicas = if version >= 5 {
            vec![kp::BrokerId(5)]
        } else {
            vec![]
        };
        t.partitions = vec![p];
        resp.topics = vec![t];
        let body = encode_response(&resp, version);
        let ours: MetadataResponse<'_> = decode_response(&body, version);
        assert_eq!(ours.throttle_time_ms, 3);
        let b = ours.broker(4).unwrap();
        assert_eq!(
            (b.host, b.port, b.rack),
            ("broker.example", 9092, Some("r1"))
        );
        assert_eq!((ours.cluster_id, ours.controller_id), (Some("cluster"), 4));
        let t = &ours.topics[0];
        assert_eq!(t.name, Some("alpha"));
        assert_eq!(t.topic_id, if version >= 10 { [9; 16] } else { [0; 16] });
        let p = &t.partitions[0];
        assert_eq!((p.partition_index, p.leader_id), (2, 4));
        assert_eq!(p.leader_epoch, if version >= 7 { 5 } else { -1 });
        assert_eq!(
            (p.replica_nodes.as_slice(), p.isr_nodes.as_slice()),
            (&[4, 5][..], &[4][..])
        );
        assert_eq!(
            p.offline_replicas,
            if version >= 5 { vec![5] } else { vec![] }
        );
    }
}

#[test]
fn create_topics_against_kafka_protocol() {
    for version in ApiKey::CreateTopics.versions() {
        let configs = [("cleanup.policy", Some("compact")), ("retention.ms", None)];
        let topics = [NewTopic {
            name: "orders",
            num_partitions: 6,
            replication_factor: 3,
            configs: &configs,
        }];
        let request = CreateTopicsRequest {
            topics: &topics,
            timeout_ms: 1234,
            validate_only: true,
        };
        let (_, req) = round_trip_request::<_, kp::CreateTopicsRequest>(&request, version);
        assert_eq!((req.timeout_ms, req.validate_only), (1234, true));
        let t = &req.topics[0];
        assert_eq!(
            (t.name.0.as_str(), t.num_partitions, t.replication_factor),
            ("orders", 6, 3)
        );
        let got: Vec<_> = t
            .configs
            .iter()
            .map(|c| {
                (
                    c.name.to_string(),
                    c.value.as_ref().map(ToString::to_string),
                )
            })
            .collect();
        assert_eq!(
            got,
            [
                ("cleanup.policy".to_owned(), Some("compact".to_owned())),
                ("retention.ms".to_owned(), None)
            ]
        );

        let mut resp = kp::CreateTopicsResponse::default();
        resp.throttle_time_ms = 9;
        let mut r = kp::create_topics_response::CreatableTopicResult::default();
        r.name = topic("orders");
        r.error_code = 36;
        r.error_message = Some(s("exists"));
        if version >= 5 {
            r.num_partitions = 6;
            r.replication_factor = 3;
            let mut c = kp::create_topics_response::CreatableTopicConfigs::default();
            c.name = s("cleanup.policy");
            c.value = Some(s("compact"));
            r.configs = Some(vec![c]);
        }
        if version >= 7 {
            r.topic_id = uuid::Uuid::from_bytes([3; 16]);
        }
        resp.topics = vec![r];
        let body = encode_response(&resp, version);
        let ours: CreateTopicsResponse<'_> = decode_response(&body, version);
        assert_eq!(ours.throttle_time_ms, 9);
        let t = &ours.topics[0];
        assert_eq!(
            (t.name, t.error_code, t.error_message),
            ("orders", ErrorCode(36), Some("exists"))
        );
        if version >= 5 {
            assert_eq!((t.num_partitions, t.replication_factor), (6, 3));
        }
        if version >= 7 {
            assert_eq!(t.topic_id, [3; 16]);
        }
    }
}

#[test]
fn delete_topics_against_kafka_protocol() {
    for version in ApiKey::DeleteTopics.versions() {
        let request = DeleteTopicsRequest {
            topic_names: &["orders", "audit"],
            timeout_ms: 4321,
        };
        let (_, req) = round_trip_request::<_, kp::DeleteTopicsRequest>(&request, version);
        assert_eq!(req.timeout_ms, 4321);
        let names: Vec<&str> = req.topic_names.iter().map(|n| n.0.as_str()).collect();
        assert_eq!(names, ["orders", "audit"]);

        let mut resp = kp::DeleteTopicsResponse::default();
        resp.throttle_time_ms = 7;
        let mut r = kp::delete_topics_response::DeletableTopicResult::default();
        r.name = Some(topic("orders"));
        r.error_code = 3;
        if version >= 5 {
            r.error_message = Some(s("no such topic"));
        }
        resp.responses = vec![r];
        let body = encode_response(&resp, version);
        let ours: DeleteTopicsResponse<'_> = decode_response(&body, version);
        assert_eq!(ours.throttle_time_ms, 7);
        let message = (version >= 5).then_some("no such topic");
        assert_eq!(
            (
                ours.topics[0].name,
                ours.topics[0].error_code,
                ours.topics[0].error_message
            ),
            ("orders", ErrorCode(3), message)
        );
    }
}

/// Produce v12 has v11's layout; kafka-protocol stops at v11, so v12 is checked against it.
#[test]
fn produce_v12_is_v11_on_the_wire() {
    let partitions = [ProducePartition {
        index: 2,
        records: b"batch",
    }];
    let topics = [ProduceTopic {
        name: "events",
        partitions: &partitions,
    }];
    let request = ProduceRequest {
        transactional_id: None,
        acks: Acks::Leader,
        timeout_ms: 100,
        topics: &topics,
    };
    let encode = |version| {
        let mut c = Correlator::new(None, &Limits::default());
        let mut out = vec![0; c.request_len(&request, version).unwrap()];
        c.encode(&request, version, &mut out).unwrap();
        out
    };
    let (v11, mut v12) = (encode(11), encode(12));
    assert_eq!(&v12[6..8], &[0, 12]);
    v12[7] = 11;
    assert_eq!(v12, v11);
    let mut resp = kp::ProduceResponse::default();
    let mut t = kp::produce_response::TopicProduceResponse::default();
    t.name = topic("events");
    let mut p = kp::produce_response::PartitionProduceResponse::default();
    p.index = 2;
    p.base_offset = 99;
    t.partition_responses = vec![p];
    resp.responses = vec![t];
    let body = encode_response(&resp, 11);
    let ours: ProduceResponse<'_> = decode_response(&body, 12);
    assert_eq!(ours.topics[0].partitions[0].base_offset, 99);
}

#[test]
fn produce_against_kafka_protocol() {
    for version in 3..=11 {
        let partitions = [
            ProducePartition {
                index: 0,
                records: b"batch zero",
            },
            ProducePartition {
                index: 3,
                records: b"",
            },
        ];
        let topics = [ProduceTopic {
            name: "events",
            partitions: &partitions,
        }];
        let request = ProduceRequest {
            transactional_id: Some("tx"),
            acks: Acks::All,
            timeout_ms: 500,
            topics: &topics,
        };
        let (_, req) = round_trip_request::<_, kp::ProduceRequest>(&request, version);
        assert_eq!(
            req.transactional_id.as_ref().map(|t| t.0.as_str()),
            Some("tx")
        );
        assert_eq!((req.acks, req.timeout_ms), (-1, 500));
        let t = &req.topic_data[0];
        assert_eq!(t.name.0.as_str(), "events");
        let got: Vec<_> = t
            .partition_data
            .iter()
            .map(|p| (p.index, p.records.as_ref().unwrap().to_vec()))
            .collect();
        assert_eq!(got, [(0, b"batch zero".to_vec()), (3, vec![])]);

        let mut resp = kp::ProduceResponse::default();
        resp.throttle_time_ms = 2;
        let mut p = kp::produce_response::PartitionProduceResponse::default();
        p.index = 3;
        p.error_code = 6;
        p.base_offset = 1 << 40;
        p.log_append_time_ms = 77;
        p.log_start_offset = if version >= 5 { 5 } else { -1 };
        if version >= 8 {
            p.error_message = Some(s("not leader"));
            let mut e = kp::produce_response::BatchIndexAndErrorMessage::default();
            e.batch_index = 1;
            e.batch_index_error_message = Some(s("bad record"));
            p.record_errors = vec![e];
        }
        let mut t = kp::produce_response::TopicProduceResponse::default();
        t.name = topic("events");
        t.partition_responses = vec![p];
        resp.responses = vec![t];
        let body = encode_response(&resp, version);
        let ours: ProduceResponse<'_> = decode_response(&body, version);
        assert_eq!(ours.throttle_time_ms, 2);
        assert_eq!(ours.topics[0].name, "events");
        let p = &ours.topics[0].partitions[0];
        assert_eq!(
            (p.index, p.error_code, p.base_offset),
            (3, ErrorCode(6), 1 << 40)
        );
        assert_eq!(p.log_append_time_ms, 77);
        assert_eq!(p.log_start_offset, if version >= 5 { 5 } else { -1 });
        assert_eq!(p.error_message, (version >= 8).then_some("not leader"));
        let record_errors: Vec<_> = p
            .record_errors
            .iter()
            .map(|e| (e.batch_index, e.message))
            .collect();
        let expected: &[(i32, Option<&str>)] = if version >= 8 {
            &[(1, Some("bad record"))]
        } else {
            &[]
        };
        assert_eq!(record_errors, expected);
    }
}

#[test]
fn fetch_against_kafka_protocol() {
    for version in ApiKey::Fetch.versions() {
        let partitions = [FetchPartition {
            partition: 1,
            fetch_offset: 42,
            partition_max_bytes: 1 << 20,
        }];
        let topics = [FetchTopic {
            name: "logs",
            partitions: &partitions,
        }];
        let request = FetchRequest {
            max_wait_ms: 250,
            min_bytes: 10,
            max_bytes: 1 << 24,
            isolation_level: 1,
            topics: &topics,
        };
        let (_, req) = round_trip_request::<_, kp::FetchRequest>(&request, version);
        assert_eq!(req.replica_id, kp::BrokerId(-1));
        assert_eq!(
            (req.max_wait_ms, req.min_bytes, req.max_bytes),
            (250, 10, 1 << 24)
        );
        assert_eq!(req.isolation_level, 1);
        let t = &req.topics[0];
        assert_eq!(t.topic.0.as_str(), "logs");
        let p = &t.partitions[0];
        assert_eq!(
            (p.partition, p.fetch_offset, p.partition_max_bytes),
            (1, 42, 1 << 20)
        );

        let mut resp = kp::FetchResponse::default();
        resp.throttle_time_ms = 1;
        if version >= 7 {
            resp.error_code = 0;
            resp.session_id = 17;
        }
        let mut p = kp::fetch_response::PartitionData::default();
        p.partition_index = 1;
        p.high_watermark = 100;
        p.last_stable_offset = 90;
        p.log_start_offset = if version >= 5 { 10 } else { -1 };
        let mut aborted = kp::fetch_response::AbortedTransaction::default();
        aborted.producer_id = kp::ProducerId(8);
        aborted.first_offset = 50;
        p.aborted_transactions = Some(vec![aborted]);
        p.preferred_read_replica = kp::BrokerId(if version >= 11 { 2 } else { -1 });
        p.records = Some(Bytes::from_static(b"opaque record bytes"));
        let mut t = kp::fetch_response::FetchableTopicResponse::default();
        t.topic = topic("logs");
        t.partitions = vec![p];
        resp.responses = vec![t];
        let body = encode_response(&resp, version);
        let ours: FetchResponse<'_> = decode_response(&body, version);
        assert_eq!(ours.session_id, if version >= 7 { 17 } else { 0 });
        let p = &ours.topics[0].partitions[0];
        assert_eq!(ours.topics[0].name, "logs");
        assert_eq!(
            (p.partition_index, p.high_watermark, p.last_stable_offset),
            (1, 100, 90)
        );
        assert_eq!(p.log_start_offset, if version >= 5 { 10 } else { -1 });
        assert_eq!(p.aborted_transactions[0].first_offset, 50);
        assert_eq!(p.preferred_read_replica, if version >= 11 { 2 } else { -1 });
        assert_eq!(p.records, b"opaque record bytes");
        // Zero-copy: the records are a slice of the body.
        let range = body.as_ptr_range();
        assert!(range.contains(&p.records.as_ptr()));
    }
}

#[test]
fn list_offsets_against_kafka_protocol() {
    for version in ApiKey::ListOffsets.versions() {
        let partitions = [ListOffsetsPartition {
            partition_index: 4,
            timestamp: -2,
        }];
        let topics = [ListOffsetsTopic {
            name: "clicks",
            partitions: &partitions,
        }];
        let request = ListOffsetsRequest {
            isolation_level: 0,
            topics: &topics,
        };
        let (_, req) = round_trip_request::<_, kp::ListOffsetsRequest>(&request, version);
        assert_eq!(req.replica_id, kp::BrokerId(-1));
        let p = &req.topics[0].partitions[0];
        assert_eq!(
            (
                req.topics[0].name.0.as_str(),
                p.partition_index,
                p.timestamp
            ),
            ("clicks", 4, -2)
        );

        let mut resp = kp::ListOffsetsResponse::default();
        resp.throttle_time_ms = if version >= 2 { 6 } else { 0 };
        let mut p = kp::list_offsets_response::ListOffsetsPartitionResponse::default();
        p.partition_index = 4;
        p.error_code = 0;
        p.timestamp = -1;
        p.offset = 1234;
        p.leader_epoch = if version >= 4 { 3 } else { -1 };
        let mut t = kp::list_offsets_response::ListOffsetsTopicResponse::default();
        t.name = topic("clicks");
        t.partitions = vec![p];
        resp.topics = vec![t];
        let body = encode_response(&resp, version);
        let ours: ListOffsetsResponse<'_> = decode_response(&body, version);
        assert_eq!(ours.throttle_time_ms, if version >= 2 { 6 } else { 0 });
        let p = &ours.topics[0].partitions[0];
        assert_eq!((p.partition_index, p.offset, p.timestamp), (4, 1234, -1));
        assert_eq!(p.leader_epoch, if version >= 4 { 3 } else { -1 });
    }
}

#[test]
fn init_producer_id_against_kafka_protocol() {
    for version in ApiKey::InitProducerId.versions() {
        let request = InitProducerIdRequest {
            producer_id: 77,
            producer_epoch: 3,
            ..InitProducerIdRequest::default()
        };
        let (_, req) = round_trip_request::<_, kp::InitProducerIdRequest>(&request, version);
        assert_eq!(req.transactional_id, None);
        assert_eq!(req.transaction_timeout_ms, -1);
        // The id and epoch to bump exist from v3 on.
        let (id, epoch) = if version >= 3 { (77, 3) } else { (-1, -1) };
        assert_eq!(
            (req.producer_id, req.producer_epoch),
            (kp::ProducerId(id), epoch)
        );

        let mut resp = kp::InitProducerIdResponse::default();
        resp.throttle_time_ms = 5;
        resp.error_code = 0;
        resp.producer_id = kp::ProducerId(4242);
        resp.producer_epoch = 7;
        let body = encode_response(&resp, version);
        let ours: InitProducerIdResponse = decode_response(&body, version);
        assert_eq!(
            ours,
            InitProducerIdResponse {
                throttle_time_ms: 5,
                error_code: ErrorCode::NONE,
                producer_id: 4242,
                producer_epoch: 7,
            }
        );
    }
}

#[test]
fn add_partitions_to_txn_against_kafka_protocol() {
    for version in ApiKey::AddPartitionsToTxn.versions() {
        let topics = [
            AddPartitionsToTxnTopic {
                name: "a",
                partitions: &[0, 2],
            },
            AddPartitionsToTxnTopic {
                name: "b",
                partitions: &[1],
            },
        ];
        let request = AddPartitionsToTxnRequest {
            transactional_id: "tx-1",
            producer_id: 77,
            producer_epoch: 3,
            topics: &topics,
        };
        let (_, req) = round_trip_request::<_, kp::AddPartitionsToTxnRequest>(&request, version);
        assert_eq!(req.v3_and_below_transactional_id.as_str(), "tx-1");
        assert_eq!(
            (
                req.v3_and_below_producer_id,
                req.v3_and_below_producer_epoch
            ),
            (kp::ProducerId(77), 3)
        );
        let sent: Vec<(&str, Vec<i32>)> = req
            .v3_and_below_topics
            .iter()
            .map(|t| (t.name.as_str(), t.partitions.clone()))
            .collect();
        assert_eq!(sent, [("a", vec![0, 2]), ("b", vec![1])]);

        let mut resp = kp::AddPartitionsToTxnResponse::default();
        resp.throttle_time_ms = 4;
        let mut topic =
            kp::add_partitions_to_txn_response::AddPartitionsToTxnTopicResult::default();
        topic.name = self::topic("a");
        for (index, code) in [(0, 0), (2, 53)] {
            let mut p =
                kp::add_partitions_to_txn_response::AddPartitionsToTxnPartitionResult::default();
            p.partition_index = index;
            p.partition_error_code = code;
            topic.results_by_partition.push(p);
        }
        resp.results_by_topic_v3_and_below = vec![topic];
        let body = encode_response(&resp, version);
        let ours: AddPartitionsToTxnResponse<'_> = decode_response(&body, version);
        assert_eq!(ours.0.throttle_time_ms, 4);
        assert_eq!(ours.0.topics.len(), 1);
        assert_eq!(ours.0.topics[0].name, "a");
        let errors: Vec<(i32, ErrorCode)> = ours.0.topics[0]
            .partitions
            .iter()
            .map(|p| (p.partition_index, p.error_code))
            .collect();
        assert_eq!(errors, [(0, ErrorCode::NONE), (2, ErrorCode(53))]);
    }
}

#[test]
fn add_offsets_and_end_txn_against_kafka_protocol() {
    for version in ApiKey::AddOffsetsToTxn.versions() {
        let request = AddOffsetsToTxnRequest {
            transactional_id: "tx-1",
            producer_id: 77,
            producer_epoch: 3,
            group_id: "billing",
        };
        let (_, req) = round_trip_request::<_, kp::AddOffsetsToTxnRequest>(&request, version);
        assert_eq!(req.transactional_id.as_str(), "tx-1");
        assert_eq!(
            (req.producer_id, req.producer_epoch),
            (kp::ProducerId(77), 3)
        );
        assert_eq!(req.group_id.as_str(), "billing");
        let mut resp = kp::AddOffsetsToTxnResponse::default();
        resp.throttle_time_ms = 2;
        resp.error_code = 51;
        let body = encode_response(&resp, version);
        let ours: AddOffsetsToTxnResponse = decode_response(&body, version);
        assert_eq!((ours.throttle_time_ms, ours.error_code), (2, ErrorCode(51)));
    }
    for version in ApiKey::EndTxn.versions() {
        for committed in [true, false] {
            let request = EndTxnRequest {
                transactional_id: "tx-1",
                producer_id: 77,
                producer_epoch: 3,
                committed,
            };
            let (_, req) = round_trip_request::<_, kp::EndTxnRequest>(&request, version);
            assert_eq!(req.transactional_id.as_str(), "tx-1");
            assert_eq!(
                (req.producer_id, req.producer_epoch),
                (kp::ProducerId(77), 3)
            );
            assert_eq!(req.committed, committed);
        }
        let mut resp = kp::EndTxnResponse::default();
        resp.throttle_time_ms = 1;
        resp.error_code = 48;
        let body = encode_response(&resp, version);
        let ours: EndTxnResponse = decode_response(&body, version);
        assert_eq!((ours.throttle_time_ms, ours.error_code), (1, ErrorCode(48)));
    }
}

#[test]
fn txn_offset_commit_against_kafka_protocol() {
    for version in ApiKey::TxnOffsetCommit.versions() {
        let partitions = [OffsetCommitPartition {
            partition_index: 4,
            committed_offset: 41,
            committed_leader_epoch: 5,
            committed_metadata: Some("m"),
        }];
        let topics = [OffsetCommitTopic {
            name: "orders",
            partitions: &partitions,
        }];
        let request = TxnOffsetCommitRequest {
            transactional_id: "tx-1",
            group_id: "billing",
            producer_id: 77,
            producer_epoch: 3,
            generation_id: 9,
            member_id: "m-1",
            group_instance_id: Some("i-1"),
            topics: &topics,
        };
        let (_, req) = round_trip_request::<_, kp::TxnOffsetCommitRequest>(&request, version);
        assert_eq!(req.transactional_id.as_str(), "tx-1");
        assert_eq!(req.group_id.as_str(), "billing");
        assert_eq!(
            (req.producer_id, req.producer_epoch),
            (kp::ProducerId(77), 3)
        );
        // The consumer's membership goes from v3 on.
        if version >= 3 {
            assert_eq!((req.generation_id, req.member_id.as_str()), (9, "m-1"));
            assert_eq!(req.group_instance_id.as_deref(), Some("i-1"));
        } else {
            assert_eq!((req.generation_id, req.member_id.as_str()), (-1, ""));
        }
        let [topic] = &req.topics[..] else {
            panic!("one topic")
        };
        assert_eq!(topic.name.as_str(), "orders");
        let [p] = &topic.partitions[..] else {
            panic!("one partition")
        };
        assert_eq!((p.partition_index, p.committed_offset), (4, 41));
        assert_eq!(p.committed_leader_epoch, if version >= 2 { 5 } else { -1 });
        assert_eq!(p.committed_metadata.as_deref(), Some("m"));

        let mut resp = kp::TxnOffsetCommitResponse::default();
        resp.throttle_time_ms = 6;
        let mut t = kp::txn_offset_commit_response::TxnOffsetCommitResponseTopic::default();
        t.name = self::topic("orders");
        let mut rp = kp::txn_offset_commit_response::TxnOffsetCommitResponsePartition::default();
        rp.partition_index = 4;
        rp.error_code = 0;
        t.partitions = vec![rp];
        resp.topics = vec![t];
        let body = encode_response(&resp, version);
        let ours: TxnOffsetCommitResponse<'_> = decode_response(&body, version);
        assert_eq!(ours.0.throttle_time_ms, 6);
        assert_eq!(ours.0.topics[0].name, "orders");
        assert_eq!(ours.0.topics[0].partitions[0].partition_index, 4);
        assert_eq!(ours.0.topics[0].partitions[0].error_code, ErrorCode::NONE);
    }
}

#[test]
fn find_coordinator_against_kafka_protocol() {
    for version in ApiKey::FindCoordinator.versions() {
        let request = FindCoordinatorRequest::group("billing");
        let (_, req) = round_trip_request::<_, kp::FindCoordinatorRequest>(&request, version);
        assert_eq!(req.key_type, GROUP);
        if version < 4 {
            assert_eq!(req.key.as_str(), "billing");
            assert!(req.coordinator_keys.is_empty());
        } else {
            assert_eq!(req.key.as_str(), "");
            assert_eq!(req.coordinator_keys, [s("billing")]);
        }

        let mut resp = kp::FindCoordinatorResponse::default();
        resp.throttle_time_ms = 3;
        if version < 4 {
            resp.error_code = 15;
            resp.error_message = Some(s("loading"));
            resp.node_id = kp::BrokerId(2);
            resp.host = s("kafka-2");
            resp.port = 9093;
        } else {
            let mut c = kp::find_coordinator_response::Coordinator::default();
            c.key = s("billing");
            c.node_id = kp::BrokerId(2);
            c.host = s("kafka-2");
            c.port = 9093;
            c.error_code = 15;
            c.error_message = Some(s("loading"));
            resp.coordinators = vec![c];
        }
        let body = encode_response(&resp, version);
        let ours: FindCoordinatorResponse<'_> = decode_response(&body, version);
        assert_eq!(ours.throttle_time_ms, 3);
        let [c] = ours.coordinators[..] else {
            panic!("one coordinator, got {:?}", ours.coordinators)
        };
        assert_eq!(c.key, (version >= 4).then_some("billing"));
        assert_eq!((c.node_id, c.host, c.port), (2, "kafka-2", 9093));
        assert_eq!(c.error_code, ErrorCode::COORDINATOR_NOT_AVAILABLE);
        assert_eq!(c.error_message, Some("loading"));
    }
}

#[test]
fn offset_commit_against_kafka_protocol() {
    for version in ApiKey::OffsetCommit.versions() {
        let partitions = [
            OffsetCommitPartition {
                partition_index: 0,
                committed_offset: 41,
                committed_leader_epoch: 5,
                committed_metadata: None,
            },
            OffsetCommitPartition {
                partition_index: 3,
                committed_offset: 1 << 40,
                committed_leader_epoch: -1,
                committed_metadata: Some("host-a"),
            },
        ];
        let topics = [OffsetCommitTopic {
            name: "clicks",
            partitions: &partitions,
        }];
        let request = OffsetCommitRequest::standalone("billing", &topics);
        let (_, req) = round_trip_request::<_, kp::OffsetCommitRequest>(&request, version);
        assert_eq!(req.group_id.0.as_str(), "billing");
        assert_eq!(req.generation_id_or_member_epoch, -1);
        assert_eq!(req.member_id.as_str(), "");
        assert_eq!(req.group_instance_id, None);
        assert_eq!(req.retention_time_ms, -1);
        assert_eq!(req.topics[0].name.0.as_str(), "clicks");
        let got: Vec<_> = req.topics[0]
            .partitions
            .iter()
            .map(|p| {
                (
                    p.partition_index,
                    p.committed_offset,
                    p.committed_leader_epoch,
                    p.committed_metadata.as_deref().map(str::to_owned),
                )
            })
            .collect();
        // The leader epoch exists from v6 on.
        let epoch = |e| if version >= 6 { e } else { -1 };
        assert_eq!(
            got,
            [
                (0, 41, epoch(5), None),
                (3, 1 << 40, -1, Some("host-a".to_owned()))
            ]
        );

        let mut resp = kp::OffsetCommitResponse::default();
        resp.throttle_time_ms = if version >= 3 { 9 } else { 0 };
        let mut t = kp::offset_commit_response::OffsetCommitResponseTopic::default();
        t.name = topic("clicks");
        for (index, code) in [(0, 0), (3, 16)] {
            let mut p = kp::offset_commit_response::OffsetCommitResponsePartition::default();
            p.partition_index = index;
            p.error_code = code;
            t.partitions.push(p);
        }
        resp.topics = vec![t];
        let body = encode_response(&resp, version);
        let ours: OffsetCommitResponse<'_> = decode_response(&body, version);
        assert_eq!(ours.throttle_time_ms, if version >= 3 { 9 } else { 0 });
        assert_eq!(ours.topics[0].name, "clicks");
        let codes: Vec<_> = ours.topics[0]
            .partitions
            .iter()
            .map(|p| (p.partition_index, p.error_code))
            .collect();
        assert_eq!(
            codes,
            [(0, ErrorCode::NONE), (3, ErrorCode::NOT_COORDINATOR)]
        );
    }
}

#[test]
fn offset_fetch_against_kafka_protocol() {
    for version in ApiKey::OffsetFetch.versions() {
        let topics = [OffsetFetchTopic {
            name: "clicks",
            partition_indexes: &[0, 3],
        }];
        let request = OffsetFetchRequest {
            group_id: "billing",
            topics: &topics,
            require_stable: true,
        };
        let (_, req) = round_trip_request::<_, kp::OffsetFetchRequest>(&request, version);
        assert_eq!(req.group_id.0.as_str(), "billing");
        let t = &req.topics.as_ref().expect("topics named")[0];
        assert_eq!(t.name.0.as_str(), "clicks");
        assert_eq!(t.partition_indexes, [0, 3]);
        assert_eq!(req.require_stable, version >= 7);

        let mut resp = kp::OffsetFetchResponse::default();
        resp.throttle_time_ms = if version >= 3 { 4 } else { 0 };
        resp.error_code = if version >= 2 { 14 } else { 0 };
        let mut t = kp::offset_fetch_response::OffsetFetchResponseTopic::default();
        t.name = topic("clicks");
        for (index, offset, metadata) in [(0, 41, Some("host-a")), (3, -1, None)] {
            let mut p = kp::offset_fetch_response::OffsetFetchResponsePartition::default();
            p.partition_index = index;
            p.committed_offset = offset;
            p.committed_leader_epoch = if version >= 5 { 5 } else { -1 };
            p.metadata = metadata.map(s);
            t.partitions.push(p);
        }
        resp.topics = vec![t];
        let body = encode_response(&resp, version);
        let ours: OffsetFetchResponse<'_> = decode_response(&body, version);
        assert_eq!(ours.throttle_time_ms, if version >= 3 { 4 } else { 0 });
        let group_error = if version >= 2 {
            ErrorCode::COORDINATOR_LOAD_IN_PROGRESS
        } else {
            ErrorCode::NONE
        };
        assert_eq!(ours.error_code, group_error);
        let got: Vec<_> = ours.topics[0]
            .partitions
            .iter()
            .map(|p| {
                (
                    p.partition_index,
                    p.committed_offset,
                    p.committed_leader_epoch,
                    p.metadata,
                    p.error_code,
                )
            })
            .collect();
        let epoch = if version >= 5 { 5 } else { -1 };
        assert_eq!(
            got,
            [
                (0, 41, epoch, Some("host-a"), ErrorCode::NONE),
                (3, -1, epoch, None, ErrorCode::NONE)
            ]
        );
    }
}

#[test]
fn join_group_against_kafka_protocol() {
    for version in ApiKey::JoinGroup.versions() {
        let protocols = [
            JoinGroupProtocol {
                name: "range",
                metadata: b"range metadata",
            },
            JoinGroupProtocol {
                name: "roundrobin",
                metadata: b"",
            },
        ];
        let request = JoinGroupRequest {
            group_id: "billing",
            session_timeout_ms: 45_000,
            rebalance_timeout_ms: 30_000,
            member_id: "m-1",
            group_instance_id: None,
            protocol_type: "consumer",
            protocols: &protocols,
            reason: Some("starting"),
        };
        let (_, req) = round_trip_request::<_, kp::JoinGroupRequest>(&request, version);
        assert_eq!(req.group_id.0.as_str(), "billing");
        assert_eq!(
            (req.session_timeout_ms, req.rebalance_timeout_ms),
            (45_000, 30_000)
        );
        assert_eq!(
            (req.member_id.as_str(), req.protocol_type.as_str()),
            ("m-1", "consumer")
        );
        let names: Vec<_> = req.protocols.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(names, ["range", "roundrobin"]);
        assert_eq!(&req.protocols[0].metadata[..], b"range metadata");
        assert_eq!(req.reason.as_deref(), (version >= 8).then_some("starting"));

        let mut resp = kp::JoinGroupResponse::default();
        resp.throttle_time_ms = 2;
        resp.error_code = 79;
        resp.generation_id = 7;
        resp.protocol_type = (version >= 7).then(|| s("consumer"));
        resp.protocol_name = Some(s("range"));
        resp.leader = s("m-1");
        resp.member_id = s("m-2");
        for (id, metadata) in [("m-1", &b"one"[..]), ("m-2", b"")] {
            let mut m = kp::join_group_response::JoinGroupResponseMember::default();
            m.member_id = s(id);
            m.group_instance_id = (version >= 5 && id == "m-1").then(|| s("static-1"));
            m.metadata = Bytes::from_static(metadata);
            resp.members.push(m);
        }
        let body = encode_response(&resp, version);
        let ours: JoinGroupResponse<'_> = decode_response(&body, version);
        assert_eq!(ours.throttle_time_ms, 2);
        assert_eq!(ours.error_code, ErrorCode(79));
        assert_eq!(ours.generation_id, 7);
        assert_eq!(ours.protocol_type, (version >= 7).then_some("consumer"));
        assert_eq!(ours.protocol_name, Some("range"));
        assert_eq!((ours.leader, ours.member_id), ("m-1", "m-2"));
        let members: Vec<_> = ours
            .members
            .iter()
            .map(|m| (m.member_id, m.group_instance_id, m.metadata))
            .collect();
        let instance = (version >= 5).then_some("static-1");
        assert_eq!(
            members,
            [("m-1", instance, &b"one"[..]), ("m-2", None, &b""[..])]
        );
    }
}

#[test]
fn sync_group_against_kafka_protocol() {
    for version in ApiKey::SyncGroup.versions() {
        let assignments = [
            SyncGroupAssignment {
                member_id: "m-1",
                assignment: b"first",
            },
            SyncGroupAssignment {
                member_id: "m-2",
                assignment: b"",
            },
        ];
        let request = SyncGroupRequest {
            group_id: "billing",
            generation_id: 7,
            member_id: "m-1",
            group_instance_id: None,
            protocol_type: Some("consumer"),
            protocol_name: Some("range"),
            assignments: &assignments,
        };
        let (_, req) = round_trip_request::<_, kp::SyncGroupRequest>(&request, version);
        assert_eq!(
            (
                req.group_id.0.as_str(),
                req.generation_id,
                req.member_id.as_str()
            ),
            ("billing", 7, "m-1")
        );
        assert_eq!(
            req.protocol_name.as_deref(),
            (version >= 5).then_some("range")
        );
        let got: Vec<_> = req
            .assignments
            .iter()
            .map(|a| (a.member_id.to_string(), a.assignment.to_vec()))
            .collect();
        assert_eq!(
            got,
            [
                ("m-1".to_owned(), b"first".to_vec()),
                ("m-2".to_owned(), Vec::new())
            ]
        );

        let mut resp = kp::SyncGroupResponse::default();
        resp.throttle_time_ms = if version >= 1 { 3 } else { 0 };
        resp.error_code = 27;
        resp.protocol_type = (version >= 5).then(|| s("consumer"));
        resp.protocol_name = (version >= 5).then(|| s("range"));
        resp.assignment = Bytes::from_static(b"mine");
        let body = encode_response(&resp, version);
        let ours: SyncGroupResponse<'_> = decode_response(&body, version);
        assert_eq!(ours.throttle_time_ms, if version >= 1 { 3 } else { 0 });
        assert_eq!(ours.error_code, ErrorCode(27));
        assert_eq!(ours.protocol_name, (version >= 5).then_some("range"));
        assert_eq!(ours.assignment, b"mine");
    }
}

#[test]
fn heartbeat_and_leave_group_against_kafka_protocol() {
    for version in ApiKey::Heartbeat.versions() {
        let request = HeartbeatRequest {
            group_id: "billing",
            generation_id: 7,
            member_id: "m-1",
            group_instance_id: None,
        };
        let (_, req) = round_trip_request::<_, kp::HeartbeatRequest>(&request, version);
        assert_eq!(
            (
                req.group_id.0.as_str(),
                req.generation_id,
                req.member_id.as_str()
            ),
            ("billing", 7, "m-1")
        );
        let mut resp = kp::HeartbeatResponse::default();
        resp.throttle_time_ms = if version >= 1 { 3 } else { 0 };
        resp.error_code = 27;
        let body = encode_response(&resp, version);
        let ours: HeartbeatResponse = decode_response(&body, version);
        assert_eq!(ours.error_code, ErrorCode(27));
        assert_eq!(ours.throttle_time_ms, resp.throttle_time_ms);
    }
    for version in ApiKey::LeaveGroup.versions() {
        let request = LeaveGroupRequest {
            group_id: "billing",
            member_id: "m-1",
            group_instance_id: Some("pod-1"),
            reason: Some("done"),
        };
        let (_, req) = round_trip_request::<_, kp::LeaveGroupRequest>(&request, version);
        assert_eq!(req.group_id.0.as_str(), "billing");
        if version < 3 {
            assert_eq!(req.member_id.as_str(), "m-1");
        } else {
            let [member] = &req.members[..] else {
                panic!("one member, got {:?}", req.members)
            };
            assert_eq!(member.member_id.as_str(), "m-1");
            assert_eq!(member.group_instance_id.as_deref(), Some("pod-1"));
            assert_eq!(member.reason.as_deref(), (version >= 5).then_some("done"));
        }
        let mut resp = kp::LeaveGroupResponse::default();
        resp.error_code = 0;
        if version >= 3 {
            let mut m = kp::leave_group_response::MemberResponse::default();
            m.member_id = s("m-1");
            m.error_code = 25;
            resp.members.push(m);
        }
        let body = encode_response(&resp, version);
        let ours: LeaveGroupResponse<'_> = decode_response(&body, version);
        assert_eq!(ours.error_code, ErrorCode::NONE);
        let members: Vec<_> = ours
            .members
            .iter()
            .map(|m| (m.member_id, m.error_code))
            .collect();
        let want = if version >= 3 {
            vec![("m-1", ErrorCode(25))]
        } else {
            Vec::new()
        };
        assert_eq!(members, want);
    }
}

/// kafka-protocol knows v0, which is v1 less the topic regex; the answer is the same at both.
#[test]
fn consumer_group_heartbeat_against_kafka_protocol() {
    let topics = ["orders", "refunds"];
    let id = [9; 16];
    let owned = [TopicPartitions {
        topic_id: id,
        partitions: &[0, 2],
    }];
    let request = ConsumerGroupHeartbeatRequest {
        instance_id: Some("pod-1"),
        rebalance_timeout_ms: 30_000,
        subscribed_topic_names: Some(&topics),
        server_assignor: Some("uniform"),
        owned: Some(&owned),
        ..ConsumerGroupHeartbeatRequest::beat("billing", "m-1", 4)
    };
    let (_, req) = round_trip_request::<_, kp::ConsumerGroupHeartbeatRequest>(&request, 0);
    assert_eq!(
        (
            req.group_id.0.as_str(),
            req.member_id.as_str(),
            req.member_epoch
        ),
        ("billing", "m-1", 4)
    );
    assert_eq!(req.instance_id.as_deref(), Some("pod-1"));
    assert_eq!((req.rack_id, req.rebalance_timeout_ms), (None, 30_000));
    let names: Vec<&str> = req
        .subscribed_topic_names
        .iter()
        .flatten()
        .map(|t| t.0.as_str())
        .collect();
    assert_eq!(names, topics);
    assert_eq!(req.server_assignor.as_deref(), Some("uniform"));
    let [owned] = &req.topic_partitions.expect("owned")[..] else {
        panic!("one owned topic")
    };
    assert_eq!(
        (owned.topic_id.as_bytes(), &owned.partitions[..]),
        (&id, &[0, 2][..])
    );
    let beat = ConsumerGroupHeartbeatRequest::beat("billing", "m-1", 4);
    let (_, req) = round_trip_request::<_, kp::ConsumerGroupHeartbeatRequest>(&beat, 0);
    assert_eq!(
        (
            req.subscribed_topic_names,
            req.topic_partitions,
            req.rebalance_timeout_ms
        ),
        (None, None, -1)
    );

    for assigned in [false, true] {
        let mut resp = kp::ConsumerGroupHeartbeatResponse::default();
        resp.error_code = 0;
        resp.member_id = Some(s("m-1"));
        resp.member_epoch = 5;
        resp.heartbeat_interval_ms = 5_000;
        if assigned {
            let mut topic = kp::consumer_group_heartbeat_response::TopicPartitions::default();
            topic.topic_id = uuid::Uuid::from_bytes(id);
            topic.partitions = vec![1, 3];
            let mut assignment = kp::consumer_group_heartbeat_response::Assignment::default();
            assignment.topic_partitions.push(topic);
            resp.assignment = Some(assignment);
        }
        for version in 0..=1 {
            let body = encode_response(&resp, 0);
            let ours: ConsumerGroupHeartbeatResponse<'_> = decode_response(&body, version);
            assert_eq!(
                (
                    ours.member_id,
                    ours.member_epoch,
                    ours.heartbeat_interval_ms
                ),
                (Some("m-1"), 5, 5_000)
            );
            let want = assigned.then(|| {
                vec![AssignedPartitions {
                    topic_id: id,
                    partitions: vec![1, 3],
                }]
            });
            assert_eq!(ours.assignment, want);
        }
    }
}

#[test]
fn consumer_protocol_against_kafka_protocol() {
    use kafka_protocol::messages::consumer_protocol_assignment as kpa;
    use kafka_protocol::messages::consumer_protocol_subscription as kps;

    // Ours, read by kafka-protocol (version 0, after the version prefix).
    let ours = encode_subscription(&["clicks", "views"]).unwrap();
    assert_eq!(&ours[..2], &0i16.to_be_bytes());
    let mut buf = Bytes::copy_from_slice(&ours[2..]);
    let sub = kp::ConsumerProtocolSubscription::decode(&mut buf, 0).unwrap();
    assert!(buf.is_empty());
    assert_eq!(sub.topics, [s("clicks"), s("views")]);
    let ours = encode_assignment(&[("clicks", &[0, 2]), ("views", &[1])]).unwrap();
    let mut buf = Bytes::copy_from_slice(&ours[2..]);
    let asg = kp::ConsumerProtocolAssignment::decode(&mut buf, 0).unwrap();
    assert!(buf.is_empty());
    let got: Vec<_> = asg
        .assigned_partitions
        .iter()
        .map(|t| (t.topic.0.to_string(), t.partitions.clone()))
        .collect();
    assert_eq!(
        got,
        [
            ("clicks".to_owned(), vec![0, 2]),
            ("views".to_owned(), vec![1])
        ]
    );

    // Theirs, every version (newer ones append fields, which are left unread).
    for version in 0..=3i16 {
        let mut sub = kp::ConsumerProtocolSubscription::default();
        sub.topics = vec![s("clicks")];
        sub.user_data = Some(Bytes::from_static(b"ud"));
        if version >= 1 {
            let mut owned = kps::TopicPartition::default();
            owned.topic = topic("clicks");
            owned.partitions = vec![3];
            sub.owned_partitions = vec![owned];
        }
        sub.generation_id = if version >= 2 { 4 } else { -1 };
        sub.rack_id = (version >= 3).then(|| s("rack-a"));
        let mut bytes = version.to_be_bytes().to_vec();
        bytes.extend(encode_response(&sub, version));
        assert_eq!(decode_subscription(&bytes).unwrap(), ["clicks"]);

        let mut asg = kp::ConsumerProtocolAssignment::default();
        let mut t = kpa::TopicPartition::default();
        t.topic = topic("clicks");
        t.partitions = vec![0, 1];
        asg.assigned_partitions = vec![t];
        let mut bytes = version.to_be_bytes().to_vec();
        bytes.extend(encode_response(&asg, version));
        assert_eq!(decode_assignment(&bytes).unwrap(), [("clicks", vec![0, 1])]);
    }
    // Every truncation of a non-empty one is an error, and an empty one assigns nothing.
    let whole = encode_assignment(&[("clicks", &[0, 2])]).unwrap();
    for cut in 1..whole.len() {
        assert!(decode_assignment(&whole[..cut]).is_err(), "cut at {cut}");
    }
    assert_eq!(decode_assignment(b"").unwrap(), []);
}

#[test]
fn unknown_error_codes_stay_typed() {
    let mut resp = kp::ListOffsetsResponse::default();
    let mut p = kp::list_offsets_response::ListOffsetsPartitionResponse::default();
    p.error_code = 31_000;
    let mut t = kp::list_offsets_response::ListOffsetsTopicResponse::default();
    t.partitions = vec![p];
    resp.topics = vec![t];
    let body = encode_response(&resp, 9);
    let ours: ListOffsetsResponse<'_> = decode_response(&body, 9);
    let code = ours.topics[0].partitions[0].error_code;
    assert_eq!(code.check(), Err(ErrorCode(31_000)));
    assert_eq!(code.name(), None);
}

/// A spliced encoding with each payload put back at its offset is the plain encoding, byte for
/// byte, at every Produce version (classic and flexible lengths).
#[test]
fn spliced_produce_is_the_plain_encoding() {
    let big = vec![7u8; 70_000];
    let partitions = [
        ProducePartition {
            index: 0,
            records: b"batch zero",
        },
        ProducePartition {
            index: 1,
            records: b"",
        },
        ProducePartition {
            index: 2,
            records: &big,
        },
    ];
    let topics = [
        ProduceTopic {
            name: "events",
            partitions: &partitions[..2],
        },
        ProduceTopic {
            name: "logs",
            partitions: &partitions[2..],
        },
    ];
    let request = ProduceRequest {
        transactional_id: None,
        acks: Acks::Leader,
        timeout_ms: 500,
        topics: &topics,
    };
    for version in ApiKey::Produce.versions() {
        let mut plain = Correlator::new(Some("c"), &Limits::default());
        let mut out = vec![0; plain.request_len(&request, version).unwrap()];
        plain.encode(&request, version, &mut out).unwrap();

        let mut spliced = Correlator::new(Some("c"), &Limits::default());
        let len = spliced.spliced_len(&request, version).unwrap();
        assert_eq!(len, out.len() - 70_010, "v{version}");
        let mut head = vec![0; len];
        let mut at = Vec::new();
        let sent = spliced
            .encode_spliced(&request, version, &mut head, &mut at)
            .unwrap();
        assert_eq!((sent.len, sent.correlation_id), (len, 0));
        assert_eq!(spliced.in_flight(), 1);
        assert_eq!(at.len(), 3, "v{version}");
        let mut joined = Vec::new();
        let mut from = 0;
        for (&at, p) in at.iter().zip(&partitions) {
            joined.extend_from_slice(&head[from..at]);
            joined.extend_from_slice(p.records);
            from = at;
        }
        joined.extend_from_slice(&head[from..]);
        assert!(joined == out, "v{version}: spliced bytes differ");
        // Too short a span is measured, as for the plain encoding.
        let err = spliced.encode_spliced(&request, version, &mut head[..len - 1], &mut at);
        assert_eq!(err.unwrap_err(), EncodeError::BufferTooSmall { need: len });
    }
}

#[test]
fn sasl_handshake_and_authenticate_against_kafka_protocol() {
    for version in ApiKey::SaslHandshake.versions() {
        let request = SaslHandshakeRequest { mechanism: "PLAIN" };
        let (_, req) = round_trip_request::<_, kp::SaslHandshakeRequest>(&request, version);
        assert_eq!(req.mechanism.as_str(), "PLAIN");
        let mut resp = kp::SaslHandshakeResponse::default();
        resp.error_code = 33;
        resp.mechanisms = vec![s("PLAIN"), s("SCRAM-SHA-256")];
        let body = encode_response(&resp, version);
        let ours: SaslHandshakeResponse<'_> = decode_response(&body, version);
        assert_eq!(ours.error_code, ErrorCode(33));
        assert_eq!(ours.mechanisms, ["PLAIN", "SCRAM-SHA-256"]);
    }
    for version in ApiKey::SaslAuthenticate.versions() {
        let request = SaslAuthenticateRequest {
            auth_bytes: b"\0alice\0secret",
        };
        let (_, req) = round_trip_request::<_, kp::SaslAuthenticateRequest>(&request, version);
        assert_eq!(&req.auth_bytes[..], b"\0alice\0secret");
        assert!(!format!("{request:?}").contains("secret"));
        let mut resp = kp::SaslAuthenticateResponse::default();
        resp.error_code = 58;
        resp.error_message = Some(s("Invalid username or password"));
        resp.auth_bytes = Bytes::from_static(b"server-final");
        resp.session_lifetime_ms = if version >= 1 { 3_600_000 } else { 0 };
        let body = encode_response(&resp, version);
        let ours: SaslAuthenticateResponse<'_> = decode_response(&body, version);
        assert_eq!(ours.error_code, ErrorCode(58));
        assert_eq!(ours.error_message, Some("Invalid username or password"));
        assert_eq!(ours.auth_bytes, b"server-final");
        assert_eq!(ours.session_lifetime_ms, resp.session_lifetime_ms);
    }
}

#[test]
fn list_groups_against_kafka_protocol() {
    for version in ApiKey::ListGroups.versions() {
        let request = ListGroupsRequest {
            states_filter: &["Stable", "Empty"],
            types_filter: &["consumer"],
        };
        let (_, req) = round_trip_request::<_, kp::ListGroupsRequest>(&request, version);
        let states: Vec<&str> = req.states_filter.iter().map(|s| s.as_str()).collect();
        let types: Vec<&str> = req.types_filter.iter().map(|s| s.as_str()).collect();
        let want_states: &[&str] = if version >= 4 {
            &["Stable", "Empty"]
        } else {
            &[]
        };
        let want_types: &[&str] = if version >= 5 { &["consumer"] } else { &[] };
        assert_eq!((&states[..], &types[..]), (want_states, want_types));

        let mut resp = kp::ListGroupsResponse::default();
        resp.throttle_time_ms = if version >= 1 { 4 } else { 0 };
        for (id, state, kind) in [
            ("billing", "Stable", "classic"),
            ("audit", "Empty", "consumer"),
        ] {
            let mut group = kp::list_groups_response::ListedGroup::default();
            group.group_id = kp::GroupId(s(id));
            group.protocol_type = s("consumer");
            group.group_state = s(state);
            group.group_type = s(kind);
            resp.groups.push(group);
        }
        let body = encode_response(&resp, version);
        let ours: ListGroupsResponse<'_> = decode_response(&body, version);
        assert_eq!(
            (ours.throttle_time_ms, ours.error_code),
            (if version >= 1 { 4 } else { 0 }, ErrorCode::NONE)
        );
        let got: Vec<_> = ours
            .groups
            .iter()
            .map(|g| (g.group_id, g.protocol_type, g.group_state, g.group_type))
            .collect();
        let state = |v| (version >= 4).then_some(v);
        let kind = |v| (version >= 5).then_some(v);
        assert_eq!(
            got,
            [
                ("billing", "consumer", state("Stable"), kind("classic")),
                ("audit", "consumer", state("Empty"), kind("consumer")),
            ]
        );
    }
}

/// DescribeGroups at every version kafka-protocol knows (0-5), and v6, which adds an error
/// message after each group's error code, as v5 with that field put in.
#[test]
fn describe_groups_against_kafka_protocol() {
    for version in ApiKey::DescribeGroups.versions() {
        let theirs = version.min(5);
        let request = DescribeGroupsRequest {
            groups: &["billing", "audit"],
            include_authorized_operations: true,
        };
        if version <= 5 {
            let (_, req) = round_trip_request::<_, kp::DescribeGroupsRequest>(&request, version);
            let groups: Vec<&str> = req.groups.iter().map(|g| g.0.as_str()).collect();
            assert_eq!(groups, ["billing", "audit"]);
            assert_eq!(req.include_authorized_operations, version >= 3);
        }

        let subscription = encode_subscription(&["orders"]).unwrap();
        let assignment = encode_assignment(&[("orders", &[0, 2])]).unwrap();
        let mut member = kp::describe_groups_response::DescribedGroupMember::default();
        member.member_id = s("m-1");
        member.group_instance_id = (theirs >= 4).then(|| s("pod-1"));
        member.client_id = s("ringwire");
        member.client_host = s("/127.0.0.1");
        member.member_metadata = Bytes::from(subscription);
        member.member_assignment = Bytes::from(assignment);
        let mut group = kp::describe_groups_response::DescribedGroup::default();
        group.group_id = kp::GroupId(s("billing"));
        group.group_state = s("Stable");
        group.protocol_type = s("consumer");
        group.protocol_data = s("range");
        group.members = vec![member];
        group.authorized_operations = if theirs >= 3 { 0x0f } else { i32::MIN };
        let mut resp = kp::DescribeGroupsResponse::default();
        resp.groups = vec![group];
        let mut body = encode_response(&resp, theirs);
        if version == 6 {
            // Throttle time (4), one group (1), its error code (2), then "gone".
            body.splice(7..7, [5, b'g', b'o', b'n', b'e']);
        }
        let ours: DescribeGroupsResponse<'_> = decode_response(&body, version);
        let [g] = &ours.groups[..] else {
            panic!("one group")
        };
        assert_eq!(g.error_message, (version >= 6).then_some("gone"));
        assert_eq!(
            (g.group_id, g.group_state, g.protocol_type, g.protocol_data),
            ("billing", "Stable", "consumer", "range")
        );
        assert_eq!(
            g.authorized_operations,
            if version >= 3 { 0x0f } else { i32::MIN }
        );
        let [m] = &g.members[..] else {
            panic!("one member")
        };
        assert_eq!(
            (m.member_id, m.group_instance_id, m.client_id, m.client_host),
            (
                "m-1",
                (version >= 4).then_some("pod-1"),
                "ringwire",
                "/127.0.0.1"
            )
        );
        assert_eq!(decode_subscription(m.member_metadata).unwrap(), ["orders"]);
        assert_eq!(
            decode_assignment(m.member_assignment).unwrap(),
            [("orders", vec![0, 2])]
        );
    }
}

/// ConsumerGroupDescribe v0 against kafka-protocol, and v1, which adds each member's type
/// after its target assignment, as v0 with that byte put in.
#[test]
fn consumer_group_describe_against_kafka_protocol() {
    use kp::consumer_group_describe_response as cgd;
    let request = ConsumerGroupDescribeRequest {
        group_ids: &["billing"],
        include_authorized_operations: false,
    };
    let (_, req) = round_trip_request::<_, kp::ConsumerGroupDescribeRequest>(&request, 0);
    let ids: Vec<&str> = req.group_ids.iter().map(|g| g.0.as_str()).collect();
    assert_eq!(
        (&ids[..], req.include_authorized_operations),
        (&["billing"][..], false)
    );

    let id = [3; 16];
    let partitions = |list: Vec<i32>| {
        let mut named = cgd::TopicPartitions::default();
        named.topic_id = uuid::Uuid::from_bytes(id);
        named.topic_name = topic("orders");
        named.partitions = list;
        let mut assignment = cgd::Assignment::default();
        assignment.topic_partitions.push(named);
        assignment
    };
    let mut member = cgd::Member::default();
    member.member_id = s("m-1");
    member.instance_id = Some(s("pod-1"));
    member.member_epoch = 7;
    member.client_id = s("ringwire");
    member.client_host = s("/127.0.0.1");
    member.subscribed_topic_names = vec![topic("orders")];
    member.assignment = partitions(vec![0]);
    member.target_assignment = partitions(vec![0, 1]);
    let mut group = cgd::DescribedGroup::default();
    group.group_id = kp::GroupId(s("billing"));
    group.group_state = s("Reconciling");
    group.group_epoch = 8;
    group.assignment_epoch = 8;
    group.assignor_name = s("uniform");
    group.members = vec![member];
    let mut resp = kp::ConsumerGroupDescribeResponse::default();
    resp.groups = vec![group];
    let v0 = encode_response(&resp, 0);
    // The member's tags come before the group's operations (4), tags (1) and the answer's (1).
    let mut v1 = v0.clone();
    v1.insert(v0.len() - 7, 1);
    for (version, body, member_type) in [(0, &v0, -1), (1, &v1, 1)] {
        let ours: ConsumerGroupDescribeResponse<'_> = decode_response(body, version);
        let [g] = &ours.groups[..] else {
            panic!("one group")
        };
        assert_eq!(
            (g.error_code, g.group_id, g.group_state, g.group_epoch),
            (ErrorCode::NONE, "billing", "Reconciling", 8)
        );
        assert_eq!(
            (g.assignor_name, g.authorized_operations),
            ("uniform", i32::MIN)
        );
        let [m] = &g.members[..] else {
            panic!("one member")
        };
        assert_eq!(
            (m.member_id, m.instance_id, m.rack_id, m.member_epoch),
            ("m-1", Some("pod-1"), None, 7)
        );
        assert_eq!((m.client_id, m.client_host), ("ringwire", "/127.0.0.1"));
        assert_eq!(
            (&m.subscribed_topic_names[..], m.subscribed_topic_regex),
            (&["orders"][..], None)
        );
        let owned: Vec<_> = m
            .assignment
            .iter()
            .map(|t| (t.topic_id, t.topic_name, t.partitions.clone()))
            .collect();
        assert_eq!(owned, [(id, "orders", vec![0])]);
        assert_eq!(m.target_assignment[0].partitions, [0, 1]);
        assert_eq!(m.member_type, member_type);
    }
}

#[test]
fn delete_groups_against_kafka_protocol() {
    for version in ApiKey::DeleteGroups.versions() {
        let request = DeleteGroupsRequest {
            groups_names: &["billing", "audit"],
        };
        let (_, req) = round_trip_request::<_, kp::DeleteGroupsRequest>(&request, version);
        let names: Vec<&str> = req.groups_names.iter().map(|g| g.0.as_str()).collect();
        assert_eq!(names, ["billing", "audit"]);

        let mut resp = kp::DeleteGroupsResponse::default();
        resp.throttle_time_ms = 2;
        for (id, code) in [("billing", 0), ("audit", 68)] {
            let mut result = kp::delete_groups_response::DeletableGroupResult::default();
            result.group_id = kp::GroupId(s(id));
            result.error_code = code;
            resp.results.push(result);
        }
        let body = encode_response(&resp, version);
        let ours: DeleteGroupsResponse<'_> = decode_response(&body, version);
        let got: Vec<_> = ours
            .results
            .iter()
            .map(|r| (r.group_id, r.error_code))
            .collect();
        assert_eq!(
            got,
            [
                ("billing", ErrorCode::NONE),
                ("audit", ErrorCode::NON_EMPTY_GROUP)
            ]
        );
    }
}

#[test]
fn describe_configs_against_kafka_protocol() {
    use kp::describe_configs_response as dc;
    for version in ApiKey::DescribeConfigs.versions() {
        let request = DescribeConfigsRequest {
            resources: &[
                DescribeConfigsResource {
                    resource_type: ResourceType::TOPIC,
                    resource_name: "orders",
                    configuration_keys: None,
                },
                DescribeConfigsResource {
                    resource_type: ResourceType::BROKER,
                    resource_name: "1",
                    configuration_keys: Some(&["log.retention.ms", "num.io.threads"]),
                },
            ],
            include_synonyms: true,
            include_documentation: true,
        };
        let (_, req) = round_trip_request::<_, kp::DescribeConfigsRequest>(&request, version);
        let got: Vec<_> = req
            .resources
            .iter()
            .map(|r| {
                let keys = r.configuration_keys.as_ref();
                let keys = keys.map(|k| k.iter().map(|k| k.to_string()).collect::<Vec<_>>());
                (r.resource_type, r.resource_name.to_string(), keys)
            })
            .collect();
        let keys = vec!["log.retention.ms".to_owned(), "num.io.threads".to_owned()];
        assert_eq!(
            got,
            [
                (2, "orders".to_owned(), None),
                (4, "1".to_owned(), Some(keys))
            ]
        );
        assert!(req.include_synonyms);
        assert_eq!(req.include_documentation, version >= 3);

        let mut entry = dc::DescribeConfigsResourceResult::default();
        entry.name = s("retention.ms");
        entry.value = Some(s("600000"));
        entry.config_source = 1;
        entry.config_type = 5;
        entry.documentation = Some(s("How long a log is kept."));
        for (name, source) in [("retention.ms", 1), ("log.retention.hours", 5)] {
            let mut synonym = dc::DescribeConfigsSynonym::default();
            synonym.name = s(name);
            synonym.value = Some(s("x"));
            synonym.source = source;
            entry.synonyms.push(synonym);
        }
        let mut secret = dc::DescribeConfigsResourceResult::default();
        secret.name = s("sasl.jaas.config");
        secret.value = None;
        secret.read_only = true;
        secret.is_sensitive = true;
        secret.config_source = 5;
        let mut topic = dc::DescribeConfigsResult::default();
        topic.resource_type = 2;
        topic.resource_name = s("orders");
        topic.configs = vec![entry, secret];
        let mut missing = dc::DescribeConfigsResult::default();
        missing.error_code = 3;
        missing.error_message = Some(s("no such topic"));
        missing.resource_type = 2;
        missing.resource_name = s("gone");
        let mut resp = kp::DescribeConfigsResponse::default();
        resp.throttle_time_ms = 3;
        resp.results = vec![topic, missing];
        let body = encode_response(&resp, version);
        let ours: DescribeConfigsResponse<'_> = decode_response(&body, version);
        assert_eq!(ours.throttle_time_ms, 3);
        let [topic, missing] = &ours.results[..] else {
            panic!("two results")
        };
        assert_eq!(
            (topic.error_code, topic.resource_type, topic.resource_name),
            (ErrorCode::NONE, ResourceType::TOPIC, "orders")
        );
        let [entry, secret] = &topic.configs[..] else {
            panic!("two entries")
        };
        assert_eq!(
            (entry.name, entry.value, entry.config_source),
            (
                "retention.ms",
                Some("600000"),
                ConfigSource::DYNAMIC_TOPIC_CONFIG
            )
        );
        assert_eq!(entry.config_source.name(), "DYNAMIC_TOPIC_CONFIG");
        let (config_type, documentation) = if version >= 3 {
            (5, Some("How long a log is kept."))
        } else {
            (0, None)
        };
        assert_eq!(
            (entry.config_type, entry.documentation),
            (config_type, documentation)
        );
        assert_eq!(
            entry.synonyms,
            [
                ConfigSynonym {
                    name: "retention.ms",
                    value: Some("x"),
                    source: ConfigSource::DYNAMIC_TOPIC_CONFIG,
                },
                ConfigSynonym {
                    name: "log.retention.hours",
                    value: Some("x"),
                    source: ConfigSource::STATIC_BROKER_CONFIG,
                }
            ]
        );
        assert_eq!(
            (secret.value, secret.read_only, secret.is_sensitive),
            (None, true, true)
        );
        assert_eq!(secret.config_source.name(), "STATIC_BROKER_CONFIG");
        assert_eq!(
            (
                missing.error_code,
                missing.error_message,
                missing.resource_name
            ),
            (
                ErrorCode::UNKNOWN_TOPIC_OR_PARTITION,
                Some("no such topic"),
                "gone"
            )
        );
        assert!(missing.configs.is_empty());
    }
}

#[test]
fn incremental_alter_configs_against_kafka_protocol() {
    for version in ApiKey::IncrementalAlterConfigs.versions() {
        let configs = [
            AlterableConfig {
                name: "retention.ms",
                operation: ConfigOperation::Set,
                value: Some("86400000"),
            },
            AlterableConfig {
                name: "cleanup.policy",
                operation: ConfigOperation::Append,
                value: Some("compact"),
            },
            AlterableConfig {
                name: "segment.bytes",
                operation: ConfigOperation::Delete,
                value: None,
            },
        ];
        let request = IncrementalAlterConfigsRequest {
            resources: &[AlterConfigsResource {
                resource_type: ResourceType::TOPIC,
                resource_name: "orders",
                configs: &configs,
            }],
            validate_only: true,
        };
        let (_, req) =
            round_trip_request::<_, kp::IncrementalAlterConfigsRequest>(&request, version);
        assert!(req.validate_only);
        let [resource] = &req.resources[..] else {
            panic!("one resource")
        };
        assert_eq!(
            (resource.resource_type, &*resource.resource_name),
            (2, "orders")
        );
        let got: Vec<_> = resource
            .configs
            .iter()
            .map(|c| {
                (
                    c.name.to_string(),
                    c.config_operation,
                    c.value.as_deref().map(str::to_owned),
                )
            })
            .collect();
        assert_eq!(
            got,
            [
                ("retention.ms".to_owned(), 0, Some("86400000".to_owned())),
                ("cleanup.policy".to_owned(), 2, Some("compact".to_owned())),
                ("segment.bytes".to_owned(), 1, None),
            ]
        );

        let mut resp = kp::IncrementalAlterConfigsResponse::default();
        resp.throttle_time_ms = 1;
        for (name, code, message) in [("orders", 0, None), ("audit", 40, Some("bad value"))] {
            let mut result =
                kp::incremental_alter_configs_response::AlterConfigsResourceResponse::default();
            result.error_code = code;
            result.error_message = message.map(s);
            result.resource_type = 2;
            result.resource_name = s(name);
            resp.responses.push(result);
        }
        let body = encode_response(&resp, version);
        let ours: IncrementalAlterConfigsResponse<'_> = decode_response(&body, version);
        let got: Vec<_> = ours
            .responses
            .iter()
            .map(|r| {
                (
                    r.resource_name,
                    r.resource_type,
                    r.error_code,
                    r.error_message,
                )
            })
            .collect();
        assert_eq!(
            got,
            [
                ("orders", ResourceType::TOPIC, ErrorCode::NONE, None),
                (
                    "audit",
                    ResourceType::TOPIC,
                    ErrorCode::INVALID_CONFIG,
                    Some("bad value")
                ),
            ]
        );
        assert_eq!(ErrorCode::INVALID_CONFIG.name(), Some("INVALID_CONFIG"));
    }
}

#[test]
fn create_partitions_against_kafka_protocol() {
    for version in ApiKey::CreatePartitions.versions() {
        let request = CreatePartitionsRequest {
            topics: &[
                NewPartitions {
                    name: "orders",
                    count: 6,
                    assignments: None,
                },
                NewPartitions {
                    name: "audit",
                    count: 3,
                    assignments: Some(&[&[1, 2], &[2, 3]]),
                },
            ],
            timeout_ms: 30_000,
            validate_only: false,
        };
        let (_, req) = round_trip_request::<_, kp::CreatePartitionsRequest>(&request, version);
        assert_eq!((req.timeout_ms, req.validate_only), (30_000, false));
        let got: Vec<_> = req
            .topics
            .iter()
            .map(|t| {
                let assignments = t.assignments.as_ref().map(|a| {
                    a.iter()
                        .map(|a| a.broker_ids.iter().map(|b| b.0).collect::<Vec<_>>())
                        .collect::<Vec<_>>()
                });
                (t.name.0.to_string(), t.count, assignments)
            })
            .collect();
        assert_eq!(
            got,
            [
                ("orders".to_owned(), 6, None),
                ("audit".to_owned(), 3, Some(vec![vec![1, 2], vec![2, 3]])),
            ]
        );

        let mut resp = kp::CreatePartitionsResponse::default();
        resp.throttle_time_ms = 4;
        for (name, code, message) in [("orders", 0, None), ("audit", 37, Some("not more"))] {
            let mut result = kp::create_partitions_response::CreatePartitionsTopicResult::default();
            result.name = topic(name);
            result.error_code = code;
            result.error_message = message.map(s);
            resp.results.push(result);
        }
        let body = encode_response(&resp, version);
        let ours: CreatePartitionsResponse<'_> = decode_response(&body, version);
        let got: Vec<_> = ours
            .results
            .iter()
            .map(|r| (r.name, r.error_code, r.error_message))
            .collect();
        assert_eq!(
            got,
            [
                ("orders", ErrorCode::NONE, None),
                ("audit", ErrorCode::INVALID_PARTITIONS, Some("not more")),
            ]
        );
    }
}
