//! Tests of the condition language: parse errors (positions and messages), evaluation
//! semantics (types, missing, Kleene logic while listing), `now`.

mod errors;
mod semantics;
mod time;

use serde_json::{json, Map, Value};

use super::super::scope::Scope;
use super::{Condition, Truth};

/// Owned facts to borrow a `Scope` from.
pub(super) struct Facts {
    pub roles: Vec<String>,
    pub identity: Map<String, Value>,
    pub context: Map<String, Value>,
    pub args: Map<String, Value>,
    pub purpose: Option<&'static str>,
    pub tool: Option<&'static str>,
    pub resource: Option<&'static str>,
    pub subject: Option<&'static str>,
    pub listing: bool,
    pub now_ms: u64,
}

fn obj(v: Value) -> Map<String, Value> {
    match v {
        Value::Object(m) => m,
        _ => unreachable!(),
    }
}

impl Facts {
    pub fn new() -> Facts {
        Facts {
            roles: vec!["analyst".into(), "verifier".into()],
            identity: obj(json!({
                "tenant": "acme", "admin": true, "level": 3, "exp": 1_900_000_000u64,
                "org": { "id": "o-1", "teams": ["red", "blue"] }, "nothing": null,
                "big": 18_446_744_073_709_551_615u64, "ratio": 0.5, "flag": "true"
            })),
            context: obj(json!({ "tenant": "acme", "region": "eu" })),
            args: obj(json!({
                "amount": 50, "path": "reports/q1.pdf", "tags": ["a", "b", 3],
                "odd key": "x", "nested": { "deep": { "n": -2 } }, "list": [{ "name": "first" }],
                "dry": true
            })),
            purpose: Some("audit"),
            tool: Some("read_file"),
            resource: Some("file:reports/q1.pdf"),
            subject: Some("ann"),
            listing: false,
            // 2026-03-04T10:30:00Z, a Wednesday.
            now_ms: 1_772_620_200_000,
        }
    }

    pub fn scope(&self) -> Scope<'_> {
        Scope {
            roles: &self.roles,
            identity: Some(&self.identity),
            purpose: self.purpose,
            context: Some(&self.context),
            subject: self.subject,
            tool: self.tool,
            action: self.tool,
            resource: self.resource,
            resource_folded: false,
            args: Some(&self.args),
            listing: self.listing,
            now_ms: self.now_ms,
        }
    }
}

/// Parses (panicking with the error) and evaluates against `facts`.
pub(super) fn eval_in(src: &str, facts: &Facts) -> Truth {
    match Condition::parse(src) {
        Ok(c) => c.eval(&facts.scope()),
        Err(e) => panic!("`{src}` does not parse: {e}"),
    }
}

pub(super) fn t(src: &str) -> Truth {
    eval_in(src, &Facts::new())
}

/// The error of a condition that must not parse.
pub(super) fn err(src: &str) -> super::ConditionError {
    match Condition::parse(src) {
        Ok(c) => panic!("`{src}` parsed: {c:?}"),
        Err(e) => e,
    }
}
