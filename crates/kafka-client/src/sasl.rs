//! SASL authentication of a broker connection (Kafka's `sasl.mechanism`, PLAIN or SCRAM): a SaslHandshake
//! naming the mechanism, then its tokens in SaslAuthenticate requests, right after the
//! version negotiation and before any other request.

use std::fmt;

use ringwire_kafka::api::sasl_authenticate::{SaslAuthenticateRequest, SaslAuthenticateResponse};
use ringwire_kafka::api::sasl_handshake::{SaslHandshakeRequest, SaslHandshakeResponse};
use ringwire_kafka::{ApiKey, ErrorCode};

use crate::scram::{Hash, Scram, ScramError};
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
    /// `SCRAM-SHA-256` (RFC 7677): the password proven, never sent, and the broker's
    /// knowledge of it checked in turn.
    ScramSha256 {
        /// The user.
        username: String,
        /// Its password.
        password: String,
    },
    /// `SCRAM-SHA-512`, as `ScramSha256` with SHA-512.
    ScramSha512 {
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
            Sasl::ScramSha256 { .. } => "SCRAM-SHA-256",
            Sasl::ScramSha512 { .. } => "SCRAM-SHA-512",
        }
    }

    fn username(&self) -> &str {
        match self {
            Sasl::Plain { username, .. }
            | Sasl::ScramSha256 { username, .. }
            | Sasl::ScramSha512 { username, .. } => username,
        }
    }
}

/// Not the password.
impl fmt::Debug for Sasl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct(self.mechanism())
            .field("username", &self.username())
            .finish_non_exhaustive()
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
        let (hash, username, password) = match sasl {
            // No authorization identity: the user's own.
            Sasl::Plain { username, password } => {
                let token = [b"\0", username.as_bytes(), b"\0", password.as_bytes()].concat();
                return self.sasl_step(&token).await.map(drop);
            }
            Sasl::ScramSha256 { username, password } => (Hash::Sha256, username, password),
            Sasl::ScramSha512 { username, password } => (Hash::Sha512, username, password),
        };
        let failed = |e: ScramError| ClientError::Sasl(e.to_string());
        let mut scram = Scram::new(hash, username, password)
            .map_err(|e| ClientError::Sasl(format!("no random nonce: {e}")))?;
        let server_first = self.sasl_step(&scram.client_first()).await?;
        let client_final = scram.client_final(&server_first).map_err(failed)?;
        let server_final = self.sasl_step(&client_final).await?;
        scram.verify(&server_final).map_err(failed)
    }

    /// One SaslAuthenticate round: the client's token out, the broker's back.
    async fn sasl_step(&mut self, token: &[u8]) -> Result<Vec<u8>, ClientError> {
        self.call(&SaslAuthenticateRequest { auth_bytes: token }, |frame| {
            let r = frame.decode::<SaslAuthenticateResponse<'_>>()?;
            ClientError::check_said(ApiKey::SaslAuthenticate, r.error_code, r.error_message)?;
            Ok(r.auth_bytes.to_vec())
        })
        .await
    }
}
