//! The gate's receipt signing key: an ed25519 key pair, its public half in base64url, and its
//! RFC 7638 thumbprint (the JWS `kid`). Built once per gate; signing is [`ReceiptKey::issue`].

use ed25519_dalek::{SigningKey, VerifyingKey, PUBLIC_KEY_LENGTH, SECRET_KEY_LENGTH};
use sha2::{Digest, Sha256};

use super::base64url;

/// An ed25519 signing key with its key id. `Debug` shows the key id and public key only; the
/// secret is wiped from memory when the last clone is dropped.
#[derive(Clone)]
pub struct ReceiptKey {
    pub(super) signing: SigningKey,
    public_key: String,
    kid: String,
    /// `base64url(header) + "."`: the fixed start of every receipt this key signs.
    pub(super) header_dot: String,
}

impl std::fmt::Debug for ReceiptKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ReceiptKey").field("kid", &self.kid).field("public_key", &self.public_key).finish_non_exhaustive()
    }
}

impl ReceiptKey {
    /// A key from a 32-byte ed25519 seed (RFC 8032 private key) written in base64url without
    /// padding — the form [`ReceiptKey::seed`] and `toolgate keygen` print. Also accepted:
    /// standard base64, `=` padding, surrounding whitespace (a trailing newline in a key file),
    /// and the 64-byte `seed || public key` form some tools export, whose public half must
    /// match the seed. The error names what is wrong and never contains the key text.
    pub fn from_seed(seed_b64url: &str) -> Result<ReceiptKey, String> {
        let mut buf = [0u8; SECRET_KEY_LENGTH + PUBLIC_KEY_LENGTH];
        let result = Self::from_buffer(seed_b64url, &mut buf);
        wipe(&mut buf);
        result
    }

    fn from_buffer(text: &str, buf: &mut [u8; 64]) -> Result<ReceiptKey, String> {
        if text.trim_ascii().is_empty() {
            return Err("the receipt private key is empty; expected a base64url ed25519 seed (32 bytes)".into());
        }
        let Some(len) = base64url::decode_lenient(text, buf) else {
            return Err(format!(
                "the receipt private key is not base64url (or base64) of a 32-byte ed25519 seed ({} characters given)",
                text.trim_ascii().len()
            ));
        };
        let mut seed = [0u8; SECRET_KEY_LENGTH];
        if len >= SECRET_KEY_LENGTH {
            seed.copy_from_slice(&buf[..SECRET_KEY_LENGTH]);
        }
        let key = match len {
            SECRET_KEY_LENGTH => Ok(ReceiptKey::from_signing(SigningKey::from_bytes(&seed))),
            64 => {
                let signing = SigningKey::from_bytes(&seed);
                if signing.verifying_key().as_bytes()[..] == buf[SECRET_KEY_LENGTH..] {
                    Ok(ReceiptKey::from_signing(signing))
                } else {
                    Err("the receipt private key has 64 bytes (seed || public key) but its public half does not match its seed".into())
                }
            }
            n => Err(format!("the receipt private key decodes to {n} bytes; expected a 32-byte ed25519 seed (or 64 bytes: seed || public key)")),
        };
        wipe(&mut seed);
        key
    }

    /// A fresh key from the OS CSPRNG (`getrandom`). Fails only when the OS random source does:
    /// then there is no key, never a guessable one.
    pub fn generate() -> Result<ReceiptKey, String> {
        let mut seed = [0u8; SECRET_KEY_LENGTH];
        let result = getrandom::fill(&mut seed)
            .map(|()| ReceiptKey::from_signing(SigningKey::from_bytes(&seed)))
            .map_err(|e| format!("no receipt key could be generated: the OS random source failed: {e}"));
        wipe(&mut seed);
        result
    }

    fn from_signing(signing: SigningKey) -> ReceiptKey {
        let public_key = base64url::encode(signing.verifying_key().as_bytes());
        let kid = thumbprint(&public_key);
        let mut header_dot = String::with_capacity(96);
        let header = format!(r#"{{"alg":"EdDSA","kid":"{kid}","typ":"JWT"}}"#);
        base64url::encode_into(&mut header_dot, header.as_bytes());
        header_dot.push('.');
        ReceiptKey { signing, public_key, kid, header_dot }
    }

    /// The verifying key: 32 bytes in base64url without padding (43 characters) — what
    /// `gate.publicKey` returns and what [`super::verify`] takes.
    pub fn public_key(&self) -> &str {
        &self.public_key
    }

    /// The 32-byte seed in base64url without padding. Secret: for `toolgate keygen` only.
    pub fn seed(&self) -> String {
        base64url::encode(self.signing.as_bytes())
    }

    /// The key id every receipt's header carries: the RFC 7638 JWK thumbprint of the public key
    /// (base64url SHA-256 of `{"crv":"Ed25519","kty":"OKP","x":"…"}`, RFC 8037 §2).
    pub fn kid(&self) -> &str {
        &self.kid
    }
}

/// The RFC 7638 thumbprint of an Ed25519 OKP public key given as base64url `x`.
pub(super) fn thumbprint(x: &str) -> String {
    let mut h = Sha256::new();
    h.update(br#"{"crv":"Ed25519","kty":"OKP","x":""#);
    h.update(x.as_bytes());
    h.update(br#""}"#);
    base64url::encode(&h.finalize())
}

/// Decodes a verifying key given as 32 bytes of base64url (no padding); `None` when the text is
/// not that, is not a point on the curve, or is a weak (small-order) key no signature can bind.
pub(super) fn verifying_key(text: &str) -> Option<VerifyingKey> {
    let bytes = base64url::decode_array::<PUBLIC_KEY_LENGTH>(text.as_bytes())?;
    VerifyingKey::from_bytes(&bytes).ok().filter(|k| !k.is_weak())
}

/// Overwrites secret bytes in a way the optimizer may not drop.
fn wipe(bytes: &mut [u8]) {
    for b in bytes.iter_mut() {
        // SAFETY: `b` is a valid, aligned, exclusive reference to a byte.
        unsafe { std::ptr::write_volatile(b, 0) };
    }
    std::sync::atomic::compiler_fence(std::sync::atomic::Ordering::SeqCst);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// RFC 8037 Appendix A.1/A.3: the example key and its thumbprint.
    const RFC_SEED: &str = "nWGxne_9WmC6hEr0kuwsxERJxWl7MmkZcDusAxyuf2A";
    const RFC_X: &str = "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo";
    const RFC_KID: &str = "kPrK_qmxVWaYVA9wwBF6Iuo3vVzz7TxHCTwXBygrS4k";

    #[test]
    fn rfc8037_key_and_thumbprint() {
        let key = ReceiptKey::from_seed(RFC_SEED).unwrap();
        assert_eq!(key.public_key(), RFC_X);
        assert_eq!(key.kid(), RFC_KID);
        assert_eq!(key.seed(), RFC_SEED);
    }

    #[test]
    fn other_spellings_of_the_same_seed() {
        let mut std_b64 = RFC_SEED.replace('-', "+").replace('_', "/");
        std_b64.push_str("=\n");
        assert_eq!(ReceiptKey::from_seed(&std_b64).unwrap().kid(), RFC_KID);
        let mut both = base64url::decode(RFC_SEED.as_bytes()).unwrap();
        both.extend(base64url::decode(RFC_X.as_bytes()).unwrap());
        assert_eq!(ReceiptKey::from_seed(&base64url::encode(&both)).unwrap().kid(), RFC_KID);
        both[40] ^= 1;
        let err = ReceiptKey::from_seed(&base64url::encode(&both)).unwrap_err();
        assert!(err.contains("does not match"), "{err}");
    }

    #[test]
    fn errors_name_the_problem_not_the_secret() {
        for (text, want) in
            [("", "empty"), ("  \n", "empty"), ("not a key!!", "not base64url"), ("AAAA", "decodes to 3 bytes"), (&"A".repeat(200), "not base64url")]
        {
            let err = ReceiptKey::from_seed(text).unwrap_err();
            assert!(err.contains(want), "{text:?}: {err}");
            assert!(text.trim().is_empty() || !err.contains(text.trim()), "{err}");
        }
    }

    #[test]
    fn debug_hides_the_seed() {
        let key = ReceiptKey::generate().unwrap();
        let shown = format!("{key:?}");
        assert!(shown.contains(key.kid()) && !shown.contains(&key.seed()), "{shown}");
        assert_ne!(key.seed(), ReceiptKey::generate().unwrap().seed());
        assert_eq!(ReceiptKey::from_seed(&key.seed()).unwrap().public_key(), key.public_key());
    }

    #[test]
    fn verifying_keys_are_checked() {
        assert!(verifying_key(RFC_X).is_some());
        assert!(verifying_key(&RFC_X[1..]).is_none());
        assert!(verifying_key(&format!("{RFC_X}=")).is_none());
        assert!(verifying_key(&base64url::encode(&[0u8; 32])).is_none(), "small-order point");
        assert!(verifying_key("").is_none());
    }
}
