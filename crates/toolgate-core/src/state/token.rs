//! Confirmation tokens (one-time secrets from the OS CSPRNG) and the canonical key of a call
//! (tool + arguments) that loop counters are kept under.

use std::hash::{BuildHasher, Hasher};
use std::sync::OnceLock;

use ahash::{AHasher, RandomState};
use serde_json::{Number, Value};
use thiserror::Error;

use super::seed::random_seeds;

/// Random bytes per token: 192 bits, above the 128 the contract asks for.
const TOKEN_BYTES: usize = 24;

/// Why no token could be made.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
pub enum TokenError {
    /// The OS random source failed. No token is issued: the gate must refuse rather than
    /// fall back to a guessable one.
    #[error("the OS random source failed: {0}")]
    Random(getrandom::Error),
}

/// A new confirmation token: 24 bytes (192 bits) from the OS CSPRNG (`getrandom`), encoded as
/// base64url without padding, so exactly 32 characters of `[A-Za-z0-9_-]`. Never derived from
/// anything else, so it cannot be guessed from the call it confirms.
pub fn new_token() -> Result<String, TokenError> {
    let mut bytes = [0u8; TOKEN_BYTES];
    getrandom::fill(&mut bytes).map_err(TokenError::Random)?;
    Ok(base64url(&bytes))
}

use crate::receipt::base64url::encode as base64url;

/// The loop-guard key of a call: a 128-bit hash of `tool` and `args`.
///
/// - Independent of object key order (keys are hashed sorted); arrays keep their order.
/// - Types are distinguished: `"1"`, `1`, `true`, `null`, `[]` and `{}` all differ, and string
///   boundaries are length-prefixed (`["ab"]` ≠ `["a","b"]`).
/// - Numbers are compared by value: `1`, `1.0`, `1e0` and `-0`/`0` are the same key (JSON Schema
///   calls `1.0` an integer too), so respelling a number does not dodge the loop guard.
///   Non-integral numbers are keyed by their `f64` value.
///
/// Two independent `ahash` hashers with seeds drawn once per process from the OS random source,
/// so keys are not predictable from outside. Collisions (~2^-64 for a pair) would merge two
/// calls' counts, which only over-counts (fail closed), never lets a loop through.
pub fn canonical_key(tool: &str, args: &Value) -> u128 {
    static HASHERS: OnceLock<(RandomState, RandomState)> = OnceLock::new();
    let (a, b) = HASHERS.get_or_init(|| {
        let s = random_seeds();
        (RandomState::with_seeds(s[0], s[1], s[2], s[3]), RandomState::with_seeds(s[4], s[5], s[6], s[7]))
    });
    let mut h = Pair(a.build_hasher(), b.build_hasher());
    h.text(tool);
    h.value(args);
    (u128::from(h.0.finish()) << 64) | u128::from(h.1.finish())
}

/// [`canonical_key`] with SHA-256 instead of per-process random seeds: the same call has the same
/// key in every process (and every binding), as a store shared by several processes needs.
/// Slower (~1 µs for small arguments) and predictable, which only lets an outsider make two calls
/// share a count: over-counting, never a loop let through.
pub fn stable_canonical_key(tool: &str, args: &Value) -> u128 {
    let mut h = Stable(sha2::Sha256::default());
    h.text(tool);
    h.value(args);
    let d = sha2::Digest::finalize(h.0);
    let mut k = [0u8; 16];
    k.copy_from_slice(&d[..16]);
    u128::from_be_bytes(k)
}

/// Two hashers fed the same canonical byte stream.
struct Pair(AHasher, AHasher);

/// SHA-256 fed the canonical byte stream; integers written little-endian and `usize` as 64 bits,
/// so the stream is the same on every platform.
struct Stable(sha2::Sha256);

impl Hasher for Stable {
    fn finish(&self) -> u64 {
        0 // unused: the digest is read from the inner hasher
    }

    fn write(&mut self, bytes: &[u8]) {
        sha2::Digest::update(&mut self.0, bytes);
    }

    fn write_u8(&mut self, i: u8) {
        self.write(&[i]);
    }

    fn write_u64(&mut self, i: u64) {
        self.write(&i.to_le_bytes());
    }

    fn write_usize(&mut self, i: usize) {
        self.write(&(i as u64).to_le_bytes());
    }

    fn write_i128(&mut self, i: i128) {
        self.write(&i.to_le_bytes());
    }
}

impl Canonical for Pair {}
impl Canonical for Stable {}

// Type tags of the canonical stream.
const NULL: u8 = 0;
const FALSE: u8 = 1;
const TRUE: u8 = 2;
const INT: u8 = 3;
const FLOAT: u8 = 4;
const STRING: u8 = 5;
const ARRAY: u8 = 6;
const OBJECT: u8 = 7;

/// The canonical byte stream of a call, fed to any hasher.
trait Canonical: Hasher {
    fn text(&mut self, s: &str) {
        self.write_usize(s.len());
        self.write(s.as_bytes());
    }

    fn value(&mut self, v: &Value) {
        match v {
            Value::Null => self.write_u8(NULL),
            Value::Bool(false) => self.write_u8(FALSE),
            Value::Bool(true) => self.write_u8(TRUE),
            Value::Number(n) => self.number(n),
            Value::String(s) => {
                self.write_u8(STRING);
                self.text(s);
            }
            Value::Array(items) => {
                self.write_u8(ARRAY);
                self.write_usize(items.len());
                items.iter().for_each(|item| self.value(item));
            }
            Value::Object(map) => {
                self.write_u8(OBJECT);
                self.write_usize(map.len());
                if map.keys().is_sorted() {
                    map.iter().for_each(|(k, v)| self.entry(k, v));
                } else {
                    let mut entries: Vec<_> = map.iter().collect();
                    entries.sort_unstable_by(|x, y| x.0.cmp(y.0));
                    entries.into_iter().for_each(|(k, v)| self.entry(k, v));
                }
            }
        }
    }

    fn entry(&mut self, key: &str, value: &Value) {
        self.text(key);
        self.value(value);
    }

    fn number(&mut self, n: &Number) {
        const I64_MIN: f64 = -9_223_372_036_854_775_808.0; // -2^63
        const U64_END: f64 = 18_446_744_073_709_551_616.0; // 2^64
        let int = if let Some(i) = n.as_i64() {
            Some(i128::from(i))
        } else if let Some(u) = n.as_u64() {
            Some(i128::from(u))
        } else {
            match n.as_f64() {
                Some(f) if f.fract() == 0.0 && (I64_MIN..U64_END).contains(&f) => Some(f as i128),
                Some(f) => {
                    self.write_u8(FLOAT);
                    self.write_u64(f.to_bits());
                    None
                }
                None => None,
            }
        };
        if let Some(i) = int {
            self.write_u8(INT);
            self.write_i128(i);
        }
    }
}

impl Hasher for Pair {
    fn finish(&self) -> u64 {
        self.0.finish() ^ self.1.finish()
    }
    fn write(&mut self, bytes: &[u8]) {
        self.0.write(bytes);
        self.1.write(bytes);
    }
    fn write_u8(&mut self, i: u8) {
        self.0.write_u8(i);
        self.1.write_u8(i);
    }
    fn write_u64(&mut self, i: u64) {
        self.0.write_u64(i);
        self.1.write_u64(i);
    }
    fn write_usize(&mut self, i: usize) {
        self.0.write_usize(i);
        self.1.write_usize(i);
    }
    fn write_i128(&mut self, i: i128) {
        self.0.write_i128(i);
        self.1.write_i128(i);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use std::collections::HashSet;

    #[test]
    fn tokens_are_long_urlsafe_and_unique() {
        let mut seen = HashSet::new();
        for _ in 0..10_000 {
            let t = new_token().unwrap();
            assert_eq!(t.len(), 32);
            assert!(t.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_'), "{t}");
            assert!(seen.insert(t));
        }
    }

    #[test]
    fn key_ignores_object_order_at_every_depth() {
        let a = json!({"b": 1, "a": {"y": [1, {"q": 1, "p": 2}], "x": null}});
        let b = json!({"a": {"x": null, "y": [1, {"p": 2, "q": 1}]}, "b": 1});
        assert_eq!(canonical_key("t", &a), canonical_key("t", &b));
        assert_eq!(canonical_key("t", &a), canonical_key("t", &a.clone()));
    }

    #[test]
    fn stable_key_is_the_same_in_every_process_and_canonical() {
        let a = json!({"b": 1, "a": {"y": [1.0, {"q": 1, "p": 2}], "x": null}});
        let b = json!({"a": {"x": null, "y": [1, {"p": 2, "q": 1}]}, "b": 1});
        assert_eq!(stable_canonical_key("t", &a), stable_canonical_key("t", &b));
        assert_ne!(stable_canonical_key("t", &a), stable_canonical_key("u", &a));
        assert_ne!(stable_canonical_key("t", &json!({"a": "1"})), stable_canonical_key("t", &json!({"a": 1})));
        // pinned: a changed stream would split the counts of replicas running different versions
        assert_eq!(format!("{:032x}", stable_canonical_key("search", &json!({"q": "same"}))), PINNED);
    }

    const PINNED: &str = "7f46e35dd27c3e219966aefdbf6d3abb";

    #[test]
    fn key_distinguishes() {
        let k = |tool: &str, v: Value| canonical_key(tool, &v);
        let distinct = [
            k("t", json!({"a": "1"})),
            k("t", json!({"a": 1})),
            k("t", json!({"a": 1.5})),
            k("t", json!({"a": true})),
            k("t", json!({"a": false})),
            k("t", json!({"a": null})),
            k("t", json!({"a": "null"})),
            k("t", json!({"a": []})),
            k("t", json!({"a": {}})),
            k("t", json!({"a": [1, 2]})),
            k("t", json!({"a": [2, 1]})),
            k("t", json!({"a": ["ab"]})),
            k("t", json!({"a": ["a", "b"]})),
            k("t", json!({"ab": "c"})),
            k("t", json!({"a": "bc"})),
            k("t", json!({})),
            k("u", json!({})),
            k("t", json!({"a": u64::MAX})),
            k("t", json!({"a": -1})),
            k("t", json!({"a": 18_446_744_073_709_551_616.0_f64})),
        ];
        let set: HashSet<_> = distinct.iter().collect();
        assert_eq!(set.len(), distinct.len());
    }

    #[test]
    fn numbers_compare_by_value() {
        let k = |v: Value| canonical_key("t", &json!({ "n": v }));
        let one: Value = serde_json::from_str("1").unwrap();
        let one_f: Value = serde_json::from_str("1.0").unwrap();
        let one_e: Value = serde_json::from_str("1e0").unwrap();
        assert_eq!(k(one.clone()), k(one_f));
        assert_eq!(k(one), k(one_e));
        assert_eq!(k(json!(-0.0)), k(json!(0)));
        assert_eq!(k(json!(-3.0)), k(json!(-3)));
        assert_eq!(k(json!(1e15)), k(json!(1_000_000_000_000_000_u64)));
        assert_ne!(k(json!(0.1)), k(json!(0.2)));
    }
}
