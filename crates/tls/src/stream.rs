//! TLS over a tokio stream, as an [`AsyncStream`] itself: the receive and
//! send transports run over it exactly as over a socket.

use std::io::{self, IoSlice};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, RwLock};

use ringwire_io::tokio::AsyncStream;

use crate::config::{ClientContext, ServerContext};
use crate::session::{Plain, Session};
use crate::{ClientConfig, ServerConfig, TlsError};

/// Makes server sessions: one per accepted connection. Clones share one
/// context, and [`reload`](Self::reload) replaces it for all of them.
#[derive(Clone)]
pub struct TlsAcceptor(Arc<RwLock<ServerContext>>);

/// Makes client sessions. Clones share one context, and so the sessions its
/// connections received: a reconnect to a server name resumes the last
/// session that name gave (OpenSSL through the connector's own store, rustls
/// through its session cache).
#[derive(Clone)]
pub struct TlsConnector {
    context: ClientContext,
    verify: bool,
}

impl std::fmt::Debug for TlsAcceptor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("TlsAcceptor")
    }
}

impl std::fmt::Debug for TlsConnector {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TlsConnector")
            .field("verify", &self.verify)
            .finish()
    }
}

impl TlsAcceptor {
    /// A server context from `config`.
    ///
    /// # Errors
    ///
    /// [`TlsError::Config`]: the certificate or key cannot be used.
    pub fn new(config: &ServerConfig) -> Result<Self, TlsError> {
        let context = ServerContext::new(config)?;
        Ok(TlsAcceptor(Arc::new(RwLock::new(context))))
    }

    /// Makes the handshakes that start from now on use `config` (a renewed
    /// certificate, say), in this acceptor and its clones; connections
    /// already accepted keep the context they began with. Sessions the old
    /// context issued tickets for begin anew.
    ///
    /// # Errors
    ///
    /// [`TlsError::Config`]: the certificate or key cannot be used; the
    /// context in use stays.
    pub fn reload(&self, config: &ServerConfig) -> Result<(), TlsError> {
        let context = ServerContext::new(config)?;
        *self.0.write().unwrap_or_else(PoisonError::into_inner) = context;
        Ok(())
    }

    pub(crate) fn session(&self) -> Result<Session, TlsError> {
        Session::server(&self.0.read().unwrap_or_else(PoisonError::into_inner))
    }

    /// Runs the server side of a handshake on `io`.
    ///
    /// # Errors
    ///
    /// The handshake failed: see [`TlsError`].
    pub async fn accept<S: AsyncStream + Send + Sync>(
        &self,
        io: S,
    ) -> Result<TlsStream<S>, TlsError> {
        TlsStream::handshake(self.session()?, io).await
    }
}

impl TlsConnector {
    /// A client context from `config`.
    ///
    /// # Errors
    ///
    /// [`TlsError::Config`]: a root certificate cannot be used.
    pub fn new(config: &ClientConfig) -> Result<Self, TlsError> {
        Ok(TlsConnector {
            context: ClientContext::new(config)?,
            verify: !config.is_insecure(),
        })
    }

    pub(crate) fn session(&self, server_name: &str) -> Result<Session, TlsError> {
        Session::client(&self.context, server_name, self.verify)
    }

    /// Runs the client side of a handshake with `server_name` (sent as
    /// SNI, and checked against the certificate) on `io`.
    ///
    /// # Errors
    ///
    /// The handshake failed: see [`TlsError`].
    pub async fn connect<S: AsyncStream + Send + Sync>(
        &self,
        server_name: &str,
        io: S,
    ) -> Result<TlsStream<S>, TlsError> {
        TlsStream::handshake(self.session(server_name)?, io).await
    }
}

/// A TLS session over `S`. Reads decrypt into the span they are given (the
/// receive ring's free span); writes encrypt into the session's ciphertext
/// ring and push it to the socket.
pub struct TlsStream<S> {
    io: S,
    state: Mutex<State>,
}

struct State {
    session: Session,
    /// The last read needed ciphertext the socket did not have: only the
    /// socket's readiness can help now.
    starved: bool,
}

impl<S> std::fmt::Debug for TlsStream<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("TlsStream")
    }
}

impl<S> TlsStream<S> {
    /// The protocol ALPN settled on, if any.
    pub fn alpn_protocol(&self) -> Option<Vec<u8>> {
        self.lock().session.alpn_protocol()
    }

    /// Whether the handshake resumed an earlier session with this server
    /// (see [`TlsConnector`]).
    pub fn is_resumed(&self) -> bool {
        self.lock().session.is_resumed()
    }

    /// The peer's certificate (DER): on a server, the client's under mutual TLS
    /// ([`ServerConfig::client_auth`]), `None` when it presented none; on a client, the
    /// server's.
    pub fn peer_certificate(&self) -> Option<Vec<u8>> {
        self.lock().session.peer_certificate()
    }

    /// The stream underneath.
    pub fn get_ref(&self) -> &S {
        &self.io
    }

    /// Whether a read can only progress once the socket has more bytes:
    /// the last read found no plaintext and no whole record. Until then
    /// (after the handshake, say, which may have received the first
    /// request with the client's last flight) a read must be tried before
    /// waiting on the socket's readiness.
    pub fn is_starved(&self) -> bool {
        self.lock().starved
    }

    /// Gives the ciphertext rings' touched pages back to the OS, and frees
    /// the TLS library's record buffers, when nothing waits in them: for a
    /// connection going idle (the rings stay mapped; the next record faults
    /// fresh pages in). Whether all of it was released.
    ///
    /// # Errors
    ///
    /// The OS refused (`madvise`).
    pub fn release_idle_memory(&self) -> Result<bool, TlsError> {
        let mut state = self.lock();
        let freed = state.session.release_buffers();
        Ok(state.session.wire().release_pages()? && freed)
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // Nothing panics while the lock is held; the state stays usable.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl<S: AsyncStream + Send + Sync> TlsStream<S> {
    async fn handshake(mut session: Session, io: S) -> Result<TlsStream<S>, TlsError> {
        loop {
            let done = session.handshake();
            // What the handshake wrote (its flight, or the alert that
            // explains a failure) goes out either way.
            send_all(&io, session.wire()).await?;
            if done? {
                break;
            }
            loop {
                io.readable().await?;
                match session.wire().receive(|buf| io.try_read(buf)) {
                    Ok(_) => break,
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                    Err(e) => return Err(e.into()),
                }
            }
        }
        Ok(TlsStream {
            io,
            state: Mutex::new(State {
                session,
                starved: false,
            }),
        })
    }

    /// Pushes pending ciphertext; `WouldBlock` when the socket is full.
    fn push(&self, state: &mut State) -> io::Result<()> {
        state.session.wire().send(|bytes| self.io.try_write(bytes))
    }
}

/// Sends everything the output ring holds, waiting for the socket.
async fn send_all<S: AsyncStream>(io: &S, wire: &mut crate::wire::Wire) -> io::Result<()> {
    loop {
        match wire.send(|bytes| io.try_write(bytes)) {
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => io.writable().await?,
            done => return done,
        }
    }
}

impl<S: AsyncStream + Send + Sync> AsyncStream for TlsStream<S> {
    async fn readable(&self) -> io::Result<()> {
        if self.lock().starved {
            self.io.readable().await?;
        }
        Ok(())
    }

    fn try_read(&self, buf: &mut [u8]) -> io::Result<usize> {
        let mut state = self.lock();
        loop {
            let plain = state.session.read(buf);
            // Anything the read wrote (a key update's answer) goes out.
            match self.push(&mut state) {
                Err(e) if e.kind() != io::ErrorKind::WouldBlock && !crate::wire::peer_gone(&e) => {
                    return Err(e)
                }
                _ => {}
            }
            match plain? {
                Plain::Read(n) => return Ok(n),
                Plain::Closed => return Ok(0),
                Plain::WantCipher => {}
            }
            match state.session.wire().receive(|span| self.io.try_read(span)) {
                Ok(_) => state.starved = false,
                Err(e) => {
                    state.starved = e.kind() == io::ErrorKind::WouldBlock;
                    return Err(e);
                }
            }
        }
    }

    /// Ready once the ciphertext held back has gone to the socket. Callers
    /// wait here after `try_write` found no room or `try_flush` found the
    /// socket full; returning early while ciphertext waits would have them
    /// spin without ever yielding to the peer that must read it.
    async fn writable(&self) -> io::Result<()> {
        loop {
            match self.push(&mut self.lock()) {
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                done => return done,
            }
            self.io.writable().await?;
        }
    }

    fn try_write(&self, buf: &[u8]) -> io::Result<usize> {
        self.try_write_vectored(&[IoSlice::new(buf)])
    }

    fn try_write_vectored(&self, bufs: &[IoSlice<'_>]) -> io::Result<usize> {
        let mut state = self.lock();
        match self.push(&mut state) {
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                if state.session.wire().room() == 0 {
                    return Err(e);
                }
            }
            done => done?,
        }
        let written = state.session.write_vectored(bufs)?;
        match self.push(&mut state) {
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
            done => done?,
        }
        Ok(written)
    }

    fn try_flush(&self) -> io::Result<()> {
        let mut state = self.lock();
        self.push(&mut state)
    }

    fn shutdown_write(&self) -> io::Result<()> {
        let mut state = self.lock();
        state.session.close()?;
        self.push(&mut state)?;
        self.io.shutdown_write()
    }
}
