//! Listening, accepting and shutting down.

use std::future::Future;
use std::io;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use crate::timeout::Sweeper;
use crate::{conn, Handler, ServerConfig};

/// A bound listener, ready to serve.
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
    listener: std::net::TcpListener,
    local_addr: SocketAddr,
    config: Arc<ServerConfig>,
}

impl Server {
    /// Binds `config.addr`. Works outside a runtime: the listener joins the
    /// runtime when serving starts.
    ///
    /// # Errors
    ///
    /// The address cannot be bound (in use, not local, no permission).
    pub fn bind(config: ServerConfig) -> io::Result<Server> {
        let listener = std::net::TcpListener::bind(config.addr)?;
        listener.set_nonblocking(true)?;
        Ok(Server {
            local_addr: listener.local_addr()?,
            listener,
            config: Arc::new(config),
        })
    }

    /// The address bound, with the real port when port 0 was asked for.
    pub fn local_addr(&self) -> SocketAddr {
        self.local_addr
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

    /// Serves `handler` until `shutdown` resolves, then stops accepting,
    /// asks idle keep-alive connections to close, lets requests in flight
    /// finish (their responses say `connection: close`) and waits up to
    /// [`ServerConfig::shutdown_grace`] before aborting the rest.
    ///
    /// Must run inside a tokio runtime.
    ///
    /// # Errors
    ///
    /// The listener cannot join the runtime.
    pub async fn run_until<H: Handler>(
        self,
        handler: H,
        shutdown: impl Future<Output = ()> + Send,
    ) -> io::Result<()> {
        let listener = tokio::net::TcpListener::from_std(self.listener)?;
        // One sweeper for all connections; it stops when dropped on return.
        // It also passes shutdown on to every connection, through the timer
        // each already waits on.
        let sweeper = Sweeper::start(self.config.timeouts);
        // The handler, the settings, the ring pools (idle connections hold
        // no ring) and the count of live connections (a `JoinSet` would cost
        // each connection an entry).
        let shared = Arc::new(conn::Shared::new(handler, Arc::clone(&self.config)));
        let mut shutdown = std::pin::pin!(shutdown);
        loop {
            tokio::select! {
                () = &mut shutdown => break,
                accepted = listener.accept() => match accepted {
                    Ok((stream, _)) => {
                        tokio::spawn(conn::serve(
                            stream,
                            sweeper.register(),
                            conn::Live::new(&shared),
                        ));
                    }
                    Err(e) => {
                        // Out of descriptors and the like: back off, go on.
                        log::warn!("accept: {e}");
                        tokio::time::sleep(Duration::from_millis(50)).await;
                    }
                },
            }
        }
        drop(listener);
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
