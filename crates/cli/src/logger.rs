//! Log lines on stderr: warnings always, the access log with `--log`.

use std::io::Write as _;

struct Stderr {
    access: bool,
}

const ACCESS: &str = "ringwire::access";

impl log::Log for Stderr {
    fn enabled(&self, metadata: &log::Metadata<'_>) -> bool {
        if metadata.target() == ACCESS {
            self.access
        } else {
            metadata.level() <= log::Level::Warn
        }
    }

    fn log(&self, record: &log::Record<'_>) {
        if !self.enabled(record.metadata()) {
            return;
        }
        // One write per line, so lines from several threads do not mix.
        let line = if record.target() == ACCESS {
            format!("{}\n", record.args())
        } else {
            format!(
                "ringwire: {}: {}\n",
                record.level().as_str().to_lowercase(),
                record.args()
            )
        };
        let _ = std::io::stderr().write_all(line.as_bytes());
    }

    fn flush(&self) {}
}

/// Installs the logger; `access` turns the access log on.
pub(crate) fn init(access: bool) {
    let logger = Box::leak(Box::new(Stderr { access }));
    if log::set_logger(logger).is_ok() {
        log::set_max_level(if access {
            log::LevelFilter::Info
        } else {
            log::LevelFilter::Warn
        });
    }
}
