//! actix-web 4 with one worker (`workers(1)`), `/index.html` through
//! `actix-files` (`Files`), the way its documentation serves a directory.
//!
//! Keep-alive is 75 s (nginx's default) instead of actix's 5 s, so the
//! idle-connection measurement holds its connections; under load no
//! connection is idle, so the race itself is unaffected.

use std::time::Duration;

use actix_web::{web, App, HttpResponse, HttpServer};
use ringwire_race::{args, PLAINTEXT};

async fn plaintext() -> HttpResponse {
    HttpResponse::Ok()
        .content_type("text/plain")
        .body(PLAINTEXT)
}

fn main() -> std::io::Result<()> {
    let (addr, www) = args();
    eprintln!("race-actix on http://{addr}/");
    actix_web::rt::System::new().block_on(
        HttpServer::new(move || {
            App::new()
                .route("/plaintext", web::get().to(plaintext))
                .service(actix_files::Files::new("/", www.clone()))
        })
        .workers(1)
        .keep_alive(Duration::from_secs(75))
        .bind(addr)?
        .run(),
    )
}
