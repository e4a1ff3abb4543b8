//! ECMAScript number formatting for RFC 8785 (§3.2.2.3): the text `JSON.stringify` gives a
//! number, so a digest computed here matches one computed in JavaScript.
//!
//! Every number is treated as an IEEE 754 double, as JavaScript does: an integer beyond ±2^53
//! is rounded to the nearest double first (`9007199254740993` → `9007199254740992`,
//! `u64::MAX` → `18446744073709552000`).

use std::fmt::Write as _;

use serde_json::Number;

use super::sink::Sink;

/// Largest integer magnitude every double represents exactly (2^53).
const EXACT: u64 = 1 << 53;

/// Writes a JSON number as ECMAScript prints the double it denotes.
pub(super) fn write_number<S: Sink>(out: &mut S, n: &Number) {
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
fn write_f64(buf: &mut Buf, x: f64) {
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
struct Buf {
    bytes: [u8; 40],
    len: usize,
}

impl Buf {
    const fn new() -> Buf {
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

    fn as_str(&self) -> &str {
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
    use crate::receipt::canonical_json;

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
        assert_eq!(parsed("[1E30, 4.50, 2e-3, 0.000001, 1e-7, -0, -0.0, 1.0, 10, -7]"), "[1e+30,4.5,0.002,0.000001,1e-7,0,0,1,10,-7]");
        assert_eq!(parsed("[9007199254740992, 9007199254740993, -9007199254740993]"), "[9007199254740992,9007199254740992,-9007199254740992]");
        assert_eq!(parsed("18446744073709551615"), "18446744073709552000");
        assert_eq!(parsed("-9223372036854775808"), "-9223372036854776000");
        assert_eq!(parsed("100000000000000000000000"), "1e+23");
    }
}
