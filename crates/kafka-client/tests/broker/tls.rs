//! Secured listeners of the broker: TLS (its SSL listener, with the certificate `broker.sh`
//! made at start) and SASL.

use std::time::{Duration, Instant};

use ringwire_kafka::ErrorCode;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use ringwire_kafka_client::{
    ClientConfig, ClientError, Connection, Consumer, ConsumerConfig, Producer, ProducerConfig,
    ProducerRecord, Sasl, Start, TokenSource,
};

use super::{broker, connect, create, runtime, unique};

/// Produce and consume over TLS (every connection encrypted: the bootstrap one and those to
/// the leaders the cluster names, at its TLS listener); a certificate the client does not
/// trust, and a plaintext port, are refused with a TLS error naming the broker.
pub(crate) fn produce_and_consume_over_tls(bootstrap: &str) {
    let listener = broker("tls");
    let (addr, ca) = listener.split_once(' ').expect("ADDRESS CA_FILE");
    let ca = std::fs::read(ca).expect("the CA certificate");
    let trusting = ringwire_tls::ClientConfig::default().add_root_pem(&ca);
    let tls = ClientConfig::default().with_tls(&trusting).unwrap();
    let topic = unique("tls");
    create(&mut connect(bootstrap), &topic, 2, &[]);
    runtime().block_on(async {
        let producer = Producer::connect(
            addr,
            ProducerConfig {
                client: tls.clone(),
                ..ProducerConfig::default()
            },
        )
        .await
        .unwrap();
        let values: Vec<String> = (0..200).map(|i| format!("secret {i}")).collect();
        let mut deliveries = Vec::new();
        for value in &values {
            deliveries.push(
                producer
                    .send(ProducerRecord::new(&topic, value.as_bytes()))
                    .await
                    .unwrap(),
            );
        }
        for delivery in deliveries {
            delivery.await.unwrap();
        }
        let config = ConsumerConfig {
            client: tls.clone(),
            ..ConsumerConfig::default()
        };
        let mut consumer = Consumer::connect(addr, config).await.unwrap();
        assert_eq!(consumer.assign(&topic, Start::Earliest).await.unwrap(), 2);
        let mut got = Vec::new();
        let deadline = Instant::now() + Duration::from_secs(30);
        while got.len() < values.len() {
            assert!(
                Instant::now() < deadline,
                "{} of {}",
                got.len(),
                values.len()
            );
            consumer
                .poll(|_, _, r| got.push(String::from_utf8_lossy(r.value.unwrap()).into_owned()))
                .await
                .unwrap();
        }
        got.sort();
        let mut want = values.clone();
        want.sort();
        assert_eq!(got, want);

        // The system's roots only: the broker's self-signed certificate is not trusted.
        let untrusting = ClientConfig::default()
            .with_tls(&ringwire_tls::ClientConfig::default())
            .unwrap();
        let err = Connection::connect(addr, &untrusting).await.unwrap_err();
        assert!(
            matches!(&err, ClientError::Tls { addr: a, .. } if a == addr),
            "{err}"
        );
        // TLS to the plaintext listener.
        let err = Connection::connect(bootstrap, &tls).await.unwrap_err();
        assert!(matches!(err, ClientError::Tls { .. }), "{err}");
    });
}

/// SASL at the broker's SASL listener, with each mechanism (`PLAIN`, `SCRAM-SHA-256`,
/// `SCRAM-SHA-512`): produce and consume as its user (every connection authenticated: the
/// bootstrap one and the leaders'); a wrong password is the broker's
/// `SASL_AUTHENTICATION_FAILED` in its words, and no SASL at all is refused.
pub(crate) fn produce_and_consume_with_sasl(bootstrap: &str) {
    let listener = broker("sasl");
    let [addr, user, password] = listener.split(' ').collect::<Vec<_>>()[..] else {
        panic!("ADDRESS USER PASSWORD, got {listener}");
    };
    let mechanisms: [fn(String, String) -> Sasl; 3] = [
        |username, password| Sasl::Plain { username, password },
        |username, password| Sasl::ScramSha256 { username, password },
        |username, password| Sasl::ScramSha512 { username, password },
    ];
    for mechanism in mechanisms {
        let as_user = |password: &str| ClientConfig {
            sasl: Some(mechanism(user.to_owned(), password.to_owned())),
            ..ClientConfig::default()
        };
        let client = as_user(password);
        assert!(!format!("{client:?}").contains(password));
        let topic = unique("sasl");
        create(&mut connect(bootstrap), &topic, 2, &[]);
        runtime().block_on(async {
            let config = ProducerConfig {
                client: client.clone(),
                ..ProducerConfig::default()
            };
            let producer = Producer::connect(addr, config).await.unwrap();
            for i in 0..20 {
                let value = format!("authenticated {i}");
                producer
                    .send(ProducerRecord::new(&topic, value.as_bytes()))
                    .await
                    .unwrap()
                    .await
                    .unwrap();
            }
            let config = ConsumerConfig {
                client: client.clone(),
                ..ConsumerConfig::default()
            };
            let mut consumer = Consumer::connect(addr, config).await.unwrap();
            consumer.assign(&topic, Start::Earliest).await.unwrap();
            let mut got = 0;
            let deadline = Instant::now() + Duration::from_secs(30);
            while got < 20 {
                assert!(Instant::now() < deadline, "{got} of 20");
                got += consumer.poll(|_, _, _| {}).await.unwrap();
            }
            let err = Connection::connect(addr, &as_user("wrong"))
                .await
                .unwrap_err();
            assert!(
                matches!(&err, ClientError::Kafka { code, message: Some(_), .. }
                    if *code == ErrorCode::SASL_AUTHENTICATION_FAILED),
                "{err}"
            );
        });
    }
    runtime().block_on(async {
        // No SASL: the broker closes the connection on the first request past ApiVersions.
        let mut plain = Connection::connect(addr, &ClientConfig::default())
            .await
            .unwrap();
        assert!(plain.metadata(None, |_| ()).await.is_err());
    });
}

/// SASL over TLS at the broker's SASL_SSL listener, as managed Kafka services run it: SCRAM
/// after the handshake, the records produced and read back; the right password without TLS
/// is refused there.
pub(crate) fn sasl_over_tls(_bootstrap: &str) {
    let listener = broker("sasl-ssl");
    let [addr, user, password, ca] = listener.split(' ').collect::<Vec<_>>()[..] else {
        panic!("ADDRESS USER PASSWORD CA_FILE, got {listener}");
    };
    let ca = std::fs::read(ca).expect("the CA certificate");
    let sasl = Some(Sasl::ScramSha512 {
        username: user.to_owned(),
        password: password.to_owned(),
    });
    let client = ClientConfig {
        sasl: sasl.clone(),
        ..ClientConfig::default()
            .with_tls(&ringwire_tls::ClientConfig::default().add_root_pem(&ca))
            .unwrap()
    };
    runtime().block_on(async {
        round_trip(addr, &client, "sasl-ssl", b"over TLS, signed in").await;
        let plain = ClientConfig {
            sasl,
            ..ClientConfig::default()
        };
        assert!(Connection::connect(addr, &plain).await.is_err());
    });
}

/// Mutual TLS at the broker's listener that requires a client certificate: a client
/// presenting the one `broker.sh` made produces and reads back; without one, the broker's
/// refusal is a TLS error that says a client certificate is wanted, naming the broker.
pub(crate) fn produce_and_consume_with_a_client_certificate(_bootstrap: &str) {
    let listener = broker("mtls");
    let [addr, ca, cert, key] = listener.split(' ').collect::<Vec<_>>()[..] else {
        panic!("ADDRESS CA_FILE CERT_FILE KEY_FILE, got {listener}");
    };
    let read = |path: &str| std::fs::read(path).expect("a PEM file broker.sh made");
    let trusting = ringwire_tls::ClientConfig::default().add_root_pem(&read(ca));
    let identity = ringwire_tls::Identity::from_pem(&read(cert), &read(key)).unwrap();
    let client = ClientConfig::default()
        .with_tls(&trusting.clone().identity(identity))
        .unwrap();
    runtime().block_on(async {
        round_trip(addr, &client, "mtls", b"with a certificate").await;

        let without = ClientConfig::default().with_tls(&trusting).unwrap();
        let err = Connection::connect(addr, &without).await.unwrap_err();
        assert!(
            matches!(&err, ClientError::Tls { addr: a, source: ringwire_tls::TlsError::ClientCertificateRequired } if a == addr),
            "{err:?}"
        );
    });
}

/// Creates a topic at `addr` as `client`, produces `value` to it and reads it back, each
/// over connections of their own.
async fn round_trip(addr: &str, client: &ClientConfig, prefix: &str, value: &[u8]) {
    let topic = create_as(addr, client, prefix, 1).await;
    let config = ProducerConfig {
        client: client.clone(),
        ..ProducerConfig::default()
    };
    let producer = Producer::connect(addr, config).await.unwrap();
    let record = ProducerRecord::new(&topic, value);
    producer.send(record).await.unwrap().await.unwrap();
    let config = ConsumerConfig {
        client: client.clone(),
        ..ConsumerConfig::default()
    };
    let mut consumer = Consumer::connect(addr, config).await.unwrap();
    consumer.assign(&topic, Start::Earliest).await.unwrap();
    let mut got = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(30);
    while got.is_empty() {
        assert!(Instant::now() < deadline, "nothing read back");
        consumer
            .poll(|_, _, r| got.push(r.value.unwrap().to_vec()))
            .await
            .unwrap();
    }
    assert_eq!(got, [value.to_vec()]);
}

/// Creates a topic of `partitions` named after `prefix` at `addr` as `client`: its name.
async fn create_as(addr: &str, client: &ClientConfig, prefix: &str, partitions: i32) -> String {
    let mut conn = Connection::connect(addr, client).await.unwrap();
    let topic = unique(prefix);
    conn.create_topic(ringwire_kafka::api::create_topics::NewTopic {
        name: &topic,
        num_partitions: partitions,
        replication_factor: 1,
        configs: &[],
    })
    .await
    .unwrap();
    topic
}

/// An unsecured JWT (`"alg": "none"`, Kafka's development tokens) for `sub`, expiring
/// `lifetime` seconds from now (in the past if negative).
fn unsecured_jwt(sub: &str, lifetime: i64) -> String {
    use base64::engine::general_purpose::URL_SAFE_NO_PAD as B64;
    use base64::Engine as _;
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64;
    let header = B64.encode(r#"{"alg":"none"}"#);
    let claims = format!(
        r#"{{"sub":"{sub}","iat":{},"exp":{}}}"#,
        now - 60,
        now + lifetime
    );
    format!("{header}.{}.", B64.encode(claims))
}

/// OAUTHBEARER at the broker's SASL listener: a token source asked at every connection's
/// authentication, with an extension; an expired token, a source that fails and an
/// extension that cannot be sent are each refused with a SASL error that says so.
pub(crate) fn produce_and_consume_with_oauth_bearer(_bootstrap: &str) {
    let listener = broker("sasl");
    let addr = listener.split(' ').next().expect("ADDRESS");
    let bearer = |token: TokenSource, extensions: &[(&str, &str)]| ClientConfig {
        sasl: Some(Sasl::OAuthBearer {
            token,
            extensions: extensions
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                .collect(),
        }),
        ..ClientConfig::default()
    };
    let asked = Arc::new(AtomicUsize::new(0));
    let counting = Arc::clone(&asked);
    let source = TokenSource::new(move || {
        counting.fetch_add(1, Ordering::Relaxed);
        Ok(unsecured_jwt("ringwire", 3600))
    });
    let client = bearer(source, &[("traceId", "ringwire-test")]);
    let shown = format!("{client:?}");
    assert!(
        !shown.contains("ringwire-test") && !shown.contains("eyJ"),
        "{shown}"
    );
    runtime().block_on(async {
        round_trip(addr, &client, "oauth", b"bearing a token").await;
        assert!(
            asked.load(Ordering::Relaxed) >= 3,
            "one token per connection"
        );

        let expired = bearer(TokenSource::fixed(unsecured_jwt("ringwire", -600)), &[]);
        let err = Connection::connect(addr, &expired).await.unwrap_err();
        assert!(
            matches!(&err, ClientError::Kafka { code, message: Some(m), .. }
                if *code == ErrorCode::SASL_AUTHENTICATION_FAILED && m.contains("invalid_token")),
            "{err:?}"
        );
        let failing = bearer(TokenSource::new(|| Err("the IdP is down".into())), &[]);
        let err = Connection::connect(addr, &failing).await.unwrap_err();
        assert!(
            matches!(&err, ClientError::Sasl(m) if m.contains("the IdP is down")),
            "{err:?}"
        );
        let token = TokenSource::fixed(unsecured_jwt("ringwire", 3600));
        let err = Connection::connect(addr, &bearer(token, &[("auth", "x")]))
            .await
            .unwrap_err();
        assert!(matches!(&err, ClientError::Sasl(_)), "{err:?}");
    });
}

/// The broker's REAUTH listener (PLAIN, 2 s sessions) and a client signed in there.
fn reauth_listener() -> (String, ClientConfig) {
    let listener = broker("reauth");
    let [addr, user, password] = listener.split(' ').collect::<Vec<_>>()[..] else {
        panic!("ADDRESS USER PASSWORD, got {listener}");
    };
    let client = ClientConfig {
        sasl: Some(Sasl::Plain {
            username: user.to_owned(),
            password: password.to_owned(),
        }),
        ..ClientConfig::default()
    };
    (addr.to_owned(), client)
}

/// A listener whose SASL sessions last 2 s (`connections.max.reauth.ms`, as managed Kafka
/// services set it): the broker closes each connection whose session ran out at its next
/// request. A group member committing what it reads and a producer sending all along ride
/// it out for 8 s: every record delivered and read once, no error surfacing.
pub(crate) fn clients_outlive_their_sasl_sessions(_bootstrap: &str) {
    let (addr, client) = reauth_listener();
    let addr = addr.as_str();
    runtime().block_on(async {
        let topic = create_as(addr, &client, "reauth", 2).await;
        let config = ConsumerConfig {
            client: client.clone(),
            group: Some(unique("reauth-group")),
            ..ConsumerConfig::default()
        };
        let mut consumer = Consumer::connect(addr, config).await.unwrap();
        consumer
            .subscribe(&[&topic], ringwire_kafka_client::Reset::Earliest)
            .await
            .unwrap();
        let config = ProducerConfig {
            client: client.clone(),
            ..ProducerConfig::default()
        };
        let producer = Producer::connect(addr, config).await.unwrap();
        let sent = 32;
        let producing = async {
            for i in 0..sent {
                let value = format!("session {i}");
                let record = ProducerRecord::new(&topic, value.as_bytes());
                producer.send(record).await.unwrap().await.unwrap();
                tokio::time::sleep(Duration::from_millis(250)).await;
            }
        };
        let consuming = async {
            let mut got = Vec::new();
            let deadline = Instant::now() + Duration::from_secs(40);
            while got.len() < sent {
                assert!(Instant::now() < deadline, "{} of {sent}", got.len());
                consumer
                    .poll(|_, _, r| {
                        got.push(String::from_utf8_lossy(r.value.unwrap()).into_owned())
                    })
                    .await
                    .unwrap();
                consumer.commit().await.unwrap();
            }
            got
        };
        let ((), mut got) = tokio::join!(producing, consuming);
        got.sort();
        let mut want: Vec<String> = (0..sent).map(|i| format!("session {i}")).collect();
        want.sort();
        assert_eq!(got, want);
    });
}

/// KIP-368: a connection whose SASL session nears its end (2 s at the REAUTH listener)
/// authenticates again before its next request, with each mechanism, and goes on being
/// used; the broker would close it otherwise.
pub(crate) fn a_connection_renews_its_sasl_session(_bootstrap: &str) {
    let (addr, client) = reauth_listener();
    let addr = addr.as_str();
    runtime().block_on(async {
        let mut conn = Connection::connect(addr, &client).await.unwrap();
        let topic = create_as(addr, &client, "renewed", 1).await;
        for round in 0..3 {
            // Rounds 0 and 1 wake between the renewal point (85%: 1.7 s) and the end (2 s),
            // the broker's clock running from a little after ours; round 2 before renewal.
            let wait = if round == 2 { 1200 } else { 1800 };
            tokio::time::sleep(Duration::from_millis(wait)).await;
            let partitions = conn
                .metadata(Some(&[&topic]), |m| m.topics[0].partitions.len())
                .await
                .unwrap_or_else(|e| panic!("round {round}: {e}"));
            assert_eq!(partitions, 1);
        }
    });
}

/// KIP-368 under a steady load: a consumer (its Fetch always in flight) and a producer that
/// does not wait for its acknowledgements renew their 2 s sessions on the connections they have,
/// for 6 s, instead of the broker closing them at each session's end: the process opens no
/// socket after the first record has gone round.
pub(crate) fn pipelines_renew_their_sessions_in_place(_bootstrap: &str) {
    let (addr, client) = reauth_listener();
    let addr = addr.as_str();
    runtime().block_on(async {
        let topic = create_as(addr, &client, "renewed-pipeline", 1).await;
        let config = ConsumerConfig {
            client: client.clone(),
            ..ConsumerConfig::default()
        };
        let mut consumer = Consumer::connect(addr, config).await.unwrap();
        consumer.assign(&topic, Start::Earliest).await.unwrap();
        let config = ProducerConfig {
            client: client.clone(),
            ..ProducerConfig::default()
        };
        let producer = Producer::connect(addr, config).await.unwrap();
        let record = ProducerRecord::new(&topic, b"first");
        producer.send(record).await.unwrap().await.unwrap();
        let mut read = 0;
        while read == 0 {
            read += consumer.poll(|_, _, _| {}).await.unwrap();
        }
        let before = super::sockets();
        let end = Instant::now() + Duration::from_secs(6);
        let producing = async {
            // Up to 2,000 records unacknowledged: requests in flight nearly all the time.
            let mut deliveries = std::collections::VecDeque::new();
            while Instant::now() < end {
                let record = ProducerRecord::new(&topic, b"steady");
                deliveries.push_back(producer.send(record).await.unwrap());
                if deliveries.len() == 2000 {
                    deliveries.pop_front().unwrap().await.unwrap();
                }
            }
            for delivery in deliveries {
                delivery.await.unwrap();
            }
        };
        let consuming = async {
            while Instant::now() < end {
                read += consumer.poll(|_, _, _| {}).await.unwrap();
            }
        };
        tokio::join!(producing, consuming);
        let opened: Vec<_> = super::sockets().difference(&before).copied().collect();
        assert!(opened.is_empty(), "sockets opened: {opened:?}");
        assert!(read > 100, "{read} records read");
    });
}
