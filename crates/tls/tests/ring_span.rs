//! Proof by addresses that OpenSSL decrypts into the receive ring: this
//! binary interposes `SSL_read_ex` (its own definition wins over libssl's
//! at link time), records the span each call is handed, and forwards to
//! libssl. Every span must lie inside the ring's mapping, and the bytes the
//! transport then shows must be there too.

use std::ffi::{c_int, c_void};
use std::ops::Range;
use std::sync::{Mutex, OnceLock};

mod common;

use common::{handshake, Pki};
use ringwire_io::tokio::{AsyncRecvTransport, AsyncSendTransport};
use ringwire_io::{Ring, RingConfig, TransportConfig};
use ringwire_ring::Backing;
use ringwire_tls::Backend;

type ReadEx = unsafe extern "C" fn(*mut c_void, *mut c_void, usize, *mut usize) -> c_int;

/// (start, length) of every buffer `SSL_read_ex` was given.
static SPANS: Mutex<Vec<(usize, usize)>> = Mutex::new(Vec::new());

/// Records the span, then runs libssl's `SSL_read_ex`.
///
/// # Safety
///
/// As for `SSL_read_ex`: `ssl` a live `SSL`, `buf` writable for `num`
/// bytes, `read` writable.
#[no_mangle]
pub unsafe extern "C" fn SSL_read_ex(
    ssl: *mut c_void,
    buf: *mut c_void,
    num: usize,
    read: *mut usize,
) -> c_int {
    SPANS.lock().unwrap().push((buf as usize, num));
    static LIBSSL: OnceLock<ReadEx> = OnceLock::new();
    let libssl = LIBSSL.get_or_init(|| {
        // SAFETY: a symbol lookup with a NUL-terminated name; `RTLD_NEXT`
        // skips this binary's own definition.
        let symbol = unsafe { libc::dlsym(libc::RTLD_NEXT, c"SSL_read_ex".as_ptr()) };
        assert!(!symbol.is_null(), "libssl's SSL_read_ex");
        // SAFETY: libssl's `SSL_read_ex` has exactly this signature.
        unsafe { std::mem::transmute::<*mut c_void, ReadEx>(symbol) }
    });
    // SAFETY: the caller's arguments, passed on unchanged.
    unsafe { libssl(ssl, buf, num, read) }
}

#[tokio::test]
async fn openssl_decrypts_straight_into_the_receive_ring() {
    let pki = Pki::new();
    // The sender is rustls, so every `SSL_read_ex` here is the receiver's.
    let (server, client) = handshake(
        &pki.server(Backend::Rustls),
        &pki.client(Backend::OpenSsl),
        "localhost",
    )
    .await;
    let (server, client) = (server.unwrap(), client.unwrap());

    let capacity = 64 << 10;
    let config = RingConfig::with_capacity(capacity)
        .max_capacity(capacity)
        .backing(Backing::Mirrored);
    let mut ring = Ring::new(config).unwrap();
    // An empty ring's free span starts at the mapping: both views follow.
    let start = ring.writable().as_ptr() as usize;
    let mapping = start..start + 2 * capacity;
    // Start near the end of the ring so that records land across the wrap.
    ring.reserve(capacity - 1000).unwrap();
    ring.commit(capacity - 1000);
    ring.consume(capacity - 1000);

    let message: Vec<u8> = (0..1_000_000u32).map(|i| (i % 251) as u8).collect();
    let mut tx = AsyncSendTransport::new(TransportConfig::default(), &server).unwrap();
    let mut rx = AsyncRecvTransport::with_ring(ring, &client);
    let sending = async {
        tx.send_vectored(&[&message]).await.unwrap();
    };
    let receiving = async {
        let mut got = 0;
        while got < message.len() {
            assert!(rx.fill(1).await.unwrap() > 0, "end after {got} bytes");
            let data = rx.data();
            assert!(inside(&mapping, data), "the plaintext is outside the ring");
            assert_eq!(data, &message[got..got + data.len()]);
            got += data.len();
            rx.consume(data.len());
        }
    };
    tokio::join!(sending, receiving);

    let spans = SPANS.lock().unwrap();
    // At most 16 KiB of plaintext per record.
    assert!(spans.len() >= message.len() / (16 << 10), "{}", spans.len());
    for &(at, len) in spans.iter() {
        assert!(
            mapping.contains(&at) && at + len <= mapping.end,
            "SSL_read_ex was handed {at:#x}+{len}, outside the ring {mapping:x?}"
        );
    }
}

fn inside(mapping: &Range<usize>, bytes: &[u8]) -> bool {
    let at = bytes.as_ptr() as usize;
    mapping.contains(&at) && at + bytes.len() <= mapping.end
}
