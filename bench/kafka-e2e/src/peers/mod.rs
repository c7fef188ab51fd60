//! Each client's produce and fetch, configured as its documentation says for throughput.

mod kafka_protocol;
mod rdkafka;
mod ringwire;
mod rskafka;

pub(crate) async fn produce(client: &str, bootstrap: &str, topic: &str, n: usize, value: &[u8]) {
    match client {
        "ringwire" => ringwire::produce(bootstrap, topic, n, value).await,
        "ringwire_bulk" => ringwire::produce_bulk(bootstrap, topic, n, value).await,
        "rskafka" => rskafka::produce(bootstrap, topic, n, value).await,
        "rdkafka" => rdkafka::produce(bootstrap, topic, n, value),
        "kafka_protocol" => kafka_protocol::produce(bootstrap, topic, n, value).await,
        other => panic!("unknown client {other}"),
    }
}

/// Bytes of the values of the first `n` records.
pub(crate) async fn fetch(client: &str, bootstrap: &str, topic: &str, n: usize) -> usize {
    match client {
        "ringwire" | "ringwire_bulk" => ringwire::fetch(bootstrap, topic, n).await,
        "rskafka" => rskafka::fetch(bootstrap, topic, n).await,
        "rdkafka" => rdkafka::fetch(bootstrap, topic, n),
        "kafka_protocol" => kafka_protocol::fetch(bootstrap, topic, n).await,
        other => panic!("unknown client {other}"),
    }
}
