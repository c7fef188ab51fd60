//! picohttpparser (h2o's C request parser, via `picohttpparser-sys`), as a peer baseline.
//!
//! The only `unsafe` in this crate: one FFI call and the conversion of the pointers it returns
//! back into slices of the caller's buffer, both in [`parse_request`]. The crate root denies
//! `unsafe_code` and allows it for this module alone.

use std::os::raw::{c_char, c_int};
use std::ptr;

use picohttpparser_sys::{phr_header, phr_parse_request};

/// One header field as picohttpparser returns it, borrowed from the parsed buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Header<'b> {
    /// The field name. Empty for a continuation line (obs-fold), which picohttpparser reports
    /// as a field with no name.
    pub name: &'b [u8],
    /// The value, surrounding whitespace trimmed.
    pub value: &'b [u8],
}

/// A parsed request head, borrowed from the buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Request<'b> {
    /// The method token.
    pub method: &'b [u8],
    /// The request target.
    pub path: &'b [u8],
    /// The `x` of `HTTP/1.x`.
    pub minor_version: i32,
    /// How many fields there were.
    pub num_headers: usize,
    /// Length of the head, final CRLF included.
    pub head_len: usize,
}

/// What [`parse_request`] found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Parsed<'b> {
    /// A whole head; its fields went to the callback.
    Complete(Request<'b>),
    /// The head is not all there yet.
    Partial,
    /// Not a valid request head (or more fields than header slots).
    Invalid,
}

/// Parses a request head from the front of `buf` with `phr_parse_request` (at most
/// `raw.len()` fields; `raw` is picohttpparser's own array, reused across calls) and, when it is
/// complete, hands each field to `on_header` as slices of `buf`, in order.
///
/// `last_len` is 0: every call parses from the start, as a caller that does not track the
/// previous attempt would (and as the whole-buffer benchmark does anyway).
pub fn parse_request<'b>(
    buf: &'b [u8],
    raw: &mut [phr_header],
    mut on_header: impl FnMut(Header<'b>),
) -> Parsed<'b> {
    let mut method: *const c_char = ptr::null();
    let mut method_len = 0;
    let mut path: *const c_char = ptr::null();
    let mut path_len = 0;
    let mut minor_version: c_int = -1;
    let mut num_headers = raw.len();
    // SAFETY: every pointer passed is valid for the call: `buf` for `buf.len()` bytes of reads,
    // the out-parameters are live locals, and `raw` has room for `num_headers` entries, which
    // is how many phr_parse_request may write (it reports the count back through the same
    // variable). picohttpparser keeps no pointer after returning.
    //
    // On success (`ret > 0`), `method`, `path` and each `raw[i].name`/`.value` for
    // `i < num_headers` point into `buf[..ret]` with the lengths it set (a continuation line
    // has a null name and zero length, mapped to an empty slice below), so the slices built
    // from them borrow `buf` for `'b` and are in bounds and initialized.
    unsafe {
        let ret = phr_parse_request(
            buf.as_ptr().cast(),
            buf.len(),
            &mut method,
            &mut method_len,
            &mut path,
            &mut path_len,
            &mut minor_version,
            raw.as_mut_ptr(),
            &mut num_headers,
            0,
        );
        match ret {
            -2 => return Parsed::Partial,
            n if n <= 0 => return Parsed::Invalid,
            _ => {}
        }
        let slice = |p: *const c_char, len: usize| -> &'b [u8] {
            if p.is_null() {
                &[]
            } else {
                std::slice::from_raw_parts(p.cast::<u8>(), len)
            }
        };
        for h in &raw[..num_headers] {
            on_header(Header {
                name: slice(h.name, h.name_len),
                value: slice(h.value, h.value_len),
            });
        }
        Parsed::Complete(Request {
            method: slice(method, method_len),
            path: slice(path, path_len),
            minor_version,
            num_headers,
            head_len: ret as usize,
        })
    }
}

/// `count` empty raw header slots for [`parse_request`].
pub fn raw_headers(count: usize) -> Vec<phr_header> {
    vec![phr_header::default(); count]
}
