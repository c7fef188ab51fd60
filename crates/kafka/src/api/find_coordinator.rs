//! FindCoordinator (10): the broker that coordinates a consumer group, and so keeps the
//! group's committed offsets.

use super::{ApiKey, Request, Response};
use crate::codec::{Reader, Writer};
use crate::{DecodeError, ErrorCode};

/// `key_type` of a consumer group.
pub const GROUP: i8 = 0;

/// `key_type` of a transactional id.
pub const TRANSACTION: i8 = 1;

/// FindCoordinator request for one key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FindCoordinatorRequest<'a> {
    /// The group id (or transactional id).
    pub key: &'a str,
    /// [`GROUP`] or [`TRANSACTION`].
    pub key_type: i8,
}

impl<'a> FindCoordinatorRequest<'a> {
    /// The coordinator of consumer group `group`.
    #[must_use]
    pub fn group(group: &'a str) -> Self {
        FindCoordinatorRequest {
            key: group,
            key_type: GROUP,
        }
    }
}

impl Request for FindCoordinatorRequest<'_> {
    const API_KEY: ApiKey = ApiKey::FindCoordinator;

    fn encode(&self, w: &mut Writer<'_>, version: i16) {
        if version < 4 {
            w.string("coordinator key", self.key);
            w.i8(self.key_type);
        } else {
            // v4 batches keys (KIP-699); this request asks for one.
            w.i8(self.key_type);
            w.array("coordinator keys", &[self.key], |w, key| {
                w.string("coordinator key", key);
            });
        }
        w.tagged_fields();
    }
}

/// One key's coordinator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Coordinator<'a> {
    /// The key asked for (v4+; `None` before, where the answer is for the one key sent).
    pub key: Option<&'a str>,
    /// The coordinator's broker id.
    pub node_id: i32,
    /// Its host.
    pub host: &'a str,
    /// Its port.
    pub port: i32,
    /// Error (`COORDINATOR_NOT_AVAILABLE` while the offsets topic is being created).
    pub error_code: ErrorCode,
    /// The broker's words on the error.
    pub error_message: Option<&'a str>,
}

/// FindCoordinator response: one coordinator per key asked for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FindCoordinatorResponse<'a> {
    /// Quota throttle.
    pub throttle_time_ms: i32,
    /// The answers.
    pub coordinators: Vec<Coordinator<'a>>,
}

impl<'a> Response<'a> for FindCoordinatorResponse<'a> {
    const API_KEY: ApiKey = ApiKey::FindCoordinator;

    fn decode(r: &mut Reader<'a>, version: i16) -> Result<Self, DecodeError> {
        let throttle_time_ms = r.i32()?;
        let coordinators = if version < 4 {
            let error_code = ErrorCode(r.i16()?);
            let error_message = r.nullable_string("error message")?;
            vec![Coordinator {
                key: None,
                node_id: r.i32()?,
                host: r.string("coordinator host")?,
                port: r.i32()?,
                error_code,
                error_message,
            }]
        } else {
            r.array("coordinators", |r| {
                let coordinator = Coordinator {
                    key: Some(r.string("coordinator key")?),
                    node_id: r.i32()?,
                    host: r.string("coordinator host")?,
                    port: r.i32()?,
                    error_code: ErrorCode(r.i16()?),
                    error_message: r.nullable_string("error message")?,
                };
                r.tagged_fields()?;
                Ok(coordinator)
            })?
        };
        r.tagged_fields()?;
        Ok(FindCoordinatorResponse {
            throttle_time_ms,
            coordinators,
        })
    }
}
