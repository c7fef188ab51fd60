//! What a producer or consumer knows of the cluster: each broker's address and each partition's
//! leader, asked for over a control connection to any broker that answers.

use std::collections::HashMap;
use std::sync::Mutex;

use ringwire_kafka::{ApiKey, ErrorCode};

use crate::{ClientConfig, ClientError, Connection};

/// The brokers and the topics asked about.
#[derive(Debug, Default)]
struct Map {
    brokers: HashMap<i32, String>,
    /// Each topic's partition leaders by partition index (-1 while a partition has none).
    topics: HashMap<String, Vec<i32>>,
    /// Topic names by id (brokers name them from Metadata v10, Kafka 2.8).
    names: HashMap<[u8; 16], String>,
}

#[derive(Debug)]
pub(crate) struct Cluster {
    pub(crate) config: ClientConfig,
    bootstrap: Vec<String>,
    control: tokio::sync::Mutex<Option<Connection>>,
    map: Mutex<Map>,
}

impl Cluster {
    /// A cluster reached through `bootstrap` (`HOST:PORT`, several separated by commas); the
    /// first broker that answers becomes the control connection.
    pub(crate) async fn connect(
        bootstrap: &str,
        config: ClientConfig,
    ) -> Result<Self, ClientError> {
        let cluster = Cluster {
            config,
            bootstrap: bootstrap.split(',').map(|a| a.trim().to_owned()).collect(),
            control: tokio::sync::Mutex::new(None),
            map: Mutex::new(Map::default()),
        };
        cluster.refresh(&[]).await?;
        Ok(cluster)
    }

    /// The address of broker `node`.
    pub(crate) fn address(&self, node: i32) -> Option<String> {
        self.map().brokers.get(&node).cloned()
    }

    /// Every broker's address, as the last refresh said.
    pub(crate) fn broker_addresses(&self) -> Vec<String> {
        self.map().brokers.values().cloned().collect()
    }

    /// The leader of a partition, when known.
    pub(crate) fn leader(&self, topic: &str, partition: i32) -> Option<i32> {
        let map = self.map();
        let leader = *map
            .topics
            .get(topic)?
            .get(usize::try_from(partition).ok()?)?;
        (leader >= 0).then_some(leader)
    }

    /// The topic with id `id`, as the last refresh that named it said.
    pub(crate) fn topic_name(&self, id: &[u8; 16]) -> Option<String> {
        self.map().names.get(id).cloned()
    }

    /// The id of `topic`, as the last refresh that named it said.
    pub(crate) fn topic_id(&self, topic: &str) -> Option<[u8; 16]> {
        let map = self.map();
        map.names
            .iter()
            .find_map(|(id, name)| (name == topic).then_some(*id))
    }

    /// How many partitions `topic` had at the last refresh that named it, if it existed then.
    pub(crate) fn known_partitions(&self, topic: &str) -> Option<usize> {
        self.map().topics.get(topic).map(Vec::len)
    }

    /// How many partitions `topic` has, asking the cluster the first time.
    pub(crate) async fn partitions(&self, topic: &str) -> Result<usize, ClientError> {
        if let Some(leaders) = self.map().topics.get(topic) {
            return Ok(leaders.len());
        }
        match self.refresh(&[topic]).await?.first() {
            Some(&(_, code)) if code != ErrorCode::NONE => Err(ClientError::Kafka {
                api: ApiKey::Metadata,
                code,
                message: None,
            }),
            _ => self
                .map()
                .topics
                .get(topic)
                .map(Vec::len)
                .ok_or(ClientError::MissingPartition),
        }
    }

    /// Asks for the brokers and `topics`' leaders; each topic's error code, in order.
    pub(crate) async fn refresh(
        &self,
        topics: &[&str],
    ) -> Result<Vec<(String, ErrorCode)>, ClientError> {
        self.ask(Some(topics)).await
    }

    /// Asks for the brokers and every topic's leaders (and ids).
    pub(crate) async fn refresh_all(&self) -> Result<(), ClientError> {
        self.ask(None).await.map(drop)
    }

    /// Asks for the brokers and the leaders of `topics` (`None`: of every topic).
    async fn ask(&self, topics: Option<&[&str]>) -> Result<Vec<(String, ErrorCode)>, ClientError> {
        let mut control = self.control.lock().await;
        let mut last_error = None;
        for attempt in 0..2 {
            if control.is_none() {
                *control = match self.connect_any().await {
                    Ok(conn) => Some(conn),
                    Err(e) => return Err(last_error.unwrap_or(e)),
                };
            }
            let conn = control.as_mut().expect("connected above");
            let answer = conn
                .metadata(topics, |metadata| {
                    let mut map = self.map();
                    map.brokers = metadata
                        .brokers
                        .iter()
                        .map(|b| (b.node_id, format!("{}:{}", b.host, b.port)))
                        .collect();
                    let mut codes = Vec::with_capacity(metadata.topics.len());
                    for topic in &metadata.topics {
                        let Some(name) = topic.name else { continue };
                        codes.push((name.to_owned(), topic.error_code));
                        if topic.error_code != ErrorCode::NONE {
                            map.topics.remove(name);
                            continue;
                        }
                        let mut leaders = vec![-1; topic.partitions.len()];
                        for p in &topic.partitions {
                            if let Some(slot) = usize::try_from(p.partition_index)
                                .ok()
                                .and_then(|i| leaders.get_mut(i))
                            {
                                *slot = if p.error_code == ErrorCode::NONE {
                                    p.leader_id
                                } else {
                                    -1
                                };
                            }
                        }
                        map.topics.insert(name.to_owned(), leaders);
                        if topic.topic_id != [0; 16] {
                            map.names.insert(topic.topic_id, name.to_owned());
                        }
                    }
                    codes
                })
                .await;
            match answer {
                Ok(codes) => return Ok(codes),
                // The control connection broke: once more on a fresh one.
                Err(e) if attempt == 0 => {
                    *control = None;
                    last_error = Some(e);
                }
                Err(e) => return Err(e),
            }
        }
        unreachable!("the second attempt returns")
    }

    /// The address of the coordinator of `key` (a consumer group's, or with `key_type`
    /// [`TRANSACTION`](ringwire_kafka::api::find_coordinator::TRANSACTION) a transactional
    /// id's), asked over the control connection (dropped when it broke, so the next question
    /// connects again).
    pub(crate) async fn coordinator(&self, key: &str, key_type: i8) -> Result<String, ClientError> {
        let mut control = self.control.lock().await;
        if control.is_none() {
            *control = Some(self.connect_any().await?);
        }
        let conn = control.as_mut().expect("connected above");
        let answer = conn.find_coordinator(key, key_type).await;
        if answer.as_ref().is_err_and(ClientError::is_connection) {
            *control = None;
        }
        answer.map(|(_, address)| address)
    }

    /// A new producer id and epoch from any broker (a non-transactional id needs no
    /// coordinator).
    pub(crate) async fn init_producer_id(&self) -> Result<(i64, i16), ClientError> {
        self.connect_any().await?.init_producer_id().await
    }

    /// A connection to the first bootstrap address or known broker that answers.
    async fn connect_any(&self) -> Result<Connection, ClientError> {
        let known: Vec<String> = self.map().brokers.values().cloned().collect();
        let mut last_error = None;
        for address in self.bootstrap.iter().chain(&known) {
            match Connection::connect(address, &self.config).await {
                Ok(conn) => return Ok(conn),
                Err(e) => last_error = Some(e),
            }
        }
        Err(last_error.unwrap_or(ClientError::NoBroker))
    }

    fn map(&self) -> std::sync::MutexGuard<'_, Map> {
        self.map
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}
