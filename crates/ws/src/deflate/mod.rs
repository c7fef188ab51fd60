//! permessage-deflate (RFC 7692): negotiation and the per-message transforms.

mod codec;
mod negotiate;

pub(crate) use codec::{Deflater, Inflater};
pub use negotiate::{DeflateConfig, DeflateParams, NegotiationError};

use crate::Role;

impl DeflateParams {
    /// The window and context rules for what `role` compresses.
    pub(crate) fn deflater(&self, role: Role, level: u32) -> Deflater {
        match role {
            Role::Server => Deflater::new(
                self.server_max_window_bits,
                self.server_no_context_takeover,
                level,
            ),
            Role::Client => Deflater::new(
                self.client_max_window_bits,
                self.client_no_context_takeover,
                level,
            ),
        }
    }

    /// The window and context rules for what `role` receives (the peer's compressor).
    pub(crate) fn inflater(&self, role: Role) -> Inflater {
        match role {
            Role::Server => {
                Inflater::new(self.client_max_window_bits, self.client_no_context_takeover)
            }
            Role::Client => {
                Inflater::new(self.server_max_window_bits, self.server_no_context_takeover)
            }
        }
    }
}
