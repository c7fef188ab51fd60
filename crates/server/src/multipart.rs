//! `multipart/form-data` request bodies (RFC 7578), as browsers and `curl -F` send them:
//! file uploads and forms. Read sans-IO: [`Multipart`] takes bytes and gives [`Event`]s,
//! each part's head and data borrowed from the bytes it was given, so a file part is never
//! copied by the reader. [`Request::multipart`](crate::Request::multipart) reads a
//! buffered body's fields in place; a handler that [streams its
//! body](crate::Handler::streams_body) reads it with [`Multipart::read`] as it arrives, of any
//! size, each piece where the connection lends it (only the few bytes a piece ends with that
//! could begin a delimiter are kept for the next).
//!
//! Strict where it matters and bounded: the boundary is the request's own (RFC 2046's
//! characters, 1 to 70 of them), a part's head must be whole within [`Limits::max_head`]
//! and name its field, a body has at most [`Limits::max_parts`] parts, and one that ends
//! before its closing delimiter is [`MultipartError::Truncated`]; each error is a 400.

use std::fmt;

use memchr::memmem;

/// Bounds on what one body may hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Parts in one body (Go's `net/http` allows 1,000).
    pub max_parts: usize,
    /// Bytes of one part's head: its header lines and the empty line after them.
    pub max_head: usize,
    /// Bytes of one field's data: a part without a file name, which a handler most likely
    /// keeps in memory (Go's `net/http` keeps 10 MB of them in all).
    pub max_field_len: u64,
    /// Bytes of one file's data: a part with a file name, which a handler reading it as it
    /// arrives may write anywhere. No bound by default: the body's is the server's.
    pub max_file_len: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_parts: 1000,
            max_head: 8 << 10,
            max_field_len: 1 << 20,
            max_file_len: u64::MAX,
        }
    }
}

/// Why a body is not the `multipart/form-data` its request says it is, or is more of it than
/// the limits take: the status to answer is [`status`](Self::status).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MultipartError {
    /// The request's `content-type` is not `multipart/form-data`, or has no `boundary`.
    NotMultipart,
    /// The `boundary` parameter is empty, longer than 70 bytes, or has a byte RFC 2046 does
    /// not allow in one.
    InvalidBoundary,
    /// A delimiter line not followed by CRLF (or `--`, the last one).
    MalformedDelimiter,
    /// A part's head with a line that is not `name: value`, or not UTF-8, or whose
    /// `content-disposition` is not `form-data` with a `name`.
    MalformedHead,
    /// A part's head longer than [`Limits::max_head`].
    HeadTooLarge,
    /// More parts than [`Limits::max_parts`].
    TooManyParts,
    /// A field's data longer than [`Limits::max_field_len`], or a file's than
    /// [`Limits::max_file_len`].
    PartTooLarge,
    /// The body ended before its closing delimiter.
    Truncated,
    /// The body could not be read ([`Multipart::read`]): the client sent malformed framing,
    /// went away or sent too slowly.
    Body(std::io::ErrorKind),
}

impl fmt::Display for MultipartError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::NotMultipart => "not multipart/form-data with a boundary",
            Self::InvalidBoundary => "invalid multipart boundary",
            Self::MalformedDelimiter => "malformed multipart delimiter line",
            Self::MalformedHead => "malformed multipart part head",
            Self::HeadTooLarge => "multipart part head too large",
            Self::TooManyParts => "too many multipart parts",
            Self::PartTooLarge => "multipart part too large",
            Self::Truncated => "multipart body ended before its closing delimiter",
            Self::Body(kind) => return write!(f, "multipart body not read: {kind}"),
        })
    }
}

impl MultipartError {
    /// The status to answer: `413 Content Too Large` for more than the limits take, `400 Bad
    /// Request` for the rest.
    #[must_use]
    pub fn status(&self) -> u16 {
        match self {
            Self::TooManyParts | Self::PartTooLarge => 413,
            _ => 400,
        }
    }
}

impl std::error::Error for MultipartError {}

/// What the reader found next.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event<'a> {
    /// A part begins (the one before it, if any, is whole).
    Part(PartHead<'a>),
    /// Bytes of the current part's data, in order; a part may have none or many of these.
    Data(&'a [u8]),
    /// The closing delimiter: the last part is whole. Whatever follows is ignored.
    End,
}

/// A part's head: which field it is, and for a file its name and type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PartHead<'a> {
    /// The field's `name`, as sent (browsers percent-encode `"`, CR and LF in it; curl
    /// escapes `"` with a backslash, left in).
    pub name: &'a str,
    /// A file's `filename`, as sent, if the part is a file.
    pub filename: Option<&'a str>,
    /// The part's `content-type`, if given (`text/plain` by default).
    pub content_type: Option<&'a str>,
    /// Every header line of the head, CRLF-separated, for fields the reader does not pick
    /// out.
    pub fields: &'a str,
}

/// The reader: where in the body it is.
#[derive(Debug, Clone)]
pub struct Multipart {
    /// `\r\n--` and the boundary: what ends a part's data.
    delimiter: Box<[u8]>,
    finder: memmem::Finder<'static>,
    limits: Limits,
    state: State,
    parts: usize,
    /// Bytes of a head already searched for its end, when it comes in pieces.
    head_scanned: usize,
    /// How much more data the part being read may have.
    part_left: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// Before the first delimiter: the preamble, ignored; `true` once some of it was.
    Preamble(bool),
    /// Right after a delimiter: `--` closes the body, else padding and CRLF start a part.
    Delimited,
    Head,
    Data,
    /// After the closing delimiter: the epilogue, ignored.
    Done,
}

/// The longest padding (spaces and tabs) allowed after a delimiter before its CRLF.
const MAX_PADDING: usize = 64;

/// Within this many bytes, a delimiter is looked for CR by CR.
const SHORT: usize = 256;

impl Multipart {
    /// A reader for a body whose request has `content_type` (`multipart/form-data;
    /// boundary=...`).
    ///
    /// # Errors
    ///
    /// [`MultipartError::NotMultipart`] or [`MultipartError::InvalidBoundary`].
    pub fn new(content_type: &[u8], limits: Limits) -> Result<Multipart, MultipartError> {
        let boundary = boundary(content_type)?;
        let mut delimiter = Vec::with_capacity(boundary.len() + 4);
        delimiter.extend_from_slice(b"\r\n--");
        delimiter.extend_from_slice(boundary);
        let finder = memmem::Finder::new(&delimiter).into_owned();
        Ok(Multipart {
            delimiter: delimiter.into(),
            finder,
            limits,
            state: State::Preamble(false),
            parts: 0,
            head_scanned: 0,
            part_left: 0,
        })
    }

    /// Reads from `buf`, the body's bytes from where the last call's `consumed` left off
    /// (`eof`: the body ends with them). Returns how many bytes of `buf` are done with and
    /// the next event, or `None` when the reader needs more than `buf` to go on (then
    /// call again with more). Bytes not consumed must be given again.
    ///
    /// # Errors
    ///
    /// A [`MultipartError`]; the reader is of no use after one.
    pub fn next<'a>(
        &mut self,
        buf: &'a [u8],
        eof: bool,
    ) -> Result<(usize, Option<Event<'a>>), MultipartError> {
        let mut consumed = 0;
        loop {
            let rest = &buf[consumed..];
            match self.state {
                State::Preamble(skipped) => {
                    // The first delimiter may open the body, without the CRLF before it.
                    let first = &self.delimiter[2..];
                    if !skipped && rest.len() < first.len() && first.starts_with(rest) && !eof {
                        return Ok((consumed, None));
                    }
                    if !skipped && rest.starts_with(first) {
                        consumed += first.len();
                    } else if let Some(at) = self.find_delimiter(rest) {
                        consumed += at + self.delimiter.len();
                    } else if eof {
                        return Err(MultipartError::Truncated);
                    } else {
                        let skip = self.held_back(rest);
                        if skip > 0 {
                            self.state = State::Preamble(true);
                        }
                        return Ok((consumed + skip, None));
                    }
                    self.state = State::Delimited;
                }
                State::Delimited => {
                    if rest.starts_with(b"--") {
                        self.state = State::Done;
                        return Ok((consumed + 2, Some(Event::End)));
                    }
                    let padding = rest
                        .iter()
                        .take_while(|&&b| b == b' ' || b == b'\t')
                        .count();
                    if padding > MAX_PADDING {
                        return Err(MultipartError::MalformedDelimiter);
                    }
                    match &rest[padding..] {
                        [b'\r', b'\n', ..] => {
                            consumed += padding + 2;
                            self.state = State::Head;
                            self.head_scanned = 0;
                        }
                        [] | [b'\r'] | [b'-'] if !eof => return Ok((consumed, None)),
                        [] | [b'\r'] | [b'-'] => return Err(MultipartError::Truncated),
                        _ => return Err(MultipartError::MalformedDelimiter),
                    }
                }
                State::Head => {
                    let len = match self.head_end(rest)? {
                        Some(len) => len,
                        None if eof => return Err(MultipartError::Truncated),
                        None => return Ok((consumed, None)),
                    };
                    let head = &rest[..len];
                    self.parts += 1;
                    if self.parts > self.limits.max_parts {
                        return Err(MultipartError::TooManyParts);
                    }
                    let part = part_head(head)?;
                    self.part_left = match part.filename {
                        Some(_) => self.limits.max_file_len,
                        None => self.limits.max_field_len,
                    };
                    self.state = State::Data;
                    return Ok((consumed + len, Some(Event::Part(part))));
                }
                State::Data => {
                    if let Some(at) = self.find_delimiter(rest) {
                        if at > 0 {
                            self.take_data(at)?;
                            return Ok((consumed + at, Some(Event::Data(&rest[..at]))));
                        }
                        consumed += self.delimiter.len();
                        self.state = State::Delimited;
                        continue;
                    }
                    if eof {
                        // Too large is known before cut short, however the body came.
                        self.take_data(rest.len())?;
                        return Err(MultipartError::Truncated);
                    }
                    let safe = self.held_back(rest);
                    self.take_data(safe)?;
                    let data = (safe > 0).then(|| Event::Data(&rest[..safe]));
                    return Ok((consumed + safe, data));
                }
                State::Done => return Ok((buf.len(), None)),
            }
        }
    }

    /// Counts `len` bytes of the part's data against its limit.
    fn take_data(&mut self, len: usize) -> Result<(), MultipartError> {
        let len = u64::try_from(len).unwrap_or(u64::MAX);
        self.part_left = self
            .part_left
            .checked_sub(len)
            .ok_or(MultipartError::PartTooLarge)?;
        Ok(())
    }

    /// Feeds `piece`, the body's next bytes (`eof`: its last), after the bytes `carry` kept
    /// of the pieces before; `on_event` gets every event they complete. Carried bytes are
    /// joined with only as much of the piece as settles them (a delimiter's length, more
    /// for a head the piece before cut), and the rest of the piece is read where it lies.
    /// Keeps in `carry` what the next piece must follow. Returns whether the body ended
    /// (its closing delimiter read).
    ///
    /// # Errors
    ///
    /// As [`next`](Self::next).
    pub fn feed(
        &mut self,
        carry: &mut Vec<u8>,
        mut piece: &[u8],
        eof: bool,
        on_event: &mut impl FnMut(Event<'_>),
    ) -> Result<bool, MultipartError> {
        while !carry.is_empty() {
            let carried = carry.len();
            let take = piece.len().min(carried.max(SHORT));
            carry.extend_from_slice(&piece[..take]);
            let (at, ended) = self.events(carry, eof && take == piece.len(), on_event)?;
            if ended {
                carry.clear();
                return Ok(true);
            }
            if at >= carried {
                // Past the carried bytes: the piece is read in place from there.
                carry.clear();
                piece = &piece[at - carried..];
                break;
            }
            carry.drain(..at);
            piece = &piece[take..];
            if piece.is_empty() {
                return Ok(false);
            }
        }
        let (at, ended) = self.events(piece, eof, on_event)?;
        if !ended {
            carry.extend_from_slice(&piece[at..]);
        }
        Ok(ended)
    }

    /// Every event `buf` completes, to `on_event`: how much of `buf` they took, and whether
    /// the body ended.
    fn events(
        &mut self,
        buf: &[u8],
        eof: bool,
        on_event: &mut impl FnMut(Event<'_>),
    ) -> Result<(usize, bool), MultipartError> {
        let mut at = 0;
        loop {
            let (used, event) = self.next(&buf[at..], eof)?;
            at += used;
            match event {
                Some(Event::End) => {
                    on_event(Event::End);
                    return Ok((at, true));
                }
                Some(event) => on_event(event),
                None => return Ok((at, false)),
            }
        }
    }

    /// Reads a streamed body (a handler's [`BodyReader`](crate::BodyReader)) to its closing
    /// delimiter, each piece where the connection lends it ([`feed`](Self::feed));
    /// `on_event` gets every event. What follows the closing delimiter is left unread.
    ///
    /// # Errors
    ///
    /// As [`next`](Self::next), or [`MultipartError::Body`].
    pub async fn read(
        &mut self,
        body: &mut crate::BodyReader<'_>,
        mut on_event: impl FnMut(Event<'_>),
    ) -> Result<(), MultipartError> {
        let mut carry = Vec::new();
        loop {
            let fed = body
                .with_chunk(|piece| self.feed(&mut carry, piece, false, &mut on_event))
                .await
                .map_err(|e| MultipartError::Body(e.kind()))?;
            match fed {
                Some(Ok(true)) => return Ok(()),
                Some(Ok(false)) => {}
                Some(Err(e)) => return Err(e),
                None => {
                    self.feed(&mut carry, &[], true, &mut on_event)?;
                    return Ok(());
                }
            }
        }
    }

    /// Where the first delimiter in `rest` begins. A form's fields are short: within their
    /// first bytes a look at each CR costs less than starting the vector search, which wins
    /// on a file's data, past them.
    fn find_delimiter(&self, rest: &[u8]) -> Option<usize> {
        let near = rest.len().min(SHORT);
        memchr::memchr_iter(b'\r', &rest[..near])
            .find(|&at| rest[at..].starts_with(&self.delimiter))
            .or_else(|| Some(near + self.finder.find(&rest[near..])?))
    }

    /// How many leading bytes of `rest`, which holds no whole delimiter, cannot be the
    /// start of one: all but a tail that a delimiter could begin with.
    fn held_back(&self, rest: &[u8]) -> usize {
        let window = rest.len().saturating_sub(self.delimiter.len() - 1);
        let tail = &rest[window..];
        memchr::memchr_iter(b'\r', tail)
            .find(|&at| self.delimiter.starts_with(&tail[at..]))
            .map_or(rest.len(), |at| window + at)
    }

    /// Where the head at the start of `rest` ends (past its empty line), if it is whole;
    /// the search goes on from where the last call stopped, and not past the limit.
    fn head_end(&mut self, rest: &[u8]) -> Result<Option<usize>, MultipartError> {
        // A head with no fields is its empty line alone.
        if rest.starts_with(b"\r\n") {
            return Ok(Some(2));
        }
        let max = self.limits.max_head;
        let window = &rest[..rest.len().min(max)];
        let from = self.head_scanned.saturating_sub(3).min(window.len());
        // A head has a CR per line: each is looked at.
        let end = memchr::memchr_iter(b'\r', &window[from..])
            .find(|&at| window[from + at..].starts_with(b"\r\n\r\n"));
        match end {
            Some(at) => Ok(Some(from + at + 4)),
            None if rest.len() >= max => Err(MultipartError::HeadTooLarge),
            None => {
                self.head_scanned = rest.len();
                Ok(None)
            }
        }
    }
}

/// The `boundary` parameter of a `multipart/form-data` content type.
fn boundary(content_type: &[u8]) -> Result<&[u8], MultipartError> {
    let mut params = content_type.split(|&b| b == b';');
    let essence = params.next().unwrap_or_default().trim_ascii();
    if !essence.eq_ignore_ascii_case(b"multipart/form-data") {
        return Err(MultipartError::NotMultipart);
    }
    let value = params
        .find_map(|param| {
            let (name, value) = split_once(param, b'=')?;
            name.trim_ascii()
                .eq_ignore_ascii_case(b"boundary")
                .then(|| value.trim_ascii())
        })
        .ok_or(MultipartError::NotMultipart)?;
    let value = value
        .strip_prefix(b"\"")
        .and_then(|v| v.strip_suffix(b"\""))
        .unwrap_or(value);
    // RFC 2046's bchars; a space only inside, never last.
    let allowed = |b: &u8| b.is_ascii_alphanumeric() || b"'()+_,-./:=? ".contains(b);
    if value.is_empty() || value.len() > 70 || !value.iter().all(allowed) || value.ends_with(b" ") {
        return Err(MultipartError::InvalidBoundary);
    }
    Ok(value)
}

/// A part's head: its header lines, then the empty line.
fn part_head(head: &[u8]) -> Result<PartHead<'_>, MultipartError> {
    let fields =
        std::str::from_utf8(&head[..head.len() - 2]).map_err(|_| MultipartError::MalformedHead)?;
    let fields = fields.strip_suffix("\r\n").unwrap_or(fields);
    let mut disposition = None;
    let mut content_type = None;
    // Lines end with CRLF (the last one's taken off above): a bare CR or LF is malformed.
    let mut lines = fields.split('\n').peekable();
    while let Some(piece) = lines.next() {
        let line = match (lines.peek().is_some(), piece.strip_suffix('\r')) {
            (true, Some(line)) => line,
            (false, None) => piece,
            _ => return Err(MultipartError::MalformedHead),
        };
        if line.is_empty() {
            continue;
        }
        if line.contains('\r') {
            return Err(MultipartError::MalformedHead);
        }
        let (name, value) = line.split_once(':').ok_or(MultipartError::MalformedHead)?;
        if name.is_empty() || name.bytes().any(|b| b.is_ascii_whitespace()) {
            return Err(MultipartError::MalformedHead);
        }
        let value = value.trim_matches([' ', '\t']);
        if name.eq_ignore_ascii_case("content-disposition") {
            disposition = Some(value);
        } else if name.eq_ignore_ascii_case("content-type") {
            content_type = Some(value);
        }
    }
    let (name, filename) = disposition
        .and_then(form_data)
        .ok_or(MultipartError::MalformedHead)?;
    Ok(PartHead {
        name,
        filename,
        content_type,
        fields,
    })
}

/// The `name` and `filename` of a `form-data` disposition.
fn form_data(disposition: &str) -> Option<(&str, Option<&str>)> {
    let (kind, mut rest) = disposition.split_once(';').unwrap_or((disposition, ""));
    if !kind.trim().eq_ignore_ascii_case("form-data") {
        return None;
    }
    let (mut name, mut filename) = (None, None);
    while !rest.is_empty() {
        let (param, value, after) = parameter(rest)?;
        if param.eq_ignore_ascii_case("name") {
            name = Some(value);
        } else if param.eq_ignore_ascii_case("filename") {
            filename = Some(value);
        }
        rest = after;
    }
    Some((name?, filename))
}

/// The first `; name=value` of `rest` (the value a token or a quoted string, quotes off)
/// and what follows it.
fn parameter(rest: &str) -> Option<(&str, &str, &str)> {
    let rest = rest.trim_start_matches([' ', '\t', ';']);
    if rest.is_empty() {
        return Some(("", "", ""));
    }
    let (name, value) = rest.split_once('=')?;
    let value = value.trim_start_matches([' ', '\t']);
    let (value, after) = match value.strip_prefix('"') {
        Some(quoted) => {
            // Up to the first quote not escaped by a backslash.
            let bytes = quoted.as_bytes();
            let end = (0..bytes.len()).find(|&i| bytes[i] == b'"' && !escaped(bytes, i))?;
            (&quoted[..end], &quoted[end + 1..])
        }
        None => value.split_at(value.find(';').unwrap_or(value.len())),
    };
    Some((name.trim(), value.trim_end_matches([' ', '\t']), after))
}

/// Whether the byte at `at` follows an odd number of backslashes.
fn escaped(bytes: &[u8], at: usize) -> bool {
    bytes[..at]
        .iter()
        .rev()
        .take_while(|&&b| b == b'\\')
        .count()
        % 2
        == 1
}

fn split_once(bytes: &[u8], at: u8) -> Option<(&[u8], &[u8])> {
    let i = memchr::memchr(at, bytes)?;
    Some((&bytes[..i], &bytes[i + 1..]))
}

/// One field of a buffered body, its data a slice of the body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Field<'a> {
    /// The part's head: the field's name, a file's name and type.
    pub head: PartHead<'a>,
    /// The part's data.
    pub data: &'a [u8],
}

/// The fields of a whole body, in order: what [`Request::multipart`](crate::Request::multipart)
/// gives. Ends after the closing delimiter, or at the first error.
#[derive(Debug, Clone)]
pub struct Fields<'a> {
    reader: Multipart,
    body: &'a [u8],
    /// A part's head read, its data not yet.
    head: Option<PartHead<'a>>,
    done: bool,
}

impl<'a> Fields<'a> {
    /// The fields of `body`, whose request has `content_type`.
    ///
    /// # Errors
    ///
    /// As [`Multipart::new`].
    pub fn new(
        content_type: &[u8],
        body: &'a [u8],
        limits: Limits,
    ) -> Result<Fields<'a>, MultipartError> {
        Ok(Fields {
            reader: Multipart::new(content_type, limits)?,
            body,
            head: None,
            done: false,
        })
    }

    fn step(&mut self) -> Result<Option<Field<'a>>, MultipartError> {
        // With the whole body in hand, a part's data comes in one piece.
        let mut data: &'a [u8] = &[];
        loop {
            let (used, event) = self.reader.next(self.body, true)?;
            self.body = &self.body[used..];
            match event {
                Some(Event::Data(bytes)) => data = bytes,
                Some(Event::Part(next)) => {
                    if let Some(head) = self.head.replace(next) {
                        return Ok(Some(Field { head, data }));
                    }
                }
                Some(Event::End) | None => {
                    self.done = true;
                    return Ok(self.head.take().map(|head| Field { head, data }));
                }
            }
        }
    }
}

impl<'a> Iterator for Fields<'a> {
    type Item = Result<Field<'a>, MultipartError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        let step = self.step();
        if step.is_err() {
            self.done = true;
        }
        step.transpose()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A field as the tests compare it: name, file name, type, data.
    type Seen = (String, Option<String>, Option<String>, Vec<u8>);

    const TYPE: &[u8] = b"multipart/form-data; boundary=------------------------abcdef0123";

    /// What `curl -F 'a=1' -F 'b=' -F 'f=@x.txt;type=text/x'` sends, with a preamble, an
    /// epilogue, and file data that holds a near-delimiter.
    const BODY: &[u8] = b"preamble\r\n\
--------------------------abcdef0123\r\n\
Content-Disposition: form-data; name=\"a\"\r\n\
\r\n\
1\r\n\
--------------------------abcdef0123\r\n\
Content-Disposition: form-data; name=\"b\"\r\n\
\r\n\
\r\n\
--------------------------abcdef0123  \r\n\
Content-Disposition: form-data; name=\"f\"; filename=\"x.txt\"\r\n\
Content-Type: text/x\r\n\
\r\n\
line\r\n--------------------------abcdef012\r\r\n--\r\n\
--------------------------abcdef0123--\r\n\
epilogue";

    fn owned(fields: impl Iterator<Item = Result<Field<'static>, MultipartError>>) -> Vec<Seen> {
        fields
            .map(|f| {
                let f = f.unwrap();
                (
                    f.head.name.to_owned(),
                    f.head.filename.map(str::to_owned),
                    f.head.content_type.map(str::to_owned),
                    f.data.to_vec(),
                )
            })
            .collect()
    }

    fn expected() -> Vec<Seen> {
        vec![
            ("a".into(), None, None, b"1".to_vec()),
            ("b".into(), None, None, Vec::new()),
            (
                "f".into(),
                Some("x.txt".into()),
                Some("text/x".into()),
                b"line\r\n--------------------------abcdef012\r\r\n--".to_vec(),
            ),
        ]
    }

    #[test]
    fn a_whole_body_gives_its_fields_in_place() {
        let fields = Fields::new(TYPE, BODY, Limits::default()).unwrap();
        assert_eq!(owned(fields), expected());
        // Three parts are within a limit of three.
        let three = Limits {
            max_parts: 3,
            ..Limits::default()
        };
        assert_eq!(owned(Fields::new(TYPE, BODY, three).unwrap()), expected());
        let f = Fields::new(TYPE, BODY, Limits::default())
            .unwrap()
            .nth(2)
            .unwrap()
            .unwrap();
        assert!(
            BODY.as_ptr_range().contains(&f.data.as_ptr()),
            "not a slice of the body"
        );
        assert_eq!(
            f.head.fields,
            "Content-Disposition: form-data; name=\"f\"; filename=\"x.txt\"\r\nContent-Type: text/x"
        );
    }

    /// A field's data over `max_field_len`, or a file's over `max_file_len`: 413, read whole
    /// or fed in pieces of any size, also when the body is cut short after it.
    #[test]
    fn parts_over_their_limits_are_refused() {
        // Field `a` has 1 byte, `b` none; file `f` 46.
        let limits = |field: u64, file: u64| Limits {
            max_field_len: field,
            max_file_len: file,
            ..Limits::default()
        };
        let cut = &BODY[..BODY.len() - 60];
        for (body, field, file, refused) in [
            (BODY, 1, 46, false),
            (BODY, 0, 46, true),
            (BODY, 1, 45, true),
            (cut, 1, 30, true),
        ] {
            let whole = Fields::new(TYPE, body, limits(field, file))
                .unwrap()
                .find_map(Result::err);
            let want = refused.then_some(MultipartError::PartTooLarge);
            let want = want.or((body == cut).then_some(MultipartError::Truncated));
            assert_eq!(whole, want, "{field} {file}");
            for size in 1..=body.len() {
                let mut reader = Multipart::new(TYPE, limits(field, file)).unwrap();
                let mut carry = Vec::new();
                let mut pieces = body.chunks(size).peekable();
                let mut fed = None;
                while let Some(piece) = pieces.next() {
                    let eof = pieces.peek().is_none();
                    match reader.feed(&mut carry, piece, eof, &mut |_| {}) {
                        Ok(true) => break,
                        Ok(false) => {}
                        Err(e) => {
                            fed = Some(e);
                            break;
                        }
                    }
                }
                assert_eq!(fed, want, "{field} {file}, pieces of {size}");
            }
        }
        assert_eq!(MultipartError::PartTooLarge.status(), 413);
        assert_eq!(MultipartError::Truncated.status(), 400);
    }

    /// The body fed in pieces of every size, the unconsumed bytes kept and given again.
    #[test]
    fn pieces_of_any_size_give_the_same_fields() {
        for size in 1..=BODY.len() {
            let mut reader = Multipart::new(TYPE, Limits::default()).unwrap();
            let (mut pending, mut fields) = (Vec::new(), Vec::new());
            let mut ended = false;
            for (i, piece) in BODY.chunks(size).enumerate() {
                pending.extend_from_slice(piece);
                let eof = (i + 1) * size >= BODY.len();
                loop {
                    let (used, event) = reader.next(&pending, eof).unwrap();
                    let event = event.map(|e| match e {
                        Event::Part(h) => Ok((
                            h.name.to_owned(),
                            h.filename.map(str::to_owned),
                            h.content_type.map(str::to_owned),
                        )),
                        Event::Data(d) => Err(Some(d.to_vec())),
                        Event::End => Err(None),
                    });
                    pending.drain(..used);
                    match event {
                        None => break,
                        Some(Ok((name, file, kind))) => fields.push((name, file, kind, Vec::new())),
                        Some(Err(Some(data))) => fields.last_mut().unwrap().3.extend(data),
                        Some(Err(None)) => ended = true,
                    }
                }
            }
            assert!(ended, "pieces of {size}");
            assert_eq!(fields, expected(), "pieces of {size}");
        }
    }

    /// `feed`: the body in pieces of every size, read where they lie, only what a piece
    /// leaves over carried to the next.
    #[test]
    fn fed_pieces_of_any_size_give_the_same_fields() {
        for size in 1..=BODY.len() {
            let mut reader = Multipart::new(TYPE, Limits::default()).unwrap();
            let (mut carry, mut fields, mut ended) = (Vec::new(), Vec::<Seen>::new(), false);
            let mut on_event = |event: Event<'_>| match event {
                Event::Part(h) => fields.push((
                    h.name.to_owned(),
                    h.filename.map(str::to_owned),
                    h.content_type.map(str::to_owned),
                    Vec::new(),
                )),
                Event::Data(d) => fields.last_mut().unwrap().3.extend_from_slice(d),
                Event::End => ended = true,
            };
            let mut pieces = BODY.chunks(size).peekable();
            while let Some(piece) = pieces.next() {
                let eof = pieces.peek().is_none();
                if reader.feed(&mut carry, piece, eof, &mut on_event).unwrap() {
                    break;
                }
                assert!(
                    carry.len() < 200,
                    "pieces of {size}: {} carried",
                    carry.len()
                );
            }
            assert!(ended, "pieces of {size}");
            assert_eq!(fields, expected(), "pieces of {size}");
        }
    }

    /// A delimiter counts at the very start of the body, else only after a CRLF: one in the
    /// preamble's middle is preamble, wherever the pieces break.
    #[test]
    fn a_delimiter_inside_the_preamble_is_preamble() {
        let t = b"multipart/form-data; boundary=b";
        let body: &[u8] = b"pre--b\r\ncontent-disposition: form-data; name=fake\r\n\r\nx\r\n\
--b\r\ncontent-disposition: form-data; name=real\r\n\r\ny\r\n--b--";
        for split in 0..body.len() {
            let mut reader = Multipart::new(t, Limits::default()).unwrap();
            let (mut pending, mut names) = (Vec::new(), Vec::new());
            for (piece, eof) in [(&body[..split], false), (&body[split..], true)] {
                pending.extend_from_slice(piece);
                loop {
                    let (used, event) = reader.next(&pending, eof).unwrap();
                    let more = event.is_some();
                    if let Some(Event::Part(head)) = event {
                        names.push(head.name.to_owned());
                    }
                    pending.drain(..used);
                    if !more {
                        break;
                    }
                }
            }
            assert_eq!(names, ["real"], "split at {split}");
        }
    }

    #[test]
    fn content_types_and_boundaries() {
        let ok = |t: &[u8]| Multipart::new(t, Limits::default()).map(|m| m.delimiter[4..].to_vec());
        assert_eq!(
            ok(b"Multipart/Form-Data; Boundary=\"a b\""),
            Ok(b"a b".to_vec())
        );
        assert_eq!(
            ok(b"multipart/form-data;charset=x;boundary=z"),
            Ok(b"z".to_vec())
        );
        for (t, e) in [
            (&b"text/plain"[..], MultipartError::NotMultipart),
            (b"multipart/mixed; boundary=x", MultipartError::NotMultipart),
            (b"multipart/form-data", MultipartError::NotMultipart),
            (
                b"multipart/form-data; boundary=",
                MultipartError::InvalidBoundary,
            ),
            (
                b"multipart/form-data; boundary=\"a \"",
                MultipartError::InvalidBoundary,
            ),
            (
                b"multipart/form-data; boundary=a\x01",
                MultipartError::InvalidBoundary,
            ),
        ] {
            assert_eq!(ok(t), Err(e), "{}", String::from_utf8_lossy(t));
        }
        let long = [b'x'; 71];
        let t = [&b"multipart/form-data; boundary="[..], &long].concat();
        assert_eq!(ok(&t), Err(MultipartError::InvalidBoundary));
        assert!(ok(&t[..t.len() - 1]).is_ok());
    }

    /// Bad bodies: the error each gives, whole or a byte at a time.
    #[test]
    fn bad_bodies_give_typed_errors() {
        let t = b"multipart/form-data; boundary=b";
        let part = |head: &str| format!("--b\r\n{head}\r\n\r\nx\r\n--b--\r\n");
        // Four empty parts.
        let many = "--b\r\ncontent-disposition: form-data; name=n\r\n\r\n\r\n".repeat(4) + "--b--";
        let big = part(&format!(
            "content-disposition: form-data; name=n\r\nx: {}",
            "y".repeat(100)
        ));
        let cases: Vec<(String, MultipartError)> = vec![
            (
                "--b\r\ncontent-disposition: form-data; name=n\r\n\r\nx".into(),
                MultipartError::Truncated,
            ),
            (
                "--b\r\ncontent-disposition: form-data; name=n\r\n".into(),
                MultipartError::Truncated,
            ),
            ("no delimiter at all".into(), MultipartError::Truncated),
            ("--b".into(), MultipartError::Truncated),
            ("--bx\r\n".into(), MultipartError::MalformedDelimiter),
            (
                format!("--b{}\r\n", " ".repeat(65)),
                MultipartError::MalformedDelimiter,
            ),
            (
                part("content-disposition: form-data"),
                MultipartError::MalformedHead,
            ),
            (
                part("content-disposition: attachment; name=n"),
                MultipartError::MalformedHead,
            ),
            (part("x-no-disposition: 1"), MultipartError::MalformedHead),
            (
                part("content-disposition form-data; name=n"),
                MultipartError::MalformedHead,
            ),
            (
                part("content-disposition: form-data; name=n\r\n folded"),
                MultipartError::MalformedHead,
            ),
            (
                part("content-disposition: form-data; name=n\nx: 1"),
                MultipartError::MalformedHead,
            ),
            (
                part("content-disposition: form-data; name=n\rx: 1"),
                MultipartError::MalformedHead,
            ),
            (
                part("content-disposition: form-data; name=\"n"),
                MultipartError::MalformedHead,
            ),
            (big, MultipartError::HeadTooLarge),
            (many, MultipartError::TooManyParts),
        ];
        let limits = Limits {
            max_parts: 3,
            max_head: 100,
            ..Limits::default()
        };
        for (body, error) in cases {
            let whole = Fields::new(t, body.as_bytes(), limits)
                .unwrap()
                .find_map(Result::err);
            assert_eq!(whole, Some(error.clone()), "{body:?}");
            let mut reader = Multipart::new(t, limits).unwrap();
            let mut pending = Vec::new();
            let mut got = None;
            'feed: for (i, &b) in body.as_bytes().iter().enumerate() {
                pending.push(b);
                loop {
                    match reader.next(&pending, i + 1 == body.len()) {
                        Err(e) => {
                            got = Some(e);
                            break 'feed;
                        }
                        Ok((used, event)) => {
                            let more = event.is_some();
                            pending.drain(..used);
                            if !more {
                                break;
                            }
                        }
                    }
                }
            }
            assert_eq!(got, Some(error), "{body:?} a byte at a time");
        }
        // A name in Latin-1, not UTF-8.
        let latin = b"--b\r\ncontent-disposition: form-data; name=\"\xe9\"\r\n\r\nx\r\n--b--";
        let err = Fields::new(t, latin, limits).unwrap().find_map(Result::err);
        assert_eq!(err, Some(MultipartError::MalformedHead));
    }

    #[test]
    fn dispositions_as_clients_send_them() {
        let head = |d: &str| {
            let h = format!("content-disposition: {d}\r\n\r\n");
            let part =
                part_head(h.as_bytes()).map(|p| (p.name.to_owned(), p.filename.map(str::to_owned)));
            part
        };
        let some = |n: &str, f: Option<&str>| Ok((n.to_owned(), f.map(str::to_owned)));
        assert_eq!(head("form-data; name=\"a\""), some("a", None));
        assert_eq!(
            head("Form-Data;name=a;filename=b.txt"),
            some("a", Some("b.txt"))
        );
        assert_eq!(
            head("form-data; name=\"a;b\"; filename=\"c d.txt\""),
            some("a;b", Some("c d.txt"))
        );
        // curl escapes a quote with a backslash; it is left in.
        assert_eq!(head(r#"form-data; name="a\"b""#), some(r#"a\"b"#, None));
        assert_eq!(
            head(r#"form-data; name="a\\"; filename="x""#),
            some(r"a\\", Some("x"))
        );
        assert_eq!(head("form-data; name=\"\"; "), some("", None));
    }
}
