//! Bodies decoded as they are read (`HeaderBuilder::decompress`), by the
//! blocking and the tokio client alike: from ringwire's server behind its
//! `Compress` middleware (brotli, zstd and gzip), and from a raw server for the
//! codings, framings and faults that middleware never sends.

mod common;

use std::io::{Read as _, Write as _};
use std::time::Duration;

use common::{Raw, Reply};
use flate2::write::{DeflateEncoder, GzEncoder, ZlibEncoder};
use flate2::Compression;
use ringwire_client::{
    blocking, tokio as async_client, ClientConfig, Corruption, Encoding, Error, Request,
    RequestBuffer, Url,
};
use ringwire_server::middleware::Compress;
use ringwire_server::{Handler, Request as ServerRequest, Response};

/// Text that compresses well, several decoded pieces long.
fn text() -> Vec<u8> {
    (0..10_000)
        .flat_map(|n| format!("line {n} of the text\n").into_bytes())
        .collect()
}

/// A run of 200 000 bytes that decodes from a few hundred, then [`text`].
fn run_and_text() -> Vec<u8> {
    [vec![b'a'; 200_000], text()].concat()
}

fn gzip(data: &[u8]) -> Vec<u8> {
    let mut gz = GzEncoder::new(Vec::new(), Compression::default());
    gz.write_all(data).unwrap();
    gz.finish().unwrap()
}

fn zlib(data: &[u8]) -> Vec<u8> {
    let mut z = ZlibEncoder::new(Vec::new(), Compression::default());
    z.write_all(data).unwrap();
    z.finish().unwrap()
}

fn raw_deflate(data: &[u8]) -> Vec<u8> {
    let mut d = DeflateEncoder::new(Vec::new(), Compression::default());
    d.write_all(data).unwrap();
    d.finish().unwrap()
}

fn brotli(data: &[u8]) -> Vec<u8> {
    let mut br = ::brotli::CompressorWriter::new(Vec::new(), 4096, 5, 22);
    br.write_all(data).unwrap();
    br.into_inner()
}

/// A `200` whose body is `body`, with `content-encoding: coding`.
fn encoded(coding: &str, body: &[u8]) -> Vec<u8> {
    let head = format!(
        "HTTP/1.1 200 OK\r\ncontent-encoding: {coding}\r\ncontent-length: {}\r\n\r\n",
        body.len()
    );
    [head.as_bytes(), body].concat()
}

/// [`encoded`], chunked: a chunk for each of `pieces`.
fn chunked<'a>(coding: &str, pieces: impl IntoIterator<Item = &'a [u8]>) -> Vec<u8> {
    let mut out = format!(
        "HTTP/1.1 200 OK\r\ncontent-encoding: {coding}\r\ntransfer-encoding: chunked\r\n\r\n"
    )
    .into_bytes();
    for piece in pieces {
        out.extend_from_slice(format!("{:x}\r\n", piece.len()).as_bytes());
        out.extend_from_slice(piece);
        out.extend_from_slice(b"\r\n");
    }
    out.extend_from_slice(b"0\r\n\r\n");
    out
}

/// Bytes of `compress` (LZW), a coding the client does not undo.
const LZW: &[u8] = b"\x1f\x9d\x90 not decoded here";

fn zstd(data: &[u8]) -> Vec<u8> {
    zstd::bulk::compress(data, 3).unwrap()
}

/// A raw server answering each path with one of the bodies no `Compress`
/// middleware sends.
fn raw() -> Raw {
    Raw::start(|request| {
        let text = text();
        let path = request.split(' ').nth(1).unwrap_or_default();
        Reply::Send(match path {
            "/gzip" => encoded("gzip", &gzip(&text)),
            "/x-gzip" => encoded("x-gzip", &gzip(&text)),
            "/zlib" => encoded("deflate", &zlib(&text)),
            "/raw-deflate" => encoded("deflate", &raw_deflate(&text)),
            "/chunked-gzip" => chunked("gzip", gzip(&text).chunks(1000)),
            "/chunked-zstd" => chunked("zstd", zstd(&text).chunks(1000)),
            // Two frames, as `zstd` writes for files concatenated.
            "/zstd-frames" => {
                let (first, second) = text.split_at(text.len() / 3);
                encoded("zstd", &[zstd(first), zstd(second)].concat())
            }
            "/split" => {
                // The header and the trailer, which decode to nothing, in
                // chunks of their own: the first chunk of the run after the
                // header decodes to more than a piece of output.
                let body = gzip(&run_and_text());
                let (header, rest) = body.split_at(10);
                let (data, trailer) = rest.split_at(rest.len() - 8);
                chunked(
                    "gzip",
                    [header]
                        .into_iter()
                        .chain(data.chunks(1000))
                        .chain([trailer]),
                )
            }
            // A byte at a time: pieces of one byte, most decoding to nothing.
            "/trickle" => return Reply::Trickle(encoded("gzip", &gzip(&text[..400]))),
            "/unknown" => encoded("compress", LZW),
            "/stacked" => encoded("gzip, br", &brotli(&gzip(&text))),
            "/corrupt" => {
                let mut body = gzip(&text);
                let middle = body.len() / 2;
                body[middle] ^= 0xff;
                encoded("gzip", &body)
            }
            "/cut" => {
                let body = gzip(&text);
                encoded("gzip", &body[..body.len() - 20])
            }
            "/bomb" => encoded("gzip", &gzip(&vec![0; 4 << 20])),
            "/redirect" => {
                b"HTTP/1.1 302 Found\r\nlocation: /gzip\r\ncontent-length: 0\r\n\r\n".to_vec()
            }
            _ => b"HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\n\r\n".to_vec(),
        })
    })
}

/// The text, as plain text, for `Compress` to compress.
struct Text;

impl Handler for Text {
    async fn call(&self, _: &ServerRequest<'_>) -> Response {
        Response::text(text())
    }
}

/// What a request brought back: the coding its body was decoded from, and
/// the body as read.
type Got = (Option<Encoding>, Vec<u8>);

/// Either client, as the scenarios below drive it: a GET of `url`, asking
/// for decompression or not, with an `accept-encoding` of its own or not.
trait Get {
    fn get(&self, url: &str, decompress: bool, accept: Option<&str>) -> Result<Got, Error>;
    fn idle(&self, url: &str) -> usize;
}

struct Blocking(blocking::Client);

struct Async(async_client::Client, tokio::runtime::Runtime);

impl Async {
    fn new(config: ClientConfig) -> Async {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        Async(async_client::Client::new(config), runtime)
    }
}

fn request<'a>(
    buffer: &mut RequestBuffer,
    url: &'a Url,
    decompress: bool,
    accept: Option<&str>,
) -> Request<'a> {
    let mut headers = buffer.request("GET", url).unwrap().headers().unwrap();
    if decompress {
        headers = headers.decompress();
    }
    if let Some(accept) = accept {
        headers = headers.header("accept-encoding", accept).unwrap();
    }
    headers.finish().unwrap()
}

impl Get for Blocking {
    fn get(&self, url: &str, decompress: bool, accept: Option<&str>) -> Result<Got, Error> {
        let url = Url::parse(url).unwrap();
        let mut buffer = RequestBuffer::new().unwrap();
        let request = request(&mut buffer, &url, decompress, accept);
        let mut response = self.0.send(&mut buffer, &request)?;
        Ok((response.decoding(), response.bytes()?))
    }

    fn idle(&self, url: &str) -> usize {
        self.0.idle_connections(&Url::parse(url).unwrap())
    }
}

impl Get for Async {
    fn get(&self, url: &str, decompress: bool, accept: Option<&str>) -> Result<Got, Error> {
        let url = Url::parse(url).unwrap();
        let mut buffer = RequestBuffer::new().unwrap();
        let request = request(&mut buffer, &url, decompress, accept);
        self.1.block_on(async {
            let mut response = self.0.send(&mut buffer, &request).await?;
            Ok((response.decoding(), response.bytes().await?))
        })
    }

    fn idle(&self, url: &str) -> usize {
        self.0.idle_connections(&Url::parse(url).unwrap())
    }
}

/// No test waits longer than this for an answer.
fn config() -> ClientConfig {
    ClientConfig {
        request_timeout: Some(Duration::from_secs(10)),
        ..ClientConfig::default()
    }
}

/// Both clients, made as `config` says.
fn clients(config: ClientConfig) -> [Box<dyn Get>; 2] {
    [
        Box::new(Blocking(blocking::Client::new(config))),
        Box::new(Async::new(config)),
    ]
}

#[test]
fn ringwire_compress_bodies_come_out_decoded() {
    let addr = common::ringwire(Compress::new(Text));
    let url = format!("http://{addr}/text");
    let text = text();
    for (i, client) in clients(config()).into_iter().enumerate() {
        // The offer is gzip, deflate, br and zstd, all alike: the middleware answers a body
        // new to it with zstd (the least work), one it has seen with brotli (the smallest,
        // made once and kept).
        let (decoding, body) = client.get(&url, true, None).unwrap();
        let first = if i == 0 {
            Encoding::Zstd
        } else {
            Encoding::Brotli
        };
        assert_eq!(decoding, Some(first));
        assert!(body == text, "{first}: {} bytes", body.len());
        let (decoding, body) = client.get(&url, true, None).unwrap();
        assert_eq!(decoding, Some(Encoding::Brotli));
        assert!(body == text, "brotli: {} bytes", body.len());
        // The caller's own offer goes instead, and is decoded all the same.
        let (decoding, body) = client.get(&url, true, Some("gzip")).unwrap();
        assert_eq!(decoding, Some(Encoding::Gzip));
        assert!(body == text, "gzip: {} bytes", body.len());
        let (decoding, body) = client.get(&url, true, Some("zstd, gzip")).unwrap();
        assert_eq!(decoding, Some(Encoding::Zstd));
        assert!(body == text, "zstd: {} bytes", body.len());
        // Without decompression the body is the server's bytes.
        let (decoding, body) = client.get(&url, false, Some("gzip")).unwrap();
        assert_eq!(decoding, None);
        let mut decoded = Vec::new();
        flate2::read::GzDecoder::new(&body[..])
            .read_to_end(&mut decoded)
            .unwrap();
        assert!(body.len() < text.len() / 4 && decoded == text);
        // Every body was read to its end: one connection for all of them.
        assert_eq!(client.idle(&url), 1);
    }
}

#[test]
fn deflate_either_way_x_gzip_gzip_and_zstd_in_any_pieces_are_decoded() {
    let server = raw();
    let text = text();
    for client in clients(config()) {
        for (path, coding) in [
            ("/zlib", Encoding::Deflate),
            ("/raw-deflate", Encoding::Deflate),
            ("/x-gzip", Encoding::Gzip),
            ("/chunked-gzip", Encoding::Gzip),
            ("/chunked-zstd", Encoding::Zstd),
            ("/zstd-frames", Encoding::Zstd),
        ] {
            let (decoding, body) = client.get(&server.url(path), true, None).unwrap();
            assert_eq!(decoding, Some(coding), "{path}");
            assert!(body == text, "{path}: {} bytes", body.len());
        }
        let (decoding, body) = client.get(&server.url("/split"), true, None).unwrap();
        assert_eq!(decoding, Some(Encoding::Gzip));
        assert!(body == run_and_text(), "{} bytes", body.len());
        let (decoding, body) = client.get(&server.url("/trickle"), true, None).unwrap();
        assert_eq!(decoding, Some(Encoding::Gzip));
        assert!(body == text[..400], "{} bytes", body.len());
        assert_eq!(client.idle(&server.url("/")), 1);
    }
    let requests = server.requests();
    assert!(requests
        .iter()
        .all(|r| r.contains("\r\naccept-encoding: gzip, deflate, br, zstd\r\n")));
}

#[test]
fn unknown_and_stacked_codings_are_passed_through_untouched() {
    let server = raw();
    let stacked = brotli(&gzip(&text()));
    for client in clients(config()) {
        let got = client.get(&server.url("/unknown"), true, None).unwrap();
        assert_eq!(got, (None, LZW.to_vec()));
        let got = client.get(&server.url("/stacked"), true, None).unwrap();
        assert!(got == (None, stacked.clone()), "{} bytes", got.1.len());
    }
}

#[test]
fn corrupt_and_cut_bodies_are_errors_and_close_the_connection() {
    let server = raw();
    for client in clients(config()) {
        for (path, expected) in [
            ("/corrupt", Corruption::Invalid),
            ("/cut", Corruption::Truncated),
        ] {
            // A good body first, so that a connection is pooled...
            client.get(&server.url("/gzip"), true, None).unwrap();
            assert_eq!(client.idle(&server.url("/")), 1, "{path}");
            // ...which the bad one leaves closed, even read to its end.
            match client.get(&server.url(path), true, None) {
                Err(Error::Decompress {
                    encoding: Encoding::Gzip,
                    corruption,
                }) => assert_eq!(corruption, expected, "{path}"),
                other => panic!("{path}: {other:?}"),
            }
            assert_eq!(client.idle(&server.url("/")), 0, "{path}");
        }
    }
}

#[test]
fn a_bomb_stops_at_max_decoded_body_len() {
    let server = raw();
    let bounded = ClientConfig {
        max_decoded_body_len: 1 << 20,
        ..config()
    };
    for client in clients(bounded) {
        let error = client.get(&server.url("/bomb"), true, None).unwrap_err();
        assert!(
            matches!(error, Error::DecodedBodyTooLarge { limit } if limit == 1 << 20),
            "{error:?}"
        );
        assert!(
            error.to_string().contains("max_decoded_body_len"),
            "{error}"
        );
        assert_eq!(client.idle(&server.url("/")), 0);
    }
}

#[test]
fn without_decompress_nothing_is_offered_or_decoded() {
    let server = raw();
    let compressed = gzip(&text());
    for client in clients(config()) {
        let got = client.get(&server.url("/gzip"), false, None).unwrap();
        assert!(got == (None, compressed.clone()), "{} bytes", got.1.len());
    }
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    assert!(
        requests.iter().all(|r| !r.contains("accept-encoding")),
        "{requests:?}"
    );
}

#[test]
fn a_redirect_keeps_decoding() {
    let server = raw();
    let follow = ClientConfig {
        max_redirects: Some(1),
        ..config()
    };
    for client in clients(follow) {
        let (decoding, body) = client.get(&server.url("/redirect"), true, None).unwrap();
        assert_eq!(decoding, Some(Encoding::Gzip));
        assert!(body == text(), "{} bytes", body.len());
    }
}

/// On a shared HTTP/2 connection, a body is decoded as it is read too, for the
/// requests that ask, and bounded the same way.
#[test]
fn a_shared_http2_connection_decodes_too() {
    let addr = common::ringwire(Compress::new(Text));
    let url = Url::parse(&format!("http://{addr}/text")).unwrap();
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        let get = |conn: &async_client::Http2Connection, accept: Option<&'static str>| {
            let (conn, url) = (conn.clone(), url.clone());
            async move {
                let mut buffer = RequestBuffer::new().unwrap();
                let head = buffer.request("GET", &url).unwrap().headers().unwrap();
                let head = match accept {
                    Some(accept) => head.header("accept-encoding", accept).unwrap(),
                    None => head,
                };
                let request = head.decompress().finish().unwrap();
                let mut response = conn.send(&mut buffer, &request).await?;
                let decoding = response.decoding();
                Ok::<_, Error>((decoding, response.bytes().await?))
            }
        };
        let client = async_client::Client::new(config());
        let conn = client.http2_connection(&url).await.unwrap();
        for (accept, coding) in [
            (Some("gzip"), Encoding::Gzip),
            (Some("zstd"), Encoding::Zstd),
            (None, Encoding::Brotli),
        ] {
            let (decoding, body) = get(&conn, accept).await.unwrap();
            assert_eq!(decoding, Some(coding));
            assert!(body == text(), "{coding}: {} bytes", body.len());
        }
        let bounded = async_client::Client::new(ClientConfig {
            max_decoded_body_len: 100_000,
            ..config()
        });
        let conn = bounded.http2_connection(&url).await.unwrap();
        let error = get(&conn, Some("gzip")).await.unwrap_err();
        assert!(
            matches!(error, Error::DecodedBodyTooLarge { limit: 100_000 }),
            "{error:?}"
        );
        // The stream given up, the connection goes on.
        let (_, body) = get(&conn, Some("identity")).await.unwrap();
        assert!(body == text());
    });
}
