//! Headless Chromium (Debian's package) loads the demo site's WebSocket
//! page, which echoes text and binary messages from 0 B to 4 MiB through
//! `/ws/echo` with permessage-deflate, then reports by fetching
//! `/hello?selftest=...`; the test reads the verdict from the access log.
//! Its upload page likewise sends a form with a 3 MiB file as the browser
//! encodes it (`multipart/form-data`) and checks what the server read, its
//! events page reads 1,000 server-sent events through `EventSource`, and its
//! CORS page calls the server under its other name.
//! Over `http://` and `ws://`, and over `https://` and `wss://` with a
//! certificate from a CA made for the test and trusted in the browser's own
//! certificate store: there the page comes over HTTP/2, and the WebSocket over
//! the same connection (RFC 8441).

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
    let verdict = self_test_in_browser("ws.html", &[], None);
    assert!(verdict.contains("selftest=pass"), "{verdict}");
    assert!(verdict.contains("permessage-deflate"), "{verdict}");
    assert!(
        verdict.contains("\"GET /ws/echo HTTP/1.1\" 101"),
        "{verdict}"
    );
}

/// A form with a text field, a 3 MiB file and an empty field, as Chromium encodes it, read
/// by the demo site's `/upload` as it arrives: every field's size and checksum as the page
/// computed them.
#[test]
fn a_browser_uploads_a_form_with_a_file() {
    let verdict = self_test_in_browser("upload.html", &[], None);
    assert!(verdict.contains("selftest=pass"), "{verdict}");
    assert!(
        verdict.contains("\"POST /upload HTTP/1.1\" 200"),
        "{verdict}"
    );
}

/// 1,000 server-sent events sent at once, read by Chromium's `EventSource`: each once, in
/// order, its two data lines and its id intact.
#[test]
fn a_browser_reads_server_sent_events() {
    let verdict = self_test_in_browser("events.html", &[], None);
    assert!(verdict.contains("selftest=pass"), "{verdict}");
    assert!(
        verdict.contains("\"GET /events?n=1000 HTTP/1.1\" 200"),
        "{verdict}"
    );
}

/// A page that calls the server under its other name (another origin): with `--cors '*'`
/// Chromium makes the plain request and the preflighted one (its `OPTIONS` answered `204`)
/// and shows the page the answers; without it, it keeps them from the page.
#[test]
fn a_browser_calls_across_origins_only_with_cors() {
    let verdict = self_test_in_browser("cors.html", &["--cors", "*"], None);
    assert!(verdict.contains("selftest=pass"), "{verdict}");
    assert!(
        verdict.contains("\"OPTIONS /hello HTTP/1.1\" 204"),
        "{verdict}"
    );
    let verdict = self_test_in_browser("cors.html", &[], None);
    assert!(verdict.contains("selftest=blocked"), "{verdict}");
}

/// Over `wss://` with a certificate signed by a CA made for the test and trusted by the
/// browser's own store (an NSS database in the profile's `HOME`): no certificate exceptions.
#[test]
fn a_browser_echoes_over_wss_trusting_a_generated_ca() {
    let dir = std::env::temp_dir().join(format!("ringwire-ca-{}", std::process::id()));
    let home = dir.join("home");
    std::fs::create_dir_all(home.join(".pki/nssdb")).expect("mkdir");
    // A CA, and a leaf for localhost signed by it (the openssl command).
    let made = Command::new("sh")
        .arg("-c")
        .arg(
            "set -e
            openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
                -keyout ca.key -out ca.pem -days 2 -subj /CN=ringwire-test-ca \
                -addext basicConstraints=critical,CA:TRUE \
                -addext keyUsage=critical,keyCertSign,cRLSign
            openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
                -keyout leaf.key -out leaf.csr -subj /CN=localhost
            printf 'subjectAltName=DNS:localhost\\nextendedKeyUsage=serverAuth\\n' > leaf.ext
            openssl x509 -req -in leaf.csr -CA ca.pem -CAkey ca.key -CAcreateserial \
                -out leaf.pem -days 2 -extfile leaf.ext",
        )
        .current_dir(&dir)
        .output()
        .expect("run openssl");
    assert!(
        made.status.success(),
        "{}",
        String::from_utf8_lossy(&made.stderr)
    );
    let db = format!("sql:{}", home.join(".pki/nssdb").display());
    let ca = dir.join("ca.pem").display().to_string();
    certutil(&["-d", &db, "-N", "--empty-password"]);
    certutil(&[
        "-d",
        &db,
        "-A",
        "-t",
        "C,,",
        "-n",
        "ringwire-test-ca",
        "-i",
        &ca,
    ]);

    let (cert, key) = (dir.join("leaf.pem"), dir.join("leaf.key"));
    let serve_args = [
        "--tls-cert",
        cert.to_str().expect("path"),
        "--tls-key",
        key.to_str().expect("path"),
    ];
    let verdict = self_test_in_browser("ws.html", &serve_args, Some(&home));
    let _ = std::fs::remove_dir_all(&dir);
    assert!(verdict.contains("selftest=pass"), "{verdict}");
    assert!(verdict.contains("permessage-deflate"), "{verdict}");
    // The page came over HTTP/2 (ALPN), and the WebSocket on the same connection, an
    // extended CONNECT (RFC 8441), as Chromium opens it once the server allows it.
    assert!(verdict.contains("\"GET /ws/echo HTTP/2\" 200"), "{verdict}");
}

/// Runs NSS's `certutil` (Debian's `libnss3-tools`, installed when missing).
fn certutil(args: &[&str]) {
    let found = || Command::new("certutil").arg("-H").output().is_ok();
    if !found() {
        let _ = Command::new("apt-get")
            .args(["install", "-y", "-qq", "libnss3-tools"])
            .env("DEBIAN_FRONTEND", "noninteractive")
            .status();
    }
    let out = Command::new("certutil")
        .args(args)
        .output()
        .expect("certutil is needed: apt-get install libnss3-tools");
    assert!(
        out.status.success(),
        "certutil {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Runs `ringwire serve` with `serve_args`, points Chromium (with `HOME`
/// at `home`, whose NSS database it trusts, when given) at the self-test
/// of `page`, and returns the verdict line from the access log.
fn self_test_in_browser(page: &str, serve_args: &[&str], home: Option<&std::path::Path>) -> String {
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
    let profile = std::env::temp_dir().join(format!(
        "ringwire-chromium-{}-{}-{page}",
        std::process::id(),
        serve_args.len()
    ));
    let mut chrome = Command::new(browser);
    if let Some(home) = home {
        chrome.env("HOME", home);
    }
    let mut chrome = chrome
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
        .arg(format!("{url}{page}?selftest"))
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
