//! What the fuzz targets drive that is the crate's own (built only under `cfg(fuzzing)`,
//! which `cargo fuzz` sets): the HTTP/2 exchange on arbitrary server bytes, alone on its
//! connection or beside others on a shared one, and which hosts a no-proxy list exempts.

use std::net::IpAddr;
use std::task::{Context, Poll, Waker};

use crate::h2::{BodyStep, HeadStep, H2};
use crate::mux::Mux;
use crate::{ClientConfig, Proxies, Proxy, Trailers, Url};

/// A request body past the default 65,535-byte windows, so part of it waits for them.
static BODY: [u8; 70_000] = [b'x'; 70_000];

/// One exchange of the client's HTTP/2 layer, as either driver runs it, with `server` as
/// everything the server sends, arriving in pieces. `setup`'s low two bits pick the request
/// (a GET, a HEAD, a POST of 70,000 bytes, the same POST held back until a `100 Continue`);
/// the next three the largest piece (`1 << 2n` bytes).
///
/// It must end (an answer read to its end, an error, or the bytes run out) without a panic,
/// and every step must stay within the bytes it was given.
pub fn h2_exchange(setup: u8, server: &[u8]) {
    let mut h2 = H2::new(&ClientConfig::default());
    let Ok(url) = Url::parse("http://example.com/x") else {
        return;
    };
    let (head, body, held): (&[u8], &[u8], bool) = match setup & 3 {
        0 => (
            b"GET /x HTTP/1.1\r\nhost: example.com\r\naccept: */*\r\n\r\n",
            b"",
            false,
        ),
        1 => (b"HEAD /x HTTP/1.1\r\nhost: example.com\r\n\r\n", b"", false),
        mode => (
            b"POST /x HTTP/1.1\r\nhost: example.com\r\ncontent-length: 70000\r\n\r\n",
            &BODY,
            mode == 3,
        ),
    };
    if h2.send(&url, head, (!held).then_some(body)).is_err() {
        return;
    }
    let piece = 1 << (2 * ((setup >> 2) & 7));
    let mut rest = server;
    let mut buf = Vec::new();
    // Appends the next piece; false once the server's bytes are all in.
    let mut feed = |buf: &mut Vec<u8>| {
        let n = piece.min(rest.len());
        buf.extend_from_slice(&rest[..n]);
        rest = &rest[n..];
        n > 0
    };
    let mut waiting = held;
    loop {
        h2.advance(h2.pending());
        match h2.head(&buf) {
            Err(_) => return,
            Ok(HeadStep::Need(used)) => {
                buf.drain(..used);
                if !feed(&mut buf) {
                    return;
                }
            }
            Ok(HeadStep::Interim { consumed, status }) => {
                assert!(consumed > 0, "an interim head of no bytes");
                let _ = h2.head_view().status();
                buf.drain(..consumed);
                if waiting && status == 100 {
                    waiting = false;
                    if h2.send_body(body).is_err() {
                        return;
                    }
                }
            }
            Ok(HeadStep::Final {
                consumed,
                end_stream,
            }) => {
                let view = h2.head_view();
                let _ = (view.status(), view.header("content-length"));
                buf.drain(..consumed);
                if end_stream {
                    return;
                }
                break;
            }
        }
    }
    loop {
        h2.advance(h2.pending());
        match h2.body(&buf) {
            Err(_) => return,
            Ok(BodyStep::Data { piece, consumed }) => {
                assert!(
                    piece.start <= piece.end && piece.end <= consumed,
                    "a piece outside its frame"
                );
                let _ = &buf[piece];
                buf.drain(..consumed);
            }
            Ok(BodyStep::Need(used)) => {
                buf.drain(..used);
                if !feed(&mut buf) {
                    return;
                }
            }
            Ok(BodyStep::Done(used)) => {
                buf.drain(..used);
                return;
            }
        }
    }
}

/// Several exchanges on one shared HTTP/2 connection ([`Mux`]), with `server` as everything
/// the server sends, arriving in pieces. `setup`'s low two bits say how many requests (one
/// to four; the second a POST of 70,000 bytes given whole, the fourth the same streamed as
/// the windows take it), the next three the largest piece (`1 << 2n` bytes), the top bit
/// whether the first exchange is given up after its head.
///
/// It must end without a panic, each step within the bytes it was given.
pub fn h2_shared(setup: u8, server: &[u8]) {
    let mut mux = Mux::new(&ClientConfig::default());
    let Ok(url) = Url::parse("http://example.com/x") else {
        return;
    };
    let mut cx = Context::from_waker(Waker::noop());
    let mut streams = Vec::new();
    for i in 0..=(setup & 3) {
        let (head, body): (&[u8], &[u8]) = if i % 2 == 0 {
            (b"GET /x HTTP/1.1\r\nhost: example.com\r\n\r\n", b"")
        } else {
            (
                b"POST /x HTTP/1.1\r\nhost: example.com\r\ncontent-length: 70000\r\n\r\n",
                &BODY,
            )
        };
        let streamed = i == 3;
        match mux.poll_open(&mut cx, &url, head, (!streamed).then_some(body)) {
            Poll::Ready(Ok(stream)) => streams.push((stream, false, false)),
            Poll::Ready(Err(_)) | Poll::Pending => return,
        }
    }
    #[cfg(feature = "ws")]
    let mut tunnel = if setup & 0x40 != 0 {
        Tunnel::Opening
    } else {
        Tunnel::Done
    };
    let mut upload = if streams.len() == 4 { BODY.len() } else { 0 };
    let piece = 1 << (2 * ((setup >> 2) & 7));
    let give_up = setup & 0x80 != 0;
    let mut buf = Vec::new();
    let mut trailers = Trailers::new();
    let mut body = Vec::new();
    for next in server.chunks(piece) {
        buf.extend_from_slice(next);
        while !mux.transmit().is_empty() {
            mux.advance(mux.transmit().len());
        }
        let Ok(used) = mux.receive(&buf) else {
            return;
        };
        assert!(used <= buf.len(), "used bytes it was not given");
        buf.drain(..used);
        #[cfg(feature = "ws")]
        tunnel.step(&mut mux, &mut cx, &url);
        if upload > 0 {
            match mux.poll_send_room(&mut cx, streams[3].0) {
                Poll::Ready(Ok(Some(room))) => {
                    let n = room.min(upload);
                    upload -= n;
                    if !mux.send_piece(streams[3].0, &BODY[..n], upload == 0) {
                        upload = 0;
                    }
                }
                Poll::Ready(_) => upload = 0,
                Poll::Pending => {}
            }
        }
        for (n, (stream, headed, ended)) in streams.iter_mut().enumerate() {
            if *ended {
                continue;
            }
            if !*headed {
                match mux.poll_head(&mut cx, *stream) {
                    Poll::Ready(Ok((head, interim))) => {
                        let _ = head.view().status();
                        *headed = !interim;
                        if give_up && n == 0 {
                            mux.cancel(*stream);
                            *ended = true;
                        }
                    }
                    Poll::Ready(Err(_)) => *ended = true,
                    Poll::Pending => {}
                }
                continue;
            }
            while let Poll::Ready(next) = mux.poll_chunk(&mut cx, *stream, &mut body, &mut trailers)
            {
                match next {
                    Ok(true) => assert!(!body.is_empty(), "an empty piece of body"),
                    Ok(false) | Err(_) => {
                        *ended = true;
                        break;
                    }
                }
            }
        }
    }
}

/// A tunnel beside [`h2_shared`]'s exchanges (its setup's bit `0x40`): an extended
/// `CONNECT`, opened once the server's `SETTINGS` allow, then read and written as a
/// WebSocket on it would be.
#[cfg(feature = "ws")]
enum Tunnel {
    Opening,
    Open(ringwire_http2::frame::StreamId),
    Done,
}

#[cfg(feature = "ws")]
impl Tunnel {
    fn step(&mut self, mux: &mut Mux, cx: &mut Context<'_>, url: &Url) {
        match *self {
            Tunnel::Opening => match mux.poll_open_tunnel(cx, url, b"websocket", &[]) {
                Poll::Ready(Ok(stream)) => *self = Tunnel::Open(stream),
                Poll::Ready(Err(_)) => *self = Tunnel::Done,
                Poll::Pending => {}
            },
            Tunnel::Open(stream) => {
                let mut buf = [0; 512];
                let _ = mux.poll_readable(cx, stream);
                loop {
                    match mux.try_read(stream, &mut buf) {
                        Ok(0) => break *self = Tunnel::Done,
                        Ok(n) => assert!(n <= buf.len(), "read past the buffer"),
                        Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => break,
                        Err(_) => break *self = Tunnel::Done,
                    }
                }
                let _ = mux.try_write(stream, &[std::io::IoSlice::new(b"\x81\x04ping")]);
            }
            Tunnel::Done => {}
        }
    }
}

/// `list` as a no-proxy list ([`Proxies::no_proxy`]) asked whether `url` goes through the
/// proxy. Nothing may panic; an empty list must not exempt `url`, and a list of `*`, of its
/// host, or (for a name) of `.` and a domain it is under, must (a list exempts what any of
/// its entries does, so one entry stands for the same appended to any list).
pub fn no_proxy(list: &str, url: &Url) {
    let proxy = Proxy::parse("http://proxy:3128").expect("a proxy URL");
    let routed = |list: &str| {
        Proxies::all(proxy.clone())
            .no_proxy(list)
            .route(url.origin())
            .is_some()
    };
    let _ = routed(list);
    assert!(routed(""));
    assert!(!routed("*"));
    let host = url.origin().host();
    // A list cannot name a host with a separator in it, nor one with an empty label
    // (`.`, `a..b`): an entry's leading and trailing dots are not part of the name.
    let name = host.strip_suffix('.').unwrap_or(host);
    if host.contains(|c: char| c == ',' || c.is_whitespace()) || name.split('.').any(str::is_empty)
    {
        return;
    }
    assert!(!routed(host), "{host}");
    let parent = host.split_once('.').map(|(_, parent)| parent);
    if let Some(parent) = parent.filter(|p| !p.is_empty() && host.parse::<IpAddr>().is_err()) {
        assert!(!routed(&format!(".{parent}")), "{host}");
    }
}
