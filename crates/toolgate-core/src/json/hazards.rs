//! Arguments that parse as valid JSON yet would reach a tool as something other than what the
//! gate checked:
//!
//! - **Case twins**: two keys of one object equal under Unicode simple case folding
//!   (`{"path": "reports/q3.csv", "PATH": "../../etc/passwd"}`). Runtimes that bind JSON
//!   case-insensitively (Go's `encoding/json`, .NET's `System.Text.Json` with its common option,
//!   many ORMs) may take the twin the gate never looked at. Refused unless a tool opts out
//!   (`allowCaseTwinKeys`).
//! - **Unsafe integers**: an integer literal beyond ±(2^53 − 1). The core compares it exactly,
//!   but a JavaScript tool (and `JSON.parse` in the host) receives it rounded, so a deny on one
//!   id could let its neighbour through. Always refused.
//!
//! Both are found in one walk, after the parse, because the case-twin rule depends on the tool.

use serde_json::{Map, Number, Value};

use super::parse::ParseError;
pub use super::parse::MAX_SAFE_INTEGER;
use super::pointer::{to_display, Seg};

/// Whether `n` is an integer literal outside ±[`MAX_SAFE_INTEGER`] (floats such as `1e20` are
/// the same double everywhere and are not unsafe).
pub fn unsafe_integer(n: &Number) -> bool {
    if let Some(u) = n.as_u64() {
        return u > MAX_SAFE_INTEGER;
    }
    n.as_i64().is_some_and(|i| i.unsigned_abs() > MAX_SAFE_INTEGER)
}

/// The first hazard in `value` (depth first, in key order), as the parse error that refuses it.
/// `integers`: look for unsafe integers (the parser said one may be there); `twins`: look for
/// case twins. Iterative: no recursion on untrusted depth.
pub fn find(value: &Value, integers: bool, twins: bool) -> Option<ParseError> {
    if (!integers && !twins) || !any(value, integers, twins) {
        return None;
    }
    locate(value, integers, twins)
}

/// Whether some hazard is in `value`: the hot path, allocation-free but for its stack.
fn any(value: &Value, integers: bool, twins: bool) -> bool {
    let mut stack: Vec<&Value> = Vec::new();
    let mut v = value;
    loop {
        match v {
            Value::Number(n) if integers && unsafe_integer(n) => return true,
            Value::Object(m) => {
                if twins && case_twins(m).is_some() {
                    return true;
                }
                stack.extend(m.values().filter(|x| matches!(x, Value::Object(_) | Value::Array(_)) || (integers && x.is_number())));
            }
            Value::Array(a) => stack.extend(a.iter().filter(|x| matches!(x, Value::Object(_) | Value::Array(_)) || (integers && x.is_number()))),
            _ => {}
        }
        match stack.pop() {
            Some(next) => v = next,
            None => return false,
        }
    }
}

/// The first hazard with its path (only run once [`any`] found one).
fn locate(value: &Value, integers: bool, twins: bool) -> Option<ParseError> {
    let mut stack: Vec<(&Value, Vec<Seg>)> = vec![(value, Vec::new())];
    while let Some((v, path)) = stack.pop() {
        match v {
            Value::Number(n) if integers && unsafe_integer(n) => {
                return Some(ParseError::UnsafeInteger { value: n.to_string(), at: to_display(&path) });
            }
            Value::Object(m) => {
                if twins {
                    if let Some((a, b)) = case_twins(m) {
                        return Some(ParseError::CaseTwinKeys { first: a.to_owned(), second: b.to_owned(), at: to_display(&path) });
                    }
                }
                for (k, x) in m.iter().rev() {
                    if matches!(x, Value::Object(_) | Value::Array(_)) || (integers && x.is_number()) {
                        let mut p = path.clone();
                        p.push(Seg::Key(k.clone()));
                        stack.push((x, p));
                    }
                }
            }
            Value::Array(a) => {
                for (i, x) in a.iter().enumerate().rev() {
                    if matches!(x, Value::Object(_) | Value::Array(_)) || (integers && x.is_number()) {
                        let mut p = path.clone();
                        p.push(Seg::Index(i));
                        stack.push((x, p));
                    }
                }
            }
            _ => {}
        }
    }
    None
}

/// Two keys of `m` equal under simple case folding, in key order, if any. Keys that are ASCII
/// with no upper-case letter can only twin a key that has one, so the common all-lower-case
/// object costs one byte scan.
pub(crate) fn case_twins(m: &Map<String, Value>) -> Option<(&str, &str)> {
    if m.len() < 2 || m.keys().all(|k| k.bytes().all(|b| b.is_ascii() && !b.is_ascii_uppercase())) {
        return None;
    }
    let keys: Vec<&str> = m.keys().map(String::as_str).collect();
    if keys.len() <= 32 {
        for (i, a) in keys.iter().enumerate() {
            for b in &keys[i + 1..] {
                if fold_eq(a, b) {
                    return Some((a, b));
                }
            }
        }
        return None;
    }
    let mut seen: std::collections::HashMap<String, &str> = std::collections::HashMap::with_capacity(keys.len());
    for k in keys {
        if let Some(first) = seen.insert(fold(k), k) {
            return Some((first, k));
        }
    }
    None
}

/// Simple case folding of one character: upper then lower, so that `ſ` (long s) folds to `s` and
/// `K` (Kelvin sign) to `k`, as Go's `strings.EqualFold` treats them. Multi-character expansions
/// (`ß` → `ss`) fold further than the runtimes do: over-strict, never lax.
fn fold_char(c: char, out: &mut String) {
    for u in c.to_uppercase() {
        out.extend(u.to_lowercase());
    }
}

/// `s` under simple case folding (see [`fold_char`]): how case-insensitive resources compare.
pub fn fold_case(s: &str) -> String {
    fold(s)
}

fn fold(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        fold_char(c, &mut out);
    }
    out
}

fn fold_eq(a: &str, b: &str) -> bool {
    if a.is_ascii() && b.is_ascii() {
        return a.eq_ignore_ascii_case(b);
    }
    fold(a) == fold(b)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn case_twins_are_found_at_any_depth() {
        assert!(find(&json!({"path": "a", "PATH": "b"}), false, true).is_some());
        assert!(find(&json!({"x": [{"owner": 1, "Owner": 2}]}), false, true).unwrap().to_string().contains("x[0]"));
        assert!(find(&json!({"k": 1, "\u{212A}": 2}), false, true).is_some(), "Kelvin sign folds to k");
        assert!(find(&json!({"s": 1, "\u{17F}": 2}), false, true).is_some(), "long s folds to s");
        assert!(find(&json!({"path": "a", "Path2": "b", "other": 1}), false, true).is_none());
        assert!(find(&json!({"path": "a", "PATH": "b"}), false, false).is_none());
        let many: Map<String, Value> = (0..40).map(|i| (format!("k{i}"), json!(i))).chain([("K7".to_string(), json!(0))]).collect();
        assert!(find(&Value::Object(many), false, true).is_some());
    }

    #[test]
    fn unsafe_integers_are_found_and_floats_are_not() {
        assert!(find(&json!({"id": 9_007_199_254_740_993u64}), true, false).is_some());
        assert!(find(&json!({"id": 9_007_199_254_740_992u64}), true, false).is_some());
        assert!(find(&json!({"id": -9_007_199_254_740_992i64}), true, false).is_some());
        assert!(find(&json!({"id": 9_007_199_254_740_991u64}), true, false).is_none());
        assert!(find(&json!({"id": 1e20}), true, false).is_none());
        assert!(find(&json!({"a": [[{"b": u64::MAX}]]}), true, false).unwrap().to_string().contains("a[0][0].b"));
    }
}
