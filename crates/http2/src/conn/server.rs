//! What only the server does: it reads the client's preface, takes the streams the client
//! opens as requests, and answers them.

use super::fields::status_digits;
use super::{declared_length, Config, Connection, Opened, Role, SendError};
use crate::frame::StreamId;
use crate::{Error, ErrorCode, Violation};

impl Connection {
    /// A server connection; its `SETTINGS` are already in the send buffer (the server's
    /// preface may go out before the client's arrives, section 3.4).
    #[must_use]
    pub fn server(config: Config) -> Connection {
        Connection::new(Role::Server, config)
    }

    /// The request head that opens `id`, once its block is decoded: refused past our
    /// stream limit, reset when malformed, else a new stream.
    pub(super) fn request_head(
        &mut self,
        id: StreamId,
        end_stream: bool,
    ) -> Result<Option<Opened>, Error> {
        self.last_stream = id.get();
        if self.going_away.is_some() {
            return Ok(None);
        }
        if self.streams.len() >= self.config.max_concurrent_streams as usize {
            let violation = Violation::TooManyStreams;
            return Ok(self.reset_quietly(id, ErrorCode::REFUSED_STREAM, violation));
        }
        let length = match self
            .fields
            .request_error(self.config.enable_connect_protocol)
        {
            Some(rule) => Err(rule),
            None => declared_length(self.fields.content_length(), end_stream),
        };
        let length = match length {
            Ok(length) => length,
            Err(rule) => {
                let violation = Violation::Malformed(rule);
                return Ok(self.reset_quietly(id, ErrorCode::PROTOCOL_ERROR, violation));
            }
        };
        self.open_stream(id);
        self.head_received(id, length, end_stream)?;
        Ok(Some(Opened::Request { end_stream }))
    }

    /// Sends an informational (1xx) response head on `stream`, before its final one: `103
    /// Early Hints`, say. The stream stays open for more heads and the final response.
    ///
    /// # Errors
    ///
    /// [`SendError::NotInformational`] for a status outside `100..=199`, or `101`, which
    /// HTTP/2 has no use for (section 8.6); otherwise as [`send_response`](Self::send_response).
    pub fn send_informational<'f>(
        &mut self,
        stream: StreamId,
        status: u16,
        fields: impl IntoIterator<Item = (&'f [u8], &'f [u8])>,
    ) -> Result<(), SendError> {
        if !(100..=199).contains(&status) || status == 101 {
            return Err(SendError::NotInformational(status));
        }
        if self.sendable(stream)?.head_sent {
            return Err(SendError::AlreadySent(stream));
        }
        self.encode_block(&[(b":status", &status_digits(status))], fields);
        self.send_block(stream, false);
        Ok(())
    }

    /// Sends the response head on `stream`: `status` and `fields` (names lowercased here;
    /// HTTP/1.1's connection-specific fields, which HTTP/2 forbids, left out).
    /// `end_stream`: no body follows.
    pub fn send_response<'f>(
        &mut self,
        stream: StreamId,
        status: u16,
        fields: impl IntoIterator<Item = (&'f [u8], &'f [u8])>,
        end_stream: bool,
    ) -> Result<(), SendError> {
        let s = self.sendable(stream)?;
        if s.head_sent {
            return Err(SendError::AlreadySent(stream));
        }
        s.head_sent = true;
        let status = status_digits(status.clamp(100, 999));
        self.encode_block(&[(b":status", &status)], fields);
        self.send_block(stream, end_stream);
        Ok(())
    }
}
