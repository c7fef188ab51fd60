//! InitProducerId (22): a producer id and epoch for an idempotent producer, whose batches the
//! broker then numbers and deduplicates.

use super::{ApiKey, Request, Response};
use crate::codec::{Reader, Writer};
use crate::{DecodeError, ErrorCode};

/// InitProducerId request, as an idempotent, non-transactional producer sends it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InitProducerIdRequest<'a> {
    /// Transactional id; `None` for an idempotent producer outside transactions.
    pub transactional_id: Option<&'a str>,
    /// Transaction timeout (ignored without a transactional id).
    pub transaction_timeout_ms: i32,
    /// The id to bump the epoch of (v3+); -1 for a new one.
    pub producer_id: i64,
    /// The epoch of `producer_id` (v3+); -1 for a new id.
    pub producer_epoch: i16,
}

impl Default for InitProducerIdRequest<'_> {
    /// A new producer id for an idempotent producer.
    fn default() -> Self {
        InitProducerIdRequest {
            transactional_id: None,
            transaction_timeout_ms: -1,
            producer_id: -1,
            producer_epoch: -1,
        }
    }
}

impl Request for InitProducerIdRequest<'_> {
    const API_KEY: ApiKey = ApiKey::InitProducerId;

    fn encode(&self, w: &mut Writer<'_>, version: i16) {
        w.nullable_string("transactional id", self.transactional_id);
        w.i32(self.transaction_timeout_ms);
        if version >= 3 {
            w.i64(self.producer_id);
            w.i16(self.producer_epoch);
        }
        w.tagged_fields();
    }
}

/// InitProducerId response.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InitProducerIdResponse {
    /// Quota throttle.
    pub throttle_time_ms: i32,
    /// Error.
    pub error_code: ErrorCode,
    /// The producer id (-1 on error).
    pub producer_id: i64,
    /// Its epoch.
    pub producer_epoch: i16,
}

impl Response<'_> for InitProducerIdResponse {
    const API_KEY: ApiKey = ApiKey::InitProducerId;

    fn decode(r: &mut Reader<'_>, _version: i16) -> Result<Self, DecodeError> {
        let response = InitProducerIdResponse {
            throttle_time_ms: r.i32()?,
            error_code: ErrorCode(r.i16()?),
            producer_id: r.i64()?,
            producer_epoch: r.i16()?,
        };
        r.tagged_fields()?;
        Ok(response)
    }
}
