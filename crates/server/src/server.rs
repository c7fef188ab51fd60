//! Listening, accepting, threads, and shutting down.

use std::future::{poll_fn, Future};
use std::io;
use std::net::{Ipv4Addr, SocketAddr};
use std::path::Path;
use std::sync::Arc;
use std::task::Poll;
use std::time::Duration;

use crate::listen::{Listener, SocketFile};
use crate::timeout::Sweeper;
use crate::{conn, listen, Handler, ServerConfig, Socket};

/// How [`Server::run`] uses threads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Threading {
    /// One multi-threaded tokio runtime with this many workers: one
    /// listener, and connections move between workers (work stealing).
    Shared(usize),
    /// This many threads, each with a single-threaded runtime, its own
    /// listening socket on the shared port (`SO_REUSEPORT`: the kernel
    /// spreads connections), its own timeout sweeper and ring pools. A
    /// connection never leaves its thread; nothing is shared between
    /// threads on the request path.
    PerCore(usize),
}

impl Threading {
    fn threads(self) -> usize {
        match self {
            Threading::Shared(n) | Threading::PerCore(n) => n.max(1),
        }
    }

    /// Listening sockets (or handles on one) wanted: one per runtime.
    fn listeners(self) -> usize {
        match self {
            Threading::Shared(_) => 1,
            Threading::PerCore(n) => n.max(1),
        }
    }
}

impl Default for Threading {
    /// [`PerCore`](Threading::PerCore), a thread per available core:
    /// measured faster (see `docs/benchmarks.md`).
    fn default() -> Self {
        let cores = std::thread::available_parallelism().map_or(1, usize::from);
        Threading::PerCore(cores)
    }
}

/// Bound listeners, ready to serve.
///
/// ```no_run
/// use ringwire_server::{Response, Request, Handler, Server, ServerConfig};
///
/// struct Hello;
/// impl Handler for Hello {
///     async fn call(&self, _request: &Request<'_>) -> Response {
///         Response::text("hello\n")
///     }
/// }
///
/// # async fn run() -> std::io::Result<()> {
/// let server = Server::bind(ServerConfig::default())?;
/// server.run_until(Hello, tokio::time::sleep(std::time::Duration::from_secs(60))).await
/// # }
/// ```
#[derive(Debug)]
pub struct Server {
    listeners: Vec<Listener>,
    local_addr: SocketAddr,
    /// A Unix socket's file, removed once every thread is done with it.
    socket_file: Option<Arc<SocketFile>>,
    config: Arc<ServerConfig>,
    tls: Option<ringwire_tls::TlsAcceptor>,
}

impl Server {
    /// Binds `config.addr`: one listener, or with
    /// [`Threading::PerCore`] one per thread. Works outside a runtime: the
    /// listeners join a runtime when serving starts.
    ///
    /// # Errors
    ///
    /// The address cannot be bound (in use, not local, no permission).
    pub fn bind(config: ServerConfig) -> io::Result<Server> {
        let listeners = listen::bind(config.addr, config.threading.listeners())?;
        Ok(Server {
            local_addr: listeners[0].local_addr()?,
            listeners: listeners.into_iter().map(Listener::Tcp).collect(),
            socket_file: None,
            config: Arc::new(config),
            tls: None,
        })
    }

    /// Binds a Unix domain socket at `path` in place of `config.addr` (for a
    /// server behind a local proxy, nginx's `proxy_pass http://unix:PATH:`, or
    /// one only local processes may reach: the file's permissions decide who; they
    /// follow the umask, and [`std::fs::set_permissions`] on `path` changes them). A
    /// stale socket file left at `path` by a process that ended is replaced;
    /// the file is removed when the server ends. Requests on it have no
    /// [`peer`](crate::Request::peer) (unless a PROXY protocol header names one).
    /// With [`Threading::PerCore`] every thread accepts from the one socket.
    ///
    /// # Errors
    ///
    /// A live socket or another file is at `path` (`AddrInUse`), or the socket
    /// cannot be created there (no such directory, no permission, a path longer
    /// than the 107 bytes a socket address holds).
    pub fn bind_unix(path: impl AsRef<Path>, config: ServerConfig) -> io::Result<Server> {
        let (listeners, file) = listen::bind_unix(path.as_ref(), config.threading.listeners())?;
        Ok(Server::on_unix(listeners, Some(file), config))
    }

    /// A server on a Unix socket named `name` in Linux's abstract namespace (`@name`
    /// in `ss -x`; nginx: `server unix:@name;`; curl: `--abstract-unix-socket name`):
    /// no file to create, clean up or give permissions to, so anyone in the network
    /// namespace may connect. Gone when the server ends.
    ///
    /// # Errors
    ///
    /// The name is taken (`AddrInUse`) or longer than 107 bytes.
    #[cfg(target_os = "linux")]
    pub fn bind_unix_abstract(name: impl AsRef<[u8]>, config: ServerConfig) -> io::Result<Server> {
        let listeners = listen::bind_abstract(name.as_ref(), config.threading.listeners())?;
        Ok(Server::on_unix(listeners, None, config))
    }

    /// Serves on `listener`, bound by someone else: a socket systemd passed
    /// (socket activation: it outlives the server, so a restart loses no
    /// connection), one a supervisor keeps across restarts, one bound with
    /// options of the caller's. With [`Threading::PerCore`] every thread
    /// accepts from it.
    ///
    /// # Errors
    ///
    /// The listener cannot be made nonblocking, or its address read.
    pub fn from_tcp(listener: std::net::TcpListener, config: ServerConfig) -> io::Result<Server> {
        let local_addr = listener.local_addr()?;
        let listeners = listen::shared(Listener::Tcp(listener), config.threading.listeners())?;
        Ok(Server {
            listeners,
            local_addr,
            socket_file: None,
            config: Arc::new(config),
            tls: None,
        })
    }

    /// As [`from_tcp`](Self::from_tcp), on a Unix socket someone else bound; its
    /// file is theirs, and stays when the server ends.
    ///
    /// # Errors
    ///
    /// The listener cannot be made nonblocking.
    pub fn from_unix(
        listener: std::os::unix::net::UnixListener,
        config: ServerConfig,
    ) -> io::Result<Server> {
        let listeners = listen::shared(Listener::Unix(listener), config.threading.listeners())?;
        Ok(Server::on_unix(listeners, None, config))
    }

    /// A server on Unix socket `listeners`, which have no address of the `SocketAddr`
    /// kind, and own `file` if given.
    fn on_unix(listeners: Vec<Listener>, file: Option<SocketFile>, config: ServerConfig) -> Server {
        Server {
            listeners,
            local_addr: SocketAddr::from((Ipv4Addr::UNSPECIFIED, 0)),
            socket_file: file.map(Arc::new),
            config: Arc::new(config),
            tls: None,
        }
    }

    /// Serves HTTPS: every connection starts with a TLS handshake by
    /// `acceptor` (whose ALPN list should offer `http/1.1`). Upgrades
    /// (WebSocket) run over the same session.
    #[must_use]
    pub fn with_tls(mut self, acceptor: ringwire_tls::TlsAcceptor) -> Server {
        self.tls = Some(acceptor);
        self
    }

    /// The address bound, with the real port when port 0 was asked for (on a
    /// Unix socket, none: `0.0.0.0:0`; see [`unix_path`](Self::unix_path)).
    pub fn local_addr(&self) -> SocketAddr {
        self.local_addr
    }

    /// The Unix socket's path, for a server made by [`bind_unix`](Self::bind_unix)
    /// (not [`from_unix`](Self::from_unix): that socket's file is not the server's).
    pub fn unix_path(&self) -> Option<&Path> {
        self.socket_file.as_deref().map(SocketFile::path)
    }

    /// The settings in force.
    pub fn config(&self) -> &ServerConfig {
        &self.config
    }

    /// Serves `handler` until the process ends.
    ///
    /// # Errors
    ///
    /// The listener cannot join the runtime.
    pub fn serve<H: Handler>(self, handler: H) -> impl Future<Output = io::Result<()>> + Send {
        self.run_until(handler, std::future::pending())
    }

    /// Serves `handler` on threads of its own, as
    /// [`ServerConfig::threading`] says, until `shutdown` resolves; then
    /// shuts down as [`run_until`](Self::run_until) does. Blocks.
    ///
    /// # Errors
    ///
    /// A runtime or thread cannot be started.
    pub fn run<H: Handler>(
        self,
        handler: H,
        shutdown: impl Future<Output = ()> + Send + 'static,
    ) -> io::Result<()> {
        let threading = self.config.threading;
        if let Threading::Shared(_) = threading {
            return tokio::runtime::Builder::new_multi_thread()
                .worker_threads(threading.threads())
                .enable_all()
                .build()?
                .block_on(self.run_until(handler, shutdown));
        }
        // Thread per core: the shutdown future runs on this thread and
        // tells every server through a watch channel.
        let (stop, stopped) = tokio::sync::watch::channel(false);
        let handler = Arc::new(handler);
        let config = self.config;
        let threads = self
            .listeners
            .into_iter()
            .enumerate()
            .map(|(i, listener)| {
                let server = Server {
                    local_addr: self.local_addr,
                    listeners: vec![listener],
                    socket_file: self.socket_file.clone(),
                    config: Arc::clone(&config),
                    tls: self.tls.clone(),
                };
                let handler = Arc::clone(&handler);
                let mut stopped = stopped.clone();
                std::thread::Builder::new()
                    .name(format!("ringwire-{i}"))
                    .spawn(move || {
                        tokio::runtime::Builder::new_current_thread()
                            .enable_all()
                            .build()?
                            .block_on(server.run_until(handler, async move {
                                let _ = stopped.wait_for(|&s| s).await;
                            }))
                    })
            })
            .collect::<io::Result<Vec<_>>>()?;
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?
            .block_on(shutdown);
        let _ = stop.send(true);
        let mut result = Ok(());
        for thread in threads {
            match thread.join() {
                Ok(Ok(())) => {}
                Ok(Err(e)) => result = Err(e),
                Err(_) => result = Err(io::Error::other("a server thread panicked")),
            }
        }
        result
    }

    /// Serves `handler` on the current runtime until `shutdown` resolves,
    /// then stops accepting, asks idle keep-alive connections to close,
    /// lets requests in flight finish (their responses say `connection:
    /// close`) and waits up to [`ServerConfig::shutdown_grace`] before
    /// aborting the rest.
    ///
    /// Must run inside a tokio runtime. Every listener is served from it.
    ///
    /// # Errors
    ///
    /// A listener cannot join the runtime.
    pub async fn run_until<H: Handler>(
        self,
        handler: H,
        shutdown: impl Future<Output = ()> + Send,
    ) -> io::Result<()> {
        let listeners = self
            .listeners
            .into_iter()
            .map(Listener::into_tokio)
            .collect::<io::Result<Vec<_>>>()?;
        // One sweeper for all connections; it stops when dropped on return.
        // It also passes shutdown on to every connection, through the timer
        // each already waits on.
        let sweeper = Sweeper::start(self.config.timeouts)?;
        // The handler, the settings, the ring pools (idle connections hold
        // no ring) and the count of live connections (a `JoinSet` would cost
        // each connection an entry).
        let shared = Arc::new(conn::Shared::new(handler, Arc::clone(&self.config)));
        let mut shutdown = std::pin::pin!(shutdown);
        let accept = || {
            poll_fn(|cx| {
                for listener in &listeners {
                    if let Poll::Ready(accepted) = listener.poll_accept(cx) {
                        return Poll::Ready(accepted);
                    }
                }
                Poll::Pending
            })
        };
        loop {
            tokio::select! {
                () = &mut shutdown => break,
                accepted = accept() => match accepted {
                    Ok(socket) => {
                        let (timer, live) = (sweeper.register(), conn::Live::new(&shared));
                        if self.config.proxy_protocol {
                            // Spawns the connection's own task once its header is read.
                            let tls = self.tls.clone();
                            drop(tokio::spawn(conn::serve_proxied(socket, tls, timer, live)));
                            continue;
                        }
                        let slot = timer.task_slot();
                        let task = match &self.tls {
                            Some(acceptor) => {
                                let acceptor = acceptor.clone();
                                tokio::spawn(conn::serve_tls(socket, acceptor, timer, live, ()))
                            }
                            None => tokio::spawn(conn::serve(Socket::Plain(socket), timer, live, ())),
                        };
                        slot.fill(task.abort_handle());
                    }
                    Err(e) => {
                        // Out of descriptors and the like: back off, go on.
                        log::warn!("accept: {e}");
                        tokio::time::sleep(Duration::from_millis(50)).await;
                    }
                },
            }
        }
        drop(listeners);
        sweeper.stop();
        if tokio::time::timeout(self.config.shutdown_grace, shared.all_closed())
            .await
            .is_err()
        {
            log::info!(
                "shutdown grace over: aborting {} connections",
                shared.live()
            );
            sweeper.abort();
            shared.all_closed().await;
        }
        Ok(())
    }
}
