//! RFC 8785 JSON Canonicalization Scheme (JCS): the one byte string a JSON value hashes as,
//! whatever the key order, spacing or number spelling it arrived with.
//!
//! - Object members sorted by their names' UTF-16 code units (not UTF-8 bytes: the two orders
//!   differ between U+E000–U+FFFF and characters beyond U+FFFF).
//! - Strings with minimal escaping: `"` and `\`, `\b \t \n \f \r`, every other control character
//!   as `\u00xx` (lowercase hex); everything else, U+2028/U+2029 and DEL included, as itself.
//! - Numbers as ECMAScript's `Number.prototype.toString` prints them (`number.rs`). **Every
//!   number is an IEEE 754 double, as in JavaScript**: an integer beyond ±2^53 is first rounded
//!   to the nearest double (`9007199254740993` canonicalizes as `9007199254740992`, `u64::MAX`
//!   as `18446744073709552000`), so a receipt's digest agrees with one computed in JavaScript.
//!   Integers within ±2^53 are printed directly, which is the same text.
//! - No whitespace.
//!
//! Recursion follows the value's depth; values reaching here come from the gate's parser,
//! which bounds depth.
//!
//! Why home-made rather than a JCS crate (`serde_json_canonicalizer`, `serde_jcs`): the digest
//! must equal the one a JavaScript verifier computes, integers beyond 2^53 included (printed as
//! the nearest double, as `JSON.stringify` does), and it is hashed straight into SHA-256 with no
//! text kept, where those crates serialize into an `io::Write`. The two files are small, and
//! checked against RFC 8785's own vectors, ECMAScript's printing of edge doubles and the
//! `receipt_verify` fuzz target; a crate would have to pass the same checks to replace them.

use std::cmp::Ordering;

use serde_json::Value;

use super::number::write_number;
use super::sink::Sink;

/// RFC 8785 canonical JSON text of `v` (see the module doc).
pub fn canonical_json(v: &Value) -> String {
    let mut out = String::with_capacity(64);
    write_value(&mut out, v);
    out
}

/// Writes the canonical text of `v` to `out`.
pub(crate) fn write_value<S: Sink>(out: &mut S, v: &Value) {
    match v {
        Value::Null => out.put("null"),
        Value::Bool(true) => out.put("true"),
        Value::Bool(false) => out.put("false"),
        Value::Number(n) => write_number(out, n),
        Value::String(s) => write_string(out, s),
        Value::Array(items) => {
            out.put("[");
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.put(",");
                }
                write_value(out, item);
            }
            out.put("]");
        }
        Value::Object(map) => {
            let mut members: Vec<(&String, &Value)> = map.iter().collect();
            members.sort_unstable_by(|a, b| utf16_cmp(a.0, b.0));
            out.put("{");
            for (i, (k, v)) in members.into_iter().enumerate() {
                if i > 0 {
                    out.put(",");
                }
                write_string(out, k);
                out.put(":");
                write_value(out, v);
            }
            out.put("}");
        }
    }
}

/// Orders two strings by their UTF-16 code units, as RFC 8785 §3.2.3 sorts member names.
pub(crate) fn utf16_cmp(a: &str, b: &str) -> Ordering {
    // UTF-8 byte order is code point order, which agrees with UTF-16 order until one side holds
    // a supplementary character (lead byte 0xF0..) where the other holds U+E000–U+FFFF (0xEE/0xEF).
    let common = a.bytes().zip(b.bytes()).position(|(x, y)| x != y);
    match common {
        None => a.len().cmp(&b.len()),
        Some(i) if a.as_bytes()[i] < 0xEE && b.as_bytes()[i] < 0xEE => a.as_bytes()[i].cmp(&b.as_bytes()[i]),
        Some(_) => a.encode_utf16().cmp(b.encode_utf16()),
    }
}

/// Writes `s` as a JSON string with RFC 8785's minimal escaping.
pub(crate) fn write_string<S: Sink>(out: &mut S, s: &str) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    out.put("\"");
    let bytes = s.as_bytes();
    let mut start = 0;
    for (i, &b) in bytes.iter().enumerate() {
        let escape: &str = match b {
            b'"' => "\\\"",
            b'\\' => "\\\\",
            0x08 => "\\b",
            b'\t' => "\\t",
            b'\n' => "\\n",
            0x0c => "\\f",
            b'\r' => "\\r",
            0x00..=0x1f => "",
            _ => continue,
        };
        // Only ASCII bytes are escaped, so `start..i` and `i + 1..` fall on char boundaries.
        out.put(&s[start..i]);
        if escape.is_empty() {
            let u = [b'\\', b'u', b'0', b'0', HEX[usize::from(b >> 4)], HEX[usize::from(b & 15)]];
            out.put(std::str::from_utf8(&u).unwrap_or_default());
        } else {
            out.put(escape);
        }
        start = i + 1;
    }
    out.put(&s[start..]);
    out.put("\"");
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn parsed(text: &str) -> String {
        canonical_json(&serde_json::from_str(text).unwrap())
    }

    /// RFC 8785 §3.2.2.2 string example and §3.2.3 sorting example.
    #[test]
    fn rfc8785_strings_and_sorting() {
        let text = r#"{"string": "\u20ac$\u000F\u000aA'\u0042\u0022\u005c\\\"\/"}"#;
        assert_eq!(parsed(text), "{\"string\":\"€$\\u000f\\nA'B\\\"\\\\\\\\\\\"/\"}");
        let sort = r#"{
          "\u20ac": "Euro Sign", "\r": "Carriage Return", "\ufb33": "Hebrew Letter Dalet With Dagesh",
          "1": "One", "\ud83d\ude00": "Emoji: Grinning Face", "\u0080": "Control",
          "\u00f6": "Latin Small Letter O With Diaeresis"
        }"#;
        let values: Vec<String> = match serde_json::from_str::<Value>(&parsed(sort)).unwrap() {
            Value::Object(m) => m.values().map(|v| v.as_str().unwrap().to_owned()).collect(),
            _ => unreachable!(),
        };
        assert_eq!(
            values,
            [
                "Carriage Return",
                "One",
                "Control",
                "Latin Small Letter O With Diaeresis",
                "Euro Sign",
                "Emoji: Grinning Face",
                "Hebrew Letter Dalet With Dagesh"
            ]
        );
    }

    /// RFC 8785 §3.2.4: the example's canonical text.
    #[test]
    fn rfc8785_full_example() {
        let text = r#"{
          "numbers": [333333333.33333329, 1E30, 4.50, 2e-3, 0.000000000000000000000000001],
          "string": "\u20ac$\u000F\u000aA'\u0042\u0022\u005c\\\"\/",
          "literals": [null, true, false]
        }"#;
        let want = concat!(r#"{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],"#, r#""string":"€$\u000f\nA'B\"\\\\\"/"}"#);
        assert_eq!(parsed(text), want);
    }

    #[test]
    fn escapes_controls_only() {
        let v = json!({"k": "\u{0}\u{1f}\u{7f}\u{2028}\u{8}\u{c}<>&é😀"});
        assert_eq!(canonical_json(&v), "{\"k\":\"\\u0000\\u001f\u{7f}\u{2028}\\b\\f<>&é😀\"}");
    }

    #[test]
    fn utf16_order_differs_from_utf8_where_it_should() {
        assert_eq!(utf16_cmp("\u{ffff}", "\u{10000}"), Ordering::Greater);
        assert_eq!(utf16_cmp("\u{e000}", "😀"), Ordering::Greater);
        assert_eq!(utf16_cmp("\u{d7ff}", "😀"), Ordering::Less);
        assert_eq!(utf16_cmp("a", "ab"), Ordering::Less);
        assert_eq!(utf16_cmp("ab", "ab"), Ordering::Equal);
        assert_eq!(utf16_cmp("b", "a\u{ffff}"), Ordering::Greater);
    }

    #[test]
    fn nesting_and_empties() {
        let v = json!({"b": [], "a": {}, "c": [{"z": 1, "y": [null]}], "": ""});
        assert_eq!(canonical_json(&v), r#"{"":"","a":{},"b":[],"c":[{"y":[null],"z":1}]}"#);
    }
}
