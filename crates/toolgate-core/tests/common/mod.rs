// Shared helpers for the core's integration tests.
#![allow(dead_code)]

use serde_json::{json, Value};
use toolgate_core::{Gate, Outcome, Verdict};

/// A gate with one tool `t` whose schema is `schema`.
pub fn gate(schema: Value) -> Gate {
    gate_with(json!({ "tools": [{ "name": "t", "inputSchema": schema }] }))
}

pub fn gate_with(config: Value) -> Gate {
    Gate::from_json(&config.to_string()).expect("config compiles")
}

/// Checks `args` and asserts the call was repaired to `want`, returning the flag codes.
pub fn repaired(g: &Gate, args: &str, want: Value) -> Vec<(String, String)> {
    let v = g.check("t", args);
    assert_eq!(v.outcome, Outcome::Repaired, "{args}: {v:?}");
    assert_eq!(v.arguments.as_ref(), Some(&want), "{args}");
    flags(&v)
}

pub fn flags(v: &Verdict) -> Vec<(String, String)> {
    v.flags.iter().map(|f| (format!("{:?}", f.code), f.path.clone())).collect()
}

pub fn passed(g: &Gate, args: &str) -> Verdict {
    let v = g.check("t", args);
    assert_eq!(v.outcome, Outcome::Passed, "{args}: {v:?}");
    assert!(v.flags.is_empty());
    v
}

pub fn rejected(g: &Gate, args: &str) -> Verdict {
    let v = g.check("t", args);
    assert_eq!(v.outcome, Outcome::Rejected, "{args}: {v:?}");
    assert!(v.arguments.is_none());
    assert!(v.message.is_some());
    v
}

pub fn f(code: &str, path: &str) -> (String, String) {
    (code.to_string(), path.to_string())
}
