//! Why a receipt was refused: one variant per reason, each with a stable snake_case name.

use thiserror::Error;

use super::CLOCK_SKEW_SECONDS;

/// Why [`super::verify`] refused a receipt. [`ReceiptError::reason`] is the stable name (the
/// `reason` of the `E_RECEIPT` error users see); `Display` is a sentence that starts with it.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum ReceiptError {
    /// Not a compact JWS this verifier can read: too long, not three base64url parts, a
    /// signature that is not 64 bytes, a header or claims that are not the expected JSON.
    #[error("malformed: the receipt is not a well-formed toolgate receipt ({0})")]
    Malformed(&'static str),
    /// The header names an algorithm other than `EdDSA` (`none`, `HS256`, …; shortened).
    #[error("unsupported_alg: the receipt's algorithm is {0:?}; only EdDSA (ed25519) receipts are accepted")]
    UnsupportedAlg(String),
    /// The claim `v` is missing or not `1`.
    #[error("unknown_version: the receipt's format version (claim `v`) is missing or not 1")]
    UnknownVersion,
    /// The header's `kid` is not the thumbprint of the public key verification was given:
    /// another gate's (or another key's) receipt.
    #[error("wrong_key: the receipt was signed by another key (its kid is not this public key's thumbprint)")]
    WrongKey,
    /// The signature does not cover this header and payload under this key: tampered.
    #[error("bad_signature: the receipt's signature does not verify (altered header, payload or signature)")]
    BadSignature,
    /// `exp` is more than the clock-skew allowance before now.
    #[error("expired: the receipt expired at {exp} (Unix seconds); it is now {now}, beyond the {CLOCK_SKEW_SECONDS} s clock-skew allowance")]
    Expired {
        /// The receipt's `exp`.
        exp: u64,
        /// The verifier's clock.
        now: u64,
    },
    /// `iat` is more than the clock-skew allowance after now.
    #[error("not_yet_valid: the receipt was issued at {iat} (Unix seconds), after now ({now}) by more than the {CLOCK_SKEW_SECONDS} s clock-skew allowance")]
    NotYetValid {
        /// The receipt's `iat`.
        iat: u64,
        /// The verifier's clock.
        now: u64,
    },
    /// The receipt allows another tool than the one expected.
    #[error("wrong_tool: the receipt is for tool {found:?}, not {expected:?}")]
    WrongTool {
        /// The tool the caller expected.
        expected: String,
        /// The tool the receipt names.
        found: String,
    },
    /// The arguments' digest differs from the receipt's `args` claim.
    #[error("wrong_arguments: the arguments are not the ones the receipt was issued for (args digest differs)")]
    WrongArguments,
    /// The receipt's `sub` is absent or another subject than the one expected.
    #[error("wrong_subject: the receipt was issued {}, not to {expected:?}", match found { Some(s) => format!("to {s:?}"), None => "without a subject".to_owned() })]
    WrongSubject {
        /// The subject the caller expected.
        expected: String,
        /// The receipt's `sub`.
        found: Option<String>,
    },
    /// The verifying key given is not 32 bytes of base64url (no padding) naming a usable
    /// ed25519 public key.
    #[error("bad_public_key: the public key is not an ed25519 public key in base64url (32 bytes, 43 characters, no padding)")]
    BadPublicKey,
}

impl ReceiptError {
    /// The stable snake_case name of the reason.
    pub fn reason(&self) -> &'static str {
        match self {
            ReceiptError::Malformed(_) => "malformed",
            ReceiptError::UnsupportedAlg(_) => "unsupported_alg",
            ReceiptError::UnknownVersion => "unknown_version",
            ReceiptError::WrongKey => "wrong_key",
            ReceiptError::BadSignature => "bad_signature",
            ReceiptError::Expired { .. } => "expired",
            ReceiptError::NotYetValid { .. } => "not_yet_valid",
            ReceiptError::WrongTool { .. } => "wrong_tool",
            ReceiptError::WrongArguments => "wrong_arguments",
            ReceiptError::WrongSubject { .. } => "wrong_subject",
            ReceiptError::BadPublicKey => "bad_public_key",
        }
    }
}
