//! Digests as Flux and helm-controller write them: opencontainers/go-digest's `sha256:<hex>` (the
//! `configDigest`, the snapshot `digest`, the post-renderer and common-metadata digests), and the bare
//! lowercase hex of a SHA-256 that Flux's `ShortenName` cuts from.

use sha2::{Digest as _, Sha256};

/// go-digest's `digest.FromBytes(b).String()`: `sha256:` and the lowercase hex of the SHA-256 of `bytes`.
pub fn sha256(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(7 + 64);
    out.push_str("sha256:");
    push_hex(&mut out, bytes);
    out
}

/// The lowercase hex of the SHA-256 of `bytes` (Go's `fmt.Sprintf("%x", sha256.Sum256(b))`).
pub fn sha256_hex(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(64);
    push_hex(&mut out, bytes);
    out
}

fn push_hex(out: &mut String, bytes: &[u8]) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    for b in Sha256::digest(bytes).iter() {
        out.push(HEX[usize::from(b >> 4)] as char);
        out.push(HEX[usize::from(b & 0xf)] as char);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Printed by Go 1.26: `fmt.Sprintf("sha256:%x", sha256.Sum256(b))` (go-digest's form) and `%x` alone.
    #[test]
    fn digests_match_go() {
        assert_eq!(sha256(b""), "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
        assert_eq!(sha256_hex(b"abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    }
}
