//! Compact JWS with EdDSA over Ed25519 (RFC 7515 §7.1, RFC 8037 §3.1): signing a receipt, and
//! taking one apart and checking its signature before anything in it is believed.

use std::fmt::Write as _;

use ed25519_dalek::{Signature, Signer as _, VerifyingKey, SIGNATURE_LENGTH};
use serde::Deserialize;

use super::base64url::{self, encoded_len};
use super::jcs::write_string;
use super::{key, Claims, ReceiptError, ReceiptKey, MAX_RECEIPT_BYTES};

impl ReceiptKey {
    /// Signs `claims` as a compact JWS: `base64url(header).base64url(payload).base64url(sig)`,
    /// no padding. The header is `{"alg":"EdDSA","kid":…,"typ":"JWT"}` (encoded once per key);
    /// the payload is the claims' JSON with members in the order `v, sub, tool, action,
    /// resource, callId, args, iat, exp, jti`, absent optionals omitted. Two allocations (the
    /// payload JSON and the receipt); the ed25519 signature is most of the cost.
    pub fn issue(&self, claims: &Claims<'_>) -> String {
        let payload = payload_json(claims);
        let sig_len = encoded_len(SIGNATURE_LENGTH);
        let mut out = String::with_capacity(self.header_dot.len() + encoded_len(payload.len()) + 1 + sig_len);
        out.push_str(&self.header_dot);
        base64url::encode_into(&mut out, payload.as_bytes());
        let signature = self.signing.sign(out.as_bytes());
        out.push('.');
        base64url::encode_into(&mut out, &signature.to_bytes());
        out
    }
}

/// The claims as JSON text (see [`ReceiptKey::issue`]).
fn payload_json(c: &Claims<'_>) -> String {
    let optional = [c.sub, c.action, c.resource, c.call_id].iter().flatten().map(|s| s.len() + 16).sum::<usize>();
    let mut s = String::with_capacity(120 + c.tool.len() + c.args.len() + c.jti.len() + optional);
    s.push_str("{\"v\":1");
    let member = |s: &mut String, name: &str, value: Option<&str>| {
        if let Some(value) = value {
            s.push_str(",\"");
            s.push_str(name);
            s.push_str("\":");
            write_string(s, value);
        }
    };
    member(&mut s, "sub", c.sub);
    member(&mut s, "tool", Some(c.tool));
    member(&mut s, "action", c.action);
    member(&mut s, "resource", c.resource);
    member(&mut s, "callId", c.call_id);
    member(&mut s, "args", Some(&c.args));
    let _ = write!(s, ",\"iat\":{},\"exp\":{}", c.iat, c.exp);
    member(&mut s, "jti", Some(&c.jti));
    s.push('}');
    s
}

/// A compact JWS taken apart: the signed text and the three decoded parts.
pub(super) struct Compact<'a> {
    /// `header.payload` as received: what the signature covers.
    signing_input: &'a [u8],
    header: Vec<u8>,
    pub(super) payload: Vec<u8>,
    signature: Vec<u8>,
}

impl<'a> Compact<'a> {
    /// Splits and decodes; malformed unless it is at most [`MAX_RECEIPT_BYTES`], exactly three
    /// dot-separated parts, each canonical base64url.
    pub(super) fn parse(receipt: &'a str) -> Result<Compact<'a>, ReceiptError> {
        if receipt.len() > MAX_RECEIPT_BYTES {
            return Err(ReceiptError::Malformed("longer than 16 KiB"));
        }
        let mut parts = receipt.split('.');
        let (Some(h), Some(p), Some(s), None) = (parts.next(), parts.next(), parts.next(), parts.next()) else {
            return Err(ReceiptError::Malformed("not three dot-separated parts (header.payload.signature)"));
        };
        let decode = |part: &str, what| base64url::decode(part.as_bytes()).ok_or(ReceiptError::Malformed(what));
        Ok(Compact {
            signing_input: &receipt.as_bytes()[..h.len() + 1 + p.len()],
            header: decode(h, "the header is not base64url")?,
            payload: decode(p, "the payload is not base64url")?,
            signature: decode(s, "the signature is not base64url")?,
        })
    }

    /// Checks the signature with `key` (strict RFC 8032 verification: no malleable or
    /// small-order forms), then the header. When the signature fails, the header — unsigned,
    /// so only a diagnosis — names a more useful reason where it can: another algorithm
    /// (`alg: none`, `HS256`, …) or another key's `kid`.
    pub(super) fn check(&self, key: &VerifyingKey, kid: &str) -> Result<(), ReceiptError> {
        let header = serde_json::from_slice::<Header>(&self.header);
        let signature = <[u8; SIGNATURE_LENGTH]>::try_from(self.signature.as_slice()).ok().map(|b| Signature::from_bytes(&b));
        let signed = signature.is_some_and(|sig| key.verify_strict(self.signing_input, &sig).is_ok());
        if !signed {
            return Err(match (&header, signature) {
                (Ok(h), _) if h.alg.as_deref() != Some(ALG) => ReceiptError::UnsupportedAlg(printable(h.alg.as_deref())),
                (Ok(h), _) if h.kid.as_deref().is_some_and(|k| k != kid) => ReceiptError::WrongKey,
                (_, None) => ReceiptError::Malformed("the signature is not 64 bytes"),
                _ => ReceiptError::BadSignature,
            });
        }
        let header = header.map_err(|_| ReceiptError::Malformed("the header is not a JSON object of strings"))?;
        if header.alg.as_deref() != Some(ALG) {
            return Err(ReceiptError::UnsupportedAlg(printable(header.alg.as_deref())));
        }
        if header.kid.as_deref().is_some_and(|k| k != kid) {
            return Err(ReceiptError::WrongKey);
        }
        if header.crit.is_some() {
            return Err(ReceiptError::Malformed("the header has `crit` extensions, none of which are supported"));
        }
        Ok(())
    }
}

/// The only JWS algorithm receipts use (RFC 8037 §3.1).
const ALG: &str = "EdDSA";

/// The header members verification looks at; others are ignored, duplicates refused.
#[derive(Deserialize)]
struct Header {
    alg: Option<String>,
    kid: Option<String>,
    crit: Option<serde::de::IgnoredAny>,
}

/// An untrusted `alg` shortened and stripped to something safe to print in a message.
fn printable(alg: Option<&str>) -> String {
    match alg {
        None => "(none given)".to_owned(),
        Some(a) => a.chars().filter(|c| !c.is_control()).take(24).collect(),
    }
}

/// Whether `public_key` decodes; kept here so `verify` reads top to bottom.
pub(super) fn verifying_key(public_key: &str) -> Result<(VerifyingKey, String), ReceiptError> {
    let key = key::verifying_key(public_key).ok_or(ReceiptError::BadPublicKey)?;
    Ok((key, key::thumbprint(public_key)))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// RFC 8037 Appendix A.4: the example JWS, signed over `{"alg":"EdDSA"}` and
    /// "Example of Ed25519 signing" with the A.1 key (ed25519 signatures are deterministic).
    #[test]
    fn rfc8037_example_signature() {
        let key = ReceiptKey::from_seed("nWGxne_9WmC6hEr0kuwsxERJxWl7MmkZcDusAxyuf2A").unwrap();
        let input = "eyJhbGciOiJFZERTQSJ9.RXhhbXBsZSBvZiBFZDI1NTE5IHNpZ25pbmc";
        let sig = base64url::encode(&key.signing.sign(input.as_bytes()).to_bytes());
        assert_eq!(sig, "hgyY0il_MGCjP0JzlnLWG1PPOt7-09PGcvMg3AIbQR6dWbhijcNR4ki4iylGjg5BhVsPt9g7sVvpAr_MuM0KAg");
        let jws = format!("{input}.{sig}");
        let (vk, _) = verifying_key(key.public_key()).unwrap();
        // No kid in this header: the signature alone decides.
        assert!(Compact::parse(&jws).unwrap().check(&vk, key.kid()).is_ok());
    }

    #[test]
    fn payload_member_order_and_omission() {
        let claims =
            Claims { sub: None, tool: "t\"x", action: Some("read"), resource: None, call_id: Some("c1"), args: "A".into(), iat: 10, exp: 20, jti: "J".into() };
        assert_eq!(payload_json(&claims), r#"{"v":1,"tool":"t\"x","action":"read","callId":"c1","args":"A","iat":10,"exp":20,"jti":"J"}"#);
    }

    #[test]
    fn parse_refuses_shapes() {
        for bad in ["", "a.b", "a.b.c.d", "a..", "e30.e30.!!", &"A".repeat(MAX_RECEIPT_BYTES + 1)] {
            assert!(matches!(Compact::parse(bad), Err(ReceiptError::Malformed(_))), "{bad:.20}");
        }
        assert!(Compact::parse("e30.e30.").is_ok());
    }
}
