//! SaslAuthenticate (36): one step of the SASL exchange a SaslHandshake began, its token
//! carried as bytes (the mechanism's business: `\0user\0password` for PLAIN).

use super::{ApiKey, Request, Response};
use crate::codec::{Reader, Writer};
use crate::{DecodeError, ErrorCode};

/// SaslAuthenticate request.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct SaslAuthenticateRequest<'a> {
    /// The client's token.
    pub auth_bytes: &'a [u8],
}

/// Not the token: it may hold a password.
impl std::fmt::Debug for SaslAuthenticateRequest<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SaslAuthenticateRequest")
            .field(
                "auth_bytes",
                &format_args!("[{} bytes]", self.auth_bytes.len()),
            )
            .finish()
    }
}

impl Request for SaslAuthenticateRequest<'_> {
    const API_KEY: ApiKey = ApiKey::SaslAuthenticate;

    fn encode(&self, w: &mut Writer<'_>, _version: i16) {
        w.nullable_bytes("auth bytes", Some(self.auth_bytes));
        w.tagged_fields();
    }
}

/// SaslAuthenticate response.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SaslAuthenticateResponse<'a> {
    /// `SASL_AUTHENTICATION_FAILED` for wrong credentials.
    pub error_code: ErrorCode,
    /// The broker's words on the error.
    pub error_message: Option<&'a str>,
    /// The broker's token (the mechanism's next step; empty for PLAIN).
    pub auth_bytes: &'a [u8],
    /// How long the session lasts before the client must authenticate again (v1+; 0: no
    /// limit).
    pub session_lifetime_ms: i64,
}

impl<'a> Response<'a> for SaslAuthenticateResponse<'a> {
    const API_KEY: ApiKey = ApiKey::SaslAuthenticate;

    fn decode(r: &mut Reader<'a>, version: i16) -> Result<Self, DecodeError> {
        let error_code = ErrorCode(r.i16()?);
        let error_message = r.nullable_string("error message")?;
        let auth_bytes = r
            .nullable_bytes("auth bytes")?
            .ok_or(DecodeError::InvalidLength {
                what: "auth bytes",
                len: -1,
            })?;
        let session_lifetime_ms = if version >= 1 { r.i64()? } else { 0 };
        r.tagged_fields()?;
        Ok(SaslAuthenticateResponse {
            error_code,
            error_message,
            auth_bytes,
            session_lifetime_ms,
        })
    }
}
