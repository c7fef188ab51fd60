//! What the blocking and the tokio client spell alike in their public API: the client's
//! builder methods. The two differ in `async` only elsewhere, so they cannot share one
//! type; each module expands the macro in its own `impl`, over fields of the same names.

/// [`Client`](crate::blocking::Client)'s and [`Client`](crate::tokio::Client)'s
/// constructors and builder methods; a client's own fields, with their initial values,
/// as arguments.
macro_rules! client_builders {
    ($($field:ident: $value:expr),* $(,)?) => {
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
                $($field: $value,)*
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

pub(crate) use client_builders;
