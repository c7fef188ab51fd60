//! Server-sent events read from a response's pieces, for both drivers: where the reader is
//! in the piece the response handed out last, which the response can hand out again.

use ringwire_sse::{Limits, Message, Parser, Step};

use crate::Error;

/// The parser, and how far into the response's last piece it has read.
#[derive(Debug)]
pub(crate) struct Cursor {
    parser: Parser,
    /// How much of the piece the response handed out last the parser has taken.
    at: usize,
    /// A piece was taken since the reader was made (an earlier one is not its to read).
    started: bool,
}

impl Cursor {
    pub(crate) fn new(limits: Limits) -> Self {
        Cursor {
            parser: Parser::new(limits),
            at: 0,
            started: false,
        }
    }

    /// The next event of `handed`, the response's last piece again; `None` once it holds no
    /// more (the rest of it kept), and the next piece is to be taken.
    pub(crate) fn step<'a>(
        &'a mut self,
        handed: Option<&'a [u8]>,
    ) -> Result<Option<Message<'a>>, Error> {
        if !self.started {
            return Ok(None);
        }
        let rest = handed
            .unwrap_or_default()
            .get(self.at..)
            .unwrap_or_default();
        match self.parser.next(rest)? {
            Step::Message(message, used) => {
                self.at += used;
                Ok(Some(message))
            }
            Step::Need => Ok(None),
        }
    }

    /// The response is about to hand out its next piece.
    pub(crate) fn next_piece(&mut self) {
        self.at = 0;
        self.started = true;
    }

    pub(crate) fn parser(&self) -> &Parser {
        &self.parser
    }
}

/// The accessors both drivers' `Events` share.
macro_rules! stream_state {
    () => {
        /// The last `id` the stream gave (empty if none): what a reconnection sends as
        /// `Last-Event-ID`.
        #[must_use]
        pub fn last_event_id(&self) -> &str {
            self.cursor.parser().last_event_id()
        }

        /// The reconnection time the stream asked for (`retry`), in milliseconds.
        #[must_use]
        pub fn retry(&self) -> Option<u64> {
            self.cursor.parser().retry()
        }

        /// The reader of events no longer than `limits` say (1 MiB each by default).
        #[must_use]
        pub fn with_limits(self, limits: ringwire_sse::Limits) -> Self {
            Self {
                cursor: crate::events::Cursor::new(limits),
                ..self
            }
        }
    };
}
pub(crate) use stream_state;
