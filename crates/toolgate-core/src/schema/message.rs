//! Model-readable rejection messages: one line per problem, written for the model's next turn.
//! Deterministic, bounded in length, with no schema paths or validator jargon.

use jsonschema::error::{TypeKind, ValidationErrorKind};
use jsonschema::ValidationError;
use serde_json::Value;

use super::types::{type_name, TypeSet};
use crate::json::pointer::{to_display, Seg};

/// Most problem lines in one message; the rest are counted.
const MAX_LINES: usize = 12;
/// Longest rendering of a received value.
const MAX_VALUE_CHARS: usize = 48;
/// Most enum values listed.
const MAX_OPTIONS: usize = 12;

/// One problem: where (display path) and what.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    /// Where, for a model: `filters.status`, `items[2]`, `(arguments)`.
    pub path: String,
    /// What, as a sentence ending in a full stop.
    pub text: String,
}

/// Renders a value compactly, eliding long ones: `"ten"`, `[1,2,…]`.
pub fn show(v: &Value) -> String {
    let s = serde_json::to_string(v).unwrap_or_default();
    elide(&s, MAX_VALUE_CHARS)
}

fn elide(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        return s.to_string();
    }
    let mut out: String = s.chars().take(max - 1).collect();
    out.push('…');
    out
}

/// Splits a JSON Pointer into segments, using `root` to tell array indexes from keys.
pub fn segs_from_pointer(pointer: &str, root: &Value) -> Vec<Seg> {
    let mut segs = Vec::new();
    let mut cur = Some(root);
    for raw in pointer.split('/').skip(1) {
        let key = if raw.contains('~') { raw.replace("~1", "/").replace("~0", "~") } else { raw.to_owned() };
        match cur {
            Some(Value::Array(a)) => match key.parse::<usize>() {
                Ok(i) => {
                    cur = a.get(i);
                    segs.push(Seg::Index(i));
                }
                Err(_) => {
                    cur = None;
                    segs.push(Seg::Key(key));
                }
            },
            Some(Value::Object(o)) => {
                cur = o.get(&key);
                segs.push(Seg::Key(key));
            }
            _ => {
                cur = None;
                segs.push(Seg::Key(key));
            }
        }
    }
    segs
}

/// Turns one validation error into problems (a `required` error names the missing field as
/// the path; unknown fields get a line each).
pub fn problems_of(err: &ValidationError<'_>, root: &Value) -> Vec<Problem> {
    let segs = segs_from_pointer(&err.instance_path().to_string(), root);
    let at = |extra: Option<Seg>| {
        let mut s = segs.clone();
        s.extend(extra);
        to_display(&s)
    };
    let got = || show(err.instance());
    let one = |text: String| vec![Problem { path: at(None), text }];
    match err.kind() {
        ValidationErrorKind::Required { property } => {
            let name = property.as_str().map(str::to_owned).unwrap_or_else(|| property.to_string());
            vec![Problem { path: at(Some(Seg::Key(name))), text: "required field is missing.".into() }]
        }
        ValidationErrorKind::AdditionalProperties { unexpected } | ValidationErrorKind::UnevaluatedProperties { unexpected } => {
            unexpected.iter().map(|k| Problem { path: at(Some(Seg::Key(k.clone()))), text: "unknown field; remove it.".into() }).collect()
        }
        ValidationErrorKind::Type { kind } => {
            let mut set = TypeSet(0);
            match kind {
                TypeKind::Single(t) => set.0 |= TypeSet::bit(t.as_str()).unwrap_or(0),
                TypeKind::Multiple(ts) => {
                    for t in *ts {
                        set.0 |= TypeSet::bit(t.as_str()).unwrap_or(0);
                    }
                }
            }
            one(format!("expected {}, got {}{}.", set.describe(), got(), got_type_hint(err.instance())))
        }
        ValidationErrorKind::Enum { options } => one(format!("must be one of {}; got {}.", list(options), got())),
        ValidationErrorKind::Constant { expected_value } => one(format!("must be exactly {}; got {}.", show(expected_value), got())),
        ValidationErrorKind::Minimum { limit } => one(format!("must be at least {limit}; got {got}.", got = got())),
        ValidationErrorKind::Maximum { limit } => one(format!("must be at most {limit}; got {got}.", got = got())),
        ValidationErrorKind::ExclusiveMinimum { limit } => one(format!("must be greater than {limit}; got {got}.", got = got())),
        ValidationErrorKind::ExclusiveMaximum { limit } => one(format!("must be less than {limit}; got {got}.", got = got())),
        ValidationErrorKind::MultipleOf { multiple_of } => one(format!("must be a multiple of {multiple_of}; got {got}.", got = got())),
        ValidationErrorKind::MinLength { limit } => one(format!("must be at least {limit} characters long; got {got}.", got = got())),
        ValidationErrorKind::MaxLength { limit } => {
            one(format!("must be at most {limit} characters long; got {} characters.", err.instance().as_str().map_or(0, |s| s.chars().count())))
        }
        ValidationErrorKind::MinItems { limit } => one(format!("must have at least {limit} items.")),
        ValidationErrorKind::MaxItems { limit } => one(format!("must have at most {limit} items.")),
        ValidationErrorKind::AdditionalItems { limit } => one(format!("must have at most {limit} items.")),
        ValidationErrorKind::UniqueItems => one("items must be unique.".into()),
        ValidationErrorKind::MinProperties { limit } => one(format!("must have at least {limit} fields.")),
        ValidationErrorKind::MaxProperties { limit } => one(format!("must have at most {limit} fields.")),
        ValidationErrorKind::Pattern { pattern } => one(format!("must match the pattern {}; got {}.", elide(pattern, 60), got())),
        ValidationErrorKind::Format { format } => one(format!("must be a valid {format}; got {got}.", got = got())),
        ValidationErrorKind::AnyOf { .. } | ValidationErrorKind::OneOfNotValid { .. } => {
            one(format!("does not match any of the allowed forms; got {got}.", got = got()))
        }
        ValidationErrorKind::OneOfMultipleValid { .. } => one(format!("matches more than one of the allowed forms; got {got}.", got = got())),
        ValidationErrorKind::Not { .. } | ValidationErrorKind::FalseSchema => one("this value is not allowed.".into()),
        ValidationErrorKind::Contains => one("must contain at least one matching item.".into()),
        ValidationErrorKind::PropertyNames { .. } => one("has a field name that is not allowed.".into()),
        ValidationErrorKind::UnevaluatedItems { .. } => one("has items that are not allowed.".into()),
        _ => one(format!("is invalid; got {got}.", got = got())),
    }
}

fn got_type_hint(v: &Value) -> String {
    match v {
        Value::String(_) | Value::Null => String::new(),
        other => format!(" ({})", type_name(other)),
    }
}

fn list(options: &Value) -> String {
    let Value::Array(items) = options else { return show(options) };
    let mut parts: Vec<String> = items.iter().take(MAX_OPTIONS).map(show).collect();
    if items.len() > MAX_OPTIONS {
        parts.push(format!("… ({} more)", items.len() - MAX_OPTIONS));
    }
    parts.join(", ")
}

/// The full rejection message for `tool`: a header, one line per problem (deduplicated,
/// in a stable order, at most `MAX_LINES`), and a one-line correction instruction.
pub fn invalid_message(tool: &str, problems: &[Problem]) -> String {
    let mut seen: Vec<&Problem> = Vec::new();
    for p in problems {
        if !seen.contains(&p) {
            seen.push(p);
        }
    }
    let mut out = format!("Invalid arguments for tool `{tool}`:\n");
    for p in seen.iter().take(MAX_LINES) {
        out.push_str(&format!("- `{}`: {}\n", p.path, p.text));
    }
    if seen.len() > MAX_LINES {
        out.push_str(&format!("- … and {} more problems.\n", seen.len() - MAX_LINES));
    }
    out.push_str(&format!("Fix these arguments and call `{tool}` again."));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn pointers_split_by_the_value_shape() {
        let root = json!({"items":[{"0":1}]});
        assert_eq!(segs_from_pointer("/items/0/0", &root), vec![Seg::Key("items".into()), Seg::Index(0), Seg::Key("0".into())]);
        assert_eq!(segs_from_pointer("", &root), vec![]);
        assert_eq!(segs_from_pointer("/a~1b", &json!({})), vec![Seg::Key("a/b".into())]);
    }

    #[test]
    fn long_values_are_elided() {
        let long = json!("x".repeat(500));
        assert!(show(&long).chars().count() <= MAX_VALUE_CHARS);
        assert!(show(&long).ends_with('…'));
    }

    #[test]
    fn messages_are_bounded_and_deduplicated() {
        let ps: Vec<Problem> = (0..40).map(|i| Problem { path: format!("f{i}"), text: "bad.".into() }).collect();
        let m = invalid_message("t", &ps);
        assert_eq!(m.lines().count(), 1 + MAX_LINES + 2);
        assert!(m.contains("and 28 more problems"));
        let dup = vec![Problem { path: "a".into(), text: "x.".into() }; 3];
        assert_eq!(invalid_message("t", &dup).lines().count(), 3);
    }
}
