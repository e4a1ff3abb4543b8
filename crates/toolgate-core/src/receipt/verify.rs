//! Verifying a receipt: signature first, then the format version, the validity window, and
//! what the caller expects it to say. Total: every input gives `Ok` or a [`ReceiptError`].

use serde::{Deserialize, Serialize};
use serde_json::Value;

use ed25519_dalek::VerifyingKey;

use super::jws::{verifying_key, Compact};
use super::{args_digest, ReceiptError, CLOCK_SKEW_SECONDS};

/// What the caller expects a receipt to say; each `None` is not checked.
#[derive(Debug, Clone, Copy, Default)]
pub struct Expect<'a> {
    /// The tool about to run.
    pub tool: Option<&'a str>,
    /// The exact arguments about to be run with (compared by their RFC 8785 digest, so key
    /// order and number spelling do not matter; types and values do).
    pub arguments: Option<&'a Value>,
    /// The subject the call must have been allowed for.
    pub sub: Option<&'a str>,
}

/// The claims of a receipt that verified, owned. Serializes with the wire names (`callId`),
/// absent optionals omitted.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct VerifiedClaims {
    /// Format version: 1.
    pub v: u32,
    /// The subject the call was allowed for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sub: Option<String>,
    /// The tool allowed.
    pub tool: String,
    /// The policy action asked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub action: Option<String>,
    /// The policy resource asked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource: Option<String>,
    /// The call's id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub call_id: Option<String>,
    /// base64url SHA-256 of the RFC 8785 canonical JSON of the arguments allowed.
    pub args: String,
    /// Issued at, Unix seconds.
    pub iat: u64,
    /// Expires at, Unix seconds.
    pub exp: u64,
    /// The receipt's unique id (for replay caches).
    pub jti: String,
}

/// Only the version, read before the rest so a future format is `unknown_version`, not
/// `malformed`.
#[derive(Deserialize)]
struct Version {
    v: Option<Value>,
}

/// Verifies a receipt against the gate's public key (base64url, 32 bytes) at `now_s` (Unix
/// seconds): [`ReceiptVerifier::new`] then [`ReceiptVerifier::verify`], whose doc gives the
/// checks in order. The first failure is the error; `bad_public_key` comes before any look at
/// the receipt.
pub fn verify(receipt: &str, public_key_b64url: &str, now_s: u64, expect: &Expect<'_>) -> Result<VerifiedClaims, ReceiptError> {
    ReceiptVerifier::new(public_key_b64url)?.verify(receipt, now_s, expect)
}

/// A verifying key decoded once, for checking many receipts of the same gate (a tool server's
/// `requireReceipt`): it saves the point decompression and key thumbprint on every receipt.
#[derive(Debug, Clone)]
pub struct ReceiptVerifier {
    key: VerifyingKey,
    kid: String,
}

impl ReceiptVerifier {
    /// Decodes the gate's public key: 32 bytes of base64url without padding that name a usable
    /// ed25519 point (not a small-order one); `bad_public_key` otherwise.
    pub fn new(public_key_b64url: &str) -> Result<ReceiptVerifier, ReceiptError> {
        let (key, kid) = verifying_key(public_key_b64url)?;
        Ok(ReceiptVerifier { key, kid })
    }

    /// The key id receipts of this key carry (RFC 7638 thumbprint).
    pub fn kid(&self) -> &str {
        &self.kid
    }

    /// Verifies a receipt at `now_s` (Unix seconds), in this order:
    ///
    /// 1. the receipt is at most 16 KiB of three canonical base64url parts (`malformed`);
    /// 2. the ed25519 signature verifies strictly (RFC 8032 §5.1.7 with canonical `S` and no
    ///    small-order keys or points) over `header.payload` (`bad_signature`; or, when the
    ///    header explains the failure, `unsupported_alg` for an `alg` other than `EdDSA` —
    ///    `none` included — and `wrong_key` for another key's `kid`); then the header: `alg`
    ///    must be `EdDSA`, `kid` when present must be this key's thumbprint, no `crit`;
    /// 3. claim `v` is `1` (`unknown_version`), and the claims have their types (`malformed`);
    /// 4. the validity window, with [`CLOCK_SKEW_SECONDS`] of allowance each way: refused when
    ///    `now > exp + 60` (`expired`) or `iat > now + 60` (`not_yet_valid`);
    /// 5. `expect`: tool (`wrong_tool`), arguments (`wrong_arguments`), subject
    ///    (`wrong_subject`).
    ///
    /// Nothing in the receipt is believed before step 2 has passed. Total: any input gives
    /// `Ok` or an error, never a panic.
    pub fn verify(&self, receipt: &str, now_s: u64, expect: &Expect<'_>) -> Result<VerifiedClaims, ReceiptError> {
        let jws = Compact::parse(receipt)?;
        jws.check(&self.key, &self.kid)?;

        let version = serde_json::from_slice::<Version>(&jws.payload).map_err(|_| ReceiptError::Malformed("the claims are not a JSON object"))?;
        if version.v.as_ref().and_then(Value::as_u64) != Some(1) {
            return Err(ReceiptError::UnknownVersion);
        }
        let claims = serde_json::from_slice::<VerifiedClaims>(&jws.payload)
            .map_err(|_| ReceiptError::Malformed("the claims lack a required member or have one of the wrong type"))?;

        if now_s > claims.exp.saturating_add(CLOCK_SKEW_SECONDS) {
            return Err(ReceiptError::Expired { exp: claims.exp, now: now_s });
        }
        if claims.iat > now_s.saturating_add(CLOCK_SKEW_SECONDS) {
            return Err(ReceiptError::NotYetValid { iat: claims.iat, now: now_s });
        }

        if let Some(tool) = expect.tool.filter(|&t| t != claims.tool) {
            return Err(ReceiptError::WrongTool { expected: tool.to_owned(), found: claims.tool });
        }
        if expect.arguments.is_some_and(|args| args_digest(args) != claims.args) {
            return Err(ReceiptError::WrongArguments);
        }
        if let Some(sub) = expect.sub.filter(|&s| claims.sub.as_deref() != Some(s)) {
            return Err(ReceiptError::WrongSubject { expected: sub.to_owned(), found: claims.sub });
        }
        Ok(claims)
    }
}
