//! `ringwire serve`: a directory, or the built-in demo site, over HTTP/1.1
//! and HTTP/2 (prior knowledge on cleartext, ALPN h2 over TLS), or HTTPS with a certificate (`--tls-cert`, `--tls-key`) or one made up at
//! start (`--self-signed`).

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use clap::{ArgGroup, Args, ValueEnum};
use ringwire_http1::encode::FieldBlock;
use ringwire_http1::Method;
use ringwire_server::files::{Dotfiles, EmbeddedSite, StaticFiles};
use ringwire_server::middleware::{AccessLog, Compress, Cors};
use ringwire_server::{
    handler_fn, streaming, ws, Handler, Router, Server, ServerConfig, Threading, Timeouts,
};
use ringwire_tls::{ClientAuth, TlsAcceptor, TlsError};

use crate::logger;

#[derive(Debug, Clone, Args)]
#[command(group(ArgGroup::new("directory").args(["dir", "root"])))]
pub(crate) struct ServeArgs {
    /// Directory to serve.
    dir: Option<PathBuf>,
    /// Directory to serve (the same as DIR).
    #[arg(long, value_name = "DIR", conflicts_with = "dir")]
    root: Option<PathBuf>,
    /// Serve names that start with a dot (.git, .env, .ssh), which are
    /// otherwise not found and left out of listings (/.well-known/ is
    /// served either way).
    #[arg(long, requires = "directory")]
    dotfiles: bool,
    /// A single-page app: a page navigation to a path that names no file (and has no
    /// extension) gets the directory's index.html, so the app's own routes load.
    #[arg(long, requires = "directory")]
    spa: bool,
    /// Address to listen on (port 0 picks a free port). A listening socket passed by
    /// systemd's socket activation (LISTEN_FDS, or systemfd) is served instead, TCP or Unix.
    #[arg(long, default_value = "127.0.0.1:8080")]
    addr: SocketAddr,
    /// Listen on a Unix domain socket created at PATH instead of --addr (behind nginx:
    /// `proxy_pass http://unix:PATH:`; curl: `--unix-socket PATH`). A stale socket left
    /// there is replaced; the file is removed when the server stops. @NAME listens on NAME
    /// in Linux's abstract namespace: no file (curl: `--abstract-unix-socket NAME`).
    #[arg(long, value_name = "PATH", conflicts_with = "addr")]
    unix: Option<PathBuf>,
    /// The --unix socket file's permissions, in octal (660: its owner and group may
    /// connect, say the group nginx runs as); otherwise the process's umask decides.
    #[arg(long, value_name = "OCTAL", requires = "unix", value_parser = octal_mode)]
    unix_mode: Option<u32>,
    /// Worker threads (default: available parallelism).
    #[arg(long)]
    threads: Option<usize>,
    /// How threads share the work: a runtime and a listening socket
    /// per thread (per-core), or one runtime whose workers share one
    /// listener (shared).
    #[arg(long, value_enum, default_value_t = Runtime::PerCore)]
    runtime: Runtime,
    /// Print an access log line per request on stderr.
    #[arg(long)]
    log: bool,
    /// Add this field to every answer, `NAME: VALUE` (repeatable), in place of one of the
    /// same name the site would send: `--header 'Access-Control-Allow-Origin: *'`,
    /// `--header 'Cache-Control: no-store'`. Framing fields are refused.
    #[arg(short = 'H', long = "header", value_name = "NAME: VALUE")]
    headers: Vec<String>,
    /// Let pages of this origin call the server from a browser (CORS: preflights
    /// answered, answers marked), `https://app.example.com` as the browser names it;
    /// repeatable; `*` for any origin.
    #[arg(long, value_name = "ORIGIN")]
    cors: Vec<String>,
    /// Seconds a request head may take to arrive, from its first byte
    /// (checked once a second: a slow client goes within two more).
    #[arg(long, value_name = "SECS", default_value_t = Timeouts::DEFAULT_HEAD.as_secs(),
          value_parser = clap::value_parser!(u64).range(1..))]
    head_timeout: u64,
    /// Seconds a keep-alive connection may wait for its next request
    /// (checked once a second).
    #[arg(long, value_name = "SECS", default_value_t = Timeouts::DEFAULT_IDLE.as_secs(),
          value_parser = clap::value_parser!(u64).range(1..))]
    idle_timeout: u64,
    /// Milliseconds a connection keeps its buffers after an answer,
    /// waiting for the next request, before idling without them (0:
    /// at once; less memory per idle connection, more work per request).
    #[arg(long, value_name = "MS", default_value_t = Timeouts::DEFAULT_WARM.as_millis() as u64)]
    warm_ms: u64,
    /// Serve HTTPS with this certificate chain (PEM, leaf first). On SIGHUP it is read
    /// again with its key (and --tls-client-ca) for the connections that follow: a renewed
    /// certificate without a restart. Repeated (each with its --tls-key, in the same
    /// order), a client gets the certificate for the name it asks for by SNI, and the
    /// first when none is for it: several domains on one server.
    #[arg(long, value_name = "FILE", requires = "tls_key")]
    tls_cert: Vec<PathBuf>,
    /// The private key (PEM) of --tls-cert.
    #[arg(long, value_name = "FILE", requires = "tls_cert")]
    tls_key: Vec<PathBuf>,
    /// Serve HTTPS with a certificate for localhost made up at start, for
    /// development (clients must trust the file it names, or skip checks).
    #[arg(long, conflicts_with = "tls_cert")]
    self_signed: bool,
    /// Require a client certificate signed by a CA in FILE (PEM): mutual TLS. Handlers see
    /// it as `Request::peer_certificate`.
    #[arg(long, value_name = "FILE")]
    tls_client_ca: Option<PathBuf>,
    /// The TLS library.
    #[arg(long, value_enum, default_value_t)]
    tls_library: crate::TlsLibrary,
    /// Speak HTTP/1.1 only: no h2 in ALPN, and the HTTP/2 preface on a
    /// cleartext connection answered as a bad request.
    #[arg(long)]
    no_http2: bool,
    /// Every connection starts with a PROXY protocol header (v1 or v2: HAProxy's
    /// send-proxy, AWS NLB, Envoy), whose client address the access log shows; one
    /// without it is closed. Only behind such a proxy: a header names any address.
    #[arg(long)]
    proxy_protocol: bool,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum Runtime {
    PerCore,
    Shared,
}

const INDEX: &[u8] = include_bytes!("../site/index.html");
const WS_PAGE: &[u8] = include_bytes!("../site/ws.html");
const UPLOAD_PAGE: &[u8] = include_bytes!("../site/upload.html");
const EVENTS_PAGE: &[u8] = include_bytes!("../site/events.html");
const CORS_PAGE: &[u8] = include_bytes!("../site/cors.html");
const SITE_CSS: &[u8] = include_bytes!("../site/site.css");

/// What ALPN offers, HTTP/2 first (unless `--no-http2`).
const ALPN: &[&[u8]] = &[b"h2", b"http/1.1"];

/// The built-in site: pages, a WebSocket echo at `/ws/echo`, server-sent events at
/// `/events`, and `/upload`, which reads a form's fields and files as they arrive.
fn demo_site() -> Router {
    let pages = EmbeddedSite::new()
        .page("/", "text/html; charset=utf-8", INDEX)
        .page("/index.html", "text/html; charset=utf-8", INDEX)
        .page("/ws.html", "text/html; charset=utf-8", WS_PAGE)
        .page("/upload.html", "text/html; charset=utf-8", UPLOAD_PAGE)
        .page("/events.html", "text/html; charset=utf-8", EVENTS_PAGE)
        .page("/cors.html", "text/html; charset=utf-8", CORS_PAGE)
        .page("/site.css", "text/css; charset=utf-8", SITE_CSS)
        .page(
            "/hello",
            "text/plain; charset=utf-8",
            b"Hello from ringwire!\n",
        );
    let upload = streaming(handler_fn(crate::upload::upload));
    Router::new()
        .get("/ws/echo", ws::echo)
        .get("/events", crate::events::events)
        .route(Method::Post, "/upload", upload)
        .fallback(pages)
}

pub(crate) fn run(args: ServeArgs) -> ExitCode {
    logger::init(args.log);
    match serve(args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("ringwire: {message}");
            ExitCode::FAILURE
        }
    }
}

fn serve(args: ServeArgs) -> Result<(), String> {
    let fields = added_fields(&args.headers)?;
    let mut config = ServerConfig::new(args.addr);
    config.timeouts.head = Duration::from_secs(args.head_timeout);
    config.timeouts.idle = Duration::from_secs(args.idle_timeout);
    config.timeouts.warm = Duration::from_millis(args.warm_ms);
    if args.no_http2 {
        config.http2 = None;
    }
    config.proxy_protocol = args.proxy_protocol;
    let threads = args
        .threads
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, usize::from));
    config.threading = match args.runtime {
        Runtime::PerCore => Threading::PerCore(threads),
        Runtime::Shared => Threading::Shared(threads),
    };
    let dir = args.dir.clone().or_else(|| args.root.clone());
    let files = match &dir {
        Some(dir) => Some(
            StaticFiles::new(dir.clone())
                .map_err(|e| format!("cannot serve {}: {}", dir.display(), describe(&e)))?
                .dotfiles(if args.dotfiles {
                    Dotfiles::Serve
                } else {
                    Dotfiles::Hide
                })
                .single_page_app(args.spa),
        ),
        None => None,
    };
    let unix = args.unix.as_deref().map(|path| (path, abstract_name(path)));
    let (mut server, place) = match (inherited()?, unix) {
        (Some(Inherited::Tcp(listener)), _) => {
            let server = Server::from_tcp(listener, config).map_err(|e| inherited_failed(&e))?;
            let place = server.local_addr().to_string();
            (server, place)
        }
        (Some(Inherited::Unix(listener, place)), _) => {
            let server = Server::from_unix(listener, config).map_err(|e| inherited_failed(&e))?;
            (server, place)
        }
        (None, Some((path, Some(name)))) => {
            let place = format!("unix:{}", path.display());
            if args.unix_mode.is_some() {
                return Err(format!(
                    "{place}: an abstract socket has no file to set a mode on"
                ));
            }
            let bound = Server::bind_unix_abstract(name, config);
            let server =
                bound.map_err(|e| format!("cannot listen on {place}: {}", describe(&e)))?;
            (server, place)
        }
        (None, Some((path, None))) => {
            let place = format!("unix:{}", path.display());
            let bound = Server::bind_unix(path, config);
            let server =
                bound.map_err(|e| format!("cannot listen on {place}: {}", describe(&e)))?;
            if let Some(mode) = args.unix_mode {
                use std::os::unix::fs::PermissionsExt as _;
                let permissions = std::fs::Permissions::from_mode(mode);
                std::fs::set_permissions(path, permissions)
                    .map_err(|e| format!("cannot set {place}'s mode: {}", describe(&e)))?;
            }
            (server, place)
        }
        (None, None) => {
            let addr = config.addr;
            let bound = Server::bind(config);
            let server = bound.map_err(|e| format!("cannot listen on {addr}: {}", describe(&e)))?;
            let place = server.local_addr().to_string();
            (server, place)
        }
    };
    // The certificate's file, if one was written, lives as long as the server.
    let (tls, _certificate) = tls(&args, &place)?;
    let scheme = if tls.is_some() { "https" } else { "http" };
    // Certificates from files are read again on SIGHUP.
    let reload = match (&tls, args.self_signed) {
        (Some(acceptor), false) => Some((acceptor.clone(), args.clone())),
        _ => None,
    };
    if let Some(acceptor) = tls.clone() {
        server = server.with_tls(acceptor);
    }
    let what = match &files {
        Some(files) => files.root().display().to_string(),
        None => "the demo site".to_owned(),
    };
    let banner = match place.strip_prefix("unix:") {
        Some(_) => format!("ringwire: serving {what} on {place} ({scheme}://localhost/ there)\n"),
        None => format!("ringwire: serving {what} on {scheme}://{place}/\n"),
    };
    let added = Added {
        fields,
        cors: args.cors.clone(),
    };
    let result = match files {
        Some(files) => run_site(server, files, added, banner, reload),
        None => run_site(server, demo_site(), added, banner, reload),
    };
    result.map_err(|e| format!("server failed: {e}"))
}

/// A file that is removed when this is dropped.
struct Temporary(PathBuf);

impl Drop for Temporary {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// The TLS acceptor the flags ask for, if any, and the self-signed certificate's file.
fn tls(args: &ServeArgs, place: &str) -> Result<(Option<TlsAcceptor>, Option<Temporary>), String> {
    let (config, file) = if args.self_signed {
        let (cert, key) = ringwire_tls::self_signed(&["localhost", "127.0.0.1", "::1"])
            .map_err(|e| format!("cannot make a certificate: {e}"))?;
        // Saved so that a client can trust it (`curl --cacert FILE`).
        let name = format!("ringwire-self-signed-{place}.pem").replace('/', "_");
        let path = std::env::temp_dir().join(name);
        let file = save_new(&path, &cert)
            .map_err(|e| format!("cannot write {}: {}", path.display(), describe(&e)))?;
        eprintln!(
            "ringwire: self-signed certificate for localhost: {}",
            path.display()
        );
        (tls_config(args, &cert, &key)?, Some(file))
    } else if !args.tls_cert.is_empty() {
        (tls_config_from_files(args)?, None)
    } else if args.tls_client_ca.is_some() {
        return Err(
            "--tls-client-ca needs HTTPS: --tls-cert and --tls-key, or --self-signed".into(),
        );
    } else {
        return Ok((None, None));
    };
    let acceptor = TlsAcceptor::new(&config).map_err(unusable)?;
    Ok((Some(acceptor), file))
}

/// The TLS settings of `--tls-cert`, `--tls-key` and `--tls-client-ca`, their files read
/// now.
fn tls_config_from_files(args: &ServeArgs) -> Result<ringwire_tls::ServerConfig, String> {
    if args.tls_cert.len() != args.tls_key.len() {
        return Err("each --tls-cert goes with a --tls-key, in the same order".into());
    }
    let mut pairs = args.tls_cert.iter().zip(&args.tls_key);
    let Some((cert, key)) = pairs.next() else {
        return Err("--tls-cert and --tls-key go together".into());
    };
    let mut config = tls_config(args, &read(cert)?, &read(key)?)?;
    for (cert, key) in pairs {
        let identity = ringwire_tls::Identity::from_pem(&read(cert)?, &read(key)?);
        config = config.add_identity(identity.map_err(unusable)?);
    }
    Ok(config)
}

/// The TLS settings for the certificate chain `cert` and its `key` (PEM): the flags' ALPN,
/// library and client CA.
fn tls_config(
    args: &ServeArgs,
    cert: &[u8],
    key: &[u8],
) -> Result<ringwire_tls::ServerConfig, String> {
    let mut config = ringwire_tls::ServerConfig::from_pem(cert, key)
        .map_err(unusable)?
        .alpn(if args.no_http2 { &ALPN[1..] } else { ALPN })
        .backend(args.tls_library.into());
    if let Some(path) = &args.tls_client_ca {
        config = config.client_auth(&read(path)?, ClientAuth::Required);
    }
    Ok(config)
}

fn unusable(e: TlsError) -> String {
    format!("cannot use the certificate: {e}")
}

/// The bytes of the file at `path`, or a line that says why not.
fn read(path: &PathBuf) -> Result<Vec<u8>, String> {
    std::fs::read(path).map_err(|e| {
        let why = match e.kind() {
            std::io::ErrorKind::NotFound => "no such file".to_owned(),
            _ => describe(&e),
        };
        format!("cannot read {}: {why}", path.display())
    })
}

/// Reads the certificate files again at each SIGHUP and hands them to `acceptor` for the
/// connections that follow; files that will not do leave the certificate in use, said on
/// stderr.
#[cfg(unix)]
async fn reload_on_hangup(acceptor: &TlsAcceptor, args: &ServeArgs) {
    let Some(mut hangups) = crate::signal::hangups() else {
        return std::future::pending().await;
    };
    while hangups.recv().await.is_some() {
        let reloaded = tls_config_from_files(args)
            .and_then(|config| acceptor.reload(&config).map_err(unusable));
        match reloaded {
            Ok(()) => say("ringwire: certificate read again\n"),
            Err(e) => say(&format!("ringwire: {e}; the one in use stays\n")),
        }
    }
}

/// Writes `bytes` to a new file at `path` (one left by an earlier run is replaced), never
/// through a link planted there: the temporary directory is shared.
fn save_new(path: &Path, bytes: &[u8]) -> std::io::Result<Temporary> {
    use std::io::Write as _;

    match std::fs::remove_file(path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(e),
        _ => {}
    }
    // `create_new` fails on anything already there, a symbolic link included.
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path)?;
    let saved = Temporary(path.to_owned());
    file.write_all(bytes)?;
    Ok(saved)
}

/// What the flags add to every site: `--header`'s fields, `--cors`'s origins.
struct Added {
    fields: Option<FieldBlock>,
    cors: Vec<String>,
}

/// Serves `site` with compression and the access log (which costs nothing
/// unless `--log` turned it on), what `added` says added, printing `banner`
/// once signals are caught; `reload`'s acceptor reads its certificate again on SIGHUP.
fn run_site<H: Handler>(
    server: Server,
    site: H,
    added: Added,
    banner: String,
    reload: Option<(TlsAcceptor, ServeArgs)>,
) -> std::io::Result<()> {
    let site = Compress::new(WithFields {
        inner: site,
        fields: added.fields,
    });
    let origins: Vec<&str> = added.cors.iter().map(String::as_str).collect();
    let site = match &origins[..] {
        [] => Crossing::Off(site),
        _ if origins.contains(&"*") => Crossing::On(Cors::any(site)),
        _ => Crossing::On(Cors::origins(site, &origins)),
    };
    server.run(AccessLog::new(site), shutdown_signal(banner, reload))
}

/// A site, with CORS (`--cors`) or without.
enum Crossing<H> {
    Off(H),
    On(Cors<H>),
}

impl<H: Handler> Handler for Crossing<H> {
    fn streams_body(&self, request: &ringwire_http1::Request<'_>) -> bool {
        match self {
            Crossing::Off(site) => site.streams_body(request),
            Crossing::On(site) => site.streams_body(request),
        }
    }

    async fn call(&self, request: &ringwire_server::Request<'_>) -> ringwire_server::Response {
        match self {
            Crossing::Off(site) => site.call(request).await,
            Crossing::On(site) => site.call(request).await,
        }
    }
}

/// The `--header` flags, encoded and checked once; `None` without any.
fn added_fields(flags: &[String]) -> Result<Option<FieldBlock>, String> {
    if flags.is_empty() {
        return Ok(None);
    }
    let fields = flags
        .iter()
        .map(|flag| match flag.split_once(':') {
            Some((name, value)) => Ok((name.trim(), value.trim().as_bytes())),
            None => Err(format!("--header {flag:?}: expected NAME: VALUE")),
        })
        .collect::<Result<Vec<_>, _>>()?;
    FieldBlock::new(fields)
        .map(Some)
        .map_err(|e| format!("--header: {e}"))
}

/// A site whose answers carry `fields` (those of the same names it set taken out).
struct WithFields<H> {
    inner: H,
    fields: Option<FieldBlock>,
}

impl<H: Handler> Handler for WithFields<H> {
    fn streams_body(&self, request: &ringwire_http1::Request<'_>) -> bool {
        self.inner.streams_body(request)
    }

    async fn call(&self, request: &ringwire_server::Request<'_>) -> ringwire_server::Response {
        let mut response = self.inner.call(request).await;
        let Some(fields) = &self.fields else {
            return response;
        };
        for (name, _) in fields.iter() {
            response.remove_header(name);
        }
        response.fields(fields.clone())
    }
}

/// Prints `banner` once Ctrl-C and SIGTERM (and, with `reload`, SIGHUP) are caught (a
/// supervisor that signals as soon as it reads the banner gets a graceful shutdown, not a
/// killed process), then resolves on either of the first two.
async fn shutdown_signal(banner: String, reload: Option<(TlsAcceptor, ServeArgs)>) {
    let stop = crate::signal::stop_requested();
    match reload {
        #[cfg(unix)]
        Some((acceptor, args)) => {
            let reloading = reload_on_hangup(&acceptor, &args);
            say(&banner);
            tokio::select! {
                () = stop => {}
                () = reloading => {}
            }
        }
        _ => {
            say(&banner);
            stop.await;
        }
    }
    say("ringwire: shutting down\n");
}

/// A listening socket passed to the process, in place of `--addr` or `--unix`.
enum Inherited {
    Tcp(std::net::TcpListener),
    /// With its place, `unix:PATH`.
    Unix(std::os::unix::net::UnixListener, String),
}

/// The listening socket systemd's socket activation (`LISTEN_FDS`, `LISTEN_PID`) or
/// systemfd passed as descriptor 3, if any: it outlives the server, so connections that
/// arrive while the server restarts wait in its queue instead of being refused.
/// The name after `@` in `--unix @NAME`: a socket in the abstract namespace.
fn abstract_name(path: &Path) -> Option<&[u8]> {
    use std::os::unix::ffi::OsStrExt as _;

    path.as_os_str().as_bytes().strip_prefix(b"@")
}

fn inherited() -> Result<Option<Inherited>, String> {
    let mut passed = listenfd::ListenFd::from_env();
    if passed.len() == 0 {
        return Ok(None);
    }
    if let Ok(Some(tcp)) = passed.take_tcp_listener(0) {
        return Ok(Some(Inherited::Tcp(tcp)));
    }
    match passed.take_unix_listener(0) {
        Ok(Some(unix)) => {
            let addr = unix.local_addr().map_err(|e| inherited_failed(&e))?;
            // A path, or (Linux) a name in the abstract namespace, written `@name`.
            #[cfg(target_os = "linux")]
            let abstract_name = {
                use std::os::linux::net::SocketAddrExt as _;
                addr.as_abstract_name()
                    .map(|name| format!("@{}", String::from_utf8_lossy(name)))
            };
            #[cfg(not(target_os = "linux"))]
            let abstract_name = None;
            let path = match addr.as_pathname() {
                Some(path) => path.display().to_string(),
                None => abstract_name.unwrap_or_else(|| "(unnamed)".into()),
            };
            Ok(Some(Inherited::Unix(unix, format!("unix:{path}"))))
        }
        Ok(None) => Ok(None),
        Err(e) => Err(inherited_failed(&e)),
    }
}

fn inherited_failed(e: &std::io::Error) -> String {
    format!(
        "cannot serve the socket passed in LISTEN_FDS: {}",
        describe(e)
    )
}

/// A file mode in octal, as chmod takes it: `660`, `0600`.
fn octal_mode(text: &str) -> Result<u32, String> {
    u32::from_str_radix(text, 8)
        .ok()
        .filter(|&mode| mode <= 0o7777)
        .ok_or_else(|| format!("{text:?} is not an octal file mode such as 660"))
}

/// Writes `line` to stderr if it can. Not `eprintln!`: stderr may be gone (a supervisor that
/// read the banner and closed the pipe), and a panic would drop every connection instead of
/// closing them.
fn say(line: &str) {
    let _ = std::io::Write::write_all(&mut std::io::stderr(), line.as_bytes());
}

/// An I/O error as a short lowercase phrase, without the OS error number.
fn describe(e: &std::io::Error) -> String {
    use std::io::ErrorKind;
    match e.kind() {
        ErrorKind::AddrInUse => "address already in use".to_owned(),
        ErrorKind::AddrNotAvailable => "address not available".to_owned(),
        ErrorKind::PermissionDenied => "permission denied".to_owned(),
        ErrorKind::NotFound => "no such directory".to_owned(),
        ErrorKind::NotADirectory => "not a directory".to_owned(),
        _ => e.to_string(),
    }
}
