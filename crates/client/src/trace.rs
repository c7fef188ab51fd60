//! What a traced exchange shows its caller, as it goes: for `-v` output, timings
//! (`-w`), progress bars, metrics.

use crate::Protocol;

/// What a traced send ([`blocking::Client::send_traced`](crate::blocking::Client::send_traced),
/// [`tokio::Client::send_traced`](crate::tokio::Client::send_traced)) is shown of an
/// exchange, in order; `R` is that client's response.
#[derive(Debug)]
#[non_exhaustive]
pub enum Trace<'t, R> {
    /// The host about to be connected to (the origin's, or its proxy's) has its addresses
    /// (from the resolver, or pinned by the client's `resolve`).
    Resolved,
    /// A TCP connection opened, to this address: the origin's, or its proxy's.
    Connected(std::net::SocketAddr),
    /// A connection opened to this Unix socket (a client's
    /// [`unix_socket`](crate::blocking::Client::unix_socket)).
    ConnectedUnix(&'t std::path::Path),
    /// The TLS handshake of an `https://` connection done.
    Handshaken,
    /// The protocol of the connection the next request goes on.
    Protocol(Protocol),
    /// A request head, as it is sent: the first, then each redirect's (and
    /// any sent again on a fresh connection, when a pooled one turned out
    /// closed). Over HTTP/2, as the builder wrote it: its request line and
    /// `host` go out as pseudo-header fields.
    Request(&'t [u8]),
    /// The bytes of a streamed body written to the connection so far (the traced
    /// `send_streamed` and `send_file`), after each piece: an upload's progress.
    Sent(u64),
    /// An interim `1xx` head, as it arrived: a `100 Continue` to a body
    /// that waited for it ([`HeaderBuilder::expect_continue`](crate::HeaderBuilder::expect_continue)),
    /// `103 Early Hints`.
    Interim(ringwire_http1::Response<'t>),
    /// The response, its head in place: each redirect's, then the last.
    Response(&'t R),
}
