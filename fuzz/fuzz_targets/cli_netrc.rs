//! `cli_netrc`: the `.netrc` reader of `ringwire get -n`, on a file written from arbitrary
//! entries (quoted, so any login and password can be said) followed by arbitrary text.
//! Nothing may panic, on the text alone either; the credentials found must be those of
//! the first `machine` entry for the host (the name compared without regard to case),
//! else of the last `default` entry, a field left out read as empty; with another entry
//! of arbitrary text after them, the host's entry must still be found as it is (or the
//! file refused).
//!
//! The reader is the command line's own module, built here from its source (the command
//! line is a binary crate).

#![no_main]

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;

#[path = "../../crates/cli/src/netrc.rs"]
mod netrc;

#[derive(Arbitrary, Debug)]
struct Input<'a> {
    host: String,
    entries: Vec<Entry>,
    tail: &'a str,
}

#[derive(Arbitrary, Debug)]
struct Entry {
    /// `None`: the `default` entry.
    machine: Option<String>,
    login: Option<String>,
    password: Option<String>,
    account: Option<String>,
}

/// `value` in double quotes, `"` and `\` escaped.
fn quoted(value: &str) -> String {
    let mut out = String::from("\"");
    for c in value.chars() {
        if matches!(c, '"' | '\\') {
            out.push('\\');
        }
        out.push(c);
    }
    out.push('"');
    out
}

fuzz_target!(|input: Input<'_>| {
    let mut text = String::new();
    let mut found = None;
    let mut fallback = None;
    for entry in &input.entries {
        match &entry.machine {
            Some(name) => text += &format!("machine {}\n", quoted(name)),
            None => text += "default\n",
        }
        for (keyword, value) in [
            ("login", &entry.login),
            ("account", &entry.account),
            ("password", &entry.password),
        ] {
            if let Some(value) = value {
                text += &format!("  {keyword} {}\n", quoted(value));
            }
        }
        let credentials = || {
            let field = |value: &Option<String>| value.clone().unwrap_or_default();
            Some((field(&entry.login), field(&entry.password)))
        };
        match &entry.machine {
            _ if found.is_some() => {}
            Some(name) if name.eq_ignore_ascii_case(&input.host) => found = credentials(),
            Some(_) => {}
            None => fallback = credentials(),
        }
    }
    let expected = found.clone().or(fallback);
    assert_eq!(netrc::credentials(&text, &input.host), Ok(expected));
    let _ = netrc::credentials(input.tail, &input.host);
    // Whatever follows the next entry's start is not read once the host's entry is found.
    text += "machine ";
    text += input.tail;
    if let (Ok(got), Some(_)) = (netrc::credentials(&text, &input.host), &found) {
        assert_eq!(got, found);
    }
});
