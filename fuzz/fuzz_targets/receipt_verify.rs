//! Fuzzes receipt verification (`toolgate_core::receipt::verify`) — the parser a tool server
//! runs on whatever arrives in `_meta["toolgate/receipt"]` or the `x-toolgate-receipt` header.
//!
//! Input: bytes split at the first NUL into (receipt, public key); without a NUL, the whole
//! input is the receipt and the key is a fixed valid one. Also a genuine receipt with the input
//! spliced into it (header, payload or signature part replaced), so the search starts near
//! valid receipts.
//!
//! Oracle (a panic = a finding): `verify` never panics; it accepts only the genuine receipt;
//! every refusal has a non-empty reason and message.

#![no_main]

use libfuzzer_sys::fuzz_target;
use std::sync::OnceLock;
use toolgate_core::receipt::{args_digest, verify, Claims, Expect, ReceiptKey};

struct Fixture {
    key: ReceiptKey,
    genuine: String,
}

fn fixture() -> &'static Fixture {
    static F: OnceLock<Fixture> = OnceLock::new();
    F.get_or_init(|| {
        let key = ReceiptKey::from_seed("AwMDAwMDAwMDAwMDAwMDAwMDAwMDAwMDAwMDAwMDAwM").expect("fixed seed");
        let args = serde_json::json!({ "q": "x" });
        let claims = Claims {
            sub: Some("ana"),
            tool: "search",
            action: None,
            resource: None,
            call_id: Some("c1"),
            args: args_digest(&args),
            iat: 1_800_000_000,
            exp: 1_800_000_300,
            jti: "fixed-jti".into(),
        };
        let genuine = key.issue(&claims);
        Fixture { key, genuine }
    })
}

fuzz_target!(|data: &[u8]| {
    let f = fixture();
    let text = String::from_utf8_lossy(data);
    let now = 1_800_000_100;
    let (receipt, public) = match text.split_once('\0') {
        Some((r, k)) => (r.to_owned(), k.to_owned()),
        None => (text.to_string(), f.key.public_key().to_owned()),
    };
    let check = |r: &str, k: &str| match verify(r, k, now, &Expect::default()) {
        Ok(_) => assert!(r == f.genuine && k == f.key.public_key(), "accepted a receipt that was not issued: {r:?}"),
        Err(e) => {
            assert!(!e.reason().is_empty());
            assert!(!e.to_string().is_empty());
        }
    };
    check(&receipt, &public);
    let parts: Vec<&str> = f.genuine.split('.').collect();
    if parts.len() == 3 {
        let which = data.first().map_or(0, |b| (*b % 3) as usize);
        let mut spliced = parts.iter().map(|p| p.to_string()).collect::<Vec<_>>();
        spliced[which] = text.chars().skip(1).collect();
        check(&spliced.join("."), f.key.public_key());
    }
});
