//! A decoded header list, checked against HTTP/2's rules for requests, responses and trailers
//! (RFC 9113 section 8).

use crate::hpack::Field;

/// Where one field's name and value lie in [`FieldList::bytes`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Span {
    name: (u32, u32),
    value: (u32, u32),
}

/// The fields of one header block, copied out of the decoder into storage the connection
/// reuses from block to block (HPACK hands out Huffman-decoded and indexed strings from its
/// own tables, which the next field may overwrite).
#[derive(Debug, Default)]
pub(crate) struct FieldList {
    bytes: Vec<u8>,
    spans: Vec<Span>,
    /// The regular fields start here; pseudo-header fields come before them.
    regular: usize,
    /// The first rule the block broke.
    malformed: Option<&'static str>,
    pseudo: [Option<usize>; 6],
    content_length: Option<u64>,
}

/// Which part of a message a header block is: each allows its own pseudo-header fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Part {
    /// A request head: `:method`, `:scheme`, `:authority`, `:path` (section 8.3.1), and
    /// an extended `CONNECT`'s `:protocol` (RFC 8441).
    Request,
    /// A response head, interim or final: `:status` only (section 8.3.2).
    Response,
    /// Trailers: no pseudo-header field at all (section 8.1).
    Trailers,
}

/// The pseudo-header fields, in [`FieldList::pseudo`]'s order: the request's, the
/// response's, then RFC 8441's.
const PSEUDO: [&[u8]; 6] = [
    b":method",
    b":scheme",
    b":authority",
    b":path",
    b":status",
    b":protocol",
];
const METHOD: usize = 0;
const SCHEME: usize = 1;
const AUTHORITY: usize = 2;
const PATH: usize = 3;
const STATUS: usize = 4;
const PROTOCOL: usize = 5;

impl FieldList {
    /// Empties the list for the next block.
    pub(crate) fn clear(&mut self) {
        self.bytes.clear();
        self.spans.clear();
        self.regular = 0;
        self.malformed = None;
        self.pseudo = [None; 6];
        self.content_length = None;
    }

    /// Adds a decoded field, noting the first rule it breaks.
    pub(crate) fn push(&mut self, field: Field<'_>, part: Part) {
        let index = self.spans.len();
        let start = self.bytes.len() as u32;
        self.bytes.extend_from_slice(field.name);
        let mid = self.bytes.len() as u32;
        self.bytes.extend_from_slice(field.value);
        self.spans.push(Span {
            name: (start, mid),
            value: (mid, self.bytes.len() as u32),
        });
        if self.malformed.is_none() {
            if let Err(rule) = self.check(field, index, part) {
                self.malformed = Some(rule);
            }
        }
    }

    fn check(&mut self, field: Field<'_>, index: usize, part: Part) -> Result<(), &'static str> {
        let trailers = part == Part::Trailers;
        if field.name.first() == Some(&b':') {
            if trailers {
                return Err("a pseudo-header field in trailers");
            }
            if index != self.regular {
                return Err("a pseudo-header field after a regular one");
            }
            let slot = PSEUDO
                .iter()
                .position(|p| *p == field.name)
                .ok_or("an unknown pseudo-header field")?;
            match (part, slot) {
                // A request's `:status` is no pseudo-header field a request knows.
                (Part::Request, STATUS) => return Err("an unknown pseudo-header field"),
                (Part::Response, METHOD..=PATH | PROTOCOL) => {
                    return Err("a request pseudo-header field in a response")
                }
                _ => {}
            }
            if self.pseudo[slot].replace(index).is_some() {
                return Err("a repeated pseudo-header field");
            }
            self.regular = index + 1;
            return Ok(());
        }
        check_name(field.name)?;
        check_value(field.value)?;
        match field.name {
            b"connection" | b"proxy-connection" | b"keep-alive" | b"transfer-encoding"
            | b"upgrade" => Err("a connection-specific header field"),
            // Section 8.2.2: a request may carry TE, and only as "trailers".
            b"te" if part != Part::Request => Err("TE outside a request's head"),
            b"te" if field.value != b"trailers" => Err("TE other than \"trailers\""),
            b"content-length" if !trailers => {
                let len = parse_length(field.value).ok_or("an invalid content-length")?;
                match self.content_length.replace(len) {
                    Some(earlier) if earlier != len => Err("content-length values that differ"),
                    _ => Ok(()),
                }
            }
            _ => Ok(()),
        }
    }

    /// The first rule a request head broke, checked once the block is whole (section 8.3.1;
    /// an extended `CONNECT`, RFC 8441 section 4, only if `extended_connect`: this side
    /// advertised it).
    pub(crate) fn request_error(&self, extended_connect: bool) -> Option<&'static str> {
        if let Some(rule) = self.malformed {
            return Some(rule);
        }
        let method = self.pseudo_value(METHOD)?;
        if method.is_none() {
            return Some("no :method");
        }
        if self.pseudo[PROTOCOL].is_some() {
            if !extended_connect {
                return Some(":protocol without SETTINGS_ENABLE_CONNECT_PROTOCOL");
            }
            if method != Some(b"CONNECT") {
                return Some(":protocol in a request other than CONNECT");
            }
            if self.pseudo[AUTHORITY].is_none() {
                return Some("no :authority in an extended CONNECT request");
            }
            // Unlike a plain CONNECT, it names a resource: :scheme and :path as any request.
        } else if method == Some(b"CONNECT") {
            // Section 8.5: only :authority, which is required.
            if self.pseudo[SCHEME].is_some() || self.pseudo[PATH].is_some() {
                return Some(":scheme or :path in a CONNECT request");
            }
            if self.pseudo[AUTHORITY].is_none() {
                return Some("no :authority in a CONNECT request");
            }
            return None;
        }
        if self.pseudo[SCHEME].is_none() {
            return Some("no :scheme");
        }
        match self.pseudo_value(PATH)? {
            None => Some("no :path"),
            Some([]) => Some("an empty :path"),
            Some(_) => None,
        }
    }

    /// The first rule a response head broke, checked once the block is whole (section
    /// 8.3.2): one `:status` of three digits, and never 101, which HTTP/2 has no use for
    /// (section 8.6).
    pub(crate) fn response_error(&self) -> Option<&'static str> {
        if let Some(rule) = self.malformed {
            return Some(rule);
        }
        match self.pseudo_value(STATUS)? {
            None => Some("no :status"),
            Some(s) if s.len() != 3 || !s.iter().all(u8::is_ascii_digit) || s[0] == b'0' => {
                Some("a :status other than three digits from 100")
            }
            Some(b"101") => Some("101 Switching Protocols, which HTTP/2 forbids"),
            Some(_) => None,
        }
    }

    /// The response's status (the block having passed [`response_error`]).
    ///
    /// [`response_error`]: FieldList::response_error
    pub(crate) fn status(&self) -> u16 {
        let digits = self.pseudo[STATUS]
            .map(|i| self.value(i))
            .unwrap_or_default();
        digits
            .iter()
            .fold(0, |n, &d| n * 10 + u16::from(d.wrapping_sub(b'0')))
    }

    /// The first rule trailers broke.
    pub(crate) fn trailers_error(&self) -> Option<&'static str> {
        self.malformed
    }

    fn pseudo_value(&self, slot: usize) -> Option<Option<&[u8]>> {
        Some(self.pseudo[slot].map(|i| self.value(i)))
    }

    fn value(&self, i: usize) -> &[u8] {
        let (start, end) = self.spans[i].value;
        &self.bytes[start as usize..end as usize]
    }

    fn name(&self, i: usize) -> &[u8] {
        let (start, end) = self.spans[i].name;
        &self.bytes[start as usize..end as usize]
    }

    /// The declared body length.
    pub(crate) fn content_length(&self) -> Option<u64> {
        self.content_length
    }

    /// The request head these fields make (the block having passed [`request_error`]).
    ///
    /// [`request_error`]: FieldList::request_error
    pub(crate) fn request(&self) -> RequestHead<'_> {
        let pseudo = |slot: usize| self.pseudo[slot].map(|i| self.value(i));
        RequestHead {
            method: pseudo(METHOD).unwrap_or_default(),
            scheme: pseudo(SCHEME),
            authority: pseudo(AUTHORITY),
            path: pseudo(PATH).unwrap_or_default(),
            protocol: pseudo(PROTOCOL),
            fields: self.fields(),
        }
    }

    /// The regular fields.
    pub(crate) fn fields(&self) -> Fields<'_> {
        Fields {
            list: self,
            start: self.regular,
        }
    }
}

/// Lowercase token characters only (sections 8.2 and 8.2.1).
fn check_name(name: &[u8]) -> Result<(), &'static str> {
    if name.is_empty() {
        return Err("an empty field name");
    }
    if name.iter().any(u8::is_ascii_uppercase) {
        return Err("an uppercase field name");
    }
    if !name.iter().all(|&b| is_tchar(b)) {
        return Err("an invalid character in a field name");
    }
    Ok(())
}

fn is_tchar(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}

/// No NUL, CR or LF, and no whitespace at either end (section 8.2.1).
fn check_value(value: &[u8]) -> Result<(), &'static str> {
    if value.iter().any(|&b| matches!(b, 0 | b'\r' | b'\n')) {
        return Err("NUL, CR or LF in a field value");
    }
    let blank = |b: Option<&u8>| matches!(b, Some(b' ' | b'\t'));
    if blank(value.first()) || blank(value.last()) {
        return Err("whitespace around a field value");
    }
    Ok(())
}

fn parse_length(value: &[u8]) -> Option<u64> {
    if value.is_empty() || value.len() > 19 || !value.iter().all(u8::is_ascii_digit) {
        return None;
    }
    value.iter().try_fold(0u64, |n, &d| {
        n.checked_mul(10)?.checked_add(u64::from(d - b'0'))
    })
}

/// A request's head: its pseudo-header fields and its regular fields.
#[derive(Debug, Clone, Copy)]
pub struct RequestHead<'a> {
    /// `:method`.
    pub method: &'a [u8],
    /// `:scheme` (absent for `CONNECT`).
    pub scheme: Option<&'a [u8]>,
    /// `:authority`, HTTP/2's `Host`.
    pub authority: Option<&'a [u8]>,
    /// `:path` (empty for a plain `CONNECT`).
    pub path: &'a [u8],
    /// `:protocol`: the protocol an extended `CONNECT` (RFC 8441) opens the stream to, as
    /// `websocket`.
    pub protocol: Option<&'a [u8]>,
    /// The regular fields.
    pub fields: Fields<'a>,
}

impl RequestHead<'_> {
    /// This head as HTTP/1.1 text (`:authority` as `host`, cookies joined into one field),
    /// replacing what `out` held: for a server that hands requests to an HTTP/1.1 stack. An
    /// extended `CONNECT` becomes the HTTP/1.1 upgrade it stands for (RFC 8441 section 5):
    /// `GET` of its path with `connection: upgrade` and `upgrade: ` its `:protocol`.
    pub fn write_http1(&self, out: &mut Vec<u8>) {
        out.clear();
        let (method, target) = match (self.method, self.protocol) {
            (_, Some(_)) => (&b"GET"[..], self.path),
            (b"CONNECT", None) => (self.method, self.authority.unwrap_or_default()),
            _ => (self.method, self.path),
        };
        out.extend_from_slice(method);
        out.push(b' ');
        out.extend_from_slice(target);
        out.extend_from_slice(b" HTTP/1.1\r\n");
        if let Some(authority) = self.authority.filter(|_| self.fields.get("host").is_none()) {
            field(out, b"host", authority);
        }
        if let Some(protocol) = self.protocol {
            field(out, b"connection", b"upgrade");
            field(out, b"upgrade", protocol);
        }
        // Section 8.2.3: cookies may come as separate fields; HTTP/1.1 has one.
        let mut cookies = self.fields.iter().filter(|(name, _)| *name == b"cookie");
        if let Some((_, first)) = cookies.next() {
            out.extend_from_slice(b"cookie: ");
            out.extend_from_slice(first);
            for (_, value) in cookies {
                out.extend_from_slice(b"; ");
                out.extend_from_slice(value);
            }
            out.extend_from_slice(b"\r\n");
        }
        for (name, value) in self.fields.iter().filter(|(name, _)| *name != b"cookie") {
            field(out, name, value);
        }
        out.extend_from_slice(b"\r\n");
    }
}

/// Regular header fields, lowercase names, in the order they came.
#[derive(Clone, Copy)]
pub struct Fields<'a> {
    list: &'a FieldList,
    start: usize,
}

impl<'a> Fields<'a> {
    /// The number of fields.
    #[must_use]
    pub fn len(&self) -> usize {
        self.list.spans.len() - self.start
    }

    /// Whether there are none.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Each field's name and value.
    pub fn iter(&self) -> impl Iterator<Item = (&'a [u8], &'a [u8])> + 'a {
        let list = self.list;
        (self.start..list.spans.len()).map(move |i| (list.name(i), list.value(i)))
    }

    /// The first value of the field `name` (lowercase).
    #[must_use]
    pub fn get(&self, name: &str) -> Option<&'a [u8]> {
        self.iter()
            .find_map(|(n, v)| (n == name.as_bytes()).then_some(v))
    }
}

impl Fields<'_> {
    /// A response head of `status` with these fields as HTTP/1.1 text, replacing what `out`
    /// held: for a client that hands responses to an HTTP/1.1 stack. The reason phrase is
    /// empty, as HTTP/2 has none.
    pub fn write_http1_response(&self, status: u16, out: &mut Vec<u8>) {
        out.clear();
        out.extend_from_slice(b"HTTP/1.1 ");
        // The connection takes only 100 to 999 (section 8.3.2).
        out.extend(status_digits(status));
        out.extend_from_slice(b" \r\n");
        for (name, value) in self.iter() {
            field(out, name, value);
        }
        out.extend_from_slice(b"\r\n");
    }
}

/// A status from 100 to 999 as its three digits, without allocating.
pub(super) fn status_digits(status: u16) -> [u8; 3] {
    [100, 10, 1].map(|place| b'0' + (status / place % 10) as u8)
}

fn field(out: &mut Vec<u8>, name: &[u8], value: &[u8]) {
    out.extend_from_slice(name);
    out.extend_from_slice(b": ");
    out.extend_from_slice(value);
    out.extend_from_slice(b"\r\n");
}

impl std::fmt::Debug for Fields<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_map()
            .entries(self.iter().map(|(n, v)| {
                (
                    String::from_utf8_lossy(n).into_owned(),
                    String::from_utf8_lossy(v).into_owned(),
                )
            }))
            .finish()
    }
}
