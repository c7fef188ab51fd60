//! One line per request, through the `log` crate.

use std::time::Instant;

use crate::{Handler, Request, Response};

/// Logs each request at `info` level, target `ringwire::access`, in a form
/// close to the Common Log Format:
///
/// ```text
/// 127.0.0.1:50312 "GET /index.html HTTP/1.1" 200 151 0.041ms
/// ```
///
/// The size is the body's (`-` for a streamed one, whose size is not known
/// when the head goes out); the time is the handler's. Nothing is formatted
/// when the level is off.
#[derive(Debug)]
pub struct AccessLog<H> {
    inner: H,
}

impl<H: Handler> AccessLog<H> {
    /// Logs the requests `inner` answers.
    pub fn new(inner: H) -> Self {
        AccessLog { inner }
    }
}

const TARGET: &str = "ringwire::access";

impl<H: Handler> Handler for AccessLog<H> {
    fn streams_body(&self, request: &ringwire_http1::Request<'_>) -> bool {
        self.inner.streams_body(request)
    }

    async fn call(&self, request: &Request<'_>) -> Response {
        if !log::log_enabled!(target: TARGET, log::Level::Info) {
            return self.inner.call(request).await;
        }
        let start = Instant::now();
        let response = self.inner.call(request).await;
        let elapsed = start.elapsed();
        let peer = request
            .peer()
            .map_or_else(|| "-".to_owned(), |p| p.to_string());
        let size = response
            .body_ref()
            .len()
            .map_or_else(|| "-".to_owned(), |n| n.to_string());
        log::info!(
            target: TARGET,
            "{peer} \"{} {} {}\" {} {size} {:.3}ms",
            request.method(),
            String::from_utf8_lossy(request.target().as_bytes()),
            request.version(),
            response.status(),
            elapsed.as_secs_f64() * 1e3,
        );
        response
    }
}
