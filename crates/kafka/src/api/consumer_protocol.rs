//! The consumer protocol carried inside JoinGroup and SyncGroup: a member's subscription (the
//! topics it wants) and its assignment (the partitions the leader gave it). Both start with
//! their own version; newer versions only append fields, which a reader of an older one
//! leaves unread, as Kafka's clients do.

use crate::codec::{Reader, Writer};
use crate::{DecodeError, EncodeError};

/// JoinGroup's `protocol_type` for consumers.
pub const PROTOCOL_TYPE: &str = "consumer";

/// The version this crate writes (topics or partitions, and user data).
const VERSION: i16 = 0;

/// A subscription: the topics a member consumes.
pub fn encode_subscription(topics: &[&str]) -> Result<Vec<u8>, EncodeError> {
    to_vec(|w| {
        w.i16(VERSION);
        w.array("subscribed topics", topics, |w, topic| {
            w.string("topic name", topic);
        });
        w.nullable_bytes("user data", None);
    })
}

/// The topics of a member's subscription, any version.
pub fn decode_subscription(bytes: &[u8]) -> Result<Vec<&str>, DecodeError> {
    let mut r = Reader::new(bytes, false);
    let _version = r.i16()?;
    let topics = r.array("subscribed topics", |r| r.string("topic name"))?;
    r.nullable_bytes("user data")?;
    Ok(topics)
}

/// An assignment: each topic with its partitions.
pub fn encode_assignment(topics: &[(&str, &[i32])]) -> Result<Vec<u8>, EncodeError> {
    to_vec(|w| {
        w.i16(VERSION);
        w.array("assigned topics", topics, |w, (topic, partitions)| {
            w.string("topic name", topic);
            w.array("assigned partitions", partitions, |w, p| w.i32(*p));
        });
        w.nullable_bytes("user data", None);
    })
}

/// The partitions of an assignment, any version. An empty one (a member left without
/// partitions, or a coordinator's answer to a failed sync) assigns nothing.
pub fn decode_assignment(bytes: &[u8]) -> Result<Vec<(&str, Vec<i32>)>, DecodeError> {
    if bytes.is_empty() {
        return Ok(Vec::new());
    }
    let mut r = Reader::new(bytes, false);
    let _version = r.i16()?;
    let topics = r.array("assigned topics", |r| {
        let topic = r.string("topic name")?;
        let partitions = r.array("assigned partitions", Reader::i32)?;
        Ok((topic, partitions))
    })?;
    r.nullable_bytes("user data")?;
    Ok(topics)
}

/// Runs `write` once to measure, then into a buffer of that length.
fn to_vec(write: impl Fn(&mut Writer<'_>)) -> Result<Vec<u8>, EncodeError> {
    let mut measure = Writer::new(&mut [], false);
    write(&mut measure);
    let len = match measure.finish() {
        Err(EncodeError::BufferTooSmall { need }) => need,
        other => other?,
    };
    let mut out = vec![0; len];
    let mut w = Writer::new(&mut out, false);
    write(&mut w);
    w.finish()?;
    Ok(out)
}
