//! What only the client does: it sends the magic preface, opens odd streams with requests,
//! and reads the responses to them.

use super::{declared_length, Closed, Config, Connection, Opened, Role, SendError, MAX_STREAM_ID};
use crate::frame::StreamId;
use crate::Error;

impl Connection {
    /// A client connection; the client preface (the magic, `SETTINGS` with
    /// `SETTINGS_ENABLE_PUSH` 0, the connection window) is already in the send buffer, and
    /// requests may follow it at once (section 3.4). The server's `SETTINGS` must be the
    /// first frame it sends.
    #[must_use]
    pub fn client(config: Config) -> Connection {
        let mut conn = Connection::new(Role::Client, config);
        // A client keeps few connections, and the responses it reads index a new `date`
        // each second: its table is given its room at once, so that filling it over the
        // first minute allocates nothing. (A server's tables grow as they fill: it has many
        // connections, most of whose tables stay small.)
        conn.decoder.reserve_table();
        conn
    }

    /// Opens the next stream (1, 3, 5, …) with a request head: the pseudo-header fields
    /// `:method`, `:scheme`, `:authority` and `:path` (for `CONNECT`, `:authority` alone,
    /// section 8.5), then `fields` (names lowercased here; HTTP/1.1's connection-specific
    /// fields, which HTTP/2 forbids, left out). `end_stream`: no body follows; otherwise
    /// [`send_data`](Self::send_data) and [`send_trailers`](Self::send_trailers) send it.
    ///
    /// Returns the stream, on which the response arrives.
    pub fn send_request<'f>(
        &mut self,
        method: &[u8],
        scheme: &[u8],
        authority: &[u8],
        path: &[u8],
        fields: impl IntoIterator<Item = (&'f [u8], &'f [u8])>,
        end_stream: bool,
    ) -> Result<StreamId, SendError> {
        let pseudo: &[(&[u8], &[u8])] = if method == b"CONNECT" {
            &[(b":method", method), (b":authority", authority)]
        } else {
            &[
                (b":method", method),
                (b":scheme", scheme),
                (b":authority", authority),
                (b":path", path),
            ]
        };
        self.open_request(pseudo, fields, end_stream, method == b"HEAD")
    }

    /// Opens the next stream with an extended `CONNECT` (RFC 8441) for `protocol`
    /// (`websocket`, say) at `path`: the stream then carries that protocol's bytes both
    /// ways as `DATA`, once a `2xx` answers. `fields` as in
    /// [`send_request`](Self::send_request).
    ///
    /// # Errors
    ///
    /// [`SendError::NoExtendedConnect`] until the server's `SETTINGS` said it takes
    /// them; otherwise as [`send_request`](Self::send_request).
    pub fn send_extended_connect<'f>(
        &mut self,
        protocol: &[u8],
        scheme: &[u8],
        authority: &[u8],
        path: &[u8],
        fields: impl IntoIterator<Item = (&'f [u8], &'f [u8])>,
    ) -> Result<StreamId, SendError> {
        if !self.peer_extended_connect && self.failed.is_none() {
            return Err(SendError::NoExtendedConnect);
        }
        let pseudo: &[(&[u8], &[u8])] = &[
            (b":method", b"CONNECT"),
            (b":protocol", protocol),
            (b":scheme", scheme),
            (b":authority", authority),
            (b":path", path),
        ];
        self.open_request(pseudo, fields, false, false)
    }

    /// Opens the next stream with a request head of `pseudo`-header fields and `fields`.
    fn open_request<'f>(
        &mut self,
        pseudo: &[(&[u8], &[u8])],
        fields: impl IntoIterator<Item = (&'f [u8], &'f [u8])>,
        end_stream: bool,
        head_request: bool,
    ) -> Result<StreamId, SendError> {
        if self.failed.is_some() {
            return Err(SendError::ConnectionFailed);
        }
        if self.role != Role::Client {
            return Err(SendError::NotClient);
        }
        if self.going_away.is_some() || self.peer_going_away {
            return Err(SendError::GoingAway);
        }
        if !self.has_stream_room() {
            return Err(SendError::TooManyStreams);
        }
        let next = if self.last_stream == 0 {
            1
        } else {
            self.last_stream + 2
        };
        if next > MAX_STREAM_ID {
            return Err(SendError::StreamIdsExhausted);
        }
        let id = StreamId::new(next);
        let size = self.stage_block(pseudo, fields);
        if size > self.peer_max_header_list as usize {
            return Err(SendError::HeaderListTooLarge {
                limit: self.peer_max_header_list,
            });
        }
        self.encode_staged();
        self.last_stream = next;
        let stream = self.open_stream(id);
        stream.head_sent = true;
        stream.head_request = head_request;
        self.send_block(id, end_stream);
        Ok(id)
    }

    /// A response head on `id`, once its block is decoded: interim (1xx) or final, or reset
    /// when malformed (section 8.1.1).
    pub(super) fn response_head(
        &mut self,
        id: StreamId,
        end_stream: bool,
    ) -> Result<Option<Opened>, Error> {
        if let Some(rule) = self.fields.response_error() {
            return Ok(Some(self.malformed(id, rule)));
        }
        let status = self.fields.status();
        if status < 200 {
            if end_stream {
                return Ok(Some(
                    self.malformed(id, "an interim response with END_STREAM"),
                ));
            }
            return Ok(Some(Opened::Interim { status }));
        }
        // These have no body, whatever content-length says (RFC 9110 sections 6.4.1, 8.6).
        let bodiless = status == 204
            || status == 304
            || self.streams.get(&id.get()).is_some_and(|s| s.head_request);
        let length = if bodiless {
            Ok(Some(0))
        } else {
            declared_length(self.fields.content_length(), end_stream)
        };
        match length {
            Ok(length) => {
                self.head_received(id, length, end_stream)?;
                Ok(Some(Opened::Response { status, end_stream }))
            }
            Err(rule) => Ok(Some(self.malformed(id, rule))),
        }
    }

    /// The server's `GOAWAY` named `last` the last stream it may process: the streams above
    /// it never will be, and are forgotten (the [`GoAway`](crate::Event::GoAway) event says
    /// which, for the application to retry them elsewhere).
    pub(super) fn forget_unprocessed(&mut self, last: StreamId) {
        let unprocessed: Vec<u32> = self
            .streams
            .keys()
            .copied()
            .filter(|&id| id > last.get())
            .collect();
        for id in unprocessed {
            self.close(StreamId::new(id), Closed::ResetThere);
        }
    }
}
