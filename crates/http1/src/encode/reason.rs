//! Standard reason phrases (RFC 9110 section 15 and the IANA status code
//! registry).

/// The standard reason phrase for `status`, if it is a registered code.
///
/// Phrases follow RFC 9110 (`413 Content Too Large`, `422 Unprocessable
/// Content`). 306 is reserved and has none; 418 keeps its well-known
/// `I'm a teapot` (RFC 2324), as the `http` crate does.
#[must_use]
pub fn reason_phrase(status: u16) -> Option<&'static str> {
    Some(match status {
        100 => "Continue",
        101 => "Switching Protocols",
        102 => "Processing",
        103 => "Early Hints",
        200 => "OK",
        201 => "Created",
        202 => "Accepted",
        203 => "Non-Authoritative Information",
        204 => "No Content",
        205 => "Reset Content",
        206 => "Partial Content",
        207 => "Multi-Status",
        208 => "Already Reported",
        226 => "IM Used",
        300 => "Multiple Choices",
        301 => "Moved Permanently",
        302 => "Found",
        303 => "See Other",
        304 => "Not Modified",
        305 => "Use Proxy",
        307 => "Temporary Redirect",
        308 => "Permanent Redirect",
        400 => "Bad Request",
        401 => "Unauthorized",
        402 => "Payment Required",
        403 => "Forbidden",
        404 => "Not Found",
        405 => "Method Not Allowed",
        406 => "Not Acceptable",
        407 => "Proxy Authentication Required",
        408 => "Request Timeout",
        409 => "Conflict",
        410 => "Gone",
        411 => "Length Required",
        412 => "Precondition Failed",
        413 => "Content Too Large",
        414 => "URI Too Long",
        415 => "Unsupported Media Type",
        416 => "Range Not Satisfiable",
        417 => "Expectation Failed",
        418 => "I'm a teapot",
        421 => "Misdirected Request",
        422 => "Unprocessable Content",
        423 => "Locked",
        424 => "Failed Dependency",
        425 => "Too Early",
        426 => "Upgrade Required",
        428 => "Precondition Required",
        429 => "Too Many Requests",
        431 => "Request Header Fields Too Large",
        451 => "Unavailable For Legal Reasons",
        500 => "Internal Server Error",
        501 => "Not Implemented",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        504 => "Gateway Timeout",
        505 => "HTTP Version Not Supported",
        506 => "Variant Also Negotiates",
        507 => "Insufficient Storage",
        508 => "Loop Detected",
        510 => "Not Extended",
        511 => "Network Authentication Required",
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Error;

    #[test]
    fn known_and_unknown_codes() {
        assert_eq!(reason_phrase(200), Some("OK"));
        assert_eq!(reason_phrase(103), Some("Early Hints"));
        assert_eq!(reason_phrase(308), Some("Permanent Redirect"));
        assert_eq!(reason_phrase(306), None);
        assert_eq!(reason_phrase(599), None);
        assert_eq!(reason_phrase(0), None);
        let count = (0..=u16::MAX).filter_map(reason_phrase).count();
        assert_eq!(count, 62);
    }

    #[test]
    fn agrees_with_parse_errors() {
        let errors = [
            Error::BareLf,
            Error::TargetTooLong { limit: 1 },
            Error::UnsupportedVersion,
            Error::HeadTooLarge { limit: 1 },
            Error::UnsupportedTransferCoding,
            Error::BodyTooLarge { limit: 1 },
        ];
        for e in errors {
            assert_eq!(reason_phrase(e.status()), Some(e.reason()), "{e:?}");
        }
    }

    #[cfg(feature = "http")]
    #[test]
    fn covers_the_http_crate() {
        for code in 100..=999 {
            let Ok(status) = http::StatusCode::from_u16(code) else {
                continue;
            };
            // Only coverage: the http crate keeps pre-RFC 9110 names for 413 and 422.
            if let Some(theirs) = status.canonical_reason() {
                assert!(reason_phrase(code).is_some(), "{code} {theirs}");
            }
        }
    }
}
