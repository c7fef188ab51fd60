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
/// when the head goes out; 0 for `HEAD`); the time is the handler's. Nothing
/// is formatted when the level is off. Requests the connection refuses
/// before a handler sees them (`400`, `408`, `413`, `414`, `431`, `505`) are
/// logged at the same target by the server itself, as `"-"` with no time.
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

/// The `log` target of access lines.
pub(crate) const TARGET: &str = "ringwire::access";

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
        // A HEAD answer's head describes a body that is not sent.
        let size = match response.body_ref().len() {
            _ if request.method() == ringwire_http1::Method::Head => "0".to_owned(),
            Some(n) => n.to_string(),
            None => "-".to_owned(),
        };
        log::info!(
            target: TARGET,
            "{peer} \"{} {} {}\" {} {size} {:.3}ms",
            request.method(),
            String::from_utf8_lossy(request.target().as_bytes()),
            request.protocol(),
            // The connection's, where the protocol's rules on upgrades change it.
            response.wire_status(request.protocol(), request.is_extended_connect()),
            elapsed.as_secs_f64() * 1e3,
        );
        response
    }
}
