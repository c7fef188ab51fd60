//! The demo site's `POST /upload`: a form's fields and files read as the body arrives
//! (`Multipart::read`, of any size, nothing buffered but a delimiter's worth), answered with
//! one line per field, tab-separated: its name, file name, type (`-` for none), size and
//! 32-bit FNV-1a checksum, which the upload page's self-test checks.

use std::fmt::Write as _;

use ringwire_server::multipart::{Event, Limits, Multipart};
use ringwire_server::{Request, Response};

/// A field as it arrives.
struct Field {
    line: String,
    size: usize,
    fnv: u32,
}

impl Field {
    fn done(self, out: &mut String) {
        let _ = writeln!(out, "{}\t{}\t{:08x}", self.line, self.size, self.fnv);
    }
}

pub(crate) async fn upload(request: &Request<'_>) -> Response {
    let content_type = request.head().header("content-type").unwrap_or_default();
    let (mut reader, Some(mut body)) = (
        match Multipart::new(content_type, Limits::default()) {
            Ok(reader) => reader,
            Err(e) => return Response::text(format!("{e}\n")).status_code(e.status()),
        },
        request.body_reader(),
    ) else {
        return Response::text("no body\n").status_code(400);
    };
    let mut out = String::new();
    let mut field: Option<Field> = None;
    let read = reader
        .read(&mut body, |event| match event {
            Event::Part(head) => {
                let line = format!(
                    "{}\t{}\t{}",
                    head.name,
                    head.filename.unwrap_or("-"),
                    head.content_type.unwrap_or("-")
                );
                let next = Field {
                    line,
                    size: 0,
                    fnv: 0x811c_9dc5,
                };
                if let Some(done) = field.replace(next) {
                    done.done(&mut out);
                }
            }
            Event::Data(data) => {
                if let Some(f) = &mut field {
                    f.size += data.len();
                    f.fnv = data
                        .iter()
                        .fold(f.fnv, |h, &b| (h ^ u32::from(b)).wrapping_mul(0x0100_0193));
                }
            }
            Event::End => {
                if let Some(done) = field.take() {
                    done.done(&mut out);
                }
            }
        })
        .await;
    match read {
        Ok(()) => Response::text(out),
        Err(e) => Response::text(format!("{e}\n")).status_code(e.status()),
    }
}
