//! What the binary's tests share: running `ringwire serve` and Python
//! servers as children that die with the test.

#![allow(dead_code)] // each test file uses its own part

use std::io::{BufRead as _, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub(crate) const BIN: &str = env!("CARGO_BIN_EXE_ringwire");

/// A child process killed (by its pid) when the test ends, and the address
/// it listens on (`unix:PATH` for a Unix socket).
pub(crate) struct Running {
    pub(crate) child: Child,
    pub(crate) addr: String,
}

impl Drop for Running {
    /// SIGTERM first, so that a server cleans up after itself (a self-signed certificate's
    /// file); killed if it is still there 2 s later. (Not yet waited for, the child keeps
    /// its pid: the signal cannot reach another process.)
    fn drop(&mut self) {
        if let Ok(Some(_)) = self.child.try_wait() {
            return;
        }
        self.terminate();
        let deadline = Instant::now() + Duration::from_secs(2);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Running {
    /// Sends SIGTERM (a server's graceful shutdown): whether it went out. (Not after the
    /// child was waited for: its pid may then be another process's.)
    pub(crate) fn terminate(&self) -> bool {
        let pid = self.child.id().to_string();
        let sent = Command::new("kill").args(["-TERM", &pid]).status();
        sent.is_ok_and(|status| status.success())
    }
}

/// `ringwire serve` with `args`, once its banner names the address.
pub(crate) fn serve(args: &[&str]) -> Running {
    serve_logging(args).0
}

/// [`serve`], and its standard error after the banner (where `--log` writes).
pub(crate) fn serve_logging(args: &[&str]) -> (Running, BufReader<std::process::ChildStderr>) {
    let mut child = Command::new(BIN)
        .arg("serve")
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run ringwire serve");
    // The banner, after any note (such as a self-signed certificate's path).
    let mut stderr = BufReader::new(child.stderr.take().expect("stderr"));
    let mut line = String::new();
    while line.is_empty() || line.starts_with("ringwire: self-signed") {
        line.clear();
        stderr.read_line(&mut line).expect("banner");
    }
    // `... on http://127.0.0.1:8080/`, or `... on unix:PATH (http://localhost/ there)`.
    let unix = line
        .split_once(" on unix:")
        .and_then(|(_, rest)| rest.split_once(" ("));
    let tcp = || {
        let url = line.trim_end().strip_suffix('/')?;
        url.rsplit_once("://").map(|(_, addr)| addr)
    };
    let addr = unix
        .map(|(path, _)| format!("unix:{path}"))
        .or_else(|| tcp().map(str::to_owned))
        .unwrap_or_else(|| panic!("unexpected banner: {line:?}"));
    assert!(line.starts_with("ringwire: serving "), "{line}");
    (Running { child, addr }, stderr)
}

/// `python3 -c script`, where the script prints its port on a line first.
pub(crate) fn python(script: &str) -> Running {
    let (child, port) = ringwire_testkit::python_listening(script, &[]);
    let addr = format!("127.0.0.1:{port}");
    Running { child, addr }
}
