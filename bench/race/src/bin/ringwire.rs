//! ringwire-server on one thread (`Threading::PerCore(1)`: a current-thread
//! runtime and one listener): `/plaintext` from a static slice, everything
//! else from `StaticFiles` (open-file cache; small files from memory, larger
//! ones by `sendfile`). Otherwise `ServerConfig`'s defaults. With
//! `RACE_TLS_CERT` and `RACE_TLS_KEY` set it serves HTTPS through
//! ringwire-tls's default backend, OpenSSL (ALPN `http/1.1`).

use ringwire_race::{args, PLAINTEXT};
use ringwire_server::files::StaticFiles;
use ringwire_server::{Handler, Request, Response, Server, ServerConfig, Threading};
use ringwire_tls::TlsAcceptor;

struct Race {
    files: StaticFiles,
}

impl Handler for Race {
    async fn call(&self, request: &Request<'_>) -> Response {
        if request.target().path() == b"/plaintext" {
            Response::new(200)
                .header("content-type", "text/plain")
                .body(PLAINTEXT)
        } else {
            self.files.call(request).await
        }
    }
}

fn main() -> std::io::Result<()> {
    let (addr, www) = args();
    let files = StaticFiles::new(www)?;
    let config = ServerConfig {
        threading: Threading::PerCore(1),
        ..ServerConfig::new(addr)
    };
    let mut server = Server::bind(config)?;
    if let Some((cert, key)) = ringwire_race::tls_files() {
        // OpenSSL unless RACE_TLS_LIBRARY=rustls.
        let backend = match std::env::var("RACE_TLS_LIBRARY").as_deref() {
            Ok("rustls") => ringwire_tls::Backend::Rustls,
            _ => ringwire_tls::Backend::OpenSsl,
        };
        let tls = ringwire_tls::ServerConfig::from_pem(&cert, &key)
            .and_then(|tls| TlsAcceptor::new(&tls.alpn(&[b"http/1.1"]).backend(backend)))
            .map_err(std::io::Error::other)?;
        server = server.with_tls(tls);
    }
    eprintln!("race-ringwire on http://{}/", server.local_addr());
    server.run(Race { files }, std::future::pending())
}
