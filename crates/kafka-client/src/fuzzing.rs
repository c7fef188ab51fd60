//! What the fuzz targets drive that is the crate's own (built only under `cfg(fuzzing)`,
//! which `cargo fuzz` sets): the client's side of SCRAM on arbitrary broker messages.

use crate::scram::{Hash, Scram};

/// A SCRAM exchange (SHA-512 if `setup` is odd) whose broker sends `server_first`, then
/// `server_final`. It must refuse or accept without a panic; the final message is checked
/// only after the client made its own, and a broker that does not know the password (as
/// arbitrary bytes do not) must never pass the check.
pub fn scram(setup: u8, server_first: &[u8], server_final: &[u8]) {
    let hash = if setup & 1 == 1 {
        Hash::Sha512
    } else {
        Hash::Sha256
    };
    let mut scram = Scram::with_nonce(hash, "user", "pencil", "fuzz-nonce");
    let _ = scram.client_first();
    if scram.client_final(server_first).is_ok() {
        assert!(
            scram.verify(server_final).is_err(),
            "a signature made without the password passed"
        );
    }
}
