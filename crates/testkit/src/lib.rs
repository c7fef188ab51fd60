//! What ringwire's test suites share (a dev-dependency only): the third-party peers they
//! install on demand, so that the README's test command passes on a fresh machine.

use std::io::{BufRead as _, BufReader};
use std::process::{Child, Command, Stdio};

/// Installs Python's `package` with pip when `module` does not import; fails the test when
/// it still does not.
///
/// # Panics
///
/// When the module cannot be had.
pub fn ensure_python_module(module: &str, package: &str) {
    let has = || {
        Command::new("python3")
            .args(["-c", &format!("import {module}")])
            .status()
            .is_ok_and(|s| s.success())
    };
    if !has() {
        let _ = Command::new("python3")
            .args(["-m", "pip", "install", "--quiet", package])
            .status();
    }
    assert!(
        has(),
        "Python's {package} is missing: python3 -m pip install {package}"
    );
}

/// Runs `python3 -c script args...`, a server that prints the port it listens on first:
/// the child (to kill when done) and the port.
///
/// # Panics
///
/// When python3 does not run or prints no port.
pub fn python_listening(script: &str, args: &[&str]) -> (Child, u16) {
    let mut child = Command::new("python3")
        .args(["-c", script])
        .args(args)
        .stdout(Stdio::piped())
        .spawn()
        .expect("python3 is installed");
    let mut line = String::new();
    BufReader::new(child.stdout.take().expect("stdout"))
        .read_line(&mut line)
        .expect("port");
    (child, line.trim().parse().expect("a port"))
}
