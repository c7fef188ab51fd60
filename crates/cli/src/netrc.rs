//! `.netrc` credentials, as curl reads them: `machine HOST login NAME password SECRET`
//! entries (and one `default`), separated by any white space, values in double quotes
//! where they hold spaces (`\"` and `\\` escaped), `macdef` bodies skipped to the next
//! empty line.

/// A login and a password.
pub(crate) type Credentials = (String, String);

/// The credentials `text` gives for `host`: its `machine` entry (the first one, the name
/// compared without regard to case), else the `default` entry. A login without a password
/// has an empty one, as curl sends it.
pub(crate) fn credentials(text: &str, host: &str) -> Result<Option<Credentials>, String> {
    let mut tokens = Tokens { rest: text };
    let mut found: Option<Credentials> = None;
    let mut fallback: Option<Credentials> = None;
    // Where the current entry's login and password go, if it is one that matters.
    let mut current: Option<Target> = None;
    while let Some(token) = tokens.next()? {
        match token.as_str() {
            "machine" => {
                let name = tokens.value("machine")?;
                if found.is_some() {
                    break;
                }
                current = name.eq_ignore_ascii_case(host).then_some(Target::Found);
                if current.is_some() {
                    found = Some(Default::default());
                }
            }
            "default" => {
                if found.is_some() {
                    break;
                }
                current = Some(Target::Fallback);
                fallback = Some(Default::default());
            }
            "login" | "password" => {
                let value = tokens.value(&token)?;
                let entry = match current {
                    Some(Target::Found) => found.as_mut(),
                    Some(Target::Fallback) => fallback.as_mut(),
                    None => None,
                };
                if let Some((login, password)) = entry {
                    *if token == "login" { login } else { password } = value;
                }
            }
            "macdef" => tokens.skip_macro(),
            // `account` and whatever else: a name and its value, not ours.
            _ => drop(tokens.next()?),
        }
    }
    Ok(found.or(fallback))
}

/// Which entry the fields being read belong to.
#[derive(Clone, Copy)]
enum Target {
    Found,
    Fallback,
}

/// The file's tokens, in order.
struct Tokens<'t> {
    rest: &'t str,
}

impl Tokens<'_> {
    /// The next token, unquoted; `None` at the end.
    fn next(&mut self) -> Result<Option<String>, String> {
        self.rest = self.rest.trim_start();
        let Some(quoted) = self.rest.strip_prefix('"') else {
            let end = self
                .rest
                .find(char::is_whitespace)
                .unwrap_or(self.rest.len());
            let (token, rest) = self.rest.split_at(end);
            self.rest = rest;
            return Ok((!token.is_empty()).then(|| token.to_owned()));
        };
        let mut token = String::new();
        let mut chars = quoted.char_indices();
        while let Some((i, c)) = chars.next() {
            match c {
                '"' => {
                    self.rest = &quoted[i + 1..];
                    return Ok(Some(token));
                }
                '\\' => match chars.next() {
                    Some((_, escaped)) => token.push(escaped),
                    None => break,
                },
                c => token.push(c),
            }
        }
        Err("cannot read the netrc file: a quoted value does not end".into())
    }

    /// The value after keyword `what`.
    fn value(&mut self, what: &str) -> Result<String, String> {
        self.next()?
            .ok_or_else(|| format!("cannot read the netrc file: {what} without a value"))
    }

    /// Skips a `macdef`'s name and body, which ends at an empty line.
    fn skip_macro(&mut self) {
        match self.rest.find("\n\n") {
            Some(end) => self.rest = &self.rest[end + 2..],
            None => self.rest = "",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pair(login: &str, password: &str) -> Option<Credentials> {
        Some((login.to_owned(), password.to_owned()))
    }

    #[test]
    fn entries_as_curl_reads_them() {
        let text = "machine example.com login ann password s3cret\n\
                    machine other.org\n  login \"b ob\"\n  password \"p\\\"w d\"\n\
                    default login anyone password guest\n";
        assert_eq!(credentials(text, "EXAMPLE.com"), Ok(pair("ann", "s3cret")));
        assert_eq!(credentials(text, "other.org"), Ok(pair("b ob", "p\"w d")));
        assert_eq!(credentials(text, "elsewhere"), Ok(pair("anyone", "guest")));
        assert_eq!(credentials("machine a login x", "b"), Ok(None));
        // The first matching entry wins; a login alone has an empty password.
        let twice = "machine a login first\nmachine a login second password p";
        assert_eq!(credentials(twice, "a"), Ok(pair("first", "")));
        // Macros are skipped to the empty line that ends them; `account` is left alone.
        let macros =
            "macdef init\ncd /\nmachine a login evil\n\nmachine a account x login m password p";
        assert_eq!(credentials(macros, "a"), Ok(pair("m", "p")));
        assert_eq!(credentials("", "a"), Ok(None));
    }

    #[test]
    fn broken_files_are_errors() {
        assert!(credentials("machine a login \"open", "a").is_err());
        assert!(credentials("machine a login", "a").is_err());
        assert!(credentials("machine", "a").is_err());
    }
}
