//! SCRAM (RFC 5802, with SHA-256 or SHA-512 as RFC 7677 and Kafka's KIP-84 use them): the
//! client's side of the exchange, without I/O. The client proves it knows the password
//! without sending it, and checks the server's signature, which proves the server knew it
//! too.

use std::num::NonZeroU32;

use base64::engine::general_purpose::STANDARD as BASE64;
use base64::Engine as _;
use ring::{digest, hmac, pbkdf2};

/// The iteration counts taken: RFC 7677's minimum, up to Kafka's maximum.
const ITERATIONS: std::ops::RangeInclusive<u32> = 4096..=16384;

/// The hash a SCRAM mechanism is built on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Hash {
    Sha256,
    Sha512,
}

impl Hash {
    fn hmac(self) -> hmac::Algorithm {
        match self {
            Hash::Sha256 => hmac::HMAC_SHA256,
            Hash::Sha512 => hmac::HMAC_SHA512,
        }
    }

    fn digest(self) -> &'static digest::Algorithm {
        match self {
            Hash::Sha256 => &digest::SHA256,
            Hash::Sha512 => &digest::SHA512,
        }
    }

    fn pbkdf2(self) -> pbkdf2::Algorithm {
        match self {
            Hash::Sha256 => pbkdf2::PBKDF2_HMAC_SHA256,
            Hash::Sha512 => pbkdf2::PBKDF2_HMAC_SHA512,
        }
    }

    fn len(self) -> usize {
        self.digest().output_len()
    }
}

/// Why a SCRAM exchange stopped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ScramError {
    /// The server's message does not parse, or its nonce does not extend the client's.
    Malformed(String),
    /// The server said no (`e=...`).
    Refused(String),
    /// The server's signature is wrong: it does not know the password.
    BadServerSignature,
    /// An iteration count outside [`ITERATIONS`]: fewer weaken the derivation; more (than
    /// Kafka ever asks for) would let a broker make the client spin.
    Iterations(u32),
}

impl std::fmt::Display for ScramError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ScramError::Malformed(what) => write!(f, "malformed SCRAM message: {what}"),
            ScramError::Refused(why) => write!(f, "the broker refused: {why}"),
            ScramError::BadServerSignature => {
                f.write_str("the broker's SCRAM signature is wrong (it does not know the password)")
            }
            ScramError::Iterations(i) => write!(
                f,
                "the broker asks for {i} SCRAM iterations, outside {}..={}",
                ITERATIONS.start(),
                ITERATIONS.end()
            ),
        }
    }
}

/// A client's exchange, from its first message to the check of the server's last.
pub(crate) struct Scram {
    hash: Hash,
    password: String,
    /// `n=USER,r=NONCE`, part of what both sides sign.
    client_first_bare: String,
    nonce: String,
    /// What the server's final message must be signed with (its key and the message both
    /// sides signed), once the client's final one is made.
    server_check: Option<(hmac::Key, String)>,
}

impl Scram {
    /// Starts an exchange as `user` with a fresh random nonce.
    pub(crate) fn new(hash: Hash, user: &str, password: &str) -> Result<Self, getrandom::Error> {
        let mut random = [0u8; 24];
        getrandom::fill(&mut random)?;
        Ok(Self::with_nonce(
            hash,
            user,
            password,
            &BASE64.encode(random),
        ))
    }

    pub(crate) fn with_nonce(hash: Hash, user: &str, password: &str, nonce: &str) -> Self {
        // `=` and `,` in a name are escaped (RFC 5802 section 5.1).
        let user = user.replace('=', "=3D").replace(',', "=2C");
        Scram {
            hash,
            password: password.to_owned(),
            client_first_bare: format!("n={user},r={nonce}"),
            nonce: nonce.to_owned(),
            server_check: None,
        }
    }

    /// The client's first message (no channel binding, no authorization identity).
    pub(crate) fn client_first(&self) -> Vec<u8> {
        format!("n,,{}", self.client_first_bare).into_bytes()
    }

    /// The client's final message, answering the server's first.
    pub(crate) fn client_final(&mut self, server_first: &[u8]) -> Result<Vec<u8>, ScramError> {
        let text = std::str::from_utf8(server_first)
            .map_err(|_| ScramError::Malformed("not UTF-8".into()))?;
        if let Some(why) = text.strip_prefix("e=") {
            return Err(ScramError::Refused(why.to_owned()));
        }
        let field = |key: &str| {
            text.split(',')
                .find_map(|part| part.strip_prefix(key))
                .ok_or_else(|| ScramError::Malformed(format!("no {key} in {text:?}")))
        };
        let nonce = field("r=")?;
        if !nonce.starts_with(&self.nonce) || nonce.len() == self.nonce.len() {
            return Err(ScramError::Malformed(
                "the server's nonce does not extend the client's".into(),
            ));
        }
        let salt = BASE64
            .decode(field("s=")?)
            .map_err(|_| ScramError::Malformed("salt is not base64".into()))?;
        let iterations: u32 = field("i=")?
            .parse()
            .map_err(|_| ScramError::Malformed("iteration count".into()))?;
        if !ITERATIONS.contains(&iterations) {
            return Err(ScramError::Iterations(iterations));
        }
        let mut salted = vec![0; self.hash.len()];
        pbkdf2::derive(
            self.hash.pbkdf2(),
            NonZeroU32::new(iterations).expect("within ITERATIONS"),
            &salt,
            self.password.as_bytes(),
            &mut salted,
        );
        let salted = hmac::Key::new(self.hash.hmac(), &salted);
        let client_key = hmac::sign(&salted, b"Client Key");
        let stored_key = digest::digest(self.hash.digest(), client_key.as_ref());
        // `biws`: base64 of the `n,,` header, no channel binding.
        let without_proof = format!("c=biws,r={nonce}");
        let auth_message = format!("{},{text},{without_proof}", self.client_first_bare);
        let stored_key = hmac::Key::new(self.hash.hmac(), stored_key.as_ref());
        let client_signature = hmac::sign(&stored_key, auth_message.as_bytes());
        let proof: Vec<u8> = client_key
            .as_ref()
            .iter()
            .zip(client_signature.as_ref())
            .map(|(k, s)| k ^ s)
            .collect();
        let server_key = hmac::sign(&salted, b"Server Key");
        let server_key = hmac::Key::new(self.hash.hmac(), server_key.as_ref());
        self.server_check = Some((server_key, auth_message));
        Ok(format!("{without_proof},p={}", BASE64.encode(proof)).into_bytes())
    }

    /// Checks the server's final message.
    pub(crate) fn verify(&self, server_final: &[u8]) -> Result<(), ScramError> {
        let text = std::str::from_utf8(server_final)
            .map_err(|_| ScramError::Malformed("not UTF-8".into()))?;
        if let Some(why) = text.strip_prefix("e=") {
            return Err(ScramError::Refused(why.to_owned()));
        }
        let signature = text
            .split(',')
            .find_map(|part| part.strip_prefix("v="))
            .and_then(|v| BASE64.decode(v).ok())
            .ok_or_else(|| ScramError::Malformed(format!("no signature in {text:?}")))?;
        let (key, signed) = self
            .server_check
            .as_ref()
            .ok_or(ScramError::BadServerSignature)?;
        // Compared in constant time.
        hmac::verify(key, signed.as_bytes(), &signature).map_err(|_| ScramError::BadServerSignature)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// RFC 7677 section 3's SCRAM-SHA-256 exchange, byte for byte.
    #[test]
    fn rfc_7677_example() {
        let mut scram = Scram::with_nonce(Hash::Sha256, "user", "pencil", "rOprNGfwEbeRWgbNEkqO");
        assert_eq!(scram.client_first(), b"n,,n=user,r=rOprNGfwEbeRWgbNEkqO");
        let server_first = b"r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,\
            s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096";
        let client_final = scram.client_final(server_first).unwrap();
        assert_eq!(
            String::from_utf8(client_final).unwrap(),
            "c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,\
             p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ="
        );
        scram
            .verify(b"v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4=")
            .unwrap();
        assert_eq!(
            scram.verify(b"v=AAAATRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4="),
            Err(ScramError::BadServerSignature)
        );
    }

    /// A server that does not extend the nonce, asks for too few or too many iterations, or
    /// refuses, is
    /// an error, as is a final message before the client's; names are escaped.
    #[test]
    fn bad_servers_are_refused() {
        let mut scram = Scram::with_nonce(Hash::Sha512, "a=b,c", "pw", "abc");
        assert_eq!(scram.client_first(), b"n,,n=a=3Db=2Cc,r=abc");
        assert!(matches!(
            scram.client_final(b"r=xyz123,s=AAAA,i=4096"),
            Err(ScramError::Malformed(_))
        ));
        assert!(matches!(
            scram.client_final(b"r=abc,s=AAAA,i=4096"),
            Err(ScramError::Malformed(_))
        ));
        assert_eq!(
            scram.client_final(b"r=abcdef,s=AAAA,i=1000"),
            Err(ScramError::Iterations(1000))
        );
        assert_eq!(
            scram.client_final(b"r=abcdef,s=AAAA,i=4000000000"),
            Err(ScramError::Iterations(4_000_000_000))
        );
        assert_eq!(
            scram.client_final(b"e=unknown-user"),
            Err(ScramError::Refused("unknown-user".into()))
        );
        assert_eq!(scram.verify(b"v=AAAA"), Err(ScramError::BadServerSignature));
    }
}
