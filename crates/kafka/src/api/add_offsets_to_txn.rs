//! AddOffsetsToTxn (25): a transactional producer tells its transaction coordinator that the
//! transaction will commit a consumer group's offsets (sent next, by TxnOffsetCommit).

use super::{ApiKey, Request, Response};
use crate::codec::{Reader, Writer};
use crate::{DecodeError, ErrorCode};

/// AddOffsetsToTxn request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AddOffsetsToTxnRequest<'a> {
    /// The producer's transactional id.
    pub transactional_id: &'a str,
    /// Its producer id.
    pub producer_id: i64,
    /// Its epoch.
    pub producer_epoch: i16,
    /// The consumer group whose offsets the transaction commits.
    pub group_id: &'a str,
}

impl Request for AddOffsetsToTxnRequest<'_> {
    const API_KEY: ApiKey = ApiKey::AddOffsetsToTxn;

    fn encode(&self, w: &mut Writer<'_>, _version: i16) {
        w.string("transactional id", self.transactional_id);
        w.i64(self.producer_id);
        w.i16(self.producer_epoch);
        w.string("group id", self.group_id);
        w.tagged_fields();
    }
}

/// AddOffsetsToTxn response.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AddOffsetsToTxnResponse {
    /// Quota throttle.
    pub throttle_time_ms: i32,
    /// Error.
    pub error_code: ErrorCode,
}

impl Response<'_> for AddOffsetsToTxnResponse {
    const API_KEY: ApiKey = ApiKey::AddOffsetsToTxn;

    fn decode(r: &mut Reader<'_>, _version: i16) -> Result<Self, DecodeError> {
        let response = AddOffsetsToTxnResponse {
            throttle_time_ms: r.i32()?,
            error_code: ErrorCode(r.i16()?),
        };
        r.tagged_fields()?;
        Ok(response)
    }
}
