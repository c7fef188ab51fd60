//! ringwire-server on one thread (`Threading::PerCore(1)`: a current-thread
//! runtime and one listener): `/plaintext` from a static slice, everything
//! else from `StaticFiles` (open-file cache; small files from memory, larger
//! ones by `sendfile`). Otherwise `ServerConfig`'s defaults.

use ringwire_race::{args, PLAINTEXT};
use ringwire_server::files::StaticFiles;
use ringwire_server::{Handler, Request, Response, Server, ServerConfig, Threading};

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
    let server = Server::bind(config)?;
    eprintln!("race-ringwire on http://{}/", server.local_addr());
    server.run(Race { files }, std::future::pending())
}
