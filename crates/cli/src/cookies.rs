//! Cookies as curl's `-b` and `-c` give them, for `get` and `ws`.

use std::io::{self, Write as _};
use std::path::Path;
use std::sync::Arc;

use ringwire_client::CookieJar;

use crate::request::line;

/// What `-b DATA|FILE` and `-c FILE` ask for: a `cookie` field sent as it is (`-b` with a
/// `=`), or a jar (loaded from `-b FILE`, written to `-c FILE` when dropped).
pub(crate) struct Cookies<'a> {
    /// The field `-b NAME=VALUE[; ...]` gives, sent as it is.
    pub(crate) field: Option<&'a str>,
    /// The jar, for the client to keep and send cookies from.
    pub(crate) jar: Option<Arc<CookieJar>>,
    save: Option<&'a Path>,
}

impl<'a> Cookies<'a> {
    pub(crate) fn new(cookie: Option<&'a str>, cookie_jar: Option<&'a Path>) -> Cookies<'a> {
        // `-b DATA` is a field as it is; `-b FILE` and `-c FILE` turn the jar on.
        let field = cookie.filter(|c| c.contains('='));
        let file = cookie.filter(|_| field.is_none());
        let jar = (cookie_jar.is_some() || file.is_some()).then(|| Arc::new(CookieJar::new()));
        if let (Some(jar), Some(file)) = (&jar, file) {
            // A file not there yet is none, as curl has it (the first run of a session).
            if let Ok(text) = std::fs::read_to_string(file) {
                jar.load_netscape(&text);
            }
        }
        Cookies {
            field,
            jar,
            save: cookie_jar,
        }
    }
}

/// Writes the jar to `-c FILE` when the command ends, however it ends (as curl does).
impl Drop for Cookies<'_> {
    fn drop(&mut self) {
        let (Some(path), Some(jar)) = (self.save, &self.jar) else {
            return;
        };
        let text = jar.to_netscape();
        let written = if path.as_os_str() == "-" {
            io::stdout().write_all(text.as_bytes())
        } else {
            std::fs::write(path, text)
        };
        if let Err(e) = written {
            eprintln!("ringwire: cannot write {}: {}", path.display(), line(e));
        }
    }
}
