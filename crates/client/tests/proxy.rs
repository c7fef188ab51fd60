//! Both clients through a real forward proxy (proxy.py): `http://` in absolute-form,
//! `https://` (HTTP/1.1 and HTTP/2) and `ws://` through `CONNECT` tunnels, Basic credentials,
//! refusals, and origins the no-proxy list sends directly.

mod common;

use common::{ringwire, ringwire_h2, Echo, ProxyPy};
use ringwire_client::{
    blocking, tokio as async_client, ClientConfig, Error, Http2, Proxies, Proxy, RequestBuffer, Url,
};

/// A GET of `url` with the blocking client: status and body.
fn get(client: &blocking::Client, url: &str) -> Result<(u16, Vec<u8>), Error> {
    let url = Url::parse(url).unwrap();
    let mut buffer = RequestBuffer::new().unwrap();
    let request = buffer.request("GET", &url)?.headers()?.finish()?;
    let mut response = client.send(&mut buffer, &request)?;
    Ok((response.status(), response.bytes()?))
}

/// The same with the tokio client.
async fn async_get(client: &async_client::Client, url: &str) -> Result<(u16, Vec<u8>), Error> {
    let url = Url::parse(url).unwrap();
    let mut buffer = RequestBuffer::new().unwrap();
    let request = buffer.request("GET", &url)?.headers()?.finish()?;
    let mut response = client.send(&mut buffer, &request).await?;
    Ok((response.status(), response.bytes().await?))
}

/// ringwire's server over HTTP and over HTTPS (offering h2), and the latter's certificate.
fn servers() -> (std::net::SocketAddr, std::net::SocketAddr, Vec<u8>) {
    let (tls, cert) = ringwire_h2(Echo);
    (ringwire(Echo), tls, cert)
}

/// TLS settings that trust `cert` alone.
fn trusting(cert: &[u8]) -> ringwire_tls::ClientConfig {
    ringwire_tls::ClientConfig::default()
        .without_system_roots()
        .add_root_pem(cert)
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

/// Every scheme and protocol through a proxy that wants credentials, with both clients:
/// given in its URL, the answers are the server's own; without them (or wrong), the proxy's
/// `407` is the answer to a forwarded `http://` request and the error of a refused tunnel.
#[test]
fn both_clients_go_through_the_proxy() {
    let proxy = ProxyPy::start(Some("ringwire:s3cret"));
    let (plain, tls, cert) = servers();
    let trusting = || trusting(&cert);
    let (http, https) = (
        format!("http://{plain}/plain?x=1"),
        format!("https://localhost:{}/tunnel", tls.port()),
    );
    let expected = |url: &str| format!("GET {} body=0\n", &url[url.rfind('/').unwrap()..]);
    let at = format!("127.0.0.1:{}", proxy.port());
    let refused = |result: Result<(u16, Vec<u8>), Error>| match result {
        Err(Error::Proxy { status, proxy, .. }) => status == 407 && proxy == at,
        _ => false,
    };
    for http2 in [Http2::Off, Http2::Negotiate] {
        let config = ClientConfig {
            http2,
            ..ClientConfig::default()
        };
        for credentials in [Some("ringwire:s3cret"), None, Some("ringwire:wrong")] {
            let proxies = Proxies::all(Proxy::parse(&proxy.url(credentials)).unwrap());
            let client =
                blocking::Client::with_tls(config, trusting()).with_proxies(proxies.clone());
            let tokio_client =
                async_client::Client::with_tls(config, trusting()).with_proxies(proxies);
            let case = format!("{http2:?}, {credentials:?}");
            if credentials != Some("ringwire:s3cret") {
                assert_eq!(get(&client, &http).unwrap().0, 407, "{case}");
                assert!(refused(get(&client, &https)), "{case}");
                let runtime = runtime();
                assert_eq!(
                    runtime.block_on(async_get(&tokio_client, &http)).unwrap().0,
                    407
                );
                assert!(refused(runtime.block_on(async_get(&tokio_client, &https))));
                continue;
            }
            for url in [&http, &https] {
                // Twice: the second on the pooled connection (or tunnel).
                for _ in 0..2 {
                    let answer = get(&client, url).unwrap();
                    assert_eq!(answer, (200, expected(url).into_bytes()), "{case} {url}");
                    let answer = runtime().block_on(async_get(&tokio_client, url)).unwrap();
                    assert_eq!(answer, (200, expected(url).into_bytes()), "{case} {url}");
                }
            }
        }
    }
}

/// Hosts on the no-proxy list are reached directly; the rest go to the proxy, here one
/// that is not there, which is what the error names.
#[test]
fn the_no_proxy_list_goes_direct() {
    let plain = ringwire(Echo);
    let nowhere = Proxy::parse("127.0.0.1:1").unwrap();
    let url = format!("http://{plain}/direct");
    let direct = blocking::Client::new(ClientConfig::default())
        .with_proxies(Proxies::all(nowhere.clone()).no_proxy("localhost, 127.0.0.1"));
    assert_eq!(get(&direct, &url).unwrap().0, 200);
    let proxied =
        blocking::Client::new(ClientConfig::default()).with_proxies(Proxies::all(nowhere));
    let err = get(&proxied, &url).unwrap_err();
    assert!(
        matches!(&err, Error::Connect { authority, .. } if authority == "127.0.0.1:1"),
        "{err}"
    );
}

/// Through a SOCKS proxy (pproxy): SOCKS5 with names resolved by the proxy (`socks5h://`)
/// or by the client (`socks5://`), credentials or none, and SOCKS4 (`socks4://`, the client
/// resolving `localhost` to its IPv4 address, with a user id or none): `http://` and
/// `https://` (HTTP/2 offered) with both clients; once the proxy is gone, its address is
/// what the error names. (pproxy's SOCKS4 does not take SOCKS4a's names: `socks4a://` is
/// checked byte by byte in `tunnel.rs`.)
#[test]
fn both_clients_go_through_a_socks_proxy() {
    let (plain, tls, cert) = servers();
    let trusting = || trusting(&cert);
    let urls = [
        format!("http://localhost:{}/plain", plain.port()),
        format!("https://localhost:{}/tls", tls.port()),
    ];
    let config = ClientConfig {
        http2: Http2::Negotiate,
        ..ClientConfig::default()
    };
    let versions = [
        (
            "socks5",
            ["socks5h://", "socks5://", "socks5h://user:secret@"],
        ),
        (
            "socks4",
            ["socks4://", "socks4://someone@", "socks4://someone:unused@"],
        ),
    ];
    for (protocol, schemes) in versions {
        let socks = common::socks(protocol);
        let at = format!("127.0.0.1:{}", socks.port);
        for scheme in schemes {
            let proxies = Proxies::all(Proxy::parse(&format!("{scheme}{at}")).unwrap());
            let client =
                blocking::Client::with_tls(config, trusting()).with_proxies(proxies.clone());
            let tokio_client =
                async_client::Client::with_tls(config, trusting()).with_proxies(proxies);
            for url in &urls {
                let expected = format!("GET {} body=0\n", &url[url.rfind('/').unwrap()..]);
                let answer = get(&client, url).unwrap();
                assert_eq!(
                    answer,
                    (200, expected.clone().into_bytes()),
                    "{scheme} {url}"
                );
                let answer = runtime().block_on(async_get(&tokio_client, url)).unwrap();
                assert_eq!(answer, (200, expected.into_bytes()), "{scheme} {url}");
            }
        }
        drop(socks);
        let proxies = Proxies::all(Proxy::parse(&format!("{protocol}://{at}")).unwrap());
        let client = blocking::Client::with_tls(config, trusting()).with_proxies(proxies);
        let err = get(&client, &urls[0]).unwrap_err();
        assert!(
            matches!(&err, Error::Connect { authority, .. } if *authority == at),
            "{err}"
        );
    }
}
