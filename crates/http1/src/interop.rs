//! Conversions to and from the `http` crate's types, for code that wants
//! ecosystem types. They allocate (the `http` types own their bytes); the
//! zero-copy views stay the primary API.

use std::fmt;

use http::header::{HeaderMap, HeaderName, HeaderValue, HOST};

use crate::encode::{DateCache, EncodeError, RequestWriter, ResponseWriter};
use crate::{Headers, Request, Response, Version};

/// A value the other side's types cannot represent.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum InteropError {
    /// A method the `http` crate refuses.
    Method,
    /// A request target the `http` crate cannot parse as a `Uri`.
    Uri,
    /// A field name the `http` crate refuses.
    HeaderName,
    /// A field value the `http` crate refuses.
    HeaderValue,
    /// An `http::Version` other than HTTP/1.0 and HTTP/1.1.
    Version,
    /// The head could not be encoded.
    Encode(EncodeError),
}

impl fmt::Display for InteropError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            InteropError::Method => f.write_str("method not representable"),
            InteropError::Uri => f.write_str("request target not representable as a Uri"),
            InteropError::HeaderName => f.write_str("field name not representable"),
            InteropError::HeaderValue => f.write_str("field value not representable"),
            InteropError::Version => f.write_str("HTTP/1.x codec given another version"),
            InteropError::Encode(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for InteropError {}

impl From<EncodeError> for InteropError {
    fn from(e: EncodeError) -> Self {
        InteropError::Encode(e)
    }
}

impl From<Version> for http::Version {
    fn from(v: Version) -> Self {
        match v {
            Version::Http10 => http::Version::HTTP_10,
            Version::Http11 => http::Version::HTTP_11,
        }
    }
}

impl TryFrom<http::Version> for Version {
    type Error = InteropError;
    fn try_from(v: http::Version) -> Result<Self, InteropError> {
        match v {
            http::Version::HTTP_10 => Ok(Version::Http10),
            http::Version::HTTP_11 => Ok(Version::Http11),
            _ => Err(InteropError::Version),
        }
    }
}

impl Headers<'_> {
    /// Copies the fields into a `HeaderMap`, keeping repeated fields.
    ///
    /// # Errors
    ///
    /// A name or value the `http` crate refuses.
    pub fn to_header_map(&self) -> Result<HeaderMap, InteropError> {
        let mut map = HeaderMap::with_capacity(self.len());
        for h in self.iter() {
            let name =
                HeaderName::from_bytes(h.name.as_bytes()).map_err(|_| InteropError::HeaderName)?;
            let value = HeaderValue::from_bytes(h.value).map_err(|_| InteropError::HeaderValue)?;
            map.append(name, value);
        }
        Ok(map)
    }
}

impl Request<'_> {
    /// Copies the head into an `http::Request` with an empty body.
    ///
    /// # Errors
    ///
    /// A method, target or field the `http` crate refuses.
    pub fn to_http(&self) -> Result<http::Request<()>, InteropError> {
        let method = http::Method::from_bytes(self.method().as_str().as_bytes())
            .map_err(|_| InteropError::Method)?;
        let uri = http::Uri::try_from(self.target().as_bytes()).map_err(|_| InteropError::Uri)?;
        let mut request = http::Request::new(());
        *request.method_mut() = method;
        *request.uri_mut() = uri;
        *request.version_mut() = self.version().into();
        *request.headers_mut() = self.headers().to_header_map()?;
        Ok(request)
    }
}

impl Response<'_> {
    /// Copies the head into an `http::Response` with an empty body.
    ///
    /// # Errors
    ///
    /// A field the `http` crate refuses.
    pub fn to_http(&self) -> Result<http::Response<()>, InteropError> {
        let mut response = http::Response::new(());
        // parse() guarantees 100..=999, which http accepts.
        *response.status_mut() =
            http::StatusCode::from_u16(self.status()).map_err(|_| InteropError::HeaderValue)?;
        *response.version_mut() = self.version().into();
        *response.headers_mut() = self.headers().to_header_map()?;
        Ok(response)
    }
}

/// Writes the head of an `http` request into `buf`; returns its length.
///
/// The target is the URI's path and query (`/` when empty), or the whole
/// URI for absolute-form when it has a scheme and no `Host` field is set:
/// then `Host` is added from the authority, as HTTP/1.1 requires.
///
/// # Errors
///
/// A version other than HTTP/1.0 or 1.1, or an [`EncodeError`] (including
/// [`BufferFull`](EncodeError::BufferFull): reserve more and retry).
pub fn encode_request_head(
    parts: &http::request::Parts,
    buf: &mut [u8],
) -> Result<usize, InteropError> {
    let version = Version::try_from(parts.version)?;
    let path = parts.uri.path_and_query().map_or("/", |p| p.as_str());
    let path = if path.is_empty() { "/" } else { path };
    let mut writer = RequestWriter::new(buf, parts.method.as_str(), path)?.headers(version)?;
    if let (false, Some(authority)) = (parts.headers.contains_key(HOST), parts.uri.authority()) {
        writer.header("host", authority.as_str())?;
    }
    for (name, value) in &parts.headers {
        writer.header(name.as_str(), value.as_bytes())?;
    }
    Ok(writer.finish()?)
}

/// Writes the head of an `http` response into `buf`, with a `date` field
/// from `date` when given; returns its length.
///
/// # Errors
///
/// A version other than HTTP/1.0 or 1.1, or an [`EncodeError`] (including
/// [`BufferFull`](EncodeError::BufferFull): reserve more and retry).
pub fn encode_response_head(
    parts: &http::response::Parts,
    date: Option<&DateCache>,
    buf: &mut [u8],
) -> Result<usize, InteropError> {
    let version = Version::try_from(parts.version)?;
    let mut writer = ResponseWriter::new(
        buf,
        version,
        parts.status.as_u16(),
        parts.status.canonical_reason(),
    )?;
    if let Some(date) = date {
        writer.date(date)?;
    }
    for (name, value) in &parts.headers {
        writer.header(name.as_str(), value.as_bytes())?;
    }
    Ok(writer.finish()?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Method, RequestParser, ResponseParser, Status};

    #[test]
    fn request_round_trips_through_http_types() {
        let wire = b"POST /a/b?x=1 HTTP/1.1\r\nHost: example.com\r\nX-Two: 1\r\nx-two: 2\r\nContent-Length: 0\r\n\r\n";
        let mut parser = RequestParser::default();
        let Ok(Status::Complete(request, _)) = parser.parse(wire) else {
            panic!("parse")
        };
        let http = request.to_http().unwrap();
        assert_eq!(http.method(), http::Method::POST);
        assert_eq!(http.uri().path(), "/a/b");
        assert_eq!(http.uri().query(), Some("x=1"));
        assert_eq!(http.version(), http::Version::HTTP_11);
        let twos: Vec<_> = http.headers().get_all("x-two").iter().collect();
        assert_eq!(twos, ["1", "2"]);

        let (parts, ()) = http.into_parts();
        let mut buf = [0; 256];
        let n = encode_request_head(&parts, &mut buf).unwrap();
        let mut again = RequestParser::default();
        let Ok(Status::Complete(request, len)) = again.parse(&buf[..n]) else {
            panic!("reparse {:?}", String::from_utf8_lossy(&buf[..n]))
        };
        assert_eq!(len, n);
        assert_eq!(request.target().as_bytes(), b"/a/b?x=1");
        assert_eq!(request.headers().get_all("x-two").count(), 2);
    }

    #[test]
    fn absolute_uri_gets_a_host_field() {
        let (parts, ()) = http::Request::get("http://example.com:8080/p?q")
            .body(())
            .unwrap()
            .into_parts();
        let mut buf = [0; 128];
        let n = encode_request_head(&parts, &mut buf).unwrap();
        assert_eq!(
            &buf[..n],
            b"GET /p?q HTTP/1.1\r\nhost: example.com:8080\r\n\r\n"
        );
        let (h2, ()) = http::Request::get("/")
            .version(http::Version::HTTP_2)
            .body(())
            .unwrap()
            .into_parts();
        assert_eq!(
            encode_request_head(&h2, &mut buf),
            Err(InteropError::Version)
        );
    }

    #[test]
    fn response_round_trips_through_http_types() {
        let response = http::Response::builder()
            .status(404)
            .header("content-type", "text/plain")
            .header("content-length", "3")
            .body(())
            .unwrap();
        let (parts, ()) = response.into_parts();
        let mut date = DateCache::new();
        date.update(std::time::UNIX_EPOCH);
        let mut buf = [0; 256];
        let n = encode_response_head(&parts, Some(&date), &mut buf).unwrap();
        let mut parser = ResponseParser::default();
        let Ok(Status::Complete(response, _)) = parser.parse(&buf[..n], Method::Get) else {
            panic!("parse")
        };
        assert_eq!(response.reason(), b"Not Found");
        assert_eq!(
            response.header("date"),
            Some(&b"Thu, 01 Jan 1970 00:00:00 GMT"[..])
        );
        let back = response.to_http().unwrap();
        assert_eq!(back.status(), http::StatusCode::NOT_FOUND);
        assert_eq!(back.headers()["content-length"], "3");
        let too_small = encode_response_head(&parts, None, &mut buf[..10]);
        assert!(matches!(
            too_small,
            Err(InteropError::Encode(EncodeError::BufferFull { .. }))
        ));
    }
}
