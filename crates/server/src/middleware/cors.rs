//! Cross-origin resource sharing (the Fetch standard's CORS protocol): which other sites'
//! pages may call this server from a browser, with which methods and fields.

use std::time::Duration;

use ringwire_http1::Method;

use crate::{Handler, Request, Response};

/// Answers browsers' CORS preflights (`OPTIONS` with `Access-Control-Request-Method`) itself,
/// and marks the answers `inner` gives to cross-origin requests, for the origins allowed.
/// A request from an origin not allowed gets its answer unmarked, which the browser then
/// keeps from the page; a request without `Origin` (not a browser's cross-origin one) is
/// left alone.
///
/// ```
/// use std::time::Duration;
///
/// use ringwire_server::middleware::Cors;
/// use ringwire_server::{Request, Response, Router};
///
/// async fn items(_: &Request<'_>) -> Response {
///     Response::json(&["a", "b"])
/// }
///
/// let api = Router::new().get("/items", items);
/// let handler = Cors::origins(api, &["https://app.example.com"])
///     .allow_methods(&["GET", "POST", "DELETE"])
///     .allow_credentials()
///     .max_age(Duration::from_secs(600));
/// # let _ = handler;
/// ```
#[derive(Debug)]
pub struct Cors<H> {
    inner: H,
    /// `None`: any origin.
    origins: Option<Vec<String>>,
    methods: String,
    /// `None`: those the preflight asks for.
    headers: Option<String>,
    expose: Option<String>,
    credentials: bool,
    max_age: Option<Duration>,
}

impl<H: Handler> Cors<H> {
    /// Pages of any origin may call `inner` (without cookies or other credentials).
    pub fn any(inner: H) -> Self {
        Cors::with(inner, None)
    }

    /// Pages of these origins (`https://app.example.com`, scheme, host and port as the
    /// browser sends them) may call `inner`.
    pub fn origins(inner: H, origins: &[&str]) -> Self {
        Cors::with(inner, Some(origins.iter().map(|&o| o.to_owned()).collect()))
    }

    fn with(inner: H, origins: Option<Vec<String>>) -> Self {
        Cors {
            inner,
            origins,
            methods: "GET, HEAD, POST".to_owned(),
            headers: None,
            expose: None,
            credentials: false,
            max_age: None,
        }
    }

    /// The methods allowed (`GET, HEAD, POST` by default).
    #[must_use]
    pub fn allow_methods(self, methods: &[&str]) -> Self {
        Cors {
            methods: methods.join(", "),
            ..self
        }
    }

    /// The request fields allowed beyond those always allowed (by default, whatever the
    /// preflight asks for).
    #[must_use]
    pub fn allow_headers(self, headers: &[&str]) -> Self {
        Cors {
            headers: Some(headers.join(", ")),
            ..self
        }
    }

    /// The answer's fields the page may read beyond those always readable.
    #[must_use]
    pub fn expose_headers(self, headers: &[&str]) -> Self {
        Cors {
            expose: Some(headers.join(", ")),
            ..self
        }
    }

    /// Requests may carry cookies and credentials, and their answers are shown to the page.
    ///
    /// # Panics
    ///
    /// With [`any`](Self::any) origin: a page of any site could then act as the user, so
    /// the origins must be named. A programming error, found when the handler is built.
    #[must_use]
    pub fn allow_credentials(self) -> Self {
        assert!(
            self.origins.is_some(),
            "CORS credentials need the origins named (Cors::origins), not any"
        );
        Cors {
            credentials: true,
            ..self
        }
    }

    /// How long browsers may keep a preflight's answer.
    #[must_use]
    pub fn max_age(self, age: Duration) -> Self {
        Cors {
            max_age: Some(age),
            ..self
        }
    }

    /// Whether pages of `origin` may call.
    fn allows(&self, origin: &[u8]) -> bool {
        self.origins
            .as_ref()
            .is_none_or(|origins| origins.iter().any(|o| o.as_bytes() == origin))
    }

    /// `Access-Control-Allow-Origin` (and `-Credentials`) for an allowed `origin`.
    fn allow_origin(&self, response: Response, origin: &[u8]) -> Response {
        let response = match self.origins {
            None => response.header("access-control-allow-origin", "*"),
            Some(_) => response.header("access-control-allow-origin", origin.to_vec()),
        };
        if self.credentials {
            response.header("access-control-allow-credentials", "true")
        } else {
            response
        }
    }

    /// The preflight's answer.
    fn preflight(&self, request: &Request<'_>, origin: &[u8]) -> Response {
        let response = vary(
            Response::new(204),
            "origin, access-control-request-method, access-control-request-headers",
        );
        if !self.allows(origin) {
            return response;
        }
        let mut response = self
            .allow_origin(response, origin)
            .header("access-control-allow-methods", self.methods.clone());
        let asked = request.header("access-control-request-headers");
        let headers = match &self.headers {
            Some(headers) => Some(headers.as_bytes().to_vec()),
            None => asked.map(<[u8]>::to_vec),
        };
        if let Some(headers) = headers {
            response = response.header("access-control-allow-headers", headers);
        }
        if let Some(age) = self.max_age {
            response = response.header("access-control-max-age", age.as_secs().to_string());
        }
        response
    }
}

/// `response` with `names` added to its `vary` field.
fn vary(mut response: Response, names: &str) -> Response {
    let value = match response.header_value("vary") {
        Some(before) => [before, b", ", names.as_bytes()].concat(),
        None => names.as_bytes().to_vec(),
    };
    response.remove_header("vary");
    response.header("vary", value)
}

impl<H: Handler> Handler for Cors<H> {
    fn streams_body(&self, request: &ringwire_http1::Request<'_>) -> bool {
        self.inner.streams_body(request)
    }

    async fn call(&self, request: &Request<'_>) -> Response {
        let Some(origin) = request.header("origin") else {
            return self.inner.call(request).await;
        };
        let is_preflight = request.method() == Method::Options
            && request.header("access-control-request-method").is_some();
        if is_preflight {
            return self.preflight(request, origin);
        }
        let mut response = self.inner.call(request).await;
        // A cache must not give one origin's answer to another.
        if self.origins.is_some() {
            response = vary(response, "origin");
        }
        if !self.allows(origin) {
            return response;
        }
        response = self.allow_origin(response, origin);
        match &self.expose {
            Some(expose) => response.header("access-control-expose-headers", expose.clone()),
            None => response,
        }
    }
}
