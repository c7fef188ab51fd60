//! What `get`, `ws` and `bench` share: the request flags (`-X`, `-H`, `-d`, `-F`), the TLS
//! flags, where connections go (`-x`, `--noproxy`, `--resolve`), and errors as one line.

use std::io::Read as _;
use std::net::IpAddr;
use std::path::PathBuf;
use std::time::Duration;

use clap::Args;
use ringwire_client::{
    Form, HeaderBuilder, Proxies, Proxy, Request, RequestBuffer, StreamedRequest, Url,
};

/// Sent unless a `-H user-agent: ...` replaces it.
pub(crate) const USER_AGENT: &str = concat!("ringwire/", env!("CARGO_PKG_VERSION"));

/// The request to send, besides its URL.
#[derive(Debug, Args)]
pub(crate) struct RequestArgs {
    /// The method [default: GET, or POST with -d].
    #[arg(short = 'X', long = "request", value_name = "METHOD")]
    method: Option<String>,
    /// A request header, `NAME: VALUE` (repeatable); as curl, `NAME:`
    /// without a value leaves out one ringwire would send, and `NAME;`
    /// sends NAME with an empty value.
    #[arg(short = 'H', long = "header", value_name = "NAME: VALUE")]
    headers: Vec<String>,
    /// The request body, sent byte for byte (as curl's --data-binary, which
    /// is an alias; curl's -d would drop a file's line breaks); `@FILE`
    /// reads it from FILE, `@-` from stdin. Repeated, the parts are joined
    /// with `&`, as curl joins them.
    #[arg(
        short = 'd',
        long = "data",
        visible_alias = "data-binary",
        value_name = "DATA"
    )]
    data: Vec<String>,
    /// A part of the body percent-encoded (repeatable), as curl's: `CONTENT`, `=CONTENT`,
    /// `NAME=CONTENT`, `@FILE` or `NAME@FILE` (the file's content), the content encoded
    /// and NAME kept; joined to the -d parts with `&`, in the command line's order.
    #[arg(long = "data-urlencode", value_name = "DATA")]
    data_urlencode: Vec<String>,
    /// Which kind each body part is, in the command line's order (`true`: a
    /// --data-urlencode part), once [`keep_order`](Self::keep_order) has read it.
    #[arg(skip)]
    encoded_in_order: Vec<bool>,
    /// A multipart/form-data field (repeatable), as curl's -F: `NAME=TEXT`, `NAME=<FILE`
    /// (the text read from FILE), or `NAME=@FILE[;type=TYPE][;filename=NAME]` (a file).
    #[arg(
        short = 'F',
        long = "form",
        value_name = "NAME=CONTENT",
        conflicts_with_all = ["data", "data_urlencode"]
    )]
    form: Vec<String>,
}

impl RequestArgs {
    /// The body `-d` or `-F` make (empty without either), and the `content-type` that a
    /// form's boundary calls for.
    pub(crate) fn body(&self) -> Result<(Vec<u8>, Option<String>), String> {
        let Some(fields) = self.fields()? else {
            return Ok((self.data()?, None));
        };
        let form = fields.form()?;
        let boundary = form.boundary().map_err(line)?;
        let mut body = Vec::new();
        form.write(&boundary, &mut body).map_err(line)?;
        Ok((body, Some(Form::content_type(&boundary))))
    }

    /// The `-F` fields, their files opened to be read as the body is sent; `None` without
    /// `-F`.
    pub(crate) fn fields(&self) -> Result<Option<Fields>, String> {
        if self.form.is_empty() {
            return Ok(None);
        }
        let fields = self.form.iter().map(|arg| Field::parse(arg));
        Ok(Some(Fields(fields.collect::<Result<_, _>>()?)))
    }

    /// Notes the order the -d and --data-urlencode parts came in (clap's derive keeps each
    /// flag's values apart), so that they are joined in it, as curl joins them.
    pub(crate) fn keep_order(&mut self, matches: &clap::ArgMatches) {
        let at = |id: &str| matches.indices_of(id).into_iter().flatten();
        let mut kinds: Vec<(usize, bool)> = at("data").map(|i| (i, false)).collect();
        kinds.extend(at("data_urlencode").map(|i| (i, true)));
        kinds.sort_unstable();
        self.encoded_in_order = kinds.into_iter().map(|(_, encoded)| encoded).collect();
    }

    /// The body `-d` and `--data-urlencode` make (empty without them).
    fn data(&self) -> Result<Vec<u8>, String> {
        let (mut raw, mut encoded) = (self.data.iter(), self.data_urlencode.iter());
        // Without a known order: the -d parts first.
        let order = match self.encoded_in_order.len() {
            n if n == self.data.len() + self.data_urlencode.len() => self.encoded_in_order.clone(),
            _ => (0..self.data.len() + self.data_urlencode.len())
                .map(|i| i >= self.data.len())
                .collect(),
        };
        let parts = order.into_iter().filter_map(|is_encoded| match is_encoded {
            false => raw.next().map(|part| read_data(part)),
            true => encoded.next().map(|part| urlencoded(part)),
        });
        Ok(parts.collect::<Result<Vec<_>, _>>()?.join(&b'&'))
    }

    /// The method: `-X`, else POST with a body, else GET.
    pub(crate) fn method(&self) -> &str {
        match &self.method {
            Some(method) => method,
            None if self.has_data() || !self.form.is_empty() => "POST",
            None => "GET",
        }
    }

    /// The value a `-H` gives field `name`, if one does (not one that leaves it out).
    pub(crate) fn header(&self, name: &str) -> Result<Option<&str>, String> {
        for flag in &self.headers {
            if let (field, Some(value)) = header_flag(flag)? {
                if field.eq_ignore_ascii_case(name) {
                    return Ok(Some(value));
                }
            }
        }
        Ok(None)
    }

    /// Whether `-d` or `--data-urlencode` gave a body (even an empty one).
    pub(crate) fn has_data(&self) -> bool {
        !(self.data.is_empty() && self.data_urlencode.is_empty())
    }

    /// Encodes the request for `url` into `buffer`, with `body` (read
    /// beforehand by [`body`](Self::body); `None`: none, not even an empty
    /// one) and what the command adds (`extras`).
    pub(crate) fn encode<'a>(
        &'a self,
        buffer: &mut RequestBuffer,
        url: &'a Url,
        body: Option<&'a [u8]>,
        extras: &Extras<'_>,
    ) -> Result<Request<'a>, String> {
        let request = self.encode_head(buffer, url, extras)?;
        match body {
            Some(body) => request.body(body),
            None => request.finish(),
        }
        .map_err(line)
    }

    /// Encodes the request for `url` into `buffer` as [`encode`](Self::encode) does, its
    /// body (`len` bytes, chunked when `None`) to be read from a source as it is sent.
    pub(crate) fn encode_streamed<'a>(
        &'a self,
        buffer: &mut RequestBuffer,
        url: &'a Url,
        len: Option<u64>,
        extras: &Extras<'_>,
    ) -> Result<StreamedRequest<'a>, String> {
        let head = self.encode_head(buffer, url, extras)?;
        head.body_stream(len).map_err(line)
    }

    /// Encodes the request head for `url` into `buffer`, up to its body: what the flags
    /// and the command (`extras`) say. A `-H host: ...` replaces the URL's authority (a
    /// virtual host); `host` cannot be left out, as HTTP/1.1 requires it.
    fn encode_head<'w, 'a>(
        &'a self,
        buffer: &'w mut RequestBuffer,
        url: &'a Url,
        extras: &Extras<'_>,
    ) -> Result<HeaderBuilder<'w, 'a>, String> {
        let headers = self
            .headers
            .iter()
            .map(|h| header_flag(h))
            .collect::<Result<Vec<_>, _>>()?;
        // What a `-H` says of `field`: `Some(None)` to leave it out.
        let flag = |field: &str| {
            headers
                .iter()
                .find(|(name, _)| name.eq_ignore_ascii_case(field))
                .map(|&(_, value)| value)
        };
        let given = |field: &str| flag(field).map(Option::unwrap_or_default);
        let method = match (&self.method, extras.method) {
            (None, Some(method)) => method,
            _ => self.method(),
        };
        let query = buffer.request(method, url).map_err(line)?;
        let mut request = match given("host") {
            Some("") => {
                return Err("cannot leave out the host header (-H 'Host:'): \
                     HTTP/1.1 requests must have one"
                    .into())
            }
            Some(host) => query.headers_with_host(host),
            None => query.headers(),
        }
        .map_err(line)?;
        for &(name, value) in &extras.defaults {
            if given(name).is_none() {
                request = field(request, name, value)?;
            }
        }
        // `-H 'Accept-Encoding:'` leaves the offer out, and so the decoding.
        if extras.decompress && flag("accept-encoding") != Some(None) {
            request = request.decompress();
        }
        // Host went in above; a field without a value only left one out.
        for (name, value) in headers {
            if let Some(value) = value.filter(|_| !name.eq_ignore_ascii_case("host")) {
                request = field(request, name, value)?;
            }
        }
        Ok(request)
    }
}

/// `DATA`, `@FILE` or `@-` (stdin), as -d and `get --json` read it.
pub(crate) fn read_data(part: &str) -> Result<Vec<u8>, String> {
    match part.strip_prefix('@') {
        Some("-") => {
            let mut body = Vec::new();
            std::io::stdin()
                .read_to_end(&mut body)
                .map_err(|e| format!("cannot read stdin: {}", line(e)))?;
            Ok(body)
        }
        Some(path) => std::fs::read(path).map_err(|e| format!("cannot read {path}: {}", line(e))),
        None => Ok(part.as_bytes().to_vec()),
    }
}

/// A --data-urlencode part as curl reads it: `NAME=CONTENT` (a NAME of none: `=CONTENT`),
/// `NAME@FILE`, or CONTENT alone; the content percent-encoded, a space as `+` (a form's
/// encoding, as curl's).
fn urlencoded(part: &str) -> Result<Vec<u8>, String> {
    let at = part.find(['=', '@']);
    let (name, content) = match at.map(|i| (i, part.as_bytes()[i])) {
        Some((i, b'=')) => (&part[..i], part.as_bytes()[i + 1..].to_vec()),
        Some((i, _)) => (&part[..i], read_data(&part[i..])?),
        None => ("", part.as_bytes().to_vec()),
    };
    // A `%20` written out came from a space: a `%` in the content is `%25`.
    let encoded = percent_encoded(&content).replace("%20", "+");
    Ok(match name {
        "" => encoded.into_bytes(),
        name => format!("{name}={encoded}").into_bytes(),
    })
}

/// `bytes` with every byte but RFC 3986's unreserved ones as `%XX`, as curl escapes them.
pub(crate) fn percent_encoded(bytes: &[u8]) -> String {
    let mut out = vec![0; bytes.len() * 3];
    // Three bytes each at most: the room is always enough.
    let len = ringwire_http1::encode::percent_encode(bytes, &mut out).unwrap_or(0);
    out.truncate(len);
    String::from_utf8(out).unwrap_or_default()
}

/// A `-H` flag as curl reads it: `NAME: VALUE`, `NAME:` (`None`: leave
/// NAME out) or `NAME;` (NAME with an empty value).
pub(crate) fn header_flag(flag: &str) -> Result<(&str, Option<&str>), String> {
    match flag.split_once(':') {
        Some((name, value)) => {
            let value = value.trim();
            Ok((name.trim(), (!value.is_empty()).then_some(value)))
        }
        None => match flag.trim().strip_suffix(';') {
            Some(name) => Ok((name.trim(), Some(""))),
            None => Err(format!("invalid header {flag:?} (expected NAME: VALUE)")),
        },
    }
}

/// What a command adds to the request its flags describe.
#[derive(Debug, Default)]
pub(crate) struct Extras<'e> {
    /// Fields sent unless a `-H` names them (a `-H NAME:` without a value
    /// only leaves one out).
    pub(crate) defaults: Vec<(&'e str, &'e str)>,
    /// The method unless `-X` gives one (`get -I`: HEAD; `get -T`: PUT).
    pub(crate) method: Option<&'static str>,
    /// Whether the response body is asked for compressed and decoded
    /// (`get --compressed`).
    pub(crate) decompress: bool,
}

/// Adds a field to `request`: `expect: 100-continue` as the client's
/// expectation, so that the body waits for the server's go-ahead; any
/// other as it is.
fn field<'w, 'a>(
    request: HeaderBuilder<'w, 'a>,
    name: &str,
    value: &str,
) -> Result<HeaderBuilder<'w, 'a>, String> {
    if name.eq_ignore_ascii_case("expect") && value.eq_ignore_ascii_case("100-continue") {
        Ok(request.expect_continue())
    } else {
        request.header(name, value).map_err(line)
    }
}

/// How `https://` and `wss://` connections are checked.
#[derive(Debug, Args)]
pub(crate) struct TlsArgs {
    /// Skip certificate and host name checks (for testing).
    #[arg(short = 'k', long = "insecure")]
    insecure: bool,
    /// The TLS library.
    #[arg(long, value_enum, default_value_t)]
    tls_library: crate::TlsLibrary,
    /// Also trust the CA certificates in FILE (PEM).
    #[arg(long = "cacert", value_name = "FILE")]
    cacert: Option<PathBuf>,
    /// Present the client certificate chain in FILE (PEM, leaf first) to a server that asks
    /// for one (mutual TLS); its key is in --key, or in FILE too.
    #[arg(short = 'E', long = "cert", value_name = "FILE")]
    cert: Option<PathBuf>,
    /// The private key (PEM) of --cert.
    #[arg(long = "key", value_name = "FILE", requires = "cert")]
    key: Option<PathBuf>,
}

impl TlsArgs {
    /// Whether any of these flags was given.
    pub(crate) fn given(&self) -> bool {
        self.insecure || self.cacert.is_some() || self.cert.is_some()
    }

    /// The client TLS settings these flags ask for.
    pub(crate) fn config(&self) -> Result<ringwire_tls::ClientConfig, String> {
        let mut tls = ringwire_tls::ClientConfig::default()
            .insecure(self.insecure)
            .backend(self.tls_library.into());
        let read = |path: &PathBuf| {
            std::fs::read(path).map_err(|e| format!("cannot read {}: {}", path.display(), line(e)))
        };
        if let Some(path) = &self.cacert {
            tls = tls.add_root_pem(&read(path)?);
        }
        if let Some(cert) = &self.cert {
            let chain = read(cert)?;
            let key = match &self.key {
                Some(key) => read(key)?,
                None => chain.clone(),
            };
            let identity = ringwire_tls::Identity::from_pem(&chain, &key)
                .map_err(|e| format!("cannot use {}: {e}", cert.display()))?;
            tls = tls.identity(identity);
        }
        Ok(tls)
    }
}

/// The `-F` fields of a request.
pub(crate) struct Fields(Vec<Field>);

impl Fields {
    /// The form they make, as curl sends it.
    pub(crate) fn form(&self) -> Result<Form<'_>, String> {
        self.0
            .iter()
            .try_fold(Form::new(), |form, field| match field {
                Field::Text { name, value } => Ok(form.field(name, value)),
                Field::File {
                    name,
                    file,
                    path,
                    filename,
                    content_type,
                } => form
                    .file_from(name, filename, content_type.as_deref(), file)
                    .map_err(|e| format!("cannot read {path}: {}", line(e))),
            })
    }
}

/// One `-F` field.
enum Field {
    /// `NAME=TEXT`, or `NAME=<FILE` (the text read from FILE).
    Text { name: String, value: Vec<u8> },
    /// `NAME=@FILE[;type=TYPE][;filename=NAME]`: a file, opened, read as it is sent.
    File {
        name: String,
        file: std::fs::File,
        path: String,
        filename: String,
        content_type: Option<String>,
    },
}

impl Field {
    fn parse(arg: &str) -> Result<Field, String> {
        let cannot = |path: &str, e| format!("cannot read {path}: {}", line(e));
        let (name, content) = arg
            .split_once('=')
            .ok_or_else(|| format!("-F {arg:?}: no NAME=CONTENT"))?;
        let name = name.to_owned();
        if let Some(path) = content.strip_prefix('<') {
            let value = std::fs::read(path).map_err(|e| cannot(path, e))?;
            return Ok(Field::Text { name, value });
        }
        let Some(file) = content.strip_prefix('@') else {
            let value = content.as_bytes().to_vec();
            return Ok(Field::Text { name, value });
        };
        let mut options = file.split(';');
        let path = options.next().unwrap_or_default();
        let mut filename = path.rsplit('/').next().unwrap_or(path).to_owned();
        let mut content_type = None;
        for option in options {
            match option.split_once('=') {
                Some(("type", t)) => content_type = Some(t.to_owned()),
                Some(("filename", f)) => filename = f.to_owned(),
                _ => return Err(format!("-F {arg:?}: unknown option {option:?}")),
            }
        }
        Ok(Field::File {
            name,
            file: std::fs::File::open(path).map_err(|e| cannot(path, e))?,
            path: path.to_owned(),
            filename,
            content_type,
        })
    }
}

/// Where connections go: through which proxy, as curl picks it, and to which address.
#[derive(Debug, Args)]
pub(crate) struct RouteArgs {
    /// Go through the proxy at URL, `[SCHEME://][USER:PASSWORD@]HOST[:PORT]` (port 1080 if
    /// none): `http` (the default; http:// requests forwarded to it, the rest through a
    /// CONNECT tunnel), `socks5h` or `socks5`, `socks4a` or `socks4` (everything through its
    /// tunnel; names resolved by the proxy, or here). Without it, the environment's
    /// http_proxy, https_proxy and all_proxy, as curl reads them.
    #[arg(short = 'x', long = "proxy", value_name = "URL", group = "via")]
    proxy: Option<String>,
    /// Go through the SOCKS5 proxy at `[USER:PASSWORD@]HOST[:PORT]`, names resolved here, as
    /// curl's --socks5 (`-x socks5://...`).
    #[arg(long = "socks5", value_name = "HOST[:PORT]", group = "via")]
    socks5: Option<String>,
    /// As --socks5, names resolved by the proxy (`-x socks5h://...`).
    #[arg(long = "socks5-hostname", value_name = "HOST[:PORT]", group = "via")]
    socks5_hostname: Option<String>,
    /// Go through the SOCKS4 proxy at `[USER@]HOST[:PORT]`, names resolved here to IPv4
    /// addresses, as curl's --socks4 (`-x socks4://...`).
    #[arg(long = "socks4", value_name = "HOST[:PORT]", group = "via")]
    socks4: Option<String>,
    /// As --socks4, names resolved by the proxy: SOCKS4a (`-x socks4a://...`).
    #[arg(long = "socks4a", value_name = "HOST[:PORT]", group = "via")]
    socks4a: Option<String>,
    /// Hosts (and their subdomains), addresses and CIDR networks reached directly,
    /// separated by commas; `*` for all. Replaces the environment's no_proxy.
    #[arg(long = "noproxy", value_name = "LIST")]
    noproxy: Option<String>,
    /// Connect to ADDRESS for HOST on PORT (repeatable), as curl's --resolve: the name stays
    /// what Host, SNI and the certificate check use. Several addresses, separated by
    /// commas, are raced as a name's are (families alternating, 250 ms apart).
    #[arg(long = "resolve", value_name = "HOST:PORT:ADDRESS[,ADDRESS...]")]
    resolve: Vec<String>,
    #[command(flatten)]
    unix: UnixArgs,
}

/// Where a client connects instead of the network: a Unix domain socket.
#[derive(Args, Debug, Clone, Default)]
pub(crate) struct UnixArgs {
    /// Connect through the Unix domain socket at PATH instead of the network, as curl's
    /// --unix-socket: the URL's host still names Host, SNI and the certificate; no proxy.
    #[arg(long = "unix-socket", value_name = "PATH")]
    unix_socket: Option<std::path::PathBuf>,
    /// As --unix-socket, to the socket NAME in Linux's abstract namespace (`ss -x` shows
    /// it as @NAME; `ringwire serve --unix @NAME`), as curl's --abstract-unix-socket.
    #[arg(
        long = "abstract-unix-socket",
        value_name = "NAME",
        conflicts_with = "unix_socket"
    )]
    abstract_unix_socket: Option<String>,
}

impl UnixArgs {
    /// The socket's path (an abstract name's starts with a NUL byte), if one was given.
    pub(crate) fn path(&self) -> Option<std::path::PathBuf> {
        match (&self.unix_socket, &self.abstract_unix_socket) {
            (_, Some(name)) => Some(ringwire_io::abstract_unix_path(name.as_bytes())),
            (path, None) => path.clone(),
        }
    }
}

/// A `--resolve` pin: host, port, addresses.
type Pin<'a> = (&'a str, u16, Vec<IpAddr>);

impl RouteArgs {
    /// `client` routed as these flags say, through either client's `with_proxies`,
    /// `resolve` and `unix_socket`.
    pub(crate) fn route<C>(
        &self,
        client: C,
        with_proxies: impl FnOnce(C, Proxies) -> C,
        resolve: impl Fn(C, &str, u16, &[IpAddr]) -> C,
        unix_socket: impl FnOnce(C, &std::path::Path) -> C,
    ) -> Result<C, String> {
        let client = with_proxies(client, self.proxies()?);
        let client = self
            .pins()?
            .into_iter()
            .fold(client, |client, (host, port, addrs)| {
                resolve(client, host, port, &addrs)
            });
        Ok(match self.unix.path() {
            Some(path) => unix_socket(client, &path),
            None => client,
        })
    }

    /// The `--resolve` pins.
    fn pins(&self) -> Result<Vec<Pin<'_>>, String> {
        self.resolve
            .iter()
            .map(|pin| {
                let bad = || format!("--resolve {pin:?}: expected HOST:PORT:ADDRESS[,ADDRESS...]");
                let (host, rest) = pin.split_once(':').ok_or_else(bad)?;
                let (port, addrs) = rest.split_once(':').ok_or_else(bad)?;
                let port = port.parse().map_err(|_| bad())?;
                let addrs = addrs
                    .split(',')
                    .map(|addr| {
                        let addr = addr.trim().trim_start_matches('[').trim_end_matches(']');
                        addr.parse().map_err(|_| bad())
                    })
                    .collect::<Result<_, _>>()?;
                Ok((host, port, addrs))
            })
            .collect()
    }

    /// The proxies these flags, or else the environment, ask for.
    fn proxies(&self) -> Result<Proxies, String> {
        let given = [
            ("--proxy", "", &self.proxy),
            ("--socks5", "socks5://", &self.socks5),
            ("--socks5-hostname", "socks5h://", &self.socks5_hostname),
            ("--socks4", "socks4://", &self.socks4),
            ("--socks4a", "socks4a://", &self.socks4a),
        ];
        // At most one: clap's group `via`.
        let given = given
            .into_iter()
            .find_map(|(flag, scheme, value)| Some((flag, scheme, value.as_deref()?)));
        let proxies = match given {
            Some((flag, scheme, value)) => Proxies::all(
                Proxy::parse(&format!("{scheme}{value}"))
                    .map_err(|e| format!("{flag} {value:?}: {e}"))?,
            ),
            None => Proxies::from_env().map_err(|e| e.to_string())?,
        };
        Ok(match &self.noproxy {
            Some(list) => proxies.no_proxy(list),
            None => proxies,
        })
    }
}

/// A positive number of seconds as a `Duration`.
pub(crate) fn seconds(secs: f64, flag: &str) -> Result<Duration, String> {
    Duration::try_from_secs_f64(secs)
        .ok()
        .filter(|d| !d.is_zero())
        .ok_or_else(|| format!("{flag} wants a positive number of seconds"))
}

/// An error as one line, without the OS error number.
pub(crate) fn line(e: impl std::fmt::Display) -> String {
    let text = e.to_string();
    match text.find(" (os error") {
        Some(at) => text[..at].to_owned(),
        None => text,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A POST of `body` with `-H` flags `headers`, and `defaults`.
    fn encoded(headers: &[&str], defaults: &[(&str, &str)], body: &[u8]) -> (bool, String) {
        let args = RequestArgs {
            method: None,
            headers: headers.iter().map(|h| (*h).to_owned()).collect(),
            data: vec![String::new()],
            data_urlencode: Vec::new(),
            encoded_in_order: Vec::new(),
            form: Vec::new(),
        };
        let url = Url::parse("http://example.com/").unwrap();
        let mut buffer = RequestBuffer::new().unwrap();
        let extras = Extras {
            defaults: defaults.to_vec(),
            ..Extras::default()
        };
        let request = args.encode(&mut buffer, &url, Some(body), &extras).unwrap();
        let head = String::from_utf8_lossy(buffer.bytes(&request).unwrap().0).into_owned();
        (request.expects_continue(), head)
    }

    #[test]
    fn header_flags_send_leave_out_or_send_empty_as_curl() {
        let defaults = [("user-agent", "ringwire"), ("accept", "*/*")];
        let (_, head) = encoded(&["X-Empty;", "Accept:", "X-A:  b "], &defaults, b"");
        assert!(head.contains("\r\nX-Empty: \r\n"), "{head}");
        assert!(!head.to_ascii_lowercase().contains("accept:"), "{head}");
        assert!(head.contains("\r\nuser-agent: ringwire\r\n"), "{head}");
        assert!(head.contains("\r\nX-A: b\r\n"), "{head}");
        assert_eq!(
            header_flag("X-B").unwrap_err(),
            "invalid header \"X-B\" (expected NAME: VALUE)"
        );
    }

    #[test]
    fn compressed_offers_codings_unless_accept_encoding_is_left_out() {
        let args = |headers: &[&str]| RequestArgs {
            method: None,
            headers: headers.iter().map(|h| (*h).to_owned()).collect(),
            data: Vec::new(),
            data_urlencode: Vec::new(),
            encoded_in_order: Vec::new(),
            form: Vec::new(),
        };
        let url = Url::parse("http://example.com/").unwrap();
        let extras = Extras {
            decompress: true,
            ..Extras::default()
        };
        let mut buffer = RequestBuffer::new().unwrap();
        let offered = args(&[]);
        let request = offered.encode(&mut buffer, &url, None, &extras).unwrap();
        assert!(request.decompresses());
        let head = String::from_utf8_lossy(buffer.bytes(&request).unwrap().0).into_owned();
        assert!(
            head.to_ascii_lowercase().contains("accept-encoding: "),
            "{head}"
        );
        let left_out = args(&["Accept-Encoding:"]);
        let request = left_out.encode(&mut buffer, &url, None, &extras).unwrap();
        assert!(!request.decompresses());
        let head = String::from_utf8_lossy(buffer.bytes(&request).unwrap().0).into_owned();
        assert!(
            !head.to_ascii_lowercase().contains("accept-encoding"),
            "{head}"
        );
    }

    #[test]
    fn expect_100_continue_holds_the_body_back() {
        let expect = [("expect", "100-continue")];
        assert!(encoded(&[], &expect, b"body").0);
        assert!(encoded(&["Expect: 100-Continue"], &[], b"body").0);
        let (held, head) = encoded(&["Expect:"], &expect, b"body");
        assert!(!held && !head.contains("expect"), "{head}");
        // Another expectation is the caller's to send as it is.
        let (held, head) = encoded(&["Expect: x-other"], &expect, b"body");
        assert!(!held && head.contains("\r\nExpect: x-other\r\n"), "{head}");
    }
}
