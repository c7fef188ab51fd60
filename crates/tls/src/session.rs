//! A TLS session as a sans-IO stage: ciphertext rings on one side
//! ([`Wire`]), plaintext spans on the other. The driver moves ciphertext
//! between the rings and the socket; nothing here does I/O.

use std::io::{self, IoSlice, Read as _, Write as _};

use openssl::ssl::{ErrorCode, ShutdownState, Ssl, SslStream, SslVerifyMode};
use openssl::x509::X509VerifyResult;
use rustls::pki_types::ServerName;

use crate::config::{ClientContext, ServerContext};
use crate::wire::Wire;
use crate::TlsError;

/// What a read of plaintext came to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Plain {
    /// This many bytes were decrypted into the span.
    Read(usize),
    /// More ciphertext is needed first.
    WantCipher,
    /// The peer sent `close_notify`: end of stream.
    Closed,
}

/// One session of either library.
pub(crate) enum Session {
    OpenSsl(SslStream<Wire>),
    Rustls {
        // Boxed: rustls keeps its buffers inline, OpenSSL behind a pointer.
        conn: Box<rustls::Connection>,
        wire: Wire,
    },
}

impl Session {
    pub(crate) fn server(context: &ServerContext) -> Result<Session, TlsError> {
        let wire = Wire::new()?;
        Ok(match context {
            ServerContext::OpenSsl(acceptor) => {
                let mut ssl = Ssl::new(acceptor.context()).map_err(config)?;
                ssl.set_accept_state();
                Session::OpenSsl(SslStream::new(ssl, wire).map_err(config)?)
            }
            ServerContext::Rustls(config) => Session::Rustls {
                conn: Box::new(
                    rustls::ServerConnection::new(config.clone())
                        .map_err(|e| TlsError::Config(e.to_string()))?
                        .into(),
                ),
                wire,
            },
        })
    }

    pub(crate) fn client(
        context: &ClientContext,
        server_name: &str,
        verify: bool,
    ) -> Result<Session, TlsError> {
        let wire = Wire::new()?;
        Ok(match context {
            ClientContext::OpenSsl(connector, sessions) => {
                // SNI and host name verification (an IP address is checked
                // as one, and sent without SNI); the last session from
                // `server_name` offered for resumption.
                let configured = connector.configure().map_err(config)?;
                let mut ssl = sessions
                    .connect(configured.verify_hostname(verify), server_name)
                    .map_err(config)?;
                ssl.set_connect_state();
                Session::OpenSsl(SslStream::new(ssl, wire).map_err(config)?)
            }
            ClientContext::Rustls(config) => {
                let name = ServerName::try_from(server_name.to_owned())
                    .map_err(|e| TlsError::Config(format!("server name {server_name:?}: {e}")))?;
                Session::Rustls {
                    conn: Box::new(
                        rustls::ClientConnection::new(config.clone(), name)
                            .map_err(|e| TlsError::Config(e.to_string()))?
                            .into(),
                    ),
                    wire,
                }
            }
        })
    }

    /// The ciphertext rings.
    pub(crate) fn wire(&mut self) -> &mut Wire {
        match self {
            Session::OpenSsl(stream) => stream.get_mut(),
            Session::Rustls { wire, .. } => wire,
        }
    }

    /// Frees the TLS library's record buffers if they hold nothing (an
    /// idle connection); whether they are free. rustls keeps none worth it.
    pub(crate) fn release_buffers(&mut self) -> bool {
        match self {
            Session::OpenSsl(stream) => crate::ffi::free_buffers(stream.ssl()),
            Session::Rustls { .. } => true,
        }
    }

    /// Advances the handshake: `true` once it is done.
    pub(crate) fn handshake(&mut self) -> Result<bool, TlsError> {
        match self {
            Session::OpenSsl(stream) => match stream.do_handshake() {
                Ok(()) => Ok(true),
                Err(e) if wants_io(&e) && !stream.get_ref().eof => Ok(false),
                Err(e) => Err(handshake_error(&e, stream.ssl())),
            },
            Session::Rustls { conn, wire } => loop {
                flush_rustls(conn, wire)?;
                if !conn.is_handshaking() {
                    return Ok(true);
                }
                if wire.input.is_empty() {
                    return if wire.eof {
                        Err(TlsError::Handshake("the peer closed the connection".into()))
                    } else {
                        Ok(false)
                    };
                }
                conn.read_tls(wire).map_err(TlsError::Io)?;
                if let Err(e) = conn.process_new_packets() {
                    // The alert that says why goes out before the error.
                    let _ = flush_rustls(conn, wire);
                    return Err(rustls_error(e, conn));
                }
            },
        }
    }

    /// Decrypts into `buf`.
    pub(crate) fn read(&mut self, buf: &mut [u8]) -> Result<Plain, TlsError> {
        match self {
            // No ciphertext waiting and no plaintext held back: `SSL_read_ex`
            // could only ask for more, and a read that fails costs OpenSSL 3
            // buffer allocations and error-queue work (it was three of the
            // four reads per request of a keep-alive connection).
            Session::OpenSsl(stream)
                if stream.get_ref().input.is_empty()
                    && !stream.get_ref().eof
                    && stream.ssl().pending() == 0 =>
            {
                Ok(Plain::WantCipher)
            }
            // `ssl_read` is `SSL_read_ex` into `buf`: the record is
            // decrypted by libssl and lands in the caller's span.
            Session::OpenSsl(stream) => match stream.ssl_read(buf) {
                Ok(n) => Ok(Plain::Read(n)),
                Err(e) if e.code() == ErrorCode::ZERO_RETURN => Ok(Plain::Closed),
                Err(e) if wants_io(&e) && !stream.get_ref().eof => Ok(Plain::WantCipher),
                Err(_) if stream.get_ref().eof => Err(TlsError::Truncated),
                Err(e) => Err(session_error(&e, stream.ssl())),
            },
            Session::Rustls { conn, wire } => loop {
                match conn.reader().read(buf) {
                    Ok(0) if !buf.is_empty() => return Ok(Plain::Closed),
                    Ok(n) => return Ok(Plain::Read(n)),
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                    Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => {
                        return Err(TlsError::Truncated)
                    }
                    Err(e) => return Err(TlsError::Protocol(e.to_string())),
                }
                if wire.input.is_empty() {
                    return if wire.eof {
                        Err(TlsError::Truncated)
                    } else {
                        Ok(Plain::WantCipher)
                    };
                }
                conn.read_tls(wire).map_err(TlsError::Io)?;
                let state = conn.process_new_packets();
                // Key updates and alerts answer at once.
                flush_rustls(conn, wire)?;
                state.map_err(|e| rustls_session_error(e, conn))?;
            },
        }
    }

    /// Encrypts as much of `buf` into the output ring as it has room for
    /// ([`Wire::room`]); how much that was.
    pub(crate) fn write(&mut self, buf: &[u8]) -> Result<usize, TlsError> {
        let room = self.wire().room();
        let buf = &buf[..buf.len().min(room)];
        match self {
            Session::OpenSsl(stream) => {
                // The output ring takes whatever is written, so
                // `SSL_write` never waits here.
                let mut done = 0;
                while done < buf.len() {
                    done += stream
                        .ssl_write(&buf[done..])
                        .map_err(|e| TlsError::Protocol(e.to_string()))?;
                }
                Ok(done)
            }
            Session::Rustls { conn, wire } => {
                let mut done = 0;
                while done < buf.len() {
                    done += conn.writer().write(&buf[done..]).map_err(TlsError::Io)?;
                    flush_rustls(conn, wire)?;
                }
                Ok(done)
            }
        }
    }

    /// Encrypts the slices one after the other (one record run each, no
    /// concatenation) until the output ring has no room left; how many
    /// bytes that took.
    pub(crate) fn write_vectored(&mut self, bufs: &[IoSlice<'_>]) -> Result<usize, TlsError> {
        let mut written = 0;
        for buf in bufs {
            let n = self.write(buf)?;
            written += n;
            if n < buf.len() {
                break;
            }
        }
        Ok(written)
    }

    /// Queues `close_notify`.
    pub(crate) fn close(&mut self) -> Result<(), TlsError> {
        match self {
            Session::OpenSsl(stream) => match stream.shutdown() {
                Ok(_) => Ok(()),
                Err(e) if wants_io(&e) => Ok(()),
                Err(e) => Err(TlsError::Protocol(e.to_string())),
            },
            Session::Rustls { conn, wire } => {
                conn.send_close_notify();
                flush_rustls(conn, wire)
            }
        }
    }

    /// Whether the handshake resumed an earlier session.
    pub(crate) fn is_resumed(&self) -> bool {
        match self {
            Session::OpenSsl(stream) => stream.ssl().session_reused(),
            Session::Rustls { conn, .. } => {
                conn.handshake_kind() == Some(rustls::HandshakeKind::Resumed)
            }
        }
    }

    /// The certificate the peer presented (DER), once the handshake is done: a server's
    /// client under mutual TLS, or a client's server.
    pub(crate) fn peer_certificate(&self) -> Option<Vec<u8>> {
        match self {
            Session::OpenSsl(stream) => stream.ssl().peer_certificate()?.to_der().ok(),
            Session::Rustls { conn, .. } => Some(conn.peer_certificates()?.first()?.to_vec()),
        }
    }

    /// The protocol ALPN settled on.
    pub(crate) fn alpn_protocol(&self) -> Option<Vec<u8>> {
        match self {
            Session::OpenSsl(stream) => stream.ssl().selected_alpn_protocol().map(<[u8]>::to_vec),
            Session::Rustls { conn, .. } => conn.alpn_protocol().map(<[u8]>::to_vec),
        }
    }
}

impl Drop for Session {
    /// OpenSSL marks the session of a connection freed without a
    /// `close_notify` as not resumable. A client's connections usually end
    /// that way (a pool drops them; the server closes idle ones), and an
    /// abrupt end says nothing against the session, so a client whose
    /// handshake finished is marked as shut down first.
    fn drop(&mut self) {
        if let Session::OpenSsl(stream) = self {
            if !stream.ssl().is_server() && stream.ssl().is_init_finished() {
                stream.set_shutdown(ShutdownState::SENT);
            }
        }
    }
}

/// Moves every record rustls has queued into the output ring.
fn flush_rustls(conn: &mut rustls::Connection, wire: &mut Wire) -> Result<(), TlsError> {
    while conn.wants_write() {
        conn.write_tls(wire).map_err(TlsError::Io)?;
    }
    Ok(())
}

fn config(e: openssl::error::ErrorStack) -> TlsError {
    TlsError::Config(e.to_string())
}

/// OpenSSL stopped for more ciphertext, or to have ciphertext sent (the
/// output ring always takes it, so that only happens with the input).
fn wants_io(e: &openssl::ssl::Error) -> bool {
    matches!(e.code(), ErrorCode::WANT_READ | ErrorCode::WANT_WRITE)
}

/// A failed OpenSSL handshake, by cause.
fn handshake_error(e: &openssl::ssl::Error, ssl: &openssl::ssl::SslRef) -> TlsError {
    let verify = ssl.verify_result();
    // Without verification (an insecure client) OpenSSL still records what
    // it found, but the handshake failed for another reason.
    if verify != X509VerifyResult::OK && ssl.verify_mode().contains(SslVerifyMode::PEER) {
        return match verify.as_raw() {
            // X509_V_ERR_CERT_NOT_YET_VALID
            9 => TlsError::NotYetValid,
            // X509_V_ERR_CERT_HAS_EXPIRED
            10 => TlsError::Expired,
            // X509_V_ERR_HOSTNAME_MISMATCH, X509_V_ERR_IP_ADDRESS_MISMATCH
            62 | 64 => TlsError::HostnameMismatch,
            // Unknown issuer, self-signed leaf or root, unverifiable leaf.
            2 | 18 | 19 | 20 | 21 => TlsError::UnknownCa,
            _ => TlsError::BadCertificate(verify.error_string().to_owned()),
        };
    }
    let text = e.to_string();
    if wants_client_certificate(&text, ssl) {
        return TlsError::ClientCertificateRequired;
    }
    let has = |what: &str| text.contains(what);
    // What OpenSSL makes of bytes that are no TLS record: its record
    // header check fails (a client reading an HTTP answer), or it sees an
    // HTTP method (a server).
    if has("wrong version number") || has("http request") {
        TlsError::NotTls
    } else if has("unsupported protocol")
        || has("protocol version")
        || has("no protocols available")
    {
        TlsError::ProtocolVersion
    } else if has("no application protocol") {
        TlsError::NoAlpnOverlap
    } else if has("certificate expired") {
        TlsError::Expired
    } else if has("unknown ca") {
        TlsError::UnknownCa
    } else if has("bad certificate") || has("certificate unknown") {
        TlsError::BadCertificate(text)
    } else {
        TlsError::Handshake(text)
    }
}

/// An OpenSSL session that failed after its handshake, by cause.
fn session_error(e: &openssl::ssl::Error, ssl: &openssl::ssl::SslRef) -> TlsError {
    let text = e.to_string();
    if wants_client_certificate(&text, ssl) {
        TlsError::ClientCertificateRequired
    } else {
        TlsError::Protocol(text)
    }
}

/// Whether OpenSSL's `text` is a client hearing that the server wants its
/// certificate. TLS 1.3 has an alert for that; TLS 1.2 servers say
/// `bad_certificate`, or `handshake_failure` (RFC 5246 section 7.4.6),
/// which before the server's hello is accepted means something else (no
/// common cipher), and after it, in practice, only that.
fn wants_client_certificate(text: &str, ssl: &openssl::ssl::SslRef) -> bool {
    let has = |what: &str| text.contains(what);
    !ssl.is_server()
        && (has("alert certificate required")
            || has("alert bad certificate")
            || (has("alert handshake failure") && ssl.current_cipher().is_some()))
}

/// [`wants_client_certificate`] for rustls.
fn rustls_wants_client_certificate(e: &rustls::Error, conn: &rustls::Connection) -> bool {
    use rustls::AlertDescription as Alert;
    let rustls::Error::AlertReceived(alert) = e else {
        return false;
    };
    matches!(conn, rustls::Connection::Client(_))
        && match alert {
            Alert::CertificateRequired | Alert::BadCertificate => true,
            Alert::HandshakeFailure => conn.negotiated_cipher_suite().is_some(),
            _ => false,
        }
}

/// A rustls session that failed after its handshake, by cause.
fn rustls_session_error(e: rustls::Error, conn: &rustls::Connection) -> TlsError {
    if rustls_wants_client_certificate(&e, conn) {
        TlsError::ClientCertificateRequired
    } else {
        TlsError::Protocol(e.to_string())
    }
}

/// A failed rustls handshake, by cause.
fn rustls_error(e: rustls::Error, conn: &rustls::Connection) -> TlsError {
    use rustls::{AlertDescription as Alert, CertificateError as Cert, Error, InvalidMessage};
    if rustls_wants_client_certificate(&e, conn) {
        return TlsError::ClientCertificateRequired;
    }
    match e {
        // The first byte of a record is no TLS content type: not TLS at all.
        Error::InvalidMessage(InvalidMessage::InvalidContentType) => TlsError::NotTls,
        Error::InvalidCertificate(Cert::Expired | Cert::ExpiredContext { .. }) => TlsError::Expired,
        Error::InvalidCertificate(Cert::NotValidYet | Cert::NotValidYetContext { .. }) => {
            TlsError::NotYetValid
        }
        Error::InvalidCertificate(Cert::NotValidForName | Cert::NotValidForNameContext { .. }) => {
            TlsError::HostnameMismatch
        }
        Error::InvalidCertificate(Cert::UnknownIssuer) => TlsError::UnknownCa,
        // rustls's own words ("invalid peer certificate: ..."), not its enum's debug form.
        other @ Error::InvalidCertificate(_) => TlsError::BadCertificate(other.to_string()),
        Error::AlertReceived(Alert::ProtocolVersion) => TlsError::ProtocolVersion,
        Error::AlertReceived(Alert::NoApplicationProtocol) | Error::NoApplicationProtocol => {
            TlsError::NoAlpnOverlap
        }
        Error::AlertReceived(Alert::CertificateExpired) => TlsError::Expired,
        Error::AlertReceived(Alert::UnknownCA) => TlsError::UnknownCa,
        Error::AlertReceived(Alert::BadCertificate) => {
            TlsError::BadCertificate("the peer refused it".into())
        }
        Error::PeerIncompatible(why) => {
            let why = format!("{why:?}");
            // `Tls12NotOfferedOrEnabled`, `SupportedVersionsExtensionRequired`, ...
            if why.contains("Version") || why.contains("Tls1") {
                TlsError::ProtocolVersion
            } else {
                TlsError::Handshake(why)
            }
        }
        other => TlsError::Handshake(other.to_string()),
    }
}
