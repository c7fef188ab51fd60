//! SaslHandshake (17): a client names the SASL mechanism it will authenticate with; the
//! broker says whether it takes it, and which it takes. From v1 the exchange that follows
//! goes in SaslAuthenticate requests (v0's unframed tokens are not spoken here).

use super::{ApiKey, Request, Response};
use crate::codec::{Reader, Writer};
use crate::{DecodeError, ErrorCode};

/// SaslHandshake request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SaslHandshakeRequest<'a> {
    /// The mechanism (`PLAIN`, `SCRAM-SHA-256`, ...).
    pub mechanism: &'a str,
}

impl Request for SaslHandshakeRequest<'_> {
    const API_KEY: ApiKey = ApiKey::SaslHandshake;

    fn encode(&self, w: &mut Writer<'_>, _version: i16) {
        w.string("mechanism", self.mechanism);
    }
}

/// SaslHandshake response.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SaslHandshakeResponse<'a> {
    /// `UNSUPPORTED_SASL_MECHANISM` when the broker does not take the one asked for.
    pub error_code: ErrorCode,
    /// The mechanisms the broker takes.
    pub mechanisms: Vec<&'a str>,
}

impl<'a> Response<'a> for SaslHandshakeResponse<'a> {
    const API_KEY: ApiKey = ApiKey::SaslHandshake;

    fn decode(r: &mut Reader<'a>, _version: i16) -> Result<Self, DecodeError> {
        Ok(SaslHandshakeResponse {
            error_code: ErrorCode(r.i16()?),
            mechanisms: r.array("mechanisms", |r| r.string("mechanism"))?,
        })
    }
}
