//! The two libssl calls the `openssl` crates do not wrap.

use std::ffi::{c_int, c_long};

use foreign_types::ForeignTypeRef;
use openssl::ssl::{SslContextBuilder, SslMode, SslRef};

unsafe extern "C" {
    /// Frees the session's record buffers if they hold nothing; 1 when
    /// they were freed (or were not allocated), 0 when they hold data.
    /// In libssl since 1.1.0.
    fn SSL_free_buffers(ssl: *mut openssl_sys::SSL) -> c_int;
}

/// `SSL_CTRL_CLEAR_MODE` from `ssl.h` (`SSL_CTX_clear_mode` is a macro).
const SSL_CTRL_CLEAR_MODE: c_int = 78;

/// Turns `mode` off for the sessions `ctx` will make.
pub(crate) fn clear_mode(ctx: &mut SslContextBuilder, mode: SslMode) {
    // SAFETY: `as_ptr` is a live `SSL_CTX` for as long as the borrow;
    // `SSL_CTRL_CLEAR_MODE` only clears bits in its mode word, and
    // takes no pointer argument.
    unsafe {
        openssl_sys::SSL_CTX_ctrl(
            ctx.as_ptr(),
            SSL_CTRL_CLEAR_MODE,
            mode.bits() as c_long,
            std::ptr::null_mut(),
        );
    }
}

/// Frees `ssl`'s read and write buffers unless they hold data (libssl
/// allocates them again for the next record); whether they are free now.
pub(crate) fn free_buffers(ssl: &SslRef) -> bool {
    // SAFETY: `as_ptr` is a live `SSL` for as long as the borrow, and
    // `SSL_free_buffers` only frees buffers it finds empty, which libssl
    // reallocates on next use; nothing else points into them between calls.
    unsafe { SSL_free_buffers(ssl.as_ptr()) == 1 }
}
