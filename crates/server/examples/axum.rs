//! An axum application, unchanged, served by ringwire.
//!
//! ```text
//! cargo run --release -p ringwire-server --example axum
//! curl http://127.0.0.1:3000/users/7
//! curl -d '{"name":"ada"}' -H 'content-type: application/json' http://127.0.0.1:3000/users
//! ```

use axum::extract::Path;
use axum::http::StatusCode;
use axum::routing::{get, post};
use axum::Json;
use ringwire_server::{Server, ServerConfig, TowerHandler};
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize)]
struct User {
    id: Option<u64>,
    name: String,
}

async fn user(Path(id): Path<u64>) -> Json<User> {
    Json(User {
        id: Some(id),
        name: format!("user {id}"),
    })
}

async fn create(Json(user): Json<User>) -> (StatusCode, Json<User>) {
    (
        StatusCode::CREATED,
        Json(User {
            id: Some(42),
            name: user.name,
        }),
    )
}

/// The application, as any axum user writes it (`tests/axum.rs` serves
/// it too).
pub(crate) fn app() -> axum::Router {
    axum::Router::new()
        .route("/", get(|| async { "hello from axum on ringwire\n" }))
        .route("/users/{id}", get(user))
        .route("/users", post(create))
}

fn main() -> std::io::Result<()> {
    let addr = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "127.0.0.1:3000".to_owned());
    let config = ServerConfig::new(addr.parse().map_err(std::io::Error::other)?);
    let server = Server::bind(config)?;
    // Scripts wait for this line before they send requests.
    println!("listening on http://{}/", server.local_addr());
    server.run(TowerHandler::new(app()), async {
        let _ = tokio::signal::ctrl_c().await;
    })
}
