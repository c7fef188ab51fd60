//! What ringwire's test suites share (a dev-dependency only): the third-party peers they
//! install on demand, so that the README's test command passes on a fresh machine.

use std::process::Command;

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
