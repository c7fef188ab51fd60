//! Headless Chromium (Debian's package) loads the demo site's WebSocket
//! page, which echoes text and binary messages from 0 B to 4 MiB through
//! `/ws/echo` with permessage-deflate, then reports by fetching
//! `/hello?selftest=...`; the test reads the verdict from the access log.

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
    let browser = chromium();
    let mut server = Command::new(BIN)
        .args(["serve", "--addr", "127.0.0.1:0", "--log"])
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
    let banner = lines.recv_timeout(Duration::from_secs(10)).expect("banner");
    let addr = banner
        .trim_end_matches('/')
        .rsplit_once("http://")
        .map(|(_, a)| a.to_owned())
        .expect("address in the banner");
    let profile = std::env::temp_dir().join(format!("ringwire-chromium-{}", std::process::id()));
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
            &format!("http://{addr}/ws.html?selftest"),
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("run chromium");
    let verdict = loop {
        match lines.recv_timeout(Duration::from_secs(60)) {
            Ok(line) if line.contains("/hello?selftest=") => break line,
            Ok(_) => {}
            Err(_) => break "no verdict within 60 s".to_owned(),
        }
    };
    let _ = chrome.kill();
    let _ = chrome.wait();
    let _ = server.kill();
    let _ = server.wait();
    let _ = std::fs::remove_dir_all(&profile);
    assert!(verdict.contains("selftest=pass"), "{verdict}");
    assert!(verdict.contains("permessage-deflate"), "{verdict}");
}
