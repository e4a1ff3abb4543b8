//! Safe repair of arguments against a compiled schema (docs/turns.md "What gets repaired").
//!
//! Guarantees: a value is only type-coerced where it fails its schema's `type` as it is;
//! conversions are lossless (`3.7` never becomes `3`, `"05"` never becomes `5`); an enum is only
//! repaired to a single unambiguous value; nothing required is ever invented (only declared
//! `default`s are injected). Every change is reported as a flag. Whether the repaired arguments
//! are acceptable is decided afterwards by the authoritative validator, not here.

use serde_json::{Map, Number, Value};

use super::compile::{Additional, Branch, CompiledSchema, EnumInfo, Node, NodeId};
use super::flag::{FlagCode, PendingFlag, PendingProblem};
use super::types::TypeSet;
use crate::json::parse::{beyond_i64, parse_str, Limits, ParseError};
use crate::json::pointer::Seg;

/// Most `$ref` hops followed at one value before repair gives up on that value.
const MAX_REF_HOPS: u32 = 32;

/// The repair walk over one arguments value.
pub(crate) struct Repair<'s> {
    schema: &'s CompiledSchema,
    limits: &'s Limits,
    /// Strict mode (destructive tools): change nothing, only report problems.
    strict: bool,
    pub flags: Vec<PendingFlag>,
    pub problems: Vec<PendingProblem>,
}

impl<'s> Repair<'s> {
    /// A walk over `schema` whose embedded-JSON parses obey `limits`; `strict` changes nothing.
    pub fn new(schema: &'s CompiledSchema, limits: &'s Limits, strict: bool) -> Self {
        Repair { schema, limits, strict, flags: Vec::new(), problems: Vec::new() }
    }

    /// Repairs `value` (the whole arguments object) in place.
    pub fn run(&mut self, value: &mut Value) {
        self.walk(self.schema.root_id(), value, 1, 0);
    }

    fn flag(&mut self, code: FlagCode, from: Option<Value>, to: Option<Value>) {
        self.flags.push(PendingFlag { code, segs_rev: Vec::new(), from, to });
    }

    fn problem(&mut self, text: String) {
        self.problems.push(PendingProblem { segs_rev: Vec::new(), text });
    }

    /// Appends `seg` to every flag and problem recorded since the marks.
    fn prefix(&mut self, marks: (usize, usize), seg: impl Fn() -> Seg) {
        for f in &mut self.flags[marks.0..] {
            f.segs_rev.push(seg());
        }
        for p in &mut self.problems[marks.1..] {
            p.segs_rev.push(seg());
        }
    }

    fn marks(&self) -> (usize, usize) {
        (self.flags.len(), self.problems.len())
    }

    fn rollback(&mut self, marks: (usize, usize)) {
        self.flags.truncate(marks.0);
        self.problems.truncate(marks.1);
    }

    fn walk(&mut self, id: NodeId, v: &mut Value, depth: usize, hops: u32) {
        let schema = self.schema;
        let node: &Node = schema.node(id);
        if let Some(r) = node.reference {
            if hops < MAX_REF_HOPS {
                self.walk(r, v, depth, hops + 1);
            }
        }
        for &sub in &node.all_of {
            if hops < MAX_REF_HOPS {
                self.walk(sub, v, depth, hops + 1);
            }
        }
        if !node.any_of.is_empty() && hops < MAX_REF_HOPS && !self.strict {
            self.choose(&node.any_of, v, depth, hops);
        }
        if !node.one_of.is_empty() && hops < MAX_REF_HOPS && !self.strict {
            self.choose(&node.one_of, v, depth, hops);
        }
        if let Some(types) = node.types {
            if !types.admits(v) && !self.strict {
                self.coerce_type(types, v, depth);
            }
            if types.has(TypeSet::INTEGER) && !types.has(TypeSet::NUMBER) && integer_out_of_range(v) {
                self.problem("integer out of range (it must fit in 64 bits).".into());
            }
        }
        if let (Some(e), false) = (&node.enum_info, self.strict) {
            self.fix_enum(e, v);
        }
        match v {
            Value::Object(map) => self.walk_object(node, map, depth),
            Value::Array(items) => self.walk_array(node, items, depth),
            _ => {}
        }
    }

    /// `anyOf`/`oneOf`: a branch that validates untouched wins (its defaults still apply when
    /// the result stays valid); else the first branch, in order, that validates after repair.
    fn choose(&mut self, branches: &[Branch], v: &mut Value, depth: usize, hops: u32) {
        if let Some(b) = branches.iter().find(|b| b.validator.is_valid(v)) {
            let marks = self.marks();
            let mut trial = v.clone();
            self.walk(b.node, &mut trial, depth, hops + 1);
            if self.marks() != marks {
                if b.validator.is_valid(&trial) {
                    *v = trial;
                } else {
                    self.rollback(marks);
                }
            }
            return;
        }
        for b in branches {
            let marks = self.marks();
            let mut trial = v.clone();
            self.walk(b.node, &mut trial, depth, hops + 1);
            if self.marks().0 != marks.0 && self.problems.len() == marks.1 && b.validator.is_valid(&trial) {
                *v = trial;
                return;
            }
            self.rollback(marks);
        }
    }

    fn coerce_type(&mut self, types: TypeSet, v: &mut Value, depth: usize) {
        let repaired = match v {
            Value::String(s) => {
                let unpacked = if types.has(TypeSet::OBJECT) || types.has(TypeSet::ARRAY) { self.unpack(types, s, depth) } else { None };
                if let Some(parsed) = unpacked {
                    Some((FlagCode::UnpackedStringifiedJson, parsed))
                } else if let Some(n) = types.has(TypeSet::INTEGER).then(|| clean_integer(s)).flatten() {
                    Some((FlagCode::StringToInteger, Value::Number(n.into())))
                } else if let Some(n) = types.has(TypeSet::NUMBER).then(|| json_number(s)).flatten() {
                    Some((FlagCode::StringToFloat, Value::Number(n)))
                } else if let Some(b) = types.has(TypeSet::BOOLEAN).then(|| boolean(s)).flatten() {
                    Some((FlagCode::StringToBoolean, Value::Bool(b)))
                } else if types.has(TypeSet::ARRAY) {
                    Some((FlagCode::WrappedScalarInArray, Value::Array(vec![v.clone()])))
                } else {
                    None
                }
            }
            Value::Number(_) | Value::Bool(_) => {
                if types.has(TypeSet::STRING) {
                    let text = match v {
                        Value::Number(n) => n.to_string(),
                        _ => v.to_string(),
                    };
                    Some((FlagCode::PrimitiveToString, Value::String(text)))
                } else if types.has(TypeSet::ARRAY) {
                    Some((FlagCode::WrappedScalarInArray, Value::Array(vec![v.clone()])))
                } else {
                    None
                }
            }
            _ => None,
        };
        if let Some((code, new)) = repaired {
            let old = std::mem::replace(v, new);
            let to = match code {
                FlagCode::UnpackedStringifiedJson => None,
                _ => Some(v.clone()),
            };
            self.flag(code, Some(old), to);
        }
    }

    /// Parses a string that holds JSON of an expected container type, under the same strict
    /// rules and the depth left.
    fn unpack(&mut self, types: TypeSet, s: &str, depth: usize) -> Option<Value> {
        let first = s.trim_start().as_bytes().first().copied();
        if !matches!(first, Some(b'{') | Some(b'[')) {
            return None;
        }
        let left = self.limits.max_depth.checked_sub(depth)?;
        if left == 0 {
            return None;
        }
        let limits = Limits { max_depth: left, ..*self.limits };
        match parse_str(s, &limits) {
            Ok(parsed) if types.admits(&parsed) => Some(parsed),
            Ok(_) | Err(ParseError::Syntax { .. }) => None,
            Err(e) => {
                self.problem(format!("holds JSON text that cannot be accepted: {e}."));
                None
            }
        }
    }

    fn fix_enum(&mut self, e: &EnumInfo, v: &mut Value) {
        if e.values.iter().any(|x| json_eq(x, v)) {
            return;
        }
        let Value::String(s) = v else { return };
        let lower = s.to_lowercase();
        if !e.case_ambiguous {
            if let Some((_, i)) = e.lowered.iter().find(|(l, _)| *l == lower) {
                let new = e.values[*i].clone();
                let old = std::mem::replace(v, new.clone());
                self.flag(FlagCode::EnumCaseNormalized, Some(old), Some(new));
                return;
            }
        }
        if e.lowered.iter().any(|(l, _)| *l == lower) {
            return; // differs from several values only by case: never guess
        }
        // one edit apart means lengths (in characters) at most one apart: checked first, so a long
        // argument costs one count, never a full edit distance per value (quadratic in its length)
        let near = |a: &str, n: usize| a.chars().count().abs_diff(n) <= 1;
        let (n, n_lower) = (s.chars().count(), lower.chars().count());
        let mut hit: Option<usize> = None;
        for (l, i) in &e.lowered {
            let close = if e.case_ambiguous {
                e.values[*i].as_str().is_some_and(|orig| near(orig, n) && strsim::levenshtein(orig, s) <= 1)
            } else {
                near(l, n_lower) && strsim::levenshtein(l, &lower) <= 1
            };
            if close {
                if hit.is_some() {
                    return; // ambiguous: never guess
                }
                hit = Some(*i);
            }
        }
        if let Some(i) = hit {
            let new = e.values[i].clone();
            let old = std::mem::replace(v, new.clone());
            self.flag(FlagCode::EnumFuzzyMatched, Some(old), Some(new));
        }
    }

    fn walk_object(&mut self, node: &Node, map: &mut Map<String, Value>, depth: usize) {
        if !self.strict && node.additional == Additional::Forbid && map.keys().any(|k| !known(node, k)) {
            let unknown: Vec<String> = map.keys().filter(|k| !known(node, k)).cloned().collect();
            for k in unknown {
                let old = map.shift_remove(&k);
                let marks = self.marks();
                self.flag(FlagCode::PrunedUnknownProperty, old, None);
                self.prefix(marks, || Seg::Key(k.clone()));
            }
        }
        for (k, child) in map.iter_mut() {
            let marks = self.marks();
            if let Some(&id) = node.props.get(k) {
                self.walk(id, child, depth + 1, 0);
            }
            for (re, id) in &node.pattern_props {
                if re.is_match(k) {
                    self.walk(*id, child, depth + 1, 0);
                }
            }
            if let Additional::Schema(id) = node.additional {
                if !node.props.contains_key(k) && !node.pattern_props.iter().any(|(re, _)| re.is_match(k)) {
                    self.walk(id, child, depth + 1, 0);
                }
            }
            if self.marks() != marks {
                self.prefix(marks, || Seg::Key(k.clone()));
            }
        }
        for (k, d) in &node.defaults {
            if !self.strict && !map.contains_key(k) {
                map.insert(k.clone(), d.clone());
                let marks = self.marks();
                self.flag(FlagCode::InjectedDefaultValue, None, Some(d.clone()));
                self.prefix(marks, || Seg::Key(k.clone()));
            }
        }
    }

    fn walk_array(&mut self, node: &Node, items: &mut [Value], depth: usize) {
        if node.prefix_items.is_empty() && node.items.is_none() {
            return;
        }
        for (i, item) in items.iter_mut().enumerate() {
            let Some(&id) = node.prefix_items.get(i).or(node.items.as_ref()) else { continue };
            let marks = self.marks();
            self.walk(id, item, depth + 1, 0);
            if self.marks() != marks {
                self.prefix(marks, || Seg::Index(i));
            }
        }
    }
}

fn known(node: &Node, key: &str) -> bool {
    node.props.contains_key(key) || node.pattern_props.iter().any(|(re, _)| re.is_match(key))
}

/// JSON equality with numbers compared by value (`1` equals `1.0`), as JSON Schema does.
fn json_eq(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => match (x.as_i64(), y.as_i64()) {
            (Some(p), Some(q)) => p == q,
            _ => x.as_f64() == y.as_f64(),
        },
        _ => a == b,
    }
}

/// An integer literal with optional `-`, digits, no leading zeros, no `+`, no exponent,
/// that fits in 64 bits.
fn clean_integer(s: &str) -> Option<i64> {
    let digits = s.strip_prefix('-').unwrap_or(s);
    let b = digits.as_bytes();
    if b.is_empty() || !b.iter().all(u8::is_ascii_digit) || (b.len() > 1 && b[0] == b'0') {
        return None;
    }
    s.parse().ok()
}

/// Moves `i` past the ASCII digits at `b[i..]`; how many there were.
fn digits(b: &[u8], i: &mut usize) -> usize {
    let start = *i;
    while *i < b.len() && b[*i].is_ascii_digit() {
        *i += 1;
    }
    *i - start
}

/// A string that is exactly a JSON number literal with a finite value. Integral values that
/// fit in 64 bits come back as integers (`"1e3"` → `1000`).
fn json_number(s: &str) -> Option<Number> {
    let b = s.as_bytes();
    let mut i = usize::from(b.first() == Some(&b'-'));
    let int_start = i;
    let int_len = digits(b, &mut i);
    if int_len == 0 || (int_len > 1 && b[int_start] == b'0') {
        return None;
    }
    if i < b.len() && b[i] == b'.' {
        i += 1;
        if digits(b, &mut i) == 0 {
            return None;
        }
    }
    if i < b.len() && (b[i] == b'e' || b[i] == b'E') {
        i += 1;
        if i < b.len() && (b[i] == b'+' || b[i] == b'-') {
            i += 1;
        }
        if digits(b, &mut i) == 0 {
            return None;
        }
    }
    if i != b.len() {
        return None;
    }
    if let Ok(n) = s.parse::<i64>() {
        return Some(n.into());
    }
    let f: f64 = s.parse().ok()?;
    if !f.is_finite() {
        return None;
    }
    if f.fract() == 0.0 && f.abs() < 9_007_199_254_740_992.0 {
        return Some((f as i64).into());
    }
    Number::from_f64(f)
}

fn boolean(s: &str) -> Option<bool> {
    if s.eq_ignore_ascii_case("true") {
        Some(true)
    } else if s.eq_ignore_ascii_case("false") {
        Some(false)
    } else {
        None
    }
}

/// A number that claims to be an integer but lies beyond i64.
fn integer_out_of_range(v: &Value) -> bool {
    match v {
        Value::Number(n) if n.is_u64() => n.as_u64().is_some_and(|u| u > i64::MAX as u64),
        Value::Number(n) if n.is_f64() => n.as_f64().is_some_and(beyond_i64),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integer_literals_must_be_clean() {
        assert_eq!(clean_integer("42"), Some(42));
        assert_eq!(clean_integer("-7"), Some(-7));
        assert_eq!(clean_integer("0"), Some(0));
        for bad in ["+5", "05", "1e3", "4.0", "", "-", " 4", "4 ", "99999999999999999999", "٣"] {
            assert_eq!(clean_integer(bad), None, "{bad}");
        }
    }

    #[test]
    fn number_literals_follow_json() {
        assert_eq!(json_number("2.5").and_then(|n| n.as_f64()), Some(2.5));
        assert_eq!(json_number("-2").and_then(|n| n.as_i64()), Some(-2));
        assert_eq!(json_number("1e3").and_then(|n| n.as_i64()), Some(1000));
        assert_eq!(json_number("2.5E-1").and_then(|n| n.as_f64()), Some(0.25));
        for bad in ["1e400", ".5", "5.", "+1", "01", "1e", "0x10", "NaN", "Infinity", "1_000", " 1"] {
            assert!(json_number(bad).is_none(), "{bad}");
        }
    }

    #[test]
    fn booleans_are_only_true_and_false() {
        assert_eq!(boolean("False"), Some(false));
        assert_eq!(boolean("TRUE"), Some(true));
        for bad in ["1", "yes", "0", "no", "t", ""] {
            assert_eq!(boolean(bad), None);
        }
    }

    #[test]
    fn out_of_range_integers_are_seen() {
        assert!(integer_out_of_range(&serde_json::json!(18446744073709551615u64)));
        assert!(integer_out_of_range(&serde_json::json!(1e20)));
        assert!(!integer_out_of_range(&serde_json::json!(9007199254740993i64)));
        assert!(!integer_out_of_range(&serde_json::json!(1.5)));
    }
}
