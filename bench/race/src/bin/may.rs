//! may_minihttp with one worker thread (`may::config().set_workers(1)`) and
//! the settings of its own TechEmpower example (small coroutine stacks).
//!
//! may_minihttp has no file support: `/index.html` is read once at start and
//! answered from memory (a `&'static str` body, as its examples do).

use std::io;

use may_minihttp::{HttpService, HttpServiceFactory, Request, Response};
use ringwire_race::{args, PLAINTEXT};

#[derive(Clone)]
struct Race {
    index: &'static str,
}

impl HttpService for Race {
    fn call(
        &mut self,
        request: Request<'_, '_, '_>,
        response: &mut Response<'_>,
    ) -> io::Result<()> {
        match request.path() {
            "/plaintext" => {
                response.header("Content-Type: text/plain").body(PLAINTEXT);
            }
            "/index.html" => {
                response.header("Content-Type: text/html").body(self.index);
            }
            _ => {
                response.status_code(404, "Not Found");
            }
        }
        Ok(())
    }
}

struct Factory {
    index: &'static str,
}

impl HttpServiceFactory for Factory {
    type Service = Race;

    fn new_service(&self, _id: usize) -> Race {
        Race { index: self.index }
    }
}

fn main() -> io::Result<()> {
    let (addr, www) = args();
    let index: &'static str = String::leak(std::fs::read_to_string(www.join("index.html"))?);
    may::config()
        .set_workers(1)
        .set_pool_capacity(500)
        .set_stack_size(0x1000);
    let server = Factory { index }.start(addr)?;
    eprintln!("race-may on http://{addr}/");
    server
        .join()
        .map_err(|_| io::Error::other("server thread panicked"))
}
