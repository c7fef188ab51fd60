//! SASL authentication of a broker connection (Kafka's `sasl.mechanism`): a SaslHandshake
//! naming the mechanism, then its tokens in SaslAuthenticate requests, right after the
//! version negotiation and before any other request.

use std::fmt;

use ringwire_kafka::api::sasl_authenticate::{SaslAuthenticateRequest, SaslAuthenticateResponse};
use ringwire_kafka::api::sasl_handshake::{SaslHandshakeRequest, SaslHandshakeResponse};
use ringwire_kafka::{ApiKey, ErrorCode};

use crate::{ClientError, Connection};

/// How a client authenticates to the brokers.
#[derive(Clone, PartialEq, Eq)]
pub enum Sasl {
    /// `PLAIN` (RFC 4616): the user name and password as they are, so over TLS
    /// ([`ClientConfig::tls`](crate::ClientConfig::tls)) unless the network is trusted.
    Plain {
        /// The user.
        username: String,
        /// Its password.
        password: String,
    },
}

impl Sasl {
    /// The mechanism's name, as SaslHandshake carries it.
    #[must_use]
    pub fn mechanism(&self) -> &'static str {
        match self {
            Sasl::Plain { .. } => "PLAIN",
        }
    }

    /// The client's first (for `PLAIN`, only) token.
    fn first_token(&self) -> Vec<u8> {
        match self {
            // No authorization identity: the user's own.
            Sasl::Plain { username, password } => {
                [b"\0", username.as_bytes(), b"\0", password.as_bytes()].concat()
            }
        }
    }
}

/// Not the password.
impl fmt::Debug for Sasl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Sasl::Plain { username, .. } => f
                .debug_struct("Plain")
                .field("username", username)
                .finish_non_exhaustive(),
        }
    }
}

impl Connection {
    /// Authenticates as `sasl` says.
    pub(crate) async fn authenticate(&mut self, sasl: &Sasl) -> Result<(), ClientError> {
        let mechanism = sasl.mechanism();
        self.call(&SaslHandshakeRequest { mechanism }, |frame| {
            let r = frame.decode::<SaslHandshakeResponse<'_>>()?;
            let offered = (r.error_code == ErrorCode::UNSUPPORTED_SASL_MECHANISM)
                .then(|| format!("the broker takes {}", r.mechanisms.join(", ")));
            ClientError::check_said(ApiKey::SaslHandshake, r.error_code, offered.as_deref())
        })
        .await?;
        let token = sasl.first_token();
        self.call(&SaslAuthenticateRequest { auth_bytes: &token }, |frame| {
            let r = frame.decode::<SaslAuthenticateResponse<'_>>()?;
            ClientError::check_said(ApiKey::SaslAuthenticate, r.error_code, r.error_message)
        })
        .await
    }
}
