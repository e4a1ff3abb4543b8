//! RFC 8785 JSON Canonicalization Scheme (JCS): the one byte string a JSON value hashes as,
//! whatever the key order, spacing or number spelling it arrived with.
//!
//! - Object members sorted by their names' UTF-16 code units (not UTF-8 bytes: the two orders
//!   differ between U+E000–U+FFFF and characters beyond U+FFFF).
//! - Strings with minimal escaping: `"` and `\`, `\b \t \n \f \r`, every other control character
//!   as `\u00xx` (lowercase hex); everything else, U+2028/U+2029 and DEL included, as itself.
//! - Numbers as ECMAScript's `Number.prototype.toString` prints them. **Every number is an IEEE
//!   754 double, as in JavaScript**: an integer beyond ±2^53 is first rounded to the nearest
//!   double (`9007199254740993` canonicalizes as `9007199254740992`, `u64::MAX` as
//!   `18446744073709552000`), so a receipt's digest agrees with one computed in JavaScript.
//!   Integers within ±2^53 are printed directly, which is the same text.
//! - No whitespace.
//!
//! Recursion follows the value's depth; values reaching here come from the gate's parser,
//! which bounds depth.

use std::cmp::Ordering;
use std::fmt::Write as _;

use serde_json::{Number, Value};

/// Where canonical text goes: a `String`, or straight into a hash so no text is kept.
pub(crate) trait Sink {
    /// Appends `s`.
    fn put(&mut self, s: &str);
}

impl Sink for String {
    fn put(&mut self, s: &str) {
        self.push_str(s);
    }
}

impl Sink for sha2::Sha256 {
    fn put(&mut self, s: &str) {
        sha2::Digest::update(self, s.as_bytes());
    }
}

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

/// Largest integer magnitude every double represents exactly (2^53).
const EXACT: u64 = 1 << 53;

/// Writes a JSON number as ECMAScript prints the double it denotes.
fn write_number<S: Sink>(out: &mut S, n: &Number) {
    let mut buf = Buf::new();
    if let Some(u) = n.as_u64().filter(|&u| u <= EXACT) {
        let _ = write!(buf, "{u}");
    } else if let Some(i) = n.as_i64().filter(|i| i.unsigned_abs() <= EXACT) {
        let _ = write!(buf, "{i}");
    } else {
        // Outside ±2^53, or not an integer: the nearest double, as `JSON.parse` would read it.
        write_f64(&mut buf, n.as_f64().unwrap_or(f64::NAN));
    }
    out.put(buf.as_str());
}

/// ECMAScript `Number::toString(x)` (ECMA-262 §6.1.6.1.20) for a double; non-finite values,
/// which JSON cannot hold, print as `null` like `JSON.stringify` does.
pub(crate) fn write_f64(buf: &mut Buf, x: f64) {
    if !x.is_finite() {
        buf.push("null");
        return;
    }
    if x == 0.0 {
        buf.push("0"); // -0 too
        return;
    }
    if x < 0.0 {
        buf.push("-");
    }
    // Rust's `{:e}` gives the shortest digits that round-trip (the `k` of the ES algorithm):
    // "d.ddde±x". Where two k-digit candidates round-trip, ES takes the one closest to x (ties:
    // even); Rust's shortest mode may take the other (0x43143ff3c1cb0959 is 1424953923781206.25:
    // ES says ….2, `{:e}` ….3). Rust's exact mode rounds x correctly, ties to even, so the
    // k-digit exact form is ES's choice whenever it still round-trips.
    let x = x.abs();
    let mut sci = Buf::new();
    let _ = write!(sci, "{x:e}");
    let k = sci.as_str().bytes().take_while(|&b| b != b'e').filter(u8::is_ascii_digit).count();
    let mut exact = Buf::new();
    let _ = write!(exact, "{x:.*e}", k.saturating_sub(1));
    if exact.as_str() != sci.as_str() && exact.as_str().parse::<f64>() == Ok(x) {
        sci = exact;
    }
    let text = sci.as_str();
    let (mantissa, exp) = text.split_once('e').unwrap_or((text, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let mut digits = Buf::new();
    mantissa.bytes().filter(u8::is_ascii_digit).for_each(|d| digits.push_byte(d));
    let digits = digits.as_str();
    let k = digits.len() as i32;
    let n = exp + 1; // x = 0.digits × 10^n
    if k <= n && n <= 21 {
        buf.push(digits);
        (0..n - k).for_each(|_| buf.push("0"));
    } else if 0 < n && n <= 21 {
        buf.push(&digits[..n as usize]);
        buf.push(".");
        buf.push(&digits[n as usize..]);
    } else if -6 < n && n <= 0 {
        buf.push("0.");
        (0..-n).for_each(|_| buf.push("0"));
        buf.push(digits);
    } else {
        buf.push(&digits[..1]);
        if k > 1 {
            buf.push(".");
            buf.push(&digits[1..]);
        }
        buf.push(if n - 1 < 0 { "e-" } else { "e+" });
        let _ = write!(buf, "{}", (n - 1).unsigned_abs());
    }
}

/// A stack buffer for one number's text (the longest double in ES form is 25 bytes; every
/// push stays within ASCII). Writes past the end are dropped, which cannot happen for numbers.
pub(crate) struct Buf {
    bytes: [u8; 40],
    len: usize,
}

impl Buf {
    pub(crate) const fn new() -> Buf {
        Buf { bytes: [0; 40], len: 0 }
    }

    fn push(&mut self, s: &str) {
        s.bytes().for_each(|b| self.push_byte(b));
    }

    fn push_byte(&mut self, b: u8) {
        if let Some(slot) = self.bytes.get_mut(self.len) {
            *slot = b;
            self.len += 1;
        }
    }

    pub(crate) fn as_str(&self) -> &str {
        std::str::from_utf8(&self.bytes[..self.len]).unwrap_or_default()
    }
}

impl std::fmt::Write for Buf {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        self.push(s);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn es(x: f64) -> String {
        let mut b = Buf::new();
        write_f64(&mut b, x);
        b.as_str().to_owned()
    }

    fn parsed(text: &str) -> String {
        canonical_json(&serde_json::from_str(text).unwrap())
    }

    /// RFC 8785 Appendix B: IEEE 754 bit patterns and their expected ES text.
    #[test]
    fn rfc8785_appendix_b_numbers() {
        let cases: [(u64, &str); 27] = [
            (0x0000000000000000, "0"),
            (0x8000000000000000, "0"),
            (0x0000000000000001, "5e-324"),
            (0x8000000000000001, "-5e-324"),
            (0x7fefffffffffffff, "1.7976931348623157e+308"),
            (0xffefffffffffffff, "-1.7976931348623157e+308"),
            (0x4340000000000000, "9007199254740992"),
            (0xc340000000000000, "-9007199254740992"),
            (0x4430000000000000, "295147905179352830000"),
            (0x7fffffffffffffff, "null"), // NaN: JSON.stringify's answer (the RFC lists it as an error)
            (0x7ff0000000000000, "null"), // Infinity: likewise
            (0x44b52d02c7e14af5, "9.999999999999997e+22"),
            (0x44b52d02c7e14af6, "1e+23"),
            (0x44b52d02c7e14af7, "1.0000000000000001e+23"),
            (0x444b1ae4d6e2ef4e, "999999999999999700000"),
            (0x444b1ae4d6e2ef4f, "999999999999999900000"),
            (0x444b1ae4d6e2ef50, "1e+21"),
            (0x3eb0c6f7a0b5ed8c, "9.999999999999997e-7"),
            (0x3eb0c6f7a0b5ed8d, "0.000001"),
            (0x41b3de4355555553, "333333333.3333332"),
            (0x41b3de4355555554, "333333333.33333325"),
            (0x41b3de4355555555, "333333333.3333333"),
            (0x41b3de4355555556, "333333333.3333334"),
            (0x41b3de4355555557, "333333333.33333343"),
            (0xbecbf647612f3696, "-0.0000033333333333333333"),
            (0x43143ff3c1cb0959, "1424953923781206.2"),
            (0x3ff0000000000000, "1"),
        ];
        for (bits, want) in cases {
            assert_eq!(es(f64::from_bits(bits)), want, "{bits:#018x}");
        }
    }

    #[test]
    fn es_thresholds() {
        assert_eq!(es(1e30), "1e+30");
        assert_eq!(es(1e21), "1e+21");
        assert_eq!(es(1e20), "100000000000000000000");
        assert_eq!(es(4.50), "4.5");
        assert_eq!(es(2e-3), "0.002");
        assert_eq!(es(0.000001), "0.000001");
        assert_eq!(es(1e-7), "1e-7");
        assert_eq!(es(1.5e-7), "1.5e-7");
        assert_eq!(es(-0.0), "0");
        assert_eq!(es(123.456), "123.456");
        assert_eq!(es(-1.25e-10), "-1.25e-10");
    }

    #[test]
    fn numbers_from_json_text() {
        assert_eq!(parsed("333333333.33333329"), "333333333.3333333");
        assert_eq!(
            parsed("[1E30, 4.50, 2e-3, 0.000001, 1e-7, -0, -0.0, 1.0, 10, -7]"),
            "[1e+30,4.5,0.002,0.000001,1e-7,0,0,1,10,-7]"
        );
        assert_eq!(
            parsed("[9007199254740992, 9007199254740993, -9007199254740993]"),
            "[9007199254740992,9007199254740992,-9007199254740992]"
        );
        assert_eq!(parsed("18446744073709551615"), "18446744073709552000");
        assert_eq!(parsed("-9223372036854775808"), "-9223372036854776000");
        assert_eq!(parsed("100000000000000000000000"), "1e+23");
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
        let want = concat!(
            r#"{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],"#,
            r#""string":"€$\u000f\nA'B\"\\\\\"/"}"#
        );
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
