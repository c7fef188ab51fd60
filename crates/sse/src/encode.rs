//! Writing events for a streamed body.

use std::fmt;

/// An event to send: its data, and optionally its type, id and the reconnection time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Event<'a> {
    data: &'a str,
    event: Option<&'a str>,
    id: Option<&'a str>,
    retry: Option<u64>,
}

/// An event field that cannot be sent as it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EncodeError {
    /// A CR or LF in the event type or id (data may hold any: each line is sent as a `data`
    /// line); a NUL in the id, which the reader would ignore.
    BadField(&'static str),
}

impl fmt::Display for EncodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EncodeError::BadField(field) => {
                write!(f, "the event's {field} holds a line break or NUL")
            }
        }
    }
}

impl std::error::Error for EncodeError {}

impl<'a> Event<'a> {
    /// An event of type `message` carrying `data` (split at its line breaks into `data`
    /// lines, which the reader joins with LF).
    #[must_use]
    pub fn new(data: &'a str) -> Self {
        Event {
            data,
            event: None,
            id: None,
            retry: None,
        }
    }

    /// Its type (`addEventListener(type)` in a browser).
    #[must_use]
    pub fn event(mut self, event: &'a str) -> Self {
        self.event = Some(event);
        self
    }

    /// Its id: what a client reconnecting sends back as `Last-Event-ID`.
    #[must_use]
    pub fn id(mut self, id: &'a str) -> Self {
        self.id = Some(id);
        self
    }

    /// The reconnection time the client is to use from now on, in milliseconds.
    #[must_use]
    pub fn retry(mut self, ms: u64) -> Self {
        self.retry = Some(ms);
        self
    }

    /// Appends the event to `out`.
    ///
    /// # Errors
    ///
    /// A type or id that holds a line break (or an id with a NUL); `out` is then unchanged.
    pub fn write(&self, out: &mut Vec<u8>) -> Result<(), EncodeError> {
        let breaks = |v: &str| v.bytes().any(|b| b == b'\r' || b == b'\n');
        if self.event.is_some_and(breaks) {
            return Err(EncodeError::BadField("type"));
        }
        if self.id.is_some_and(|id| breaks(id) || id.contains('\0')) {
            return Err(EncodeError::BadField("id"));
        }
        out.reserve(self.data.len() + 16);
        if let Some(event) = self.event {
            field(out, "event", event);
        }
        if let Some(id) = self.id {
            field(out, "id", id);
        }
        if let Some(ms) = self.retry {
            field(out, "retry", &ms.to_string());
        }
        let mut rest = self.data;
        loop {
            let eol = rest.find(['\r', '\n']);
            field(out, "data", &rest[..eol.unwrap_or(rest.len())]);
            let Some(eol) = eol else { break };
            let crlf = rest[eol..].starts_with("\r\n");
            rest = &rest[eol + if crlf { 2 } else { 1 }..];
        }
        out.push(b'\n');
        Ok(())
    }

    /// The event as bytes.
    ///
    /// # Errors
    ///
    /// As [`write`](Self::write).
    pub fn to_vec(&self) -> Result<Vec<u8>, EncodeError> {
        let mut out = Vec::new();
        self.write(&mut out)?;
        Ok(out)
    }
}

/// A comment line (`: text`), which readers skip: sent to keep an idle stream's connection
/// open through proxies. `text` is cut at its first line break.
pub fn comment(text: &str, out: &mut Vec<u8>) {
    let line = text.split(['\r', '\n']).next().unwrap_or_default();
    out.extend_from_slice(b": ");
    out.extend_from_slice(line.as_bytes());
    out.extend_from_slice(b"\n\n");
}

fn field(out: &mut Vec<u8>, name: &str, value: &str) {
    out.extend_from_slice(name.as_bytes());
    out.extend_from_slice(b": ");
    out.extend_from_slice(value.as_bytes());
    out.push(b'\n');
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Parser, Step};

    #[test]
    fn events_read_back_as_written() {
        let datas = ["", "one", "a\nb", "a\r\nb\rc\n", "\n", " lead", "x: y"];
        for data in datas {
            let event = Event::new(data).event("tick").id("42").retry(3000);
            let bytes = event.to_vec().unwrap();
            let mut parser = Parser::default();
            let Step::Message(m, used) = parser.next(&bytes).unwrap() else {
                panic!("{data:?}")
            };
            // Line breaks of any kind come back as LF.
            let want = data.replace("\r\n", "\n").replace('\r', "\n");
            assert_eq!((m.event, m.data, m.last_event_id), ("tick", &*want, "42"));
            assert_eq!(used, bytes.len());
            assert_eq!(parser.retry(), Some(3000));
        }
        assert_eq!(Event::new("hi").to_vec().unwrap(), b"data: hi\n\n");
        let mut out = Vec::new();
        comment("keep\nalive", &mut out);
        assert_eq!(out, b": keep\n\n");
        assert_eq!(Parser::default().next(&out).unwrap(), Step::Need);
    }

    #[test]
    fn line_breaks_in_type_or_id_are_refused() {
        let mut out = b"kept".to_vec();
        for (event, field) in [
            (Event::new("x").event("a\nb"), "type"),
            (Event::new("x").id("1\r"), "id"),
            (Event::new("x").id("1\0"), "id"),
        ] {
            assert_eq!(event.write(&mut out), Err(EncodeError::BadField(field)));
        }
        assert_eq!(out, b"kept");
    }
}
