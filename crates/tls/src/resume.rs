//! Session resumption for OpenSSL clients: the last session each server name
//! gave (a TLS 1.3 ticket, or a TLS 1.2 session), offered on the next
//! connection to that name, so a reconnect skips the certificate exchange and
//! its signature checks. rustls clients resume through rustls' own cache, on by
//! default for every connection made from one `ClientConfig`.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use openssl::error::ErrorStack;
use openssl::ex_data::Index;
use openssl::ssl::{
    ConnectConfiguration, Ssl, SslConnectorBuilder, SslSession, SslSessionCacheMode,
};

/// Server names remembered at most; past it the store starts afresh (a
/// client talks to few servers; this bounds one that talks to many).
const MAX_NAMES: usize = 256;

/// The sessions of one client context, by server name.
#[derive(Default)]
pub(crate) struct Sessions {
    by_name: Mutex<HashMap<String, SslSession>>,
}

/// Where a connection keeps the server name its sessions are filed under
/// (no SNI is sent to an IP address, so OpenSSL may not know it).
fn name_index() -> Result<Index<Ssl, String>, ErrorStack> {
    static INDEX: OnceLock<Index<Ssl, String>> = OnceLock::new();
    if let Some(index) = INDEX.get() {
        return Ok(*index);
    }
    let index = Ssl::new_ex_index::<String>()?;
    Ok(*INDEX.get_or_init(|| index))
}

impl Sessions {
    /// Makes `builder`'s context keep every session its connections receive.
    pub(crate) fn install(builder: &mut SslConnectorBuilder) -> Result<Arc<Sessions>, ErrorStack> {
        let sessions = Arc::new(Sessions::default());
        let index = name_index()?;
        let store = Arc::clone(&sessions);
        // OpenSSL's own client cache is never looked up: keep only ours.
        builder.set_session_cache_mode(
            SslSessionCacheMode::CLIENT | SslSessionCacheMode::NO_INTERNAL_STORE,
        );
        builder.set_new_session_callback(move |ssl, session| {
            if let Some(name) = ssl.ex_data(index) {
                let mut by_name = store.by_name.lock().unwrap_or_else(PoisonError::into_inner);
                if by_name.len() >= MAX_NAMES && !by_name.contains_key(name) {
                    by_name.clear();
                }
                by_name.insert(name.clone(), session);
            }
        });
        Ok(sessions)
    }

    /// A connection to `name` from `config`: offers the last session `name`
    /// gave, and files the sessions it receives under `name`.
    pub(crate) fn connect(
        &self,
        config: ConnectConfiguration,
        name: &str,
    ) -> Result<Ssl, ErrorStack> {
        let last = self
            .by_name
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(name)
            .cloned();
        let mut ssl = config.into_ssl(name)?;
        if let Some(session) = last {
            // SAFETY: `set_session` needs a session of the same `SslContext`.
            // This store belongs to one context: `install` put it on that
            // context's builder, and only that context's connections fill it
            // and read from it (`ClientContext::OpenSsl` keeps the two together).
            unsafe { ssl.set_session(&session)? };
        }
        ssl.set_ex_data(name_index()?, name.to_owned());
        Ok(ssl)
    }
}
