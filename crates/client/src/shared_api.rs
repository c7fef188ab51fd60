//! What the blocking and the tokio client spell alike in their public API: the client's
//! builder methods and a response's accessors. The two differ in `async` only elsewhere,
//! so they cannot share one type; each module expands these macros in its own `impl`, over
//! fields of the same names.

/// [`Client`](crate::blocking::Client)'s and [`Client`](crate::tokio::Client)'s
/// constructors and builder methods.
macro_rules! client_builders {
    () => {
        /// A client as `config` says.
        #[must_use]
        pub fn new(config: $crate::ClientConfig) -> Self {
            Self::with_tls(config, ::ringwire_tls::ClientConfig::default())
        }

        /// A client as `config` says, whose `https://` connections trust and
        /// offer what `tls` says (extra roots, no verification for testing,
        /// the TLS library).
        #[must_use]
        pub fn with_tls(config: $crate::ClientConfig, tls: ::ringwire_tls::ClientConfig) -> Self {
            Self {
                pool: $crate::pool::Pool::new(config.max_idle_per_host, config.idle_timeout),
                tls: $crate::tls::Tls::new(tls),
                config,
                proxies: $crate::Proxies::default(),
                pinned: $crate::resolve::Pinned::default(),
                unix: None,
                cookies: None,
                authorize: $crate::redirect::Authorizer::default(),
            }
        }

        /// This client, connecting to the Unix domain socket at `path` for every origin, as
        /// curl's `--unix-socket`: a URL's host still names the `Host` field, the TLS server
        /// name and the certificate check; proxies are not used. A socket in Linux's abstract
        /// namespace (curl's `--abstract-unix-socket`) is named by
        /// [`abstract_unix_path`](crate::abstract_unix_path).
        #[must_use]
        pub fn unix_socket(mut self, path: impl AsRef<std::path::Path>) -> Self {
            self.unix = Some(std::sync::Arc::from(path.as_ref()));
            self
        }

        /// This client, connecting to `addr` for `host` on `port`, as curl's `--resolve`: the
        /// name stays what `Host`, SNI and the certificate check use.
        #[must_use]
        pub fn resolve(mut self, host: &str, port: u16, addr: std::net::IpAddr) -> Self {
            self.pinned.add(host, port, &[addr]);
            self
        }

        /// As [`resolve`](Self::resolve), to several addresses, raced as a name's addresses
        /// are (RFC 8305: families alternating, a new attempt every 250 ms until one connects).
        #[must_use]
        pub fn resolve_to_addrs(
            mut self,
            host: &str,
            port: u16,
            addrs: &[std::net::IpAddr],
        ) -> Self {
            self.pinned.add(host, port, addrs);
            self
        }

        /// This client, keeping cookies in `jar`: each answer's `Set-Cookie` fields stored
        /// (redirects' included), and the cookies that go with each request sent in its
        /// `cookie` field (see [`CookieJar`](crate::CookieJar)). A jar may be shared by several clients.
        #[must_use]
        pub fn with_cookies(mut self, jar: std::sync::Arc<$crate::CookieJar>) -> Self {
            self.cookies = Some(jar);
            self
        }

        /// This client, asking `authorize` for the `authorization` field of each request a
        /// redirect sends to another origin (scheme, host or port) than the request before
        /// it. The field a request had never goes to another origin; this gives the new
        /// one its own, as curl's `--netrc` does with each host's credentials when it
        /// follows a `Location` (`None`: the request goes without).
        #[must_use]
        pub fn authorize_redirects(
            mut self,
            authorize: impl Fn(&$crate::Url) -> Option<String> + Send + Sync + 'static,
        ) -> Self {
            self.authorize = $crate::redirect::Authorizer(Some(std::sync::Arc::new(authorize)));
            self
        }

        /// The cookie jar, if the client keeps one.
        pub(crate) fn cookies(&self) -> Option<&$crate::CookieJar> {
            self.cookies.as_deref()
        }

        /// This client, reaching origins through `proxies` (none by default; curl's
        /// environment variables with [`Proxies::from_env`](crate::Proxies::from_env)).
        #[must_use]
        pub fn with_proxies(mut self, proxies: $crate::Proxies) -> Self {
            self.proxies = proxies;
            self
        }
    };
}

/// A response's accessors to its status, protocol, head, trailers and coding, over its
/// `reader` and its connection's `rx` and `proto`.
macro_rules! response_accessors {
    () => {
        /// The status code.
        #[must_use]
        pub fn status(&self) -> u16 {
            self.reader.status()
        }

        /// The protocol the response came over.
        #[must_use]
        pub fn protocol(&self) -> $crate::Protocol {
            self.reader.protocol()
        }

        /// The head, in place in the receive ring (over HTTP/2, rewritten as an
        /// HTTP/1.1 head with no reason phrase): there until the body is read
        /// (`None` after the first [`chunk`](Self::chunk)).
        #[must_use]
        pub fn head(&self) -> Option<ringwire_http1::Response<'_>> {
            let conn = self.conn.as_ref()?;
            self.reader
                .head_in_ring()
                .then(|| conn.proto.head(conn.rx.data()))
        }

        /// The first field named `name`, while the head is in the ring.
        #[must_use]
        pub fn header(&self, name: &str) -> Option<&[u8]> {
            self.head()?.header(name)
        }

        /// The trailer fields the body ended with: empty until [`chunk`](Self::chunk) has
        /// returned `None` (or the whole body was read otherwise), and for a body without any.
        /// A chunked HTTP/1.1 body or an HTTP/2 stream may have them (gRPC's `grpc-status`).
        #[must_use]
        pub fn trailers(&self) -> &$crate::Trailers {
            self.reader.trailers()
        }

        /// The content coding the body is decoded from: `Some` when the
        /// request asked for it
        /// ([`HeaderBuilder::decompress`](crate::HeaderBuilder::decompress)) and the
        /// response's `content-encoding` is one the client undoes; the head
        /// still says what the server sent (`content-encoding`, and a
        /// `content-length` of the encoded bytes).
        #[must_use]
        pub fn decoding(&self) -> Option<$crate::Encoding> {
            self.reader.encoding()
        }
    };
}

pub(crate) use {client_builders, response_accessors};
