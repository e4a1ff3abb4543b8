//! Deny rules that cannot be decided deny; folder denies cover the folder; resources on
//! case-insensitive hosts compare case-insensitively (issue: "enforce exactly what was decided").

use serde_json::json;
use toolgate_core::{CallContext, Gate, Reason, Stage};

fn gate(config: serde_json::Value) -> Gate {
    Gate::from_json(&config.to_string()).unwrap()
}

fn check(g: &Gate, tool: &str, args: &str, ctx: &str) -> Option<Reason> {
    let c = CallContext::from_json(ctx).unwrap();
    let v = g.check_as(tool, args, &g.who(&c, Stage::Full));
    if v.allowed() {
        None
    } else {
        v.reason
    }
}

#[test]
fn a_deny_whose_condition_cannot_be_decided_denies() {
    let g = gate(json!({
        "tools": [{ "name": "pay", "inputSchema": { "type": "object" } }],
        "policy": { "rules": [
            { "effect": "allow", "tools": ["pay"] },
            { "effect": "deny", "tools": ["pay"], "when": "args.amount > 1000" },
            { "effect": "deny", "tools": ["pay"], "when": "identity.blocked" }
        ]}
    }));
    assert_eq!(check(&g, "pay", r#"{"amount":5000}"#, "{}"), Some(Reason::DenyRule));
    assert_eq!(check(&g, "pay", r#"{"amount":10}"#, "{}"), None);
    // the type does not compare: before, the deny was skipped and the call ran
    assert_eq!(check(&g, "pay", r#"{"amount":"5000"}"#, "{}"), Some(Reason::DenyRule));
    // missing: cannot be decided either
    assert_eq!(check(&g, "pay", r#"{}"#, "{}"), Some(Reason::DenyRule));
    assert_eq!(check(&g, "pay", r#"{"amount":[5000]}"#, "{}"), Some(Reason::DenyRule));
    // a bare name stays a flag: absent is "not set"; a non-boolean is undecidable
    assert_eq!(check(&g, "pay", r#"{"amount":1}"#, r#"{"identity":{"blocked":true}}"#), Some(Reason::DenyRule));
    assert_eq!(check(&g, "pay", r#"{"amount":1}"#, r#"{"identity":{"blocked":"yes"}}"#), Some(Reason::DenyRule));
    assert_eq!(check(&g, "pay", r#"{"amount":1}"#, r#"{"identity":{"blocked":false}}"#), None);
    // the presence test stays decidable: a deny can be scoped to calls that carry the value
    let scoped = gate(json!({
        "tools": [{ "name": "pay" }],
        "policy": { "rules": [
            { "effect": "allow", "tools": ["pay"] },
            { "effect": "deny", "tools": ["pay"], "when": "args.amount != null and args.amount > 1000" }
        ]}
    }));
    assert_eq!(check(&scoped, "pay", r#"{}"#, "{}"), None);
    assert_eq!(check(&scoped, "pay", r#"{"amount":"5000"}"#, "{}"), Some(Reason::DenyRule));
    assert_eq!(check(&scoped, "pay", r#"{"amount":5000}"#, "{}"), Some(Reason::DenyRule));
    assert_eq!(check(&scoped, "pay", r#"{"amount":5}"#, "{}"), None);
}

#[test]
fn allow_rules_still_need_their_condition_to_hold() {
    let g = gate(json!({
        "tools": [{ "name": "pay" }],
        "policy": { "rules": [{ "effect": "allow", "tools": ["pay"], "when": "args.amount <= 1000 and args.currency in ['EUR', 'USD']" }] }
    }));
    assert_eq!(check(&g, "pay", r#"{"amount":"10","currency":"EUR"}"#, "{}"), Some(Reason::NoRule));
    assert_eq!(check(&g, "pay", r#"{"amount":10,"currency":"EUR"}"#, "{}"), None);
    assert_eq!(check(&g, "pay", r#"{"amount":10,"currency":1}"#, "{}"), Some(Reason::NoRule));
}

fn files(ci: Option<bool>) -> Gate {
    let mut tool = json!({
        "name": "read_file", "resource": "file:{path*}",
        "inputSchema": { "type": "object", "properties": { "path": { "type": "string" } }, "required": ["path"] }
    });
    if let Some(ci) = ci {
        tool["resources"] = json!({ "caseInsensitive": ci });
    }
    gate(json!({
        "tools": [tool],
        "policy": { "rules": [
            { "effect": "allow", "tools": ["read_file"], "resources": ["file:reports/**"] },
            { "effect": "deny", "resources": ["file:reports/private/**", "file:home/{subject}/secret/**"] }
        ]}
    }))
}

#[test]
fn a_folder_deny_covers_the_folder_itself() {
    let g = files(None);
    assert_eq!(check(&g, "read_file", r#"{"path":"reports/q3.csv"}"#, "{}"), None);
    assert_eq!(check(&g, "read_file", r#"{"path":"reports/private/x"}"#, "{}"), Some(Reason::DenyRule));
    assert_eq!(check(&g, "read_file", r#"{"path":"reports/private"}"#, "{}"), Some(Reason::DenyRule));
    assert_eq!(check(&g, "read_file", r#"{"path":"reports/private/"}"#, "{}"), Some(Reason::DenyRule));
    // and an allow on a folder allows listing the folder
    assert_eq!(check(&g, "read_file", r#"{"path":"reports"}"#, "{}"), None);
    // not a prefix match: a sibling whose name starts the same stays allowed
    assert_eq!(check(&g, "read_file", r#"{"path":"reports/private-notes.md"}"#, "{}"), None);
}

#[test]
fn a_deny_that_needs_a_subject_fails_closed_without_one() {
    let g = gate(json!({
        "tools": [{ "name": "read_file", "resource": "file:{path*}" }],
        "policy": { "rules": [
            { "effect": "allow", "tools": ["read_file"] },
            { "effect": "deny", "resources": ["file:home/{subject}/**"] }
        ]}
    }));
    assert_eq!(check(&g, "read_file", r#"{"path":"home/ann/x"}"#, r#"{"subject":"bob"}"#), None);
    assert_eq!(check(&g, "read_file", r#"{"path":"home/bob/x"}"#, r#"{"subject":"bob"}"#), Some(Reason::DenyRule));
    assert_eq!(check(&g, "read_file", r#"{"path":"home/ann/x"}"#, "{}"), Some(Reason::DenyRule));
}

#[test]
fn case_insensitive_resources_close_the_case_gap() {
    let exact = files(None);
    assert_eq!(check(&exact, "read_file", r#"{"path":"reports/PRIVATE/x"}"#, "{}"), None, "case-sensitive by default");
    let ci = files(Some(true));
    for p in ["reports/PRIVATE/x", "Reports/Private", "REPORTS/private/ſecret"] {
        assert_eq!(check(&ci, "read_file", &format!(r#"{{"path":"{p}"}}"#), "{}"), Some(Reason::DenyRule), "{p}");
    }
    assert_eq!(check(&ci, "read_file", r#"{"path":"REPORTS/q3.csv"}"#, "{}"), None);
    // the subject folds too
    assert_eq!(check(&ci, "read_file", r#"{"path":"HOME/Bob/SECRET/k"}"#, r#"{"subject":"bob"}"#), Some(Reason::DenyRule));
    // gate-wide setting, and a tool opting back out
    let g = gate(json!({
        "resources": { "caseInsensitive": true },
        "tools": [{ "name": "a", "resource": "f:{p*}" }, { "name": "b", "resource": "f:{p*}", "resources": { "caseInsensitive": false } }],
        "policy": { "rules": [{ "effect": "allow" }, { "effect": "deny", "resources": ["f:secret/**"] }] }
    }));
    assert_eq!(check(&g, "a", r#"{"p":"SECRET/x"}"#, "{}"), Some(Reason::DenyRule));
    assert_eq!(check(&g, "b", r#"{"p":"SECRET/x"}"#, "{}"), None);
}

/// A host that learns its tools later builds its gate with rule globs that match nothing yet:
/// they are warnings then, and the rules apply once the tools exist. A strict build refuses them.
#[test]
fn learning_builds_keep_rules_for_tools_declared_later() {
    let cfg = json!({ "tools": [], "policy": { "rules": [{ "effect": "allow", "tools": ["read_*"] }] } }).to_string();
    assert_eq!(Gate::from_json(&cfg).unwrap_err().code(), "E_CONFIG");
    let g = Gate::from_json_learning(&cfg).unwrap();
    assert_eq!(g.warnings().len(), 1, "{:?}", g.warnings());
    assert!(g.warnings()[0].contains("read_*"));
    let later = json!({ "tools": [{ "name": "read_file" }, { "name": "write_file" }], "policy": { "rules": [{ "effect": "allow", "tools": ["read_*"] }] } })
        .to_string();
    let g = Gate::from_json_learning(&later).unwrap();
    assert!(g.warnings().is_empty());
    assert_eq!(check(&g, "read_file", "{}", "{}"), None);
    assert_eq!(check(&g, "write_file", "{}", "{}"), Some(Reason::NoRule));
}
