//! EndTxn (26): a transactional producer commits or aborts its transaction; the coordinator
//! then writes the markers that end it in every partition it touched.

use super::{ApiKey, Request, Response};
use crate::codec::{Reader, Writer};
use crate::{DecodeError, ErrorCode};

/// EndTxn request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EndTxnRequest<'a> {
    /// The producer's transactional id.
    pub transactional_id: &'a str,
    /// Its producer id.
    pub producer_id: i64,
    /// Its epoch.
    pub producer_epoch: i16,
    /// Commit (`true`) or abort.
    pub committed: bool,
}

impl Request for EndTxnRequest<'_> {
    const API_KEY: ApiKey = ApiKey::EndTxn;

    fn encode(&self, w: &mut Writer<'_>, _version: i16) {
        w.string("transactional id", self.transactional_id);
        w.i64(self.producer_id);
        w.i16(self.producer_epoch);
        w.bool(self.committed);
        w.tagged_fields();
    }
}

/// EndTxn response.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EndTxnResponse {
    /// Quota throttle.
    pub throttle_time_ms: i32,
    /// Error.
    pub error_code: ErrorCode,
}

impl Response<'_> for EndTxnResponse {
    const API_KEY: ApiKey = ApiKey::EndTxn;

    fn decode(r: &mut Reader<'_>, _version: i16) -> Result<Self, DecodeError> {
        let response = EndTxnResponse {
            throttle_time_ms: r.i32()?,
            error_code: ErrorCode(r.i16()?),
        };
        r.tagged_fields()?;
        Ok(response)
    }
}
