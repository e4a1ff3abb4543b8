//! Receipts end to end (issue 5): a round trip, every refusal reason, the digest's stability,
//! the fixed wire format of a known receipt, and totality of `verify` on garbage.

use serde_json::{json, Value};
use toolgate_core::receipt::base64url;
use toolgate_core::receipt::{
    args_digest, new_jti, verify, Claims, Expect, ReceiptError, ReceiptKey, ReceiptVerifier, VerifiedClaims, CLOCK_SKEW_SECONDS, MAX_RECEIPT_BYTES,
};

/// RFC 8037 Appendix A.1's example seed: a fixed key, so receipts are reproducible.
const SEED: &str = "nWGxne_9WmC6hEr0kuwsxERJxWl7MmkZcDusAxyuf2A";
const PUBLIC: &str = "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo";
const KID: &str = "kPrK_qmxVWaYVA9wwBF6Iuo3vVzz7TxHCTwXBygrS4k";
/// `receipt()` issued by the key above: header, payload and signature pinned.
const KNOWN: &str = concat!(
    "eyJhbGciOiJFZERTQSIsImtpZCI6ImtQcktfcW14VldhWVZBOXd3QkY2SXVvM3ZWeno3VHhIQ1R3WEJ5Z3JTNGsiLCJ0eXAiOiJKV1QifQ.",
    "eyJ2IjoxLCJzdWIiOiJhbGljZSIsInRvb2wiOiJyZWFkX2ZpbGUiLCJhY3Rpb24iOiJyZWFkIiwicmVzb3VyY2UiOiJmaWxlOnJlcG9ydHMvcTMucGRmIiwiY2FsbElkIjoiY2FsbF8xIiwiYXJncyI6Ii1zY1lrTjhDQTRsVldwNTVyaG81YmMtVlQzQmRtYmhQSC1vXzR5by1obmciLCJpYXQiOjE3NjAwMDAwMDAsImV4cCI6MTc2MDAwMDMwMCwianRpIjoiQUFBQUFBQUFBQUFBQUFBQUFBQUFBQSJ9.",
    "LUeQdunv_PCw867cgJa87hAIbqg29c0y2nfbsnmt2JhCaRaE_Lw8CvqWFTb1il0Rva4oHK6g1pAMrRnlq9xdBw"
);
const IAT: u64 = 1_760_000_000;
const EXP: u64 = IAT + 300;

fn key() -> ReceiptKey {
    ReceiptKey::from_seed(SEED).unwrap()
}

fn args() -> Value {
    json!({"path": "reports/q3.pdf", "limit": 10})
}

fn claims(args: &Value) -> Claims<'static> {
    Claims {
        sub: Some("alice"),
        tool: "read_file",
        action: Some("read"),
        resource: Some("file:reports/q3.pdf"),
        call_id: Some("call_1"),
        args: args_digest(args),
        iat: IAT,
        exp: EXP,
        jti: "AAAAAAAAAAAAAAAAAAAAAA".into(),
    }
}

fn receipt() -> String {
    key().issue(&claims(&args()))
}

fn reason(r: Result<VerifiedClaims, ReceiptError>) -> &'static str {
    match r {
        Ok(_) => "ok",
        Err(e) => {
            assert!(e.to_string().starts_with(e.reason()), "{e}");
            e.reason()
        }
    }
}

fn check(receipt: &str) -> &'static str {
    reason(verify(receipt, PUBLIC, IAT + 1, &Expect::default()))
}

fn parts(receipt: &str) -> Vec<Vec<u8>> {
    receipt.split('.').map(|p| base64url::decode(p.as_bytes()).unwrap()).collect()
}

/// A receipt with the given header and payload JSON, signed (or not) by `key`.
fn forge(header: &str, payload: &str, key: Option<&ReceiptKey>) -> String {
    let input = format!("{}.{}", base64url::encode(header.as_bytes()), base64url::encode(payload.as_bytes()));
    // `issue` only signs claims it writes itself; arbitrary headers and payloads are signed
    // with ed25519-dalek directly, from the same seed.
    let sig = key.map(|k| base64url::encode(&sign(k, &input))).unwrap_or_default();
    format!("{input}.{sig}")
}

/// An ed25519 signature over `input` by `key`.
fn sign(key: &ReceiptKey, input: &str) -> Vec<u8> {
    use ed25519_dalek::{Signer, SigningKey};
    let seed: [u8; 32] = base64url::decode(key.seed().as_bytes()).unwrap().try_into().unwrap();
    SigningKey::from_bytes(&seed).sign(input.as_bytes()).to_bytes().to_vec()
}

/// Flips one base64url character of part `part` at `index` to another alphabet character.
fn tamper(receipt: &str, part: usize, index: usize) -> String {
    let mut parts: Vec<Vec<u8>> = receipt.split('.').map(|p| p.as_bytes().to_vec()).collect();
    let b = &mut parts[part][index];
    *b = if *b == b'A' { b'B' } else { b'A' };
    String::from_utf8(parts.join(&b'.')).unwrap()
}

#[test]
fn round_trip() {
    let args = args();
    let r = receipt();
    let expect = Expect { tool: Some("read_file"), arguments: Some(&args), sub: Some("alice") };
    let got = verify(&r, PUBLIC, IAT + 10, &expect).unwrap();
    assert_eq!(
        got,
        VerifiedClaims {
            v: 1,
            sub: Some("alice".into()),
            tool: "read_file".into(),
            action: Some("read".into()),
            resource: Some("file:reports/q3.pdf".into()),
            call_id: Some("call_1".into()),
            args: args_digest(&args),
            iat: IAT,
            exp: EXP,
            jti: "AAAAAAAAAAAAAAAAAAAAAA".into(),
        }
    );
    let json = serde_json::to_value(&got).unwrap();
    assert_eq!(json["callId"], "call_1");
    assert_eq!(json["v"], 1);
}

#[test]
fn a_reused_verifier_answers_as_verify_does() {
    let verifier = ReceiptVerifier::new(PUBLIC).unwrap();
    assert_eq!(verifier.kid(), KID);
    let r = receipt();
    for now in [IAT, EXP + CLOCK_SKEW_SECONDS + 1] {
        assert_eq!(verifier.verify(&r, now, &Expect::default()), verify(&r, PUBLIC, now, &Expect::default()));
    }
    assert_eq!(verifier.verify(&tamper(&r, 1, 3), IAT, &Expect::default()), Err(ReceiptError::BadSignature));
    assert_eq!(ReceiptVerifier::new("nope").unwrap_err(), ReceiptError::BadPublicKey);
}

#[test]
fn fresh_keys_and_jtis_round_trip() {
    let key = ReceiptKey::generate().unwrap();
    let args = json!({});
    let c = Claims { sub: None, action: None, resource: None, call_id: None, jti: new_jti().unwrap(), ..claims(&args) };
    let got = verify(&key.issue(&c), key.public_key(), IAT, &Expect::default()).unwrap();
    assert_eq!((got.sub, got.action, got.resource, got.call_id), (None, None, None, None));
    let json = serde_json::to_string(&verify(&key.issue(&c), key.public_key(), IAT, &Expect::default()).unwrap()).unwrap();
    assert!(!json.contains("sub") && !json.contains("callId"), "{json}");
}

/// The wire format of a known receipt, pinned: ed25519 is deterministic, so the whole text is.
#[test]
fn known_receipt_is_pinned() {
    let r = receipt();
    let p = parts(&r);
    assert_eq!(p.len(), 3);
    assert_eq!(String::from_utf8(p[0].clone()).unwrap(), format!(r#"{{"alg":"EdDSA","kid":"{KID}","typ":"JWT"}}"#));
    assert_eq!(
        String::from_utf8(p[1].clone()).unwrap(),
        format!(
            r#"{{"v":1,"sub":"alice","tool":"read_file","action":"read","resource":"file:reports/q3.pdf","callId":"call_1","args":"{}","iat":{IAT},"exp":{EXP},"jti":"AAAAAAAAAAAAAAAAAAAAAA"}}"#,
            args_digest(&args())
        )
    );
    assert_eq!(p[2].len(), 64);
    assert!(!r.contains('='), "no padding");
    assert_eq!(key().kid(), KID);
    assert_eq!(key().public_key(), PUBLIC);
    // The digest of {"limit":10,"path":"reports/q3.pdf"}, for other implementations to match.
    assert_eq!(args_digest(&args()), "-scYkN8CA4lVWp55rho5bc-VT3BdmbhPH-o_4yo-hng");
    // Deterministic signing: the same claims, the same receipt, byte for byte. This text was
    // also checked with `jose` 6 (`jwtVerify` with the RFC 8037 key as a JWK, and
    // `calculateJwkThumbprint` giving the same kid).
    assert_eq!(r, KNOWN);
}

#[test]
fn tampered_header_payload_or_signature() {
    let r = receipt();
    let lens: Vec<usize> = r.split('.').map(str::len).collect();
    for (part, &len) in lens.iter().enumerate() {
        // Every fifth position and the second-to-last (the last character's low bits are
        // padding); ed25519 verification is slow in unoptimized test builds.
        for index in (0..len - 1).step_by(5).chain([len - 2]) {
            let bad = tamper(&r, part, index);
            let why = check(&bad);
            // The unsigned header may explain the failure better: a changed `kid` is another
            // key's, a changed `alg` an unsupported one; anything else is tampering.
            let allowed: &[&str] = if part == 0 { &["bad_signature", "wrong_key", "unsupported_alg"] } else { &["bad_signature"] };
            assert!(allowed.contains(&why), "part {part} index {index}: {why}");
        }
    }
    // Changing the header to other valid JSON (typ) is caught by the signature.
    let p = parts(&r);
    let header = String::from_utf8(p[0].clone()).unwrap().replace("JWT", "JWS");
    let bad = format!("{}.{}", base64url::encode(header.as_bytes()), r.split_once('.').unwrap().1);
    assert_eq!(check(&bad), "bad_signature");
    // Payload changed to other valid claims (a different tool), signature kept.
    let payload = String::from_utf8(p[1].clone()).unwrap().replace("read_file", "drop_table");
    let segs: Vec<&str> = r.split('.').collect();
    let bad = format!("{}.{}.{}", segs[0], base64url::encode(payload.as_bytes()), segs[2]);
    assert_eq!(check(&bad), "bad_signature");
}

#[test]
fn truncated_and_malformed() {
    let r = receipt();
    for n in 0..r.len() {
        assert_ne!(check(&r[..n]), "ok", "truncated to {n}");
    }
    assert_eq!(check(&r[..r.len() - 2]), "malformed");
    assert_eq!(check(r.rsplit_once('.').unwrap().0), "malformed");
    assert_eq!(check(""), "malformed");
    assert_eq!(check("not a receipt"), "malformed");
    assert_eq!(check(&format!("{r}.")), "malformed");
    assert_eq!(check(&format!("{r}=")), "malformed");
    assert_eq!(check(&format!(" {r}")), "malformed");
    assert_eq!(check(&"a".repeat(MAX_RECEIPT_BYTES + 1)), "malformed");
    // Signed, but the claims are not what a receipt holds.
    let k = key();
    let header = format!(r#"{{"alg":"EdDSA","kid":"{KID}"}}"#);
    for payload in [
        "[]",
        "not json",
        r#"{"v":1}"#,
        r#"{"v":1,"tool":1,"args":"x","iat":1,"exp":2,"jti":"j"}"#,
        r#"{"v":1,"tool":"t","tool":"u","args":"x","iat":1,"exp":2,"jti":"j"}"#,
        r#"{"v":1,"tool":"t","args":"x","iat":-1,"exp":2,"jti":"j"}"#,
    ] {
        assert_eq!(check(&forge(&header, payload, Some(&k))), "malformed", "{payload}");
    }
    // A signed header that is not a JSON object, or has `crit`.
    let ok_payload = r#"{"v":1,"tool":"t","args":"x","iat":1760000000,"exp":1760000300,"jti":"j"}"#;
    assert_eq!(check(&forge(&header, ok_payload, Some(&k))), "ok");
    assert_eq!(check(&forge("null", ok_payload, Some(&k))), "malformed");
    assert_eq!(check(&forge(r#"{"alg":"EdDSA","alg":"EdDSA"}"#, ok_payload, Some(&k))), "malformed");
    assert_eq!(check(&forge(r#"{"alg":"EdDSA","crit":["b64"],"b64":false}"#, ok_payload, Some(&k))), "malformed");
}

#[test]
fn other_algorithms_are_refused() {
    let payload = String::from_utf8(parts(&receipt())[1].clone()).unwrap();
    // alg none, empty signature: the classic downgrade.
    assert_eq!(check(&forge(r#"{"alg":"none"}"#, &payload, None)), "unsupported_alg");
    assert_eq!(check(&forge(r#"{"alg":"none","kid":"x"}"#, &payload, None)), "unsupported_alg");
    // HS256 with the public key as the HMAC secret (32 bytes of "signature").
    let hs = forge(r#"{"alg":"HS256","typ":"JWT"}"#, &payload, None) + &base64url::encode(&[7u8; 32]);
    assert_eq!(check(&hs), "unsupported_alg");
    // Even a valid ed25519 signature does not make another alg name acceptable.
    assert_eq!(check(&forge(r#"{"alg":"Ed25519"}"#, &payload, Some(&key()))), "unsupported_alg");
    assert_eq!(check(&forge(r#"{"typ":"JWT"}"#, &payload, Some(&key()))), "unsupported_alg");
    let err = verify(&forge(r#"{"alg":"none"}"#, &payload, None), PUBLIC, IAT, &Expect::default()).unwrap_err();
    assert_eq!(err, ReceiptError::UnsupportedAlg("none".into()));
}

#[test]
fn unknown_versions_are_refused() {
    let k = key();
    let header = format!(r#"{{"alg":"EdDSA","kid":"{KID}","typ":"JWT"}}"#);
    let base = String::from_utf8(parts(&receipt())[1].clone()).unwrap();
    for v in [r#""v":2"#, r#""v":0"#, r#""v":"1""#, r#""v":1.5"#, r#""v":null"#] {
        let payload = base.replace(r#""v":1"#, v);
        assert_eq!(check(&forge(&header, &payload, Some(&k))), "unknown_version", "{v}");
    }
    let payload = base.replace(r#""v":1,"#, "");
    assert_eq!(check(&forge(&header, &payload, Some(&k))), "unknown_version", "missing v");
    // A future version whose other claims have changed shape is still unknown_version.
    assert_eq!(check(&forge(&header, r#"{"v":2,"args":{"alg":"sha3"}}"#, Some(&k))), "unknown_version");
}

#[test]
fn expiry_with_clock_skew() {
    let r = receipt();
    let at = |now| reason(verify(&r, PUBLIC, now, &Expect::default()));
    assert_eq!(at(EXP), "ok");
    assert_eq!(at(EXP + CLOCK_SKEW_SECONDS), "ok", "within the skew allowance");
    assert_eq!(at(EXP + CLOCK_SKEW_SECONDS + 1), "expired");
    assert_eq!(at(u64::MAX), "expired");
    assert_eq!(at(IAT - CLOCK_SKEW_SECONDS), "ok", "the verifier's clock a minute behind");
    assert_eq!(at(IAT - CLOCK_SKEW_SECONDS - 1), "not_yet_valid");
    assert_eq!(at(0), "not_yet_valid");
    let e = verify(&r, PUBLIC, EXP + 1000, &Expect::default()).unwrap_err();
    assert_eq!(e, ReceiptError::Expired { exp: EXP, now: EXP + 1000 });
    assert!(e.to_string().contains("60 s"), "{e}");
}

#[test]
fn wrong_or_bad_public_key() {
    let r = receipt();
    let other = ReceiptKey::generate().unwrap();
    assert_eq!(reason(verify(&r, other.public_key(), IAT, &Expect::default())), "wrong_key");
    // Without a kid, another key's signature is just a bad signature.
    let payload = String::from_utf8(parts(&r)[1].clone()).unwrap();
    assert_eq!(reason(verify(&forge(r#"{"alg":"EdDSA"}"#, &payload, Some(&key())), other.public_key(), IAT, &Expect::default())), "bad_signature");
    // A kid naming another key on a receipt this key did sign: refused too.
    assert_eq!(check(&forge(r#"{"alg":"EdDSA","kid":"someone-else"}"#, &payload, Some(&key()))), "wrong_key");
    for bad in [
        "",
        "abc",
        &PUBLIC[1..],
        &format!("{PUBLIC}="),
        &format!("{PUBLIC}A"),
        &base64url::encode(&[0; 32]),
        SEED.split_at(42).0,
        "11qYAYKxCrfVS/7TyWQHOg7hcvPapiMlrwIaaPcHURo",
    ] {
        assert_eq!(reason(verify(&r, bad, IAT, &Expect::default())), "bad_public_key", "{bad:?}");
    }
}

#[test]
fn expectations() {
    let r = receipt();
    let args = args();
    let at = |e: Expect<'_>| reason(verify(&r, PUBLIC, IAT, &e));
    assert_eq!(at(Expect { tool: Some("read_file"), ..Default::default() }), "ok");
    assert_eq!(at(Expect { tool: Some("write_file"), ..Default::default() }), "wrong_tool");
    assert_eq!(at(Expect { arguments: Some(&args), ..Default::default() }), "ok");
    let reordered: Value = serde_json::from_str(r#"{"limit": 10.0, "path": "reports/q3.pdf"}"#).unwrap();
    assert_eq!(at(Expect { arguments: Some(&reordered), ..Default::default() }), "ok", "key order and number spelling");
    let other = json!({"path": "reports/q4.pdf", "limit": 10});
    assert_eq!(at(Expect { arguments: Some(&other), ..Default::default() }), "wrong_arguments");
    let stringly = json!({"path": "reports/q3.pdf", "limit": "10"});
    assert_eq!(at(Expect { arguments: Some(&stringly), ..Default::default() }), "wrong_arguments");
    assert_eq!(at(Expect { sub: Some("alice"), ..Default::default() }), "ok");
    assert_eq!(at(Expect { sub: Some("mallory"), ..Default::default() }), "wrong_subject");
    // No sub in the receipt: any expected subject is refused.
    let no_sub = key().issue(&Claims { sub: None, ..claims(&args) });
    assert_eq!(reason(verify(&no_sub, PUBLIC, IAT, &Expect { sub: Some("alice"), ..Default::default() })), "wrong_subject");
    let e = verify(&r, PUBLIC, IAT, &Expect { tool: Some("x"), ..Default::default() }).unwrap_err();
    assert_eq!(e, ReceiptError::WrongTool { expected: "x".into(), found: "read_file".into() });
}

#[test]
fn args_digest_stability() {
    let a: Value = serde_json::from_str(r#"{"b": {"y": [1, 2e0, "x"], "x": null}, "a": true}"#).unwrap();
    let b: Value = serde_json::from_str(r#"{"a": true, "b": {"x": null, "y": [1.0, 2, "x"]}}"#).unwrap();
    assert_eq!(args_digest(&a), args_digest(&b));
    assert_ne!(args_digest(&json!({"n": "1"})), args_digest(&json!({"n": 1})));
    assert_ne!(args_digest(&json!({"n": [1, 2]})), args_digest(&json!({"n": [2, 1]})));
    assert_ne!(args_digest(&json!({"n": null})), args_digest(&json!({})));
    assert_eq!(args_digest(&json!({"n": 1})).len(), 43);
}

/// `verify` is total: random bytes, random edits of a real receipt, odd unicode — never a panic.
#[test]
fn verify_never_panics() {
    let r = receipt();
    let mut state = 0x9e37_79b9_7f4a_7c15_u64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let alphabet = b"AZaz09-_.=+/ \"{}\xff";
    for _ in 0..1_000 {
        let mut bytes = r.clone().into_bytes();
        for _ in 0..1 + next() % 4 {
            let i = (next() % bytes.len() as u64) as usize;
            match next() % 3 {
                0 => bytes[i] = alphabet[(next() % alphabet.len() as u64) as usize],
                1 => {
                    bytes.remove(i);
                }
                _ => bytes.insert(i, b'.'),
            }
        }
        let text = String::from_utf8_lossy(&bytes);
        if text == r {
            continue;
        }
        assert_ne!(check(&text), "ok", "{text}");
    }
    for junk in ["...", "..", ".", "é.é.é", "\u{0}.\u{0}.\u{0}", "eyJ9.eyJ9.eyJ9"] {
        assert_eq!(check(junk), "malformed", "{junk:?}");
    }
    // Deep nesting in a signed payload: serde_json's recursion limit, not a stack overflow.
    let deep = format!("{}{}", "[".repeat(5000), "]".repeat(5000));
    assert_eq!(check(&forge(r#"{"alg":"EdDSA"}"#, &deep, Some(&key()))), "malformed");
}
