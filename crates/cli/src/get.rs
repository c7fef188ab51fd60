//! `ringwire get URL`: a curl-like client on `ringwire-client`'s blocking
//! API. The body goes from the receive ring to stdout (or `-o FILE`) a
//! chunk at a time, never collected.

use std::fs::File;
use std::io::{self, IsTerminal as _, Seek as _, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};

use base64::Engine as _;
use clap::Args;
use ringwire_client::blocking::{Client, Trace};
use ringwire_client::{
    ClientConfig, Error, Form, Http2, Protocol, Request, RequestBuffer, StreamedRequest, Url,
};
use ringwire_io::unix_socket_name;

use crate::cookies::Cookies;
use crate::request::{
    line, percent_encoded, read_data, seconds, Extras, Fields, RequestArgs, RouteArgs, TlsArgs,
    USER_AGENT,
};
use crate::write_out;

/// The exit status for an HTTP error with `--fail`, as curl's.
const HTTP_ERROR_EXIT: u8 = 22;
/// The exit status for a redirect past `--max-redirs` with `-L`, as curl's.
const TOO_MANY_REDIRECTS_EXIT: u8 = 47;
/// The exit status for a `-C` the server did not honour, as curl's.
const RANGE_ERROR_EXIT: u8 = 33;
/// Bodies shorter than this get no progress bar.
const PROGRESS_FROM: u64 = 1 << 20;
/// Bodies larger than this wait for the server's `100 Continue`, as curl's.
const EXPECT_CONTINUE_OVER: usize = 1 << 20;

#[derive(Debug, Args)]
pub(crate) struct GetArgs {
    /// The URL (http:// or https://).
    url: String,
    #[command(flatten)]
    pub(crate) request: RequestArgs,
    /// Send FILE as the body, as curl -T: read as it goes (any size), by PUT unless -X
    /// says otherwise, to the URL with FILE's name added when it ends in `/`; `-` sends
    /// stdin, chunked.
    #[arg(
        short = 'T',
        long = "upload-file",
        value_name = "FILE",
        conflicts_with_all = ["data", "form", "head"]
    )]
    upload_file: Option<PathBuf>,
    /// Write the body to FILE instead of stdout (`-` is stdout).
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    output: Option<PathBuf>,
    /// Write the body to a file in the current directory named as the URL's
    /// last path segment, as curl -O.
    #[arg(short = 'O', long = "remote-name", conflicts_with = "output")]
    remote_name: bool,
    /// With -O, name the file as the answer's `content-disposition` says
    /// (its last path segment only), as curl -J; else as -O does.
    #[arg(
        short = 'J',
        long = "remote-header-name",
        requires = "remote_name",
        conflicts_with = "continue_at"
    )]
    remote_header_name: bool,
    /// Resume a transfer at byte OFFSET, or with `-` where the output file
    /// ends, as curl -C: the rest is asked for by a `range` and appended. A
    /// server that sends the whole body instead is an error (exit 33);
    /// `416` (nothing is left) is not, even with --fail (where curl's is);
    /// any other status is reported as --fail reports it, and nothing is
    /// added to the file.
    #[arg(
        short = 'C',
        long = "continue-at",
        value_name = "OFFSET|-",
        conflicts_with_all = ["upload_file", "data", "form"]
    )]
    continue_at: Option<String>,
    /// Print the request and response heads to stderr.
    #[arg(short = 'v', long)]
    verbose: bool,
    /// Write the response's status line and header fields (every one
    /// answered, interim and redirects too) before the body, as curl -i.
    #[arg(short = 'i', long)]
    include: bool,
    /// Write the heads -i would write to FILE instead (`-` is stdout), as curl -D.
    #[arg(short = 'D', long = "dump-header", value_name = "FILE")]
    dump_header: Option<PathBuf>,
    /// Send the -d and --data-urlencode data in the URL's query, by GET (or -X's
    /// method), as curl -G.
    #[arg(short = 'G', long = "get", conflicts_with_all = ["form", "upload_file"])]
    query_data: bool,
    /// JSON to send, as curl's --json (repeatable: the parts joined as they are; `@FILE`
    /// and `@-` read a file or stdin), by POST unless -X says otherwise, with
    /// `content-type` and `accept` set to `application/json` unless -H gives them.
    #[arg(
        long = "json",
        value_name = "DATA",
        conflicts_with_all = ["data", "data_urlencode", "form", "upload_file", "query_data"]
    )]
    json: Vec<String>,
    /// The `user-agent` to send (a -H user-agent wins), as curl -A.
    #[arg(short = 'A', long = "user-agent", value_name = "NAME")]
    user_agent: Option<String>,
    /// The `referer` to send, as curl -e.
    #[arg(short = 'e', long = "referer", value_name = "URL")]
    referer: Option<String>,
    /// Send HEAD and write the response's head, as curl -I.
    #[arg(short = 'I', long = "head", conflicts_with_all = ["method", "data"])]
    head: bool,
    /// Ask for the body compressed (gzip, deflate, br, zstd) and write it decoded.
    #[arg(long)]
    compressed: bool,
    /// Basic authorization as USER:PASSWORD (there is no prompt for a
    /// missing password); a -H authorization replaces it.
    #[arg(short = 'u', long = "user", value_name = "USER:PASSWORD")]
    user: Option<String>,
    /// Basic authorization from `~/.netrc`: the login and password of the URL's host (or
    /// its `default` entry), as curl -n; -u wins. A missing file gives none. With -L, a
    /// redirect to another host gets that host's entry.
    #[arg(short = 'n', long = "netrc")]
    netrc: bool,
    /// As -n, from FILE.
    #[arg(long = "netrc-file", value_name = "FILE")]
    netrc_file: Option<PathBuf>,
    /// Taken for curl's --netrc-optional: -n's file is optional already.
    #[arg(long = "netrc-optional")]
    netrc_optional: bool,
    /// No progress bar. Errors are still reported (curl would need -sS).
    #[arg(short = 's', long)]
    silent: bool,
    /// Follow redirects (301/302/303 as GET, 307/308 as sent).
    #[arg(short = 'L', long = "location")]
    follow: bool,
    /// As -L, and the authorization -u or -H gives goes to every host a redirect leads to,
    /// not only the first (as curl's; a host the server names sees your credentials).
    #[arg(long = "location-trusted")]
    location_trusted: bool,
    /// Most redirects followed with -L.
    #[arg(long = "max-redirs", value_name = "N", default_value_t = 10)]
    max_redirects: u32,
    /// Exit with status 22, writing no body, when the status is 400 or above.
    #[arg(short = 'f', long)]
    fail: bool,
    /// Taken for curl's -S: errors are reported, with -s too.
    #[arg(short = 'S', long = "show-error")]
    show_error: bool,
    /// Try again up to N times after a transient failure, as curl --retry: a timeout, or
    /// the status 408, 429, 500, 502, 503 or 504; waiting a second, then twice as long
    /// each time (up to ten minutes), or as long as the answer's `retry-after` says.
    #[arg(long, value_name = "N", default_value_t = 0)]
    retry: u32,
    /// Seconds between attempts with --retry, instead of the growing wait (0: the
    /// growing wait, as curl's).
    #[arg(long = "retry-delay", value_name = "SECS", default_value_t = 0.0)]
    retry_delay: f64,
    /// Seconds after which --retry starts no attempt (0: no limit).
    #[arg(long = "retry-max-time", value_name = "SECS", default_value_t = 0.0)]
    retry_max_time: f64,
    /// With --retry, a refused connection is transient too.
    #[arg(long = "retry-connrefused")]
    retry_connrefused: bool,
    /// With --retry, any failure is transient: a connection lost in the body too
    /// (what a file got of it is taken back), and with --fail any error status.
    #[arg(long = "retry-all-errors")]
    retry_all_errors: bool,
    /// Cookies to send, as curl -b: `NAME=VALUE[; NAME=VALUE...]` as it is, or else a cookie
    /// file (Netscape's format, as -c writes it) whose cookies go where they match; a file
    /// also keeps the cookies answers set, for the redirects that follow.
    #[arg(short = 'b', long = "cookie", value_name = "DATA|FILE")]
    cookie: Option<String>,
    /// Keep the cookies answers set (redirects' too, sent with the requests that follow)
    /// and write them all to FILE at the end, as curl -c (`-` is stdout).
    #[arg(short = 'c', long = "cookie-jar", value_name = "FILE")]
    cookie_jar: Option<PathBuf>,
    /// Write FORMAT to stdout after the transfer, as curl's --write-out: `%{http_code}`,
    /// `%{http_version}`, `%{size_download}`, `%{content_type}`, `%{num_redirects}`,
    /// `%{url_effective}`, `%{remote_ip}`, `%{remote_port}`, `%{time_namelookup}`,
    /// `%{time_connect}`, `%{time_appconnect}`, `%{time_pretransfer}`,
    /// `%{time_starttransfer}`, `%{time_redirect}`, `%{time_total}`, and `\n`, `\t` escapes.
    #[arg(short = 'w', long = "write-out", value_name = "FORMAT")]
    write_out: Option<String>,
    #[command(flatten)]
    tls: TlsArgs,
    #[command(flatten)]
    route: RouteArgs,
    /// Speak HTTP/1.1 only (by default HTTP/2 is offered to https://
    /// servers, as curl does).
    #[arg(long = "http1.1", conflicts_with = "http2_prior_knowledge")]
    http1_1: bool,
    /// Taken for curl's --http2: HTTP/2 is offered to https:// servers by
    /// ALPN already (an http:// request stays HTTP/1.1, where curl would ask
    /// to upgrade; --http2-prior-knowledge speaks it there).
    #[arg(long = "http2", conflicts_with_all = ["http1_1", "http2_prior_knowledge"])]
    http2: bool,
    /// Speak HTTP/2 from the start, without asking (http:// too): the
    /// server must know it.
    #[arg(long = "http2-prior-knowledge")]
    http2_prior_knowledge: bool,
    /// Seconds the whole request may take.
    #[arg(long = "max-time", value_name = "SECS")]
    max_time: Option<f64>,
    /// Seconds connecting may take.
    #[arg(long = "connect-timeout", value_name = "SECS", default_value_t = 10.0)]
    connect_timeout: f64,
    /// Seconds a body sent with `expect: 100-continue` (over 1 MiB, or
    /// -H 'Expect: 100-continue') waits for the server's go-ahead before
    /// it goes anyway.
    #[arg(long = "expect100-timeout", value_name = "SECS", default_value_t = 1.0)]
    expect100_timeout: f64,
}

/// The request to send: its body in hand, or read from a source as it goes.
enum Outgoing<'a, 'f> {
    Whole(Request<'a>),
    Streamed(StreamedRequest<'a>, Source<'f>),
}

/// Where a body read as it is sent comes from.
enum Source<'f> {
    /// `-T FILE`.
    File(File),
    /// `-T -`.
    Stdin,
    /// `-F`, its files read as they are sent (a reader made for each attempt).
    Form(&'f Form<'f>, &'f str),
}

/// What `-T` sends: a file, or stdin.
struct Upload {
    /// `None`: stdin.
    file: Option<File>,
    /// A regular file's length; `None` for stdin or a pipe (sent chunked).
    len: Option<u64>,
    /// The file's name, for a URL that ends in `/`.
    name: Option<String>,
}

impl Upload {
    /// `-T PATH`: `-` is stdin.
    fn open(path: &Path) -> Result<Upload, String> {
        if path == Path::new("-") {
            return Ok(Upload {
                file: None,
                len: None,
                name: None,
            });
        }
        let cannot = |e| format!("cannot read {}: {}", path.display(), line(e));
        let file = File::open(path).map_err(cannot)?;
        let metadata = file.metadata().map_err(cannot)?;
        Ok(Upload {
            file: Some(file),
            len: metadata.is_file().then_some(metadata.len()),
            name: path.file_name().map(|n| n.to_string_lossy().into_owned()),
        })
    }

    /// Where the file goes: `url`, with the file's name (percent-encoded) after a path
    /// that ends in `/`, as curl adds it.
    fn url(&self, url: Url) -> Result<Url, String> {
        let (path, query) = match url.target().split_once('?') {
            Some((path, query)) => (path, Some(query)),
            None => (url.target(), None),
        };
        let Some(name) = self.name.as_deref().filter(|_| path.ends_with('/')) else {
            return Ok(url);
        };
        let mut named = format!(
            "{}://{}{path}",
            url.origin().scheme().as_str(),
            url.authority()
        );
        named.push_str(&percent_encoded(name.as_bytes()));
        if let Some(query) = query {
            named.push('?');
            named.push_str(query);
        }
        Url::parse(&named).map_err(|e| format!("invalid URL {named:?}: {e}"))
    }
}

/// Runs `ringwire get`; errors are one line on stderr.
pub(crate) fn run(args: &GetArgs) -> ExitCode {
    match get(args) {
        Ok(code) => code,
        Err(message) => {
            eprintln!("ringwire: {message}");
            ExitCode::FAILURE
        }
    }
}

fn get(args: &GetArgs) -> Result<ExitCode, String> {
    let url = Url::parse(&args.url).map_err(|e| format!("invalid URL {:?}: {e}", args.url))?;
    let upload = args.upload_file.as_deref().map(Upload::open).transpose()?;
    let url = match &upload {
        Some(upload) => upload.url(url)?,
        None => url,
    };
    let output = match args.remote_name {
        true => Some(PathBuf::from(remote_name(&url)?)),
        false => args.output.clone(),
    };
    let resume_at = resume_offset(args.continue_at.as_deref(), output.as_deref())?;
    let fields = args.request.fields()?;
    let form = fields.as_ref().map(Fields::form).transpose()?;
    let form = match form {
        Some(form) => Some((form.boundary().map_err(line)?, form)),
        None => None,
    };
    let json = !args.json.is_empty();
    let (body, form_type) = match &form {
        Some((boundary, _)) => (Vec::new(), Some(Form::content_type(boundary))),
        None if json => {
            let parts = args.json.iter().map(|part| read_data(part));
            (parts.collect::<Result<Vec<_>, _>>()?.concat(), None)
        }
        None => args.request.body()?,
    };
    // -G: the data in the query instead, no body.
    let (url, body) = match args.query_data && args.request.has_data() {
        true => (with_query(&url, &body)?, Vec::new()),
        false => (url, body),
    };
    let sends_body = json || !args.query_data && args.request.has_data();
    // The length of a body read as it is sent (`None` within: unknown).
    let streamed = match (&upload, &form) {
        (Some(upload), _) => Some(upload.len),
        (None, Some((boundary, form))) => Some(Some(form.len(boundary))),
        (None, None) => None,
    };
    let follows = args.follow || args.location_trusted;
    let client = Client::with_tls(
        ClientConfig {
            max_redirects: follows.then_some(args.max_redirects),
            connect_timeout: Some(seconds(args.connect_timeout, "--connect-timeout")?),
            request_timeout: args
                .max_time
                .map(|s| seconds(s, "--max-time"))
                .transpose()?,
            expect_continue_timeout: seconds(args.expect100_timeout, "--expect100-timeout")?,
            http2: if args.http1_1 {
                Http2::Off
            } else if args.http2_prior_knowledge {
                Http2::PriorKnowledge
            } else {
                Http2::Negotiate
            },
            // An answer that comes while the body is still being sent (an echo) waits in
            // the ring: room for one as large as most uploads, as curl would take it.
            // Address space only; pages are touched as bytes come.
            rx: ringwire_ring::RingConfig {
                max_capacity: 256 << 20,
                ..ClientConfig::DEFAULT_RX
            },
            ..ClientConfig::default()
        },
        args.tls.config()?,
    );
    let mut client = args.route.route(
        client,
        Client::with_proxies,
        Client::resolve_to_addrs,
        |client, path| client.unix_socket(path),
    )?;
    let cookies = Cookies::new(args.cookie.as_deref(), args.cookie_jar.as_deref());
    if let Some(jar) = &cookies.jar {
        client = client.with_cookies(Arc::clone(jar));
    }
    let netrc = match &args.user {
        Some(_) => None,
        None => netrc_text(args)?,
    };
    // The first request's credentials: -u's, else the netrc entry of the URL's host.
    let user = match (&args.user, &netrc) {
        (Some(user), _) => Some(user.clone()),
        (None, Some(text)) => {
            crate::netrc::credentials(text, url.origin().host())?.map(user_password)
        }
        (None, None) => None,
    };
    let authorization = user.as_deref().map(basic).transpose()?;
    // What --location-trusted sends to every host: the authorization -H or -u gives.
    let trusted = match args.request.header("authorization")? {
        Some(value) => Some(value.to_owned()),
        None => authorization.clone().filter(|_| args.user.is_some()),
    };
    match (trusted.filter(|_| args.location_trusted), netrc) {
        (Some(value), _) => client = client.authorize_redirects(move |_| Some(value.clone())),
        // As curl: a redirect to another host gets that host's entry.
        (None, Some(text)) if follows => {
            client = client.authorize_redirects(move |url| {
                let found = crate::netrc::credentials(&text, url.origin().host()).ok()??;
                basic(&user_password(found)).ok()
            });
        }
        (None, _) => {}
    }

    let mut buffer = RequestBuffer::new().map_err(line)?;
    // What curl sends unless told otherwise.
    let mut defaults = vec![
        (
            "user-agent",
            args.user_agent.as_deref().unwrap_or(USER_AGENT),
        ),
        ("accept", if json { "application/json" } else { "*/*" }),
    ];
    if let Some(referer) = &args.referer {
        defaults.push(("referer", referer));
    }
    if let Some(form_type) = &form_type {
        defaults.push(("content-type", form_type));
    } else if json {
        defaults.push(("content-type", "application/json"));
    } else if sends_body {
        defaults.push(("content-type", "application/x-www-form-urlencoded"));
    }
    // A server that refuses the upload (401, 413, a redirect) can say so
    // before all of it is sent.
    let large = match streamed {
        Some(len) => len.is_none_or(|len| len > EXPECT_CONTINUE_OVER as u64),
        None => body.len() > EXPECT_CONTINUE_OVER,
    };
    if large {
        defaults.push(("expect", "100-continue"));
    }
    if let Some(credentials) = &authorization {
        defaults.push(("authorization", credentials));
    }
    if let Some(field) = cookies.field {
        defaults.push(("cookie", field));
    }
    let range = format!("bytes={resume_at}-");
    if resume_at > 0 {
        defaults.push(("range", &range));
    }
    let extras = Extras {
        defaults,
        method: match &upload {
            Some(_) => Some("PUT"),
            None if args.head => Some("HEAD"),
            None if json => Some("POST"),
            None => args.query_data.then_some("GET"),
        },
        decompress: args.compressed,
    };
    let request = match (upload, &form) {
        (Some(upload), _) => Outgoing::Streamed(
            args.request
                .encode_streamed(&mut buffer, &url, upload.len, &extras)?,
            upload.file.map_or(Source::Stdin, Source::File),
        ),
        (None, Some((boundary, form))) => Outgoing::Streamed(
            args.request
                .encode_streamed(&mut buffer, &url, Some(form.len(boundary)), &extras)?,
            Source::Form(form, boundary),
        ),
        (None, None) => {
            let body = (sends_body || !body.is_empty()).then_some(&body[..]);
            Outgoing::Whole(args.request.encode(&mut buffer, &url, body, &extras)?)
        }
    };
    let mut retry = Retry::new(args)?;
    loop {
        let mut watch = Watch::new(args, &url, streamed.flatten());
        let trace = |event: Trace<'_>| watch.see(event);
        let sent = match &request {
            Outgoing::Whole(request) => client.send_traced(&mut buffer, request, trace),
            // A file goes by `sendfile` where it can, from its start on each attempt.
            Outgoing::Streamed(request, Source::File(file)) => {
                if retry.made > 0 {
                    (&*file)
                        .seek(io::SeekFrom::Start(0))
                        .map_err(|e| format!("cannot read the file again: {}", line(e)))?;
                }
                client.send_file_traced(&mut buffer, request, file, trace)
            }
            Outgoing::Streamed(request, Source::Stdin) => {
                if retry.made > 0 {
                    return Err("cannot try again: the body was read from stdin".into());
                }
                client.send_streamed_traced(&mut buffer, request, io::stdin().lock(), trace)
            }
            Outgoing::Streamed(request, Source::Form(form, boundary)) => {
                client.send_streamed_traced(&mut buffer, request, form.reader(boundary), trace)
            }
        };
        watch.sending.finish();
        let mut response = match sent {
            Ok(response) => response,
            Err(e @ Error::TooManyRedirects { .. }) => {
                eprintln!("ringwire: {e}");
                return Ok(ExitCode::from(TOO_MANY_REDIRECTS_EXIT));
            }
            Err(e) if retry.transient(&e) && retry.again(&line(&e), None) => continue,
            Err(e) => return Err(line(e)),
        };
        let status = response.status();
        if RETRY_STATUSES.contains(&status) || (retry.all_errors && args.fail && status >= 400) {
            let after = response
                .header("retry-after")
                .and_then(|v| std::str::from_utf8(v).ok()?.trim().parse::<u64>().ok())
                .map(Duration::from_secs);
            if retry.again(&format!("the server answered {status}"), after) {
                continue;
            }
        }
        let resumed = match resume_at {
            0 => Resumed::No,
            at => match resumed(at, status, |name| response.header(name)) {
                Ok(resumed) => resumed,
                Err(RangeError(message)) => {
                    eprintln!("ringwire: {message}");
                    return Ok(ExitCode::from(RANGE_ERROR_EXIT));
                }
            },
        };
        let named = match args.remote_header_name {
            true => response
                .header("content-disposition")
                .and_then(disposition_name),
            false => None,
        };
        let mut out = match &named {
            Some(name) => Output::new(Some(Path::new(name)), false).fresh(),
            None => Output::new(output.as_deref(), resume_at > 0),
        };
        if let Some(path) = &args.dump_header {
            let mut dump = Output::new(Some(path), false);
            dump.write(&watch.heads)?;
            dump.flush()?;
        }
        if !watch.heads.is_empty() && (args.include || args.head) {
            out.write(&watch.heads)?;
        }
        // Nothing left to fetch: no body written, the rest (-w) as for any transfer.
        let complete = resumed == Resumed::Complete;
        if !complete && (args.fail && status >= 400 || resumed == Resumed::Failed) {
            let reason = response
                .head()
                .map(|h| String::from_utf8_lossy(h.reason()).into_owned())
                .unwrap_or_default();
            let answer = format!("{status} {reason}");
            eprintln!("ringwire: the server answered {}", answer.trim_end());
            // With -i, the head went out (as curl's); the body does not.
            out.flush()?;
            return Ok(ExitCode::from(HTTP_ERROR_EXIT));
        }
        // Taken now: the head leaves the ring as the body is read.
        let content_type = args
            .write_out
            .as_ref()
            .and_then(|_| response.header("content-type"))
            .map(|v| String::from_utf8_lossy(v).into_owned());
        let mut size_download = 0;
        if !complete {
            match write_body(&mut response, &mut out, args.silent)? {
                Ok(size) => size_download = size,
                // Tried again only if what this attempt wrote can be taken back.
                Err(e) if retry.all_errors && out.take_back(resume_at)? => {
                    if !retry.again(&line(&e), None) {
                        return Err(line(e));
                    }
                    continue;
                }
                Err(e) => return Err(line(e)),
            }
            if args.include {
                // After the body, as curl writes them.
                for (name, value) in response.trailers().iter() {
                    out.write(&[name, b": ", value, b"\r\n"].concat())?;
                }
            }
        }
        out.flush()?;
        if let Some(format) = &args.write_out {
            let transfer = write_out::Transfer {
                status,
                protocol: response.protocol(),
                size_download,
                content_type: content_type.as_deref(),
                num_redirects: watch.hops.saturating_sub(1),
                url_effective: &watch.effective.to_string(),
                timing: watch.timing,
                time_total: watch.started.elapsed(),
            };
            io::stdout()
                .write_all(write_out::render(format, &transfer).as_bytes())
                .map_err(|e| format!("cannot write: {}", line(e)))?;
        }
        return Ok(ExitCode::SUCCESS);
    }
}

/// What an attempt's exchange shows as it goes, for the output: every head answered (-i, -I,
/// -D), -v's lines, the upload's progress bar, and -w's timings, hops and effective URL.
struct Watch<'a> {
    args: &'a GetArgs,
    started: Instant,
    /// With -i, -I or -D, every head answered, as they come; written before the body.
    heads: Vec<u8>,
    protocol: Protocol,
    hops: u32,
    timing: write_out::Timing,
    /// The URL each request goes to: a redirect's location once the next request is sent.
    effective: Url,
    redirected: Option<Url>,
    /// When the last answer came: a redirect's, once the request it led to goes.
    answered: Duration,
    /// An upload's own bar, on a terminal, as curl draws one.
    sending: Progress,
}

impl<'a> Watch<'a> {
    fn new(args: &'a GetArgs, url: &Url, upload_len: Option<u64>) -> Watch<'a> {
        Watch {
            args,
            started: Instant::now(),
            heads: Vec::new(),
            protocol: Protocol::Http1,
            hops: 0,
            timing: write_out::Timing::default(),
            effective: url.clone(),
            redirected: None,
            answered: Duration::ZERO,
            sending: Progress::new(upload_len, args.silent),
        }
    }

    /// Takes in one step of the exchange.
    fn see(&mut self, event: Trace<'_>) {
        let (args, started) = (self.args, self.started);
        let answer = match event {
            Trace::Sent(done) => {
                self.sending.reach(done);
                return;
            }
            Trace::Resolved => {
                self.timing.namelookup = started.elapsed();
                return;
            }
            Trace::Connected(addr) => {
                if args.verbose {
                    eprintln!("* Connected to {} port {}", addr.ip(), addr.port());
                }
                self.timing.connect = started.elapsed();
                self.timing.remote = Some(addr);
                return;
            }
            Trace::ConnectedUnix(path) => {
                if args.verbose {
                    eprintln!("* Connected to unix:{}", unix_socket_name(path));
                }
                self.timing.connect = started.elapsed();
                return;
            }
            Trace::Handshaken => {
                self.timing.appconnect = started.elapsed();
                return;
            }
            Trace::Protocol(spoken) => {
                if args.verbose && spoken == Protocol::Http2 {
                    eprintln!("* using HTTP/2");
                }
                self.protocol = spoken;
                return;
            }
            Trace::Request(head) => {
                if args.verbose {
                    print_head("> ", head, self.protocol);
                }
                if let Some(next) = self.redirected.take() {
                    self.effective = next;
                    self.timing.redirect = self.answered;
                }
                self.timing.pretransfer = started.elapsed();
                self.timing.starttransfer = Duration::ZERO;
                return;
            }
            Trace::Interim(head) => Some(head),
            Trace::Response(response) => {
                self.hops += 1;
                self.answered = started.elapsed();
                self.redirected = response
                    .header("location")
                    .and_then(|l| self.effective.join(std::str::from_utf8(l).ok()?).ok());
                response.head()
            }
            _ => None,
        };
        if self.timing.starttransfer.is_zero() {
            self.timing.starttransfer = started.elapsed();
        }
        if let Some(head) = answer {
            if args.verbose {
                print_response_head(&head, self.protocol);
            }
            if args.include || args.head || args.dump_header.is_some() {
                // Writing into a `Vec` cannot fail.
                let _ = write_response_head(&mut self.heads, "", "\r\n", &head, self.protocol);
            }
        }
    }
}

/// Writes `response`'s body to `out`, with a progress bar unless `silent`: its length, or
/// the client's error that cut it short (`Err` within: the output's own errors are the
/// outer one).
fn write_body(
    response: &mut ringwire_client::blocking::Response<'_>,
    out: &mut Output<'_>,
    silent: bool,
) -> Result<Result<u64, Error>, String> {
    // A decoded body's length is not the one the head gives.
    let total = response
        .header("content-length")
        .filter(|_| response.decoding().is_none())
        .and_then(|v| std::str::from_utf8(v).ok()?.parse::<u64>().ok());
    let mut progress = Progress::new(total, silent);
    // Even an empty body makes its (empty) file.
    out.write(&[])?;
    let mut size = 0;
    let read = loop {
        match response.chunk() {
            Ok(Some(chunk)) => {
                out.write(chunk)?;
                progress.advance(chunk.len());
                size += chunk.len() as u64;
            }
            Ok(None) => break Ok(size),
            Err(e) => break Err(e),
        }
    };
    progress.finish();
    Ok(read)
}

/// HTTP statuses tried again with `--retry`, as curl's: a timeout, too many requests, or a
/// server's (or its gateway's) failure.
const RETRY_STATUSES: [u16; 6] = [408, 429, 500, 502, 503, 504];

/// `--retry`: attempts left and the wait before the next.
struct Retry {
    left: u32,
    made: u32,
    /// `--retry-delay`; else a second, doubled each time up to ten minutes.
    fixed: Option<Duration>,
    backoff: Duration,
    /// `--retry-max-time`: no attempt starts after it.
    until: Option<Instant>,
    connection_refused: bool,
    all_errors: bool,
    silent: bool,
}

impl Retry {
    fn new(args: &GetArgs) -> Result<Retry, String> {
        let positive = |s: f64, flag| match s {
            0.0 => Ok(None),
            s => seconds(s, flag).map(Some),
        };
        Ok(Retry {
            left: args.retry,
            made: 0,
            fixed: positive(args.retry_delay, "--retry-delay")?,
            backoff: Duration::from_secs(1),
            until: positive(args.retry_max_time, "--retry-max-time")?
                .map(|limit| Instant::now() + limit),
            connection_refused: args.retry_connrefused,
            all_errors: args.retry_all_errors,
            silent: args.silent,
        })
    }

    /// Whether a request that failed with `e` may be sent again: after a timeout, a
    /// refused connection with `--retry-connrefused`, anything with `--retry-all-errors`.
    fn transient(&self, e: &Error) -> bool {
        match e {
            Error::Timeout(_) => true,
            Error::Connect { source, .. } if source.kind() == io::ErrorKind::ConnectionRefused => {
                self.connection_refused || self.all_errors
            }
            _ => self.all_errors,
        }
    }

    /// After a failure (`why`), waits and says true if another attempt is due: one is
    /// left, and it would start within `--retry-max-time`. `after` is the server's
    /// `retry-after`.
    fn again(&mut self, why: &str, after: Option<Duration>) -> bool {
        let wait = after.or(self.fixed).unwrap_or(self.backoff);
        let late = self
            .until
            .is_some_and(|until| Instant::now() + wait > until);
        if self.left == 0 || late {
            return false;
        }
        self.left -= 1;
        self.made += 1;
        self.backoff = (self.backoff * 2).min(Duration::from_secs(600));
        if !self.silent {
            let left = self.left;
            let plural = if left == 1 { "" } else { "s" };
            eprintln!(
                "ringwire: {why}; trying again in {:.1} s, {left} more time{plural} at most",
                wait.as_secs_f64()
            );
        }
        std::thread::sleep(wait);
        true
    }
}

/// What `-C` came to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Resumed {
    /// Not asked for (or at byte 0): the body is written as a whole.
    No,
    /// The rest comes (`206`): appended.
    Rest,
    /// Nothing is left (`416`, or a whole body as long as what is there): nothing written.
    Complete,
    /// Another status (an error, a redirect not followed): reported as `--fail` reports
    /// it, nothing appended (a page of it would spoil the file).
    Failed,
}

/// What the answer to a request resumed at byte `at` means for the file, as curl sees it;
/// an error when the server sent a body from elsewhere.
fn resumed<'h>(
    at: u64,
    status: u16,
    header: impl Fn(&str) -> Option<&'h [u8]>,
) -> Result<Resumed, RangeError> {
    let number = |v: &[u8]| std::str::from_utf8(v).ok()?.trim().parse::<u64>().ok();
    match status {
        206 => {
            // `bytes FIRST-LAST/LENGTH`
            let first = header("content-range")
                .and_then(|v| v.strip_prefix(b"bytes "))
                .and_then(|v| number(v.split(|&b| b == b'-').next()?));
            match first {
                Some(first) if first == at => Ok(Resumed::Rest),
                _ => Err(RangeError(format!(
                    "the server sent bytes from {}, not from {at}: cannot resume",
                    first.map_or("elsewhere".into(), |f| f.to_string())
                ))),
            }
        }
        416 => Ok(Resumed::Complete),
        200..=299 if header("content-length").and_then(number) == Some(at) => Ok(Resumed::Complete),
        200..=299 => Err(RangeError(format!(
            "the server sent the whole body, not the rest from byte {at}: cannot resume"
        ))),
        _ => Ok(Resumed::Failed),
    }
}

/// A resumed transfer the server did not continue (curl's exit 33).
struct RangeError(String);

/// `-C`: the byte to resume at; `-` is the length of the output file (0 when there is none).
fn resume_offset(at: Option<&str>, output: Option<&Path>) -> Result<u64, String> {
    match at {
        None => Ok(0),
        Some("-") => match output.filter(|p| p.as_os_str() != "-") {
            None => Err("-C - needs a file to resume (-o FILE or -O)".into()),
            Some(path) => match std::fs::metadata(path) {
                Ok(metadata) => Ok(metadata.len()),
                Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(0),
                Err(e) => Err(format!("cannot read {}: {}", path.display(), line(e))),
            },
        },
        Some(n) => n
            .parse()
            .map_err(|_| format!("-C wants a byte offset or -, not {n:?}")),
    }
}

/// -J: the file name a `content-disposition` value gives (`filename=NAME` or
/// `filename="NAME"`), its last path segment only, as curl takes it.
fn disposition_name(value: &[u8]) -> Option<String> {
    let value = std::str::from_utf8(value).ok()?;
    let name = value.split(';').find_map(|param| {
        let (key, name) = param.split_once('=')?;
        key.trim().eq_ignore_ascii_case("filename").then(|| {
            let name = name.trim();
            name.strip_prefix('"')
                .and_then(|n| n.strip_suffix('"'))
                .unwrap_or(name)
        })
    })?;
    let name = name.rsplit(['/', '\\']).next()?;
    (!name.is_empty() && name != "." && name != "..").then(|| name.to_owned())
}

/// -G: `url` with `data` added to its query.
fn with_query(url: &Url, data: &[u8]) -> Result<Url, String> {
    let data = String::from_utf8_lossy(data);
    let full = url.to_string();
    let glue = if url.target().contains('?') { '&' } else { '?' };
    let joined = format!("{full}{glue}{data}");
    Url::parse(&joined).map_err(|e| format!("invalid URL {joined:?}: {e}"))
}

/// `-O`: the last segment of `url`'s path, as curl takes it (not decoded).
fn remote_name(url: &Url) -> Result<String, String> {
    let path = url.target().split(['?', '#']).next().unwrap_or_default();
    match path.rsplit('/').next() {
        Some(name) if !name.is_empty() && name != "." && name != ".." => Ok(name.to_owned()),
        _ => Err(format!("-O: {url} names no file (its path ends in /)")),
    }
}

/// The netrc file -n or --netrc-file names, if any and there.
fn netrc_text(args: &GetArgs) -> Result<Option<String>, String> {
    let path = match (&args.netrc_file, args.netrc || args.netrc_optional) {
        (Some(path), _) => path.clone(),
        (None, true) => match std::env::var_os("HOME") {
            Some(home) => PathBuf::from(home).join(".netrc"),
            None => return Ok(None),
        },
        (None, false) => return Ok(None),
    };
    match std::fs::read_to_string(&path) {
        Ok(text) => Ok(Some(text)),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(format!("cannot read {}: {}", path.display(), line(e))),
    }
}

/// A netrc entry as `USER:PASSWORD`.
fn user_password((login, password): crate::netrc::Credentials) -> String {
    format!("{login}:{password}")
}

/// `-u USER:PASSWORD` as an `authorization` value (RFC 7617).
fn basic(user: &str) -> Result<String, String> {
    if !user.contains(':') {
        return Err("-u wants USER:PASSWORD (there is no prompt for the password)".into());
    }
    let credentials = base64::engine::general_purpose::STANDARD.encode(user);
    Ok(format!("Basic {credentials}"))
}

/// Where the heads and the body go: stdout, or a file created at the
/// first write, so that a request that fails leaves none behind.
struct Output<'p> {
    path: Option<&'p Path>,
    sink: Option<Sink>,
    append: bool,
    /// A file that must not be there yet (a name the server chose).
    fresh: bool,
}

enum Sink {
    File(File),
    /// Stdout, and whether anything went to it.
    Stdout(io::StdoutLock<'static>, bool),
}

impl<'p> Output<'p> {
    /// `-o PATH`; `-` and none are stdout. A file is added to if `append`.
    fn new(path: Option<&'p Path>, append: bool) -> Self {
        Output {
            path: path.filter(|p| p.as_os_str() != "-"),
            sink: None,
            append,
            fresh: false,
        }
    }

    /// Refuses to write over a file that is there.
    fn fresh(self) -> Self {
        Output {
            fresh: true,
            ..self
        }
    }

    fn write(&mut self, bytes: &[u8]) -> Result<(), String> {
        let sink = match &mut self.sink {
            Some(sink) => sink,
            None => self.sink.insert(match self.path {
                Some(path) => Sink::File(
                    File::options()
                        .write(true)
                        .create(!self.fresh)
                        .create_new(self.fresh)
                        .append(self.append)
                        .truncate(!self.append && !self.fresh)
                        .open(path)
                        .map_err(|e| format!("cannot write {}: {}", path.display(), line(e)))?,
                ),
                None => Sink::Stdout(io::stdout().lock(), false),
            }),
        };
        let written = match sink {
            Sink::File(file) => file.write_all(bytes),
            Sink::Stdout(stdout, wrote) => {
                *wrote |= !bytes.is_empty();
                stdout.write_all(bytes)
            }
        };
        written.map_err(|e| format!("cannot write the body: {}", line(e)))
    }

    fn flush(&mut self) -> Result<(), String> {
        let flushed = match &mut self.sink {
            Some(Sink::File(file)) => file.flush(),
            Some(Sink::Stdout(stdout, _)) => stdout.flush(),
            None => Ok(()),
        };
        flushed.map_err(|e| format!("cannot write the body: {}", line(e)))
    }

    /// Takes back what was written, leaving a file `len` bytes long (none, for a file that
    /// had to be new): false when that cannot be done (bytes went to stdout).
    fn take_back(&mut self, len: u64) -> Result<bool, String> {
        let cannot = |e| format!("cannot write the body: {}", line(e));
        match (&self.sink, self.path) {
            (Some(Sink::File(_)), Some(path)) if self.fresh => {
                self.sink = None;
                std::fs::remove_file(path).map(|()| true).map_err(cannot)
            }
            (Some(Sink::File(file)), _) => file.set_len(len).map(|()| true).map_err(cannot),
            (Some(Sink::Stdout(_, wrote)), _) => Ok(!wrote),
            (None, _) => Ok(true),
        }
    }
}

/// Prints a request head's lines with `prefix`, as `curl -v` does; over
/// HTTP/2, its request line says so.
fn print_head(prefix: &str, head: &[u8], protocol: Protocol) {
    let text = String::from_utf8_lossy(head);
    let mut err = io::stderr().lock();
    for (i, line) in text.split("\r\n").take_while(|l| !l.is_empty()).enumerate() {
        let line = match (i, protocol, line.strip_suffix(" HTTP/1.1")) {
            (0, Protocol::Http2, Some(start)) => format!("{start} HTTP/2"),
            _ => line.to_owned(),
        };
        let _ = writeln!(err, "{prefix}{line}");
    }
    let _ = writeln!(err, "{prefix}");
}

fn print_response_head(head: &ringwire_http1::Response<'_>, protocol: Protocol) {
    let _ = write_response_head(&mut io::stderr().lock(), "< ", "\n", head, protocol);
}

/// Writes `head`: its status line and fields, each after `prefix` and
/// ended by `eol`, then a line with only the prefix.
fn write_response_head(
    out: &mut impl Write,
    prefix: &str,
    eol: &str,
    head: &ringwire_http1::Response<'_>,
    protocol: Protocol,
) -> io::Result<()> {
    match protocol {
        Protocol::Http2 => write!(out, "{prefix}HTTP/2 {}", head.status())?,
        Protocol::Http1 => write!(out, "{prefix}{} {}", head.version(), head.status())?,
    }
    if !head.reason().is_empty() {
        out.write_all(b" ")?;
        out.write_all(head.reason())?;
    }
    out.write_all(eol.as_bytes())?;
    for field in head.headers() {
        write!(out, "{prefix}{}: ", field.name)?;
        out.write_all(field.value)?;
        out.write_all(eol.as_bytes())?;
    }
    write!(out, "{}{eol}", prefix.trim_end())
}

/// A one-line progress bar on stderr, drawn only when stderr is a
/// terminal, the body is large and `-s` is not given, at most ten times a
/// second.
struct Progress {
    total: Option<u64>,
    done: u64,
    /// Whether it may be drawn at all.
    shown: bool,
    drawn: Option<Instant>,
}

impl Progress {
    /// A bar for a body of `total` bytes, unless `silent`.
    fn new(total: Option<u64>, silent: bool) -> Self {
        Progress {
            total,
            done: 0,
            shown: !silent && io::stderr().is_terminal(),
            drawn: None,
        }
    }

    fn advance(&mut self, n: usize) {
        self.reach(self.done + n as u64);
    }

    /// `done` bytes are through.
    fn reach(&mut self, done: u64) {
        self.done = done;
        let large = self.total.unwrap_or(self.done) >= PROGRESS_FROM;
        let due = self
            .drawn
            .is_none_or(|at| at.elapsed() >= Duration::from_millis(100));
        if self.shown && large && due {
            self.draw();
            self.drawn = Some(Instant::now());
        }
    }

    fn draw(&self) {
        const WIDTH: u64 = 30;
        let mib = |n: u64| n as f64 / f64::from(1 << 20);
        let line = match self.total {
            Some(total) if total > 0 => {
                let filled = (self.done.min(total) * WIDTH / total) as usize;
                format!(
                    "\r[{}{}] {:5.1} / {:.1} MiB",
                    "#".repeat(filled),
                    " ".repeat(WIDTH as usize - filled),
                    mib(self.done),
                    mib(total)
                )
            }
            _ => format!("\r{:.1} MiB", mib(self.done)),
        };
        let _ = io::stderr().lock().write_all(line.as_bytes());
    }

    fn finish(&self) {
        if self.drawn.is_some() {
            self.draw();
            eprintln!();
        }
    }
}
