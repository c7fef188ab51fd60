//! Handlers that wrap handlers: an access log, response compression and CORS.
//!
//! ```
//! use ringwire_server::middleware::{AccessLog, Compress};
//! use ringwire_server::files::EmbeddedSite;
//!
//! let site = EmbeddedSite::new().page("/", "text/html", b"<h1>hi</h1>");
//! let handler = AccessLog::new(Compress::new(site));
//! # let _ = handler;
//! ```

pub(crate) mod access_log;
pub(crate) mod compress;
pub(crate) mod cors;

#[cfg(fuzzing)]
#[doc(hidden)]
pub use compress::fuzzing;

pub use access_log::AccessLog;
pub use compress::{Compress, Encoding};
pub use cors::Cors;
