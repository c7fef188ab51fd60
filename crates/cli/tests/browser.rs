//! Headless Chromium (Debian's package) loads the demo site's WebSocket
//! page, which echoes text and binary messages from 0 B to 4 MiB through
//! `/ws/echo` with permessage-deflate, then reports by fetching
//! `/hello?selftest=...`; the test reads the verdict from the access log.
//! Over `http://` and `ws://`, and over `https://` and `wss://` with the
//! server's `--self-signed` certificate trusted by the browser for the test.

use std::io::{BufRead as _, BufReader};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

const BIN: &str = env!("CARGO_BIN_EXE_ringwire");

/// Chromium's path, installed from Debian when missing (as `cargo test`
/// must pass on a fresh machine of this kind).
fn chromium() -> &'static str {
    let found = || {
        Command::new("chromium")
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success())
    };
    if !found() {
        let _ = Command::new("apt-get")
            .args(["install", "-y", "-qq", "chromium"])
            .env("DEBIAN_FRONTEND", "noninteractive")
            .status();
    }
    assert!(
        found(),
        "headless Chromium is needed: apt-get install chromium"
    );
    "chromium"
}

#[test]
fn a_browser_echoes_messages_up_to_4_mib_with_compression() {
    let verdict = echo_in_browser(&[], |_| Vec::new());
    assert!(verdict.contains("selftest=pass"), "{verdict}");
    assert!(verdict.contains("permessage-deflate"), "{verdict}");
}

#[test]
fn a_browser_echoes_over_wss_with_a_trusted_certificate() {
    let verdict = echo_in_browser(&["--self-signed"], |banner| {
        // Chromium trusts a certificate whose public key hashes to one on
        // this list: the one the server made up at start.
        let cert = banner
            .iter()
            .find_map(|line| line.split_once("self-signed certificate for localhost: "))
            .map(|(_, path)| path.to_owned())
            .expect("the certificate's path in the banner");
        vec![format!(
            "--ignore-certificate-errors-spki-list={}",
            spki_hash(&cert)
        )]
    });
    assert!(verdict.contains("selftest=pass"), "{verdict}");
    assert!(verdict.contains("permessage-deflate"), "{verdict}");
}

/// base64(SHA-256(SubjectPublicKeyInfo)) of the certificate in `pem`, as
/// Chromium's SPKI list wants it (with the openssl command).
fn spki_hash(pem: &str) -> String {
    let script = format!(
        "openssl x509 -in '{pem}' -pubkey -noout | openssl pkey -pubin -outform der \
         | openssl dgst -sha256 -binary | base64"
    );
    let out = Command::new("sh")
        .args(["-c", &script])
        .output()
        .expect("run openssl");
    assert!(out.status.success(), "openssl failed");
    String::from_utf8(out.stdout)
        .expect("base64")
        .trim()
        .to_owned()
}

/// Runs `ringwire serve` with `serve_args`, points Chromium (with the
/// flags `browser_args` derives from the server's banner lines) at the
/// self-test page, and returns the verdict line from the access log.
fn echo_in_browser(
    serve_args: &[&str],
    browser_args: impl FnOnce(&[String]) -> Vec<String>,
) -> String {
    let browser = chromium();
    let mut server = Command::new(BIN)
        .args(["serve", "--addr", "127.0.0.1:0", "--log"])
        .args(serve_args)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run ringwire");
    let (lines_tx, lines) = mpsc::channel();
    let stderr = server.stderr.take().expect("stderr");
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            if lines_tx.send(line).is_err() {
                return;
            }
        }
    });
    let mut banner = Vec::new();
    let url = loop {
        let line = lines.recv_timeout(Duration::from_secs(10)).expect("banner");
        banner.push(line.clone());
        if let Some((_, at)) = line.split_once(" on ") {
            // `https://127.0.0.1:PORT/` becomes `https://localhost:PORT/`,
            // the name on the certificate.
            break at.replace("127.0.0.1", "localhost");
        }
    };
    let extra = browser_args(&banner);
    let profile = std::env::temp_dir().join(format!(
        "ringwire-chromium-{}-{}",
        std::process::id(),
        serve_args.len()
    ));
    let mut chrome = Command::new(browser)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            &format!("--user-data-dir={}", profile.display()),
        ])
        .args(&extra)
        .arg(format!("{url}ws.html?selftest"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("run chromium");
    let verdict = loop {
        match lines.recv_timeout(Duration::from_secs(60)) {
            Ok(line) if line.contains("/hello?selftest=") => break line,
            Ok(line) => banner.push(line),
            Err(_) => break "no verdict within 60 s".to_owned(),
        }
    };
    // What the server logged, for a failure's message.
    let verdict = format!("{verdict}\nserver log:\n{}", banner.join("\n"));
    let _ = chrome.kill();
    let _ = chrome.wait();
    let _ = server.kill();
    let _ = server.wait();
    let _ = std::fs::remove_dir_all(&profile);
    verdict
}
