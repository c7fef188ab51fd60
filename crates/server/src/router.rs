//! A small router: method and path pattern to handler, with path parameters.
//!
//! Patterns are literal segments, `:name` parameters (one non-empty
//! segment) and a final `*name` (the rest of the path, slashes included):
//! `/users/:id`, `/static/*path`. Literals match the decoded segment
//! (`/caf%C3%A9` matches `/café`); parameters keep the bytes as sent, and
//! [`Params::decoded`] decodes them on demand. Routes are tried in the order
//! they were added; the first whose pattern and method match answers. A
//! path that matches only with other methods gets `405` with `allow`, and
//! one that matches nothing the fallback (by default `404`).
//!
//! Matching allocates nothing: parameters are slices of the request line,
//! kept on the stack. Each routed call boxes its handler's future (one
//! allocation per request), since routes hold handlers of different types.

use std::fmt;

use ringwire_http1::target::PercentDecoded;
use ringwire_http1::Method;

use crate::handler::DynHandler;
use crate::{handler_fn, Handler, HandlerFn, Request, Response};

/// The most parameters one pattern may have.
pub const MAX_PARAMS: usize = 8;

#[cfg(fuzzing)]
pub mod fuzzing;

/// Routes requests to handlers by method and path.
///
/// ```
/// use ringwire_server::{Request, Response, Router};
///
/// async fn user(request: &Request<'_>) -> Response {
///     Response::text(format!("user {}\n", request.param("id").unwrap_or("?")))
/// }
///
/// async fn create(request: &Request<'_>) -> Response {
///     Response::new(201).body(request.body().to_vec())
/// }
///
/// let router = Router::new().get("/users/:id", user).post("/users", create);
/// # let _ = router;
/// ```
#[derive(Default)]
pub struct Router {
    routes: Vec<Route>,
    fallback: Option<Box<dyn DynHandler>>,
}

struct Route {
    /// `None` matches every method.
    method: Option<Method<'static>>,
    pattern: Vec<Segment>,
    handler: Box<dyn DynHandler>,
}

#[derive(Debug, PartialEq, Eq)]
enum Segment {
    Literal(String),
    Param(String),
    Rest(String),
}

impl Router {
    /// A router with no routes: everything is `404`.
    pub fn new() -> Router {
        Router::default()
    }

    /// Routes `method` requests whose path matches `pattern` to `handler`.
    ///
    /// # Panics
    ///
    /// `pattern` does not start with `/`, has an empty parameter name, a
    /// `*` that is not last, or more than [`MAX_PARAMS`] parameters: a
    /// programming error, found when the router is built.
    #[must_use]
    pub fn route(self, method: Method<'static>, pattern: &str, handler: impl Handler) -> Router {
        self.add(Some(method), pattern, handler)
    }

    /// Routes requests of any method whose path matches `pattern`.
    ///
    /// # Panics
    ///
    /// As [`route`](Self::route).
    #[must_use]
    pub fn any(self, pattern: &str, handler: impl Handler) -> Router {
        self.add(None, pattern, handler)
    }

    /// Routes `GET` (and `HEAD`, answered without the body) to the `async fn` `f`.
    ///
    /// # Panics
    ///
    /// As [`route`](Self::route).
    #[must_use]
    pub fn get<F: for<'a> HandlerFn<'a>>(self, pattern: &str, f: F) -> Router {
        self.route(Method::Get, pattern, handler_fn(f))
    }

    /// Routes `POST` to the `async fn` `f`.
    ///
    /// # Panics
    ///
    /// As [`route`](Self::route).
    #[must_use]
    pub fn post<F: for<'a> HandlerFn<'a>>(self, pattern: &str, f: F) -> Router {
        self.route(Method::Post, pattern, handler_fn(f))
    }

    /// Routes `PUT` to the `async fn` `f`.
    ///
    /// # Panics
    ///
    /// As [`route`](Self::route).
    #[must_use]
    pub fn put<F: for<'a> HandlerFn<'a>>(self, pattern: &str, f: F) -> Router {
        self.route(Method::Put, pattern, handler_fn(f))
    }

    /// Routes `DELETE` to the `async fn` `f`.
    ///
    /// # Panics
    ///
    /// As [`route`](Self::route).
    #[must_use]
    pub fn delete<F: for<'a> HandlerFn<'a>>(self, pattern: &str, f: F) -> Router {
        self.route(Method::Delete, pattern, handler_fn(f))
    }

    /// Answers requests no route matches (instead of `404`), such as a
    /// [`StaticFiles`](crate::files::StaticFiles) root.
    #[must_use]
    pub fn fallback(mut self, handler: impl Handler) -> Router {
        self.fallback = Some(Box::new(handler));
        self
    }

    fn add(
        mut self,
        method: Option<Method<'static>>,
        pattern: &str,
        handler: impl Handler,
    ) -> Router {
        let pattern =
            parse_pattern(pattern).unwrap_or_else(|why| panic!("route {pattern:?}: {why}"));
        self.routes.push(Route {
            method,
            pattern,
            handler: Box::new(handler),
        });
        self
    }

    /// The route for `request`, its parameters filled into `params`.
    fn find<'r>(
        &'r self,
        request: &ringwire_http1::Request<'r>,
        params: &mut Params<'r>,
    ) -> Found<'r> {
        let method = request.method();
        let mut allowed = Allowed::default();
        for route in &self.routes {
            if !matches(&route.pattern, request.target().path(), params) {
                continue;
            }
            match route.method {
                None => return Found::Route(&*route.handler),
                Some(m) if m == method || (m == Method::Get && method == Method::Head) => {
                    return Found::Route(&*route.handler);
                }
                Some(m) => allowed.add(m),
            }
        }
        params.clear();
        if allowed.is_empty() {
            Found::Nothing
        } else {
            Found::OtherMethods(allowed)
        }
    }
}

enum Found<'r> {
    Route(&'r dyn DynHandler),
    OtherMethods(Allowed),
    Nothing,
}

impl Handler for Router {
    async fn call(&self, request: &Request<'_>) -> Response {
        let mut params = Params::new();
        match self.find(request.head(), &mut params) {
            Found::Route(handler) => handler.call_boxed(&request.with_params(&params)).await,
            Found::OtherMethods(allowed) => Response::new(405).header("allow", allowed.to_string()),
            Found::Nothing => match &self.fallback {
                Some(fallback) => fallback.call_boxed(request).await,
                None => Response::new(404),
            },
        }
    }

    fn streams_body(&self, request: &ringwire_http1::Request<'_>) -> bool {
        match self.find(request, &mut Params::new()) {
            Found::Route(handler) => handler.streams_body_dyn(request),
            Found::OtherMethods(_) => false,
            Found::Nothing => self
                .fallback
                .as_ref()
                .is_some_and(|f| f.streams_body_dyn(request)),
        }
    }
}

impl fmt::Debug for Router {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let routes: Vec<_> = self
            .routes
            .iter()
            .map(|r| (r.method.map_or("*", |m| m.as_str()), &r.pattern))
            .collect();
        f.debug_struct("Router")
            .field("routes", &routes)
            .field("fallback", &self.fallback.is_some())
            .finish()
    }
}

/// Why a pattern is refused.
fn parse_pattern(pattern: &str) -> Result<Vec<Segment>, &'static str> {
    let rest = pattern.strip_prefix('/').ok_or("must start with '/'")?;
    let mut segments = Vec::new();
    let mut params = 0;
    for part in rest.split('/') {
        if matches!(segments.last(), Some(Segment::Rest(_))) {
            return Err("'*' must be the last segment");
        }
        let segment = if let Some(name) = part.strip_prefix(':') {
            params += 1;
            Segment::Param(param_name(name)?)
        } else if let Some(name) = part.strip_prefix('*') {
            params += 1;
            Segment::Rest(param_name(name)?)
        } else {
            Segment::Literal(part.to_owned())
        };
        segments.push(segment);
    }
    if params > MAX_PARAMS {
        return Err("too many parameters");
    }
    Ok(segments)
}

fn param_name(name: &str) -> Result<String, &'static str> {
    if name.is_empty() {
        Err("a parameter needs a name")
    } else {
        Ok(name.to_owned())
    }
}

/// Whether `path` matches `pattern`, filling `params` (left partly filled when not).
fn matches<'r>(pattern: &'r [Segment], path: &'r [u8], params: &mut Params<'r>) -> bool {
    params.clear();
    let mut segments = ringwire_http1::Target::new(path).segments();
    for expected in pattern {
        let Some(segment) = segments.next() else {
            return false;
        };
        match expected {
            Segment::Literal(literal) => {
                if !segment.eq_str(literal) {
                    return false;
                }
            }
            Segment::Param(name) => {
                if segment.raw().is_empty() {
                    return false;
                }
                params.push(name, segment.raw());
            }
            Segment::Rest(name) => {
                // The segment is a slice of `path`: the rest starts there.
                let start = segment.raw().as_ptr() as usize - path.as_ptr() as usize;
                params.push(name, &path[start..]);
                return true;
            }
        }
    }
    segments.next().is_none()
}

/// The path parameters a route matched: names from the pattern, values as
/// sent (percent-encoded), both borrowed.
#[derive(Clone, Copy)]
pub struct Params<'a> {
    len: usize,
    entries: [(&'a str, &'a [u8]); MAX_PARAMS],
}

static NO_PARAMS: Params<'static> = Params::new();

impl<'a> Params<'a> {
    const fn new() -> Params<'a> {
        Params {
            len: 0,
            entries: [("", b""); MAX_PARAMS],
        }
    }

    /// No parameters (a request outside a router).
    pub(crate) fn none() -> &'static Params<'static> {
        &NO_PARAMS
    }

    fn clear(&mut self) {
        self.len = 0;
    }

    fn push(&mut self, name: &'a str, value: &'a [u8]) {
        // `parse_pattern` bounds the parameters of a pattern.
        self.entries[self.len] = (name, value);
        self.len += 1;
    }

    /// The value of `name` as sent (still percent-encoded), if the route
    /// has that parameter and the value is UTF-8.
    pub fn get(&self, name: &str) -> Option<&'a str> {
        self.raw(name).and_then(|v| std::str::from_utf8(v).ok())
    }

    /// The value of `name`, percent-decoded on demand.
    pub fn decoded(&self, name: &str) -> Option<PercentDecoded<'a>> {
        self.raw(name).map(PercentDecoded::path)
    }

    fn raw(&self, name: &str) -> Option<&'a [u8]> {
        self.iter().find(|(n, _)| *n == name).map(|(_, v)| v)
    }

    /// Every `(name, raw value)` pair, in pattern order.
    pub fn iter(&self) -> impl Iterator<Item = (&'a str, &'a [u8])> + '_ {
        self.entries[..self.len].iter().copied()
    }

    /// How many parameters matched.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether no parameter matched.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

impl fmt::Debug for Params<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map()
            .entries(self.iter().map(|(n, v)| (n, String::from_utf8_lossy(v))))
            .finish()
    }
}

/// The methods a path has routes for, for a `405`'s `allow` field.
#[derive(Default)]
struct Allowed(Vec<Method<'static>>);

impl Allowed {
    fn add(&mut self, method: Method<'static>) {
        if !self.0.contains(&method) {
            self.0.push(method);
            if method == Method::Get {
                self.add(Method::Head);
            }
        }
    }

    fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl fmt::Display for Allowed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, m) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            f.write_str(m.as_str())?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn find(pattern: &str, path: &str) -> Option<Vec<(String, String)>> {
        let pattern = parse_pattern(pattern).expect("pattern");
        let mut params = Params::new();
        matches(&pattern, path.as_bytes(), &mut params).then(|| {
            params
                .iter()
                .map(|(n, v)| (n.to_owned(), String::from_utf8_lossy(v).into_owned()))
                .collect()
        })
    }

    fn pairs(list: &[(&str, &str)]) -> Option<Vec<(String, String)>> {
        Some(
            list.iter()
                .map(|(n, v)| ((*n).to_owned(), (*v).to_owned()))
                .collect(),
        )
    }

    #[test]
    fn literals_params_and_rest() {
        assert_eq!(find("/", "/"), pairs(&[]));
        assert_eq!(find("/", "/a"), None);
        assert_eq!(find("/users", "/users"), pairs(&[]));
        assert_eq!(find("/users", "/users/"), None);
        assert_eq!(find("/users/:id", "/users/7"), pairs(&[("id", "7")]));
        assert_eq!(find("/users/:id", "/users/"), None);
        assert_eq!(find("/users/:id", "/users/7/x"), None);
        assert_eq!(
            find("/a/:x/b/:y", "/a/1/b/%20"),
            pairs(&[("x", "1"), ("y", "%20")])
        );
        assert_eq!(
            find("/static/*path", "/static/css/a.css"),
            pairs(&[("path", "css/a.css")])
        );
        assert_eq!(find("/static/*path", "/static/"), pairs(&[("path", "")]));
        assert_eq!(find("/static/*path", "/static"), None);
        // Literals compare decoded; the query is not part of the path.
        assert_eq!(find("/café", "/caf%C3%A9?x=1"), pairs(&[]));
    }

    #[test]
    fn bad_patterns() {
        assert!(parse_pattern("users").is_err());
        assert!(parse_pattern("/:").is_err());
        assert!(parse_pattern("/*rest/more").is_err());
        assert!(parse_pattern("/:a/:b/:c/:d/:e/:f/:g/:h/:i").is_err());
        assert_eq!(
            parse_pattern("/a/:b/*c"),
            Ok(vec![
                Segment::Literal("a".into()),
                Segment::Param("b".into()),
                Segment::Rest("c".into())
            ])
        );
    }
}
