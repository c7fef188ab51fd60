//! SASL authentication of a broker connection (Kafka's `sasl.mechanism`: PLAIN, SCRAM or
//! OAUTHBEARER): a SaslHandshake naming the mechanism, then its tokens in SaslAuthenticate
//! requests, right after the version negotiation and before any other request.

use std::fmt;
use std::sync::Arc;
use std::time::{Duration, Instant};

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
    /// `OAUTHBEARER` (RFC 7628, Kafka's KIP-255): a bearer token (a JWT from the identity
    /// provider the brokers trust), so over TLS unless the network is trusted.
    OAuthBearer {
        /// Where the token comes from, asked at each connection's authentication.
        token: TokenSource,
        /// SASL extensions sent with the token (`key=value`; some services name the cluster
        /// or identity pool this way). Keys are letters only, and `auth` is the token's.
        extensions: Vec<(String, String)>,
    },
}

/// Gives the current bearer token for [`Sasl::OAuthBearer`]. It is called on the runtime
/// whenever a connection authenticates, so it should return a token already at hand (kept
/// fresh elsewhere, by a task that renews it before it expires), not fetch one; an `Err` is
/// the connection's [`ClientError::Sasl`].
#[derive(Clone)]
pub struct TokenSource(Arc<dyn Fn() -> Result<String, String> + Send + Sync>);

impl TokenSource {
    /// A source calling `token`.
    pub fn new(token: impl Fn() -> Result<String, String> + Send + Sync + 'static) -> Self {
        TokenSource(Arc::new(token))
    }

    /// The same token every time.
    #[must_use]
    pub fn fixed(token: String) -> Self {
        TokenSource::new(move || Ok(token.clone()))
    }
}

/// Two sources are equal when they are the same source.
impl PartialEq for TokenSource {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl Eq for TokenSource {}

/// Not the token.
impl fmt::Debug for TokenSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("TokenSource")
    }
}

impl Sasl {
    /// The mechanism's name, as SaslHandshake carries it.
    #[must_use]
    pub fn mechanism(&self) -> &'static str {
        match self {
            Sasl::Plain { .. } => "PLAIN",
            Sasl::ScramSha256 { .. } => "SCRAM-SHA-256",
            Sasl::ScramSha512 { .. } => "SCRAM-SHA-512",
            Sasl::OAuthBearer { .. } => "OAUTHBEARER",
        }
    }
}

/// Not the password, nor the token or the extensions' values.
impl fmt::Debug for Sasl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut d = f.debug_struct(self.mechanism());
        match self {
            Sasl::Plain { username, .. }
            | Sasl::ScramSha256 { username, .. }
            | Sasl::ScramSha512 { username, .. } => d.field("username", username),
            Sasl::OAuthBearer { extensions, .. } => d.field(
                "extensions",
                &extensions.iter().map(|(k, _)| k).collect::<Vec<_>>(),
            ),
        };
        d.finish_non_exhaustive()
    }
}

/// OAUTHBEARER's initial response (RFC 7628 section 3.1): no authorization identity, the
/// token, then the extensions, each key-value pair ended by `\x01` and the whole by another.
fn oauth_bearer_response(
    token: &str,
    extensions: &[(String, String)],
) -> Result<Vec<u8>, ClientError> {
    let invalid = |what: String| Err(ClientError::Sasl(what));
    // RFC 6750's b64token.
    let b64token = |c: u8| c.is_ascii_alphanumeric() || b"-._~+/=".contains(&c);
    if token.is_empty() || !token.bytes().all(b64token) {
        return invalid("the OAUTHBEARER token is not a bearer token (RFC 6750 b64token)".into());
    }
    let mut out = format!("n,,\x01auth=Bearer {token}\x01").into_bytes();
    for (key, value) in extensions {
        let value_ok = value
            .bytes()
            .all(|c| c.is_ascii_graphic() || b" \t\r\n".contains(&c));
        if key.is_empty() || !key.bytes().all(|c| c.is_ascii_alphabetic()) || key == "auth" {
            return invalid(format!(
                "the SASL extension name {key:?} is not letters only, or is auth"
            ));
        }
        if !value_ok {
            return invalid(format!(
                "the SASL extension {key} has a value that cannot be sent"
            ));
        }
        out.extend_from_slice(format!("{key}={value}\x01").as_bytes());
    }
    out.push(1);
    Ok(out)
}

/// A session the broker ends after its lifetime (KIP-368, `connections.max.reauth.ms`):
/// what to authenticate with again, and when.
#[derive(Debug)]
pub(crate) struct SaslSession {
    sasl: Sasl,
    renew_at: Instant,
}

impl Connection {
    /// Authenticates as `sasl` says; for a session the broker will end, notes when to
    /// authenticate again: at 85% of its lifetime, counted from before the first request,
    /// as Java's client does at 85-95%.
    pub(crate) async fn authenticate(&mut self, sasl: &Sasl) -> Result<(), ClientError> {
        let started = Instant::now();
        let lifetime_ms = self.sasl_exchange(sasl).await?;
        self.session = u64::try_from(lifetime_ms)
            .ok()
            .filter(|&ms| ms > 0)
            .map(|ms| SaslSession {
                sasl: sasl.clone(),
                renew_at: started + Duration::from_millis(ms / 100 * 85),
            });
        Ok(())
    }

    /// Whether the session nears its end: a caller that pipelines (the consumer's Fetch, the
    /// producer's requests) sends nothing more until its answers are in, so that the next
    /// request renews the session instead of the broker closing the connection. The broker
    /// takes the renewal's `SaslHandshake` even a little after the end.
    pub(crate) fn renewal_due(&self) -> bool {
        self.session
            .as_ref()
            .is_some_and(|s| Instant::now() >= s.renew_at)
    }

    /// Authenticates again on this connection once its session is near its end, if nothing
    /// is in flight (the exchange must not interleave with other requests; pipelining
    /// callers hold back while [`renewal_due`](Self::renewal_due)).
    pub(crate) async fn renew_session(&mut self) -> Result<(), ClientError> {
        if !self.renewal_due() || self.correlator.in_flight() > 0 || self.tx.pending() > 0 {
            return Ok(());
        }
        // Taken: the exchange's own requests do not renew.
        let Some(session) = self.session.take() else {
            return Ok(());
        };
        Box::pin(self.authenticate(&session.sasl)).await
    }

    /// The exchange `sasl` calls for: the session's lifetime the broker gave (0: none).
    async fn sasl_exchange(&mut self, sasl: &Sasl) -> Result<i64, ClientError> {
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
                return Ok(self.sasl_step(&token).await?.1);
            }
            Sasl::OAuthBearer { token, extensions } => {
                let token = (token.0)().map_err(|e| ClientError::Sasl(format!("no token: {e}")))?;
                let (challenge, lifetime_ms) = self
                    .sasl_step(&oauth_bearer_response(&token, extensions)?)
                    .await?;
                if challenge.is_empty() {
                    return Ok(lifetime_ms);
                }
                // A refusal (RFC 7628 section 3.2.2): its reason as a challenge, which the
                // client acknowledges with one `\x01` for the broker to fail the exchange with
                // its error (`SASL_AUTHENTICATION_FAILED` and that reason, from Kafka).
                self.sasl_step(b"\x01").await?;
                return Err(ClientError::Sasl(format!(
                    "the broker refused the token: {}",
                    String::from_utf8_lossy(&challenge)
                )));
            }
            Sasl::ScramSha256 { username, password } => (Hash::Sha256, username, password),
            Sasl::ScramSha512 { username, password } => (Hash::Sha512, username, password),
        };
        let failed = |e: ScramError| ClientError::Sasl(e.to_string());
        let mut scram = Scram::new(hash, username, password)
            .map_err(|e| ClientError::Sasl(format!("no random nonce: {e}")))?;
        let (server_first, _) = self.sasl_step(&scram.client_first()).await?;
        let client_final = scram.client_final(&server_first).map_err(failed)?;
        let (server_final, lifetime_ms) = self.sasl_step(&client_final).await?;
        scram.verify(&server_final).map_err(failed)?;
        Ok(lifetime_ms)
    }

    /// One SaslAuthenticate round: the client's token out, the broker's back, with the
    /// session's lifetime (0 until the last round, and from brokers that keep sessions).
    async fn sasl_step(&mut self, token: &[u8]) -> Result<(Vec<u8>, i64), ClientError> {
        self.call(&SaslAuthenticateRequest { auth_bytes: token }, |frame| {
            let r = frame.decode::<SaslAuthenticateResponse<'_>>()?;
            ClientError::check_said(ApiKey::SaslAuthenticate, r.error_code, r.error_message)?;
            Ok((r.auth_bytes.to_vec(), r.session_lifetime_ms))
        })
        .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn oauth_bearer_response_as_rfc_7628_lays_it_out() {
        let extensions = vec![("traceId".to_owned(), "a b".to_owned())];
        assert_eq!(
            oauth_bearer_response("eyJ.e30.", &extensions).unwrap(),
            b"n,,\x01auth=Bearer eyJ.e30.\x01traceId=a b\x01\x01"
        );
        assert_eq!(
            oauth_bearer_response("t-._~+/=", &[]).unwrap(),
            b"n,,\x01auth=Bearer t-._~+/=\x01\x01"
        );
        let refused = |token: &str, key: &str, value: &str| {
            let extensions = vec![(key.to_owned(), value.to_owned())];
            matches!(
                oauth_bearer_response(token, &extensions),
                Err(ClientError::Sasl(_))
            )
        };
        assert!(refused("", "k", "v"), "an empty token");
        assert!(refused("a\x01b", "k", "v"), "a separator in the token");
        assert!(refused("a b", "k", "v"), "a space in the token");
        assert!(refused("t", "auth", "v"), "the token's key");
        assert!(refused("t", "trace-id", "v"), "a key not letters only");
        assert!(refused("t", "", "v"), "an empty key");
        assert!(refused("t", "k", "a\x01"), "a separator in a value");
    }
}
