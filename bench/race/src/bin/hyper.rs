//! hyper 1.x, HTTP/1.1 connections (`hyper::server::conn::http1`) on a
//! current-thread tokio runtime, a task per connection, as hyper's own
//! examples and its TechEmpower entry do (`pipeline_flush` on, as there).
//!
//! With `RACE_TLS_CERT` and `RACE_TLS_KEY` set it serves HTTPS through
//! tokio-rustls (rustls's default provider, aws-lc-rs; ALPN `http/1.1`), the
//! TLS stack hyper's own examples and hyper-rustls use.
//!
//! hyper has no file server: `/index.html` is read from disk once at start
//! and answered from memory ([`ringwire_race::hyper_answer`], shared with
//! `race-hyper-h2`).

use std::convert::Infallible;

use bytes::Bytes;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use ringwire_race::{args, hyper_answer};
use tokio::net::TcpListener;

/// A rustls server for the race's certificate, offering `http/1.1`.
fn acceptor(cert: &[u8], key: &[u8]) -> tokio_rustls::TlsAcceptor {
    use rustls::pki_types::pem::PemObject;
    use rustls::pki_types::{CertificateDer, PrivateKeyDer};

    let chain = CertificateDer::pem_slice_iter(cert)
        .collect::<Result<Vec<_>, _>>()
        .expect("certificate PEM");
    let key = PrivateKeyDer::from_pem_slice(key).expect("key PEM");
    // Named rather than found: ringwire-tls in the same build enables
    // rustls's `ring` provider too.
    let provider = rustls::crypto::aws_lc_rs::default_provider();
    let mut config = rustls::ServerConfig::builder_with_provider(provider.into())
        .with_safe_default_protocol_versions()
        .expect("TLS versions")
        .with_no_client_auth()
        .with_single_cert(chain, key)
        .expect("certificate and key");
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    tokio_rustls::TlsAcceptor::from(std::sync::Arc::new(config))
}

fn main() -> std::io::Result<()> {
    let (addr, www) = args();
    let index = Bytes::from(std::fs::read(www.join("index.html"))?);
    let tls = ringwire_race::tls_files().map(|(cert, key)| acceptor(&cert, &key));
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?
        .block_on(async move {
            let listener = TcpListener::bind(addr).await?;
            eprintln!("race-hyper on http://{}/", listener.local_addr()?);
            let mut http = http1::Builder::new();
            http.pipeline_flush(true);
            loop {
                let (stream, _) = match listener.accept().await {
                    Ok(accepted) => accepted,
                    Err(e) => {
                        eprintln!("accept: {e}");
                        continue;
                    }
                };
                let _ = stream.set_nodelay(true);
                let index = index.clone();
                let service = service_fn(move |request| {
                    let response = hyper_answer(&request, &index);
                    async move { Ok::<_, Infallible>(response) }
                });
                let http = http.clone();
                let tls = tls.clone();
                tokio::spawn(async move {
                    match tls {
                        None => {
                            let _ = http.serve_connection(TokioIo::new(stream), service).await;
                        }
                        Some(tls) => {
                            if let Ok(stream) = tls.accept(stream).await {
                                let _ = http.serve_connection(TokioIo::new(stream), service).await;
                            }
                        }
                    }
                });
            }
        })
}
