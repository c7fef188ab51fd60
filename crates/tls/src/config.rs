//! Server and client settings, and the backend contexts built from them.

use std::sync::Arc;

use openssl::ssl::{
    AlpnError, NameType, SniError, SslAcceptor, SslAcceptorBuilder, SslConnector,
    SslContextBuilder, SslMethod, SslMode, SslVerifyMode, SslVersion,
};
use openssl::x509::X509;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::server::WebPkiClientVerifier;
use rustls::sign::CertifiedKey;

use crate::resume::Sessions;
use crate::TlsError;

/// Which TLS library runs the sessions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Backend {
    /// The system's OpenSSL: plaintext is decrypted straight into the
    /// receive ring (`SSL_read_ex` into the span it is given).
    #[default]
    OpenSsl,
    /// rustls (pure Rust): plaintext is copied out of rustls's buffer into
    /// the receive ring, one copy more than OpenSSL.
    Rustls,
}

/// A TLS protocol version.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Version {
    /// TLS 1.2.
    Tls12,
    /// TLS 1.3.
    Tls13,
}

/// The settings both sides have: ALPN, the library, the versions.
macro_rules! settings {
    () => {
        /// The application protocols for ALPN, by preference (`http/1.1`,
        /// `h2`, ...). A server refuses a client that offers none of its own.
        #[must_use]
        pub fn alpn(mut self, protocols: &[&[u8]]) -> Self {
            self.alpn = protocols.iter().map(|p| p.to_vec()).collect();
            self
        }

        /// The TLS library.
        #[must_use]
        pub fn backend(mut self, backend: Backend) -> Self {
            self.backend = backend;
            self
        }

        /// The versions allowed (default TLS 1.2 to 1.3).
        #[must_use]
        pub fn versions(mut self, min: Version, max: Version) -> Self {
            self.versions = (min, max);
            self
        }
    };
}

/// A certificate chain (leaf first) and its private key: what a server presents, and what a
/// client presents to a server that asks for one (mutual TLS).
#[derive(Clone)]
pub struct Identity {
    chain: Vec<u8>,
    key: Vec<u8>,
}

impl Identity {
    /// The chain in `chain_pem` (leaf first) with the key in `key_pem`.
    ///
    /// # Errors
    ///
    /// [`TlsError::Config`] when the PEM holds no certificate or no key, or the key is
    /// encrypted.
    pub fn from_pem(chain_pem: &[u8], key_pem: &[u8]) -> Result<Self, TlsError> {
        let holds = |pem: &[u8], what: &[u8]| pem.windows(what.len()).any(|w| w == what);
        if !holds(chain_pem, b"BEGIN CERTIFICATE") {
            return Err(TlsError::Config("no certificate in the PEM".into()));
        }
        if !holds(key_pem, b"PRIVATE KEY") {
            return Err(TlsError::Config("no private key in the PEM".into()));
        }
        // PKCS#8 (`ENCRYPTED PRIVATE KEY`) or legacy (`Proc-Type: 4,ENCRYPTED`): OpenSSL
        // would ask for a pass phrase on the terminal, rustls would find no key.
        if holds(key_pem, b"ENCRYPTED") {
            return Err(TlsError::Config(
                "the private key is encrypted; decrypt it first (openssl pkey -in KEY -out NEW)"
                    .into(),
            ));
        }
        Ok(Identity {
            chain: chain_pem.to_vec(),
            key: key_pem.to_vec(),
        })
    }

    /// The chain's PEM, leaf first.
    pub(crate) fn chain(&self) -> &[u8] {
        &self.chain
    }
}

impl std::fmt::Debug for Identity {
    /// The key stays out of logs.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Identity")
            .field("chain", &format_args!("{} bytes of PEM", self.chain.len()))
            .finish_non_exhaustive()
    }
}

/// Whether a server asks its clients for certificates, and what it does without one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClientAuth {
    /// A client must present a certificate the given CAs signed.
    Required,
    /// A client may present one (it is then checked); without one it is let in.
    Optional,
}

/// A server's certificate, key and protocols.
#[derive(Debug, Clone)]
pub struct ServerConfig {
    identity: Identity,
    /// Presented by SNI to clients asking for one of their certificates' names.
    named: Vec<Identity>,
    client_auth: Option<(Vec<u8>, ClientAuth)>,
    alpn: Vec<Vec<u8>>,
    backend: Backend,
    versions: (Version, Version),
}

impl ServerConfig {
    /// A server presenting `identity`.
    #[must_use]
    pub fn new(identity: Identity) -> Self {
        ServerConfig {
            identity,
            named: Vec::new(),
            client_auth: None,
            alpn: Vec::new(),
            backend: Backend::default(),
            versions: (Version::Tls12, Version::Tls13),
        }
    }

    /// A server presenting `chain_pem` (leaf first) with `key_pem`: see
    /// [`Identity::from_pem`].
    ///
    /// # Errors
    ///
    /// [`TlsError::Config`] when the PEM holds no certificate or no key, or the key is
    /// encrypted.
    pub fn from_pem(chain_pem: &[u8], key_pem: &[u8]) -> Result<Self, TlsError> {
        Identity::from_pem(chain_pem, key_pem).map(Self::new)
    }

    /// Also presents `identity`, to a client that asks by SNI for a name its certificate
    /// is for (its DNS subject alternative names, or its common name; `*.example.com`
    /// covers one label): a server of several domains with a certificate each. The
    /// identity [`new`](Self::new) took goes to every other client (and to one that sends
    /// no name). An exact name wins over a wildcard, then the identity added first.
    #[must_use]
    pub fn add_identity(mut self, identity: Identity) -> Self {
        self.named.push(identity);
        self
    }

    /// Asks clients for a certificate signed by one of the CAs in `ca_pem` (mutual TLS);
    /// see [`TlsStream::peer_certificate`](crate::TlsStream::peer_certificate) for whose
    /// it was.
    #[must_use]
    pub fn client_auth(mut self, ca_pem: &[u8], mode: ClientAuth) -> Self {
        self.client_auth = Some((ca_pem.to_vec(), mode));
        self
    }

    settings!();
}

/// What a client trusts and offers.
#[derive(Debug, Clone)]
pub struct ClientConfig {
    identity: Option<Identity>,
    roots: Vec<Vec<u8>>,
    system_roots: bool,
    insecure: bool,
    alpn: Vec<Vec<u8>>,
    backend: Backend,
    versions: (Version, Version),
}

impl Default for ClientConfig {
    /// The system's trusted roots, certificates and host names verified.
    fn default() -> Self {
        ClientConfig {
            identity: None,
            roots: Vec::new(),
            system_roots: true,
            insecure: false,
            alpn: Vec::new(),
            backend: Backend::default(),
            versions: (Version::Tls12, Version::Tls13),
        }
    }
}

impl ClientConfig {
    /// Also trusts the CA certificates in `pem`.
    #[must_use]
    pub fn add_root_pem(mut self, pem: &[u8]) -> Self {
        self.roots.push(pem.to_vec());
        self
    }

    /// Trusts only the roots added with [`add_root_pem`](Self::add_root_pem).
    #[must_use]
    pub fn without_system_roots(mut self) -> Self {
        self.system_roots = false;
        self
    }

    /// Presents `identity` to servers that ask for a client certificate (mutual TLS).
    #[must_use]
    pub fn identity(mut self, identity: Identity) -> Self {
        self.identity = Some(identity);
        self
    }

    /// Skips every certificate check: for development only (`-k`).
    #[must_use]
    pub fn insecure(mut self, insecure: bool) -> Self {
        self.insecure = insecure;
        self
    }

    settings!();

    pub(crate) fn is_insecure(&self) -> bool {
        self.insecure
    }
}

/// A server context of either library.
#[derive(Clone)]
pub(crate) enum ServerContext {
    OpenSsl(SslAcceptor),
    Rustls(Arc<rustls::ServerConfig>),
}

/// A client context of either library.
#[derive(Clone)]
pub(crate) enum ClientContext {
    /// The connector, and the sessions its connections received.
    OpenSsl(SslConnector, Arc<Sessions>),
    Rustls(Arc<rustls::ClientConfig>),
}

/// A trusted-roots PEM with no certificate in it: a wrong file, which would otherwise only
/// show as every peer being untrusted.
fn no_roots() -> TlsError {
    TlsError::Config("no certificate in a CA PEM to trust".into())
}

fn config_error(what: &str) -> impl Fn(String) -> TlsError + '_ {
    move |e| TlsError::Config(format!("{what}: {e}"))
}

fn openssl_version(v: Version) -> SslVersion {
    match v {
        Version::Tls12 => SslVersion::TLS1_2,
        Version::Tls13 => SslVersion::TLS1_3,
    }
}

fn rustls_versions(
    (min, max): (Version, Version),
) -> Vec<&'static rustls::SupportedProtocolVersion> {
    [
        (Version::Tls13, &rustls::version::TLS13),
        (Version::Tls12, &rustls::version::TLS12),
    ]
    .into_iter()
    .filter(|(v, _)| (min..=max).contains(v))
    .map(|(_, v)| v)
    .collect()
}

fn provider() -> Arc<rustls::crypto::CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

/// ALPN's wire form: each protocol after its length byte.
fn alpn_wire(protocols: &[Vec<u8>]) -> Vec<u8> {
    protocols
        .iter()
        .flat_map(|p| std::iter::once(p.len() as u8).chain(p.iter().copied()))
        .collect()
}

/// The first of `ours` that the client's `offered` list (wire form)
/// holds, as a slice of that list.
fn choose<'a>(ours: &[Vec<u8>], offered: &'a [u8]) -> Option<&'a [u8]> {
    let mut entries = Vec::new();
    let mut rest = offered;
    while let Some((&len, tail)) = rest.split_first() {
        let entry = tail.get(..len as usize)?;
        entries.push(entry);
        rest = &tail[len as usize..];
    }
    ours.iter()
        .find_map(|p| entries.iter().find(|e| **e == p.as_slice()).copied())
}

fn certificates(pem: &[u8]) -> Result<Vec<CertificateDer<'static>>, TlsError> {
    CertificateDer::pem_slice_iter(pem)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| TlsError::Config(format!("certificate PEM: {e}")))
}

/// The CA certificates in `pem`, for OpenSSL.
fn openssl_cas(pem: &[u8]) -> Result<Vec<X509>, TlsError> {
    let cas = X509::stack_from_pem(pem).map_err(|e| TlsError::Config(format!("CA PEM: {e}")))?;
    if cas.is_empty() {
        return Err(no_roots());
    }
    Ok(cas)
}

/// Adds the CA certificates in `pem` to `roots`.
fn add_roots(roots: &mut rustls::RootCertStore, pem: &[u8]) -> Result<(), TlsError> {
    let cas = certificates(pem)?;
    if cas.is_empty() {
        return Err(no_roots());
    }
    for ca in cas {
        roots
            .add(ca)
            .map_err(|e| config_error("CA")(e.to_string()))?;
    }
    Ok(())
}

/// Has OpenSSL present `identity`: the leaf, the rest of the chain, the key, checked to match.
fn openssl_identity(builder: &mut SslContextBuilder, identity: &Identity) -> Result<(), TlsError> {
    let err = |what| move |e: openssl::error::ErrorStack| TlsError::Config(format!("{what}: {e}"));
    let mut chain = X509::stack_from_pem(&identity.chain).map_err(err("certificate PEM"))?;
    if chain.is_empty() {
        return Err(TlsError::Config("no certificate in the PEM".into()));
    }
    let leaf = chain.remove(0);
    builder.set_certificate(&leaf).map_err(err("certificate"))?;
    for ca in chain {
        builder
            .add_extra_chain_cert(ca)
            .map_err(err("certificate chain"))?;
    }
    let key = openssl::pkey::PKey::private_key_from_pem(&identity.key).map_err(err("key PEM"))?;
    builder.set_private_key(&key).map_err(err("key"))?;
    builder
        .check_private_key()
        .map_err(err("the key does not match the certificate"))
}

/// `identity` as rustls takes it.
fn rustls_identity(
    identity: &Identity,
) -> Result<(Vec<CertificateDer<'static>>, PrivateKeyDer<'static>), TlsError> {
    let key = PrivateKeyDer::from_pem_slice(&identity.key)
        .map_err(|e| TlsError::Config(format!("key PEM: {e}")))?;
    Ok((certificates(&identity.chain)?, key))
}

impl ServerContext {
    pub(crate) fn new(config: &ServerConfig) -> Result<Self, TlsError> {
        match config.backend {
            Backend::OpenSsl => openssl_server(config).map(ServerContext::OpenSsl),
            Backend::Rustls => rustls_server(config).map(ServerContext::Rustls),
        }
    }
}

fn openssl_server(config: &ServerConfig) -> Result<SslAcceptor, TlsError> {
    let mut builder = openssl_server_builder(config, &config.identity)?;
    if !config.named.is_empty() {
        // A context per identity, alike but for it; the client's SNI name switches the
        // session to one before the certificate is chosen.
        let contexts = config
            .named
            .iter()
            .map(|identity| {
                let context = openssl_server_builder(config, identity)?
                    .build()
                    .into_context();
                Ok((crate::sni::names(identity)?, context))
            })
            .collect::<Result<Vec<_>, TlsError>>()?;
        builder.set_servername_callback(move |ssl, _| {
            let host = ssl.servername(NameType::HOST_NAME);
            if let Some(context) = host.and_then(|host| crate::sni::pick(&contexts, host)) {
                ssl.set_ssl_context(context)
                    .map_err(|_| SniError::ALERT_FATAL)?;
            }
            Ok(())
        });
    }
    Ok(builder.build())
}

/// An OpenSSL server context's settings, presenting `identity`.
fn openssl_server_builder(
    config: &ServerConfig,
    identity: &Identity,
) -> Result<SslAcceptorBuilder, TlsError> {
    let err = |what| move |e: openssl::error::ErrorStack| TlsError::Config(format!("{what}: {e}"));
    let mut builder = SslAcceptor::mozilla_intermediate_v5(SslMethod::tls_server())
        .map_err(err("OpenSSL context"))?;
    // A busy connection keeps its record buffers between records (the
    // `openssl` crate's `RELEASE_BUFFERS` cost two allocations per request);
    // an idle one frees them (`TlsStream::release_idle_memory`).
    crate::ffi::clear_mode(&mut builder, SslMode::RELEASE_BUFFERS);
    openssl_identity(&mut builder, identity)?;
    if let Some((ca_pem, mode)) = &config.client_auth {
        for ca in openssl_cas(ca_pem)? {
            // Sent in the certificate request, so a client with several can pick.
            builder.add_client_ca(&ca).map_err(err("client CA"))?;
            builder
                .cert_store_mut()
                .add_cert(ca)
                .map_err(err("client CA"))?;
        }
        builder.set_verify(match mode {
            ClientAuth::Required => SslVerifyMode::PEER | SslVerifyMode::FAIL_IF_NO_PEER_CERT,
            ClientAuth::Optional => SslVerifyMode::PEER,
        });
        // OpenSSL refuses to resume a session of a verified peer without one.
        builder
            .set_session_id_context(b"ringwire")
            .map_err(err("session id context"))?;
    }
    builder
        .set_min_proto_version(Some(openssl_version(config.versions.0)))
        .map_err(err("versions"))?;
    builder
        .set_max_proto_version(Some(openssl_version(config.versions.1)))
        .map_err(err("versions"))?;
    if !config.alpn.is_empty() {
        let ours = config.alpn.clone();
        // Our preference first; no overlap is a fatal alert
        // (no_application_protocol), as RFC 7301 asks.
        builder.set_alpn_select_callback(move |_, offered| {
            choose(&ours, offered).ok_or(AlpnError::ALERT_FATAL)
        });
    }
    Ok(builder)
}

fn rustls_server(config: &ServerConfig) -> Result<Arc<rustls::ServerConfig>, TlsError> {
    let (chain, key) = rustls_identity(&config.identity)?;
    let builder = rustls::ServerConfig::builder_with_provider(provider())
        .with_protocol_versions(&rustls_versions(config.versions))
        .map_err(|e| config_error("versions")(e.to_string()))?;
    let builder = match &config.client_auth {
        None => builder.with_no_client_auth(),
        Some((ca_pem, mode)) => {
            let mut roots = rustls::RootCertStore::empty();
            add_roots(&mut roots, ca_pem)?;
            let verifier = WebPkiClientVerifier::builder_with_provider(Arc::new(roots), provider());
            let verifier = match mode {
                ClientAuth::Required => verifier,
                ClientAuth::Optional => verifier.allow_unauthenticated(),
            };
            builder.with_client_cert_verifier(
                verifier
                    .build()
                    .map_err(|e| config_error("client CA")(e.to_string()))?,
            )
        }
    };
    let mut server = if config.named.is_empty() {
        builder
            .with_single_cert(chain, key)
            .map_err(|e| config_error("certificate and key")(e.to_string()))?
    } else {
        let certified = |chain, key| {
            CertifiedKey::from_der(chain, key, &provider())
                .map(Arc::new)
                .map_err(|e| config_error("certificate and key")(e.to_string()))
        };
        let named = config
            .named
            .iter()
            .map(|identity| {
                let (chain, key) = rustls_identity(identity)?;
                Ok((crate::sni::names(identity)?, certified(chain, key)?))
            })
            .collect::<Result<Vec<_>, TlsError>>()?;
        let default = certified(chain, key)?;
        builder.with_cert_resolver(Arc::new(crate::sni::Resolver { default, named }))
    };
    server.alpn_protocols = config.alpn.clone();
    Ok(Arc::new(server))
}

impl ClientContext {
    pub(crate) fn new(config: &ClientConfig) -> Result<Self, TlsError> {
        match config.backend {
            Backend::OpenSsl => openssl_client(config)
                .map(|(connector, sessions)| ClientContext::OpenSsl(connector, sessions)),
            Backend::Rustls => rustls_client(config).map(ClientContext::Rustls),
        }
    }
}

fn openssl_client(config: &ClientConfig) -> Result<(SslConnector, Arc<Sessions>), TlsError> {
    let err = |what| move |e: openssl::error::ErrorStack| TlsError::Config(format!("{what}: {e}"));
    let mut builder =
        SslConnector::builder(SslMethod::tls_client()).map_err(err("OpenSSL context"))?;
    // As for servers: buffers kept while the connection is busy.
    crate::ffi::clear_mode(&mut builder, SslMode::RELEASE_BUFFERS);
    if !config.system_roots {
        builder.set_cert_store(
            openssl::x509::store::X509StoreBuilder::new()
                .map_err(err("roots"))?
                .build(),
        );
    }
    for pem in &config.roots {
        for ca in openssl_cas(pem)? {
            builder.cert_store_mut().add_cert(ca).map_err(err("CA"))?;
        }
    }
    if let Some(identity) = &config.identity {
        openssl_identity(&mut builder, identity)?;
    }
    if config.insecure {
        builder.set_verify(SslVerifyMode::NONE);
    }
    builder
        .set_min_proto_version(Some(openssl_version(config.versions.0)))
        .map_err(err("versions"))?;
    builder
        .set_max_proto_version(Some(openssl_version(config.versions.1)))
        .map_err(err("versions"))?;
    if !config.alpn.is_empty() {
        builder
            .set_alpn_protos(&alpn_wire(&config.alpn))
            .map_err(err("ALPN"))?;
    }
    let sessions = Sessions::install(&mut builder).map_err(err("session cache"))?;
    Ok((builder.build(), sessions))
}

fn rustls_client(config: &ClientConfig) -> Result<Arc<rustls::ClientConfig>, TlsError> {
    let mut roots = rustls::RootCertStore::empty();
    if config.system_roots && !config.insecure {
        // Unreadable system certificates are skipped, as OpenSSL does.
        roots.add_parsable_certificates(rustls_native_certs::load_native_certs().certs);
    }
    for pem in &config.roots {
        add_roots(&mut roots, pem)?;
    }
    let builder = rustls::ClientConfig::builder_with_provider(provider())
        .with_protocol_versions(&rustls_versions(config.versions))
        .map_err(|e| config_error("versions")(e.to_string()))?;
    let builder = if config.insecure {
        builder
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(crate::insecure::AcceptAnything(provider())))
    } else {
        builder.with_root_certificates(roots)
    };
    let mut client = match &config.identity {
        None => builder.with_no_client_auth(),
        Some(identity) => {
            let (chain, key) = rustls_identity(identity)?;
            builder
                .with_client_auth_cert(chain, key)
                .map_err(|e| config_error("client certificate and key")(e.to_string()))?
        }
    };
    client.alpn_protocols = config.alpn.clone();
    Ok(Arc::new(client))
}

/// A certificate and key (PEM) for `hosts` (names or IP addresses), signed
/// by itself: for development servers (`ringwire serve --self-signed`).
///
/// # Errors
///
/// [`TlsError::Config`] for a name that cannot go in a certificate.
pub fn self_signed(hosts: &[&str]) -> Result<(Vec<u8>, Vec<u8>), TlsError> {
    let names: Vec<String> = hosts.iter().map(|h| (*h).to_owned()).collect();
    let certified = rcgen::generate_simple_self_signed(names)
        .map_err(|e| TlsError::Config(format!("self-signed certificate: {e}")))?;
    Ok((
        certified.cert.pem().into_bytes(),
        certified.key_pair.serialize_pem().into_bytes(),
    ))
}
