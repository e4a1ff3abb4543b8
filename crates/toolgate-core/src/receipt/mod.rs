//! Signed decision receipts: proof, checkable by a tool server in another process (or any JOSE
//! library in any language), that the gate allowed this tool with exactly these arguments.
//!
//! A receipt is a standard compact JWS (RFC 7515) signed with EdDSA over Ed25519 (RFC 8037):
//!
//! ```text
//! header  {"alg":"EdDSA","kid":"<RFC 7638 thumbprint of the public key>","typ":"JWT"}
//! payload {"v":1,"sub":…,"tool":…,"action":…,"resource":…,"callId":…,
//!          "args":"<base64url SHA-256 of the RFC 8785 canonical JSON of the arguments>",
//!          "iat":<s>,"exp":<s>,"jti":"<16 random bytes, base64url>"}
//! ```
//!
//! Absent optionals (`sub`, `action`, `resource`, `callId`) are omitted. [`verify`] refuses a
//! receipt with one [`ReceiptError`] per reason; the clock-skew allowance is
//! [`CLOCK_SKEW_SECONDS`] each way.
//!
//! ```
//! use toolgate_core::receipt::{args_digest, new_jti, verify, Claims, Expect, ReceiptKey};
//! let key = ReceiptKey::generate().unwrap();
//! let args = serde_json::json!({"path": "reports/q3.pdf"});
//! let receipt = key.issue(&Claims {
//!     sub: Some("alice"), tool: "read_file", action: Some("read"), resource: None, call_id: None,
//!     args: args_digest(&args), iat: 1_700_000_000, exp: 1_700_000_300, jti: new_jti().unwrap(),
//! });
//! let expect = Expect { tool: Some("read_file"), arguments: Some(&args), sub: Some("alice") };
//! let claims = verify(&receipt, key.public_key(), 1_700_000_010, &expect).unwrap();
//! assert_eq!(claims.tool, "read_file");
//! let err = verify(&receipt, key.public_key(), 1_700_000_500, &expect).unwrap_err();
//! assert_eq!(err.reason(), "expired");
//! ```

pub mod base64url;
mod error;
mod jcs;
mod jws;
mod key;
mod number;
mod sink;
mod verify;

use sha2::{Digest, Sha256};

pub use error::ReceiptError;
pub use jcs::canonical_json;
pub use key::ReceiptKey;
pub use verify::{verify, Expect, ReceiptVerifier, VerifiedClaims};

/// Seconds a verifier's clock may disagree with the gate's: a receipt is still accepted up to
/// 60 s after its `exp`, and one whose `iat` is up to 60 s in the future.
pub const CLOCK_SKEW_SECONDS: u64 = 60;

/// The longest receipt [`verify`] reads (bytes); longer ones are `malformed` unread. Receipts
/// the gate issues are a few hundred bytes.
pub const MAX_RECEIPT_BYTES: usize = 16 * 1024;

/// The claims of a receipt, borrowed from the verdict they prove (see the module doc for the
/// JSON names and order).
#[derive(Debug, Clone)]
pub struct Claims<'a> {
    /// The subject the call was allowed for (`sub`).
    pub sub: Option<&'a str>,
    /// The tool allowed (`tool`).
    pub tool: &'a str,
    /// The policy action asked (`action`).
    pub action: Option<&'a str>,
    /// The policy resource asked (`resource`).
    pub resource: Option<&'a str>,
    /// The call's id (`callId`).
    pub call_id: Option<&'a str>,
    /// [`args_digest`] of the exact (repaired) arguments allowed (`args`).
    pub args: String,
    /// Issued at, Unix seconds (`iat`).
    pub iat: u64,
    /// Expires at, Unix seconds (`exp`).
    pub exp: u64,
    /// Unique id, from [`new_jti`] (`jti`).
    pub jti: String,
}

/// A fresh receipt id: 16 bytes (128 bits) from the OS CSPRNG, base64url (22 characters).
/// Fails only when the OS random source does.
pub fn new_jti() -> Result<String, String> {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes).map_err(|e| format!("no receipt id could be made: the OS random source failed: {e}"))?;
    Ok(base64url::encode(&bytes))
}

/// The `args` claim: base64url (no padding) of SHA-256 over the RFC 8785 canonical JSON of
/// `args` ([`canonical_json`]; numbers as IEEE doubles, like JavaScript). Hashed as it is
/// written: the canonical text is never held in memory.
pub fn args_digest(args: &serde_json::Value) -> String {
    let mut h = Sha256::new();
    jcs::write_value(&mut h, args);
    base64url::encode(&h.finalize())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn digest_is_sha256_of_canonical_text() {
        let v = json!({"b": [1.50, "x"], "a": null});
        let text = canonical_json(&v);
        assert_eq!(text, r#"{"a":null,"b":[1.5,"x"]}"#);
        assert_eq!(args_digest(&v), base64url::encode(&Sha256::digest(text.as_bytes())));
        // SHA-256("{}"), a fixed point for other implementations to check against.
        assert_eq!(args_digest(&json!({})), "RBNvo1WzZ4oRRq0W9-hknpT7T8If536DEMBg9hyq_4o");
    }

    #[test]
    fn jti_is_22_urlsafe_chars_and_fresh() {
        let a = new_jti().unwrap();
        assert_eq!(a.len(), 22);
        assert!(a.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_'));
        assert_ne!(a, new_jti().unwrap());
    }
}
